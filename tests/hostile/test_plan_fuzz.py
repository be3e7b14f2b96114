"""Property-based plan fuzzing: plans of a valid shape carrying hostile values (huge, negative
and non-finite numbers, booleans, newlines, fio and shell syntax, rich markup, long names,
duplicate and unknown keys, deep nesting, aliases) must end `plan check` in exit 0 or 2 with no
traceback and no file written; a few of them really `run` at --scale 0.01 on a scratch file."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arraybench import console
from arraybench.cli import main
from arraybench.plan.catalog import template_names
from tests.conftest import needs_fio

# Until the console prints user strings without reading them as rich markup (the `edges`
# branch makes it so), `[` in an error line is a MarkupError of the console, not of plans: the
# strings with `[` join the fuzzing as soon as the console is markup-free.
MARKUP_SAFE = not getattr(console.err, "_markup", True)
HOSTILE_TEXT = [
    "", " ", "\n", "a\nexec_prerun=touch PWNED", "x#y", "x;y", "${HOME}", "$(id)", "[/]",
    "[bold]x[/bold]", "[link=file:///etc/passwd]x", "-oProxyCommand=id", "..", "../../etc",
    "x" * 300, "é" * 130, "\t", "\x1b[31m", "yes", "null", "~", "1e400s", ".inf", "1us", "-5",
    "999999999999t", "0", "8k", "30s", "0x10", "NaN", "rand-8k-read", "*", "a/b", "'\"",
]  # fmt: skip
HOSTILE_TEXT = [t for t in HOSTILE_TEXT if MARKUP_SAFE or "[" not in t]
TEMPLATES = template_names()
NUMBERS = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40),
    st.integers(min_value=-3, max_value=70_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 4088, 4089, 65535, 65536, 2**32, 2**64, 10**30]),
)
SCALARS = st.one_of(
    NUMBERS,
    st.booleans(),
    st.none(),
    st.sampled_from(HOSTILE_TEXT),
    st.text(max_size=20).filter(lambda t: MARKUP_SAFE or "[" not in t),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(HOSTILE_TEXT), inner, max_size=3),
    ),
    max_leaves=8,
)
GOOD = st.sampled_from([1, 2, 8, 100, "4k", "1m", "2s", "500ms", "a", "random", True, [1, 2]])
LEAVES = st.one_of(SCALARS, SCALARS, GOOD)  # hostile mostly, sometimes a value that fits
# where a hostile value goes: key paths of a plan, `W` for a workload of the plan
PLACES: list[tuple[str | int, ...]] = [
    ("name",), ("description",), ("scenario",), ("labels", "k"), ("labels", "<b>"),
    ("ioengine",), ("direct",), ("monitor",), ("gc_throughput",), ("start_lead",),
    ("timing", "duration"), ("timing", "ramp"), ("timing", "steady", "window"),
    ("timing", "steady", "limit"), ("load", "workers"), ("load", "workers", 0),
    ("load", "iodepth", 0), ("load", "pairs"), ("load", "devices"), ("load", "spread"),
    ("load", "adaptive"), ("data", "compressibility"), ("data",), ("data", "compression"),
    ("data", "dedupe"), ("data", "granule"), ("W", "data"), ("latency_bound", "value"),
    ("precondition", "passes"), ("precondition", "bs"), ("rounds", "max"),
    ("rounds", "window"), ("interference", "steps"), ("interference", "base_jobs"),
    ("interference", "interval"), ("metadata", "threads"), ("metadata", "files_per_thread"),
    ("targets",), ("allow_destroy",), ("hosts",), ("colour",), ("timing", "colour"),
    ("W", "name"), ("W", "bs"), ("W", "read"), ("W", "pattern"), ("W", "region"),
    ("W", "frontend_blocks"), ("W", "ioengine"), ("W", "direct"), ("W", "rate_iops"),
    ("W", "pause_after"), ("W", "group"), ("W", "chart"), ("W", "metric"), ("W", "raed"),
    ("W", "timing", "duration"), ("W", "load", "iodepth"), ("W", "load", "pairs"),
    ("W", "verify", "region"), ("W", "events", 0, "at"), ("W", "events", 0, "run"),
    ("W", "events", 0, "duration"), ("W", "events", 0, "label"), ("W", "analysis"),
    ("acceptance", 0, "min_iops"), ("acceptance", 0, "workload"), ("acceptance", 0, "name"),
]  # fmt: skip


def _base() -> dict[str, Any]:
    return {
        "name": "fuzz",
        "timing": {"ramp": "0s", "duration": "1s"},
        "load": {"workers": [1, 2], "iodepth": [1]},
        "workloads": [
            {"name": "a", "pattern": "random", "bs": "4k", "read": 100},
            {
                "name": "b",
                "pattern": "sequential",
                "bs": "128k",
                "read": 0,
                "events": [{"at": "0s", "run": ["true"]}],
            },
        ],
    }


def _put(plan: dict[str, Any], place: tuple[str | int, ...], value: Any, workload: int) -> None:
    """Set `value` at `place`, making the mappings and lists on the way."""
    node: Any = plan
    path = ("workloads", workload, *place[1:]) if place[0] == "W" else place
    for key, after in itertools.pairwise(path):
        empty: Any = [{}] if isinstance(after, int) else {}
        if isinstance(node, list):
            node = node[key]  # type: ignore[index]
            continue
        if not isinstance(node.get(key), list | dict):
            node[key] = empty
        node = node[key]
    if isinstance(node, list):
        node[path[-1]] = value  # type: ignore[index]
    else:
        node[path[-1]] = value


@st.composite
def plan_texts(draw: st.DrawFn) -> str:
    plan = _base()
    for place in draw(st.lists(st.sampled_from(PLACES), max_size=2)):
        leaf = draw(st.one_of(LEAVES, VALUES))
        _put(plan, place, leaf, draw(st.integers(min_value=0, max_value=1)))
    text = yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)
    mutation = draw(st.sampled_from(["none"] * 8 + ["duplicate", "deep", "alias", "tail"]))
    if mutation == "duplicate":
        text += f"name: {draw(st.sampled_from(['again', 'fuzz']))}\n"
    elif mutation == "deep":
        depth = draw(st.integers(min_value=20, max_value=2000))
        text += "description: " + "[" * depth + "]" * depth + "\n"
    elif mutation == "alias":
        width = draw(st.integers(min_value=2, max_value=12))
        rows = ["x0: &x0 [1, 1]"] + [
            f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * width)}]" for i in range(1, 9)
        ]
        text = "\n".join(rows) + "\n" + text
    elif mutation == "tail":
        text += draw(st.sampled_from([*HOSTILE_TEXT, ": :", "- x", "{", "&a [*a]"])) + "\n"
    return text


_SET_KEYS = st.sampled_from(["timing.duration", "name", "load", "labels.x", "workloads.a.bs"])
OVERRIDES = st.lists(
    st.one_of(
        st.sampled_from([
            "load.workers=[1,2]", "workloads[*].bs=4k", "workloads.a.read=50", "timing=5",
            "load.wrokers=[1]", "workloads[7].bs=1k", "labels.x='<b>'", "x=&a [*a]",
            "timing.duration=1e400s", "load.pairs=[[1, 1]]", "workloads[a.b].bs=4k",
        ]),
        st.builds(lambda k, v: f"{k}={v}", _SET_KEYS, st.sampled_from(HOSTILE_TEXT)),
    ),
    max_size=2,
)  # fmt: skip


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _cli(argv: list[str]) -> tuple[int, str]:
    """Run the CLI in-process; its exit code and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse refuses an option value (e.g. --scale x)
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue() + err.getvalue()


