"""The interactive path in a real browser: scripts/lab.sh starts JupyterLab on loopback,
headless Chromium opens 10_analyse.ipynb, runs all cells and sees the summary table."""

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

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(campaign, tmp_path):
    # the notebook as committed, with its parameters pointing at the small campaign
    nb = nbformat.read(ROOT / "notebooks" / "10_analyse.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = params.source.replace("log_dir = None", f"log_dir = {str(campaign)!r}")
    nbformat.write(nb, tmp_path / "10_analyse.ipynb")
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
    page.goto(f"{url}/lab/tree/10_analyse.ipynb?token={token}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    # run only once the kernel is connected and idle (the status bar says so)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
    page.locator(".jp-Notebook").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    header = page.locator(".jp-OutputArea-output table.dataframe th", has_text="throughput_median")
    try:
        header.first.wait_for(state="attached", timeout=60_000)
    finally:
        page.screenshot(path=str(artifacts_dir / "jupyterlab.png"))
    header.first.scroll_into_view_if_needed()
    table = header.first.locator("xpath=ancestor::table[1]")
    assert table.locator("tbody tr").count() == 3
    assert "1n8g/r50_b128_fp32_1" in page.locator(".jp-OutputArea-output").all_inner_texts()[1]
    page.locator(".jp-OutputArea-output img").nth(3).wait_for(state="attached", timeout=60_000)
    page.screenshot(path=str(artifacts_dir / "jupyterlab.png"))
    page.close()
