"""`arraybench run`: a campaign started from the plan asked for, or an interrupted one resumed,
inside its live session (the observer, the --serve server), closed however it ends."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arraybench.errors import PlanError
from arraybench.run.request import PlanRequest, requested_plan, stored_run_id

if TYPE_CHECKING:
    from arraybench.live.session import LiveSession
    from arraybench.store.db import Store


def refuse_early(outputs: list[Path], serve: str | None) -> None:
    """An unknown report format, a link or a FIFO at a report's name, a refused --serve
    address: said before the store is made and the campaign runs, not after it."""
    from arraybench.live.server import parse_serve
    from arraybench.outfiles import check_writable
    from arraybench.report.render.export import format_for

    for path in outputs:  # a link or a FIFO at a report's name too (outfiles.py)
        check_writable(path, f"the {format_for(path, None)} report")
    if serve is not None:  # '' too: refused, not taken as no --serve
        parse_serve(serve)


@dataclass(frozen=True)
class Ended:
    run_id: str | None  # None: interrupted before the run was created
    interrupted: KeyboardInterrupt | None = None  # Ctrl-C or a signal: the run is resumable


def run_campaign(
    store: Store, results: str, live: LiveSession, request: PlanRequest, resume: str | None,
    interactive: bool,
) -> Ended:  # fmt: skip
    """The run to its end, or to an interruption (marked interrupted, its completed points
    saved). `interactive`: an operator can answer prompts (else they are assumed done)."""
    from arraybench.run.campaign import Campaign

    campaign = Campaign(store, Path(results), live.observer)
    campaign.interactive = interactive
    ended = "failed"
    try:
        if resume:
            if request != PlanRequest(allow_destroy=request.allow_destroy):
                raise PlanError(
                    f"--resume {resume} continues that run with its own plan and targets",
                    "drop the plan, --target, --scale, --set, --repeat and --only arguments",
                )
            result = campaign.resume(stored_run_id(store, resume, results))
        else:
            result = campaign.start(requested_plan(request, Path(results)), request.scale)
        ended = "complete"
    except KeyboardInterrupt as exc:
        ended = "interrupted"
        live.observer.stop()
        return Ended(campaign.run_id, exc)
    finally:
        live.observer.stop()
        live.close(ended)
    return Ended(result.run_id)
