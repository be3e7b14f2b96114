"""`scsi_offline`: a SCSI disk set offline (sysfs device/state), back to running at revert."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from arraybench.plan.event_kinds.base import EventKind, _text_form
from arraybench.plan.types import Strict

# a kernel block device name (sdc, nvme0n1, dm-3, cciss!c0d0): the one part of a sysfs path
# taken from a plan; the path around it is rebuilt (/sys/block/NAME/device/state), never taken
# whole (the same shape as the revert's check, events.entries.BLOCK_NAME)
BLOCK_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_!+-]{0,63}")
_DEV_PATH_RE = re.compile(r"/dev/[A-Za-z0-9_.:+@=,/-]+")


def is_block_name(name: str) -> bool:
    return BLOCK_NAME_RE.fullmatch(name) is not None


class ScsiOfflineAction(Strict):
    """Set a SCSI disk offline (sysfs device/state), back to running at revert."""

    # /dev/sdc, sdc, or a link to it
    device: str = Field(min_length=1, description="/dev/sdc, sdc, or a link to it under /dev.")

    @field_validator("device")
    @classmethod
    def _a_device(cls, device: str) -> str:
        if device.startswith("/"):
            parts = device.split("/")
            if not _DEV_PATH_RE.fullmatch(device) or ".." in parts or "" in parts[1:]:
                raise ValueError(
                    f"{device!r} is not a device path: give /dev/NAME or a link under /dev "
                    "(letters, digits and _.:+@=,- ; no '..' or '//')"
                )
        elif not is_block_name(device):
            raise ValueError(
                f"{device!r} is not a block device name: give a kernel name such as sdc "
                "(letters, digits, '_', '-', '!' and '+') or a /dev path"
            )
        return device


def describe(action: ScsiOfflineAction) -> str:
    return f"offline {action.device}"


KIND = EventKind(
    "scsi_offline",
    ScsiOfflineAction,
    "Set a SCSI disk offline, back to running at revert (a string is the device).",
    describe,
    short_form=_text_form("device"),
    examples="""\
  - {at: 20s, duration: 30s, scsi_offline: /dev/sdc}       # short form of {device: ...}
""",
    more_examples="""\
  - {at: 20s, duration: 30s, scsi_offline: {device: /dev/sdc}}
""",
)
