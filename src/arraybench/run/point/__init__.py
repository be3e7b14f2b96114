"""One point of a campaign: `run_point` (`pipeline.py`), its load run by an executor here or
on its hosts (`executor.py`, `local.py`, `hosts.py`) beside its sidecars (`run/sidecar.py`),
and the tail every point shares (`tail.py`)."""

from arraybench.run.point.pipeline import point_folder, run_point
from arraybench.run.point.tail import gc_rate_of, point_findings

__all__ = ["gc_rate_of", "point_findings", "point_folder", "run_point"]
