"""`throttle` at run time: the load's processes moved into a new block cgroup limiting their
I/O to one device (here, or under a host's fio server by a fixed script); the undo lifts the
limits, moves them back and removes the cgroup, from the journal alone if need be."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arraybench.events import cgroup as cgroups
from arraybench.events import remote as sh
from arraybench.events.entries import Refused, mapping, text
from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds import Runtime
from arraybench.events.host_injectors import HostInjector
from arraybench.events.injectors import Injector, PidSource
from arraybench.events.journal import Injection
from arraybench.plan.event_kinds.throttle import ThrottleAction
from arraybench.system.blockdev import BlockDevice, device_number, whole_disk
from arraybench.system.procs import parent_of, processes_of
from arraybench.system.shell import DEVICE_SH

CGROUP_PREFIX = "arraybench-ev"
_cgroup_counter = itertools.count()
_counter = itertools.count()
DEVICE_NUMBER = re.compile(r"[0-9]{1,10}:[0-9]{1,10}")  # MAJ:MIN
CGROUP_PATH = re.compile(r"(/[A-Za-z0-9_.@:+=,\\-]{1,255}){0,32}/?")
LOCAL_CGROUP = re.compile(r"arraybench-ev-[0-9]{1,10}-[0-9]{1,10}")
HOST_CGROUP = re.compile(r"arraybench-ev-[0-9]{1,10}-[A-Za-z0-9][A-Za-z0-9_.-]{0,63}-[0-9]{1,10}")

# "VERSION ROOT" of the hierarchy that throttles block I/O (cgroup v2 io first, then v1 blkio)
_CGROUP = r"""cgfind() {
  while read -r src mnt fs opts rest; do
    if [ "$fs" = cgroup2 ] && grep -qw io "$mnt/cgroup.controllers" 2>/dev/null; then
      cgv=2; cgroot=$mnt; return 0; fi
  done < /proc/self/mounts
  while read -r src mnt fs opts rest; do
    case ",$opts," in *,blkio,*)
      if [ "$fs" = cgroup ] && [ -e "$mnt/blkio.throttle.read_iops_device" ]; then
        cgv=1; cgroot=$mnt; return 0; fi;; esac
  done < /proc/self/mounts
  echo "no cgroup can throttle block I/O on this host (no cgroup2 io, no v1 blkio)" >&2
  exit 4
}
cgof() {
  if [ "$cgv" = 2 ]; then sed -n 's/^0:://p' "/proc/$1/cgroup"
  else awk -F: '$2 ~ /(^|,)blkio(,|$)/ { print $3 }' "/proc/$1/cgroup"; fi
}
limits() {
  if [ "$cgv" = 2 ]; then
    printf '%s rbps=%s wbps=%s riops=%s wiops=%s' "$1" "${4:-max}" "${5:-max}" "${2:-max}" \
      "${3:-max}" > "$cgroot/$folder/io.max"
  else
    printf '%s %s' "$1" "${2:-0}" > "$cgroot/$folder/blkio.throttle.read_iops_device"
    printf '%s %s' "$1" "${3:-0}" > "$cgroot/$folder/blkio.throttle.write_iops_device"
    printf '%s %s' "$1" "${4:-0}" > "$cgroot/$folder/blkio.throttle.read_bps_device"
    printf '%s %s' "$1" "${5:-0}" > "$cgroot/$folder/blkio.throttle.write_bps_device"
  fi
}
movein() {
  moved=0
  for p in $(tree "$spid" ""); do
    echo "$p" > "$cgroot/$folder/cgroup.procs" 2>/dev/null && moved=$((moved + 1))
  done
}
"""

# args: PIDFILE FOLDER DEVICE READ_IOPS WRITE_IOPS READ_BPS WRITE_BPS ("" = no limit)
_THROTTLE_APPLY = (
    sh.TREE_SH
    + _CGROUP
    + DEVICE_SH
    + r"""server "$1"; folder=$2; dev=$3; cgfind
diskof "$dev"; found=$?
[ "$found" = 1 ] && exit 5
[ "$found" = 0 ] || { echo "$dev is on no block device ($n)" >&2; exit 5; }
echo "cgroup $cgv $cgroot"; echo "device $n"; echo "origin $(cgof "$spid")"
if [ "$cgv" = 2 ] && ! grep -qw io "$cgroot/cgroup.subtree_control"; then
  echo +io > "$cgroot/cgroup.subtree_control" || exit 6; fi
