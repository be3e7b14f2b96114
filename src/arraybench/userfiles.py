"""Files a user names as input: regular files only, read within a stated size (issue 24).

Opening a FIFO for reading waits for a writer, forever; /dev/zero or /dev/urandom never end;
a socket or a device is no file of results. Every file arraybench reads because a user named
it (a plan, an import's inputs, an array monitor's CSV, a signal event's pid file) is opened
here: the path is examined first (a FIFO, socket, device, directory or symbolic-link loop is
refused with one line, without opening it: opening a device can act on it), then opened
without blocking and examined again through the open descriptor, so a FIFO swapped in
between is refused too, never waited on. A caller that reads a file whole states its limit:
a larger file is refused with the limit in the line, never read into memory.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path
from typing import BinaryIO, TextIO

from arraybench.errors import ArraybenchError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))  # fmt: skip


class InputFileError(ArraybenchError):
    """A named input that is no regular file, or too large to read: one line, exit 2."""


def not_regular(path: Path) -> str | None:
    """Why `path` (links followed) is no regular file to read; None when it is one."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return _os_reason(exc)
    return _kind(mode)


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return f"{kind}, not a regular file"


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a loop of symbolic links"
    if exc.errno == errno.ENOENT:
        return "no such file (or a link to nothing)"
    return exc.strerror or str(exc)


def open_regular(path: Path, what: str, limit: int | None = None) -> BinaryIO:
    """`path` opened for reading in binary: InputFileError (naming `what`, e.g. "the array
    monitor CSV") when it is no regular file or, with `limit`, larger than `limit` bytes;
    FileNotFoundError as open() when there is nothing there (the callers' own message)."""
    try:
        why = _kind(os.stat(path).st_mode)
    except FileNotFoundError:
        raise
    except OSError as exc:
        why = _os_reason(exc)
    if why:
        raise InputFileError(f"{path}: {why}", f"give {what} as a regular file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot open it ({_os_reason(exc)})",
                             f"give {what} as a file you may read") from None  # fmt: skip
    info = os.fstat(fd)
    why = _kind(info.st_mode)  # swapped since the check above
    if why or (limit is not None and info.st_size > limit):
        os.close(fd)
        if why:
            raise InputFileError(f"{path}: {why}", f"give {what} as a regular file")
        raise too_large(path, info.st_size, limit or 0, what)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def too_large(path: Path, size: int, limit: int, what: str) -> InputFileError:
    return InputFileError(
        f"{path}: {_mib(size)}, larger than the {_mib(limit)} limit for {what}",
        "give a smaller file (split it, or keep the part you need)",
    )


def _mib(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MiB" if size % (1 << 20) else f"{size >> 20:,} MiB"


def read_whole(path: Path, what: str, limit: int) -> bytes:
    """A regular file's bytes, at most `limit` (a file that grows past it while read, as
    /proc files may, is refused as well)."""
    with open_regular(path, what, limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise too_large(path, len(data), limit, what)
    return data


def open_text(
    path: Path, what: str, limit: int | None = None, newline: str | None = None
) -> TextIO:
    """open_regular as UTF-8 text (undecodable bytes replaced, never an exception; a byte
    order mark dropped); `newline` as open()'s ("" for the csv module)."""
    return io.TextIOWrapper(open_regular(path, what, limit), encoding="utf-8-sig",
                            errors="replace", newline=newline)  # fmt: skip
