"""Inline SVG charts for the HTML report, drawn in plain Python (no JS, no external assets).

One chart per `CurvePanel`: load levels on a categorical x axis, throughput on the left axis
(starting at 0, "nice" ticks with k/M suffixes), latency on the right axis (mean solid, p99
dashed; ms once values exceed 10 000 µs), the optimal point ringed and labelled, the maximum
marked, and an optional dashed "theoretical" ceiling. Repeated points (repeat: N) carry their
95 % interval: a band around the throughput line, error bars on the mean latency. Points with
validity flags get a red cross ("flagged: see table"). The elements, ticks and legend layout
it draws with are `parts.py`'s, shared with the other charts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from html import escape
from itertools import pairwise

from arraybench.report.charts.interact import hover_rect
from arraybench.report.charts.parts import (
    C_AXIS,
    C_CEIL,
    C_GRID,
    C_LAT,
    C_MAX,
    C_OPT,
    C_TEXT,
    C_TPUT,
    C_TPUT_FILL,
    FONT,
    HEADROOM,
    MS_THRESHOLD_US,
    Box,
    Pt,
    Sample,
    _circle,
    _cross,
    _empty,
    _f,
    _finite,
    _halo_label,
    _hline,
    _label_box,
    _overlaps,
    _polygon,
    _polyline,
    _segments,
    _text,
    _text_width,
    _trim,
    _vline,
    compact,
    fmt_latency,
    fmt_throughput,
    legend_header,
    nice_ticks,
    runs,
    ticks_with_count,
)
from arraybench.report.model import REMARK_MARK, CurvePanel
from arraybench.units import format_latency, format_quantity, format_tick

# ---------------------------------------------------------------- geometry


@dataclass(frozen=True)
class _Frame:
    """Plot area and the three scales."""

    left: float
    top: float
    right: float
    bottom: float
    n: int
    y1_top: float
    y2_top: float
    y2_div: float  # 1 for µs, 1000 for ms
    # the latency axis in decades: (log10 of its lowest, of its highest µs); None: linear
    y2_log: tuple[float, float] | None = None

    def x(self, i: int) -> float:
        band = (self.right - self.left) / max(self.n, 1)
        return self.left + band * (i + 0.5)

    def y1(self, v: float) -> float:
        return self.bottom - (self.bottom - self.top) * (v / self.y1_top)

    def y2(self, us: float) -> float:
        if self.y2_log is not None:  # nothing below the axis' lowest decade (nor 0)
            lo, hi = self.y2_log
            share = (math.log10(max(us, 10**lo)) - lo) / max(hi - lo, 1e-9)
            return self.bottom - (self.bottom - self.top) * share
        return self.bottom - (self.bottom - self.top) * (us / self.y2_div / self.y2_top)

    def inside(self, box: Box) -> bool:
        x0, y0, x1, y1 = box
        horizontal = self.left + 2 <= x0 and x1 <= self.right - 2
        return horizontal and self.top + 1 <= y0 and y1 <= self.bottom - 2


def _get(seq: Sequence[float | None], i: int) -> float | None:
    return seq[i] if 0 <= i < len(seq) else None


# ---------------------------------------------------------------- label placement


_OFFSETS = {  # direction -> (dx, dy, anchor) relative to the anchor point, per unit distance
    "nw": (-1.0, -1.0, "end"),
    "ne": (1.0, -1.0, "start"),
    "n": (0.0, -1.3, "middle"),
    "se": (1.0, 1.0, "start"),
    "sw": (-1.0, 1.0, "end"),
    "s": (0.0, 1.3, "middle"),
    "e": (1.0, 0.0, "start"),
    "w": (-1.0, 0.0, "end"),
}


@dataclass
class _Labels:
    """Greedy label placement: inside the plot, off other labels and, if possible, off curves."""

    taken: list[Box]
    obstacles: list[Pt]

    def cost(self, box: Box, rank: int) -> float:
        """Prefer: no other label > fewest curve points under the text > earlier candidate."""
        x0, y0, x1, y1 = box
        hits = sum(1 for x, y in self.obstacles if x0 <= x <= x1 and y0 <= y <= y1)
        clash = any(_overlaps(box, t) for t in self.taken)
        return 10_000.0 * clash + 10.0 * hits + rank

    def place(
        self, fr: _Frame, pt: Pt, s: str, order: str = "nw ne n se sw s", size: float = 11
    ) -> tuple[float, float, str]:
        w = _text_width(s, size)
        cands = []
        for dist in (9.0, 22.0):
            for d in order.split():
                dx, dy, anchor = _OFFSETS[d]
                y = pt[1] + dy * dist + (size - 3 if dy > 0 else size / 2 - 2 if dy == 0 else 0)
                cands.append((pt[0] + dx * dist, y, anchor))
        boxes = [_label_box(x, y, w, size, a) for x, y, a in cands]
        fits = [i for i, b in enumerate(boxes) if fr.inside(b)] or list(range(len(cands)))
        best = min(fits, key=lambda i: self.cost(boxes[i], i))
        self.taken.append(boxes[best])
        return cands[best]


def _sample(segs: list[list[Pt]], step: float = 3.0) -> list[Pt]:
    """Points along polylines, so labels can keep clear of the curves."""
    out: list[Pt] = []
    for seg in segs:
        out += seg
        for (x0, y0), (x1, y1) in pairwise(seg):
            k = max(1, int(math.hypot(x1 - x0, y1 - y0) / step))
            out += [(x0 + (x1 - x0) * j / k, y0 + (y1 - y0) * j / k) for j in range(1, k)]
    return out


# ---------------------------------------------------------------- axes


def _lat_tick(v: float) -> str:
    return format_tick(v, "µs")


def _y_axes(fr: _Frame, y1_ticks: list[float], y2_ticks: list[float] | None) -> list[str]:
    out = [f'<g fill="{C_AXIS}">']
    for t in y1_ticks:
        y = fr.y1(t)
        out.append(_hline(fr.left, fr.right, y, C_GRID))
        label = compact(t)
        out.append(_text(fr.left - 7, y + 4, label, size=10.5, anchor="end", cls="tick-y1"))
    for t in y2_ticks or []:
        y = fr.y2(t * fr.y2_div)
        out.append(_hline(fr.right, fr.right + 4, y, C_AXIS))
        out.append(_text(fr.right + 7, y + 4, _lat_tick(t), size=10.5, cls="tick-y2"))
    out.append(_vline(fr.left, fr.top, fr.bottom, C_AXIS))
    if y2_ticks:
        out.append(_vline(fr.right, fr.top, fr.bottom, C_AXIS))
    out.append(_hline(fr.left, fr.right, fr.bottom, C_AXIS))
    return [*out, "</g>"]


def _axis_titles(fr: _Frame, panel: CurvePanel, lat_unit: str | None, height: int) -> list[str]:
    mid = (fr.top + fr.bottom) / 2
    xr = fr.right + 52
    t1 = f"throughput ({panel.throughput_unit})"
    rot1, rot2 = f"rotate(-90 14 {_f(mid)})", f"rotate(90 {_f(xr)} {_f(mid)})"
    xc = (fr.left + fr.right) / 2
    out = [
        _text(14, mid, t1, anchor="middle", cls="axis-y1", fill=C_TPUT, transform=rot1),
        _text(xc, height - 7, panel.x_label, anchor="middle", cls="axis-x", fill=C_TEXT),
    ]
    if lat_unit:
        t2 = f"latency ({lat_unit})"
        out.append(_text(xr, mid, t2, anchor="middle", cls="axis-y2", fill=C_LAT, transform=rot2))
    return out


def _x_axis(fr: _Frame, labels: list[str]) -> list[str]:
    band = (fr.right - fr.left) / max(fr.n, 1)
    widest = max((_text_width(s, 10.5) for s in labels), default=0.0)
    every = max(1, math.ceil((widest + 8) / band))
    out = [f'<g fill="{C_AXIS}">']
    for i, s in enumerate(labels):
        x = fr.x(i)
        out.append(_vline(x, fr.bottom, fr.bottom + 4, C_AXIS))
        if i % every == 0:
            out.append(_text(x, fr.bottom + 16, s, size=10.5, anchor="middle", cls="tick-x"))
    return [*out, "</g>"]


# ---------------------------------------------------------------- series


def _series(
    fr: _Frame, values: Sequence[float | None], ymap: Callable[[float], float]
) -> list[Pt | None]:
    return [
        (fr.x(i), ymap(v)) if v is not None and math.isfinite(v) else None
        for i, v in enumerate(values)
    ]


def _throughput(fr: _Frame, panel: CurvePanel) -> list[str]:
    out = []
    banded = any(_ci_at(panel.throughput_ci, i) for i in range(len(panel.throughput_ci)))
    for seg in _segments(_series(fr, panel.throughput, fr.y1)):
        area = [(seg[0][0], fr.bottom), *seg, (seg[-1][0], fr.bottom)]
        if not banded:  # the shade under the line would read as a second band
            out.append(_polygon(area, C_TPUT_FILL, ' fill-opacity="0.08"'))
        out.append(_polyline(seg, C_TPUT, 2.4, "line-tput"))
        out += [_circle(x, y, 3.2, "#fff", C_TPUT, 1.8) for x, y in seg]
    return out


def _ci_at(cis: Sequence[tuple[float, float] | None], i: int) -> tuple[float, float] | None:
    ci = cis[i] if 0 <= i < len(cis) else None
    return ci if ci is not None and _finite(ci[0]) and _finite(ci[1]) else None


def _band(fr: _Frame, panel: CurvePanel) -> list[str]:
    """The throughput's 95 % interval: a band over runs of repeated points, an error bar on a
    repeated point alone between points measured once."""
    at = [(i, ci) if (ci := _ci_at(panel.throughput_ci, i)) else None
          for i in range(len(panel.throughput))]  # fmt: skip
    out = []
    for run in runs(at):
        if len(run) == 1:
            i, (low, high) = run[0]
            out.append(_errbar(fr.x(i), fr.y1(max(low, 0.0)), fr.y1(high), C_TPUT, "errbar-tput"))
            continue
        upper = [(fr.x(i), fr.y1(high)) for i, (_, high) in run]
        lower = [(fr.x(i), fr.y1(max(low, 0.0))) for i, (low, _) in reversed(run)]
        out.append(_polygon(upper + lower, C_TPUT, ' class="band-tput" fill-opacity="0.22"'))
    return out


def _errbar(x: float, y0: float, y1: float, color: str, cls: str) -> str:
    cap = f' stroke="{color}" stroke-width="1.4"'
    return (f'<g class="{cls}">' + _vline(x, y0, y1, color, ' stroke-width="1.4"')
            + _hline(x - 4, x + 4, y0, color, cap) + _hline(x - 4, x + 4, y1, color, cap)
            + "</g>")  # fmt: skip


def _lat_bars(fr: _Frame, panel: CurvePanel) -> list[str]:
    """The mean latency's 95 % interval as error bars (a band would hide the p99 line)."""
    out = []
    for i in range(len(panel.lat_mean_us)):
        if (ci := _ci_at(panel.lat_mean_ci, i)) is not None:
            low, high = ci
            out.append(_errbar(fr.x(i), fr.y2(max(low, 0.0)), fr.y2(high), C_LAT, "errbar-lat"))
    return out


