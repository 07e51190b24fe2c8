"""The report title in each language: ``--title "English|中文"`` gives both, a title
without ``|`` serves both, and none falls back to the catalogue's default title."""

from __future__ import annotations

from analysis.i18n import LANGS

SEPARATOR = "|"


def pick_title(title: str | None, lang: str) -> str:
    """The part of `title` for `lang` ('' when `title` is empty)."""
    if not title:
        return ""
    parts = [p.strip() for p in str(title).split(SEPARATOR)]
    if len(parts) == 1:
        return parts[0]
    return parts[LANGS.index(lang)] if LANGS.index(lang) < len(parts) else parts[0]
