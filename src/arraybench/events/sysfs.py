"""sysfs of this machine or of a host over SSH, for host_tuning: inspect, write, find devices.

A remote host is reached with the plan's SSH settings (argv, never a local shell; on the host
each path and value is a positional parameter of a fixed script, never spliced into it).
`reach()` names the machine for the journal (its name only: `arraybench revert` reaches a
host as the run's plan says, never with settings read back from a journal).
"""

from __future__ import annotations

import os
import subprocess
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from arraybench.events.errors import InjectorError
from arraybench.hosts.server import HostSpec, ssh_command
from arraybench.system.shell import sh_command
from arraybench.targets.queue import queue_device, read_remote_queues

SSH_TIMEOUT_S = 30.0
# one line per path: "ok MODE TEXT" or "missing"; one SSH round trip for many files
_INSPECT = """for p in "$@"; do
  if m=$(stat -L -c %a -- "$p" 2>/dev/null) && t=$(cat -- "$p" 2>/dev/null)
  then printf 'ok %s %s\\n' "$m" "$(printf %s "$t" | tr '\\n' ' ')"; else echo missing; fi
done"""
# pairs of arguments (path, value); one line "PATH: MESSAGE" per refused write
_WRITE = """while [ $# -ge 2 ]; do
  e=$( { printf %s "$2" > "$1"; } 2>&1 ) || echo "$1: ${e##*: }"; shift 2
done"""


class Sysfs(ABC):
    host: str = ""  # "" for this machine

    @abstractmethod
    def inspect(self, path: str) -> tuple[int, str] | None:
        """(permission bits, stripped text), None when the file does not exist."""

    @abstractmethod
    def write(self, path: str, text: str) -> None:
        """InjectorError with the kernel's word when it refuses."""

    def inspect_many(self, paths: list[str]) -> list[tuple[int, str] | None]:
        return [self.inspect(p) for p in paths]

    def write_many(self, pairs: list[tuple[str, str]]) -> dict[str, str]:
        """Each (path, text) written in order; path -> the kernel's word for each refused."""
        refused = {}
        for path, text in pairs:
            try:
                self.write(path, text)
            except InjectorError as exc:
                refused[path] = exc.message
        return refused

    @abstractmethod
    def device_of(self, target: str) -> str | None:
        """The whole disk whose queue serves the target (a device, or a file's device)."""

    @abstractmethod
    def reach(self) -> dict[str, Any]:
        """The machine, as the journal names it ({} this machine, else the host's name)."""


class LocalSysfs(Sysfs):
    def inspect(self, path: str) -> tuple[int, str] | None:
        try:
            return os.stat(path).st_mode & 0o777, Path(path).read_text().strip()
        except FileNotFoundError:
            return None

    def write(self, path: str, text: str) -> None:
        try:  # sysfs files exist: never create one (a wrong path is an error, not a file)
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
            with open(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise InjectorError(f"the kernel refused {text!r} for {path} "
                                f"({exc.strerror or exc})", None) from None  # fmt: skip

    def device_of(self, target: str) -> str | None:
        return queue_device(target)

    def reach(self) -> dict[str, Any]:
        return {}


class RemoteSysfs(Sysfs):
    def __init__(self, spec: HostSpec) -> None:
        self.spec = spec
        self.host = spec.name

    def _run(self, script: str, *args: str) -> subprocess.CompletedProcess[str]:
        remote = sh_command(script, args)
        try:
            return subprocess.run(ssh_command(self.spec, remote), capture_output=True, text=True,
                                  timeout=SSH_TIMEOUT_S, check=False)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InjectorError(f"host {self.host}: ssh failed: {exc}", None) from None

    def inspect(self, path: str) -> tuple[int, str] | None:
        return self.inspect_many([path])[0]

    def inspect_many(self, paths: list[str]) -> list[tuple[int, str] | None]:
        done = self._run(_INSPECT, *paths)
        lines = done.stdout.splitlines()
        if done.returncode != 0 or len(lines) != len(paths):
            said = (done.stderr.strip() or "no answer").splitlines()[-1]
            raise InjectorError(f"host {self.host}: reading sysfs over ssh failed: {said}", None)
        found: list[tuple[int, str] | None] = []
        for line in lines:
            word, _, rest = line.partition(" ")
            mode, _, text = rest.partition(" ")
            found.append((int(mode, 8), text.strip()) if word == "ok" else None)
        return found

    def write(self, path: str, text: str) -> None:
        refused = self.write_many([(path, text)])
        if refused:
            raise InjectorError(refused[path], None)

    def write_many(self, pairs: list[tuple[str, str]]) -> dict[str, str]:
        done = self._run(_WRITE, *[part for pair in pairs for part in pair])
        if done.returncode != 0:
            said = (done.stderr.strip() or "no message").splitlines()[-1]
            raise InjectorError(f"host {self.host}: writing sysfs over ssh failed: {said}", None)
        refused = {}
        for line in done.stdout.splitlines():
            path, _, said = line.partition(": ")
            refused[path] = f"host {self.host}: the kernel refused a value for {path} ({said})"
        return refused

    def device_of(self, target: str) -> str | None:
        read = read_remote_queues(self.spec, [target])
        if isinstance(read, str):
            raise InjectorError(f"host {self.host}: {read}", "check the host's ssh settings")
        return read[0].device if read else None

    def reach(self) -> dict[str, Any]:
        return {"name": self.spec.name}  # how to reach it is the plan's, never the journal's
