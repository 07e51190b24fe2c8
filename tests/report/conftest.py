"""Fixtures of the report tests: a small synthetic campaign (9 OneFlow runs, 3 configs x 3
repeats, env records, a topology file, campaign markers and a `<script>` log line) and its
published reports, built once per session."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

ROOT = HERE.parent.parent
TOPO = ROOT / "tests" / "data" / "topology" / "v100_dgx1_mlx5" / "topo.txt"
SCRIPT_LINE = 'train: epoch 0, iter 55, loss: <script>document.title="PWNED"</script>'
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


@pytest.fixture(scope="session")
def campaign(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("campaign") / "logs"
    paths = synth.write_campaign(root, extra_line=SCRIPT_LINE)
    synth.write_markers(root, paths)
    topo = TOPO.read_text()
    (root / "node1.env.json").write_text(json.dumps(synth.env_record("node1", topo)))
    (root / "node2.env.json").write_text(json.dumps(synth.env_record("node2", topo)))
    shutil.copy(TOPO, root / "topo_node1.txt")
    return root


@pytest.fixture(scope="session")
def store(campaign, tmp_path_factory) -> Path:
    """A results store holding the campaign as "A" (tests that use it only read it)."""
    from analysis.changes import sources
    from analysis.changes import store as results_store

    folder = tmp_path_factory.mktemp("campaign_store") / "store"
    results_store.add(folder, sources.load(str(campaign)), name="A")
    return folder


def files_of(folder: Path) -> dict:
    """Every path under `folder` with its bytes (False for a folder): what a refusal must
    leave as it was."""
    return {p: p.is_file() and p.read_bytes() for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="session")
def published(campaign, tmp_path_factory):
    from analysis.report.publish import publish

    out = tmp_path_factory.mktemp("reports")
    return publish(campaign, out, langs="en,zh", to="html,pdf")


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: run scripts/setup.sh (apt chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def expected_medians() -> dict[tuple[int, int], float]:
    """(nodes, GPUs/node) -> median of the synthetic repeats' throughputs."""
    import statistics

    return {(n, g): statistics.median(synth.throughput("fp32", 128, n, g, r) for r in (1, 2, 3))
            for n, g in ((1, 1), (1, 8), (2, 8))}


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Screenshots and rendered pages are kept here for people to look at."""
    d = ROOT / "tmp" / "report-artifacts"
    d.mkdir(parents=True, exist_ok=True)
    return d