@settings(
    max_examples=600,
    deadline=None,
    database=None,  # no .hypothesis folder in the working tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    text=plan_texts(),
    overrides=st.one_of(st.just([]), st.just([]), OVERRIDES),
    scale=st.sampled_from([None, "1", "0.01", "inf", "nan", "-1", "0", "1e300", "x"]),
    target=st.one_of(st.none(), st.none(), st.sampled_from(HOSTILE_TEXT)),
    only=st.one_of(st.none(), st.none(), st.sampled_from(["a", "*", "zz", *HOSTILE_TEXT])),
    template=st.one_of(st.none(), st.none(), st.none(), st.sampled_from(TEMPLATES)),
)
def test_plan_check_of_a_hostile_plan_is_exit_0_or_2_and_writes_nothing(
    text, overrides, scale, target, only, template
):
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        work = Path(folder)
        plan = work / "plan.yaml"
        plan.write_text(text, encoding="utf-8")
        before = _tree(work)
        argv = ["plan", "check", template or str(plan)]  # a template takes the same --set
        argv += [f"--set={spec}" for spec in overrides]
        argv += [f"--scale={scale}"] if scale else []
        argv += [f"--target={target}"] if target is not None else []
        argv += [f"--only={only}"] if only is not None else []
        code, printed = _cli(argv)
        assert code in (0, 2), printed
        assert "Traceback" not in printed
        assert _tree(work) == before  # plan check writes nothing, not even the scratch folder


