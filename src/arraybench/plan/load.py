"""YAML text -> Plan, with every error located as `file:line key.path: what; what to do`."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from arraybench.errors import PlanError
from arraybench.plan.keys import close_to, keys_at
from arraybench.plan.model import ENGINE_PATTERN, LABEL_PATTERN, NAME_PATTERN, Plan
from arraybench.plan.overrides import KeyPath, apply_overrides
from arraybench.plan.terminal_text import check_terminal_text
from arraybench.plan.types import WORKLOAD_NAME_PATTERN
from arraybench.plan.yamlsafe import MAX_PLAN_BYTES, compose_and_load
from arraybench.userfiles import InputFileError, open_regular


def _node_lines(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            child = (*path, str(key_node.value))
            _node_lines(value_node, child, lines)
            lines[child] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _node_lines(item, (*path, index), lines)


def _where(
    loc: KeyPath, lines: dict[KeyPath, int], source: str, overrides: dict[KeyPath, str]
) -> str:
    """`file:line` of the key, or the `--set` that put the value there."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in overrides:  # the value came from the command line, not the file
            return f"--set {overrides[loc[:end]]}"
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return f"{source}:{lines[loc[:end]]}"
    return source


def _format_loc(loc: KeyPath) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _clean_loc(loc: tuple[Any, ...]) -> KeyPath:
    # pydantic adds validator names ("function-after[...]", "tuple[...]") into locations
    return tuple(p for p in loc if isinstance(p, int) or ("[" not in p and p != "function-after"))


def _hint(error_type: str, loc: KeyPath, message: str) -> str:
    if error_type == "extra_forbidden":
        valid = keys_at(loc[:-1])
        near = close_to(str(loc[-1]), valid) if valid and loc else ""
        return f"remove it or fix its spelling{'; ' + near if near else ''}"
    if error_type == "missing":
        return f"add `{loc[-1]}`" if loc else "add the missing key"
    if error_type in ("greater_than", "greater_than_equal"):
        return "use a positive value"
    if "out of range" in message:
        return "use a value in that range"
    if loc == ("engine",):
        return "use one of the known engines, or leave `engine` out (fio)"
    if loc and loc[-1] == "bs":
        return "use a block size such as 4k, 8k, 128k or 1m"
    return "fix the value"


# what each text pattern of the models means, for the error line
_PATTERNS = {
    NAME_PATTERN: "use letters, digits, '.', '_' and '-' (it names files)",
    WORKLOAD_NAME_PATTERN: "use letters, digits, '.', '_' and '-' (it names files), and at "
    "most one '@' before a data_grid preset (incompressible, zeros, db, vdi)",
    LABEL_PATTERN: "one line of text: no newline, tab or control character",
    ENGINE_PATTERN: "an fio engine name such as libaio, io_uring or psync",
}


def _message(error: Any) -> str:
    msg = str(error["msg"])
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "string_pattern_mismatch":
        pattern = str(error.get("ctx", {}).get("pattern", ""))
        return _PATTERNS.get(pattern, f"text of the wrong form (pattern {pattern})")
    return msg.removeprefix("Value error, ")


def plan_error_from_validation(
    exc: ValidationError,
    source: str,
    lines: dict[KeyPath, int],
    overrides: dict[KeyPath, str] | None = None,
) -> PlanError:
    # an unknown key first: a misspelt key usually also makes a required one "missing"
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    loc = _clean_loc(first["loc"])
    where = _where(loc, lines, source, overrides or {})
    if first.get("input", ...) is None and first["type"].endswith("_type"):
        return PlanError(
            f"{where} {_format_loc(loc)}: the value is empty (YAML null)",
            'give a value; quote words YAML reads as null, e.g. ioengine: "null"',
        )
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    message = f"{where} {_format_loc(loc)}: {_message(first)}{more}"
    return PlanError(message, _hint(first["type"], loc, message))


def parse_plan_text(text: str, source: str, overrides: Sequence[str] = ()) -> Plan:
    """Parse plan YAML; raise PlanError with file, line and key path on any mistake."""
    if not text.strip():
        raise PlanError(f"{source}: the plan is empty", "write a plan or start from a template")
    node, data = compose_and_load(text, source)
    if not isinstance(data, dict) or node is None:
        raise PlanError(f"{source}:1 the plan must be a mapping of keys", "start from a template")
    lines: dict[KeyPath, int] = {}
    _node_lines(node, (), lines)
    overridden = apply_overrides(data, overrides)
    unsafe = check_terminal_text(
        data, lambda loc: f"{_where(loc, lines, source, overridden)} {_format_loc(loc)}"
    )
    if unsafe:
        raise PlanError(unsafe, "remove it (write what the text should say in plain words)")
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise plan_error_from_validation(exc, source, lines, overridden) from None


@lru_cache(maxsize=4)
def stored_plan(text: str, source: str) -> Plan | None:
    """The plan a run stored, read through the same loader as at its start; None when the text
    is no plan (an import stores its description of the sources there). Parsed once per
    report (a report reads it in several places); callers read it, never change it."""
    try:
        return parse_plan_text(text, source)
    except PlanError:
        return None


def load_plan_file(path: Path, overrides: Sequence[str] = ()) -> Plan:
    try:  # a regular file only, opened without waiting: a FIFO or /dev/zero must not hang us
        with open_regular(path, "the plan") as stream:
            raw = stream.read(MAX_PLAN_BYTES + 1)
        text = raw.decode("utf-8")
    except InputFileError as exc:
        raise PlanError(exc.message, exc.hint) from None
    except FileNotFoundError:
        raise PlanError(
            f"{path}: no such plan file",
            "give a plan file or a template name (arraybench templates)",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"{path}: cannot read the plan ({exc})", "check the file") from None
    return parse_plan_text(text, str(path), overrides)
