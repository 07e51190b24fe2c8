"""The daemon fixtures fail, never skip, when sshd/Slurm cannot start: a skip would hide a
broken install (issue 9, item 24)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _campaign_conftest():
    spec = importlib.util.spec_from_file_location("campaign_conftest_under_test",
                                                  HERE / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_missing_slurm_binaries_fail_the_fixture(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no slurmctld, no munged
    monkeypatch.setattr("os.geteuid", lambda: 0)
    with pytest.raises(BaseException) as outcome:  # Skipped is a BaseException too
        _campaign_conftest()._need_root("munged", "slurmctld", "slurmd", "sbatch")
    assert outcome.type is pytest.fail.Exception, f"{outcome.type.__name__}: {outcome.value}"
    assert "missing munged, slurmctld, slurmd, sbatch" in str(outcome.value)
    assert "make setup" in str(outcome.value)


def test_not_being_root_fails_the_fixture(monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(BaseException) as outcome:
        _campaign_conftest()._need_root("/usr/sbin/sshd")
    assert outcome.type is pytest.fail.Exception, f"{outcome.type.__name__}: {outcome.value}"
    assert "need root" in str(outcome.value)
