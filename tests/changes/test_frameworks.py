"""Frameworks side by side (issue 11, item 8; analysis.changes.frameworks): only the same
setting on the same hardware is compared, what is left out says why, every measurement is a
row with its source and version, and duplicates are shown and flagged, never merged."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.changes import frameworks
from analysis.changes.frameworks import ALONE, MIXED, NO_THROUGHPUT, NOT_RECORDED
from analysis.errors import UnknownNameError
from analysis.i18n import load_catalogue

H200 = "4x NVIDIA H200, Intel(R) Xeon(R) Processor (64 CPUs), 504 GiB, x86_64"
V100 = "8x Tesla V100-SXM2-16GB, Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz (48 CPUs), 384 GiB"


def _runs(*measurements) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs and env facts from (framework, folder, hardware, version, throughputs[, fields])."""
    runs, env = [], []
    for framework, folder, hardware, version, values, *fields in measurements:
        setting = {"model": "resnet50", "precision": "fp32", "batch_size_per_device": 128,
                   "num_nodes": 1, "gpus_per_node": 1, "case": None,
                   **(fields[0] if fields else {})}
        for i, value in enumerate(values, 1):
            run_id = f"{folder}/1n1g/{framework}_{i}"
            runs.append({"run_id": run_id, "source": f"logs/{run_id}.log",
                         "framework": framework, **setting, "throughput": value})
            if hardware is not None:
                env.append({"run_id": run_id, "hardware": hardware, "frameworks": version})
    frame = pd.DataFrame(runs)
    for c in ("batch_size_per_device", "num_nodes", "gpus_per_node"):
        frame[c] = frame[c].astype("Int64")
    return frame, pd.DataFrame(env, columns=["run_id", "hardware", "frameworks"])


def test_h200_runs_against_v100_runs_are_left_out_not_a_speedup():
    """The issue's case: 30_compare divided H200 runs by V100 runs (a 'speedup' of 3.42)."""
    runs, env = _runs(("PyTorch", "pt", H200, "torch 2.11.0", [2990.0, 3000.0, 3010.0]),
                      ("OneFlow", "of", V100, "oneflow 0.3.1", [380.0, 383.0, 385.0]))
    result = frameworks.compare(runs, env)
    assert result.table.empty
    excluded = result.excluded.set_index("framework")
    assert excluded["reason"].to_dict() == {"OneFlow": ALONE, "PyTorch": ALONE}
    assert excluded.loc["PyTorch", "elsewhere"] == f"OneFlow: {V100}"
    assert excluded.loc["OneFlow", "hardware"] == V100
    text = frameworks.excluded_text(result, "en")
    assert (f"PyTorch resnet50 fp32 b128 1n1g (logs/pt) on {H200}: no other framework ran "
            f"this setting on this hardware (elsewhere: OneFlow: {V100})") in text
    zh = frameworks.excluded_text(result, "zh")
    assert any("没有其他框架在此硬件上运行此设置" in t for t in zh)


def test_the_same_setting_on_the_same_hardware_is_compared_with_source_and_version():
    runs, env = _runs(("PyTorch", "pt", H200, "torch 2.11.0", [2990.0, 3000.0, 3010.0]),
                      ("OneFlow", "of", H200, "oneflow 0.9.0", [3290.0, 3300.0, 3310.0, 3000.0]))
    result = frameworks.compare(runs, env, baseline="PyTorch")
    assert result.excluded.empty
    t = result.table.set_index("framework")
    assert t.loc["OneFlow", "relative"] == pytest.approx(3295.0 / 3000.0)
    assert t.loc["PyTorch", "relative"] == pytest.approx(1.0)
    assert t.loc["OneFlow", "repeats"] == 4 and t.loc["OneFlow", "throughput_min"] == 3000.0
    assert (t.loc["OneFlow", "framework_version"], t.loc["OneFlow", "source"]) == (
        "oneflow 0.9.0", "logs/of")
    assert (t["hardware"] == H200).all() and (t["duplicates"] == 1).all()
    shown = frameworks.table_text(result, "en").set_index("framework")
    assert shown.loc["OneFlow", "relative"] == "1.10× PyTorch"
    assert shown.loc["PyTorch", "relative"] == "baseline" and shown.loc["OneFlow", "note"] == ""
    assert shown.loc["OneFlow", "median (samples/s)"] == "3,295.00"
    # default baseline: the first framework by name
    assert set(frameworks.compare(runs, env).table["baseline"]) == {"OneFlow"}


