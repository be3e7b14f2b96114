"""`host_tuning:` in a plan: block queue settings applied to the targets' devices for the run.

```yaml
host_tuning: {scheduler: none, nr_requests: 64, read_ahead_kb: 0}   # every host
host_tuning:                                                       # or per host
  read_ahead_kb: 0
  hosts: {h1: {nomerges: 1}}                                       # h1: read_ahead_kb and nomerges
```

Ranges here are what any kernel accepts; what one device accepts (its schedulers, whether an
attribute is writable, max_sectors_kb up to max_hw_sectors_kb) is judged against its sysfs by
`events.tuning` before anything is changed.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from arraybench.plan.types import _NUMBER, InRange, Strict

_Int = Annotated[int, _NUMBER, Field(strict=True)]


class QueueTuning(Strict):
    """Each key is the sysfs attribute of the same name (queue/, or device/ for queue_depth)."""

    scheduler: str | None = Field(
        None, pattern=r"^[a-z0-9][a-z0-9_\-]{0,31}$",
        description="I/O scheduler (none, mq-deadline, kyber, bfq: one the device offers).",
    )  # fmt: skip
    nr_requests: Annotated[_Int, InRange(4, 1 << 20)] | None = Field(
        None, description="Requests the queue holds (the device may allow fewer)."
    )
    nomerges: Annotated[_Int, InRange(0, 2)] | None = Field(
        None, description="0: merge requests, 1: only simple merges, 2: no merges."
    )
    read_ahead_kb: Annotated[_Int, InRange(0, 1 << 22)] | None = Field(
        None, description="Read-ahead in KiB (0: none)."
    )
    rotational: Annotated[_Int, InRange(0, 1)] | None = Field(
        None, description="1: the kernel treats the device as a spinning disk."
    )
    max_sectors_kb: Annotated[_Int, InRange(4, 1 << 22)] | None = Field(
        None, description="Largest request in KiB (at most the device's max_hw_sectors_kb)."
    )
    write_cache: Literal["write back", "write through"] | None = Field(
        None, description="How the kernel treats the device's cache (flushes or not)."
    )
    rq_affinity: Annotated[_Int, InRange(0, 2)] | None = Field(
        None, description="Complete requests on the submitting CPU (1: its group, 2: itself)."
    )
    add_random: Annotated[_Int, InRange(0, 1)] | None = Field(
        None, description="1: I/O timings feed the entropy pool."
    )
    iostats: Annotated[_Int, InRange(0, 1)] | None = Field(
        None, description="1: the kernel keeps /proc/diskstats counters for the device."
    )
    wbt_lat_usec: Annotated[_Int, InRange(-1, 10**9)] | None = Field(
        None, description="Writeback throttling target latency in µs (0: off, -1: default)."
    )
    queue_depth: Annotated[_Int, InRange(1, 65535)] | None = Field(
        None, description="Queue depth of the SCSI device under the target (device/queue_depth)."
    )

    def values(self) -> dict[str, str]:
        """The keys given, as the text written to sysfs, in a fixed order."""
        return {k: str(v) for k, v in self.model_dump(exclude={"hosts"}).items() if v is not None}


class HostTuning(QueueTuning):
    """Settings for every host (this machine without `hosts`), and per host under `hosts`."""

    hosts: dict[str, QueueTuning] = Field(
        default_factory=dict, description="Per host name: settings over the ones for all hosts."
    )

    def for_host(self, name: str | None) -> dict[str, str]:
        """What applies on host `name` (None: this machine)."""
        own = self.hosts.get(name) if name is not None else None
        return self.values() | (own.values() if own else {})
