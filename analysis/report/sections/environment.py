"""Hardware and software per node type (hosts alike), which multi-node runs shared one
host, and each host's ``nvidia-smi topo -m`` text (``environment``); then the topology
matrices coloured by link type (``topology``)."""

from __future__ import annotations

import re

import pandas as pd

from analysis.env import describe, folder_records
from analysis.env.folder_records import TopoInput
from analysis.report import prose, styled
from analysis.report.sections import register

#: Colour of each `nvidia-smi topo -m` link class (fastest = darkest green).
LINK_COLORS = {"X": "#d9d9d9", "NV": "#1a9850", "PIX": "#a6d96a", "PXB": "#fee08b",
               "PHB": "#fdae61", "NODE": "#f46d43", "SYS": "#d73027"}


def link_color(cell: str) -> str | None:
    """The colour of a topology cell's link class ('NV12': NVLink), None when it names none."""
    text = str(cell).strip().upper()
    return LINK_COLORS.get("NV" if re.fullmatch(r"NV\d+", text) else text)


def merge_lines(per_record: list[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """(label, value) lines of several records as one list: a label whose records disagree
    shows each distinct value, separated by ' | '."""
    merged: dict[str, list[str]] = {}
    for lines in per_record:
        for k, v in lines:
            vals = merged.setdefault(k, [])
            if v not in vals:
                vals.append(v)
    return [(k, " | ".join(v)) for k, v in merged.items()]


def topology_text(topo: TopoInput) -> dict:
    """A topology as the environment template shows it: host name, the text and why it is
    not a matrix ('' when it parsed)."""
    text = topo.topology.display_text if topo.topology is not None else topo.text
    return {"name": topo.name, "text": text.rstrip("\n"), "error": topo.error}


def record_topologies(rep) -> list[tuple[int, TopoInput]]:
    """(node type number, topology) of the env records' `nvidia-smi topo -m` texts, each
    text once and none that a topology file given also holds."""
    seen = {t.text for t in rep.topologies}
    out = []
    for i, group in enumerate(describe.node_types(rep.envs), start=1):
        for host in group:
            for e in host.records:
                text = folder_records.env_topology_text(e.record)
                if text and text not in seen:
                    seen.add(text)
                    out.append((i, folder_records.parse_topo(host.name, text)))
    return out


def _brackets(value: str, lang: str) -> str:
    """`value` with a Chinese sentence's full-width brackets in zh ('2.11.0（CUDA 13.0，…）'
    reads as part of the sentence); as it is in other languages."""
    if lang != "zh":
        return value
    return value.replace(" (", "（").replace("(", "（").replace(")", "）")


@register("environment")
def environment(rep) -> prose.Markdown:
    tr = rep.tr
    shared = describe.shared_host_runs(rep.envs)
    recorded = rep.shared(record_topologies)
    fws = rep.result.runs["framework"].dropna() if len(rep.result.runs) else []
    used = describe.framework_packages(dict.fromkeys(str(f) for f in fws))
    node_types = []
    for i, group in enumerate(describe.node_types(rep.envs), start=1):
        names = {h.name for h in group}
        records = [e.record for h in group for e in h.records]
        mine = [(r, h) for r, h in shared if h in names]
        same_host = (tr("env.same_host", runs=len(mine),
                        host=", ".join(dict.fromkeys(h for _, h in mine))) if mine else "")
        node_types.append({
            "index": i, "hosts": ", ".join(h.name for h in group),
            "host_count": tr.int(len(group), group=True),
            "record_count": tr.int(len(records), group=True), "same_host": same_host,
            "hardware": merge_lines([describe.hardware_lines(r, tr) for r in records]),
            "software": [(k, _brackets(v, tr.lang)) for k, v in merge_lines(
                [describe.software_lines(r, tr, used) for r in records])],
            "topologies": [topology_text(t) for k, t in recorded if k == i]})
    return prose.render("environment", tr, heading=tr("section.environment"),
                        node_types=node_types,
                        no_topology=not recorded and not rep.topologies,
                        topologies=[topology_text(t) for t in rep.topologies])


@register("topology")
def topology(rep):
    """One block of rows per host (its name in the first column when there are several),
    the device columns first; None without a parsed matrix."""
    tr = rep.tr
    shown = [t for _, t in rep.shared(record_topologies)] + list(rep.topologies)
    parsed = [t for t in shown if t.topology is not None]
    if not parsed:
        return None
    lead = ([tr("env.hostname")] if len(parsed) > 1 else []) + [""]
    frames, styles, devices, others = [], [], {}, {}
    for topo in parsed:
        frame = topo.topology.frame().reset_index(drop=False)
        frame = frame.rename(columns={frame.columns[0]: ""})
        cells = frame.map(lambda v: "" if v is None or v != v else str(v))
        style = pd.DataFrame("", index=cells.index, columns=cells.columns)
        for c in frame.columns[1:]:
            if c in topo.topology.devices:
                devices[c] = None
                style[c] = [f"background-color: {link_color(v)}" if link_color(v) else ""
                            for v in frame[c]]
            else:
                others[c] = None
        if len(parsed) > 1:
            cells.insert(0, lead[0], [topo.name] + [""] * (len(cells) - 1))
        frames.append(cells)
        styles.append(style)
    columns = lead + list(devices) + [c for c in others if c not in devices]
    table = pd.concat(frames, ignore_index=True).reindex(columns=columns, fill_value="").fillna("")
    style = pd.concat(styles, ignore_index=True).reindex(columns=columns, fill_value="").fillna("")
    caption = tr("env.topology_matrix")
    if len(parsed) == 1:
        caption += " — " + parsed[0].name
    align = "l" * len(lead) + "c" * (len(columns) - len(lead))
    return styled.table(table, "topo-matrix", align, caption=caption, cell_styles=style,
                        classes=styled.NO_MATH)
