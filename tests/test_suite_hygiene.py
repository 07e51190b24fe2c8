"""The test suite hides nothing: no skips but the hardware markers, and property tests that
can fail.

A missing tool or daemon (sshd, slurmctld, pdffonts, torch, …) must fail its test; the only
skips are `gpu` / `no_gpu` tests, decided in tests/conftest.py and listed in the README.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SKIPS = {"pytest.skip", "pytest.importorskip", "pytest.mark.skip", "pytest.mark.skipif"}
HARDWARE_MARKERS = {"pytest.mark.gpu", "pytest.mark.no_gpu"}
CENTRAL = (TESTS / "conftest.py", "pytest_collection_modifyitems")  # the one place that skips


def _test_files():
    return sorted(p for p in TESTS.rglob("*.py") if "data" not in p.relative_to(TESTS).parts)


def _functions(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def skips_outside_the_hardware_markers() -> list[str]:
    found = []
    for path in _test_files():
        tree = ast.parse(path.read_text(), str(path))
        central = {id(n) for f in _functions(tree) if (path, f.name) == CENTRAL
                   for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and ast.unparse(node) in SKIPS \
                    and id(node) not in central:
                found.append(f"{path.relative_to(TESTS.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def hardware_marked_tests() -> dict[str, str]:
    """test name -> marker, for every test marked `gpu` or `no_gpu`."""
    marked = {}
    for path in _test_files():
        for f in _functions(ast.parse(path.read_text(), str(path))):
            for d in f.decorator_list:
                name = ast.unparse(d.func if isinstance(d, ast.Call) else d)
                if name in HARDWARE_MARKERS:
                    marked[f.name] = name.rsplit(".", 1)[1]
    return marked


def test_no_skip_but_the_hardware_markers():
    assert skips_outside_the_hardware_markers() == []


def test_hardware_skips_are_listed_in_the_readme(root):
    readme = (root / "README.md").read_text()
    marked = hardware_marked_tests()
    assert marked, "no gpu/no_gpu test found: is the scan still right?"
    assert [name for name in marked if f"`{name}`" not in readme] == []


def test_the_scan_sees_skips(tmp_path, monkeypatch):
    """The scan itself finds each kind of skip (so an empty result above means something)."""
    sample = TESTS / "_hygiene_sample_test.py"
    monkeypatch.setattr(f"{__name__}._test_files", lambda: [sample])
    source = ("import pytest\ntorch = pytest.importorskip('torch')\n"
              "@pytest.mark.skipif(True, reason='x')\ndef test_a():\n    pytest.skip('no tool')\n"
              "@pytest.mark.gpu\ndef test_b():\n    pass\n")
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source)
    assert [s.split(": ", 1)[1] for s in skips_outside_the_hardware_markers()] == \
        ["pytest.importorskip", "pytest.mark.skipif", "pytest.skip"]
    assert hardware_marked_tests() == {"test_b": "gpu"}
