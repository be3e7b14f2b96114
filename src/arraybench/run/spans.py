"""Expected durations: a span of seconds (least, typical, most) and a phase of a run.

Shared by the outline (`plan check`, the progress display) and the test kinds, which say how
long their own steps take.
"""

from __future__ import annotations

from dataclasses import dataclass

from arraybench.units import format_duration

# per point: fio start-up, parsing, analysis and the commit (typical, and on a busy machine)
OVERHEAD_S = 0.7
OVERHEAD_HIGH_S = 3.0


@dataclass(frozen=True)
class Span:
    """Seconds: the least, the typical and the most; `high` None when open above."""

    low: float
    typical: float
    high: float | None

    def __add__(self, other: Span) -> Span:
        high = None if self.high is None or other.high is None else self.high + other.high
        return Span(self.low + other.low, self.typical + other.typical, high)

    def times(self, n: float) -> Span:
        return Span(self.low * n, self.typical * n, None if self.high is None else self.high * n)

    def text(self) -> str:
        """`about 2m52s (2m30s to 4m05s)`."""
        high = "no known limit" if self.high is None else format_duration(self.high)
        return f"about {format_duration(self.typical)} ({format_duration(self.low)} to {high})"


ZERO = Span(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Phase:
    kind: str  # prepare, hosts, purge, precondition, rounds, points, interference, metadata,
    # report
    title: str
    span: Span
    steps: int = 0  # progress steps: points, rounds' points (at most), special tests
    details: tuple[str, ...] = ()
