"""The docs follow the code: every format note the code cites ("docs/formats.md §N",
"seed 00N") is a heading of docs/formats.md, and docs/ARCHITECTURE.md names every module."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "docs" / "formats.md"
CITED_IN = ("analysis", "tests", "benchmarks")
CITATION = re.compile(r"([\w./-]*)formats\.md((?:\s*[,/]\s*§\d+|\s+§\d+)*)", re.I)
SEED = re.compile(r"\bseed 00\d\b")


def _sources():
    me = Path(__file__).resolve()
    for top in CITED_IN:
        for p in sorted((ROOT / top).rglob("*.py")):
            if p.resolve() != me:
                yield p, p.read_text(errors="replace")


def _headings() -> str:
    return "\n".join(ln for ln in FORMATS.read_text().splitlines() if ln.startswith("#"))


def format_citations() -> list[tuple[str, str, list[str]]]:
    """(file:line, prefix before 'formats.md', [§ numbers]) of every citation."""
    found = []
    for path, text in _sources():
        for m in CITATION.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append((f"{path.relative_to(ROOT)}:{line}", m.group(1),
                          re.findall(r"§\d+", m.group(2))))
    return found


def test_citations_name_docs_formats_md():
    found = format_citations()
    assert found, "no citation found: is the pattern still right?"
    assert [(where, prefix) for where, prefix, _ in found if prefix != "docs/"] == []


def test_cited_sections_exist():
    headings = _headings()
    missing = [(where, s) for where, _, sections in format_citations() for s in sections
               if not re.search(rf"^## {s} ", headings, re.M)]
    assert missing == []


def test_cited_seeds_exist():
    headings = _headings()
    cited = {(f"{p.relative_to(ROOT)}", s) for p, text in _sources() for s in SEED.findall(text)}
    assert cited, "no seed citation found: is the pattern still right?"
    assert sorted((where, s) for where, s in cited if f"### {s} " not in headings) == []


def test_the_citation_pattern_reads_lists_of_sections():
    text = "see FORMATS.md §5, §7 and docs/formats.md §1/§8, docs/formats.md."
    got = [(m.group(1), re.findall(r"§\d+", m.group(2))) for m in CITATION.finditer(text)]
    assert got == [("", ["§5", "§7"]), ("docs/", ["§1", "§8"]), ("docs/", [])]


ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
NAMED_PY = re.compile(r"`([\w/]+\.py)`")


def _modules() -> list[Path]:
    pkg = ROOT / "analysis"
    return sorted(p.relative_to(pkg) for p in pkg.rglob("*.py")
                  if p.name not in ("__init__.py", "__main__.py"))


def test_architecture_names_every_module():
    text = ARCHITECTURE.read_text()
    named = set(NAMED_PY.findall(text))
    missing = [str(m) for m in _modules() if m.name not in named and str(m) not in named]
    assert missing == []


def test_architecture_names_every_workload_module():
    """The built-in workloads (outside `analysis/`) are named by their dotted module names."""
    text = ARCHITECTURE.read_text()
    modules = [".".join(p.relative_to(ROOT).with_suffix("").parts)
               for p in sorted((ROOT / "workloads").rglob("*.py"))
               if p.name not in ("__init__.py", "__main__.py")]
    assert [m for m in modules if f"`{m}`" not in text] == []


def test_architecture_names_no_module_that_is_gone():
    names = {m.name for m in _modules()} | {str(m) for m in _modules()}
    assert sorted(set(NAMED_PY.findall(ARCHITECTURE.read_text())) - names) == []


def test_papermill_sees_every_parameter_of_every_notebook():
    """`papermill --help-notebook` and `-p NAME VALUE` know each name the parameters cell
    assigns (a comment holding '=' hid `threshold` of 40_trends from papermill)."""
    import ast
    import json

    import papermill as pm

    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
        names = [t.id for node in ast.parse("".join(cell["source"])).body
                 if isinstance(node, ast.Assign) for t in node.targets]
        assert list(pm.inspect_notebook(str(path))) == names, path.name
