"""Report kernels forked from the publisher instead of started as new processes.

A kernel started as a new process spends most of its start importing what the publisher has
imported already (pandas, matplotlib, seaborn, the report code): about 1.3 s of a 2-core
machine before the notebook's first cell does any work. So when a build runs the stock
``python3`` kernel of this very interpreter, the publisher forks itself once, before it
starts any thread (a :class:`Zygote`): the child imports ipykernel while the publisher
parses, then waits. When the build's kernel manager launches its kernel, the child is told
the command line, environment and folder a new process would get, applies them, and runs
the same ``IPKernelApp`` that ``python -m ipykernel_launcher`` runs, in its own session.

What a new kernel would not have, the child drops: the publisher's exit handlers and signal
handlers, its root logger's handlers and level, its standard input, the descriptors its
caller passed it, its script's folder or the caller's folder at the head of ``sys.path``;
it ends with ``os._exit`` (the publisher's objects it holds are not finalised twice). Anything else
starts a new process as before (:func:`usable` says when): another kernel, a publisher
running inside IPython, in an event loop or with other threads running (forking those is
unsafe), an interpreter started with options (``python -O``, ``-W error``: a new kernel has
none), a system other than Linux, or ``DLPERF_REPORT_KERNEL=spawn`` in the environment.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import json
import logging
import os
import signal
import struct
import sys
import threading
import time
import traceback

from jupyter_client.provisioning import LocalProvisioner
from traitlets import Any, Bool

from analysis.shell import fork_worker

#: Environment variable that turns forked kernels off (``spawn``).
SWITCH = "DLPERF_REPORT_KERNEL"
#: The launcher module of the stock Python kernel (``python -m ipykernel_launcher``).
LAUNCHER = "ipykernel_launcher"
#: The length of the launch message before it, in the zygote's pipe (struct format).
_LENGTH = "!Q"
#: The forked kernel's process name (``ps -o comm``, ``top``; its command line is the
#: publisher's).
PROCESS_NAME = "dlperf-kernel"


def usable() -> bool:
    """Whether this process can fork a report kernel safely now: on Linux, not switched off,
    only this thread runs, no event loop runs in it, it is not an IPython session
    (whose singletons the child would inherit) and it was started without
    :func:`interpreter_options`."""
    if not sys.platform.startswith("linux") or os.environ.get(SWITCH, "").strip() == "spawn":
        return False
    if interpreter_options():
        return False
    if threading.active_count() != 1 or asyncio._get_running_loop() is not None:
        return False
    shell = sys.modules.get("IPython.core.interactiveshell")
    if shell is not None and shell.InteractiveShell.initialized():
        return False
    pyplot = sys.modules.get("matplotlib.pyplot")
    # a backend pyplot has resolved here would be the kernel's too, not Jupyter's inline one
    return pyplot is None or getattr(pyplot, "_backend_mod", None) is None


def interpreter_options() -> bool:
    """Whether this interpreter was started with options before its program (``python -O
    -m analysis``, ``python -W error .venv/bin/dlperf``). A kernel forked from it would keep
    them (-O skips the notebook's asserts, -W error makes its warnings errors, -I/-E/-s
    change ``sys.path``), a new one is ``python -m ipykernel_launcher``, without them; those
    set in the environment (``PYTHONOPTIMIZE``) reach a new kernel too and do not count."""
    first = getattr(sys, "orig_argv", [])[1:2]
    return bool(first) and first[0].startswith("-") and first[0] not in ("-m", "-c", "-")


def accepts(cmd: list[str]) -> bool:
    """Whether `cmd` starts the stock Python kernel with this interpreter."""
    return (len(cmd) >= 3 and os.path.abspath(os.path.expanduser(cmd[0]))
            == os.path.abspath(sys.executable) and cmd[1:3] == ["-m", LAUNCHER])


class ForkedProcess:
    """What a Popen object offers a provisioner, for a forked child."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else: it has ended
                self.returncode = -signal.SIGKILL
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        while self.poll() is None:
            time.sleep(0.01)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """A child forked from this process that becomes a kernel when :meth:`launch` tells it
    how, or ends when :meth:`discard` is called (or this process ends) first."""

    def __init__(self):
        read_end, write_end = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
        pid = fork_worker()
        if pid == 0:  # the child
            code = 1
            try:
                os.close(write_end)
                code = _child(read_end)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # noqa: BLE001 - the kernel's stderr is the one place to say it
                traceback.print_exc()
            finally:
                try:
                    atexit._run_exitfuncs()  # the kernel's own (the publisher's were cleared)
                    for stream in (sys.stdout, sys.stderr):
                        stream.flush()
                finally:
                    os._exit(code)
        os.close(read_end)
        self.process = ForkedProcess(pid)
        self._pipe: int | None = write_end

    def launch(self, cmd: list[str], env: dict[str, str], cwd: str | None) -> ForkedProcess:
        """Make the child the kernel of `cmd` (see :func:`accepts`) with `env` and `cwd`.
        OSError when the child has gone (the caller starts a new process instead)."""
        if self._pipe is None:
            raise OSError("the forked kernel was discarded")
        spec = json.dumps({"argv": cmd[3:], "env": dict(env), "cwd": cwd}).encode("utf-8")
        spec = struct.pack(_LENGTH, len(spec)) + spec  # the child reads no further (below)
        pipe, self._pipe = self._pipe, None
        try:
            view = memoryview(spec)
            while view:
                view = view[os.write(pipe, view):]
        finally:
            os.close(pipe)
        return self.process

    def discard(self) -> None:
        """End the child if it has not become a kernel (it holds nothing worth a goodbye)."""
        if self._pipe is not None:
            pipe, self._pipe = self._pipe, None
            os.close(pipe)
            self.process.kill()
            self.process.wait()


