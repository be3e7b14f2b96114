"""The run's own notes, after every section's: partial points, the purge and the
preconditioning done before the first point, and fio against the kernel (once per run)."""

from __future__ import annotations

from arraybench.analysis.cliff import no_gc_rate_why
from arraybench.analysis.findings import Disagreements, summarize_disagreements
from arraybench.analysis.kernelcheck import MIN_SECONDS, KernelView, not_judged, views_by_point
from arraybench.analysis.validity import KERNEL_KINDS, flags_by_point
from arraybench.finding_kinds import CLIFF, PRECONDITION, PURGE
from arraybench.report.model import ReportModel
from arraybench.report.sections.inputs import RunInputs
from arraybench.targets.condition import purge_lines


def section(model: ReportModel, run: RunInputs) -> None:
    points, findings = run.points, run.findings
    partial = [p.key for p in points if p.partial]
    if partial:
        model.notes.append(f"partial points (a host failed; the others' data kept): "
                           f"{', '.join(partial)}")  # fmt: skip
    for purge in PURGE.among(findings):
        model.notes += purge_lines(purge["targets"])
    for d in PRECONDITION.among(findings):
        model.notes.append(f"preconditioned: {d['bytes'] / 1e9:,.2f} GB of {d['bs'] // 1024} KiB "
                           f"{d['pattern']} writes ({d['passes']:g} x capacity) in "
                           f"{d['seconds']:,.0f} s")  # fmt: skip
    by_id = {p.id: p.key for p in points}
    # the validity flags judged from the one stored comparison (analysis.kernelcheck): the
    # note, the flags table and the column speak of the same number
    flags = [(by_id.get(point_id, "?"), flag.why)
             for point_id, found in flags_by_point(findings).items()
             for flag in found if flag.kind in KERNEL_KINDS]  # fmt: skip
    compared = sum(1 for p in points if p.kernel_iops is not None or p.kernel_mbps is not None)
    model.notes += disagreement_notes(summarize_disagreements(flags, compared))
    model.notes += not_judged_notes(views_by_point(findings), by_id)
    model.notes += gc_pause_notes(run)


def not_judged_notes(views: dict[int, KernelView], keys: dict[int, str]) -> list[str]:
    """The points whose fio-against-kernel comparison was not judged, and why, once per run."""
    why = {pid: reason for pid, v in views.items() if (reason := not_judged(v))}
    if not why:
        return []
    first = min(why)
    return [f"fio against the kernel not judged on {len(why)} of {len(views)} points (their "
            f"'kernel vs fio' figure shown, not graded either way): at least "
            f"{MIN_SECONDS} whole seconds in common are needed, and a gap that holds second "
            f"by second; e.g. {keys.get(first, '?')}: {why[first]}"]  # fmt: skip


def gc_pause_notes(run: RunInputs) -> list[str]:
    """`pause_after: gc` points that ran without their pause (no GC rate known), once per run,
    with the reason the run had (the console said it once too)."""
    if run.plan is None:
        return []
    gc = {w.name for w in run.plan.workloads if w.pause_after == "gc"}
    skipped = [p for p in run.points if p.workload in gc and not p.pause_s]
    if not skipped:
        return []
    names = ", ".join(dict.fromkeys(p.workload for p in skipped))
    why = no_gc_rate_why(CLIFF.among(run.findings))
    return [f"pause_after: gc was skipped after {len(skipped)} of the points that ask for it "
            f"({names}): {why}; each of them started while the array may still have been "
            "collecting the garbage of the point before"]  # fmt: skip


def disagreement_notes(found: Disagreements | None) -> list[str]:
    """fio against the kernel, once per run: how many points, the worst, the likely cause."""
    if found is None:
        return []
    graded = ""
    if found.same_bytes:  # bytes first (analysis.validity): request counts alone are remarks
        graded = (f" ({found.same_bytes} of them the same bytes in other requests: merged or "
                  "split I/O, or a file's journal: remarks, kept in the headline "
                  "figures)")  # fmt: skip
    return [
        f"fio and the kernel (/proc/diskstats) disagree on {found.points} of "
        f"{found.of} points{graded}; worst {found.worst_point}: {found.worst}; likely cause: "
        f"{found.likely_cause} (per point: the column 'kernel vs fio' of the points table)"
    ]