def _flagged(fr: _Frame, panel: CurvePanel) -> list[str]:
    """A red cross on each flagged point's throughput (its figures may not be the storage's)."""
    out = []
    for i, kinds in enumerate(panel.flagged):
        v = _get(panel.throughput, i)
        if kinds and v is not None and _finite(v):
            out.append(_cross(fr.x(i), fr.y1(v), 5.5, "mark-flagged"))
    return out


def _obstacles(fr: _Frame, panel: CurvePanel) -> list[Pt]:
    segs = _segments(_series(fr, panel.throughput, fr.y1))
    segs += _segments(_series(fr, panel.lat_mean_us, fr.y2))
    segs += _segments(_series(fr, panel.lat_p99_us, fr.y2))
    return _sample(segs)


def _latency(fr: _Frame, values: Sequence[float | None], dashed: bool) -> list[str]:
    dash = ' stroke-dasharray="5 4"' if dashed else ""
    cls = "line-p99" if dashed else "line-mean"
    fill = "#fff" if dashed else C_LAT
    out = []
    for seg in _segments(_series(fr, values, fr.y2)):
        out.append(_polyline(seg, C_LAT, 1.6 if dashed else 2.0, cls, dash))
        out += [_circle(x, y, 2.4, fill, C_LAT, 1.2) for x, y in seg]
    return out


