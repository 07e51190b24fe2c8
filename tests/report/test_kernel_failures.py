"""The report kernel is papermill's (``analysis.notebook_run``): a kernel that does not start
or dies is one error line naming how it ended (exit code, signal) and writes nothing, and the
kernel does not see the modules beside the script that publishes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import synth

HERE = Path(__file__).resolve().parent


def _report(dlperf_exe: str, logs: Path, out: Path, langs: str, env: dict, cwd: Path):
    return subprocess.run([dlperf_exe, "report", str(logs), "-o", str(out), "--lang", langs,
                           "--to", "html"], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=300)


def test_a_kernel_that_dies_at_start_is_one_line_naming_its_exit_code(tmp_path, dlperf_exe):
    # an IPython profile whose kernel config ends the process: the kernel dies in
    # IPKernelApp.initialize, before it answers
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text("import os\nos._exit(3)\n")
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"))
    done = _report(dlperf_exe, logs, tmp_path / "out", "en", env, tmp_path)
    assert done.returncode == 1, done.stderr
    assert [x for x in done.stderr.splitlines() if x not in ("parsing…", "en: executing…")
            ] == ["dlperf: error: the report kernel (python3) exited with code 3 before it "
                  "was ready (what it printed, if anything, is above)"]


def test_a_kernel_that_cannot_import_ipykernel_says_so_once(tmp_path, dlperf_exe):
    broken = tmp_path / "broken" / "ipykernel"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ImportError("ipykernel is broken here")\n')
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    path = os.pathsep.join(filter(None, (os.environ.get("PYTHONPATH"), str(broken.parent))))
    done = _report(dlperf_exe, logs, tmp_path / "out", "en", dict(os.environ, PYTHONPATH=path),
                   tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert lines.count("ImportError: ipykernel is broken here") == 1, done.stderr
    assert lines[-1] == ("dlperf: error: the report kernel (python3) exited with code 1 "
                         "before it was ready (what it printed, if anything, is above)")


def test_a_kernel_killed_while_it_executes_is_one_line_naming_the_signal(tmp_path, dlperf_exe):
    # an IPython startup file that SIGKILLs the kernel when it runs its first cell (as the
    # OOM killer would)
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-die.py").write_text(
        "import os, signal\n"
        "get_ipython().events.register('pre_run_cell',\n"
        "                              lambda *_: os.kill(os.getpid(), signal.SIGKILL))\n")
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"))
    done = _report(dlperf_exe, logs, tmp_path / "out", "en,zh", env, tmp_path)
    assert done.returncode == 1, done.stderr
    assert [x for x in done.stderr.splitlines() if x not in ("parsing…", "en: executing…")
            ] == ["dlperf: error: the report kernel (python3) was killed by SIGKILL while it "
                  "executed the en report; nothing was written"]
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


#: A publisher script: runs a cell that says whether a module beside the script is
#: importable in the kernel.
BESIDE = r'''
import json, sys
from pathlib import Path
import nbformat
from nbformat.v4 import new_code_cell, new_notebook
from analysis.notebook_run import kernel
from analysis.report import publish

folder = Path(sys.argv[1])
src = folder / "cell.ipynb"
nbformat.write(new_notebook(cells=[new_code_cell(
    "import importlib.util; print(importlib.util.find_spec('dlperf_beside_publisher') is None)")],
    metadata={"kernelspec": {"name": "python3", "language": "python",
                             "display_name": "Python 3"}}), src)
with kernel(folder) as km:
    nb = publish.execute(folder / "out.ipynb", {}, km, folder, notebook=src)
print(json.dumps({"hidden": nb.cells[0].outputs[0]["text"].strip()}))
'''


def test_the_modules_beside_a_publisher_script_are_not_the_kernels(tmp_path):
    # `python ~/bin/make_reports.py`: the interpreter puts the script's folder first on
    # sys.path; a module there (a utils.py) must not shadow what the kernel imports
    scripts, folder = tmp_path / "scripts", tmp_path / "build"
    scripts.mkdir()
    folder.mkdir()
    (scripts / "make_reports.py").write_text(BESIDE)
    (scripts / "dlperf_beside_publisher.py").write_text("")
    done = subprocess.run([sys.executable, str(scripts / "make_reports.py"), str(folder)],
                          capture_output=True, text=True, timeout=300, cwd=scripts)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"hidden": "True"}
