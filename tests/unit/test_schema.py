"""The plan's JSON Schema and docs/plan.md: valid, complete, in step with the models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from arraybench.cli import main
from arraybench.plan import catalog
from arraybench.plan.reference import REGENERATE, plan_reference
from arraybench.plan.schema import DURATION_PATTERN, SIZE_PATTERN, plan_schema
from arraybench.units import parse_duration, parse_size

DOC = Path(__file__).resolve().parents[2] / "docs" / "plan.md"


def _sections(markdown: str) -> dict[str, set[str]]:
    """`## Name` -> the keys of its table rows."""
    sections: dict[str, set[str]] = {}
    current = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = set()
        elif (row := re.match(r"^\| `([A-Za-z0-9_]+)` \|", line)) and current:
            sections[current].add(row.group(1))
    return sections


def missing_keys(markdown: str) -> list[str]:
    """Every property of the schema that has no row in its object's section."""
    schema = plan_schema()
    objects = {"The plan (top level)": schema, **schema["$defs"]}
    sections = _sections(markdown)
    return [f"{name}.{key}" for name, node in objects.items()
            for key in node["properties"] if key not in sections.get(name, set())]  # fmt: skip


def test_the_schema_is_valid_json_schema() -> None:
    schema = plan_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"].endswith("2020-12/schema")
    broken = {**schema, "properties": {**schema["properties"], "name": {"type": "text"}}}
    with pytest.raises(jsonschema.SchemaError):
        jsonschema.Draft202012Validator.check_schema(broken)


@pytest.mark.parametrize("name", catalog.template_names())
def test_every_template_validates_against_the_schema(name: str) -> None:
    """Sizes as 8k, durations as 30s, short forms: an editor must not flag a working plan."""
    validator = jsonschema.Draft202012Validator(plan_schema())
    errors = [e.message for e in validator.iter_errors(yaml.safe_load(catalog.template_text(name)))]
    assert errors == []


def test_the_schema_refuses_what_the_loader_refuses() -> None:
    validator = jsonschema.Draft202012Validator(plan_schema())
    events = [{"at": "5s", "run": ["sleep", 1]}, {"at": 0, "prompt": "Pull A"}]
    workload = {"name": "w", "pattern": "random", "bs": "8k", "read": 0, "events": events}
    good = {"name": "p", "workloads": [workload]}
    assert list(validator.iter_errors(good)) == []
    for bad in (
        {**good, "worklods": []},  # unknown key
        {**good, "timing": {"duration": "10 parsecs"}},
        {**good, "workloads": [{**good["workloads"][0], "bs": "8q"}]},
        {**good, "timing": {"ramp": -1}},
    ):
        assert list(validator.iter_errors(bad)), bad


@pytest.mark.parametrize("text", ["8k", "128KiB", "1g", " 4 m ", "512", "1.5k", "8x", "k", "-1k"])
def test_the_size_pattern_is_the_parser_language(text: str) -> None:
    try:
        parse_size(text)
        parsed = True
    except ValueError:
        parsed = False
    assert bool(re.match(SIZE_PATTERN, text)) == parsed


@pytest.mark.parametrize("text", ["30s", "500ms", "2m", "1h", "10US", "3MIN", "1.5 s", "s", "5y"])
def test_the_duration_pattern_is_the_parser_language(text: str) -> None:
    try:
        parse_duration(text)
        parsed = True
    except ValueError:
        parsed = False
    assert bool(re.match(DURATION_PATTERN, text)) == parsed


def test_docs_plan_md_has_every_key_and_is_up_to_date() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert missing_keys(text) == []
    assert REGENERATE in text.splitlines()[2]
    assert text == plan_reference(), f"docs/plan.md is stale: regenerate with `{REGENERATE}`"


def test_a_missing_key_is_found() -> None:
    text = "\n".join(
        line for line in plan_reference().splitlines() if not line.startswith("| `jitter` |")
    )
    assert missing_keys(text) == ["NetemAction.jitter"]


def test_plan_schema_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(plan_schema()))
    assert main(["plan", "schema", "--markdown"]) == 0
    assert capsys.readouterr().out == plan_reference()
