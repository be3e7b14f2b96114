"""A scenario as `plan check` and the progress display see it: its steps and its points."""

from __future__ import annotations

from collections.abc import Sequence

from arraybench.plan.scenarios import Scenario, Step
from arraybench.run.spans import ZERO, Phase, Span

RUN_TYPICAL_S = 1.0  # a command step: typically quick, at most its timeout


def step_span(step: Step) -> Span:
    if step.run is not None:
        return Span(0.0, min(RUN_TYPICAL_S, step.run.timeout), step.run.timeout)
    assert step.prompt is not None
    wait = step.prompt.assume_after  # non-interactive; an operator may take any time
    return Span(wait, wait, None)


def steps_span(steps: Sequence[Step]) -> Span:
    total = ZERO
    for step in steps:
        total = total + step_span(step)
    return total


def scenario_phase(scenario: Scenario, points: Phase) -> Phase:
    """The points' phase of one scenario, its steps before and after it."""
    details = [f"before: {s.describe()}" for s in scenario.before]
    details += list(points.details)
    details += [f"after: {s.describe()}" for s in scenario.after]
    span = steps_span(scenario.before) + points.span + steps_span(scenario.after)
    title = f"scenario {scenario.title}: {points.title}"
    return Phase("scenario", title, span, points.steps, tuple(details))
