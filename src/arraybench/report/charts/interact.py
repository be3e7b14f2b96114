"""What makes the inline SVG charts interactive, offline: hover targets and their texts.

Every chart carries one invisible `rect.hover` over its plot area with the x position (in SVG
units) of each point or second it draws and the text to show there, formatted in Python by
`units` like every other number of the report. The report's own small script (`SCRIPT`)
shows the nearest text in a tooltip as the pointer moves, and zooms (wheel) and pans (drag)
the x axis of time charts (`g.zoom`); a double click resets. No library, no network.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import count

_ids = count(1)


def clip_id() -> str:
    """A document-unique id for a chart's clip path."""
    return f"plotclip{next(_ids)}"


def hover_rect(
    box: tuple[float, float, float, float], xs: Sequence[float], tips: Sequence[str]
) -> str:
    """The invisible hover target over the plot area `box` (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    positions = ",".join(f"{x:.1f}" for x in xs)
    # single-quoted: JSON's many double quotes then need no entity
    texts = json.dumps(list(tips), ensure_ascii=False, separators=(",", ":"))
    texts = texts.replace("&", "&amp;").replace("<", "&lt;").replace("'", "&#39;")
    return (
        f'<rect class="hover" x="{x0:.1f}" y="{y0:.1f}" width="{max(x1 - x0, 0):.1f}" '
        f'height="{max(y1 - y0, 0):.1f}" fill="transparent" pointer-events="all" '
        f"data-xs=\"{positions}\" data-tips='{texts}'/>"
    )


SCRIPT = """
(function () {
  var tip = document.createElement("div");
  tip.className = "charttip";
  tip.setAttribute("role", "status");
  document.body.appendChild(tip);
  function svgX(svg, ev) {
    var pt = svg.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse()).x;
  }
  function zoomOf(svg) {
    var z = svg.querySelector("g.zoom");
    return z ? {k: +(z.getAttribute("data-k") || 1), tx: +(z.getAttribute("data-tx") || 0)}
             : {k: 1, tx: 0};
  }
  function nearest(rect, x) {
    var xs = rect._xs || (rect._xs = rect.getAttribute("data-xs").split(",").map(Number));
    var lo = 0, hi = xs.length - 1;
    while (hi - lo > 1) {
      var mid = (lo + hi) >> 1;
      if (xs[mid] < x) { lo = mid; } else { hi = mid; }
    }
    return Math.abs(xs[lo] - x) <= Math.abs(xs[hi] - x) ? lo : hi;
  }
  function guide(svg, rect, x) {
    var g = svg.querySelector("line.guide");
    if (!g) {
      g = document.createElementNS(svg.namespaceURI, "line");  // no URL in the report
      g.setAttribute("class", "guide");
      g.setAttribute("stroke", "#6b7280");
      g.setAttribute("stroke-dasharray", "2 2");
      g.setAttribute("pointer-events", "none");
      svg.appendChild(g);
    }
    g.setAttribute("x1", x); g.setAttribute("x2", x);
    g.setAttribute("y1", rect.getAttribute("y"));
    g.setAttribute("y2", +rect.getAttribute("y") + +rect.getAttribute("height"));
    g.style.display = "";
  }
  function show(rect, ev) {
    var svg = rect.ownerSVGElement, z = zoomOf(svg);
    var x = svgX(svg, ev), data = (x - z.tx) / z.k;
    var i = nearest(rect, data);
    var tips = rect._tips || (rect._tips = JSON.parse(rect.getAttribute("data-tips")));
    tip.textContent = tips[i];
    tip.style.display = "block";
    var right = document.body.scrollWidth - tip.offsetWidth - 4;
    tip.style.left = Math.min(ev.pageX + 14, right) + "px";
    tip.style.top = (ev.pageY + 14) + "px";
    guide(svg, rect, rect._xs[i] * z.k + z.tx);
  }
  function hide(rect) {
    tip.style.display = "none";
    var g = rect.ownerSVGElement.querySelector("line.guide");
    if (g) { g.style.display = "none"; }
  }
  function relabel(svg, k, tx) {
    var ticks = svg.querySelectorAll("text.tick-x[data-v]");
    if (ticks.length < 2) { return; }
    var a = ticks[0], b = ticks[ticks.length - 1];
    var xa = +a.getAttribute("x"), xb = +b.getAttribute("x");
    var va = +a.getAttribute("data-v"), vb = +b.getAttribute("data-v");
    Array.prototype.forEach.call(ticks, function (t) {
      var px = (+t.getAttribute("x") - tx) / k;
      var v = va + (px - xa) * (vb - va) / (xb - xa);
      t.textContent = k === 1 ? t.getAttribute("data-label") : String(+v.toPrecision(4));
    });
  }
  function zoomTo(svg, k, tx) {
    var z = svg.querySelector("g.zoom"), rect = svg.querySelector("rect.hover");
    var x0 = +rect.getAttribute("x"), w = +rect.getAttribute("width");
    k = Math.max(1, Math.min(k, 500));
    tx = Math.min(x0 * (1 - k), Math.max(tx, (x0 + w) * (1 - k)));
    z.setAttribute("transform", "matrix(" + k + ",0,0,1," + tx + ",0)");
    z.setAttribute("data-k", k); z.setAttribute("data-tx", tx);
    svg.classList.toggle("zoomed", k > 1);
    relabel(svg, k, tx);
  }
  Array.prototype.forEach.call(document.querySelectorAll("svg.chart rect.hover"), function (rect) {
    var svg = rect.ownerSVGElement, drag = null;
    rect.addEventListener("mousemove", function (ev) {
      if (drag) { var z = zoomOf(svg); zoomTo(svg, z.k, drag.tx + svgX(svg, ev) - drag.x); }
      show(rect, ev);
    });
    rect.addEventListener("mouseleave", function () { drag = null; hide(rect); });
    if (!svg.querySelector("g.zoom")) { return; }
    rect.style.cursor = "crosshair";
    rect.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var z = zoomOf(svg), x = svgX(svg, ev), k = z.k * (ev.deltaY < 0 ? 1.25 : 0.8);
      zoomTo(svg, k, x - (x - z.tx) * k / z.k);
    }, {passive: false});
    rect.addEventListener("mousedown", function (ev) {
      drag = {x: svgX(svg, ev), tx: zoomOf(svg).tx}; ev.preventDefault();
    });
    rect.addEventListener("mouseup", function () { drag = null; });
    rect.addEventListener("dblclick", function () { zoomTo(svg, 1, 0); });
  });
})();
"""

CSS = """
.charttip { position:absolute; display:none; z-index:10; pointer-events:none; max-width:420px;
  background:#111827; color:#fff; font-size:12px; line-height:1.4; padding:5px 8px;
  border-radius:4px; box-shadow:0 2px 6px rgba(0,0,0,.25); white-space:pre-line; }
svg.chart g.zoom * { vector-effect:non-scaling-stroke; }
svg.chart.zoomed .zoom-hide { display:none; }
@media print { .charttip { display:none !important; } }
"""
