"""Publish reports: execute ``notebooks/20_report.ipynb`` with papermill once per language
and export it with nbconvert to self-contained HTML (inputs hidden, images embedded) and PDF
(``webpdf``). Outputs in OUT_DIR, per language L: ``report_L.{ipynb,html,pdf,json}``.

The logs are parsed once, here, and handed to the kernel as Parquet (``prepared``). One
ordinary kernel runs every language in turn; it is started before the parse, so that it
boots and imports the report's modules meanwhile. A build in progress lives in a private
temporary folder (mode 0700: data, notebooks, the kernel's sockets); outputs reach OUT_DIR
only when complete, each by an atomic rename, and an interrupted build (Ctrl-C, SIGTERM)
kills its kernel and writes nothing. The same logs and code give the same bytes
(:func:`reproducible`; PDF dates from ``SOURCE_DATE_EPOCH``).
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from analysis import config, notebook_run
from analysis.errors import DLPerfError, UsageError
from analysis.fsutil import atomic_write_bytes, check_outside_stores
from analysis.i18n import check_lang
from analysis.notebook_run import execute_notebook
from analysis.report import prepared

if TYPE_CHECKING:
    import nbformat

REPORT_NOTEBOOK = config.NOTEBOOKS_DIR / "20_report.ipynb"
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE = "dlperf"
TARGETS = ("html", "pdf")
#: Id of papermill's injected parameters cell in what is written (papermill draws one at random).
INJECTED_CELL_ID = "injected-parameters"
#: Parameters that only point into the build's temporary folder.
BUILD_ONLY_PARAMETERS = ("data_dir", "numbers_json")
#: Parameters holding paths, written relative to OUT_DIR.
PATH_PARAMETERS = ("log_dir", "link_base", "env", "topology")
TIMING_KEYS = ("start_time", "end_time", "duration")
#: What the kernel runs as soon as it is up, while the logs are parsed: the imports of the
#: report's cells (pandas; matplotlib and seaborn for the charts), which then find them done.
KERNEL_WARM_UP = "import analysis.report.build, analysis.plots"


def print_progress(message: str) -> None:
    """One plain line per step on stderr ("en: html")."""
    print(message, file=sys.stderr, flush=True)


class PublishError(DLPerfError):
    """The report notebook failed or an export failed; the message says which and why."""


@dataclass
class Published:
    """Paths written, per language, and seconds spent per step."""

    out_dir: Path
    files: dict[str, dict[str, Path]] = field(default_factory=dict)  # lang -> target -> path
    seconds: dict[str, float] = field(default_factory=dict)  # "<lang>.<step>" -> s

    def all_files(self) -> list[Path]:
        return [p for per in self.files.values() for p in per.values()]


def _split(value, valid, what) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value)
    items = [i.strip() for i in items if i and i.strip()]
    bad = [i for i in items if i not in valid]
    if bad or not items:
        raise UsageError(f"bad {what} {','.join(bad) or '(none)'}; valid: {', '.join(valid)}")
    return items


def execute(out_ipynb: Path, parameters: dict, km, folder: Path,
            notebook: Path = REPORT_NOTEBOOK, what: str = "") -> nbformat.NotebookNode:
    """Run the report notebook with papermill into `out_ipynb`, in the kernel of `km`
    (``notebook_run.kernel``), private to the build's `folder`. A failed cell is a
    :class:`PublishError` naming the notebook; a kernel that did not start or died, a
    :class:`KernelDied` naming `what` it executed (default: `out_ipynb`'s name)."""
    import papermill as pm
    from nbclient.exceptions import DeadKernelError

    name = km.kernel_name
    try:
        return execute_notebook(notebook, out_ipynb, parameters, km, folder)
    except pm.PapermillExecutionError as exc:
        raise PublishError(f"{notebook.name} failed for {out_ipynb.name} "
                           f"(see the executed notebook there): {exc.ename}: {exc.evalue}") from exc
    except DeadKernelError as exc:  # killed (the OOM killer), crashed: not by the build
        raise KernelDied(f"the report kernel ({name}) {_how_it_ended(km)} while it executed "
                         f"{what or out_ipynb.name}; nothing was written") from exc
    except RuntimeError as exc:
        if not str(exc).startswith(_KERNEL_DIED_AT_START):
            raise
        raise KernelDied(f"the report kernel ({name}) {_how_it_ended(km)} before it was "
                         f"ready (what it printed, if anything, is above)") from exc


def _how_it_ended(km) -> str:
    """How the kernel of `km` ended: "exited with code 3", "was killed by SIGKILL", or
    "died" (its process is not known)."""
    import signal

    process = getattr(km.provisioner, "process", None)
    code = process.poll() if process is not None else None
    if code is None:
        return "died"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def _relative(value, out_dir: Path):
    if isinstance(value, list):
        return [_relative(v, out_dir) for v in value]
    return os.path.relpath(value, out_dir) if isinstance(value, str) else value


def reproducible(nb: nbformat.NotebookNode, out_dir: Path, name: str) -> nbformat.NotebookNode:
    """A copy of the executed notebook `nb`, to be written as OUT_DIR/`name`, that is the same
    for the same inputs: no execution times, a fixed id for the injected parameters cell, and
    parameters without the build folder (data_dir and numbers_json are None: re-run, the
    notebook parses the logs itself) with paths relative to `out_dir`."""
    from papermill.translators import translate_parameters

    nb = copy.deepcopy(nb)
    meta = nb.metadata.papermill  # papermill writes every key below
    for key in TIMING_KEYS:
        meta.pop(key, None)
    params = {k: (None if k in BUILD_ONLY_PARAMETERS else
                  _relative(v, out_dir) if k in PATH_PARAMETERS else v)
              for k, v in meta.parameters.items()}
    meta.update(parameters=params, input_path=_relative(meta.input_path, out_dir),
                output_path=name)
    kernel, language = nb.metadata.kernelspec.name, nb.metadata.language_info.name
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # nbclient's iopub/shell timestamps
        for key in TIMING_KEYS:
            cell.metadata.get("papermill", {}).pop(key, None)
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell["id"] = INJECTED_CELL_ID
            cell.source = translate_parameters(kernel, language, params)
    return nb


def clean_for_export(nb: nbformat.NotebookNode, title: str | None) -> nbformat.NotebookNode:
    """A copy without stderr streams (kernel warnings are not report content), titled."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell.outputs = [o for o in cell.get("outputs", [])
                            if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
    if title:
        nb.metadata["title"] = title
    return nb


#: nbconvert's settings for the report: inputs hidden, images embedded; `language_code` (the
#: page's <html lang>, by which Chromium chooses CJK fonts) is set per page.
EXPORTER_CONFIG = dict(template_name=TEMPLATE, extra_template_basedirs=[str(TEMPLATES_DIR)],
                       exclude_input=True, exclude_input_prompt=True,
                       exclude_output_prompt=True, exclude_anchor_links=True, embed_images=True)


def html_exporter():
    """The HTML exporter of a build, one for all its languages: a new exporter compiles its
    templates again (~0.5 s)."""
    from nbconvert import HTMLExporter

    return HTMLExporter(**EXPORTER_CONFIG)


def html_page(exporter, nb: nbformat.NotebookNode, lang: str, others: list[str] = ()) -> str:
    """The HTML page of `nb` in `lang`, linking the same report in the `others` languages
    of the build (``report_<other>.html`` beside it)."""
    exporter.language_code = lang
    body, _ = exporter.from_notebook_node(nb, resources={"dlperf_other_langs": list(others),
                                                         "dlperf_screen": True})
    return body


def _pdfs(executed: list[tuple[str, nbformat.NotebookNode]], folder: Path, epoch: int
          ) -> list[bytes]:
    """The PDF of each (language, notebook), printed in one browser, dated `epoch`."""
    from nbconvert import HTMLExporter

    from analysis.report.webpdf import SystemChromiumWebPDFExporter

    exporter = SystemChromiumWebPDFExporter(**EXPORTER_CONFIG, temp_dir=str(folder), epoch=epoch)
    pages = []
    try:
        for lang, nb in executed:  # the exporter's own HTML page of each, in its language
            exporter.language_code = lang
            pages.append(HTMLExporter.from_notebook_node(exporter, nb)[0])
        return exporter.print_pages(pages, [f"report_{lang}.pdf" for lang, _ in executed])
    except RuntimeError as exc:
        raise PublishError(f"PDF export failed ({exporter.executable_path}): {exc}") from exc


def _execute_language(lang: str, params: dict, notebook: Path, km, folder: Path,
                      out_dir: Path, result: Published,
                      ) -> tuple[dict[str, bytes], nbformat.NotebookNode | PublishError]:
    """Execute the report notebook for `lang` in the build's kernel (`km`, its files in
    `folder`): its outputs so far (the notebook, and the numbers when it ran), and the
    notebook to export or the error of a failed cell (the failed notebook is kept for the
    reader)."""
    import nbformat

    name = f"report_{lang}.ipynb"
    ipynb, numbers = folder / name, folder / f"report_{lang}.json"
    t0 = time.perf_counter()
    error = None
    try:
        execute(ipynb, dict(params, lang=lang, numbers_json=str(numbers)), km, folder, notebook,
                f"the {lang} report")
    except KernelDied:
        raise
    except PublishError as exc:
        error = exc
    nb = reproducible(nbformat.read(ipynb, as_version=4), out_dir, name)
    contents = {"ipynb": nbformat.writes(nb).encode("utf-8")}
    if error:
        return contents, error
    contents["json"] = numbers.read_bytes()
    result.seconds[f"{lang}.execute"] = time.perf_counter() - t0
    return contents, clean_for_export(nb, json.loads(contents["json"]).get("title"))


def publish(log_dir: str | Path | None = None, out_dir: str | Path | None = None,
            langs="en,zh", to="html,pdf", env=None, topology=None, method: str = "dlperf",
            warmup: int | None = None, measure: int | None = None, title: str | None = None,
            notebook: str | Path = REPORT_NOTEBOOK,
            progress: Callable[[str], None] | None = print_progress,
            meta: dict | None = None, baseline: str | Path | None = None,
            store: str | Path | None = None, threshold: float | None = None,
            references: str | Path | None = None,
            log_base_url: str | None = None) -> Published:
    """Write report_<lang>.{ipynb,html,pdf,json} for each language into `out_dir`.

    `log_dir` defaults to the bundled data/raw_logs, `out_dir` to reports/. `env` and
    `topology` are extra files (those inside `log_dir` are found automatically).
    `meta` states run fields the logs and paths do not (as ``dlperf summarize --meta``).
    `baseline` (a log folder, a Parquet export or, with `store`, a stored campaign) adds the
    "Changes since baseline" section, its verdicts at `threshold` (default 2 %); a baseline
    that cannot be one is refused before any kernel starts. `references` (a references file,
    as ``dlperf check`` reads) adds page 1's reference table and ratios; a bad file is
    refused before any kernel starts too. `log_base_url` (where `log_dir` is published)
    makes every log link absolute, in the HTML and the PDF.
    `progress` is called with one line per step ("parsing…", "en: executing…", "en: html");
    None for silence.
    """
    from analysis.env.folder_records import resolve_log_dir
    from analysis.report.baseline import check_baseline
    from analysis.report.sections.logs import check_log_base_url
    from analysis.stats import METHODS

    langs = [check_lang(x) for x in _split(langs, ("en", "zh"), "language")]
    targets = _split(to, TARGETS, "output format")
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    root = resolve_log_dir(log_dir).resolve()
    check_baseline(baseline, store)
    epoch = 0
    if "pdf" in targets:
        from analysis.report.webpdf import source_date_epoch

        _check_browser()
        epoch = source_date_epoch()  # it dates the PDFs only
    if references is not None:  # a bad file is refused before any kernel starts
        from analysis.changes.references import load_references

        load_references(references)
    out = Path(out_dir or config.REPORTS_DIR).resolve()
    check_outside_stores(out, [Path(store)] if store else [])
    out.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda _message: None)

    def absolute(x):
        if not x:
            return None
        items = [x] if isinstance(x, (str, Path)) else list(x)
        return [str(Path(i).resolve()) for i in items]

    params = dict(log_dir=str(root), title=title, env=absolute(env),
                  topology=absolute(topology), method=method, warmup=warmup, measure=measure,
                  link_base=str(out), log_base_url=check_log_base_url(log_base_url) or None)
    result = Published(out)
    outputs: dict[str, dict[str, bytes]] = {}  # lang -> target -> bytes, written when all ran
    executed, errors = [], []
    with tempfile.TemporaryDirectory(prefix="dlperf-report-") as tmp:  # mode 0700
        folder = Path(tmp)
        logging.getLogger("papermill").addFilter(_quiet_kernel_errors)  # nbclient's logger
        try:
            with notebook_run.kernel(folder, _kernel_name(notebook)) as km:
                notebook_run.start(km, folder, KERNEL_WARM_UP)
                say("parsing…")
                t = time.perf_counter()
                data = prepared.compute(root, env, topology, method, warmup, measure, meta,
                                        baseline, store, threshold, references)
                prepared.save(data, folder / "data")
                result.seconds["prepare"] = time.perf_counter() - t
                params = dict(params, data_dir=str(folder / "data"))
                for lang in langs:
                    say(f"{lang}: executing…")
                    outputs[lang], nb = _execute_language(lang, params, Path(notebook), km,
                                                          folder, out, result)
                    if isinstance(nb, PublishError):
                        errors.append(nb)
                    else:
                        executed.append((lang, nb))
        finally:
            logging.getLogger("papermill").removeFilter(_quiet_kernel_errors)
        exporter = html_exporter() if "html" in targets and executed else None
        for lang, nb in executed:
            t = time.perf_counter()
            if exporter is not None:
                say(f"{lang}: html")
                others = [other for other, _ in executed if other != lang]
                outputs[lang]["html"] = html_page(exporter, nb, lang, others).encode("utf-8")
            result.seconds[f"{lang}.html"] = time.perf_counter() - t
        if "pdf" in targets and executed:
            t = time.perf_counter()
            for lang, _ in executed:
                say(f"{lang}: pdf")
            printed = _pdfs(executed, folder, epoch)
            for (lang, _), pdf in zip(executed, printed):
                outputs[lang]["pdf"] = pdf  # printed side by side: a share of the time each
                result.seconds[f"{lang}.pdf"] = (time.perf_counter() - t) / len(executed)
    for lang, contents in outputs.items():  # each atomically, in report order
        result.files[lang] = {}
        for target, data in contents.items():
            result.files[lang][target] = out / f"report_{lang}.{target}"
            atomic_write_bytes(result.files[lang][target], data)
    if errors:  # after writing what there is, a failed notebook included
        raise errors[0]
    return result


def _check_browser() -> None:
    """Refuse a PDF build whose Chromium is not there before any kernel starts (else it was
    said after every language had run)."""
    from analysis.report.webpdf import chromium_path

    exe = chromium_path()
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise PublishError(f"PDF export needs Chromium, and {exe} is not an executable file "
                           f"(set DLPERF_CHROMIUM to its path, or build --to html)")


#: How nbclient logs a kernel that did not start or died, before it raises the error that
#: the command shows.
_NBCLIENT_KERNEL_ERRORS = ("Error occurred while starting new kernel client",
                           "Kernel died while waiting for execute reply")
#: How jupyter_client says a kernel ended before it was ready.
_KERNEL_DIED_AT_START = "Kernel died before replying to kernel_info"


class KernelDied(PublishError):
    """The report kernel did not start or died while it executed; nothing is written."""


def _quiet_kernel_errors(record: logging.LogRecord) -> bool:
    """A logging filter that drops nbclient's record of a kernel that did not start or died,
    whose error the command shows (one line, not two)."""
    return not (isinstance(record.msg, str) and record.msg.startswith(_NBCLIENT_KERNEL_ERRORS))


def _kernel_name(notebook: str | Path) -> str:
    """The kernel `notebook` names (papermill's choice too), ``python3`` when none. Read as
    plain JSON: nbformat's import (its schema validator) would hold the kernel's start back."""
    return (json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
            .get("kernelspec", {}).get("name", "python3"))

