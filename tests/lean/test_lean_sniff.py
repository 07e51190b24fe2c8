"""The lean lane decides a log's family without importing the families (numpy); what it
knows of them is data checked here against the registry, so that adding or changing a
family cannot make the lane read a log the full path reads as another family."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis import parsers
from analysis.lean import dll_pytorch, oneflow_cnn, sniff
from analysis.lean.lane import read_log
from analysis.logtext import LogText
from analysis.stats import METHOD_NAMES
from analysis.stats.methods import names as method_names

DATA = Path(__file__).resolve().parents[1] / "data"


def test_the_lane_knows_every_familys_markers_and_top_score():
    families = {cls.name: (cls.markers, cls.max_score) for cls in parsers._registry.classes()}
    assert sniff.FAMILIES == families
    assert all(markers is not None for markers, _ in families.values())  # all prefiltered


def test_families_and_methods_are_named_without_importing_them():
    assert parsers.module_names() == parsers.names()
    assert list(METHOD_NAMES) == method_names()


def test_the_lean_readers_read_what_the_full_paths_constants_say():
    from analysis.parsers._rules import PYTORCH_LINES, PYTORCH_SKIP

    assert (dll_pytorch.SKIP, dll_pytorch.LAST) == (PYTORCH_SKIP, PYTORCH_LINES)
    assert parsers.get("dll_pytorch").late_markers == (dll_pytorch.LATE_MARKER,)
    assert parsers.get("oneflow_cnn").late_markers == (oneflow_cnn.LATE_MARKER,)
    assert parsers.SNIFF_SIZES[0] == sniff.HEAD and parsers.CONFIDENT == 90


def _fixture_logs() -> list[Path]:
    return sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".log", ".txt",
                                                                            ".out"))


@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: str(p.relative_to(DATA)))
def test_a_log_the_lane_reads_is_of_the_family_detect_says(path):
    read = read_log(str(path), 1 << 30)
    if read is not None:
        assert parsers.detect(LogText.read(path).head()).name == read.family


def test_a_rival_marker_in_the_head_makes_the_lane_step_aside(tmp_path):
    from ._corpus import dll_logs, write_corpus

    root = write_corpus(tmp_path / "logs", files=5, iterations=130)
    log = dll_logs(root)[0]
    assert read_log(str(log), 1 << 30) is not None
    log.write_bytes(b"utils.events: something\n" + log.read_bytes())  # LiBai's marker
    assert read_log(str(log), 1 << 30) is None
