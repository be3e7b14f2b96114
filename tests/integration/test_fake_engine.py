"""The engine seam: a second engine, registered from the tests, runs a whole campaign.

Nothing in `arraybench.run` knows the fake engine (tests/fake_engine.py): `plan check`,
`run`, `show` and `report` go through the registry and the Engine protocol alone. Its
figures follow its queueing model exactly, so a wrong sum or a lost job shows here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arraybench.engines import registry
from arraybench.engines.base import Capabilities
from arraybench.finding_kinds import CURVE, PRECONDITION, PURGE, WARMUP
from arraybench.store.db import Store
from tests.conftest import main_cli, small_plan
from tests.fake_engine import PARALLEL, PLAN_LINES, VERSION, FakeEngine, model

pytestmark = pytest.mark.usefixtures("fake_engine")


def _plan(tmp_path: Path, extra: str = "") -> Path:
    return small_plan(tmp_path, workers="[1, 8, 16]", extra=PLAN_LINES + extra)


def test_a_campaign_runs_on_the_fake_engine_end_to_end(tmp_path: Path) -> None:
    plan, results = _plan(tmp_path), str(tmp_path / "r")
    checked = main_cli("plan", "check", str(plan), "--results", results)
    assert checked.returncode == 0, checked.stderr
    done = main_cli("run", str(plan), "--results", results)
    assert done.returncode == 0, done.stderr + done.stdout
    shown = main_cli("show", "latest", "--results", results, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    points = json.loads(shown.stdout)["points"]
    assert len(points) == 6  # 2 workloads x 3 levels, every one stored
    by_key = {p["key"]: p for p in points}
    for key, p in by_key.items():
        folder = Path(p["folder"])
        assert (folder / "point.fake").exists() and not (folder / "fio.json").exists(), key
        job = json.loads((folder / "point.fake").read_text())
        want = sum(d.iops for d in model(job).values())
        assert p["total_iops"] == pytest.approx(want, rel=1e-6), key
    # the model's shape survives the campaign: IOPS rise with the load until the device is
    # saturated (16 outstanding at 8 workers x qd 2), latency flat before, growing after
    rand = [by_key[f"rand-8k-rw70/w{w}-qd2"] for w in (1, 8, 16)]
    assert rand[0]["total_iops"] < rand[1]["total_iops"] == pytest.approx(rand[2]["total_iops"])
    assert rand[2]["total_lat_mean_us"] == pytest.approx(
        rand[1]["total_lat_mean_us"] * 32 / PARALLEL,
        rel=1e-4,  # 32 outstanding, 16 served
    )
    assert {p["engine_version"] for p in points} == {VERSION}
    report = main_cli("report", "latest", "--results", results, "-o", str(tmp_path / "rep.html"))
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "rep.html").read_text()
    assert "rand-8k-rw70" in html
    # the engine's own job file reaches the report's appendix (stored with the point)
    first = json.loads((Path(points[0]["folder"]) / "point.fake").read_text())
    assert f"{first['bs']}" in html and "Job files (" in html and "Job files (0)" not in html


def test_an_unknown_engine_is_one_located_line_naming_the_known_ones(tmp_path: Path) -> None:
    plan = small_plan(tmp_path, extra="engine: elbencho\n")
    done = main_cli("plan", "check", str(plan), "--results", str(tmp_path / "r"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    line = plan.read_text().splitlines().index("engine: elbencho") + 1
    want = f"error: {plan}:{line} engine: 'elbencho' is not a known engine"
    assert lines[0].startswith(want), lines
    assert "fake, fio" in lines[0] and "Traceback" not in done.stderr


def test_a_fio_only_part_refuses_another_engine(tmp_path: Path) -> None:
    plan = _plan(tmp_path, extra="interference: {}\n")
    done = main_cli("plan", "check", str(plan), "--results", str(tmp_path / "r"))
    assert done.returncode == 2, done.stdout
    assert "engine: 'fake' cannot run `interference` (fio only)" in done.stderr


def test_the_registry_forgets_a_test_engine_but_never_fio() -> None:
    assert registry.names() == ["fake", "fio", "mdtest"]
    registry.unregister("fio")
    assert "fio" in registry.names()


def test_a_test_kind_runs_through_the_engine(tmp_path: Path) -> None:
    """The response-time curve (a test kind after the grid) on the fake engine: each rate is
    a job of the engine's own (`point_job` with `rate_iops`), and its figures are the model's
    exactly: half the maximum is reached, four times it is not (the device is saturated)."""
    curve = "curve: {percents: [50, 400], tolerance: 10}\n"
    rr = "  - {name: rr-4k, pattern: random, bs: 4k, read: 100}\n"
    plan = small_plan(tmp_path, workers="[8, 16]", extra=PLAN_LINES + curve, workloads=rr)
    results = tmp_path / "r"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr + done.stdout
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    half, four = sorted(CURVE.among(store.findings(run.id)), key=lambda d: d["percent"])
    top = model({"bs": 4096, "read": 100, "jobs": 8, "iodepth": 2})["read"].iops
    assert half["max_iops"] == pytest.approx(top, rel=1e-6)
    assert half["reached"] and half["achieved_iops"] == pytest.approx(half["planned_iops"], 1e-6)
    assert not four["reached"] and four["achieved_iops"] == pytest.approx(top, rel=1e-6)
    job = next((Path(run.folder) / "points").glob("*-curve-rr-4k-p50/point.fake"))
    assert json.loads(job.read_text())["rate_iops"] == half["planned_iops"] / 8


def test_conditioning_and_a_logged_warm_up_go_through_the_engine(tmp_path: Path) -> None:
    """Purge, preconditioning and `log_ramp`'s warm-up phase are the engine's jobs too: the
    fake engine's job files are in their folders and their findings are stored."""
    extra = PLAN_LINES + "purge: true\nprecondition: {passes: 1}\n"
    rr = "  - {name: rr, pattern: random, bs: 4k, read: 100}\n"
    plan = small_plan(tmp_path, workers="[1]", extra=extra, workloads=rr)
    text = plan.read_text().replace("{ramp: 0s, duration: 1s}",
                                    "{ramp: 2s, duration: 1s, log_ramp: true}")  # fmt: skip
    plan.write_text(text)
    results = tmp_path / "r"
    done = main_cli("run", str(plan), "--results", str(results))
    assert done.returncode == 0, done.stderr + done.stdout
    store = Store(results, create=False)
    ((run, _),) = store.list_runs()
    kinds = {f.kind for f in store.findings(run.id)}
    assert {PURGE.name, PRECONDITION.name, WARMUP.name} <= kinds, kinds
    assert (Path(run.folder) / "precondition" / "point.fake").exists()
    [warm] = WARMUP.among(store.findings(run.id, WARMUP.name))
    assert warm["seconds"] == 2 and len(warm["samples"]) == 2  # the ramp's two seconds
    [point] = store.points(run.id)
    assert (Path(point.folder) / "warmup" / "point.fake").exists()


class _MetadataOnly(FakeEngine):
    capabilities = Capabilities(grid=False)  # like mdtest: no grid of points


def test_run_asks_what_an_engine_declares_not_its_name(tmp_path: Path) -> None:
    """An engine declaring no grid is refused for the grid's points whatever its name."""
    registry.register("gridless", _MetadataOnly)
    try:
        plan = _plan(tmp_path)
        plan.write_text(plan.read_text().replace("engine: fake", "engine: gridless"))
        done = main_cli("plan", "check", str(plan), "--results", str(tmp_path / "r"))
    finally:
        registry.unregister("gridless")
    assert done.returncode == 2, done.stdout
    assert "engine: 'gridless' runs only the metadata test" in done.stderr
