"""`host_tuning:` applied to the targets' block queues for a run, journaled, always restored.

```python
tuning = HostTuningSession.apply(plan, folder, results_dir, host_spec)  # journaled, then set
try:
    ...                                              # the run
finally:
    problems = tuning.restore()                      # normal end, Ctrl-C, SIGTERM (-> exception)
```

The journal (`host-tuning.journal` in the run's folder, JSON lines, fsync'ed) holds every
change before sysfs is written, and a `restored` line after each one is undone. A controller
killed with SIGKILL leaves changes without their `restored` line: `arraybench revert` finds
them under the results directory (`pending_journals`) and writes the originals back.

Side effects are journaled too: a new scheduler resets nr_requests, a new max_sectors_kb can
raise read_ahead_kb, so their originals are recorded (and restored) with the change that
moves them. Restoring writes in the order of applying (scheduler first) and reads every value
back; a value a later write moved is written again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from arraybench.errors import PlanError
from arraybench.events.errors import EventError, InjectorError
from arraybench.events.sysfs import LocalSysfs, RemoteSysfs, Sysfs, sysfs_from
from arraybench.hosts.server import HostSpec
from arraybench.plan.model import Host, Plan
from arraybench.targets.queue import schedulers, selected_scheduler

JOURNAL_NAME = "host-tuning.journal"
# applying order: a scheduler resets nr_requests, max_sectors_kb moves read_ahead_kb
ORDER = ("scheduler", "queue_depth", "max_sectors_kb", "nr_requests", "read_ahead_kb",
         "nomerges", "rotational", "write_cache", "rq_affinity", "add_random", "iostats",
         "wbt_lat_usec")  # fmt: skip
SIDE_EFFECTS = {"scheduler": ("nr_requests",), "max_sectors_kb": ("read_ahead_kb",)}
RESTORE_PASSES = 3


def sysfs_file(device: str, attribute: str, sys_root: str = "/sys") -> str:
    folder = "device" if attribute == "queue_depth" else "queue"
    return str(Path(sys_root) / "block" / device / folder / attribute)


@dataclass(frozen=True)
class Change:
    """One sysfs attribute of one device; `value` "" is a side effect: restored, not set.
    `reach` says where the file is (empty: this machine; else the host and its SSH settings)."""

    device: str
    attribute: str
    sysfs: str
    original: str
    value: str
    reach: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:  # one file on one machine
        return f"{self.reach.get('name', '')}:{self.sysfs}"

    @property
    def where(self) -> str:
        host = self.reach.get("name")
        return f"{host}:{self.device}" if host else self.device

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _value(text: str, attribute: str) -> str:
    return selected_scheduler(text) if attribute == "scheduler" else text


def _refuse(key: str, device: str, what: str, hint: str) -> PlanError:
    return PlanError(f"host_tuning.{key}: {what} on {device}", hint)


Found = dict[str, tuple[int, str] | None]  # sysfs file -> (permission bits, text) or missing


def _judge(found: Found, where: str, device: str, key: str, value: str) -> str:
    """The device's current value of `key`; PlanError when it would refuse `value`."""
    path = sysfs_file(device, key)
    seen = found[path]
    if seen is None:
        raise _refuse(key, where, f"{path} does not exist", "remove the key for this device")
    mode, text = seen
    if not mode & 0o222:
        raise _refuse(key, where, f"{path} is read-only", "remove the key for this device")
    if key == "scheduler" and value not in schedulers(text):
        raise _refuse(key, where, f"scheduler {value!r} is not offered",
                      f"choose one of: {', '.join(schedulers(text))}")  # fmt: skip
    hw = found.get(sysfs_file(device, "max_hw_sectors_kb"))
    if key == "max_sectors_kb" and hw is not None and int(value) > int(hw[1]):
        raise _refuse(key, where, f"{value} is above max_hw_sectors_kb {hw[1]}",
                      f"give at most {hw[1]}")  # fmt: skip
    return _value(text, key)


def _devices(sysfs: Sysfs, paths: list[str]) -> list[str]:
    devices: list[str] = []
    for path in paths:
        device = sysfs.device_of(path)
        if device is None:
            raise PlanError(f"host_tuning: target {path} is on no block device (tmpfs, overlay)",
                            "remove host_tuning, or use a target on a block device")  # fmt: skip
        if device not in devices:
            devices.append(device)
    return devices


