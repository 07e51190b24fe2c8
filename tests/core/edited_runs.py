"""Real logs edited into folders of their own, for the tests that hold figures and repeat
counts to what the logs and their done markers state."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data"
REAL = Path(__file__).resolve().parents[1] / "data" / "real"
MEGATRON = REAL / "megatron_deepspeed_examples" \
    / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4.log.gz"
RN50 = DATA / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"


def megatron_folder(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    """A folder under `tmp_path` holding the real Megatron log with `edit` applied to it."""
    folder = tmp_path / "megatron"
    folder.mkdir()
    (folder / "gpt3.log").write_text(edit(gzip.decompress(MEGATRON.read_bytes()).decode()))
    return folder


def run_three_marked(tmp_path: Path, edit: Callable[[dict], dict]) -> Path:
    """Runs 1-3 of the bundled 1n4g fp32 case with their sidecars in `tmp_path`/1n4g, run 3's
    done marker replaced by `edit` of it."""
    folder = tmp_path / "1n4g"
    folder.mkdir()
    for i in (1, 2, 3):
        for f in RN50.glob(f"{STEM}{i}.*"):
            shutil.copy(f, folder)
    marker = folder / f"{STEM}3.done"
    marker.write_text(json.dumps(edit(json.loads(marker.read_text()))))
    return folder
