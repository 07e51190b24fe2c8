"""Publish reports: execute ``notebooks/20_report.ipynb`` with papermill once per language,
keep the executed notebook next to the outputs, and export it with nbconvert to one
self-contained HTML file (inputs hidden, images embedded) and a PDF (WebPDF through the
system Chromium).

Outputs in OUT_DIR, per language L: ``report_L.ipynb`` (executed), ``report_L.html``,
``report_L.pdf``, ``report_L.json`` (key figures).

The languages are built concurrently, each in its own kernel (and thread here), and the
logs are parsed once: the publisher fills ``OUT_DIR/.dlperf-cache`` while the kernels
start, and each kernel reads the parsed data from there (``analysis.report.cache``).
"""

from __future__ import annotations

import copy
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from analysis import config
from analysis.errors import DLPerfError, UsageError
from analysis.i18n import check_lang

REPORT_NOTEBOOK = config.NOTEBOOKS_DIR / "20_report.ipynb"
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE = "dlperf"
TARGETS = ("html", "pdf")
#: ISO 639-1 code for nbconvert's <html lang> (Chromium chooses CJK fonts by it).
LANGUAGE_CODE = {"en": "en", "zh": "zh"}
#: Folder inside OUT_DIR holding the parsed logs shared by the languages.
CACHE_DIR = ".dlperf-cache"


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


def execute(out_ipynb: Path, parameters: dict, notebook: Path = REPORT_NOTEBOOK,
            kernel_name: str | None = None) -> nbformat.NotebookNode:
    """Run the report notebook with papermill (cwd = the output folder)."""
    import papermill as pm

    try:
        return pm.execute_notebook(str(notebook), str(out_ipynb), parameters=parameters,
                                   cwd=str(out_ipynb.parent), kernel_name=kernel_name,
                                   progress_bar=False, log_output=False)
    except pm.PapermillExecutionError as exc:
        raise PublishError(f"{notebook.name} failed for {out_ipynb.name} "
                           f"(see the executed notebook there): {exc.ename}: {exc.evalue}") from exc


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


def _exporter_config(lang: str) -> dict:
    return dict(template_name=TEMPLATE, extra_template_basedirs=[str(TEMPLATES_DIR)],
                exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                exclude_anchor_links=True, language_code=LANGUAGE_CODE[lang], embed_images=True)


def to_html(nb: nbformat.NotebookNode, lang: str) -> str:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(**_exporter_config(lang)).from_notebook_node(nb)
    return body


def to_pdf(nb: nbformat.NotebookNode, lang: str) -> bytes:
    from analysis.report.webpdf import SystemChromiumWebPDFExporter

    exporter = SystemChromiumWebPDFExporter(**_exporter_config(lang))
    try:
        data, _ = exporter.from_notebook_node(nb)
    except RuntimeError as exc:
        raise PublishError(f"PDF export failed ({exporter.executable_path}): {exc}") from exc
    return data


def publish(log_dir: str | Path | None = None, out_dir: str | Path | None = None,
            langs="en,zh", to="html,pdf", env=None, topology=None, method: str = "dlperf",
            warmup: int | None = None, measure: int | None = None, title: str | None = None,
            notebook: str | Path = REPORT_NOTEBOOK, kernel_name: str | None = None) -> Published:
    """Write report_<lang>.{ipynb,html,pdf,json} for each language into `out_dir`.

    `log_dir` defaults to the bundled data/raw_logs, `out_dir` to reports/. `env` and
    `topology` are extra files (those inside `log_dir` are found automatically).
    """
    from analysis.report.inputs import resolve_log_dir
    from analysis.stats import METHODS

    langs = [check_lang(x) for x in _split(langs, ("en", "zh"), "language")]
    targets = _split(to, TARGETS, "output format")
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    root = resolve_log_dir(log_dir).resolve()
    out = Path(out_dir or config.REPORTS_DIR).resolve()
    out.mkdir(parents=True, exist_ok=True)

    def absolute(x):
        if not x:
            return None
        items = [x] if isinstance(x, (str, Path)) else list(x)
        return [str(Path(i).resolve()) for i in items]

    result = Published(out)
    cache_dir = out / CACHE_DIR

    def one(lang: str) -> tuple[dict[str, Path], dict[str, float]]:
        files: dict[str, Path] = {}
        seconds: dict[str, float] = {}
        params = dict(log_dir=str(root), lang=lang, title=title, env=absolute(env),
                      topology=absolute(topology), method=method, warmup=warmup,
                      measure=measure, link_base=str(out),
                      numbers_json=str(out / f"report_{lang}.json"), cache_dir=str(cache_dir))
        t0 = time.perf_counter()
        files["ipynb"] = out / f"report_{lang}.ipynb"
        nb = execute(files["ipynb"], params, Path(notebook), kernel_name)
        files["json"] = out / f"report_{lang}.json"
        t1 = time.perf_counter()
        seconds[f"{lang}.execute"] = t1 - t0
        nb = clean_for_export(nb, _title_of(files["json"]))
        if "html" in targets:
            files["html"] = out / f"report_{lang}.html"
            files["html"].write_text(to_html(nb, lang), encoding="utf-8")
        t2 = time.perf_counter()
        seconds[f"{lang}.html"] = t2 - t1
        if "pdf" in targets:
            files["pdf"] = out / f"report_{lang}.pdf"
            files["pdf"].write_bytes(to_pdf(nb, lang))
        seconds[f"{lang}.pdf"] = time.perf_counter() - t2
        return files, seconds

    with ThreadPoolExecutor(max_workers=len(langs), thread_name_prefix="dlperf-report") as pool:
        futures = {lang: pool.submit(one, lang) for lang in langs}
        t = time.perf_counter()
        _prepare(root, env, topology, method, warmup, measure, cache_dir)  # while kernels start
        result.seconds["prepare"] = time.perf_counter() - t
        for lang, fut in futures.items():  # report order; the first failure is raised
            files, seconds = fut.result()
            result.files[lang] = files
            result.seconds.update(seconds)
    return result


def _prepare(root, env, topology, method, warmup, measure, cache_dir: Path) -> None:
    """Parse the logs into the shared cache (a failure here is left to the kernels, which
    parse themselves and report the error in their notebook)."""
    from analysis.report import cache

    try:
        cache.prepare(root, env=env, topology=topology, method=method, warmup=warmup,
                      measure=measure, cache_dir=cache_dir)
    except Exception:  # noqa: BLE001 - the notebook shows the real error
        pass


def _title_of(numbers_json: Path) -> str | None:
    import json

    try:
        return json.loads(numbers_json.read_text(encoding="utf-8")).get("title")
    except (OSError, ValueError):
        return None