# ---------------------------------------------------------------- annotations


def _valid(i: int | None, panel: CurvePanel) -> int | None:
    if i is None or not 0 <= i < len(panel.throughput) or not _finite(panel.throughput[i]):
        return None
    return i


def optimal_label(panel: CurvePanel) -> str | None:
    """ "optimal 304 kIOPS @ 208 µs" for the panel's optimal point, or None."""
    i = _valid(panel.optimal_index, panel)
    if i is None:
        return None
    text = f"optimal {fmt_throughput(panel.throughput[i], panel.throughput_unit)}"
    lat = _get(panel.lat_mean_us, i)
    return text + (f" @ {fmt_latency(lat)}" if lat is not None and _finite(lat) else "")


def ceiling_text(panel: CurvePanel) -> str:
    """`theoretical 836 MB/s (fabric 1 x FC 8G)`: the ceiling's label (panel.ceiling set)."""
    s = f"theoretical {fmt_throughput(panel.ceiling or 0.0, panel.throughput_unit)}"
    return s + (f" ({panel.ceiling_label})" if panel.ceiling_label else "")


def _ceiling(fr: _Frame, panel: CurvePanel, lab: _Labels) -> list[str]:
    if panel.ceiling is None or not _finite(panel.ceiling) or panel.ceiling <= 0:
        return []
    s = ceiling_text(panel)
    if not _ceiling_on_scale(panel):  # said at the top edge, above the axis' range
        s += " ↑ (off the scale)"
        pos = (fr.right - 6, fr.top + 12, "end")
        lab.taken.append(_label_box(*pos[:2], _text_width(s, 11), 11, "end"))
        return [_halo_label(pos, s, "#5f6368", "label-ceiling")]
    y = fr.y1(panel.ceiling)
    pos = (fr.right - 6, y - 5, "end")
    lab.taken.append(_label_box(*pos[:2], _text_width(s, 11), 11, "end"))
    return [
        _hline(fr.left, fr.right, y, C_CEIL, ' stroke-width="1.4" stroke-dasharray="7 5"'),
        _halo_label(pos, s, "#5f6368", "label-ceiling"),
    ]


