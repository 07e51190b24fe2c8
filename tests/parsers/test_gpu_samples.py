"""GPU samples that are not the run's (another GPU, another time) stay out of its memory peak
and energy, and are said; on runs of the real H200 campaign tests/data/energy_h200."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats import run_throughput

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "tests" / "data" / "energy_h200"
RUN = "1n1g/resnet50_b256_amp_1"


def _copy_run(tmp_path: Path, run: str = RUN, with_marker: bool = True) -> Path:
    """The campaign's run `run` (log, sidecar, env record, done marker) alone in `tmp_path`."""
    dest = tmp_path / run.split("/")[0]
    dest.mkdir(parents=True)
    for f in (CAMPAIGN / run).parent.glob(Path(run).name + ".*"):
        if with_marker or not f.name.endswith(".done"):
            shutil.copy(f, dest / f.name)
    return dest / (Path(run).name + ".gpu.csv")


def _own_peak(csv: Path) -> float:
    rows = [ln.split(",") for ln in csv.read_text().splitlines()[1:] if ln.strip()]
    return max(float(r[2].split()[0]) for r in rows)


def _foreign(result):
    return result.problems[result.problems["kind"] == "foreign_gpu_sample"]


def test_another_jobs_gpu_is_not_the_runs_peak(tmp_path):
    csv = _copy_run(tmp_path)
    own = _own_peak(csv)
    lines = csv.read_text().splitlines()
    # another job on GPU 1, sampled at the same instants: 70 GB and 690 W
    other = [ln.split(",")[0] + ", 1, 70000 MiB, 143771 MiB, 100 %, 690.00 W" for ln in lines[1:]]
    csv.write_text("\n".join(lines + other) + "\n")
    result = parse_paths([tmp_path])
    peak = run_throughput(result).set_index("run_id").loc[RUN, "memory_sampled_mib"]
    assert peak == own < 70000
    (p,) = _foreign(result).itertuples()
    assert p.line == len(lines) + 1
    assert "of GPU 1, which the run did not use" in p.reason
    assert "resnet50_b256_amp_1.node0.env.json gives CUDA_VISIBLE_DEVICES=0" in p.reason
    assert f"{len(other)} sample line(s)" in p.reason


def test_samples_a_year_older_than_the_log_are_left_out(tmp_path):
    csv = _copy_run(tmp_path)
    own = _own_peak(csv)
    lines = csv.read_text().splitlines()
    old = [ln.replace("2026/11/28", "2025/11/28").replace(", 0 MiB,", ", 80000 MiB,")
           for ln in lines[1:4]]
    csv.write_text("\n".join(lines[:1] + old + lines[1:]) + "\n")
    result = parse_paths([tmp_path])
    assert run_throughput(result).set_index("run_id").loc[RUN, "memory_sampled_mib"] == own
    (p,) = _foreign(result).itertuples()
    assert (p.line, p.run_id) == (2, RUN)
    assert "3 sample line(s) taken outside the run's time" in p.reason


def test_without_marker_the_env_record_names_the_gpus(tmp_path):
    csv = _copy_run(tmp_path, with_marker=False)
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines + [lines[-1].replace(", 0, ", ", 3, ", 1)]) + "\n")
    (p,) = _foreign(parse_paths([tmp_path])).itertuples()
    assert "of GPU 3" in p.reason and "node0.env.json" in p.reason


def test_gpus_named_by_uuid_map_through_the_env_record(tmp_path):
    csv = _copy_run(tmp_path)
    record_path = csv.with_name(csv.name.replace(".gpu.csv", ".node0.env.json"))
    record = json.loads(record_path.read_text())
    uuid = next(g["uuid"] for g in record["gpus"] if g["index"] == 0)
    record["env"]["CUDA_VISIBLE_DEVICES"] = uuid
    record_path.write_text(json.dumps(record))
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines + [lines[-1].replace(", 0, ", ", 1, ", 1)]) + "\n")
    (p,) = _foreign(parse_paths([tmp_path])).itertuples()
    assert "of GPU 1" in p.reason and "CUDA_VISIBLE_DEVICES=0" in p.reason


def test_the_campaigns_own_samples_are_all_kept():
    result = parse_paths([CAMPAIGN])
    assert result.problems.empty
    o = result.observations
    power = o[o["metric"] == "power_draw"]
    assert set(power["unit"]) == {"W"}
    assert power.groupby("run_id", observed=True)["device"].nunique().to_dict() == {
        "1n1g/resnet50_b256_amp_1": 1, "1n1g/resnet50_b256_amp_2": 1,
        "1n2g/resnet50_b256_amp_1": 2, "1n2g/resnet50_b256_amp_2": 2}
    for csv in CAMPAIGN.glob("*/*.gpu.csv"):
        rid = f"{csv.parent.name}/{csv.name[:-len('.gpu.csv')]}"
        assert len(power[power["run_id"] == rid]) == len(csv.read_text().splitlines()) - 1


