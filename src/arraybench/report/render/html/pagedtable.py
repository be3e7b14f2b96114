"""A table of many rows as one compact data block, drawn a page at a time in the browser.

A 100,000-point run wrote 100,000 `<tr>` of the points table: 44.6 MB of a 121 MB report,
which a browser lays out all at once. Above `PAGED_ROWS` rows the rows travel instead as one
JSON block (each cell as the table would show it; the row headings, repeated over thousands
of rows, as indexes into a list of their distinct texts), and `SCRIPT` draws `PAGE_ROWS` rows
at a time with a pager. A click on a column heading sorts every row, not only the page shown,
by the same rules as the report's sortable tables: numbers as shown, dashes last. Printing
prints the page in view (the caption says so); the CSV and Excel reports hold every row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

PAGED_ROWS = 2000  # above: the rows are drawn by the browser, a page at a time
PAGE_ROWS = 100


def paged_rows(heads: Sequence[Sequence[str]], cells: Sequence[Sequence[str | None]]) -> str:
    """The data block of one table: `heads` (row headings) and `cells` (values as shown, None
    for a dash) per row, one row each."""
    strings: dict[str, int] = {}
    rows = []
    for head, values in zip(heads, cells, strict=True):
        rows.append([strings.setdefault(h, len(strings)) for h in head] + list(values))
    data = {"strings": list(strings), "ids": len(heads[0]) if heads else 0, "rows": rows,
            "page": PAGE_ROWS}  # fmt: skip
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c")  # no `</script>` can end the block early


def paged_table(table_open: str, thead: str, heads: Sequence[Sequence[str]],
                cells: Sequence[Sequence[str | None]]) -> str:  # fmt: skip
    """`table_open` (`<table class=...>`) and its `<thead>`, the rows drawn from the block."""
    total = len(cells)
    return (
        f'<div class="paged">{table_open}{thead}<tbody></tbody></table>'
        f'<p class="pager"><button type="button" data-go="-1">&#8249; previous</button> '
        f'<span class="pageinfo">{min(total, PAGE_ROWS):,} of {total:,} rows</span> '
        f'<button type="button" data-go="1">next &#8250;</button></p>'
        f'<script type="application/json" class="paged-data">{paged_rows(heads, cells)}'
        "</script></div>"
    )


CSS = """
div.paged p.pager { margin:4px 0 12px; font-size:12px; }
div.paged p.pager button { font:inherit; padding:1px 8px; cursor:pointer; }
div.paged table.points thead th { cursor:pointer; }
@media print { div.paged p.pager button { display:none; } }
"""

SCRIPT = """
(function () {
  function leafColumns(head) {  // the column each lowest heading sorts: rowspans, colspans
    var taken = [], found = [];
    for (var r = 0; r < head.rows.length; r++) {
      var x = 0;
      Array.prototype.forEach.call(head.rows[r].cells, function (th) {
        while (taken[r] && taken[r][x]) { x++; }
        for (var dy = 0; dy < th.rowSpan; dy++) {
          taken[r + dy] = taken[r + dy] || [];
          for (var dx = 0; dx < th.colSpan; dx++) { taken[r + dy][x + dx] = true; }
        }
        if (th.colSpan === 1 && r + th.rowSpan === head.rows.length) { found.push([th, x]); }
        x += th.colSpan;
      });
    }
    return found;
  }
  function sortKey(v) {
    if (v === null || v === "" || v === "\\u2013") { return null; }
    var f = Number(String(v).replace(/,/g, ""));
    return isFinite(f) ? f : String(v);
  }
  Array.prototype.forEach.call(document.querySelectorAll("div.paged"), function (box) {
    var data = JSON.parse(box.querySelector("script.paged-data").textContent);
    var table = box.querySelector("table"), body = table.tBodies[0];
    var info = box.querySelector(".pageinfo"), page = 0, rows = data.rows;
    function text(row, k) { return k < data.ids ? data.strings[row[k]] : row[k]; }
    function draw() {
      var pages = Math.max(1, Math.ceil(rows.length / data.page));
      page = Math.min(Math.max(page, 0), pages - 1);
      var start = page * data.page, end = Math.min(rows.length, start + data.page);
      var frag = document.createDocumentFragment();
      for (var i = start; i < end; i++) {
        var tr = document.createElement("tr");
        for (var k = 0; k < rows[i].length; k++) {
          var cell = document.createElement(k < data.ids ? "th" : "td");
          var v = text(rows[i], k);
          cell.textContent = v === null ? "\\u2013" : v;
          tr.appendChild(cell);
        }
        frag.appendChild(tr);
      }
      body.textContent = "";
      body.appendChild(frag);
      info.textContent = "rows " + (start + 1).toLocaleString("en-US") + "\\u2013" +
        end.toLocaleString("en-US") + " of " + rows.length.toLocaleString("en-US") +
        " (page " + (page + 1) + " of " + pages + ")";
    }
    Array.prototype.forEach.call(box.querySelectorAll("button[data-go]"), function (b) {
      b.addEventListener("click", function () { page += Number(b.dataset.go); draw(); });
    });
    leafColumns(table.tHead).forEach(function (pair) {
      var th = pair[0], col = pair[1];
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(table.tHead.querySelectorAll("th"), function (h) {
          h.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var keyed = rows.map(function (row, i) { return [sortKey(text(row, col)), i, row]; });
        keyed.sort(function (a, b) {
          if (a[0] === null || b[0] === null) {
            return a[0] === b[0] ? a[1] - b[1] : (a[0] === null ? 1 : -1);
          }
          var s = asc ? 1 : -1, d;
          if (typeof a[0] === "number" && typeof b[0] === "number") { d = a[0] - b[0]; }
          else { d = String(a[0]).localeCompare(String(b[0]), undefined, {numeric: true}); }
          return d ? s * d : a[1] - b[1];
        });
        rows = keyed.map(function (k) { return k[2]; });
        page = 0;
        draw();
      });
    });
    draw();
  });
})();
"""
