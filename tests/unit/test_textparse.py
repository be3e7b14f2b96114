"""fio's normal text output against real outputs (tests/data, see MANIFEST.md).

Expected numbers are read from the sample files, by hand (spelled out with their units) or by
regular expressions in the test, never from the parser under test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arraybench.engines.fio.textparse import looks_like_fio_text, parse_fio_text
from arraybench.engines.measurement import EngineDocument
from arraybench.errors import OutputParseError

DATA = Path(__file__).resolve().parent.parent / "data"
TEXT_SAMPLES = (
    "01_",
    "02_",
    "18_",
    "23_",
    "24_",
    "25_",
    "26_",
    "28_",
    "29_",
    "fresh_fio3.33_normal",
)
MIB = 1 << 20


def sample(prefix: str) -> Path:
    (path,) = DATA.glob(f"{prefix}*")
    return path


def docs_of(prefix: str) -> list[EngineDocument]:
    path = sample(prefix)
    return parse_fio_text(path.read_text(), path.name)


def fio_num2str(value: int, maxlen: int = 4) -> str:
    """fio 3.12's num2str(value, sig_figs=4, base 1, no unit) as it printed IOPS, including
    its lost carry: 21964 -> "21.0k" (the fraction .964 printed with one decimal is "1.0",
    of which fio kept only the "0")."""
    power = 0
    modulo = 0
    while len(str(value)) > maxlen:
        value, modulo = divmod(value, 1000)
        power += 1
    suffix = ["", "k", "M", "G", "T"][power]
    decimals = maxlen - len(str(value)) - 1
    if power == 0:
        return str(value)
    if decimals <= 0:
        return f"{value + (modulo >= 500)}{suffix}"
    fraction = f"{modulo / 1000:.{decimals}f}"[2:]
    return f"{value}.{fraction}{suffix}"


# --------------------------------------------------------------------------- recognising


def test_looks_like_fio_text_only_on_normal_output() -> None:
    for path in sorted(p for p in DATA.iterdir() if p.is_file()):
        text = path.read_text(errors="replace")
        expected = path.name.startswith(TEXT_SAMPLES)
        assert looks_like_fio_text(text) is expected, path.name


@pytest.mark.parametrize("prefix", ["03_", "04_", "05_", "10_", "12_samyaple_fio3.33_iops"])
def test_not_fio_text_raises_one_error_naming_the_source(prefix: str) -> None:
    path = sample(prefix)
    with pytest.raises(OutputParseError) as info:
        parse_fio_text(path.read_text(), path.name)
    assert info.value.message.startswith(f"{path.name}: no fio job results found")
    assert info.value.hint and "--output-format=normal" in info.value.hint


def test_an_unreadable_results_line_is_an_error_with_its_line_number() -> None:
    text = sample("01_").read_text().replace("(1860MiB/60001msec)", "(1860MiB)", 1)
    with pytest.raises(OutputParseError) as info:
        parse_fio_text(text, "cut.txt")
    assert info.value.message.startswith("cut.txt: line 24: cannot read fio's direction line")
    assert "IOPS=3967" in info.value.message


# --------------------------------------------------------------------------- fio 3.x, one host


def test_fio_3_12_ten_stonewall_groups() -> None:
    (doc,) = docs_of("01_")
    assert doc.engine_version == "fio-3.12" and doc.all_clients is None
    assert [j.groupid for j in doc.jobs] == list(range(10))
    assert [j.options["numjobs"] for j in doc.jobs] == [str(n) for n in range(1, 11)]  # jobs=N
    first = doc.jobs[0]
    assert first.name == "test1-subtest1-blocksize8k-threads1-device1of1"
    # header: rw=randread, bs=(R) 8192B-8192B, ..., ioengine=libaio, iodepth=1
    assert first.options == {"rw": "randread", "bs": "8192", "ioengine": "libaio",
                             "iodepth": "1", "numjobs": "1"}  # fmt: skip
    read = first.read
    assert first.write.empty and first.trim.empty
    # issued rwts: total=238075,0,0,0 ; (1860MiB/60001msec)
    assert read.ios == 238075 and read.runtime_ms == 60001
    assert read.io_bytes == 238075 * 8192
    assert read.io_bytes == pytest.approx(1860 * MIB, rel=5e-4)  # printed to 4 digits
    assert read.iops == pytest.approx(238075 / 60.001)  # printed IOPS=3967
    assert read.bw_bytes == pytest.approx(238075 * 8192 / 60.001)  # BW=30.0MiB/s
    # lat (usec): min=52, max=11202, avg=251.53 (total latency wins over clat)
    assert read.lat_mean_ns == pytest.approx(251_530)
    assert (read.lat_min_ns, read.lat_max_ns) == (52_000, 11_202_000)
    assert read.lat_kind == "clat"  # the percentiles are "clat percentiles (usec)"
    assert len(read.percentiles_ns) == 17
    assert read.percentiles_ns[1.0] == 77_000 and read.percentiles_ns[99.99] == 4_490_000
    assert (first.usr_cpu, first.sys_cpu) == (0.24, 1.57)
    assert doc.disk_util[0]["name"] == "dm-21" and doc.disk_util[0]["read_ios"] == 10593651


def test_k_suffixed_iops_are_rebuilt_from_issued_ios_and_runtime() -> None:
    (doc,) = docs_of("01_")
    fourth = doc.jobs[3].read  # read: IOPS=12.9k ... (6048MiB/60001msec), total=774138
    assert fourth.ios == 774138
    assert fourth.iops == pytest.approx(774138 / 60.001)  # 12902.08
    assert fio_num2str(int(fourth.iops)) == "12.9k"


@pytest.mark.parametrize("prefix", ["01_", "02_", "24_", "25_"])
def test_every_printed_iops_is_reproduced_from_the_parsed_ios(prefix: str) -> None:
    """fio printed IOPS = num2str(1000 * ios / runtime); rebuilding every printed figure from
    the parsed issued count and runtime checks both, block by block, host by host."""
    text = sample(prefix).read_text()
    printed = re.findall(r"^\s+(?:read|write): IOPS=(\S+),", text, re.MULTILINE)
    (doc,) = docs_of(prefix)
    jobs = [*doc.jobs, *([doc.all_clients] if doc.all_clients else [])]
    expected = {"01_": 10, "02_": 31, "24_": 41, "25_": 30}[prefix]
    assert len(printed) == len(jobs) == expected
    dirs = [j.read if j.read.ios else j.write for j in jobs]
    rebuilt = [fio_num2str(d.ios * 1000 // d.runtime_ms) for d in dirs]
    # "All clients" is printed where its text arrived, not last: compare as multisets
    assert sorted(rebuilt) == sorted(printed)


# --------------------------------------------------------------------------- client/server


def test_client_server_text_keeps_hosts_apart_and_all_clients_out_of_jobs() -> None:
    (doc,) = docs_of("02_")
    assert doc.engine_version == "fio-3.12"  # from "hostname=host2, ..., fio=fio-3.12" lines
    assert len(doc.jobs) == 30
    hosts = [j.hostname for j in doc.jobs]
    assert hosts[::10] == ["host1", "host0", "host2"]  # the order the servers answered
    assert {h: hosts.count(h) for h in set(hosts)} == {"host0": 10, "host1": 10, "host2": 10}
    assert all(j.name != "All clients" for j in doc.jobs)
    assert "<host2> fio: output file open error" in doc.preamble
    everyone = doc.all_clients
    assert everyone is not None and everyone.hostname is None
    # "All clients: (groupid=9, jobs=30)" ... issued rwts: total=24845669: it adds up ALL
    # 30 thread_stats (10 groups x 3 hosts), not group 9 of the three hosts
    assert everyone.groupid == 9 and everyone.read.ios == 24845669
    assert everyone.read.ios == sum(j.read.ios for j in doc.jobs)
    group_9 = sum(j.read.iops for j in doc.jobs if j.groupid == 9)
    assert group_9 == pytest.approx(72_707, abs=1)  # 24.5k + 24.4k + 23.8k
    assert everyone.read.iops == pytest.approx(24845669 / 60.003)  # IOPS=414k
    assert everyone.read.iops > 5 * group_9
    # "BW=3235Mi (3392M)(190GiB/60003msec)": no "/s", and the io figure is rounded
    assert everyone.read.io_bytes == 24845669 * 8192
    assert everyone.read.io_bytes == pytest.approx(190 * (1 << 30), rel=3e-3)


def test_every_line_prefixed_with_its_host_reads_the_same() -> None:
    """Some fio versions prefix every line of a server's text with <host>: same result."""
    text = sample("02_").read_text()
    host = ""
    lines = []
    for line in text.splitlines():
        tagged = re.match(r"^<(\w+)> ?(.*)$", line)
        if tagged:
            host, line = tagged.groups()
        lines.append(f"<{host}> {line}" if host else line)
    (plain,) = docs_of("02_")
    (prefixed,) = parse_fio_text("\n".join(lines), "prefixed")
    assert prefixed.jobs == plain.jobs and prefixed.all_clients == plain.all_clients


