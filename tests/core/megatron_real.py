"""The real Megatron-DeepSpeed example log, edited into a folder of its own, for the tests
that hold its figures to what the log states."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

MEGATRON = Path(__file__).resolve().parents[1] / "data" / "real" \
    / "megatron_deepspeed_examples" / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4.log.gz"


def megatron_folder(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    """A folder under `tmp_path` holding the real log with `edit` applied to its text."""
    folder = tmp_path / "megatron"
    folder.mkdir()
    (folder / "gpt3.log").write_text(edit(gzip.decompress(MEGATRON.read_bytes()).decode()))
    return folder
