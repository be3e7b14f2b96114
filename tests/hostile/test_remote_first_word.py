"""A remote command's first word is never the host shell's own option: sshd runs
`$SHELL -c COMMAND`, and a scenario step `run: {argv: [--version], host: h0}` made bash answer
`bash: --: invalid option` (and `+O` listed bash's shopt settings) instead of running the
command. ssh_command keeps such a first word a command (a real sshd in a network namespace)."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator

import pytest

from arraybench.hosts.server import HostSpec, SshSpec, ssh_command
from tests.conftest import needs_fio
from tests.netns import needs_netns, needs_sshd, running_hosts

pytestmark = [needs_fio, *needs_netns, needs_sshd, pytest.mark.xdist_group("remote_first_word")]


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostSpec]:
    """Host h0 reached over its own sshd, as a scenario step or an event reaches it."""
    folder = tmp_path_factory.mktemp("hosts")
    with running_hosts(1, folder, port=8851) as hosts:
        ssh = hosts.start_sshd(0, folder / "ssh")
        yield HostSpec(hosts.hosts[0].name, hosts.hosts[0].address, ssh=ssh)


@pytest.mark.parametrize("argv", [["--version"], ["+O"], ["-c", "echo", "injected"]])
def test_a_first_word_starting_with_a_dash_or_plus_is_a_command(
    host: HostSpec, argv: list[str]
) -> None:
    done = subprocess.run(ssh_command(host, shlex.join(argv)), capture_output=True, text=True,
                          timeout=30, check=False)  # fmt: skip
    assert done.returncode == 127, (done.stdout, done.stderr)  # the shell: no such command
    assert f"{argv[0]}: command not found" in done.stderr, done.stderr
    assert "invalid option" not in done.stderr and "shopt" not in done.stdout
    assert "injected" not in done.stdout


def test_ssh_command_lines_start_the_remote_command_with_a_space_only_where_needed() -> None:
    spec = HostSpec("h0", "192.0.2.1", ssh=SshSpec())
    assert ssh_command(spec, "--version")[-1] == " --version"
    assert ssh_command(spec, "+O")[-1] == " +O"
    assert ssh_command(spec, "echo -n")[-1] == "echo -n"
