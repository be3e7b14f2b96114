"""The registry of test kinds: tests that are not a workload x level grid, run in this order
after the grid. A new kind is a module here with a `TestKind` (see `base`) added below, its
finding drawn by a function in report/sections/special.py named by `report_section`."""

from __future__ import annotations

from arraybench.run.kinds.base import KindStep, TestKind, run_step
from arraybench.run.kinds.curve import CurveKind
from arraybench.run.kinds.interference import InterferenceKind
from arraybench.run.kinds.metadata import MetadataKind

TEST_KINDS: tuple[TestKind, ...] = (InterferenceKind(), MetadataKind(), CurveKind())

__all__ = ["TEST_KINDS", "KindStep", "TestKind", "run_step"]