def test_power_cells_read_and_checked():
    head = ("timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%], "
            "power.draw [W]\n")
    rows = ["2026/11/28 16:00:00.000, 0, 1000 MiB, 143771 MiB, 50 %, 612.5 W",
            "2026/11/28 16:00:00.500, 0, 1000 MiB, 143771 MiB, 50 %, [N/A]",
            "2026/11/28 16:00:01.000, 0, 1000 MiB, 143771 MiB, 50 %, 99999 W",
            "2026/11/28 16:00:01.500, 0, 1000 MiB, 143771 MiB, 50 %, -3 W"]
    parsed = parsers.get("gpu_memory").parse(LogText.from_bytes((head + "\n".join(rows)).encode(),
                                                                "a.gpu.csv"))
    power = next(b for b in parsed.obs.blocks if b["metric"] == "power_draw")
    # [N/A] is no value (not measured), never 0 W
    assert power["value"].tolist() == [612.5] and power["unit"] == "W"
    assert [(p.line, p.kind) for p in parsed.problems] == [(4, "bad_line"), (5, "bad_line")]
    assert "not a power a GPU board draws" in parsed.problems[0].reason


@pytest.mark.parametrize("visible", ["0,1", "GPU-nowhere"])
def test_node_gpus_from_records(tmp_path, visible):
    from analysis.gpu_samples import run_gpus

    log = tmp_path / "r50_b256_amp_1.log"
    (tmp_path / "r50_b256_amp_1.node1.env.json").write_text(json.dumps(
        {"env": {"CUDA_VISIBLE_DEVICES": visible}, "gpus": []}))
    (tmp_path / "r50_b256_amp_1.done").write_text(json.dumps({"env": {"CUDA_VISIBLE_DEVICES": "5"}}))
    # node 1's record wins; the marker speaks for node 0 only; an unknown UUID: unknown
    assert run_gpus(log, 1) == ((frozenset({0, 1}) if visible == "0,1" else None),
                                "r50_b256_amp_1.node1.env.json")
    assert run_gpus(log, 0) == (frozenset({5}), "r50_b256_amp_1.done")
    assert run_gpus(log, 2) == (None, "")


def test_the_node_agent_samples_what_the_reader_reads():
    from analysis.campaign import node
    from analysis.parsers.gpu_memory import _COLUMNS

    fields = node.GPU_QUERY.split(",")
    assert fields[:2] == ["timestamp", "index"] and set(fields[2:]) == set(_COLUMNS)
    assert "power.draw" in fields


def test_gpus_of_two_models_without_bus_order_are_not_placed(tmp_path):
    from analysis.gpu_samples import run_gpus

    log = tmp_path / "r50_b256_amp_1.log"
    record = {"env": {"CUDA_VISIBLE_DEVICES": "0"},
              "gpus": [{"index": 0, "name": "NVIDIA H200"}, {"index": 1, "name": "NVIDIA L4"}]}
    (tmp_path / "r50_b256_amp_1.node0.env.json").write_text(json.dumps(record))
    # CUDA counts the fastest GPU first, nvidia-smi by bus: index 0 may be either board
    assert run_gpus(log)[0] is None
    record["env"]["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    (tmp_path / "r50_b256_amp_1.node0.env.json").write_text(json.dumps(record))
    assert run_gpus(log)[0] == frozenset({0})


def test_mem_files_count_devices_within_the_visible_ones(tmp_path):
    """A .mem file's ``device0`` is the framework's first visible GPU, whatever its
    nvidia-smi index: CUDA_VISIBLE_DEVICES=1 does not make it another GPU's sample."""
    csv = _copy_run(tmp_path)
    record_path = csv.with_name(csv.name.replace(".gpu.csv", ".node0.env.json"))
    record = json.loads(record_path.read_text())
    record["env"]["CUDA_VISIBLE_DEVICES"] = "1"
    record_path.write_text(json.dumps(record))
    csv.unlink()
    csv.with_name(csv.name.replace(".gpu.csv", ".mem")).write_text(
        "max device0 memory usage is: 12958302208\n")
    result = parse_paths([tmp_path])
    assert _foreign(result).empty
    peak = run_throughput(result).set_index("run_id").loc[RUN, "memory_sampled_mib"]
    assert peak == 12958302208 / 2**20
