"""A point's 1-second time series from fio's per-job interval logs (Unix-epoch stamped)."""

from __future__ import annotations

from pathlib import Path

from arraybench.engines.fio.jobfile import LOG_PREFIX
from arraybench.engines.fio.logs import full_seconds, parse_interval_log, per_second
from arraybench.engines.fio.results import IntervalSample
from arraybench.records import Sample


def _job_logs(folder: Path, kind: str) -> list[list[IntervalSample]]:
    paths = sorted(folder.glob(f"{LOG_PREFIX}_{kind}.*.log"))
    return [parse_interval_log(p) for p in paths]


def point_samples(folder: Path) -> list[Sample]:
    """Per second: IOPS and MB/s summed over jobs, latency weighted by each job's I/Os."""
    iops = _job_logs(folder, "iops")
    bw = _job_logs(folder, "bw")
    lat = _job_logs(folder, "lat")
    columns: dict[str, dict[int, float]] = {}
    for ddir, name in ((0, "read"), (1, "write")):
        columns[f"{name}_iops"] = dict(per_second(iops, "iops", ddir))
        # bw logs are KiB/s: MB/s = KiB/s * 1024 / 10^6
        columns[f"{name}_mbps"] = {t: v * 1024 / 1e6 for t, v in per_second(bw, "bw", ddir)}
        lat_ns = per_second(lat, "lat", ddir, iops_by_job=iops)
        columns[f"{name}_lat_us"] = {t: v / 1000 for t, v in lat_ns}
    complete = full_seconds(iops)
    seconds = sorted({t for column in columns.values() for t in column} & complete)
    return [
        Sample(
            t=t,
            read_iops=columns["read_iops"].get(t),
            write_iops=columns["write_iops"].get(t),
            read_mbps=columns["read_mbps"].get(t),
            write_mbps=columns["write_mbps"].get(t),
            read_lat_us=columns["read_lat_us"].get(t),
            write_lat_us=columns["write_lat_us"].get(t),
        )
        for t in seconds
    ]
