"""A topology is bounded by its GPU count: `nvidia-smi topo -m` of 800 GPUs (3.2 MB) took
minutes to read and then made the report's PDF fail; it is now refused at once, saying
why, and a report quotes only the start of a topology file it cannot read."""

from __future__ import annotations

import time

import pytest

from analysis.env import folder_records
from analysis.env.topo_matrix import MAX_GPUS, TopologyError, parse_topology

LEGEND = ("\nLegend:\n\n  X    = Self\n"
          "  NV#  = Connection traversing a bonded set of # NVLinks\n")


def matrix(n: int) -> str:
    header = "\t" + "\t".join(f"GPU{i}" for i in range(n)) + "\tCPU Affinity\tNUMA Affinity"
    rows = [f"GPU{i}\t" + "\t".join("X" if j == i else "NV18" for j in range(n)) + "\t0-11\t0"
            for i in range(n)]
    return header + "\n" + "\n".join(rows) + "\n" + LEGEND


def test_a_node_of_the_most_gpus_is_read():
    assert len(parse_topology(matrix(MAX_GPUS)).gpus) == MAX_GPUS


@pytest.mark.parametrize("n, message", [
    (800, "3,2"),  # 3.2 MB: refused by its size before it is split into lines
    (MAX_GPUS + 1, f"the matrix lists {MAX_GPUS + 1} GPUs"),
])
def test_more_gpus_than_a_node_holds_are_refused_at_once(n, message):
    text = matrix(n)
    start = time.perf_counter()
    with pytest.raises(TopologyError, match=message) as info:
        parse_topology(text)
    assert time.perf_counter() - start < 1.0
    assert "its own file" in str(info.value)


def test_a_report_quotes_the_start_of_a_topology_it_cannot_read(tmp_path):
    (tmp_path / "topo_all.txt").write_text(matrix(800))
    _, topos, _ = folder_records.gather(tmp_path)
    (topo,) = topos
    assert topo.topology is None and "at most 64 GPUs" in topo.error
    assert len(topo.text) < folder_records.UNPARSED_TOPOLOGY_CHARS + 100
    assert topo.text.startswith("\tGPU0\tGPU1") and topo.text.endswith("characters]")
