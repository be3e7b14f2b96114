"""The report for its reader (model.AUDIENCES): the engineer's holds everything the sections
wrote; the customer's, handed over unedited, leaves out what the sections declare internal
(their `INTERNAL` parts: plan keys, commands, docs paths, advice on changing the plan), the
plan and the job files, the results folder and the columns that say what to change.

Applied once to the view-model, so every format (HTML, PDF, Markdown, Excel) says the same;
the renderers only choose their own fixed words by `model.audience` (interactive hints stay
on the screen in every audience)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from arraybench.errors import ArraybenchError
from arraybench.report.model import (
    AUDIENCES,
    Figure,
    Internal,
    ReportModel,
    ReportTable,
    Timeline,
)

# every section's text may name a page of the docs; a customer has no copy of them
DOCS = (Internal(r"[;,:]?\s*(?:the rules in |each grade and threshold: )?\(?docs/[\w/.-]+\.md\)?"),)
INTERNAL_ROWS = ("results folder",)  # provenance rows: where the engineer's files lie
INTERNAL_COLUMNS = ("What to change",)  # a flag's advice: how to change the plan or the host


def for_audience(
    model: ReportModel, audience: str, internal: Sequence[Internal] = ()
) -> ReportModel:
    """The model as `audience` reads it; `internal`: every section's declared parts."""
    if audience not in AUDIENCES:  # the CLI offers only these: a caller's mistake
        raise ArraybenchError(f"audience {audience}: unknown", f"use one of {', '.join(AUDIENCES)}")
    if audience == "engineer":
        return model
    words = Words([*internal, *DOCS])
    return replace(
        model,
        audience=audience,
        title=customer_title(model),
        notes=words.lines(model.notes),
        notes_box=words.lines(model.notes_box),
        tables=[words.table(t) for t in model.tables],
        verdicts=[words.table(t) for t in model.verdicts],
        appendix=[words.table(t) for t in model.appendix],
        timelines=[words.timeline(t) for t in model.timelines],
        figures=[words.figure(f) for f in model.figures],
        provenance=[(k, words.text(v)) for k, v in model.provenance if k not in INTERNAL_ROWS],
        plan_yaml="",  # the plan's own keys
        job_files={},  # fio's, with arraybench's comments and folders: the engineer's report
        job_series={},
    )


def customer_title(model: ReportModel) -> str:
    """`Storage performance: <system under test>` when the plan names one, else the plan's
    name (a methodology's: `hus-fmd`) without the tool's."""
    named = dict(model.setup).get("System under test")
    plan = model.title.removeprefix("arraybench ").strip()
    return f"Storage performance: {named or plan}"


class Words:
    """Every declared internal part replaced by what a customer reads, in one pass per text."""

    def __init__(self, internal: Sequence[Internal]) -> None:
        self._internal = [(re.compile(i.pattern), i.customer) for i in internal]

    def text(self, text: str) -> str:
        for pattern, customer in self._internal:
            text = pattern.sub(customer, text)
        return text.strip()

    def lines(self, lines: Sequence[str]) -> list[str]:
        """The lines with their internal parts replaced; a line left empty is dropped."""
        return [said for said in map(self.text, lines) if said]

    def table(self, t: ReportTable) -> ReportTable:
        keep = [i for i, c in enumerate(t.columns) if c not in INTERNAL_COLUMNS]
        return replace(
            t,
            title=self.text(t.title),
            caption=self.text(t.caption),
            columns=[t.columns[i] for i in keep],
            rows=[[self.text(r[i]) if i < len(r) else "" for i in keep] for r in t.rows],
        )

    def timeline(self, t: Timeline) -> Timeline:
        return replace(t, findings=self.lines(t.findings))

    def figure(self, f: Figure) -> Figure:
        return replace(f, caption=self.text(f.caption))
