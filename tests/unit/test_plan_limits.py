"""Plans that mean what they say: YAML limits, duplicate keys, strict and bounded values, and
everything `run` or fio would refuse found by `plan check` (plan/yamlsafe, types, feasible)."""

from __future__ import annotations

import time

import pytest

from arraybench.errors import PlanError
from arraybench.plan.expand import scale_plan, with_targets
from arraybench.plan.feasible import check_runnable
from arraybench.plan.load import parse_plan_text

W = "workloads: [{name: a, pattern: random, bs: 4k, read: 100}]\n"


def refused(text: str) -> str:
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "p.yaml")
    line = info.value.one_line()
    assert "\n" not in line
    return line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: t\nname: u\n" + W, "p.yaml:2 duplicate key 'name' (first at line 1)"),
        ("name: t\ntiming: {duration: 5s, duration: 6s}\n" + W, "p.yaml:2 duplicate key"),
        ("name: t\nload: {workers: [yes]}\n" + W, "p.yaml:2 load.workers[0]: expected a number"),
        ("name: t\nmonitor: 1\n" + W, "p.yaml:2 monitor"),
        ("name: t\nload: {workers: ['8']}\n" + W, "load.workers[0]"),
        ("name: t\ntiming: {duration: .inf}\n" + W, "an infinite value is out of range"),
        ("name: t\ntiming: {duration: .nan}\n" + W, "not a number (nan) is out of range"),
        ("name: t\ntiming: {duration: " + "9" * 400 + "s}\n" + W, "timing.duration"),
        ("name: t\ntiming: {duration: 1e400s}\n" + W, "invalid duration"),
        ("name: t\ntiming: {duration: 1us}\n" + W,
         "p.yaml:2 timing.duration: 1us is out of range: use 1ms to 30d"),
        ("name: t\ntiming: {ramp: 0.5ms}\n" + W,
         "timing.ramp: 500us is out of range: use 0 or 1ms to 30d"),
        ("name: t\ntiming: {duration: 10s, steady: {window: 500ms}}\n" + W,
         "fio checks steady state every second"),
        ("name: t\nload: {workers: [1000000000000000000000000000000]}\n" + W,
         "about 10^30 is out of range: use 1 to 4088 (fio runs at most 4088 jobs)"),
        ("name: t\nload: {iodepth: [65536]}\n" + W, "use 1 to 65535"),
        ("name: t\nworkloads: [{name: a, pattern: random, bs: 999999999999t, read: 100}]\n",
         "workloads[0].bs: about 10^24 is out of range: use 1 to 1g"),
        ("name: t\nworkloads: [{name: a, pattern: random, bs: 4k, read: 100, rate_iops: "
         "4294967296}]\n", "use 1 to 4294967295"),
        ("name: t\ntargets: [{path: /x, size: 2000p}]\n" + W, "targets[0].size"),
        ("name: " + "x" * 129 + "\n" + W, "p.yaml:1 name: String should have at most 128"),
        ("name: t\nworkloads: [{name: " + "w" * 200 + ", pattern: random, bs: 4k, read: 100}]\n",
         "workloads[0].name"),
        ("name: 'a;b'\n" + W, "name: use letters, digits"),
        ("name: t\nscenario: \"a\\nb\"\n" + W, "scenario: one line of text"),
        ("name: t\nioengine: \"libaio\\nexec_prerun=touch x\"\n" + W, "ioengine: an fio engine"),
        ("name: t\nrounds: {workloads: [a], track: a, max: 3, window: 5}\n" + W,
         "window 5 is more"),
        ("name: t\nx: " + "9" * 5000 + "\n" + W, "p.yaml:2 YAML syntax error: cannot read"),
        ("name: t\nx: 2001-13-45\n" + W, "p.yaml:2 YAML syntax error: cannot read '2001-13-45'"),
        ("name: t\nscenario: a\x00b\n" + W, "p.yaml:2 YAML syntax error: unacceptable character"),
        ("name: t\nx: &a [*a]\n" + W, "p.yaml:2 the plan nests deeper than 32 levels"),
        # the integrity writer's sectors: said at plan check, located, not when the run starts
        ("name: t\nworkloads:\n - {name: a, pattern: random, bs: 4k, read: 0,\n"
         "    verify: {block_size: 3}}\n",
         "p.yaml:4 workloads[0].verify.block_size: 3 B is not a whole number of 512-byte"),
        ("name: t\nworkloads:\n - {name: a, pattern: random, bs: 4k, read: 0,\n"
         "    verify: {region: 1000}}\n",
         "p.yaml:4 workloads[0].verify.region: 1000 B is not a whole number of 512-byte"),
        ("name: t\nworkloads:\n - {name: a, pattern: random, bs: 4k, read: 0,\n"
         "    verify: {region: 1k, block_size: 4k}}\n",
         "p.yaml:4 workloads[0].verify: region (1024 B) is smaller than one block (4096 B)"),
        ("name: t\nx: " + "[" * 5000 + "\n", "p.yaml:2 the plan nests deeper than 32 levels"),
    ],
)  # fmt: skip
def test_hostile_values_get_one_located_line(text, expected):
    assert expected in refused(text)


