"""The integrity writer and read-back on a host reached over SSH.

The host runs arraybench's own writer (``PYTHON -m arraybench.integrity.writer``), not fio's
verify: the read-back then names every lost, corrupt or unreadable block by offset and by the
generation the device acknowledged, where fio's verify stops at the first bad block of a job
and knows nothing of which write was acknowledged. The journal of acknowledged writes is
written and fsync'ed ON the host, so a crash of the host or of the controller loses nothing
the device acknowledged: the read-back (``check_over_ssh``) reads it there later.

Every remote word is one argument of the host's Python, quoted with ``shlex`` (the remote
shell parses one string), never shell text made of plan values.

More: docs/internals.md, `integrity/remote.py`."""

from __future__ import annotations

import json
import os
import selectors
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from arraybench.hosts.server import HostError, HostSpec, ssh_command
from arraybench.integrity.check import IntegrityReport
from arraybench.integrity.writer import WriterConfig, WriterStats, writer_argv
from arraybench.system.procs import communicate_or_kill

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0
PROBE_TIMEOUT_S = 30.0
MAX_OUTPUT = 4 << 20  # bytes of a read-back's JSON accepted from a host (1,000 problems ~ 0.4 MB)
CHECK_BASE_S = 60.0
CHECK_RATE = 20e6  # bytes/s assumed for the read-back's timeout: a slow device still finishes
WRITER = "arraybench.integrity.writer"
READBACK = "arraybench.integrity.readback"


def remote_line(python: str, module: str, args: list[str]) -> str:
    """``PYTHON -m MODULE ARGS...`` as one remote command line, every word quoted."""
    return shlex.join([python, "-m", module, *args])


def writer_command(
    spec: HostSpec, python: str, cfg: WriterConfig, journal: str, limit_s: float
) -> list[str]:
    """ssh ... -- host 'PYTHON -m arraybench.integrity.writer ... --stop-on-eof --print-stats'."""
    path = Path(journal)  # relative: in the SSH user's home, as the remote shell starts there
    direct = cfg.direct  # asked for: used where the host's filesystem supports it
    argv = writer_argv(replace(cfg, direct=False), path, limit_s,
                       path.with_name(path.name + ".stats.json"), python)  # fmt: skip
    argv += ["--direct-if-supported"] if direct else []
    return ssh_command(spec, shlex.join([*argv, "--stop-on-eof", "--print-stats"]))


def check_command(spec: HostSpec, python: str, path: str, journal: str, direct: bool) -> list[str]:
    args = ["check", "--path", path, "--journal", journal] + (["--direct"] if direct else [])
    return ssh_command(spec, remote_line(python, READBACK, args))


def probe_command(spec: HostSpec, python: str, path: str) -> list[str]:
    return ssh_command(spec, remote_line(python, READBACK, ["probe", path]))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def _unusable(spec: HostSpec, python: str, said: str) -> HostError:
    return HostError(
        f"host {spec.name}: verify cannot run `{python} -m {READBACK}` there: {said}",
        "install arraybench on the host, or name its Python in hosts[].ssh.python",
    )


@dataclass(frozen=True)
class RemoteTarget:
    """What ``probe`` found on a host: its arraybench version and the target's kind and size."""

    version: str
    kind: str  # "file", "block", "missing", "other"
    size: int | None
    direct: bool  # O_DIRECT works on the target (or in its folder)


def probe_over_ssh(spec: HostSpec, python: str, path: str) -> RemoteTarget:
    """HostError (one line) when the host cannot run arraybench's integrity tools."""
    command = probe_command(spec, python, path)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise HostError(
            f"host {spec.name}: the verify probe over ssh ran past {PROBE_TIMEOUT_S:g} s",
            "check the host's ssh settings",
        ) from None
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    except ValueError:
        found = None
    if done.returncode != 0 or not isinstance(found, dict):
        raise _unusable(spec, python, _last_line(done.stderr or done.stdout))
    size = found.get("size")
    return RemoteTarget(str(found.get("arraybench")), str(found.get("kind")),
                        int(size) if size is not None else None,
                        bool(found.get("direct")))  # fmt: skip


