"""Records a user or another tool wrote (environment records, done markers, status,
campaign.yaml, meta files) are read with a bound on their nesting: a file of 100,000 nested
brackets is named as unreadable, never a RecursionError."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.env import folder_records
from analysis.errors import UsageError
from analysis.fsutil import MAX_JSON_DEPTH, json_depth, loads_json, read_json_object
from analysis.user_meta import load_meta_file

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "data" / "raw_logs" / "rn50_4gpu"
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def test_json_depth_ignores_brackets_in_strings():
    assert json_depth(b'{"a": "[[[[[[[[", "b": [[1]]}') <= 3
    text = '{"k": "' + "[" * 500 + '", "v": [1, {"w": 2}]}'
    assert json_depth(text.encode()) == 3
    assert loads_json(text)["v"] == [1, {"w": 2}]


def test_deep_json_is_refused_before_it_is_parsed(tmp_path):
    with pytest.raises(ValueError, match="nested 100,000 levels"):
        loads_json(DEEP_JSON)
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert loads_json(ok)  # the bound itself is read
    marker = tmp_path / "run_1.done"
    marker.write_text('{"ok": true, "a": ' + DEEP_JSON + "}")
    assert read_json_object(marker) is None


def test_deep_meta_file_is_a_usage_error_naming_it(tmp_path):
    meta = tmp_path / "dlperf-meta.yaml"
    meta.write_text("[" * 20_000 + "]" * 20_000)
    with pytest.raises(UsageError, match="dlperf-meta.yaml: nested too deeply"):
        load_meta_file(meta)


def test_deep_records_beside_logs_are_named_unreadable(tmp_path):
    folder = tmp_path / "c"
    shutil.copytree(CAMPAIGN / "1n1g", folder / "1n1g")
    (folder / "campaign.yaml").write_text(DEEP_JSON)
    env = folder / "1n1g" / "resnet50_b128_fp32_1.node0.env.json"
    env.write_text(DEEP_JSON)
    (folder / "1n1g" / "resnet50_b128_fp32_2.done").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    envs, _, camp = folder_records.gather(folder)
    unreadable = dict(camp.unreadable)
    assert "nested" in unreadable["1n1g/resnet50_b128_fp32_1.node0.env.json"]
    assert "1n1g/resnet50_b128_fp32_2.done" in unreadable
    assert folder_records.campaign_yaml(camp) == {}
    for command in (["summarize", str(folder)], ["compare", str(folder), str(folder)]):
        proc = subprocess.run([sys.executable, "-m", "analysis", *command], capture_output=True,
                              text=True, timeout=300, cwd=ROOT)
        assert "internal error" not in proc.stderr and proc.returncode == 0, proc.stderr


def test_a_record_larger_than_any_record_is_not_read(tmp_path, monkeypatch):
    import analysis.fsutil as fsutil

    monkeypatch.setattr(fsutil, "MAX_RECORD_BYTES", 1 << 10)
    marker = tmp_path / "run_1.done"
    marker.write_text('{"ok": true, "pad": "' + "x" * 2000 + '"}')
    assert read_json_object(marker) is None
    marker.write_text('{"ok": true}')
    assert read_json_object(marker) == {"ok": True}
