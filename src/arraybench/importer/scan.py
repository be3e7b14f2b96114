"""The scan: files -> candidates (points to be), fio logs attached to them, skipped files
and notes (`Scan`). Each file is recognised by the registry's formats (registry.py, read
through reading.py `read_docs`), its groups of jobs described (describe.py), named
(naming.py, pattern.py) and checked for figures no run can produce (plausible.py)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from arraybench.engines.fio.logs import hist_log_bins, parse_hist_log
from arraybench.engines.fio.plausible import implausible
from arraybench.engines.measurement import EngineDocument
from arraybench.errors import OutputParseError
from arraybench.importer.candidate import Candidate, Skipped, Source
from arraybench.importer.describe import fixed_block_sizes, job_groups, moved_nothing, new_candidate
from arraybench.importer.fio_logs import Log, log_file
from arraybench.importer.format import Skip
from arraybench.importer.grid import per_device
from arraybench.importer.log_points import (
    job_ranges,
    log_candidate,
    log_places,
    log_samples,
    with_bins,
)
from arraybench.importer.naming import drop_duplicates, name_workloads
from arraybench.importer.pattern import apply_pattern, pattern_values
from arraybench.importer.reading import pick_docs, read_docs
from arraybench.userregex import UserRegex


def relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


class Scan:
    """Files -> candidates (points to be), logs, skipped files and notes."""

    def __init__(self, root: Path, regex: UserRegex | None, skipped: list[Skipped]) -> None:
        self.root = root
        self.regex = regex
        self.skipped = skipped
        self.notes: list[str] = []
        self.candidates: list[Candidate] = []
        self.logs: list[Log] = []
        self.unmatched_names: list[str] = []
        self.orphans: list[tuple[str, list[Log]]] = []  # logs no result file names

    def skip(self, path: Path, reason: str) -> None:
        self.skipped.append(Skipped(relative(path, self.root), reason))

    def add(self, path: Path) -> None:
        rel = relative(path, self.root)
        try:
            log = log_file(path, rel)
            if log is not None:
                self.logs.append(log)
                return
            self._add_result(path, rel)
        except (Skip, OSError, ValueError) as exc:
            self.skip(path, str(exc) if isinstance(exc, Skip) else f"cannot read: {exc}")

    def _add_result(self, path: Path, rel: str) -> None:
        docs, fmt = read_docs(path)
        docs, picked = pick_docs(docs, fmt)
        source = Source(path, rel, fmt)
        found: list[Candidate] = []
        for index, doc in enumerate(docs, start=1):
            found += self._doc_candidates(source, doc, index)
        if not found:
            raise Skip("fio results without any completed I/O")
        self.notes += [f"{rel}: {note}" for note in picked]
        self.notes += [f"{rel} (run {i}): {n}" for i, d in enumerate(docs, 1) for n in d.notes]
        self._fio_messages(rel, docs)
        if self.regex is not None:
            values = pattern_values(self.regex, source)
            if values is None:
                self.unmatched_names.append(rel)
            else:
                self.notes += apply_pattern(found, values, rel)
                self.notes += per_device(found, values, rel)  # threads per device (grid.py)
        for c in found:
            c.implausible = implausible(c.jobs, fixed_block_sizes(c))
            c.notes += [f"implausible: {reason}" for reason in c.implausible]
        self.notes += [f"{c.where}: {n}" for c in found for n in c.notes]
        self.candidates += found

    def _doc_candidates(self, source: Source, doc: EngineDocument, index: int) -> list[Candidate]:
        found = []
        for groupid, jobs in job_groups(doc).items():
            if moved_nothing(jobs):
                errors = sorted({j.error for j in jobs if j.error})
                why = f" (fio error {', '.join(map(str, errors))})" if errors else ""
                self.skip(source.path, f"run {index}, group {groupid}: no I/O completed{why}")
                continue
            try:
                found.append(new_candidate(source, doc, index, groupid, jobs))
            except Skip as exc:
                self.skip(source.path, str(exc))
        return found

    def _fio_messages(self, rel: str, docs: list[EngineDocument]) -> None:
        lines = [line for d in docs for line in d.preamble.splitlines() if line.strip()]
        if lines:
            more = f" (and {len(lines) - 1} more line(s))" if len(lines) > 1 else ""
            self.notes.append(f"{rel}: fio printed {lines[0].strip()!r}{more}")

    def finish(self) -> list[Candidate]:
        if self.unmatched_names:
            shown = ", ".join(self.unmatched_names[:5])
            self.notes.append(
                f"the name pattern matched no part of {len(self.unmatched_names)} "
                f"result file name(s): {shown}"
            )
        name_workloads(self.candidates)
        self.candidates = drop_duplicates(self.candidates, self.skipped)
        return self.candidates

    # ----------------------------------------------------------------------- logs

    def attach_logs(self, cands: list[Candidate]) -> None:
        groups: dict[tuple[Path, str], list[Log]] = defaultdict(list)
        for log in self.logs:
            groups[(log.path.parent.resolve(), log.prefix)].append(log)
        by_place: dict[tuple[Path, str], list[Candidate]] = defaultdict(list)
        by_prefix: dict[str, list[Candidate]] = defaultdict(list)
        for c in cands:
            places = log_places(c)
            for place in places:
                by_place[place].append(c)
            # logs found elsewhere only for a prefix none of its own places holds
            own = {prefix for place, prefix in places if (place, prefix) in groups}
            for prefix in {prefix for _, prefix in places} - own:
                by_prefix[prefix].append(c)
        assigned: dict[Candidate, list[Log]] = defaultdict(list)
        for (folder, prefix), logs in groups.items():
            near = by_place.get((folder, prefix)) or by_prefix.get(prefix, [])
            targets = list(dict.fromkeys(near))
            for c, mine in self._split_logs(prefix, logs, targets).items():
                assigned[c] += mine
        relative = 0
        for c, logs in assigned.items():
            if not self._give_samples(c, logs):
                relative += 1
        if relative:
            self.notes.append(
                f"{relative} point(s) got 1-second samples from logs without "
                "Unix-epoch stamps: their time is counted from the job start"
            )

    def _split_logs(
        self, prefix: str, logs: list[Log], targets: list[Candidate]
    ) -> dict[Candidate, list[Log]]:
        if not targets:
            self.orphans.append((prefix, logs))  # imported on their own, as time series
            return {}
        if len(targets) == 1:
            return {targets[0]: logs}
        ranges = job_ranges(targets) or {}
        by_group = {c.groupid: c for c in targets}
        split: dict[Candidate, list[Log]] = defaultdict(list)
        for log in logs:
            group = next((g for g, r in ranges.items() if log.job in r), None)
            if group is None or group not in by_group:
                keys = ", ".join(c.key for c in targets[:4])
                self.skip(
                    log.path,
                    f"the log prefix {prefix!r} fits {len(targets)} points "
                    f"({keys}) and its job number does not tell which one",
                )
                continue
            split[by_group[group]].append(log)
        return split

    def _give_histogram(self, c: Candidate, hists: list[Log]) -> None:
        """Percentiles from histogram logs, for a point whose result gives no histogram
        (json+ bins win): the logs' bins merged over jobs and rows."""
        stats = [d for j in c.jobs for d in (j.read, j.write) if not d.empty]
        exact = all(d.bins_ns is not None for d in stats) or (
            len(c.jobs) == 1 and all(d.percentiles_ns for d in stats)
        )
        if exact:  # json+ bins, or fio's own percentiles of the one entry
            for log in hists:
                self.skip(log.path, f"histogram log of {c.key}: fio's result gives percentiles")
            return
        merged: dict[int, dict[int, int]] = defaultdict(dict)
        try:
            for log in hists:
                for ddir, bins in hist_log_bins(parse_hist_log(log.path)).items():
                    for value, count in bins.items():
                        merged[ddir][value] = merged[ddir].get(value, 0) + count
        except OutputParseError as exc:
            for log in hists:
                self.skip(log.path, f"not attached to {c.key}: {exc.message}")
            return
        c.jobs = with_bins(c.jobs, merged)
        logged = sum(sum(b.values()) for b in merged.values())
        done = sum(j.read.ios + j.write.ios for j in c.jobs)
        note = (
            f"percentiles from {len(hists)} histogram log(s): {logged} of {done} I/Os logged "
            "(fio logs no partial last window)"
        )
        c.notes.append(note)
        self.notes.append(f"{c.where}: {note}")
        c.logs += [log.rel for log in hists]

    def log_candidates(self, taken: set[str]) -> list[Candidate]:
        """Points from logs that no result file names: their totals rebuilt from the logs
        (job_from_logs), their samples as for any point."""
        found: list[Candidate] = []
        for prefix, logs in self.orphans:
            if all(log.kind == "hist" for log in logs):
                for log in logs:
                    self.skip(log.path, f"histogram log: no result file of prefix {prefix!r} "
                                        "to give its percentiles to")  # fmt: skip
                continue
            try:
                c = log_candidate(self.root, prefix, logs)
            except (Skip, OutputParseError) as exc:
                reason = exc.message if isinstance(exc, OutputParseError) else str(exc)
                for log in logs:
                    self.skip(log.path, f"logs of {prefix!r} on their own: {reason}")
                continue
            found.append(c)
        name_workloads(found)
        kept = []
        for c in drop_duplicates(found, self.skipped):
            if c.key in taken:
                self.skip(c.source.path, f"logs of {c.key}: a result file gives that point")
                continue
            self._give_samples(c, [lg for lg in self.logs if lg.rel in c.logs])
            self.notes.append(
                f"{c.source.rel}: no result file names these logs: {c.key} is rebuilt from "
                "them (I/Os and bytes = logged rates x their windows, approximate)"
            )
            kept.append(c)
        return kept

    def _give_samples(self, c: Candidate, logs: list[Log]) -> bool:
        """Attach samples; False when their clock is relative to the job start."""
        hists = [log for log in logs if log.kind == "hist"]
        logs = [log for log in logs if log.kind != "hist"]
        if hists:
            self._give_histogram(c, hists)
        if not logs:
            return True
        try:
            c.samples, epoch = log_samples(logs, c.doc.engine_version)
        except (Skip, OutputParseError) as exc:
            reason = exc.message if isinstance(exc, OutputParseError) else str(exc)
            for log in logs:
                self.skip(log.path, f"not attached to {c.key}: {reason}")
            return True
        c.logs = [log.rel for log in logs]
        return epoch or not c.samples
