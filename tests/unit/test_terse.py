"""fio's terse output v2-v5 against the JSON fio printed in the same run.

The files (tests/data/fresh_fio3.33_terse_v*_then_json_*.txt) are real fio 3.33 outputs of
``--output-format=terse,json --terse-version=N``: the terse lines first, then the JSON of
the same run, which is the oracle here (read by parse.py, tested on its own).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arraybench.engines.fio.parse import parse_fio_json
from arraybench.engines.fio.terse import looks_like_terse, parse_fio_terse
from arraybench.errors import OutputParseError

DATA = Path(__file__).resolve().parent.parent / "data"


def _sample(version: int) -> str:
    (path,) = DATA.glob(f"fresh_fio3.33_terse_v{version}_*")
    return path.read_text()


@pytest.mark.parametrize("version", [2, 3, 4, 5])
def test_terse_gives_the_json_figures(version: int) -> None:
    text = _sample(version)
    assert looks_like_terse(text)
    (terse,) = parse_fio_terse(text.splitlines(), f"v{version}")
    (truth,) = parse_fio_json(text)
    assert [(j.name, j.groupid) for j in terse.jobs] == [(j.name, j.groupid) for j in truth.jobs]
    for t, j in zip(terse.jobs, truth.jobs, strict=True):
        for ddir in ("read", "write", "trim"):
            a, b = t.direction(ddir), j.direction(ddir)
            assert (a.ios, a.io_bytes, a.runtime_ms) == (b.ios, b.io_bytes, b.runtime_ms)
            assert a.iops == pytest.approx(b.iops, rel=1e-9)
            assert a.bw_bytes == pytest.approx(b.bw_bytes, abs=1)  # JSON bw_bytes is whole
            if b.ios:
                # terse prints microseconds with 6 decimals
                assert a.lat_mean_ns == pytest.approx(b.lat_mean_ns, abs=1)
                assert set(a.percentiles_ns) == set(b.percentiles_ns)


def test_terse_lines_of_two_appended_runs_are_two_runs() -> None:
    lines = [ln for ln in _sample(3).splitlines() if ln.startswith("3;")]
    docs = parse_fio_terse(lines + lines, "twice")
    assert [len(d.jobs) for d in docs] == [3, 3]  # groupid 1 -> 0 starts the second run


def test_a_short_terse_line_is_one_located_error() -> None:
    line = _sample(4).splitlines()[0]
    with pytest.raises(OutputParseError, match=r"line 1.*fewer than"):
        parse_fio_terse([line[:200]], "cut.txt")
