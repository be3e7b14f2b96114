"""The plan's JSON Schema, generated from the pydantic models (`arraybench plan schema`).

Editors validate YAML plans with it, so it accepts what the loader accepts: sizes as `8k` as
well as bytes, durations as `30s` as well as seconds, and the short forms of events
(`prompt: "text"`, `run: [argv]`, `scsi_offline: /dev/sdc`). Size and duration keys carry
`x-unit` (bytes, seconds): the reference in docs/plan.md shows it.
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from arraybench.plan.model import Plan

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://arraybench.invalid/plan.schema.json"

JsonSchema = dict[str, Any]


def _any_case(word: str) -> str:
    """`ms` -> `[mM][sS]`: ECMA-262 patterns have no case-insensitive flag."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() and c != "µ" else c for c in word)


_NUMBER = r"\s*\d+(\.\d+)?\s*"
# the same language as units.parse_size / parse_duration (a test compares them)
SIZE_PATTERN = rf"^{_NUMBER}[kmgtpKMGTP]?([iI]?[bB])?\s*$"
DURATION_PATTERN = (
    rf"^{_NUMBER}({'|'.join(_any_case(u) for u in ('us', 'µs', 'ms', 'min', 's', 'm', 'h', 'd'))})"
    r"?\s*$"
)


def _with_text(inner: JsonSchemaValue, pattern: str, unit: str, example: str) -> JsonSchemaValue:
    text = {"type": "string", "pattern": pattern, "examples": [example]}
    return {"anyOf": [inner, text], "x-unit": unit}


def _short_form(validator_name: str, inner: JsonSchemaValue) -> JsonSchemaValue:
    """The schema of what a before-validator accepts, besides what it converts to."""
    if validator_name == "_size":
        return _with_text(inner, SIZE_PATTERN, "bytes", "8k")
    if validator_name in ("_duration", "_offset"):
        return _with_text(inner, DURATION_PATTERN, "seconds", "30s")
    if validator_name == "_on_off":  # YAML 1.1 reads a bare off/on as a boolean
        return {"anyOf": [inner, {"type": "boolean"}]}
    if validator_name == "_text_form.<locals>.convert":  # prompt: "text", scsi_offline: sdc
        return {"anyOf": [inner, {"type": "string", "minLength": 1}]}
    if validator_name == "_argv_form":  # run: [systemctl, stop, iscsid]
        words = {"type": "array", "minItems": 1, "items": {"type": ["string", "number"]}}
        return {"anyOf": [inner, words]}
    if validator_name == "_argv_word":  # [sleep, 5]: numbers are words
        return {"anyOf": [inner, {"type": "number"}]}
    return inner


class _PlanSchema(GenerateJsonSchema):
    def function_before_schema(
        self, schema: core_schema.BeforeValidatorFunctionSchema
    ) -> JsonSchemaValue:
        inner = super().function_before_schema(schema)
        function = schema["function"]["function"]
        return _short_form(getattr(function, "__qualname__", ""), inner)


# pydantic writes Field(gt=0) on an annotated type as its own words: JSON Schema's instead
_BOUNDS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}


def _standard_bounds(node: Any) -> Any:
    if isinstance(node, list):
        return [_standard_bounds(item) for item in node]
    if not isinstance(node, dict):
        return node
    result = {}
    for key, value in node.items():
        if key == "properties":  # names of plan keys, not keywords
            result[key] = {name: _standard_bounds(sub) for name, sub in value.items()}
        else:
            result[_BOUNDS.get(key, key)] = _standard_bounds(value)
    return result


def plan_schema() -> JsonSchema:
    """The JSON Schema (draft 2020-12) of a plan file."""
    schema = _standard_bounds(Plan.model_json_schema(schema_generator=_PlanSchema))
    schema["description"] = (
        "An arraybench plan: workloads, load levels, timing, targets and the special tests. "
        "Reference: docs/plan.md."
    )
    return {"$schema": DIALECT, "$id": SCHEMA_ID, **schema}
