"""The live page (`/`): one self-contained HTML document, offline (no CDN, no font, no
image from elsewhere), read-only. Its script polls `/live.json` every second for the numbers
(written with textContent: a plan's strings are never HTML) and `/charts` every two seconds
for the charts (SVG drawn by the report's chart code, escaped there), then binds the
report's hover script (`report/charts/interact.py`) to the new charts."""

from __future__ import annotations

from arraybench.report.charts.interact import CSS as CHART_CSS
from arraybench.report.charts.interact import SCRIPT as CHART_SCRIPT

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1em 2em; color: #1f2937; }
h1 { font-size: 1.3em; margin: 0 0 .3em; } h2 { font-size: 1.05em; margin: 1em 0 .2em; }
#bar { height: 8px; background: #e3e6ea; border-radius: 4px; width: 100%; max-width: 900px; }
#bar div { height: 8px; background: #1f5fa8; border-radius: 4px; width: 0; }
table { border-collapse: collapse; font-size: 13px; margin-top: .5em; }
td, th { padding: 2px 8px; text-align: right; border-bottom: 1px solid #e3e6ea; }
th:first-child, td:first-child { text-align: left; }
#lines { font-family: monospace; font-size: 12px; white-space: pre-wrap; color: #444; }
.state { font-weight: bold; }
"""

BODY = """
<h1>arraybench <span id="run"></span> <span class="state" id="state"></span></h1>
<div id="progress"></div><div id="bar"><div></div></div>
<p id="point"></p>
<p id="source"></p>
<table><thead><tr><th>host</th><th>read IOPS</th><th>read MB/s</th><th>read mean</th>
<th>read p99</th><th>write IOPS</th><th>write MB/s</th><th>write mean</th><th>write p99</th>
<th>errors</th></tr></thead><tbody id="hosts"></tbody></table>
<div id="charts"></div>
<h2>Events and notes</h2><div id="lines"></div>
"""

POLL = """
function num(v, d) { return v === null || v === undefined ? "–" : v.toFixed(d); }
function lat(us) {
  if (us === null || us === undefined) { return "–"; }
  return us >= 1000 ? (us / 1000).toFixed(2) + " ms" : us.toFixed(1) + " µs";
}
function cell(tr, text) {
  var td = document.createElement("td"); td.textContent = text; tr.appendChild(td);
}
function row(name, h) {
  var tr = document.createElement("tr");
  cell(tr, name);
  ["read", "write"].forEach(function (d) {
    cell(tr, num(h[d].iops, 0)); cell(tr, num(h[d].mbps, 1));
    cell(tr, lat(h[d].lat_mean_us)); cell(tr, lat(h[d].lat_p99_us));
  });
  cell(tr, String(h.errors));
  return tr;
}
function text(id, value) { document.getElementById(id).textContent = value; }
var ended = false;
function numbers(s) {
  text("run", s.run + " (" + s.plan + ")");
  text("state", s.state);
  text("progress", s.done + " of " + s.total + " points");
  document.querySelector("#bar div").style.width = (s.total ? 100 * s.done / s.total : 0) + "%";
  var p = s.point;
  text("point", p ? ((p.scenario ? "scenario " + p.scenario + ", " : "") + "workload " +
       p.workload + ", level " + p.level + ": " + Math.round(p.left_s) + " s left") : "");
  text("source", p && p.source === "kernel" ? "kernel's view: the hosts' disk counters " +
       "(/proc/diskstats), not fio's (fio's client relays no per-second reports); " +
       "latency: the block layer's mean per request (iostat's await), no p99" : "");
  var body = document.getElementById("hosts");
  while (body.firstChild) { body.removeChild(body.firstChild); }
  Object.keys(s.hosts).sort().forEach(function (h) { body.appendChild(row(h, s.hosts[h])); });
  if (s.total_now && Object.keys(s.hosts).length > 1) {
    body.appendChild(row("total", s.total_now));
  }
  var lines = s.events.map(function (e) { return "event " + e.label + " " + e.action +
    " (" + e.outcome + ") in " + e.point; }).concat(s.lines);
  text("lines", lines.slice(-20).join("\\n"));
  ended = s.state !== "running" && s.state !== "starting";
}
function poll() {
  fetch("live.json", {cache: "no-store"}).then(function (r) { return r.json(); })
    .then(numbers).catch(function () { text("state", "(server gone)"); ended = true; });
}
var chartsSeen = "";
function charts() {
  fetch("charts", {cache: "no-store"}).then(function (r) { return r.text(); }).then(function (h) {
    if (h === chartsSeen) { return; }
    chartsSeen = h;
    document.getElementById("charts").innerHTML = h;  // SVG from the report's escaping code
    bindCharts();
  }).catch(function () {});
}
poll(); charts();
function every(ms, f) {
  var timer = setInterval(function () { if (ended) { clearInterval(timer); } f(); }, ms);
}
every(1000, poll); every(2000, charts);
"""


def live_page() -> str:
    bind = ("function bindCharts() {\n"
            "  Array.prototype.forEach.call(document.querySelectorAll('.charttip'),"
            " function (t) { t.remove(); });\n" + CHART_SCRIPT + "\n}\n")  # fmt: skip
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>arraybench live</title>"
        f"<style>{STYLE}{CHART_CSS}</style></head><body>{BODY}"
        f"<script>{bind}{POLL}</script></body></html>"
    )
