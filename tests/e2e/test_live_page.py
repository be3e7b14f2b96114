"""The live page (`run --serve`) in a real headless Chromium during a real run: the current
point's chart grows between two screenshots, and hovering a finished point's curve shows the
figures the store holds for it."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from pathlib import Path

import pytest

from arraybench.report.render.pdf import printout
from arraybench.store.db import Store
from arraybench.units import format_quantity
from tests.conftest import needs_fio
from tests.e2e.test_live_run import rated_plan, served_run
from tests.e2e.test_report_pages import HOVER_AT

pytestmark = [
    needs_fio,
    pytest.mark.skipif(
        shutil.which("chromium") is None and not Path(printout.CHROMIUM).exists(),
        reason="chromium is not installed",
    ),
]

SECONDS_DRAWN = """
(function () {
  var rect = document.querySelector("section.now rect.hover");
  return rect ? rect.getAttribute("data-xs").split(",").length : 0;
})()
"""


def _evaluate(c: printout._Chromium, session: str, expression: str) -> object:
    got = c.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                 session=session)  # fmt: skip
    return got["result"].get("value")


def _screenshot(c: printout._Chromium, session: str) -> str:
    return str(c.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"])


def _wait_for(c: printout._Chromium, session: str, expression: str, limit: float) -> None:
    stop = time.monotonic() + limit
    while not _evaluate(c, session, expression):
        assert time.monotonic() < stop, f"never true on the live page: {expression}"
        time.sleep(0.3)


def test_live_page_grows_and_its_hover_shows_the_stored_figures(tmp_path: Path) -> None:
    # an event with a plan string the page must show as text: its mark on the chart
    plan = rated_plan(tmp_path, duration=8, events="{at: 1s, run: ['true'], label: '<b>mark</b>'}")
    with served_run(tmp_path, plan) as (proc, url):
        # every other name still resolves nowhere: the page needs nothing but its server
        loopback = ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
        with printout._Chromium(loopback, pipe=True, timeout=90, what="watching") as c:
            session = c.open_page(url, width=1280)
            _wait_for(c, session, SECONDS_DRAWN + " >= 2", 30)
            first, before = _evaluate(c, session, SECONDS_DRAWN), _screenshot(c, session)
            time.sleep(3)
            second, after = _evaluate(c, session, SECONDS_DRAWN), _screenshot(c, session)
            assert before != after
            assert isinstance(first, int) and isinstance(second, int) and second > first
            marks = _evaluate(c, session, "document.querySelector('section.now svg').textContent")
            assert "<b>mark</b>" in str(marks)  # the event's mark, as text, not HTML
            assert _evaluate(c, session, "document.querySelectorAll('section b').length") == 0
            # the first point's curve, once it is finished: hovered like the report's
            _wait_for(c, session, "!!document.querySelector('section.done rect.hover')", 60)
            where = _evaluate(c, session, f"{HOVER_AT}('section.done rect.hover', 0)")
            x, y = json.loads(str(where))
            c.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y},
                   session=session)  # fmt: skip
            tip = str(_evaluate(c, session, "document.querySelector('.charttip').textContent"))
            state = _evaluate(c, session, "document.getElementById('state').textContent")
        with urllib.request.urlopen(url + "metrics", timeout=5) as answer:
            metrics = answer.read().decode()
        proc.wait(timeout=120)
    assert proc.returncode == 0 and state == "running"
    store = Store(tmp_path / "res", create=False)
    run = store.list_runs()[0][0]
    stored = store.points(run.id)[0]
    counted = [
        line
        for line in metrics.splitlines()
        if line.startswith("arraybench_events_total{") and 'event="<b>mark</b>"' in line
    ]
    applied = next(line for line in counted if 'action="applied"' in line)
    assert applied.endswith((" 1", " 2")), metrics  # once per point so far (a run: no revert)
    assert f"rated: {format_quantity(stored.throughput(), stored.unit)}" in tip.splitlines()
