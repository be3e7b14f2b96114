"""Plan parsing (located one-line errors) and expansion into points."""

from __future__ import annotations

import textwrap

import pytest

from arraybench.errors import PlanError
from arraybench.plan import catalog
from arraybench.plan.expand import expand, levels, scale_plan, with_targets
from arraybench.plan.load import parse_plan_text
from arraybench.plan.model import Load, Timing

GOOD = """\
name: t
targets:
  - path: /tmp/a.dat
    size: 64m
  - path: /tmp/b.dat
    size: 64m
load:
  workers: [1, 2]
  iodepth: [1, 8]
workloads:
  - {name: r8, pattern: random, bs: 8k, read: 100}
  - name: s128
    pattern: sequential
    bs: 128k
    read: 0
    load: {pairs: [[1, 32], [4, 32]]}
"""


def test_good_plan_expands_workload_major():
    plan = parse_plan_text(GOOD, "p.yaml")
    points = expand(plan)
    assert [p.key for p in points] == [
        "r8/w1-qd1", "r8/w1-qd8", "r8/w2-qd1", "r8/w2-qd8", "s128/w1-qd32", "s128/w4-qd32",
    ]  # fmt: skip
    assert [p.seq for p in points] == [1, 2, 3, 4, 5, 6]
    assert points[0].workload.bs == 8192
    assert points[4].level.outstanding == 32
    assert not points[0].writes and points[4].writes
    assert [t.path for t in points[0].targets] == ["/tmp/a.dat", "/tmp/b.dat"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: t\nworkloads:\n  - {name: a, pattern: random, bs: 8kk, read: 100}\n",
         "p.yaml:3 workloads[0].bs: invalid size '8kk'"),
        ("name: t\nworkloads:\n  - name: a\n    pattern: random\n    bs: 8k\n    read: 100\n"
         "    colour: red\n", "p.yaml:7 workloads[0].colour: unknown key"),
        ("name: t\ntiming:\n  duration: -5\nworkloads:\n"
         "  - {name: a, pattern: random, bs: 8k, read: 100}\n",
         "p.yaml:3 timing.duration: -5s is out of range: use 1ms to 30d"),
        ("name: t\nload:\n  workers: [1, 0]\nworkloads:\n"
         "  - {name: a, pattern: random, bs: 8k, read: 100}\n", "p.yaml:3 load.workers[1]"),
        ("name: t\nworkloads:\n  - {name: a, pattern: random, bs: 8k, read: 101}\n",
         "workloads[0].read: 101 is out of range: use 0 to 100"),
        ("name: t\nworkloads:\n  - {name: a, pattern: zigzag, bs: 8k, read: 100}\n",
         "workloads[0].pattern"),
        ("name: t\ntargets:\n  - size: 1g\nworkloads:\n"
         "  - {name: a, pattern: random, bs: 8k, read: 100}\n",
         "p.yaml:3 targets[0].path: Field required"),
        ("name: t\nworkloads: 5\n", "p.yaml:2 workloads: Input should be a valid list"),
        ("name: t\nioengine: null\nworkloads:\n  - {name: a, pattern: random, bs: 8k, read: 100}\n",
         "p.yaml:2 ioengine: the value is empty (YAML null)"),
        ("name: t\nworkloads: [\n", "YAML syntax error"),
        ("", "p.yaml: the plan is empty"),
        ("name: t\nworkloadz: []\n", "p.yaml:2 workloadz: unknown key"),
        ("name: t\nload: {workers: [1], pairs: [[1, 1]]}\nworkloads:\n"
         "  - {name: a, pattern: random, bs: 8k, read: 100}\n", "not both"),
        ("name: t\nworkloads:\n  - {name: a, pattern: random, bs: 8k, read: 100}\n"
         "  - {name: a, pattern: random, bs: 4k, read: 100}\n", "repeated: a"),
    ],
)  # fmt: skip
def test_bad_plans_get_one_located_line(text, expected):
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.yaml")
    line = info.value.one_line()
    assert expected in line
    assert "\n" not in line
    assert "Traceback" not in line


