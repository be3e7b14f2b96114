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
        ("{at: 1s, signal: {process: '(', full: true}}", "invalid regular expression"),
        ("{at: 1s, signal: {pid: 3, full: true}}", "full applies to process only"),
        ("{at: 1s, prompt: {text: ''}}", "at least 1 character"),
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
