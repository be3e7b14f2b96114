"""docs/performance.md is the current figures, one short page; the lab notebook behind it is
docs/performance-log.md. The page stays short, names every script of benchmarks/ (its latest
figure), and links the log."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "performance.md"
LOG = ROOT / "docs" / "performance-log.md"
MAX_LINES = 200  # a longer page is a notebook again: the measurement's detail goes to the log


def test_the_current_figures_fit_one_short_page() -> None:
    lines = len(PAGE.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"docs/performance.md: {lines} lines, at most {MAX_LINES}"


def test_every_benchmark_script_has_its_figure_and_the_log_is_linked() -> None:
    page = PAGE.read_text(encoding="utf-8")
    scripts = [p.name for p in sorted((ROOT / "benchmarks").iterdir())
               if p.suffix in (".py", ".sh") and p.name != "__init__.py"]  # fmt: skip
    assert len(scripts) >= 10
    missing = [name for name in scripts if f"`{name}" not in page]
    assert not missing, "docs/performance.md gives no figure for " + ", ".join(missing)
    assert "](performance-log.md)" in page and LOG.exists()
    assert "](performance.md)" in LOG.read_text(encoding="utf-8")
