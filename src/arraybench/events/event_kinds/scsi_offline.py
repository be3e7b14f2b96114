"""`scsi_offline` at run time: `offline` written to /sys/block/NAME/device/state (the name
checked, the path rebuilt from it and kept inside sysfs), `running` at revert; on a host the
same by a fixed script, its answer checked."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arraybench.events import cgroup as cgroups
from arraybench.events import remote as sh
from arraybench.events.entries import BLOCK_NAME, Refused, mapping, text
from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds import Runtime
from arraybench.events.host_injectors import HostInjector
from arraybench.events.injectors import Injector, PidSource
from arraybench.events.journal import Injection
from arraybench.plan.event_kinds.scsi_offline import ScsiOfflineAction, is_block_name
from arraybench.system.blockdev import parent_disk_name
from arraybench.system.shell import DEVICE_SH

# args: DEVICE [STATE]: prints "STATEFILE BEFORE", then writes STATE if given
_SCSI = (
    DEVICE_SH
    + r"""n=$(basename "$(readlink -f "$1")")
name() { case $1 in ''|[!A-Za-z0-9]*|*[!A-Za-z0-9_!+-]*)
  echo "$2 leads to '$1', which is not a block device name" >&2; exit 3;; esac; }
name "$n" "$1"
n=$(diskname "$n")
name "$n" "$1"
f=/sys/block/$n/device/state
read -r before < "$f" 2>/dev/null || { echo "$1 ($n) is no SCSI disk: $f is missing" >&2; exit 3; }
echo "$f $before"
[ -z "$2" ] || printf %s "$2" > "$f"
"""
)

# args: STATEFILE STATE
_WRITE_STATE = r"""printf %s "$2" > "$1" && echo "$1 $2"
"""


class ScsiOfflineInjector(Injector):
    """Write `offline` to /sys/block/sdX/device/state; `running` at revert."""

    kind = "scsi_offline"

    def __init__(self, action: ScsiOfflineAction, *, sys_root: str = "/sys") -> None:
        self.action = action
        self.sys_root = sys_root
        self._state_file: Path | None = None
        self._before: str | None = None

    @property
    def applied(self) -> bool:
        return self._state_file is not None

    def disk_name(self) -> str:
        """The SCSI disk's kernel name, checked to be one (a name such as `../../tmp/x` would
        take the state file out of /sys): InjectorError otherwise."""
        device = self.action.device
        name = os.path.basename(os.path.realpath(device)) if device.startswith("/") else device
        if is_block_name(name):
            name = parent_disk_name(name, self.sys_root)
        if not is_block_name(name):
            raise InjectorError(
                f"scsi_offline: {device} leads to {name!r}, which is not a block device name",
                "name a SCSI disk such as /dev/sdc",
            )
        return name

    def apply(self) -> str:
        if self._state_file is not None:
            return "already applied"
        name = self.disk_name()
        # rebuilt from the checked name, and it must stay in sysfs (not a link out of it)
        state_file = Path(self.sys_root) / "block" / name / "device" / "state"
        sys_real = os.path.realpath(self.sys_root)
        inside = os.path.realpath(state_file).startswith(sys_real.rstrip("/") + "/")
        try:
            before = state_file.read_text().strip() if inside else None
        except OSError:
            before = None
        if before is None:
            raise InjectorError(
                f"{self.action.device} ({name}) is no SCSI disk: {state_file} is missing",
                "name a SCSI disk such as /dev/sdc (a path of a multipath map)",
            ) from None
        self._journal(Injection(self.kind, self.label, undo={"state_file": str(state_file)}))
        try:
            cgroups.write_file(state_file, "offline")
        except OSError as exc:
            self._undone()
            raise InjectorError(
                f"setting {name} offline: {exc.strerror or exc}", "run as root"
            ) from None
        self._state_file, self._before = state_file, before
        return f"{name}: {before} -> offline"

    def revert(self) -> str:
        if self._state_file is None:
            return "nothing to revert"
        state_file = self._state_file
        try:
            cgroups.write_file(state_file, "running")
        except OSError as exc:
            raise InjectorError(
                f"setting {state_file.parent.parent.name} back to running: {exc.strerror or exc}"
            ) from None
        self._state_file = None
        self._undone()
        return f"{state_file.parent.parent.name}: offline -> running"


class HostScsiOffline(HostInjector):
    kind = "scsi_offline"

    def __init__(self, remote: sh.Remote, action: ScsiOfflineAction) -> None:
        super().__init__(remote)
        self.action = action
        self._state_file: str | None = None

    @property
    def applied(self) -> bool:
        return self._state_file is not None

    def apply(self) -> str:
        if self._state_file is not None:
            return "already applied"
        state_file, before = scsi_state(self.remote, self.action.device)
        self._journal_here({"state_file": state_file})
        self._state_file = state_file
        write_state(self.remote, state_file, "offline")
        return f"host {self.remote.name} {state_file}: {before} -> offline"

    def revert(self) -> str:
        if self._state_file is None:
            return "nothing to revert"
        write_state(self.remote, self._state_file, "running")
        done = f"host {self.remote.name} {self._state_file}: offline -> running"
        self._state_file = None
        self._undone()
        return done


def scsi_state(remote: sh.Remote, device: str, state: str = "") -> tuple[str, str]:
    """(the device's state file on the host, its state before), writing `state` if given."""
    lines = remote.must(f"scsi_offline {device}", _SCSI, device, state)
    path, _, before = lines[0].partition(" ") if lines else ("", "", "")
    check_state_file(path, f"host {remote.name}: scsi_offline {device}")
    return path, before


def check_state_file(path: str, where: str) -> None:
    """InjectorError unless `path` is /sys/block/NAME/device/state for a block device NAME:
    the only file scsi_offline writes (a host's answer is checked, not trusted)."""
    parts = path.split("/")
    shape = parts[:3] == ["", "sys", "block"] and parts[4:] == ["device", "state"]
    if len(parts) != 6 or not shape or not is_block_name(parts[3]):
        raise InjectorError(f"{where}: refusing to write {path!r}, which is not "
                            "/sys/block/NAME/device/state of a block device")  # fmt: skip


def write_state(remote: sh.Remote, state_file: str, state: str) -> None:
    check_state_file(state_file, f"host {remote.name}: scsi_offline")
    remote.must(f"writing {state} to {state_file}", _WRITE_STATE, state_file, state)


# ------------------------------------------------------------------ the journal, revert


@dataclass(frozen=True)
class ScsiUndo:
    device: str  # a block device name

    @property
    def state_file(self) -> str:
        return f"/sys/block/{self.device}/device/state"


def _check(undo: Mapping[str, object], host: str) -> ScsiUndo:
    mapping(undo, "undo", {"state_file"}, {"state_file"})
    path = text(undo["state_file"], "state_file")
    parts = path.split("/")  # /sys/block/NAME/device/state, nothing else
    if len(parts) != 6 or parts[:3] != ["", "sys", "block"] or parts[4:] != ["device", "state"]:
        raise Refused(f"state_file {path!r} is not /sys/block/DEVICE/device/state")
    return ScsiUndo(text(parts[3], "SCSI device", BLOCK_NAME))


def _undo(u: Any, remote: sh.Remote | None) -> str:
    assert isinstance(u, ScsiUndo)
    if remote is not None:
        write_state(remote, u.state_file, "running")
        return f"{u.state_file}: running"
    state = Path(u.state_file)
    if not state.is_file():  # a file under sysfs is never created
        raise Refused(f"{u.device} is no SCSI disk here ({state} is missing)")
    try:
        cgroups.write_file(state, "running")
    except OSError as exc:
        raise InjectorError(f"{state}: {exc.strerror or exc}", "run as root") from None
    return f"{state}: running"


def _local(action: ScsiOfflineAction, pids: PidSource, sys_root: str) -> Injector:
    return ScsiOfflineInjector(action, sys_root=sys_root)


RUNTIME = Runtime(_local, HostScsiOffline, _check, _undo)
