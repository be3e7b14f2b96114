"""docs/plan.md, the reference of every plan key, generated from the plan's JSON Schema.

One section per object of the plan (Plan, Timing, Workload, Event ...), one row per key with
its type, default, unit, description and an example taken from the built-in templates (or the
events' documented examples, or made from the type). `arraybench plan schema --markdown`
prints it; a test fails when docs/plan.md differs or misses a key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import yaml

from arraybench.plan import catalog, events, scenarios
from arraybench.plan.schema import JsonSchema, plan_schema
from arraybench.units import fio_size

REGENERATE = "arraybench plan schema --markdown > docs/plan.md"
ROOT = "Plan"
LONGEST = 80  # characters of an example or a default: a long description is cut

Examples = dict[tuple[str, str], Any]


def _ref_name(node: JsonSchema) -> str | None:
    """The object a key holds: its $ref, or the $ref inside anyOf / items."""
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    items, values = node.get("items"), node.get("additionalProperties")  # lists and maps
    nested = [b for b in (items, values) if isinstance(b, dict)]
    for branch in [*node.get("anyOf", []), *nested]:
        if name := _ref_name(branch):
            return name
    return None


def _places(defs: JsonSchema) -> dict[str, list[str]]:
    """Where each object appears in a plan, as key paths: Timing -> [timing, workloads[].timing]."""
    places: dict[str, list[str]] = {ROOT: [""]}

    def visit(name: str, prefix: str) -> None:
        for key, prop in defs[name]["properties"].items():
            ref = _ref_name(prop)
            if ref is None:
                continue
            listed = prop.get("type") == "array" or any(
                b.get("type") == "array" for b in prop.get("anyOf", [])
            )
            path = f"{prefix}{key}{'[]' if listed else ''}"
            places.setdefault(ref, []).append(path)
            visit(ref, path + ".")

    visit(ROOT, "")
    return places


def _unit(node: JsonSchema) -> str | None:
    """bytes or seconds: a size or duration key, nullable or not."""
    units = [node.get("x-unit"), *(_unit(b) for b in node.get("anyOf", []))]
    return next((u for u in units if u), None)


def _type_text(node: JsonSchema) -> str:
    unit = node.get("x-unit")
    if unit == "bytes":
        return "size"
    if unit == "seconds":
        return "duration"
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "const" in node:
        return f"`{node['const']}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    if "anyOf" in node:
        kinds = [_type_text(b) for b in node["anyOf"] if b.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds))
    kind = node.get("type")
    if kind == "array":
        if "prefixItems" in node:
            return "[" + ", ".join(_type_text(i) for i in node["prefixItems"]) + "]"
        return f"list of {_type_text(node.get('items', {}))}"
    if kind == "object":
        return f"map of string to {_type_text(node.get('additionalProperties') or {})}"
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind or "any")


def _value_text(value: Any, unit: str | None) -> str:
    if value is None:
        return "–"
    if unit == "bytes" and isinstance(value, int):
        return f"`{fio_size(value)}`"
    if unit == "seconds" and isinstance(value, int | float):
        return f"`{value:g}s`"
    if isinstance(value, dict):  # unset keys of a default object say nothing
        value = {k: v for k, v in value.items() if v is not None}
    text = yaml.safe_dump(value, default_flow_style=True, width=1000).strip()
    text = text.removesuffix("...").strip()
    return f"`{text if len(text) <= LONGEST else text[: LONGEST - 3] + '...'}`"


def _walk(data: Any, name: str, defs: JsonSchema, found: Examples) -> None:
    """Record the first value seen for every (object, key) of a plan fragment."""
    if not isinstance(data, dict):
        return
    props = defs[name]["properties"]
    for key, value in data.items():
        if key not in props:
            continue
        found.setdefault((name, key), value)
        ref = _ref_name(props[key])
        if ref is None:
            continue
        mapped = isinstance(value, dict) and "additionalProperties" in props[key]
        for item in value if isinstance(value, list) else value.values() if mapped else [value]:
            _walk(item, ref, defs, found)


def _documented_events() -> list[Any]:
    """The events of plan/events.py's documented example."""
    return list(yaml.safe_load(events.example())["events"])


def _more_events() -> list[Any]:
    """Each kind's events for keys the documented example leaves out."""
    text = "".join(kind.more_examples for kind in events.kinds())
    return list(yaml.safe_load(text) or [])


# keys no template uses, shown as a user would write them
MORE_EXAMPLES = """
data_grid: [incompressible, db]
targets: [{path: /dev/sdc}, {path: /mnt/array/bench.dat, size: 100g}]
allow_destroy: [/dev/sdc]
hosts:
  - {name: load1, address: 10.0.0.11, port: 8765,
     ssh: {user: bench, host: load1.lab, port: 22, key: ~/.ssh/id_ed25519, fio: /usr/bin/fio},
     targets: [{path: /dev/mapper/lun1}]}
host_sets: [[load1], [load1, load2]]
on_host_failure: continue
start_lead: 5s
fabric: {links: [4 x FC 16G], mtu: 9000}
system_under_test: "Huawei OceanStor Dorado 6000 V3, 2 controllers, firmware V300R001C21"
gc_throughput: 200m
host_tuning: {scheduler: none, nr_requests: 1024, nomerges: 1, read_ahead_kb: 0, rotational: 0,
              max_sectors_kb: 512, write_cache: write through, rq_affinity: 2, add_random: 0,
              iostats: 1, wbt_lat_usec: 0, queue_depth: 64, hosts: {load1: {nomerges: 2}}}
latency_bound: {value: 1ms, stat: p99}
acceptance: [{name: OLTP target, workload: rand-8k-rw70, min_iops: 400000, min_mbps: 3000,
              max_lat_mean: 500us, max_lat_p99: 1ms, hosts: 4}]
metadata: {directory: /mnt/array/md, threads: [1, 8], files_per_thread: 1000, ops: [create]}
workloads:
  - {name: rand-8k-write, pattern: random, bs: 8k, read: 0, ioengine: libaio, direct: true,
     rate_iops: 2000, metric: iops, region: frontend, frontend_blocks: 1000,
     timing: {ramp: 2s, duration: 60s, steady: {metric: iops, limit: 20, window: 60s}},
     data: {compression: 2.0, dedupe: 1.5, granule: 8k},
     verify: {region: 64m, block_size: 4k, iops: 500}}
  - {name: rand-8k-70pct, pattern: random, bs: 8k, read: 100,
     rate_of: {workload: rand-8k-write, share: 70, run: 20261128-101500-baseline}}
"""


