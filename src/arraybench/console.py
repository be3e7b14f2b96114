"""Terminal output: the progress bar with ETA, result tables, warnings. Only cli/ uses it.

No string is ever read as rich markup: names, paths, labels and messages come from users and
may hold `[/]` or `[bold]`. Both consoles have markup (and emoji codes) off, so every string
printed, in a table, a title or a rule is shown as it is; arraybench's own styling is built
from Text pieces (`styled`), never from markup text."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import rich.box
from rich import table as rich_table
from rich.cells import cell_len
from rich.console import Console
from rich.live import Live
from rich.text import Text

from arraybench.errors import interruption, utf8_safe
from arraybench.live.terminal import second_line, view_lines

if TYPE_CHECKING:  # the plan model (pydantic) and the run's modules load only for `run`
    from pathlib import Path

    from arraybench.bundle.load import Loaded
    from arraybench.bundle.make import Made
    from arraybench.bundle.verify import Verified
    from arraybench.console_text import Line, TextTable
    from arraybench.importer import ImportResult
    from arraybench.live.state import Snapshot
    from arraybench.plan.model import Plan
    from arraybench.report.attach import Attached
    from arraybench.report.model import ReportModel, ReportTable
    from arraybench.report.show import ShowFacts
    from arraybench.run.checks import HostsCheck, PlanCheck
    from arraybench.run.outline import Outline, TargetFacts
    from arraybench.run.revert import Reverted
    from arraybench.store.db import RunRecord


class SafeConsole(Console):
    """A console that shows every string it is given as text: a control character in a
    string (a path, a label, a command's output) is printed escaped, never acted on by the
    terminal (arraybench's own styles are Text spans, never characters in strings)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(shown_block(o) if isinstance(o, str) else o for o in objects), **kwargs)

    def rule(self, title: Any = "", **kwargs: Any) -> None:
        super().rule(shown(title) if isinstance(title, str) else title, **kwargs)


class Table(rich_table.Table):
    """rich's Table with its title, caption and text cells shown as text (SafeConsole)."""

    def __init__(self, *headers: Any, **kwargs: Any) -> None:
        for key in ("title", "caption"):
            if isinstance(kwargs.get(key), str):
                kwargs[key] = shown(kwargs[key])
        super().__init__(*headers, **kwargs)

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        super().add_row(*(shown_block(r) if isinstance(r, str) else r for r in renderables),
                        **kwargs)  # fmt: skip


# a pipe or a CI log is not 80 columns wide: keep the tables whole there
out = SafeConsole(
    highlight=False,
    soft_wrap=True,
    width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160,
    markup=False,
    emoji=False,
)
err = SafeConsole(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)

# a message is one line: control characters of user strings are shown escaped
# (C0, DEL and C1: a terminal takes 0x9b as CSI, as ESC [), and the line and bidi overrides
# that make a line show other text than it holds
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(32), *range(127, 160)]} | {
    10: "\\n", 13: "\\r", 9: "\\t"} | {c: f"\\u{c:04x}" for c in [
    0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]}  # fmt: skip


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from plain strings and (string, style) pairs; nothing in them is markup, and no
    control character in them acts (shown escaped; a line break stays a line break)."""
    return Text.assemble(*(shown_block(p) if isinstance(p, str) else (shown_block(p[0]), p[1])
                           for p in parts))  # fmt: skip


MAX_ERROR_CHARS = 1000  # a message quoting a huge user string stays readable


_BLOCK = {c: v for c, v in _CONTROL.items() if c != 10}  # a line break stays one


def shown_block(text: str) -> str:
    """Text of several lines for the terminal: as `shown`, its line breaks kept."""
    return utf8_safe(text.translate(_BLOCK))


def shown(text: str) -> str:
    """Text for the terminal: control characters escaped, and a byte of a path that is not
    UTF-8 (a surrogate escape) shown as `\\xNN` instead of failing the write."""
    return utf8_safe(text.translate(_CONTROL))


def one_line(text: str) -> str:
    """The text on one line (control characters escaped), its middle cut when very long."""
    text = shown(text)
    if len(text) <= MAX_ERROR_CHARS:
        return text
    cut = len(text) - MAX_ERROR_CHARS
    return f"{text[:700]}[... {cut} characters ...]{text[-(MAX_ERROR_CHARS - 700) :]}"


def fitted(table: Table) -> Table:
    """Wrap, never cut: at 80 or 100 columns a long name folds onto a second line instead of
    ending in `…` (two names cut to the same text would be two different rows saying one)."""
    for column in table.columns:
        column.overflow = "fold"
    return table


def narrow_box() -> dict[str, Any]:
    """Under 130 columns a wide table drops its vertical rules: two columns more fit."""
    if out.width >= 130:
        return {}
    return {"box": rich.box.SIMPLE_HEAD, "pad_edge": False, "collapse_padding": True}


def print_table(table: Table) -> None:
    """A table that fits the terminal; a title or caption longer than it is wrapped (the
    console does not wrap, so that piped tables stay whole)."""
    width = out.width
    title, caption = table.title, table.caption
    long_title = isinstance(title, str) and cell_len(title) > width
    long_caption = isinstance(caption, str) and cell_len(caption) > width
    if long_title:
        table.title = None
        out.print("\n".join(textwrap.wrap(str(title), width)), markup=False)
    if long_caption:
        table.caption = None
    out.print(fitted(table))
    if long_caption:
        out.print("\n".join(textwrap.wrap(str(caption), width)), markup=False)


def print_wrapped(lines: Sequence[tuple[str, str]], name_width: int) -> None:
    """`name  text` lines, the text wrapped under itself to the terminal (at most 100)."""
    width = min(out.width, 100)
    for name, text in lines:
        body = textwrap.wrap(text, max(20, width - name_width - 1)) or [""]
        out.print(styled((f"{name:{name_width}s}", "bold"), f" {body[0]}"))
        for more in body[1:]:
            out.print(f"{'':{name_width}s} {more}")


def summary_table(model: ReportModel) -> Table:
    from arraybench.report.sections.headlines import SUMMARY_LINK  # a report is loaded already

    table = Table(
        title=f"{model.title} — optimal @ latency / max, min latency ({model.run_id})",
        caption=SUMMARY_LINK,  # where the rules are (docs/headline.md)
        show_lines=True,
    )
    table.add_column("Workload", style="bold")
    for column in model.summary_columns:
        table.add_column(column, justify="center")
    for row in model.summary:
        cells = []
        for column in model.summary_columns:
            cell = row.cells.get(column)
            cells.append(
                styled((cell.optimal, "bold"), f"\n{cell.extremes}\n", (cell.bounded, "dim"))
                if cell
                else "–"
            )
        table.add_row(row.workload, *cells)
    return table


def print_report_tables(tables: Sequence[ReportTable]) -> None:
    for extra in tables:
        table = Table(title=extra.title, caption=extra.caption or None, **narrow_box())
        for column in extra.columns:
            table.add_column(column)
        for row in extra.rows:
            table.add_row(*row)
        print_table(table)


PRINTED_CELLS = 10_000  # cells of result tables a command prints; a big run's rest: the report


def print_model(model: ReportModel) -> None:
    """The result tables a run ends with: the summary, then any method-specific tables, up to
    PRINTED_CELLS cells (rich lays out ~1,000 rows a second: a 30,000-point run's summary and
    189 tables, 22,600 lines, took 8.9 s of its `report`); what is left is said in one line."""
    width = len(model.summary_columns) + 1
    summary = model.summary[: max(PRINTED_CELLS // width, 1)]
    if summary:
        print_table(summary_table(replace(model, summary=summary)))
    budget, left = PRINTED_CELLS - len(summary) * width, 0
    shown: list[ReportTable] = []
    for table in [*model.tables, *model.verdicts]:
        cells = len(table.rows) * len(table.columns)
        if cells <= budget and not left:
            shown.append(table)
            budget -= cells
        else:
            left += 1
    print_report_tables(shown)
    cut = len(model.summary) - len(summary)
    said = [f"{cut:,} more summary rows"] * bool(cut) + [f"{left:,} more table(s)"] * bool(left)
    if said:
        out.print(f"(a big run: {' and '.join(said)} in the report, not printed here)",
                  markup=False)  # fmt: skip
    print_notes(model.notes)


NOTE_INDENT = " " * 6  # a note's further lines start under its first word


def print_notes(notes: list[str]) -> None:
    """Each note as a hanging paragraph within 100 columns (or the terminal's width)."""
    width = min(out.width, 100)
    for note in notes:
        first, *rest = textwrap.wrap(f"note: {note}", width, subsequent_indent=NOTE_INDENT,
                                     break_on_hyphens=False, break_long_words=False)  # fmt: skip
        out.print(styled(("note:", "yellow"), first[len("note:") :]))
        for line in rest:
            out.print(line)


def print_outline(plan: Plan, outline: Outline, facts: TargetFacts) -> None:
    """plan check: the targets' verdict, then every phase the run will execute with its time."""
    from arraybench.console_text import outline_lines

    out.print("\n".join(outline_lines(plan, outline, facts, min(out.width, 100))), markup=False)


def print_error(message: str) -> None:
    """One line on stderr; a closed terminal (SIGHUP) must not turn it into a traceback."""
    with contextlib.suppress(OSError):
        err.print(styled(("error:", "red"), f" {one_line(message)}"), soft_wrap=True)


def print_note(message: str) -> None:
    with contextlib.suppress(OSError):
        err.print(styled(("note:", "yellow"), f" {one_line(message)}"))


def watch_view(snapshots: Iterable[Snapshot]) -> Snapshot | None:
    """`arraybench watch`: the live view redrawn in place on a terminal; elsewhere one line
    per second and each event once. The last snapshot (how the run ended)."""
    last: Snapshot | None = None
    if out.is_terminal:
        with Live(console=out, auto_refresh=False) as live:
            for snap in snapshots:
                last = snap
                lines = "\n".join(one_line(line) for line in view_lines(snap, events=5))
                live.update(Text(lines, no_wrap=True, overflow="crop"), refresh=True)
        return last
    seen: set[tuple[str, str, str, float]] = set()
    for snap in snapshots:
        key = snap["point"]["key"] if snap["point"] else None
        before = last["point"]["key"] if last and last["point"] else None
        head = view_lines(snap)[0]
        if last is None or (key is not None and key != before):
            out.print(one_line(head), markup=False)
        last = snap
        for e in snap["events"]:
            if (mark := (e["point"], e["label"], e["action"], e["t"])) not in seen:
                seen.add(mark)
                out.print(one_line(f"event {e['label']} {e['action']} ({e['outcome']}) in "
                                   f"{e['point']}"), markup=False)  # fmt: skip
        if (line := second_line(snap)) != head:  # a second measured, or how the run ended
            out.print(one_line(line), markup=False)
    return last


# What the commands show, printed here (rendered by console_text.py where it is text)


def print_json(data: object) -> None:
    print(json.dumps(data, indent=2))


def print_text_table(text: TextTable | str) -> None:
    """A TextTable as a rich table that fits the terminal; a str: a table laid out already."""
    if isinstance(text, str):
        out.file.write(shown_block(text))
        return
    table = Table(title=text.title, **(narrow_box() if text.narrow else {}))
    for column in text.columns:
        if column in text.whole:
            table.add_column(column, no_wrap=True)
        else:
            table.add_column(column, justify=text.justify)
    for row in text.rows:
        table.add_row(*row)
    print_table(table)
    if text.after:
        out.print(text.after)


def print_lines(lines: Sequence[Line]) -> None:
    for parts in lines:
        out.print(styled(*parts), soft_wrap=False)


def print_show(facts: ShowFacts) -> None:
    """`show`: the points table, the lines under it, the scenarios' impact tables."""
    from arraybench.console_text import points_table, show_lines

    print_text_table(points_table(facts.run.id, facts.points, out.width))
    print_lines(show_lines(facts, out.width))
    if facts.impacts:
        print_report_tables(facts.impacts)


def interactive() -> bool:
    """An operator at a terminal can answer the run's prompts (else they are assumed done)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def print_runs(rows: Sequence[tuple[RunRecord, int]], results: str, as_json: bool) -> None:
    from dataclasses import asdict

    from arraybench.console_text import runs_table

    if as_json:
        print_json([asdict(run) | {"points_done": done} for run, done in rows])
        return
    print_text_table(runs_table(rows, results, out.width))
    for run, _ in rows:  # listed all the same: the user finds which one to repair or delete
        if run.damaged:
            print_note(f"run {run.id}: stored {', '.join(run.damaged)} cannot be read "
                       "(the store was edited or damaged)")  # fmt: skip


def print_plan_check(check: PlanCheck) -> None:
    """plan check: the outline, the host tuning, the fio, the points, then their job files."""
    from arraybench.console_text import fio_found_lines

    print_outline(check.plan, check.outline, check.facts)
    for line in check.tuning:  # restored after the run
        out.print(line, markup=False)
    for line in fio_found_lines(check.fio) if check.fio is not None else []:
        out.print(line, markup=False)
    out.print("points:" if check.points else "no points outside the rounds")
    for point in check.points:
        out.print(f"  {point.seq:3d}  {point.key:32s} {point.expected_seconds:6.0f}s")
    if (rounds := check.plan.rounds) is not None:
        out.print(f"each SNIA round ({rounds.window} to {rounds.max}):")
        for point in check.per_round:
            out.print(f"  {point.seq:3d}  {point.key:32s} {point.expected_seconds:6.0f}s")
    for whose, job in check.jobs:
        out.rule(f"job file of {whose}")
        out.print(job, markup=False)
    if check.data is not None:
        from arraybench.run.data_reduction import sample_lines

        out.rule("data (sampled through fio, measured with zlib level 1 per granule)")
        for line in sample_lines(check.data) or ["no workload writes"]:
            out.print(line, markup=False)


def print_hosts_check(check: HostsCheck) -> int:
    """Each host's row and problems; the exit code: 1 unless every host is ready."""
    from arraybench.console_text import hosts_table
    from arraybench.hosts import NO_AUTH_WARNING

    print_text_table(hosts_table(check))
    for _, c in check.hosts:
        for problem in c.problems:
            out.print(problem)
    err.print(styled(("note:", "yellow"), f" {' '.join(NO_AUTH_WARNING.split())}"))
    return 0 if check.ok else 1


def print_templates() -> None:
    """`templates`: each built-in plan's name and its description, wrapped under itself."""
    from arraybench.plan import catalog

    lines = catalog.descriptions()
    print_wrapped(lines, max(len(name) for name, _ in lines) + 1)


def print_line(text: str) -> None:
    """One line of the program's own, its strings shown as text."""
    out.print(shown(text))


def print_import(result: ImportResult, results: str) -> None:
    for line in result.notes:
        out.print(styled(("note:", "dim"), f" {line}"))
    for skipped in result.skipped:
        out.print(styled(("skipped", "yellow"), f" {skipped.path}: {skipped.reason}"))
    out.print(styled(
        f"imported {len(result.points)} point(s) from {result.files_examined} file(s) into run ",
        (result.run_id, "bold"), f"; see `arraybench show {result.run_id} --results "
        f"{results}` and `arraybench report {result.run_id}`"))  # fmt: skip


def print_attached(attached: Attached, file: str, run_id: str) -> None:
    out.print(f"attached {attached.samples} samples from {file} to run {run_id}; "
              f"{len(attached.matched)} of {attached.points} points have array samples",
              markup=False)  # fmt: skip
    for p, a in attached.matched:
        bytes_pct = a.mbps_diff_pct  # rounded first: no "-0.0 %" for a hair below fio's
        said = "" if bytes_pct is None else f", MB/s {round(bytes_pct, 1) + 0.0:+.1f} %"
        out.print(f"  {p.key}: fio {a.fio_iops:,.0f} IOPS, array {a.array_iops:,.0f} "
                  f"({a.diff_pct:+.1f} %{said}) {a.verdict}", markup=False)  # fmt: skip


def print_reverted(reverted: Reverted) -> int:
    """Each thing undone, each not undone as an error, and how to let a leftover go (its
    `note`); the exit code: its `code` when anything is left, else 0."""
    for other, pid in reverted.running.items():
        print_note(f"run {other} is running (pid {pid}): its events are reverted "
                   "when it ends; stop it first to revert them here")  # fmt: skip
    problems = reverted.problems
    for line in reverted.done or ([] if problems or not reverted.nothing else [reverted.nothing]):
        out.print(one_line(line), markup=False)
    for line in problems:
        print_error(line)
    if problems and reverted.note:  # a run refuses to start while any is left: how to go on
        print_note(reverted.note)
    return reverted.code if problems else 0


def print_compare(model: ReportModel) -> None:
    """compare's tables, then its notes, each a hanging paragraph under its `note:` (a note
    may be longer than a terminal line)."""
    from dataclasses import replace

    from arraybench.console_text import hanging

    print_model(replace(model, notes=[]))
    for note in model.notes:
        print_lines(hanging(f" {note}", out.width, ("note:", "yellow")))


def escaping_streams() -> None:
    """A path with a byte that is not UTF-8 reaches a table or a message as a surrogate
    escape: printed as `\\udcNN`, never a UnicodeEncodeError (`shown` escapes the ones it
    sees as `\\xNN`; this is for the rest)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def print_watching(run: RunRecord) -> None:
    out.print(f"watching run {run.id} in {run.folder} (Ctrl-C stops watching, not the run)",
              markup=False)  # fmt: skip


def print_watch_end(run_id: str, ended: str, killed: bool, results: str) -> None:
    """`watch`'s last line: how the run ended; a killed one (the store still says running,
    but no process holds the run) with the command that continues it."""
    if killed:
        ended += (f" (its process ended without saying how; `arraybench run --resume {run_id}"
                  f" --results {results}` continues it)")  # fmt: skip
    print_line(f"run {run_id}: {ended}")


def print_bundled(made: Made, run_id: str) -> None:
    for skipped in made.skipped:
        print_note(f"left out of the bundle: {skipped}")
    signed = ", signed" if made.signed else ""
    print_line(f"bundle {made.path}: run {run_id}, {made.members} files, "
               f"{made.bytes_in / 2**20:.1f} MiB in {made.bytes_out / 2**20:.1f} MiB{signed}; "
               f"check it with `arraybench bundle verify {made.path}`")  # fmt: skip


def print_verified(file: Path, verified: Verified) -> int:
    """One line per problem (exit 1), or the one line of a bundle as it was made (exit 0)."""
    for problem in verified.problems:
        print_error(f"{file}: {problem}")
    if verified.problems:
        return 1
    print_line(f"{file}: run {verified.run_id}, {verified.members} files, every one as its "
               f"manifest says; {verified.signature}")  # fmt: skip
    return 0


def print_bundle_imported(loaded: Loaded, results: str) -> None:
    print_line(f"imported run {loaded.run_id} ({loaded.points} point(s), {loaded.files} "
               f"file(s) of its folder) into {results}; see `arraybench show {loaded.run_id} "
               f"--results {results}`")  # fmt: skip


def print_interrupted(
    exc: KeyboardInterrupt, run_id: str | None, results: str, reporting: bool = False
) -> int:
    """A run interrupted: how to continue it (its completed points are saved), or (while its
    report was written) how to write its report. The shell's exit code for the signal."""
    said, code = interruption(exc)
    if reporting:
        print_error(f"{said} while the report was written; run {run_id} is complete: "
                    f"`arraybench report {run_id} --results {results}` writes it")  # fmt: skip
    elif run_id is None:
        print_error(f"{said} before the run was created; nothing to resume, start it again")
    else:
        resume = f"`arraybench run --resume {run_id} --results {results}`"
        print_error(
            f"{said}; run {run_id} is marked interrupted, its completed points are "
            f"saved. Continue with {resume}"
        )
    return code


def print_served(served: str | None) -> None:
    """Where `run --serve` serves the live page (None: nowhere)."""
    if served is not None:
        out.print(served, markup=False, soft_wrap=True)
