"""What ran, per precision label: TF32 on or off for FP32, the autocast dtype and the loss
scaling for AMP, from the runs' parameter dumps (and the built-in workload's known
settings). A fact no log states is not invented: the label then is the precision alone."""

from __future__ import annotations

from analysis.i18n import Translator

#: How a parameter dump says an option is on.
TRUE_WORDS = ("true", "1", "yes", "on")
#: Parameter names (lower case) that state TF32 matmuls on or off.
TF32_KEYS = ("tf32", "allow_tf32", "use_tf32")
LOSS_SCALE_KEYS = ("static_loss_scale", "loss_scale")


def _flag(params: dict[str, list[str]], keys) -> bool | None:
    vals = [v for k in keys for v in params.get(k, [])]
    return None if not vals else any(v.lower() in TRUE_WORDS for v in vals)


def loss_scaling(params: dict[str, list[str]], tr: Translator) -> str:
    """'dynamic loss scaling', 'static loss scale 128' or '' when the logs do not say."""
    if _flag(params, ("dynamic_loss_scale",)):
        return tr("precision.loss_dynamic")
    static = sorted({v for k in LOSS_SCALE_KEYS for v in params.get(k, [])
                     if v not in ("None", "0", "", "-1")})
    return tr("precision.loss_static", value=", ".join(static)) if static else ""


def precision_label(precision: str, params: dict[str, list[str]], builtin: bool,
                    tr: Translator) -> str:
    """'FP32 (TF32 off)', 'AMP (FP16 autocast, dynamic loss scaling)', 'BF16 (BF16
    autocast, no loss scaling)'; `params` maps lower-case parameter names to their values
    over all runs, `builtin` says the runs are the suite's workload (FP16 autocast with a
    dynamic GradScaler; its TF32 switch covers matmuls and convolutions alike, so a
    ResNet's convolutions, nearly all its FLOPs, ran in TF32 too: the label says so; for
    other workloads a TF32 flag's reach is not known and the label says only "on")."""
    p = str(precision).lower()
    details = []
    if p in ("fp32", "tf32"):
        tf32 = _flag(params, TF32_KEYS)
        if p == "tf32" or tf32:
            details.append(tr("precision.tf32_on_all" if builtin else "precision.tf32_on"))
        elif tf32 is False or builtin:
            details.append(tr("precision.tf32_off"))
    elif p in ("amp", "fp16"):
        bf16 = _flag(params, ("bf16",))
        details.append(tr("precision.autocast", dtype="BF16" if bf16 else "FP16"))
        scaling = tr("precision.loss_dynamic") if builtin else loss_scaling(params, tr)
        if scaling:
            details.append(scaling)
    elif p == "bf16":
        details.append(tr("precision.autocast", dtype="BF16"))
        details.append(tr("precision.loss_none"))
    shown = str(precision).upper()
    return tr("precision.label", precision=shown,
              details=tr("precision.separator").join(details)) if details else shown


def short_name(precision: str, params: dict[str, list[str]], tr: Translator) -> str:
    """The precision as a table or sentence names it: 'FP32 (TF32 on)' where the runs
    state TF32 matmuls on (an FP32 figure read as true FP32 would mislead), else the
    precision in capitals ('AMP', 'BF16', 'FP32')."""
    p = str(precision).lower()
    if p == "tf32" or (p == "fp32" and _flag(params, TF32_KEYS)):
        return tr("precision.fp32_tf32")
    return str(precision).upper()