mkdir "$cgroot/$folder" || exit 6
limits "$n" "$4" "$5" "$6" "$7" || exit 6
movein; echo "moved $moved"
[ "$moved" -gt 0 ] || { echo "no fio job process under the server $spid" >&2; exit 7; }
"""
)

# args: PIDFILE FOLDER
_THROTTLE_REFRESH = (
    sh.TREE_SH
    + _CGROUP
    + r"""server "$1"; folder=$2; cgfind; [ -d "$cgroot/$folder" ] && movein
echo "moved ${moved:-0}"
"""
)

# args: FOLDER ORIGIN DEVICE_NUMBER (both may be ""): limits off, members back, folder removed
_THROTTLE_REVERT = (
    _CGROUP
    + r"""folder=$1; origin=$2; cgfind
[ -d "$cgroot/$folder" ] || { echo "gone"; exit 0; }
[ -n "$3" ] && limits "$3" "" "" "" ""
back=$cgroot$origin; [ -n "$origin" ] && [ -d "$back" ] || back=$cgroot
moved=0
for pass in 1 2 3; do
  for p in $(cat "$cgroot/$folder/cgroup.procs"); do
    echo "$p" > "$back/cgroup.procs" 2>/dev/null && moved=$((moved + 1)); done
done
for wait in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cgroot/$folder" 2>/dev/null && break; sleep 0.2; done
[ -d "$cgroot/$folder" ] && { echo "cannot remove $cgroot/$folder" >&2; exit 6; }
echo "moved $moved back to $back, removed $cgroot/$folder"
"""
)


def disk_for_path(path: str, sys_root: str = "/sys") -> BlockDevice:
    """The whole disk a block device is, or a file lives on; InjectorError otherwise."""
    try:
        major, minor, _ = device_number(path)
    except OSError as exc:
        raise InjectorError(f"{path}: {exc.strerror or exc}", "check the device path") from None
    disk = whole_disk(major, minor, sys_root)
    if disk is None:
        raise InjectorError(
            f"{path} is on no block device (device number {major}:{minor})",
            "name a block device, or a file on a block-device filesystem",
        )
    return disk


def _limits(action: ThrottleAction) -> dict[str, int | None]:
    return {
        "read_iops": action.read_iops,
        "write_iops": action.write_iops,
        "read_bps": action.read_bps,
        "write_bps": action.write_bps,
    }


def _limits_text(limits: dict[str, int | None]) -> str:
    parts = []
    for key, value in limits.items():
        if value is not None:
            unit = "IOPS" if key.endswith("iops") else "B/s"
            parts.append(f"{key.split('_')[0]} {value} {unit}")
    return ", ".join(parts)


class ThrottleInjector(Injector):
    """Move the load's processes into a new cgroup that limits their I/O to one device.

    Revert: limits removed (queued I/O goes on at once), every process in the cgroup moved
    back to the cgroup it came from (new children to their parent's), the cgroup removed.

    `pids` must list fio's job processes: give `procs.process_tree_pids(fio_pid)`, not the
    process group (fio's jobs call setsid() and leave it). Thread ids are fine (mapped to
    their processes). Processes that appear later are moved in by `refresh()`.
    """

    kind = "throttle"

    def __init__(
        self,
        action: ThrottleAction,
        pids: PidSource,
        *,
        hierarchy: cgroups.IoCgroup | None = None,
    ) -> None:
        self.action = action
        self._pids = pids
        self._hierarchy = hierarchy
        self._cg: cgroups.IoCgroup | None = None
        self._folder: Path | None = None
        self._disk: BlockDevice | None = None
        self._origins: dict[int, str] = {}  # pid -> its cgroup before the move

    @property
    def applied(self) -> bool:
        return self._folder is not None

    @property
    def folder(self) -> Path | None:
        """The cgroup created for the load (None when not applied)."""
        return self._folder

    def apply(self) -> str:
        if self.applied:
            return f"already applied ({self._folder})"
        disk = disk_for_path(self.action.device)
        cg = self._hierarchy or cgroups.detect_io_cgroup()
        load = processes_of(self._pids())
        if not load:
            raise InjectorError(
                f"throttle {self.action.device}: no load process to move into a cgroup",
                "the event came before fio started or after it ended",
            )
        stale = cgroups.remove_leftovers(cg, CGROUP_PREFIX)
        folder = cg.root / f"{CGROUP_PREFIX}-{os.getpid()}-{next(_cgroup_counter)}"
        self._cg, self._disk = cg, disk
        limits = _limits(self.action)
        origin = cgroups.cgroup_of(load[0], cg) or "/"
        self._journal(Injection(self.kind, self.label, undo={
            "version": cg.version, "root": str(cg.root), "folder": str(folder),
            "device": disk.number, "origin": origin}))  # fmt: skip
        try:
            if cg.version == 2:
                cgroups.enable_io_v2(cg)
            folder.mkdir()
            self._folder = folder
            for name, text in cgroups.limit_lines(cg, disk.number, limits).items():
                cgroups.write_file(folder / name, text)
            moved = self._move_in(load)
        except OSError as exc:
            with contextlib.suppress(InjectorError):  # the apply error says more
                self.revert()
            raise InjectorError(
                f"throttle {disk.name} ({disk.number}) with {cg.describe()}: {exc.strerror or exc}",
                "run as root; the device must be a whole disk the kernel can throttle",
            ) from None
        cleaned = f"; removed {len(stale)} cgroup(s) left by killed runs" if stale else ""
        return (
            f"{disk.name} ({disk.number}) limited to {_limits_text(limits)} for {moved} load "
            f"process(es) in {folder} ({cg.describe()}){cleaned}"
        )

    def _move_in(self, pids: list[int]) -> int:
        assert self._cg is not None and self._folder is not None
        moved = 0
        for pid in pids:
            if pid in self._origins:
                continue
            origin = cgroups.cgroup_of(pid, self._cg)
            if origin is None:
                continue  # gone
            self._origins[pid] = origin
            if cgroups.move_process(self._cg, self._folder, pid):
                moved += 1
        return moved

    def refresh(self) -> None:
        """Move load processes started after apply() (fio forking late) into the cgroup."""
        if not self.applied:
            return
        with contextlib.suppress(OSError):  # the next refresh or the revert deals with it
            self._move_in(processes_of(self._pids()))

    def _origin_for(self, pid: int) -> str:
        if pid in self._origins:
            return self._origins[pid]
        parent = parent_of(pid)  # a child forked inside the cgroup: where its parent came from
        if parent in self._origins:
            return self._origins[parent]
        return next(iter(self._origins.values()), "/")

    def revert(self) -> str:
        if self._folder is None or self._cg is None or self._disk is None:
            return "nothing to revert"
        folder, disk = self._folder, self._disk
        done = cgroups.release(self._cg, folder, disk.number, self._origin_for)
        if not folder.exists():
            self._folder = None
            self._origins.clear()
            self._undone()
        if done.problems:
            raise InjectorError(
                f"throttle revert on {disk.name}: " + "; ".join(done.problems),
                f"check {folder} by hand",
            )
        return f"{disk.name} limits removed, {done.moved} process(es) moved back, {folder} removed"


class HostThrottle(HostInjector):
    """The host's fio job processes moved into a new block cgroup limited on `device` (a
    device or a file on the host); reverted as ThrottleInjector is."""

    kind = "throttle"

    def __init__(self, remote: sh.Remote, action: ThrottleAction) -> None:
        super().__init__(remote)
        self.action = action
        self.folder: str | None = None
        self._origin = ""
        self._number = ""

    @property
    def applied(self) -> bool:
        return self.folder is not None

    def apply(self) -> str:
        if self.folder is not None:
            return "already applied"
        # the host's name (a plan name: letters, digits, _ . -) says where, the counter which
        folder = f"{CGROUP_PREFIX}-{os.getpid()}-{self.remote.name}-{next(_counter)}"
        self._journal_here({"pidfile": self.remote.pidfile, "folder": folder,
                            "device": self.action.device})  # fmt: skip
        self.folder = folder  # from here a revert removes whatever the apply made
        limits = ["" if v is None else str(v) for v in _limits(self.action).values()]
        try:
            found = throttle_apply(self.remote, folder, self.action.device, limits)
        except InjectorError:
            with contextlib.suppress(InjectorError):
                self.revert()
            raise
        self._number, self._origin = found.get("device", ""), found.get("origin", "")
        self._learned({"number": self._number, "origin": self._origin})
        return (f"{self.action.device} ({self._number}) limited to "
                f"{_limits_text(_limits(self.action))} for {found.get('moved', '?')} fio job "
                f"process(es) in {found.get('cgroup', '?').split(' ')[-1]}/{folder}")  # fmt: skip

    def refresh(self) -> None:
        if self.folder is not None:
            throttle_refresh(self.remote, self.folder)

    def revert(self) -> str:
        if self.folder is None:
            return "nothing to revert"
        said = throttle_revert(self.remote, self.folder, self._origin, self._number)
        self.folder = None
        self._undone()
        return said


def throttle_apply(
    remote: sh.Remote, folder: str, device: str, limits: list[str]
) -> dict[str, str]:
    """Create FOLDER in the host's block cgroup with the limits and move the load into it;
    {"cgroup": "V ROOT", "device": MAJ:MIN, "origin": PATH, "moved": N}."""
    lines = remote.must(f"throttle {device}", _THROTTLE_APPLY, remote.pidfile, folder, device,
                        *limits)  # fmt: skip
    return sh.fields(lines)


def throttle_refresh(remote: sh.Remote, folder: str) -> None:
    remote.run(_THROTTLE_REFRESH, remote.pidfile, folder)


def throttle_revert(remote: sh.Remote, folder: str, origin: str, number: str) -> str:
    lines = remote.must("throttle revert", _THROTTLE_REVERT, folder, origin, number)
    return lines[-1] if lines else ""


# ------------------------------------------------------------------ the journal, revert


@dataclass(frozen=True)
class CgroupUndo:
    """A throttle on this machine: its cgroup folder, a child of the hierarchy's root."""

    version: int
    root: Path
    folder: Path
    device: str  # MAJ:MIN
    origin: str  # the cgroup the load came from, inside the hierarchy