def _optimal(fr: _Frame, panel: CurvePanel, lab: _Labels) -> list[str]:
    i = _valid(panel.optimal_index, panel)
    label = optimal_label(panel)
    if i is None or label is None:
        return []
    x, y = fr.x(i), fr.y1(panel.throughput[i])
    out = [_vline(x, fr.top, fr.bottom, C_OPT, ' stroke-dasharray="2 3" stroke-opacity="0.7"')]
    lat = _get(panel.lat_mean_us, i)
    if lat is not None and _finite(lat):
        out.append(_circle(x, fr.y2(lat), 5, "none", C_OPT, 1.8))
    out.append(_circle(x, y, 7.5, "none", C_OPT, 2.4, "mark-optimal"))
    if panel.max_index == i:
        label = label.replace("optimal", "optimal = max", 1)
    out.append(_halo_label(lab.place(fr, (x, y), label), label, C_OPT, "label-optimal"))
    return out


def _maximum(fr: _Frame, panel: CurvePanel, lab: _Labels) -> list[str]:
    i = _valid(panel.max_index, panel)
    if i is None:
        return []
    x, y = fr.x(i), fr.y1(panel.throughput[i])
    out = [_polygon([(x, y - 11), (x - 5, y - 19), (x + 5, y - 19)], C_MAX, ' class="mark-max"')]
    if panel.optimal_index != i:
        s = f"max {fmt_throughput(panel.throughput[i], panel.throughput_unit)}"
        out.append(
            _halo_label(lab.place(fr, (x, y - 14), s, "n ne nw e w s"), s, C_MAX, "label-max")
        )
    return out


def _min_latency(fr: _Frame, panel: CurvePanel, lab: _Labels) -> list[str]:
    i = panel.min_latency_index
    lat = _get(panel.lat_mean_us, i) if i is not None else None
    if i is None or lat is None or not _finite(lat) or i == panel.optimal_index:
        return []
    s = f"min {fmt_latency(lat)}"
    pos = lab.place(fr, (fr.x(i), fr.y2(lat)), s, "se ne s n sw nw", size=10.5)
    return [_halo_label(pos, s, C_LAT, "label-min", size=10.5)]


# ---------------------------------------------------------------- legend and chart


