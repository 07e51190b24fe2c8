"""Run notebooks with papermill on an ordinary, private kernel.

The kernel is jupyter_client's stock one, started by nbclient from the notebook's kernel spec
(``python3`` is this interpreter's ipykernel). Within :func:`kernel`, one notebook or several
in turn run in one kernel (papermill's ``km``), killed when the block ends, however it ends:
the notebooks have run, one failed, or the caller was interrupted (Ctrl-C, or SIGTERM taken
as Ctrl-C: ``analysis.interrupt``). Two settings make it private to the caller's `folder` (a
private temporary folder, mode 0700):

- it talks to papermill over IPC sockets in `folder`, with its connection file there,
  instead of TCP on loopback: no other user can reach it, and ipykernel has no reason to
  warn that it "is running over TCP without encryption";
- it runs in `folder`, so nothing from the caller's folder lands on its ``sys.path``.

nbclient starts the kernel when the first notebook runs; :func:`start` starts it before, so
that it boots (and imports what the notebooks will need) while the caller prepares their data.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path


def kernel_config(folder: str | Path):
    """nbclient settings that put the kernel's sockets and connection file in `folder`."""
    from traitlets.config import Config

    folder = Path(folder)
    return Config({"KernelManager": {"transport": "ipc", "ip": str(folder / "kernel"),
                                     "connection_file": str(folder / "kernel.json")}})


@contextlib.contextmanager
def kernel(folder: str | Path, kernel_name: str = "python3") -> Iterator:
    """A kernel manager for :func:`execute_notebook`: its kernel, private to `folder`,
    starts with the first notebook and is killed when the block ends."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    clients = []

    class Manager(AsyncKernelManager):
        def client(self, **kwargs):
            """nbclient's client of a notebook, kept: nbclient leaves the channels of a
            kernel it does not own running (a heartbeat thread among them)."""
            kc = super().client(**kwargs)
            clients.append(kc)
            return kc

        def blocking_client(self):
            """:func:`start`'s client, kept likewise: its warm-up must reach the kernel."""
            kc = super().blocking_client()
            clients.append(kc)
            return kc

    km = Manager(kernel_name=kernel_name, config=kernel_config(folder))
    try:
        yield km
    except BaseException:
        _cancel_left_tasks()
        raise
    finally:
        for kc in clients:
            kc.stop_channels()
        if km.has_kernel:
            with contextlib.suppress(Exception):  # a kernel that died is gone already
                # killed first: shutdown_kernel interrupts it before it kills it, and a
                # kernel interrupted while it answers logs "KeyboardInterrupt caught"
                run_sync(km.signal_kernel)(signal.SIGKILL)
                run_sync(km.shutdown_kernel)(now=True)  # reaped, sockets and file removed


#: What nbclient adds to an IPython kernel's command line (NotebookClient.ipython_hist_file):
#: no history file, which a kernel started by hand would otherwise create in $HOME.
_NBCLIENT_KERNEL_ARGUMENTS = ["--HistoryManager.hist_file=:memory:"]


def start(km, folder: str | Path, warm_up: str = "") -> None:
    """Start the kernel of `km` (:func:`kernel`) now, as nbclient would for a notebook run in
    `folder`, and have it run `warm_up` when it is up (silently: no output, no history, no
    execution count). Returns at once: the kernel boots while the caller goes on, and the
    notebooks then run in it (nbclient starts no other). A `warm_up` that fails leaves
    nothing behind; the notebook that needs it fails in its own cell. zmq does not order
    requests of two clients: one sent right after the kernel binds its socket can run before
    the warm-up (seen with a probe), which then loses its head start and changes nothing."""
    from jupyter_core.utils import run_sync

    arguments = _NBCLIENT_KERNEL_ARGUMENTS if km.ipykernel else []
    run_sync(km.start_kernel)(extra_arguments=list(arguments), cwd=str(folder))
    if warm_up:
        # a blocking client: its request is sent now, queued by zmq until the kernel reads its
        # shell socket (an asyncio client's send waits for an event loop, nbclient's, and
        # with one, about 1 notebook run in 5 never got its reply); stopped with the others
        # when the kernel() block ends
        kc = km.blocking_client()
        kc.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        kc.execute(warm_up, silent=True)


def _cancel_left_tasks() -> None:
    """Cancel what an interrupted notebook left on this thread's event loop (Ctrl-C raised
    inside nbclient's loop leaves its cell's task pending): run again to stop the kernel,
    the loop would resume it, and its "Kernel died" be printed as an exception no one
    retrieved. Nothing is done inside a running loop (nbclient then runs on its own)."""
    import asyncio

    from jupyter_core.utils import ensure_event_loop

    with contextlib.suppress(RuntimeError):
        asyncio.get_running_loop()
        return
    loop = ensure_event_loop()
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


def execute_notebook(notebook: str | Path, out: str | Path, parameters: dict, km,
                     folder: str | Path):
    """Execute `notebook` with `parameters` into `out` in the kernel of `km` (:func:`kernel`,
    its working folder `folder`); the executed notebook. Raises what papermill raises
    (``PapermillExecutionError`` for a failed cell, after writing `out`).

    `out` is written once, when the notebook has run (or failed): papermill's default, a
    save before and after every cell, re-encodes a growing notebook with its images for a
    file no one reads before the run ends."""
    import papermill as pm

    return pm.execute_notebook(str(notebook), str(out), parameters=parameters,
                               kernel_name=km.kernel_name, progress_bar=False,
                               log_output=False, request_save_on_cell_execute=False, km=km,
                               resources={"metadata": {"path": str(folder)}})
