"""Scenarios in a campaign: each one's before-steps, its points, its after-steps, in order.

What is stored (run-level findings, so a resume and the report read them back):
* `scenario_step`: one per step that ran, with its start and end time, exit code, trimmed
  output and whether it counts as done;
* `scenario_paths`: the targets and block devices of this machine (no plan hosts) or of each
  plan host over SSH, `before` a scenario's before-steps, at its `start` (after them, before
  its first point), at its `end` (after its last point) and `after` its after-steps (before
  and after only where the scenario has such steps).

More: docs/internals.md, `run/scenarios.py`."""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from arraybench.errors import ArraybenchError
from arraybench.events.injectors import run_command, trim_output
from arraybench.events.paths import snapshot_paths
from arraybench.finding_kinds import (
    SCENARIO_PATHS,
    SCENARIO_STEP,
    HostViewData,
    ScenarioPathsFinding,
    ScenarioStepFinding,
    fields_of,
)
from arraybench.hosts.server import HostError, ssh_command
from arraybench.plan.expand import Point
from arraybench.plan.model import Plan
from arraybench.plan.scenarios import Scenario, Step, StepPhase
from arraybench.run.fleet import host_spec
from arraybench.store.db import Store
from arraybench.system.shell import sh_command

SNAPSHOT_TIMEOUT_S = 30.0
PARTITIONS = "/proc/partitions"


class ScenarioStepError(ArraybenchError):
    """A scenario step failed: the set-up it should make is not in place."""

    exit_code = 1


@dataclass(frozen=True)
class StepRecord:
    """One step as it ran (the `scenario_step` finding)."""

    scenario: str
    phase: StepPhase
    index: int
    kind: str  # prompt | run
    step: str  # what it was, one line
    host: str | None
    outcome: str  # ok | failed | timeout | confirmed | assumed
    done: bool  # counts as done for a resume
    started: float  # Unix seconds
    ended: float
    exit_code: int | None = None
    output: str = ""
    detail: str = ""


@dataclass(frozen=True)
class HostView:
    """Targets and block devices one host showed at one moment, or why they are unknown."""

    recorded: bool
    why_not: str | None = None
    targets: list[str] = field(default_factory=list)  # one line per target
    devices: list[str] = field(default_factory=list)  # `sdc 10485760` (name, 1 KiB blocks)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def step_argv(plan: Plan, step: Step) -> list[str]:
    """The command as run: argv itself, or ssh to the plan host with every word quoted."""
    assert step.run is not None
    if step.run.host is None:
        return list(step.run.argv)
    host = next(h for h in plan.hosts if h.name == step.run.host)  # validated in the plan
    return ssh_command(host_spec(host), shlex.join(step.run.argv))


def run_label(label: str, scenarios: Sequence[Scenario] | None) -> str:
    """The run's scenario label: the plan's, or with plan scenarios and no label of its own
    their names (`C4 + C3 + C2`)."""
    if not scenarios or label != "default":
        return label
    return " + ".join(s.name for s in scenarios)[:200]


def split_by_scenario(points: Sequence[Point]) -> list[tuple[str | None, list[Point]]]:
    """The campaign's points in runs of one scenario each, in order."""
    groups: list[tuple[str | None, list[Point]]] = []
    for point in points:
        if not groups or groups[-1][0] != point.scenario:
            groups.append((point.scenario, []))
        groups[-1][1].append(point)
    return groups


