"""The report kernel forked from the publisher (``analysis.report.forked_kernel``): it is
used where it can be, it is the kernel a new process would be (folder, environment,
matplotlib backend, ``sys.path``, parent watch), it gives the same report bytes, and it
leaves no process behind when a build fails before its kernel starts.

The builds run in new processes, as ``dlperf report`` does: this test process has threads
of its own (Playwright's, from the session's browser fixture), and a process with other
threads running never forks (:func:`forked_kernel.usable`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from analysis.report import forked_kernel
from analysis.report.kernels import Kernels

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

ROOT = HERE.parent.parent
#: The head of each publisher script below: this folder appended to its sys.path (its head
#: stays the script's own, which the kernel must not get) for one_cell.
USES_ONE_CELL = (f"import json, os, sys\nfrom pathlib import Path\nsys.path.append({str(HERE)!r})\n"
                 "from one_cell import printed, run_cell\n")
#: Runs a one-cell notebook that describes its kernel, in a kernel of a build's Kernels.
PROBE = USES_ONE_CELL + r'''
CELL = """
import json, os, sys
import matplotlib

def inherited():
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if int(name) > 2 and os.get_inheritable(int(name)):
                found.append(os.readlink(f"/proc/self/fd/{name}"))
        except OSError:  # the listing's own descriptor, closed by now
            pass
    return sorted(found)

