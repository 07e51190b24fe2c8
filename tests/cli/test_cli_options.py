"""Item 19: the default summary table fits 120 columns; --help states every option's default
and choices; numbers that must be positive are usage errors naming the option."""

from __future__ import annotations

import re

import pytest

from analysis.cli import build_parser

from ._helpers import CAMPAIGN, ROOT, run_cli

FIXTURES = ROOT / "tests" / "data"
SUBCOMMANDS = ("parse", "summarize", "report", "env", "topo", "run")


@pytest.mark.parametrize("folder", [CAMPAIGN, FIXTURES / "oneflow_gpt", FIXTURES / "megatron",
                                    FIXTURES / "oneflow_cnn", FIXTURES / "dll_tensorflow"],
                         ids=lambda p: p.name)
def test_default_table_fits_120_columns(dlperf_exe, folder):
    r = run_cli(dlperf_exe, "summarize", folder)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) >= 2 and max(map(len, lines)) <= 120, max(map(len, lines))
    assert "samples/s" in lines[0] and "--all-columns" in r.stdout


def test_all_columns_still_gives_every_column(dlperf_exe):
    r = run_cli(dlperf_exe, "summarize", CAMPAIGN, "--all-columns")
    assert r.returncode == 0, r.stderr
    head = r.stdout.splitlines()[0].split()
    assert {"throughput_mean", "throughput_std", "num_devices", "interval_low", "outliers"} <= set(head)


def _subparsers():
    parser = build_parser()
    [sub] = [a for a in parser._actions if a.choices and isinstance(a.choices, dict)]
    return sub.choices


def _help_entries(text: str) -> dict[str, str]:
    """Option string -> its help text (one line, spaces collapsed) from `--help` output."""
    entries, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^  (-[-\w]+)", line)
        if m:
            current = m.group(1)
            entries[current] = line
        elif current and line.startswith("    "):
            entries[current] += " " + line.strip()
        else:
            current = None
    return {k: " ".join(v.split()) for k, v in entries.items()}


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_help_gives_every_default_and_choice(dlperf_exe, name):
    r = run_cli(dlperf_exe, name, "--help")
    assert r.returncode == 0, r.stderr
    entries = _help_entries(r.stdout)
    for action in _subparsers()[name]._actions:
        if not action.option_strings or action.nargs == 0:
            continue  # positionals and on/off flags
        entry = entries[action.option_strings[0]]
        if not action.required:
            assert "default" in entry, (name, entry)
        for choice in action.choices or ():
            assert choice in entry, (name, choice, entry)


@pytest.mark.parametrize("args, option", [
    (["summarize", CAMPAIGN, "--warmup", "-1"], "--warmup"),
    (["summarize", CAMPAIGN, "--measure", "0"], "--measure"),
    (["summarize", CAMPAIGN, "--method", "window", "--measure", "-5"], "--measure"),
    (["report", CAMPAIGN, "--warmup", "-3", "--to", "html"], "--warmup"),
    (["report", CAMPAIGN, "--measure", "-1", "--to", "html"], "--measure"),
    (["env", "--timeout", "nan"], "--timeout"),
    (["env", "--timeout", "-2"], "--timeout"),
])
def test_negative_numbers_are_usage_errors(dlperf_exe, tmp_path, args, option):
    r = run_cli(dlperf_exe, *args, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert option in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_export_given_where_logs_are_read_is_a_usage_error(tmp_path):
    """`summarize`/`report` of a `dlperf parse` Parquet export: a one-line usage error
    naming the commands that take exports (was an empty table with exit 0)."""
    from analysis.collect import parse_paths
    from analysis.env.folder_records import resolve_log_dir
    from analysis.errors import UsageError

    export = tmp_path / "x.parquet"
    export.write_bytes(b"PAR1")
    with pytest.raises(UsageError, match="is a `dlperf parse` export, not a log"):
        parse_paths([export])
    with pytest.raises(UsageError, match="a report reads a log folder"):
        resolve_log_dir(export)


@pytest.mark.parametrize("args, said", [
    (["summarize", CAMPAIGN, "--warmup", "30"],
     "warmup has no effect with the dlperf method, which reads neither option"),
    (["report", CAMPAIGN, "--measure", "50", "--to", "html"],
     "measure has no effect with the dlperf method, which reads neither option"),
    (["summarize", CAMPAIGN, "--method", "reported", "--warmup", "5", "--measure", "5"],
     "measure has no effect with the reported method, which reads warmup"),
])
def test_a_window_option_the_method_does_not_read_is_a_usage_error(dlperf_exe, tmp_path,
                                                                    args, said):
    """`--warmup 30` with the default dlperf method was ignored without a word: the user
    believed the window had moved (noticed by the notebook review)."""
    r = run_cli(dlperf_exe, *args, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.strip().splitlines() == [f"dlperf: error: {said}; leave it out, or choose "
                                             "the window method (warmup and measure) or "
                                             "reported (warmup)"]
    assert list(tmp_path.iterdir()) == []


def test_window_options_of_the_window_method_are_taken(dlperf_exe):
    r = run_cli(dlperf_exe, "summarize", CAMPAIGN, "--method", "window", "--warmup", "30",
                "--measure", "50")
    assert r.returncode == 0, r.stderr
