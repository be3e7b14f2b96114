"""Files arraybench writes where a user pointed it (a report's `-o`, `--charts DIR`) or in a
run's folder (`live.json`): never through a symbolic link, never into a FIFO (issue 34).

A file written in place (`open(path, "w")`) follows a link planted at its name and
overwrites the link's target, wherever that is; a FIFO at its name waits for a reader,
forever. So each file is written whole to a new temporary name beside it (created with
O_EXCL | O_NOFOLLOW: a name that exists, a link included, is never opened) and renamed over
its name; a rename replaces the name itself and never follows a link there. A reader never
sees half a file either. `write_file` first looks at what is at the name (without following
a link): a regular file or nothing is replaced; a link, a FIFO, a directory, a device or a
socket is refused with one line (exit 2), its target untouched.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from arraybench.errors import ArraybenchError

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))  # fmt: skip
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class OutputFileError(ArraybenchError):
    """Something other than a regular file is at the name of a file to write: one line,
    exit 2 (the user removes it or names another file)."""


def in_the_way(path: Path) -> str | None:
    """What is at `path` (a link not followed) when it is neither nothing nor a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def check_writable(path: Path, what: str) -> None:
    """OutputFileError when `path` holds something arraybench must not replace."""
    kind = in_the_way(path)
    if kind is not None:
        raise OutputFileError(
            f"{path} is {kind}: arraybench writes {what} neither through a link nor into a "
            "special file",
            "remove it or name another place",
        )


def _fresh(path: Path) -> tuple[int, Path]:
    """A new, empty file beside `path` under a random name, opened for writing."""
    for _ in range(8):
        spare = path.with_name(f".{path.name[:200]}.{secrets.token_hex(6)}.tmp")  # < 255
        try:
            return os.open(spare, _CREATE, 0o666), spare  # the umask applies, as to open()
        except FileExistsError:
            continue
        except OSError as exc:  # said of the file asked for, not of its temporary name
            raise OSError(exc.errno, exc.strerror, str(path)) from None
    raise FileExistsError(f"{path.parent}: no free temporary name beside {path.name}")


@contextlib.contextmanager
def _swapped(path: Path, what: str, checked: bool) -> Iterator[tuple[int, Path]]:
    """A new temporary file beside `path` (its descriptor and name), renamed over `path`
    when the block ends without an exception and removed otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if checked:
        check_writable(path, what)
    fd, spare = _fresh(path)
    try:
        yield fd, spare
        if checked:  # again: something put there while the file was written
            check_writable(path, what)
        os.replace(spare, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(spare)
        raise


def write_file(path: Path, data: bytes | str, what: str, checked: bool = True) -> Path:
    """`data` (str: as UTF-8, what cannot be encoded escaped) as the whole of `path`.
    `checked`: a link or a special file at `path` is refused (OutputFileError, naming
    `what`); unchecked (a file of arraybench's own, as live.json), it is replaced."""
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    with _swapped(path, what, checked) as (fd, _), os.fdopen(fd, "wb") as out:
        out.write(raw)
    return path


@contextlib.contextmanager
def replacing(path: Path, what: str) -> Iterator[Path]:
    """For a writer that opens its file by name (openpyxl, the PDF printer): the name of a
    new empty file beside `path` to write, which then replaces `path` as write_file's does."""
    with _swapped(path, what, checked=True) as (fd, spare):
        os.close(fd)
        yield spare
