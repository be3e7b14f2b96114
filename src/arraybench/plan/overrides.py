"""`--set KEY=VALUE`: change a plan or template from the command line before validation.

Keys are dotted paths. A list item is addressed by index (`workloads[2]`), by name or glob
(`workloads.rand-8k-read`, `workloads[rand-8k-read]` for names with dots, `workloads[rand-*]`)
or all at once (`workloads[*]`). Values are YAML: `timing.duration=30s`,
`load.workers=[1, 4, 16]`, `workloads[*].timing.duration=5m`.

A load is either a workers x iodepth grid or a list of pairs. Setting `load.workers` or
`load.iodepth` on a load given as pairs replaces the pairs by a grid, which keeps the pairs'
other half (`pairs: [[32, 8]]` + `load.workers=[1, 2]` -> workers [1, 2] at iodepth [8]);
setting `load.pairs` replaces the grid. Every key is checked against the plan's keys, and a
wrong one is answered with the valid keys closest to it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from typing import Any

from arraybench.errors import PlanError
from arraybench.plan.keys import KeyPath, close_to, is_list, keys_at, node_at
from arraybench.plan.model import Load
from arraybench.plan.yamlsafe import Limits, load_value

_PART = re.compile(r"([^.\[\]]+)|\[([^\[\]]+)\]")
_VALUE_LIMITS = Limits(max_bytes=64 << 10, max_nodes=10_000, max_aliases=100)
MAX_KEY_PARTS = 16
_GRID = ("workers", "iodepth")


def parse_key(key: str) -> list[str | int]:
    parts: list[str | int] = []
    pos = 0
    for match in _PART.finditer(key):
        if match.start() != pos and key[pos] != ".":
            break
        name, inside = match.groups()
        if name is not None:
            parts.append(name)
        else:
            parts.append(int(inside) if inside.isdigit() else inside.strip())
        pos = match.end()
    if not parts or "".join(key.split(".")) == "" or pos != len(key) or "" in parts:
        raise PlanError(f"--set {key}: not a key path", "use e.g. timing.duration=30s")
    if len(parts) > MAX_KEY_PARTS:
        raise PlanError(f"--set {key[:80]}: more than {MAX_KEY_PARTS} keys deep", "check the key")
    return parts


def _text(path: KeyPath) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _items(data: list[Any], head: str | int, done: KeyPath, spec: str) -> list[int]:
    """Indices of the list items `head` names: an index, `*`, a name or a glob of names."""
    if head == "*":
        return list(range(len(data)))
    if isinstance(head, int):
        if head < len(data):
            return [head]
        raise PlanError(
            f"--set {spec}: {_text((*done, head))} does not exist: {_text(done)} has "
            f"{len(data)} item(s)" + (f" (0 to {len(data) - 1})" if data else ""),
            "use an index in that range or an item's name",
        )
    names = [str(item.get("name")) for item in data if isinstance(item, dict) and "name" in item]
    found = [i for i, item in enumerate(data) if isinstance(item, dict)
             and "name" in item and fnmatch.fnmatchcase(str(item["name"]), head)]  # fmt: skip
    if found:
        return found
    if not names:
        raise PlanError(f"--set {spec}: {_text(done)} is a list: address its items by index",
                        f"e.g. {_text(done)}[0]")  # fmt: skip
    raise PlanError(
        f"--set {spec}: no item of {_text(done)} is named {head!r}",
        f"{close_to(head, names)} (or use an index, or [*] for all)",
    )


def _paths(data: Any, parts: list[str | int], done: KeyPath, spec: str) -> list[KeyPath]:
    """Concrete paths for `parts`, expanding `*` and names over the lists found in `data`;
    the mappings on the way are created when missing."""
    if not parts:
        return [done]
    head, rest = parts[0], parts[1:]
    if isinstance(data, list):
        return [p for i in _items(data, head, done, spec)
                for p in _paths(data[i], rest, (*done, i), spec)]  # fmt: skip
    if not isinstance(data, dict) or not isinstance(head, str) or head == "*":
        kind = "a list" if is_list(done) else "a mapping of keys" if keys_at(done) else "a value"
        raise PlanError(
            f"--set {spec}: {_text(done) or 'the plan'} is {kind}, not what {head!r} addresses",
            "check the key path (lists take [N], [name] or [*])",
        )
    valid = keys_at(done)
    if valid is not None and head not in valid:
        raise PlanError(
            f"--set {spec}: {_text((*done, head))} is not a plan key",
            close_to(head, valid),
        )
    if rest and data.get(head) is None:
        if is_list((*done, head)):
            raise PlanError(
                f"--set {spec}: {_text((*done, head))} does not exist in the plan",
                f"set the whole list, e.g. --set {_text((*done, head))}=[...]",
            )
        data[head] = {}
    return _paths(data[head], rest, (*done, head), spec) if rest else [(*done, head)]


def _parent(data: Any, path: KeyPath) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


def _pairs_to_grid(load: dict[str, Any], key: str, set_here: set[str]) -> None:
    """Setting workers or iodepth of a load given as pairs: a grid keeping the other half."""
    pairs = load.pop("pairs", None)
    other = "iodepth" if key == "workers" else "workers"
    if other in load or other in set_here or not isinstance(pairs, list):
        return
    column = 1 if other == "iodepth" else 0
    values = [p[column] for p in pairs if isinstance(p, list | tuple) and len(p) == 2]
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        load[other] = sorted(set(values))


def _one_load_form(data: dict[str, Any], path: KeyPath, changed: dict[KeyPath, str]) -> None:
    key = path[-1]
    if key not in (*_GRID, "pairs") or node_at(path[:-1]) is not Load:
        return
    load = _parent(data, path)
    set_here = {str(p[-1]) for p in changed if p[:-1] == path[:-1]}
    if key in _GRID and "pairs" in load and "pairs" not in set_here:
        _pairs_to_grid(load, str(key), set_here)
    elif key == "pairs":
        for grid_key in _GRID:
            if grid_key not in set_here:
                load.pop(grid_key, None)


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[KeyPath, str]:
    """Apply `KEY=VALUE` items in place; return each changed path -> the item that set it."""
    changed: dict[KeyPath, str] = {}
    for spec in overrides:
        key, sep, raw = spec.partition("=")
        if not sep:
            raise PlanError(f"--set {spec}: expected KEY=VALUE", "e.g. --set timing.duration=30s")
        paths = _paths(data, parse_key(key.strip()), (), spec)  # the key first: it is shorter
        value = load_value(raw, f"--set {spec}", _VALUE_LIMITS) if raw.strip() else ""
        for path in paths:
            _parent(data, path)[path[-1]] = value
            changed[path] = spec
            _one_load_form(data, path, changed)
    return changed
