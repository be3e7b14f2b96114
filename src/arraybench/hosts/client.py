"""One point on many hosts: a single ``fio --client`` run, per-host results and totals.

More: docs/internals.md, `hosts/client.py`."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from arraybench.engines.fio.logs import LAT_KINDS, RATE_KINDS, parse_interval_log, per_second
from arraybench.engines.fio.parse import last_document, parse_fio_json_file
from arraybench.engines.fio.results import IntervalSample
from arraybench.engines.fio.runner import JSON_NAME, POLL_S, STDERR_NAME, fio_binary
from arraybench.engines.measurement import EngineDocument, Measurement
from arraybench.errors import OutputParseError
from arraybench.hosts.probe import client_argument, lost_server_lines
from arraybench.hosts.server import HostError, HostSpec, tcp_problem
from arraybench.units import parse_duration

GRACE_S = 5.0
EPOCH_MS_MIN = 10**12  # log stamps above this are Unix epoch ms (log_unix_epoch=1)
_LOG_RE = re.compile(r"_(?P<kind>iops|bw|lat|clat|slat)(\.\d+)?\.log$")


@dataclass
class MultiHostOutcome:
    """What one point on many hosts produced; ``partial`` when any host failed."""

    folder: Path
    json_path: Path
    hosts: list[HostSpec]
    returncode: int | None  # None: no fio run (no host reachable)
    elapsed_s: float
    jobs_by_host: dict[str, list[Measurement]]  # host name -> its client_stats entries
    failures: dict[str, str]  # host name -> why it failed (one line)
    logs_by_host: dict[str, list[Path]]  # host name -> its interval logs in folder/<name>/
    offsets_ms: dict[str, float]  # host clock - controller clock, applied to its stamps
    start_ms_by_host: dict[str, float]  # each host's start, Unix ms on the controller clock
    watchdog: list[str] = field(default_factory=list)  # what the watchdog had to do
    messages: list[str] = field(default_factory=list)  # fio client lines about lost servers
    document: EngineDocument | None = None

    @property
    def failed_hosts(self) -> list[str]:
        return [h.name for h in self.hosts if h.name in self.failures]

    @property
    def partial(self) -> bool:
        return bool(self.failures)

    @property
    def start_spread_ms(self) -> float | None:
        """Last host's start minus the first's (None with fewer than two known starts)."""
        starts = list(self.start_ms_by_host.values())
        return max(starts) - min(starts) if len(starts) > 1 else None


@dataclass(frozen=True)
class AlignedSeries:
    """Per-second values per host and their total, on the same (wall-clock) seconds."""

    kind: str
    per_host: dict[str, list[tuple[int, float]]]
    total: list[tuple[int, float]]
    wall_clock: bool  # False: some logs lacked log_unix_epoch, seconds are job-relative


# --------------------------------------------------------------------------- running


def client_command(
    binary: str, jobfiles: Mapping[str, Path], hosts: Sequence[HostSpec]
) -> list[str]:
    """Output options first (else fio forwards them to the servers), then host/job pairs."""
    command = [binary, "--output-format=json+", f"--output={JSON_NAME}"]
    for host in hosts:
        command += [client_argument(host.address, host.port), str(jobfiles[host.name])]
    return command


def _address_key(address: str) -> str:
    """One spelling per address (``2001:DB8::1`` is ``2001:db8::1``); names as given."""
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return address.lower().rstrip(".")


def _refuse_shared_addresses(hosts: Sequence[HostSpec]) -> None:
    seen: dict[str, str] = {}
    for host in hosts:
        key = _address_key(host.address)
        if key in seen:
            raise HostError(
                f"hosts {seen[key]} and {host.name} share the address {host.address}",
                "fio's client names the logs it receives by address only; give each host "
                "its own address",
            )
        seen[key] = host.name
    names = [h.name for h in hosts]
    if len(set(names)) != len(names):
        raise HostError("two hosts have the same name", "host names must be unique")


def run_on_hosts(
    jobfile: Path | Mapping[str, Path],
    hosts: Sequence[HostSpec],
    folder: Path,
    timeout_s: float,
    *,
    offsets_ms: Mapping[str, float] | None = None,
    binary: str | None = None,
    grace_s: float = GRACE_S,
    on_tick: Callable[[], None] | None = None,
) -> MultiHostOutcome:
    """Run ``jobfile`` (one for all, or one per host name) on every host at once (one fio
    client); never hangs past ``timeout_s + 2 * grace_s`` plus fio's own exit. Paths in the
    job are the servers'. ``on_tick`` is called about every ``POLL_S`` while fio runs (the
    point's progress).
    """
    jobfiles = (
        {h.name: jobfile.resolve() for h in hosts}
        if isinstance(jobfile, Path)
        else {name: path.resolve() for name, path in jobfile.items()}
    )
    _refuse_shared_addresses(hosts)
    folder.mkdir(parents=True, exist_ok=True)
    failures = {h.name: p for h in hosts if (p := tcp_problem(h.address, h.port)) is not None}
    live = [h for h in hosts if h.name not in failures]
    began = time.monotonic()
    returncode: int | None = None
    watchdog: list[str] = []
    if live:
        command = client_command(binary or fio_binary(), jobfiles, live)
        returncode, watchdog = _run_client(command, folder, live, timeout_s, grace_s, on_tick)
    text, document = _read_output(folder) if live else ("", None)
    logs = collect_logs(folder, live)
    jobs = _jobs_by_host(document, live)
    messages = lost_server_lines(text)
    _judge(live, jobs, logs, document, messages, watchdog, failures)
    offsets = {h.name: float((offsets_ms or {}).get(h.name, 0.0)) for h in hosts}
    outcome = MultiHostOutcome(
        folder=folder,
        json_path=folder / JSON_NAME,
        hosts=list(hosts),
        returncode=returncode,
        elapsed_s=time.monotonic() - began,
        jobs_by_host=jobs,
        failures=failures,
        logs_by_host=logs,
        offsets_ms=offsets,
        start_ms_by_host={},
        watchdog=watchdog,
        messages=messages,
        document=document,
    )
    outcome.start_ms_by_host = host_starts(outcome)
    return outcome


def _run_client(
    command: list[str], folder: Path, hosts: Sequence[HostSpec], timeout_s: float, grace_s: float,
    on_tick: Callable[[], None] | None = None,
) -> tuple[int, list[str]]:  # fmt: skip
    deadline = time.monotonic() + timeout_s
    ticked = time.monotonic()
    with open(folder / STDERR_NAME, "wb") as err:
        proc = subprocess.Popen(
            command, cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=err, start_new_session=True,
        )  # fmt: skip
        try:
            while proc.poll() is None:
                if time.monotonic() >= deadline:
                    steps = _escalate(proc, hosts, timeout_s, grace_s)
                    return proc.wait(), steps
                if on_tick is not None and time.monotonic() - ticked >= POLL_S:
                    ticked = time.monotonic()
                    on_tick()
                time.sleep(min(POLL_S, 0.05))
        except BaseException:
            _signal(proc, signal.SIGKILL)
            proc.wait()
            raise
    return proc.returncode, []


def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)


def _waited(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def _escalate(
    proc: subprocess.Popen[bytes], hosts: Sequence[HostSpec], timeout_s: float, grace_s: float
) -> list[str]:
    """Stop a fio client past its time, keeping as many hosts' results as possible."""
    steps = [f"fio ran past the watchdog of {timeout_s:g} s: SIGINT (stop and report)"]
    _signal(proc, signal.SIGINT)
    if _waited(proc, grace_s):
        return steps
    closed = [h.name for h in hosts if _destroy_connection(h)]
    steps.append(f"connections still held after {grace_s:g} s closed: {', '.join(closed)}")
    if _waited(proc, grace_s):
        return steps
    _signal(proc, signal.SIGKILL)
    steps.append("fio did not finish: SIGKILL (no JSON; only logs already received remain)")
    return steps


