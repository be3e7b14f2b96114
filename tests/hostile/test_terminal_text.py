"""Text that reaches the terminal cannot drive it. A plan string holding a control or escape
character (OSC that sets the window title, an ANSI clear screen, BEL, CR, a C1 CSI, a bidi
override) is refused at load with a located line, exit 2; text from outside the plan that
is printed (a command's output, imported names and file names, paths) is shown escaped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA, main_cli, needs_fio, small_plan

OSC_TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J\x1b[H"
RAW = ("\x1b", "\x07", "\x9b", "\r")

EVENT = "      - {{at: 0s, {key}}}\n"
HOSTILE_PLAN_TEXT = [
    ("workloads[0].events[0].label", EVENT.format(key=f"label: {json.dumps(OSC_TITLE)}, "
                                                      "prompt: {text: hi}")),
    ("workloads[0].events[0].prompt.text",
     EVENT.format(key=f"prompt: {{text: {json.dumps(CLEAR)}}}")),
    ("workloads[0].events[0].prompt.revert_text", EVENT.format(
        key="duration: 1s, prompt: {text: a, revert_text: \"back\\r\\u202eevil\"}")),
    ("workloads[0].events[0].run.argv[1]", EVENT.format(key='run: {argv: [echo, "\\u009b2J"]}')),
    ("workloads[0].events[0].signal.process", EVENT.format(key='signal: {process: "x\\a"}')),
]  # fmt: skip


def _fails_located(plan: Path, *extra: str) -> str:
    done = main_cli("plan", "check", str(plan), *extra)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done
    assert not any(c in done.stdout + done.stderr for c in RAW), repr(done.stderr)
    return lines[0]


@pytest.mark.parametrize(
    ("where", "event"), HOSTILE_PLAN_TEXT, ids=[h[0] for h in HOSTILE_PLAN_TEXT]
)
def test_plan_text_a_terminal_would_act_on_is_refused_located(
    tmp_path: Path, where: str, event: str
) -> None:
    workloads = f"  - name: r\n    pattern: random\n    bs: 4k\n    read: 100\n    events:\n{event}"
    line = _fails_located(small_plan(tmp_path, workloads=workloads))
    assert "plan.yaml:" in line and where in line and "control character" in line, line


def test_scenario_labels_description_and_set_values_are_refused(tmp_path: Path) -> None:
    scenarios = f"scenarios:\n  - {{name: A, label: {json.dumps('ok' + OSC_TITLE)}}}\n"
    line = _fails_located(small_plan(tmp_path, extra=scenarios))
    assert "scenarios[0].label" in line and "\\x1b" in line
    line = _fails_located(small_plan(tmp_path, extra='description: "a\\rb"\n'))
    assert "plan.yaml:" in line and "description" in line and "\\x0d" in line
    line = _fails_located(small_plan(tmp_path), "--set", f"scenario=x{CLEAR}")
    assert "--set scenario=" in line and "\\x1b" in line
    # a line break and a tab in a long text stay allowed
    ok = main_cli("plan", "check", str(small_plan(tmp_path, extra='description: "a\\n\\tb"\n')))
    assert ok.returncode == 0, ok.stderr


def test_imported_names_are_shown_escaped(tmp_path: Path) -> None:
    data = json.loads((DATA / "09_fioplot_fio3.1_json_ns_keys_randread.json").read_text())
    for job in data["jobs"]:
        job["jobname"] = f"job{OSC_TITLE}{CLEAR}\r"
    source = tmp_path / f"in{CLEAR}"
    source.mkdir()
    (source / f"r{OSC_TITLE}.json").write_text(json.dumps(data))
    results = str(tmp_path / "res")
    outputs = [main_cli("import", str(source), "--name", "imp", "--results", results)]
    outputs += [main_cli(*argv, "--results", results)
                for argv in (["runs"], ["show", "latest"], ["report", "latest"])]  # fmt: skip
    for done in outputs:
        assert done.returncode == 0, done.stderr
        text = done.stdout + done.stderr
        assert not any(c in text for c in RAW), repr(text[:2000])


@needs_fio
def test_a_failing_steps_output_is_shown_escaped(tmp_path: Path) -> None:
    noisy = ["sh", "-c", "printf '\\033]0;owned\\007\\033[2J\\233'; exit 3"]
    scenarios = f"scenarios:\n  - {{name: A, before: [{{run: {json.dumps(noisy)}}}]}}\n"
    plan = small_plan(tmp_path, workers="[1]", extra=scenarios,
                      workloads="  - {name: r, pattern: random, bs: 4k, read: 100}\n")  # fmt: skip
    done = main_cli("run", str(plan), "--results", str(tmp_path / "res"))
    text = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in text
    assert not any(c in text for c in RAW), repr(text[-2000:])
    assert "\\x1b]0;owned\\x07" in done.stderr


def test_no_raw_control_character_in_a_path_shown(tmp_path: Path) -> None:
    results = tmp_path / f"res{OSC_TITLE}"
    results.mkdir()
    shutil.copy(DATA / "09_fioplot_fio3.1_json_ns_keys_randread.json", results / "x.json")
    done = main_cli("show", "latest", "--results", str(results))
    assert done.returncode == 2 and not any(c in done.stderr for c in RAW), done.stderr
