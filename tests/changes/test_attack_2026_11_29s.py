"""Gates and trends that dropped a number (attack of 2026-11-29): `check` of logs without
env records, `store trend` and `compare` of MLPerf campaigns (scored by time to train)."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.cli import main

from .campaigns import BUNDLED

FP32_1N4G = "PyTorch/resnet50/fp32/b128/1n4g"  # median 11,661.87 samples/s on 4x H200


def _cli(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


def _without_env(tmp_path: Path) -> Path:
    """The bundled 1n4g runs without their env records (logs of another harness)."""
    camp = tmp_path / "camp"
    (camp / "1n4g").mkdir(parents=True)
    for src in (BUNDLED / "1n4g").glob("resnet50_b128_fp32_*"):
        if not src.name.endswith(".env.json"):
            shutil.copy(src, camp / "1n4g")
    return camp


def test_check_without_env_records_fails_a_case_below_its_one_machine_reference(tmp_path):
    """A case 10 % below its reference: 'hardware unknown', exit 0 even with --require-all
    and nothing on stderr, before; now 'slower', exit 1, the row and a stderr line saying
    the hardware was not checked. References of two machines for the case stay without a
    verdict, named on stderr; --require-all fails on them."""
    camp = _without_env(tmp_path)
    refs = tmp_path / "refs.yaml"
    refs.write_text("source: agreed target\ntolerance: 2%\nreferences:\n"
                    f"  - {{key: '{FP32_1N4G}', value: 13000, hardware: 4x H200}}\n")
    for extra in ([], ["--require-all"]):
        status, out, err = _cli("check", camp, "--references", refs, "--format", "csv", *extra)
        [row] = pd.read_csv(io.StringIO(out), keep_default_na=False).to_dict("records")
        assert (status, row["verdict"]) == (1, "slower")
        assert row["ratio"] == pytest.approx(11661.87 / 13000, abs=1e-4)
        assert row["excluded"].startswith("hardware not checked: reference measured on 4x H200")
        assert f"1 case(s) checked without the hardware check: {FP32_1N4G} (reference " \
            "measured on 4x H200; the runs have no environment record of their GPUs)" in err
    refs.write_text(refs.read_text()
                    + f"  - {{key: '{FP32_1N4G}', value: 1400, hardware: 8x V100-SXM2-16GB}}\n")
    status, out, err = _cli("check", camp, "--references", refs, "--format", "csv")
    table = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert status == 0 and set(table["verdict"]) == {"hardware unknown"}
    assert table["excluded"].str.contains("references of several machines").all()
    assert "2 reference(s) give no verdict: " in err
    status, _out, err = _cli("check", camp, "--references", refs, "--require-all")
    assert status == 4 and "2 reference(s) give no verdict (--require-all)" in err
