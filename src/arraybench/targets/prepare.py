"""Make file targets ready: created at their size and filled with incompressible data."""

from __future__ import annotations

import os
from pathlib import Path

from arraybench.errors import TargetError
from arraybench.fio.runner import first_error_line, run_captured
from arraybench.units import fio_size, format_size


def needs_layout(path: Path, size: int) -> bool:
    return not path.exists() or (path.is_file() and path.stat().st_size < size)


def layout_file(path: Path, size: int, fio: str) -> None:
    """Write `size` bytes of random data with fio, so reads never hit holes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    command = [
        fio,
        "--name=arraybench-layout",
        f"--filename={str(path).replace(':', chr(92) + ':')}",
        "--rw=write",
        "--bs=1m",
        f"--size={fio_size(size)}",
        "--refill_buffers=1",
        "--end_fsync=1",
        "--ioengine=psync",
        "--output-format=terse",
        "--eta=never",
    ]
    # in a session of its own and ended with its job process on an interrupt or a signal
    code, output = run_captured(command, Path.cwd())
    if code != 0 or path.stat().st_size < size:
        raise TargetError(
            f"cannot create target file {path} ({format_size(size)}): {first_error_line(output)}",
            "check free space and permissions, or pass --target PATH",
        )


def file_size(path: Path) -> int:
    return os.stat(path).st_size
