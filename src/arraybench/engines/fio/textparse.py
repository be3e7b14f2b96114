"""Read fio's normal (human-readable) text output into the dataclasses of results.py.

The JSON parser (parse.py) is the reference; this module reconstructs the same figures from
the text fio prints by default, so that results kept only as text can be imported. Units are
those of results.py: bytes, bytes/s, ms of runtime, ns of latency.

More: docs/internals.md, `engines/fio/textparse.py`."""

from __future__ import annotations

import math
import re
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from arraybench.engines.measurement import DIRECTIONS, DirStats, EngineDocument, Measurement
from arraybench.errors import OutputParseError

ALL_CLIENTS = "All clients"
NO_RESULTS = "no fio job results found"

_HOST_RE = re.compile(r"^<([^<>\s]+)> ?(.*)$")
_SERVER_RE = re.compile(r"^hostname=([^,\s]+), be=\d+,.*\bfio=(fio-[^,\s]+)")
_VERSION_RE = re.compile(r"^(fio-\d+\.\d+\S*)\s*$")
_STARTING_RE = re.compile(r"^Starting \d+ (?:processes|process|threads|thread)\b")
_JOB_HEADER_RE = re.compile(r"^(?P<name>\S.*?): \(g=(?P<g>\d+)\): (?P<rest>.*)$")
_RESULT_RE = re.compile(
    r"^(?P<name>\S.*?): \(groupid=(?P<g>\d+), jobs=(?P<jobs>\d+)\): err=\s*(?P<err>-?\d+)"
)
_DIR_START_RE = re.compile(r"^\s*(?P<ddir>read|write|trim|mixed)\s*: (?:IOPS=|io=)")
_DIR3_RE = re.compile(
    r"^\s*(?P<ddir>read|write|trim|mixed)\s*: IOPS=(?P<iops>[^,]+), BW=(?P<bw>[^\s(]+)"
)
_IO3_RE = re.compile(r"\((?P<io>[^()/]+)/(?P<runt>\d+)msec\)")
_DIR2_RE = re.compile(
    r"^\s*(?P<ddir>read|write|trim|mixed)\s*: io=(?P<io>[^,]+), bw=(?P<bw>[^,]+), "
    r"iops=(?P<iops>[^,]+), runt=\s*(?P<runt>\d+)msec"
)
_LAT_RE = re.compile(
    r"^\s*(?P<kind>slat|clat|lat)\s*\((?P<unit>[num]sec)\)\s*: min=\s*(?P<min>[^,]+), "
    r"max=\s*(?P<max>[^,]+), avg=\s*(?P<avg>[^,]+),"
)
_PCT_HEAD_RE = re.compile(r"^\s*(?P<kind>slat|clat|lat) percentiles \((?P<unit>[num]sec)\)\s*:")
_PCT_RE = re.compile(r"(\d+(?:\.\d+)?)th=\[\s*(\d+)\]")
_CPU_RE = re.compile(r"^\s*cpu\s*: usr=(?P<usr>[\d.]+)%, sys=(?P<sys>[\d.]+)%")
_ISSUED_RE = re.compile(r"^\s*issued\s*\w*\s*: total=(?P<total>\S+?)(?:,\s*short=|\s+short=|\s*$)")
_DISK_RE = re.compile(
    r"^\s+(?P<name>\S+): ios=(\d+)/(\d+), merge=(\d+)/(\d+), ticks=(\d+)/(\d+), "
    r"in_queue=(\d+), util=([\d.]+)%"
)
_COUNT_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKMGTP]?)\s*$")
_BYTES_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKMGTPE]?)(i?)B?(?:/s)?\s*$")
_BS3_RE = re.compile(r"\(([RWT])\)\s*([\d.]+\s*[A-Za-z]*)-([\d.]+\s*[A-Za-z]*)")
# Quick checks for looks_like_fio_text (optional host prefix, then fio's own line).
_RESULT_SEARCH = re.compile(
    r"^(?:<[^<>\s]+> ?)?\S[^\n]*?: \(groupid=\d+, jobs=\d+\): err=", re.MULTILINE
)
_DIR_SEARCH = re.compile(
    r"^(?:<[^<>\s]+> ?)?[ \t]*(?:read|write|trim|mixed)[ \t]*: (?:IOPS=|io=)", re.MULTILINE
)

