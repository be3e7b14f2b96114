"""Conformance: does a run keep the rules of the methodology it claims? (docs/conformance.md)

Each built-in methodology's rules are data (`RULES`): a rule's words, its source, and the name
of the check that judges it with its arguments; the checks compare the plan the run ran (after
`--scale`, `--only` and `--set`) with the template's own, and read what the run recorded
(purge, preconditioning, SNIA rounds). Pure functions: no store, no I/O.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arraybench.finding_kinds import PRECONDITION, PURGE, ROUNDS
from arraybench.plan.model import Plan
from arraybench.records import Finding
from arraybench.units import format_size

KEPT, BROKEN, NOT_APPLICABLE = "kept", "broken", "not applicable"
PTS = "SNIA SSS PTS"  # as docs/methodologies/snia-pts.md reads it


@dataclass(frozen=True)
class Rule:
    id: str
    text: str  # what the methodology asks, as a reader reads it
    source: str  # where the rule comes from (the seed, the specification's section)
    check: str  # a name of CHECKS
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunFacts:
    """What the checks read: the run's plan and the template's, and what the run recorded."""

    plan: Plan
    template: Plan
    scale: float
    findings: Sequence[Finding]
    workloads_run: frozenset[str]  # the workloads with at least one stored point


@dataclass(frozen=True)
class Judged:
    rule: Rule
    verdict: str  # KEPT, BROKEN or NOT_APPLICABLE
    why: str


RULES: dict[str, tuple[Rule, ...]] = {
    "quick": (
        Rule("workloads", "all five workloads: random 8 KiB read, write and 70/30, sequential "
             "128 KiB read and write", "quick template (docs/methodologies/quick.md)",
             "workloads_complete"),
        Rule("ladder", "the load ladder 1, 2, 4, 8, 16 workers at iodepth 1",
             "quick template", "load_same"),
        Rule("duration", "each point measured 5 s after a 1 s warm-up", "quick template",
             "timing_at_least"),
        Rule("scale", "durations and sizes at the template's full scale",
             "quick template", "full_scale"),
    ),
    "snia-pts": (
        Rule("purge", "the device purged before the test", f"{PTS}: purge", "purged"),
        Rule("precondition", "workload-independent preconditioning: at least twice the "
             "capacity written with 128 KiB sequential writes",
             f"{PTS}: workload-independent preconditioning", "preconditioned", {"passes": 2.0}),
        Rule("matrix", "the whole IOPS matrix (8 block sizes x 7 read/write mixes), the "
             "throughput and latency tests", f"{PTS}: IOPS, throughput and latency tests",
             "workloads_complete", {"match": ["iops-*", "tp-*", "lat-*"]}),
        Rule("round", "each test of a round runs 1 minute (write saturation: 6 hours)",
             f"{PTS}: rounds of 1-minute tests", "timing_at_least"),
        Rule("steady", "steady state reached: 4 KiB random write IOPS over a 5-round window "
             "within 20 % of its average and its slope x 4 within 10 %", f"{PTS}: steady state",
             "steady_reached"),
        Rule("rounds", "at most 25 rounds, a 5-round window", f"{PTS}: steady state (round limit)",
             "rounds_same"),
        Rule("load", "the thread count and queue depth the template gives (4 x 8; throughput "
             "1 x 32; latency QD1, 1 thread)", f"{PTS}: test parameters", "load_same"),
        Rule("scale", "durations and sizes at the template's full scale",
             f"{PTS}: every test at full size", "full_scale"),
    ),
}  # fmt: skip


def _seed(name: str, workloads: str, load: str, timing: str) -> tuple[Rule, ...]:
    """A seed report's template: the workloads, the load and the timing it gives, at full
    scale (its source: the template and its page)."""
    source = f"{name} template (docs/methodologies/{name}.md)"
    return (
        Rule("workloads", workloads, source, "workloads_complete"),
        Rule("load", load, source, "load_same"),
        Rule("duration", timing, source, "timing_at_least"),
        Rule("scale", "durations and sizes at the template's full scale", source,
             "full_scale"),
    )  # fmt: skip


RULES |= {
    "inout": _seed("inout", "all 12 workloads: frontend and backend x random 8 KiB and "
                   "sequential 128 KiB x read, write and 50/50",
                   "the workers-per-host ladder 1, 2, 4, 8, 16, 32, 64 at iodepth 1, on every "
                   "target at once", "each point measured 60 s after a 10 s warm-up"),
    "hus-fmd": _seed("hus-fmd", "all 56 workloads: group 1's two write cliffs and group 2's "
                     "profile matrix", "the numjobs ladder 1, 2, 4, 8, 16, 32, 64, 128, 160, 192 "
                     "and each workload's own load (the write cliffs: 64 jobs x iodepth 64)",
                     "each point measured 60 s after a 10 s warm-up (the write cliffs: 5 h)"),
    "dbi-db": _seed("dbi-db", "all 6 workloads: 8 KiB random read and write, sequential read "
                    "and write, 1 MiB read and write", "numjobs per device over 1, 5, 10, 15, "
                    "20, 30, 40, 50, 75, 100 at iodepth 1, on every device",
                    "each point measured 60 s after a 5 s warm-up"),
    "cscs": _seed("cscs", "all 4 workloads: random 4 KiB read and write, sequential 1 MiB "
                  "read and write", "32 threads at iodepth 8",
                  "each point measured 60 s after a 10 s warm-up"),
    "aerodisk": _seed("aerodisk", "all 3 workloads: 4 KiB random 70/30, 128 KiB sequential "
                      "write and read", "16 jobs at iodepth 32",
                      "each point measured 1 h after a 15 min warm-up"),
}  # fmt: skip


def _names(plan: Plan, match: Sequence[str] | None) -> list[str]:
    names = [w.name for w in plan.workloads]
    if not match:
        return names
    return [n for n in names if any(fnmatch.fnmatchcase(n, m) for m in match)]


def workloads_complete(rule: Rule, run: RunFacts) -> tuple[str, str]:
    want = _names(run.template, rule.args.get("match"))
    missing = [n for n in want if n not in run.workloads_run]
    if not missing:
        return KEPT, f"all {len(want)} run"
    shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
    return BROKEN, f"{len(missing)} of {len(want)} not run (cut by --only?): {shown}"


def _timing(plan: Plan, name: str) -> tuple[float, float] | None:
    for w in plan.workloads:
        if w.name == name:
            t = getattr(w, "timing", None) or plan.timing
            return float(t.duration), float(t.ramp)
    return None


def timing_at_least(rule: Rule, run: RunFacts) -> tuple[str, str]:
    short = []
    for name in _names(run.template, None):
        want, got = _timing(run.template, name), _timing(run.plan, name)
        if want and got and (got[0] < want[0] or got[1] < want[1]):
            short.append(f"{name}: {got[0]:g} s after {got[1]:g} s, the rule {want[0]:g} s "
                         f"after {want[1]:g} s")  # fmt: skip
    if not short:
        return KEPT, "every point as long as the template's"
    cause = f" (--scale {run.scale:g})" if run.scale < 1 else " (--set?)"
    return BROKEN, f"{len(short)} workload(s) shorter{cause}: {short[0]}"


def load_same(rule: Rule, run: RunFacts) -> tuple[str, str]:
    want = run.template.load.model_dump(exclude_none=True)
    got = run.plan.load.model_dump(exclude_none=True)
    changed = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    template = {t.name: getattr(t, "load", None) for t in run.template.workloads}
    # matched by name: --only leaves some out
    per_workload = [
        w.name
        for w in run.plan.workloads
        if w.name in template and getattr(w, "load", None) != template[w.name]
    ]
    if not changed and not per_workload:
        return KEPT, "the template's load"
    what = changed[0] if changed else f"{per_workload[0]}'s load"
    shown = f"{got.get(what)!r} instead of {want.get(what)!r}" if changed else "changed"
    return BROKEN, f"load.{what} {shown} (--set?)" if changed else f"{what} {shown} (--set?)"


def full_scale(rule: Rule, run: RunFacts) -> tuple[str, str]:
    if run.scale == 1:
        return KEPT, "run at full scale"
    return BROKEN, f"durations and sizes x{run.scale:g} (--scale {run.scale:g})"


def purged(rule: Rule, run: RunFacts) -> tuple[str, str]:
    if not run.template.purge:
        return NOT_APPLICABLE, "the template purges nothing"
    found = PURGE.among(run.findings)
    targets = [t for f in found for t in f["targets"]]
    if not targets:
        return BROKEN, "no purge recorded (purge: false, or --set?)"
    left = [t["target"] for t in targets if not t["purged"]]
    if left:
        how = next(t["how"] for t in targets if not t["purged"])
        return BROKEN, f"{left[0]} not purged ({how})"
    return KEPT, f"{len(targets)} target(s) purged"


def preconditioned(rule: Rule, run: RunFacts) -> tuple[str, str]:
    found = PRECONDITION.among(run.findings)
    if not found:
        return BROKEN, "no preconditioning recorded"
    passes = min(float(f["passes"]) for f in found)
    if passes < float(rule.args.get("passes", 2.0)):
        return BROKEN, f"{passes:g} x the capacity written"
    written = format_size(sum(int(f["bytes"]) for f in found))
    return KEPT, f"{passes:g} x the capacity written ({written})"


def steady_reached(rule: Rule, run: RunFacts) -> tuple[str, str]:
    found = ROUNDS.among(run.findings)
    if not found:
        return BROKEN, "no SNIA rounds recorded"
    last = found[-1]
    if last["steady"]:
        return KEPT, f"steady after {last['round']} round(s) of {last['track']}"
    return BROKEN, f"not steady after {last['round']} round(s) of {last['track']}"


def rounds_same(rule: Rule, run: RunFacts) -> tuple[str, str]:
    want, got = run.template.rounds, run.plan.rounds
    if want is None:
        return NOT_APPLICABLE, "the template has no rounds"
    if got is None:
        return BROKEN, "no rounds in the plan run"
    if (got.max, got.window) != (want.max, want.window):
        return BROKEN, f"max {got.max}, window {got.window} (the rule: {want.max}, {want.window})"
    return KEPT, f"max {got.max}, window {got.window}"


CHECKS: dict[str, Callable[[Rule, RunFacts], tuple[str, str]]] = {
    "workloads_complete": workloads_complete,
    "timing_at_least": timing_at_least,
    "load_same": load_same,
    "full_scale": full_scale,
    "purged": purged,
    "preconditioned": preconditioned,
    "steady_reached": steady_reached,
    "rounds_same": rounds_same,
}


def judge(methodology: str, run: RunFacts) -> list[Judged]:
    """Each of the methodology's rules judged on the run, in the order they are given."""
    return [Judged(r, *CHECKS[r.check](r, run)) for r in RULES.get(methodology, ())]


def conforms(judged: Sequence[Judged]) -> bool:
    """Every rule kept (or not applicable): only then may a report say "conforms"."""
    return bool(judged) and all(j.verdict != BROKEN for j in judged)
