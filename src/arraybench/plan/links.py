"""The fabric links a plan declares (`4 x FC 16G`, `2 x 25GbE iSCSI`, `2 x IB HDR`): their
kinds, speeds and protocols, and the parser the plan validates `fabric.links` with. The
ceilings these links give are computed in `analysis.fabric`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

KINDS = ("fc", "ethernet", "infiniband", "sas")
KIND_NAMES = {
    "fc": "Fibre Channel",
    "ethernet": "Ethernet",
    "infiniband": "InfiniBand",
    "sas": "SAS",
}

# ---------------------------------------------------------------- line rates

# FC speed class -> (physical bytes/s per direction, rated MB/s)
FC_RATES: dict[float, tuple[float, float]] = {
    1: (1.0625e9 * 8 / 10 / 8, 100),
    2: (2.125e9 * 8 / 10 / 8, 200),
    4: (4.25e9 * 8 / 10 / 8, 400),
    8: (8.5e9 * 8 / 10 / 8, 800),
    10: (10.51875e9 * 64 / 66 / 8, 1200),
    16: (14.025e9 * 64 / 66 / 8, 1600),
    32: (28.05e9 * 514 / 528 * 256 / 257 / 8, 3200),
    64: (57.8e9 * 514 / 544 * 256 / 257 / 8, 6400),
    128: (4 * 28.05e9 * 514 / 528 * 256 / 257 / 8, 12800),
}
_ETH_SPEEDS = (1, 10, 25, 40, 50, 100, 200, 400, 800)
# InfiniBand 4x port: generation -> data rate in Gbit/s after line coding
IB_GENS: dict[str, float] = {
    "sdr": 8,
    "ddr": 16,
    "qdr": 32,
    "fdr10": 40,
    "fdr": 4 * 14.0625 * 64 / 66,
    "edr": 100,
    "hdr": 200,
    "ndr": 400,
    "xdr": 800,
}
# SAS lane speed name -> physical bytes/s per direction
SAS_RATES: dict[float, float] = {
    3: 3e9 * 8 / 10 / 8,
    6: 6e9 * 8 / 10 / 8,
    12: 12e9 * 8 / 10 / 8,
    24: 22.5e9 * 128 / 150 / 8,
}

_SPEEDS: dict[str, set[float]] = {
    "fc": set(FC_RATES),
    "ethernet": {float(s) for s in _ETH_SPEEDS},
    "sas": set(SAS_RATES),
}

PROTOCOLS = {
    "fc": ("fcp", "nvme/fc"),
    "sas": ("ssp",),
    "ethernet": ("iscsi", "nvme/tcp", "nvme/roce", "iser", "nfs"),
    "infiniband": ("srp", "iser", "nvme/rdma"),
}
DEFAULT_PROTOCOL = {"fc": "fcp", "sas": "ssp", "ethernet": "iscsi", "infiniband": "nvme/rdma"}
PROTOCOL_NAMES = {
    "fcp": "FCP",
    "nvme/fc": "FC-NVMe",
    "ssp": "SSP",
    "iscsi": "iSCSI",
    "nvme/tcp": "NVMe/TCP",
    "nvme/roce": "NVMe/RoCE",
    "iser": "iSER",
    "nfs": "NFS",
    "srp": "SRP",
    "nvme/rdma": "NVMe/RDMA",
}


@dataclass(frozen=True)
class Link:
    """`count` identical ports of one kind. `gbit` is the speed name: 16 for 16GFC, 25 for
    25GbE, 12 for a SAS-3 lane; for InfiniBand the 4x data rate (HDR = 200, FDR = 54.5).
    `protocol` is None for the kind's default (FCP, SSP, iSCSI over Ethernet, NVMe/RDMA on IB)."""

    kind: str
    count: int
    gbit: float
    protocol: str | None = None

    @property
    def label(self) -> str:
        """`4 x FC 16G`, `2 x 25GbE iSCSI`, `1 x IB HDR`, `4 x SAS 12G`."""
        proto = f" {PROTOCOL_NAMES.get(self.protocol, self.protocol)}" if self.protocol else ""
        if self.kind == "fc":
            body = f"FC {self.gbit:g}G"
        elif self.kind == "ethernet":
            body = f"{self.gbit:g}GbE"
        elif self.kind == "infiniband":
            gen = next((g for g, r in IB_GENS.items() if math.isclose(r, self.gbit)), None)
            body = f"IB {gen.upper()}" if gen else f"IB {self.gbit:g}G"
        else:
            body = f"SAS {self.gbit:g}G"
        return f"{self.count} x {body}{proto}"

    def __str__(self) -> str:
        return self.label


# ---------------------------------------------------------------- parsing

_FORMS = (
    "accepted forms: '4 x FC 16G', '16GFC', '16G FC', '4 x 16 Gbit FC', '1 x 32GFC', "
    "'2 x 25GbE', '25G Ethernet iSCSI', 'NVMe/TCP 100GbE', '2 x IB HDR', 'SAS 12G x 4'; "
    f"FC speeds {', '.join(f'{s:g}' for s in FC_RATES)}; "
    f"Ethernet {', '.join(str(s) for s in _ETH_SPEEDS)} GbE; "
    f"InfiniBand {', '.join(g.upper() for g in IB_GENS)}; SAS 3, 6, 12, 24G; "
    "protocols iSCSI, NVMe/TCP, NVMe/RoCE, iSER, NFS (Ethernet), FCP, NVMe/FC (FC), "
    "SRP, iSER, NVMe/RDMA (InfiniBand)"
)

