"""scripts/test.sh runs the paced and serial phases on the files that say their mark: a test
marked from another file must fail collection, not run in no phase (tests/conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import _check_phase_marks


@dataclass
class Item:
    path: Path
    mark: str | None
    nodeid: str = "t.py::test_x"

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == self.mark else None


def test_a_mark_the_file_does_not_say_fails_collection(tmp_path: Path) -> None:
    said = tmp_path / "said.py"
    said.write_text("pytestmark = [pytest.mark.paced]\n")
    borrowed = tmp_path / "borrowed.py"
    borrowed.write_text("from elsewhere import pytestmark  # pytest.mark.pacedx\n")
    _check_phase_marks([Item(said, "paced"), Item(borrowed, None)])  # type: ignore[list-item]
    with pytest.raises(pytest.UsageError, match="is paced, its file never says"):
        _check_phase_marks([Item(borrowed, "paced")])  # type: ignore[list-item]
    with pytest.raises(pytest.UsageError, match="is serial"):
        _check_phase_marks([Item(said, "serial")])  # type: ignore[list-item]


def test_the_phases_files_are_the_marked_ones() -> None:
    script = (Path(__file__).resolve().parents[2] / "scripts" / "test.sh").read_text()
    assert 'git grep -l "pytest.mark.$1\\b"' in script
    assert '-m paced "${paced[@]}"' in script and '-m serial "${alone[@]}"' in script