def planned_changes(sysfs: Sysfs, values: dict[str, str], paths: list[str]) -> list[Change]:
    """The changes `values` make on the devices under `paths`, judged, in applying order;
    values a device already has are left out. Nothing is written."""
    changes: list[Change] = []
    reach = sysfs.reach()
    keys = sorted(values, key=ORDER.index)
    for device in _devices(sysfs, paths):
        where = f"{sysfs.host}:{device}" if sysfs.host else device
        names = [*keys, *(m for k in keys for m in SIDE_EFFECTS.get(k, ())), "max_hw_sectors_kb"]
        files = [sysfs_file(device, n) for n in names]
        found = dict(zip(files, sysfs.inspect_many(files), strict=True))  # one round trip
        for key in keys:
            original = _judge(found, where, device, key, values[key])
            if original == values[key]:
                continue
            changes.append(Change(device, key, sysfs_file(device, key), original, values[key],
                                  reach))  # fmt: skip
            for moved in SIDE_EFFECTS.get(key, ()):
                other = found[sysfs_file(device, moved)]
                if moved not in values and other is not None:
                    changes.append(Change(device, moved, sysfs_file(device, moved),
                                          _value(other[1], moved), "", reach))  # fmt: skip
    return changes


def plan_changes(plan: Plan, spec_of: Callable[[Host], HostSpec]) -> list[Change]:
    """What `host_tuning` changes for this plan, on this machine or on each host over SSH
    (`spec_of`: how a plan's host is reached); PlanError for a value a device refuses."""
    tuning = plan.host_tuning
    if tuning is None:
        return []
    names = [h.name for h in plan.hosts]
    unknown = [n for n in tuning.hosts if n not in names]
    if unknown:
        raise PlanError(f"host_tuning.hosts: {', '.join(unknown)} is not a host of the plan",
                        f"name one of: {', '.join(names) or '(no hosts)'}")  # fmt: skip
    if not plan.hosts:
        paths = [t.path for t in plan.targets]
        return planned_changes(LocalSysfs(), tuning.for_host(None), paths)
    changes = []
    for host in plan.hosts:
        values = tuning.for_host(host.name)
        if not values:
            continue
        if host.ssh is None:
            raise PlanError(f"host_tuning: host {host.name} has no ssh settings",
                            "give its ssh user and key, or leave it out")  # fmt: skip
        paths = [t.path for t in (host.targets or plan.targets)]
        changes += planned_changes(RemoteSysfs(spec_of(host)), values, paths)
    return changes


def change_lines(changes: list[Change]) -> list[str]:
    """`plan check`'s words for what will be changed (and restored after the run)."""
    return [f"host_tuning: {c.where} {c.attribute} {c.original} -> {c.value}"
            for c in changes if c.value]  # fmt: skip


# ---------------------------------------------------------------------------- the journal