# --------------------------------------------------------------------------- several runs, nsec


def test_several_fio_runs_in_one_file_nsec_units() -> None:
    docs = docs_of("18_")
    assert [d.jobs[0].name for d in docs] == ["null", "xnvme_nil", "io_uring", "xnvme_io_uring"]
    assert [d.jobs[0].options["ioengine"] for d in docs] == ["null", "xnvme", "io_uring", "xnvme"]
    assert all(d.engine_version == "fio-3.30-63-g66087" and len(d.jobs) == 1 for d in docs)
    null = docs[0].jobs[0].read
    # read: IOPS=6367k ... (1457GiB/60000msec); issued rwts: total=382013595
    assert null.ios == 382013595 and null.iops == pytest.approx(6_366_893, abs=1)
    assert null.io_bytes == 382013595 * 4096
    # lat (nsec): min=39, max=17809, avg=46.44 ; clat percentiles (nsec): 99.99th=[40]
    assert (null.lat_min_ns, null.lat_max_ns, null.lat_mean_ns) == (39, 17809, 46.44)
    assert null.percentiles_ns[99.99] == 40 and null.lat_kind == "clat"
    assert docs[2].disk_util == [{"name": "nvme0n1", "read_ios": 6585979, "write_ios": 0,
                                  "read_merges": 0, "write_merges": 0, "read_ticks": 45768,
                                  "write_ticks": 0, "in_queue": 45767, "util": 99.91}]  # fmt: skip
    assert docs[0].disk_util == [] and docs[3].disk_util == []


