"""Run ids and their folders in a results folder: a campaign's run and an imported one are
named the same way (`<date>-<time>-<name>`), and both get their folder here."""

from __future__ import annotations

import re
import time
from pathlib import Path

MAX_ID_NAME = 100  # characters of the plan name in a run id (a folder name: 255 bytes at most)


def id_safe(name: str) -> str:
    """A name as it can stand in a run id and a folder name: no `/`, no control character or
    other punctuation, not longer than a file name can be."""
    return re.sub(r"[^\w.+=-]+", "_", name).lstrip(".")[:MAX_ID_NAME] or "run"


def new_run_id(plan_name: str, store_dir: Path) -> str:
    """A new run id, its folder created here: mkdir is atomic, so two runs started in the same
    second in one results folder get two ids, never one."""
    base = time.strftime("%Y%m%d-%H%M%S") + f"-{id_safe(plan_name)}"
    runs = store_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    run_id, n = base, 1
    while True:
        try:
            (runs / run_id).mkdir()
            return run_id
        except FileExistsError:
            n += 1
            run_id = f"{base}-{n}"
