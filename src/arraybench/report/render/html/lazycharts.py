"""A big run's charts as one compact data block, drawn by the browser when seen.

A 100,000-point run has 2,500 curve panels and 2,500 heat maps: as inline SVG the curves
alone were 65.8 MB of an 88 MB report and 12 s of its build. Above `LAZY_CHARTS` of them the
first `INLINE_FIRST` of each kind stay inline SVG (`curve.curve_chart`, `figures.heatmap_svg`:
the printout carries them) and every other one is a placeholder (its title, a "draw" and a
"table" button) whose numbers travel in ONE JSON block, `<script type="application/json"
id="chart-data">`. `SCRIPT` draws a chart as an SVG when it scrolls into view
(IntersectionObserver; the "draw" button where that is missing) and writes its table on
demand. A curve's hover texts are `curve.point_tip`'s and a heat map's cell labels
`format_tick`'s, made in Python, so a chart drawn in the browser says exactly what the inline
one would; the curves' drawing (axes, lines, marks) is simpler than report/charts/curve.py's
(no label placement, no named off-scale ceiling), the heat maps' is `heatmap_svg`'s. The page
stays one self-contained, offline file. Small reports never come here: they are unchanged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from arraybench.report.charts.curve import ceiling_text, point_tip
from arraybench.report.charts.parts import MS_THRESHOLD_US
from arraybench.report.model import CurvePanel, Figure, WorkloadSection
from arraybench.report.render.escape import for_html
from arraybench.units import format_tick

LAZY_CHARTS = 200  # above this many curve charts in a report, they are drawn in the browser
INLINE_FIRST = 24  # the first curve charts still inline: the ones a printout carries
_PREFIXES = ("", "mean latency ", "p99 latency ")  # of tip lines 2-4, sent once in SCRIPT


def charted(panel: CurvePanel) -> bool:
    """Whether a panel is drawn as a chart (one load level is a sentence instead)."""
    return len(panel.x_values) != 1


def is_big(sections: Sequence[WorkloadSection], figures: Sequence[Figure]) -> bool:
    """Whether a report has so many curve charts and heat maps that the page draws them."""
    charts = sum(charted(p) for s in sections for p in s.panels)
    return charts + sum(f.form == "heatmap" for f in figures) > LAZY_CHARTS


def _r(v: float | None) -> float | None:
    """4 significant digits: a chart 720 px wide draws no finer."""
    return None if v is None or v != v else float(f"{v:.4g}")


def _level(panel: CurvePanel, i: int) -> str:
    if i < len(panel.x_ticks):
        return panel.x_ticks[i]
    return f"{panel.x_values[i]:g}" if i < len(panel.x_values) else ""


def _tip_parts(panel: CurvePanel, i: int, level: str) -> list[str]:
    """`point_tip`'s lines after the first, less the prefixes SCRIPT puts back."""
    lines = point_tip(panel, i, level).split("\n")[1:]
    lines[0] = lines[0][len(panel.mix_label) + 2 :]
    for k in (1, 2):
        lines[k] = lines[k][len(_PREFIXES[k]) :]
    return lines


def _ci(cis: Sequence[tuple[float, float] | None], n: int) -> list[list[float | None]] | None:
    if not any(cis):
        return None
    out: list[list[float | None]] = []
    for i in range(n):
        ci = cis[i] if i < len(cis) else None
        out.append([] if ci is None else [_r(max(ci[0], 0.0)), _r(ci[1])])
    return out


