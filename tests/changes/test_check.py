"""`dlperf check LOG_DIR --references FILE` (issue 12, Deliver 2): YAML or CSV references,
value with tolerance or bounds, the same exit rule as compare, one-line errors naming the
file and line."""

from __future__ import annotations

import contextlib
import io
import json

import pandas as pd
import pytest
from cli._helpers import ROOT, assert_one_clean_line, run_cli

from analysis.cli import main

from .campaigns import BUNDLED

EXAMPLE = ROOT / "examples" / "references" / "dlperf_pytorch_resnet50_v100.yaml"
FP32_1N4G = "PyTorch/resnet50/fp32/b128/1n4g"
MEDIAN_FP32_1N4G = 11661.87  # dlperf summarize data/raw_logs/rn50_4gpu


def _check(*args) -> tuple[int, pd.DataFrame]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(["check", str(BUNDLED), *map(str, args), "--format", "json"])
    return status, pd.DataFrame(json.loads(buf.getvalue()))


def test_the_bundled_dlperf_v100_references_are_all_beaten_or_listed():
    status, df = _check("--references", EXAMPLE)
    assert status == 0
    assert len(df) == 10
    faster = df[df["verdict"] == "faster"]
    assert sorted(faster["case_key"]) == [
        "PyTorch/resnet50/amp/b256/1n1g", "PyTorch/resnet50/amp/b256/1n4g",
        "PyTorch/resnet50/fp32/b128/1n1g", FP32_1N4G]
    assert (df.loc[df["verdict"] != "faster", "verdict"] == "no runs").all()
    one = df.set_index("case_key").loc["PyTorch/resnet50/fp32/b128/1n1g"]
    assert (one["value"], one["lower"], one["upper"]) == pytest.approx(
        (367.29, 367.29 * 0.95, 367.29 * 1.05))
    assert one["source"].startswith("DLPerf")


def test_a_case_below_its_reference_fails_the_gate(dlperf_exe, tmp_path):
    refs = tmp_path / "refs.yaml"
    refs.write_text(f"references:\n  - key: '{FP32_1N4G}'\n"
                    f"    value: {MEDIAN_FP32_1N4G * 1.05}\n    tolerance: 2%\n")
    done = run_cli(dlperf_exe, "check", BUNDLED, "--references", refs)
    assert done.returncode == 1
    assert_one_clean_line(done.stderr, "1 case(s) below their reference", FP32_1N4G)
    refs.write_text(f"- {{key: '{FP32_1N4G}', value: {MEDIAN_FP32_1N4G * 1.01}}}\n")
    status, df = _check("--references", refs)  # within the default 2 %
    assert status == 0 and df["verdict"].tolist() == ["within"]
    status, df = _check("--references", refs, "--tolerance", "0.5%")
    assert status == 1 and df["verdict"].tolist() == ["slower"]


def test_csv_references_with_bounds_and_field_matching(tmp_path):
    refs = tmp_path / "refs.csv"
    refs.write_text("model,precision,num_nodes,gpus_per_node,lower,upper,unit,source\n"
                    "resnet50,FP32,1,4,11000,12000,samples/s,ours\n"
                    "resnet50,amp,,,20000,,,\n")
    status, df = _check("--references", refs)
    assert status == 1
    first = df[df["reference"] == "*/resnet50/FP32/b*/1n4g"]
    assert first["case_key"].tolist() == [FP32_1N4G] and first["verdict"].tolist() == ["within"]
    amp = df[df["reference"] == "*/resnet50/amp/b*/*n*g"].set_index("case_key")["verdict"]
    assert amp.to_dict() == {"PyTorch/resnet50/amp/b256/1n1g": "slower",
                             "PyTorch/resnet50/amp/b256/1n2g": "slower",
                             "PyTorch/resnet50/amp/b256/1n4g": "within",
                             "PyTorch/resnet50/amp/b256/2n2g": "within"}  # no upper bound


@pytest.mark.parametrize("name, text, needles", [
    ("r.yaml", "references:\n  - {model: resnet50, value: 1}\n  - {model: resnet50}\n",
     ["r.yaml:3", "value"]),
    ("r.yaml", "- {model: resnet50, value: 1, speed: 3}\n", ["r.yaml:1", "speed"]),
    ("r.yaml", "- {model: resnet50, value: 1, unit: ms}\n", ["r.yaml:1", "'ms'"]),
    ("r.yaml", "- {model: resnet50, lower: 5, upper: 2}\n", ["r.yaml:1", "lower 5"]),
    ("r.yaml", "- {model: resnet50, value: fast}\n", ["r.yaml:1", "value"]),
    ("r.yaml", "- {value: 3}\n", ["r.yaml:1", "name the case"]),
    ("r.yaml", "references: [unclosed\n", ["r.yaml", "not valid YAML"]),
    ("r.csv", "model,num_nodes,value\nresnet50,one,3\n", ["r.csv:2", "num_nodes"]),
])
def test_a_bad_references_file_is_one_line_naming_file_and_line(dlperf_exe, tmp_path, name,
                                                                 text, needles):
    refs = tmp_path / name
    refs.write_text(text)
    done = run_cli(dlperf_exe, "check", BUNDLED, "--references", refs)
    assert done.returncode == 2 and done.stdout == ""
    assert_one_clean_line(done.stderr, *needles)
