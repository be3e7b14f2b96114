"""SNIA PTS target conditioning: purge to fresh-out-of-box where the device allows it, then
workload-independent preconditioning (the targets written `passes` times over)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from arraybench.engines.base import Engine, RunSpec
from arraybench.finding_kinds import PreconditionFinding, PurgeResult
from arraybench.plan.model import Plan, Precondition


def purge_target(path: str, kind: str, fd: int | None = None) -> PurgeResult:
    """blkdiscard for a block device; a file cannot be purged (and we say so). `fd`: the
    device as checked (`TargetGuard.pinned`): blkdiscard opens /dev/fd/FD, not the path."""
    if kind != "block":
        return {
            "target": path,
            "purged": False,
            "how": "a file cannot be purged: its blocks' state belongs to the filesystem",
        }
    tool = shutil.which("blkdiscard")
    if tool is None:
        return {"target": path, "purged": False, "how": "blkdiscard (util-linux) is not installed"}
    name, fds = (path, ()) if fd is None else (f"/dev/fd/{fd}", (fd,))
    done = subprocess.run([tool, "-f", name], capture_output=True, text=True, check=False,
                          pass_fds=fds)  # fmt: skip
    if done.returncode != 0:
        reason = (done.stderr or done.stdout).strip().splitlines()
        return {
            "target": path,
            "purged": False,
            "how": f"blkdiscard failed: {reason[-1] if reason else done.returncode}",
        }
    return {"target": path, "purged": True, "how": "blkdiscard (every block discarded)"}


def run_precondition(
    plan: Plan, spec: Precondition, sizes: Mapping[str, int], folder: Path, engine: Engine,
    pins: Mapping[str, int] | None = None,
) -> PreconditionFinding:  # fmt: skip
    """Run the preconditioning job; return what it wrote and how long it took. `pins`: the
    targets' checked descriptors the engine opens instead of the paths (`TargetGuard.pinned`)."""
    folder.mkdir(parents=True, exist_ok=True)
    job = folder / engine.job_name
    job.write_text(engine.precondition_job(plan, spec, sizes))
    total = sum(int(sizes[t.path] * spec.passes) for t in plan.targets)
    began = time.monotonic()
    # a generous watchdog: even 50 MB/s gets through it
    engine.run(job, RunSpec("precondition", total / 50e6 * 3 + 120, pins=dict(pins or {})))
    return {
        "bytes": total,
        "seconds": time.monotonic() - began,
        "passes": spec.passes,
        "pattern": spec.pattern,
        "bs": spec.bs,
        "folder": str(folder),
    }


def purge_lines(results: Sequence[PurgeResult]) -> list[str]:
    return [
        f"purge {r['target']}: {'done' if r['purged'] else 'NOT done'} ({r['how']})"
        for r in results
    ]
