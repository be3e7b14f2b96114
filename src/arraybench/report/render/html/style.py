"""The HTML report's look and its small script: the stylesheet (screen and print: A4 margins,
page breaks, tables no wider than the page) and the script that sorts a table by a click on
its heading and opens every folded part before printing. The charts' hover and the paged
table bring their own (report/charts/interact.py, `pagedtable.py`); `page.py` inlines all of
them, so the page works offline.
"""

from __future__ import annotations

CSS = """
:root { --fg:#1f2937; --muted:#6b7280; --line:#e5e7eb; --head:#f3f4f6; --accent:#1f5fa8; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:#fff; line-height:1.45;
  font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif; }
main { max-width:1120px; margin:0 auto; padding:28px 32px 48px; }
h1 { font-size:24px; margin:0 0 4px; }
h2 { font-size:18px; margin:36px 0 12px; padding-bottom:4px; border-bottom:2px solid var(--line); }
h3 { font-size:15px; margin:24px 0 8px; }
.subtitle { color:var(--muted); margin:0 0 16px; }
nav.contents { display:none; }
nav.toc { font-size:13px; color:var(--muted); margin:0 0 18px; }
nav.toc a { color:var(--accent); text-decoration:none; margin-right:14px; }
dl.meta { display:grid; grid-template-columns:max-content 1fr max-content 1fr; gap:4px 16px;
  margin:0; padding:12px 16px; background:#f9fafb; border:1px solid var(--line);
  border-radius:6px; }
dl.meta dt { color:var(--muted); }
dl.meta dd { margin:0; overflow-wrap:anywhere; }
.chip { display:inline-block; padding:0 7px; margin:0 4px 2px 0; border-radius:10px;
  background:#e8eef7; font-size:12px; }
.status { font-weight:600; padding:0 8px; border-radius:10px; font-size:12px; }
.status-complete { background:#dcfce7; color:#166534; }
.status-interrupted { background:#fef3c7; color:#92400e; }
.status-running { background:#dbeafe; color:#1e40af; }
.status-other { background:var(--head); color:var(--fg); }
.notes { margin:16px 0 0; padding:10px 16px 10px 36px; background:#fffbeb;
  border:1px solid #fcd34d; border-left:4px solid #f59e0b; border-radius:6px; }
.notes li { margin:2px 0; }
ul.findings { margin:6px 0 0 18px; font-size:13px; }
.notes-title { font-weight:600; margin:0 0 4px -20px; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { border:1px solid var(--line); padding:5px 8px; text-align:left; vertical-align:top; }
thead th { background:var(--head); font-weight:600; }
table.summary td { min-width:170px; }
table.plain td { font-variant-numeric:tabular-nums; }
table.summary th[scope=row] { background:#fafafa; font-weight:600; }
table.summary th[scope=row] a { color:inherit; text-decoration:none; }
td.pass { background:#dcfce7; color:#166534; font-weight:700; }
td.fail { background:#fee2e2; color:#991b1b; font-weight:700; }
table.provenance th[scope=row] { width:28%; background:#fafafa; font-weight:600; }
table.provenance td { overflow-wrap:anywhere; }
.opt { font-weight:700; font-size:14px; }
.ext, .bnd { font-size:12px; color:var(--muted); }
div.gap { height:10px; }
.caption { font-size:12px; color:var(--muted); margin:6px 0 0; }
figure.panel { margin:0 0 10px; padding:6px 0; border-bottom:1px solid var(--line); }
figure.panel:last-child { border-bottom:none; }
svg.chart { display:block; max-width:100%; height:auto; }
.points-wrap { overflow-x:auto; }
table.points { font-size:12px; margin:0 0 14px; }
table.points th.group { text-align:center; background:#e8eef7; }
table.points tbody th:first-child { min-width:12em; }
dl.fixed { display:flex; flex-wrap:wrap; gap:2px 18px; margin:0 0 8px; font-size:13px; }
dl.fixed dt { color:var(--muted); } dl.fixed dd { margin:0 0 0 -12px; overflow-wrap:anywhere; }
table.points td { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
table.points tbody th { font-weight:normal; background:none; white-space:nowrap; }
table.points tbody tr:nth-child(even) { background:#fafafa; }
table.sortable thead th { cursor:pointer; user-select:none; white-space:nowrap; }
table.sortable th[aria-sort=ascending]::after { content:" \\25B2"; font-size:9px; }
table.sortable th[aria-sort=descending]::after { content:" \\25BC"; font-size:9px; }
pre { background:#f6f8fa; border:1px solid var(--line); border-radius:6px; padding:10px 12px;
  font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; overflow-x:auto; }
details { margin:4px 0; }
details.series > summary { font-family:inherit; font-size:13px; }
details summary { cursor:pointer; font-size:12px;
  font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; }
footer { margin-top:40px; color:var(--muted); font-size:12px; }
.print-only { display:none; }
.screen-only-inline { display:inline; }
#lookup table, #all-notes { font-size:12px; }
@media print {
  @page { size:A4; margin:14mm 12mm; }
  .print-only { display:block; }
  .screen-only, .screen-only-inline { display:none; }
  body { font-size:11px; }
  /* a summary or a seed table is read whole: never split across pages (one taller than a
     page still breaks), its heading and caption kept with it */
  table.summary, table.plain, #summary { break-inside:avoid; page-break-inside:avoid; }
  h3, h3 + p.caption { break-after:avoid; page-break-after:avoid; }
  /* a series' folded percentiles: the chart's own title names it, the fold's is the same */
  #distribution details.dist > summary { display:none; }
  main { max-width:none; padding:0; }
  nav.toc { display:none; }
  nav.contents { display:block; margin:8px 0 0; font-size:12px; }
  nav.contents ol { margin:4px 0 0 18px; padding:0; max-width:120mm; }
  nav.contents span.pg { float:right; }
  nav.contents a { color:inherit; text-decoration:none; }
  .contents-title { font-weight:600; margin:0; }
  #appendix { break-before:page; page-break-before:always; }
  #lookup table, #all-notes { font-size:9px; }
  #lookup th, #lookup td { padding:2px 4px; }
  #jobs .print-only > pre:first-of-type { columns:2; column-gap:8mm; }
  #jobs pre { font-size:7.5px; line-height:1.25; padding:4px 6px; margin:2px 0; }
  #jobs details { break-inside:avoid; }
  h2 { break-after:avoid; page-break-after:avoid; }
  #workloads, section.workload + section.workload { break-before:page; page-break-before:always; }
  table { max-width:100%; }
  table.points, table.points th { font-size:9px; white-space:normal; }
  table.points td { font-size:9px; white-space:nowrap; }
  table.points tr.none { display:none; }
  table.points tbody th { font-size:9px; white-space:normal; }
  table.points tbody th:first-child { min-width:0; }
  table.points th, table.points td { padding:2px 5px; line-height:1.25; }
  th, td { overflow-wrap:break-word; }
  figure.panel, tr, .notes, dl.meta { break-inside:avoid; page-break-inside:avoid; }
  /* the histograms, secondary to the curves: two to a row on paper */
  #histograms figure.panel { display:inline-block; width:49%; vertical-align:top; margin:0; }
  #histograms figure.panel svg { width:100%; height:auto; }
  #histograms figure.panel .caption { font-size:8px; }
  /* the percentile lines per series too: the summary and the curves are the headline */
  #distribution details.dist { display:inline-block; width:49%; vertical-align:top; }
  #distribution details.dist svg { width:100%; height:auto; }
  td.pass, td.fail { border:1px solid currentColor; }
  .points-wrap { overflow:visible; }
  pre { white-space:pre-wrap; overflow-wrap:anywhere; }
  * { -webkit-print-color-adjust:exact; print-color-adjust:exact; }
}
"""


JS = """
(function () {
  function key(cell) {
    if (!cell) { return null; }
    var t = cell.textContent.trim();
    if (t === "" || t === "\\u2013") { return null; }
    if (cell.tagName === "TD") {  // a number as the cell shows it: "1,250,000", "8.46"
      var f = Number(t.replace(/,/g, ""));
      if (isFinite(f)) { return f; }
    }
    return t;
  }
  function cmp(a, b, asc) {
    if (a === null || b === null) { return a === b ? 0 : (a === null ? 1 : -1); }
    var sign = asc ? 1 : -1;
    if (typeof a === "number" && typeof b === "number") { return sign * (a - b); }
    return sign * String(a).localeCompare(String(b), undefined, {numeric: true});
  }
  function sortBy(table, th, col) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var asc = th.getAttribute("aria-sort") !== "ascending";
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) { return cmp(key(r1.cells[col]), key(r2.cells[col]), asc); });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    if (!table.tHead || !table.tHead.rows.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () { sortBy(table, th, col); });
    });
  });
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) {
      d.open = true;
    });
  });
})();
"""
