"""`dlperf report --baseline A --store ST -o ST/summary/rep` made its output folder inside
the store before it read the baseline, then called the store damaged ("summary/rep: not a
partition", exit 2), and so did every later read of it; `-o ST` wrote the report files into
the store's root. An output folder inside the store the command reads is refused before
anything is written, as the notebooks' and ``parse -o``'s outputs are."""

from __future__ import annotations

import os

import pytest
from conftest import files_of

from analysis.changes import store as results_store
from analysis.cli import main
from analysis.errors import UsageError
from analysis.fsutil import check_outside_stores


@pytest.mark.parametrize("inside", ["summary/rep", ".", "runs/../rep"])
def test_a_report_folder_inside_the_store_it_reads_is_refused_before_anything_is_written(
        campaign, store, inside, capsys):
    before = files_of(store)
    out = str(store / inside)
    assert main(["report", str(campaign), "--baseline", "A", "--store", str(store), "-o", out,
                 "--to", "html", "--lang", "en"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"dlperf: error: refusing to write {os.path.realpath(out)}: it is inside "
                   f"the results store {store}, which it would damage; write elsewhere"]
    assert files_of(store) == before
    assert len(results_store.campaigns(store)) == 1  # was: "store … is damaged"


def test_a_folder_beside_the_store_is_no_part_of_it(store):
    """A sibling whose name begins with the store's is not inside it."""
    check_outside_stores(store.parent / "store_report", [store])
    check_outside_stores(store.parent / "store" / ".." / "rep", [store])
    with pytest.raises(UsageError, match="inside the results store"):
        check_outside_stores(store.parent / "x" / ".." / "store" / "rep", [store])
