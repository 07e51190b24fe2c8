"""The interactive path in a real browser: scripts/lab.sh starts JupyterLab on loopback,
headless Chromium opens notebooks/10_analyse.ipynb as the printed URL does, runs all cells and
sees the problems, a summary table that sorts by a click on a header and filters by its search
box, and the charts as widgets."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.request

import nbformat
import pytest
from conftest import ROOT
from playwright.sync_api import expect

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(request, campaign, tmp_path):
    # the notebook as committed, with its parameters pointing at the small campaign (or at
    # the log folder given as the fixture's parameter)
    log_dir = getattr(request, "param", None) or str(campaign)
    nb = nbformat.read(ROOT / "notebooks" / "10_analyse.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = params.source.replace('log_dir = "data/raw_logs/gpt_4gpu"',
                                          f"log_dir = {log_dir!r}")
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nb, tmp_path / "notebooks" / "10_analyse.ipynb")
    # JupyterLab 4 renders only the cells in view; render all so the test can find outputs
    settings = tmp_path.parent / "lab-settings"
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True, exist_ok=True)
    tracker.write_text('{"windowingMode": "none"}')
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, LAB_PORT=str(port), LAB_ROOT=str(tmp_path),
               JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTER_CONFIG_DIR=str(tmp_path.parent / "lab-cfg"),
               JUPYTER_RUNTIME_DIR=str(tmp_path.parent / "lab-rt"))
    proc = subprocess.Popen(
        ["bash", str(ROOT / "scripts" / "lab.sh"),
         f"--IdentityProvider.token={token}", "--ServerApp.allow_root=True"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
                pytest.fail(f"JupyterLab did not start: {proc.stdout.read().decode()[-2000:]}")
            time.sleep(0.5)
    yield url, token
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def test_lab_runs_analyse_notebook(lab, browser, artifacts_dir):
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/lab/tree/notebooks/10_analyse.ipynb?token={token}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    # run only once the kernel is connected and idle (the status bar says so)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
    page.locator(".jp-Notebook").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    outputs = page.locator(".jp-OutputArea-output")
    try:
        page.locator(".jupyter-matplotlib-canvas-div").nth(3).wait_for(timeout=90_000)
    finally:
        page.screenshot(path=str(artifacts_dir / "jupyterlab.png"))
    text = "\n".join(outputs.all_inner_texts())
    assert "3 problem(s) in 3 run(s)" in text  # as the report counts them
    assert "Traceback" not in text
    summary = page.locator(".jp-OutputArea-output table.dataTable",
                           has=page.locator("th", has_text="scaling_efficiency"))
    rows = summary.locator("tbody tr")
    assert rows.count() == 3  # every case on one page
    header = summary.locator("thead th", has_text="throughput_median")
    header.scroll_into_view_if_needed()
    header.click()  # ascending: the 1-GPU case first
    expect(header).to_have_attribute("aria-sort", "ascending")
    expect(rows.first.locator("td").nth(5)).to_have_text("1")  # gpus_per_node
    page.wait_for_timeout(500)  # two quick clicks are not two sorts
    header.click()
    expect(header).to_have_attribute("aria-sort", "descending")
    expect(rows.first.locator("td").nth(4)).to_have_text("2")  # num_nodes: 2n8g first
    runs = page.locator(".jp-OutputArea-output table.dataTable",
                        has=page.locator("th", has_text="n_observations"))
    assert runs.locator("tbody tr").count() == 9
    box = runs.locator("xpath=ancestor::div[contains(@class, 'dt-container')][1]")
    box.locator("input[type=search]").fill("1n8g/")
    expect(runs.locator("tbody tr")).to_have_count(3)  # the search box keeps one case's repeats
    page.screenshot(path=str(artifacts_dir / "jupyterlab.png"))
    page.close()


@pytest.mark.parametrize("lab", ["data/raw_logs/gpt_4gpu"], indirect=True)
def test_lab_answers_which_gpt_case_scales_worst(lab, browser, artifacts_dir):
    """From the printed URL to "which case scales worst and why" without writing code: Run
    All, one click on "vs 1 GPU" puts the worst case first with its range, DP
    implementation and notes; no news toast covers the table; a bar of the GPT chart
    answers the pointer (its text: tests/notebooks/test_chart_hover.py)."""
    import re

    url, token = lab
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{url}/lab/tree/notebooks/10_analyse.ipynb?token={token}")
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
    page.locator(".jp-Notebook").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    page.locator(".jupyter-matplotlib-canvas-div").nth(2).wait_for(timeout=90_000)
    assert page.get_by_text("official Jupyter news").count() == 0  # scripts/lab_settings
    table = page.locator(".jp-OutputArea-output table.dataTable",
                         has=page.locator("th", has_text="vs 1 GPU, range"))
    header = table.locator("thead th").filter(has_text=re.compile(r"^vs 1 GPU$"))
    header.scroll_into_view_if_needed()
    header.click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    first, second = (table.locator("tbody tr").nth(i).locator("td") for i in (0, 1))
    expect(first.first).to_have_text("MP_1x4x1_8_1536x16")
    assert first.all_inner_texts()[4:6] == ["38.1\u00a0%", "36.7–40.5\u00a0%"]
    assert "order not resolved" in first.last.inner_text()
    assert second.all_inner_texts()[:4] == ["2D_2x2x1_16_1536x16", "4", "2×2×1", "FSDP2"]
    assert "includes FSDP2's cost over DDP" in second.last.inner_text()
    expect(page.locator(".jp-RenderedMarkdown strong",
                        has_text="What the suite does not measure")).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "jupyterlab_strategies.png"))
    canvas = page.locator(".jupyter-matplotlib-canvas-div").first  # the GPT configurations
    canvas.scroll_into_view_if_needed()
    before = canvas.screenshot()
    box = canvas.bounding_box()  # the bar of PP 1×1×4 B64, samples/s per GPU
    page.mouse.move(box["x"] + box["width"] * 0.25, box["y"] + box["height"] * 0.442)
    page.wait_for_timeout(1500)
    after = canvas.screenshot(path=str(artifacts_dir / "jupyterlab_hover.png"))
    assert after != before, "no hover text drawn over the bar"
    page.close()
