"""`dlperf topo FILE --format …` run as a real subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
DLPERF = Path(sys.executable).parent / "dlperf"  # the running environment's console script
DATA = ROOT / "tests" / "data" / "topology"


def dlperf(*args: str, stdin: bytes | None = None):
    res = subprocess.run([str(DLPERF), *args], capture_output=True, timeout=120, input=stdin)
    return res.returncode, res.stdout.decode(), res.stderr.decode()


def test_json():
    rc, out, err = dlperf("topo", str(DATA / "a100_numa_nic_legend" / "topo.txt"), "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["matrix"]["GPU0"]["GPU5"] == "NV12"
    assert data["affinity"]["GPU6"] == {"CPU Affinity": "80-95,208-223", "NUMA Affinity": "5"}
    assert data["nic_legend"]["NIC3"] == "mlx5_bond_0"
    assert data["text"] == (DATA / "a100_numa_nic_legend" / "topo.txt").read_text()


def test_csv():
    rc, out, err = dlperf("topo", str(DATA / "v100_dgx1_mlx5" / "topo.txt"), "--format", "csv")
    assert rc == 0, err
    table = pd.read_csv(io.StringIO(out), index_col="device", dtype=str, keep_default_na=False)
    assert table.loc["GPU3", "GPU7"] == "NV1" and table.loc["mlx5_0", "GPU3"] == "PIX"
    assert table.loc["GPU5", "CPU Affinity"] == "12-23,36-47" and table.loc["mlx5_0", "CPU Affinity"] == ""


def test_markdown_is_the_default_and_stdin_works():
    text = (DATA / "ansi_header" / "topo.txt").read_bytes()
    rc, out, err = dlperf("topo", "-", stdin=text)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("| | GPU0 | GPU1 |") and lines[0].endswith("| GPU NUMA ID |")
    assert "| GPU4 | NV18 | NV18 | NV18 | NV18 | X |" in out
    assert lines[-1] == ("NIC Legend: NIC0 = mlx5_0, NIC1 = mlx5_1, NIC2 = mlx5_2, NIC3 = mlx5_3, "
                         "NIC4 = mlx5_bond_0, NIC5 = mlx5_bond_1")
    assert "\x1b" not in out


def test_missing_file_is_a_usage_error(tmp_path):
    rc, out, err = dlperf("topo", str(tmp_path / "nope.txt"))
    assert rc == 2 and out == ""
    assert err.strip() == f"dlperf: error: topology file '{tmp_path / 'nope.txt'}' does not exist or is not a file"


def test_endless_input_is_refused_without_reading_it_all(tmp_path):
    """`cat /dev/zero | dlperf topo -` (or a huge file): one usage error after 4 MiB, not
    all the memory there is."""
    rc, out, err = dlperf("topo", "-", stdin=b"\0" * (5 << 20))
    assert rc == 2 and out == "" and "stdin holds more than 4,194,304 bytes" in err
    big = tmp_path / "topo.txt"
    big.write_bytes(b"x" * (5 << 20))
    rc, out, err = dlperf("topo", str(big))
    assert rc == 2 and "holds more than 4,194,304 bytes" in err


@pytest.mark.parametrize("text, message", [
    ("nvidia-smi: command not found\n", "no `nvidia-smi topo -m` header found"),
    ("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-7\nGPU1\tNV2\t X \t0-7\n",
     "matrix is not symmetric: (GPU0, GPU1) is 'NV4' but (GPU1, GPU0) is 'NV2'"),
])
def test_bad_text_names_the_problem(tmp_path, text, message):
    path = tmp_path / "topo.txt"
    path.write_text(text)
    rc, out, err = dlperf("topo", str(path), "--format", "json")
    assert rc == 1 and out == ""
    assert err.startswith(f"dlperf: error: {path}: ") and message in err
    assert "Traceback" not in err


def test_unknown_format_is_rejected():
    rc, _, err = dlperf("topo", str(DATA / "h200_x4" / "topo.txt"), "--format", "html")
    assert rc == 2 and "invalid choice: 'html'" in err
