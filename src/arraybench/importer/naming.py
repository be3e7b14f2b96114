"""Workload names and point keys: when two sources give the same workload at the same load
level, the names get the first qualifier that tells the sources apart (`name_workloads`);
groups that still share a key are skipped after the first (`drop_duplicates`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from arraybench.importer.candidate import Candidate, SeriesId, Skipped
from arraybench.importer.describe import base_name, clean_name
from arraybench.units import fio_size


def _qualifiers() -> list[tuple[str, Callable[[list[Candidate]], str | None]]]:
    def uniform(values: Iterable[str]) -> str | None:
        found = set(values)
        return found.pop() if len(found) == 1 and "" not in found else None

    return [
        ("scenario", lambda m: uniform(c.scenario or "" for c in m)),
        ("labels", lambda m: uniform("-".join(v for _, v in sorted(c.labels.items())) for c in m)),
        # the data's own dimensions first: `Type(?P<workload>read)-BS(?P<bs>8k)` keeps one
        # workload per (rw, bs) (read-8k, read-1m), not one per file
        ("bs", lambda m: uniform(fio_size(c.bs) for c in m)),
        ("rw", lambda m: uniform(c.rw for c in m)),
        ("ioengine", lambda m: uniform(c.ioengine for c in m)),
        ("folder", lambda m: _folder(m[0].source.rel)),
        ("file", lambda m: Path(m[0].source.rel).stem),
        ("path", lambda m: m[0].source.rel),
        ("job", lambda m: uniform(c.jobs[0].name for c in m)),
        ("run", lambda m: "-".join(map(str, filter(None, m[0].series)))),
    ]


def _folder(rel: str) -> str | None:
    parent = Path(rel).parent.as_posix()
    return None if parent in (".", "") else parent


def _collide(series: dict[SeriesId, list[Candidate]], names: dict[SeriesId, str]) -> bool:
    """True when two series given the same name share a load level."""
    owner: dict[tuple[str, str], SeriesId] = {}
    for sid, members in series.items():
        for c in members:
            spot = (names[sid], c.level)
            if owner.setdefault(spot, sid) != sid:
                return True
    return False


def _split_runs(members: list[Candidate]) -> None:
    """Groups of one run at the same workload and level (a stonewalled repeat, jobs fio 2.1
    listed without options) become series of their own, named after their job."""
    runs: dict[SeriesId, list[Candidate]] = defaultdict(list)
    for c in members:
        runs[c.series].append(c)
    for group in runs.values():
        levels = [c.level for c in group]
        if len(set(levels)) == len(levels):
            continue
        names = [c.jobs[0].name for c in group]
        unique = len(set(names)) == len(names)
        for c, name in zip(group, names, strict=True):
            c.part = name if unique else f"{name}-g{c.groupid}"


def name_workloads(cands: list[Candidate]) -> None:
    bases: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        bases[c.workload if c.named else base_name(c)].append(c)
    by_base: dict[str, dict[SeriesId, list[Candidate]]] = defaultdict(dict)
    for base, members in bases.items():
        _split_runs(members)
        for c in members:
            by_base[base].setdefault(c.series, []).append(c)
    for base, series in by_base.items():
        names = dict.fromkeys(series, base)
        if len(series) > 1 and _collide(series, names):
            names = _qualified(base, series)
        for sid, members in series.items():
            for c in members:
                c.workload = clean_name(names[sid])


def _qualified(base: str, series: dict[SeriesId, list[Candidate]]) -> dict[SeriesId, str]:
    names: dict[SeriesId, str] = {}
    for _, qualifier in _qualifiers():
        parts = {sid: qualifier(members) for sid, members in series.items()}
        if any(p is None for p in parts.values()):
            continue
        names = {sid: f"{base}-{part}" for sid, part in parts.items()}
        if not _collide(series, names):
            return names
    return names  # the last qualifier (path and run) is unique per series


def drop_duplicates(cands: list[Candidate], skipped: list[Skipped]) -> list[Candidate]:
    first: dict[str, Candidate] = {}
    kept = []
    for c in cands:
        if c.key in first:
            skipped.append(
                Skipped(
                    c.source.rel,
                    f"run {c.doc_index}, group {c.groupid}: same "
                    f"workload and load level ({c.key}) as group "
                    f"{first[c.key].groupid}: not imported",
                )
            )
            continue
        first[c.key] = c
        kept.append(c)
    return kept
