"""A target's block queue settings from sysfs: what the kernel did with fio's I/O.

Results are not comparable across hosts without these (an I/O scheduler, a read-ahead of
128 KiB instead of 0, a shallower SCSI queue all change the numbers), so every run records
them. A file target is described by the device under its filesystem; a partition by its whole
disk (the queue belongs to the disk). A dm-multipath device adds its path selector and path
count. Locally the settings are read in Python; on a remote host the same facts come from
`REMOTE_SCRIPT` over SSH and are parsed by `parse_remote`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from arraybench.finding_kinds import ProvenanceFinding
from arraybench.hosts.server import HostSpec, ssh_command
from arraybench.system.blockdev import disk_of, dm_name, slaves
from arraybench.system.shell import DEVICE_SH, sh_command

# queue/ attributes recorded, in the order reports show them
QUEUE_ATTRIBUTES = ("scheduler", "nr_requests", "nomerges", "read_ahead_kb", "rotational",
                    "write_cache", "max_sectors_kb")  # fmt: skip
DMSETUP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class QueueSettings:
    """One target's queue: `settings` maps a name (sysfs' own) to the value sysfs shows."""

    target: str
    device: str | None  # kernel name of the whole disk; None: no block device under it
    settings: dict[str, str] = field(default_factory=dict)
    note: str = ""  # why nothing could be read

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def selected_scheduler(text: str) -> str:
    """`[none] mq-deadline kyber` -> `none` (the one in brackets; a lone name as it is)."""
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text.strip()


def schedulers(text: str) -> list[str]:
    """Every scheduler a device offers: `[none] mq-deadline` -> [none, mq-deadline]."""
    return [name.strip("[]") for name in text.split()]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def multipath_policy(table: str) -> str | None:
    """The path selector of a dm-multipath table line (`0 N multipath 1 queue_if_no_path 0 1 1
    service-time 0 2 2 8:16 1 1 8:32 1 1` -> `service-time`); None when it is not one."""
    words = table.split()
    if "multipath" not in words:
        return None
    rest = words[words.index("multipath") + 1 :]
    try:
        rest = rest[int(rest[0]) + 1 :]  # features
        rest = rest[int(rest[0]) + 1 :]  # hardware handler
        return rest[2]  # number of path groups, initial group, selector of the first group
    except (IndexError, ValueError):
        return None


def _dm_table(name: str) -> str:
    """`dmsetup table NAME` (argv, never a shell); empty when dmsetup is missing or fails."""
    dmsetup = shutil.which("dmsetup")
    if dmsetup is None:
        return ""
    try:
        done = subprocess.run([dmsetup, "table", "--", name], capture_output=True, text=True,
                              timeout=DMSETUP_TIMEOUT_S, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def device_settings(name: str, sys_root: str = "/sys") -> dict[str, str]:
    """The recorded settings of one whole disk, by its kernel name."""
    block = Path(sys_root) / "block" / name
    found: dict[str, str] = {}
    for attribute in QUEUE_ATTRIBUTES:
        value = _read(block / "queue" / attribute)
        if value is not None:
            found[attribute] = selected_scheduler(value) if attribute == "scheduler" else value
    depth = _read(block / "device" / "queue_depth")  # SCSI devices only
    if depth is not None:
        found["queue_depth"] = depth
    if (_read(block / "dm" / "uuid") or "").startswith("mpath-"):
        paths = slaves(name, sys_root)
        found["multipath_paths"] = str(len(paths))
        policy = multipath_policy(_dm_table(dm_name(name, sys_root) or name))
        if policy:
            found["multipath_policy"] = policy
        depths = {d for p in paths if (d := _read(Path(sys_root) / "block" / p / "device" /
                                                   "queue_depth"))}  # fmt: skip
        if depths:
            found["path_queue_depth"] = ",".join(sorted(depths))
    return found


def queue_device(path: str, sys_root: str = "/sys") -> str | None:
    """The whole disk whose queue serves `path`: a device, the device under a file, or under
    the folder a file not laid out yet will be in."""
    return disk_of(path if os.path.exists(path) else os.path.dirname(path) or ".", sys_root)


def read_queue(path: str, sys_root: str = "/sys") -> QueueSettings:
    """The queue settings of a local target (never raises: a note says what is missing)."""
    device = queue_device(path, sys_root)
    if device is None:
        return QueueSettings(path, None, note="on no block device (tmpfs, overlay or btrfs)")
    return QueueSettings(path, device, device_settings(device, sys_root))


# ---------------------------------------------------------------------------- remote hosts

# One fact per line, "<word> <value>"; "target <path>" starts each target. Targets are
# positional parameters, never spliced into the script; the disk is found by DEVICE_SH.
REMOTE_SCRIPT = (
    DEVICE_SH
    + r"""
