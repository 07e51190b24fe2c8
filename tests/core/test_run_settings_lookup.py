"""A run's records are looked up in its folder's sorted listing: its own nodes' records and
done marker, never those of a run whose name starts with its name."""

import json

from analysis.run_settings import folder_names, run_settings


def _write(path, obj):
    path.write_text(json.dumps(obj))


def test_a_run_reads_its_own_records_and_marker_from_the_listing(tmp_path):
    (tmp_path / "r50_1.log").write_text("")
    (tmp_path / "r50_10.log").write_text("")
    _write(tmp_path / "r50_1.node0.env.json", {"env": {"NCCL_ALGO": "Ring"}})
    _write(tmp_path / "r50_1.node1.env.json", {"env": {"NCCL_ALGO": "Tree"}})
    _write(tmp_path / "r50_10.node0.env.json", {"env": {"NCCL_ALGO": "CollnetDirect"}})
    _write(tmp_path / "r50_1.done", {"env": {"OMP_NUM_THREADS": "4"}})
    _write(tmp_path / "r50_10.done", {"env": {"OMP_NUM_THREADS": "8"}})
    _write(tmp_path / "r50_1.done.bak", {"env": {"OMP_NUM_THREADS": "16"}})
    names = folder_names(tmp_path)
    one = run_settings(tmp_path / "r50_1.log", "PyTorch", names)
    assert one["NCCL_ALGO"] == "Ring / Tree"
    assert one["env OMP_NUM_THREADS"] == "4"
    ten = run_settings(tmp_path / "r50_10.log", "PyTorch", names)
    assert ten["NCCL_ALGO"] == "CollnetDirect"
    assert ten["env OMP_NUM_THREADS"] == "8"
    # the caller's listing and the function's own give the same
    assert run_settings(tmp_path / "r50_1.log", "PyTorch") == one


def test_a_run_without_records_states_nothing(tmp_path):
    (tmp_path / "a.log").write_text("")
    _write(tmp_path / "a.done.json", {"env": {"X": "1"}})  # not a done marker's name
    assert run_settings(tmp_path / "a.log", "PyTorch") == {}
    assert folder_names(tmp_path / "missing") == []