def test_a_baseline_no_run_has_is_an_error_not_the_first_framework_by_name():
    # baseline="pytorch" silently divided by OneFlow, the first by name
    runs, env = _runs(("PyTorch", "pt", H200, "torch 2.11.0", [2990.0, 3000.0, 3010.0]),
                      ("OneFlow", "of", H200, "oneflow 0.9.0", [3290.0, 3300.0, 3310.0]))
    with pytest.raises(UnknownNameError, match=r"unknown baseline framework 'pytorch'; "
                                               r"valid: OneFlow, PyTorch$"):
        frameworks.compare(runs, env, baseline="pytorch")


def test_duplicates_are_all_shown_and_flagged_never_merged():
    # (two runs a measurement: a single run is left out, test_a_single_run_is_listed_…)
    runs, env = _runs(("PyTorch", "campaign_a", H200, "torch 2.11.0", [3000.0, 3001.0]),
                      ("PyTorch", "campaign_b", H200, "torch 2.11.0", [2500.0, 2501.0]),
                      ("OneFlow", "of", H200, "oneflow 0.9.0", [3300.0, 3300.0]))
    by_oneflow = frameworks.compare(runs, env, baseline="OneFlow").table
    assert len(by_oneflow) == 3
    pytorch = by_oneflow[by_oneflow["framework"] == "PyTorch"].set_index("source")
    assert pytorch["duplicates"].tolist() == [2, 2]
    assert pytorch.loc["logs/campaign_a", "relative"] == pytest.approx(3000.5 / 3300)
    assert pytorch.loc["logs/campaign_b", "relative"] == pytest.approx(2500.5 / 3300)
    shown = frameworks.table_text(frameworks.compare(runs, env, baseline="OneFlow"), "en")
    assert (shown["note"] == "duplicate: 2 measurements of PyTorch for this setting and "
            "hardware, all shown").sum() == 2
    # a duplicated baseline gives no ratio rather than picking one of its measurements
    by_pytorch = frameworks.compare(runs, env, baseline="PyTorch")
    assert by_pytorch.table["relative"].isna().all()
    zh = frameworks.table_text(by_pytorch, "zh")
    assert "未计算比值：基准 PyTorch 在此有 2 组测量" in zh["备注"].tolist()


def test_one_folder_with_two_framework_versions_is_two_measurements():
    runs, env = _runs(("PyTorch", "pt", H200, "torch 2.4.0", [3000.0, 3000.0]),
                      ("OneFlow", "of", H200, "oneflow 0.9.0", [3300.0, 3300.0]))
    more, more_env = _runs(("PyTorch", "pt", H200, "torch 2.5.1", [3100.0, 3100.0]))
    more["run_id"] = more_env["run_id"] = ["pt/1n1g/PyTorch_8", "pt/1n1g/PyTorch_9"]
    table = frameworks.compare(pd.concat([runs, more]), pd.concat([env, more_env])).table
    pytorch = table[table["framework"] == "PyTorch"]
    assert sorted(pytorch["framework_version"]) == ["torch 2.4.0", "torch 2.5.1"]
    assert (pytorch["duplicates"] == 2).all()


def test_runs_without_a_record_are_left_out_unless_asked_and_then_say_so():
    runs, env = _runs(("PyTorch", "pt", None, "", [3000.0, 3000.0]),
                      ("OneFlow", "of", None, "", [3300.0, 3300.0]))
    result = frameworks.compare(runs, env)
    assert result.table.empty and set(result.excluded["reason"]) == {NOT_RECORDED}
    assert "no environment record states the hardware it ran on" in " ".join(
        frameworks.excluded_text(result, "en"))
    asked = frameworks.compare(runs, env, compare_unrecorded=True)
    assert len(asked.table) == 2 and (asked.table["hardware"] == "").all()
    shown = frameworks.table_text(asked, "zh")
    assert set(shown["硬件"]) == {"未记录"} and set(shown["版本"]) == {"未记录"}


def test_known_hardware_is_never_compared_with_unrecorded_hardware():
    runs, env = _runs(("PyTorch", "pt", H200, "torch 2.11.0", [3000.0, 3000.0]),
                      ("OneFlow", "of", None, "", [300.0, 300.0]))
    result = frameworks.compare(runs, env, compare_unrecorded=True)
    assert result.table.empty
    assert set(result.excluded["reason"]) == {ALONE}


def test_a_run_across_different_machines_and_a_measurement_without_throughput():
    runs, env = _runs(("PyTorch", "pt", f"{H200}; {V100}", "torch 2.11.0", [3000.0, 3000.0]),
                      ("OneFlow", "of", H200, "oneflow 0.9.0", [np.nan, np.nan]))
    result = frameworks.compare(runs, env)
    assert result.table.empty
    assert result.excluded.set_index("framework")["reason"].to_dict() == {
        "PyTorch": MIXED, "OneFlow": NO_THROUGHPUT}
    text = " ".join(frameworks.excluded_text(result, "en"))
    assert "its runs ran on different machines" in text and "no run gave a throughput" in text


