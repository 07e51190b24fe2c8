"""`nvidia-smi topo -m` parsing: every variant of docs/formats.md §9, conversions and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.env.topo_matrix import Topology, TopologyError, parse_topology
from analysis.errors import DLPerfError

DATA = Path(__file__).resolve().parents[1] / "data" / "topology"
VARIANTS = sorted(p.name for p in DATA.iterdir() if (p / "topo.txt").is_file())
LEGEND_KEYS = ["X", "SYS", "NODE", "PHB", "PXB", "PIX", "NV#"]


def raw(variant: str) -> str:
    with open(DATA / variant / "topo.txt", encoding="utf-8", newline="") as fh:
        return fh.read()


def load(variant: str) -> Topology:
    return parse_topology((DATA / variant / "topo.txt").read_bytes())


def column(t: Topology, name: str) -> dict:
    """Device -> the extra column `name` as printed (None: empty, or no such column)."""
    return {d: t.affinity.at[d, name] if name in t.columns else None for d in t.devices}


def test_all_documented_variants_have_fixtures():
    assert set(VARIANTS) >= {"v100_dgx1_mlx5", "a100_numa_nic_legend", "h100_nv18_gpu_numa_id",
                             "h200_x4", "pcie_single_gpu", "tabs_empty_cells", "ansi_header"}


def test_v100_dgx1_with_mlx5_column():
    t = load("v100_dgx1_mlx5")
    assert t.devices == tuple(f"GPU{i}" for i in range(8)) + ("mlx5_0",)
    assert t.gpus == t.devices[:8] and t.nics == ("mlx5_0",)
    assert t.columns == ("CPU Affinity",)
    m = t.matrix
    assert list(m.index) == list(m.columns) == list(t.devices)
    assert (m.at["GPU0", "GPU1"], m.at["GPU0", "GPU3"], m.at["GPU0", "GPU5"]) == ("NV1", "NV2", "SYS")
    assert m.at["GPU2", "mlx5_0"] == "PIX" and m.at["mlx5_0", "GPU0"] == "NODE"
    assert m.at["GPU7", "GPU3"] == "NV1" and m.at["GPU4", "GPU0"] == "NV2"
    assert all(m.at[d, d] == "X" for d in t.devices)
    assert column(t, "CPU Affinity")["GPU0"] == "0-11,24-35" and column(t, "CPU Affinity")["GPU7"] == "12-23,36-47"
    assert column(t, "CPU Affinity")["mlx5_0"] is None  # the NIC row has no affinity
    assert column(t, "NUMA Affinity")["GPU0"] is None
    assert list(t.legend) == LEGEND_KEYS
    assert t.legend["NV#"] == "Connection traversing a bonded set of # NVLinks"
    assert t.legend["PIX"] == "Connection traversing at most a single PCIe bridge"
    assert t.nic_legend == {}


def test_a100_numa_affinity_and_nic_legend():
    t = load("a100_numa_nic_legend")
    assert t.devices[8:] == ("NIC0", "NIC1", "NIC2", "NIC3")
    assert t.columns == ("CPU Affinity", "NUMA Affinity")
    assert t.matrix.at["GPU0", "GPU7"] == "NV12"
    assert t.matrix.at["GPU6", "NIC3"] == "PXB" and t.matrix.at["GPU0", "NIC2"] == "SYS"
    assert t.matrix.at["NIC0", "NIC1"] == "PXB"
    assert column(t, "CPU Affinity")["GPU4"] == "112-127,240-255" and column(t, "NUMA Affinity")["GPU4"] == "7"
    assert column(t, "NUMA Affinity")["GPU0"] == "3"
    assert column(t, "GPU NUMA ID")["GPU0"] is None  # no such column in this driver's output
    assert t.nic_legend == {"NIC0": "mlx5_0", "NIC1": "mlx5_1", "NIC2": "mlx5_2",
                            "NIC3": "mlx5_bond_0"}


def test_h100_nv18_with_gpu_numa_id():
    t = load("h100_nv18_gpu_numa_id")
    assert "\t\tN/A" in t.text  # the double tab before GPU NUMA ID
    assert t.columns == ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
    assert t.matrix.at["GPU3", "GPU4"] == "NV18"
    assert t.matrix.at["GPU0", "NIC0"] == "PIX" and t.matrix.at["GPU7", "NIC4"] == "SYS"
    assert t.matrix.at["NIC4", "NIC5"] == "PIX"
    assert t.affinity.loc["GPU0"].tolist() == ["0-55,112-167", "0", "N/A"]
    assert t.affinity.loc["GPU5"].tolist() == ["56-111,168-223", "1", "N/A"]
    assert t.affinity.loc["NIC2"].tolist() == [None, None, None]
    assert t.nic_legend["NIC4"] == "mlx5_bond_0" and t.nic_legend["NIC5"] == "mlx5_bond_1"


def test_h200_x4():
    t = load("h200_x4")
    assert t.gpus == ("GPU0", "GPU1", "GPU2", "GPU3") and t.nics == ("NIC0", "NIC1")
    assert t.matrix.loc[list(t.gpus), list(t.gpus)].to_numpy().tolist() == [
        ["X", "NV18", "NV18", "NV18"], ["NV18", "X", "NV18", "NV18"],
        ["NV18", "NV18", "X", "NV18"], ["NV18", "NV18", "NV18", "X"]]
    assert t.matrix.at["GPU2", "NIC1"] == "PXB" and t.matrix.at["GPU2", "NIC0"] == "SYS"
    assert column(t, "CPU Affinity")["GPU3"] == "48-95,144-191"
    assert column(t, "NUMA Affinity") == {"GPU0": "0", "GPU1": "0", "GPU2": "1", "GPU3": "1",
                               "NIC0": None, "NIC1": None}
    assert column(t, "GPU NUMA ID")["GPU1"] == "N/A"
    assert t.nic_legend == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}


def test_real_h200_x4_capture():
    t = load("h200_x4_captured")  # real bytes from a 4 x H200 node: ANSI header, no NICs
    assert t.text.startswith("\t\x1b[4mGPU0\tGPU1") and "\t0\t\tN/A\n" in t.text
    assert t.devices == t.gpus == ("GPU0", "GPU1", "GPU2", "GPU3") and t.nics == ()
    assert {t.matrix.at[a, b] for a in t.gpus for b in t.gpus if a != b} == {"NV18"}
    assert t.affinity.loc["GPU3"].tolist() == ["0-63", "0", "N/A"]
    assert list(t.legend) == LEGEND_KEYS and t.nic_legend == {}


def test_single_pcie_gpu():
    t = load("pcie_single_gpu")
    assert t.devices == ("GPU0", "NIC0")
    assert t.matrix.at["GPU0", "NIC0"] == "PHB"
    assert t.affinity.loc["GPU0"].tolist() == ["0-251", "0", "N/A"]


def test_tab_separated_with_empty_cells():
    t = load("tabs_empty_cells")
    assert "\t\t\t\tN/A" in t.text and t.text.splitlines()[3].endswith("\t")
    assert t.matrix.at["GPU0", "GPU1"] == "NV8"
    # GPU0's NUMA Affinity cell is empty: N/A belongs to GPU NUMA ID, not NUMA Affinity
    assert t.affinity.loc["GPU0"].tolist() == ["0-23", None, "N/A"]
    assert t.affinity.loc["GPU1"].tolist() == ["0-23", "0", "N/A"]
    assert t.affinity.loc["NIC0"].tolist() == [None, None, None]
    assert t.nic_legend == {"NIC0": "mlx5_bond_0"}


def test_ansi_underlined_header_parses_like_plain_one():
    t, plain = load("ansi_header"), load("h100_nv18_gpu_numa_id")
    assert "\x1b[4m" in t.text
    assert t.devices == plain.devices
    pd.testing.assert_frame_equal(t.frame(), plain.frame())
    assert "\x1b" not in t.display_text and t.display_text == plain.text


@pytest.mark.parametrize("variant", VARIANTS)
def test_verbatim_text_and_conversions_round_trip(variant, tmp_path):
    t = load(variant)
    assert t.text == raw(variant)
    back = parse_topology(json.loads(t.to_json())["text"])
    assert back.text == t.text and back.devices == t.devices
    pd.testing.assert_frame_equal(back.frame(), t.frame())
    csv_text = t.to_csv()
    table = pd.read_csv(io.StringIO(csv_text), index_col="device", dtype=str, keep_default_na=False)
    assert list(table.columns) == list(t.devices) + list(t.columns)
    assert table.loc["GPU0", "GPU0"] == "X"
    assert table.loc[t.devices[-1], t.devices[0]] == t.matrix.at[t.devices[-1], t.devices[0]]
    md = t.to_markdown().splitlines()
    assert md[0] == "| | " + " | ".join(list(t.devices) + list(t.columns)) + " |"
    assert md[2].startswith("| GPU0 | X |")
    assert len([line for line in md if line.startswith("| ")]) == len(t.devices) + 1


def test_markdown_lists_nic_legend():
    md = load("a100_numa_nic_legend").to_markdown()
    assert md.rstrip().endswith("NIC3 = mlx5_bond_0")
    assert "| NIC1 | NODE | NODE | PXB | PXB |" in md


def test_crlf_prompt_and_bytes_input():
    text = "$ nvidia-smi topo -m\r\n" + raw("h200_x4").replace("\n", "\r\n")
    t = parse_topology(text.encode())
    assert t.text == text and t.matrix.at["GPU0", "NIC0"] == "PXB"
    assert column(t, "CPU Affinity")["GPU0"] == "0-47,96-143"


def test_single_space_header_and_lost_escape_byte():
    text = ("[4mGPU0 GPU1 CPU Affinity NUMA Affinity[0m\n"
            "GPU0 X NV4 0-7 0\nGPU1 NV4 X 8-15 1\n")
    t = parse_topology(text)
    assert t.columns == ("CPU Affinity", "NUMA Affinity")
    assert column(t, "CPU Affinity") == {"GPU0": "0-7", "GPU1": "8-15"}


def test_a_code_the_legend_defines_is_a_link_code():
    text = "GPU0\tGPU1\nGPU0\t X \tC2C\nGPU1\tC2C\t X \n\nLegend:\n  X = Self\n  C2C = Chip-to-chip\n"
    assert parse_topology(text).matrix.at["GPU0", "GPU1"] == "C2C"
    with pytest.raises(TopologyError, match="unknown link code 'C2C'"):
        parse_topology(text.split("\n\n")[0])


def _h200_lines() -> list[str]:
    return raw("h200_x4").split("\n")


@pytest.mark.parametrize("edit, message", [
    (lambda ls: ["hello", "world"], "no `nvidia-smi topo -m` header"),
    (lambda ls: ls[:1], "not followed by any device row"),
    (lambda ls: [ls[0], ls[1].replace("\tSYS\t", "\t"), *ls[2:]], r"line 2: row GPU0 has 5 link cells before .0-47,96-143.; the header names 6"),
    (lambda ls: [ls[0], ls[1].replace("PXB", "SYS", 1), *ls[2:]], "not symmetric"),
    (lambda ls: [ls[0], ls[1].replace(" X ", "NV18", 1), ls[2].replace("NV18", "X", 1), *ls[3:]],
     r"cell \(GPU0, GPU0\) is 'NV18'; expected X on the diagonal"),
    (lambda ls: [ls[0], ls[1].replace("NV18", "FOO"), *ls[2:]], r"line 2: row GPU0, cell 2: unknown link code 'FOO'"),
    (lambda ls: [ls[0], ls[1] + "\textra", *ls[2:]], r"row GPU0 has 4 cells after its links"),
    (lambda ls: [ls[0].replace("GPU3", "GPU9"), *ls[1:]], "do not match the row labels"),
    (lambda ls: [ls[0], ls[1], ls[1], *ls[2:]], "GPU0 appear more than once"),
    (lambda ls: [ls[0], ls[1].replace("0-47,96-143", "0-47;96"), *ls[2:]],
     r"CPU Affinity of GPU0 is '0-47;96'"),
    (lambda ls: [*ls, "  NIC7: mlx5_7"], "NIC Legend names NIC7"),
])
def test_bad_input_raises_a_clear_error(edit, message):
    text = "\n".join(edit(_h200_lines()))
    with pytest.raises(TopologyError, match=message) as info:
        parse_topology(text)
    assert isinstance(info.value, DLPerfError)


@pytest.mark.parametrize("variant, cut, device", [
    ("h200_x4", "NIC1\t", "NIC1"),  # a NIC row without affinity cells
    ("h200_x4_captured", "GPU3\t", "GPU3"),
    ("v100_dgx1_mlx5", "mlx5_0 ", "mlx5_0"),
])
def test_text_missing_its_last_row_is_rejected_not_a_smaller_matrix(variant, cut, device):
    lines = raw(variant).split("\n")
    text = "\n".join(line for line in lines if not line.startswith(cut))
    with pytest.raises(TopologyError, match=f"header names device {device} but no row"):
        parse_topology(text)


def test_text_cut_within_a_gpu_row_is_rejected():
    text = "\n".join(_h200_lines()[:5]).rsplit("\tSYS", 1)[0]  # GPU3 row ends after " X "
    with pytest.raises(TopologyError, match="header names device NIC0 but no row NIC0"):
        parse_topology(text)
