"""User-facing text in English and Chinese: one catalogue keyed by id, locale-aware numbers.

The catalogue lives in ``analysis/report/labels.yaml``: every id maps to one string per
language (``en``, ``zh``) with ``str.format`` placeholders. Numbers are formatted with Babel
for the language's locale::

    tr = Translator("zh")
    tr("section.results")            # '测试结果'
    tr.num(11548.451)                # '11,548.45'
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path

import yaml

from analysis.errors import UnknownNameError

_CJK = "\u3400-\u4dbf\u4e00-\u9fff"
#: "1 runs" in an English label filled with a count of one: the noun made singular.
_ONE_PLURAL = re.compile(r"(?<![\d.,])(1 (?:log )?)(run|case|problem|command|file|repeat|GPU|device|node)s\b")
_CJK_THEN_LATIN = re.compile(f"([{_CJK}])([A-Za-z0-9])")
_LATIN_THEN_CJK = re.compile(f"([A-Za-z0-9%)])([{_CJK}])")


def cjk_spacing(text: str) -> str:
    """`text` with a space between a Chinese character and an adjacent Latin letter or
    digit ('amp和fp32' -> 'amp 和 fp32'), as Chinese technical writing spaces them."""
    return _LATIN_THEN_CJK.sub(r"\1 \2", _CJK_THEN_LATIN.sub(r"\1 \2", text))


#: Languages every catalogue entry must have.
LANGS = ("en", "zh")
#: Babel locale of each language.
LOCALES = {"en": "en_US", "zh": "zh_Hans_CN"}
CATALOGUE_PATH = Path(__file__).resolve().parent / "report" / "labels.yaml"
#: libyaml's safe loader where PyYAML was built with it (9x quicker on the catalogue, the
#: same mapping), else the pure-Python one.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=1)
def load_catalogue() -> dict[str, dict[str, str]]:
    """The catalogue as {id: {lang: text}} (read once; the suite's own file, checked by
    its tests)."""
    with open(CATALOGUE_PATH, encoding="utf-8") as fh:
        data = yaml.load(fh, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader
    return {str(k): {str(lang): str(text) for lang, text in (v or {}).items()}
            for k, v in data.items()}


def check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise UnknownNameError("language", lang, LANGS)
    return lang


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@lru_cache(maxsize=1)
def _reason_patterns() -> list[tuple[re.Pattern, str]]:
    """(the English text of each ``reason.*`` entry of the catalogue as a whole-text
    pattern, its id), built once."""
    out = []
    for key, texts in load_catalogue().items():
        if key.startswith("reason."):
            parts = _PLACEHOLDER.split(texts["en"])
            regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)"
                            for i, p in enumerate(parts))
            out.append((re.compile(f"^{regex}$", re.S), key))
    return out


class Translator:
    """Labels and number formatting for one language."""

    def __init__(self, lang: str = "en"):
        self.lang = check_lang(lang)
        self.locale = LOCALES[lang]
        self._cat = load_catalogue()

    def __call__(self, key: str, **kwargs) -> str:
        """The text of `key` in this language, with `kwargs` filled in."""
        try:
            text = self._cat[key][self.lang]
        except KeyError:
            raise UnknownNameError("label", key, list(self._cat)) from None
        if not kwargs:
            return text
        text = text.format(**kwargs)
        return _ONE_PLURAL.sub(r"\1\2", text) if self.lang == "en" else text

    def has(self, key: str) -> bool:
        return key in self._cat

    def num(self, value, digits: int = 2, group: bool = True) -> str:
        """`value` with exactly `digits` decimals in the locale ('-' for NaN/None)."""
        if value is None:
            return "-"
        try:
            v = float(value)
        except (TypeError, ValueError):
            return str(value)
        if not math.isfinite(v):
            return "-"
        pattern = ("#,##0" if group else "0") + ("." + "0" * digits if digits > 0 else "")
        from babel import numbers  # the report extra: loaded when a number is formatted

        return numbers.format_decimal(v, format=pattern, locale=self.locale)

    def int(self, value, group: bool = False) -> str:
        """An integer ('-' for NaN/None/NA); no grouping by default (node counts, MiB)."""
        try:
            if value is None or value != value:
                return "-"
            v = int(round(float(value)))
        except (TypeError, ValueError):
            return "-" if value is None else str(value)
        return self.num(v, digits=0, group=group)

    def percent(self, value, digits: int = 1) -> str:
        """`value` (a fraction, 0.95) as a locale percentage ('95.0%')."""
        if value is None or value != value:
            return "-"
        pattern = "0" + ("." + "0" * digits if digits else "") + "%"
        from babel import numbers

        return numbers.format_percent(float(value), format=pattern, locale=self.locale)

    def reason(self, text: str) -> str:
        """A problem's reason (written in English where it is found: a parser, a check, the
        campaign runner) in this language: the ``reason.*`` entry of the catalogue whose
        English text, its placeholders standing for any text, is `text` gives its
        translation with those parts; a reason no entry knows stays as written."""
        if self.lang == "en" or not text:
            return text
        for pattern, key in _reason_patterns():
            found = pattern.match(text)
            if found:
                return self(key, **found.groupdict())
        return text

    def join(self, items) -> str:
        """A list in running text: 'a, b and c' / 'a、b和c'."""
        items = [str(i) for i in items if str(i)]
        if not items:
            return self("report.none")
        from babel.lists import format_list

        return cjk_spacing(format_list(items, locale=self.locale))
