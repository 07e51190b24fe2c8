"""Run metadata from path conventions: the DLPerf layout and OneFlow GPT file names.

DLPerf layout: ``<log_dir>/<N>n<G>g/<model>_b<bsz>_<precision>_<repeat>.log``.
GPT: ``pretrain_gpt_<N>n<G>d_dp<dp>_mp<tp>_pp<pp>_mbz<m>_gbz<g>_s<seq>_l<L>_h<H>_nh<heads>[_<repeat>].log``.
"""

from __future__ import annotations

import re
from pathlib import PurePath

PRECISION_ALIASES = {
    "fp32": "fp32", "float32": "fp32", "tf32": "tf32", "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "amp", "amp": "amp", "float16": "amp", "mixed": "amp",
}
MODEL_ALIASES = {
    "r50": "resnet50", "rn50": "resnet50", "resnet50": "resnet50", "resnet50v1.5": "resnet50",
    "resnet50_v1.5": "resnet50", "resnet-50": "resnet50",
    "bert_base": "bert_base", "bert-base": "bert_base", "bert_large": "bert_large",
    "gpt": "gpt", "gpt2": "gpt",
}

_CONFIG_DIR = re.compile(r"^(\d+)n(\d{1,2})g$")
_CASE_FILE = re.compile(
    r"^(?P<model>.+?)_b(?P<bsz>\d+)_(?P<prec>fp32|fp16|amp|tf32|bf16)(?:_(?P<rep>\d+))?$", re.I)
_GPT_FILE = re.compile(
    r"^pretrain_gpt_(?P<n>\d+)n(?P<g>\d+)d_dp(?P<dp>\d+)_mp(?P<tp>\d+)_pp(?P<pp>\d+)"
    r"_mbz(?P<mbz>\d+)_gbz(?P<gbz>\d+)_s(?P<seq>\d+)_l(?P<layers>\d+)_h(?P<hidden>\d+)"
    r"_nh(?P<heads>\d+)(?:_(?P<rep>\d+))?$"
)
_LOG_SUFFIXES = re.compile(r"(\.node\d+)?(\.gpu\.csv|\.mem|\.log|\.txt|\.out|\.err|\.json)?(\.gz)?$")
_NODE_SUFFIX = re.compile(r"\.node(\d+)(?=\.[^/]*$)")


def run_stem(path: str | PurePath) -> str:
    """File name without node/log/sidecar/compression suffixes: the key that joins a run's
    log, its other nodes' logs (``<stem>.node1.log``) and its sidecars (``<stem>.mem``,
    ``<stem>.gpu.csv``)."""
    return _LOG_SUFFIXES.sub("", _name(path), count=1)


def node_index(path: str | PurePath) -> int:
    """0 for a run's main log, k for ``<stem>.node<k>.<suffix>`` files."""
    m = _NODE_SUFFIX.search(_name(path))
    return int(m.group(1)) if m else 0


def _name(path: str | PurePath) -> str:
    """The file name (a Path's own, not parsed again: this runs for every file)."""
    return path.name if isinstance(path, PurePath) else PurePath(path).name


def normalize_precision(text: str) -> str:
    return PRECISION_ALIASES.get(text.strip().lower(), text.strip().lower())


def normalize_model(text: str) -> str:
    return MODEL_ALIASES.get(text.strip().lower(), text.strip().lower())


def gpt_group(dp: int, tp: int, pp: int) -> str:
    """Seed 002's group names: DP, MP, 2D, and the same with _PP when pp > 1; a pure
    pipeline (dp = tp = 1) is PP, not DP_PP (which seed 002 uses for DP and PP together)."""
    if pp > 1 and dp == 1 and tp == 1:
        return "PP"
    base = "2D" if dp > 1 and tp > 1 else ("MP" if tp > 1 else "DP")
    return f"{base}_PP" if pp > 1 else base


def gpt_case(dp: int, tp: int, pp: int, gbz: int, hidden: int, layers: int) -> str:
    return f"{gpt_group(dp, tp, pp)}_{dp}x{tp}x{pp}_{gbz}_{hidden}x{layers}"


def meta_from_path(path: str | PurePath) -> dict:
    """Case fields the path's folder name and file stem (:func:`run_stem`) state (missing
    keys = the path says nothing)."""
    p = path if isinstance(path, PurePath) else PurePath(path)
    folder, stem = p.parent.name, run_stem(p)
    meta: dict = {}
    m = _GPT_FILE.match(stem)
    if m:
        d = {k: int(v) for k, v in m.groupdict().items() if v is not None}
        meta.update(
            model="gpt", num_nodes=d["n"], gpus_per_node=d["g"], data_parallel=d["dp"],
            tensor_parallel=d["tp"], pipeline_parallel=d["pp"], batch_size_per_device=d["mbz"],
            global_batch_size=d["gbz"], seq_length=d["seq"], num_layers=d["layers"],
            hidden_size=d["hidden"], num_heads=d["heads"], repeat=d.get("rep", 1),
            group=gpt_group(d["dp"], d["tp"], d["pp"]),
            case=gpt_case(d["dp"], d["tp"], d["pp"], d["gbz"], d["hidden"], d["layers"]),
        )
        return meta
    cfg = _CONFIG_DIR.match(folder)
    if cfg:
        meta["num_nodes"], meta["gpus_per_node"] = int(cfg.group(1)), int(cfg.group(2))
    m = _CASE_FILE.match(stem)
    if m:
        meta["model"] = normalize_model(m.group("model"))
        meta["batch_size_per_device"] = int(m.group("bsz"))
        meta["precision"] = normalize_precision(m.group("prec"))
        if m.group("rep"):
            meta["repeat"] = int(m.group("rep"))
    return meta
