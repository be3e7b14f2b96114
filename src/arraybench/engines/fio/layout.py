"""fio laying out a target file: the command that fills it with incompressible data.

`targets.prepare.layout_file` opens (and if need be creates) the file itself and hands fio
the descriptor (/dev/fd/N), so a link planted at the name cannot lead fio elsewhere.
"""

from __future__ import annotations

from pathlib import Path

from arraybench.engines.fio.runner import first_error_line, run_captured
from arraybench.engines.fio.values import argv_value, fio_path
from arraybench.units import fio_size


def layout_command(path: Path, size: int, fio: str, fd: int | None = None) -> list[str]:
    """fio's command laying out `path`; given `fd`, through /dev/fd/FD (see `layout_file`),
    the path still named in the description (a reader of `ps` sees what is laid out)."""
    name = fio_path(str(path), "target path")
    return [
        fio,
        "--name=arraybench-layout",
        argv_value(f"--description=arraybench layout of {path}", "target path"),
        argv_value(f"--filename={name if fd is None else f'/dev/fd/{fd}'}", "target path"),
        "--rw=write",
        "--bs=1m",
        f"--size={fio_size(size)}",
        "--refill_buffers=1",
        "--end_fsync=1",
        "--ioengine=psync",
        "--output-format=terse",
        "--eta=never",
    ]


def lay_out(path: Path, size: int, fd: int, fio: str) -> str | None:
    """Write `size` bytes through the descriptor; None when fio succeeded, else its error line.
    In a session of its own and ended with its job process on an interrupt or a signal."""
    code, output = run_captured(layout_command(path, size, fio, fd), Path.cwd(), (fd,))
    return first_error_line(output) if code != 0 else None
