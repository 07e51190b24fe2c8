"""The notebook kernels of one report build: private, quiet, and stoppable.

A build runs one kernel for all its languages (:meth:`Kernels.manager`); each kernel talks
to the publisher over IPC sockets inside the build's private folder (mode
0700) instead of TCP on loopback: no other user can reach it, and ipykernel has no reason
to warn that it "is running over TCP without encryption". The kernel runs in that folder
too, so nothing from the caller's folder lands on its ``sys.path``. Every kernel started is
recorded, so that an interrupted or failed build can kill them all (:meth:`Kernels.stop`)
instead of leaving them running.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from concurrent.futures import Future, wait
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Any
from traitlets.config import Config

from analysis.errors import DLPerfError

#: IPython's history database in the kernels (nbclient's default): in memory, not a file.
HISTORY = ":memory:"


class BuildCancelled(DLPerfError):
    """The build was stopped before this kernel started."""


class BuildKernelManager(AsyncKernelManager):
    """A kernel manager that registers its kernel with a :class:`Kernels` before starting
    it, and starts it over IPC in the build's folder."""

    kernels = Any(help="the Kernels of the build").tag(config=True)

    async def start_kernel(self, **kw):
        self.transport, self.ip = "ipc", self.kernels.socket_prefix()
        kw.setdefault("cwd", str(self.kernels.folder))
        self.kernels.register(self)
        await super().start_kernel(**kw)


class Kernels:
    """The kernels of one build, their sockets in `folder`."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._managers: list[AsyncKernelManager] = []
        self._numbers = itertools.count(1)

    def __deepcopy__(self, memo):  # traitlets copies config values: a build has one Kernels
        return self

    def config(self) -> Config:
        """nbclient settings (``NotebookClient(config=...)``) that make its kernels ours."""
        return Config({"NotebookClient": {"kernel_manager_class": BuildKernelManager},
                       "BuildKernelManager": {"kernels": self}})

    def manager(self, kernel_name: str) -> BuildKernelManager:
        """A kernel manager of this build (its kernel starts on first use, registered)."""
        return BuildKernelManager(kernels=self, kernel_name=kernel_name)

    def start(self, km: AsyncKernelManager) -> None:
        """Start `km`'s kernel as nbclient would (IPython's history kept in memory), before
        nbclient runs a notebook in it."""
        from jupyter_core.utils import run_sync

        run_sync(km.start_kernel)(extra_arguments=[f"--HistoryManager.hist_file={HISTORY}"])

    def shutdown(self, km: AsyncKernelManager) -> None:
        """Stop `km`'s kernel when it runs (the build is done with it)."""
        from jupyter_core.utils import run_sync

        if km.has_kernel:
            with contextlib.suppress(Exception):  # a kernel killed by stop() is gone already
                run_sync(km.shutdown_kernel)(now=True)

    def socket_prefix(self) -> str:
        return str(self.folder / f"k{next(self._numbers)}")

    def register(self, manager: AsyncKernelManager) -> None:
        with self._lock:
            if self.cancelled.is_set():
                raise BuildCancelled("the report build was stopped")
            self._managers.append(manager)

    def kill(self) -> None:
        """SIGKILL every running kernel (its own process group: kernels start a session)."""
        with self._lock:
            managers = list(self._managers)
        for km in managers:
            process = getattr(km.provisioner, "process", None) if km.provisioner else None
            if process is not None and process.returncode is None:
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)

    def stop(self, jobs: list[Future], timeout: float = 30.0) -> None:
        """Cancel the build: no new kernel starts, running ones are killed, and the jobs
        (which then fail on their dead kernel) are given `timeout` seconds to end."""
        self.cancelled.set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.kill()  # again each round: a kernel may have been starting
            if not wait(jobs, timeout=0.2).not_done:
                break
