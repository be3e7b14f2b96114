"""Events during a point: failures and disturbances injected while the fio load runs.

Each event names WHEN it happens (`at` an offset from the point's start, or `when: steady`,
once the load has reached steady state), optionally how long it lasts (`duration`, then it is
reverted; without it, it lasts until the point ends) and WHAT happens, as one key naming the
kind. Every applied event is reverted when the point ends, whatever happened.

More: docs/internals.md, `plan/events.py`."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, StringConstraints, field_validator, model_validator

from arraybench.plan.types import Bool, Fraction, PositiveInt, Seconds, Size, Strict, Wait
from arraybench.userregex import compile_user_regex

# the documented example, every form once: docs/plan.md's examples are read from it
EXAMPLE = """\
events:
  - {at: 30s, duration: 20s, label: path A slow,
     throttle: {device: /dev/sdc, read_iops: 200, write_iops: 200}}
  - {when: steady, prompt: {text: "Pull the FC cable of controller A",
     revert_text: "Plug it back", assume_after: 10s}, duration: 60s}
  - {at: 10s, run: [systemctl, stop, iscsid]}            # short form of run: {argv: [...]}
  - {at: 10s, run: {argv: [/usr/local/bin/fail-a], timeout: 30s, revert: [/usr/local/bin/heal-a]}}
  - {at: 5s, duration: 10s, netem: {interface: eth1, delay: 5ms, jitter: 1ms, loss: 0.5}}
  - {at: 5s, duration: 3s, signal: {process: '^iscsid$'}}   # SIGSTOP, SIGCONT at revert
  - {at: 20s, duration: 30s, scsi_offline: /dev/sdc}       # short form of {device: ...}
"""

EventKind = Literal["prompt", "run", "throttle", "netem", "signal", "scsi_offline"]
EVENT_KINDS: tuple[EventKind, ...] = (
    "prompt",
    "run",
    "throttle",
    "netem",
    "signal",
    "scsi_offline",
)


# the kinds that can act on a plan's hosts over SSH (a prompt is the operator's)
HOST_KINDS: tuple[EventKind, ...] = ("run", "throttle", "netem", "signal", "scsi_offline")
HostName = Annotated[str, StringConstraints(pattern="^[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}$")]

Duration = Seconds  # an event's length or a command's timeout: arraybench waits, not fio
# an offset or a delay that may be zero (`at: 0s`, `jitter: 0ms`)
Offset = Wait


def _text_form(key: str) -> BeforeValidator:
    """Accept a bare string for a one-field action: `prompt: "Pull cable A"`."""

    def convert(value: object) -> object:
        return {key: value} if isinstance(value, str) else value

    return BeforeValidator(convert)


def _argv_form(value: object) -> object:
    """Accept a bare list for `run`: `run: [systemctl, stop, iscsid]`."""
    return {"argv": value} if isinstance(value, list) else value


def _argv_word(value: object) -> object:
    """`[sleep, 5]` is natural YAML: numbers become words; booleans are refused (YAML reads
    true, yes, on as booleans, and "True" is not what was meant)."""
    if isinstance(value, bool):
        raise ValueError("a YAML boolean here: quote the word ('true', 'yes', 'on')")
    if isinstance(value, int | float):
        return str(value)
    return value


Argv = Annotated[
    list[Annotated[str, StringConstraints(min_length=1), BeforeValidator(_argv_word)]],
    Field(min_length=1),
]


class PromptAction(Strict):
    """The operator does something by hand (pull a cable, power off a controller).

    Interactive runs show `text` when the event is due and take the operator's confirmation
    time as the event time. Non-interactive runs assume the action was done `assume_after`
    the trigger (0: at the trigger) and record that time as assumed.
    """

    text: str = Field(
        min_length=1, description="What the operator must do, shown when the event is due."
    )
    # asked at the end of `duration`
    revert_text: str | None = Field(
        None, min_length=1, description="What the operator must do at the end of `duration`."
    )
    assume_after: Offset = Field(
        0.0,
        description=(
            "Non-interactive runs: the action is assumed done this long after the trigger."
        ),
    )


class RunAction(Strict):
    """Run a command (never through a shell). A failure or a timeout is recorded, the load goes
    on. `revert` runs when the event ends."""

    argv: Argv = Field(description="The command and its arguments (never through a shell).")
    timeout: Duration = Field(
        60.0, description=("The command is killed after this long (recorded as a failure).")
    )
    revert: Argv | None = Field(None, description="A command run when the event ends.")


class ThrottleAction(Strict):
    """Limit the load's I/O to `device` with the block cgroup (io.max or blkio.throttle)."""

    # a block device, or a file: its backing device
    device: str = Field(min_length=1, description="A block device, or a file: its backing device.")
    read_iops: PositiveInt | None = Field(None, description="Read IOPS limit.")
    write_iops: PositiveInt | None = Field(None, description="Write IOPS limit.")
    # bytes per second: 10m = 10 MiB/s
    read_bps: Size | None = Field(
        None, description="Read bandwidth limit in bytes per second (10m = 10 MiB/s)."
    )
    write_bps: Size | None = Field(
        None, description="Write bandwidth limit in bytes per second (10m = 10 MiB/s)."
    )

    @model_validator(mode="after")
    def _some_limit(self) -> ThrottleAction:
        if all(v is None for v in (self.read_iops, self.write_iops, self.read_bps, self.write_bps)):
            raise ValueError("give at least one of read_iops, write_iops, read_bps, write_bps")
        return self