def panel_record(panel: CurvePanel) -> dict[str, object]:
    """One panel's numbers and hover texts, compact (keys are one letter, `SCRIPT` reads them)."""
    n = max(len(panel.throughput), len(panel.x_ticks), len(panel.x_values))
    levels = [_level(panel, i) for i in range(n)]
    rec: dict[str, object] = {
        "m": panel.mix_label, "x": panel.x_label, "u": panel.throughput_unit, "l": levels,
        "t": [_r(panel.throughput[i]) if i < len(panel.throughput) else None for i in range(n)],
        "a": [_r(v) for v in panel.lat_mean_us], "p": [_r(v) for v in panel.lat_p99_us],
        "h": [_tip_parts(panel, i, levels[i]) for i in range(n)],
        "o": panel.optimal_index, "M": panel.max_index, "n": panel.min_latency_index,
    }  # fmt: skip
    if (band := _ci(panel.throughput_ci, n)) is not None:
        rec["b"] = band
    if flagged := [i for i, kinds in enumerate(panel.flagged) if kinds]:
        rec["f"] = flagged
    if panel.ceiling is not None:
        rec["c"] = _r(panel.ceiling)
        rec["cl"] = ceiling_text(panel)  # what charts/curve.py writes beside the line
    return rec


def heatmap_record(fig: Figure) -> dict[str, object]:
    """One heat map: each cell's label as `figures.heatmap_svg` writes it and its share of the
    figure's range (the colour), 4 digits."""
    values = [v for s in fig.series for v in s.values if v is not None and math.isfinite(v)]
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    rows = []
    for series in fig.series:
        texts: list[str | None] = []
        shares: list[float | None] = []
        for v in series.values[: max(len(fig.x_ticks), 1)]:
            if v is None or not math.isfinite(v):
                texts.append(None)
                shares.append(None)
                continue
            texts.append(format_tick(v, fig.unit))
            shares.append(round((v - lo) / (hi - lo), 4) if hi > lo else 1.0)
        rows.append([series.label, texts, shares])
    return {"T": fig.title, "x": fig.x_label, "u": fig.unit, "y": fig.y_label,
            "k": fig.x_ticks, "r": rows}  # fmt: skip


KINDS = {"curve": "curve charts", "heatmap": "heat maps"}


class LazyCharts:
    """Collects the charts drawn later while the report's sections are written."""

    def __init__(self) -> None:
        self.records: dict[str, list[dict[str, object]]] = {k: [] for k in KINDS}
        self.inline_left = dict.fromkeys(KINDS, INLINE_FIRST)

    def _inline(self, kind: str) -> bool:
        """Whether the next chart of `kind` is still inline: the first `INLINE_FIRST`."""
        self.inline_left[kind] -= 1
        return self.inline_left[kind] >= 0

    def _placeholder(self, kind: str, record: dict[str, object], title: str, height: int) -> str:
        """The figure the page draws into, as tall as its chart will be (no jump when drawn)."""
        first = "" if self.records[kind] else self._caption(kind)
        k = len(self.records[kind])
        self.records[kind].append(record)
        return (
            f'{first}<figure class="panel lazy" data-kind="{kind}" data-chart="{k}">'
            f'<figcaption>{for_html(title)} <span class="screen-only"><button type="button" '
            'class="draw">draw</button> <button type="button" class="table">table</button>'
            f'</span></figcaption><div class="lazybox" style="min-height:{height}px"></div>'
            "</figure>"
        )

    def panel(self, panel: CurvePanel) -> str | None:
        """A curve panel's placeholder, or None where it is drawn inline."""
        title = f"{panel.mix_label}: throughput and latency against {panel.x_label}"
        if self._inline("curve"):
            return None
        return self._placeholder("curve", panel_record(panel), title, 260)

    def figure(self, fig: Figure) -> str | None:
        """A heat map's placeholder, or None where it (or any other form) is drawn inline."""
        if fig.form != "heatmap" or self._inline("heatmap"):
            return None
        height = 40 + len(fig.series) * 26 + 50  # charts/figures.heatmap_svg's
        return self._placeholder("heatmap", heatmap_record(fig), fig.title, height)

    @staticmethod
    def _caption(kind: str) -> str:
        what = KINDS[kind]
        return (
            f'<p class="caption screen-only">From here on the {what} are drawn by the page when '
            "they scroll into view (a big run: one data block instead of thousands of inline "
            "charts); each one's table is a click away. The CSV and Excel reports hold every "
            f'number.</p><p class="caption print-only">The printout carries the first '
            f"{INLINE_FIRST} {what}; the others are in the HTML report only.</p>"
        )

    def block(self) -> str:
        """The one data block of every chart left to the page ("" when none)."""
        if not any(self.records.values()):
            return ""
        data = {"ms": MS_THRESHOLD_US, "panels": self.records["curve"],
                "heatmaps": self.records["heatmap"]}  # fmt: skip
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        text = text.replace("<", "\\u003c")  # no `</script>` can end the block early
        return f'<script type="application/json" id="chart-data">{text}</script>'


