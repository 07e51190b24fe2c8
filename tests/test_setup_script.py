"""scripts/setup.sh (what `make setup` runs) prints one `setup: …` line per step and nothing
else: no "Failed to initialize NumPy" from importing torch before numpy is there, no
setuptools "Editable installation" warning, no apt/debconf chatter (issue 9, item 18).

A real run into a temporary venv that sees the project's installed packages except numpy
(through a .pth file), so it installs numpy and the project itself, as a fresh set-up does
after torch: about a minute instead of the full install's several.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SITE = Path(sys.executable).parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
OWN = ("numpy", "pip", "setuptools", "_distutils_hack", "distutils-precedence", "__editable__",
       "dlperf_suite")


def venv_without_numpy(tmp: Path) -> Path:
    """A new venv whose .pth shows this venv's packages, less numpy and the project."""
    shown = tmp / "shown"
    shown.mkdir()
    for entry in SITE.iterdir():
        if not entry.name.startswith(OWN) and not entry.name.endswith(".pth"):
            (shown / entry.name).symlink_to(entry)
    venv = tmp / "venv"
    base = os.path.realpath(sys.executable)  # the interpreter this venv was made from
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "shown-packages.pth").write_text(f"{shown}\n")
    return venv


def run_setup(repo: Path, venv: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "VENV": str(venv), "HOME": str(home)}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(["bash", str(repo / "scripts" / "setup.sh")], env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_setup_prints_one_line_per_step_and_no_warnings(root, tmp_path):
    venv = venv_without_numpy(tmp_path)
    proc = run_setup(root, venv, tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    noise = [ln for ln in out.splitlines() if not ln.startswith("setup: ")]
    assert noise == [], "\n".join(noise[:40])
    steps = [ln.split("…")[0] for ln in proc.stdout.splitlines()]
    assert steps == ["setup: apt packages", "setup: venv", "setup: venv", "setup: torch",
                     "setup: project", "setup: project", steps[-1]], proc.stdout
    assert steps[-1] == f"setup: done ({venv}; dlperf is {venv}/bin/dlperf, or " \
        f"'source {venv}/bin/activate'; tool output in {venv}/setup.log)"
    assert (venv / "bin" / "dlperf").exists()
    again = run_setup(root, venv, tmp_path)
    assert again.returncode == 0 and again.stdout == f"setup: up to date ({venv})\n"
