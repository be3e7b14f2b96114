"""What every inline SVG chart of the report draws with: the palette and font, nice ticks,
the elements (text, lines, circles, polylines, the red cross of a flagged point), label boxes,
the gap rule that breaks a line at a missing value, and the one title-and-legend layout.

`curve.py` (the curve over load levels), `timechart.py` (against time or data written) and
`figures.py` (the seed figures) draw from here, so every chart of a page looks the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape
from typing import TypeVar

from arraybench.units import MS_FROM_US, format_latency, format_quantity, format_tick, significant

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
C_TPUT = "#1f5fa8"
C_TPUT_FILL = "#1f5fa8"
C_LAT = "#d9730d"
C_OPT = "#1a7f37"
C_MAX = "#5b2a86"
C_GRID = "#e3e6ea"
C_AXIS = "#6b7280"
C_TEXT = "#1f2937"
C_CEIL = "#9aa0a6"
C_FLAG = "#c81e1e"

MS_THRESHOLD_US = MS_FROM_US
HEADROOM = 1.18  # keep the top of each axis a little above the data, room for labels
_NICE = (1.0, 2.0, 2.5, 5.0, 10.0)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
Pt = tuple[float, float]


# ---------------------------------------------------------------- numbers and ticks


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def nice_step(raw: float) -> float:
    """Smallest step from the 1 / 2 / 2.5 / 5 x 10^k family that is >= `raw`."""
    if not raw > 0 or not math.isfinite(raw):
        return 1.0
    mag = 10.0 ** math.floor(math.log10(raw))
    for f in _NICE:
        if f * mag >= raw * (1 - 1e-9):
            return f * mag
    return 10.0 * mag


def nice_ticks(vmax: float, target: int = 5) -> list[float]:
    """Ticks 0, step, ..., top with top >= vmax and about `target` intervals."""
    step = nice_step(vmax / max(target, 1)) if vmax > 0 else 0.25
    count = max(1, math.ceil(vmax / step - 1e-9)) if vmax > 0 else 4
    return [step * i for i in range(count + 1)]


def ticks_with_count(vmax: float, count: int) -> list[float]:
    """Exactly `count` nice intervals reaching >= vmax (to share grid lines with another axis)."""
    count = max(count, 1)
    step = nice_step(vmax / count) if vmax > 0 else nice_step(1.0 / count)
    return [step * i for i in range(count + 1)]


def _trim(v: float, digits: int = 2) -> str:
    """A tick or x label without unit, as `units.format_tick` writes it."""
    return significant(v)


def compact(v: float) -> str:
    """Axis label with k / M suffix: 250000 -> "250k", 2500000 -> "2.5M", 1250 -> "1.25k"."""
    return format_tick(v)


def fmt_throughput(v: float, unit: str) -> str:
    """ "304 kIOPS", "1.25 MIOPS", "850 IOPS", "1,204 MB/s": `units.format_quantity`."""
    return format_quantity(v, unit)


def fmt_latency(us: float) -> str:
    """ "208 µs", "8.46 µs", "12.5 ms" (ms from 10 000 µs): `units.format_latency`."""
    return format_latency(us)


# ---------------------------------------------------------------- elements


def _f(v: float) -> str:
    return f"{v:.1f}"


def _text(
    x: float, y: float, s: str, *, size: float = 11, anchor: str = "start", cls: str = "", **kw: str
) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{escape(v)}"' for k, v in kw.items())
    c = f' class="{cls}"' if cls else ""
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size:g}" text-anchor="{anchor}"{c}{extra}>'
        f"{escape(s)}</text>"
    )


def _text_width(s: str, size: float) -> float:
    return len(s) * size * 0.58


def _hline(x1: float, x2: float, y: float, stroke: str, extra: str = "") -> str:
    return f'<line x1="{_f(x1)}" y1="{_f(y)}" x2="{_f(x2)}" y2="{_f(y)}" stroke="{stroke}"{extra}/>'


def _circle(x: float, y: float, r: float, fill: str, stroke: str, sw: float, cls: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return (
        f'<circle{c} cx="{_f(x)}" cy="{_f(y)}" r="{r:g}" fill="{fill}" stroke="{stroke}" '
        f'stroke-width="{sw:g}"/>'
    )


def _polyline(seg: Sequence[Pt], stroke: str, sw: float, cls: str, extra: str = "") -> str:
    return (
        f'<polyline class="{cls}" points="{_pts_attr(seg)}" fill="none" stroke="{stroke}" '
        f'stroke-width="{sw:g}" stroke-linejoin="round"{extra}/>'
    )


def _polygon(pts: Sequence[Pt], fill: str, extra: str = "") -> str:
    return f'<polygon points="{_pts_attr(pts)}" fill="{fill}"{extra}/>'


def _vline(x: float, y1: float, y2: float, stroke: str, extra: str = "") -> str:
    return f'<line x1="{_f(x)}" y1="{_f(y1)}" x2="{_f(x)}" y2="{_f(y2)}" stroke="{stroke}"{extra}/>'


def _pts_attr(seg: Sequence[Pt]) -> str:
    return " ".join(f"{_f(x)},{_f(y)}" for x, y in seg)


def _cross(x: float, y: float, r: float, cls: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    w = f' stroke-width="2.2" stroke="{C_FLAG}"'
    return (f"<g{c}>" + f'<line x1="{_f(x - r)}" y1="{_f(y - r)}" x2="{_f(x + r)}" '
            f'y2="{_f(y + r)}"{w}/><line x1="{_f(x - r)}" y1="{_f(y + r)}" x2="{_f(x + r)}" '
            f'y2="{_f(y - r)}"{w}/></g>')  # fmt: skip


def _empty(width: int, height: int) -> str:
    return (
        f'<rect x="56" y="34" width="{width - 112}" height="{height - 80}" fill="#fafafa" '
        f'stroke="{C_GRID}"/>'
        + _text(width / 2, height / 2, "no data", size=12, anchor="middle", fill=C_AXIS)
    )


# ---------------------------------------------------------------- label placement


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _label_box(x: float, y: float, w: float, size: float, anchor: str) -> Box:
    x0 = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
    return (x0, y - size, x0 + w, y + 3)


def _halo_label(
    pos: tuple[float, float, str], s: str, color: str, cls: str, size: float = 11
) -> str:
    """Label with a white outline so it stays legible over grid and curves."""
    x, y, anchor = pos
    halo = {"paint_order": "stroke", "stroke": "#ffffff", "stroke_width": "3"}
    return _text(x, y, s, size=size, anchor=anchor, cls=cls, fill=color, font_weight="600", **halo)


# ---------------------------------------------------------------- gaps


T = TypeVar("T")


def runs(items: Sequence[T | None]) -> list[list[T]]:
    """Consecutive non-None items: the one gap rule of every chart, so a missing value breaks
    a line or a band instead of bridging it."""
    out: list[list[T]] = [[]]
    for it in items:
        if it is None:
            if out[-1]:
                out.append([])
        else:
            out[-1].append(it)
    return [r for r in out if r]


def _segments(pts: list[Pt | None]) -> list[list[Pt]]:
    return runs(pts)


# ---------------------------------------------------------------- title and legend


Sample = Callable[[float, float], str]  # draws a legend sample at (x, y)


def _item_width(label: str) -> float:
    return 23 + _text_width(label, 10.5)


def legend_header(
    title: str, items: list[tuple[Sample, str]], width: int, left: float
) -> tuple[list[str], float]:
    """The one title-and-legend layout of every chart: the legend right-aligned on the title
    row when it fits, else flowed in rows below it. Returns the elements and the y where the
    plot area may start."""
    out = [_text(left, 18, title, size=13.5, cls="chart-title", font_weight="700")]
    gap = 14.0
    total = sum(_item_width(label) for _, label in items) + gap * max(len(items) - 1, 0)
    rows: list[list[tuple[Sample, str]]] = []
    if left + _text_width(title, 13.5) + 24 + total <= width - 12:
        rows, x0, y = [items], width - 12 - total, 18.0
    else:
        row: list[tuple[Sample, str]] = []
        used = 0.0
        for it in items:
            w = _item_width(it[1]) + gap
            if row and left + used + w > width - 12:
                rows.append(row)
                row, used = [], 0.0
            row.append(it)
            used += w
        rows.append(row)
        x0, y = left, 36.0
    out.append('<g class="legend">')
    for k, line in enumerate(rows):
        x = x0
        for sample, label in line:
            yy = y + 16 * k
            out.append(sample(x, yy - 4))
            out.append(_text(x + 23, yy, label, size=10.5, fill=C_TEXT))
            x += _item_width(label) + gap
    out.append("</g>")
    return out, y + 16 * (len(rows) - 1) + 16
