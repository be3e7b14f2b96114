"""system/sshmux.py: one SSH connection per host inside a CLI command, its folder private,
removed at the end (and a killed command's by the next one), none where the socket path would
be too long. The connections themselves: tests/e2e/test_verify_hosts.py (real sshd)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arraybench.hosts.server import HostSpec, SshSpec, ssh_command
from arraybench.system import sshmux


@pytest.fixture
def tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short temporary folder (pytest's tmp_path is too long for a socket path)."""
    short = Path(tempfile.mkdtemp(prefix="mux-", dir="/tmp"))
    monkeypatch.setattr("tempfile.tempdir", str(short))
    yield short
    shutil.rmtree(short, ignore_errors=True)


def _path(options: list[str]) -> str:
    [path] = [o.split("=", 1)[1] for o in options if o.startswith("ControlPath=")]
    return path


def test_shared_inside_the_block_only_and_its_folder_removed(tmp: Path) -> None:
    assert sshmux.ssh_options() == []
    with sshmux.shared_connections():
        assert list(tmp.iterdir()) == []  # made by the first ssh command, not before
        outer = _path(sshmux.ssh_options())
        folder = Path(outer).parent
        assert folder.parent == tmp and stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert folder.name.startswith(f"arraybench-ssh-{os.getpid()}-")
        with sshmux.shared_connections():  # a nested block shares the outer one's
            assert _path(sshmux.ssh_options()) == outer
        assert folder.is_dir()
    assert sshmux.ssh_options() == [] and not folder.exists()


def test_a_killed_command_s_folder_is_removed_a_living_one_s_kept(tmp: Path) -> None:
    dead, living = tmp / "arraybench-ssh-4194305-x", tmp / "arraybench-ssh-1-y"  # pid 1: init
    for folder in (dead, living):
        folder.mkdir()
    (dead / "socket").write_text("")
    with sshmux.shared_connections():
        sshmux.ssh_options()  # an ssh command makes this command's folder
    assert not dead.exists() and living.exists()


def test_no_sharing_where_the_socket_path_would_be_too_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 80)
    deep.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(deep))
    with sshmux.shared_connections():
        assert sshmux.ssh_options() == []
    assert list(deep.iterdir()) == []


def test_the_plan_s_ssh_options_come_first(tmp: Path) -> None:
    """ssh takes an option's first value: the plan's own settings win over the sharing."""
    spec = HostSpec(name="h1", address="10.0.0.2", port=8765,
                    ssh=SshSpec(user="bench", options=("ControlMaster=no",)))  # fmt: skip
    assert "ControlMaster=auto" not in " ".join(ssh_command(spec, "true"))
    with sshmux.shared_connections():
        argv = ssh_command(spec, "true")
    options = [argv[i + 1] for i, word in enumerate(argv) if word == "-o"]
    assert options.index("ControlMaster=no") < options.index("ControlMaster=auto")
    assert argv[-3:] == ["--", "bench@10.0.0.2", "true"]


@pytest.mark.parametrize("name", ["a b", "a%h", 'a"b', "a'b", "a#b", "a=b"])
def test_no_sharing_where_the_temporary_folder_is_no_plain_path(
    name: str, tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ssh reads `-o ControlPath=...` as a config line (spaces, quotes, % tokens)."""
    odd = tmp / name
    odd.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(odd))
    with sshmux.shared_connections():
        assert sshmux.ssh_options() == []
    assert list(odd.iterdir()) == []
