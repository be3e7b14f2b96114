"""plan.events: the YAML forms of events and the errors for wrong ones."""

from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from arraybench.plan.events import Event

EXAMPLES = """
- {at: 30s, duration: 20s, label: path A slow,
   throttle: {device: /dev/sdc, read_iops: 200, write_bps: 10m}}
- {when: steady, duration: 1m, prompt: "Pull the FC cable of controller A"}
- {at: 10s, run: [systemctl, stop, iscsid]}
- {at: 0s, run: {argv: [/bin/fail-a], timeout: 30s, revert: [/bin/heal-a]}}
- {at: 500ms, netem: {interface: eth1, delay: 5ms, jitter: 1ms, loss: 0.5, netns: lab}}
- {at: 5s, duration: 3s, signal: {process: '^iscsid$'}}
- {at: 5s, signal: {pid_file: /run/multipathd.pid}}
- {at: 20s, scsi_offline: /dev/sdc}
"""


def _event(text: str) -> Event:
    return Event.model_validate(yaml.safe_load(text))


def test_every_kind_in_its_yaml_form() -> None:
    events = [Event.model_validate(item) for item in yaml.safe_load(EXAMPLES)]
    assert [e.kind for e in events] == [
        "throttle",
        "prompt",
        "run",
        "run",
        "netem",
        "signal",
        "signal",
        "scsi_offline",
    ]
    throttle, prompt, run, run2, netem, stop, stop2, offline = events
    assert throttle.at == 30 and throttle.duration == 20 and throttle.name == "path A slow"
    assert throttle.throttle is not None and throttle.throttle.write_bps == 10 << 20
    assert prompt.when == "steady" and prompt.at is None and prompt.duration == 60
    assert prompt.prompt is not None and prompt.prompt.assume_after == 0
    assert prompt.name == 'prompt "Pull the FC cable of controller A"'
    assert run.run is not None and run.run.argv == ["systemctl", "stop", "iscsid"]
    assert run.run.timeout == 60 and run.name == "run systemctl"
    assert run2.at == 0 and run2.run is not None and run2.run.revert == ["/bin/heal-a"]
    assert netem.at == 0.5 and netem.netem is not None
    assert (netem.netem.delay, netem.netem.jitter, netem.netem.loss) == (0.005, 0.001, 0.5)
    assert netem.name == "netem eth1 (netns lab)"
    assert stop.name == "stop /^iscsid$/" and stop2.name == "stop pid from /run/multipathd.pid"
    assert offline.scsi_offline is not None and offline.scsi_offline.device == "/dev/sdc"
    assert offline.when_text() == "at +20s" and prompt.when_text() == "when steady"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{run: [/bin/true]}", "either at"),
        ("{at: 1s, when: steady, run: [/bin/true]}", "either at"),
        ("{when: later, run: [ls]}", "'steady'"),
        ("{at: 1s}", "exactly one action"),
        ("{at: 1s, run: [ls], scsi_offline: sdc}", "(got run, scsi_offline)"),
        ("{at: 1s, run: [true]}", "quote the word"),
        ("{at: -1s, run: [ls]}", "invalid duration"),
        ("{at: 1s, duration: 0s, run: [ls]}", "0s is out of range: use 1ms to 30d"),
        ("{at: 1s, run: []}", "at least 1 item"),
        ("{at: 1s, run: ['']}", "at least 1 character"),
        ("{at: 1s, run: {argv: [x], shell: true}}", "Extra inputs"),
        ("{at: 1s, colour: red, run: [ls]}", "Extra inputs"),
        ("{at: 1s, throttle: {device: /dev/sdc}}", "at least one of read_iops"),
        ("{at: 1s, throttle: {device: /dev/sdc, read_bps: 8kk}}", "invalid size"),
        ("{at: 1s, throttle: {device: /dev/sdc, read_iops: 0}}", "0 is out of range: use 1 to"),
        ("{at: 1s, netem: {interface: eth0}}", "delay and/or loss"),
        ("{at: 1s, netem: {interface: eth0, loss: 1, jitter: 1ms}}", "jitter needs a delay"),
        ("{at: 1s, netem: {interface: eth0, loss: 101}}", "101 is out of range: use 0 to 100"),
        ("{at: 1s, netem: {interface: 'eth 0', delay: 1ms}}", "should match pattern"),
        ("{at: 1s, signal: {pid: 1, process: x}}", "exactly one of pid"),
        ("{at: 1s, signal: {}}", "exactly one of pid"),
        ("{at: 1s, signal: {process: '(', full: true}}", "missing ): ("),
        ("{at: 1s, signal: {pid: 3, full: true}}", "full applies to process only"),
        ("{at: 1s, prompt: {text: ''}}", "at least 1 character"),
        ("{at: 1s, host: h1, prompt: go}", "a prompt happens on the controller"),
        ("{at: 1s, host: h1, hosts: [h2], run: [ls]}", "host or hosts, not both"),
        ("{at: 1s, hosts: [], run: [ls]}", "at least 1 item"),
        ("{at: 1s, host: '-oProxyCommand=x', run: [ls]}", "should match pattern"),
        ("{at: 1s, signal: {load: true, pid: 3}}", "exactly one of pid, pid_file, process or load"),
        ("{at: 1s, prompt: {text: go, assume_after: soon}}", "invalid duration"),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        _event(text)
    assert message in str(info.value)


