"""Collecting runs: multi-node logs, sidecars, and bad files next to good ones."""

import gzip
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.collect import NoLogsError, parse_paths
from analysis.errors import LogProblemError

BANNER = ("*****************************************\n"
          "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default\n"
          "*****************************************\n")


def _dll(n_iter=150, bsz=4, world=4):
    lines = [f"DLL 2026-11-21 10:00:00.000001 - PARAMETER arch : resnet50  batch_size : {bsz}  "
             f"precision : amp  world_size : {world} "]
    for i in range(1, n_iter + 1):
        lines.append(f"DLL 2026-11-21 10:00:{i // 10:02d}.{(i % 10) * 100000:06d} - Epoch: 0 "
                     f"Iteration: {i}  train.loss : 6.9  train.total_ips : 160.0 img/s")
    return "\n".join(lines) + "\n"


def test_other_nodes_logs_join_the_run_without_problems(tmp_path):
    d = tmp_path / "2n2g"
    d.mkdir()
    (d / "resnet50_b4_amp_1.log").write_text(_dll())
    (d / "resnet50_b4_amp_1.node1.log").write_text(BANNER)
    (d / "resnet50_b4_amp_1.node1.gpu.csv").write_text(
        "timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n"
        "2026/11/21 10:00:01.000, 0, 1234 MiB, 143771 MiB, 99 %\n")
    r = parse_paths([tmp_path])
    assert r.problems.empty, r.problems
    [run] = r.runs.itertuples()
    assert (run.run_id, run.num_nodes, run.gpus_per_node, run.global_batch_size) == (
        "2n2g/resnet50_b4_amp_1", 2, 2, 16)
    assert run.source.endswith("resnet50_b4_amp_1.log")
    mem = r.observations[r.observations["metric"] == "memory_used"]
    assert mem["value"].tolist() == [1234.0]
    assert str(mem["source"].iloc[0]).endswith(".node1.gpu.csv")


def test_a_single_node_log_without_training_lines_is_flagged(tmp_path):
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / "resnet50_b4_amp_1.log").write_text(BANNER)
    r = parse_paths([tmp_path])
    assert r.problems["kind"].tolist() == ["unknown_format"]
    assert r.problems["run_id"].tolist() == ["1n1g/resnet50_b4_amp_1"]
    assert r.runs.empty  # no case of its own (no run read in its case to count it on)


def test_a_corrupt_file_never_hides_the_good_ones(tmp_path):
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / "resnet50_b4_amp_1.log").write_text(_dll(world=1))
    (d / "resnet50_b4_amp_2.log.gz").write_bytes(gzip.compress(_dll(world=1).encode())[:40])
    (d / "resnet50_b4_amp_3.log").write_bytes(b"\x00\xff" * 100)
    r = parse_paths([tmp_path])
    by_run = dict(zip(r.runs["run_id"], r.runs["problems"]))
    assert by_run["1n1g/resnet50_b4_amp_1"] == ""
    assert "unreadable_file" in by_run["1n1g/resnet50_b4_amp_2"]
    assert by_run["1n1g/resnet50_b4_amp_3"] != ""
    good = r.observations[r.observations["run_id"] == "1n1g/resnet50_b4_amp_1"]
    assert good["step"].max() == 150


# --- a run counted once (issue 9, item 1) ----------------------------------------------------

def _case_folder(root, n_runs=1):
    d = root / "1n1g"
    d.mkdir(parents=True)
    for rep in range(1, n_runs + 1):
        (d / f"resnet50_b4_amp_{rep}.log").write_text(_dll(world=1).replace("160.0", f"{rep}60.0"))
    return d


def _throughput(result):
    from analysis.stats import run_throughput

    return run_throughput(result, "reported", 5, 20)["throughput"].tolist()


def test_a_log_beside_its_gzip_is_one_run_and_a_duplicate_problem(tmp_path):
    d = _case_folder(tmp_path)
    (d / "resnet50_b4_amp_1.log.gz").write_bytes(gzip.compress((d / "resnet50_b4_amp_1.log").read_bytes()))
    r = parse_paths([tmp_path])
    assert r.runs["run_id"].tolist() == ["1n1g/resnet50_b4_amp_1"]
    [p] = r.problems.itertuples()
    assert p.kind == "duplicate_run" and p.source.endswith(".log.gz") and "amp_1.log;" in p.reason
    assert r.observations["source"].astype(str).str.endswith(".log").all()
    alone = parse_paths([d / "resnet50_b4_amp_1.log"])
    assert len(r.observations) == len(alone.observations)
    assert _throughput(r) == _throughput(alone) == pytest.approx([160.0])
    with pytest.raises(LogProblemError, match="duplicate_run"):
        parse_paths([tmp_path], strict=True)


