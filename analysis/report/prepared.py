"""The language-independent data of a report, computed once per build and handed to the
report kernels as Parquet files.

`dlperf report` parses the logs while the notebook kernels start, writes the frames with
:func:`save` into a folder it made for this build only (``mkdtemp``: mode 0700, removed
afterwards), and each kernel reads them with :func:`load`; the charts of the stock report
notebook are drawn beside the kernel and handed over as PNG files (:func:`draw_charts`,
:class:`ChartHandover`). The hand-over holds data only:
nothing is unpickled, so a file planted in an output folder cannot run code. Environment,
topology and campaign records are small; each kernel reads them again from LOG_DIR.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.campaign.suite_version import suite_commit
from analysis.collect import ParseResult
from analysis.env import folder_records
from analysis.env.folder_records import CampaignInput, EnvInput, TopoInput
from analysis.errors import DLPerfError, UsageError
from analysis.fsutil import atomic_write_text
from analysis.report.baseline import Changes
from analysis.report.vs_reference import ReferenceRatios

#: Written last by :func:`save`: the frames beside it are complete.
READY = "ready.json"
#: The comparison with a baseline (``--baseline``), when there is one.
CHANGES = "changes"
#: The matches of a references file (``--references``), when there is one.
REFERENCES = "references"
#: How long :func:`load` waits for the publisher to finish parsing (seconds), and a chart
#: cell for the publisher's drawing of it.
WAIT_S = 900.0
#: Folder, beside the frames, of the charts the publisher draws (:func:`draw_charts`).
CHARTS_DIR = "charts"


@dataclass
class Prepared:
    """Everything a report shows that does not depend on the language."""

    log_dir: Path
    result: ParseResult
    runs: pd.DataFrame
    summary: pd.DataFrame
    trace: pd.DataFrame
    envs: list[EnvInput]
    topologies: list[TopoInput]
    campaign: CampaignInput
    suite_commit: str = ""
    changes: Changes | None = None  # the comparison with --baseline
    references: ReferenceRatios | None = None  # the matches of --references
    agreement: pd.DataFrame | None = None  # stats.method_agreement: the methods per case
    #: charts built once for all the languages of a build (``plots.build_once``), by name
    #: and settings; None where data are not shared by languages (each built for its own)
    charts: dict | None = None

    def frames(self) -> dict[str, pd.DataFrame]:
        """The frames :func:`save` writes, by file name."""
        out = {"observations": self.result.observations, "parsed_runs": self.result.runs,
               "problems": self.result.problems, "runs": self.runs, "summary": self.summary,
               "trace": self.trace}
        if self.agreement is not None:
            out["agreement"] = self.agreement
        return out

    @property
    def disagreements(self) -> dict[tuple, float]:
        """Case key (``tables.case_key``) -> largest / smallest median − 1 over the
        throughput methods, for the cases where they differ by more than 5 %."""
        from analysis.report.tables import case_key

        a = self.agreement
        if a is None or a.empty:
            return {}
        return {case_key(r): float(r["difference"]) for _, r in a[a["disagree"]].iterrows()}


def compute(log_dir=None, env=None, topology=None, method: str = "dlperf",
            warmup: int | None = None, measure: int | None = None,
            meta: dict | None = None, baseline: str | Path | None = None,
            store: str | Path | None = None, threshold: float | None = None,
            references: str | Path | None = None) -> Prepared:
    """Parse and summarise `log_dir` (default: the bundled data/raw_logs); `meta` states run
    fields the logs and paths do not. With `baseline` (a log folder, a Parquet export or, with
    `store`, a stored campaign) the cases are also compared with it at `threshold`; with
    `references` (a references file) they are matched with its references."""
    from analysis import stats
    from analysis.collect import parse_paths
    from analysis.stats.agreement import method_agreement, runs_by_method

    root = folder_records.resolve_log_dir(log_dir)
    result = parse_paths([root], meta=meta)
    by_method = runs_by_method(result, warmup, measure)  # the report's own method among them
    runs = by_method[method]
    summary = stats.summarize(result, method=method, warmup=warmup, measure=measure, runs=runs)
    trace = stats.iteration_throughput(result)
    agreement = method_agreement(by_method)
    envs, topos, camp = folder_records.gather(root, env, topology)
    changes = None
    if baseline is not None:
        from analysis.changes.verdict import DEFAULT_THRESHOLD
        from analysis.report.baseline import compare_with

        changes = compare_with(baseline, store, root, runs, summary, envs, method,
                               DEFAULT_THRESHOLD if threshold is None else threshold)
    ratios = None
    if references is not None:
        from analysis.report import vs_reference

        ratios = vs_reference.match(references, summary, runs, envs)
    return Prepared(root, result, runs, summary, trace, envs, topos, camp, suite_commit(),
                    changes, ratios, agreement)


def _json_columns(frame: pd.DataFrame) -> list[str]:
    """Object columns holding mappings or lists (run parameters): Parquet would turn them
    into structs with every key of every row, so they travel as JSON text."""
    return [c for c in frame.columns if frame[c].dtype == object
            and frame[c].map(lambda v: isinstance(v, (dict, list))).any()]


def save(data: Prepared, folder: str | Path, charts: ChartPlan | None = None) -> None:
    """Write `data`'s frames into `folder` as Parquet, then the READY file; with `charts`,
    READY promises the kernel those charts (:func:`draw_charts` draws them next)."""
    folder = Path(folder)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    as_json: dict[str, list[str]] = {}
    as_object: dict[str, list[str]] = {}  # text columns Parquet would read back as str
    for name, frame in data.frames().items():
        cols = _json_columns(frame)
        as_object[name] = [c for c in frame.columns if frame[c].dtype == object and c not in cols]
        if cols:
            frame = frame.assign(**{c: frame[c].map(
                lambda v: None if v is None else json.dumps(v, default=str)) for c in cols})
        as_json[name] = cols
        frame.to_parquet(folder / f"{name}.parquet")
    if data.changes is not None:
        data.changes.table.to_parquet(folder / f"{CHANGES}.parquet")
    if data.references is not None:
        data.references.table.to_parquet(folder / f"{REFERENCES}.parquet")
    if charts is not None:
        (folder / CHARTS_DIR).mkdir(exist_ok=True)
    atomic_write_text(folder / READY, json.dumps({
        "log_dir": str(data.log_dir), "suite_commit": data.suite_commit, "json_columns": as_json,
        "object_columns": as_object, "charts": None if charts is None else charts.meta(),
        CHANGES: None if data.changes is None else data.changes.meta(),
        REFERENCES: None if data.references is None else data.references.meta()}))


def _read(folder: Path, name: str, json_columns: list[str],
          object_columns: list[str] = ()) -> pd.DataFrame:
    frame = pd.read_parquet(folder / f"{name}.parquet")
    for c in object_columns:
        frame[c] = frame[c].astype(object)
    for c in json_columns:
        frame[c] = pd.Series([json.loads(v) if isinstance(v, str) else None for v in frame[c]],
                             index=frame.index, dtype=object)
    return frame


def load(folder: str | Path, env=None, topology=None, wait_s: float = WAIT_S) -> Prepared:
    """The data :func:`save` wrote into `folder`, once it is complete (waiting up to `wait_s`
    seconds for the publisher, which made the folder and parses while the kernels start)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"no such data folder: {folder}")
    ready = folder / READY
    deadline = time.monotonic() + wait_s
    while not ready.exists():
        if time.monotonic() > deadline:
            raise DLPerfError(f"no parsed data in {folder} after {wait_s:.0f} s")
        time.sleep(0.05)
    meta = json.loads(ready.read_text(encoding="utf-8"))
    cols = meta["json_columns"]
    objects = meta.get("object_columns", {})
    frames = {name: _read(folder, name, cols.get(name, []), objects.get(name, []))
              for name in cols}
    root = Path(meta["log_dir"])
    envs, topos, camp = folder_records.gather(root, env, topology)
    result = ParseResult(frames["observations"], frames["parsed_runs"], frames["problems"])
    changes = None
    if meta.get(CHANGES) is not None:
        changes = Changes(pd.read_parquet(folder / f"{CHANGES}.parquet"), **meta[CHANGES])
    ratios = None
    if meta.get(REFERENCES) is not None:
        ratios = ReferenceRatios(pd.read_parquet(folder / f"{REFERENCES}.parquet"),
                                 **meta[REFERENCES])
    data = Prepared(root, result, frames["runs"], frames["summary"], frames["trace"], envs,
                    topos, camp, meta["suite_commit"], changes, ratios, frames.get("agreement"),
                    charts={})
    if meta.get("charts"):  # drawn beside the kernel
        handover = ChartHandover(data, folder / CHARTS_DIR, plan=ChartPlan(**meta["charts"]),
                                 wait_s=wait_s)
        data.charts = handover.charts()
        handover.take_last()  # the publisher starts from the first
    return data


