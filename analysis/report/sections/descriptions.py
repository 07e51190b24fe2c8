"""What was run: the suite (built and ran), the benchmark, the frameworks with their
versions, the precision as it ran, the iterations; then the groups of tests and the
repeats in a sentence each."""

from __future__ import annotations

from analysis import __version__
from analysis.env import describe
from analysis.i18n import Translator
from analysis.report import prose, tables
from analysis.report.precision import precision_label
from analysis.report.sections import register
from analysis.report.sections.caveats import SYNTHETIC_WORKLOADS, commit_text

#: Display names of the built-in workload's models (workloads.resnet).
BUILTIN_MODELS = {"resnet50": "ResNet-50 v1.5", "gpt": "GPT"}


def groups_sentence(tr: Translator, groups: int, devices: list[int]) -> str:
    """'1 group of tests was run on 1 device.' / '2 groups of tests were run on 1, 2 and
    4 devices.' (and the Chinese): singular and plural as the numbers need."""
    if len(devices) > 1:
        on = tr("desc.devices_list", counts=tr.join(devices))
    elif devices == [1]:
        on = tr("desc.devices_one")
    else:
        on = tr("desc.devices_count", count=devices[0] if devices else 0)
    return (tr("desc.groups_one", devices=on) if groups == 1
            else tr("desc.groups", groups=groups, devices=on))


def repeats_sentence(tr: Translator, repeats: list[int]) -> str:
    """How often each case ran and what its result is (one run: no median to speak of)."""
    if repeats == [1]:
        return tr("desc.repeats_one")
    text = (str(repeats[0]) if len(repeats) == 1 else f"{repeats[0]}–{repeats[-1]}"
            ) if repeats else "0"
    return tr("desc.repeats", repeats=text)


def precision_labels(rep) -> list[str]:
    """What ran, per precision: 'FP32 (TF32 off)', 'AMP (FP16 autocast, dynamic loss
    scaling)', from the runs' parameters and environment facts."""
    s, runs = rep.summary, rep.result.runs
    precs = sorted({str(p) for p in s["precision"].dropna()}) if len(s) else []
    return [precision_label(p, rep.params_of(runs["precision"].astype(str) == p),
                            rep.builtin, rep.tr) for p in precs]


def iterations_item(rep) -> str | None:
    """'120 (20 warmup)' as the campaign or every run states it (None when neither does)."""
    spec, tr = rep.campaign_spec, rep.tr
    iters = spec.get("iterations") or rep.param("iterations")
    warm = spec.get("warmup", rep.param("warmup_iterations"))
    if not iters:
        return None
    return (tr("desc.iterations_value", iterations=iters, warmup=warm)
            if warm not in (None, "") else str(iters))


@register("descriptions")
def descriptions(rep) -> prose.Markdown:
    rep, tr, s = rep, rep.tr, rep.summary
    items: list[tuple[str, str]] = []
    models = sorted({str(x) for x in s["model"].dropna()}) if len(s) else []
    camp = rep.campaign_spec
    if str(camp.get("workload", "")).lower() in SYNTHETIC_WORKLOADS:
        names = ", ".join(BUILTIN_MODELS.get(m, m) for m in models) or tr("report.unknown")
        items.append((tr("desc.benchmark"), tr("desc.builtin", model=names)))
    items.append((tr("desc.suite"), tr("desc.suite_value", version=__version__,
                                       commit=rep.suite_commit or tr("report.unknown"))))
    if rep.campaign.name or rep.campaign.commands:  # logs of a `dlperf run` campaign
        ran = [commit_text(c, len(rep.suite_commit), tr)
               for c in sorted(rep.campaign.suite_commits)]
        items.append((tr("desc.suite_ran"),
                      tr.join(ran) if ran else tr("desc.suite_ran_unknown")))
    fws = sorted({str(x) for x in s["framework"].dropna()}) if len(s) else []
    items += [(tr("desc.framework"), _framework_text(rep, fw)) for fw in fws]
    for key in ("framework_version", "framework_commit", "repository", "benchmark_commit",
                "benchmark_repository"):
        if camp.get(key):
            items.append((tr("desc.version_of", name=key.replace("_", " ")), str(camp[key])))
    items.append((tr("desc.precision"), tr.join(precision_labels(rep))))
    iterations = iterations_item(rep)
    if iterations:
        items.append((tr("desc.iterations"), iterations))
    sentences = []
    groups = len(tables.scaling_groups(s)) if len(s) else 0
    devices = sorted({int(d) for d in s["num_devices"].dropna()}) if len(s) else []
    if groups:
        sentences.append(groups_sentence(tr, groups, devices))
    reps = tables.measured_repeats(s) if len(s) else []
    if reps:  # nothing measured: the caveat on page 1 says so
        sentences.append(repeats_sentence(tr, reps))
    return prose.render("descriptions", tr, heading=tr("section.descriptions"),
                        items=items, sentences=sentences)


def _framework_text(rep, framework: str) -> str:
    """'PyTorch 2.11.0 (CUDA 13.0, git 70d99e998b49); as the runs report: ...'."""
    tr = rep.tr
    pkgs = describe.framework_packages([framework])
    detail = ""
    for e in rep.envs:
        for p in pkgs:
            detail = detail or describe.framework_detail(e.record, p)
    runtime = []
    for k, vals in rep.params.items():
        if k.endswith("_version") and len(vals) == 1 and vals[0] not in ("", "None"):
            runtime.append(f"{k.removesuffix('_version')} {vals[0]}")
    text = f"{framework} {detail}".strip()
    if runtime:
        text += tr("desc.runtime", items=tr("desc.runtime_separator").join(runtime))
    return text
