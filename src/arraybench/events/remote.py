"""Events on a plan's hosts over SSH: throttle, netem, signal, scsi_offline and run.

Every remote step is a fixed POSIX `sh` script run as `sh -c SCRIPT arraybench ARG...`
(system/shell.py `sh_command`); each plan value (a device path, an interface, a pattern, a
pid file) is a positional argument quoted with shlex for the login shell, so the remote shell
never parses a plan value as code. A device path's disk is found by system/shell.py's
`DEVICE_SH`, as system/blockdev.py finds it here. Each step is one SSH round trip.

The load on a host is its fio server's job processes, found from the server's pid file (the
one arraybench started it with) by parent links: the server forks a process per connection,
which forks the backend, which forks the jobs. `throttle` moves every descendant of the
server (not the server itself) into a new block cgroup; `signal: {load: true}` stops the
leaves of that tree (the job processes: stopping the connection process would cut the
server's answers to the client).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from typing import Any

from arraybench.events.errors import InjectorError
from arraybench.events.sysfs import RemoteSysfs
from arraybench.hosts.server import HostSpec, remote_pidfile, ssh_command
from arraybench.plan.events import is_block_name
from arraybench.system.shell import DEVICE_SH, sh_command

SSH_TIMEOUT_S = 30.0
SSH_SLACK_S = 15.0  # a command's own timeout runs on the host; ssh gets this much more

# the server's descendants (not itself), one pid a line; with "leaves" only those without
# children of their own (the job processes)
_TREE = r"""tree() {
  ps -e -o pid= -o ppid= | awk -v root="$1" -v leaves="$2" '
    { parent[$1] = $2 }
    END {
      want[root] = 1; grown = 1
      while (grown) { grown = 0
        for (p in parent) if ((parent[p] in want) && !(p in want)) { want[p] = 1; grown = 1 } }
      for (p in want) if (p != root) has[parent[p]] = 1
      for (p in want) if (p != root && (leaves == "" || !(p in has))) print p
    }'
}
server() {
  read -r spid rest < "$1" 2>/dev/null || { echo "no fio server pid in $1" >&2; exit 3; }
  [ -d "/proc/$spid" ] || { echo "fio server $spid (from $1) is not running" >&2; exit 3; }
}
"""

# "VERSION ROOT" of the hierarchy that throttles block I/O (cgroup v2 io first, then v1 blkio)
_CGROUP = r"""cgfind() {
  while read -r src mnt fs opts rest; do
    if [ "$fs" = cgroup2 ] && grep -qw io "$mnt/cgroup.controllers" 2>/dev/null; then
      cgv=2; cgroot=$mnt; return 0; fi
  done < /proc/self/mounts
  while read -r src mnt fs opts rest; do
    case ",$opts," in *,blkio,*)
      if [ "$fs" = cgroup ] && [ -e "$mnt/blkio.throttle.read_iops_device" ]; then
        cgv=1; cgroot=$mnt; return 0; fi;; esac
  done < /proc/self/mounts
  echo "no cgroup can throttle block I/O on this host (no cgroup2 io, no v1 blkio)" >&2
  exit 4
}
cgof() {
  if [ "$cgv" = 2 ]; then sed -n 's/^0:://p' "/proc/$1/cgroup"
  else awk -F: '$2 ~ /(^|,)blkio(,|$)/ { print $3 }' "/proc/$1/cgroup"; fi
}
limits() {
  if [ "$cgv" = 2 ]; then
    printf '%s rbps=%s wbps=%s riops=%s wiops=%s' "$1" "${4:-max}" "${5:-max}" "${2:-max}" \
      "${3:-max}" > "$cgroot/$folder/io.max"
  else
    printf '%s %s' "$1" "${2:-0}" > "$cgroot/$folder/blkio.throttle.read_iops_device"
    printf '%s %s' "$1" "${3:-0}" > "$cgroot/$folder/blkio.throttle.write_iops_device"
    printf '%s %s' "$1" "${4:-0}" > "$cgroot/$folder/blkio.throttle.read_bps_device"
    printf '%s %s' "$1" "${5:-0}" > "$cgroot/$folder/blkio.throttle.write_bps_device"
  fi
}
movein() {
  moved=0
  for p in $(tree "$spid" ""); do
    echo "$p" > "$cgroot/$folder/cgroup.procs" 2>/dev/null && moved=$((moved + 1))
  done
}
"""

# args: PIDFILE FOLDER DEVICE READ_IOPS WRITE_IOPS READ_BPS WRITE_BPS ("" = no limit)
_THROTTLE_APPLY = (
    _TREE
    + _CGROUP
    + DEVICE_SH
    + r"""server "$1"; folder=$2; dev=$3; cgfind