def test_a_labels_number_is_text_and_a_merge_key_is_no_duplicate():
    plan = parse_plan_text(
        "name: t\nlabels: {year: 2024}\ntiming: {<<: {ramp: 1s, duration: 2s}, duration: 3s}\n" + W,
        "p.yaml",
    )
    assert plan.labels == {"year": "2024"}
    assert (plan.timing.ramp, plan.timing.duration) == (1.0, 3.0)


def test_an_alias_bomb_is_refused_before_it_expands():
    rows = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    started = time.monotonic()
    line = refused("\n".join(rows) + "\n")
    assert "expands to more than 100000 values" in line
    assert line.startswith("p.yaml:")
    assert time.monotonic() - started < 30  # 10^9 values if it expanded: it must not


def test_a_huge_plan_file_is_refused_by_size(tmp_path):
    from arraybench.plan.load import load_plan_file

    path = tmp_path / "big.yaml"
    path.write_text("name: t\n" + "# padding\n" * 200_000)
    with pytest.raises(PlanError, match="larger than the limit of 1048576 bytes"):
        load_plan_file(path)


def _checked(text: str, targets: list[str] | None = None) -> str:
    plan = parse_plan_text(text, "p.yaml")
    plan = with_targets(plan, targets or [], "/tmp/scratch.dat")
    with pytest.raises(PlanError) as info:
        check_runnable(plan, aio_max=65536)
    return info.value.one_line()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: t\nload: {workers: [1], devices: [1, 2, 3]}\n" + W,
         "load.devices: asks for 3 devices but the plan has 1 target(s)"),
        ("name: t\ntargets: [{path: /a}, {path: /b}]\n"
         "load: {workers: [4000], spread: per_target, devices: all}\n" + W,
         "4000 workers on each of 2 targets make 8000 fio jobs"),
        ("name: t\nload: {workers: [16], iodepth: [8192]}\n" + W,
         "16 jobs x iodepth 8192 = 131072 outstanding I/Os"),
        ("name: t\nworkloads: [{name: a, pattern: random, bs: 1000, read: 100}]\n",
         "workloads[0].bs: 1000 bytes is not a multiple of 512"),
        ("name: t\ntargets: [{path: /a, size: 1m}]\n"
         "workloads: [{name: a, pattern: random, bs: 2m, read: 100}]\n",
         "workloads[0].bs: 2 MiB is larger than the smallest target"),
        ("name: t\ntargets: [{path: /a, size: 16m}]\n"
         "workloads: [{name: a, pattern: random, bs: 4k, read: 0, verify: {region: 64m}}]\n",
         "verify.region: 64 MiB leaves nothing"),
        # 32 sequential workers each start one 1 MiB stripe further: fio cannot grow /a
        ("name: t\ntargets: [{path: /a, size: 16m}]\nload: {workers: [1, 32]}\n"
         "workloads: [{name: s, pattern: sequential, bs: 1m, read: 100}]\n",
         "target /a: 16 MiB is too small: workloads[0] (s): 32 sequential workers x 1 MiB need "
         "32 MiB on each target, and fio cannot grow a target mid-run"),
        ("name: t\ntargets: [{path: /a, size: 40m}]\n"
         "workloads: [{name: s, pattern: sequential, bs: 1m, read: 0, load: {workers: [2]},\n"
         "             verify: {region: 39m}}]\n",
         "target /a: 40 MiB is too small: workloads[0] (s): 2 sequential workers x 1 MiB + the "
         "39 MiB verify region need 41 MiB"),
        ("name: t\ntiming: {duration: 10s, steady: {window: 20s}}\n" + W,
         "the steady-state window (20s) is longer than the point (10s)"),
        ("name: t\ntiming: {ramp: 1s, duration: 5s}\nworkloads: [{name: a, pattern: random, "
         "bs: 4k, read: 0, events: [{at: 30s, run: [ls]}]}]\n",
         "workloads[0].events[0].at: 30s is after the point ends"),
        ("name: t\nacceptance: [{workload: a, min_iops: 1, hosts: 4}]\n" + W,
         "acceptance[0].hosts: 4 hosts, but the plan has 1"),
        ("name: t\nload: {workers: [" + ", ".join(["1"] * 400) + "], iodepth: ["
         + ", ".join(["1"] * 300) + "]}\n" + W, "the plan has 120000 points, more than 100000"),
    ],
)  # fmt: skip
def test_plan_check_refuses_what_run_or_fio_would(text, expected):
    assert expected in _checked(text)


