"""What a time chart draws in its plot: the series (line, min-max band, a lone sample's dot,
the red cross of a flagged level, the optimal ring and max triangle), the event lines and
their labels placed off each other, a shaded warm-up, each series' peak labelled, the legend,
and one hover text per drawn bucket.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from arraybench.report.charts.interact import hover_rect
from arraybench.report.charts.parts import (
    C_AXIS,
    C_TEXT,
    Box,
    Sample,
    _circle,
    _cross,
    _f,
    _halo_label,
    _hline,
    _label_box,
    _overlaps,
    _polygon,
    _polyline,
    _segments,
    _text_width,
    _vline,
    legend_header,
    runs,
)
from arraybench.report.charts.timeaxes import _fmt_value, _Plot
from arraybench.report.charts.timedata import _Prepared
from arraybench.units import significant

C_EVENT = "#b42318"


BAND_OPACITY = "0.2"


# ---------------------------------------------------------------- series


def _draw_series(p: _Plot, s: _Prepared, side: int, banded: bool) -> list[str]:
    out: list[str] = []
    dash = ' stroke-dasharray="6 4"' if s.dashed else ""
    if banded or s.intervals:
        for run in runs(s.buckets):
            upper = [(p.x(b.x), p.y(b.hi, side)) for b in run]
            lower = [(p.x(b.x), p.y(b.lo, side)) for b in reversed(run)]
            if len(run) == 1:  # a lone bucket: a short vertical stroke shows its range
                upper.append((upper[0][0] + 0.8, upper[0][1]))
                lower.insert(0, (lower[0][0] + 0.8, lower[0][1]))
            extra = (
                f' class="band {s.cls}" fill-opacity="{BAND_OPACITY}" stroke="{s.color}" '
                'stroke-opacity="0.35" stroke-width="0.6" stroke-linejoin="round"'
            )
            out.append(_polygon(upper + lower, s.color, extra))
    pts = [None if b is None else (p.x(b.x), p.y(b.mean, side)) for b in s.buckets]
    for seg in _segments(pts):
        if len(seg) == 1:
            out.append(_circle(seg[0][0], seg[0][1], 2.2, s.color, s.color, 1, f"dot {s.cls}"))
        else:
            out.append(_polyline(seg, s.color, 1.5, f"line {s.cls}", dash))
    for b, flagged in zip(s.buckets, s.flagged, strict=False):
        if flagged and b is not None:
            out.append(_cross(p.x(b.x), p.y(b.mean, side), 5.0, "mark-flagged"))
    return out


def _marks(p: _Plot, s: _Prepared, side: int) -> list[str]:
    """Outside the plot's clip: a ring on the last level is not cut in half."""
    out: list[str] = []
    for b, mark in zip(s.buckets, s.marks, strict=False):
        if mark and b is not None:
            out += _headline_marks(p.x(b.x), p.y(b.mean, side), mark, s.color)
    return out


def _headline_marks(x: float, y: float, mark: str, color: str) -> list[str]:
    """The optimal point ringed, the maximum a triangle above it, in the line's colour."""
    out = []
    if "optimal" in mark:
        out.append(_circle(x, y, 6.5, "none", color, 2.2, "mark-optimal"))
    if "max" in mark:
        out.append(_polygon([(x, y - 9), (x - 5, y - 17), (x + 5, y - 17)], color,
                            ' class="mark-max"'))  # fmt: skip
    return out


# ---------------------------------------------------------------- labels off each other


@dataclass
class _Taken:
    boxes: list[Box]

    def free(self, box: Box) -> bool:
        return not any(_overlaps(box, t) for t in self.boxes)


def _events(
    p: _Plot, events: list[tuple[float, str]], taken: _Taken, color: str = C_EVENT
) -> tuple[list[str], list[str]]:
    """(dashed lines drawn under the series, labels drawn over them)."""
    lines, labels = [], []
    size = 10.5
    xs = sorted(p.x(x_val) for x_val, _ in events)
    for x_val, label in sorted(events, key=lambda e: e[0]):
        x = p.x(x_val)
        lines.append(
            _vline(
                x,
                p.top,
                p.bottom,
                color,
                ' class="event" stroke-width="1.3" stroke-dasharray="5 3" stroke-opacity="0.85"',
            )
        )
        w = _text_width(label, size)
        # right of the line unless that leaves the plot or crosses another event's line
        sides = [("start", x + 4), ("end", x - 4)]
        boxes = [_label_box(lx, p.top + 13, w, size, a) for a, lx in sides]
        fits = [k for k in (0, 1) if p.inside(boxes[k])] or [0 if x < p.right - w else 1]
        clear = [k for k in fits if not any(boxes[k][0] < o < boxes[k][2] for o in xs)]
        anchor, lx = sides[(clear or fits)[0]]
        row_y = p.top + 13
        box = _label_box(lx, row_y, w, size, anchor)
        for _ in range(12):
            box = _label_box(lx, row_y, w, size, anchor)
            if taken.free(box):
                break
            row_y += size + 4
        taken.boxes.append(box)
        labels.append(_halo_label((lx, row_y, anchor), label, color, "label-event", size))
    return lines, labels


def _shade(
    p: _Plot, shade: tuple[float, float, str] | None, taken: _Taken
) -> tuple[list[str], list[str]]:
    """(a grey span under the series, its label at the span's top left): a logged warm-up."""
    if shade is None:
        return [], []
    x0, x1 = max(p.x(shade[0]), p.left), min(p.x(shade[1]), p.right)
    if x1 - x0 < 1:
        return [], []
    rect = (f'<rect class="shade" x="{_f(x0)}" y="{_f(p.top)}" width="{_f(x1 - x0)}" '
            f'height="{_f(p.bottom - p.top)}" fill="{C_AXIS}" fill-opacity="0.13"/>')  # fmt: skip
    size = 10.5
    box = _label_box(x0 + 4, p.bottom - 6, _text_width(shade[2], size), size, "start")
    taken.boxes.append(box)
    label = _halo_label((x0 + 4, p.bottom - 6, "start"), shade[2], C_TEXT, "label-shade", size)
    return [rect], [label]