RUNS = [
    # allowed but hostile-looking strings: they run and are stored as written
    ("name: fuzz-run\ndescription: 'a [/] b ${X}; #c'\nscenario: '[bold]s[/bold]'\n"
     "labels: {k: '$(id)'}\ntiming: {ramp: 0s, duration: 1s}\nload: {workers: [1]}\n"
     "workloads: [{name: " + "w" * 128 + ", pattern: random, bs: 4k, read: 100}]\n", {0}),
    # events, rate caps, acceptance verdicts (3 when a criterion fails) and odd labels
    ("name: fuzz-events\ntiming: {ramp: 0s, duration: 2s}\nload: {workers: [2]}\n"
     "acceptance: [{name: '<script>x</script>', workload: 's*', min_iops: 1e9}]\n"
     "workloads: [{name: s.1, pattern: sequential, bs: 128k, read: 0, rate_iops: 50,\n"
     "  events: [{at: 0s, label: 'a;b #c', run: ['true']}]}]\n", {3}),
    # duplicate key, boolean worker, a block size direct I/O cannot move: refused, nothing runs
    ("name: a\nname: b\nworkloads: [{name: a, pattern: random, bs: 4k, read: 100}]\n", {2}),
    ("name: r\nload: {workers: [yes]}\n"
     "workloads: [{name: a, pattern: random, bs: 4k, read: 100}]\n", {2}),
    ("name: r\ntiming: {ramp: 0s, duration: 1s}\n"
     "workloads: [{name: a, pattern: random, bs: 1000, read: 0}]\n", {2}),
    ("name: r\ntiming: {ramp: 0s, duration: 1us}\n"
     "workloads: [{name: a, pattern: random, bs: 4k, read: 0}]\n", {2}),
]  # fmt: skip


@needs_fio
@pytest.mark.parametrize(("text", "codes"), RUNS)
def test_a_hostile_plan_that_runs_writes_only_results_and_target(tmp_path, text, codes):
    plan, target, results = tmp_path / "plan.yaml", tmp_path / "t.dat", tmp_path / "results"
    plan.write_text(text, encoding="utf-8")
    before = _tree(tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, printed = _cli(["run", str(plan), "--target", str(target), "--scale", "0.01",
                              "--results", str(results)])  # fmt: skip
    finally:
        os.chdir(cwd)
    assert code in codes and code in (0, 1, 2, 3), printed
    assert "Traceback" not in printed
    written = {p for p in _tree(tmp_path) - before if not p.startswith("results")}
    assert written <= {"t.dat"}, written
    if code == 2:  # refused before anything ran: not even the target was laid out
        assert not target.exists() and not list(results.glob("runs/*"))
