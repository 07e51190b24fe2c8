"""Inputs of a fifteenth attack on copies of runs and on what a run's configuration is: run 1
copied into `1n8g/` with its dump edited to 8 GPUs and its rates doubled, stamps and losses
unchanged, was an 8-GPU case; launcher keys each repeat states its own (`job_id`,
`dist_url`, ...) were configuration; a stretched copy in another folder whose dump re-spells
a key (`lr : 0.2560`) was another repeat; copies whose rates or stamps carry a jitter far
below a real rerun's (or rates reprinted as `%.3g`) were other repeats, while deterministic
reruns logged at different stamp resolutions were merged. Built in tmp_path from the
bundled campaign data/raw_logs/rn50_4gpu/1n4g (runs 1-3: DLPerf median 11,661.87 img/s) or
attack14's generator of deterministic reruns."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import summarize
from analysis.stats.case_stats import CONFIGURATION_DIFFERS, configuration

sys.path.insert(0, str(Path(__file__).parent))
from test_attack14_copies import _other_folder, _reruns, _three_runs  # noqa: E402
from test_attack_2026_11_29h import _restamped  # noqa: E402
from test_attack_2026_11_29q import (  # noqa: E402
    RN50,
    STEM,
    _duplicates,
    _field,
    _one_run_each,
    _rn50,
    _stretched,
)

_NO_RATES = re.compile(r"  train\.total_ips : [\d.]+ img/s")


def _as_8_gpus(text: str) -> str:
    for key, four, eight in (("global_batch_size", 512, 1024), ("world_size", 4, 8),
                             ("gpus_per_node", 4, 8)):
        text = text.replace(f"{key} : {four} ", f"{key} : {eight} ")
    return _field("total_ips", lambda v: f"{2 * v:.2f}")(text)


def test_a_run_copied_as_an_8_gpu_run_with_its_stamps_is_one_run(tmp_path):
    """Run 1 under 1n8g/ with its dump stating 8 GPUs and its rates doubled, its 150 stamps
    the same to the microsecond and its losses the same, was a 1n8g case of 23,354.90
    samples/s: the stamps needed every value the same across configurations, the values
    test was vetoed there."""
    text = _rn50(tmp_path / "1n4g")
    (tmp_path / "1n8g").mkdir()
    (tmp_path / "1n8g" / f"{STEM}1.log").write_text(_as_8_gpus(text))
    result = parse_paths([tmp_path], cache=False)
    [(source, reason)] = _duplicates(result)
    assert source.endswith(f"1n8g/{STEM}1.log") and f"1n4g/{STEM}1.log" in reason
    assert "150 of 150 the same to the microsecond" in reason
    assert "which of the two is the copy the logs cannot tell" in reason
    _three_runs(result)


@pytest.mark.parametrize("key, value", [
    ("job_id", "48213{}"), ("slurm_job_id", "9912{}"), ("SLURM_JOBID", "9912{}"),
    ("dist_url", "tcp://10.0.0.{}:23456"), ("wandb_run_id", "a8f3k{}x"),
    ("start_time", "2026-11-21T20:4{}:00"), ("nodelist", "node0{}"),
    ("SLURM_JOB_NODELIST", "node0{}"), ("rdzv_id", "r{}"), ("OMPI_COMM_WORLD_RANK", "{}"),
])
def test_launcher_keys_of_each_repeat_are_no_configuration(tmp_path, key, value):
    """The four real repeats, each dump stating a launcher key of its own value, were
    `mixed_configuration` (rc 3 under --strict): only a few per-run keys were known."""
    folder = tmp_path / "1n4g"
    folder.mkdir()
    for i in (1, 2, 3, 4):
        text = (RN50 / f"{STEM}{i}.log").read_text()
        (folder / f"{STEM}{i}.log").write_text(
            text.replace("hostname : vm ", f"hostname : vm  {key} : {value.format(i)} ", 1))
    result = parse_paths([tmp_path], cache=False)
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 4 and CONFIGURATION_DIFFERS not in str(row.get("flags"))


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("lr : 0.256 ", "lr : 0.2560 "),
    lambda t: t.replace("amp : False ", "amp : false "),
], ids=["lr_spelling", "bool_case"])
def test_a_stretched_copy_re_spelling_a_key_in_another_folder_is_one_run(tmp_path, edit):
    """A stretched copy of run 1 in another folder whose dump re-spells one key, the same
    value, was a 4th repeat (high 12,038.59) and no `mixed_configuration` either: the copy
    test compared the dumps' text, the case flag their values."""
    result = _other_folder(tmp_path, edit)
    [(source, reason)] = _duplicates(result)
    assert source.endswith(f"campB/1n4g/{STEM}4.log") and f"campA/1n4g/{STEM}1.log" in reason
    _three_runs(result)


def test_a_key_that_names_no_identity_is_still_configuration():
    """The rule keeps what says how a run ran: a token id, a time limit, a learning rate."""
    stated = {"pad_token_id": "0", "max_time": "3600", "lr": "0.1", "job_id": "7",
              "master_port": "29500", "node_rank": "0", "warmup_steps": "10"}
    assert set(configuration(stated)) == {"pad_token_id", "max_time", "lr", "warmup_steps"}


