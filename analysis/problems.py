"""Problems are data: what went wrong, where, and why — collected, never raised by default."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis.fsutil import printable

if TYPE_CHECKING:
    import pandas as pd

#: Every problem kind with a one-line meaning (shown in reports' Problems section).
KINDS = {
    "unknown_format": "no parser recognises the file",
    "undecodable_bytes": "the file holds bytes that are not valid UTF-8 (read with replacement)",
    "bad_line": "a line looks like a metric line of the family but could not be read",
    "no_training_lines": "the log has no training lines (e.g. a non-master node's log)",
    "missing_timestamps": "the lines carry no timestamps (or whole-second ones, a second more "
                          "than 5 % of the window, with nothing printed to time it closer, "
                          "or checking the printed rates a figure rests on only beyond 5 %), "
                          "so timestamp windows are undefined",
    "truncated": "fewer iterations than the method's window needs",
    "metadata_conflict": "the path, a meta file or --meta, and the log disagree about the "
                         "run; the log wins, and a statement wins over the path",
    "missing_metadata": "a case field (nodes, GPUs, batch size, ...) is unknown",
    "unreadable_file": "the file or folder could not be opened, listed or decompressed",
    "bad_record_field": "a field of an environment record has the wrong type (a number for a "
                        "version, \"4\" for a GPU count): that field is not used, the rest is",
    "too_large": "the file exceeds the size limit (DLPERF_MAX_LOG_BYTES); only its beginning was read",
    "accumulation_implied": "a meta file or --meta states a global batch that is k >= 2 times "
                            "the run's devices x per-device batch: the figures count the stated "
                            "samples an iteration, as if each iteration accumulated k batches "
                            "(k the log states, or at most 8); the note names k",
    "duplicate_run": "the same run was found twice (another file of the same run, or the same "
                     "content); it is counted once, but where the logs cannot tell a copy "
                     "from a rerun made deterministic (stamps too coarse): both are counted",
    "stray_log": "a log in a campaign folder that the campaign did not run (no done marker "
                 "saying ok, not done in status.json; left by an earlier campaign or put there "
                 "by hand), or whose done marker says it failed or is another run's while "
                 "status.json lists it as done (the marker, the run's own record, is "
                 "followed): left out of the runs and the figures",
    "bad_done_marker": "a run's done marker cannot be read (not JSON: a hand edit, a disk "
                       "fault): nothing says whether the campaign finished the run; it is "
                       "counted (its log is there), unless status.json says otherwise",
    "missing_done_marker": "a log in a campaign folder whose done marker is gone while "
                           "status.json lists the run as done: counted, as status.json says",
    "status_conflict": "a run's done marker says it finished while status.json lists it as "
                       "failed (a hand edit): counted, as its marker says",
    "missing_log": "a done marker that says its run finished beside no log of the run, or a "
                   "run status.json lists as done with neither (deleted or not copied): "
                   "the run is lost from the figures",
    "parser_error": "the parser failed unexpectedly on this file (a bug: please report it)",
    "method_fallback": "the requested method does not apply to the run: its reason names the "
                       "method used instead, or the one to ask for",
    "outlier": "the repeat is more than 3 scaled MADs (at least 0.5 % each) from the case median",
    "non_finite_value": "a printed value is nan, inf or -inf: left out of the data",
    "window_gap": "a training line inside the method's window has no readable throughput "
                  "(garbled, or nan/inf): the window's lines cannot be counted, so no figure",
    "impossible_value": "a throughput, latency or memory below zero, a zero latency, an MLPerf "
                        "run_stop not after its run_start, or a run count (nodes, GPUs, batch, "
                        "repeat) outside 1 to 2,147,483,647: left out of the data",
    "zero_throughput": "a printed throughput of zero (a stalled interval, or one not yet timed) "
                       "is not a measurement of speed: the methods that read printed "
                       "throughputs leave it out",
    "run_aborted": "an MLPerf run that did not finish: its run_stop has a status other than "
                   "success, the log has no run_stop, or no eval_accuracy it prints reaches "
                   "the benchmark's quality target; it has no time to train, and its "
                   "case's score counts it as an aborted run",
    "several_runs": "an MLPerf log whose run_start or run_stop comes at more than one time "
                    "(runs written to one file, a run restarted): the rules score one run a "
                    "log, so it has no time to train and its case no score",
    "foreign_gpu_sample": "GPU samples beside a log that are not its run's: of a GPU the run "
                          "did not use (its CUDA_VISIBLE_DEVICES), of more GPUs than it used "
                          "with nothing saying which were its, or taken outside the run's "
                          "time: left out of its memory peak and energy",
    "timestamps_backwards": "a line's timestamp is earlier than the previous line's "
                            "(no throughput from a window across it)",
    "timestamps_jump": "inside a throughput window, the time between two lines is far longer "
                       "or far shorter than the iterations between them take elsewhere in it "
                       "(a clock step forward or back, a stall, validation): no throughput "
                       "from that window; in an MLPerf run, a block far slower than the "
                       "others: the time to train is kept, flagged",
    "figure_mismatch": "a figure and an independent statement of its log are more than 5 % "
                       "apart: a figure from timestamps and the throughput the lines print; a "
                       "closing figure and every statement of the lines; the stated global "
                       "batch and the samples an iteration the printed rates, latencies or "
                       "sample counts imply by the clock: the figure is kept, both values "
                       "are named",
    "batch_changed": "the log states another batch size part-way (a job restarted in the "
                     "same log with another batch): its parts are two runs, so no figure",
    "unit_not_samples": "a throughput is printed in a unit that is not samples per second "
                        "(tokens/s): kept under its own metric name, not read as the run's "
                        "throughput",
    "meta_contradicted": "the log's lines contradict a run field its own argument dump "
                         "states (the sequence length the iterations run, the print "
                         "frequency the lines advance by, the iterations its steps number), "
                         "or, stating no print frequency, steps advancing a multiple of the "
                         "batch a line, which may count samples: the lines' value is used "
                         "(a figure is kept, flagged), or the field is left unknown where "
                         "they vary",
    "mixed_configuration": "repeats placed in one case state different configurations (their "
                           "argument dumps differ in the keys named, e.g. compile or lr, or "
                           "their environment records in variables, e.g. "
                           "NCCL_NVLS_ENABLE or CUDA_LAUNCH_BLOCKING): they are not repeats "
                           "of one case, and its "
                           "median mixes them",
    "wide_spread": "the repeats of a case are further apart than the spread threshold "
                   "(--spread-threshold, default 5%): its median stands for runs that disagree",
    "steps_backwards": "training steps repeat or go back, e.g. a log appended twice "
                       "(no throughput from a window across it); a step repeated with a "
                       "larger printed skipped_steps count (AMP skipped it) is not one",
    "evaluation_in_figure": "every interval of the figure's window holds an evaluation or "
                            "checkpoint save line, and the run's others, if any, are its "
                            "warm-up or end (slower than training, never faster): no interval "
                            "times training alone, so the figure counts their time as "
                            "training: the figure is kept, flagged",
    "rates_other_clock": "the rates the lines print are a steady 1.05 to 1.2 times the rate "
                         "their timestamps give over the whole run, varying between intervals "
                         "as another clock's would (the same ratio on every interval, or one "
                         "moved by the stamps' own delay or resolution alone, is the same clock "
                         "and a wrong batch: figure_mismatch): the program times its "
                         "iterations by another clock (compute only?), or the stated batch is "
                         "that ratio too small: the log cannot tell which; the figure, from "
                         "the timestamps, is kept, flagged with the ratio",
}

#: Longest `text` kept on a problem; longer text (a 200 MB line) becomes an excerpt.
#: Kinds that say what was left out of a run and why, its figures its own: listed with the
#: others, but not an error under ``--strict`` (a node-wide sampler's other GPUs are not a
#: fault of the run; a global batch that accumulation explains may be what ran). Printed
#: rates a steady ratio off the timestamps are not among them: another clock and a batch
#: stated that ratio too small look alike under noisy stamps, so the figure may be wrong.
NOTES = frozenset({"foreign_gpu_sample", "accumulation_implied"})


def strict_failures(problems: list[Problem]) -> list[Problem]:
    """The problems ``--strict`` fails on: all but `NOTES`."""
    return [p for p in problems if p.kind not in NOTES]


EXCERPT_CHARS = 300


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` itself when short, else its first `limit` characters, an ellipsis and the
    original length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text):,} characters]"


@dataclass(frozen=True)
class Problem:
    source: str
    line: int | None
    kind: str
    reason: str
    text: str = ""
    run_id: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown problem kind {self.kind!r}; valid: {sorted(KINDS)}")
        for name in ("source", "run_id", "reason", "text"):  # odd file names: \xNN
            object.__setattr__(self, name, printable(getattr(self, name)))
        if len(self.text) > EXCERPT_CHARS:
            object.__setattr__(self, "text", excerpt(self.text))


def to_frame(problems: list[Problem]) -> pd.DataFrame:
    """Problems as a frame with the columns of `schema.PROBLEMS`."""
    import pandas as pd  # not at import: discovery runs without pandas

    from analysis import schema

    if not problems:
        return schema.empty(schema.PROBLEMS)
    df = pd.DataFrame(
        {
            "run_id": [p.run_id for p in problems],
            "source": [p.source for p in problems],
            "line": pd.array([p.line for p in problems], dtype="Int64"),
            "kind": [p.kind for p in problems],
            "reason": [p.reason for p in problems],
            "text": [p.text for p in problems],
        }
    )
    return schema.coerce(df, schema.PROBLEMS)


#: Kinds of :func:`gathered` that no parser reports: a run the campaign did not finish.
FAILED_RUN = "failed_run"


def gathered(problems: pd.DataFrame, runs: pd.DataFrame,
             failed: Iterable[tuple[str, str, str]] = ()) -> pd.DataFrame:
    """Every problem of a log folder in one frame (the columns of `schema.PROBLEMS`): what
    parsing found (`problems`), runs the campaign's done markers say did not finish
    (`failed`: (run, state, reason), as ``folder_records.CampaignInput.failed``), what the
    throughput method found in `runs` (``analysis.stats.run_throughput``) that parsing did not,
    and each outlier repeat of `runs`. Parsing alone sees only the first of these."""
    import pandas as pd

    from analysis import schema

    known = set(zip(problems["run_id"], problems["kind"]))
    new = [k != "" and (r, k) not in known for r, k in zip(runs["run_id"], runs["problem_kind"])]
    method = runs[new]
    outliers = runs[runs["outlier"].fillna(False).astype(bool)]
    rows = [
        *({"run_id": run, "source": "", "kind": FAILED_RUN,
           "reason": f"did not finish ({state or 'no state'}): {reason or 'no reason given'}"}
          for run, state, reason in failed),
        *({"run_id": r.run_id, "source": r.source, "kind": r.problem_kind, "reason": r.problem}
          for r in method.itertuples(index=False)),
        *({"run_id": r.run_id, "source": r.source, "kind": "outlier",
           "reason": f"throughput {r.throughput:,.2f}: {KINDS['outlier']}"}
          for r in outliers.itertuples(index=False)),
    ]
    extra = pd.DataFrame(rows, columns=["run_id", "source", "kind", "reason"]).assign(
        line=pd.NA, text="")
    frames = [f for f in (problems, extra) if not f.empty]
    if not frames:
        return schema.empty(schema.PROBLEMS)
    return schema.coerce(pd.concat(frames, ignore_index=True)[list(problems.columns)],
                         schema.PROBLEMS)