# --------------------------------------------------------------------------- fio 2.1.x


def test_fio_2_1_9_format_kb_means_kib() -> None:
    (doc,) = docs_of("23_")
    assert doc.engine_version == "fio-2.1.9"
    names = ["random-read-4k", "random-write-4k", "sequential-read-128k", "sequential-write-128k"]
    assert [j.name for j in doc.jobs] == names
    assert [j.options["bs"] for j in doc.jobs] == ["4096", "4096", "131072", "131072"]  # 4K-4K/...
    assert all(j.options["numjobs"] == "64" and j.options["ioengine"] == "sync" for j in doc.jobs)
    read = doc.jobs[0].read
    # read : io=237902MB, bw=406018KB/s, iops=101504, runt=600002msec
    # issued    : total=r=60902872/w=0/d=0
    assert read.ios == 60902872 and read.runtime_ms == 600002
    assert read.io_bytes == 60902872 * 4096
    assert read.io_bytes == pytest.approx(237902 * MIB, rel=1e-5)  # MB is MiB in fio 2.x
    assert read.bw_bytes == pytest.approx(406018 * 1024, rel=1e-5)  # KB/s is KiB/s
    assert int(read.iops) == 101504
    # lat (usec): min=34, max=400858, avg=628.81 ; clat percentiles (usec): 99.99th=[ 3184]
    assert (read.lat_min_ns, read.lat_max_ns) == (34_000, 400_858_000)
    assert read.lat_mean_ns == pytest.approx(628_810)
    assert read.percentiles_ns[99.99] == 3_184_000 and read.lat_kind == "clat"
    write = doc.jobs[1]
    assert write.read.empty and write.write.ios == 68055278  # total=r=0/w=68055278/d=0
    assert write.write.iops == pytest.approx(113425, abs=1)


# --------------------------------------------------------------------------- issue 15