def _legend_sample(kind: str, x: float, y: float) -> str:
    if kind == "tput":
        return _hline(x, x + 18, y, C_TPUT, ' stroke-width="2.4"')
    if kind in ("mean", "p99"):
        dash = ' stroke-dasharray="5 4"' if kind == "p99" else ""
        return _hline(x, x + 18, y, C_LAT, f' stroke-width="2"{dash}')
    if kind == "opt":
        return _circle(x + 9, y, 5, "none", C_OPT, 2)
    if kind == "max":
        return _polygon([(x + 9, y + 4), (x + 4, y - 4), (x + 14, y - 4)], C_MAX)
    if kind == "band":
        return (
            f'<rect x="{_f(x)}" y="{_f(y - 5)}" width="18" height="10" fill="{C_TPUT}" '
            f'fill-opacity="0.22"/>' + _hline(x, x + 18, y, C_TPUT, ' stroke-width="2.4"')
        )
    if kind == "flag":
        return _cross(x + 9, y, 4.5)
    return _hline(x, x + 18, y, C_CEIL, ' stroke-width="1.4" stroke-dasharray="5 3"')


def _legend_items(panel: CurvePanel) -> list[tuple[str, str]]:
    items = [("tput", "throughput")]
    if any(_finite(v) for v in panel.lat_mean_us):
        items.append(("mean", "mean latency"))
    if any(_finite(v) for v in panel.lat_p99_us):
        items.append(("p99", "p99 latency"))
    if _valid(panel.optimal_index, panel) is not None:
        items.append(("opt", "optimal"))
    if _valid(panel.max_index, panel) is not None:
        items.append(("max", "max"))
    if panel.ceiling is not None and _finite(panel.ceiling) and panel.ceiling > 0:
        items.append(("ceil", "theoretical"))
    if any(_ci_at(panel.throughput_ci, i) for i in range(len(panel.throughput_ci))):
        items.append(("band", interval_label(panel)))
    if any(panel.flagged):
        items.append(("flag", "flagged: see table"))
    return items


def interval_label(panel: CurvePanel) -> str:
    """What the band (and the latency's error bars) are: `95 % interval of 3 repeats`."""
    bars = " (band, bars)" if any(panel.lat_mean_ci) else ""
    return f"95 % interval of {panel.repeats} repeats{bars}"


def _header(
    panel: CurvePanel, width: int, left: float, workload: str = ""
) -> tuple[list[str], float]:
    items = _legend_items(panel) if panel.throughput else []
    samples: list[tuple[Sample, str]] = [
        (partial(_legend_sample, kind), label) for kind, label in items
    ]
    return legend_header(_titled(panel, workload), samples, width, left)


def _titled(panel: CurvePanel, workload: str) -> str:
    """`Random 8 KiB: Write` for a chart read alone (an exported image), the mix alone under
    its workload's heading."""
    return f"{workload}: {panel.mix_label}" if workload else panel.mix_label


CEILING_ON_SCALE = 3.0  # a ceiling further above the curve is named, not drawn to scale


def _ceiling_on_scale(panel: CurvePanel) -> bool:
    """Is the fabric ceiling close enough to the curve to share its axis? A 1,151 kIOPS
    ceiling would squash a 62 kIOPS curve to the floor."""
    if panel.ceiling is None or not _finite(panel.ceiling) or panel.ceiling <= 0:
        return False
    top = max((v for v in panel.throughput if _finite(v)), default=0.0)
    return top <= 0 or panel.ceiling <= CEILING_ON_SCALE * top


def _decades(values: list[float]) -> list[float]:
    """The whole decades (log10 of µs) around the values: 1 (10 µs), 2 (100 µs), ..."""
    lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    return [float(d) for d in range(lo, max(hi, lo + 1) + 1)]


def _frame(panel: CurvePanel, n: int, box: Box) -> tuple[_Frame, list[float], list[float] | None]:
    tvals = [v for v in panel.throughput if _finite(v)]
    tvals += [
        ci[1] for i in range(len(panel.throughput_ci)) if (ci := _ci_at(panel.throughput_ci, i))
    ]
    if panel.ceiling is not None and _ceiling_on_scale(panel):
        tvals.append(panel.ceiling)
    y1 = nice_ticks(max(tvals, default=0.0) * HEADROOM)
    lats = [v for v in [*panel.lat_mean_us, *panel.lat_p99_us] if v is not None and _finite(v)]
    lats += [ci[1] for i in range(len(panel.lat_mean_ci)) if (ci := _ci_at(panel.lat_mean_ci, i))]
    lat_max = max(lats, default=0.0)
    if panel.log_latency:  # decades of µs, as the percentile charts draw them
        decades = _decades([v for v in lats if v > 0])
        fr = _Frame(*box, n, y1[-1], 1.0, 1.0, (decades[0], decades[-1]))
        return fr, y1, [10**d for d in decades]
    div = 1000.0 if lat_max > MS_THRESHOLD_US else 1.0
    y2 = ticks_with_count(lat_max * HEADROOM / div, len(y1) - 1) if lat_max > 0 else None
    y2_top = y2[-1] if y2 else 1.0
    fr = _Frame(box[0], box[1], box[2], box[3], n, y1[-1], y2_top, div)
    return fr, y1, y2