_LOADED: dict[tuple, Prepared] = {}


def load_once(folder: str | Path, env=None, topology=None, wait_s: float = WAIT_S) -> Prepared:
    """:func:`load`, once per folder in this process: the report kernel builds both
    languages from one reading of the data (the folder is private to one build)."""
    key = (str(Path(folder).resolve()), repr(env), repr(topology))
    if key not in _LOADED:
        _LOADED[key] = load(folder, env, topology, wait_s)
    return _LOADED[key]


# ---- charts drawn beside the kernel ------------------------------------------------------
# The publisher, idle while the kernel imports and builds the tables, draws the charts of the
# stock report notebook (every language) and hands them over as PNG files; the kernel's chart
# cells show them. Two processes on two cores: the drawing, the largest part of a build,
# runs beside the kernel's work instead of after it. Whoever starts a chart claims it (a file
# made with O_EXCL) and draws it in every language: the publisher in report order, the
# kernel, when it waits for a chart, the last one no one has started. Each chart is drawn
# by the same code from the same data (Parquet gives the kernel back the publisher's
# frames), so the images are those the kernel would draw (tests/report/test_speed_charts.py).


@dataclass(frozen=True)
class ChartPlan:
    """The charts drawn beside the kernel: chart names, in each language, for one measured
    window (the Report's method, warmup and measure: the key of ``Prepared.charts``)."""

    names: tuple[str, ...]
    langs: tuple[str, ...]
    method: str
    warmup: int | None = None
    measure: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "langs", tuple(self.langs))

    def meta(self) -> dict:
        return {"names": list(self.names), "langs": list(self.langs), "method": self.method,
                "warmup": self.warmup, "measure": self.measure}

    def key(self, name: str) -> tuple:
        return (name, self.method, self.warmup, self.measure)