def test_every_template_is_valid_and_quick_has_what_the_issue_asks():
    assert "quick" in catalog.template_names()
    for name in catalog.template_names():
        assert expand(with_targets(catalog.load_template(name), [], "/tmp/scratch.dat"))
    quick = catalog.load_template("quick")
    mixes = {(w.pattern, w.bs, w.read) for w in quick.workloads}
    assert {("random", 8192, 100), ("random", 8192, 0), ("random", 8192, 70),
            ("sequential", 131072, 100), ("sequential", 131072, 0)} <= mixes  # fmt: skip
    assert len(levels(quick.load)) >= 5


def test_scale_multiplies_durations_and_sizes_with_floors():
    plan = with_targets(parse_plan_text(GOOD, "p.yaml"), [], "/tmp/scratch")
    scaled = scale_plan(plan.model_copy(update={"timing": Timing(ramp=10, duration=60)}), 0.1)
    assert scaled.timing.duration == 6 and scaled.timing.ramp == 1
    assert scaled.targets[0].size == 16 << 20  # 6.4 MiB is raised to the 16 MiB floor
    assert scale_plan(plan, 1) is plan


def test_default_scratch_target_and_cli_targets():
    text = "name: t\nworkloads:\n  - {name: a, pattern: random, bs: 8k, read: 100}\n"
    plan = parse_plan_text(text, "p.yaml")
    assert [t.path for t in with_targets(plan, [], "/r/scratch.dat").targets] == ["/r/scratch.dat"]
    assert with_targets(plan, [], "/r/s").targets[0].size == 1 << 30
    assert [t.path for t in with_targets(plan, ["/x", "/y"], "/r/s").targets] == ["/x", "/y"]
    existing = with_targets(plan, ["/old", "/new"], "/r/s", lambda p: p == "/old").targets
    assert [t.size for t in existing] == [None, 1 << 30]  # an existing file keeps its own size


def test_pairs_and_lists_give_levels():
    assert [(lv.workers, lv.iodepth) for lv in levels(Load(pairs=[(1, 4), (2, 8)]))] == [
        (1, 4), (2, 8),
    ]  # fmt: skip
    assert len(levels(Load(workers=[1, 2, 3], iodepth=[1, 2]))) == 6


def test_resolve_unknown_name_is_a_plan_error():
    with pytest.raises(PlanError, match="neither a plan file nor a template"):
        catalog.resolve("nosuchtemplate")
    with pytest.raises(PlanError, match="no such plan file"):
        catalog.resolve("missing.yaml")


def test_sizes_and_durations_accept_units():
    text = textwrap.dedent("""\
        name: t
        timing: {ramp: 500ms, duration: 2m}
        latency_bound: {value: 500us, stat: p99}
        workloads:
          - {name: a, pattern: random, bs: 0.5k, read: 100}
    """)
    with pytest.raises(PlanError, match=r"latency_bound\.value: invalid duration '500 furlongs'"):
        parse_plan_text(text.replace("500us", "500 furlongs"), "p.yaml")
    plan = parse_plan_text(text, "p.yaml")
    assert parse_plan_text(text.replace("500us", "0.5ms"), "p.yaml") == plan
    assert plan.timing.ramp == 0.5 and plan.timing.duration == 120
    assert plan.workloads[0].bs == 512
    assert plan.latency_bound.value == pytest.approx(0.0005)


def test_set_overrides_change_a_template_before_validation():
    plan = catalog.resolve("quick", ["load.workers=[1, 8]", "timing.duration=30s",
                                     "workloads[*].bs=4k", "labels.array=A1"])  # fmt: skip
    assert plan.load.workers == [1, 8] and plan.timing.duration == 30
    assert {w.bs for w in plan.workloads} == {4096} and plan.labels == {"array": "A1"}
    assert len(expand(plan)) == 10


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("timing.duration=-1", "--set timing.duration=-1 timing.duration: -1s is out of range"),
        ("load.workers=[1, x]", "--set load.workers=[1, x] load.workers[1]"),
        ("workloads[9].bs=4k", "workloads[9] does not exist"),
        ("timing.duration", "expected KEY=VALUE"),
        ("..=3", "not a key path"),
        ("timing.colour=red", "--set timing.colour=red: timing.colour is not a plan key"),
    ],
)
def test_bad_set_overrides_are_located_on_the_command_line(override, expected):
    with pytest.raises(PlanError) as info:
        catalog.resolve("quick", [override])
    assert expected in info.value.one_line()
