"""Loop devices for tests: attach a backing file, skip cleanly where that cannot be done."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def sparse_file(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


@contextlib.contextmanager
def attached(backing: Path, *options: str) -> Iterator[str]:
    """A loop device over `backing` (losetup options e.g. --direct-io=on, --partscan),
    detached afterwards; the test is skipped without root, losetup or a free loop device."""
    if os.geteuid() != 0:
        pytest.skip("loop devices need root")
    if shutil.which("losetup") is None:
        pytest.skip("losetup (util-linux) missing")
    proc = _run("losetup", "--find", "--show", *options, str(backing))
    if proc.returncode != 0:
        pytest.skip(f"losetup cannot attach a loop device here: {proc.stderr.strip()}")
    dev = proc.stdout.strip()
    try:
        yield dev
    finally:
        if "--partscan" in options:
            _run("partx", "-d", dev)
        _run("losetup", "-d", dev)


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
