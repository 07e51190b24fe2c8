"""The appendix's run settings, workload options (the logs' parameter dumps, without case,
host and version fields) and the launch commands' introduction (``scripts``; the commands
follow, ``commands.py``), then the campaign definition as written, secrets hidden
(``campaign_yaml``)."""

from __future__ import annotations

from analysis.env import folder_records
from analysis.redact import REDACTED, is_secret_name, redact_env, redact_yaml_text, secrets_in
from analysis.report import prose, tables
from analysis.report.sections import register
from analysis.report.sections.descriptions import iterations_item

#: Run parameters that identify a case, a host or a version rather than a workload option.
CASE_PARAMETERS = {
    "arch", "model", "batch_size", "batch_size_per_device", "global_batch_size", "precision",
    "amp", "bf16", "fp16", "use_fp16", "world_size", "num_nodes", "gpus_per_node",
    "gpu_num_per_node", "node_num", "distributed", "hostname", "device_name", "framework",
    "iterations", "warmup_iterations", "num_parameters", "macs_per_image", "seed",
    "print_freq", "device", "log_dir", "data_dir", "node_ips", "node_rank", "master_addr",
    "master_port",
}
#: Values of a secret-named parameter that are a switch, not a secret (``use_auth_token True``).
NOT_SECRET_VALUES = ("true", "false", "none", "null", "", "0", "1", "yes", "no")


def workload_options(rep) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """([(option, value)] the same in every run, [(option, 'a / b')] that differ), from the
    runs' parameter dumps, without case, host and version fields."""
    same, differ = [], []
    for k, vals in rep.params.items():
        if k in CASE_PARAMETERS or k.endswith("_version"):
            continue
        applies = [v for v in vals if v not in ("None", "")] or vals  # None: n/a there
        shown = [REDACTED if is_secret_name(k) and v.lower() not in NOT_SECRET_VALUES
                 else rep.shown(v) for v in applies]
        (same if len(applies) == 1 else differ).append((k, " / ".join(shown)))
    return same, differ


@register("scripts")
def scripts(rep) -> prose.Markdown:
    tr = rep.tr
    camp, spec = rep.campaign, rep.campaign_spec
    settings = []
    iterations = iterations_item(rep)
    if iterations:
        settings.append((tr("desc.iterations"), iterations, False))
    if spec.get("repeats"):
        made = tables.measured_repeats(rep.summary)
        asked = str(spec["repeats"])
        # the spec's count beside the n the cases have, where the campaign fell short
        value = asked
        if made and {str(made[0]), str(made[-1])} != {asked}:
            value = tr("scripts.repeats_made", asked=asked, made=tr("punct.range").join(
                map(str, dict.fromkeys((made[0], made[-1])))))
        settings.append((tr("scripts.repeats"), value, False))
    if isinstance(spec.get("env"), dict) and spec["env"]:
        settings.append((tr("scripts.env"), " ".join(
            f"{k}={v}" for k, v in redact_env(spec["env"]).items()), True))
    same, differ = workload_options(rep)
    return prose.render("scripts", tr, heading=tr("section.scripts"), settings=settings,
                        same=same, differ=differ,
                        runs=len({c.run for c in camp.commands}),
                        commands=len(folder_records.group_commands(camp.commands)))


@register("campaign_yaml")
def campaign_yaml(rep) -> prose.Markdown | None:
    """The runner writes campaign.yaml redacted; a hand-written one may not be. None
    without one."""
    text = redact_yaml_text(rep.campaign.text.rstrip("\n"), secrets_in(rep.campaign_spec))
    return prose.render("campaign_yaml", rep.tr, text=text) if text else None