class ScenarioSteps:
    """Runs the steps of a campaign's scenarios and records them in the store."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        plan: Plan,
        *,
        confirm: Callable[[str], None] | None,
        announce: Callable[[str, float], None],
        finished: Callable[[], None],
        warning: Callable[[str], None],
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store, self.run_id, self.plan = store, run_id, plan
        self.confirm = confirm  # None: non-interactive, prompts are assumed
        self.announce, self.finished, self.warning = announce, finished, warning
        self.sleep = sleep
        self.scenarios = {s.name: s for s in plan.scenarios or []}
        self._said: set[tuple[str, str | None]] = set()  # hosts whose paths were not recorded

    # resume state ---------------------------------------------------------------------
    def _resume(self) -> str:
        results = getattr(self.store, "path", None)
        where = f" --results {shlex.quote(str(results.parent))}" if results else ""
        return f"arraybench run --resume {self.run_id}{where}"

    def _done(self) -> set[tuple[str, str, int]]:
        steps = SCENARIO_STEP.among(self.store.findings(self.run_id, SCENARIO_STEP.name))
        return {(d["scenario"], d["phase"], d["index"]) for d in steps if d["done"]}

    def _snapshots(self) -> set[tuple[str, str]]:
        seen = SCENARIO_PATHS.among(self.store.findings(self.run_id, SCENARIO_PATHS.name))
        return {(d["scenario"], d["moment"]) for d in seen}

    # the campaign's hooks -------------------------------------------------------------
    def enter(self, name: str | None, points: Sequence[Point], done: set[str]) -> None:
        """Before a scenario's points: the paths before its steps (once), its before-steps
        not done yet, the paths at its start."""
        if name is None or all(p.key in done for p in points):
            return
        scenario = self.scenarios[name]
        seen = self._snapshots()
        if self._left(scenario, "before") and (name, "before") not in seen:
            self._snapshot(scenario, "before", False)
        self._steps(scenario, "before", scenario.before)
        self._snapshot(scenario, "start", (name, "start") in seen)

    def leave(self, name: str | None) -> None:
        """After a scenario's points: the paths at its end (once), its after-steps not done
        yet, and the paths after them."""
        if name is None:
            return
        scenario = self.scenarios[name]
        if (name, "end") not in self._snapshots():
            self._snapshot(scenario, "end", False)
        if self._left(scenario, "after"):
            self._steps(scenario, "after", scenario.after)
            self._snapshot(scenario, "after", False)

    def _left(self, scenario: Scenario, phase: StepPhase) -> bool:
        """Whether some step of this phase is not done yet."""
        done = self._done()
        steps = scenario.before if phase == "before" else scenario.after
        return any((scenario.name, phase, i) not in done for i in range(len(steps)))

    # steps ----------------------------------------------------------------------------
    def _steps(self, scenario: Scenario, phase: StepPhase, steps: Sequence[Step]) -> None:
        done = self._done()
        for index, step in enumerate(steps):
            if (scenario.name, phase, index) in done:
                continue
            expected = step.run.timeout if step.run else _assumed(step)
            self.announce(f"{scenario.title}: {phase} {step.describe()}", expected)
            record = self.run_step(scenario, phase, index, step)
            self.store.add_finding(
                self.run_id, SCENARIO_STEP.new(fields_of(ScenarioStepFinding, record))
            )
            self.finished()
            if not record.done:
                raise ScenarioStepError(
                    f"scenario {scenario.name}: {phase}[{index}] {step.describe()}: "
                    f"{record.detail}{_saying(record.output)}",
                    f"fix it, then continue with `{self._resume()}` (the step runs again; "
                    "completed steps do not)",
                )
            if record.outcome not in ("ok", "confirmed", "assumed"):
                self.warning(f"scenario {scenario.name}: {phase}[{index}] {step.describe()}: "
                             f"{record.detail} (on_failure: continue)")  # fmt: skip

    def run_step(self, scenario: Scenario, phase: StepPhase, index: int, step: Step) -> StepRecord:
        host = step.run.host if step.run else None
        base = StepRecord(scenario.name, phase, index, step.kind, step.describe(), host,
                          outcome="failed", done=False, started=time.time(), ended=0.0)  # fmt: skip
        if step.prompt is not None:
            if self.confirm is not None:
                try:
                    self.confirm(f"scenario {scenario.title}: {step.prompt.text}")
                except EOFError:  # Ctrl-D, or the terminal went away: no confirmation
                    raise ScenarioStepError(
                        f"scenario {scenario.name}: {phase}[{index}] {step.describe()}: no "
                        "answer (end of input)",
                        f"continue with `{self._resume()}` (the prompt comes again)",
                    ) from None
                outcome, detail = "confirmed", "confirmed by the operator"
            else:
                self.sleep(step.prompt.assume_after)
                outcome = "assumed"
                detail = f"assumed (non-interactive) {step.prompt.assume_after:g}s after the step"
            return replace(base, outcome=outcome, done=True, ended=time.time(), detail=detail)
        assert step.run is not None
        try:
            argv = step_argv(self.plan, step)
        except HostError as exc:
            return replace(base, ended=time.time(), detail=exc.one_line())
        result = run_command(argv, step.run.timeout)
        ok = result.outcome == "ok"
        detail = result.detail.replace(" ".join(argv), " ".join(step.run.argv))  # not ssh's argv
        if host:
            detail += f" on {host}"
        return replace(base, outcome=result.outcome, done=ok or step.run.on_failure == "continue",
                       ended=time.time(), exit_code=result.exit_code, output=result.output,
                       detail=detail)  # fmt: skip

    # paths and devices ----------------------------------------------------------------
    def _snapshot(self, scenario: Scenario, moment: str, resumed: bool) -> None:
        now = time.time()
        views = self.views()
        data: ScenarioPathsFinding = {
            "scenario": scenario.name, "moment": moment, "time": _iso(now), "t": now,
            "resumed": resumed, "hosts": {n: fields_of(HostViewData, v) for n, v in views.items()},
        }  # fmt: skip
        self.store.add_finding(self.run_id, SCENARIO_PATHS.new(data))
        for name, view in views.items():
            if not view.recorded and (name, view.why_not) not in self._said:
                self._said.add((name, view.why_not))  # once per host and reason
                self.warning(f"scenario {scenario.name}: paths of {name} not recorded "
                             f"({view.why_not})")  # fmt: skip

    def views(self) -> dict[str, HostView]:
        """This machine's view (no plan hosts), else each plan host's over SSH."""
        if not self.plan.hosts:
            states = snapshot_paths([t.path for t in self.plan.targets])
            return {"local": HostView(True, None, [s.describe() for s in states.values()],
                                      _devices(_read(PARTITIONS)))}  # fmt: skip
        return {h.name: self._remote_view(h.name) for h in self.plan.hosts}

    def _remote_view(self, name: str) -> HostView:
        host = next(h for h in self.plan.hosts if h.name == name)
        if host.ssh is None:
            return HostView(False, "no ssh settings: the fio server was started by hand")
        targets = [t.path for t in host.targets or self.plan.targets]
        remote = sh_command(_HOST_VIEW_SH, [STAT_FORMAT, PARTITIONS, *targets])
        try:
            argv = ssh_command(host_spec(host), remote)
        except HostError as exc:
            return HostView(False, exc.one_line())
        result = run_command(argv, SNAPSHOT_TIMEOUT_S)
        text, sep, partitions = result.output.partition("---\n")
        if result.outcome == "timeout" or not sep:  # stat fails for a missing target: still seen
            return HostView(False, trim_output(result.detail + " " + result.output, 300))
        return HostView(True, None, _targets(text, partitions), _devices(partitions))


def _saying(output: str | None, limit: int = 120) -> str:
    """The last line a failed step printed, for the one error line: why it failed is usually
    there (the whole output is in the store and the report)."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    if not lines:
        return ""
    last = lines[-1] if len(lines[-1]) <= limit else lines[-1][: limit - 3] + "..."
    return f", saying: {last}"


