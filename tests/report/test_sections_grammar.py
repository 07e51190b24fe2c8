"""The descriptions and appendix sentences agree with their numbers: "1 groups of tests were
performed with 1 devices" read wrong in English, and "分别使用 1 张 GPU" ("respectively", of
one thing) and "1 次重复的中位数" unnatural in Chinese."""

from __future__ import annotations

import pytest
import synth

from analysis.i18n import Translator
from analysis.report import build
from analysis.report.sections.descriptions import groups_sentence, repeats_sentence
from analysis.report.sections.problems import problems_intro

EN, ZH = Translator("en"), Translator("zh")


@pytest.mark.parametrize(("groups", "devices", "en", "zh"), [
    (1, [1], "1 group of tests was run on 1 device.", "共 1 组测试，使用 1 张 GPU。"),
    (1, [8], "1 group of tests was run on 8 devices.", "共 1 组测试，使用 8 张 GPU。"),
    (2, [1, 2, 4], "2 groups of tests were run on 1, 2, and 4 devices.",
     "共 2 组测试，所用 GPU 数分别为 1、2 和 4 张。"),
    (3, [1, 8], "3 groups of tests were run on 1 and 8 devices.",
     "共 3 组测试，所用 GPU 数分别为 1 和 8 张。"),
])
def test_groups_sentence_is_singular_or_plural_as_counted(groups, devices, en, zh):
    assert groups_sentence(EN, groups, devices) == en
    assert groups_sentence(ZH, groups, devices) == zh


def test_repeats_sentence():
    assert repeats_sentence(EN, [5]).startswith("Each case was repeated 5 times; the median")
    assert repeats_sentence(EN, [3, 5]).startswith("Each case was repeated 3–5 times")
    one = repeats_sentence(EN, [1])
    assert one.startswith("Each case was run once") and "median" not in one.split(";")[0]
    assert "1 times" not in one
    assert repeats_sentence(ZH, [1]).startswith("每个测试用例只运行 1 次")


def test_problem_counts_agree():
    assert problems_intro(EN, 1, 1).startswith("1 problem in 1 run.")
    assert problems_intro(EN, 3, 1).startswith("3 problems in 1 run.")
    assert problems_intro(EN, 3, 2).startswith("3 problems in 2 runs.")
    assert problems_intro(ZH, 1, 1).startswith("1 次运行存在 1 个问题，")


def test_a_one_case_campaign_reads_in_the_singular(tmp_path):
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    en = str(build(logs, lang="en").descriptions())
    assert "1 group of tests was run on 1 device." in en
    assert "1 groups" not in en and "1 devices" not in en and "1 times" not in en
    assert "Each case was run once" in en
    zh = str(build(logs, lang="zh").descriptions())
    assert "共 1 组测试，使用 1 张 GPU。" in zh and "分别" not in zh
    assert "每个测试用例只运行 1 次" in zh
    rep = build(logs, lang="en")
    assert "The one run&#x27;s main log in" in rep.logs()
    assert "The one log file of this report" in rep.log_table().to_html()
