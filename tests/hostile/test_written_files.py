"""What is in the way of a file arraybench writes: a symbolic link planted at a chart's name
(to a file outside the chart folder, or to nothing there yet), a FIFO, a directory; a link
or a FIFO at a report's `-o` name, for the formats written in place before (HTML, CSV) and
by a library that opens its file by name (xlsx). Each is refused at once with one line and
exit 2, before any chart is written, and nothing outside the named place changes; a hard
link at a chart's name is replaced, its other name keeping its bytes; the run's own
live.json writer replaces a link at its name instead of writing through it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from arraybench.live.state import LIVE_NAME, LiveState
from arraybench.outfiles import write_file
from arraybench.report.assemble import report_for_run
from arraybench.report.render.chartfiles.export import name_charts, write_charts
from arraybench.report.render.html.page import render_html
from arraybench.store.db import Store
from tests.hostile.stores import mkfifo, refused, results_with_a_run

pytestmark = pytest.mark.timeout(
    60
)  # a FIFO opened for writing waits for a reader: fail, never hang
SECRET = b"the target's own bytes, not a chart\n"


def _run_and_names(tmp_path: Path) -> tuple[Path, str, list[str]]:
    """A results folder with one run, its id and its charts' names (as `--charts` names them)."""
    results = tmp_path / "results"
    run = results_with_a_run(results)
    store = Store(results, create=False)
    try:
        html = render_html(report_for_run(store, run), every_chart=True)
    finally:
        store.close()
    names = [c.name for c in name_charts(html)[1]]
    assert names, "the sample run's report has charts"
    return results, run, names


def _outside(tmp_path: Path) -> Path:
    target = tmp_path / "elsewhere" / "precious.txt"
    target.parent.mkdir()
    target.write_bytes(SECRET)
    return target


def test_links_fifos_and_folders_at_chart_names_are_refused(tmp_path: Path) -> None:
    results, run, names = _run_and_names(tmp_path)
    target = _outside(tmp_path)
    never = tmp_path / "elsewhere" / "not-yet.png"  # a dangling link must not create it
    cases = {
        f"{names[-1]}.png": (lambda p: p.symlink_to(target), "a symbolic link"),
        f"{names[0]}.svg": (lambda p: p.symlink_to(never), "a symbolic link"),
        f"{names[0]}.png": (mkfifo, "a FIFO (named pipe)"),
        f"{names[-1]}.svg": (lambda p: p.mkdir(), "a directory"),
    }
    for planted, (plant, said) in cases.items():
        charts = tmp_path / f"charts-{len(list(tmp_path.iterdir()))}"
        charts.mkdir()
        plant(charts / planted)
        started = time.monotonic()
        line = refused(["report", run, "--results", str(results), "-o",
                        str(tmp_path / "r.html"), "--charts", str(charts)], said)  # fmt: skip
        assert planted in line and "remove it or name another place" in line
        assert time.monotonic() - started < 20, planted
        assert sorted(p.name for p in charts.iterdir()) == [planted], "a chart was written"
        assert not (tmp_path / "r.html").exists(), "the report was written before the refusal"
    assert target.read_bytes() == SECRET
    assert not never.exists()


@pytest.mark.parametrize("fmt", ["html", "csv", "xlsx"])
def test_a_link_or_fifo_at_the_report_name_is_refused(tmp_path: Path, fmt: str) -> None:
    results, run, _ = _run_and_names(tmp_path)
    target = _outside(tmp_path)
    link = tmp_path / f"report.{fmt}"
    link.symlink_to(target)
    refused(["report", run, "--results", str(results), "-o", str(link)], "a symbolic link")
    assert target.read_bytes() == SECRET and link.is_symlink()
    fifo = mkfifo(tmp_path / f"fifo.{fmt}")
    refused(["report", run, "--results", str(results), "-o", str(fifo)], "a FIFO (named pipe)")
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == [], "a refused report left its temporary file"


