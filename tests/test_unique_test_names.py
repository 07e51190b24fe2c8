"""pytest imports test modules by basename (rootdir-relative, no packages): two test files of
one name in two folders stop the whole collection ("import file mismatch")."""

from collections import Counter
from pathlib import Path


def test_test_file_names_are_unique():
    names = Counter(p.name for p in Path(__file__).parent.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