_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_NS_PER_UNIT = {"nsec": 1, "usec": 1000, "msec": 1_000_000}
_DISK_FIELDS = ("read_ios", "write_ios", "read_merges", "write_merges", "read_ticks",
                "write_ticks", "in_queue")  # fmt: skip
_HINT = "is this fio's normal text output (fio --output-format=normal)?"


# --------------------------------------------------------------------------- public API


def looks_like_fio_text(text: str) -> bool:
    """True when ``text`` holds at least one fio job result block in fio's normal format."""
    return bool(_RESULT_SEARCH.search(text)) and bool(_DIR_SEARCH.search(text))


def parse_fio_text(text: str, source: str = "") -> list[EngineDocument]:
    """One EngineDocument per fio invocation (or status dump) found in ``text``, in order.

    Raises OutputParseError, naming ``source`` (and the line when one is at fault), when the
    text holds no fio job results or a results line cannot be read.
    """
    return parse_fio_lines(text.splitlines(), source)


def parse_fio_lines(lines: Iterable[str], source: str = "") -> list[EngineDocument]:
    """``parse_fio_text`` over lines (e.g. an open file): memory grows with the results
    found, not with the size of the text."""
    where = source or "fio text output"
    reader = _Reader(where)
    for lineno, line in enumerate(lines, start=1):
        reader.feed(lineno, line.rstrip())
    docs = [doc.build() for doc in reader.finish() if doc.blocks]
    if not docs:
        raise OutputParseError(
            f"{where}: {NO_RESULTS} (a line such as "
            "'name: (groupid=0, jobs=1): err= 0: ...' followed by 'read: IOPS=...')",
            _HINT,
        )
    return docs


# --------------------------------------------------------------------------- numbers


def _count(text: str) -> float | None:
    """12.9k -> 12900, 6367k, 3240, 4080.7k (fio's num2str, base 1000)."""
    match = _COUNT_RE.match(text)
    if not match:
        return None
    return float(match.group(1)) * 1000 ** _POWERS[match.group(2).lower()]


def _bytes(text: str, old: bool) -> float | None:
    """1860MiB, 11.2GiB, 3235Mi, 0B; binary with "i", and always in fio 2.x (KB = KiB)."""
    match = _BYTES_RE.match(text)
    if not match:
        return None
    number, power, binary = match.groups()
    base = 1024 if binary or old else 1000
    return float(number) * base ** _POWERS[power.lower()]


def _block_size(text: str) -> int | None:
    """A job header's block size: 8192B, 128KiB, 16.0KiB, 4K (always binary)."""
    size = _bytes(text.replace(" ", ""), old=True)
    return int(size) if size else None


# --------------------------------------------------------------------------- job headers


def _header_sizes(rest: str) -> list[tuple[int | None, int | None]]:
    """(min, max) block size per direction (read, write, trim) from a job header line."""
    match = re.search(r"\bbs=(.*?)(?:, ioengine=|, iodepth=|$)", rest)
    if not match:
        return []
    text = match.group(1)
    tagged = _BS3_RE.findall(text)
    if tagged:  # fio 3.x: (R) 8192B-8192B, (W) 8192B-8192B, (T) 8192B-8192B
        return [(_block_size(lo), _block_size(hi)) for _, lo, hi in tagged]
    sizes = []
    for part in text.split("/"):  # fio 2.x: 4K-4K/4K-4K/4K-4K
        lo, _, hi = part.partition("-")
        sizes.append((_block_size(lo), _block_size(hi or lo)))
    return sizes


def _bs_options(sizes: list[tuple[int | None, int | None]]) -> dict[str, str]:
    if not sizes or any(lo is None or hi is None for lo, hi in sizes):
        return {}
    if all(lo == hi for lo, hi in sizes):
        fixed = [str(lo) for lo, _ in sizes]
        return {"bs": fixed[0] if len(set(fixed)) == 1 else ",".join(fixed)}
    return {"bsrange": ",".join(f"{lo}-{hi}" for lo, hi in sizes)}


