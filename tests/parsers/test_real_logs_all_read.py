"""Every real log of the test bed (tests/data/real) is read by a family — none
`unknown_format` — every folder says where its logs come from (SOURCE), and a test of its own
asserts its authors' figures against ours (each folder is named by a test module here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.collect import parse_paths

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
FOLDERS = sorted(p for p in REAL.iterdir() if p.is_dir())
LOGS = (".log", ".txt", ".gz")


def test_the_test_bed_is_there():
    assert len(FOLDERS) >= 7


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_every_log_is_read_by_a_family(folder):
    logs = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in LOGS)
    assert logs, folder
    result = parse_paths(logs, jobs=1)
    assert "unknown_format" not in set(result.problems["kind"])
    assert result.runs["family"].ne("").all()
    read = {Path(s).resolve() for s in result.runs["source"]}
    assert read == {p.resolve() for p in logs}


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_every_folder_has_a_source_and_a_test(folder):
    source = (folder / "SOURCE").read_text(encoding="utf-8")
    assert "commit" in source.lower() and "licen" in source.lower()
    tests = Path(__file__).parent.glob("test_*.py")
    assert any(folder.name in t.read_text(encoding="utf-8") for t in tests
               if t.name != Path(__file__).name), f"no test names {folder.name}"
