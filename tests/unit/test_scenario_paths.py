"""A host's targets as a scenario records them over SSH (run/scenarios.py): stat's lines."""

from __future__ import annotations

from arraybench.run.scenarios import _targets

PARTITIONS = """major minor  #blocks  name

 254        0  268435456 vda
   7        2     131072 loop2
"""


def test_a_block_device_gets_its_size_from_proc_partitions_not_stats_zero() -> None:
    stat = ("/dev/loop2|block special file|0|7|2\n"
            "/data/t a|b.dat|regular file|16777216|0|0\n"
            "stat: cannot statx '/dev/gone': No such file or directory\n")  # fmt: skip
    assert _targets(stat, PARTITIONS) == [
        "/dev/loop2: block special file, 134217728 bytes (loop2)",
        "/data/t a|b.dat: regular file, 16777216 bytes",  # a | in the name stays
        "stat: cannot statx '/dev/gone': No such file or directory",
    ]


def test_a_block_device_missing_from_proc_partitions_keeps_what_stat_said() -> None:
    assert _targets("/dev/sdz|block special file|0|41|0\n", PARTITIONS) == [
        "/dev/sdz: block special file, 0 bytes"]  # fmt: skip
