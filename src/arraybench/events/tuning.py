"""`host_tuning:` applied to the targets' block queues for a run, journaled, always restored.

```python
tuning = HostTuningSession.apply(plan, folder, results_dir, host_spec)  # journaled, then set
try:
    ...                                              # the run
finally:
    problems = tuning.restore()                      # normal end, Ctrl-C, SIGTERM (-> exception)
```

More: docs/internals.md, `events/tuning.py`."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arraybench.errors import ArraybenchError, PlanError
from arraybench.events.entries import BLOCK_NAME, HOST_NAME, REACH_KEYS, Refused, mapping, text
from arraybench.events.errors import InjectorError
from arraybench.events.sysfs import LocalSysfs, RemoteSysfs, Sysfs
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
# a sysfs value as the journal may hold it: "mq-deadline", "128", "write back"
SYSFS_VALUE = re.compile(r"[A-Za-z0-9_.+ -]{0,64}")
MAX_JOURNAL_BYTES = 16 << 20  # a run journals a few lines per device and attribute
SET_KEYS = {"op", "device", "attribute", "sysfs", "original", "value", "reach"}


def sysfs_file(device: str, attribute: str, sys_root: str = "/sys") -> str:
    folder = "device" if attribute == "queue_depth" else "queue"
    return str(Path(sys_root) / "block" / device / folder / attribute)


@dataclass(frozen=True)
class Change:
    """One sysfs attribute of one device; `value` "" is a side effect: restored, not set.
    `host` says where the file is ("": this machine; else a host of the run's plan)."""

    device: str
    attribute: str
    original: str
    value: str
    host: str = ""

    @property
    def sysfs(self) -> str:  # always rebuilt from the device's name and the attribute
        return sysfs_file(self.device, self.attribute)

    @property
    def key(self) -> str:  # one file on one machine
        return f"{self.host}:{self.sysfs}"

    @property
    def where(self) -> str:
        return f"{self.host}:{self.device}" if self.host else self.device

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "attribute": self.attribute, "sysfs": self.sysfs,
                "original": self.original, "value": self.value,
                "reach": {"name": self.host} if self.host else {}}  # fmt: skip


def change_of(entry: object) -> Change:
    """A journal's `set` line as a Change; Refused saying why it is not one. Only a block
    device's name and an attribute of ORDER are taken: the file is rebuilt from them."""
    entry = mapping(entry, "entry", SET_KEYS, SET_KEYS - {"reach"})
    attribute = text(entry["attribute"], "attribute")
    if attribute not in ORDER:
        raise Refused(f"attribute {attribute!r} is not one host_tuning sets")
    device = text(entry["device"], "device", BLOCK_NAME)
    sysfs = text(entry["sysfs"], "sysfs path")
    if sysfs != sysfs_file(device, attribute):
        raise Refused(f"sysfs path {sysfs!r} is not {sysfs_file(device, attribute)}")
    original = text(entry["original"], "original value", SYSFS_VALUE)
    if not original.strip():
        raise Refused("the original value is empty")
    value = text(entry["value"], "value", SYSFS_VALUE)
    reach = mapping(entry.get("reach", {}), "reach", REACH_KEYS, set())
    host = text(reach.get("name", ""), "host")
    if host:
        text(host, "host", HOST_NAME)
    return Change(device, attribute, original, value, host)


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
    host = sysfs.host
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
            changes.append(Change(device, key, original, values[key], host))
            for moved in SIDE_EFFECTS.get(key, ()):
                other = found[sysfs_file(device, moved)]
                if moved not in values and other is not None:
                    changes.append(Change(device, moved, _value(other[1], moved), "", host))
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


@dataclass(frozen=True)
class JournalRead:
    changes: list[Change]  # journaled and not restored, in applying order
    refused: list[str]  # one line per entry revert will not act on, and why


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

    def read(self) -> JournalRead:
        """Every line checked (events.entries): the changes still pending (the first original
        of a file wins) and one line per entry refused (a hand-edited or damaged journal)."""
        found: dict[str, Change] = {}
        refused: list[str] = []
        try:
            st = self.path.stat()
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_JOURNAL_BYTES:
                why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else "is too large"
                return JournalRead([], [f"{self.path}: refused: the journal {why}"])
            data = self.path.read_bytes()
        except FileNotFoundError:
            return JournalRead([], [])
        except OSError as exc:
            return JournalRead([], [f"{self.path}: cannot be read ({exc.strerror or exc})"])
        lines = data.split(b"\n")
        for number, line in enumerate(lines, 1):
            entry = _json(line) if line.strip() else _NOT_JSON
            if entry is _NOT_JSON and (number == len(lines) or not line.strip()):
                continue  # the last line cut by a crash: the change it announced was never made
            try:
                if entry is _NOT_JSON:
                    raise Refused("not JSON")
                self._line(entry, found)
            except Refused as exc:
                refused.append(f"{self.path}:{number}: refused: {exc}")
        return JournalRead(list(found.values()), refused)

    @staticmethod
    def _line(entry: object, found: dict[str, Change]) -> None:
        if not isinstance(entry, dict):
            raise Refused("not a JSON object")
        op = entry.get("op")
        if op == "set":
            change = change_of(entry)
            found.setdefault(change.key, change)
        elif op == "restored":
            mapping(entry, "entry", {"op", "key"}, {"op", "key"})
            found.pop(text(entry["key"], "key"), None)
        else:
            raise Refused(f"op {op!r} is neither set nor restored")

    def pending(self) -> list[Change]:
        """Changes journaled and not restored, in applying order (the first original wins)."""
        return self.read().changes


_NOT_JSON = object()