class TuningJournal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _append(self, entry: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()
            os.fsync(fh.fileno())  # on disk before sysfs is touched: SIGKILL may follow

    def before(self, change: Change) -> None:
        self._append({"op": "set", **change.to_dict()})

    def restored(self, change: Change) -> None:
        self._append({"op": "restored", "key": change.key})

    def pending(self) -> list[Change]:
        """Changes journaled and not restored, in applying order (the first original wins)."""
        found: dict[str, Change] = {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        for line in lines:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash: the change it announced was never made
            if entry.get("op") == "set":
                change = Change(**{k: v for k, v in entry.items() if k != "op"})
                found.setdefault(change.key, change)
            elif entry.get("op") == "restored":
                found.pop(entry.get("key", ""), None)
        return list(found.values())


def _by_machine(changes: list[Change]) -> list[list[Change]]:
    groups: dict[str, list[Change]] = {}
    for change in changes:
        groups.setdefault(str(change.reach.get("name", "")), []).append(change)
    return list(groups.values())


def _restore_pass(
    group: list[Change], journal: TuningJournal, problems: dict[str, str]
) -> list[Change]:
    """Write one machine's originals, read them back; the changes still wrong."""
    sysfs = sysfs_from(group[0].reach)
    try:
        refused = sysfs.write_many([(c.sysfs, c.original) for c in group])
        now = sysfs.inspect_many([c.sysfs for c in group])
    except InjectorError as exc:  # the host cannot be reached: all stay pending
        problems |= {c.key: exc.message for c in group}
        return group
    wrong = []
    for change, seen in zip(group, now, strict=True):
        value = _value(seen[1], change.attribute) if seen else "gone"
        if value == change.original:
            journal.restored(change)
            problems.pop(change.key, None)
            continue
        problems[change.key] = refused.get(change.sysfs) or (
            f"{change.where} {change.attribute} is {value}, not the original {change.original}"
        )
        wrong.append(change)
    return wrong


def restore_changes(changes: list[Change], journal: TuningJournal) -> list[str]:
    """Write the originals back (applying order), read each back and write again what a later
    write moved; one line per value that could not be restored (left pending)."""
    problems: dict[str, str] = {}
    for group in _by_machine(changes):
        for _ in range(RESTORE_PASSES):
            group = _restore_pass(group, journal, problems)
            if not group:
                break
    return list(problems.values())


def check_tuning(
    plan: Plan, results_dir: Path, spec_of: Callable[[Host], HostSpec]
) -> list[Change]:
    """Before a run: the changes it will make; PlanError for a refused value, or when an
    earlier run's changes are still journaled as not restored (they would pass for originals)."""
    if plan.host_tuning is None:
        return []
    leftover = pending_journals(results_dir)
    if leftover:
        raise PlanError(f"host_tuning: an earlier run's changes were never restored "
                        f"({leftover[0].path})",
                        f"run `arraybench revert --results {results_dir}` first")  # fmt: skip
    return plan_changes(plan, spec_of)


def _apply(group: list[Change]) -> list[Change]:
    """One machine's changes written in order and read back (the value the kernel took)."""
    sysfs = sysfs_from(group[0].reach)
    refused = sysfs.write_many([(c.sysfs, c.value) for c in group if c.value])
    if refused:
        raise InjectorError(next(iter(refused.values())), "check the value against the device")
    now = sysfs.inspect_many([c.sysfs for c in group])
    return [replace(c, value=_value(seen[1], c.attribute)) if c.value and seen else c
            for c, seen in zip(group, now, strict=True)]  # fmt: skip


class HostTuningSession:
    """The changes in effect for one run."""

    def __init__(self, journal: TuningJournal, changes: list[Change]) -> None:
        self.journal = journal
        self.changes = changes  # applied (value read back), side effects with value ""
        self.restored = False

    @classmethod
    def apply(
        cls, plan: Plan, folder: Path, results_dir: Path, spec_of: Callable[[Host], HostSpec]
    ) -> HostTuningSession:
        journal = TuningJournal(folder / JOURNAL_NAME)
        changes = check_tuning(plan, results_dir, spec_of)
        session = cls(journal, [])
        try:
            for change in changes:  # every change on disk before the first is made
                journal.before(change)
            for group in _by_machine(changes):
                session.changes += _apply(group)
        except BaseException:
            session.restore()  # half applied: undo what was done, then say why
            raise
        return session

    def applied(self) -> list[dict[str, str]]:
        """What the run ran with, for the provenance: device, attribute, original, value."""
        return [{"device": c.where, "attribute": c.attribute, "original": c.original,
                 "value": c.value} for c in self.changes if c.value]  # fmt: skip

    def restore(self) -> list[str]:
        """Idempotent; one line per value left changed (its journal entry stays pending)."""
        if self.restored:
            return []
        self.restored = True
        return restore_changes(self.journal.pending(), self.journal)


def pending_journals(results_dir: Path) -> list[TuningJournal]:
    """Journals under a results directory that still hold changes not restored."""
    paths = sorted({*results_dir.glob(f"runs/*/{JOURNAL_NAME}"),
                    *results_dir.glob(f"*/{JOURNAL_NAME}")})  # fmt: skip
    found = [TuningJournal(p) for p in paths]
    return [j for j in found if j.pending()]


class RestoreError(EventError):
    """A journaled setting could not be written back (the machine's fault: exit 1)."""

    exit_code = 1


def revert_all(results_dir: Path) -> list[str]:
    """`arraybench revert`: what was restored; RestoreError naming what could not be."""
    done: list[str] = []
    problems: list[str] = []
    for journal in pending_journals(results_dir):
        changes = journal.pending()
        failed = restore_changes(changes, journal)
        problems += failed
        left = {c.key for c in journal.pending()}
        done += [f"{c.where} {c.attribute} restored to {c.original} ({journal.path.parent.name})"
                 for c in changes if c.key not in left]  # fmt: skip
    if problems:
        raise RestoreError("; ".join(problems), "fix the device, then `arraybench revert` again")
    return done