diskof "$dev"; found=$?
[ "$found" = 1 ] && exit 5
[ "$found" = 0 ] || { echo "$dev is on no block device ($n)" >&2; exit 5; }
echo "cgroup $cgv $cgroot"; echo "device $n"; echo "origin $(cgof "$spid")"
if [ "$cgv" = 2 ] && ! grep -qw io "$cgroot/cgroup.subtree_control"; then
  echo +io > "$cgroot/cgroup.subtree_control" || exit 6; fi
mkdir "$cgroot/$folder" || exit 6
limits "$n" "$4" "$5" "$6" "$7" || exit 6
movein; echo "moved $moved"
[ "$moved" -gt 0 ] || { echo "no fio job process under the server $spid" >&2; exit 7; }
"""
)

# args: PIDFILE FOLDER
_THROTTLE_REFRESH = (
    _TREE
    + _CGROUP
    + r"""server "$1"; folder=$2; cgfind; [ -d "$cgroot/$folder" ] && movein
echo "moved ${moved:-0}"
"""
)

# args: FOLDER ORIGIN DEVICE_NUMBER (both may be ""): limits off, members back, folder removed
_THROTTLE_REVERT = (
    _CGROUP
    + r"""folder=$1; origin=$2; cgfind
[ -d "$cgroot/$folder" ] || { echo "gone"; exit 0; }
[ -n "$3" ] && limits "$3" "" "" "" ""
back=$cgroot$origin; [ -n "$origin" ] && [ -d "$back" ] || back=$cgroot
moved=0
for pass in 1 2 3; do
  for p in $(cat "$cgroot/$folder/cgroup.procs"); do
    echo "$p" > "$back/cgroup.procs" 2>/dev/null && moved=$((moved + 1)); done
done
for wait in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cgroot/$folder" 2>/dev/null && break; sleep 0.2; done
[ -d "$cgroot/$folder" ] && { echo "cannot remove $cgroot/$folder" >&2; exit 6; }
echo "moved $moved back to $back, removed $cgroot/$folder"
"""
)

# args: MODE VALUE [FULL]: load PIDFILE | pid N | pid_file PATH | process REGEX [full]
_SIGNAL_FIND = (
    _TREE
    + r"""case $1 in
  load) server "$2"; tree "$spid" leaves;;
  pid) echo "$2";;
  pid_file) read -r p rest < "$2" || exit 3; echo "$p";;
  process) if [ "$3" = full ]; then pgrep -f -- "$2"; else pgrep -- "$2"; fi \
    | grep -vx -e "$$" -e "$PPID";;
esac
exit 0
"""
)

# args: SIGNAL PID...: one line per pid signalled
_KILL = r"""sig=$1; shift
for p in "$@"; do kill "-$sig" "$p" 2>/dev/null && echo "$p"; done
exit 0
"""

# args: NETNS IFACE TC-ARG...: the root qdisc before, then tc
_TC = r"""PATH=$PATH:/usr/sbin:/sbin; ns=$1; shift
if [ -n "$ns" ]; then set -- ip netns exec "$ns" tc "$@"; else set -- tc "$@"; fi
exec "$@"
"""

# args: DEVICE [STATE]: prints "STATEFILE BEFORE", then writes STATE if given
_SCSI = (
    DEVICE_SH
    + r"""n=$(basename "$(readlink -f "$1")")
name() { case $1 in ''|[!A-Za-z0-9]*|*[!A-Za-z0-9_!+-]*)
  echo "$2 leads to '$1', which is not a block device name" >&2; exit 3;; esac; }
name "$n" "$1"
n=$(diskname "$n")
name "$n" "$1"
f=/sys/block/$n/device/state
read -r before < "$f" 2>/dev/null || { echo "$1 ($n) is no SCSI disk: $f is missing" >&2; exit 3; }
echo "$f $before"
[ -z "$2" ] || printf %s "$2" > "$f"
"""
)

# args: STATEFILE STATE
_WRITE_STATE = r"""printf %s "$2" > "$1" && echo "$1 $2"
"""

# args: PIDFILE PATTERN: the server and everything it forked (a job of a dead controller runs
# on after the server alone is killed; once its connection process ended, the job is no
# longer under the server: PATTERN, the server's own argument, finds it by command line)
_STOP_SERVER = (
    _TREE
    + r"""spid=; read -r spid rest < "$1" 2>/dev/null
