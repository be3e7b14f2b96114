"""Which fio runs: `--fio PATH` (for one command), $ARRAYBENCH_FIO, else `fio` on PATH.

A module of its own, importing nothing heavy: the command line wraps every command in
`chosen_fio`, and `arraybench --version` must not load the job file writer for it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

from arraybench.errors import FioMissingError

__all__ = ["FIO_ENV", "chosen_fio", "fio_binary"]

FIO_ENV = "ARRAYBENCH_FIO"  # the fio binary to run (`--fio PATH` sets it), else fio on PATH


def fio_binary() -> str:
    """The fio that runs the load: $ARRAYBENCH_FIO (a path, or a name looked up on PATH),
    else `fio` on PATH. FioMissingError (one line, exit 2) when it names no executable."""
    chosen = os.environ.get(FIO_ENV, "")
    if chosen:
        path = shutil.which(chosen)
        if path is None:
            raise FioMissingError(
                f"{FIO_ENV}={chosen!r} (or --fio) names no executable file",
                "give the path of a fio binary, e.g. --fio /opt/fio-3.42/fio",
            )
        return os.path.abspath(path)
    path = shutil.which("fio")
    if path is None:
        raise FioMissingError(
            "fio is not installed (not found on PATH)",
            f"install it: apt-get install fio (or ./scripts/install.sh), or name one with "
            f"--fio PATH / {FIO_ENV}",
        )
    return path


@contextlib.contextmanager
def chosen_fio(path: str | None) -> Iterator[None]:
    """`--fio PATH`: the fio of one command and of every process it starts (the environment
    is where `fio_binary` and child processes look), as it was before once it returns."""
    before = os.environ.get(FIO_ENV)
    if path:
        os.environ[FIO_ENV] = path
    try:
        yield
    finally:
        if path and before is None:
            os.environ.pop(FIO_ENV, None)
        elif path and before is not None:
            os.environ[FIO_ENV] = before