def test_a_hard_link_at_a_chart_name_keeps_its_other_name(tmp_path: Path) -> None:
    """A chart file hard-linked from outside (a previous export shared elsewhere): the new
    chart replaces the name in the folder, the outside name keeps what it held."""
    results, run, names = _run_and_names(tmp_path)
    target = _outside(tmp_path)
    charts = tmp_path / "charts"
    charts.mkdir()
    os.link(target, charts / f"{names[0]}.svg")
    store = Store(results, create=False)
    try:
        html = render_html(report_for_run(store, run), every_chart=True)
    finally:
        store.close()
    written = write_charts(html, charts, png=False)
    assert (charts / f"{names[0]}.svg").read_text().startswith("<?xml")
    assert target.read_bytes() == SECRET and len(written) == len(names)
    assert os.stat(target).st_nlink == 1


def test_the_live_file_writer_replaces_links_never_writes_through(tmp_path: Path) -> None:
    target = _outside(tmp_path)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / LIVE_NAME).symlink_to(target)
    # the name the writer used before: planted where a predictable spare name would be
    (folder / f".{LIVE_NAME}.{os.getpid()}.tmp").symlink_to(target)
    state = LiveState()
    state.folder = folder
    state.write(force=True)
    assert target.read_bytes() == SECRET
    assert not (folder / LIVE_NAME).is_symlink()
    assert b'"version":1' in (folder / LIVE_NAME).read_bytes()
    # a directory at the name: the write is skipped (the next one retries), nothing raised
    (folder / LIVE_NAME).unlink()
    (folder / LIVE_NAME).mkdir()
    state.write(force=True)
    assert (folder / LIVE_NAME).is_dir()
    spare = f".{LIVE_NAME}.{os.getpid()}.tmp"
    assert {p.name for p in folder.iterdir()} == {LIVE_NAME, spare}, "a temporary file was left"


def test_unchecked_write_replaces_a_fifo_without_opening_it(tmp_path: Path) -> None:
    fifo = mkfifo(tmp_path / "x.json")
    write_file(fifo, "{}", "x", checked=False)
    assert fifo.is_file() and fifo.read_text() == "{}"


def test_a_link_at_the_run_lock_name_is_never_truncated(tmp_path: Path) -> None:
    """The lock file is truncated and given the holder's pid: a link planted at its name
    (a resume of a run whose folder others can write) must not truncate its target."""
    from arraybench.store.db import LOCK_NAME

    results, run, _ = _run_and_names(tmp_path)
    target = _outside(tmp_path)
    (results / "runs" / run / LOCK_NAME).symlink_to(target)
    refused(["run", "--resume", run, "--results", str(results)], "a symbolic link")
    assert target.read_bytes() == SECRET


def test_a_writer_that_fails_leaves_the_old_file_whole_and_no_spare(tmp_path: Path) -> None:
    """A report that fails half-way (a full disk, Ctrl-C) leaves the previous report as it
    was, not a half file, and no temporary file beside it."""
    from arraybench.outfiles import replacing

    old = tmp_path / "r.xlsx"
    old.write_bytes(SECRET)
    for failure in (OSError(28, "No space left on device"), KeyboardInterrupt()):
        with pytest.raises(type(failure)), replacing(old, "the report") as spare:
            spare.write_bytes(b"half a work")
            raise failure
        assert old.read_bytes() == SECRET
        assert sorted(p.name for p in tmp_path.iterdir()) == ["r.xlsx"]


def test_run_refuses_a_link_at_its_report_name_before_it_runs(tmp_path: Path) -> None:
    """`run -o FILE` with a link at FILE: said before the campaign's minutes, not after."""
    from tests.conftest import small_plan

    target = _outside(tmp_path)
    link = tmp_path / "out" / "report.pdf"
    link.parent.mkdir()
    link.symlink_to(target)
    results = tmp_path / "results"
    refused(["run", str(small_plan(tmp_path)), "--results", str(results), "-o", str(link)],
            "is a symbolic link: arraybench writes the pdf report")  # fmt: skip
    assert not results.exists() and target.read_bytes() == SECRET
