"""One progress model for every phase of a run: steps counted, seconds expected, an ETA.

Steps are what `runs` counts: every point (SNIA rounds at their maximum) and every special
test (the interference test, each thread level of the metadata test). Phases without steps
(laying out files, purge, preconditioning) count in seconds only. When the run learns it
needs fewer steps (rounds steady early, an adaptive series that found its optimum) the total
shrinks; a step beyond the total raises it: `done` never exceeds `total`.

The ETA is the expected seconds left, counted down while a step runs even when it reports
nothing (a 40-second interference test), and taken from the steps' measured pace once the
expected seconds are spent (more SNIA rounds than the window).
"""

from __future__ import annotations

from dataclasses import dataclass

from arraybench.plan.model import Plan
from arraybench.run.outline import plan_outline


def run_steps(plan: Plan) -> int:
    """The steps a run of `plan` can take: points, rounds at their maximum, special tests."""
    return plan_outline(plan).steps


@dataclass
class RunProgress:
    total_steps: int
    total_s: float  # expected seconds of the whole run, what is done included
    done_steps: int = 0
    done_s: float = 0.0  # expected seconds of the finished steps and phases
    current: str = "starting"
    current_s: float = 0.0  # expected seconds of the running step or phase
    current_since: float | None = None  # its start (monotonic seconds)
    steps_measured_s: float = 0.0  # wall seconds the counted steps took
    steps_measured: int = 0

    @classmethod
    def for_plan(cls, plan: Plan, done_steps: int) -> RunProgress:
        """A new or resumed run: `done_steps` already stored, their share of time done."""
        outline = plan_outline(plan)
        total = max(outline.steps, done_steps)
        span = outline.span.typical
        done_s = span * done_steps / total if total else 0.0
        return cls(total, span, done_steps, done_s)

    def begin(self, name: str, expected_s: float, now: float) -> None:
        if self.current_since is not None:  # a pause or a phase nobody ended: it is over
            self.end(now, counts=False)
        self.current, self.current_s, self.current_since = name, expected_s, now

    def end(self, now: float, counts: bool) -> None:
        """The running step (counts: a point or a special test) or phase has finished."""
        if counts:
            self.done_steps += 1
            self.total_steps = max(self.total_steps, self.done_steps)
            if self.current_since is not None:
                self.steps_measured_s += now - self.current_since
                self.steps_measured += 1
        self.done_s += self.current_s
        self.total_s = max(self.total_s, self.done_s)
        self.current_s, self.current_since = 0.0, None

    def skip(self, steps: int, seconds: float) -> None:
        """Steps the run will not take after all (their expected seconds leave the total)."""
        self.total_steps = max(self.done_steps, self.total_steps - steps)
        self.total_s = max(self.done_s, self.total_s - seconds)

    def _running(self, now: float) -> float:
        if self.current_since is None:
            return 0.0
        return min(self.current_s, max(0.0, now - self.current_since))

    def eta(self, now: float) -> float:
        """Seconds left: the expected ones, else the steps left at the measured pace."""
        left = self.total_s - self.done_s - self._running(now)
        steps_left = self.total_steps - self.done_steps
        if left <= 0 and steps_left > 0 and self.steps_measured:
            pace = self.steps_measured_s / self.steps_measured
            return max(0.0, steps_left * pace - self._running(now))
        return max(0.0, left)

    def fraction(self, now: float) -> float:
        if self.total_s <= 0:
            return 0.0
        return min(1.0, (self.done_s + self._running(now)) / self.total_s)

    def counts(self) -> str:
        return f"{self.done_steps}/{self.total_steps}"
