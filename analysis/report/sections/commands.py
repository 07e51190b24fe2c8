"""The appendix's launch commands as one template and a table of the arguments that vary:
one row per case and node with the number of runs it stands for, one column per argument
whose value differs between the commands (– where a command does not give it). Every
command of the campaign is the template with its row's values, so nothing is lost, and a
printed copy is not ten near-identical commands."""

from __future__ import annotations

import html

import pandas as pd

from analysis.env import folder_records
from analysis.report import styled
from analysis.report.sections import register

#: A flag given without a value (``--standalone``), as its table cell says it.
FLAG = "✓"
#: The cell of an argument a command does not give.
ABSENT = "–"


def arguments(command: str) -> list[tuple[tuple[str, int], str, str, str]]:
    """((name, occurrence), name as written, separator, value) of each argument of
    `command` in order: an option with its value (``--batch-size 128``, ``--port=29500``),
    a flag (value FLAG), or a positional word (name '', value the word). A repeated option
    (``-m`` twice) is told apart by its occurrence."""
    words, out, seen = command.split(" "), [], {}
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-") and len(w) > 1:
            if "=" in w:
                name, value = w.split("=", 1)
                sep, step = "=", 1
            else:
                nxt = words[i + 1] if i + 1 < len(words) else None
                name, sep = w, " "
                value, step = ((nxt, 2) if nxt is not None and not nxt.startswith("-")
                               else (FLAG, 1))
            n = seen[name] = seen.get(name, -1) + 1
            out.append(((name, n), name, sep, value))
            i += step
        else:
            n = seen[""] = seen.get("", -1) + 1
            out.append((("", n), "", "", w))
            i += 1
    return out


def template(commands: list[str]) -> tuple[str, list[tuple[str, int]], list[dict]]:
    """(the template, the keys of the arguments that vary, each command's arguments as
    key -> (name, separator, value)): the arguments in the order they first appear; a
    varying option is written ``--name <name>``, a varying positional word ``<argN>``."""
    parsed = [{key: (name, sep, value) for key, name, sep, value in arguments(c)}
              for c in commands]
    order: list[tuple[str, int]] = []
    for args in parsed:
        order += [k for k in args if k not in order]
    varying = [k for k in order
               if len({args.get(k, (None, None, None))[2] for args in parsed}) > 1]
    words = []
    for k in order:
        name, sep, value = next(args[k] for args in parsed if k in args)
        if k in varying:
            value = f"<{placeholder(k)}>"
            words.append(f"[{name}]" if args_flag(parsed, k) else
                         (f"{name}{sep}{value}" if name else value))
        else:
            words.append(name if value == FLAG else (f"{name}{sep}{value}" if name else value))
    return " ".join(words), varying, parsed


def args_flag(parsed: list[dict], key) -> bool:
    """Whether argument `key` is a flag wherever it is given."""
    return all(args[key][2] == FLAG for args in parsed if key in args)


def placeholder(key: tuple[str, int]) -> str:
    """'batch-size' for ('--batch-size', 0); 'arg2' for a positional word."""
    name, n = key
    return name.lstrip("-") + (f"#{n + 1}" if n else "") if name else f"arg{n + 1}"


def case_labels(groups, runs: pd.DataFrame) -> dict[str, str]:
    """{case folder: the name page 1 gives its runs} where that name stands for one folder
    only (GPT: ``DP_1x1x1_8_1536x16`` for ``1n1g/pretrain_gpt_…_nh16``); {} where some name
    stands for several folders (``resnet50_b128_fp32`` in 1n1g, 1n2g and 1n4g): the folders
    are the names then."""
    if runs.empty or "case" not in runs.columns:
        return {}
    case_of_run = dict(zip(runs["run_id"].astype(str), runs["case"].astype(str)))
    labels = {}
    for g in groups:
        names = {case_of_run.get(r) for r in g.runs}
        if len(names) != 1 or None in names:
            return {}
        labels[g.case] = names.pop()
    return labels if len(set(labels.values())) == len(labels) else {}


@register("commands")
def commands(rep):
    tr = rep.tr
    if not rep.campaign.commands:
        return None
    groups = folder_records.group_commands(rep.campaign.commands)
    text, varying, parsed = template([rep.shown(g.command) for g in groups])
    columns = [tr("col.case"), tr("col.node"), tr("col.runs")]
    columns += [placeholder(k) for k in varying]
    labels = case_labels(groups, rep.runs)
    rows = [[labels.get(g.case, g.case), g.node, tr.int(len(g.runs), group=True)]
            + [args[k][2] if k in args else ABSENT for k in varying]
            for g, args in zip(groups, parsed)]
    frame = pd.DataFrame(rows, columns=columns)
    align = "lrr" + "l" * len(varying)
    if frame[tr("col.node")].nunique() == 1:  # single-node runs: a column of zeros says nothing
        frame = frame.drop(columns=tr("col.node"))
        align = "lr" + "l" * len(varying)
    caption = [tr("commands.template", template=text),
               tr("commands.varying" if varying else "commands.same")]
    if labels:  # one folder for an example: the reader can map the rest to the logs
        folder, name = next(iter(labels.items()))
        caption.append(tr("commands.case_names", folder=folder, case=name))
    names = set(columns[3:])
    # an argument's name breaks after _ and - only ("nproc_/per_/node"), so that the
    # headers do not take the width the case labels need to stay on one line
    return styled.table(frame, "commands", align, caption=caption,
                        classes=styled.NO_MATH, markup={tr("col.case"): styled.label_words}
                        ).format_index(lambda c: styled.label_words(c, "_-") if c in names
                                       else html.escape(str(c)), axis=1)
