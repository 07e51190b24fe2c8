"""Page 1's "Reproduce" box: the exact ``dlperf run`` command of the campaign, from its
launch record (``00_launch.ipynb``, the parameters ``dlperf run`` gave papermill), and the
report command after it. Without that record, the spec saved beside the logs
(``campaign.yaml``) is what can be run again; without either the box is left out."""

from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath

from analysis.fsutil import display_path, read_json_object
from analysis.report import prose
from analysis.report.sections import register
from analysis.report.sections.caveats import DIRTY, other_suite_commits

LAUNCH_RECORD = "00_launch.ipynb"


def run_command(params: dict, name: str) -> tuple[str, str] | None:
    """(``dlperf run SPEC [--backend B] [-o OUT]``, the log folder it writes) from the
    launch notebook's parameters; paths relative to the project folder of the run (the
    folder above ``data/raw_logs/<name>``, where ``dlperf run`` writes by default), so that
    the command runs in a checkout. None without a spec path (an inline spec has no file
    to name)."""
    spec = params.get("spec_path")
    if not spec or params.get("spec_inline"):
        return None
    out = PurePosixPath(str(params.get("out_dir") or ""))
    default_tail = PurePosixPath("data", "raw_logs", name)
    root = (PurePosixPath(*out.parts[:-3]) if name and out.parts[-3:] == default_tail.parts
            else None)
    words = ["dlperf", "run", _relative(spec, root)]
    if params.get("backend"):
        words += ["--backend", str(params["backend"])]
    if root is None and str(out) not in ("", "."):
        words += ["-o", str(out)]
    return shlex.join(words), str(default_tail if root is not None else out)


def _relative(path: str, root: PurePosixPath | None) -> str:
    p = PurePosixPath(path)
    if root is not None and p.is_absolute() and p.is_relative_to(root):
        return str(p.relative_to(root))
    return str(p)


def launch_parameters(log_dir: Path) -> dict:
    """The papermill parameters the launch record holds ({} without a readable one)."""
    record = read_json_object(log_dir / LAUNCH_RECORD) or {}
    meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    params = (meta.get("papermill") or {}).get("parameters") if isinstance(
        meta.get("papermill"), dict) else None
    return params if isinstance(params, dict) else {}


@register("reproduce")
def reproduce(rep) -> prose.Markdown | None:
    tr = rep.tr
    name = str(rep.campaign_spec.get("name") or "")
    found = run_command(launch_parameters(rep.log_dir), name)
    source = "reproduce.from_record"
    if found is None and rep.campaign.name:
        folder = display_path(rep.log_dir)
        found = (shlex.join(["dlperf", "run", f"{folder}/{rep.campaign.name}"]), folder)
        source = "reproduce.from_spec"
    if found is None:
        return None
    command, folder = found
    report = shlex.join(["dlperf", "report", folder])
    lines = [command, report]
    text = [tr(source, log_dir=folder)]
    ran = other_suite_commits(rep.campaign.suite_commits, rep.suite_commit)
    if len(ran) == 1 and not ran[0].endswith(DIRTY):  # the runs' code: check it out first
        lines.insert(0, shlex.join(["git", "checkout", ran[0]]))
        text.append(tr("reproduce.checkout", commit=ran[0][:7]))
    elif not rep.campaign.suite_commits:  # HEAD's workload is a guess: say so
        text.append(tr("reproduce.unrecorded"))
    return prose.Markdown(
        f'<div class="dlperf-reproduce">\n\n**{prose.md(tr("reproduce.heading"))}**\n\n'
        f"{prose.code_block(chr(10).join(lines))}\n\n"
        f"{prose.inline(' '.join(text))}\n\n</div>\n")