def test_events_are_frozen() -> None:
    event = _event("{at: 1s, run: [sleep, 5, 0.5]}")
    assert event.run is not None and event.run.argv == ["sleep", "5", "0.5"]
    with pytest.raises(ValidationError):
        setattr(event, "at", 2.0)  # noqa: B010 - as a plan override would try


PLAN = """name: p
hosts:
  - {name: h0, address: 10.0.0.2, ssh: {user: root}, targets: [{path: /tmp/x}]}
  - {name: h1, address: 10.0.0.3, targets: [{path: /tmp/x}]}
workloads:
  - name: r
    pattern: random
    bs: 4k
    read: 100
    events:
      - EVENT
"""


@pytest.mark.parametrize(
    ("event", "located", "message"),
    [
        (
            "{at: 1s, host: h9, run: [ls]}",
            "workloads[0].events[0].host",
            "unknown host 'h9' (hosts: h0, h1)",
        ),
        (
            "{at: 1s, hosts: [h0, h7], run: [ls]}",
            "workloads[0].events[0].hosts[1]",
            "unknown host 'h7'",
        ),
        (
            "{at: 1s, host: h1, signal: {load: true}}",
            "workloads[0].events[0].host",
            "host 'h1' has no ssh settings",
        ),
        (
            "{at: 1s, throttle: {device: /dev/sdb, read_iops: 5}}",
            "workloads[0].events[0].throttle",
            "h1 has no ssh settings",
        ),
    ],
)
def test_event_hosts_are_located_plan_errors(event: str, located: str, message: str) -> None:
    """A host an event names must be a host of the plan with SSH: one located line, exit 2."""
    from arraybench.errors import PlanError
    from arraybench.plan.load import parse_plan_text

    text = PLAN.replace("EVENT", event)
    with pytest.raises(PlanError) as info:
        parse_plan_text(text, "plan.yaml")
    line = info.value.one_line()
    assert f"plan.yaml:11 {located}: " in line and message in line, line
    assert info.value.exit_code == 2


def test_event_hosts_default_to_the_points_hosts() -> None:
    from arraybench.events.host_injectors import event_hosts

    assert event_hosts(_event("{at: 1s, signal: {load: true}}"), ["h0", "h1"]) == ["h0", "h1"]
    assert event_hosts(_event("{at: 1s, host: h1, run: [ls]}"), ["h0", "h1"]) == ["h1"]
    assert event_hosts(_event("{at: 1s, hosts: [h2], run: [ls]}"), ["h0", "h1"]) == []
    assert event_hosts(_event("{at: 1s, run: [ls]}"), ["h0", "h1"]) == []  # the controller
    assert event_hosts(_event("{at: 1s, prompt: go}"), ["h0"]) == []


def test_the_docs_example_of_events_on_hosts_is_a_plan() -> None:
    import re
    from pathlib import Path

    from arraybench.plan.load import parse_plan_text

    docs = Path(__file__).resolve().parents[2] / "docs" / "failure-tests.md"
    blocks = re.findall(r"```yaml\n(.*?)```", docs.read_text(encoding="utf-8"), re.DOTALL)
    block = next(b for b in blocks if b.startswith("name: availability"))
    plan = parse_plan_text(block, "failure-tests.md")
    events = plan.workloads[0].events
    assert [e.named_hosts for e in events] == [["h2"], ["h0"], ["h2"]]
    assert plan.hosts[1].ssh is not None and plan.hosts[1].ssh.known_hosts