from ipykernel.kernelapp import IPKernelApp
print(json.dumps({
    "publisher_modules": "analysis.report.build" in sys.modules,
    "pid": os.getpid(),
    "cwd": os.getcwd(),
    "parent": os.environ.get("JPY_PARENT_PID"),
    "parent_handle": IPKernelApp.instance().parent_handle,
    "backend": matplotlib.rcParams["backend"],
    "path": sys.path,
    "stdin": os.readlink("/proc/self/fd/0"),
    "session_leader": os.getsid(0) == os.getpid(),
    "name": open("/proc/self/comm").read().strip(),
    "inherited": inherited(),
}))
"""
forked, outputs = run_cell(Path(sys.argv[1]), CELL)
print(json.dumps(dict(json.loads(printed(outputs)), forked=forked, publisher=os.getpid(),
                      publisher_path=sys.path)))
'''


def _run(code: str, *args, env: dict | None = None, cwd: Path | None = None,
         pass_fds=()) -> str:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=env, cwd=cwd, pass_fds=pass_fds)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _probe(folder: Path, mode: str) -> dict:
    """What the kernel says, its publisher given a pipe by its caller (as flock(1) gives
    its lock, make its jobserver): a new kernel does not keep such descriptors open."""
    folder.mkdir()
    env = dict(os.environ, **{forked_kernel.SWITCH: mode})
    read_end, write_end = os.pipe()
    try:
        said = _run(PROBE, folder, env=env, cwd=folder.parent, pass_fds=(write_end,))
    finally:
        os.close(read_end)
        os.close(write_end)
    return json.loads(said.strip().splitlines()[-1])


def test_forked_kernel_is_the_kernel_a_new_process_would_be(tmp_path):
    forked = _probe(tmp_path / "fork", "fork")
    spawned = _probe(tmp_path / "spawn", "spawn")
    assert (forked.pop("forked"), spawned.pop("forked")) == (True, False)
    # the publisher's modules are imported already in the fork only
    assert (forked.pop("publisher_modules"), spawned.pop("publisher_modules")) == (True, False)
    assert forked.pop("cwd") == str(tmp_path / "fork")  # the build's folder, not ours
    assert spawned.pop("cwd") == str(tmp_path / "spawn")
    assert forked.pop("stdin") == "/dev/null"  # not the publisher's (a new one gets a pipe)
    spawned.pop("stdin")
    assert forked.pop("name") == forked_kernel.PROCESS_NAME
    spawned.pop("name")
    # the caller's descriptors are not held open by the kernel (a caller waiting for the
    # end of its pipe, or a lock held by flock, would wait for the kernel too)
    assert forked["inherited"] == spawned["inherited"] == []
    for said in (forked, spawned):  # watched by its publisher, as jupyter_client arranges
        publisher = said.pop("publisher")
        assert said.pop("pid") != publisher
        assert said.pop("parent") == str(publisher) and said.pop("parent_handle") == publisher
    # sys.path: a new kernel's, nothing of the publisher's but what it added to its own;
    # the folder the publisher ran in is not at its head ("" stands for the kernel's)
    forked_path, spawned_path = forked.pop("path"), spawned.pop("path")
    assert set(spawned_path) <= set(forked_path)
    assert set(forked_path) - set(spawned_path) <= set(forked.pop("publisher_path"))
    assert str(tmp_path) not in forked_path
    spawned.pop("publisher_path")
    assert forked == spawned  # the backend, the session
    assert forked["backend"] == "module://matplotlib_inline.backend_inline"
    assert forked["session_leader"] is True


BUILD = r'''
import json, sys, threading
from analysis.report import publish
result = publish.publish(sys.argv[1], sys.argv[2], langs="en,zh", to="html", progress=None)
print(json.dumps({"forked": result.forked_kernel,
                  "threads": [t.name for t in threading.enumerate()]}))
'''


def test_forked_and_spawned_kernels_write_the_same_report(tmp_path):
    logs = tmp_path / "logs"
    synth.write_markers(logs, synth.write_campaign(logs, configs=((1, 1), (1, 4)), repeats=2))
    outputs = {}
    for mode in ("fork", "spawn"):
        env = dict(os.environ, **{forked_kernel.SWITCH: mode})
        said = json.loads(_run(BUILD, logs, tmp_path / mode, env=env).strip().splitlines()[-1])
        assert said["forked"] is (mode == "fork")
        # nothing of the build keeps running (its kernel clients' heartbeat threads did,
        # and a later build in the process could not fork then)
        assert said["threads"] == ["MainThread"]
        outputs[mode] = {p.name: p.read_bytes() for p in (tmp_path / mode).iterdir()}
    assert sorted(outputs["fork"]) == sorted(outputs["spawn"]) != []
    for name, data in outputs["fork"].items():
        assert data == outputs["spawn"][name], name


FAILING = r'''
import os, sys
from analysis.report import forked_kernel, prepared, publish
made = []
original = forked_kernel.Zygote.__init__
def recording(self):
    original(self)
    made.append(self.process.pid)
def failing(*args, **kwargs):
    raise RuntimeError("parse failed")
forked_kernel.Zygote.__init__ = recording
prepared.compute = failing
try:
    publish.publish(sys.argv[1], sys.argv[2], langs="en", to="html", progress=None)
except RuntimeError as exc:
    print("raised:", exc)
print("forked:", made)
try:
    print("children:", os.waitpid(-1, os.WNOHANG))
except ChildProcessError:
    print("children: none")
'''


def test_a_build_that_fails_before_its_kernel_leaves_no_process(tmp_path):
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    env = {k: v for k, v in os.environ.items() if k != forked_kernel.SWITCH}
    said = _run(FAILING, logs, tmp_path / "out", env=env).splitlines()
    assert said[0] == "raised: parse failed"
    assert said[1].startswith("forked: [") and said[1] != "forked: []"
    assert said[2] == "children: none"  # killed and reaped, not left as a zombie


def test_no_fork_while_other_threads_run(tmp_path, monkeypatch):
    monkeypatch.delenv(forked_kernel.SWITCH, raising=False)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not forked_kernel.usable()
        assert Kernels(tmp_path, fork=True).take_zygote() is None
    finally:
        stop.set()
        other.join()


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(forked_kernel.SWITCH, "spawn")
    assert not forked_kernel.usable()


def test_only_the_stock_kernel_of_this_interpreter_is_forked():
    assert forked_kernel.accepts([sys.executable, "-m", "ipykernel_launcher", "-f", "c.json"])
    assert not forked_kernel.accepts(["/usr/bin/python3-other", "-m", "ipykernel_launcher"])
    assert not forked_kernel.accepts([sys.executable, "-m", "other_kernel", "-f", "c.json"])


#: Runs a cell with an assert in a kernel of a build's Kernels; says whether it was forked
#: and whether the assert ran.
ASSERTING = USES_ONE_CELL + r'''
CELL = """
try:
    assert False
    print("assert skipped")
except AssertionError:
    print("assert ran")
