"""`scsi_offline` writes one file: /sys/block/NAME/device/state of a SCSI disk. A device given
as a relative climb, a path out of /dev, a link out of sysfs or a host's answer naming another
file must never make it write anywhere else: refused at plan load in one located line, and
again where the injector (local or the host's script) derives the file.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from arraybench.events.errors import InjectorError
from arraybench.events.event_kinds import scsi_offline as remote
from arraybench.events.event_kinds.scsi_offline import ScsiOfflineInjector
from arraybench.plan.event_kinds.scsi_offline import ScsiOfflineAction
from tests.conftest import main_cli, small_plan

CLIMBS = [
    "../../../../tmp/x",
    "..",
    "sdc/../../../etc",
    "/dev/../tmp/x",
    "/dev/disk/../../tmp/x",
    "/tmp/x",
    "//dev/sdc",
    "sd c",
    "sdc\n",
    "/dev/sdc\x1b[2J",
]


@pytest.mark.parametrize("device", CLIMBS)
def test_a_device_that_is_no_block_device_name_is_refused_at_plan_load(
    device: str, tmp_path: Path
) -> None:
    event = f"events: [{{at: 0s, scsi_offline: {{device: {device!r}}}}}]"
    event = event.replace("'", '"').replace("\\x1b", "\\e")
    workloads = f"  - {{name: r, pattern: random, bs: 4k, read: 100, {event}}}\n"
    plan = small_plan(tmp_path, workers="[1]", workloads=workloads)
    done = main_cli("plan", "check", str(plan))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "scsi_offline" in lines[0] and "device" in lines[0], lines[0]


@pytest.mark.parametrize("device", ["sdc", "/dev/sdc", "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"])
def test_real_device_spellings_still_load(device: str) -> None:
    assert ScsiOfflineAction(device=device).device == device


def _sys_tree(root: Path) -> Path:
    state = root / "block" / "sdx" / "device" / "state"
    state.parent.mkdir(parents=True)
    state.write_text("running\n")
    return state


@pytest.mark.parametrize("device", ["../../../../x", "sdx/../../x", "."])
def test_the_injector_refuses_a_climbing_name_given_past_the_plan(
    device: str, tmp_path: Path
) -> None:
    sys_root = tmp_path / "sys"
    _sys_tree(sys_root)
    outside = tmp_path / "x" / "device" / "state"
    outside.parent.mkdir(parents=True)
    outside.write_text("running\n")
    action = ScsiOfflineAction.model_construct(device=device)  # as if the plan check were skipped
    with pytest.raises(InjectorError, match=r"not a block device name|no SCSI disk"):
        ScsiOfflineInjector(action, sys_root=str(sys_root)).apply()
    assert outside.read_text() == "running\n"


def test_a_state_file_linked_out_of_sysfs_is_not_written(tmp_path: Path) -> None:
    sys_root = tmp_path / "sys"
    (sys_root / "block" / "sdy").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "state").write_text("running\n")
    (sys_root / "block" / "sdy" / "device").symlink_to(elsewhere)
    injector = ScsiOfflineInjector(ScsiOfflineAction(device="sdy"), sys_root=str(sys_root))
    with pytest.raises(InjectorError, match="no SCSI disk"):
        injector.apply()
    assert (elsewhere / "state").read_text() == "running\n"


def test_the_hosts_script_refuses_a_climbing_device(tmp_path: Path) -> None:
    """The script a host runs (here through `sh -c`, as ssh runs it): a device leading to a
    name that is not a block device name exits 3 before it writes."""
    victim = tmp_path / "x"
    victim.mkdir()
    link = tmp_path / "odd name"
    link.symlink_to(victim)
    for device in (f"{tmp_path}/../../../../{victim}", str(link)):
        done = subprocess.run(["sh", "-c", remote._SCSI, "arraybench", device, "offline"],
                              capture_output=True, text=True, check=False)  # fmt: skip
        assert done.returncode == 3, done
        assert "not a block device name" in done.stderr or "no SCSI disk" in done.stderr
    assert list(victim.iterdir()) == []


@pytest.mark.parametrize(
    "answer",
    ["/tmp/x", "/sys/block/../../tmp/x/device/state", "/sys/block/sdc/device/state/../../x",
     "/sys/block/a b/device/state", "/sys/class/block/sdc/device/state", ""],
)  # fmt: skip
def test_a_hosts_answer_naming_another_file_is_refused(answer: str) -> None:
    with pytest.raises(InjectorError, match="refusing to write"):
        remote.check_state_file(answer, "host h1")
    remote.check_state_file("/sys/block/sdc/device/state", "host h1")  # the one shape accepted