@pytest.mark.parametrize("prefix", ["24_", "25_"])
def test_queued_host_prefixes_start_a_new_host_where_the_groupids_restart(prefix: str) -> None:
    """fio 3.12 printed several bare ``<hostN>`` lines in a row, then the hosts' blocks
    unprefixed: every host must keep all its groups, nothing split into extra runs."""
    text = sample(prefix).read_text()
    hosts = set(re.findall(r"^hostname=([^,]+),", text, re.MULTILINE))
    groups = sorted({int(g) for g in re.findall(r"\(g=(\d+)\)", text)})
    (doc,) = docs_of(prefix)
    assert {j.hostname for j in doc.jobs} == hosts
    for host in hosts:
        assert sorted(j.groupid for j in doc.jobs if j.hostname == host) == groups, host
    # fio's own "All clients" entry sums every group of every host: the per-host blocks
    # must add up to it exactly (a lost or doubled block would not)
    if "All clients:" in text:
        assert doc.all_clients is not None
        ddir = "read" if doc.all_clients.read.ios else "write"
        total = sum(j.direction(ddir).ios for j in doc.jobs)
        assert total == doc.all_clients.direction(ddir).ios
    # every printed issued count is one job's, once (none lost, none doubled)
    pairs = re.findall(r"issued rwts: total=(\d+),(\d+)", text)
    issued = sorted(int(r) + int(w) for r, w in pairs)
    parsed = [j.read.ios + j.write.ios for j in doc.jobs]
    parsed += [doc.all_clients.read.ios + doc.all_clients.write.ios] if doc.all_clients else []
    assert sorted(parsed) == issued


def test_the_queued_prefix_file_keeps_its_hosts_apart_in_order() -> None:
    (doc,) = docs_of("24_")
    hosts = [j.hostname for j in doc.jobs]
    # host2's text came first, then three bare prefixes host0, host3, host1 in a row
    order = list(dict.fromkeys(hosts))
    assert order == ["host2", "host0", "host3", "host1"]
    assert all(hosts.count(h) == 10 for h in order)


def test_two_invocations_with_the_same_job_are_two_runs() -> None:
    text = sample("fresh_fio3.33_normal_two_invocations").read_text()
    docs = docs_of("fresh_fio3.33_normal_two_invocations")
    assert len(docs) == 2 and not any(d.status_dump for d in docs)
    printed = [int(n) for n in re.findall(r"issued rwts: total=(\d+),", text)]
    assert [j.read.ios for d in docs for j in d.jobs] == printed


def test_status_interval_dumps_are_marked_as_dumps_of_one_run() -> None:
    docs = docs_of("fresh_fio3.33_normal_status_interval")
    assert len(docs) >= 2
    assert not docs[0].status_dump and all(d.status_dump for d in docs[1:])
    assert docs[-1].jobs[0].read.ios >= docs[0].jobs[0].read.ios  # cumulative


def test_issued_ios_win_over_a_truncated_io_display_and_say_so() -> None:
    """fio printed ``(17.0GiB/60001msec)`` for 2,356,449 x 8 KiB = 17.98 GiB (its decimal
    twin says 19.3GB, and BW=307MiB/s agrees with the count, not with 17.0 GiB)."""
    (doc,) = docs_of("26_")
    (job,) = [j for j in doc.jobs if j.groupid == 7]
    assert job.read.ios == 2356449
    assert job.read.io_bytes == 2356449 * 8192
    assert job.read.io_bytes / 1e9 == pytest.approx(19.3, abs=0.05)  # "(19.3GB)"
    assert job.read.bw_bytes / MIB == pytest.approx(307, abs=0.5)  # "BW=307MiB/s"
    assert any("groupid=7" in n and "issued I/Os are used" in n for n in doc.notes)


def test_servers_sharing_a_host_name_are_told_apart_by_their_text_blocks() -> None:
    """fio 3.33, 3 servers all named "vm" (network namespaces of one machine): two bare
    ``<vm>`` lines in a row, then three text blocks. Each block is a server of its own."""
    prefix = "fresh_fio3.33_normal_3servers"
    text = sample(prefix).read_text()
    assert text.count("hostname=vm,") == 3
    (doc,) = docs_of(prefix)
    assert sorted({j.hostname for j in doc.jobs}) == ["vm", "vm#2", "vm#3"]
    assert [j.groupid for j in doc.jobs] == [0, 1] * 3
    assert doc.all_clients is not None
    assert doc.all_clients.write.ios == sum(j.write.ios for j in doc.jobs)
