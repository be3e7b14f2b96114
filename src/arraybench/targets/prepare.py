"""Make file targets ready: created at their size and filled with incompressible data.

A file that does not fit is refused before a byte is written (free space is checked first),
and a file this module created is removed again when its layout fails, so a refused target
never leaves a partial file filling the filesystem.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from arraybench.engines.base import Engine
from arraybench.errors import TargetError
from arraybench.units import format_size


def needs_layout(path: Path, size: int) -> bool:
    return not path.exists() or (path.is_file() and path.stat().st_size < size)


def free_bytes(folder: Path) -> int:
    """Bytes an unprivileged writer may still use on the filesystem holding `folder`."""
    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize


def check_room(path: Path, size: int) -> None:
    """TargetError when growing `path` to `size` bytes does not fit on its filesystem."""
    have = path.stat().st_size if path.exists() else 0
    missing = size - have
    room = free_bytes(path.parent)
    if missing > room:
        raise TargetError(
            f"target {path}: {format_size(size)} does not fit, the filesystem has "
            f"{format_size(room)} free",
            "free space, give a smaller `size:` (or --scale), or pass --target PATH elsewhere",
        )


def _open_regular(path: Path) -> tuple[int, bool]:
    """(a descriptor of the regular file at `path`, whether it was created now), never
    through a link: O_NOFOLLOW on the name, the kernel's path of the open file compared with
    the resolved path (a directory above swapped for a link shows there). TargetError when
    what is there is not a regular file at that path."""
    real = os.path.realpath(path)
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        try:
            fd, created = os.open(real, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            fd, created = os.open(real, flags), False
    except OSError as exc:
        raise TargetError(
            f"target {path}: cannot open it as a regular file ({exc.strerror})",
            "a target file must not be a link or a device node",
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode) or os.readlink(f"/proc/self/fd/{fd}") != real:
        os.close(fd)
        raise TargetError(f"target {path} is no longer the regular file {real}",
                          "find out what changed it, then start the run again")  # fmt: skip
    return fd, created


def layout_file(path: Path, size: int, engine: Engine) -> None:
    """Write `size` bytes of random data with the engine, so reads never hit holes.

    The engine writes through /dev/fd/N of a descriptor opened here (``_open_regular``): a
    link planted at the name while it starts cannot lead it to a device. The file is first
    extended to its size (fio would otherwise unlink and re-create a short file, which it
    cannot do through /dev/fd), then every byte of it written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    engine.check_path(str(path), "target path")  # checked before anything is created
    check_room(path, size)
    fd, created = _open_regular(path)
    try:
        if os.fstat(fd).st_size < size:
            os.ftruncate(fd, size)
        error = engine.lay_out(path, size, fd)
        short = os.fstat(fd).st_size < size  # the file laid out, wherever its name leads now
        if error is not None or short:
            raise TargetError(
                f"cannot create target file {path} ({format_size(size)}): "
                f"{error or 'the file is shorter than asked'}",
                "check free space and permissions, or pass --target PATH",
            )
    except BaseException:
        if created:  # never leave a partial file behind (also on Ctrl-C)
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    finally:
        os.close(fd)


def file_size(path: Path) -> int:
    return os.stat(path).st_size
