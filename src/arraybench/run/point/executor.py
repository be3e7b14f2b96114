"""How a point's load runs: the one interface the point pipeline (`pipeline.py`) drives,
with two implementations, fio here beside the controller's monitor (`local.py`) and fio's
client/server mode on the point's hosts (`hosts.py`)."""

from __future__ import annotations

from typing import Protocol

from arraybench.records import Finding
from arraybench.run.load import LoadResult
from arraybench.run.sidecar import Sidecar


class Executor(Protocol):
    def sidecars(self) -> list[Sidecar]:
        """The sidecars this load runs with (verify, events, ...), in the order of their steps."""
        ...

    def warm_up(self, sizes: dict[str, int]) -> Finding | None:
        """Before the sidecars start: the targets checked again (local), and the ramp as a
        logged phase of its own (`timing.log_ramp`), its `warmup` finding."""
        ...

    def run(self, sizes: dict[str, int], sidecars: Sidecar) -> None:
        """The load, on `sizes`; `sidecars.load_started` when it starts (and `tick` while it
        runs, where the executor polls). Raises when the load failed."""
        ...

    def result(self) -> LoadResult:
        """After the sidecars stopped: what the load measured."""
        ...
