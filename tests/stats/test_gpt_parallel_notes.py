"""analysis.stats.gpt_parallel states what the GPT report states beside each ratio: the
efficiency range over the repeats, the DP implementation, baselines of another
implementation or host, and orders the repeats do not resolve; on the committed H200
campaign the figures are the report's (one computation for both)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.collect import parse_paths
from analysis.config import RAW_LOGS_DIR
from analysis.env import describe, folder_records
from analysis.stats import gpt_runs
from analysis.stats.gpt_parallel import overlapping_neighbours, strategies
from analysis.stats.summary import summarize

GPT = RAW_LOGS_DIR / "gpt_4gpu"


@pytest.fixture(scope="module")
def parsed():
    result = parse_paths([GPT])
    envs, _, _ = folder_records.gather(GPT)
    return summarize(result), result.runs, describe.run_hosts(envs)


@pytest.fixture(scope="module")
def campaign(parsed):
    return strategies(*parsed).set_index("case")


def _pct(x: float) -> float:
    return round(x * 100, 1)


def test_efficiency_ranges_are_the_repeats_min_and_max_over_the_1gpu_median(campaign, parsed):
    """The report's key finding: on 4 GPUs DP 90.4 % (89.8–90.6), 2D 40.5 % (38.7–44.1),
    MP 38.1 % (36.7–40.5), each repeat against the 1-GPU case's median."""
    got = {c: tuple(_pct(campaign.loc[c, k]) for k in (
        "efficiency_vs_1gpu", "efficiency_vs_1gpu_low", "efficiency_vs_1gpu_high"))
        for c in ("DP_4x1x1_32_1536x16", "2D_2x2x1_16_1536x16", "MP_1x4x1_8_1536x16")}
    assert got == {"DP_4x1x1_32_1536x16": (90.4, 89.8, 90.6),
                   "2D_2x2x1_16_1536x16": (40.5, 38.7, 44.1),
                   "MP_1x4x1_8_1536x16": (38.1, 36.7, 40.5)}
    # recomputed from the runs: the slowest repeat of MP4 per GPU over the 1-GPU median
    summary, runs, _ = parsed
    one = summary.set_index("case").loc["DP_1x1x1_8_1536x16", "throughput_median"]
    slowest = summary.set_index("case").loc["MP_1x4x1_8_1536x16", "throughput_min"]
    assert campaign.loc["MP_1x4x1_8_1536x16", "efficiency_vs_1gpu_low"] == pytest.approx(
        slowest / 4 / one)


def test_dp_implementation_and_the_baselines_that_ran_another(campaign):
    assert campaign.loc["2D_2x2x1_16_1536x16", "dp_impl"] == "FSDP2"
    assert campaign.loc["DP_4x1x1_32_1536x16", "dp_impl"] == "DDP"
    assert campaign.loc["MP_1x4x1_8_1536x16", "dp_impl"] == ""  # no data parallelism
    # vs DP over DP4 and the TP loss over DP2 both ran DDP where 2D runs FSDP2
    assert campaign.loc["2D_2x2x1_16_1536x16", "other_impl"] == (
        "DP_4x1x1_32_1536x16", "DP_2x1x1_16_1536x16")
    assert campaign.loc["2D_2x2x1_16_2304x24", "other_impl"] == ("DP_2x1x1_16_2304x24",)
    assert "efficiency_vs_dp, tp_lost over DDP (this case FSDP2): includes FSDP2's cost " \
           "over DDP" in campaign.loc["2D_2x2x1_16_1536x16", "notes"]
    assert (campaign["other_impl"].map(len) > 0).sum() == 2
    # one host ran every case: no ratio crosses hosts
    assert set(campaign["hosts"]) == {("vm",)} and not campaign["other_host"].map(len).any()


def test_overlapping_ranges_leave_the_order_unresolved(campaign):
    """The report: "2D_2x2x1_16_1536x16 and MP_1x4x1_8_1536x16: their ranges overlap, so
    their order is not resolved"; no other neighbours overlap."""
    unresolved = campaign["order_unresolved"][campaign["order_unresolved"].map(len) > 0]
    assert unresolved.to_dict() == {"2D_2x2x1_16_1536x16": ("MP_1x4x1_8_1536x16",),
                                    "MP_1x4x1_8_1536x16": ("2D_2x2x1_16_1536x16",)}
    assert campaign.loc["MP_1x4x1_8_1536x16", "notes"] == \
        "range overlaps 2D_2x2x1_16_1536x16's: order not resolved"


