"""`make lab` (scripts/lab.sh) starts JupyterLab on the project folder that answers on loopback
with the printed URL (10_analyse), also as root (the README's set-up runs as root); its PDF
export prints through the system Chromium."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

URL_LINE = re.compile(r"lab: open (http://127\.0\.0\.1:(\d+)/lab/tree/notebooks/10_analyse\.ipynb"
                      r"\?token=([0-9a-f]{48}))")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.slow
def test_lab_script_serves_the_printed_url(root, tmp_path):
    port = _free_port()
    out = tmp_path / "lab.out"
    env = {**os.environ, "LAB_PORT": str(port), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    env.pop("LAB_TOKEN", None)
    with out.open("wb") as sink:
        proc = subprocess.Popen(["bash", str(root / "scripts" / "lab.sh")], cwd=root, env=env,
                                stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline, match, code = time.monotonic() + 120, None, None
        while time.monotonic() < deadline and proc.poll() is None:
            match = match or URL_LINE.search(out.read_text(errors="replace"))
            if match:
                code = _status(f"http://127.0.0.1:{port}/api/status?token={match.group(3)}") \
                    if _port_open(port) else None
                if code == 200:
                    break
            time.sleep(0.5)
        log = out.read_text(errors="replace")
        assert proc.poll() is None, f"lab.sh exited {proc.returncode} (uid {os.getuid()}):\n{log[-2000:]}"
        assert match, f"no 'lab: open URL' line:\n{log[-2000:]}"
        assert int(match.group(2)) == port
        assert code == 200, f"server did not answer in time:\n{log[-2000:]}"
        # the page itself, with the printed token; without a token the API refuses
        assert _status(match.group(1)) == 200
        assert _status(f"http://127.0.0.1:{port}/api/status") == 403
        # the project folder is served: the logs a report links to and data/ open in Lab
        token = match.group(3)
        assert _status(f"http://127.0.0.1:{port}/files/data/raw_logs/rn50_4gpu/1n1g/"
                       f"resnet50_b128_fp32_1.log?token={token}") == 200
        # no news toast over the notebook: scripts/lab_settings/overrides.json makes "Never"
        # Lab's default (the browser check: tests/report/test_jupyterlab.py)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab/api/settings/@jupyterlab/"
                                    f"apputils-extension:notification?token={token}",
                                    timeout=30) as r:
            notification = json.load(r)["schema"]["properties"]
        assert notification["fetchNews"]["default"] == "false"
        assert notification["checkForUpdates"]["default"] is False
        # File › Save and Export › PDF was a raw 500 page (no pandoc, no xelatex)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/nbconvert/pdf/notebooks/"
                                    f"40_trends.ipynb?download=true&token={token}",
                                    timeout=60) as r:
            assert r.read(5) == b"%PDF-"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
    assert not _port_open(port), "the server still listens after SIGTERM"


def test_lab_script_refuses_a_bad_port(root):
    proc = subprocess.run(["bash", str(root / "scripts" / "lab.sh")], cwd=root,
                          env={**os.environ, "LAB_PORT": "88; touch /tmp/x"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "lab: LAB_PORT must be a port number, not '88; touch /tmp/x'"


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
