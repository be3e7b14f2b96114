"""A running engine's live second, per host: the tool-neutral record the Observer, the live
view and the terminal read (docs/live.md). fio's status reports fill it
(`engines/fio/status.py`), a many-host point's disk counters too (`run/hosts_live.py`).
An engine that writes live figures gives a `LiveReader` of them (`Engine.live_reader`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class DirectionSecond:
    iops: float
    mbps: float  # 10^6 bytes per second
    lat_mean_us: float | None  # None: no I/O completed in the second
    lat_p99_us: float | None  # completion latency; None without json+ bins


@dataclass(frozen=True)
class LiveSecond:
    """One host's last complete second (t: the Unix second it ends in, as the store's
    samples are filed by `second_of`)."""

    t: int
    host: str
    read: DirectionSecond
    write: DirectionSecond
    errors: int  # the tool's error count since the start (fio: total_err, or jobs in error)

    @property
    def iops(self) -> float:
        return self.read.iops + self.write.iops

    @property
    def mbps(self) -> float:
        return self.read.mbps + self.write.mbps


class LiveReader(Protocol):
    """A running job's live figures, read as its output grows (`run/live_feed.py` polls it
    a few times a second); never raises, never prints."""

    def poll(self) -> list[list[LiveSecond]]:
        """Each second completed since the last poll: its seconds, one per host."""
        ...

    def finish(self) -> None:
        """After the job: its output left as without live figures."""
        ...
