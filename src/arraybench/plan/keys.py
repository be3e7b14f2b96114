"""The plan's key tree, read from the models: which keys are valid at a path, and which of them
are close to a misspelt one (for `--set` and for unknown keys in a plan file)."""

from __future__ import annotations

import difflib
import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from arraybench.plan.model import Plan

KeyPath = tuple[str | int, ...]


def _unwrap(annotation: Any) -> Any:
    """`Timing | None`, `Annotated[X, ...]` -> the model or container inside."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            inner = [a for a in get_args(annotation) if a is not type(None)]
            models = [a for a in inner if _is_model(_unwrap(a)) or get_origin(_unwrap(a)) is list]
            if not models:
                return inner[0] if inner else annotation
            annotation = models[0]
        else:
            return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def node_at(path: KeyPath, root: type[BaseModel] = Plan) -> Any:
    """The model class (or `list`/`dict`/a value type) a key path leads to; None when the path
    leaves the plan's keys."""
    node: Any = root
    for part in path:
        if _is_model(node):
            if not isinstance(part, str) or part not in node.model_fields:
                return None
            node = _unwrap(node.model_fields[part].annotation)
        elif get_origin(node) is list:
            node = _unwrap(get_args(node)[0]) if get_args(node) else Any
        elif get_origin(node) is dict:
            node = _unwrap(get_args(node)[1]) if get_args(node) else Any
        else:
            return None
    return node


def keys_at(path: KeyPath, root: type[BaseModel] = Plan) -> list[str] | None:
    """The valid keys under `path`, or None when any key goes (labels) or none does (a value)."""
    node = node_at(path, root)
    return list(node.model_fields) if _is_model(node) else None


def is_list(path: KeyPath, root: type[BaseModel] = Plan) -> bool:
    return get_origin(node_at(path, root)) is list


def close_to(word: str, choices: list[str], limit: int = 3) -> str:
    """`did you mean workers, iodepth?` text, or the valid choices when none is close."""
    near = difflib.get_close_matches(word, choices, n=limit, cutoff=0.5)
    if near:
        return "did you mean " + " or ".join(near) + "?"
    shown = ", ".join(choices[:12]) + (", ..." if len(choices) > 12 else "")
    return f"valid here: {shown}"
