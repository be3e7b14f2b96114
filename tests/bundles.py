"""A bundle's run read back in another results folder: the same views, folder names aside."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import main_cli

SHOW_VIEWS = (["show", "latest", "--format", "csv"], ["show", "latest", "--format", "json"])


def without_folder(results: Path, text: str) -> str:
    """Output with the results folder's own name taken out (the one thing that differs)."""
    escaped = str(results).replace("_", "\\_")  # as Markdown writes it
    return text.replace(str(results), "RESULTS").replace(escaped, "RESULTS")


def assert_reads_the_same(
    results: Path, other: Path, reports: Path, views: tuple[list[str], ...] = SHOW_VIEWS
) -> tuple[str, str]:
    """Each view (a CLI command without `--results`) prints the same in `results` and in
    `other`, and so does the Markdown report; the two reports (written under `reports`) are
    returned for the caller's own checks."""
    for args in views:
        there = main_cli(*args, "--results", str(results))
        here = main_cli(*args, "--results", str(other))
        assert here.returncode == there.returncode == 0, here.stderr
        assert without_folder(other, here.stdout) == without_folder(results, there.stdout), args
    for name, folder in (("a.md", results), ("b.md", other)):
        done = main_cli("report", "latest", "--results", str(folder), "-o", str(reports / name))
        assert done.returncode == 0, done.stderr
    a, b = ((reports / n).read_text() for n in ("a.md", "b.md"))
    assert without_folder(other, b) == without_folder(results, a)
    return a, b
