"""fio's job for SNIA workload-independent preconditioning (`targets.condition` runs it)."""

from __future__ import annotations

from collections.abc import Mapping

from arraybench.engines.fio.jobfile import fio_filename
from arraybench.engines.fio.values import fio_value
from arraybench.plan.model import Plan, Precondition
from arraybench.units import fio_size


def precondition_jobfile(plan: Plan, spec: Precondition, sizes: Mapping[str, int]) -> str:
    """One job per target writing it `passes` times over (io_size wraps around `size`);
    `sprandom` (fio >= 3.41): fio's own pseudo-random preconditioning, which decides how much
    it writes (one pass over the target, less its over-provisioning estimate), so no io_size."""
    rw = "write" if spec.pattern == "sequential" else "randwrite"
    sprandom = spec.pattern == "sprandom"
    lines = [
        "; arraybench SNIA workload-independent preconditioning",
        "[global]",
        f"ioengine={fio_value(plan.ioengine, 'ioengine')}",
        f"direct={int(plan.direct)}",
        f"rw={rw}",
        f"bs={fio_size(spec.bs)}",
        "iodepth=32",
        "refill_buffers=1",
        "norandommap=1",
        "randrepeat=0",
        *(["sprandom=1"] if sprandom else []),
        "",
    ]
    for index, target in enumerate(plan.targets, start=1):
        size = sizes[target.path] // spec.bs * spec.bs
        lines += [
            f"[pc{index}]",
            f"filename={fio_filename(target.path, f'targets[{index - 1}]')}",
            f"size={fio_size(size)}",
            *(
                []
                if sprandom
                else [f"io_size={fio_size(int(size * spec.passes) // spec.bs * spec.bs)}"]
            ),
            "",
        ]
    return "\n".join(lines)
