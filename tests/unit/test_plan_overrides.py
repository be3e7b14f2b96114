"""`--set` on every template: workers/iodepth replace pairs, items addressed by name, and every
wrong key answered with the valid keys closest to it (plan/overrides.py, plan/keys.py)."""

from __future__ import annotations

import pytest

from arraybench.errors import PlanError
from arraybench.plan import catalog
from arraybench.plan.expand import expand, with_targets
from arraybench.plan.feasible import check_runnable
from arraybench.plan.load import parse_plan_text


@pytest.mark.parametrize("name", catalog.template_names())
def test_set_workers_passes_plan_check_on_every_template(name):
    plan = catalog.resolve(name, ["load.workers=[1,2]"])
    assert plan.load.workers == [1, 2] and plan.load.pairs is None
    plan = with_targets(plan, [], "/tmp/scratch.dat")
    check_runnable(plan, aio_max=65536)
    # every workload that does not set its own workers now runs the 1, 2 ladder
    own = {w.name for w in plan.workloads if w.load and (w.load.workers or w.load.pairs)}
    levels = {p.level.workers for p in expand(plan) if p.workload.name not in own}
    assert levels == {1, 2} or (name == "snia-pts" and not levels)


def test_set_workers_on_pairs_keeps_the_pairs_iodepth():
    plan = catalog.resolve("cscs", ["load.workers=[1,2,4]"])  # cscs: pairs [[32, 8]]
    assert (plan.load.workers, plan.load.iodepth, plan.load.pairs) == ([1, 2, 4], [8], None)
    assert [p.level.outstanding for p in expand(plan)][:3] == [8, 16, 32]


def test_set_iodepth_on_pairs_keeps_the_pairs_workers_and_pairs_replace_a_grid():
    plan = catalog.resolve("aerodisk", ["load.iodepth=[1,32]"])  # aerodisk: pairs [[16, 32]]
    assert (plan.load.workers, plan.load.iodepth, plan.load.pairs) == ([16], [1, 32], None)
    plan = catalog.resolve("quick", ["load.pairs=[[2, 4], [8, 1]]"])
    assert plan.load.pairs == [(2, 4), (8, 1)] and plan.load.workers is None
    both = catalog.resolve("cscs", ["load.workers=[1]", "load.iodepth=[2]"])
    assert (both.load.workers, both.load.iodepth) == ([1], [2])


def test_a_file_with_both_forms_is_still_an_error_that_says_how_set_behaves():
    with pytest.raises(PlanError, match=r"not both \(on the command line, --set load.workers"):
        parse_plan_text(
            "name: t\nload: {workers: [1], pairs: [[1, 1]]}\n"
            "workloads: [{name: a, pattern: random, bs: 4k, read: 100}]\n",
            "p.yaml",
        )


def test_workloads_are_addressed_by_name_glob_and_index():
    plan = catalog.resolve("quick", ["workloads.rand-8k-read.bs=4k"])
    assert [w.bs for w in plan.workloads][:2] == [4096, 8192]
    plan = catalog.resolve("quick", ["workloads[seq-*].timing.duration=2s"])
    assert [w.timing.duration if w.timing else None for w in plan.workloads] == [
        None, None, None, 2.0, 2.0,
    ]  # fmt: skip
    plan = catalog.resolve("quick", ["workloads[1].read=50"])
    assert plan.workloads[1].read == 50
    plan = catalog.resolve("hus-fmd", ["workloads.g1-cliff-4k.load.pairs=[[1, 1]]"])
    assert plan.workloads[0].load is not None and plan.workloads[0].load.pairs == [(1, 1)]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("workloads.rand-8k-raed.bs=4k",
         "no item of workloads is named 'rand-8k-raed'; did you mean rand-8k-read"),
        ("workloads[9].bs=4k", "workloads[9] does not exist: workloads has 5 item(s) (0 to 4)"),
        ("load.wrokers=[1]", "load.wrokers is not a plan key; did you mean workers?"),
        ("timing.duraton=5s", "timing.duraton is not a plan key; did you mean duration?"),
        ("workloadz.x.bs=4k", "workloadz is not a plan key; did you mean workloads"),
        ("workloads[0].zzz=1", "workloads[0].zzz is not a plan key; valid here: name, pattern"),
        ("acceptance[0].min_iops=5", "acceptance does not exist in the plan; set the whole list"),
        ("load.workers.x=1", "load.workers is a list: address its items by index"),
        ("timing.duration.x=1", "timing.duration is a value, not what 'x' addresses"),
        ("x=&a [*a]", "x is not a plan key"),
        ("labels.a=&a [*a]", "the plan nests deeper than 32 levels"),
        ("load.workers=[yes]", "load.workers[0]: expected a number, got the YAML boolean true"),
    ],
)  # fmt: skip
def test_wrong_keys_name_the_valid_keys_near_them(override, expected):
    with pytest.raises(PlanError) as info:
        catalog.resolve("quick", [override])
    line = info.value.one_line()
    assert expected in line and "\n" not in line


def test_an_unknown_key_in_a_file_names_close_valid_keys():
    with pytest.raises(PlanError) as info:
        parse_plan_text(
            "name: t\nworkloads: [{name: a, pattern: random, bs: 4k, raed: 100}]\n", "p.yaml"
        )
    assert "p.yaml:2 workloads[0].raed: unknown key" in info.value.one_line()
    assert "did you mean read" in info.value.one_line()