for t in "$@"; do
  echo "target $t"
  p=$t; [ -e "$p" ] || p=$(dirname "$t")
  diskof "$p" 2>/dev/null; found=$?
  [ "$found" = 1 ] && { echo "note cannot stat $t"; continue; }
  [ "$found" = 0 ] && [ -d "$s/queue" ] || { echo "note on no block device"; continue; }
  echo "device $(basename "$s")"
  for a in scheduler nr_requests nomerges read_ahead_kb rotational write_cache max_sectors_kb
  do [ -r "$s/queue/$a" ] && echo "$a $(cat "$s/queue/$a")"; done
  [ -r "$s/device/queue_depth" ] && echo "queue_depth $(cat "$s/device/queue_depth")"
  case "$(cat "$s/dm/uuid" 2>/dev/null)" in mpath-*)
    echo "multipath_paths $(ls "$s/slaves" | wc -l)"
    echo "dm_table $(dmsetup table "$(cat "$s/dm/name")" 2>/dev/null | head -n 1)";;
  esac
done
true
"""
)


def remote_command(targets: Sequence[str]) -> str:
    """The command line run over SSH: the script with the targets as its arguments."""
    return sh_command(REMOTE_SCRIPT, targets, "arraybench-queue")


def read_remote_queues(spec: HostSpec, targets: Sequence[str]) -> list[QueueSettings] | str:
    """A remote host's targets over SSH; a one-line reason instead when they cannot be read
    (no SSH settings: fio's own protocol cannot read sysfs)."""
    if spec.ssh is None:
        return "queue settings not read: no SSH access to this host"
    try:
        done = subprocess.run(ssh_command(spec, remote_command(targets)), capture_output=True,
                              text=True, timeout=DMSETUP_TIMEOUT_S * 3, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"queue settings not read over ssh: {exc}"
    if done.returncode != 0:
        said = (done.stderr.strip() or "no message").splitlines()[-1]
        return f"queue settings not read over ssh: {said}"
    return parse_remote(done.stdout)


def parse_remote(output: str) -> list[QueueSettings]:
    """The script's lines -> one QueueSettings per target, as `read_queue` gives locally."""
    found: list[QueueSettings] = []
    for line in output.splitlines():
        word, _, value = line.partition(" ")
        if word == "target":
            found.append(QueueSettings(value, None))
        elif not found:
            continue
        elif word == "device":
            found[-1] = QueueSettings(found[-1].target, value)
        elif word == "note":
            found[-1] = QueueSettings(found[-1].target, found[-1].device, note=value)
        elif word == "dm_table":
            policy = multipath_policy(value)
            if policy:
                found[-1].settings["multipath_policy"] = policy
        elif word in QUEUE_ATTRIBUTES or word in ("queue_depth", "multipath_paths"):
            text = value.strip()
            found[-1].settings[word] = selected_scheduler(text) if word == "scheduler" else text
    return found


# ---------------------------------------------------------------------------- comparing


def settings_text(settings: dict[str, str]) -> str:
    """`scheduler none, nr_requests 128, ...` for a provenance row."""
    return ", ".join(f"{k} {v}" for k, v in settings.items())


def differences(
    label: str, base_label: str, mine: dict[str, dict[str, str]], base: dict[str, dict[str, str]]
) -> list[str]:
    """Lines naming each setting that differs, keyed by target: `run B had read_ahead_kb=128
    on /dev/loop0 (run A: 0)`. `mine`/`base` map a target to its settings."""
    lines = []
    for target, settings in mine.items():
        theirs = base.get(target)
        if theirs is None:
            continue
        for key in dict.fromkeys([*theirs, *settings]):
            if settings.get(key) != theirs.get(key):
                lines.append(f"{label} had {key}={settings.get(key, '(none)')} on {target} "
                             f"({base_label}: {theirs.get(key, '(none)')})")  # fmt: skip
    return lines


def recorded_queues(provenance: ProvenanceFinding) -> dict[str, dict[str, str]]:
    """A run's stored provenance -> target (`host:path` on a remote host) -> its settings."""
    found = {t["path"]: t["queue"].get("settings") or {}
             for t in provenance.get("targets", []) if t.get("queue")}  # fmt: skip
    for host in provenance.get("hosts", []):
        queue = host.get("queue")
        for q in queue if isinstance(queue, list) else []:
            found[f"{host['name']}:{q['target']}"] = q.get("settings") or {}
    return found
