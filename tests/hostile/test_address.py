"""Host addresses and SSH values a plan gives: judged by value, one line, exit 2.

fio's server has no authentication, so every spelling of "all interfaces" is refused (the C
library reads 0, 0.0, 0x0, 000.000.000.000 as 0.0.0.0); ssh must never see a plan value where
it reads an option.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arraybench import cli
from arraybench.hosts.address import AddressError, check_address
from arraybench.hosts.client import run_on_hosts
from arraybench.hosts.server import HostError, HostSpec, SshSpec, ssh_command, start_server_command
from tests.conftest import small_plan

WILDCARDS = [
    "0", "00", "0.0", "0x0", "0x00000000", "000.000.000.000", "0.0.0.0", "0.0.0",
    "::", "::0", "0:0:0:0:0:0:0:0", "::ffff:0.0.0.0", "::ffff:0:0", "[::]", "[::ffff:0.0.0.0]",
]  # fmt: skip


@pytest.mark.parametrize("address", WILDCARDS)
def test_every_spelling_of_all_interfaces_is_refused(address: str) -> None:
    with pytest.raises(AddressError, match="every interface"):
        HostSpec("h1", address)


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


def _host_plan(tmp_path: Path, host: str) -> Path:
    return small_plan(tmp_path, extra=f"hosts:\n  - {host}\n")


@pytest.mark.parametrize("address", ["0", "0x0", "000.000.000.000", "::ffff:0.0.0.0", "[::]"])
def test_plan_check_refuses_wildcard_addresses(
    address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _host_plan(tmp_path, f'{{name: h1, address: "{address}"}}')
    assert cli.main(["plan", "check", str(plan)]) == 2
    line = _one_line(capsys)
    assert "hosts[0].address" in line and "every interface" in line


@pytest.mark.parametrize(
    ("host", "where"),
    [
        ('{name: h1, address: "-oProxyCommand=touch PWNED"}', "hosts[0].address"),
        ('{name: h1, address: "' + "a" * 64 + '.example"}', "hosts[0].address"),
        ('{name: h1, address: "hôst.example"}', "hosts[0].address"),
        ('{name: h1, address: "10.0.0.1,9000"}', "hosts[0].address"),
        ('{name: h1, address: 10.0.0.1, ssh: {user: "-oProxyCommand=touch PWNED"}}',
         "hosts[0].ssh.user"),
        ('{name: h1, address: 10.0.0.1, ssh: {host: "-oProxyCommand=touch PWNED"}}',
         "hosts[0].ssh.host"),
        ('{name: h1, address: 10.0.0.1, ssh: {user: "a@evil"}}', "hosts[0].ssh.user"),
    ],
)  # fmt: skip
def test_plan_check_refuses_unusable_host_values(
    host: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _host_plan(tmp_path, host)
    assert cli.main(["plan", "check", str(plan)]) == 2
    assert where in _one_line(capsys)


def test_a_64_character_label_is_one_line_not_a_unicode_error() -> None:
    with pytest.raises(AddressError, match="label of 64 characters"):
        HostSpec("h1", "a" * 64 + ".example")
    assert check_address("a" * 63 + ".example", "h", resolve=False) == "a" * 63 + ".example"


def test_legacy_spellings_of_real_addresses_are_refused_with_the_plain_form() -> None:
    with pytest.raises(AddressError) as caught:
        HostSpec("h1", "127.1")
    assert "write it as 127.0.0.1" in caught.value.one_line()
    for fine in ("10.0.0.2", "2001:db8::5", "fe80::1%lo", "storage-a.example.", "localhost"):
        assert HostSpec("h1", fine).address == fine


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root")
def test_a_name_resolving_to_the_wildcard_is_refused(tmp_path: Path) -> None:
    """A real lookup: in a private mount namespace /etc/hosts maps a name to 0.0.0.0."""
    hosts = tmp_path / "hosts"
    hosts.write_text("0.0.0.0 wild-host\n::ffff:0.0.0.0 wild-six\n127.0.0.1 tame-host\n")
    code = (
        "from arraybench.hosts.address import check_address, AddressError\n"
        "for name in ('wild-host', 'wild-six', 'tame-host'):\n"
        "    try:\n        check_address(name, 'h'); print(name, 'ok')\n"
        "    except AddressError as e:\n        print(name, e.one_line())\n"
    )
    script = 'mount --bind "$1" /etc/hosts && exec "$2" -c "$3"'
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script, "sh", str(hosts), sys.executable, code],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    if "mount" in done.stderr and done.returncode:
        pytest.skip(f"cannot bind-mount /etc/hosts here: {done.stderr.strip()}")
    out = done.stdout.splitlines()
    assert out[0].startswith("wild-host") and "resolves to 0.0.0.0" in out[0], done.stderr
    assert out[1].startswith("wild-six") and "every interface" in out[1]
    assert out[2] == "tame-host ok"


def test_ssh_argv_ends_options_before_the_destination() -> None:
    ssh = SshSpec(user="bench", identity_file=Path("/k/-id"), port=2222)
    argv = start_server_command(HostSpec("a1", "192.0.2.10", ssh=ssh))
    dash = argv.index("--")
    assert argv[dash + 1 :] == [argv[-2], argv[-1]] and argv[-2] == "bench@192.0.2.10"
    # before "--", every plan value sits right after the option that takes it
    assert argv[argv.index("-i") + 1] == "/k/-id" and argv[argv.index("-p") + 1] == "2222"
    plain = ssh_command(HostSpec("a2", "192.0.2.11", ssh=SshSpec()), "true")
    assert plain[-3:] == ["--", "192.0.2.11", "true"]


@pytest.mark.parametrize(
    "ssh",
    [
        SshSpec(user="-oProxyCommand=touch PWNED"),
        SshSpec(host="-oProxyCommand=touch PWNED"),
        SshSpec(user="bench@evil"),
        SshSpec(user="be nch"),
    ],
)
def test_ssh_refuses_values_it_could_read_as_options(ssh: SshSpec) -> None:
    with pytest.raises(AddressError):
        ssh_command(HostSpec("a1", "192.0.2.10", ssh=ssh), "true")


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no ssh client")
def test_the_real_ssh_client_reads_the_destination_after_the_double_dash(tmp_path: Path) -> None:
    """The argv runs with the real OpenSSH client (to a closed port: no server needed): it
    connects to the destination, so '--' did not hide it."""
    argv = ssh_command(HostSpec("a1", "127.0.0.1", ssh=SshSpec(port=1)), "true")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 255
    assert "127.0.0.1 port 1" in done.stderr, done.stderr


def test_two_spellings_of_one_address_are_one_address(tmp_path: Path) -> None:
    hosts = [HostSpec("a", "2001:db8::1", 8765), HostSpec("b", "2001:DB8:0::1", 8766)]
    with pytest.raises(HostError, match="share the address"):
        run_on_hosts(tmp_path / "p.fio", hosts, tmp_path, timeout_s=1)
