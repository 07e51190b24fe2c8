"""The appendix's files: the log folder, the layout of the main logs and how many files of
each kind lie beside them (``logs``); on screen the full list, every file linked with its
size and the other files of its run (``log_table``), opens under it (folded; not printed).
Links are relative to the report's folder (``link_base``), or under ``--log-base-url``."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from analysis.discover import find_logs
from analysis.errors import DLPerfError, UsageError
from analysis.report import styled
from analysis.report.sections import register


def relative_name(p: Path, root: Path) -> str:
    """`p` relative to `root` ('1n1g/resnet50_b128_fp32_1.log'), as given when outside it."""
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def log_pattern(files: list[str], root: Path) -> str:
    """The main logs' names as one pattern: the configuration folder (``1n4g``) and the
    repeat number (``_3``) written ``<config>`` and ``<repeat>``, the case part as
    ``<case>`` where the logs have more than one ('<config>/<case>_<repeat>.log')."""
    names = [relative_name(Path(f), root) for f in files]
    shapes = {re.sub(r"_\d+(\.[\w.]+)$", r"_<repeat>\1",
                     re.sub(r"^\d+n\d+g/", "<config>/", n)) for n in names}
    if len(shapes) == 1:
        return shapes.pop()
    return " ".join(sorted({re.sub(r"(^|/)[^/<]+_<repeat>", r"\1<case>_<repeat>", s)
                            for s in shapes}))


def check_log_base_url(url: str | None) -> str:
    """`url` ending in '/', '' for none; anything but an http(s) URL is refused, and so is
    one with a query or fragment (each log's path is appended to it: every link would
    open the same page)."""
    url = (url or "").strip()
    if not url:
        return ""
    if not re.match(r"^https?://[^/\s]+", url) or any(c.isspace() for c in url):
        raise UsageError(f"--log-base-url must be an http:// or https:// URL, not {url!r}")
    if "?" in url or "#" in url:
        raise UsageError(f"--log-base-url must be a folder's URL without '?' or '#' (the logs' "
                         f"paths are appended to it), not {url!r}")
    return url if url.endswith("/") else url + "/"


def log_files(rep) -> list[str]:
    """The runs' main logs and the other files problems point at (a problem about a case's
    repeats points at its folder, which is no log file)."""
    return sorted({str(s) for s in rep.result.runs["source"]} |
                  {str(s) for s in rep.result.problems["source"].dropna()
                   if Path(str(s)).is_file()})


def other_files(rep) -> dict[str, list[Path]]:
    """Main log -> the other files discovery finds for its run (sorted), for the runs under
    the report's log folder."""
    try:
        found = find_logs([rep.log_dir])[0]
    except DLPerfError:
        return {}
    by_run: dict[str, list[Path]] = {}
    for f in found:
        by_run.setdefault(f.run_id, []).append(f.path)
    runs = rep.result.runs
    main_of = dict(zip(runs["source"].astype(str), runs["run_id"].astype(str)))
    out = {}
    for m in rep.shared(log_files):
        rest = sorted(p for p in by_run.get(main_of.get(m, ""), [])
                      if p.resolve() != Path(m).resolve())
        if rest:
            out[m] = rest
    return out


@register("logs")
def logs(rep) -> styled.Fragment:
    tr = rep.tr
    files = rep.shared(log_files)
    kinds: dict[str, int] = {}
    for f, rest in rep.shared(other_files).items():
        stem = Path(f).name.split(".", 1)[0]
        for o in rest:
            kind = o.name[len(stem):] if o.name.startswith(stem + ".") else o.suffix
            kinds[kind] = kinds.get(kind, 0) + 1
    folder = (rep.log_base_url or Path(os.path.relpath(
        rep.log_dir.resolve(), Path(rep.link_base).resolve())).as_posix() + "/")
    beside = tr.join([tr("logs.kind", kind=k, count=tr.int(n, group=True))
                      for k, n in sorted(kinds.items())])
    key = "logs.summary_one" if len(files) == 1 else "logs.summary"
    text = tr(key + "_url" if rep.log_base_url else key,
              logs=tr.int(len(files), group=True), folder=folder,
              pattern=log_pattern(files, rep.log_dir),
              total=tr.int(len(files) + sum(kinds.values()), group=True))
    if beside:
        text = tr("logs.with_beside", summary=text, beside=tr("logs.beside", kinds=beside))
    table = rep.log_table().to_html()
    summary = styled.para(text)
    if rep.log_base_url:  # the folder's address as a link: on paper too
        summary = summary.replace(styled.esc(rep.log_base_url),
                                  styled.link(rep.log_base_url, rep.log_base_url), 1)
    return styled.Fragment(f"{summary}<details class=\"dlperf-logs-list\"><summary>"
                           f"{styled.esc(tr('logs.list'))}</summary>{table}</details>")


def href(rep, p: Path) -> str:
    """The link to file `p`, its path segments percent-encoded (a '#' or '?' in a name would
    end the path, a ':' in the first segment make it a URL scheme): under the log base URL,
    or relative to the report's folder."""
    base, rel_to = ((rep.log_base_url, rep.log_dir) if rep.log_base_url
                    else ("", Path(rep.link_base)))
    return base + quote(Path(os.path.relpath(p.resolve(), rel_to.resolve())).as_posix())


@register("log_table")
def log_table(rep):
    tr = rep.tr
    files, others = rep.shared(log_files), rep.shared(other_files)
    names, sizes, also, hrefs = [], [], [], {}
    for f in files:
        p = Path(f)
        name = relative_name(p, rep.log_dir)
        hrefs[name] = href(rep, p)
        try:
            sizes.append(tr.int(p.stat().st_size, group=True) + " B")
        except OSError:
            sizes.append("-")
        names.append(name)
        stem = p.name.split(".", 1)[0]  # another file of the run by what follows its stem
        also.append(" ".join(
            styled.link(href(rep, o), o.name[len(stem):] if o.parent == p.parent
                        and o.name.startswith(stem + ".") else o.name)
            for o in others.get(f, [])))
    frame = pd.DataFrame({tr("col.file"): names, tr("col.size"): sizes})
    markup = {tr("col.file"): lambda name: styled.link(hrefs[name], name)}
    if any(also):
        frame[tr("col.also_read")] = also
        markup[tr("col.also_read")] = str  # links built above, their text escaped
    count = len(files) + sum(len(v) for v in others.values())
    intro = (tr("logs.intro_one") if count == 1
             else tr("logs.intro", count=tr.int(count, group=True)))
    return styled.table(frame, "logs", "lrt", caption=intro, classes=styled.NO_MATH,
                        markup=markup)
