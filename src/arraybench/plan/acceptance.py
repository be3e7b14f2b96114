"""Acceptance criteria: the latency bound and the expectations a run's verdict checks."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    model_validator,
)

from arraybench.plan.types import (
    Count,
    Label,
    Latency,
    Rate,
    Strict,
)


class LatencyBound(Strict):
    # seconds
    value: Latency = Field(
        0.001, description="The latency bound of the latency-bounded throughput."
    )
    stat: Literal["mean", "p99"] = Field(
        "mean", description="Which latency statistic must stay under the bound."
    )


class Expectation(Strict):
    """An acceptance criterion: some measured point of the workload must meet every bound,
    e.g. `{workload: rw8k, min_iops: 400000, max_lat_p99: 1ms}`."""

    # as the verdict table shows it; default: built from the bounds
    name: Label | None = Field(
        None, description=("As the verdict table shows it (default: built from the bounds).")
    )
    # a workload name or glob
    workload: str = Field(min_length=1, description="A workload name or glob.")
    min_iops: Rate | None = Field(
        None, description="Some point must reach at least this many IOPS."
    )
    # MB/s = 10^6 bytes/s
    min_mbps: Rate | None = Field(
        None,
        description=("Some point must reach at least this throughput, in MB/s (10^6 bytes/s)."),
    )
    max_lat_mean: Latency | None = Field(None, description="...with a mean latency at most this.")
    max_lat_p99: Latency | None = Field(
        None, description="...with a 99th percentile latency at most this."
    )
    max_stall: Latency | None = Field(
        None,
        description=(
            "...with its longest open-loop stall at most this (a rate-limited point: "
            "completions under a tenth of the intended rate while I/O was due)."
        ),
    )
    max_corrected_p99: Latency | None = Field(
        None,
        description=(
            "...with a 99th percentile latency from each I/O's intended start (open loop: a "
            "rate-limited point) at most this."
        ),
    )
    # only points measured on this many hosts
    hosts: Count | None = Field(None, description="Only points measured on this many hosts.")

    @model_validator(mode="after")
    def _some_bound(self) -> Expectation:
        bounds = (self.min_iops, self.min_mbps, self.max_lat_mean, self.max_lat_p99,
                  self.max_stall, self.max_corrected_p99)  # fmt: skip
        if not any(bounds):
            raise ValueError(
                "an expectation needs a bound: min_iops, min_mbps, max_lat_mean, max_lat_p99, "
                "max_stall or max_corrected_p99"
            )
        return self
