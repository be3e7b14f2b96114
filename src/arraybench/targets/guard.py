"""The destroy guard at the moment fio opens a target: exactly that path, checked twice.

``safety.check_target`` judges a target once. Between that check and fio opening the path a
symlink can be swapped or a file replaced by a device node, so a campaign keeps a
``TargetGuard``: it checks each target through ``check_target`` (which resolves symlinks),
records the identity of what it found (the resolved path, its device and inode numbers) and,
right before each point's fio starts, ``recheck`` refuses a target whose path now resolves
elsewhere or whose file or device was replaced. fio is always given the resolved path (the
campaign's plan carries resolved paths, see ``arraybench.run.plan_values.resolve_targets``), so a
link changed after the check cannot move fio either.

More: docs/internals.md, `targets/guard.py`."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from arraybench.engines.base import Engine
from arraybench.errors import TargetError, UnsafeTargetError
from arraybench.targets.prepare import layout_file
from arraybench.targets.safety import TargetInfo, _unescape, check_target

MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")


@dataclass(frozen=True)
class Identity:
    """What a checked path was: its resolved path, its type and, for a device, its number.

    Inode numbers are left out on purpose: fio may re-create a short file (a new inode at the
    same path), which is harmless; a link or a device node where a file was is not."""

    real_path: str
    mode: int  # file type bits only
    rdev: int  # device number of a block device, else 0


def fd_identity(fd: int) -> Identity:
    """The identity of what an open descriptor is: the path the kernel knows it by (a
    deleted file's carries " (deleted)") and, unlike ``identity``, a link itself when the
    descriptor is an O_PATH|O_NOFOLLOW one of a link."""
    st = os.fstat(fd)
    block = stat.S_ISBLK(st.st_mode)
    return Identity(os.readlink(f"/proc/self/fd/{fd}"), stat.S_IFMT(st.st_mode),
                    st.st_rdev if block else 0)  # fmt: skip


def identity(path: str) -> Identity | None:
    """The identity of what `path` resolves to now; None when nothing is there."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return None
    block = stat.S_ISBLK(st.st_mode)
    return Identity(real, stat.S_IFMT(st.st_mode), st.st_rdev if block else 0)


def filesystem_type(path: str, mountinfo_text: str | None = None) -> str | None:
    """Filesystem type of the mount holding `path` (longest mount point that contains it)."""
    if mountinfo_text is None:
        try:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
                mountinfo_text = fh.read()
        except OSError:
            return None
    best: tuple[int, str] | None = None
    for line in mountinfo_text.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5 or not right.split():
            continue
        mount = _unescape(fields[4])
        inside = path == mount or path.startswith(mount.rstrip("/") + "/")
        if inside and (best is None or len(mount) >= best[0]):
            best = (len(mount), right.split()[0])
    return best[1] if best else None


def check_direct(info: TargetInfo) -> None:
    """TargetError when fio's direct=1 cannot mean direct I/O on this file target."""
    if info.kind not in ("file", "new-file"):
        return  # block devices take O_DIRECT; fio reports the rare one that does not
    fstype = filesystem_type(info.real_path)
    if fstype in MEMORY_FILESYSTEMS:
        raise TargetError(
            f"target {info.path} is on {fstype}: direct I/O there reaches memory, not a device",
            "put the target on a disk-backed filesystem, or set `direct: false` in the plan",
        )
    probe = info.real_path
    flags = os.O_RDONLY | os.O_DIRECT
    if info.kind == "new-file":  # probe a throw-away file beside it
        probe = os.path.join(os.path.dirname(probe), f".arraybench-direct-{os.getpid()}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_DIRECT
    try:
        os.close(os.open(probe, flags, 0o600))
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise TargetError(
                f"target {info.path}: its filesystem does not support direct I/O (O_DIRECT)",
                "use another filesystem, or set `direct: false` in the plan",
            ) from None
        raise TargetError(f"target {info.path}: cannot open it ({exc.strerror})", None) from None
    finally:
        if probe != info.real_path:
            with contextlib.suppress(OSError):
                os.unlink(probe)


class TargetGuard:
    """The targets of one campaign as checked, and the recheck before each point."""

    def __init__(self) -> None:
        self.checked: dict[str, Identity | None] = {}

    def check(
        self, path: str, *, writes: bool, allow_destroy: Iterable[str] = (), direct: bool = False,
        phase: str = "",
    ) -> TargetInfo:  # fmt: skip
        """check_target, plus direct I/O and the identity recorded for ``recheck``."""
        info = check_target(path, writes=writes, allow_destroy=allow_destroy, phase=phase)
        if direct:
            check_direct(info)
        self.remember(path)
        return info

    def lay_out(self, path: str, size: int, engine: Engine) -> None:
        """Create or grow a checked file target with the engine: rechecked first (a link
        planted since the check would take the layout to whatever it points at), then
        remembered as the file it now is."""
        self.recheck([path])
        layout_file(Path(path), size, engine)
        now = identity(path)  # a link planted meanwhile is refused here, not remembered
        if now is None or not stat.S_ISREG(now.mode) or now.real_path != os.path.realpath(path):
            _changed(path, self.checked.get(path), now)
        self.checked[path] = now

    def remember(self, path: str) -> None:
        """Record what `path` is now (after arraybench itself created or grew the file)."""
        self.checked[path] = identity(path)

    @contextlib.contextmanager
    def pinned(self, paths: Iterable[str]) -> Iterator[dict[str, int]]:
        """The checked targets among `paths`, each opened (O_PATH, a final link not followed)
        and verified to be what was checked: path -> descriptor, closed on exit.

        fio is then given ``/dev/fd/N`` (``fio.jobfile.pin_filenames``, inherited through
        the runner's ``pass_fds``) instead of the path: opening it reopens exactly the file or
        device verified here, so a link swapped in after this check (even in the instant
        before fio opens its files) cannot move fio anywhere else. UnsafeTargetError when a
        target is no longer what was checked."""
        fds: dict[str, int] = {}
        try:
            for path in paths:
                if path in fds or self.checked.get(path) is None:
                    continue  # a host's path, or nothing was there (fio creates the file)
                try:
                    fds[path] = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
                except OSError:
                    _changed(path, self.checked[path], None)
                now = fd_identity(fds[path])
                if now != self.checked[path]:
                    _changed(path, self.checked[path], now)
            yield fds
        finally:
            for fd in fds.values():
                os.close(fd)

    def recheck(self, paths: Iterable[str]) -> None:
        """UnsafeTargetError when a target changed since it was checked (a swapped link, a
        file replaced by a device node): call right before fio starts."""
        for path in paths:
            if path not in self.checked:
                continue  # not a local target (a host's path)
            before, now = self.checked[path], identity(path)
            if now != before:
                _changed(path, before, now)


def _changed(path: str, before: Identity | None, now: Identity | None) -> NoReturn:
    was = before.real_path if before else "nothing"
    found = now.real_path if now else "nothing"
    if now is not None and stat.S_ISLNK(now.mode):
        found = "a symbolic link"
    raise UnsafeTargetError(
        f"target {path} changed since it was checked (it was {was}, it is now {found}, or "
        "the file or device there was replaced); fio was not started",
        "find out what changed it, then start the run (or --resume) again",
    )