class NetemAction(Strict):
    """Delay and/or lose packets leaving `interface` (tc netem as its root qdisc)."""

    interface: str = Field(
        min_length=1,
        pattern="^[^\\s/]{1,15}$",
        description=("The network interface whose outgoing packets are delayed or lost."),
    )
    delay: Offset | None = Field(None, description="Added delay per packet.")
    jitter: Offset | None = Field(None, description="Random variation of the delay.")
    # percent of packets
    loss: Fraction | None = Field(None, description="Percent of packets lost.")
    # run tc inside this network namespace
    netns: str | None = Field(
        None, min_length=1, description="Run tc inside this network namespace."
    )

    @model_validator(mode="after")
    def _something(self) -> NetemAction:
        if self.delay is None and self.loss is None:
            raise ValueError("give delay and/or loss")
        if self.jitter is not None and self.delay is None:
            raise ValueError("jitter needs a delay")
        return self


class SignalAction(Strict):
    """Freeze processes (SIGSTOP) and let them go on at revert (SIGCONT)."""

    pid: PositiveInt | None = Field(None, description="The process id to freeze.")
    pid_file: str | None = Field(
        None, min_length=1, description="A file holding the process id to freeze."
    )
    # a regular expression searched in the process name (as pgrep), or in the whole command
    # line with `full: true` (as pgrep -f)
    process: str | None = Field(
        None,
        min_length=1,
        description=(
            "A regular expression searched in process names (as pgrep), "
            "or in whole command lines with `full: true`. Matched in linear time (RE2 "
            "syntax): no backreferences or lookaround."
        ),
    )
    full: Bool = Field(
        False, description=("Match `process` against the whole command line (as pgrep -f).")
    )
    load: Bool = Field(
        False,
        description=(
            "The point's fio job processes (on a host: the job processes of its fio server)."
        ),
    )

    @model_validator(mode="after")
    def _one_selector(self) -> SignalAction:
        given = [n for n in ("pid", "pid_file", "process") if getattr(self, n) is not None]
        given += ["load"] if self.load else []
        if len(given) != 1:
            raise ValueError("give exactly one of pid, pid_file, process or load: true")
        if self.full and self.process is None:
            raise ValueError("full applies to process only")
        return self

    @field_validator("process")
    @classmethod
    def _valid_pattern(cls, pattern: str | None) -> str | None:
        if pattern is not None:  # matched in linear time (RE2): refused here if it cannot be
            compile_user_regex(pattern, "process")  # UserRegexError is a ValueError
        return pattern


# a kernel block device name (sdc, nvme0n1, dm-3, cciss!c0d0): the one part of a sysfs path
# taken from a plan; the path around it is rebuilt (/sys/block/NAME/device/state), never taken
# whole (the same shape as the revert's check, events.entries.BLOCK_NAME)
BLOCK_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_!+-]{0,63}")
_DEV_PATH_RE = re.compile(r"/dev/[A-Za-z0-9_.:+@=,/-]+")


def is_block_name(name: str) -> bool:
    return BLOCK_NAME_RE.fullmatch(name) is not None


class ScsiOfflineAction(Strict):
    """Set a SCSI disk offline (sysfs device/state), back to running at revert."""

    # /dev/sdc, sdc, or a link to it
    device: str = Field(min_length=1, description="/dev/sdc, sdc, or a link to it under /dev.")

    @field_validator("device")
    @classmethod
    def _a_device(cls, device: str) -> str:
        if device.startswith("/"):
            parts = device.split("/")
            if not _DEV_PATH_RE.fullmatch(device) or ".." in parts or "" in parts[1:]:
                raise ValueError(
                    f"{device!r} is not a device path: give /dev/NAME or a link under /dev "
                    "(letters, digits and _.:+@=,- ; no '..' or '//')"
                )
        elif not is_block_name(device):
            raise ValueError(
                f"{device!r} is not a block device name: give a kernel name such as sdc "
                "(letters, digits, '_', '-', '!' and '+') or a /dev path"
            )
        return device


Action = PromptAction | RunAction | ThrottleAction | NetemAction | SignalAction | ScsiOfflineAction


