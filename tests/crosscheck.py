"""Independent recomputation of a point's figures from fio's raw JSON, for cross-checks."""

from __future__ import annotations

import json
import math
from pathlib import Path


def last_doc(json_path: Path) -> dict:
    text = json_path.read_text()
    decoder = json.JSONDecoder()
    pos, doc = text.index("{"), None
    while True:
        try:
            doc, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        nxt = text.find("{", end)
        if nxt < 0:
            break
        pos = nxt
    assert doc is not None
    return doc


def fio_percentile(bins: dict[int, int], pct: float) -> float:
    total = sum(bins.values())
    running = 0
    for value in sorted(bins):
        running += bins[value]
        if running >= pct / 100 * total:
            return float(value)
    raise AssertionError("empty histogram")


def expected(json_path: Path, scope: str) -> dict[str, float]:
    """What fio's own JSON says for `scope` (read, write or total) of the whole point."""
    jobs = last_doc(json_path)["jobs"]
    dirs = [job[d] for job in jobs for d in (("read", "write") if scope == "total" else (scope,))]
    dirs = [d for d in dirs if d["total_ios"] > 0]
    ios = sum(d["total_ios"] for d in dirs)
    bins: dict[int, int] = {}
    for d in dirs:
        for key, count in d["lat_ns"]["bins"].items():
            bins[int(key)] = bins.get(int(key), 0) + count
    return {
        "ios": ios,
        "iops": sum(d["iops"] for d in dirs),
        "mbps": sum(d["bw_bytes"] for d in dirs) / 1e6,
        "bytes": sum(d["io_bytes"] for d in dirs),
        "lat_mean_us": sum(d["lat_ns"]["mean"] * d["total_ios"] for d in dirs) / ios / 1000
        if ios
        else math.nan,
        "lat_max_us": max(d["lat_ns"]["max"] for d in dirs) / 1000 if dirs else math.nan,
        "lat_p99_us": fio_percentile(bins, 99.0) / 1000 if bins else math.nan,
        "lat_p999_us": fio_percentile(bins, 99.9) / 1000 if bins else math.nan,
        "lat_p50_us": fio_percentile(bins, 50.0) / 1000 if bins else math.nan,
        "fio_p99_single_us": (
            dirs[0]["lat_ns"]["percentile"]["99.000000"] / 1000 if len(dirs) == 1 else math.nan
        ),
    }


def assert_point_matches_fio(metrics: dict[str, float | None], json_path: Path) -> None:
    """Stored metrics of a point == fio's own totals, per scope; percentiles from merged bins."""
    for scope in ("read", "write", "total"):
        want = expected(json_path, scope)
        got = {k.removeprefix(f"{scope}_"): v for k, v in metrics.items() if k.startswith(scope)}
        assert got["ios"] == want["ios"], scope
        assert got["bytes"] == want["bytes"], scope
        if want["ios"] == 0:
            assert got["iops"] == 0 and got["lat_mean_us"] is None
            continue
        for key in ("iops", "mbps", "lat_mean_us", "lat_max_us", "lat_p50_us", "lat_p99_us",
                    "lat_p999_us"):  # fmt: skip
            assert got[key] is not None and math.isclose(got[key], want[key], rel_tol=1e-9), (
                scope, key, got[key], want[key],
            )  # fmt: skip
        if not math.isnan(want["fio_p99_single_us"]):
            # one job, one direction: fio's own reported p99 must be what we computed
            assert math.isclose(got["lat_p99_us"], want["fio_p99_single_us"], rel_tol=1e-9)
