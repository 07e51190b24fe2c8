"""A papermill parameter the notebook does not declare (``-p log_dirr x``) is an error.

Papermill only warns of it and runs the notebook on its defaults, so a typo silently gives
results for other data. In the kernel, IPython's input history holds the notebook's
``parameters`` cell and, right after it, the cell papermill injected (it begins with
``# Parameters``): :func:`check` compares the names the two assign. It also checks the
values of the parameters the analysis notebooks share (language, throughput method and its
window), so that a typo fails before the logs are parsed, not after.
"""

from __future__ import annotations

import ast
import difflib

from analysis.errors import UsageError

#: The first line of the cell papermill injects after the ``parameters`` cell.
INJECTED_HEADER = "# Parameters"


def assigned_names(source: str) -> list[str]:
    """Names a cell assigns at its top level, in order (none when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        names += [t.id for t in targets if isinstance(t, ast.Name) and t.id not in names]
    return names


def unknown(history: list[str]) -> tuple[list[str], list[str]]:
    """(names papermill injected that the parameters cell does not declare, the declared
    names), from a kernel's input history; nothing when no injected cell is there."""
    injected = [i for i, src in enumerate(history) if src.startswith(INJECTED_HEADER)]
    if not injected or injected[-1] == 0:
        return [], []
    declared = assigned_names(history[injected[-1] - 1])
    given = assigned_names(history[injected[-1]])
    return [n for n in given if n not in declared], declared


def check(history: list[str] | None = None, **values) -> None:
    """UsageError naming each parameter given to this notebook that it does not take, with
    the closest declared name; `history` defaults to the running kernel's ``In``. `values`
    (``lang``, ``method``, ``warmup``, ``measure``) are checked as the command line checks
    them."""
    check_names(history)
    if "lang" in values:
        from analysis.i18n import check_lang

        check_lang(values["lang"])
    if "method" in values:
        from analysis.stats.per_run import check_method_options

        check_method_options(values["method"], values.get("warmup"), values.get("measure"))


def check_names(history: list[str] | None = None) -> None:
    """The name check of :func:`check`."""
    if history is None:
        from IPython import get_ipython

        shell = get_ipython()
        history = list(shell.user_ns.get("In", [])) if shell is not None else []
    extra, declared = unknown(history)
    if not extra:
        return
    hints = []
    for name in extra:
        close = difflib.get_close_matches(name, declared, n=1)
        hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise UsageError(f"unknown notebook parameter{'s' if len(extra) > 1 else ''} "
                     f"{', '.join(hints)}; this notebook takes: {', '.join(declared)}")
