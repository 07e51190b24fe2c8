"""The caveats shown on page 1, before any number: what changes how the numbers read.

- synthetic data (the built-in workloads, or runs whose parameters say so): no input pipeline;
- multi-node runs whose "nodes" were one host (the env records of the nodes name the same
  hostname): no network was measured, the configuration is simulated;
- no environment record: the hardware and software are unknown;
- throughput methods that disagree by more than 5 % for a case;
- cases no run measured (n = 0): their rows are dashes, Problems says why;
- few repeats (of the measured cases): the intervals are min–max, not confidence intervals;
- measured windows shorter than SUSTAINED_SECONDS of training: burst, not sustained figures;
- runs the campaign did not finish (done markers that say so): their cases have fewer repeats;
- `bsz = max` groups: the largest batch size that ran, not a measured memory limit;
- runs made by other suite code than the report's (another commit, uncommitted changes):
  the commit that ran the campaign (its done markers) beside the one that built the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from analysis.env import describe
from analysis.i18n import cjk_spacing
from analysis.report import prose, tables
from analysis.report.precision import TRUE_WORDS
from analysis.report.sections import key_numbers, register
from analysis.report.sections.method import measured_seconds

if TYPE_CHECKING:
    from analysis.report.build import Report

#: Parameter values that say the input was synthetic (DLE spells it "syntetic").
SYNTHETIC_WORDS = ("synthetic", "syntetic")
#: Campaign workloads of the suite that train on synthetic data.
SYNTHETIC_WORKLOADS = ("builtin", "gpt")
#: Repeats from which the summary gives an order-statistic confidence interval.
CONFIDENCE_FROM_N = 7
#: Seconds of measured training below which a figure is a burst, not sustained: GPU clocks,
#: power and temperature settle over tens of seconds.
SUSTAINED_SECONDS = 30
#: What a done marker's suite commit ends with when the suite had uncommitted changes.
DIRTY = "-dirty"


def synthetic_data(rep: Report) -> bool:
    """Whether the runs trained on synthetic data (suite workload or a stated option)."""
    if str(rep.campaign_spec.get("workload", "")).lower() in SYNTHETIC_WORKLOADS:
        return True
    for key, values in rep.params.items():
        said = [v.lower() for v in values]
        if any(w in key for w in SYNTHETIC_WORDS) and any(v in TRUE_WORDS for v in said):
            return True  # --synthetic true
        if ("data" in key or "backend" in key) and any(w in v for v in said
                                                        for w in SYNTHETIC_WORDS):
            return True  # --data-backend syntetic
    return False


def no_energy(rep: Report) -> bool:
    """The runs sampled their GPUs (nvidia-smi memory figures) but no sample holds power:
    the report has no energy section, and says why rather than leave it out unexplained."""
    runs, s = rep.runs, rep.summary
    if s.empty or "energy_per_sample_j" not in s or s["energy_per_sample_j"].notna().any():
        return False
    return bool("memory_sampled_mib" in runs and runs["memory_sampled_mib"].notna().any())


def headline_caveats(rep: Report) -> list[str]:
    """The caveats of `rep`, each one Markdown sentence in its language."""
    tr, out = rep.tr, []
    if rep.summary.empty:
        return out
    if synthetic_data(rep):
        out.append(tr("caveat.synthetic"))
    shared = describe.shared_host_runs(rep.envs)
    if shared:
        simulated = key_numbers.simulated_cases(rep.runs, shared)
        configs = sorted({f"{k[4]}n{k[5]}g" for k in simulated if k[4] and k[5]})
        hosts = sorted({h for _, h in shared})
        out.append(tr("caveat.same_host", configs=tr.join(configs) if configs else "-",
                      hosts=tr.join(hosts), runs=len(shared)))
    if not rep.envs:
        out.append(tr("caveat.no_environment"))
    disagree = rep.disagreements
    if disagree:
        worst = max(disagree.values())
        out.append(tr("caveat.methods_differ", cases=len(disagree), pct=tr.percent(worst),
                      threshold=tr.percent(0.05, digits=0)))
    scored = tables.time_to_train(rep.summary)
    if scored.any():
        out.append(_time_to_train(rep, rep.summary[scored]))
    n = rep.summary["repeats"]
    unmeasured = int(((n.fillna(0) == 0) & ~scored).sum())
    if unmeasured:
        out.append(tr("caveat.no_throughput", cases=unmeasured, total=len(n)))
    measured = tables.measured_repeats(rep.summary)
    if measured and measured[0] < CONFIDENCE_FROM_N:
        low, high = measured[0], measured[-1]
        shown = ("caveat.few_repeats"  # n < 2 shows medians alone
                 if tables.interval_kinds(rep.summary) else "caveat.few_repeats_no_interval")
        out.append(tr(shown, n=CONFIDENCE_FROM_N,
                      repeats=str(low) if low == high else f"{low}–{high}"))
    seconds = measured_seconds(rep)
    if seconds is not None and seconds.high < SUSTAINED_SECONDS:
        out.append(tr("caveat.short_window", iterations=seconds.iterations,
                      seconds=seconds.text(tr), sustained=SUSTAINED_SECONDS))
    if no_energy(rep):
        out.append(tr("caveat.no_energy"))
    if rep.campaign.failed:
        out.append(tr("caveat.failed_runs", count=len(rep.campaign.failed),
                      runs=tr.join([run for run, _, _ in rep.campaign.failed])))
    if rep.campaign.pending:
        out.append(tr("caveat.pending_runs", count=len(rep.campaign.pending),
                      total=rep.campaign.planned))
    if not tables.gpt_rows(rep.summary).empty and tables.scaling_groups(rep.summary):
        out.append(tr("caveat.gpt_separate"))
    ran = other_suite_commits(rep.campaign.suite_commits, rep.suite_commit)
    if ran:
        out.append(cjk_spacing(tr(  # a commit beside Chinese is spaced, a full-width ）not
            "caveat.suite_commit", built=rep.suite_commit or tr("report.unknown"),
            ran=tr.join([commit_text(c, len(rep.suite_commit), tr) for c in ran]))))
    largest = [key for key, _ in tables.scaling_groups(rep.summary)
               if tables.is_largest_batch(key)]
    if largest:
        out.append(tr("caveat.bsz_max", groups=tr.join(
            [tr("caveat.bsz_max_group", framework=fw, model=model, precision=prec,
                bsz=tr.int(bsz)) for fw, model, prec, bsz in largest])))
    return out


def _time_to_train(rep: Report, rows) -> str:
    """The score of each case scored by its time to train (MLPerf), with its GPUs (as far
    as stated) and the rule it was computed by; the throughput sections do not apply."""
    tr = rep.tr
    cases = [tr("caveat.time_to_train_case" if pd.notna(r["time_to_train_min"])
                else "caveat.time_to_train_none", model=prose.md(rep.model_name(r["model"])),
                framework=prose.md(str(r["framework"])),
                devices=tables.devices_text(tr, [r["num_devices"]]),
                minutes=tr.num(r["time_to_train_min"]), rule=prose.md(r["time_to_train_rule"]))
             for _, r in rows.iterrows()]
    return tr("caveat.time_to_train", cases=tr("punct.semicolon").join(cases))


def other_suite_commits(ran: set[str], built: str) -> list[str]:
    """The suite commits that ran the campaign (``CampaignInput.suite_commits``: full hashes,
    `DIRTY` appended for uncommitted changes), sorted, when any differs from `built` (the
    short hash of the report's suite; '' unknown); [] when they all are that commit."""
    same = bool(built) and all(c.startswith(built) and not c.endswith(DIRTY) for c in ran)
    return [] if same else sorted(ran)


def commit_text(commit: str, length: int, tr) -> str:
    """'0123456 (with uncommitted changes)': a commit shortened as the build's is shown."""
    dirty = commit.endswith(DIRTY)
    short = commit.removesuffix(DIRTY)[:max(length, 7)]
    return tr("caveat.suite_dirty", commit=short) if dirty else short


@register("caveats")
def caveats(rep) -> prose.Markdown | None:
    """What changes how the numbers read, before the numbers (None when nothing does)."""
    items = headline_caveats(rep)
    return prose.render("caveats", rep.tr, items=items) if items else None