_PROTO_PATTERNS = (
    (r"nvme\s*[/-]?\s*(?:over\s*)?tcp", "nvme/tcp"),
    (r"nvme\s*[/-]?\s*(?:over\s*)?roce(?:v2)?", "nvme/roce"),
    (r"\broce(?:v2)?\b", "roce"),  # RDMA over Ethernet: NVMe/RoCE unless iSER is named
    (r"nvme\s*[/-]?\s*(?:over\s*)?rdma", "nvme/rdma"),
    (r"nvme\s*[/-]?\s*(?:over\s*)?fc|fc\s*-\s*nvme", "nvme/fc"),
    (r"\biser\b", "iser"),
    (r"\biscsi\b", "iscsi"),
    (r"\bnfs(?:v?[34](?:\.[0-2])?)?\b", "nfs"),
    (r"\bsrp\b", "srp"),
    (r"\bfcp\b", "fcp"),
    (r"\bssp\b", "ssp"),
)
_SPEED = r"(\d+(?:\.\d+)?)\s*(?:g|gb|gbit|gbps|gb/s|gbit/s|gigabit)?"
_COUNT_FRONT = re.compile(r"^(\d+)\s*x\s*(.+)$")
_COUNT_BACK = re.compile(r"^(.+?)\s*\bx\s*(\d+)$")


def _fail(text: str, why: str) -> ValueError:
    return ValueError(f"cannot read link {text!r}: {why}; {_FORMS}")


def _protocol(body: str, text: str) -> tuple[str, str | None]:
    found: list[str] = []
    for pattern, name in _PROTO_PATTERNS:
        body, n = re.subn(pattern, " ", body)
        if n:
            found.append(name)
    if "roce" in found:
        found = [p for p in found if p != "roce"] or ["nvme/roce"]
        if found != ["iser"]:
            found = ["nvme/roce", *(p for p in found if p != "nvme/roce")]
    if len(set(found)) > 1:
        raise _fail(text, f"more than one protocol ({', '.join(found)})")
    return body, (found[0] if found else None)


def _number(body: str, text: str) -> float:
    nums = re.findall(_SPEED + r"(?![\d.])", body)
    if len(nums) != 1:
        raise _fail(text, "expected exactly one speed" if nums else "no speed given")
    return float(nums[0])


def _kind(body: str, protocol: str | None) -> tuple[str | None, str]:
    """The link kind and the text with the kind's keyword removed."""
    rules = (
        ("fc", r"fibre\s*channel|fiber\s*channel|g?fc\b"),
        ("ethernet", r"ethernet|\beth\b|g?be\b|(?<=\d)\s*ge\b"),
        ("infiniband", r"infiniband|\bib\b"),
        ("sas", r"\bsas(?:-?[1-4])?\b"),
    )
    for kind, pattern in rules:
        new, n = re.subn(pattern, " ", body)
        if n:
            return kind, new
    by_protocol = {"nvme/fc": "fc", "fcp": "fc", "ssp": "sas", "srp": "infiniband"}
    if protocol in by_protocol:
        return by_protocol[protocol], body
    if protocol is not None:
        return "ethernet", body  # iSCSI / NVMe-TCP / RoCE / NFS with only a speed: Ethernet
    return None, body


def parse_link(text: str) -> Link:
    """`4 x FC 16G` -> Link("fc", 4, 16.0, None); case-insensitive, `x`, `×` or `*` for counts.

    ValueError names the accepted forms, speeds and protocols."""
    if not isinstance(text, str) or not text.strip():
        raise _fail(str(text), "empty")
    body = text.lower().replace("×", " x ").replace("*", " x ")
    body = re.sub(r"[(),;]", " ", body)
    body = re.sub(r"\s+", " ", body).strip()
    count = 1
    front, back = _COUNT_FRONT.match(body), _COUNT_BACK.match(body)
    if front:
        count, body = int(front.group(1)), front.group(2)
    elif back:
        body, count = back.group(1), int(back.group(2))
    if count < 1:
        raise _fail(text, "the count must be at least 1")
    body, protocol = _protocol(body, text)
    kind, body = _kind(body, protocol)
    if kind is None:
        raise _fail(text, "no link type (FC, GbE / Ethernet, IB, SAS)")
    if kind == "infiniband":
        gbit = _ib_speed(body, text)
    else:
        gbit = _number(body, text)
        if gbit not in _SPEEDS[kind]:
            raise _fail(text, f"{KIND_NAMES[kind]} has no {gbit:g}G speed")
    if protocol is not None and protocol not in PROTOCOLS[kind]:
        raise _fail(text, f"{PROTOCOL_NAMES[protocol]} does not run over {KIND_NAMES[kind]}")
    if protocol == DEFAULT_PROTOCOL[kind] and kind in ("fc", "sas"):
        protocol = None
    return Link(kind, count, gbit, protocol)


def _ib_speed(body: str, text: str) -> float:
    gens = [g for g in IB_GENS if re.search(rf"\b{g}\b", body)]
    if len(gens) == 1:
        return IB_GENS[gens[0]]
    if gens:
        raise _fail(text, "more than one InfiniBand generation")
    gbit = _number(body, text)
    for rate in IB_GENS.values():
        if math.isclose(rate, gbit, rel_tol=0.02):
            return rate
    raise _fail(text, f"{gbit:g}G is not an InfiniBand 4x data rate")
