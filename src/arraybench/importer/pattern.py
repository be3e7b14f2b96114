"""The name pattern (`import --pattern`): a user's regular expression whose named groups read
a point's dimensions (workload, bs, rw, workers, threads, iodepth, devices, hosts, scenario,
label_<name>) from its result file's name; a value replaces fio's own when the file's
points agree on that field."""

from __future__ import annotations

from typing import Any

from arraybench.errors import ArraybenchError, utf8_safe
from arraybench.importer.candidate import Candidate, Source
from arraybench.importer.describe import RW_MODES, clean_name, positive_int, positive_size, rw_mode
from arraybench.importer.limits import check_level, number_text, refuse
from arraybench.plan.types import MAX_BLOCK
from arraybench.units import fio_size
from arraybench.userregex import UserRegex, UserRegexError, compile_user_regex

PATTERN_GROUPS = ("workload", "bs", "rw", "workers", "threads", "iodepth", "devices", "hosts",
                  "scenario")  # fmt: skip
LABEL_PREFIX = "label_"  # (?P<label_array>...) sets the point's label "array"


def compile_pattern(name_pattern: str | None) -> UserRegex | None:
    if not name_pattern:
        return None
    try:
        regex = compile_user_regex(name_pattern, "name pattern")
    except UserRegexError as exc:
        raise ArraybenchError(str(exc), "e.g. 'Type(?P<rw>\\w+)-BS(?P<bs>\\w+)'") from None
    unknown = sorted(g for g in set(regex.groupindex) - set(PATTERN_GROUPS) if not is_label(g))
    if unknown or not regex.groupindex:
        raise ArraybenchError(
            f"name pattern {regex.pattern!r}: named groups must be among "
            f"{', '.join(PATTERN_GROUPS)} or {LABEL_PREFIX}<name>"
            + (f" (found {', '.join(unknown)})" if unknown else ""),
            "write (?P<workers>\\d+) for the number of jobs, (?P<bs>\\w+) for the block size",
        )
    return regex


def is_label(group: str) -> bool:
    return group.startswith(LABEL_PREFIX) and len(group) > len(LABEL_PREFIX)


def pattern_values(regex: UserRegex, source: Source) -> dict[str, str] | None:
    found = regex.groups(source.path.name)
    if found is None:
        found = regex.groups(source.rel)
    if found is None:
        return None
    return {k: v for k, v in found.items() if v}


def _pattern_field(name: str, text: str) -> Any:
    """The typed value of one pattern group; ValueError says why it is unusable."""
    if name in ("workload", "scenario"):
        return clean_name(text)
    if is_label(name):
        return utf8_safe(text.strip()[:100])  # a name's bytes that are no UTF-8: \xNN
    if name == "rw":
        rw = text.lower()
        if rw not in RW_MODES:
            raise ValueError(f"rw {text!r} is not a fio rw mode ({', '.join(RW_MODES)})")
        return rw
    value = positive_size(text) if name == "bs" else positive_int(text)
    if value is None:
        raise ValueError(
            f"{name} {text!r} is not a positive {'size' if name == 'bs' else 'number'}"
        )
    return value


def apply_pattern(cands: list[Candidate], values: dict[str, str], rel: str) -> list[str]:
    """Give the file name's values to the file's points; returns notes.

    The name describes the whole file: a value replaces fio's own when the file's points
    agree on that field; when they differ (a file with several load levels), fio's are kept.
    """
    notes: list[str] = []
    for name, text in values.items():
        try:
            value = _pattern_field(name, text)
        except ValueError as exc:
            notes.append(f"{rel}: name pattern ignored for {name}: {exc}")
            continue
        _check_pattern_value(rel, name, value)
        found = sorted({_field_of(c, name) for c in cands}, key=str)
        if name not in ("workload", "scenario") and not is_label(name) and len(found) > 1:
            notes.append(
                f"{rel}: the name says {name}={text}, but the file holds {len(found)} "
                f"values of {name} ({', '.join(map(str, found))}): fio's own kept"
            )
            continue
        for c in cands:
            _set_field(c, name, value)
        if name in _FIO_SAYS and found and found[0] is not None and found[0] != value:
            notes.append(f"{rel}: {name}={value} from the file name (fio's output says {found[0]})")
    return notes


def _check_pattern_value(rel: str, name: str, value: Any) -> None:
    """A number from the file name, refused (the whole import) beyond what a point can be."""
    if name == "bs" and value > MAX_BLOCK:
        raise refuse(rel, f"the name pattern's bs {number_text(value)}",
                     f"is out of range (1 to {fio_size(MAX_BLOCK)} per I/O)")  # fmt: skip
    if name in ("workers", "threads", "iodepth", "devices", "hosts"):
        check_level(rel, f"the name pattern's {name}", value)


_FIO_SAYS = ("bs", "rw", "workers", "threads", "iodepth", "hosts")  # fields fio's output gives


def _field_of(c: Candidate, name: str) -> Any:
    if is_label(name):
        return c.labels.get(name[len(LABEL_PREFIX) :])
    return getattr(c, "workers" if name == "threads" else name)


def _set_field(c: Candidate, name: str, value: Any) -> None:
    if is_label(name):
        c.labels[name[len(LABEL_PREFIX) :]] = value
    elif name == "threads":
        c.workers = value
    elif name == "workload":
        c.workload, c.named = value, True
    elif name == "rw":
        c.rw = value
        listed = c.source.fmt == "json" and bool(c.options)
        c.pattern, c.read_pct, _ = rw_mode(value, c.options, c.jobs, listed)
    else:
        setattr(c, name, value)