def test_overlapping_neighbours_compares_only_neighbours():
    group = pd.DataFrame({"case": ["a", "b", "c", "d"],
                          "efficiency_vs_1gpu": [0.9, 0.5, 0.8, float("nan")],
                          "efficiency_vs_1gpu_low": [0.85, 0.45, 0.79, float("nan")],
                          "efficiency_vs_1gpu_high": [0.95, 0.80, 0.82, float("nan")]})
    # a 0.85–0.95 and c 0.79–0.82 are apart; c and b (0.45–0.80) touch; d has no figure
    assert overlapping_neighbours(group) == [("c", "b")]


def test_a_baseline_on_another_host_is_named(parsed):
    summary, runs, hosts = parsed
    moved = {run: ("other" if run.startswith("1n1g/") else host) for run, host in hosts.items()}
    got = strategies(summary, runs, moved).set_index("case")
    assert got.loc["DP_1x1x1_8_1536x16", "hosts"] == ("other",)
    assert got.loc["MP_1x4x1_8_1536x16", "other_host"] == ("DP_1x1x1_8_1536x16",)
    assert "efficiency_vs_1gpu, tp_lost over runs on another host (other; this case vm)" \
        in got.loc["MP_1x4x1_8_1536x16", "notes"]
    assert got.loc["DP_1x1x1_8_1536x16", "other_host"] == ()  # its own baseline


def test_case_runs_without_hosts_knows_the_implementation(parsed):
    _, runs, _ = parsed
    facts = gpt_runs.case_runs(runs)
    assert facts["2D_2x2x1_16_1536x16"].dp_impl == "FSDP2"
    assert facts["2D_2x2x1_16_1536x16"].hosts == ()
    assert gpt_runs.model_size(facts["DP_1x1x1_8_1536x16"].parameters) == "0.61B"


def test_the_report_states_the_same_figures(campaign):
    """The GPT report's key findings give each 4-GPU case's efficiency with the range made
    here and call the overlapping pair unresolved; its strategies table marks († ) exactly
    the ratios over a baseline of another implementation."""
    from analysis import report
    from analysis.i18n import Translator

    rep = report.build(GPT, lang="en")
    tr = Translator("en")
    findings = str(rep.part("findings")).replace("\\", "")  # Markdown escapes
    for case in ("DP_4x1x1_32_1536x16", "PP_1x1x4_64_1536x16", "2D_2x2x1_16_1536x16",
                 "MP_1x4x1_8_1536x16"):
        r = campaign.loc[case]
        assert (f"{tr.percent(r['efficiency_vs_1gpu'])} ({tr.percent(r['efficiency_vs_1gpu_low'])}"
                f"–{tr.percent(r['efficiency_vs_1gpu_high'])})") in findings, case
    assert "2D_2x2x1_16_1536x16 and MP_1x4x1_8_1536x16: their ranges overlap" in findings
    # the table names a case by the chart's label under a row naming its model
    from analysis.plots.gpt import case_labels, model_label

    marked, model = set(), None
    for _, row in rep.gpt_strategies().data.iterrows():
        if (row.iloc[1:] == "").all():
            model = row.iloc[0]
            continue
        marked |= {(model, row.iloc[0], column) for column, cell in row.items()
                   if str(cell).endswith("†")}
    ratio_column = {"dp_case": "efficiency vs DP", "no_tp_case": "TP: share lost",
                    "baseline_case": "efficiency vs 1 GPU", "no_pp_case": "PP loss (measured)"}
    labels = case_labels(rep.summary)
    expected = {(model_label(r["hidden_size"], r["num_layers"], tr), labels[case],
                 ratio_column[field]) for case, r in campaign.iterrows()
                for field in ratio_column if r[field] in r["other_impl"]}
    assert len(expected) == 3 and marked == expected
