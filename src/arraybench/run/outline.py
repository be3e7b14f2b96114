"""What a run will execute, phase by phase, with a duration range: `plan check` prints it and
the progress display counts the same steps.

The phases follow the campaign's order: lay out target files, start the hosts' fio servers,
purge, precondition, SNIA rounds, the points, the interference test, the metadata test, the
report. Each has a range (the least and the most it can take) and a typical time; the range
is open above where the run decides (GC pauses, an operator's prompt).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arraybench.plan.expand import Point, expand, round_points
from arraybench.plan.model import Plan, Workload
from arraybench.run.kinds import TEST_KINDS
from arraybench.run.scenario_outline import scenario_phase
from arraybench.run.spans import OVERHEAD_HIGH_S, OVERHEAD_S, ZERO, Phase, Span
from arraybench.run.warmup import logs_ramp
from arraybench.targets.actions import check_host_phases, target_uses, writers_of
from arraybench.targets.prepare import needs_layout
from arraybench.targets.safety import check_target
from arraybench.units import format_duration, format_size

# start-up and the report at the end: Python, the store, the HTML report
FIXED_S = (0.5, 2.5, 20.0)
# writing files and devices: a fast array, a typical one, a slow disk (bytes/s)
WRITE_RATES = (4e9, 5e8, 5e7)
PURGE_HIGH_S = 120.0  # blkdiscard of a large device
HOSTS_START_S = (1.0, 3.0, 30.0)
VERIFY_READ_RATE = (4e9, 5e8, 2e7)  # reading back the verifiable region after a point


@dataclass(frozen=True)
class TargetFacts:
    """What the run will find at its targets (from the same safety check `run` makes)."""

    layout: Mapping[str, int] = field(default_factory=dict)  # files to create: path -> bytes
    blocks: Mapping[str, int] = field(default_factory=dict)  # block devices: path -> bytes
    kinds: Mapping[str, str] = field(default_factory=dict)  # path -> file, new-file, block
    warnings: tuple[str, ...] = ()


def target_facts(plan: Plan, scratch: str = "") -> TargetFacts:
    """The safety verdict `run` gives (UnsafeTargetError / TargetError when it would refuse),
    and what it will write before the first point. Hosts' targets are checked on the hosts;
    `scratch` is the default scratch file, whose folder the run creates."""
    check_host_phases(plan)
    if plan.hosts:
        return TargetFacts()
    writers = writers_of(target_uses(plan))
    layout: dict[str, int] = {}
    blocks: dict[str, int] = {}
    kinds: dict[str, str] = {}
    warnings: list[str] = []
    for target in plan.targets:
        if target.path == scratch and not Path(scratch).parent.exists():
            kinds[target.path] = "new-file"
            layout[target.path] = target.size or 0
            continue
        phase = writers.get(target.path, "")
        info = check_target(target.path, writes=bool(phase), allow_destroy=plan.allow_destroy,
                            phase=phase)  # fmt: skip
        kinds[target.path] = info.kind
        warnings += info.warnings if info.kind != "new-file" else []
        if info.kind == "block":
            blocks[target.path] = info.size_bytes or 0
            continue
        want = target.size or (info.size_bytes or 0)
        if want > 0 and needs_layout(Path(target.path), want):
            layout[target.path] = want
    return TargetFacts(layout, blocks, kinds, tuple(warnings))


@dataclass(frozen=True)
class Outline:
    phases: tuple[Phase, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def span(self) -> Span:
        total = ZERO
        for phase in self.phases:
            total = total + phase.span
        return total

    @property
    def steps(self) -> int:
        return sum(p.steps for p in self.phases)


def _write_span(nbytes: float, rates: tuple[float, float, float] = WRITE_RATES) -> Span:
    fast, typical, slow = rates
    return Span(nbytes / fast, nbytes / typical, nbytes / slow)


def write_seconds(nbytes: float) -> float:
    """Typical seconds to write `nbytes` (preconditioning, laying out files)."""
    return _write_span(nbytes).typical


def point_span(point: Point, plan: Plan) -> Span:
    """One point: ramp + duration (less when it may stop once steady), pauses, read-back."""
    t = point.timing
    low = t.ramp + (min(t.duration, t.steady.window) if t.steady else t.duration)
    span = Span(low, t.ramp + t.duration + OVERHEAD_S, t.ramp + t.duration + OVERHEAD_HIGH_S)
    pause = point.workload.pause_after
    if pause == "gc":
        span = Span(span.low, span.typical, None)  # bytes written / GC rate, as measured
    elif pause:
        span = span + Span(pause, pause, pause)
    if point.workload.verify:
        span = span + _write_span(point.workload.verify.region, VERIFY_READ_RATE)
    if point.level.hosts:  # hosts wait for the start gate; a logged warm-up has its own gate
        lead = plan.start_lead * (2 if logs_ramp(point) else 1)
        span = span + Span(lead, lead, lead)
    if any(e.by_operator for e in point.workload.events):  # an operator may take any time
        span = Span(span.low, span.typical, None)
    return span


def _points_span(points: Sequence[Point], plan: Plan) -> Span:
    total = ZERO
    for point in points:
        total = total + point_span(point, plan)
    adaptive = {p.series for p in points if p.adaptive != "off"}
    if adaptive:  # an adaptive series may stop after its first level
        skippable = [p for p in points if p.series in adaptive]
        firsts = {p.series: p for p in reversed(skippable)}
        saved = sum(point_span(p, plan).low for p in skippable) - sum(
            point_span(p, plan).low for p in firsts.values()
        )
        total = Span(total.low - saved, total.typical, total.high)
    return total


def _workload_lines(plan: Plan, points: Sequence[Point]) -> list[str]:
    """Events, verify, pauses and analyses of the workloads that have them; workloads that
    share a line are named together (hus-fmd's 54 workloads pause alike)."""
    names = {p.workload.name for p in points}
    said: dict[str, list[str]] = {}
    for w in plan.workloads:
        if w.name in names:
            for text in _workload_extras(w, hosts=bool(plan.hosts)):
                said.setdefault(text, []).append(w.name)
    return [f"{_names(who)}: {text}" for text, who in said.items()]


def _names(names: list[str]) -> str:
    if len(names) <= 3:
        return ", ".join(names)
    return f"{len(names)} workloads ({names[0]}, {names[1]} ... {names[-1]})"


def _workload_extras(w: Workload, hosts: bool = False) -> list[str]:
    lines = []
    for event in w.events:
        length = f" for {format_duration(event.duration)}" if event.duration else ""
        kind = f" ({event.kind})" if event.label else ""  # else the name says the kind
        lines.append(f"event {event.name}{kind} {event.when_text()}{length}, every point")
    if w.verify:
        where = "each host's first target (over SSH)" if hosts else "the first target"
        lines.append(f"verify: checkable writes in the last {format_size(w.verify.region)} of "
                     f"{where}, read back after each point")  # fmt: skip
    if w.pause_after == "gc":
        lines.append("a pause after each point of bytes written / GC throughput (known once "
                     "measured)")  # fmt: skip
    elif w.pause_after:
        lines.append(f"a pause of {format_duration(w.pause_after)} after each point")
    if w.analysis:
        lines.append(f"analysis {', '.join(w.analysis)} of each point")
    return lines


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _grid_phase(plan: Plan, points: list[Point]) -> Phase:
    names = list(dict.fromkeys(p.workload.name for p in points))
    levels = {len([p for p in points if p.workload.name == n and p.repetition == 1])
              for n in names}  # fmt: skip
    per = _count(levels.pop(), "load level") + " each" if len(levels) == 1 else "their load levels"
    repeats = {p.repetition for p in points}
    per += f", measured {len(repeats)} times" if len(repeats) > 1 else ""
    adaptive = " (adaptive: fewer when the optimum is found early)" if any(
        p.adaptive != "off" for p in points) else ""  # fmt: skip
    title = f"{_count(len(points), 'point')}: {_count(len(names), 'workload')} x {per}{adaptive}"
    return Phase("points", title, _points_span(points, plan), len(points),
                 tuple(_workload_lines(plan, points)))  # fmt: skip


def _rounds_phase(plan: Plan) -> Phase:
    assert plan.rounds is not None
    rounds = plan.rounds
    per_round = round_points(plan, 1)
    one = _points_span(per_round, plan)
    span = Span(one.low * rounds.window, one.typical * rounds.window,
                None if one.high is None else one.high * rounds.max)  # fmt: skip
    title = (f"SNIA rounds: {rounds.window} to {rounds.max} rounds of {len(per_round)} points "
             f"({format_duration(one.typical)} each) until {rounds.track} is steady over "
             f"{rounds.window} rounds")  # fmt: skip
    return Phase("rounds", title, span, len(per_round) * rounds.max,
                 tuple(_workload_lines(plan, per_round)))  # fmt: skip


def _special_phases(plan: Plan) -> list[Phase]:
    """The registered test kinds', in the order they run."""
    return [phase for kind in TEST_KINDS if (phase := kind.outline(plan))]


def _setup_phases(plan: Plan, facts: TargetFacts) -> list[Phase]:
    phases = []
    if facts.layout:
        nbytes = sum(facts.layout.values())
        title = f"lay out {len(facts.layout)} target file(s): {format_size(nbytes)} of random data"
        phases.append(Phase("prepare", title, _write_span(nbytes)))
    if plan.hosts:
        title = f"start fio servers on {len(plan.hosts)} host(s)"
        phases.append(Phase("hosts", title, Span(*HOSTS_START_S)))
    if plan.purge:
        count = len(facts.blocks)
        title = f"purge: blkdiscard {count} block device(s)" + (
            "; files cannot be purged" if len(plan.targets) > count else "")  # fmt: skip
        phases.append(Phase("purge", title, Span(0.0, min(1.0, count), PURGE_HIGH_S * count)))
    if plan.precondition:
        pre = plan.precondition
        files = sum(t.size or 0 for t in plan.targets if t.path not in facts.blocks)
        written = (files + sum(facts.blocks.values())) * pre.passes
        title = (f"precondition: write the targets {pre.passes:g} times over ({pre.pattern} "
                 f"{format_size(pre.bs)}, {format_size(int(written))} in all)")  # fmt: skip
        phases.append(Phase("precondition", title, _write_span(written)))
    return phases


def plan_outline(plan: Plan, facts: TargetFacts | None = None) -> Outline:
    """Every phase of a run of `plan` on targets described by `facts`, in the run's order."""
    phases = _setup_phases(plan, facts or TargetFacts())
    if plan.rounds:
        phases.append(_rounds_phase(plan))
    grid = expand(plan)
    if grid and plan.scenarios:  # one phase per scenario: its steps, then its points
        phases += [scenario_phase(s, _grid_phase(plan, [p for p in grid if p.scenario == s.name]))
                   for s in plan.scenarios]  # fmt: skip
    elif grid:
        phases.append(_grid_phase(plan, grid))
    phases += _special_phases(plan)
    phases.append(Phase("report", "results tables and the HTML report", Span(*FIXED_S)))
    return Outline(tuple(phases), tuple(_notes(plan) + unwritten_note(plan, grid, facts)))


def unwritten_note(plan: Plan, grid: Sequence[Point], facts: TargetFacts | None) -> list[str]:
    """Block devices read before this run writes them (and no precondition): the reads of
    never-written blocks that run/written.py marks `unwritten-region`, said before the run."""
    blocks = sorted((facts.blocks if facts else {}).keys())
    if not blocks or plan.precondition is not None:
        return []
    first_write = next((i for i, p in enumerate(grid) if p.workload.read < 100), len(grid))
    early = list(dict.fromkeys(p.workload.name for p in grid[:first_write]
                               if p.workload.read > 0))  # fmt: skip
    if not early:
        return []
    return [f"block device(s) {', '.join(blocks)}: {', '.join(early)} read before any point "
            "of this run writes: a thin LUN answers blocks nobody wrote from metadata, faster "
            "than media (marked unwritten-region, docs/validity.md); precondition: "
            "{passes: 1} writes every target first"]  # fmt: skip


def _notes(plan: Plan) -> list[str]:
    notes = []
    for e in plan.acceptance:
        named = (("min_iops", e.min_iops), ("min_mbps", e.min_mbps),
                 ("max_lat_mean", e.max_lat_mean), ("max_lat_p99", e.max_lat_p99))  # fmt: skip
        bounds = [f"{k} {v:g}" for k, v in named if v]
        matched = [w.name for w in plan.workloads if fnmatch.fnmatchcase(w.name, e.workload)]
        notes.append(f"acceptance: {e.name or e.workload}: {', '.join(bounds)} "
                     f"({', '.join(matched) or 'no workload in this run'}); exit code 3 "
                     "when it fails")  # fmt: skip
    steps = [st for s in plan.scenarios or [] for st in (*s.before, *s.after)]
    if any(e.by_operator for w in plan.workloads for e in w.events) or any(s.prompt for s in steps):
        notes.append("prompts wait for the operator in a terminal (so no upper limit); "
                     "elsewhere they are assumed done")  # fmt: skip
    return notes
