"""`dlperf report --meta`: run fields a log outside the DLPerf layout cannot state (issue 9,
item 20) reach the report's data, and a bad key is a usage error before any kernel starts."""

from __future__ import annotations

import subprocess

from analysis.report import prepared
from tests.parsers.test_megatron_outside_layout import _pasted


def test_report_data_takes_the_stated_fields(tmp_path):
    _pasted(tmp_path / "slurm-123456.out")
    data = prepared.compute(tmp_path, meta={"num_nodes": 2, "gpus_per_node": 8, "model": "gpt"})
    [row] = data.summary.itertuples()
    assert (row.num_nodes, row.gpus_per_node, row.model) == (2, 8, "gpt")
    assert round(row.throughput_median, 2) == 7.36


def test_report_meta_bad_key_is_a_usage_error(tmp_path, dlperf_exe):
    _pasted(tmp_path / "train.log")
    done = subprocess.run([dlperf_exe, "report", str(tmp_path), "-o", str(tmp_path / "out"),
                           "--meta", "gpus=8"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "unknown key 'gpus'" in done.stderr
    assert not (tmp_path / "out").exists()
