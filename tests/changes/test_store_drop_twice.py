"""`dlperf store drop KEY` of a campaign dropped already: nothing is there, so it says the
campaign is not in the store (exit 2, as for an unknown key), not "dropped", and changes no
file; a drop that repairs a lost manifest still does."""

from __future__ import annotations

from analysis.changes import store as results_store

from . import test_store_manifest_lost as lost
from .test_store_damage import _main
from .test_store_manifest_lost import BERT, _files, _key

#: the manifest tests' store of three campaigns, a fresh copy each test
pristine, store = lost.pristine, lost.store


def test_dropping_a_campaign_twice_says_it_is_not_in_the_store(store):
    key = _key(store, BERT)
    status, out, _ = _main("store", "drop", key, "--store", store)
    assert status == 0 and out.startswith(f"dropped {key} paddle_perf_pytorch_bert")
    before = {p: p.read_bytes() for p in _files(store)}
    status, out, err = _main("store", "drop", key, "--store", store)
    assert status == 2 and out == ""  # was: "dropped …", exit 0
    assert err.count("\n") == 1 and f"no campaign {key!r} in store" in err
    assert "dropped already" in err
    assert {p: p.read_bytes() for p in _files(store)} == before
    assert _main("store", "list", "--store", store)[0] == 0


def test_dropping_again_a_dropped_campaign_named_lost_repairs_the_manifest(store):
    """A drop after the newest row was added, then the manifest lost: the rows name the
    campaign lost again, and dropping it again is the repair the damage asks for."""
    key = _key(store, BERT)
    assert _main("store", "drop", key, "--store", store)[0] == 0
    (store / results_store.MANIFEST).unlink()
    status, _, err = _main("store", "list", "--store", store)
    assert status == 2 and key in err
    status, out, _ = _main("store", "drop", key, "--store", store)
    assert status == 0 and out.startswith(f"dropped {key}")
    assert _main("store", "list", "--store", store)[0] == 0