def _assumed(step: Step) -> float:
    return step.prompt.assume_after if step.prompt else 0.0


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


STAT_FORMAT = "%n|%F|%s|%t|%T"  # name, type, size, device major and minor (hex)
# args: FORMAT PARTITIONS TARGET...: each target's stat line, then the host's partitions
_HOST_VIEW_SH = 'f=$1 p=$2; shift 2; stat -L -c "$f" -- "$@"; echo ---; cat "$p"'


def _targets(stat: str, partitions: str) -> list[str]:
    """`stat` lines -> `PATH: TYPE, SIZE bytes`. stat gives a block device's size as 0: its
    size is the one /proc/partitions gives its major:minor (1 KiB blocks), with its name."""
    sizes = {}
    for line in partitions.splitlines():
        words = line.split()
        if len(words) == 4 and words[0].isdigit() and words[1].isdigit():
            sizes[(int(words[0]), int(words[1]))] = (int(words[2]) * 1024, words[3])
    found = []
    for line in stat.splitlines():
        fields = line.rsplit("|", 4)
        if len(fields) != 5:  # stat's own complaint (a missing target): shown as it is
            found += [line] if line.strip() else []
            continue
        name, kind, size, major, minor = fields
        text = f"{name}: {kind}, {size} bytes"
        with contextlib.suppress(ValueError):
            known = sizes.get((int(major, 16), int(minor, 16)))
            if kind == "block special file" and known:
                text = f"{name}: {kind}, {known[0]} bytes ({known[1]})"
        found.append(text)
    return found


def _devices(partitions: str) -> list[str]:
    """`/proc/partitions` -> `name blocks` lines (1 KiB blocks), whole lines skipped if odd."""
    found = []
    for line in partitions.splitlines():
        words = line.split()
        if len(words) == 4 and words[0].isdigit():
            found.append(f"{words[3]} {words[2]}")
    return found
