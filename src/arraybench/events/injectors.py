"""Built-in injectors: each applies one disturbance and reverts it.

`apply()` returns what was done (one line) or raises InjectorError; `revert()` undoes it,
returns what it did and may be called any number of times (after the first it has nothing
left to do). `applied` says whether something is in place that a revert would undo, also
after an `apply()` that failed half-way.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from arraybench.events import cgroup as cgroups
from arraybench.events.errors import InjectorError
from arraybench.events.journal import Injection, Journaled
from arraybench.events.procs import find_processes, read_pid_file
from arraybench.plan.events import (
    Event,
    NetemAction,
    RunAction,
    ScsiOfflineAction,
    SignalAction,
    ThrottleAction,
    is_block_name,
)
from arraybench.system.blockdev import BlockDevice, device_number, parent_disk_name, whole_disk
from arraybench.system.procs import leaves, parent_of, processes_of
from arraybench.system.signals import send_each

CGROUP_PREFIX = "arraybench-ev"
OUTPUT_LIMIT = 2000  # characters of a command's output kept in the record
_cgroup_counter = itertools.count()

PidSource = Callable[[], list[int]]


class Injector(Journaled, ABC):
    kind: ClassVar[str]
    label: str = ""  # the event's name, for the journal
    last_exit_code: int | None = None
    last_output: str = ""

    @abstractmethod
    def apply(self) -> str: ...

    @abstractmethod
    def revert(self) -> str: ...

    @property
    @abstractmethod
    def applied(self) -> bool: ...

    def refresh(self) -> None:
        """Called about once a second while applied (e.g. to catch new load processes)."""


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class CommandResult:
    outcome: str  # ok | failed | timeout
    exit_code: int | None
    output: str  # stdout and stderr together, trimmed
    elapsed_s: float
    detail: str


def trim_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """The head and tail of a long output with a marker between."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters left out ...]\n{text[-half:]}"


def run_command(argv: Sequence[str], timeout_s: float) -> CommandResult:
    """Run argv (no shell) in its own session; on timeout kill it and all it started."""
    shown = " ".join(argv)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return CommandResult(
            "failed", None, "", 0.0, f"`{shown}` could not start: {exc.strerror or exc}"
        )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, _ = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out = b""
        elapsed = time.monotonic() - start
        return CommandResult(
            "timeout",
            proc.returncode,
            trim_output(out.decode(errors="replace")),
            elapsed,
            f"`{shown}` ran past its timeout of {timeout_s:g}s and was killed",
        )
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    elapsed = time.monotonic() - start
    output = trim_output(out.decode(errors="replace"))
    if proc.returncode != 0:
        return CommandResult(
            "failed",
            proc.returncode,
            output,
            elapsed,
            f"`{shown}` exited with code {proc.returncode} after {elapsed:.1f}s",
        )
    return CommandResult("ok", 0, output, elapsed, f"`{shown}` done in {elapsed:.1f}s")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


class CommandInjector(Injector):
    """`run`: a command at the event, and its `revert` command (if any) at the end."""

    kind = "run"

    def __init__(self, action: RunAction) -> None:
        self.action = action
        self._started = False

    @property
    def applied(self) -> bool:
        return self._started and self.action.revert is not None

    def _run(self, argv: Sequence[str]) -> str:
        result = run_command(argv, self.action.timeout)
        self.last_exit_code = result.exit_code
        self.last_output = result.output
        if result.outcome != "ok":
            raise InjectorError(
                result.detail,
                outcome=result.outcome,
                returncode=result.exit_code,
                output=result.output,
            )
        return result.detail

    def apply(self) -> str:
        if self.action.revert is not None:  # a killed controller leaves its revert undone
            undo = {"revert": list(self.action.revert), "timeout": self.action.timeout}
            self._journal(Injection(self.kind, self.label, undo=undo))
        self._started = True
        return self._run(self.action.argv)

    def revert(self) -> str:
        if not self.applied or self.action.revert is None:
            return "nothing to revert"
        self._started = False  # a revert command runs once, whatever its outcome
        done = self._run(self.action.revert)
        self._undone()
        return done


# --------------------------------------------------------------------------- throttle


def disk_for_path(path: str, sys_root: str = "/sys") -> BlockDevice:
    """The whole disk a block device is, or a file lives on; InjectorError otherwise."""
    try:
        major, minor, _ = device_number(path)
    except OSError as exc:
        raise InjectorError(f"{path}: {exc.strerror or exc}", "check the device path") from None
    disk = whole_disk(major, minor, sys_root)
    if disk is None:
        raise InjectorError(
            f"{path} is on no block device (device number {major}:{minor})",
            "name a block device, or a file on a block-device filesystem",
        )
    return disk


