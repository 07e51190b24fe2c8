"""Chinese labels are followed by a full-width colon (issue 11 item 9): the descriptions and
environment lists of a zh report use "：", the en ones ": "."""

from __future__ import annotations

import pytest
import synth

from analysis.report import build


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("colons") / "logs"
    synth.write_markers(root, synth.write_campaign(root, configs=((1, 1), (1, 2)), repeats=2))
    return root


def test_chinese_labels_take_a_full_width_colon(logs):
    zh = build(logs, lang="zh")
    for name in ("descriptions", "environment"):
        text = str(zh.section(name))
        assert "</strong>: " not in text, name
    assert "</strong>：" in str(zh.section("descriptions"))
    assert "</strong>: " in str(build(logs, lang="en").section("descriptions"))
