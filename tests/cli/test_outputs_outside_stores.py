"""Every command that writes an output folder refuses one that is a results store or lies
inside one, before anything runs or moves: `dlperf run --fresh -o STORE` moved the whole store
aside (the next `store add` then began an empty one there), and a run or a report written
into `STORE/campaigns/x` left the store read as damaged. Also: `dlperf compare A A` (one
campaign by three spellings of its path) gives the verdicts its repeats can tell, as
docs/cli.md says."""

from __future__ import annotations

import hashlib
import shutil

import pytest
import yaml

from ._helpers import CAMPAIGN, ONE_RUN_DIR, assert_one_clean_line, run_cli

STEM = "resnet50_b256_amp_1"


@pytest.fixture
def store(dlperf_exe, tmp_path):
    """A store holding one campaign of one run, and a tiny CPU campaign spec."""
    d = tmp_path / "logs" / "1n1g"
    d.mkdir(parents=True)
    for suffix in (".log", ".gpu.csv"):
        shutil.copy(ONE_RUN_DIR / f"{STEM}{suffix}", d)
    r = run_cli(dlperf_exe, "store", "add", tmp_path / "logs", "--store", tmp_path / "st",
                "--name", "a")
    assert r.returncode == 0, r.stderr
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump({
        "name": "tiny", "workload": "builtin", "precisions": ["fp32"], "batch_sizes": [2],
        "devices": ["1n1g"], "repeats": 1, "iterations": 8, "retries": 0, "timeout": 240}))
    return tmp_path


def _snapshot(folder):
    """Every file under `folder` by path, with the hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _assert_refused_and_intact(dlperf_exe, root, before, r):
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert_one_clean_line(r.stderr, "inside the results store", str(root / "st"))
    assert sorted(p.name for p in root.iterdir()) == ["logs", "spec.yaml", "st"]
    assert _snapshot(root / "st") == before
    listed = run_cli(dlperf_exe, "store", "list", "--store", root / "st")
    assert listed.returncode == 0, listed.stderr


@pytest.mark.slow
@pytest.mark.parametrize("out, options", [("st", ["--fresh"]), ("st", []),
                                          ("st/campaigns/x", []),
                                          ("st/campaigns/x", ["--fresh"]),
                                          ("st/campaigns/x", ["--dry-run"])])
def test_run_refuses_an_output_folder_in_a_store(dlperf_exe, store, out, options):
    before = _snapshot(store / "st")
    r = run_cli(dlperf_exe, "run", store / "spec.yaml", "-o", store / out, "--no-progress",
                *options, timeout=600)
    _assert_refused_and_intact(dlperf_exe, store, before, r)


@pytest.mark.slow
@pytest.mark.parametrize("out", ["st/campaigns/x", "st"])
def test_report_refuses_an_output_folder_in_a_store(dlperf_exe, store, out):
    before = _snapshot(store / "st")
    r = run_cli(dlperf_exe, "report", store / "logs", "-o", store / out, "--to", "html",
                "--lang", "en", timeout=600)
    _assert_refused_and_intact(dlperf_exe, store, before, r)


def test_report_refuses_a_link_into_a_store(dlperf_exe, store):
    (store / "link").symlink_to(store / "st" / "campaigns")
    before = _snapshot(store / "st")
    r = run_cli(dlperf_exe, "report", store / "logs", "-o", store / "link" / "x")
    assert r.returncode == 2
    assert_one_clean_line(r.stderr, "inside the results store", str(store / "st"))
    assert _snapshot(store / "st") == before and not (store / "st" / "campaigns" / "x").exists()


@pytest.mark.parametrize("spelling", ["same", "dot", "link"])
def test_a_campaign_compared_with_itself_gets_its_repeats_verdicts(dlperf_exe, tmp_path,
                                                                   spelling):
    new = {"same": CAMPAIGN, "dot": CAMPAIGN / ".", "link": tmp_path / "lnk"}[spelling]
    (tmp_path / "lnk").symlink_to(CAMPAIGN)
    r = run_cli(dlperf_exe, "compare", CAMPAIGN, new, "--threshold", "0.3%")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines() if line.startswith("PyTorch/")]
    verdicts = set()
    for row in rows:
        change, low, high = row[4], row[6].strip("[,"), row[7].strip("]")
        assert change == "+0.00" and float(low) == -float(high), row
        verdict = " ".join(row[9:12]) if row[9] == "interval" else row[9]
        # the interval decides, as for two campaigns: within ±0.3 % it is unchanged
        assert verdict == ("unchanged" if float(high) <= 0.3 else "interval too wide"), row
        verdicts.add(verdict)
    assert len(rows) == 8 and verdicts == {"unchanged", "interval too wide"}
