"""Built-in plans (templates) and resolving `PLAN.yaml|TEMPLATE` arguments."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from arraybench.errors import PlanError
from arraybench.plan.load import load_plan_file, parse_plan_text
from arraybench.plan.model import Plan

DEFAULT_TEMPLATE = "quick"


def _template_dir() -> resources.abc.Traversable:
    return resources.files("arraybench.plan") / "templates"


def template_names() -> list[str]:
    return sorted(p.name.removesuffix(".yaml") for p in _template_dir().iterdir()
                  if p.name.endswith(".yaml"))  # fmt: skip


def template_text(name: str) -> str:
    return (_template_dir() / f"{name}.yaml").read_text(encoding="utf-8")


def load_template(name: str, overrides: Sequence[str] = ()) -> Plan:
    return parse_plan_text(template_text(name), f"template {name}", overrides)


def descriptions() -> list[tuple[str, str]]:
    """Each template's name and description on one line (`arraybench templates`)."""
    return [(n, " ".join(load_template(n).description.split())) for n in template_names()]


def resolve(spec: str, overrides: Sequence[str] = ()) -> Plan:
    """A plan file path, or the name of a built-in template, with `--set` overrides."""
    path = Path(spec)
    if spec in template_names() and not path.exists():
        return load_template(spec, overrides)
    if path.suffix in (".yaml", ".yml") or path.exists() or "/" in spec:
        return load_plan_file(path, overrides)
    raise PlanError(
        f"{spec!r} is neither a plan file nor a template",
        f"give a .yaml plan or one of: {', '.join(template_names())}",
    )
