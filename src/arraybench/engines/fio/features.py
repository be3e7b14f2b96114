"""fio's releases and what each one brings: the one table of feature -> the first fio release
that has it, fio's client/server protocol per release, and what a plan asks of them.

A plan that asks for a feature its fio lacks is told at `plan check`, per feature, with the
release it needs and the one found: a figure that is only left out (the metadata test's
directory phases) is a note; one the run cannot do at all (`sprandom` preconditioning, steady
state on latency) is refused, exit 2, before anything runs.

Checked against fio's source (tags fio-3.20 .. fio-3.42 of github.com/axboe/fio): the
directory engines in engines/fileoperations.c, the options in options.c, FIO_SERVER_VER in
server.h.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arraybench.plan.expand import Point
from arraybench.plan.model import Plan

Release = tuple[int, int]


@dataclass(frozen=True)
class Feature:
    key: str
    since: Release  # the first fio release that has it
    what: str  # what it gives, in a line of `plan check`
    left_out: bool  # True: the figures are left out without it; False: the run is refused

    @property
    def needs(self) -> str:
        return f"fio >= {self.since[0]}.{self.since[1]}"


DIR_OPS = Feature("dir-ops", (3, 37), "directory create/stat/remove (dircreate, dirstat, "
                  "dirdelete)", left_out=True)  # fmt: skip
ISSUE_TIME = Feature("log_issue_time", (3, 38), "exact issue times in the logs (log_issue_time)",
                     left_out=False)  # fmt: skip
SPRANDOM = Feature("sprandom", (3, 41), "sprandom preconditioning", left_out=False)
STEADY_LAT = Feature("steady-lat", (3, 42), "steady state judged on latency (steadystate=lat)",
                     left_out=False)  # fmt: skip
FEATURES: dict[str, Feature] = {f.key: f for f in (DIR_OPS, ISSUE_TIME, SPRANDOM, STEADY_LAT)}

# FIO_SERVER_VER of each release (server.h): fio's client and server refuse a peer of
# another protocol ("fio: bad server cmd version N"), so only the protocol number of a
# host's fio is seen then; this names the release(s) that speak it.
SERVER_PROTOCOL: dict[Release, int] = {
    (3, 20): 83, (3, 21): 83, (3, 22): 84, (3, 23): 86, (3, 24): 86, (3, 25): 86,
    (3, 26): 88, (3, 27): 89, (3, 28): 94, (3, 29): 95, (3, 30): 96, (3, 31): 97,
    (3, 32): 97, (3, 33): 97, (3, 34): 99, (3, 35): 100, (3, 36): 101, (3, 37): 103,
    (3, 38): 107, (3, 39): 107, (3, 40): 111, (3, 41): 113, (3, 42): 120,
}  # fmt: skip
_RELEASE_RE = re.compile(r"fio-(\d+)\.(\d+)")


def release(version: str) -> Release | None:
    """(3, 42) from fio's `--version` text (`fio-3.42`, `fio-3.42-12-gabcdef`); None when
    the text names no release."""
    match = _RELEASE_RE.search(version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def has(version: str, feature: Feature) -> bool:
    """Whether the fio of `version` has `feature` (an unknown version: taken as not)."""
    found = release(version)
    return found is not None and found >= feature.since


def releases_of_protocol(protocol: int) -> str:
    """`fio-3.42`, `fio-3.31 to fio-3.33`, or `a fio of server protocol N` when unknown."""
    names = [f"fio-{a}.{b}" for (a, b), p in sorted(SERVER_PROTOCOL.items()) if p == protocol]
    if not names:
        return f"a fio of server protocol {protocol}"
    return names[0] if len(names) == 1 else f"{names[0]} to {names[-1]}"


def protocol_of(version: str) -> str:
    """`protocol 97` for a known release, '' otherwise."""
    found = release(version)
    protocol = SERVER_PROTOCOL.get(found) if found else None
    return f"protocol {protocol}" if protocol is not None else ""


@dataclass(frozen=True)
class FeatureUse:
    """A feature the plan asks for, and whether the fio found has it."""

    feature: Feature
    asked_by: str  # where the plan asks for it
    found: str  # the fio's version text
    present: bool

    def line(self) -> str:
        """One line: what needs which release, what was found (and, for figures left out
        without it, that they are)."""
        said = (f"{self.asked_by}: {self.feature.what} needs {self.feature.needs}; "
                f"found {self.found}")  # fmt: skip
        left_out = not self.present and self.feature.left_out
        return f"{said}: these figures are left out" if left_out else said


def asked(plan: Plan, points: list[Point]) -> list[tuple[Feature, str]]:
    """Each feature the plan asks for, with where it asks (the plan's key)."""
    found: list[tuple[Feature, str]] = []
    if plan.metadata is not None:
        dirs = [op for op in plan.metadata.ops if op.startswith("dir-")]
        if dirs:
            found.append((DIR_OPS, f"metadata.ops {', '.join(dirs)}"))
    if plan.precondition is not None and plan.precondition.pattern == "sprandom":
        found.append((SPRANDOM, "precondition.pattern: sprandom"))
    steady_lat = sorted({p.workload.name for p in points
                         if p.timing.steady and p.timing.steady.metric == "lat"})  # fmt: skip
    if steady_lat:
        found.append((STEADY_LAT, f"timing.steady.metric: lat ({', '.join(steady_lat)})"))
    return found


def feature_uses(plan: Plan, points: list[Point], version: str) -> list[FeatureUse]:
    return [FeatureUse(f, where, version, has(version, f)) for f, where in asked(plan, points)]
