"""`bsz = max` rows (issue 11, item 3): where a model and precision ran at several batch sizes
per GPU, the seed-shaped tables name the group of the largest one `bsz = max` (as seed 003
states "max batch size=256" under its table), and page 1 says what "max" means; a model run
at one batch size only has no such row. A small synthetic OneFlow campaign: fp32 at 128 and
192 per GPU, AMP at 256 only."""

from __future__ import annotations

import re

import pytest
import synth

from analysis.report import build, tables


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    root = tmp_path_factory.mktemp("bsz_max") / "logs"
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(synth.PER_DEVICE, ("fp32", 192), 395.0)
        synth.write_campaign(root, configs=((1, 1), (1, 8)), repeats=2,
                             groups=(("fp32", 128), ("fp32", 192), ("amp", 256)))
    return {lang: build(root, lang=lang) for lang in ("en", "zh")}


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))


def test_largest_batch_of_several_is_the_max_group(reports):
    keys = [key for key, _ in tables.scaling_groups(reports["en"].summary)]
    assert [(k[2], int(k[3]), tables.is_largest_batch(k)) for k in keys] == [
        ("amp", 256, False), ("fp32", 128, False), ("fp32", 192, True)]


@pytest.mark.parametrize("lang, label, plain", [
    ("en", "OneFlow resnet50, FP32, bsz = max (192)", "OneFlow resnet50, FP32, bsz 128"),
    ("zh", "OneFlow resnet50，FP32，每卡批大小 = max（192）", "OneFlow resnet50，FP32，每卡批大小 128"),
])
def test_key_numbers_and_results_show_a_bsz_max_row(reports, lang, label, plain):
    rep = reports[lang]
    groups = rep.key_numbers().data.iloc[:, 0].tolist()
    assert label in groups and plain in groups
    assert not any("max" in g for g in groups if "amp" in g)  # one batch size: no max
    results = rep.results().data.iloc[:, 0].tolist()
    assert label in results and plain in results
    assert results.count(label) == 1  # the group's first row names it, as every group


def test_page_one_says_what_max_means(reports):
    en = _text(str(reports["en"].caveats()))
    assert "bsz = max" in en and "largest batch size per GPU that ran" in en
    assert "192 for OneFlow resnet50 fp32" in en
    zh = _text(str(reports["zh"].caveats()))
    assert "每卡批大小 = max" in zh and "OneFlow resnet50 fp32 为 192" in zh