def _destroy_connection(host: HostSpec) -> bool:
    """Abort the controller's TCP connections to the host's fio port (``ss -K``, root)."""
    try:
        done = subprocess.run(
            ["ss", "-t", "-K", "dst", host.address, "dport", "=", str(host.port)],
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and host.address in done.stdout


# --------------------------------------------------------------------------- results


def _read_output(folder: Path) -> tuple[str, EngineDocument | None]:
    """(fio's messages: the --output text before the JSON plus stderr, the JSON document)."""
    stderr = (folder / STDERR_NAME).read_text(errors="replace") if folder.exists() else ""
    path = folder / JSON_NAME
    if not path.exists():
        return stderr, None
    try:
        document = last_document(parse_fio_json_file(path))
    except OutputParseError:
        return path.read_text(errors="replace") + stderr, None
    return document.preamble + "\n" + stderr, document


def collect_logs(folder: Path, hosts: Sequence[HostSpec]) -> dict[str, list[Path]]:
    """Move ``<log>.<address>`` files from the client's folder to ``folder/<host>/<log>``."""
    logs: dict[str, list[Path]] = {h.name: [] for h in hosts}
    for path in sorted(folder.iterdir()) if folder.exists() else []:
        for host in hosts:
            suffix = "." + host.address
            if path.is_file() and path.name.endswith(suffix) and ".log" in path.name:
                target = folder / host.name / path.name[: -len(suffix)]
                target.parent.mkdir(exist_ok=True)
                os.replace(path, target)
                logs[host.name].append(target)
    return logs


def _jobs_by_host(
    document: EngineDocument | None, hosts: Sequence[HostSpec]
) -> dict[str, list[Measurement]]:
    by_address = {h.address: h.name for h in hosts}
    jobs: dict[str, list[Measurement]] = {}
    for job in document.jobs if document else []:
        name = by_address.get(job.hostname or "")
        if name is not None:
            jobs.setdefault(name, []).append(job)
    return jobs


def _mentions(line: str, address: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(address)}(?![\w.])", line) is not None


def _judge(
    hosts: Sequence[HostSpec],
    jobs: dict[str, list[Measurement]],
    logs: dict[str, list[Path]],
    document: EngineDocument | None,
    messages: list[str],
    watchdog: list[str],
    failures: dict[str, str],
) -> None:
    """Name every host that failed, with fio's own words when it said something."""
    for host in hosts:
        said = "; ".join(dict.fromkeys(m for m in messages if _mentions(m, host.address)))
        host_jobs = jobs.get(host.name, [])
        if host_jobs:
            errors = sorted({j.error for j in host_jobs if j.error})
            if errors:
                failures[host.name] = f"fio job error {errors} on the host (results kept)"
            continue
        if document is None:
            kept = "; its interval logs were kept" if logs.get(host.name) else ""
            why = said or (watchdog[-1] if watchdog else "fio wrote no results")
            failures[host.name] = f"{why}{kept}"
        else:
            failures[host.name] = said or "fio reported no results for this host"


# --------------------------------------------------------------------------- timing


def _option_values(
    jobs: list[Measurement], document: EngineDocument | None, name: str
) -> list[str]:
    """An option's values as the host's jobs give it, then the global section's."""
    sources = [j.options for j in jobs] + [document.global_options if document else {}]
    return [v for options in sources if (v := options.get(name, "").strip())]


def _log_window_ms(jobs: list[Measurement], document: EngineDocument | None) -> int:
    """log_avg_msec of the host's jobs (0: per-I/O logs, stamped at each completion)."""
    return next((int(v) for v in _option_values(jobs, document, "log_avg_msec") if v.isdigit()), 0)


def _ramp_ms(jobs: list[Measurement], document: EngineDocument | None) -> float:
    """ramp_time of the host's jobs in ms: fio logs nothing until the ramp is over."""
    values = _option_values(jobs, document, "ramp_time")
    if not values:
        return 0.0
    return parse_duration(values[0] if values[0][-1].isalpha() else values[0] + "s") * 1000


def _first_stamp(path: Path) -> int | None:
    with open(path, errors="replace") as fh:
        for line in fh:
            head = line.split(",", 1)[0].strip()
            if head:
                return int(head) if head.isdigit() else None
    return None


def host_starts(outcome: MultiHostOutcome) -> dict[str, float]:
    """Each host's start, Unix ms on the controller clock: its earliest interval-log stamp,
    minus the log window (a window's sample is stamped at its end) and the ramp (not logged),
    minus the host's clock offset. Needs ``log_unix_epoch=1``; precision about 2 ms (fio
    truncates its stamps to ms and stamps a window up to a few ms after it ends)."""
    starts: dict[str, float] = {}
    for name, paths in outcome.logs_by_host.items():
        stamps = [s for p in paths if _LOG_RE.search(p.name) and (s := _first_stamp(p))]
        epoch = [s for s in stamps if s >= EPOCH_MS_MIN]
        if not epoch:
            continue
        jobs = outcome.jobs_by_host.get(name, [])
        window = _log_window_ms(jobs, outcome.document) + _ramp_ms(jobs, outcome.document)
        starts[name] = min(epoch) - window - outcome.offsets_ms.get(name, 0.0)
    return starts


# --------------------------------------------------------------------------- totals


def _host_logs(paths: list[Path], kind: str) -> list[Path]:
    return [p for p in paths if (m := _LOG_RE.search(p.name)) and m.group("kind") == kind]


def _shifted(samples: list[IntervalSample], shift_ms: int) -> list[IntervalSample]:
    return [replace(s, time_ms=s.time_ms - shift_ms) for s in samples] if shift_ms else samples


def _iops_twin(path: Path, kind: str) -> Path:
    return path.with_name(re.sub(rf"_{kind}(?=(\.\d+)?\.log$)", "_iops", path.name))


def aligned_per_second(
    outcome: MultiHostOutcome, kind: str = "iops", ddir: int | None = None
) -> AlignedSeries:
    """Every host's logs of ``kind`` on one grid of wall-clock seconds (each host's stamps
    corrected by its clock offset), and the total: the sum over hosts for iops/bw, the
    I/O-weighted mean for latency (weighted by each job's iops log when present)."""
    if kind not in RATE_KINDS + LAT_KINDS:
        raise ValueError(f"unknown log kind {kind!r}")
    per_host: dict[str, list[tuple[int, float]]] = {}
    all_jobs: list[list[IntervalSample]] = []
    all_iops: list[list[IntervalSample]] = []
    wall_clock = True
    for host in outcome.hosts:
        paths = _host_logs(outcome.logs_by_host.get(host.name, []), kind)
        if not paths:
            continue
        shift = round(outcome.offsets_ms.get(host.name, 0.0))
        jobs = [_shifted(parse_interval_log(p), shift) for p in paths]
        wall_clock &= all(s.time_ms >= EPOCH_MS_MIN for job in jobs for s in job[:1])
        iops = _weights(paths, kind, shift)
        per_host[host.name] = per_second(jobs, kind, ddir, iops)
        all_jobs += jobs
        all_iops += iops or [[] for _ in jobs]
    weights = all_iops if kind in LAT_KINDS and any(all_iops) else None
    return AlignedSeries(kind, per_host, per_second(all_jobs, kind, ddir, weights), wall_clock)


def _weights(paths: list[Path], kind: str, shift: int) -> list[list[IntervalSample]] | None:
    if kind not in LAT_KINDS:
        return None
    twins = [_iops_twin(p, kind) for p in paths]
    if not all(t.exists() for t in twins):
        return None
    return [_shifted(parse_interval_log(t), shift) for t in twins]
