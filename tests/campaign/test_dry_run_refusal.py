"""`dlperf run --dry-run` on a folder whose done runs the spec would run differently prints its
plan, then the real run's refusal: the same message, the same exit status, nothing written (the
campaign's key not made either); with --fresh, which moves the folder aside first, the plan
alone (a real local campaign of the test workload in sleeper.py)."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)
import yaml

from analysis.cli import main

pytestmark = pytest.mark.slow


def _spec(path: Path, **kw) -> Path:
    raw = {"name": "dryrun", "workload": "test_sleeper", "precisions": ["fp32"],
           "batch_sizes": [1], "devices": ["1n1g"], "repeats": 2, "iterations": 30,
           "retries": 0, "options": {"marker": f"dlperf-t-{uuid.uuid4().hex[:8]}",
                                     "seconds": 0.2}}
    path.write_text(yaml.safe_dump(dict(raw, **kw)))
    return path


def _files(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_dry_run_says_the_refusal_of_the_real_run(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(_spec(tmp_path / "a.yaml")), "-o", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    changed = str(_spec(tmp_path / "b.yaml", repeats=4, iterations=40))
    (out / ".campaign" / "env.key").unlink()  # a folder copied without its key, say
    before = _files(out)
    assert main(["run", changed, "-o", str(out), "--dry-run"]) == 2
    dry = capsys.readouterr()
    assert _files(out) == before  # nothing written, no key made
    assert "case.iterations: 30 → 40" in dry.err and "run 1n1g/resnet50_b1_fp32_4:" in dry.out
    assert main(["run", changed, "-o", str(out), "--no-progress"]) == 2
    real = capsys.readouterr()
    assert dry.err == real.err and not real.out
    # --fresh: the real run would move the folder aside and run the new spec
    before = _files(out)
    assert main(["run", changed, "-o", str(out), "--dry-run", "--fresh"]) == 0
    fresh = capsys.readouterr()
    assert "run 1n1g/resnet50_b1_fp32_4:" in fresh.out and "would run" not in fresh.err
    assert _files(out) == before