@dataclass(frozen=True)
class HostCgroupUndo:
    """A throttle on a host: the folder's name under the host's cgroup root."""

    folder: str
    origin: str
    number: str  # MAJ:MIN, "" when the apply did not get that far


def _cgroup_path(value: object) -> str:
    path = text(value, "origin cgroup", CGROUP_PATH)
    if any(part in (".", "..") for part in path.split("/")):
        raise Refused(f"origin cgroup {path!r} climbs out of the hierarchy")
    return path


def _check(undo: Mapping[str, object], host: str) -> CgroupUndo | HostCgroupUndo:
    if host:
        mapping(undo, "undo", {"pidfile", "folder", "device", "number", "origin"}, {"folder"})
        folder = text(undo["folder"], "cgroup folder", HOST_CGROUP)
        number = undo.get("number") or ""
        number = text(number, "device number", DEVICE_NUMBER) if number else ""
        origin = undo.get("origin") or ""
        return HostCgroupUndo(folder, _cgroup_path(origin) if origin else "", number)
    mapping(undo, "undo", {"version", "root", "folder", "device", "origin"},
            {"version", "root", "folder", "device"})  # fmt: skip
    version = undo["version"]
    if version not in (1, 2) or isinstance(version, bool):
        raise Refused(f"cgroup version {version!r} is neither 1 nor 2")
    root = Path(text(undo["root"], "cgroup root"))
    if not root.is_absolute() or ".." in root.parts:
        raise Refused(f"cgroup root {str(root)!r} is not an absolute path")
    path = Path(text(undo["folder"], "cgroup folder"))
    if path.parent != root or not LOCAL_CGROUP.fullmatch(path.name):
        raise Refused(f"cgroup folder {str(path)!r} is not an arraybench cgroup under {root}")
    device = text(undo["device"], "device number", DEVICE_NUMBER)
    origin = undo.get("origin") or "/"
    return CgroupUndo(int(str(version)), root, path, device, _cgroup_path(origin))