def test_a_path_named_twice_or_through_a_link_is_read_once(tmp_path):
    _case_folder(tmp_path / "r")
    (tmp_path / "link").symlink_to(tmp_path / "r")
    once = parse_paths([tmp_path / "r"])
    for paths in ([tmp_path / "r", tmp_path / "r"], [tmp_path / "r", f"{tmp_path}/./r"],
                  [tmp_path / "r", tmp_path / "link"], [tmp_path / "r", tmp_path / "r" / "1n1g"]):
        r = parse_paths(paths, strict=True)  # the same file twice is no problem at all
        assert r.runs["run_id"].tolist() == ["1n1g/resnet50_b4_amp_1"], paths
        assert len(r.observations) == len(once.observations), paths


def test_a_copy_of_a_run_elsewhere_or_under_another_name_is_a_duplicate(tmp_path):
    import shutil

    _case_folder(tmp_path / "a", n_runs=2)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    (tmp_path / "b" / "1n1g" / "resnet50_b4_amp_3.log").symlink_to("resnet50_b4_amp_1.log")
    r = parse_paths([tmp_path / "a", tmp_path / "b"])
    assert sorted(r.runs["run_id"]) == ["1n1g/resnet50_b4_amp_1", "1n1g/resnet50_b4_amp_2"]
    dups = r.problems[r.problems["kind"] == "duplicate_run"]
    assert len(dups) == 3 and len(r.problems) == 3
    assert all("counted once" in reason for reason in dups["reason"])
    assert r.summary(method="window", warmup=5, measure=20)["repeats"].tolist() == [2]


def test_a_copied_folder_inside_the_tree_read_is_a_duplicate(tmp_path):
    """A campaign and its backup copy under one folder (`summarize logs/`, not both named):
    each copied log is a duplicate_run, the case counted once."""
    import shutil

    _case_folder(tmp_path / "logs" / "camp", n_runs=2)
    shutil.copytree(tmp_path / "logs" / "camp", tmp_path / "logs" / "camp_backup" / "old")
    r = parse_paths([tmp_path / "logs"])
    assert sorted(r.runs["run_id"]) == ["camp/1n1g/resnet50_b4_amp_1", "camp/1n1g/resnet50_b4_amp_2"]
    dups = r.problems[r.problems["kind"] == "duplicate_run"]
    assert sorted(dups["source"].map(lambda s: Path(s).name)) == [
        "resnet50_b4_amp_1.log", "resnet50_b4_amp_2.log"]
    assert r.summary(method="window", warmup=5, measure=20)["repeats"].tolist() == [2]


def test_different_runs_with_the_same_relative_name_stay_two_runs(tmp_path):
    _case_folder(tmp_path / "a")
    d = _case_folder(tmp_path / "b")
    (d / "resnet50_b4_amp_1.log").write_text(_dll(world=1).replace("160.0", "170.0"))
    r = parse_paths([tmp_path / "a", tmp_path / "b"], strict=True)
    assert len(r.runs) == 2 and r.runs["run_id"].is_unique
    assert sorted(_throughput(r)) == pytest.approx([160.0, 170.0])


# --- what cannot be read says so (item 4) ----------------------------------------------------

def test_an_empty_folder_or_one_without_logs_is_no_logs_found(tmp_path):
    with pytest.raises(NoLogsError, match=f"no logs found under {tmp_path}"):
        parse_paths([tmp_path])
    (tmp_path / "notes.txt").write_text("hello\n")  # looked at (a .txt may be a log): not one
    (tmp_path / "sub").mkdir()
    with pytest.raises(NoLogsError, match="no log of a known format under .*: 1 file looked at"):
        parse_paths([tmp_path])


