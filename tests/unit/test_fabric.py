"""Fabric ceilings: link parsing, line rates, the dbi payload ceiling and its arithmetic."""

from __future__ import annotations

import pytest

from arraybench.analysis.fabric import (
    Link,
    Raw,
    line_rate_bytes_per_s,
    parse_link,
    payload_ceiling,
)

MiB = 1 << 20

# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4 x FC 16G", Link("fc", 4, 16, None)),
        ("16GFC", Link("fc", 1, 16, None)),
        ("16G FC", Link("fc", 1, 16, None)),
        ("fc 16g", Link("fc", 1, 16, None)),
        ("1 x 32GFC", Link("fc", 1, 32, None)),
        ("4 x 16 Gbit FC", Link("fc", 4, 16, None)),  # In&Out's spelling
        ("4×16 GBit/s FC", Link("fc", 4, 16, None)),  # dbi's spelling
        ("4x16GFC", Link("fc", 4, 16, None)),
        ("FC-NVMe 32G", Link("fc", 1, 32, "nvme/fc")),
        ("2 x 25GbE", Link("ethernet", 2, 25, None)),
        ("2 x 25GbE (iSCSI)", Link("ethernet", 2, 25, "iscsi")),
        ("25G Ethernet iscsi", Link("ethernet", 1, 25, "iscsi")),
        ("25 GbE", Link("ethernet", 1, 25, None)),
        ("NVMe/TCP 100GbE", Link("ethernet", 1, 100, "nvme/tcp")),
        ("2 x 100G nvme/tcp", Link("ethernet", 2, 100, "nvme/tcp")),
        ("100GE NVMe/RoCE", Link("ethernet", 1, 100, "nvme/roce")),
        ("iSER over RoCE 100GbE", Link("ethernet", 1, 100, "iser")),
        ("NFS 10GbE", Link("ethernet", 1, 10, "nfs")),
        ("2 x IB HDR", Link("infiniband", 2, 200, None)),
        ("IB EDR iSER", Link("infiniband", 1, 100, "iser")),
        ("SAS 12G x 4", Link("sas", 4, 12, None)),
    ],
)
def test_parse_forms(text: str, expected: Link) -> None:
    assert parse_link(text) == expected


