"""Theoretical fabric ceilings: what the host links can carry, in MB/s and in IOPS per block size.

The public reports put their results against the fabric: In&Out "2 x 16 Gbit FC per server =
4 GB/s", dbi "4 x 16 Gbit FC = 8 GB/s raw; FC frame 2112 bytes with 36 bytes overhead gives the
payload ceiling", AERODISK's readers "4 x 16G = 6.4 GB/s". This module turns a link declared in a
plan (`4 x FC 16G`, `2 x 25GbE iSCSI`, `NVMe/TCP 100GbE`, `2 x IB HDR`, `SAS 12G x 4`) into
the data rate of the wire and then into the payload ceiling for a block size, counting framing
and the per-I/O command and status messages of the protocol.

More: docs/internals.md, `analysis/fabric.py`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from arraybench.plan.links import (
    DEFAULT_PROTOCOL,
    FC_RATES,
    KINDS,
    PROTOCOL_NAMES,
    SAS_RATES,
    Link,
    parse_link,
)

Raw = Literal["physical", "nominal", "rated"]
Direction = Literal["read", "write", "mixed"]


def _as_links(links: Link | str | Iterable[Link | str]) -> list[Link]:
    if isinstance(links, Link | str):
        links = [links]
    out = [x if isinstance(x, Link) else parse_link(x) for x in links]
    if not out:
        raise ValueError("no links given")
    return out


# ---------------------------------------------------------------- line rates


def line_rate_bytes_per_s(link: Link, raw: Raw = "physical") -> float:
    """Bytes per second that ONE port of `link` carries per direction (see the module table).

    physical: after line coding and FEC (16GFC: 1.7e9); nominal: speed name / 8 (2e9);
    rated: the published MB/s (16GFC: 1.6e9). Multiply by `link.count` for the bundle."""
    if raw not in ("physical", "nominal", "rated"):
        raise ValueError(f"raw must be 'physical', 'nominal' or 'rated', not {raw!r}")
    if raw == "nominal":
        return link.gbit * 1e9 / 8
    if link.kind == "fc":
        physical, rated = FC_RATES[link.gbit]
        return physical if raw == "physical" else rated * 1e6
    if link.kind == "sas":
        return SAS_RATES[link.gbit]
    if link.kind in ("ethernet", "infiniband"):
        return link.gbit * 1e9 / 8
    raise ValueError(f"unknown link kind {link.kind!r}: use one of {', '.join(KINDS)}")


# ---------------------------------------------------------------- wire model

Msg = tuple[int, int]  # (payload bytes, extra header bytes in the message's first unit)

_ETH_WIRE = 7 + 1 + 14 + 4 + 12  # preamble, SFD, MAC header, FCS, inter-frame gap = 38
_IP_TCP = 20 + 20 + 12  # IPv4, TCP, timestamps option = 52
_ROCE_PACKET = _ETH_WIRE + 20 + 8 + 12 + 4  # + IPv4, UDP, BTH, ICRC = 82
_ROCE_IN_MTU = 20 + 8 + 12 + 16 + 4  # IPv4, UDP, BTH, RETH, ICRC inside the Ethernet MTU
_IB_PACKET = 8 + 12 + 4 + 2  # LRH, BTH, ICRC, VCRC = 26
FC_FRAMING = 4 + 24 + 4 + 4  # SOF, header, CRC, EOF = 36
ISCSI_BHS = 48
ISCSI_PDU_DATA = 256 * 1024


@dataclass(frozen=True)
class _Transport:
    unit_payload: int  # largest payload of one frame / packet
    unit_overhead: int  # wire bytes per frame / packet besides the payload
    stream: bool  # TCP: messages of consecutive I/Os share packets

    def wire(self, msgs: Sequence[Msg]) -> float:
        if self.stream:
            total = sum(n + extra for n, extra in msgs)
            return total * (self.unit_payload + self.unit_overhead) / self.unit_payload
        units = sum(max(1, math.ceil(n / self.unit_payload)) for n, _ in msgs)
        return sum(n + extra for n, extra in msgs) + units * self.unit_overhead


# protocol -> (command bytes host->array, response bytes array->host, transfer-ready bytes)
_FRAMED = {"fcp": (32, 24, 12), "nvme/fc": (96, 32, 12), "ssp": (28, 24, 12)}
_RDMA = {"nvme/roce": (64, 16), "nvme/rdma": (64, 16), "iser": (76, 76), "srp": (64, 36)}


def _transport(link: Link, protocol: str, mtu: int, frame_payload: int) -> _Transport:
    if link.kind == "fc":
        return _Transport(frame_payload, FC_FRAMING, stream=False)
    if link.kind == "sas":
        return _Transport(1024, FC_FRAMING, stream=False)
    if link.kind == "infiniband":
        return _Transport(4096, _IB_PACKET, stream=False)
    if protocol in _RDMA:
        fits = [m for m in (256, 512, 1024, 2048, 4096) if m + _ROCE_IN_MTU <= mtu]
        pmtu = max(fits, default=256)
        return _Transport(pmtu, _ROCE_PACKET, stream=False)
    return _Transport(mtu - _IP_TCP, _IP_TCP + _ETH_WIRE, stream=True)


def _messages(protocol: str, bs: int, read: bool) -> tuple[list[Msg], list[Msg]]:
    """(host -> array, array -> host) messages of one I/O."""
    if protocol in _FRAMED:
        cmd, rsp, xrdy = _FRAMED[protocol]
        if read:
            return [(cmd, 0)], [(bs, 0), (rsp, 0)]
        return [(cmd, 0), (bs, 0)], [(xrdy, 0), (rsp, 0)]
    if protocol in _RDMA:
        cmd, rsp = _RDMA[protocol]
        if read:  # RDMA WRITE with RETH, then SEND of the response
            return [(cmd, 0)], [(bs, 16), (rsp, 0)]
        # RDMA READ request (RETH, no payload) out, READ responses (AETH first + last) back
        return [(cmd, 0), (bs, 8)], [(0, 16), (rsp, 0)]
    if protocol == "iscsi":
        pdus = max(1, math.ceil(bs / ISCSI_PDU_DATA)) * ISCSI_BHS
        if read:
            return [(ISCSI_BHS, 0)], [(bs, pdus), (ISCSI_BHS, 0)]
        return [(ISCSI_BHS, 0), (bs, pdus)], [(ISCSI_BHS, 0), (ISCSI_BHS, 0)]
    if protocol == "nvme/tcp":
        if read:
            return [(72, 0)], [(bs, 24), (24, 0)]
        return [(72, 0), (bs, 24)], [(24, 0), (24, 0)]
    if protocol == "nfs":
        if read:
            return [(132, 0)], [(bs, 132)]
        return [(bs, 140)], [(164, 0)]
    raise ValueError(f"unknown protocol {protocol!r}")


@dataclass(frozen=True)
class Ceiling:
    """Payload ceiling of a set of links for one block size: MB/s = 10^6 bytes/s of user data,
    IOPS, the payload share of the wire bytes in the busiest direction, and how it was derived."""

    mb_per_s: float
    iops: float
    efficiency: float
    note: str


def _link_ceiling(
    link: Link, bs: int, direction: Direction, read_fraction: float, raw: Raw, mtu: int, fp: int
) -> tuple[float, float, str]:
    """(IOPS, efficiency, note) for one Link (all its ports)."""
    protocol = link.protocol or DEFAULT_PROTOCOL[link.kind]
    transport = _transport(link, protocol, mtu, fp)
    f = {"read": 1.0, "write": 0.0}.get(direction, read_fraction)
    loads = [0.0, 0.0]  # wire bytes per I/O: host -> array, array -> host
    for share, is_read in ((f, True), (1.0 - f, False)):
        if share > 0:
            h2a, a2h = _messages(protocol, bs, is_read)
            loads[0] += share * transport.wire(h2a)
            loads[1] += share * transport.wire(a2h)
    busy = 1 if loads[1] >= loads[0] else 0
    rate = line_rate_bytes_per_s(link, raw) * link.count
    iops = rate / loads[busy]
    payload = bs * (f if busy == 1 else 1.0 - f)
    unit = "frames" if link.kind in ("fc", "sas") else "packets"
    note = (
        f"{link.label}: {rate / link.count / 1e6:,.0f} MB/s per port and direction ({raw}), "
        f"{PROTOCOL_NAMES[protocol]} in {transport.unit_payload}-byte {unit}"
        + (f" at MTU {mtu}" if link.kind == "ethernet" else "")
    )
    return iops, payload / loads[busy], note


def payload_ceiling(
    links: Link | str | Iterable[Link | str],
    block_size: int,
    direction: Direction = "read",
    *,
    raw: Literal["physical", "nominal"] = "physical",
    mtu: int = 1500,
    frame_payload: int = 2112,
    read_fraction: float = 0.5,
) -> Ceiling:
    """The most user data the links can move at `block_size`, per the module's wire model.

    direction: "read" (array -> host), "write", or "mixed" with `read_fraction` of the I/Os
    being reads (both directions loaded; payload of both counted). raw: "physical" line rate
    (default) or "nominal" = speed name / 8. mtu: Ethernet MTU (1500 or 9000). frame_payload:
    FC data field per frame (2112 largest, 2048 common)."""
    if raw not in ("physical", "nominal"):
        raise ValueError(
            f"raw must be 'physical' or 'nominal' for a payload ceiling, not {raw!r} "
            "(rated MB/s already allow for framing)"
        )
    if direction not in ("read", "write", "mixed"):
        raise ValueError(f"direction must be 'read', 'write' or 'mixed', not {direction!r}")
    if not 0.0 <= read_fraction <= 1.0:
        raise ValueError(f"read_fraction must be between 0 and 1, not {read_fraction}")
    if block_size < 1:
        raise ValueError(f"block size must be at least 1 byte, not {block_size}")
    if not 576 <= mtu <= 9216:
        raise ValueError(f"mtu must be between 576 and 9216 bytes, not {mtu}")
    if not 256 <= frame_payload <= 2112:
        raise ValueError(f"frame_payload must be between 256 and 2112 bytes, not {frame_payload}")
    parts = [
        _link_ceiling(x, block_size, direction, read_fraction, raw, mtu, frame_payload)
        for x in _as_links(links)
    ]
    iops = sum(p[0] for p in parts)
    efficiency = sum(p[0] * p[1] for p in parts) / iops
    what = direction if direction != "mixed" else f"mixed {read_fraction:.0%} read"
    note = "; ".join(p[2] for p in parts) + f"; {what}, {efficiency:.1%} of the wire is payload"
    return Ceiling(iops * block_size / 1e6, iops, efficiency, note)


# a measured figure this far above the payload ceiling cannot have crossed the links: the
# model leaves out IDLE primitives and ordered sets (about 1 % of the wire), never adds, so a
# figure 5 % beyond it is no rounding of the model's but a cache's or a misdeclared fabric's
ABOVE_CEILING = 1.05


@dataclass(frozen=True)
class WorkloadCeiling:
    """The fabric's payload ceiling for one workload on `hosts` hosts (each with the declared
    links), and the fabric named as the plan declared it ("2 x FC 16G")."""

    mb_per_s: float
    iops: float
    fabric: str
    hosts: int = 1

    def in_unit(self, unit: str) -> float:
        """In a series' unit: IOPS, else MB/s."""
        return self.iops if unit == "IOPS" else self.mb_per_s

    @property
    def label(self) -> str:
        """The line's label on a chart: `fabric 2 x FC 16G` (`x 2 hosts` on many)."""
        per = f", x {self.hosts} hosts" if self.hosts > 1 else ""
        return f"fabric {self.fabric}{per}"


def workload_ceiling(
    links: Sequence[str], block_size: int, read_pct: int, *, mtu: int = 1500, hosts: int = 1
) -> WorkloadCeiling:
    """The payload ceiling of a workload of `block_size` bytes and `read_pct` % reads over the
    declared links of each of `hosts` hosts: every host has its own links (plan `fabric:`), so
    the ceiling of a point run on several is theirs summed."""
    direction: Direction = "read" if read_pct >= 100 else "write" if read_pct <= 0 else "mixed"
    top = payload_ceiling(links, block_size, direction, mtu=mtu, read_fraction=read_pct / 100)
    n = max(hosts, 1)
    return WorkloadCeiling(top.mb_per_s * n, top.iops * n, " + ".join(links), n)


def above_ceiling(mb_per_s: float, ceiling: WorkloadCeiling) -> bool:
    """Whether a measured figure (user data MB/s, both directions) is beyond what the links
    can carry, by more than the model's margin (ABOVE_CEILING)."""
    return ceiling.mb_per_s > 0 and mb_per_s > ABOVE_CEILING * ceiling.mb_per_s