def _hierarchy(u: CgroupUndo) -> cgroups.IoCgroup:
    """The journal's hierarchy, if this machine mounts it (else the folder is no cgroup)."""
    for cg in cgroups.io_cgroups():
        if cg.root == u.root and cg.version == u.version:
            return cg
    raise Refused(f"{u.root} is not a cgroup v{u.version} mount of this machine")


def _undo(u: Any, remote: sh.Remote | None) -> str:
    if isinstance(u, HostCgroupUndo):
        assert remote is not None
        return throttle_revert(remote, u.folder, u.origin, u.number)
    assert isinstance(u, CgroupUndo)
    cg = _hierarchy(u)  # first: a folder elsewhere is never looked at
    folder = u.folder
    if not folder.is_dir():
        return f"{folder} is gone already"
    back = cgroups.folder_of(cg, u.origin)
    back = back if back.is_dir() else cg.root
    done = cgroups.release(cg, folder, u.device, lambda pid: u.origin)
    if done.problems:
        raise InjectorError(f"throttle {folder}: " + "; ".join(done.problems),
                            f"check {folder} by hand")  # fmt: skip
    return f"limits removed, {done.moved} process(es) moved back to {back}, {folder} removed"


def _local(action: ThrottleAction, pids: PidSource, sys_root: str) -> Injector:
    return ThrottleInjector(action, pids)


RUNTIME = Runtime(_local, HostThrottle, _check, _undo)
