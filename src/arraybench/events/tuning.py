"""`host_tuning:` applied to the targets' block queues for a run, journaled, always restored.

```python
tuning = HostTuningSession.apply(plan, run_folder)   # each change journaled BEFORE it is made
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
from dataclasses import asdict, dataclass
from pathlib import Path

from arraybench.errors import PlanError
from arraybench.events.errors import EventError, InjectorError
from arraybench.plan.model import Plan
from arraybench.targets.queue import queue_device, schedulers, selected_scheduler

JOURNAL_NAME = "host-tuning.journal"
# applying order: a scheduler resets nr_requests, max_sectors_kb moves read_ahead_kb
ORDER = ("scheduler", "queue_depth", "max_sectors_kb", "nr_requests", "read_ahead_kb",
         "nomerges", "rotational", "write_cache", "rq_affinity", "add_random", "iostats",
         "wbt_lat_usec")  # fmt: skip
SIDE_EFFECTS = {"scheduler": ("nr_requests",), "max_sectors_kb": ("read_ahead_kb",)}
RESTORE_PASSES = 3


def sysfs_file(device: str, attribute: str, sys_root: str = "/sys") -> Path:
    folder = "device" if attribute == "queue_depth" else "queue"
    return Path(sys_root) / "block" / device / folder / attribute


@dataclass(frozen=True)
class Change:
    """One sysfs attribute of one device; `value` "" is a side effect: restored, not set."""

    device: str
    attribute: str
    sysfs: str
    original: str
    value: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def _current(path: Path, attribute: str) -> str:
    text = path.read_text().strip()
    return selected_scheduler(text) if attribute == "scheduler" else text


def _refuse(key: str, device: str, what: str, hint: str) -> PlanError:
    return PlanError(f"host_tuning.{key}: {what} on {device}", hint)


def _judge(device: str, key: str, value: str, path: Path, sys_root: str) -> str:
    """The device's current value of `key`; PlanError when it would refuse `value`."""
    if not path.exists():
        raise _refuse(key, device, f"{path} does not exist", "remove the key for this device")
    if not path.stat().st_mode & 0o222:
        raise _refuse(key, device, f"{path} is read-only", "remove the key for this device")
    text = path.read_text().strip()
    if key == "scheduler" and value not in schedulers(text):
        raise _refuse(key, device, f"scheduler {value!r} is not offered",
                      f"choose one of: {', '.join(schedulers(text))}")  # fmt: skip
    if key == "max_sectors_kb":
        hw = int(sysfs_file(device, "max_hw_sectors_kb", sys_root).read_text())
        if int(value) > hw:
            raise _refuse(key, device, f"{value} is above max_hw_sectors_kb {hw}",
                          f"give at most {hw}")  # fmt: skip
    return selected_scheduler(text) if key == "scheduler" else text


def planned_changes(
    values: dict[str, str], paths: list[str], sys_root: str = "/sys"
) -> list[Change]:
    """The changes `values` make on the devices under `paths`, judged, in applying order;
    values a device already has are left out. Nothing is written."""
    devices: list[str] = []
    for path in paths:
        device = queue_device(path if os.path.exists(path) else os.path.dirname(path) or ".",
                              sys_root)  # fmt: skip
        if device is None:
            raise PlanError(f"host_tuning: target {path} is on no block device (tmpfs, overlay)",
                            "remove host_tuning, or use a target on a block device")  # fmt: skip
        if device not in devices:
            devices.append(device)
    changes: list[Change] = []
    for device in devices:
        for key in sorted(values, key=ORDER.index):
            file = sysfs_file(device, key, sys_root)
            original = _judge(device, key, values[key], file, sys_root)
            if original == values[key]:
                continue
            changes.append(Change(device, key, str(file), original, values[key]))
            for moved in SIDE_EFFECTS.get(key, ()):
                other = sysfs_file(device, moved, sys_root)
                if moved not in values and other.exists():
                    changes.append(Change(device, moved, str(other), _current(other, moved), ""))
    return changes


def plan_changes(plan: Plan, sys_root: str = "/sys") -> list[Change]:
    """What `host_tuning` changes for this plan (PlanError for a value a device refuses)."""
    if plan.host_tuning is None:
        return []
    if plan.hosts:
        raise PlanError(
            "host_tuning: applying settings on remote hosts is not supported yet",
            "set them on the hosts by hand (they are recorded in the provenance)",
        )
    return planned_changes(plan.host_tuning.for_host(None), [t.path for t in plan.targets],
                           sys_root)  # fmt: skip


