"""Ctrl-C during `dlperf report`: a real SIGINT to the command's process group (what a
terminal sends) leaves no partial outputs, no temporary files and no kernel processes,
and the command says "dlperf: interrupted". SIGTERM to the command alone (`kill`,
`timeout`, a cancelled CI job) stops it the same way."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from synth import write_campaign, write_markers

pytestmark = pytest.mark.slow


def _kernels_of(pid: int) -> list[int]:
    """Pids of the kernel processes (ipykernel) whose parent is `pid`."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"ipykernel" in cmd:
            found.append(int(d.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


@pytest.mark.parametrize(("phase", "signum"), [("kernels", signal.SIGINT),
                                               ("en: pdf", signal.SIGINT),
                                               ("kernels", signal.SIGTERM)])
def test_ctrl_c_or_sigterm_leaves_nothing_behind(tmp_path, dlperf_exe, phase, signum):
    logs, out, tmp, runtime = (tmp_path / n for n in ("logs", "out", "tmp", "runtime"))
    write_markers(logs, write_campaign(logs, configs=((1, 1), (1, 8)), repeats=2))
    for d in (out, tmp, runtime):
        d.mkdir()
    (out / "report_en.html").write_text("previous report")
    env = dict(os.environ, TMPDIR=str(tmp), JUPYTER_RUNTIME_DIR=str(runtime))
    proc = subprocess.Popen([dlperf_exe, "report", str(logs), "-o", str(out), "--lang", "en,zh",
                             "--to", "html,pdf"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                            start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        if phase == "kernels":  # the notebook executing in the build's kernel
            kernels = _wait_for(lambda: "en: executing…\n" in lines and _kernels_of(proc.pid),
                                300, "the kernel")
            time.sleep(1.0)
        else:  # a progress line names the step
            _wait_for(lambda: phase + "\n" in lines, 300, phase)
            kernels = []
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)  # Ctrl-C in the terminal
        else:
            os.kill(proc.pid, signum)  # as kill and timeout send it
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    reader.join(timeout=10)
    stderr = "".join(lines)
    # no partial outputs: the previous report is untouched, nothing else was written
    assert sorted(p.name for p in out.iterdir()) == ["report_en.html"], stderr
    assert (out / "report_en.html").read_text() == "previous report"
    assert list(tmp.iterdir()) == [], "temporary files left"
    assert [p.name for p in runtime.iterdir() if p.name.startswith("kernel-")] == []
    assert not [pid for pid in kernels if _running(pid)], "kernel processes left running"
    assert not _kernels_of(proc.pid)
    # one line, no traceback (the CLI's handler turns KeyboardInterrupt into it)
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1] == "dlperf: interrupted", stderr
    assert [x for x in stderr.splitlines()[:-1] if not x.startswith(("parsing", "en: ", "zh: "))
            ] == [], "only progress lines before it"


def test_bad_input_stops_the_kernels_in_one_line(tmp_path, dlperf_exe):
    logs, out, tmp = (tmp_path / n for n in ("logs", "out", "tmp"))
    write_campaign(logs, configs=((1, 1),), repeats=2)
    tmp.mkdir()
    missing = tmp_path / "no-such.env.json"
    done = subprocess.run([dlperf_exe, "report", str(logs), "-o", str(out), "--to", "html",
                           "--env", str(missing)], capture_output=True, text=True,
                          env=dict(os.environ, TMPDIR=str(tmp)), cwd=tmp_path, timeout=300)
    assert done.returncode == 2, done.stderr
    progress = {"parsing…", "en: executing…", "zh: executing…"}
    assert [x for x in done.stderr.splitlines() if x not in progress] == [
        f"dlperf: error: cannot read environment record {missing}: [Errno 2] No such file or "
        f"directory: '{missing}'"]
    assert list(out.iterdir()) == [] and list(tmp.iterdir()) == []
