"""A timeline without its logged warm-up (the text summary's figures): every per-second list
is cut alike, so the kernel's, the array's and the controller's seconds stay beside fio's."""

from __future__ import annotations

from arraybench.report.model import Timeline
from arraybench.report.sections.warmup import measured_only


def test_every_per_second_list_loses_the_same_warm_up_seconds() -> None:
    t_s = [float(i) for i in range(10)]
    t = Timeline(
        "rr w1-qd1", t_s, "IOPS", [100.0 + i for i in range(10)], [50.0] * 10,
        kernel=[200.0 + i for i in range(10)], array=[300.0 + i for i in range(10)],
        controller_cpu=[float(i) for i in range(10)], gb_written=[0.1 * i for i in range(10)],
        guides=[("mean", [150.0] * 10)], events=[(2.0, "warm event"), (7.0, "fail")],
        shade=(3.0, 3.0, "warm-up"),
    )  # fmt: skip
    m = measured_only(t)
    assert m.t_s == [4.0, 5.0, 6.0, 7.0, 8.0, 9.0] and m.shade is None
    assert m.throughput == [104.0, 105.0, 106.0, 107.0, 108.0, 109.0]
    assert m.kernel == [204.0, 205.0, 206.0, 207.0, 208.0, 209.0]
    assert m.array == [304.0, 305.0, 306.0, 307.0, 308.0, 309.0]
    assert m.controller_cpu == [4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    assert m.gb_written is not None and len(m.gb_written) == 6
    assert [len(v) for _, v in m.guides] == [6]
    assert m.events == t.events  # what happened is still said, at its own second
    assert m.findings[0] == "warm-up: 4 s logged before these samples, not in the figures"
    assert measured_only(Timeline("no warm-up", t_s, "IOPS", [1.0] * 10, [1.0] * 10)).t_s == t_s
