"""The plan's `curve:` section: vdbench's `iorate=curve`, SPC-1's response-time curve.

Each named workload's grid series measures its maximum first; the curve then runs the same
workload at the maximum's load level, rate-limited to each percentage of that maximum, and the
report draws latency against the IOPS achieved. A step's rate is the total of its jobs at the
workload's mix (`plan/rate.py`). A point that misses its planned rate by more than
`tolerance` percent (short: the storage could not give it; over: the rate was not applied)
or its mix by more than `tolerance` points says so.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from arraybench.plan.types import _NUMBER, _REAL, InRange, Strict

CurvePercent = Annotated[int, _NUMBER, Field(strict=True), InRange(1, 1000)]
DEFAULT_PERCENTS = (10, 50, 70, 80, 90, 100)


class CurveTest(Strict):
    """The same workload rate-limited at fractions of its measured maximum."""

    workloads: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=lambda: ["*"],
        min_length=1,
        description="The workloads (names or shell patterns) whose curve is run after the "
        "grid; default: every workload. Each must match a workload of the plan (a pattern "
        "matching none is refused at its line, as acceptance's are).",
    )
    percents: list[CurvePercent] = Field(
        default_factory=lambda: list(DEFAULT_PERCENTS),
        min_length=1,
        description="The rates, in % of the workload's measured maximum IOPS, one point each "
        "(over 100: a rate beyond the maximum, to show it is one).",
    )
    tolerance: Annotated[float, _REAL, InRange(0.0, 100.0)] = Field(
        5.0,
        description="A point whose achieved IOPS is more than this many % below or above its "
        "planned rate, or whose read share is more than this many points off the workload's "
        "mix, is flagged: the rate was not reached.",
    )

    @field_validator("percents")
    @classmethod
    def _distinct(cls, percents: list[int]) -> list[int]:
        if len(set(percents)) != len(percents):
            raise ValueError("percents: each rate once")
        return sorted(percents)
