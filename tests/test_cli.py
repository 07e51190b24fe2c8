"""The `dlperf` console script: usage errors, exit codes, formats (real subprocesses)."""

import subprocess


def _run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)


def test_help_lists_the_subcommands(dlperf_exe):
    r = _run(dlperf_exe, "--help")
    assert r.returncode == 0
    for cmd in ("parse", "summarize"):
        assert cmd in r.stdout


def test_missing_path_is_a_usage_error(dlperf_exe, tmp_path):
    r = _run(dlperf_exe, "summarize", str(tmp_path / "nope"))
    assert r.returncode == 2
    assert "no such file or folder" in r.stderr and "nope" in r.stderr


def test_unknown_method_is_a_usage_error(dlperf_exe, tmp_path):
    r = _run(dlperf_exe, "summarize", str(tmp_path), "--method", "fastest")
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_parse_rejects_unknown_output_suffix(dlperf_exe, tmp_path):
    r = _run(dlperf_exe, "parse", str(tmp_path), "-o", str(tmp_path / "out.xlsx"))
    assert r.returncode == 2 and ".parquet or .csv" in r.stderr


def test_unknown_format_alone_is_one_error_line(dlperf_exe, tmp_path):
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / "r50_b64_fp32_1.log").write_text("hello\nnothing to see\n")
    r = _run(dlperf_exe, "summarize", str(tmp_path))
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr == (f"dlperf: error: no log of a known format under {tmp_path}: 1 file "
                        "looked at (1 of no known format)\n")
    strict = _run(dlperf_exe, "summarize", str(tmp_path), "--strict")
    assert strict.returncode == 3 and "unknown_format" in strict.stderr


def test_empty_folder_is_one_error_line_and_no_table(dlperf_exe, tmp_path):
    r = _run(dlperf_exe, "summarize", str(tmp_path), "--format", "csv")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"dlperf: error: no logs found under {tmp_path}\n"


def test_csv_header_names_the_summary_columns(dlperf_exe, data_dir):
    r = _run(dlperf_exe, "summarize", str(data_dir / "dll_pytorch" / "seed003_2020"),
             "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("framework,model,precision")


def test_parse_writes_observations_runs_and_problems(dlperf_exe, data_dir, tmp_path):
    import pandas as pd

    src = data_dir / "dll_pytorch" / "seed003_2020"
    for ext in ("parquet", "csv"):
        out = tmp_path / f"obs.{ext}"
        r = _run(dlperf_exe, "parse", str(src), "-o", str(out))
        assert r.returncode == 0, r.stderr
        read = pd.read_parquet if ext == "parquet" else pd.read_csv
        obs, runs = read(out), read(tmp_path / f"obs.runs.{ext}")
        assert (tmp_path / f"obs.problems.{ext}").exists()
        assert f"{len(obs)} observations from {len(runs)} runs" in r.stdout
        assert {"run_id", "line", "step", "timestamp", "metric", "value", "unit"} <= set(obs.columns)
        assert obs["metric"].isin(["throughput", "loss"]).any()


def test_urllib3s_pysocks_warning_does_not_reach_the_user():
    """requests loads urllib3's SOCKS support for a configured proxy; without PySocks urllib3
    warns on import, and a Ctrl-C during a report's start-up let that line through."""
    import subprocess
    import sys

    code = ("from analysis.cli import main\n"
            "try:\n    main(['env', '--help'])\nexcept SystemExit:\n    pass\n"
            "try:\n    import urllib3.contrib.socks\nexcept ImportError:\n    pass\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stderr
    assert "SOCKS support" not in err


def test_jupyter_shows_a_dlperf_error_as_its_message_unless_debugging(monkeypatch):
    from analysis.errors import UsageError

    try:
        raise UsageError("no such log folder: x")
    except UsageError as exc:
        error = exc
    monkeypatch.delenv("DLPERF_DEBUG", raising=False)
    assert error._render_traceback_() == ["UsageError: no such log folder: x"]
    monkeypatch.setenv("DLPERF_DEBUG", "1")
    shown = error._render_traceback_()
    assert shown[0] == "Traceback (most recent call last):" and shown[-1] == shown[-1].strip()
    assert shown[-1] == "analysis.errors.UsageError: no such log folder: x"
