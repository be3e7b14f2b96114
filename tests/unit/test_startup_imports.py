"""`--version`, `runs` and `show` of a run without scenarios load neither the plan model
(pydantic) nor the report's renderers: they are what made the CLI start in 0.5 s instead of
0.1 s (docs/performance.md, start-up). Checked in a fresh interpreter, by what it imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SAMPLE = (
    Path(__file__).resolve().parents[1] / "data" / "09_fioplot_fio3.1_json_ns_keys_randread.json"
)
HEAVY = (
    "pydantic",
    "arraybench.plan.model",
    "arraybench.report.render.html.page",
    "openpyxl",
    "yaml",
)
PROBE = """
import contextlib, io, json, sys
from arraybench.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded(*argv: str) -> tuple[int, set[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                         check=True, timeout=60)  # fmt: skip
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return found["code"], set(found["modules"])


def a_run(results: Path) -> str:
    """A small run: one fio JSON of tests/data imported (in this process: the probe's runs)."""
    from arraybench.cli import main

    assert main(["import", str(SAMPLE), "--results", str(results), "--name", "small"]) == 0
    return "latest"


def test_version_runs_and_show_load_no_plan_model_and_no_renderer(tmp_path: Path) -> None:
    run_id = a_run(tmp_path)
    for argv in (["--version"], ["runs", "--results", str(tmp_path)],
                 ["show", run_id, "--results", str(tmp_path)]):  # fmt: skip
        code, modules = loaded(*argv)
        assert code == 0, argv
        assert not [m for m in HEAVY if m in modules], (argv, [m for m in HEAVY if m in modules])


def test_the_probe_sees_what_a_command_loads(tmp_path: Path) -> None:
    """`templates` reads the plans: the same probe finds pydantic there (else it proves nothing)."""
    code, modules = loaded("templates")
    assert code == 0 and "pydantic" in modules and "arraybench.plan.model" in modules
