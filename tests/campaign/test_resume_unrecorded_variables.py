"""Variables a campaign's runs inherit from the shell outside their environment record
(PYTHONPATH, a model flag, HF_*, a password): a resume from a shell that sets, unsets or
changes one is refused naming it, never its value; a new login shell, another terminal or a
tmux pane is no difference; done runs of an older suite (no digests) resume as before.
`dlperf run` on the local backend and on the real Slurm fixture, with a stand-in interpreter
(`python:` in the spec) that prints a bundled real log instead of training."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from analysis.campaign.resume import DIGESTS, FolderMismatch
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict

pytestmark = pytest.mark.slow

LOGS = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"
SECRET = "hunter2-not-in-any-file"

#: The workload launch prints bundled run 1 and counts its starts, saying what it inherited;
#: anything else (the node agent) goes to the real interpreter.
STAND_IN = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "torch.distributed.run" ]; then
  n=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 )); echo $n > "{counter}"
  echo "stand-in: USE_FLASH_ATTN=${{USE_FLASH_ATTN-unset}}" >&2
  cat "{logs}/resnet50_b128_fp32_1.log"
  exit 0
fi
exec "{python}" "$@"
"""

#: A login over ssh in a terminal, and the same user later in a tmux pane of another login.
FIRST_SHELL = {"PWD": "/home/u", "OLDPWD": "/", "SHLVL": "1", "_": "/usr/bin/dlperf",
               "TERM": "xterm-256color", "SSH_CONNECTION": "10.0.0.9 50000 10.0.0.1 22",
               "SSH_TTY": "/dev/pts/3", "XDG_SESSION_ID": "41", "HOSTNAME": "login1",
               "DISPLAY": "localhost:10.0", "MOTD_SHOWN": "pam", "TERM_PROGRAM": "vscode"}
