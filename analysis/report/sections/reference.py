"""Page 1's comparison with reference figures (``--references FILE``): every reference of
the file that names one of the report's cases, with the hardware, precision and batch it
was measured with, its value, our median with n and interval, ours/reference, and, where
the file gives a reference at one GPU and at N GPUs of one source, both scaling
efficiencies; a ratio far from 1 on the runs' GPU model is said to be unexplained. Unlike
the results tables' column (references on the runs' hardware only),
references measured on another GPU model are shown too, marked: they compare machines as
well as software, which is what a reader of an older report asks."""

from __future__ import annotations

import re

import pandas as pd

from analysis.changes import gpus
from analysis.report import styled
from analysis.report.sections import register

#: |ours / reference − 1| on the same GPU model above which the caption says the report
#: does not explain the difference.
FAR = 0.2
_KEY = re.compile(r"^(?P<fw>[^/]+)/(?P<model>[^/]+)/(?P<prec>[^/]+)/b(?P<bsz>\d+)/"
                  r"(?P<nodes>\d+)n(?P<gpn>\d+)g")


def case_fields(key: str) -> dict | None:
    m = _KEY.match(key)
    return None if m is None else {**m.groupdict(), "gpus": int(m["nodes"]) * int(m["gpn"])}


def reference_efficiency(table: pd.DataFrame) -> dict[int, float]:
    """Row index -> the reference's own scaling efficiency (value at N GPUs over N times its
    value at one GPU, same source, GPU model, precision and batch), for rows at N > 1."""
    def key(r, f) -> tuple:  # one source's 1-GPU and 4-GPU figures name 1x and 4x: the model
        parsed = gpus.parse(str(r["hardware"]))
        model = parsed.key[1] if parsed else str(r["hardware"])
        return (r["source"], model, f["fw"], f["model"], f["prec"], f["bsz"])

    rows = [(i, r, f) for i, r in table.iterrows()
            if (f := case_fields(str(r.reference))) is not None]
    one = {key(r, f): r["value"] for _, r, f in rows if f["gpus"] == 1}
    return {i: float(r["value"]) / (f["gpus"] * float(one[key(r, f)])) for i, r, f in rows
            if f["gpus"] > 1 and one.get(key(r, f))}


def source_text(row, lang: str) -> str:
    """A reference's source as a report in `lang` prints it: ``source_<lang>`` where the
    references file gives one (``source_zh``), else ``source``."""
    own = row.get(f"source_{lang}", "") if lang != "en" else ""
    return str(own) if isinstance(own, str) and own.strip() else str(row.get("source", ""))


def hardware_text(hardware: str, used: int, tr, derived_from: str = "") -> str:
    """Where a reference was measured, for its row of `used` GPUs: 'V100-SXM2-16GB, 1 GPU'
    (of a larger machine); '1x H200 (4-GPU value derived)' where the file says the value
    was derived from a figure measured there (`derived_from`), or where the machine has
    fewer GPUs than the row counts, so its value cannot have been measured there; as the
    file writes it when that is no 'Nx MODEL'."""
    source = gpus.parse(derived_from) if isinstance(derived_from, str) and derived_from else None
    if source is not None:
        return tr("reference.hardware_derived", hardware=str(source), gpus=used)
    parsed = gpus.parse(hardware)
    if parsed is None:
        return hardware
    if parsed.count < used:
        return tr("reference.hardware_derived", hardware=str(parsed), gpus=used)
    return tr("reference.hardware_used_one" if used == 1 else "reference.hardware_used",
              model=parsed.model, gpus=used)


def same_model(reference: str, runs: str) -> bool | None:
    """Whether the reference's GPU model is the runs' (counts aside); None when the runs'
    GPUs are not recorded."""
    ref, ran = gpus.parse(reference), gpus.parse(runs.split(";")[0]) if runs else None
    if ref is None or ran is None:
        return None
    return ref.key[1] == ran.key[1]


def reference_precision(rep, precision: str, same: bool | None) -> str:
    """The precision a reference row names: our runs' label ('FP32 (TF32 on)', from their
    parameter dumps) only where the reference ran on our GPU model; a reference on another
    GPU model ran with its own settings, which our logs do not describe (a V100 has no TF32
    at all), so its row names the precision alone ('FP32', 'AMP')."""
    if same is False:
        return str(precision).upper()
    return rep.precision_name(precision)


@register("reference")
def reference(rep):
    tr = rep.tr
    if rep.references is None or rep.references.table.empty:
        return None
    table = rep.references.table  # the file's order
    eff_ref = reference_efficiency(table)
    summary = rep.summary
    from analysis.changes.compare import case_keys

    by_key = dict(zip(case_keys(summary), summary.to_dict("records")))
    rows, other_model, far = [], False, []
    for i, r in table.iterrows():
        f = case_fields(str(r.reference))
        ours = by_key.get(r.case_key)
        if f is None or ours is None:
            continue
        same = same_model(str(r.hardware), str(r.run_hardware))
        other_model |= same is False
        ratio = (tr.num(r["median"] / r["value"], 2) + "×"
                 if r["value"] and pd.notna(r["median"]) else "-")
        if same is False:
            ratio += tr("reference.other_model_mark")
        elif r["value"] and pd.notna(r["median"]) and abs(
                r["median"] / r["value"] - 1) > FAR:
            far.append(tr("reference.case", precision=reference_precision(
                rep, f["prec"], same), bsz=f["bsz"], gpus=f["gpus"]))
        eff = "-"
        if i in eff_ref and pd.notna(ours.get("scaling_efficiency")):
            eff = tr("reference.efficiency", ours=tr.percent(ours["scaling_efficiency"]),
                     ref=tr.percent(eff_ref[i], 0))
        shown = source_text(r, tr.lang)
        source = "" if rows and rows[-1][-1] == shown else shown
        rows.append([source, hardware_text(str(r.hardware), f["gpus"], tr,
                                           r.get("derived_from")),
                     tr("reference.case", precision=reference_precision(rep, f["prec"], same),
                        bsz=f["bsz"], gpus=f["gpus"]),
                     tr.num(r["value"], 0),
                     tr("headline.with_n", value=tr.num(r["median"], 0),
                        n=int(ours["repeats"])),
                     ratio, eff, shown])
    if not rows:
        return None
    columns = [tr(f"reference.col.{c}") for c in
               ("source", "hardware", "case", "value", "ours", "ratio", "efficiency")]
    rows = [row[:-1] for row in rows]  # the last cell: each row's source, for the blanks
    caption = [tr("reference.caption", file=rep.references.file)]
    if far:
        caption.append(tr("reference.far", pct=tr.percent(FAR, 0), cases=tr.join(far)))
    if other_model:
        caption.append(tr("reference.other_model"))
    return styled.table(pd.DataFrame(rows, columns=columns), "reference", "tllrrrw",
                        caption=caption)