"""
forked, outputs = run_cell(Path(sys.argv[1]), CELL)
print(json.dumps({"forked": forked, "said": printed(outputs)}))
'''


def test_a_publisher_with_interpreter_options_starts_a_new_kernel(tmp_path):
    # `python -O` strips asserts from what the interpreter compiles: a kernel forked from it
    # skipped the notebook's asserts (and -W error, -X dev... would leak the same way); a
    # new kernel is started as `python -m ipykernel_launcher`, without them
    env = {k: v for k, v in os.environ.items() if k != forked_kernel.SWITCH}
    done = subprocess.run([sys.executable, "-O", "-c", ASSERTING, str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said == {"forked": False, "said": "assert ran"}
    # the same publisher without the option forks (this test process cannot show it: it has
    # threads of its own, and a process with threads never forks)
    (tmp_path / "plain").mkdir()
    done = subprocess.run([sys.executable, "-c", ASSERTING, str(tmp_path / "plain")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"forked": True,
                                                               "said": "assert ran"}


def test_interpreter_options_are_those_before_the_program(monkeypatch):
    for argv, options in ((["python", "-m", "analysis", "report"], False),
                          (["/venv/bin/python", "/venv/bin/dlperf", "report", "-O"], False),
                          (["python", "-c", "code", "-W", "error"], False),
                          (["python"], False),
                          (["python", "-O", "-m", "analysis"], True),
                          (["python", "-W", "error", "/venv/bin/dlperf"], True),
                          (["python", "-Xdev", "-c", "code"], True)):
        monkeypatch.setattr(sys, "orig_argv", argv)
        assert forked_kernel.interpreter_options() is options, argv


def test_a_kernel_that_dies_at_start_is_one_line_naming_its_exit_code(tmp_path, dlperf_exe):
    # an IPython profile whose kernel config ends the process: the kernel dies in
    # IPKernelApp.initialize, before it answers (forked, and started as a new process)
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text("import os\nos._exit(3)\n")
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    for mode in ("fork", "spawn"):
        env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"),
                   **{forked_kernel.SWITCH: mode})
        done = subprocess.run([dlperf_exe, "report", str(logs), "-o", str(tmp_path / mode),
                               "--lang", "en", "--to", "html"], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 1, done.stderr
        assert [x for x in done.stderr.splitlines() if x not in ("parsing…", "en: executing…")
                ] == ["dlperf: error: the report kernel (python3) exited with code 3 before "
                      "it was ready (what it printed, if anything, is above)"], mode


def test_a_kernel_that_cannot_import_ipykernel_says_so_once(tmp_path, dlperf_exe):
    # an ipykernel that fails to import, first on the kernels' path: the zygote imports it
    # while the publisher parses, long before it is asked to be the kernel
    broken = tmp_path / "broken" / "ipykernel"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ImportError("ipykernel is broken here")\n')
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    path = os.pathsep.join(filter(None, (os.environ.get("PYTHONPATH"), str(broken.parent))))
    env = {k: v for k, v in os.environ.items() if k != forked_kernel.SWITCH}
    done = subprocess.run([dlperf_exe, "report", str(logs), "-o", str(tmp_path / "out"),
                           "--lang", "en", "--to", "html"], capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=path), cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stderr
    # the kernel's traceback once (the zygote's, when it was the kernel asked for; not
    # again from a new kernel process started in its place), then the error line
    lines = done.stderr.splitlines()
    assert lines.count("ImportError: ipykernel is broken here") == 1, done.stderr
    assert lines[-1] == ("dlperf: error: the report kernel (python3) exited with code 1 "
                         "before it was ready (what it printed, if anything, is above)")


#: Starts a build's kernel while another child forked from the publisher (as the parse
#: pool's workers are, while the kernel starts) is alive and holds what it inherited.
SIBLING = r'''
import os, sys
from pathlib import Path
from jupyter_core.utils import run_sync
from analysis.report.kernels import Kernels
from analysis.shell import fork_worker

kernels = Kernels(Path(sys.argv[1]), fork=True)
hold, release = os.pipe()
sibling = fork_worker()
if sibling == 0:  # lives until the publisher closes `release`
    os.close(release)
    os.read(hold, 1)
    os._exit(0)
os.close(hold)
km = kernels.manager("python3")
try:
    kernels.start(km)
    kc = km.client()
    kc.start_channels()
    run_sync(kc.wait_for_ready)(timeout=20)
    print("ready", kernels.forked, os.waitpid(sibling, os.WNOHANG) == (0, 0))
finally:
    kernels.shutdown(km)
    os.close(release)
    os.waitpid(sibling, 0)
'''


def test_the_kernel_starts_while_another_child_of_the_publisher_runs(tmp_path):
    # the zygote read its command line until the end of its pipe: a child forked from the
    # publisher after it held the pipe's other end too, and the kernel waited for that
    # child to end (measured: kernel ready when a parse worker of 1,200 logs ended)
    env = {k: v for k, v in os.environ.items() if k != forked_kernel.SWITCH}
    said = _run(SIBLING, tmp_path, env=env).strip().splitlines()
    assert said[-1] == "ready True True"


#: A publisher script: runs a cell that says whether a module beside the script is
#: importable in the kernel.
BESIDE = USES_ONE_CELL + r'''
CELL = "import importlib.util; print(importlib.util.find_spec('dlperf_beside_publisher') is None)"
forked, outputs = run_cell(Path(sys.argv[1]), CELL)
print(json.dumps({"forked": forked, "hidden": printed(outputs)}))
'''


def test_the_modules_beside_a_publisher_script_are_not_the_kernels(tmp_path):
    # `python ~/bin/make_reports.py`: the interpreter puts the script's folder first on
    # sys.path; the forked kernel kept it, so a module there (a utils.py, a thread.py that
    # a library tries for Python 2) shadowed what the kernel imports. A new kernel's first
    # entry is its own folder.
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "make_reports.py").write_text(BESIDE)
    (scripts / "dlperf_beside_publisher.py").write_text("")
    for mode in ("fork", "spawn"):
        folder = tmp_path / mode
        folder.mkdir()
        env = dict(os.environ, **{forked_kernel.SWITCH: mode})
        done = subprocess.run([sys.executable, str(scripts / "make_reports.py"), str(folder)],
                              capture_output=True, text=True, timeout=300, env=env,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        said = json.loads(done.stdout.strip().splitlines()[-1])
        assert said == {"forked": mode == "fork", "hidden": "True"}, mode


#: A publisher that configured logging (a script's basicConfig) runs a cell that describes
#: the kernel's root logger.
LOGGING = USES_ONE_CELL + r'''
import logging
logging.basicConfig(level=logging.DEBUG, format="PUBLISHER %(message)s")
CELL = """
import logging
root = logging.getLogger()
print(root.level, [type(h).__name__ for h in root.handlers])
"""
forked, outputs = run_cell(Path(sys.argv[1]), CELL)
print(json.dumps({"forked": forked, "outputs": outputs}))
'''


def test_the_publishers_logging_is_not_the_kernels(tmp_path):
    # a script calling publish() after logging.basicConfig(level=DEBUG): the forked kernel
    # kept its root handler and level, and wrote its libraries' debug records into the
    # notebook (1,650 lines of matplotlib.font_manager in report_en.ipynb, measured)
    said = {}
    for mode in ("fork", "spawn"):
        folder = tmp_path / mode
        folder.mkdir()
        env = dict(os.environ, **{forked_kernel.SWITCH: mode})
        said[mode] = json.loads(_run(LOGGING, folder, env=env).strip().splitlines()[-1])
    assert (said["fork"].pop("forked"), said["spawn"].pop("forked")) == (True, False)
    assert said["fork"] == said["spawn"]
    assert said["fork"]["outputs"] == [{"name": "stdout", "output_type": "stream",
                                        "text": "30 []\n"}]


def test_a_kernel_killed_while_it_executes_is_one_line_naming_the_signal(tmp_path, dlperf_exe):
    # an IPython startup file that SIGKILLs the kernel when it runs its first cell (as the
    # OOM killer would), forked and started as a new process
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-die.py").write_text(
        "import os, signal\n"
        "get_ipython().events.register('pre_run_cell',\n"
        "                              lambda *_: os.kill(os.getpid(), signal.SIGKILL))\n")
    logs = tmp_path / "logs"
    synth.write_campaign(logs, configs=((1, 1),), repeats=1)
    for mode in ("fork", "spawn"):
        env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"),
                   **{forked_kernel.SWITCH: mode})
        done = subprocess.run([dlperf_exe, "report", str(logs), "-o", str(tmp_path / mode),
                               "--lang", "en,zh", "--to", "html"], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 1, done.stderr
        assert [x for x in done.stderr.splitlines() if x not in ("parsing…", "en: executing…")
                ] == ["dlperf: error: the report kernel (python3) was killed by SIGKILL while it "
                      "executed the en report; nothing was written"], mode
        assert not (tmp_path / mode).exists() or not list((tmp_path / mode).iterdir())