class RemoteWriter:
    """One host's integrity writer for one point, over one SSH session."""

    def __init__(
        self, spec: HostSpec, python: str, cfg: WriterConfig, journal: str, limit_s: float
    ) -> None:
        self.spec = spec
        self.python = python
        self.cfg = cfg
        self.journal = journal
        self.limit_s = limit_s
        self.command = writer_command(spec, python, cfg, journal, limit_s)
        self.proc: subprocess.Popen[bytes] | None = None
        self.stream_id: int | None = None
        self.direct = False  # O_DIRECT as the writer uses it (once ready)
        self._out = b""

    @property
    def pid(self) -> int | None:
        """The local ssh client's pid (the writer runs on the host)."""
        return self.proc.pid if self.proc else None

    def start(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Start the writer and wait until it is ready to write (HostError otherwise; nothing
        is left running then)."""
        cfg = self.cfg
        cfg.validate()
        try:
            # its own session: Ctrl-C reaches the controller, which stops the writer in order
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         start_new_session=True)  # fmt: skip
        except OSError as exc:
            raise HostError(f"host {self.spec.name}: cannot run ssh: {exc}") from None
        line = self._ready_line(timeout_s)
        if line is None:
            said = self._abort()
            raise HostError(
                f"host {self.spec.name}: the integrity writer did not start over ssh: {said}",
                f"command: {shlex.join(self.command)}",
            )
        self.stream_id = line.get("stream_id")
        self.direct = bool(line.get("direct"))

    def _ready_line(self, timeout_s: float) -> dict[str, Any] | None:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in self._out:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self._out += chunk
        first, _, self._out = self._out.partition(b"\n")
        try:
            found = json.loads(first)
        except ValueError:
            return None
        return found if isinstance(found, dict) and found.get("ready") else None

    def _abort(self) -> str:
        """Close the session, reap ssh; the host's last words."""
        proc, self.proc = self.proc, None
        assert proc is not None
        _, err, _ = communicate_or_kill(proc, STOP_TIMEOUT_S)
        return _last_line(err.decode(errors="replace"))

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> WriterStats:
        """End the session (the writer stops at stdin's end) and return the writer's stats.
        HostError when the writer failed or its session could not be ended in time."""
        if self.proc is None:
            raise HostError(f"host {self.spec.name}: the integrity writer was never started")
        proc = self.proc
        # killed: the host's writer still sees its stdin end when the connection does
        out, err, killed = communicate_or_kill(proc, timeout_s)
        if killed:
            raise HostError(
                f"host {self.spec.name}: the integrity writer's ssh session did not end within "
                f"{timeout_s:g} s; the writer stops by itself within {self.limit_s:g} s",
                None,
            )
        text = (self._out + out).decode(errors="replace").strip().splitlines()
        if proc.returncode != 0 or not text:
            said = _last_line(err.decode(errors="replace"))
            raise HostError(f"host {self.spec.name}: the integrity writer ended with exit "
                            f"{proc.returncode}: {said}", None)  # fmt: skip
        try:
            return WriterStats.from_dict(json.loads(text[-1]))
        except (ValueError, TypeError):
            raise HostError(f"host {self.spec.name}: the integrity writer's stats are "
                            f"unreadable: {text[-1][:200]}", None) from None  # fmt: skip


def check_timeout(region: int) -> float:
    return CHECK_BASE_S + region / CHECK_RATE


@dataclass(frozen=True)
class RemoteCheck:
    """A host's read-back: ``data`` is the report as the host sent it (``as_dict``: counts
    and ``clean`` complete, the problem list cut at 1,000), ``report`` the same as a record
    (its counts are those of the listed problems), ``summary`` the host's complete line."""

    data: dict[str, Any]
    report: IntegrityReport
    summary: str

    @property
    def clean(self) -> bool:
        return bool(self.data.get("clean"))


def check_over_ssh(
    spec: HostSpec, python: str, path: str, journal: str, *, direct: bool, timeout_s: float
) -> RemoteCheck:
    """The read-back on the host. HostError (one line) when it cannot run or its answer is
    not a report."""
    command = check_command(spec, python, path, journal, direct)
    with tempfile.TemporaryFile() as out:
        try:
            done = subprocess.run(command, stdout=out, stderr=subprocess.PIPE,
                                  timeout=timeout_s, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise HostError(f"host {spec.name}: the integrity read-back over ssh ran past "
                            f"{timeout_s:g} s", None) from None  # fmt: skip
        text = _bounded(out)
    said = _last_line(done.stderr.decode(errors="replace"))
    try:
        found = json.loads(text.strip().splitlines()[-1]) if text.strip() else None
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise HostError(f"host {spec.name}: the integrity read-back over ssh gave no answer "
                        f"(exit {done.returncode}): {said}", None)  # fmt: skip
    if "error" in found:
        raise HostError(f"host {spec.name}: integrity read-back: {found['error']}", None)
    try:
        return RemoteCheck(found["report"], IntegrityReport.from_dict(found["report"]),
                           str(found["summary"]))  # fmt: skip
    except (KeyError, TypeError):
        raise HostError(f"host {spec.name}: the integrity read-back's answer is not a report",
                        None) from None  # fmt: skip


def _bounded(out: IO[bytes]) -> str:
    out.seek(0)
    data = out.read(MAX_OUTPUT + 1)
    if len(data) > MAX_OUTPUT:
        return ""  # not a read-back of ours: refused rather than cut into invalid JSON
    return data.decode(errors="replace")