@dataclass(frozen=True)
class DrawnChart:
    """A chart as drawn: shown as its PNG, with the text the figure gives for itself (the
    executed notebook holds the same outputs as with the figure)."""

    png: bytes
    text: str

    def _repr_png_(self) -> bytes:
        return self.png

    def __repr__(self) -> str:
        return self.text


def _drawn(fig) -> DrawnChart | None:
    return None if fig is None else DrawnChart(fig._repr_png_(), repr(fig))


def claim(folder: Path, name: str, who: str) -> bool:
    """Claim chart `name` for `who` ("publisher" or "kernel"): False when it is taken."""
    try:
        fd = os.open(folder / f"{name}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as fh:
        fh.write(who)
    return True


def claimed_by(folder: Path, name: str) -> str:
    """Who claimed chart `name` ('' when no one has)."""
    try:
        return (folder / f"{name}.claim").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


class ChartHandover:
    """The kernel's side of a :class:`ChartPlan`: each chart as the publisher drew it, or
    drawn here, where the kernel claimed it (the last chart, when the data is loaded: the
    publisher starts from the first; the chart its cell asks for when no one has started
    it; the last one no one has started while it waits for another)."""

    def __init__(self, data: Prepared, folder: Path, plan: ChartPlan, wait_s: float = WAIT_S):
        self.folder, self.plan, self.wait_s = Path(folder), plan, wait_s
        # the frames, with a chart cache of their own for the charts drawn here
        self._data = dataclasses.replace(data, charts={})
        self._shown: dict[tuple[str, str], DrawnChart | None] = {}
        self._failed: dict[str, Exception] = {}

    def charts(self) -> dict:
        """``Prepared.charts`` of the kernel: each planned chart by its key."""
        return {self.plan.key(n): _PromisedChart(self, n) for n in self.plan.names}

    def localized(self, name: str, lang: str) -> DrawnChart | None:
        """Chart `name` in `lang` (None: no data to draw); waits for the publisher's drawing,
        drawing others meanwhile; a failed drawing raises here as it would have in the
        kernel."""
        if lang not in self.plan.langs:
            raise UsageError(f"chart {name!r} was drawn for {', '.join(self.plan.langs)}, "
                             f"not {lang!r}")
        if claimed_by(self.folder, name) == "kernel" or claim(self.folder, name, "kernel"):
            return self._draw(name, lang)
        png, none, error = (_chart_file(self.folder, name, lang, kind)
                            for kind in ("png", "none", "error"))
        deadline = time.monotonic() + self.wait_s
        while True:
            if png.exists():
                text = _chart_file(self.folder, name, lang, "txt").read_text("utf-8")
                return DrawnChart(png.read_bytes(), text)
            if none.exists():
                return None
            if error.exists():
                raise DLPerfError(f"chart {name!r} ({lang}): {error.read_text('utf-8')}")
            if time.monotonic() > deadline:
                raise DLPerfError(f"chart {name!r} ({lang}) not drawn after {self.wait_s:.0f} s")
            if not self.take_last():
                time.sleep(0.01)

    def take_last(self) -> bool:
        """Claim and draw, in every language, the last chart no one has started: the kernel
        shows it later (drawn now, while the kernel waits anyway, the later languages do not
        wait for it). False when every chart is taken."""
        for name in reversed(self.plan.names):
            if claim(self.folder, name, "kernel"):
                try:
                    for lang in self.plan.langs:
                        self._draw(name, lang)
                except Exception as exc:  # noqa: BLE001 - raised by the chart's own cell
                    self._failed[name] = exc
                return True
        return False

    def _draw(self, name: str, lang: str) -> DrawnChart | None:
        if name in self._failed:
            raise self._failed[name]
        if (name, lang) not in self._shown:
            from analysis.report.build import Report

            rep = Report(self._data, lang=lang, method=self.plan.method,
                         warmup=self.plan.warmup, measure=self.plan.measure)
            self._shown[name, lang] = _drawn(rep.chart(name))
        return self._shown[name, lang]


class _PromisedChart:
    """An entry of ``Prepared.charts`` for a planned chart (``Report.chart`` asks it for its
    language)."""

    def __init__(self, handover: ChartHandover, name: str):
        self.handover, self.name = handover, name

    def localized(self, lang: str) -> DrawnChart | None:
        return self.handover.localized(self.name, lang)


def ipython_imported() -> None:
    """Import IPython in full before the publisher draws: matplotlib's first canvas of a
    class reads ``sys.modules["IPython"].version_info`` without importing it, and while the
    build thread was importing IPython (for the kernel's client) a half-imported module
    failed a chart ("partially initialized module 'IPython' has no attribute
    'version_info'", once in a fresh-clone CI run). ``import`` waits on the module's import
    lock, and once IPython is whole no later canvas can see it half-made (0.09 s, which
    the build thread would spend anyway)."""
    try:
        import IPython  # noqa: F401
    except ImportError:  # a publisher without IPython: nothing can half-import it
        pass


def draw_charts(data: Prepared, folder: str | Path, plan: ChartPlan,
                stop: Callable[[], bool] = lambda: False) -> list[str]:
    """Draw `plan`'s charts of `data` into `folder`/charts, as the kernel's Reports would
    (each chart built once for every language), those of the first language first: the
    kernel shows them in that order. Skips the charts the kernel has claimed; stops early
    when `stop()` says so. Returns the names of the charts drawn here."""
    from analysis.report.build import Report

    ipython_imported()
    out = Path(folder) / CHARTS_DIR
    out.mkdir(exist_ok=True)
    data.charts = {}  # the charts' shared builds, as a kernel keeps them
    mine: list[str] = []
    for lang in plan.langs:
        rep = Report(data, lang=lang, method=plan.method, warmup=plan.warmup,
                     measure=plan.measure)
        for name in plan.names:
            if stop():
                return mine
            if lang == plan.langs[0] and claim(out, name, "publisher"):
                mine.append(name)
            if name not in mine:
                continue
            try:
                fig = rep.chart(name)
            except Exception as exc:  # noqa: BLE001 - the kernel's cell raises it
                _write(_chart_file(out, name, lang, "error"), f"{type(exc).__name__}: {exc}")
                continue
            if fig is None:
                _write(_chart_file(out, name, lang, "none"), b"")
                continue
            _write(_chart_file(out, name, lang, "txt"), repr(fig).encode("utf-8"))
            _write(_chart_file(out, name, lang, "png"), fig._repr_png_())
    return mine


def _chart_file(folder: Path, name: str, lang: str, kind: str) -> Path:
    """charts/<name>.<lang>.<kind>: png and txt (the figure), none (nothing to draw) or
    error (why the drawing failed)."""
    return folder / f"{name}.{lang}.{kind}"


def _write(path: Path, data: bytes | str) -> None:
    """`data` into `path`, whole when it appears (the build's private folder: no fsync)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    os.replace(tmp, path)