def _limits(action: ThrottleAction) -> dict[str, int | None]:
    return {
        "read_iops": action.read_iops,
        "write_iops": action.write_iops,
        "read_bps": action.read_bps,
        "write_bps": action.write_bps,
    }


def _limits_text(limits: dict[str, int | None]) -> str:
    parts = []
    for key, value in limits.items():
        if value is not None:
            unit = "IOPS" if key.endswith("iops") else "B/s"
            parts.append(f"{key.split('_')[0]} {value} {unit}")
    return ", ".join(parts)


class ThrottleInjector(Injector):
    """Move the load's processes into a new cgroup that limits their I/O to one device.

    Revert: limits removed (queued I/O goes on at once), every process in the cgroup moved
    back to the cgroup it came from (new children to their parent's), the cgroup removed.

    `pids` must list fio's job processes: give `procs.process_tree_pids(fio_pid)`, not the
    process group (fio's jobs call setsid() and leave it). Thread ids are fine (mapped to
    their processes). Processes that appear later are moved in by `refresh()`.
    """

    kind = "throttle"

    def __init__(
        self,
        action: ThrottleAction,
        pids: PidSource,
        *,
        hierarchy: cgroups.IoCgroup | None = None,
    ) -> None:
        self.action = action
        self._pids = pids
        self._hierarchy = hierarchy
        self._cg: cgroups.IoCgroup | None = None
        self._folder: Path | None = None
        self._disk: BlockDevice | None = None
        self._origins: dict[int, str] = {}  # pid -> its cgroup before the move

    @property
    def applied(self) -> bool:
        return self._folder is not None

    @property
    def folder(self) -> Path | None:
        """The cgroup created for the load (None when not applied)."""
        return self._folder

    def apply(self) -> str:
        if self.applied:
            return f"already applied ({self._folder})"
        disk = disk_for_path(self.action.device)
        cg = self._hierarchy or cgroups.detect_io_cgroup()
        load = processes_of(self._pids())
        if not load:
            raise InjectorError(
                f"throttle {self.action.device}: no load process to move into a cgroup",
                "the event came before fio started or after it ended",
            )
        stale = cgroups.remove_leftovers(cg, CGROUP_PREFIX)
        folder = cg.root / f"{CGROUP_PREFIX}-{os.getpid()}-{next(_cgroup_counter)}"
        self._cg, self._disk = cg, disk
        limits = _limits(self.action)
        origin = cgroups.cgroup_of(load[0], cg) or "/"
        self._journal(Injection(self.kind, self.label, undo={
            "version": cg.version, "root": str(cg.root), "folder": str(folder),
            "device": disk.number, "origin": origin}))  # fmt: skip
        try:
            if cg.version == 2:
                cgroups.enable_io_v2(cg)
            folder.mkdir()
            self._folder = folder
            for name, text in cgroups.limit_lines(cg, disk.number, limits).items():
                cgroups.write_file(folder / name, text)
            moved = self._move_in(load)
        except OSError as exc:
            with contextlib.suppress(InjectorError):  # the apply error says more
                self.revert()
            raise InjectorError(
                f"throttle {disk.name} ({disk.number}) with {cg.describe()}: {exc.strerror or exc}",
                "run as root; the device must be a whole disk the kernel can throttle",
            ) from None
        cleaned = f"; removed {len(stale)} cgroup(s) left by killed runs" if stale else ""
        return (
            f"{disk.name} ({disk.number}) limited to {_limits_text(limits)} for {moved} load "
            f"process(es) in {folder} ({cg.describe()}){cleaned}"
        )

    def _move_in(self, pids: list[int]) -> int:
        assert self._cg is not None and self._folder is not None
        moved = 0
        for pid in pids:
            if pid in self._origins:
                continue
            origin = cgroups.cgroup_of(pid, self._cg)
            if origin is None:
                continue  # gone
            self._origins[pid] = origin
            if cgroups.move_process(self._cg, self._folder, pid):
                moved += 1
        return moved

    def refresh(self) -> None:
        """Move load processes started after apply() (fio forking late) into the cgroup."""
        if not self.applied:
            return
        with contextlib.suppress(OSError):  # the next refresh or the revert deals with it
            self._move_in(processes_of(self._pids()))

    def _origin_for(self, pid: int) -> str:
        if pid in self._origins:
            return self._origins[pid]
        parent = parent_of(pid)  # a child forked inside the cgroup: where its parent came from
        if parent in self._origins:
            return self._origins[parent]
        return next(iter(self._origins.values()), "/")

    def revert(self) -> str:
        if self._folder is None or self._cg is None or self._disk is None:
            return "nothing to revert"
        folder, disk = self._folder, self._disk
        done = cgroups.release(self._cg, folder, disk.number, self._origin_for)
        if not folder.exists():
            self._folder = None
            self._origins.clear()
            self._undone()
        if done.problems:
            raise InjectorError(
                f"throttle revert on {disk.name}: " + "; ".join(done.problems),
                f"check {folder} by hand",
            )
        return f"{disk.name} limits removed, {done.moved} process(es) moved back, {folder} removed"


