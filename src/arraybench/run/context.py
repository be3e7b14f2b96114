"""What every step of one run needs, in one typed record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arraybench.plan.model import Plan
from arraybench.store.records import RunRecord


@dataclass(frozen=True)
class RunContext:
    """One run: its stored record, its plan (targets resolved), the targets' sizes in bytes,
    the fio binary and the results folder it writes into."""

    run: RunRecord
    plan: Plan
    sizes: dict[str, int]
    fio: str
    results_dir: Path
