"""Scenarios: set-ups measured one after the other within one campaign.

Every workload's series runs in every scenario, in the order given. A scenario's `before`
steps put the set-up in place (pull a controller, start a competing load), its `after` steps
take it away; each step is an operator `prompt` or a `run` command, the same forms as the
`prompt` and `run` events (plan/events.py).

More: docs/internals.md, `plan/scenarios.py`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from arraybench.plan.event_kinds.base import Argv, Duration, Offset, _argv_form, _text_form
from arraybench.plan.types import Strict

# the documented example, every form once: docs/plan.md's examples are read from it
EXAMPLE = """\
scenarios:
  - {name: C4, label: "4 controllers"}
  - name: C3
    label: "-1 controller"
    before:
      - prompt: "Pull controller A now"
      - run: {argv: [multipath, -ll], timeout: 30s, host: load1, on_failure: continue}
    after:
      - prompt: {text: "Plug controller A back", assume_after: 5s}
      - run: [multipath, -r]
"""

# the plan's name pattern (plan.model.NAME_PATTERN, same text: the loader explains it)
SCENARIO_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
StepPhase = Literal["before", "after"]


class PromptStep(Strict):
    """The operator does something by hand. Interactive runs show `text` and wait for Enter
    (the time of the Enter is recorded); non-interactive runs wait `assume_after` and record
    the step as assumed done, as a `prompt` event does."""

    text: str = Field(min_length=1, max_length=2000, description="What the operator must do.")
    assume_after: Offset = Field(
        0.0,
        description="Non-interactive runs: the action is assumed done this long after the step "
        "starts (the run waits that long).",
    )


class RunStep(Strict):
    """A command (never through a shell), on this machine or on a plan host over SSH."""

    argv: Argv = Field(description="The command and its arguments (never through a shell).")
    timeout: Duration = Field(
        60.0, description="The command is killed after this long (recorded as a failure)."
    )
    host: str | None = Field(
        None,
        min_length=1,
        description="Run it on this plan host over SSH (each word quoted for the remote "
        "shell); absent: on this machine.",
    )

    @field_validator("argv")
    @classmethod
    def _no_nul(cls, argv: list[str]) -> list[str]:
        if any("\0" in word for word in argv):  # no exec() or ssh can pass it
            raise ValueError("a word holds a NUL character")
        return argv

    on_failure: Literal["stop", "continue"] = Field(
        "stop",
        description="A non-zero exit or a timeout: stop the campaign (resumable: the step runs "
        "again) or record it and go on.",
    )


class Step(Strict):
    """One step: exactly one of `prompt` (text, or {text, assume_after}) or `run` (argv list,
    or {argv, timeout, host, on_failure})."""

    prompt: Annotated[PromptStep, _text_form("text")] | None = Field(
        None, description="Ask the operator to do something (a string is the text)."
    )
    run: Annotated[RunStep, BeforeValidator(_argv_form)] | None = Field(
        None, description="Run a command (a list is its argv)."
    )

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        if (self.prompt is None) == (self.run is None):
            raise ValueError("give exactly one of prompt or run")
        return self

    @property
    def kind(self) -> str:
        return "prompt" if self.prompt is not None else "run"

    def describe(self) -> str:
        """`prompt "Pull controller A"`, `run dmsetup suspend d on h1 (timeout 30s)`."""
        if self.prompt is not None:
            text = self.prompt.text
            return f'prompt "{text if len(text) <= 50 else text[:47] + "..."}"'
        assert self.run is not None
        words = " ".join(self.run.argv)
        words = words if len(words) <= 50 else words[:47] + "..."
        where = f" on {self.run.host}" if self.run.host else ""
        return f"run {words}{where} (timeout {self.run.timeout:g}s)"


class Scenario(Strict):
    """One set-up under test, named like In&Out's `L1C3S4`."""

    name: str = Field(
        min_length=1,
        max_length=64,
        pattern=SCENARIO_NAME,
        description="Short name (letters, digits, _ . -): part of every point key "
        "(`C3/rr/w4-qd1`) and the scenario column of the points.",
    )
    label: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        pattern=r"^[^\x00-\x1f\x7f]*$",
        description='What the set-up is, shown in reports (e.g. "-1 controller").',
    )
    before: list[Step] = Field(
        default_factory=list,
        description="Steps run in order before the scenario's points (set the scenario up).",
    )
    after: list[Step] = Field(
        default_factory=list,
        description="Steps run in order after the scenario's points (take it down again).",
    )

    @property
    def title(self) -> str:
        return f"{self.name} ({self.label})" if self.label else self.name


def check_scenarios(
    scenarios: Sequence[Scenario], ssh_hosts: dict[str, bool], has_extra_kinds: bool
) -> None:
    """Plan-wide rules (ValueError, located by the plan loader at `scenarios`):
    unique names; a step's host is a plan host reachable over SSH; no test kinds that do not
    run per scenario. `ssh_hosts`: host name -> whether it has SSH settings."""
    if not scenarios:
        return
    names = [s.name for s in scenarios]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"scenario names must be unique; repeated: {', '.join(repeated)}")
    for s in scenarios:
        for phase, steps in (("before", s.before), ("after", s.after)):
            for i, step in enumerate(steps):
                host = step.run.host if step.run else None
                where = f"scenario {s.name}: {phase}[{i}].run.host {host!r}"
                if host is not None and host not in ssh_hosts:
                    known = ", ".join(ssh_hosts) or "none"
                    raise ValueError(f"{where} is not a plan host (hosts: {known})")
                if host is not None and not ssh_hosts[host]:
                    raise ValueError(f"{where} has no ssh settings: give the host `ssh:`")
    if has_extra_kinds:
        raise ValueError(
            "scenarios run the workloads' ladders; rounds, interference and metadata do not "
            "run per scenario: measure them in a plan of their own"
        )
