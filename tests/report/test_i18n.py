"""The label catalogue is complete in every language, and numbers/dates follow the locale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis import i18n
from analysis.errors import UnknownNameError

PKG = Path(i18n.__file__).resolve().parent


def test_every_id_has_every_language():
    missing = [(key, lang) for key, texts in i18n.load_catalogue().items()
               for lang in i18n.LANGS if not str(texts.get(lang, "")).strip()]
    assert missing == [], f"labels lacking a language: {missing}"


def test_placeholders_agree_between_languages():
    for key, texts in i18n.load_catalogue().items():
        names = {lang: set(re.findall(r"\{(\w+)\}", t)) for lang, t in texts.items()}
        assert names["en"] == names["zh"], f"{key}: placeholders differ {names}"


def test_every_label_used_in_code_exists():
    cat = i18n.load_catalogue()
    used = set()
    for path in [*(PKG / "plots").glob("*.py"), *(PKG / "report").glob("*.py"),
                 *(PKG / "report" / "prose").glob("*.j2"),
                 *(PKG.parent / "notebooks").glob("*.ipynb")]:
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_]+\.[a-z_]+)["']""", path.read_text()))
        used |= set(re.findall(r"""\btr\(\s*f?["']([a-z_]+\.[a-z_]+)["']""", path.read_text()))
        used |= set(re.findall(
            r"""["']((?:chart|col|desc|section|kind|results|report|scripts)\.[a-z_]+)["']""",
            path.read_text()))
    assert used, "no label ids found in the code"
    used -= {"report.css"}  # a file name, not a label
    assert sorted(used - set(cat)) == []


def test_kinds_of_problems_are_translated():
    from analysis.problems import KINDS

    cat = i18n.load_catalogue()
    assert sorted(k for k in KINDS if f"kind.{k}" not in cat) == []


def test_translator_formats_per_locale():
    en, zh = i18n.Translator("en"), i18n.Translator("zh")
    assert en("section.environment") == "Test Environment"
    assert zh("section.environment") == "测试环境"
    assert en.num(11548.451) == "11,548.45" and zh.num(11548.451) == "11,548.45"
    assert en.num(float("nan")) == "-" and en.int(None) == "-"
    assert en.int(12565.0) == "12565"
    assert en.percent(0.9412) == "94.1%"
    assert zh.join(["OneFlow", "PyTorch"]) == "OneFlow 和 PyTorch"  # spaced, as Chinese writes it
    assert en("overview.devices", max=32) == "1 to 32 GPUs"


def test_unknown_language_and_label_are_named():
    with pytest.raises(UnknownNameError, match="fr"):
        i18n.Translator("fr")
    with pytest.raises(UnknownNameError, match="no.such"):
        i18n.Translator("en")("no.such")


def test_english_counts_of_one_are_singular():
    tr = i18n.Translator("en")
    built = "report.built"
    assert "from 1 run (1 case) in" in tr(built, version="v", commit="c", runs=1, cases=1,
                                             log_dir="d")
    for runs, cases in (("11", "21"), ("1,001", "2"), ("0", "3")):
        text = tr(built, version="v", commit="c", runs=runs, cases=cases, log_dir="d")
        assert f"from {runs} runs ({cases} cases) in" in text
    assert "1 次运行" in i18n.Translator("zh")(built, version="v", commit="c", runs=1, cases=1,
                                         log_dir="d")


def test_chinese_labels_put_units_in_full_width_parentheses():
    """'每卡显存 (MiB)' in the GPT strategies header (the report review): after Chinese
    words a unit goes in full-width parentheses, '每卡显存（MiB）'."""
    half_width = re.compile(r"[\u4e00-\u9fff]\s?\((?:MiB|GiB|samples/s|TFLOP/s|ms|s|%)\)")
    for name, texts in i18n.load_catalogue().items():
        assert not half_width.search(texts["zh"]), (name, texts["zh"])


def test_problem_reasons_are_translated_by_their_english_text():
    """A reason as the suite writes it (the local backend, the DLPerf PyTorch rule) reads in
    Chinese with its figures; one the catalogue does not know stays as written."""
    from analysis.i18n import Translator

    zh = Translator("zh")
    assert zh.reason("1n4g needs 4 GPUs on this host; it has 2") == \
        "1n4g 需要本机 4 张 GPU，实际只有 2 张"
    assert zh.reason("only 80 training lines after Iteration 5 (of 90); the rule needs 120") \
        == "第 5 次迭代之后只有 80 行训练日志（共 90 行），该规则需要 120 行"
    assert zh.reason("failed") == "失败"
    assert zh.reason("a reason nobody wrote down") == "a reason nobody wrote down"
    assert Translator("en").reason("timeout after 3 s") == "timeout after 3 s"