def _peak_mark(p: _Plot, s: _Prepared, side: int, taken: _Taken) -> list[str]:
    if s.peak is None or s.peak_word is None:
        return []
    x, y = p.x(s.peak[0]), p.y(s.peak[1], side)
    text = f"{s.peak_word} {_fmt_value(s.peak[1], s.unit)}"
    size = 10.5
    w = _text_width(text, size)
    cands = [
        (x, y - 12, "middle"),
        (x + 6, y - 10, "start"),
        (x - 6, y - 10, "end"),
        (x + 8, y + 4, "start"),
        (x - 8, y + 4, "end"),
        (x, y + 18, "middle"),
        (x, y - 26, "middle"),
        (x + 6, y - 24, "start"),
        (x - 6, y - 24, "end"),
    ]
    cands += _farther(p, x, y, size)
    boxes = [_label_box(cx, cy, w, size, a) for cx, cy, a in cands]
    fits = [i for i, b in enumerate(boxes) if p.inside(b)] or list(range(len(cands)))
    best = next((i for i in fits if taken.free(boxes[i])), fits[0])
    taken.boxes.append(boxes[best])
    out = [_circle(x, y, 3, "#fff", s.color, 1.6, f"mark-max {s.cls}")]
    cy = cands[best][1]
    if abs(cy - y) > 30:  # moved off its point (other labels there): a thin line back to it
        box = boxes[best]
        end_y = box[3] if box[3] < y else box[1]
        lx = min(max(x, box[0]), box[2])
        out.append(
            f'<line class="leader {s.cls}" x1="{_f(x)}" y1="{_f(y)}" x2="{_f(lx)}" '
            f'y2="{_f(end_y)}" stroke="{s.color}" stroke-width="0.8"/>'
        )
    return [*out, _halo_label(cands[best], text, s.color, f"label-max {s.cls}", size)]


def _farther(p: _Plot, x: float, y: float, size: float) -> list[tuple[float, float, str]]:
    """Where a peak's label goes when every place beside its point is taken (event labels
    stacked over it, another series' peak): rows down the plot, then up, each centred on the
    point or to either side of it; the first free one that fits is drawn, with a leader."""
    step = size + 4
    rows = [y + 18 + k * step for k in range(1, 14)] + [y - 26 - k * step for k in range(1, 14)]
    return [(cx, cy, a) for cy in rows if p.top + size <= cy <= p.bottom
            for cx, a in ((x, "middle"), (x + 8, "start"), (x - 8, "end"))]  # fmt: skip


# ---------------------------------------------------------------- legend


def _legend_sample(kind: str, color: str, dashed: bool, x: float, y: float) -> str:
    if kind == "band":
        return (
            f'<rect x="{_f(x)}" y="{_f(y - 5)}" width="18" height="10" fill="{C_AXIS}" '
            f'fill-opacity="{BAND_OPACITY}"/>'
        )
    if kind == "event":
        return _vline(x + 9, y - 6, y + 6, C_EVENT, ' stroke-width="1.3" stroke-dasharray="3 2"')
    if kind == "flag":
        return _cross(x + 9, y, 4.5)
    if kind == "opt":
        return _circle(x + 9, y, 5, "none", color, 2)
    if kind == "max":
        return _polygon([(x + 9, y + 4), (x + 4, y - 4), (x + 14, y - 4)], color)
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    return _hline(x, x + 18, y, color, f' stroke-width="2"{dash}')


LegendItem = tuple[str, str, bool, str]  # kind, color, dashed, label


def _header(
    title: str, items: list[LegendItem], width: int, left: float
) -> tuple[list[str], float]:
    samples: list[tuple[Sample, str]] = [
        (partial(_legend_sample, kind, color, dashed), label)
        for kind, color, dashed, label in items
    ]
    return legend_header(title, samples, width, left)


# ---------------------------------------------------------------- hover texts


def _x_text(v: float, x_label: str, x_names: Sequence[str] | None) -> str:
    if x_names is not None:
        i = round(v)
        return f"{x_label}: {x_names[i]}" if 0 <= i < len(x_names) else f"{x_label}: {v:g}"
    name, _, unit = x_label.rpartition(" (")
    if unit == "s)":  # short: one of these per second drawn
        return f"t = {significant(v)} s"
    if name and unit.endswith(")"):
        return f"{significant(v)} {unit[:-1]}"
    return f"{x_label}: {significant(v)}"


def _hover(
    p: _Plot,
    xs: list[float],
    bounds: list[tuple[int, int]],
    drawn: list[_Prepared],
    x_label: str,
    x_names: Sequence[str] | None,
) -> str:
    """One hover text per drawn bucket: where it is, and each line's value there (the mean
    when the bucket stands for several samples)."""
    positions, tips = [], []
    for j, (a, b) in enumerate(bounds):
        x = (xs[a] + xs[b - 1]) / 2
        lines = [_x_text(x, x_label, x_names)]
        for s in drawn:
            bucket = s.buckets[j] if j < len(s.buckets) else None
            if bucket is None:
                continue
            mean = " mean" if b - a > 1 else ""  # several seconds: the band shows min and max
            lines.append(f"{s.label}{mean}: {_fmt_value(bucket.mean, s.unit)}")
        positions.append(p.x(x))
        tips.append("\n".join(lines))
    return hover_rect((p.left, p.top, p.right, p.bottom), positions, tips)
