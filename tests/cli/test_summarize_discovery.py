"""`summarize DIR` on published logs: ``.txt``/``.out``/``.err`` files are sniffed like
``.log`` (content decides), files that are no logs (README.txt, topo*.txt) are skipped, and a
folder without any log of a known format is one error line and a non-zero status."""

from __future__ import annotations

from analysis import cli
from analysis.collect import NoKnownLogsError, parse_paths
from analysis.discover import find_logs
from analysis.layout import run_stem


def _dll(n: int = 150, bsz: int = 4, world: int = 1) -> str:
    lines = [f"DLL 2026-11-21 10:00:00.000001 - PARAMETER arch : resnet50  batch_size : {bsz}  "
             f"precision : amp  world_size : {world} "]
    for i in range(1, n + 1):
        lines.append(f"DLL 2026-11-21 10:{i // 600:02d}:{i // 10 % 60:02d}.{i % 10 * 100000:06d}"
                     f" - Epoch: 0 Iteration: {i}  train.loss : 6.9  train.total_ips : 160.0 img/s")
    return "\n".join(lines) + "\n"


TOPO = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
        "GPU0\t X \tNV18\t0-31\t0\nGPU1\tNV18\t X \t0-31\t0\n\nLegend:\n\n  X    = Self\n")


def _summarize(capsys, *args) -> tuple[int, str, str]:
    status = cli.main(["summarize", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def test_txt_out_and_err_logs_are_summarized(tmp_path, capsys):
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / "result_0.txt").write_text(_dll(153))  # MLPerf-style name: no case in the path
    (d / "r50_b4_amp_1.txt").write_text(_dll())
    (d / "r50_b4_amp_2.out").write_text(_dll(151))
    (d / "r50_b4_amp_3.err").write_text(_dll(152))
    r = parse_paths([tmp_path])
    assert sorted(r.runs["run_id"]) == ["1n1g/r50_b4_amp_1", "1n1g/r50_b4_amp_2",
                                        "1n1g/r50_b4_amp_3", "1n1g/result_0"]
    assert set(r.runs["family"]) == {"dll_pytorch"}
    status, out, err = _summarize(capsys, d / "..", "--format", "csv")
    assert status == 0, err
    assert "resnet50,amp,1,1,1,4,4," in out  # result_0 states its case in its PARAMETER line


def test_files_that_are_not_logs_are_skipped_and_counted(tmp_path, capsys):
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / "r50_b4_amp_1.log").write_text(_dll())
    (tmp_path / "README.txt").write_text("Logs of the ResNet50 runs; 150 iterations each.\n")
    (tmp_path / "SOURCE.txt").write_text("https://example.org/logs\n")
    (d / "slurm-12.err").write_text("srun: job 12 queued and waiting for resources\n")
    (d / "r50_b4_amp_1.err").write_text("W1121 10:00:00 warning only\n")  # beside its run's log
    (tmp_path / "topo.txt").write_text(TOPO)
    (d / "topo_node1.txt").write_text(TOPO)
    names = {f.path.name for f in find_logs([tmp_path])[0]}
    assert "topo.txt" not in names and "topo_node1.txt" not in names
    r = parse_paths([tmp_path])
    assert r.problems.empty, r.problems
    assert r.runs["run_id"].tolist() == ["1n1g/r50_b4_amp_1"]
    assert (r.files_found, r.files_skipped) == (5, 4)
    status, out, err = _summarize(capsys, tmp_path, "--format", "csv")
    assert status == 0 and "resnet50" in out
    assert err == "4 files (.txt, .out, .err) skipped as not logs\n"


def test_a_log_named_explicitly_is_read_whatever_its_suffix(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    r = parse_paths([notes])
    assert r.problems["kind"].tolist() == ["unknown_format"]


def test_err_is_a_log_suffix_of_the_layout():
    assert run_stem("1n1g/r50_b4_amp_1.err") == "r50_b4_amp_1"
    assert run_stem("1n1g/r50_b4_amp_1.node1.err.gz") == "r50_b4_amp_1"


def test_folder_without_known_logs_is_one_error_line(tmp_path, capsys):
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / "r50_b64_fp32_1.log").write_text("hello\nnothing to see\n")
    (d / "r50_b64_fp32_2.log").write_text("")
    (tmp_path / "README.txt").write_text("notes\n")
    status, out, err = _summarize(capsys, tmp_path)
    assert status == 1 and out == ""
    assert "Traceback" not in err
    assert err == (f"dlperf: error: no log of a known format under {tmp_path}: 3 files looked "
                   "at (1 skipped as not logs, 2 of no known format)\n")


def test_folder_of_files_that_are_not_logs_is_one_error_line(tmp_path, capsys):
    (tmp_path / "README.txt").write_text("notes\n")
    (tmp_path / "job.out").write_text("done\n")
    status, out, err = _summarize(capsys, tmp_path, "--format", "csv")
    assert status == 1 and out == ""
    assert err == (f"dlperf: error: no log of a known format under {tmp_path}: 2 files looked "
                   "at (2 skipped as not logs)\n")


def test_strict_still_names_the_first_problem(tmp_path, capsys):
    (tmp_path / "r50_b64_fp32_1.log").write_text("hello\n")
    status, _, err = _summarize(capsys, tmp_path, "--strict")
    assert status == 3 and "unknown_format" in err


def test_cached_summary_of_unknown_logs_fails_the_same(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DLPERF_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "logs"
    d.mkdir()
    (d / "r50_b64_fp32_1.log").write_text("hello\n")
    for _ in range(2):  # the second call finds the result kept by the first
        status, out, err = _summarize(capsys, d)
        assert status == 1 and out == "", err
        assert err.startswith(f"dlperf: error: no log of a known format under {d}: 1 file")


def test_library_error_is_a_no_logs_error(tmp_path):
    (tmp_path / "x.log").write_text("hello\n")
    try:
        parse_paths([tmp_path], require_runs=True)
    except NoKnownLogsError as exc:
        assert exc.looked_at == 1 and exc.skipped == 0
    else:
        raise AssertionError("no error")