# --------------------------------------------------------------------------- netem


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for folder in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    raise InjectorError(f"{name} is not installed", "install iproute2 (tc and ip)")


def _micro(seconds: float) -> str:
    return f"{round(seconds * 1e6)}us"


class NetemInjector(Injector):
    """`tc qdisc replace dev IF root netem ...`; revert deletes the root qdisc, which gives the
    interface its default qdisc back (a custom root qdisc that was there is not restored)."""

    kind = "netem"
    TIMEOUT_S = 15.0

    def __init__(self, action: NetemAction) -> None:
        self.action = action
        self._applied = False

    @property
    def applied(self) -> bool:
        return self._applied

    def _argv(self, *args: str) -> list[str]:
        prefix = [_tool("ip"), "netns", "exec", self.action.netns] if self.action.netns else []
        return [*prefix, _tool("tc"), *args]

    def netem_args(self) -> list[str]:
        a = self.action
        args = ["qdisc", "replace", "dev", a.interface, "root", "netem"]
        if a.delay is not None:
            args += ["delay", _micro(a.delay)]
            if a.jitter:
                args.append(_micro(a.jitter))
        if a.loss is not None:
            args += ["loss", f"{a.loss:g}%"]
        return args

    def _where(self) -> str:
        return self.action.interface + (
            f" (netns {self.action.netns})" if self.action.netns else ""
        )

    def _tc(self, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                self._argv(*args),
                capture_output=True,
                text=True,
                timeout=self.TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise InjectorError(
                f"tc {' '.join(args)} did not answer in {self.TIMEOUT_S:g}s", outcome="timeout"
            ) from None

    def apply(self) -> str:
        before = self._tc("qdisc", "show", "dev", self.action.interface, "root")
        if before.returncode != 0:
            raise InjectorError(
                f"netem on {self._where()}: {before.stderr.strip() or 'tc failed'}",
                "check the interface name (and netns)",
            )
        args = self.netem_args()
        undo = {"interface": self.action.interface, "netns": self.action.netns}
        self._journal(Injection(self.kind, self.label, undo=undo))
        done = self._tc(*args)
        if done.returncode != 0:
            message = done.stderr.strip() or f"tc exited with code {done.returncode}"
            hint = (
                "this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM / modprobe sch_netem)"
                if "unknown" in message.lower()
                else "run as root"
            )
            self._undone()  # nothing was changed
            raise InjectorError(f"netem on {self._where()}: {message}", hint)
        self._applied = True
        previous = before.stdout.strip().split("\n")[0] if before.stdout.strip() else "none"
        return f"tc {' '.join(args[1:])} on {self._where()} (root qdisc before: {previous})"

    def revert(self) -> str:
        if not self._applied:
            return "nothing to revert"
        done = self._tc("qdisc", "del", "dev", self.action.interface, "root")
        message = done.stderr.strip()
        if not netem_deleted(done.returncode, message):
            raise InjectorError(f"removing netem from {self._where()}: {message}")
        self._applied = False
        self._undone()
        return f"netem removed from {self._where()}"


def netem_deleted(returncode: int, said: str) -> bool:
    """Whether `tc qdisc del ... root` left no netem: it did, or tc said there was none (or
    no such interface any more), here or on a host alike."""
    return returncode == 0 or any(
        text in said for text in ("handle of zero", "No such file", "Cannot find device")
    )


# --------------------------------------------------------------------------- signal


class SignalInjector(Injector):
    """SIGSTOP the chosen processes; SIGCONT them at revert."""

    kind = "signal"

    @property
    def applied(self) -> bool:
        return bool(self._stopped)

    def __init__(self, action: SignalAction, load: PidSource | None = None) -> None:
        self.action = action
        self._stopped: list[int] = []
        self._load = load

    def targets(self) -> list[int]:
        a = self.action
        if a.load:  # fio's job processes: the leaves of its tree
            return leaves(processes_of(self._load() if self._load else []))
        if a.pid is not None:
            return [a.pid]
        if a.pid_file is not None:
            return [read_pid_file(a.pid_file)]
        assert a.process is not None
        return find_processes(a.process, full=a.full)

    def apply(self) -> str:
        if self._stopped:
            return "already applied"
        pids = self.targets()
        if not pids:
            raise InjectorError(f"no process matches {describe_selector(self.action)}")
        self._journal(Injection(self.kind, self.label, undo={"pids": pids}))
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                continue
            except PermissionError as exc:
                raise InjectorError(f"SIGSTOP to {pid}: {exc.strerror}", "run as root") from None
            self._stopped.append(pid)
        if not self._stopped:
            raise InjectorError(f"no process left to stop (pids {pids} are gone)")
        return f"SIGSTOP sent to {_pid_list(self._stopped)}"

    def revert(self) -> str:
        if not self._stopped:
            return "nothing to revert"
        resumed, gone = send_each(self._stopped, signal.SIGCONT)
        self._stopped = []
        self._undone()
        return f"SIGCONT sent to {_pid_list(resumed)}" + (
            f" ({_pid_list(gone)} gone)" if gone else ""
        )


def describe_selector(action: SignalAction) -> str:
    if action.load:
        return "the load (fio's job processes)"
    if action.pid is not None:
        return f"pid {action.pid}"
    if action.pid_file is not None:
        return f"the pid in {action.pid_file}"
    return f"/{action.process}/"


def _pid_list(pids: list[int]) -> str:
    shown = ", ".join(str(p) for p in pids[:10])
    more = f" and {len(pids) - 10} more" if len(pids) > 10 else ""
    return f"{len(pids)} process(es): {shown}{more}" if pids else "no process"


# --------------------------------------------------------------------------- SCSI


class ScsiOfflineInjector(Injector):
    """Write `offline` to /sys/block/sdX/device/state; `running` at revert."""

    kind = "scsi_offline"

    def __init__(self, action: ScsiOfflineAction, *, sys_root: str = "/sys") -> None:
        self.action = action
        self.sys_root = sys_root
        self._state_file: Path | None = None
        self._before: str | None = None

    @property
    def applied(self) -> bool:
        return self._state_file is not None

    def disk_name(self) -> str:
        """The SCSI disk's kernel name, checked to be one (a name such as `../../tmp/x` would
        take the state file out of /sys): InjectorError otherwise."""
        device = self.action.device
        name = os.path.basename(os.path.realpath(device)) if device.startswith("/") else device
        if is_block_name(name):
            name = parent_disk_name(name, self.sys_root)
        if not is_block_name(name):
            raise InjectorError(
                f"scsi_offline: {device} leads to {name!r}, which is not a block device name",
                "name a SCSI disk such as /dev/sdc",
            )
        return name

    def apply(self) -> str:
        if self._state_file is not None:
            return "already applied"
        name = self.disk_name()
        # rebuilt from the checked name, and it must stay in sysfs (not a link out of it)
        state_file = Path(self.sys_root) / "block" / name / "device" / "state"
        sys_real = os.path.realpath(self.sys_root)
        inside = os.path.realpath(state_file).startswith(sys_real.rstrip("/") + "/")
        try:
            before = state_file.read_text().strip() if inside else None
        except OSError:
            before = None
        if before is None:
            raise InjectorError(
                f"{self.action.device} ({name}) is no SCSI disk: {state_file} is missing",
                "name a SCSI disk such as /dev/sdc (a path of a multipath map)",
            ) from None
        self._journal(Injection(self.kind, self.label, undo={"state_file": str(state_file)}))
        try:
            cgroups.write_file(state_file, "offline")
        except OSError as exc:
            self._undone()
            raise InjectorError(
                f"setting {name} offline: {exc.strerror or exc}", "run as root"
            ) from None
        self._state_file, self._before = state_file, before
        return f"{name}: {before} -> offline"

    def revert(self) -> str:
        if self._state_file is None:
            return "nothing to revert"
        state_file = self._state_file
        try:
            cgroups.write_file(state_file, "running")
        except OSError as exc:
            raise InjectorError(
                f"setting {state_file.parent.parent.name} back to running: {exc.strerror or exc}"
            ) from None
        self._state_file = None
        self._undone()
        return f"{state_file.parent.parent.name}: offline -> running"


# --------------------------------------------------------------------------- factory


def make_injector(event: Event, pids: PidSource, *, sys_root: str = "/sys") -> Injector | None:
    """The injector of an event; None for a prompt (the timeline asks the operator)."""
    action = event.action
    if isinstance(action, RunAction):
        return CommandInjector(action)
    if isinstance(action, ThrottleAction):
        return ThrottleInjector(action, pids)
    if isinstance(action, NetemAction):
        return NetemInjector(action)
    if isinstance(action, SignalAction):
        return SignalInjector(action, pids)
    if isinstance(action, ScsiOfflineAction):
        return ScsiOfflineInjector(action, sys_root=sys_root)
    return None
