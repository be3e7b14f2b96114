"""The cyclic garbage collector paused while a report is built and written.

A big run's report holds millions of small objects (points, cells, chart parts) that live
until the document is written; Python's collector walks all of them at every few thousand
allocations and reclaims almost nothing (they are freed by reference counting). Measured on
benchmarks/scale.py's 30,000-point run (2 vCPUs, docs/performance.md): `report` 20.1 s with
the collector, 15.3 s without, the same peak RSS. Nested uses keep it paused until the
outermost ends; a collector the caller had disabled stays disabled.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
