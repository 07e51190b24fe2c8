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
import os
from pathlib import Path

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


def _path(value) -> bool:
    return isinstance(value, (str, os.PathLike)) and str(value) != ""


def _paths(value) -> bool:
    return _path(value) or (isinstance(value, (list, tuple)) and all(map(_path, value)))


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _seconds(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and 0 < value < float("inf"))


def _percent(value) -> bool:
    """True for a threshold as the CLI takes it; else the UsageError of every threshold."""
    from analysis.changes.verdict import threshold_value

    threshold_value(value)
    return True


#: What each parameter the notebooks take must be, as the command line's options check it:
#: (test, what it must be, whether None is allowed). Papermill passes ``-p cache no`` as the
#: text "no", which Python reads as true.
TYPES = {
    **{name: (_path, "a path (text)", True) for name in (
        "log_dir", "summary_csv", "compare_csv", "excluded_csv", "trend_csv", "numbers_json",
        "data_dir", "link_base", "store", "references", "out_dir", "campaign_base")},
    **{name: (_path, "a path (text)", False) for name in ("spec_path", "campaign_new")},
    "store_dir": (_path, "a path (text)", False),
    **{name: (_paths, "a path or a list of paths", True) for name in ("env", "topology")},
    **{name: (lambda v: isinstance(v, bool), "True or False", False) for name in (
        "cache", "compare_unrecorded", "dry_run", "progress")},
    "persist": (_count, "an integer >= 1", False),
    **{name: (lambda v: _count(v) or v == 0 and not isinstance(v, bool), "an integer >= 0",
              True) for name in ("warmup", "measure")},
    "time_budget": (_seconds, "a number of seconds > 0", True),
    **{name: (lambda v: isinstance(v, str), "text", False) for name in (
        "case", "lang", "method")},
    **{name: (lambda v: isinstance(v, str), "text", True) for name in (
        "title", "backend", "baseline", "log_base_url")},
    "threshold": (_percent, "a percentage with its sign such as \"2%\"", True),
    "spec_inline": (lambda v: isinstance(v, dict), "a mapping of the spec's keys", True),
}
#: Parameters naming a file the notebook writes.
OUTPUTS = ("summary_csv", "compare_csv", "excluded_csv", "trend_csv", "numbers_json")
#: Parameters naming what a notebook reads: a file, or a folder whose files it may read.
INPUTS = ("log_dir", "campaign_base", "campaign_new", "references", "baseline", "store",
          "store_dir", "data_dir", "env", "topology", "spec_path")
#: Parameters naming a results store: a file written anywhere in it is read as damage.
STORES = ("store", "store_dir")


def check_types(values: dict) -> None:
    """UsageError naming the first parameter in `values` whose value is not of its kind."""
    for name, value in values.items():
        test, what, none_ok = TYPES.get(name, (None, "", True))
        if test is None or (value is None and none_ok):
            continue
        if not test(value):
            raise UsageError(f"notebook parameter {name}={value!r} must be {what}"
                             + (" or None" if none_ok else ""))


def check_outputs(values: dict) -> None:
    """UsageError when a file the notebook would write is one it reads (a file named by an
    input parameter or under a folder one names: the logs of ``log_dir``, a campaign, a
    references file, a store), lies in a store it reads, is a link or a folder, or is the
    file another output parameter names: the check of ``dlperf parse -o``. Each path is
    taken as given and as the notebooks read it (under the project folder)."""
    from analysis import config
    from analysis.fsutil import check_outputs as refuse

    named = [(n, p) for n in OUTPUTS if values.get(n) for p in _places(values[n])]
    if not named:
        return
    read = dict(values)
    if "log_dir" in read and not read["log_dir"]:
        read["log_dir"] = config.RAW_LOGS_DIR  # the notebooks' default campaign
    inputs: list[Path] = []
    for name in INPUTS:
        for value in _listed(read.get(name)):
            for place in _places(value):
                if place.is_file():
                    inputs.append(place)
                elif place.is_dir():
                    inputs += [p for p in place.rglob("*") if p.is_file()]
    stores = [p for n in STORES for v in _listed(read.get(n)) for p in _places(v) if p.is_dir()]
    refuse([p for _, p in named], inputs, force=True, stores=stores,
           names=[n for n, _ in named])


def _listed(value) -> list:
    """A parameter's paths: its list, or itself; none for None or text that is no path."""
    values = value if isinstance(value, list | tuple) else [value]
    return [v for v in values if isinstance(v, str | os.PathLike) and str(v)]


def _places(value) -> list[Path]:
    """Where a path parameter may lie: as given (``~`` expanded) and under the project."""
    from analysis import config

    return list(dict.fromkeys([Path(value).expanduser(), config.project_path(value)]))


def check(history: list[str] | None = None, namespace: dict | None = None, **values) -> None:
    """UsageError naming each parameter given to this notebook that it does not take, with
    the closest declared name; `history` and `namespace` default to the running kernel's
    ``In`` and its variables. The declared parameters' values in `namespace` are checked
    against TYPES, and files they would write against the files they read. `values`
    (``lang``, ``method``, ``warmup``, ``measure``) are checked as the command line checks
    them."""
    if history is None or namespace is None:
        from IPython import get_ipython

        shell = get_ipython()
        if history is None:
            history = list(shell.user_ns.get("In", [])) if shell is not None else []
        if namespace is None and shell is not None:
            namespace = shell.user_ns
    # papermill's cell comes right after the parameters cell; none when run by hand
    at = next((i for i in range(len(history) - 1, 0, -1)
               if history[i].startswith(INJECTED_HEADER)), None)
    declared = assigned_names(history[at - 1]) if at else []
    extra = [n for n in assigned_names(history[at]) if n not in declared] if at else []
    if extra:
        hints = []
        for name in extra:
            close = difflib.get_close_matches(name, declared, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise UsageError(f"unknown notebook parameter{'s' if len(extra) > 1 else ''} "
                         f"{', '.join(hints)}; this notebook takes: {', '.join(declared)}")
    if namespace is not None:
        cell = history[at - 1] if at else \
            next((src for src in reversed(history) if assigned_names(src)), "")
        given = {n: namespace[n] for n in assigned_names(cell) if n in namespace}
        check_types(given)
        check_outputs(given)
    if "lang" in values:
        from analysis.i18n import check_lang

        check_lang(values["lang"])
    if "method" in values:
        from analysis.stats.per_run import check_method_options

        check_method_options(values["method"], values.get("warmup"), values.get("measure"))