CSS = """
figure.panel.lazy figcaption { font-size:13px; font-weight:600; }
figure.panel.lazy figcaption button { font:inherit; font-weight:400; font-size:12px;
  padding:0 6px; cursor:pointer; }
figure.panel.lazy table { font-size:12px; }
@media print {  /* a bounded printout: sections of lazy charts only are left out */
  figure.panel.lazy { display:none; }
  section.workload:has(figure.panel.lazy):not(:has(figure.panel:not(.lazy))) { display:none; }
}
"""

SCRIPT = """
(function () {
  var node = document.getElementById("chart-data");
  if (!node) { return; }
  var parsed = null, NS = "http://www.w3.org/2000/svg";
  function data() {  // parsed when a chart is first drawn, not while the page loads
    return parsed || (parsed = JSON.parse(node.textContent));
  }
  var W = 720, H = 260, L = 62, R = W - 66, T = 34, B = H - 44;
  var C = {t: "#1f5fa8", a: "#d9730d", o: "#1a7f37", M: "#5b2a86", g: "#e3e6ea",
           x: "#6b7280", f: "#c81e1e", c: "#9aa0a6"};
  function el(tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function nice(top, count) {  // ticks from 0 past `top`: steps of 1, 2, 2.5 or 5 x 10^k
    if (!(top > 0)) { top = 1; }
    var raw = top / (count || 5), mag = Math.pow(10, Math.floor(Math.log10(raw))), step;
    var steps = count ? [1, 2, 2.5, 5, 10] : [1, 2, 5, 10];
    for (var s = 0; s < steps.length; s++) { step = steps[s] * mag; if (step >= raw) { break; } }
    var n = count || Math.ceil(top / step - 1e-9), out = [];
    for (var i = 0; i <= n; i++) { out.push(+(i * step).toPrecision(6)); }
    return out;
  }
  function short(v) {
    var a = Math.abs(v);
    if (a >= 1e6) { return +(v / 1e6).toPrecision(3) + "M"; }
    if (a >= 1e4) { return +(v / 1e3).toPrecision(3) + "k"; }
    return String(+v.toPrecision(4));
  }
  function line(svg, pts, color, width, dash, cls) {
    var runs = [[]];
    pts.forEach(function (p) {
      if (p === null) { runs.push([]); } else { runs[runs.length - 1].push(p.join(",")); }
    });
    runs.forEach(function (r) {
      if (r.length < 1) { return; }
      var a = {points: r.join(" "), fill: "none", stroke: color, "stroke-width": width,
               "class": cls};
      if (dash) { a["stroke-dasharray"] = dash; }
      svg.appendChild(el("polyline", a));
    });
  }
  function tips(p) {
    return p.h.map(function (parts, i) {
      return [p.x + ": " + p.l[i], p.m + ": " + parts[0], "mean latency " + parts[1],
              "p99 latency " + parts[2]].concat(parts.slice(3)).join("\\n");
    });
  }
  function record(fig) {
    var k = +fig.getAttribute("data-chart");
    return fig.getAttribute("data-kind") === "heatmap" ? data().heatmaps[k] : data().panels[k];
  }
  function draw(fig) {
    if (fig._drawn) { return; }
    fig._drawn = true;
    if (fig.getAttribute("data-kind") === "heatmap") { return heat(fig, record(fig)); }
    var p = record(fig), n = p.l.length;
    var title = p.m + ": throughput and latency against " + p.x;
    var svg = el("svg", {"class": "chart drawn", width: W, height: H,
                         viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": title,
                         "font-family": "system-ui, sans-serif", fill: "#1f2937",
                         "font-size": 11});
    svg.appendChild(el("title", {}, title));
    var tv = p.t.filter(function (v) { return v !== null; });
    (p.b || []).forEach(function (b) { if (b.length) { tv.push(b[1]); } });
    if (p.c && p.c <= 3 * Math.max.apply(null, tv.concat([0]))) { tv.push(p.c); }
    var lv = p.a.concat(p.p).filter(function (v) { return v !== null; });
    var y1 = nice(Math.max.apply(null, tv.concat([0])) * 1.18);
    var lmax = Math.max.apply(null, lv.concat([0])), div = lmax > data().ms ? 1000 : 1;
    var y2 = lmax > 0 ? nice(lmax * 1.18 / div, y1.length - 1) : null;
    var top1 = y1[y1.length - 1], top2 = y2 ? y2[y2.length - 1] : 1;
    function X(i) { return L + (R - L) / Math.max(n, 1) * (i + 0.5); }
    function Y1(v) { return B - (B - T) * v / top1; }
    function Y2(us) { return B - (B - T) * us / div / top2; }
    y1.forEach(function (v, k) {
      var y = Y1(v);
      svg.appendChild(el("line", {x1: L, x2: R, y1: y, y2: y, stroke: C.g}));
      svg.appendChild(el("text", {x: L - 6, y: y + 4, "text-anchor": "end", fill: C.t},
                         short(v)));
      if (y2) {
        svg.appendChild(el("text", {x: R + 6, y: Y2(y2[k] * div) + 4, fill: C.a},
                           String(+y2[k].toPrecision(4))));
      }
    });
    var every = Math.max(1, Math.ceil(n / 16));
    p.l.forEach(function (lab, i) {
      if (i % every) { return; }
      svg.appendChild(el("text", {x: X(i), y: B + 16, "text-anchor": "middle",
                                  "class": "tick-x"}, lab));
    });
    svg.appendChild(el("line", {x1: L, x2: R, y1: B, y2: B, stroke: C.x}));
    svg.appendChild(el("text", {x: (L + R) / 2, y: H - 8, "text-anchor": "middle"}, p.x));
    svg.appendChild(el("text", {x: 14, y: (T + B) / 2, "text-anchor": "middle", fill: C.t,
      transform: "rotate(-90 14 " + (T + B) / 2 + ")"}, p.u));
    if (y2) {
      svg.appendChild(el("text", {x: W - 12, y: (T + B) / 2, "text-anchor": "middle",
        fill: C.a, transform: "rotate(90 " + (W - 12) + " " + (T + B) / 2 + ")"},
        "latency (" + (div > 1 ? "ms" : "\\u00b5s") + ")"));
    }
    if (p.c && p.c <= top1) {
      svg.appendChild(el("line", {x1: L, x2: R, y1: Y1(p.c), y2: Y1(p.c), stroke: C.c,
                                  "stroke-dasharray": "6 3", "class": "ceiling"}));
      svg.appendChild(el("text", {x: R - 6, y: Y1(p.c) - 5, "text-anchor": "end",
                                  "class": "label-ceiling", fill: "#5f6368",
                                  "paint-order": "stroke", stroke: "#fff",
                                  "stroke-width": 3}, p.cl));
    } else if (p.c) {  // named at the top edge, as svg.py does
      svg.appendChild(el("text", {x: R - 6, y: T + 12, "text-anchor": "end",
                                  "class": "label-ceiling", fill: "#5f6368",
                                  "paint-order": "stroke", stroke: "#fff", "stroke-width": 3},
                         p.cl + " \u2191 (off the scale)"));
    }
    if (p.b) {
      var up = [], down = [];
      p.b.forEach(function (b, i) { if (b.length) { up.push([X(i), Y1(b[1])]);
                                                    down.unshift([X(i), Y1(b[0])]); } });
      svg.appendChild(el("polygon", {points: up.concat(down).join(" "), fill: C.t,
                                     "fill-opacity": 0.15, "class": "band"}));
    }
    function pts(vals, Y) {
      return vals.map(function (v, i) { return v === null ? null : [X(i), Y(v)]; });
    }
    line(svg, pts(p.t, Y1), C.t, 2.4, "", "line-tput");
    p.t.forEach(function (v, i) {
      if (v !== null) { svg.appendChild(el("circle", {cx: X(i), cy: Y1(v), r: 3.2,
        fill: "#fff", stroke: C.t, "stroke-width": 1.8, "class": "dot"})); }
    });
    if (y2) {
      line(svg, pts(p.p, Y2), C.a, 1.6, "5 3", "line-p99");
      line(svg, pts(p.a, Y2), C.a, 2, "", "line-lat");
    }
    (p.f || []).forEach(function (i) {
      if (p.t[i] === null) { return; }
      var x = X(i), y = Y1(p.t[i]);
      svg.appendChild(el("path", {d: "M" + (x - 5) + " " + (y - 5) + "l10 10m0 -10l-10 10",
                                  stroke: C.f, "stroke-width": 2, "class": "flagged"}));
    });
    [["o", "optimal", C.o], ["M", "max", C.M]].forEach(function (m) {
      var i = p[m[0]];
      if (i === null || i === undefined || p.t[i] === null) { return; }
      svg.appendChild(el("circle", {cx: X(i), cy: Y1(p.t[i]), r: 6, fill: "none",
                                    stroke: m[2], "stroke-width": 2, "class": "mark"}));
      svg.appendChild(el("text", {x: X(i), y: Y1(p.t[i]) - 10, "text-anchor": "middle",
                                  fill: m[2]}, m[1]));
    });
    if (y2 && p.n !== null && p.n !== undefined && p.a[p.n] !== null) {
      var mx = X(p.n), my = Y2(p.a[p.n]);
      svg.appendChild(el("circle", {cx: mx, cy: my, r: 5, fill: "none", stroke: C.a,
                                    "stroke-width": 2, "class": "mark"}));
      svg.appendChild(el("text", {x: mx + 9, y: my - 5, fill: C.a}, "min latency"));
    }
    [[C.t, "", "throughput (" + p.u + ")"], [C.a, "", "mean latency"],
     [C.a, "5 3", "p99 latency"]].forEach(function (k, j) {
      var x = L + j * 170;
      var a = {x1: x, x2: x + 22, y1: 14, y2: 14, stroke: k[0], "stroke-width": 2};
      if (k[1]) { a["stroke-dasharray"] = k[1]; }
      svg.appendChild(el("line", a));
      svg.appendChild(el("text", {x: x + 28, y: 18}, k[2]));
    });
    var rect = el("rect", {"class": "hover", x: L, y: T, width: R - L, height: B - T,
                           fill: "transparent", "pointer-events": "all"});
    var xs = p.l.map(function (_, i) { return X(i); }), texts = tips(p);
    rect.setAttribute("data-xs", xs.map(function (x) { return x.toFixed(1); }).join(","));
    rect.setAttribute("data-tips", JSON.stringify(texts));
    rect.addEventListener("mousemove", function (ev) {
      var tip = document.querySelector("div.charttip");
      if (!tip) { return; }
      var pt = svg.createSVGPoint(); pt.x = ev.clientX; pt.y = ev.clientY;
      var x = pt.matrixTransform(svg.getScreenCTM().inverse()).x, best = 0;
      xs.forEach(function (v, i) { if (Math.abs(v - x) < Math.abs(xs[best] - x)) { best = i; } });
      tip.textContent = texts[best];
      tip.style.display = "block";
      tip.style.left = Math.min(ev.pageX + 14, document.body.scrollWidth - tip.offsetWidth - 4)
        + "px";
      tip.style.top = (ev.pageY + 14) + "px";
    });
    rect.addEventListener("mouseleave", function () {
      var tip = document.querySelector("div.charttip");
      if (tip) { tip.style.display = "none"; }
    });
    svg.appendChild(rect);
    fig.querySelector(".lazybox").appendChild(svg);
  }
  function heat(fig, h) {  // figsvg.heatmap_svg's geometry and colours
    var rows = h.r.length, cols = Math.max(h.k.length, 1), left = 120, top = 40, ch = 26;
    var w = 900, right = w - 20, height = Math.floor(top + rows * ch + 50);
    var cw = (right - left) / cols, aria = h.T + ": against " + h.x;
    var svg = el("svg", {"class": "chart figure drawn", "data-form": "heatmap", width: w,
                         height: height, viewBox: "0 0 " + w + " " + height, role: "img",
                         "aria-label": aria, "font-family": "system-ui, sans-serif",
                         fill: "#1f2937"});
    svg.appendChild(el("title", {}, aria));
    svg.appendChild(el("text", {x: left, y: 18, "font-size": 13, "font-weight": 600}, h.T));
    h.r.forEach(function (row, r) {
      var y0 = top + r * ch;
      svg.appendChild(el("text", {x: left - 6, y: y0 + ch / 2 + 4, "font-size": 11,
                                  "text-anchor": "end"}, row[0]));
      for (var c = 0; c < cols; c++) {
        var s = c < row[2].length ? row[2][c] : null, x0 = left + c * cw;
        if (s === null) {
          svg.appendChild(el("rect", {x: x0, y: y0, width: cw, height: ch, fill: "#f3f4f6",
                                      stroke: "#fff"}));
          continue;
        }
        var t = 0.1 + 0.9 * s, rgb = [31, 95, 168].map(function (v) {
          return ("0" + Math.trunc(255 + (v - 255) * t).toString(16)).slice(-2);
        });
        svg.appendChild(el("rect", {"class": "cell", x: x0, y: y0, width: cw, height: ch,
                                    fill: "#" + rgb.join(""), stroke: "#fff"}));
        svg.appendChild(el("text", {x: x0 + cw / 2, y: y0 + ch / 2 + 4, "font-size": 10,
                                    "text-anchor": "middle", fill: s > 0.55 ? "#ffffff" :
                                    "#1f2937"}, row[1][c]));
      }
    });
    h.k.forEach(function (tick, c) {
      svg.appendChild(el("text", {x: left + (c + 0.5) * cw, y: top + rows * ch + 15,
                                  "font-size": 10, "text-anchor": "middle", fill: C.x}, tick));
    });
    svg.appendChild(el("text", {x: (left + right) / 2, y: height - 8, "font-size": 11,
                                "text-anchor": "middle"}, h.x + " (" + h.u + " per cell)"));
    if (h.y) {
      svg.appendChild(el("text", {x: 10, y: top - 8, "font-size": 10, fill: C.x}, h.y));
    }
    fig.querySelector(".lazybox").appendChild(svg);
  }
  function grid(heads, rows) {
    var t = document.createElement("table"), head = t.insertRow();
    heads.forEach(function (h) {
      var th = document.createElement("th"); th.textContent = h; head.appendChild(th);
    });
    rows.forEach(function (cells) {
      var tr = t.insertRow();
      cells.forEach(function (v) { tr.insertCell().textContent = v === null ? "\u2013" : v; });
    });
    return t;
  }
  function table(fig) {
    var box = fig.querySelector(".lazybox"), old = box.querySelector("table");
    if (old) { box.removeChild(old); return; }
    var p = record(fig), t;
    if (fig.getAttribute("data-kind") === "heatmap") {
      t = grid([p.y || ""].concat(p.k), p.r.map(function (row) {
        return [row[0]].concat(row[1]);
      }));
    } else {
      t = grid([p.x, p.m + " (" + p.u + ")", "mean latency", "p99 latency"],
               p.h.map(function (parts, i) { return [p.l[i], parts[0], parts[1], parts[2]]; }));
    }
    box.insertBefore(t, box.firstChild);
  }
  var figs = document.querySelectorAll("figure.panel.lazy");
  var seen = "IntersectionObserver" in window ? new IntersectionObserver(function (es) {
    es.forEach(function (e) {
      if (e.isIntersecting) { seen.unobserve(e.target); draw(e.target); }
    });
  }, {rootMargin: "300px"}) : null;
  Array.prototype.forEach.call(figs, function (fig) {
    fig.querySelector("button.draw").addEventListener("click", function () { draw(fig); });
    fig.querySelector("button.table").addEventListener("click", function () { table(fig); });
    if (seen) { seen.observe(fig); }
  });
})();
"""
