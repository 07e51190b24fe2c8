"""notebooks/30_compare.ipynb executed with papermill on real logs: the bundled PyTorch runs
(4x NVIDIA H200, with their env records) beside synthetic OneFlow runs of the same setting,
first recorded on a V100 machine (left out, with the reason), then on the same H200 machine
in two folders (compared; both OneFlow measurements shown and flagged)."""

from __future__ import annotations

import json
import shutil
import statistics
import sys

import nbformat
import pandas as pd
import papermill as pm
import pytest

from .campaigns import BUNDLED, ROOT

sys.path.insert(0, str(ROOT / "tests" / "report"))
import synth  # noqa: E402

pytestmark = pytest.mark.slow
PYTORCH_MEDIAN = 2998.16  # dlperf summarize data/raw_logs/rn50_4gpu: fp32 b128 1n1g
ONEFLOW_MEDIAN = statistics.median(synth.throughput("fp32", 128, 1, 1, r) for r in (1, 2, 3))
H200_RECORD = BUNDLED / "1n1g" / "resnet50_b128_fp32_1.node0.env.json"


def _logs(root, oneflow_record: dict, oneflow_folders=("oneflow",), model="resnet50"):
    """PyTorch fp32 b128 1n1g runs of the bundled campaign and OneFlow runs of the same
    setting, each run with `oneflow_record` as its env record."""
    pytorch = root / "pytorch" / "1n1g"
    pytorch.mkdir(parents=True)
    for path in (BUNDLED / "1n1g").glob("resnet50_b128_fp32_*"):
        shutil.copy(path, pytorch / path.name)
    for folder in oneflow_folders:
        for log in synth.write_campaign(root / folder, configs=((1, 1),)):
            # each folder's own last line: two measurements, not a copied log (duplicate_run)
            log.write_text(log.read_text().replace("model = resnet50", f"model = {model}")
                           + f"measured into {folder}\n")
            log.with_name(f"{log.stem}.node0.env.json").write_text(json.dumps(oneflow_record))
    return root


def _run(tmp_path, logs, **params):
    out = tmp_path / "30_compare.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "30_compare.ipynb"), str(out),
                        parameters={"log_dir": str(logs), "compare_csv": str(tmp_path / "c.csv"),
                                    "excluded_csv": str(tmp_path / "x.csv"), **params},
                        cwd=str(tmp_path), progress_bar=False)
    nb = nbformat.read(out, as_version=4)
    html = "".join(o["data"].get("text/html", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs if "data" in o)
    return pd.read_csv(tmp_path / "c.csv"), pd.read_csv(tmp_path / "x.csv"), html


def test_h200_pytorch_against_v100_oneflow_is_left_out_with_the_reason(tmp_path):
    logs = _logs(tmp_path / "logs", synth.env_record("v100-node"))
    compared, excluded, html = _run(tmp_path, logs, lang="zh")
    assert compared.empty  # before: a OneFlow/PyTorch "speedup" across machines
    assert sorted(excluded["framework"]) == ["OneFlow", "PyTorch"]
    assert set(excluded["reason"]) == {"alone"}
    assert excluded["hardware"].str.startswith("8x Tesla V100-SXM2-16GB").sum() == 1
    assert excluded["hardware"].str.startswith("4x NVIDIA H200").sum() == 1
    assert "没有任何设置在同一硬件上由两个及以上框架运行" in html
    assert "未参与比较（2 项）" in html and "没有其他框架在此硬件上运行此设置" in html


def test_same_hardware_is_compared_and_a_duplicate_is_shown_and_flagged(tmp_path):
    h200 = json.loads(H200_RECORD.read_text())
    logs = _logs(tmp_path / "logs", h200, oneflow_folders=("oneflow_a", "oneflow_b"))
    compared, excluded, html = _run(tmp_path, logs, baseline="PyTorch")
    assert excluded.empty
    assert sorted(compared["framework"]) == ["OneFlow", "OneFlow", "PyTorch"]
    assert set(compared["hardware"]) == {
        "4x NVIDIA H200, Intel(R) Xeon(R) Processor (64 CPUs), 504 GiB, x86_64"}
    oneflow = compared[compared["framework"] == "OneFlow"]
    assert sorted(s.rsplit("/", 1)[-1] for s in oneflow["source"]) == ["oneflow_a", "oneflow_b"]
    assert oneflow["duplicates"].tolist() == [2, 2]
    assert oneflow["relative"].tolist() == pytest.approx([ONEFLOW_MEDIAN / PYTORCH_MEDIAN] * 2,
                                                         rel=1e-4)
    pytorch = compared[compared["framework"] == "PyTorch"].iloc[0]
    assert pytorch["throughput_median"] == pytest.approx(PYTORCH_MEDIAN, abs=0.01)
    assert pytorch["framework_version"] == "torch 2.11.0" and pytorch["repeats"] == 5
    assert html.count("duplicate: 2 measurements of OneFlow") == 2
    assert "torch 2.11.0" in html


def test_names_from_logs_are_escaped(tmp_path):
    h200 = json.loads(H200_RECORD.read_text())
    logs = _logs(tmp_path / "logs", h200, model="<i>gpt$_$x</i>")
    _compared, _excluded, html = _run(tmp_path, logs)
    assert "&lt;i&gt;gpt$_$x&lt;/i&gt;" in html and "<i>gpt" not in html


def test_a_single_run_is_listed_with_the_reason_not_compared(tmp_path):
    """OneFlow with one run (its other two logs gone) beside five PyTorch runs on the same
    H200 machine: the lone run was divided by PyTorch's median as if it were a median of
    repeats; the notebook now lists both measurements with why they are not compared."""
    h200 = json.loads(H200_RECORD.read_text())
    logs = _logs(tmp_path / "logs", h200)
    for stale in (logs / "oneflow" / "1n1g").glob("r50_b128_fp32_[23]*"):
        stale.unlink()
    compared, excluded, html = _run(tmp_path, logs)
    assert compared.empty
    reasons = excluded.set_index("framework")["reason"].to_dict()
    assert reasons == {"OneFlow": "single_run", "PyTorch": "alone"}
    assert excluded.set_index("framework").loc["OneFlow", "repeats"] == 1
    assert "Left out of the comparison (2)" in html
    assert "only one run gave a throughput; a single run shows no spread" in html
