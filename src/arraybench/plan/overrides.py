"""`--set KEY=VALUE`: change a plan or template from the command line before validation.

Keys are dotted paths with list indices or `*` for every item: `timing.duration=30s`,
`load.workers=[1, 4, 16]`, `workloads[*].timing.duration=5m`. Values are YAML.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import yaml

from arraybench.errors import PlanError

KeyPath = tuple[str | int, ...]
_PART = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")


def parse_key(key: str) -> list[str | int]:
    parts: list[str | int] = []
    pos = 0
    for match in _PART.finditer(key):
        if match.start() != pos and key[pos] != ".":
            break
        name, index = match.groups()
        parts.append(name if name is not None else ("*" if index == "*" else int(index)))
        pos = match.end()
    if not parts or "".join(key.split(".")) == "" or pos != len(key):
        raise PlanError(f"--set {key}: not a key path", "use e.g. timing.duration=30s")
    return parts


def _paths(data: Any, parts: list[str | int], done: KeyPath, spec: str) -> list[KeyPath]:
    """Concrete paths for `parts`, expanding `*` over the lists found in `data`."""
    if len(parts) == 1:
        return [(*done, parts[0])]
    head, rest = parts[0], parts[1:]
    if head == "*":
        if not isinstance(data, list):
            raise PlanError(f"--set {spec}: {_text(done)} is not a list", "drop the [*]")
        return [p for i, item in enumerate(data) for p in _paths(item, rest, (*done, i), spec)]
    child = _child(data, head, done, spec)
    return _paths(child, rest, (*done, head), spec)


def _child(data: Any, key: str | int, done: KeyPath, spec: str) -> Any:
    if isinstance(data, dict) and isinstance(key, str):
        return data.setdefault(key, {})
    if isinstance(data, list) and isinstance(key, int) and key < len(data):
        return data[key]
    raise PlanError(f"--set {spec}: {_text((*done, key))} does not exist in the plan",
                    "check the key path with `arraybench plan check`")  # fmt: skip


def _text(path: KeyPath) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _assign(data: Any, path: KeyPath, value: Any, spec: str) -> None:
    parent = data
    for depth, key in enumerate(path[:-1]):
        parent = _child(parent, key, path[:depth], spec)
    last = path[-1]
    in_dict = isinstance(parent, dict) and isinstance(last, str)
    in_list = isinstance(parent, list) and isinstance(last, int) and last < len(parent)
    if in_dict or in_list:
        parent[last] = value
    else:
        raise PlanError(f"--set {spec}: cannot set {_text(path)}", "check the key path")


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[KeyPath, str]:
    """Apply `KEY=VALUE` items in place; return each changed path -> the item that set it."""
    changed: dict[KeyPath, str] = {}
    for spec in overrides:
        key, sep, raw = spec.partition("=")
        if not sep:
            raise PlanError(f"--set {spec}: expected KEY=VALUE", "e.g. --set timing.duration=30s")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            raise PlanError(f"--set {spec}: the value is not valid YAML", "quote it") from None
        for path in _paths(data, parse_key(key.strip()), (), spec):
            _assign(data, path, value, spec)
            changed[path] = spec
    return changed
