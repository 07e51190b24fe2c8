"""The en/zh texts of the framework comparison and of references left out of a report
(``comparison_labels.yaml`` beside this module, read like the report's label catalogue)."""

from __future__ import annotations

from pathlib import Path

from analysis.i18n import check_lang, load_catalogue

CATALOGUE = Path(__file__).resolve().parent / "comparison_labels.yaml"


def say(lang: str, key: str, **values) -> str:
    """The text of `key` in `lang`, with `values` filled in."""
    text = load_catalogue(CATALOGUE)[key][check_lang(lang)]
    return text.format(**values) if values else text