def change_lines(changes: list[Change]) -> list[str]:
    """`plan check`'s words for what will be changed (and restored after the run)."""
    return [f"host_tuning: {c.device} {c.attribute} {c.original} -> {c.value}"
            for c in changes if c.value]  # fmt: skip


# ---------------------------------------------------------------------------- the journal


class TuningJournal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _append(self, entry: dict[str, str]) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()
            os.fsync(fh.fileno())  # on disk before sysfs is touched: SIGKILL may follow

    def before(self, change: Change) -> None:
        self._append({"op": "set", **change.to_dict()})

    def restored(self, change: Change) -> None:
        self._append({"op": "restored", "sysfs": change.sysfs})

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
            if entry.get("op") == "set" and entry["sysfs"] not in found:
                fields = {k: str(entry[k]) for k in ("device", "attribute", "sysfs", "original",
                                                      "value")}  # fmt: skip
                found[entry["sysfs"]] = Change(**fields)
            elif entry.get("op") == "restored":
                found.pop(entry.get("sysfs", ""), None)
        return list(found.values())


def _write(change: Change, text: str) -> None:
    try:
        with open(change.sysfs, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise InjectorError(
            f"{change.device} {change.attribute}: the kernel refused {text!r} "
            f"({exc.strerror or exc})",
            "check the value against the device's limits",
        ) from None


def restore_changes(changes: list[Change], journal: TuningJournal) -> list[str]:
    """Write the originals back (applying order), read each back and write again what a later
    write moved; one line per value that could not be restored (left pending)."""
    left = list(changes)
    problems: dict[str, str] = {}
    for _ in range(RESTORE_PASSES):
        for change in left:
            try:
                _write(change, change.original)
            except InjectorError as exc:
                problems[change.sysfs] = exc.message
        wrong = []
        for change in left:
            try:
                now = _current(Path(change.sysfs), change.attribute)
            except OSError as exc:
                problems[change.sysfs] = f"{change.sysfs}: {exc.strerror or exc}"
                wrong.append(change)
                continue
            if now == change.original:
                journal.restored(change)
                problems.pop(change.sysfs, None)
            else:
                problems.setdefault(change.sysfs, f"{change.device} {change.attribute} is "
                                    f"{now}, not the original {change.original}")  # fmt: skip
                wrong.append(change)
        left = wrong
        if not left:
            break
    return list(problems.values())


def check_tuning(plan: Plan, results_dir: Path) -> list[Change]:
    """Before a run: the changes it will make; PlanError for a refused value, or when an
    earlier run's changes are still journaled as not restored (they would pass for originals)."""
    if plan.host_tuning is None:
        return []
    leftover = pending_journals(results_dir)
    if leftover:
        raise PlanError(f"host_tuning: an earlier run's changes were never restored "
                        f"({leftover[0].path})",
                        f"run `arraybench revert --results {results_dir}` first")  # fmt: skip
    return plan_changes(plan)


class HostTuningSession:
    """The changes in effect for one run."""

    def __init__(self, journal: TuningJournal, changes: list[Change]) -> None:
        self.journal = journal
        self.changes = changes  # applied (value read back), side effects with value ""
        self.restored = False

    @classmethod
    def apply(cls, plan: Plan, folder: Path, results_dir: Path) -> HostTuningSession:
        journal = TuningJournal(folder / JOURNAL_NAME)
        changes = check_tuning(plan, results_dir)
        session = cls(journal, [])
        try:
            for change in changes:
                journal.before(change)
                if change.value:
                    _write(change, change.value)
                    change = Change(change.device, change.attribute, change.sysfs,
                                    change.original,
                                    _current(Path(change.sysfs), change.attribute))  # fmt: skip
                session.changes.append(change)
        except BaseException:
            session.restore()  # half applied: undo what was done, then say why
            raise
        return session

    def applied(self) -> list[dict[str, str]]:
        """What the run ran with, for the provenance: device, attribute, original, value."""
        return [c.to_dict() for c in self.changes if c.value]

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
        left = {c.sysfs for c in journal.pending()}
        done += [f"{c.device} {c.attribute} restored to {c.original} ({journal.path.parent.name})"
                 for c in changes if c.sysfs not in left]  # fmt: skip
    if problems:
        raise RestoreError("; ".join(problems), "fix the device, then `arraybench revert` again")
    return done