class Event(Strict):
    """One event: when (`at` or `when`), for how long (`duration`) and one action key."""

    # seconds after the point's start
    at: Offset | None = Field(None, description="When: seconds after the point's start (e.g. 30s).")
    when: Literal["steady"] | None = Field(
        None, description="When: `steady` = once the load has reached steady state."
    )
    label: str | None = Field(
        None,
        min_length=1,
        description=("The event's name in reports (default: a description of the action)."),
    )
    # None: until the point ends
    duration: Duration | None = Field(
        None,
        description=(
            "How long the event lasts before it is reverted (absent: until the point ends)."
        ),
    )
    prompt: Annotated[PromptAction, _text_form("text")] | None = Field(
        None, description=("Ask the operator to do something by hand (a string is the text).")
    )
    run: Annotated[RunAction, BeforeValidator(_argv_form)] | None = Field(
        None, description="Run a command (a list is its argv)."
    )
    throttle: ThrottleAction | None = Field(
        None, description="Limit I/O to a device with the block cgroup."
    )
    netem: NetemAction | None = Field(None, description="Delay or lose network packets (tc netem).")
    signal: SignalAction | None = Field(
        None, description="Freeze processes with SIGSTOP, SIGCONT at revert."
    )
    scsi_offline: Annotated[ScsiOfflineAction, _text_form("device")] | None = Field(
        None,
        description=(
            "Set a SCSI disk offline, back to running at revert (a string is the device)."
        ),
    )

    host: HostName | None = Field(
        None,
        description=(
            "On a plan with hosts: the host the action happens on, over SSH (not for prompt)."
        ),
    )
    hosts: list[HostName] | None = Field(
        None,
        min_length=1,
        description=(
            "On a plan with hosts: the hosts the action happens on, over SSH (default for "
            "throttle, netem, signal, scsi_offline: every host of the point; a run without "
            "host or hosts runs on the controller)."
        ),
    )

    @model_validator(mode="after")
    def _one_time_one_action(self) -> Event:
        if (self.at is None) == (self.when is None):
            raise ValueError("give either at (an offset such as 30s) or when: steady")
        given = [k for k in EVENT_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one action of {', '.join(EVENT_KINDS)}"
                + (f" (got {', '.join(given)})" if given else "")
            )
        if self.host is not None and self.hosts is not None:
            raise ValueError("give host or hosts, not both")
        if self.named_hosts and self.kind not in HOST_KINDS:
            raise ValueError(f"a {self.kind} happens on the controller: remove host/hosts")
        return self

    @property
    def named_hosts(self) -> list[str]:
        """The hosts the plan names for this event (empty: the default)."""
        return [self.host] if self.host is not None else list(self.hosts or [])

    @property
    def kind(self) -> EventKind:
        return next(k for k in EVENT_KINDS if getattr(self, k) is not None)

    @property
    def action(self) -> Action:
        for value in (
            self.prompt,
            self.run,
            self.throttle,
            self.netem,
            self.signal,
            self.scsi_offline,
        ):
            if value is not None:
                return value
        raise AssertionError("an event always has one action (validated)")

    @property
    def name(self) -> str:
        """The label, or a short description of the action."""
        return self.label or describe_action(self)

    def when_text(self) -> str:
        return "when steady" if self.when == "steady" else f"at +{self.at:g}s"


def describe_action(event: Event) -> str:
    """`throttle /dev/sdc`, `run systemctl`, `prompt "Pull cable A"`: a default label."""
    action = event.action
    if isinstance(action, PromptAction):
        text = action.text if len(action.text) <= 40 else action.text[:37] + "..."
        return f'prompt "{text}"'
    if isinstance(action, RunAction):
        return f"run {action.argv[0]}"
    if isinstance(action, ThrottleAction):
        return f"throttle {action.device}"
    if isinstance(action, NetemAction):
        where = f" (netns {action.netns})" if action.netns else ""
        return f"netem {action.interface}{where}"
    if isinstance(action, SignalAction):
        if action.pid is not None:
            return f"stop pid {action.pid}"
        if action.pid_file is not None:
            return f"stop pid from {action.pid_file}"
        if action.load:
            return "stop the load"
        return f"stop /{action.process}/"
    return f"offline {action.device}"


def event_host_errors(
    workloads_events: list[list[Event]], hosts: dict[str, bool]
) -> list[tuple[tuple[str | int, ...], str]]:
    """(location, message) for each event naming a host the plan does not declare, or one
    without SSH settings (`hosts`: name -> has ssh). Locations are inside `workloads`."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    known = ", ".join(hosts) or "the plan declares no hosts"
    for w, events in enumerate(workloads_events):
        for e, event in enumerate(events):
            field = "host" if event.host is not None else "hosts"
            for k, name in enumerate(event.named_hosts):
                loc: tuple[str | int, ...] = (w, "events", e, field)
                loc += (k,) if field == "hosts" else ()
                if name not in hosts:
                    problems.append((loc, f"unknown host {name!r} (hosts: {known})"))
                elif not hosts[name]:
                    problems.append((loc, f"host {name!r} has no ssh settings: events on a "
                                     "host need SSH (give the host `ssh:`)"))  # fmt: skip
            bare = [n for n, ssh in hosts.items() if not ssh]
            if hosts and not event.named_hosts and event.kind in HOST_KINDS[1:] and bare:
                problems.append(((w, "events", e, event.kind), f"acts on every host, and "
                                 f"{', '.join(bare)} has no ssh settings: name the hosts "
                                 "with `host:`/`hosts:` or give them `ssh:`"))  # fmt: skip
    return problems
