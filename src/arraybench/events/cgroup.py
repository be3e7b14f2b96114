"""The block I/O cgroup controller: cgroup v2 `io.max` or cgroup v1 `blkio.throttle.*`.

Which one works is found out, not assumed: a cgroup v2 hierarchy counts when its root lists
the `io` controller in cgroup.controllers (on a hybrid machine the v2 mount often has no
controllers, they are bound to v1); a v1 `blkio` hierarchy counts when it has the throttle
files (CONFIG_BLK_DEV_THROTTLING).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from arraybench.events.errors import InjectorError
from arraybench.system.procs import left_by_the_dead

V1_LIMIT_FILES = {
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
}
V2_KEYS = {"read_bps": "rbps", "write_bps": "wbps", "read_iops": "riops", "write_iops": "wiops"}
_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class IoCgroup:
    """One cgroup hierarchy that can throttle block I/O."""

    version: Literal[1, 2]
    root: Path  # where the hierarchy is mounted

    def describe(self) -> str:
        what = "io.max" if self.version == 2 else "blkio.throttle"
        return f"cgroup v{self.version} {what} at {self.root}"


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), text)


def _mounts(mounts_file: str) -> list[tuple[str, Path, list[str]]]:
    """(fstype, mount point, options) of every mount."""
    try:
        lines = Path(mounts_file).read_text().splitlines()
    except OSError:
        return []
    result = []
    for line in lines:
        fields = line.split()
        if len(fields) >= 4:
            result.append((fields[2], Path(_unescape(fields[1])), fields[3].split(",")))
    return result


def io_cgroups(mounts_file: str = "/proc/self/mounts") -> list[IoCgroup]:
    """Every hierarchy that can throttle block I/O, cgroup v2 first."""
    found: list[IoCgroup] = []
    mounts = _mounts(mounts_file)
    for fstype, point, _ in mounts:
        if fstype != "cgroup2":
            continue
        try:
            controllers = (point / "cgroup.controllers").read_text().split()
        except OSError:
            continue
        if "io" in controllers:
            found.append(IoCgroup(2, point))
    for fstype, point, options in mounts:
        if (
            fstype == "cgroup"
            and "blkio" in options
            and (point / V1_LIMIT_FILES["read_iops"]).exists()
        ):
            found.append(IoCgroup(1, point))
    return found


def detect_io_cgroup(mounts_file: str = "/proc/self/mounts") -> IoCgroup:
    """The hierarchy to throttle with; InjectorError when this machine has none."""
    found = io_cgroups(mounts_file)
    if not found:
        raise InjectorError(
            "no cgroup can throttle block I/O here: no cgroup v2 mount offers the io "
            "controller and no cgroup v1 blkio mount has blkio.throttle files",
            "mount cgroup2 with the io controller (or cgroup v1 blkio with "
            "CONFIG_BLK_DEV_THROTTLING), and run as root",
        )
    return found[0]


def cgroup_of(pid: int, cg: IoCgroup) -> str | None:
    """The cgroup (path inside the hierarchy, e.g. `/` or `/system.slice/x`) of a process."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        number, controllers, path = [*line.split(":", 2), "", ""][:3]
        if cg.version == 2 and number == "0" and controllers == "":
            return path
        if cg.version == 1 and "blkio" in controllers.split(","):
            return path
    return None


def folder_of(cg: IoCgroup, path: str) -> Path:
    return cg.root / path.lstrip("/")


def write_file(path: Path, text: str) -> None:
    """One write() per value, as cgroup files want; OSError passes up. The file must exist
    (cgroup and sysfs files always do): a wrong folder gets an error, never a new file."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
    with open(fd, "w") as handle:
        handle.write(text)


def move_process(cg: IoCgroup, folder: Path, pid: int) -> bool:
    """Move a process (all its threads) into `folder`; False when it is gone."""
    try:
        write_file(folder / "cgroup.procs", str(pid))
    except ProcessLookupError:
        return False
    except OSError as exc:
        if exc.errno == errno.ESRCH:
            return False
        raise
    return True


def members(folder: Path) -> list[int]:
    try:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def enable_io_v2(cg: IoCgroup) -> None:
    """Let the root's children use io.max (the root takes `+io` even with processes in it)."""
    control = cg.root / "cgroup.subtree_control"
    if "io" not in control.read_text().split():
        write_file(control, "+io")


def limit_lines(cg: IoCgroup, number: str, limits: dict[str, int | None]) -> dict[str, str]:
    """File -> text that sets the limits (None = no limit) of device `number` (MAJ:MIN)."""
    if cg.version == 2:
        values = " ".join(
            f"{V2_KEYS[key]}={'max' if value is None else value}" for key, value in limits.items()
        )
        return {"io.max": f"{number} {values}"}
    return {
        V1_LIMIT_FILES[key]: f"{number} {0 if value is None else value}"
        for key, value in limits.items()
    }


def remove_folder(folder: Path, wait_s: float = 2.0) -> None:
    """rmdir a cgroup, retrying while exiting processes still hold it (EBUSY)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
        time.sleep(0.05)


LIMITS = ("read_iops", "write_iops", "read_bps", "write_bps")


@dataclass
class Released:
    """What a throttle's revert did: processes moved back, what failed (empty: all went)."""

    moved: int = 0
    problems: list[str] = field(default_factory=list)


def release(cg: IoCgroup, folder: Path, number: str, origin_of: Callable[[int], str]) -> Released:
    """A throttle undone, by the injector that made it or from its journal entry alone: the
    limits of device `number` (MAJ:MIN) removed first (queued I/O goes on at once), every
    process in `folder` moved back to its cgroup `origin_of(pid)` (the root when that one is
    gone), the folder removed. Each step is tried whatever the one before did; a folder
    already gone is no problem. The same steps on a host are events/event_kinds/throttle.py's
    `_THROTTLE_REVERT`."""
    done = Released()
    try:
        for name, text in limit_lines(cg, number, dict.fromkeys(LIMITS)).items():
            write_file(folder / name, text)
    except FileNotFoundError:
        pass  # the cgroup is gone already
    except OSError as exc:
        done.problems.append(f"removing the limits: {exc.strerror or exc}")
    for _ in range(3):  # a process may fork while we move the others
        inside = members(folder)
        if not inside:
            break
        for pid in inside:
            target = folder_of(cg, origin_of(pid))
            if not target.is_dir():
                target = cg.root
            try:
                done.moved += move_process(cg, target, pid)
            except OSError as exc:
                done.problems.append(f"moving {pid} back to {target}: {exc.strerror or exc}")
    try:
        remove_folder(folder)
    except OSError as exc:
        done.problems.append(f"removing {folder}: {exc.strerror or exc}")
    return done


def leftover_folders(cg: IoCgroup, prefix: str) -> list[Path]:
    """Our cgroups whose creating process is gone (named PREFIX-PID-N)."""
    return left_by_the_dead(cg.root, rf"{re.escape(prefix)}-(\d+)-\d+")


def remove_leftovers(cg: IoCgroup, prefix: str) -> list[Path]:
    """rmdir our empty cgroups left by a process that died without reverting (SIGKILL);
    the ones still holding processes, or that cannot be removed, are left alone."""
    removed = []
    for folder in leftover_folders(cg, prefix):
        with contextlib.suppress(OSError):
            if not members(folder):
                folder.rmdir()
                removed.append(folder)
    return removed