@pytest.mark.parametrize("command", ["summarize", "parse", "report"])
def test_the_cli_says_no_logs_found_and_exits_1(tmp_path, dlperf_exe, command):
    (tmp_path / "empty").mkdir()
    extra = {"parse": ["-o", str(tmp_path / "o.csv")], "report": ["-o", str(tmp_path / "rep")]}
    done = subprocess.run([dlperf_exe, command, str(tmp_path / "empty"), *extra.get(command, [])],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done
    assert done.stderr.strip().splitlines() == [f"dlperf: error: no logs found under {tmp_path / 'empty'}"]
    assert done.stdout == ""


def test_a_fifo_a_dangling_link_and_a_link_loop_are_unreadable_problems(tmp_path):
    d = _case_folder(tmp_path)
    os.mkfifo(d / "resnet50_b4_amp_2.log")  # opening it would block forever
    (d / "resnet50_b4_amp_3.log").symlink_to("gone.log")
    (d / "loop").symlink_to("loop")
    r = parse_paths([tmp_path])
    bad = r.problems[r.problems["kind"] == "unreadable_file"]
    assert sorted(Path(s).name for s in bad["source"]) == [
        "loop", "resnet50_b4_amp_2.log", "resnet50_b4_amp_3.log"]
    assert r.runs["run_id"].tolist() == ["1n1g/resnet50_b4_amp_1"]


def _without_dac_override(argv: list[str]) -> list[str]:
    """`argv` run so that file permissions apply even to root (tests run as root)."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to drop root's permission override"
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", *argv]


def test_an_unreadable_subfolder_is_a_problem_and_strict_fails(tmp_path, dlperf_exe):
    _case_folder(tmp_path)
    locked = tmp_path / "2n8g"
    locked.mkdir()
    (locked / "resnet50_b4_amp_1.log").write_text(_dll())
    locked.chmod(0)
    try:
        argv = _without_dac_override([dlperf_exe, "parse", str(tmp_path), "-o"])
        done = subprocess.run(argv + [str(tmp_path / "o.csv")], capture_output=True, text=True,
                              timeout=120)
        strict = subprocess.run(argv + [str(tmp_path / "s.csv"), "--strict"],
                                capture_output=True, text=True, timeout=120)
    finally:
        locked.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert f"{locked}: unreadable_file: cannot list this folder: Permission denied" in done.stderr
    assert "from 1 runs" in done.stdout
    assert strict.returncode == 3 and "unreadable_file" in strict.stderr


# --- a file no parser reads is a problem of its case (item 5) --------------------------------

def test_an_unrecognised_file_in_a_case_folder_counts_on_its_case(tmp_path):
    d = _case_folder(tmp_path, n_runs=2)
    (d / "resnet50_b4_amp_4.log").write_text("")
    (d / "resnet50_b4_amp_5.log").write_text("no parser reads this\n")
    r = parse_paths([tmp_path])
    probs = r.problems.set_index("run_id")
    assert probs.loc["1n1g/resnet50_b4_amp_4", "kind"] == "unknown_format"
    assert probs.loc["1n1g/resnet50_b4_amp_4", "reason"] == "the file is empty or blank"
    assert probs.loc["1n1g/resnet50_b4_amp_5", "text"] == "no parser reads this"
    [case] = r.summary(method="reported", warmup=5).itertuples()
    assert (case.framework, case.model, case.num_nodes, case.batch_size_per_device) == (
        "PyTorch", "resnet50", 1, 4)
    # the two unread files, and the case's two runs: 160 and 260 img/s are 47.6 % apart
    assert (case.repeats, case.problems, case.flags) == (2, 4, "spread 47.6 % > 5 %")


def test_prose_mentioning_megatron_and_iterations_is_unknown_format(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Notes\nWe compared against Megatron-LM: 150 iterations, "
                      "iteration lines, memory line.\n| `megatron` | Megatron-LM |\n")
    r = parse_paths([readme])
    assert r.problems["kind"].tolist() == ["unknown_format"] and r.runs.empty


def test_a_file_too_big_for_memory_is_a_problem_and_the_others_are_read(tmp_path, monkeypatch):
    """MemoryError while reading one log (a machine with little memory): that file is an
    unreadable_file problem saying what to do; the good run is still there."""
    from analysis import collect
    from analysis.logtext import LogText

    d = _case_folder(tmp_path, n_runs=2)
    real = LogText.read

    def read(path, *args, **kwargs):
        if Path(path).name == "resnet50_b4_amp_2.log":
            raise MemoryError
        return real(path, *args, **kwargs)

    monkeypatch.setattr(collect.LogText, "read", staticmethod(read))
    r = parse_paths([d], jobs=1, cache=False)
    figures = dict(zip(r.runs["run_id"], _throughput(r)))
    assert figures["resnet50_b4_amp_1"] == pytest.approx(160.0)
    assert np.isnan(figures.get("resnet50_b4_amp_2", np.nan))
    bad = r.problems[r.problems["kind"] == "unreadable_file"]
    assert len(bad) == 1 and "not enough memory" in bad["reason"].iloc[0]
    assert "DLPERF_MAX_LOG_BYTES" in bad["reason"].iloc[0]


def test_a_log_whose_name_is_not_utf8_is_read_like_any_other(tmp_path):
    """A good log named with bytes that are not UTF-8: its run has its figure (it was
    dropped as 'no training lines'), its id printed with \\xNN; its problems are its own."""
    d = _case_folder(tmp_path, n_runs=1)
    odd = os.fsdecode(b"resnet50_b4_amp_2\xff\xfe.log")
    (d / odd).write_text(_dll(world=1).replace("160.0", "260.0"))
    r = parse_paths([tmp_path], jobs=1, cache=False)
    figures = dict(zip(r.runs["run_id"], _throughput(r)))
    assert figures["1n1g/resnet50_b4_amp_2\\xff\\xfe"] == pytest.approx(260.0)
    assert r.runs.set_index("run_id").loc["1n1g/resnet50_b4_amp_2\\xff\\xfe", "problems"] == ""
    assert "no_training_lines" not in set(r.problems["kind"])


def test_an_empty_log_beside_its_samples_counts_against_its_case(tmp_path):
    """A crashed run of a campaign: an empty log and its nvidia-smi samples. No case of its
    own (with no framework); the case of its path counts the problem, not a repeat."""
    d = _case_folder(tmp_path, n_runs=2)
    (d / "resnet50_b4_amp_3.log").write_text("")
    (d / "resnet50_b4_amp_3.gpu.csv").write_text(
        "timestamp, index, memory.used [MiB]\n2026/11/21 10:00:00.250, 0, 2048 MiB\n")
    r = parse_paths([tmp_path], jobs=1, cache=False)
    summary = r.summary(method="reported", warmup=5)
    assert len(summary) == 1 and summary["framework"].tolist() == ["PyTorch"]
    # the empty log, and the case's two runs: 160 and 260 img/s are 47.6 % apart (wide_spread)
    assert summary["repeats"].tolist() == [2] and summary["problems"].tolist() == [3]


def test_control_characters_in_a_file_name_never_reach_the_terminal(tmp_path):
    """A name with an escape sequence and a line end: printed as \\xNN, so it can neither
    drive the terminal nor forge a second `file:line: kind` line."""
    from analysis.fsutil import display_path

    name = "x\x1b[2J\x1b]0;PWN\x07y\nz.log"
    assert display_path(f"d/{name}") == "d/x\\x1b[2J\\x1b]0;PWN\\x07y\\x0az.log"
    assert display_path("a\tb.log") == "a\tb.log"
    (tmp_path / "1n1g").mkdir()
    (tmp_path / "1n1g" / name).write_text("hello\n")
    r = parse_paths([tmp_path], jobs=1, cache=False)
    sources = r.problems["source"].tolist()
    assert sources and all(s.isprintable() and "\x1b" not in s for s in sources)


def test_overlapping_paths_report_a_link_once(tmp_path):
    """`parse dup dup/1n1g dup/1n1g/x.log` where x.log links to a run of the folder: one
    duplicate_run, not one per named path that reaches it."""
    d = _case_folder(tmp_path / "dup")
    link = d / "resnet50_b4_amp_9.log"
    link.symlink_to("resnet50_b4_amp_1.log")
    r = parse_paths([tmp_path / "dup", d, link], jobs=1, cache=False)
    assert r.problems["kind"].tolist() == ["duplicate_run"]
    assert len(r.runs) == 1


@pytest.mark.parametrize("bsz", ["-4", "0", "9" * 25])
def test_a_log_stating_an_impossible_batch_gives_no_figure_and_says_so(tmp_path, bsz):
    from analysis.stats import run_throughput

    d = tmp_path / "1n4g"
    d.mkdir()
    (d / "resnet50_b4_amp_1.log").write_text(_dll())
    (d / "bad.log").write_text(_dll(bsz=bsz))
    r = parse_paths([tmp_path], cache=False)
    bad = r.problems[r.problems["run_id"] == "1n4g/bad"]
    assert bad["kind"].tolist() == ["impossible_value", "missing_metadata"], bad
    assert f"batch_size_per_device={bsz[:40]}" in bad["reason"].iloc[0]
    assert bad["line"].iloc[0] == 1
    figures = run_throughput(r).set_index("run_id")["throughput"]
    assert figures["1n4g/resnet50_b4_amp_1"] == pytest.approx(160.0)
    assert np.isnan(figures["1n4g/bad"])  # never a negative or zero samples/s


def test_counts_whose_product_leaves_int64_are_impossible_not_a_crash(tmp_path):
    d = tmp_path / "1n4g"
    d.mkdir()
    big = 2**31 - 1
    (d / "big.log").write_text(_dll(bsz=big, world=big * big))
    r = parse_paths([tmp_path], meta={"num_nodes": big, "gpus_per_node": big}, cache=False)
    reasons = r.problems.loc[r.problems["kind"] == "impossible_value", "reason"].tolist()
    assert any(x.startswith("num_devices would be 4,611,686,014,132,420,609") for x in reasons)
    assert any("global_batch_size" in x for x in reasons), reasons
    [run] = r.runs.itertuples()
    assert run.num_devices is pd.NA and run.global_batch_size is pd.NA


def test_a_path_stating_zero_nodes_or_batch_is_not_used(tmp_path):
    from analysis.stats import run_throughput

    d = tmp_path / "0n4g"
    d.mkdir()
    (d / "resnet50_b0_amp_1.log").write_text(_dll().replace("batch_size : 4  ", ""))
    r = parse_paths([tmp_path], cache=False)
    reasons = r.problems.loc[r.problems["kind"] == "impossible_value", "reason"].tolist()
    assert "the path says num_nodes=0, not a count from 1 to 2,147,483,647; not used" in reasons
    assert any(x.startswith("the path says batch_size_per_device=0") for x in reasons)
    assert r.runs["batch_size_per_device"].isna().all()
    assert run_throughput(r)["throughput"].isna().all()


def test_an_empty_file_is_flagged_without_being_opened(tmp_path, monkeypatch):
    """100,000 empty logs cost a stat each, not an open, a read and a sniff; each is still a
    flagged run (a blank file of spaces is still opened and flagged the same way)."""
    from analysis import collect

    d = _case_folder(tmp_path, n_runs=2)
    empty, blank = d / "resnet50_b4_amp_4.log", d / "resnet50_b4_amp_5.log"
    empty.write_text("")
    blank.write_text(" \n")
    opened = []
    real_read = collect.LogText.read
    monkeypatch.setattr(collect.LogText, "read", lambda path, *a: opened.append(Path(path))
                        or real_read(path, *a))
    r = parse_paths([tmp_path], jobs=1)
    assert empty not in opened and blank in opened
    probs = r.problems.set_index("run_id")
    for run in ("1n1g/resnet50_b4_amp_4", "1n1g/resnet50_b4_amp_5"):
        assert (probs.loc[run, "kind"], probs.loc[run, "reason"]) == (
            "unknown_format", "the file is empty or blank")
        assert r.runs.set_index("run_id").loc[run, "problems"] == "unknown_format"


def test_parse_paths_gives_the_garbage_collector_back(tmp_path):
    """The collector is paused while logs are read, and left as the caller had it, also
    when the parse raises."""
    import gc

    log = tmp_path / "1n1g" / "r50_b4_amp_1.log"
    log.parent.mkdir()
    log.write_text(_dll(world=1))
    assert gc.isenabled()
    parse_paths([tmp_path])
    assert gc.isenabled()
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoLogsError):
        parse_paths([tmp_path / "empty"])
    assert gc.isenabled()
    gc.disable()
    try:
        parse_paths([tmp_path])
        assert not gc.isenabled()
    finally:
        gc.enable()
