"""Stored-point records for report and analysis unit tests, without a store."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from arraybench.engines.fio.logs import parse_interval_log
from arraybench.point_identity import PointIdentity, from_key
from arraybench.store.db import METRIC_COLUMNS, PointRecord, Sample

DATA = Path(__file__).parent / "data"

# a random 8 KiB read point with every metric empty: tests `replace` what they need
BLANK_POINT = PointRecord(
    id=0, run_id="r", seq=0, key="", identity=PointIdentity("randread-8k", ""),
    workload="randread-8k", family="Random 8 KiB", mix="Read",
    pattern="random", bs=8192, read_pct=100, region="backend", ioengine="libaio", unit="IOPS",
    workers=1, iodepth=1, jobs=1, targets="/dev/x", folder="/nonexistent", started="",
    finished="", runtime_s=1.0, engine_version="fio-3.33", usr_cpu=None, sys_cpu=None, devices=None,
    steady_attained=None, ended_early=None, pause_s=None, kernel_iops=None, kernel_mbps=None,
    cpu_busy_pct=None, hosts=None, partial=None, failed_hosts=None, start_spread_ms=None,
    metrics=dict.fromkeys(METRIC_COLUMNS),
)  # fmt: skip


def keyed(point: PointRecord, key: str, **changes: Any) -> PointRecord:
    """The point under another key, its identity read from the key as a store made before the
    identity columns is (scenario: the point's own, or one of `changes`)."""
    point = replace(point, **changes)
    return replace(point, key=key, identity=from_key(key, point.workload, point.scenario))


def stored_findings(results: Path, kind: str) -> list[dict]:
    """The `kind` findings a run stored under `results`, oldest first, as plain data."""
    with sqlite3.connect(results / "arraybench.db") as db:
        rows = db.execute("SELECT data_json FROM findings WHERE kind = ? ORDER BY id",
                          (kind,)).fetchall()  # fmt: skip
    return [json.loads(r[0]) for r in rows]


def sample_12(iops_only: bool = False) -> list[Sample]:
    """The 1-second samples of data sample 12 (a real write cliff), as the store holds them;
    `iops_only`: without the bandwidth log."""
    iops = parse_interval_log(DATA / "12_samyaple_fio3.33_iops.1.log")
    bw = parse_interval_log(DATA / "12_samyaple_fio3.33_bw.1.log")
    mbps = {round(r.time_ms / 1000): r.value * 1024 / 1e6 for r in bw}
    return [
        Sample(1_700_000_000 + round(r.time_ms / 1000), None, r.value, None,
               None if iops_only else mbps.get(round(r.time_ms / 1000)), None, None)
        for r in iops
    ]  # fmt: skip