@pytest.mark.parametrize("rates, copy", [
    (True, lambda t: _field("total_ips", lambda v: f"{v / 0.97:.3g}")(
        _stretched(t, 0.97))),  # k9c_rates_sig3
    (False, lambda t: _restamped(_stretched(t, 0.97), 0, 1000)),  # k5_allnorate_ms_jit0
], ids=["rates_sig3", "restamped_ms"])
def test_a_copy_rounded_again_is_one_run(tmp_path, rates, copy):
    """Run 1 stretched x0.97, its rates /0.97 reprinted in 3 significant digits, or (a log
    without rates) re-stamped to the millisecond, was a 4th repeat
    (11,664.64, high 12,038.59): its timings lie within one rounding of run 1's times one
    constant, on average as one rounding gives. Without rates, at the millisecond, a rerun
    made deterministic would lie as close (its stamps stray 0.26 ms): the copy is flagged
    and counted, not dropped."""
    folder = tmp_path / "1n4g"
    text = _rn50(folder, (lambda t: t) if rates else (lambda t: _NO_RATES.sub("", t)))
    (folder / f"{STEM}4.log").write_text(copy(text))
    if rates:
        _one_run_each(tmp_path, folder, [4])
        return
    result = parse_paths([tmp_path], cache=False)
    [(source, reason)] = _duplicates(result)
    assert source.endswith(f"{STEM}4.log") and "the logs cannot tell" in reason
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 4


@pytest.mark.parametrize("base, coarse", [(0.05, 1000), (0.3, 10_000), (0.02, 1000)],
                         ids=["us_ms", "us_10ms_slow", "us_ms_fast"])
@pytest.mark.parametrize("fine_first", [True, False])
def test_deterministic_reruns_at_different_stamp_resolutions_are_three_runs(
        tmp_path, base, coarse, fine_first):
    """Deterministic reruns (the same losses, 0.3 % jitter each) stamped to the microsecond
    and to the millisecond (or 10 ms) were merged as copies (1 run, two duplicate_run): the
    coarse rounding of one log left room for both runs' jitter in their intervals, while
    their stamps drift apart line after line by more than a rounding."""
    folder = tmp_path / "1n4g"
    truth = _reruns(folder, res_us=1, base=base)
    for run in ((2, 3) if fine_first else (1,)):
        log = folder / f"{STEM}{run}.log"
        log.write_text(_restamped(log.read_text(), 0, coarse))
    result = parse_paths([tmp_path], cache=False)
    assert _duplicates(result) == []
    [row] = summarize(result, method="window").to_dict("records")
    assert row["repeats"] == 3
    assert row["throughput_median"] == pytest.approx(sorted(truth)[1], rel=5e-3)


def _every_10th(text: str) -> str:
    """The log as `print_freq : 10` prints it: the training lines of iterations 10, 20, ..."""
    text = text.replace("print_freq : 1 ", "print_freq : 10 ")
    return "\n".join(line for line in text.splitlines()
                     if (m := re.search(r"Iteration: (\d+) ", line)) is None
                     or int(m[1]) % 10 == 0) + "\n"


def test_a_stretched_copy_of_a_short_log_is_one_run(tmp_path):
    """Logs of 15 training lines (print_freq 10): run 1 stretched x0.97, its rates /0.97, was
    a 4th repeat (high 12,038.61): fewer than 20 lines never told a copy by its values."""
    folder = tmp_path / "1n4g"
    text = _rn50(folder, _every_10th)
    (folder / f"{STEM}4.log").write_text(_field("total_ips", lambda v: f"{v / 0.97:.2f}")(
        _stretched(text, 0.97)))
    result = parse_paths([tmp_path], cache=False)
    [(source, reason)] = _duplicates(result)
    assert source == str(folder / f"{STEM}4.log") and f"{STEM}1.log" in reason
    assert "training values (15 of 15 iterations'" in reason
    [row] = summarize(result).to_dict("records")
    (folder / f"{STEM}4.log").unlink()
    [truth] = summarize(parse_paths([tmp_path], cache=False)).to_dict("records")
    assert row["repeats"] == truth["repeats"] == 3
    assert row["throughput_median"] == truth["throughput_median"]


@pytest.mark.parametrize("kind", [dict(), dict(res_us=1), dict(res_us=1, rate=True)],
                         ids=["ms", "us", "us_integer_rate"])
def test_short_deterministic_reruns_are_three_runs(tmp_path, kind):
    """The other side: deterministic reruns (the same losses) printing every 10th of 150
    iterations stay three runs: a short log tells a copy only within one rounding."""
    truth = _reruns(tmp_path / "1n4g", every=10, **kind)
    result = parse_paths([tmp_path], cache=False)
    assert _duplicates(result) == []
    [row] = summarize(result, method="window").to_dict("records")
    assert row["repeats"] == 3
    assert row["throughput_median"] == pytest.approx(sorted(truth)[1], rel=5e-3)