def _header_options(rest: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for key in ("rw", "ioengine", "iodepth"):
        match = re.search(rf"\b{key}=([^,\s]+)", rest)
        if match:
            options[key] = match.group(1)
    options.update(_bs_options(_header_sizes(rest)))
    return options


def _fixed_sizes(options: dict[str, str]) -> list[int | None]:
    """Block size per direction from the bs option this module writes ("8192", "r,w,t")."""
    parts = options.get("bs", "").split(",")
    sizes = [int(p) if p.isdigit() else None for p in parts]
    return [sizes[min(i, len(sizes) - 1)] for i in range(len(DIRECTIONS))]


# --------------------------------------------------------------------------- blocks


@dataclass
class _Dir:
    """One direction of one result block, as printed."""

    iops: float | None
    bw: float | None
    io: float | None
    runtime_ms: int
    lat: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # kind -> ns
    pct: dict[str, dict[float, float]] = field(default_factory=dict)  # kind -> {pct: ns}


@dataclass
class _Block:
    """One job result block: ``name: (groupid=0, jobs=1): err= 0: ...`` and its lines."""

    name: str
    groupid: int
    jobs: int
    error: int
    host: str | None
    where: str
    dirs: dict[str, _Dir] = field(default_factory=dict)
    issued: dict[str, int] = field(default_factory=dict)
    usr_cpu: float | None = None
    sys_cpu: float | None = None
    old_format: bool = False
    _current: _Dir | None = None
    _pct: tuple[dict[float, float], int] | None = None

    def feed(self, lineno: int, line: str) -> None:
        if _DIR_START_RE.match(line):
            self._direction(lineno, line)
            return
        if self._pct is not None and line.lstrip().startswith("|"):
            target, scale = self._pct
            target.update((float(p), float(v) * scale) for p, v in _PCT_RE.findall(line))
            return
        self._pct = None
        for handler in (self._latency, self._percentile_head, self._cpu, self._issued):
            if handler(line):
                return

    def _bad(self, lineno: int, line: str, what: str) -> OutputParseError:
        where = f"{self.where}: line {lineno}"
        return OutputParseError(f"{where}: cannot read {what}: {line.strip()!r}", _HINT)

    def _direction(self, lineno: int, line: str) -> None:
        new, old = _DIR3_RE.match(line), _DIR2_RE.match(line)
        io = _IO3_RE.search(line)
        if new and io:
            ddir, iops, bw = new.group("ddir"), _count(new.group("iops")), new.group("bw")
            io_text, runtime = io.group("io"), int(io.group("runt"))
        elif old:
            self.old_format = True
            ddir, iops, bw = old.group("ddir"), _count(old.group("iops")), old.group("bw")
            io_text, runtime = old.group("io"), int(old.group("runt"))
        else:
            raise self._bad(lineno, line, "fio's direction line")
        self._current = _Dir(iops=iops, bw=_bytes(bw, self.old_format),
                             io=_bytes(io_text, self.old_format), runtime_ms=runtime)  # fmt: skip
        self.dirs[ddir] = self._current

    def _latency(self, line: str) -> bool:
        match = _LAT_RE.match(line)
        if not match:
            return False
        values = [_count(match.group(k)) for k in ("min", "max", "avg")]
        if self._current is not None and all(v is not None for v in values):
            scale = _NS_PER_UNIT[match.group("unit")]
            low, high, mean = (float(v or 0) * scale for v in values)
            self._current.lat[match.group("kind")] = (low, high, mean)
        return True

    def _percentile_head(self, line: str) -> bool:
        match = _PCT_HEAD_RE.match(line)
        if not match:
            return False
        if self._current is not None:
            target = self._current.pct.setdefault(match.group("kind"), {})
            self._pct = (target, _NS_PER_UNIT[match.group("unit")])
        return True

    def _cpu(self, line: str) -> bool:
        match = _CPU_RE.match(line)
        if match:
            self.usr_cpu, self.sys_cpu = float(match.group("usr")), float(match.group("sys"))
        return bool(match)

    def _issued(self, line: str) -> bool:
        match = _ISSUED_RE.match(line)
        if not match:
            return False
        total = match.group("total").rstrip(",")
        if "=" in total:  # fio 2.x: r=60902872/w=0/d=0
            names = {"r": "read", "w": "write", "d": "trim", "t": "trim"}
            for part in total.split("/"):
                key, _, value = part.partition("=")
                if key in names and value.isdigit():
                    self.issued[names[key]] = int(value)
        else:  # fio 3.x: 238075,0,0,0 (read, write, trim, sync)
            for name, value in zip(DIRECTIONS, total.split(","), strict=False):
                if value.isdigit():
                    self.issued[name] = int(value)
        return True

    # ----------------------------------------------------------------------- result

    @property
    def label(self) -> str:
        host = f"<{self.host}> " if self.host else ""
        return f"{host}{self.name} (groupid={self.groupid})"

    def result(self, options: dict[str, str]) -> tuple[Measurement, list[str]]:
        options = dict(options) | {"numjobs": str(self.jobs)}
        sizes = _fixed_sizes(options)
        stats, notes = {}, []
        for i, name in enumerate(DIRECTIONS):
            stats[name], note = _dir_stats(self.dirs.get(name), self.issued.get(name), sizes[i])
            notes += [f"{name}: {note}"] if note else []
        job = Measurement(
            name=self.name,
            groupid=self.groupid,
            error=self.error,
            read=stats["read"],
            write=stats["write"],
            trim=stats["trim"],
            options=options,
            hostname=None if self.name == ALL_CLIENTS else self.host,
            usr_cpu=self.usr_cpu,
            sys_cpu=self.sys_cpu,
        )
        return job, notes


_EMPTY = DirStats(ios=0, io_bytes=0, runtime_ms=0, iops=0.0, bw_bytes=0.0, lat_mean_ns=None,
                  lat_min_ns=None, lat_max_ns=None, lat_kind="clat")  # fmt: skip
# fio prints io= with 3-4 significant digits; some versions (3.25) truncate instead of
# rounding (19.96 GiB printed as "19.0GiB"). Within this the two agree and nothing is said.
_DISPLAY_TOLERANCE = 0.006


def _ios(d: _Dir, issued: int | None, bs: int | None) -> int:
    if issued is not None:
        return issued
    if d.io is not None and bs:
        return round(d.io / bs)
    return round((d.iops or 0.0) * d.runtime_ms / 1000)


def _io_bytes(d: _Dir, ios: int, bs: int | None, issued: bool) -> tuple[int, str | None]:
    """Bytes moved and, when fio's printed io= disagrees, the line saying which won.

    Issued I/Os x a fixed block size is exact; fio's io= is a rounded (or, in some versions,
    truncated) display value, so the count wins whenever fio printed it.
    """
    exact = ios * bs if bs else None
    if d.io is None:
        return exact or 0, None
    if exact is None or not issued:
        return round(d.io), None
    if math.isclose(exact, d.io, rel_tol=_DISPLAY_TOLERANCE, abs_tol=1):
        return exact, None
    note = (
        f"printed io={d.io / MIB:.1f} MiB, but {ios} issued I/Os x {bs} B = "
        f"{exact / MIB:.1f} MiB: the issued I/Os are used (fio's display value is rounded)"
    )
    return exact, note


MIB = 1 << 20


def _dir_stats(d: _Dir | None, issued: int | None, bs: int | None) -> tuple[DirStats, str | None]:
    if d is None:
        return _EMPTY, None
    ios = _ios(d, issued, bs)
    io_bytes, note = _io_bytes(d, ios, bs, issued is not None)
    runtime = d.runtime_ms
    iops = ios * 1000 / runtime if runtime > 0 else (d.iops or 0.0)
    bw = io_bytes * 1000 / runtime if runtime > 0 else (d.bw or 0.0)
    summary = d.lat.get("lat") or d.lat.get("clat")
    dist_kind = "lat" if "lat" in d.pct else "clat" if "clat" in d.pct else None
    kind = dist_kind or ("lat" if "lat" in d.lat else "clat")
    if ios == 0 or summary is None:
        summary = None
    stats = DirStats(
        ios=ios,
        io_bytes=io_bytes,
        runtime_ms=runtime,
        iops=iops,
        bw_bytes=bw,
        lat_mean_ns=summary[2] if summary else None,
        lat_min_ns=summary[0] if summary else None,
        lat_max_ns=summary[1] if summary else None,
        lat_kind=kind,
        percentiles_ns=dict(d.pct[dist_kind]) if dist_kind and ios else {},
    )
    return stats, note


# --------------------------------------------------------------------------- documents


@dataclass
class _Doc:
    """What one fio invocation (or one status dump of it) printed, collected line by line."""

    status_dump: bool = False
    version: str = ""
    headers: dict[tuple[str | None, str], dict[str, str]] = field(default_factory=dict)
    group_headers: dict[tuple[str | None, int], dict[str, str]] = field(default_factory=dict)
    blocks: list[_Block] = field(default_factory=list)
    last_group: dict[str | None, int] = field(default_factory=dict)  # host -> last groupid
    servers: Counter[str] = field(default_factory=Counter)  # hostname= lines: name -> count
    server_order: list[str] = field(default_factory=list)  # hostname= lines, in order
    unnamed_hosts: bool = False  # blocks given to servers by listing order (no prefixes)
    status_hosts: set[str | None] = field(default_factory=set)  # summary printed after blocks
    disk_util: list[dict[str, object]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    @property
    def has_results(self) -> bool:
        return bool(self.blocks or self.status_hosts)

    def restarted(self, host: str | None, groupid: int) -> bool:
        """A result block for ``host`` that cannot continue its sequence: fio prints each
        host's groups in order, then that host's "Run status group" summary."""
        if host in self.status_hosts:
            return True
        return groupid < self.last_group.get(host, -1)

    def add_block(self, block: _Block) -> None:
        self.blocks.append(block)
        self.last_group[block.host] = block.groupid

    def add_header(self, host: str | None, name: str, groupid: int, rest: str) -> None:
        options = _header_options(rest)
        self.headers.setdefault((host, name), options)
        self.group_headers.setdefault((host, groupid), options)

    def options_for(self, block: _Block) -> dict[str, str]:
        host = block.host.split("#")[0] if block.host else None
        for key in ((host, block.name), (None, block.name)):
            if key in self.headers:
                return self.headers[key]
        if (host, block.groupid) in self.group_headers:
            return self.group_headers[(host, block.groupid)]
        same_name = [o for (_, name), o in self.headers.items() if name == block.name]
        same_group = [o for (_, g), o in self.group_headers.items() if g == block.groupid]
        return (same_name or same_group or [{}])[0]

    def build(self) -> EngineDocument:
        results, notes = [], []
        if self.unnamed_hosts:
            notes.append(
                "no host prefix before the result blocks: each block sequence was given to "
                "the next server of fio's hostname= lines, in their order"
            )
        for b in self.blocks:
            result, block_notes = b.result(self.options_for(b))
            results.append(result)
            notes += [f"{b.label}: {n}" for n in block_notes]
        everyone = [r for r in results if r.name == ALL_CLIENTS]
        return EngineDocument(
            engine_version=self.version,
            timestamp=None,
            timestamp_ms=None,
            global_options={},
            jobs=[r for r in results if r.name != ALL_CLIENTS],
            all_clients=everyone[-1] if everyone else None,
            disk_util=list(self.disk_util),
            preamble="\n".join(self.messages),
            status_dump=self.status_dump,
            notes=tuple(notes),
        )


class _Reader:
    """The line-by-line state: the document being read, the hosts, the open result block.

    Hosts: ``fio --client`` prefixes a server's lines with ``<name> ``; from fio 3.x on only
    the first line of each server's text block carries it, often alone on its line, and fio
    3.12 may print several such prefix lines in a row before the blocks that follow them.
    So a bare prefix line announces a host (queued, in order); an unprefixed result block
    belongs to the host whose sequence it continues, and where the groupid sequence
    restarts (or that host's summary was printed) the next announced host begins. With no
    host announced, a restart is a later status dump of the same run.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.docs: list[_Doc] = [_Doc()]
        self.host: str | None = None  # the host unprefixed lines belong to
        self.pending: deque[str] = deque()  # hosts announced by bare prefix lines
        self.block: _Block | None = None

    @property
    def doc(self) -> _Doc:
        return self.docs[-1]

    def finish(self) -> list[_Doc]:
        return self.docs

    def feed(self, lineno: int, line: str) -> None:
        host = self.host
        prefixed = _HOST_RE.match(line)
        if prefixed:
            host, line = prefixed.group(1), prefixed.group(2)
            if not line.strip():
                self._announce(host)
                return
        if self.block is not None and line[:1] in (" ", "\t") and line.strip():
            self.block.feed(lineno, line)
            return
        self.block = None
        if line.strip():
            self._top_level(lineno, line, host, explicit=bool(prefixed))

    def _announce(self, host: str) -> None:
        # not deduplicated: servers may share one host name, each announced by its own line
        self.pending.append(host)

    def _invocation(self) -> None:
        """A line that only a new fio invocation prints (version, Starting, job list)."""
        if self.doc.has_results:
            self.docs.append(_Doc())
            self.host = None
            self.pending.clear()

    def _top_level(self, lineno: int, line: str, host: str | None, explicit: bool) -> None:
        if self._result_header(line, host, explicit) or self._job_header(line, host):
            return
        version = _VERSION_RE.match(line)
        if version:
            self._invocation()
            self.doc.version = version.group(1)
            return
        server = _SERVER_RE.match(line)
        if server:
            if self.doc.blocks:  # a new client run lists its servers again
                self._invocation()
            self.doc.servers[server.group(1)] += 1
            self.doc.server_order.append(server.group(1))
            self.doc.version = self.doc.version or server.group(2)
        elif _STARTING_RE.match(line):
            self._invocation()
        elif line.startswith("Run status group"):
            self.doc.status_hosts.add(host)
        elif _DISK_RE.match(line):
            self.doc.disk_util.append(_disk(line))
        elif line.lstrip().startswith("fio:"):
            tag = f"<{host}> " if explicit and host else ""
            self.doc.messages.append(tag + line.strip())

    def _block_host(self, name: str, groupid: int, host: str | None, explicit: bool) -> str | None:
        """The host a new result block belongs to; starts a status dump when fio restarted."""
        if name == ALL_CLIENTS:
            return None
        if explicit:
            if host is not None and host in self.pending:
                self.pending.remove(host)
        elif host is None or self.doc.restarted(host, groupid):
            host = self._next_host() or self._next_listed() or host
        if self.doc.restarted(host, groupid):
            # the same host's results again with no new invocation: a later status dump
            # (what the run printed before its results still describes it)
            prev = self.doc
            self.docs.append(_Doc(status_dump=True, version=prev.version, headers=prev.headers,
                                  group_headers=prev.group_headers))  # fmt: skip
        self.host = host
        return host

    def _next_host(self) -> str | None:
        """The next announced host that has a server left to start a text block: a name
        announced again by a server already read (its text came in two parts) is passed."""
        while self.pending:
            name = self.pending.popleft()
            started = {b.host for b in self.doc.blocks if b.host and b.host.split("#")[0] == name}
            if len(started) < max(1, self.doc.servers[name]):
                return self._segment_name(name)
        return None

    def _next_listed(self) -> str | None:
        """No prefix announced the blocks (fio --client with terse output among the formats
        prints none): the next server of the hostname= lines that has not started, in their
        order. Totals are right; which block is which server is the listing's guess."""
        segments = {b.host for b in self.doc.blocks if b.host}
        started = Counter(h.split("#")[0] for h in segments)
        seen: Counter[str] = Counter()
        for name in self.doc.server_order:
            seen[name] += 1
            if seen[name] > started[name]:
                self.doc.unnamed_hosts = True
                return self._segment_name(name)
        return None

    def _segment_name(self, host: str) -> str:
        """Two servers may share a host name (``hostname=vm`` twice): number the repeats."""
        taken = {b.host for b in self.doc.blocks}
        name, number = host, 1
        while name in taken:
            number += 1
            name = f"{host}#{number}"
        return name

    def _result_header(self, line: str, host: str | None, explicit: bool) -> bool:
        match = _RESULT_RE.match(line)
        if not match:
            return False
        name, groupid = match.group("name"), int(match.group("g"))
        self.block = _Block(
            name=name,
            groupid=groupid,
            jobs=int(match.group("jobs")),
            error=int(match.group("err")),
            host=self._block_host(name, groupid, host, explicit),
            where=self.where,
        )
        self.doc.add_block(self.block)
        return True

    def _job_header(self, line: str, host: str | None) -> bool:
        match = _JOB_HEADER_RE.match(line)
        if not match:
            return False
        self._invocation()
        self.doc.add_header(host, match.group("name"), int(match.group("g")),
                            match.group("rest"))  # fmt: skip
        return True


def _disk(line: str) -> dict[str, object]:
    match = _DISK_RE.match(line)
    assert match is not None
    numbers = [int(v) for v in match.groups()[1:8]]
    entry: dict[str, object] = {"name": match.group("name")}
    entry.update(zip(_DISK_FIELDS, numbers, strict=True))
    entry["util"] = float(match.groups()[8])
    return entry