def _json(line: bytes) -> object:
    """The line's JSON value; _NOT_JSON for a line that is not JSON (or not UTF-8)."""
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _NOT_JSON


SysfsOf = Callable[[str], Sysfs]  # a host's name ("" this machine) -> its sysfs


def _by_machine(changes: list[Change]) -> list[list[Change]]:
    groups: dict[str, list[Change]] = {}
    for change in changes:
        groups.setdefault(change.host, []).append(change)
    return list(groups.values())


def _restore_pass(
    group: list[Change], journal: TuningJournal, problems: dict[str, str], sysfs_of: SysfsOf
) -> list[Change]:
    """Write one machine's originals, read them back; the changes still wrong."""
    try:
        sysfs = sysfs_of(group[0].host)
        refused = sysfs.write_many([(c.sysfs, c.original) for c in group])
        now = sysfs.inspect_many([c.sysfs for c in group])
    except (InjectorError, Refused) as exc:  # the host cannot be reached: all stay pending
        said = exc.message if isinstance(exc, InjectorError) else str(exc)
        problems |= {c.key: f"{c.where} {c.attribute}: {said}" for c in group}
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


def restore_changes(changes: list[Change], journal: TuningJournal, sysfs_of: SysfsOf) -> list[str]:
    """Write the originals back (applying order), read each back and write again what a later
    write moved; one line per value that could not be restored (left pending)."""
    problems: dict[str, str] = {}
    for group in _by_machine(changes):
        for _ in range(RESTORE_PASSES):
            group = _restore_pass(group, journal, problems, sysfs_of)
            if not group:
                break
    return list(problems.values())


def sysfs_of_hosts(specs: Mapping[str, HostSpec]) -> SysfsOf:
    """This machine's sysfs for "", a host's over SSH (as the plan reaches it) for its name;
    Refused for a host the plan does not have."""

    def of(host: str) -> Sysfs:
        if not host:
            return LocalSysfs()
        if host not in specs:
            raise Refused(f"host {host} is not a host of the run's plan")
        return RemoteSysfs(specs[host])

    return of


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


def _apply(group: list[Change], sysfs: Sysfs) -> list[Change]:
    """One machine's changes written in order and read back (the value the kernel took)."""
    refused = sysfs.write_many([(c.sysfs, c.value) for c in group if c.value])
    if refused:
        raise InjectorError(next(iter(refused.values())), "check the value against the device")
    now = sysfs.inspect_many([c.sysfs for c in group])
    return [replace(c, value=_value(seen[1], c.attribute)) if c.value and seen else c
            for c, seen in zip(group, now, strict=True)]  # fmt: skip


class HostTuningSession:
    """The changes in effect for one run."""

    def __init__(self, journal: TuningJournal, changes: list[Change], sysfs_of: SysfsOf) -> None:
        self.journal = journal
        self.changes = changes  # applied (value read back), side effects with value ""
        self.sysfs_of = sysfs_of  # the plan's hosts, as the run reaches them
        self.restored = False

    @classmethod
    def apply(
        cls, plan: Plan, folder: Path, results_dir: Path, spec_of: Callable[[Host], HostSpec]
    ) -> HostTuningSession:
        journal = TuningJournal(folder / JOURNAL_NAME)
        changes = check_tuning(plan, results_dir, spec_of)
        hosts = {h.name: spec_of(h) for h in plan.hosts if plan.host_tuning and h.ssh}
        session = cls(journal, [], sysfs_of_hosts(hosts))
        try:
            for change in changes:  # every change on disk before the first is made
                journal.before(change)
            for group in _by_machine(changes):
                session.changes += _apply(group, session.sysfs_of(group[0].host))
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
        return restore_changes(self.journal.pending(), self.journal, self.sysfs_of)


def pending_journals(results_dir: Path) -> list[TuningJournal]:
    """Journals under a results directory that still hold changes not restored (or entries
    refused: what they changed is not known, so it counts as not restored)."""
    paths = sorted({*results_dir.glob(f"runs/*/{JOURNAL_NAME}"),
                    *results_dir.glob(f"*/{JOURNAL_NAME}")})  # fmt: skip
    found = [TuningJournal(p) for p in paths]
    return [j for j in found if (read := j.read()).changes or read.refused]


@dataclass
class Reverted:
    """What `arraybench revert` did: a line per thing undone, a line per thing it could not
    or would not undo (left in the journal)."""

    done: list[str]
    problems: list[str]


HostsOf = Callable[[str], Mapping[str, HostSpec]]  # a run id -> its plan's hosts


def revert_all(results_dir: Path, hosts_of: HostsOf) -> Reverted:
    """`arraybench revert`: each journal's pending changes written back, a host reached as the
    run's plan says (`hosts_of(run id)`; ArraybenchError when that cannot be known)."""
    result = Reverted([], [])
    for journal in pending_journals(results_dir):
        read = journal.read()
        result.problems += read.refused
        run = journal.path.parent.name
        try:
            sysfs_of = sysfs_of_hosts(hosts_of(run) if any(c.host for c in read.changes) else {})
        except ArraybenchError as exc:
            sysfs_of = _unreachable(f"the hosts of run {run} are not known ({exc.message})")
        result.problems += restore_changes(read.changes, journal, sysfs_of)
        left = {c.key for c in journal.pending()}
        result.done += [f"{c.where} {c.attribute} restored to {c.original} ({run})"
                        for c in read.changes if c.key not in left]  # fmt: skip
    return result


def _unreachable(why: str) -> SysfsOf:
    def of(host: str) -> Sysfs:
        if not host:
            return LocalSysfs()
        raise Refused(why)

    return of
