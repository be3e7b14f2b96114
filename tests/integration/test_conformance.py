"""Conformance (docs/conformance.md): a built-in methodology's rules judged on a run, in every
report format; `--scale`, `--only` and `--set` name the rules they broke, and "conforms to X"
is said only when every rule is kept. The campaigns run on the fake engine: the rules are
the subject, not fio."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from arraybench.analysis.conformance import BROKEN, KEPT, RunFacts, conforms, judge
from arraybench.finding_kinds import PRECONDITION, PURGE, ROUNDS
from arraybench.plan.catalog import load_template
from tests.conftest import main_cli

FAKE = ["--set", "engine=fake", "--set", "monitor=false"]


def _report(tmp_path: Path, template: str, *args: str, fmt: str = "md") -> str:
    out = tmp_path / f"report.{fmt}"
    done = main_cli("run", template, "--target", str(tmp_path / "t.dat"), *FAKE, *args,
                    "--results", str(tmp_path / "r"), "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out.read_text() if fmt != "xlsx" else ""


def _rows(markdown: str) -> list[str]:
    """The Conformance table's verdicts, in its order."""
    section = markdown.split("### Conformance:")[1].split("\n##")[0]
    cells = [line.split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return [c[1] for c in cells if len(c) > 2 and c[1] in (KEPT, BROKEN)]


@pytest.mark.usefixtures("fake_engine")
def test_quick_at_full_scale_conforms(tmp_path: Path) -> None:
    text = _report(tmp_path, "quick")
    assert "_conforms to quick: every rule kept_" in text
    assert _rows(text) == [KEPT] * 4


@pytest.mark.usefixtures("fake_engine")
@pytest.mark.parametrize(
    ("args", "broken"),
    [
        (["--scale", "0.2"], "2 of 4 rules broken (duration, scale)"),
        (["--only", "rand-*"], "1 of 4 rules broken (workloads)"),
        (["--set", "load.workers=[1,4]"], "1 of 4 rules broken (ladder)"),
    ],
    ids=["scale", "only", "set"],
)
def test_quick_cut_scaled_or_overridden_names_the_rules_it_broke(
    tmp_path: Path, args: list[str], broken: str
) -> None:
    text = _report(tmp_path, "quick", *args)
    assert f"_does not conform to quick: {broken}_" in text, text.split("### Conformance")[1][:600]
    assert "conforms to quick: every rule kept" not in text
    # the notes box, before the tables, says it too
    assert (
        f"does not conform to quick: {broken} (see the Conformance table)"
        in text.split("### Conformance")[0]
    )


@pytest.mark.usefixtures("fake_engine")
def test_snia_pts_scaled_down_names_scaling_and_the_purge_in_every_format(
    tmp_path: Path,
) -> None:
    text = _report(tmp_path, "snia-pts", "--scale", "0.05")
    assert "does not conform to snia-pts: 3 of 8 rules broken (purge, round, scale)" in text
    assert "70 workload(s) shorter (--scale 0.05)" in text
    html = tmp_path / "report.html"
    assert main_cli("report", "latest", "--results", str(tmp_path / "r"), "-o", str(html),
                    "-o", str(tmp_path / "report.xlsx")).returncode == 0  # fmt: skip
    assert "Conformance: snia-pts" in html.read_text()
    book = openpyxl.load_workbook(tmp_path / "report.xlsx", read_only=True)
    cells = {str(c) for ws in book.worksheets for row in ws.iter_rows(values_only=True)
             for c in row if c}  # fmt: skip
    assert any("does not conform to snia-pts" in c for c in cells)


def _full_scale(passes: float = 2.0, steady: bool = True, purged: bool = True) -> RunFacts:
    """A full-scale snia-pts run as its findings would record it (hours long: not run here)."""
    plan = load_template("snia-pts")
    findings = [
        PURGE.new({"targets": [{"target": "/dev/x", "purged": purged, "how": "blkdiscard"}]}),
        PRECONDITION.new(
            {
                "bytes": 2 << 40,
                "seconds": 3600.0,
                "passes": passes,
                "pattern": "sequential",
                "bs": 131072,
                "folder": "p",
            }
        ),
        ROUNDS.new(
            {
                "round": 7,
                "track": "iops-4k-w",
                "window": 5,
                "values": [1.0] * 7,
                "steady": steady,
                "window_start": 2,
                "window_end": 6,
                "average": 1.0,
                "range_excursion": 0.0,
                "slope": 0.0,
                "slope_excursion": 0.0,
                "intercept": 1.0,
            }
        ),
    ]
    return RunFacts(plan, plan, 1.0, findings, frozenset(w.name for w in plan.workloads))


def test_a_full_scale_snia_pts_run_conforms_or_names_the_rule_it_broke() -> None:
    assert conforms(judge("snia-pts", _full_scale()))
    broken = [(_full_scale(passes=1.0), "precondition"), (_full_scale(steady=False), "steady"),
              (_full_scale(purged=False), "purge")]  # fmt: skip
    for facts, rule in broken:
        judged = judge("snia-pts", facts)
        assert not conforms(judged)
        assert [j.rule.id for j in judged if j.verdict == BROKEN] == [rule]


def test_every_rule_is_documented_with_its_source() -> None:
    from arraybench.analysis.conformance import CHECKS, RULES

    doc = (Path(__file__).parents[2] / "docs" / "conformance.md").read_text()
    for name, rules in RULES.items():
        assert f"## `{name}`" in doc
        for r in rules:
            assert f"| `{r.id}` | {r.text} | `{r.check}` | {r.source} |" in doc, r.id
    assert all(f"| `{check}` |" in doc for check in CHECKS)


def test_a_cut_snia_pts_keeps_the_load_rule_of_the_workloads_it_ran() -> None:
    plan = load_template("snia-pts")
    kept = [w for w in plan.workloads if w.name.startswith(("tp-", "lat-"))]
    cut = plan.model_copy(update={"workloads": kept})
    facts = RunFacts(cut, plan, 1.0, _full_scale().findings,
                     frozenset(w.name for w in cut.workloads))  # fmt: skip
    verdicts = {j.rule.id: j for j in judge("snia-pts", facts)}
    assert verdicts["load"].verdict == KEPT, verdicts["load"].why
    assert verdicts["matrix"].verdict == BROKEN and "56 of 69 not run" in verdicts["matrix"].why


def test_every_built_in_template_has_its_rules_and_kept_them_as_given() -> None:
    from arraybench.analysis.conformance import RULES
    from arraybench.plan.catalog import template_names

    assert set(template_names()) == set(RULES)
    for name in template_names():
        plan = load_template(name)
        facts = RunFacts(plan, plan, 1.0, [], frozenset(w.name for w in plan.workloads))
        judged = {j.rule.id: j.verdict for j in judge(name, facts)}
        # the template as given keeps every rule of its own plan (what the run records --
        # purge, preconditioning, steady state -- is not in this bare facts' findings)
        assert {r for r, v in judged.items() if v == BROKEN} <= {"purge", "precondition", "steady"}
        scaled = RunFacts(plan, plan, 0.5, [], frozenset())
        assert "scale" in [j.rule.id for j in judge(name, scaled) if j.verdict == BROKEN]


@pytest.mark.usefixtures("fake_engine")
def test_a_user_plan_claiming_a_methodology_gets_the_same_check(tmp_path: Path) -> None:
    from tests.conftest import small_plan
    from tests.fake_engine import PLAN_LINES

    plan = small_plan(tmp_path, workers="[1, 2]", extra=PLAN_LINES)
    plan.write_text(plan.read_text().replace("labels: {purpose: tests}",
                                             "labels: {conforms_to: quick}"))  # fmt: skip
    out = tmp_path / "r.md"
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r"), "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "_does not conform to quick: 3 of 4 rules broken (workloads, ladder, duration)_" in text
    plan.write_text(plan.read_text().replace("conforms_to: quick", "conforms_to: spc-1"))
    done = main_cli("run", str(plan), "--results", str(tmp_path / "r"), "-o", str(out))
    text = out.read_text()
    assert "### Conformance" not in text
    assert "claims to conform to 'spc-1', for which arraybench states no rules" in text
