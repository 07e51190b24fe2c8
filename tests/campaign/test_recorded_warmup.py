"""A done marker states the warm-up that reached the program: what node 0's command gives the
workload's warm-up option, else the program's own default (the built-in workload's 20), not
the 0 an older suite recorded whenever the spec stated none; folders it made still resume."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from analysis.campaign import workloads
from analysis.campaign.resume import FolderMismatch
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import SpecError, from_dict
from workloads.resnet.options import build_parser

#: two cases of the built-in workload, no warm-up stated; the second sets one through its own
#: arguments (a prefix argparse takes for --warmup-iterations); fewer iterations than the
#: default warm-up: the program's rule, not an error
SPEC = {"name": "warm", "workload": "builtin", "model": "resnet50", "device": "cpu",
        "repeats": 1, "iterations": 12, "timeout": 300, "retries": 0,
        "cases": [{"devices": "1n1g", "precision": "fp32", "batch_size": 2},
                  {"devices": "1n1g", "precision": "fp32", "batch_size": 2, "name": "warm3",
                   "args": ["--warmup", "3"]}]}
RAN = {"1n1g/resnet50_b2_fp32_1": 20, "1n1g/warm3_1": 3}


def matrix_spec(workload: str, **kw):
    return from_dict({"name": "t", "workload": workload, "precisions": ["fp32"],
                      "batch_sizes": [8], "devices": ["1n1g"], "repeats": 1,
                      "iterations": 120, "device": "cuda", **kw})


def expected_warmup(spec, tmp_path) -> object:
    c = Campaign(spec, out_dir=tmp_path)
    return c.expected_marker(c.runs[0], "cuda", ["h0"], 29500)["case"]["warmup"]


def test_builtin_default_is_the_programs():
    assert workloads.get("builtin").default_warmup == \
        build_parser().get_default("warmup_iterations")


def test_warmup_given_reads_the_option_as_argparse_takes_it():
    builtin, tf = workloads.get("builtin"), workloads.get("dle_tf_rn50")
    assert builtin.warmup_given(["--width", "8"]) == 20  # none given: the program's default
    assert builtin.warmup_given(["--warmup-iterations", "5"]) == 5
    assert builtin.warmup_given(["--warmup-iter=7", "--lr", "1"]) == 7
    assert builtin.warmup_given(["--warmup-iterations", "5", "--warmup", "9"]) == 9  # last
    assert tf.warmup_given(["--warmup_steps=0"]) == 0
    # DLE PyTorch's --warmup is its learning rate's warm-up in epochs: no iteration warm-up
    assert workloads.get("dle_pytorch_rn50").warmup_given(["--warmup", "8"]) is None


def test_each_workload_records_what_its_command_gives(tmp_path):
    assert expected_warmup(matrix_spec("builtin"), tmp_path) == 20
    assert expected_warmup(matrix_spec("builtin", warmup=5), tmp_path) == 5
    assert expected_warmup(matrix_spec("builtin", workload_args=["--warmup", "3"]),
                           tmp_path) == 3
    assert expected_warmup(matrix_spec("dle_tf_rn50"), tmp_path) == 0  # passed as 0
    assert expected_warmup(matrix_spec("dle_tf_rn50", warmup=50), tmp_path) == 50
    assert expected_warmup(matrix_spec("oneflow_cnn"), tmp_path) is None
    assert expected_warmup(matrix_spec("dle_pytorch_rn50"), tmp_path) is None


def test_a_stated_warmup_must_reach_the_program_and_leave_iterations():
    with pytest.raises(SpecError, match="'warmup': workload 'oneflow_cnn' gives its program "
                                        "no warm-up setting"):
        matrix_spec("oneflow_cnn", warmup=20)
    with pytest.raises(SpecError, match="'warmup'.*fewer than iterations"):
        matrix_spec("builtin", iterations=10, warmup=10)
    assert matrix_spec("builtin", iterations=10).warmup is None  # the program's default


@pytest.fixture(scope="module")
def campaign_folder(tmp_path_factory) -> Path:
    """A finished real campaign of SPEC (local backend, CPU)."""
    out = tmp_path_factory.mktemp("warm") / "out"
    status = Campaign(from_dict(SPEC), out_dir=out).run(progress=False)
    assert list(status["state"]) == ["done", "done"], status.to_string()
    return out


def copy_of(folder: Path, tmp_path: Path, old_style: bool) -> Path:
    """A copy of `folder`; `old_style`: its markers say what an older suite wrote (warmup 0
    wherever the spec stated none; no digests of inherited variables, so this test's own,
    PYTEST_CURRENT_TEST, is not compared)."""
    out = tmp_path / "out"
    shutil.copytree(folder, out)
    for path in out.glob("*/*.done") if old_style else ():
        marker = json.loads(path.read_text())
        marker["case"]["warmup"] = 0
        del marker["env_digests"]
        path.write_text(json.dumps(marker))
    return out


@pytest.mark.slow
def test_markers_state_the_warmup_the_log_dump_states(campaign_folder):
    for run_id, ran in RAN.items():
        marker = json.loads((campaign_folder / f"{run_id}.done").read_text())
        dump = re.search(r"warmup_iterations : (\d+)",
                         (campaign_folder / f"{run_id}.log").read_text())
        assert marker["case"]["warmup"] == int(dump[1]) == ran, run_id


@pytest.mark.slow
def test_an_older_suites_folder_resumes_as_what_ran(campaign_folder, tmp_path, capsys):
    out = copy_of(campaign_folder, tmp_path, old_style=True)
    kept = {p: p.read_bytes() for p in out.glob("*/*") if p.suffix in (".log", ".done")}
    status = Campaign(from_dict(SPEC), out_dir=out).run(progress=False)
    assert list(status["state"]) == ["done", "done"]
    assert {p: p.read_bytes() for p in kept} == kept  # nothing re-run, nothing rewritten
    err = capsys.readouterr().err
    assert "note: 2 done run(s)" in err and "record warmup 0, but their commands ran a " \
        "warm-up of 20" in err and "compared as 20" in err, err


@pytest.mark.slow
@pytest.mark.parametrize("old_style", [True, False])
def test_a_changed_stated_warmup_is_refused(campaign_folder, tmp_path, old_style):
    out = copy_of(campaign_folder, tmp_path, old_style)
    for stated in (5, 0):
        with pytest.raises(FolderMismatch) as err:
            Campaign(from_dict(dict(SPEC, warmup=stated)), out_dir=out).run(progress=False)
        assert f"case.warmup: 20 → {stated} (1 done run(s)" in str(err.value)
        assert f"'gloo' → 'gloo --warmup-iterations {stated}'" in str(err.value)