def test_different_precision_or_batch_is_never_compared():
    runs, env = _runs(("PyTorch", "pt", H200, "t", [3000.0, 3000.0], {"precision": "amp"}),
                      ("OneFlow", "of", H200, "o", [3300.0, 3300.0]),
                      ("MXNet", "mx", H200, "m", [3200.0, 3200.0],
                       {"batch_size_per_device": 256}))
    result = frameworks.compare(runs, env)
    assert result.table.empty and set(result.excluded["reason"]) == {ALONE}
    assert (result.excluded["elsewhere"] == "").all()


def test_source_folder_drops_dlperfs_case_folder():
    assert frameworks.source_folder("data/ngc/pytorch/4n8g/r50_b256_amp_3.log") == \
        "data/ngc/pytorch"
    assert frameworks.source_folder("1n1g/x.log") == "."
    assert frameworks.source_folder("runs/x.log") == "runs"


def test_every_comparison_text_is_in_both_languages_and_every_one_used_exists():
    catalogue = {k: v for k, v in load_catalogue().items() if k.startswith("fw.")}
    for key, texts in catalogue.items():
        assert set(texts) == {"en", "zh"} and all(t.strip() for t in texts.values()), key
        names = {lang: set(re.findall(r"\{(\w+)\}", t)) for lang, t in texts.items()}
        assert names["en"] == names["zh"], key
    pkg = Path(frameworks.__file__).resolve().parents[1]
    used = set()
    for path in (pkg / "changes" / "frameworks.py", pkg / "report" / "sections" /
                 "framework_table.py", pkg.parent / "notebooks" / "30_compare.ipynb"):
        used |= set(re.findall(r"""(?:say|Translator\(lang\))\(f?\\?["'](fw\.[a-z_.]+)""",
                               path.read_text()))
    used = {k for k in used if not k.endswith(".")}  # f-strings: prefixes of the keys below
    used |= {f"fw.excluded.{reason}" for reason in frameworks.REASONS}
    assert used - set(catalogue) == set()
    assert {k for k in catalogue if not k.startswith("fw.col.")} - used == set()


def test_the_report_section_from_runs_and_env_records():
    """What a report section calls: the bundled campaign alone (one framework) compares
    nothing and says why for each of its 8 settings, in the report's language."""
    from analysis import stats
    from analysis.collect import parse_paths
    from analysis.env import folder_records

    from .campaigns import BUNDLED

    runs = stats.run_throughput(parse_paths([BUNDLED]))
    envs, _topologies, _campaign = folder_records.gather(BUNDLED)
    table, left_out = frameworks.section(runs, envs, "zh")
    assert table.empty and "框架" in table.columns and len(left_out) == 8
    assert all("硬件 4x NVIDIA H200" in t and "没有其他框架" in t for t in left_out)


def test_a_single_run_is_listed_with_why_not_compared():
    """One OneFlow run beside three PyTorch runs: it was compared (its one value divided by
    PyTorch's median, n = 1, no note); now both are listed with why."""
    runs, env = _runs(("PyTorch", "pt", H200, "torch 2.11.0", [2990.0, 3000.0, 3010.0]),
                      ("OneFlow", "of", H200, "oneflow 0.9", [np.nan, 3100.0, np.nan]))
    result = frameworks.compare(runs, env)
    assert result.table.empty
    reasons = result.excluded.set_index("framework")["reason"].to_dict()
    assert reasons == {"OneFlow": frameworks.SINGLE_RUN, "PyTorch": ALONE}
    assert result.excluded.set_index("framework").loc["OneFlow", "repeats"] == 1
    text = frameworks.excluded_text(result, "en")
    assert any(t.startswith("OneFlow resnet50 fp32 b128 1n1g (logs/of)") and
               "only one run gave a throughput" in t for t in text), text
    assert any("只有一次运行得到吞吐率" in t for t in frameworks.excluded_text(result, "zh"))


def test_a_lone_measurement_without_a_hardware_record_says_so_not_on_blank():
    """compare_unrecorded with one framework alone on unrecorded hardware read "PyTorch …
    on : no other framework …" (the hardware blank)."""
    runs, env = _runs(("PyTorch", "pt", None, "", [3000.0, 3000.0]))
    result = frameworks.compare(runs, env, compare_unrecorded=True)
    assert set(result.excluded["reason"]) == {ALONE}
    for lang, blank, said in (("en", " on :", "hardware not recorded"),
                              ("zh", "硬件 ：", "未记录")):
        text = " ".join(frameworks.excluded_text(result, lang))
        assert blank not in text and said in text, text
