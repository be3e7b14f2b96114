"""Above PAGED_ROWS points the report's points table is one data block drawn a page at a time:
no `<tr>` per point, every value still there as the table shows it, and a user's text cannot
end the block early. The browser test draws it in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from arraybench.report.model import PointRow
from arraybench.report.pointstable import points_layout
from arraybench.report.render.html import appendix, pagedtable
from arraybench.report.render.pdf import printout


def rows(n: int, series: str = "rand-8k") -> list[PointRow]:
    return [
        PointRow(
            series,
            f"w{k % 8 + 1}-qd{k // 8 + 1}",
            k % 8 + 1,
            k // 8 + 1,
            "/dev/sdb",
            {
                "total_ios": 10.0,
                "total_iops": 1000.0 + k,
                "total_mbps": 8.192,
                "total_lat_mean_us": None if k == 7 else 250.5,
            },
        )
        for k in range(n)
    ]


def block(text: str) -> dict:
    found = re.findall(r'<script type="application/json" class="paged-data">(.*?)</script>', text,
                       re.S)  # fmt: skip
    assert len(found) == 1
    return json.loads(found[0])


def table_of(points: list[PointRow]) -> str:
    layout = points_layout(points, totals_only=True)
    return "".join(appendix._points_table(points, layout, t) for t in layout.tables)


def test_a_small_table_keeps_its_rows():
    text = table_of(rows(pagedtable.PAGED_ROWS))
    assert text.count("<tr>") == pagedtable.PAGED_ROWS + 3 and "paged-data" not in text


def test_a_large_table_travels_as_one_block_of_the_shown_values():
    n = pagedtable.PAGED_ROWS + 1
    text = table_of(rows(n))
    assert "<tbody></tbody>" in text and text.count("<tr>") == 3  # only the heading rows
    data = block(text)
    assert len(data["rows"]) == n and data["ids"] == 2 and data["page"] == pagedtable.PAGE_ROWS
    first, eighth = data["rows"][0], data["rows"][7]
    assert [data["strings"][i] for i in first[:2]] == ["rand-8k", "w1-qd1"]
    assert first[2:5] == [appendix.format_value(v) for v in (1000.0, 8.192, 250.5)]  # as shown
    assert eighth[4] is None  # a dash
    assert len(data["strings"]) == n + 1  # the series name, repeated n times, stored once
    assert "Shown 100 rows a page" not in text  # the caption is the section's (below)


def test_a_users_text_cannot_close_the_block():
    evil = "</script><script>alert(1)</script>"
    text = table_of(rows(pagedtable.PAGED_ROWS + 1, series=evil))
    assert "</script><script>alert" not in text
    assert evil in block(text)["strings"]


def test_the_report_says_how_the_rows_are_shown_and_carries_the_script():
    points = rows(pagedtable.PAGED_ROWS + 1)
    model = type("M", (), {"points": points, "audience": "engineer"})()
    section = appendix.points_section(model)
    assert "Shown 100 rows a page" in section and "paged-data" in section
    assert "div.paged" in pagedtable.SCRIPT and "leafColumns" in pagedtable.SCRIPT


PROBE = """
var box = document.querySelector("div.paged"), out = [];
function seen() { return [box.querySelector(".pageinfo").textContent,
                          box.querySelector("tbody").rows.length]; }
out.push(seen());
box.querySelector("button[data-go='1']").click();
out.push(seen());
var iops = Array.prototype.filter.call(box.querySelectorAll("thead th"),
                                       function (h) { return h.textContent === "IOPS"; })[0];
iops.click(); iops.click();  // ascending, then descending: over every row, not the page
out.push(box.querySelector("tbody").rows[0].cells[2].textContent);
document.body.setAttribute("data-out", JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_the_browser_draws_a_page_and_sorts_every_row(tmp_path: Path) -> None:
    n = pagedtable.PAGED_ROWS + 1
    page = tmp_path / "t.html"
    page.write_text(f"<!DOCTYPE html><html><body>{table_of(rows(n))}<script>"
                    f"{pagedtable.SCRIPT}{PROBE}</script></body></html>")  # fmt: skip
    done = subprocess.run([shutil.which("chromium") or "", *printout.OFFLINE_FLAGS,
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                           page.as_uri()], capture_output=True, text=True, timeout=60)  # fmt: skip
    found = re.search(r'data-out="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    out = json.loads(found.group(1).replace("&quot;", '"'))
    assert out[0] == ["rows 1–100 of 2,001 (page 1 of 21)", 100]
    assert out[1] == ["rows 101–200 of 2,001 (page 2 of 21)", 100]
    assert out[2] == appendix.format_value(1000.0 + n - 1)  # the largest IOPS of all rows first
