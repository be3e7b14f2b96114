"""Small check jobs sent to one fio server through ``fio --client``, and what fio says back.

fio's client prints the server's probe answer (``hostname=..., fio=fio-3.33, flags=1``) in
normal output only; that line is how the server's fio version is learnt without SSH. Each check
job runs in its own folder, because the client writes the server's logs into its working
directory as ``<log name>.<server address>``.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

CHECK_TIMEOUT_S = 20.0
_PROBE_RE = re.compile(r"hostname=(?P<host>[^,\s]*), be=\d+, .*?fio=(?P<version>\S+?), flags=")
# Lines fio's client prints about a server it lost (fio 3.x client.c).
_LOST_RE = re.compile(
    r"(client: host=\S+ disconnected|fio: client \S+ timed out|timeout on cmd \S+|"
    r"timeout on SEND_ETA|fio: failed to connect to \S+|fio: connect: .*|"
    r"fio: bad server cmd version \d+)"
)


@dataclass(frozen=True)
class ClientRun:
    """One ``fio --client`` run of a check job."""

    returncode: int | None  # None: stopped by the watchdog
    output: str  # stdout and stderr, in order
    elapsed_s: float
    started_ns: int  # controller wall clock (time.time_ns) just before fio was started
    ended_ns: int


def client_argument(address: str, port: int) -> str:
    """fio's ``--client`` value: ``ADDR,PORT`` (``ip6:ADDR,PORT`` for an IPv6 address)."""
    prefix = "ip6:" if ":" in address else ""
    return f"--client={prefix}{address},{port}"


def run_client_job(
    binary: str,
    address: str,
    port: int,
    job_text: str,
    folder: Path,
    timeout_s: float = CHECK_TIMEOUT_S,
) -> ClientRun:
    """Send ``job_text`` to the fio server at address:port; normal output; killed on timeout."""
    jobfile = folder / "check.fio"
    jobfile.write_text(job_text)
    command = [binary, "--output-format=normal", client_argument(address, port), jobfile.name]
    started = time.time_ns()
    began = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
        )
        returncode: int | None = done.returncode
        output = done.stdout
    except subprocess.TimeoutExpired as exc:  # subprocess.run has killed fio already
        returncode = None
        output = _text(exc.stdout)
    return ClientRun(returncode, output, time.monotonic() - began, started, time.time_ns())


def _text(raw: bytes | str | None) -> str:
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else raw.decode(errors="replace")


def probe_version(output: str) -> str | None:
    """The server's fio version from the client's probe line, e.g. ``fio-3.33``."""
    match = _PROBE_RE.search(output)
    return match.group("version") if match else None


def lost_server_lines(output: str) -> list[str]:
    """fio client lines that say a server was lost or never answered."""
    return [line.strip() for line in output.splitlines() if _LOST_RE.search(line)]