def _examples(defs: JsonSchema) -> Examples:
    found: Examples = {}
    for name in catalog.template_names():
        _walk(yaml.safe_load(catalog.template_text(name)), ROOT, defs, found)
    _walk(yaml.safe_load(MORE_EXAMPLES), ROOT, defs, found)
    for event in _more_events() + _documented_events():
        _walk(event, "Event", defs, found)
    _walk(yaml.safe_load(scenarios.EXAMPLE), ROOT, defs, found)  # plan/scenarios.py's example
    return found


def _made_up(prop: JsonSchema) -> str:
    """An example from the type when no template uses the key."""
    return f"`{_made_up_value(prop)}`"


def _made_up_value(prop: JsonSchema) -> str:
    if prop.get("x-unit") == "bytes":
        return "64k"
    if prop.get("x-unit") == "seconds":
        return "30s"
    if "anyOf" in prop:
        branches = [b for b in prop["anyOf"] if b.get("type") != "null"]
        return _made_up_value(branches[0]) if branches else "null"
    if "enum" in prop or "const" in prop:
        return str(prop.get("const", prop.get("enum", [""])[-1]))
    if prop.get("type") == "array":
        return f"[{_made_up_value(prop.get('items') or {})}]"
    simple = {"integer": "4", "number": "2.5", "boolean": "true", "string": "name"}
    return simple.get(str(prop.get("type")), "...")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _rows(name: str, defs: JsonSchema, examples: Examples) -> Iterator[str]:
    node = defs[name]
    required = set(node.get("required", []))
    for key, prop in node["properties"].items():
        unit = _unit(prop)
        if key in required:
            default = "required"
        else:
            default = _value_text(prop.get("default"), unit) if "default" in prop else "–"
        ref = _ref_name(prop)
        value = examples.get((name, key))
        nested = isinstance(value, dict) or (isinstance(value, list) and value
                                             and isinstance(value[0], dict))  # fmt: skip
        if ref is not None and (nested or value is None):
            example = f"see [{ref}](#{ref.lower()})"  # the object's own section has examples
        elif (name, key) in examples:
            example = _value_text(examples[(name, key)], None)
        elif prop.get("default") is not None:
            example = default
        else:
            example = _made_up(prop)
        cells = [f"`{key}`", _type_text(prop), default, unit or "", prop.get("description", ""),
                 example]  # fmt: skip
        yield "| " + " | ".join(_cell(c) for c in cells) + " |"


def _section(name: str, where: list[str], defs: JsonSchema, examples: Examples) -> list[str]:
    title = "The plan (top level)" if name == ROOT else name
    lines = [f"## {title}", ""]
    if name != ROOT:
        lines += ["At " + ", ".join(f"`{w}`" for w in where) + ".", ""]
    description = " ".join(str(defs[name].get("description", "")).split())
    if description:
        lines += [description, ""]
    lines += ["| key | type | default | unit | description | example |",
              "|---|---|---|---|---|---|", *_rows(name, defs, examples), ""]  # fmt: skip
    return lines


def plan_reference() -> str:
    """The Markdown of docs/plan.md."""
    schema = plan_schema()
    defs: JsonSchema = dict(schema["$defs"])
    defs[ROOT] = {k: v for k, v in schema.items() if k != "$defs"}
    places = _places(defs)
    examples = _examples(defs)
    head = [
        "# Plan reference",
        "",
        f"<!-- generated from the plan's models: regenerate with `{REGENERATE}` -->",
        "",
        "Every key a plan file (YAML) may hold. Unknown keys are errors. Sizes are bytes or a",
        "number with k, m, g, t (binary: `8k` = 8192 bytes); durations are seconds or a number",
        "with us, ms, s, m, h (`30s`, `2m`). Examples come from the built-in templates",
        "(`arraybench templates`). Editors can validate plans with the JSON Schema printed by",
        "`arraybench plan schema`.",
        "",
        "Sections: "
        + ", ".join(f"[{n if n != ROOT else 'top level'}](#{_anchor(n)})" for n in places),
        "",
    ]
    body = [line for n, where in places.items() for line in _section(n, where, defs, examples)]
    return "\n".join(head + body).rstrip() + "\n"


def _anchor(name: str) -> str:
    return "the-plan-top-level" if name == ROOT else name.lower()


def plan_schema_text(markdown: bool) -> str:
    """`arraybench plan schema`: the JSON Schema as its file holds it, or (`markdown`) this
    reference."""
    if markdown:
        return plan_reference()
    return json.dumps(plan_schema(), indent=2, ensure_ascii=False) + "\n"
