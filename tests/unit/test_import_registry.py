"""The import formats are one ordered list (importer/registry.py): each format module
declares how its files are recognised, the registry says in which order they are tried,
and the CLI's help, the hint of an empty import and README.md all list the same formats.
The importer reaches into run/ only through its public point builder (run/record.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from arraybench.cli import _parser
from arraybench.importer import FORMATS, described
from arraybench.importer.format import Skip
from arraybench.importer.reading import read_docs
from arraybench.importer.registry import tool_of
from tests.conftest import DATA

ROOT = Path(__file__).resolve().parents[2]
IMPORTER = ROOT / "src" / "arraybench" / "importer"

# one real sample per format: the format the registry must pick for it
SAMPLES = {
    "diskspd/DiskSpdExample-ReadWrite.txt": "diskspd",
    "vdbench/vdb_raw_flatfile.html": "vdbench",
    "elbencho/coribb_iops-direct.04threads.56977775.csv": "elbencho",
    "fresh_fio3.33_terse_v3_then_json_randrw_2jobs_stonewall.txt": "terse",  # terse, then JSON
    "09_fioplot_fio3.1_json_ns_keys_randread.json": "json",
    "21_blizzarddiskmark_fio3.39_jsonplus_extracted_from_comment.json": "json",
    "01_dorado_fio3.12_normal_1host_10stonewall_groups.txt": "text",
    "02_dorado_fio3.12_normal_client_server_3hosts_all_clients.txt": "text",
}


def test_formats_are_named_once_and_text_takes_what_is_left() -> None:
    names = [f.name for f in FORMATS]
    assert len(names) == len(set(names))
    assert names[0] == "logs" and FORMATS[0].read is None  # the file name decides first
    assert names[-1] == "text"  # fio's normal text reader says why a file holds no results
    assert names.index("terse") < names.index("json") < names.index("text")
    assert {tool_of(n) for n in ("logs", "terse", "json", "text")} == {"fio"}
    assert tool_of("diskspd") == "diskspd"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_sample_is_read_by_its_format(name: str) -> None:
    docs, fmt = read_docs(DATA / name)
    assert fmt == SAMPLES[name] and docs and docs[0].jobs


def test_a_file_no_format_reads_says_why(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    with pytest.raises(Skip, match=r"not fio output.*'hello'"):
        read_docs(junk)


def test_the_help_the_hint_and_the_readme_list_every_format(tmp_path: Path) -> None:
    from arraybench.errors import ArraybenchError
    from arraybench.importer import prepare_import

    help_text = " ".join(_parser().format_help().split())
    assert described() in help_text
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(ArraybenchError) as info:
        prepare_import([tmp_path], run_name="x")
    readme = " ".join((ROOT / "README.md").read_text().split())
    for f in FORMATS:
        assert f"{f.what} ({f.how})" in (info.value.hint or "")
        assert f.label in readme and f.what.split(",")[0] in readme, f.name


def test_the_importer_uses_only_the_public_point_builder_of_run() -> None:
    """importer and run share layer 5: the importer builds points with run/record.py, and
    nothing else of run (the campaign, its time series) is reached into."""
    found = set()
    for path in IMPORTER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "arraybench.run"
            ):
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("arraybench.run")}
    assert found == {"arraybench.run.record"}


def test_the_package_only_re_exports() -> None:
    tree = ast.parse((IMPORTER / "__init__.py").read_text())
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    assert defined == ["__getattr__"]  # the lazy re-export, nothing of the import's logic