def test_every_template_is_runnable_as_shipped_and_scaled():
    from arraybench.plan import catalog

    for name in catalog.template_names():
        plan = with_targets(catalog.load_template(name), [], "/tmp/scratch.dat")
        check_runnable(plan, aio_max=65536)
        check_runnable(scale_plan(plan, 0.01), aio_max=65536)


@pytest.mark.parametrize("factor", [float("inf"), float("nan"), 0.0, -1.0, 1e300])
def test_scale_factor_must_be_finite_and_positive(factor):
    plan = parse_plan_text("name: t\n" + W, "p.yaml")
    with pytest.raises(PlanError, match="--scale"):
        scale_plan(plan, factor)


def test_scaling_may_not_carry_a_value_out_of_range():
    plan = parse_plan_text("name: t\ntiming: {duration: 20d}\n" + W, "p.yaml")
    with pytest.raises(PlanError, match=r"--scale 100: .*duration.* out of range"):
        scale_plan(plan, 100)


def test_scaling_keeps_a_workloads_load_inheriting_the_plans():
    from arraybench.plan import catalog
    from arraybench.plan.expand import expand, select

    plan = select(catalog.resolve("hus-fmd", ["load.workers=[1, 4]"]), ["g2-rw70-sync-8k"])
    scaled = scale_plan(plan, 0.0002)  # the workload's load sets iodepth only
    assert [p.level.workers for p in expand(scaled)] == [1, 4]


@pytest.mark.parametrize(
    ("path", "expected"),
    [("", "--target '': an empty path"), ("a" * 5000, "at most 4096 characters")],
)
def test_a_target_path_that_cannot_be_one_is_one_line(path, expected):
    plan = parse_plan_text("name: t\n" + W, "p.yaml")
    with pytest.raises(PlanError, match=expected):
        with_targets(plan, [path], "/tmp/scratch.dat")


def test_a_scaled_scratch_file_holds_every_points_stripes() -> None:
    """cscs at --scale 0.02 scaled its 1 GiB scratch file to 21 MiB, and its 32 sequential
    1 MiB workers need 32 MiB: fio failed at the third point (EPERM on unlink of the pinned
    /dev/fd/N). The file arraybench creates, and a size the plan gave scaled down, keep what
    the points need."""
    from arraybench.plan import catalog

    cscs = scale_plan(with_targets(catalog.load_template("cscs"), [], "/tmp/s.dat"), 0.02)
    assert cscs.targets[0].size == 32 << 20
    check_runnable(cscs, aio_max=65536)
    text = ("name: t\ntargets: [{path: /a, size: 1g}]\nload: {workers: [64]}\n"
            "workloads: [{name: s, pattern: sequential, bs: 1m, read: 100}]\n")  # fmt: skip
    assert scale_plan(parse_plan_text(text, "p.yaml"), 0.01).targets[0].size == 64 << 20
    big = ("name: t\nload: {workers: [2048]}\n"
           "workloads: [{name: s, pattern: sequential, bs: 1m, read: 0}]\n")  # fmt: skip
    assert with_targets(parse_plan_text(big, "p.yaml"), [], "/s").targets[0].size == 2 << 30
