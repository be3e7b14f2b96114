"""`throttle`: the load's I/O to a device limited with the block cgroup."""

from __future__ import annotations

from pydantic import Field, model_validator

from arraybench.plan.event_kinds.base import EventKind
from arraybench.plan.types import PositiveInt, Size, Strict


class ThrottleAction(Strict):
    """Limit the load's I/O to `device` with the block cgroup (io.max or blkio.throttle)."""

    # a block device, or a file: its backing device
    device: str = Field(min_length=1, description="A block device, or a file: its backing device.")
    read_iops: PositiveInt | None = Field(None, description="Read IOPS limit.")
    write_iops: PositiveInt | None = Field(None, description="Write IOPS limit.")
    # bytes per second: 10m = 10 MiB/s
    read_bps: Size | None = Field(
        None, description="Read bandwidth limit in bytes per second (10m = 10 MiB/s)."
    )
    write_bps: Size | None = Field(
        None, description="Write bandwidth limit in bytes per second (10m = 10 MiB/s)."
    )

    @model_validator(mode="after")
    def _some_limit(self) -> ThrottleAction:
        if all(v is None for v in (self.read_iops, self.write_iops, self.read_bps, self.write_bps)):
            raise ValueError("give at least one of read_iops, write_iops, read_bps, write_bps")
        return self


def describe(action: ThrottleAction) -> str:
    return f"throttle {action.device}"


KIND = EventKind(
    "throttle",
    ThrottleAction,
    "Limit I/O to a device with the block cgroup.",
    describe,
    examples="""\
  - {at: 30s, duration: 20s, label: path A slow,
     throttle: {device: /dev/sdc, read_iops: 200, write_iops: 200}}
""",
)
