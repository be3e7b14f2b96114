"""The Conformance table: each rule of the methodology the run claims (a built-in template's
name; analysis/conformance.py), kept, broken with why, or not applicable; its caption says
"conforms to X" only when no rule is broken."""

from __future__ import annotations

from arraybench.analysis.conformance import RULES, RunFacts, conforms, judge
from arraybench.errors import ArraybenchError
from arraybench.plan.catalog import load_template
from arraybench.plan.model import Plan
from arraybench.report.model import Internal, ReportModel, ReportTable
from arraybench.report.sections.inputs import RunInputs

# the options that cut, scaled or changed the run, and the engineer's guesses at which:
# not in a customer's report (the verdicts and the figures stay)
INTERNAL = (Internal(r" \(--scale [^)]*\)"), Internal(r" \(cut by --only\?\)"),
            Internal(r" \(--set\?\)"))  # fmt: skip
CLAIM_LABEL = "conforms_to"  # a user plan's label naming the methodology it claims


def claimed(plan: Plan) -> str | None:
    """The methodology a plan claims: its `conforms_to` label, else a built-in template's own
    name (`arraybench run snia-pts`); None: none with rules."""
    name = plan.labels.get(CLAIM_LABEL) or plan.name
    return name if name in RULES else None


def section(model: ReportModel, run: RunInputs) -> None:
    if run.plan is None:
        return
    label = run.plan.labels.get(CLAIM_LABEL)
    if label and label not in RULES:
        model.notes.append(f"the plan claims to conform to {label!r}, for which arraybench "
                           f"states no rules (it does for {', '.join(RULES)})")  # fmt: skip
    if (name := claimed(run.plan)) is None:
        return
    try:
        template = load_template(name)
    except ArraybenchError:  # a template this arraybench no longer ships
        return
    facts = RunFacts(run.plan, template, run.run.scale, run.findings,
                     frozenset(p.workload for p in run.points))  # fmt: skip
    judged = judge(name, facts)
    rows = [[j.rule.text, j.verdict, j.why, j.rule.source] for j in judged]
    broken = [j.rule.id for j in judged if j.verdict == "broken"]
    caption = (f"conforms to {name}: every rule kept" if conforms(judged) else
               f"does not conform to {name}: {len(broken)} of {len(judged)} rules "
               f"broken ({', '.join(broken)})")  # fmt: skip
    # first among the notes: the notes box, read right after the set-up, says it too
    model.notes.insert(0, f"{caption} (see the Conformance table)")
    columns = ["Rule", "Verdict", "Why", "Source"]
    model.tables.append(ReportTable(f"Conformance: {name}", columns, rows, caption))
