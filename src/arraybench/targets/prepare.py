"""Make file targets ready: created at their size and filled with incompressible data.

A file that does not fit is refused before a byte is written (free space is checked first),
and a file this module created is removed again when its layout fails, so a refused target
never leaves a partial file filling the filesystem.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from pathlib import Path

from arraybench.errors import TargetError
from arraybench.fio.runner import _stop as stop_fio
from arraybench.fio.runner import first_error_line
from arraybench.fio.values import argv_value, fio_path
from arraybench.units import fio_size, format_size


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


def layout_command(path: Path, size: int, fio: str) -> list[str]:
    name = fio_path(str(path), "target path")
    return [
        fio,
        "--name=arraybench-layout",
        argv_value(f"--filename={name}", "target path"),
        "--rw=write",
        "--bs=1m",
        f"--size={fio_size(size)}",
        "--refill_buffers=1",
        "--end_fsync=1",
        "--ioengine=psync",
        "--output-format=terse",
        "--eta=never",
    ]


def run_layout(command: list[str]) -> tuple[int, str]:
    """Run the layout fio; (exit code, its output). Interrupted (Ctrl-C), fio and the job
    process it forked (in a session of its own) are stopped before the exception goes on."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        try:
            returncode = proc.wait()
        except BaseException:
            stop_fio(proc)
            raise
        out.seek(0)
        return returncode, out.read().decode(errors="replace")


def layout_file(path: Path, size: int, fio: str) -> None:
    """Write `size` bytes of random data with fio, so reads never hit holes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    command = layout_command(path, size, fio)
    check_room(path, size)
    created = not path.exists()
    try:
        returncode, output = run_layout(command)
        short = not path.exists() or path.stat().st_size < size
        if returncode != 0 or short:
            raise TargetError(
                f"cannot create target file {path} ({format_size(size)}): "
                f"{first_error_line(output)}",
                "check free space and permissions, or pass --target PATH",
            )
    except BaseException:
        if created:  # never leave a partial file behind (also on Ctrl-C)
            with contextlib.suppress(OSError):
                path.unlink()
        raise


def file_size(path: Path) -> int:
    return os.stat(path).st_size
