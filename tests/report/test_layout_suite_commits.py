"""The suite commit that ran a campaign (its done markers' ``suite``, issue 11 item 10) beside
the one that built the report: page 1 says so, in both languages, when the runs were made by
other suite code than the report's (another commit, or uncommitted changes), and says
nothing when they are the same commit."""

from __future__ import annotations

import json
import re

import pytest
import synth

from analysis.report import build
from analysis.suite_version import suite_commit

RAN = "0123456789abcdef0123456789abcdef01234567"


def _campaign(root, commit: str, dirty: bool):
    paths = synth.write_campaign(root, configs=((1, 1), (1, 8)), repeats=2)
    synth.write_markers(root, paths)
    for p in paths:
        marker = p.with_suffix(".done")
        data = json.loads(marker.read_text())
        data.update(ok=True, suite={"version": "0.1.0", "commit": commit, "dirty": dirty})
        marker.write_text(json.dumps(data))
    return root


def _text(markdown) -> str:
    return re.sub(r"\s+", " ", str(markdown or ""))


@pytest.fixture(scope="module")
def other_commit(tmp_path_factory):
    root = _campaign(tmp_path_factory.mktemp("ran_other") / "logs", RAN, dirty=True)
    return {lang: build(root, lang=lang) for lang in ("en", "zh")}


def test_other_suite_commit_is_named_beside_the_build_commit(other_commit):
    built = other_commit["en"].suite_commit
    assert built and not RAN.startswith(built)
    en = _text(other_commit["en"].caveats())
    assert (f"the runs were made by DLPerf Suite commit {RAN[:len(built)]} (with uncommitted "
            f"changes); this report was built by commit {built}") in en
    zh = _text(other_commit["zh"].caveats())
    assert f"各次运行使用 DLPerf Suite commit {RAN[:len(built)]}（含未提交的修改）" in zh
    assert f"本报告由 commit {built} 生成" in zh


def test_same_commit_needs_no_caveat(tmp_path):
    built = suite_commit()
    root = _campaign(tmp_path / "logs", built, dirty=False)
    text = _text(build(root, lang="en").caveats())
    assert "suite commit" not in text.lower() and "Few repeats" in text


def test_the_descriptions_always_name_the_commit_that_ran_the_campaign(other_commit, tmp_path):
    built = other_commit["en"].suite_commit
    en = _text(other_commit["en"].section("descriptions"))
    assert "DLPerf Suite commit that ran the campaign" in en and RAN[:len(built)] in en
    zh = _text(other_commit["zh"].section("descriptions"))
    assert "运行时的 DLPerf Suite commit" in zh and RAN[:len(built)] in zh
    old = synth.write_campaign(tmp_path / "logs", configs=((1, 1),), repeats=2)
    synth.write_markers(tmp_path / "logs", old)  # markers of a suite that did not record it
    text = _text(build(tmp_path / "logs", lang="en").section("descriptions"))
    assert "DLPerf Suite commit that ran the campaign</strong>: not recorded" in text
