"""HUS VM's group 3 from the template and the documented `--set` recipe: group 2's workloads
on 1, 2 and 4 real fio servers (network namespaces), and the report's maxima against the
server count."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import main_cli, needs_fio
from tests.netns import cleanup_stale, started_or_skip

pytestmark = [
    needs_fio,
    pytest.mark.slow,
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) missing"),
]


def test_hus_group3_maxima_against_1_2_4_servers(tmp_path: Path) -> None:
    cleanup_stale()
    hosts = started_or_skip(4, tmp_path / "hosts", port=8791)
    try:
        declared = ", ".join(f"{{name: s{i + 1}, address: {h.address}, port: {h.port}}}"
                             for i, h in enumerate(hosts.hosts))  # fmt: skip
        recipe = ["--only", "g2-read-sync-8k", "--set", "gc_throughput=10g",
                  "--set", "targets=[{path: t.dat, size: 16m}]",  # in each server's folder
                  "--set", f"hosts=[{declared}]",
                  "--set", "host_sets=[[s1], [s1, s2], [s1, s2, s3, s4]]"]  # fmt: skip
        # the 4 servers are on this machine: a 1 s lead lines them up (3 s by default, per point)
        small = ["--scale", "0.02", "--set", "load.workers=[1, 2]", "--set", "start_lead=1s"]
        checked = main_cli("plan", "check", "hus-fmd", *recipe, *small)
        assert checked.returncode == 0, checked.stderr
        for n in (1, 2, 4):
            assert f"g2-read-sync-8k/w2-qd1-h{n}" in checked.stdout
        results = tmp_path / "res"
        done = main_cli("run", "hus-fmd", *recipe, *small, "--results", str(results))
        assert done.returncode == 0, done.stderr
        assert "Scaling against the number of hosts" in done.stdout
        report = Path(done.stdout.split("HTML report:")[1].strip()).read_text()
        table = report[report.index("Scaling against the number of hosts") :]
        table = table[: table.index("</table>")]
        # one row per server count, each with its maximum and its efficiency against linear
        rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
        counts = [re.findall(r"<td>(.*?)</td>", r)[1] for r in rows]
        assert counts == ["1", "2", "4"], rows
        # group 2's charts keep one line per block size and host count, each named
        assert "8 KiB, 1 host" in report and "8 KiB, 4 hosts" in report
    finally:
        hosts.close()
