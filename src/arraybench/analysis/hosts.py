"""A point run on many hosts, in figures: each host's and the total over every host's jobs."""

from __future__ import annotations

from arraybench.analysis.aggregate import PointMetrics, point_metrics
from arraybench.hosts.client import MultiHostOutcome


def combine_hosts(outcome: MultiHostOutcome) -> tuple[dict[str, PointMetrics], PointMetrics]:
    """Per-host figures and the total over every job of every host (not fio's "All clients",
    which sums every group of every host)."""
    per_host = {name: point_metrics(jobs) for name, jobs in outcome.jobs_by_host.items()}
    every_job = [job for host in outcome.hosts for job in outcome.jobs_by_host.get(host.name, [])]
    return per_host, point_metrics(every_job)
