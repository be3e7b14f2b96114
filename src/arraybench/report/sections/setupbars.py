"""compare: bars per set-up. For each workload, one group of bars with one bar per compared
set-up (run or scenario) at its optimal point and one at its maximum: the slide a reader
asks for first ("which set-up is faster, and by how much, for each workload"), in the
CSCS seed's form (one bar per set-up). The figures are each set-up's headline
(report/sections/headlines.py via compare's Scenario.summary): the table's own numbers.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from arraybench.analysis.curves import CurvePoint
from arraybench.analysis.headline import Headline
from arraybench.report.model import Figure, FigureSeries

GROUP = "Per set-up: optimal point and maximum"


@dataclass(frozen=True)
class SetupHeadline:
    """One set-up's headline for one workload, as compare's table states it."""

    workload: str
    setup: str
    unit: str
    headline: Headline


def _value(p: CurvePoint | None) -> float | None:
    return None if p is None else p.throughput


def setup_bars(found: list[SetupHeadline]) -> list[Figure]:
    """Per unit (IOPS, MB/s: never one axis for both): the workloads as bar groups, one bar
    per set-up at its optimal point, then one per set-up at its maximum; no figure when
    fewer than two set-ups are compared."""
    setups = list(dict.fromkeys(f.setup for f in found))
    if len(setups) < 2:
        return []
    by_unit: OrderedDict[str, dict[tuple[str, str], Headline]] = OrderedDict()
    for f in found:
        by_unit.setdefault(f.unit, {})[(f.workload, f.setup)] = f.headline
    figures = []
    for unit, heads in by_unit.items():
        workloads = list(dict.fromkeys(w for w, _ in heads))
        series = []
        for role in ("optimal", "max"):
            for hue, setup in enumerate(setups):  # a set-up keeps its colour: optimal lighter
                values = []
                for w in workloads:
                    h = heads.get((w, setup))
                    point = None if h is None else (h.optimal if role == "optimal" else h.maximum)
                    values.append(_value(point))
                series.append(FigureSeries(f"{setup} · {role}", values, hue=hue,
                                           light=role == "optimal"))  # fmt: skip
        figures.append(Figure(
            "bars", f"{unit} per set-up: optimal point and maximum", "workload", unit,
            workloads, series, group=GROUP,
            caption="per workload, one bar per set-up at its optimal point, then one at its "
                    "maximum (the comparison table's figures)",
        ))  # fmt: skip
    return figures