def _child(read_end: int) -> int:
    """The zygote's life: leave the publisher's session, import the kernel, wait for its
    command line and become it. Returns the exit code. A failed import is said only when
    the child is asked to be the kernel: discarded, it has nothing to report."""
    os.setsid()  # as jupyter_client starts kernels: a Ctrl-C in the terminal is not theirs
    gc.freeze()  # the publisher's objects (its garbage too) are never finalised here
    _name_process(PROCESS_NAME)
    atexit._clear()  # the publisher's exit handlers (its temporary folders...) are not ours
    asyncio.set_event_loop(asyncio.new_event_loop())  # not the publisher's: its epoll is shared
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGALRM,
                   signal.SIGUSR1, signal.SIGUSR2, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.set_wakeup_fd(-1)
    _root_logger_as_new()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _close_inherited()
    failed = None
    try:
        from ipykernel.kernelapp import IPKernelApp  # while the publisher parses
    except BaseException:  # noqa: BLE001 - said below, if this child is to be the kernel
        failed = traceback.format_exc()
    header = _read_exactly(read_end, struct.calcsize(_LENGTH))
    spec = header and _read_exactly(read_end, struct.unpack(_LENGTH, header)[0])
    os.close(read_end)
    if spec is None:
        return 0  # discarded
    if failed is not None:
        sys.stderr.write(failed)
        return 1
    spec = json.loads(spec)
    _drop_program_folder()
    if spec["cwd"]:
        os.chdir(spec["cwd"])
    os.environ.clear()
    os.environ.update(spec["env"])
    sys.argv = [LAUNCHER, *spec["argv"]]
    # the trait's default read JPY_PARENT_PID when the zygote imported ipykernel
    app = IPKernelApp.instance(parent_handle=int(os.environ.get("JPY_PARENT_PID") or 0))
    app.initialize(spec["argv"])
    _backend_as_new_kernel()
    app.start()
    return 0


def _root_logger_as_new() -> None:
    """The root logger as a new process has it (level WARNING, no handler, no filter): the
    handlers a script calling publish() gave it (``logging.basicConfig``: its stream, its
    file) and its level are not the kernel's. The handlers are left open: they are the
    publisher's."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for log_filter in list(root.filters):
        root.removeFilter(log_filter)
    root.setLevel(logging.WARNING)
    logging.disable(logging.NOTSET)


def _drop_program_folder() -> None:
    """Take off ``sys.path`` the folder the interpreter put first for the publisher's
    program: its script's folder (symbolic links resolved), whose modules would shadow
    what the kernel imports, or for ``-c`` / ``-m`` "" or the current folder
    (ipykernel_launcher's rule). IPython puts "" (the kernel's folder) there instead."""
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None) if getattr(main, "__spec__", 0) is None else None
    folder = os.path.dirname(os.path.realpath(script)) if script else None
    if folder and not sys.flags.safe_path and folder in sys.path:
        sys.path.remove(folder)
    elif sys.path and (sys.path[0] == "" or os.path.abspath(sys.path[0]) == os.getcwd()):
        del sys.path[0]


def _read_exactly(fd: int, size: int) -> bytes | None:
    """`size` bytes from `fd`; None when it ends first. (Not "up to the end": any child the
    publisher forks while it holds the pipe, a parse worker, holds its other end too, and
    the end comes only when that child ends.)"""
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _close_inherited() -> None:
    """Close the descriptors beyond 0-2 that this process inherited from its caller (a lock
    from flock, make's jobserver): a new kernel is started with ``close_fds``. Python opens
    its own close-on-exec, so what is inheritable here came from outside."""
    for name in os.listdir("/proc/self/fd"):
        try:
            if int(name) > 2 and os.get_inheritable(int(name)):
                os.close(int(name))
        except OSError:  # the listing's own descriptor, closed by now
            pass


def _name_process(name: str) -> None:
    """Set this process's name (Linux ``prctl(PR_SET_NAME)``; nothing where that fails)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(15, name.encode()[:15], 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _backend_as_new_kernel() -> None:
    """matplotlib read its backend from the environment when the publisher imported it; a
    new kernel reads the inline backend ipykernel has just put there."""
    matplotlib = sys.modules.get("matplotlib")
    backend = os.environ.get("MPLBACKEND")
    if matplotlib is not None and backend:
        matplotlib.rcParams["backend"] = backend


class ForkProvisioner(LocalProvisioner):
    """The local provisioner, launching its kernel in a :class:`Zygote` when it can."""

    zygote = Any(None, allow_none=True, help="the build's zygote")
    forked = Bool(False, help="whether the kernel is the zygote (else a new process)")

    async def launch_kernel(self, cmd: list[str], **kwargs):
        zygote, self.zygote = self.zygote, None
        if zygote is not None and accepts(cmd):
            env = dict(kwargs.get("env") or os.environ)
            env["JPY_PARENT_PID"] = str(os.getpid())  # as jupyter_client's launcher sets it
            try:
                self.process = zygote.launch(cmd, env, kwargs.get("cwd"))
            except OSError:
                zygote.discard()
            else:
                self.pid = self.pgid = self.process.pid  # it leads its own session
                self.forked = True
                self.cwd = kwargs.get("cwd") or os.getcwd()
                return self.connection_info
        elif zygote is not None:
            zygote.discard()
        return await super().launch_kernel(cmd, **kwargs)