kids=$( { [ -n "$spid" ] && tree "$spid" ""; pgrep -f -- "$2"; } | grep -vx -e "$$" -e "$PPID")
kill -9 $spid $kids 2>/dev/null; rm -f -- "$1"; echo $spid $kids
"""
)

# args: TIMEOUT ARGV...: the command under the host's `timeout` when it has one
_RUN = r"""t=$1; shift
if command -v timeout >/dev/null 2>&1; then exec timeout -k 5 "$t" "$@"; fi
exec "$@"
"""


@dataclass(frozen=True)
class Remote:
    """One host reached over SSH: runs the fixed scripts above with positional arguments."""

    spec: HostSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pidfile(self) -> str:
        return remote_pidfile(self.spec)

    def reach(self) -> dict[str, Any]:
        """The host as the journal names it (events.sysfs format: its name only)."""
        return RemoteSysfs(self.spec).reach()

    def run(
        self, script: str, *args: str, timeout_s: float = SSH_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        remote = sh_command(script, args)
        try:
            return subprocess.run(ssh_command(self.spec, remote), capture_output=True,
                                  text=True, timeout=timeout_s, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise InjectorError(f"host {self.name}: ssh did not answer in {timeout_s:g}s",
                                outcome="timeout") from None  # fmt: skip
        except OSError as exc:
            raise InjectorError(f"host {self.name}: ssh failed: {exc}", None) from None

    def must(self, doing: str, script: str, *args: str) -> list[str]:
        """The script's output lines; InjectorError with its last word when it fails."""
        done = self.run(script, *args)
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip() or "no message").splitlines()[-1]
            raise InjectorError(
                f"host {self.name}: {doing}: {said}",
                "check the host's SSH settings and that its user is root",
            )
        return done.stdout.splitlines()


def fields(lines: list[str]) -> dict[str, str]:
    """`word rest` lines -> {word: rest} (the scripts' answers)."""
    return {word: rest for word, _, rest in (line.partition(" ") for line in lines)}


# ------------------------------------------------------------------------- throttle


def throttle_apply(remote: Remote, folder: str, device: str, limits: list[str]) -> dict[str, str]:
    """Create FOLDER in the host's block cgroup with the limits and move the load into it;
    {"cgroup": "V ROOT", "device": MAJ:MIN, "origin": PATH, "moved": N}."""
    lines = remote.must(f"throttle {device}", _THROTTLE_APPLY, remote.pidfile, folder, device,
                        *limits)  # fmt: skip
    return fields(lines)


def throttle_refresh(remote: Remote, folder: str) -> None:
    remote.run(_THROTTLE_REFRESH, remote.pidfile, folder)


def throttle_revert(remote: Remote, folder: str, origin: str, number: str) -> str:
    lines = remote.must("throttle revert", _THROTTLE_REVERT, folder, origin, number)
    return lines[-1] if lines else ""


# ------------------------------------------------------------------------- signal


def signal_targets(remote: Remote, selector: list[str]) -> list[int]:
    lines = remote.must("finding the processes to signal", _SIGNAL_FIND, *selector)
    return sorted({int(x) for x in lines if x.strip().isdigit()})


def send_signal(remote: Remote, name: str, pids: list[int]) -> list[int]:
    lines = remote.must(f"SIG{name}", _KILL, name, *map(str, pids))
    return [int(x) for x in lines if x.strip().isdigit()]


# ------------------------------------------------------------------------- netem, scsi, run


def tc(remote: Remote, netns: str, *args: str) -> subprocess.CompletedProcess[str]:
    return remote.run(_TC, netns, *args)


def scsi_state(remote: Remote, device: str, state: str = "") -> tuple[str, str]:
    """(the device's state file on the host, its state before), writing `state` if given."""
    lines = remote.must(f"scsi_offline {device}", _SCSI, device, state)
    path, _, before = lines[0].partition(" ") if lines else ("", "", "")
    check_state_file(path, f"host {remote.name}: scsi_offline {device}")
    return path, before


def check_state_file(path: str, where: str) -> None:
    """InjectorError unless `path` is /sys/block/NAME/device/state for a block device NAME:
    the only file scsi_offline writes (a host's answer is checked, not trusted)."""
    parts = path.split("/")
    shape = parts[:3] == ["", "sys", "block"] and parts[4:] == ["device", "state"]
    if len(parts) != 6 or not shape or not is_block_name(parts[3]):
        raise InjectorError(f"{where}: refusing to write {path!r}, which is not "
                            "/sys/block/NAME/device/state of a block device")  # fmt: skip


def write_state(remote: Remote, state_file: str, state: str) -> None:
    check_state_file(state_file, f"host {remote.name}: scsi_offline")
    remote.must(f"writing {state} to {state_file}", _WRITE_STATE, state_file, state)


def run_argv(remote: Remote, argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    return remote.run(_RUN, f"{timeout_s:g}", *argv, timeout_s=timeout_s + SSH_SLACK_S)


def stop_server(remote: Remote, pidfile: str, address: str, port: int) -> list[int]:
    """SIGKILL a fio server and every process it forked on the host (a dead controller's:
    nothing of it is worth keeping); the pids ended."""
    pattern = f"--server=ip6?:{re.escape(address)},{port}( |$)"
    lines = remote.must("stopping the fio server", _STOP_SERVER, pidfile, pattern)
    return [int(x) for x in " ".join(lines).split() if x.isdigit()]