OTHER_SHELL = {"PWD": "/home/u/work", "SHLVL": "3", "_": "/home/u/.venv/bin/dlperf",
               "TERM": "tmux-256color", "TMUX": "/tmp/tmux-1000/default,1234,0",
               "TMUX_PANE": "%7", "STY": "99.pts-1.login2", "WINDOW": "2",
               "SSH_CONNECTION": "10.0.0.7 61000 10.0.0.2 22", "XDG_SESSION_ID": "97",
               "HOSTNAME": "login2", "SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "n1"}


@pytest.fixture
def spec(tmp_path, monkeypatch):
    """A spec factory whose `python:` is the stand-in; `.starts()` counts workload starts."""
    for name in ("USE_FLASH_ATTN", "AMP", "MY_SERVICE_PASSWORD", *FIRST_SHELL, *OTHER_SHELL):
        monkeypatch.delenv(name, raising=False)
    counter, fake = tmp_path / "starts", tmp_path / "python"
    fake.write_text(STAND_IN.format(counter=counter, logs=LOGS, python=sys.executable))
    fake.chmod(0o755)

    def make(**kw):
        raw = {"name": "u1", "workload": "builtin", "model": "resnet50", "precisions": ["fp32"],
               "batch_sizes": [4], "devices": ["1n1g"], "repeats": 1, "iterations": 130,
               "backend": "local", "device": "cpu", "python": str(fake), "env": {},
               "retries": 0}
        return from_dict({**raw, **kw})

    make.starts = lambda: int(counter.read_text()) if counter.exists() else 0
    return make


def _refusal(spec, out: Path, **kw) -> str:
    with pytest.raises(FolderMismatch) as err:
        Campaign(spec(repeats=2, **kw), out_dir=out).run(progress=False)
    return str(err.value)


def _files_text(out: Path) -> str:
    return "".join(p.read_bytes().decode("utf-8", "replace") for p in out.rglob("*")
                   if p.is_file())


def test_a_variable_outside_the_record_set_unset_or_changed_is_refused_by_name(
        spec, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv("USE_FLASH_ATTN", "1")
    monkeypatch.setenv("MY_SERVICE_PASSWORD", SECRET)
    Campaign(spec(), out_dir=out).run(progress=False)
    assert "stand-in: USE_FLASH_ATTN=1" in (out / "1n1g" / "resnet50_b4_fp32_1.log").read_text()
    marker = json.loads((out / "1n1g" / "resnet50_b4_fp32_1.done").read_text())
    assert {"USE_FLASH_ATTN", "MY_SERVICE_PASSWORD", "PATH"} <= set(marker[DIGESTS]["variables"])
    assert SECRET not in _files_text(out)  # names and keyed digests only
    key = out / ".campaign" / "env.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    monkeypatch.setenv("USE_FLASH_ATTN", "0")
    text = _refusal(spec, out)
    assert "env.USE_FLASH_ATTN: another value (values not recorded) (1 done run(s)" in text
    assert "USE_FLASH_ATTN: 1" not in text and "--fresh" in text
    monkeypatch.delenv("USE_FLASH_ATTN")
    assert "env.USE_FLASH_ATTN: set (value not recorded) → (unset)" in _refusal(spec, out)
    monkeypatch.setenv("USE_FLASH_ATTN", "1")
    monkeypatch.setenv("AMP", "1")
    assert "env.AMP: (unset) → set (value not recorded)" in _refusal(spec, out)
    monkeypatch.delenv("AMP")
    monkeypatch.setenv("MY_SERVICE_PASSWORD", SECRET + "2")
    text = _refusal(spec, out)
    assert "env.MY_SERVICE_PASSWORD: another value" in text and SECRET not in text
    assert spec.starts() == 1  # nothing ran
    monkeypatch.setenv("MY_SERVICE_PASSWORD", SECRET)
    st = Campaign(spec(repeats=2), out_dir=out).run(progress=False)
    assert list(st["state"]) == ["done", "done"] and spec.starts() == 2


def test_a_new_login_shell_another_terminal_or_a_tmux_pane_resumes(spec, tmp_path,
                                                                    monkeypatch):
    out = tmp_path / "out"
    for name, value in FIRST_SHELL.items():
        monkeypatch.setenv(name, value)
    Campaign(spec(), out_dir=out).run(progress=False)
    for name in FIRST_SHELL:
        monkeypatch.delenv(name)
    for name, value in OTHER_SHELL.items():
        monkeypatch.setenv(name, value)
    st = Campaign(spec(repeats=2), out_dir=out).run(progress=False)
    assert list(st["state"]) == ["done", "done"] and spec.starts() == 2


def test_done_runs_without_digests_or_of_another_key_are_compared_on_the_rest(
        spec, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    Campaign(spec(), out_dir=out).run(progress=False)
    path = out / "1n1g" / "resnet50_b4_fp32_1.done"
    marker = json.loads(path.read_text())
    monkeypatch.setenv("USE_FLASH_ATTN", "1")
    path.write_text(json.dumps({k: v for k, v in marker.items() if k != DIGESTS}))
    assert Campaign(spec(repeats=2), out_dir=out).changes() == {}  # an older suite's marker
    path.write_text(json.dumps(marker))
    [lines] = Campaign(spec(repeats=2), out_dir=out).changes().values()
    assert lines == ["env.USE_FLASH_ATTN: (unset) → set (value not recorded)"]
    capsys.readouterr()
    (out / ".campaign" / "env.key").unlink()  # a copy without .campaign/, say
    assert Campaign(spec(repeats=2), out_dir=out).changes() == {}
    err = capsys.readouterr().err
    assert "1 done run(s)" in err and "another key" in err and "not compared" in err
    # a spec that still differs is refused on the rest
    with pytest.raises(FolderMismatch, match="case.iterations: 130 → 140"):
        Campaign(spec(iterations=140), out_dir=out).run(progress=False)


def test_slurm_resume_refuses_a_changed_variable_outside_the_record(slurm_cluster, spec,
                                                                    tmp_path, monkeypatch):
    out = tmp_path / "out"
    slurm = {"backend": "slurm", "slurm": {"partition": "debug"}, "timeout": 120}
    monkeypatch.setenv("USE_FLASH_ATTN", "1")
    for name, value in FIRST_SHELL.items():
        monkeypatch.setenv(name, value)
    st = Campaign(spec(**slurm), out_dir=out).run(progress=False)
    assert list(st["state"]) == ["done"], st.to_string()
    assert "stand-in: USE_FLASH_ATTN=1" in (out / "1n1g" / "resnet50_b4_fp32_1.log").read_text()
    monkeypatch.setenv("USE_FLASH_ATTN", "0")
    assert "env.USE_FLASH_ATTN: another value" in _refusal(spec, out, **slurm)
    monkeypatch.setenv("USE_FLASH_ATTN", "1")
    for name in FIRST_SHELL:
        monkeypatch.delenv(name)
    for name, value in OTHER_SHELL.items():
        monkeypatch.setenv(name, value)
    st = Campaign(spec(repeats=2, **slurm), out_dir=out).run(progress=False)
    assert list(st["state"]) == ["done", "done"], st.to_string()
    assert spec.starts() == 2
