"""The README's first screen: what arraybench is, the two commands (install and try, then the
tests: exactly what CI's `.ci/run` runs), a picture of a report, then usage; the contributor's
detail lives in CONTRIBUTING.md."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PICTURE = "docs/report.png"
MAX_PICTURE_BYTES = 300_000  # the README loads it on every visit


def first_screen() -> str:
    text = README.read_text(encoding="utf-8")
    return text[: text.index("\n## Using it")]


def ci_command() -> str:
    """The command `.ci/run` runs: its last line that is neither a comment, `set` nor `cd`."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [line.strip() for line in lines if line.strip()
                and not line.lstrip().startswith(("#", "set ", "cd "))]  # fmt: skip
    return commands[-1]


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_the_two_commands_are_the_install_and_what_ci_runs() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", first_screen(), re.DOTALL)
    assert len(blocks) == 2, blocks
    install, tests = (b.strip() for b in blocks)
    assert install == "./scripts/install.sh && .venv/bin/arraybench run quick"
    assert tests == ci_command() == "./scripts/test.sh"
    for script in ("scripts/install.sh", "scripts/test.sh", ".ci/run"):
        assert os.access(ROOT / script, os.X_OK), script


def test_a_picture_of_a_report_is_on_the_first_screen() -> None:
    screen = first_screen()
    assert f"]({PICTURE})" in screen and "scripts/report-picture.py" in screen
    assert (ROOT / "scripts" / "report-picture.py").exists()
    path = ROOT / PICTURE
    assert path.stat().st_size < MAX_PICTURE_BYTES
    width, height = png_size(path)
    assert 700 <= width <= 1000 and height <= 1600  # 1:1 at a README's width, a first view


def test_the_first_screen_leaves_the_test_suites_internals_to_contributing() -> None:
    screen = first_screen()
    for detail in ("xdist", "-n 3", "loadgroup", "serial", "pytest"):
        assert detail not in screen, detail
    assert "](CONTRIBUTING.md)" in screen