def test_labels_read_back() -> None:
    assert parse_link("16GFC").label == "1 x FC 16G"
    assert parse_link("2 x 25GbE iSCSI").label == "2 x 25GbE iSCSI"
    assert parse_link("2 x IB FDR").label == "2 x IB FDR"
    assert parse_link("SAS 12G x 4").label == "4 x SAS 12G"
    for text in ("4 x FC 16G", "1 x 100GbE NVMe/TCP", "2 x IB HDR", "4 x SAS 24G"):
        assert parse_link(parse_link(text).label) == parse_link(text)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("fast link", "no link type"),
        ("4 x FC 20G", "Fibre Channel has no 20G speed"),
        ("3 x 30GbE", "Ethernet has no 30G speed"),
        ("iSCSI FC 16G", "iSCSI does not run over Fibre Channel"),
        ("NVMe/TCP 16GFC", "does not run over Fibre Channel"),
        ("2 x 25GbE 10G", "exactly one speed"),
        ("FC", "no speed"),
        ("IB QDR HDR", "more than one InfiniBand generation"),
        ("0 x FC 16G", "at least 1"),
        ("iscsi nfs 10GbE", "more than one protocol"),
    ],
)
def test_parse_errors_say_what_is_accepted(text: str, why: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_link(text)
    message = str(err.value)
    assert why in message
    assert "accepted forms" in message and "4 x FC 16G" in message and "2 x IB HDR" in message


# ---------------------------------------------------------------- line rates


def test_16gfc_per_link_rates() -> None:
    link = parse_link("16GFC")
    # FCIA's rated ("nominal throughput") figure per direction
    assert line_rate_bytes_per_s(link, raw="rated") == pytest.approx(1600e6)
    # 14.025 GBd x 64/66 = 13.6 Gb/s = 1,700 MB/s: what frames can use
    assert line_rate_bytes_per_s(link) == pytest.approx(1700e6)
    # the speed name / 8, dbi's and In&Out's "16 Gbit = 2 GB/s"
    assert line_rate_bytes_per_s(link, raw="nominal") == pytest.approx(2000e6)


@pytest.mark.parametrize(
    ("text", "physical", "rated"),
    [
        ("8GFC", 850e6, 800e6),  # 8.5 GBd 8b/10b
        ("32GFC", 3400e6, 3200e6),  # 28.05 GBd, 256b/257b + RS(528,514) = 64/66 net
        ("64GFC", 6800e6, 6400e6),  # 57.8 Gb/s PAM4 x 514/544 x 256/257 = 54.4 Gb/s
        ("128GFC", 13600e6, 12800e6),
        ("25GbE", 3125e6, 3125e6),
        ("IB HDR", 25e9, 25e9),
        ("SAS 12G", 1200e6, 1200e6),
        ("SAS 24G", 2400e6, 2400e6),  # 22.5 GBd x 128/150
    ],
)
def test_line_rate_table(text: str, physical: float, rated: float) -> None:
    link = parse_link(text)
    assert line_rate_bytes_per_s(link) == pytest.approx(physical, rel=1e-6)
    assert line_rate_bytes_per_s(link, raw="rated") == pytest.approx(rated, rel=1e-6)


def total_bytes_per_s(text: str, raw: Raw) -> float:
    """All ports of a link together, one direction."""
    link = parse_link(text)
    return line_rate_bytes_per_s(link, raw) * link.count


def test_in_and_out_raw_bandwidth() -> None:
    # "2 x 16 Gbit FC per server = 4 GB/s; 4 x 16 Gbit per array = 8 GB/s"
    assert total_bytes_per_s("2 x 16 Gbit FC", raw="nominal") == pytest.approx(4e9)
    assert total_bytes_per_s("4 x 16 Gbit FC", raw="nominal") == pytest.approx(8e9)
    # AERODISK's reader: "4 x 16G = 6.4 GB/s" is the rated figure
    assert total_bytes_per_s("4 x FC 16G", raw="rated") == pytest.approx(6.4e9)


# ---------------------------------------------------------------- the dbi ceiling


def test_dbi_payload_ceiling_and_its_arithmetic() -> None:
    """dbi: "4 x 16 Gbit FC = 8 GB/s raw; FC frame 2112 bytes with 36 bytes overhead gives the
    payload ceiling (~6.8 GB/s)".

    Their arithmetic: 64 Gbit/s / 8 = 8 GB/s, x 1024 = 8192 "MB/s" raw, x (100 - 36/2.112)/100 =
    6795 "MB/s". 36/2.112 = 17.05 is used as a percentage, but 36 bytes per 2112 are 1.705 %:
    the overhead is ten times too big. With dbi's own raw rate (2 GB/s per link, raw="nominal")
    and the overhead they describe, the ceiling is 7.87 GB/s, not 6.8.

    The ~6.8 GB/s is still about right, for another reason: a 16GFC link carries 14.025 GBd x
    64/66 = 1.7 GB/s (raw="physical", the default), and 4 x 1.7 GB/s less framing = 6.69 GB/s.
    """
    dbi = 8 * 1024 * (100 - 36 / 2.112) / 100
    assert dbi == pytest.approx(6795.6, abs=0.1)
    overhead_percent = 36 / 2112 * 100
    assert overhead_percent == pytest.approx(1.705, abs=1e-3)

    # one 1 MiB read: 497 frames (1,048,576 / 2112 = 496.5) of 36 bytes framing + FCP_RSP 60
    wire = MiB + 497 * 36 + 60
    assert wire == 1_066_528

    physical = payload_ceiling("4 x FC 16G", MiB)
    assert physical.iops == pytest.approx(4 * 1.7e9 / wire)  # 6,375.8 IOPS
    assert physical.mb_per_s == pytest.approx(4 * 1.7e9 / wire * MiB / 1e6)  # 6,685.5 MB/s
    assert physical.mb_per_s == pytest.approx(6685.5, abs=0.1)
    assert physical.efficiency == pytest.approx(MiB / wire)  # 98.3 %
    assert abs(physical.mb_per_s / 6800 - 1) < 0.02  # "~6.8 GB/s", within 2 %
    assert abs(physical.mb_per_s / dbi - 1) < 0.02

    nominal = payload_ceiling("4 x FC 16G", MiB, raw="nominal")
    assert nominal.mb_per_s == pytest.approx(8e9 / wire * MiB / 1e6)  # 7,865.3 MB/s
    assert nominal.mb_per_s == pytest.approx(7865.3, abs=0.1)

    # dbi measured a limit at about 6280 IOPS of 1 MiB ("around 90 % of the calculated
    # maximum"): against the physical ceiling that is 98.5 %.
    assert 6280 * MiB / 1e6 / physical.mb_per_s * 100 == pytest.approx(98.5, abs=0.1)


def test_8k_iops_ceiling_below_line_rate_over_block_size() -> None:
    c = payload_ceiling("4 x FC 16G", 8192)
    # 8192 bytes = 4 frames (3 x 2112 + 1856): 8192 + 4 x 36 + FCP_RSP 60 = 8396 bytes per I/O
    assert c.iops == pytest.approx(4 * 1.7e9 / 8396)  # 809,909 IOPS
    assert c.iops < 4 * 1.7e9 / 8192  # 830,078 IOPS without framing
    assert c.efficiency == pytest.approx(8192 / 8396)
    # frames of 2048 (what HBAs negotiate) need the same 4 frames at 8 KiB, 512 at 1 MiB
    assert payload_ceiling("4 x FC 16G", 8192, frame_payload=2048).iops == pytest.approx(c.iops)
    big = payload_ceiling("4 x FC 16G", MiB, frame_payload=2048)
    assert big.iops == pytest.approx(4 * 1.7e9 / (MiB + 512 * 36 + 60))


def test_directions() -> None:
    read = payload_ceiling("4 x FC 16G", 8192, "read")
    write = payload_ceiling("4 x FC 16G", 8192, "write")
    # write: FCP_CMND 68 travels with the data; read: FCP_RSP 60 does
    assert write.iops == pytest.approx(4 * 1.7e9 / (8192 + 4 * 36 + 68))
    assert write.iops < read.iops
    mixed = payload_ceiling("4 x FC 16G", 8192, "mixed", read_fraction=0.5)
    assert 1.9 * read.iops < mixed.iops < 2 * read.iops  # full duplex, both directions busy
    assert payload_ceiling("4 x FC 16G", 8192, "mixed", read_fraction=1.0).iops == pytest.approx(
        read.iops
    )


def test_links_add_up() -> None:
    one = payload_ceiling("4 x FC 16G", 65536)
    two = payload_ceiling(["2 x FC 16G", parse_link("2 x 16GFC")], 65536)
    assert two.mb_per_s == pytest.approx(one.mb_per_s)
    mixed = payload_ceiling(["2 x FC 16G", "2 x 25GbE iSCSI"], 65536)
    assert mixed.iops == pytest.approx(
        payload_ceiling("2 x FC 16G", 65536).iops + payload_ceiling("2 x 25GbE iSCSI", 65536).iops
    )


def test_iscsi_mtu_ordering() -> None:
    for bs in (8192, 65536, MiB):
        small = payload_ceiling("2 x 25GbE iSCSI", bs, mtu=1500)
        jumbo = payload_ceiling("2 x 25GbE iSCSI", bs, mtu=9000)
        assert small.mb_per_s < jumbo.mb_per_s < 2 * 3125
    # 1 MiB read at MTU 1500: 4 Data-In BHS + response = 1,048,816 stream bytes; every 1448
    # bytes of TCP payload cost 1538 on the wire (IP+TCP+timestamps 52, Ethernet 38)
    stream = MiB + 4 * 48 + 48
    c = payload_ceiling("2 x 25GbE iSCSI", MiB, mtu=1500)
    assert c.efficiency == pytest.approx(MiB / (stream * 1538 / 1448))
    assert c.mb_per_s == pytest.approx(5882.9, abs=0.1)


def test_other_protocols_are_sane() -> None:
    for text in ("2 x 25GbE nvme/tcp", "2 x 25GbE nvme/roce", "2 x 25GbE nfs", "2 x IB HDR"):
        link = parse_link(text)
        line = line_rate_bytes_per_s(link) * link.count
        for bs in (4096, 8192, MiB):
            c = payload_ceiling(link, bs)
            assert 0.8 < c.efficiency < 1.0
            assert c.mb_per_s * 1e6 < line
            assert c.iops == pytest.approx(c.mb_per_s * 1e6 / bs)
    assert "SSP" in payload_ceiling("SAS 12G x 4", MiB).note


def test_bad_ceiling_arguments() -> None:
    with pytest.raises(ValueError, match="framing"):
        payload_ceiling("4 x FC 16G", MiB, raw="rated")
    with pytest.raises(ValueError, match="direction"):
        payload_ceiling("4 x FC 16G", MiB, "both")
    with pytest.raises(ValueError, match="block size"):
        payload_ceiling("4 x FC 16G", 0)
    with pytest.raises(ValueError, match="no links"):
        payload_ceiling([], MiB)
    with pytest.raises(ValueError, match="accepted forms"):
        payload_ceiling("4 x FC 17G", MiB)
