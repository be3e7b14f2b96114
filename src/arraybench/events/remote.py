"""Events on a plan's hosts over SSH: how a host is reached (`Remote`), and the script parts
the kinds' own scripts share (events/event_kinds/).

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
from arraybench.system.shell import sh_command

SSH_TIMEOUT_S = 30.0

# the server's descendants (not itself), one pid a line; with "leaves" only those without
# children of their own (the job processes)
TREE_SH = r"""tree() {
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

# args: PIDFILE PATTERN: the server and everything it forked (a job of a dead controller runs
# on after the server alone is killed; once its connection process ended, the job is no
# longer under the server: PATTERN, the server's own argument, finds it by command line)
_STOP_SERVER = (
    TREE_SH
    + r"""spid=; read -r spid rest < "$1" 2>/dev/null
kids=$( { [ -n "$spid" ] && tree "$spid" ""; pgrep -f -- "$2"; } | grep -vx -e "$$" -e "$PPID")
kill -9 $spid $kids 2>/dev/null; rm -f -- "$1"; echo $spid $kids
"""
)


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


def stop_server(remote: Remote, pidfile: str, address: str, port: int) -> list[int]:
    """SIGKILL a fio server and every process it forked on the host (a dead controller's:
    nothing of it is worth keeping); the pids ended."""
    pattern = f"--server=ip6?:{re.escape(address)},{port}( |$)"
    lines = remote.must("stopping the fio server", _STOP_SERVER, pidfile, pattern)
    return [int(x) for x in " ".join(lines).split() if x.isdigit()]