def curve_chart(panel: CurvePanel, width: int = 720, height: int = 260, workload: str = "") -> str:
    """One panel as an inline `<svg>`: throughput (left axis) and latency (right axis) vs load;
    `workload` names it in its title (a chart read without its section's heading)."""
    n = max(len(panel.throughput), len(panel.x_ticks), len(panel.x_values))
    left, right = 62.0, width - 66.0
    head, top = _header(panel, width, left, workload)
    body: list[str] = []
    if n == 0:
        body.append(_empty(width, height))
    else:
        fr, y1, y2 = _frame(panel, n, (left, top, right, height - 44.0))
        lat_unit = None if y2 is None else ("ms" if fr.y2_div > 1 else "µs")
        lat_unit = "µs, log scale" if lat_unit and fr.y2_log else lat_unit
        labels = [_x_label(panel, i) for i in range(n)]
        lab = _Labels([], _obstacles(fr, panel))
        body += _y_axes(fr, y1, y2) + _x_axis(fr, labels)
        body += _axis_titles(fr, panel, lat_unit, height) + _ceiling(fr, panel, lab)
        body += _band(fr, panel) + _throughput(fr, panel)
        body += _latency(fr, panel.lat_p99_us, dashed=True) + _lat_bars(fr, panel)
        body += _latency(fr, panel.lat_mean_us, dashed=False) + _flagged(fr, panel)
        body += _optimal(fr, panel, lab) + _maximum(fr, panel, lab)
        body += _min_latency(fr, panel, lab)
        body.append(_hover(fr, panel, labels))
    title = f"{_titled(panel, workload)}: throughput and latency against {panel.x_label}"
    return (
        f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}" font-family="{FONT}" fill="{C_TEXT}">'
        f"<title>{escape(title)}</title>" + "".join(head + body) + "</svg>"
    )


def point_tip(panel: CurvePanel, i: int, level: str) -> str:
    """What hovering a load level shows: the level, throughput, mean and p99 latency, and
    with repeats the 95 % intervals; a flagged point's flags."""
    unit = panel.throughput_unit
    tput = f"{panel.mix_label}: {format_quantity(_get(panel.throughput, i), unit)}"
    lat = f"mean latency {format_latency(_get(panel.lat_mean_us, i))}"
    # a t interval of a few scattered repeats can reach below 0: no figure here can
    if (ci := _ci_at(panel.throughput_ci, i)) is not None:
        low = format_quantity(max(ci[0], 0.0), unit)
        tput += f" (95 %: {low} to {format_quantity(ci[1], unit)})"
    if (ci := _ci_at(panel.lat_mean_ci, i)) is not None:
        lat += f" (95 %: {format_latency(max(ci[0], 0.0))} to {format_latency(ci[1])})"
    lines = [f"{panel.x_label}: {level}", tput, lat,
             f"p99 latency {format_latency(_get(panel.lat_p99_us, i))}"]  # fmt: skip
    kinds = panel.flagged[i] if i < len(panel.flagged) else ""
    said = [f"flagged: {kinds} (see the table)"] if kinds else []
    if remark := panel.remarks[i] if i < len(panel.remarks) else "":
        said.append(f"{REMARK_MARK} remark: {remark} (kept in the headline figures)")
    return "\n".join(lines + said)


def _hover(fr: _Frame, panel: CurvePanel, labels: list[str]) -> str:
    box = (fr.left, fr.top, fr.right, fr.bottom)
    tips = [point_tip(panel, i, label) for i, label in enumerate(labels)]
    return hover_rect(box, [fr.x(i) for i in range(len(labels))], tips)


def _x_label(panel: CurvePanel, i: int) -> str:
    if i < len(panel.x_ticks):
        return panel.x_ticks[i]
    v = _get(panel.x_values, i)
    return "" if v is None else _trim(v, 2)
