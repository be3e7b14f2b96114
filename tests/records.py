"""Stored-point records for report and analysis unit tests, without a store."""

from __future__ import annotations

from arraybench.store.db import METRIC_COLUMNS, PointRecord

# a random 8 KiB read point with every metric empty: tests `replace` what they need
BLANK_POINT = PointRecord(
    id=0, run_id="r", seq=0, key="", workload="randread-8k", family="Random 8 KiB", mix="Read",
    pattern="random", bs=8192, read_pct=100, region="backend", ioengine="libaio", unit="IOPS",
    workers=1, iodepth=1, jobs=1, targets="/dev/x", folder="/nonexistent", started="",
    finished="", runtime_s=1.0, fio_version="fio-3.33", usr_cpu=None, sys_cpu=None, devices=None,
    steady_attained=None, ended_early=None, pause_s=None, kernel_iops=None, kernel_mbps=None,
    cpu_busy_pct=None, hosts=None, partial=None, failed_hosts=None, start_spread_ms=None,
    metrics=dict.fromkeys(METRIC_COLUMNS),
)  # fmt: skip
