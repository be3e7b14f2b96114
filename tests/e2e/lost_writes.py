"""A failback that loses acknowledged writes, for the integrity tests (run as an event).

`save`: copy the current content of some acknowledged blocks of the integrity region.
`restore` (the event's revert, after the writer stopped): write that old content back over
the blocks that got a newer acknowledged generation since (= lost writes), zero a few others
(= corrupt), and write the offsets of both to expected.json for the test to compare.
The point's folder comes from ARRAYBENCH_POINT_DIR; the target path is argv[2].
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from arraybench.integrity.errors import IntegrityError
from arraybench.integrity.journal import ACKED, scan_journal

SAVED = 24  # blocks saved at `save`
ZEROED = 3  # blocks zeroed at `restore`
WAIT_S = 3.0  # of the point's 6 s


def _latest(journal: Path) -> dict[int, int]:
    latest: dict[int, int] = {}

    def record(offset: int, generation: int, write_ns: int, kind: int) -> None:
        if kind == ACKED:
            latest[offset] = max(latest.get(offset, 0), generation)

    scan_journal(journal, record)
    return latest


def _acked(journal: Path, want: int) -> dict[int, int]:
    """`_latest` once `want` blocks are acknowledged (WAIT_S at most): the writer starts
    beside fio, and on a loaded machine its journal was not there yet at the event's 1 s."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            latest = _latest(journal)
        except IntegrityError:  # no journal yet, or its header not written yet
            latest = {}
        if len(latest) >= want or time.monotonic() > deadline:
            return latest
        time.sleep(0.05)


def main() -> None:
    step, target = sys.argv[1], sys.argv[2]
    folder = Path(os.environ["ARRAYBENCH_POINT_DIR"])
    journal, state = folder / "integrity.journal", folder / "lost-writes.json"
    bs = 4096
    fd = os.open(target, os.O_RDWR)
    try:
        if step == "save":
            latest = _acked(journal, SAVED)
            chosen = sorted(latest)[:SAVED]
            blocks = {str(o): os.pread(fd, bs, o).hex() for o in chosen}
            state.write_text(json.dumps({"generation": {str(o): latest[o] for o in chosen},
                                         "blocks": blocks}))  # fmt: skip
            return
        saved = json.loads(state.read_text())
        latest = _latest(journal)
        lost = [int(o) for o, g in saved["generation"].items() if latest[int(o)] > g]
        for offset in lost:
            os.pwrite(fd, bytes.fromhex(saved["blocks"][str(offset)]), offset)
        others = [o for o in sorted(latest) if str(o) not in saved["generation"]][:ZEROED]
        for offset in others:
            os.pwrite(fd, bytes(bs), offset)
        os.fsync(fd)
        (folder / "expected.json").write_text(json.dumps({"lost": lost, "corrupt": others}))
    finally:
        os.close(fd)


if __name__ == "__main__":
    main()
