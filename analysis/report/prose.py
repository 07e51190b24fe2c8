"""Report prose: Markdown rendered from Jinja templates (``analysis/report/prose/*.md.j2``)
with the label catalogue, returned as :class:`Markdown` so that a notebook cell shows it.

Text that comes from data (model names, hosts, log lines) goes through the ``md`` filter
(HTML and Markdown escaped) or the ``code`` filter (a code span): a log line holding
``<script>`` or ``*`` is shown as written and never becomes markup.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import Path

from analysis.i18n import Translator

PROSE_DIR = Path(__file__).resolve().parent / "prose"
#: Markdown syntax and ``$`` (JupyterLab typesets `$…$` in Markdown outputs as a formula)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~$])")
#: Where a renderer would start a link of its own (`https://`, `www.`): a backslash goes there
_AUTOLINK = re.compile(r"(?<=[a-z])(?=://)|(?<=\bwww)(?=\.)", re.I)


class Markdown(str):
    """Markdown text that Jupyter and nbconvert render (``text/markdown`` output)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def md(value) -> str:
    """`value` as literal text inside Markdown: HTML and Markdown syntax escaped."""
    text = html.escape("" if value is None else str(value), quote=False)
    text = _MD_SPECIAL.sub(r"\\\1", text).replace("\n", " ")
    # no autolink either: a renderer would link `https://x/run)` and take the escape in
    return _AUTOLINK.sub(r"\\", text)


def inline(value) -> str:
    """`value` as literal Markdown text, except its `backtick` spans, which stay code spans
    (catalogue strings mark commands and file names that way)."""
    parts = re.split(r"`([^`]+)`", "" if value is None else str(value))
    return "".join(code(p) if i % 2 else md(p) for i, p in enumerate(parts))


def _fence(text: str, least: int) -> str:
    """A fence of at least `least` backticks, longer than any backtick run in `text`."""
    return "`" * max(least, max(map(len, re.findall(r"`+", text)), default=0) + 1)


def code(value) -> str:
    """`value` as a Markdown code span."""
    text = "" if value is None else str(value).replace("\n", " ")
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{_fence(text, 1)}{pad}{text}{pad}{_fence(text, 1)}"


def code_block(value) -> str:
    """`value` as a fenced code block."""
    text = "" if value is None else str(value)
    return f"{_fence(text, 3)}text\n{text}\n{_fence(text, 3)}"


@lru_cache(maxsize=1)
def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROSE_DIR)),
                             undefined=jinja2.StrictUndefined, autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["md"] = md
    env.filters["code"] = code
    env.filters["inline"] = inline
    env.filters["code_block"] = code_block
    return env


def render(name: str, tr: Translator, **context) -> Markdown:
    """Template `name` (``prose/<name>.md.j2``) in `tr`'s language; `t` in the template is
    the catalogue (``{{ t("section.results") }}``), `tr` the translator (numbers)."""
    template = _environment().get_template(f"{name}.md.j2")
    text = template.render(t=tr, tr=tr, lang=tr.lang, **context)
    return Markdown(re.sub(r"\n{3,}", "\n\n", text).strip() + "\n")
