"""`verify` on a plan with hosts: what the plan must say (ssh for every host), the values that
reach ssh, and the read-back's report as it crosses SSH (JSON and back)."""

from __future__ import annotations

import pytest
import yaml

from arraybench.errors import PlanError
from arraybench.integrity.check import BlockProblem, IntegrityReport
from arraybench.plan.load import parse_plan_text
from arraybench.run.fleet import host_spec
from arraybench.run.plan_values import check_plan_values

SSH = {"user": "bench", "key": "/k/id", "python": "/opt/ab/bin/python"}


def _plan(*hosts: dict) -> object:
    workload = {"name": "w", "pattern": "random", "bs": "4k", "read": 0,
                "verify": {"region": "1m"}}  # fmt: skip
    text = yaml.safe_dump({"name": "p", "hosts": list(hosts), "workloads": [workload]})
    return parse_plan_text(text, "plan.yaml")


def _host(name: str, **ssh: object) -> dict:
    host = {"name": name, "address": "192.0.2.1", "targets": [{"path": "/t", "size": "8m"}]}
    return host | ({"ssh": ssh} if ssh else {})


def test_verify_needs_ssh_on_every_host() -> None:
    check_plan_values(_plan(_host("h0", **SSH)))  # type: ignore[arg-type]
    with pytest.raises(PlanError, match=r"hosts\[1\] \(h1\): workloads\[0\].verify .* no ssh"):
        check_plan_values(_plan(_host("h0", **SSH), _host("h1")))  # type: ignore[arg-type]


def test_known_hosts_reaches_ssh_as_two_options_and_refuses_blanks() -> None:
    plan = _plan(_host("h0", **SSH, known_hosts="/etc/ab/known"))
    spec = host_spec(plan.hosts[0])  # type: ignore[attr-defined]
    assert spec.ssh is not None
    assert spec.ssh.options == ("UserKnownHostsFile=/etc/ab/known", "StrictHostKeyChecking=yes")
    with pytest.raises(PlanError, match=r"hosts\[0\].ssh.known_hosts: .* blank"):
        check_plan_values(_plan(_host("h0", **SSH, known_hosts="/a b")))  # type: ignore[arg-type]


def test_the_python_default_and_its_description() -> None:
    plan = _plan(_host("h0", user="bench"))
    assert plan.hosts[0].ssh.python == "python3"  # type: ignore[attr-defined]
    assert plan.hosts[0].ssh.journals == "arraybench-integrity"  # type: ignore[attr-defined]


def test_a_report_survives_its_json_line() -> None:
    report = IntegrityReport("/t", "/j", 4096, 0, 1 << 20, 7, True, checked=3, ok=1)
    report.problems = [BlockProblem(8192, "corrupt", 5, None, 10**18, "bad checksum"),
                       BlockProblem(4096, "lost", 9, 4, 10**18, "old")]  # fmt: skip
    back = IntegrityReport.from_dict(report.as_dict())
    assert back == report and back.summary_line() == report.summary_line()
    cut = IntegrityReport.from_dict(report.as_dict(max_problems=1))
    assert [p.offset for p in cut.problems] == [8192]


def test_plan_check_says_verify_runs_on_each_host(tmp_path) -> None:
    import io
    from contextlib import redirect_stdout

    from arraybench.cli import main

    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(
        {"name": "p", "hosts": [_host("h0", **SSH)], "workloads": [
            {"name": "w", "pattern": "random", "bs": "4k", "read": 0, "verify": {"region": "1m"}}
        ]}))  # fmt: skip
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["plan", "check", str(path)]) == 0
    assert "of each host's first target (over SSH)" in " ".join(out.getvalue().split())
