"""The observations frame in parts: `dlperf parse -o` writes it without holding it whole,
and what it writes reads back as the frame `parse_paths` gives."""

from __future__ import annotations

import pickle
from argparse import Namespace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import collect
from analysis.cli import parse as parse_cmd
from analysis.collect import observation_frames, parse_paths
from analysis.logtext import LogText
from analysis.parsers import get

ROOT = Path(__file__).resolve().parents[2]
LOGS = [ROOT / "tests" / "data", ROOT / "data" / "raw_logs" / "rn50_4gpu"]


def _same(a: pd.DataFrame, b: pd.DataFrame, dtypes: bool = True) -> None:
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for c in a.columns:
        x, y = a[c].reset_index(drop=True), b[c].reset_index(drop=True)
        assert not dtypes or str(x.dtype) == str(y.dtype), c
        if isinstance(y.dtype, pd.CategoricalDtype):  # categories may come in another order
            x, y = x.astype(str), y.astype(str)
        pd.testing.assert_series_equal(x, y, check_exact=True)


@pytest.fixture(scope="module")
def result():
    return parse_paths(LOGS, jobs=1)


def test_frames_in_parts_are_the_observations_frame(result):
    parts = list(observation_frames(result.parts, rows=3000))
    assert len(parts) > 5
    for part in parts:  # each part is of the schema (validated); their concatenation is the frame
        assert [str(t) for t in part.dtypes] == [str(t) for t in result.observations.dtypes]
    _same(pd.concat(parts, ignore_index=True), result.observations, dtypes=False)


def test_no_part_holds_much_more_than_asked(result):
    """A part ends at the first run that takes it to `rows`: never two runs past it."""
    biggest_run = max(len(parsed.obs) for _, parsed, _ in result.parts)
    sizes = [len(df) for df in observation_frames(result.parts, rows=3000)]
    assert max(sizes) < 3000 + biggest_run
    assert sum(sizes) == len(result.observations)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_parse_command_writes_the_frame_in_parts(tmp_path, monkeypatch, result, suffix, capsys):
    built = []
    frame = collect._observations_frame
    monkeypatch.setattr(collect, "FRAME_ROWS", 3000)
    monkeypatch.setattr(collect, "_observations_frame", lambda parts: built.append(frame(parts)) or built[-1])
    out = tmp_path / f"obs{suffix}"
    args = Namespace(output=str(out), paths=[str(p) for p in LOGS], family=None, strict=False,
                     meta=None, jobs=1, cache=False, force=False)
    assert parse_cmd.run(args) == 0
    assert len(built) > 5 and max(map(len, built)) < len(result.observations)
    assert f"{len(result.observations)} observations from {len(result.runs)} runs" in capsys.readouterr().out
    if suffix == ".parquet":
        _same(pd.read_parquet(out), result.observations)
    else:
        back = pd.read_csv(out, keep_default_na=False, na_values=[""])
        assert len(back) == len(result.observations)
        np.testing.assert_array_equal(back["value"].to_numpy(), result.observations["value"].to_numpy())


def test_pickled_observations_send_a_shared_column_once():
    lines = [b"train: epoch 0, iter %d, loss: 1.5, top_1: 0.5, top_k: 0.25, samples/s: 1234.5 %d.5"
             % (i, 1600000000 + i) for i in range(1, 2001)]
    parsed = get("oneflow_cnn").parse(LogText.from_bytes(b"\n".join(lines) + b"\n", "a.log"))
    assert len(parsed.obs) == 8000
    size = len(pickle.dumps(parsed))
    # four metrics share line, step, epoch and timestamp; rank and device repeat -1
    assert size < 8 * 2000 * (4 + 4) * 1.2
    back = pickle.loads(pickle.dumps(parsed))
    first, second = back.obs.blocks[0], back.obs.blocks[1]
    assert first["line"] is second["line"] and first["rank"].strides == (0,)
    for a, b in zip(parsed.obs.blocks, back.obs.blocks, strict=True):
        for k in ("line", "step", "epoch", "rank", "device", "timestamp", "value"):
            np.testing.assert_array_equal(a[k], b[k])
