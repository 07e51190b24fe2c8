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
import uuid
from concurrent.futures import Future, wait
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Any, List, Type
from traitlets.config import Config

from analysis.errors import DLPerfError
from analysis.report.forked_kernel import ForkProvisioner, Zygote, usable

#: IPython's history database in the kernels (nbclient's default): in memory, not a file.
HISTORY = ":memory:"
#: How long the readiness check waits for the IOPub status of its kernel_info request
#: before it asks again (a subscription that connected late missed it).
READY_POLL_S = 0.25


class BuildCancelled(DLPerfError):
    """The build was stopped before this kernel started."""


class KernelStartError(DLPerfError, RuntimeError):
    """The build's kernel ended, or did not answer in time, before it was ready (a
    RuntimeError too, which nbclient expects of a readiness check)."""


class BuildKernelClient(AsyncKernelClient):
    """A kernel client whose readiness check does not sleep: jupyter_client's waits 0.2 s
    for IOPub to be quiet after every kernel_info reply, twice per build. Here the kernel is
    ready once it has answered kernel_info on the shell channel and published the status of
    that request on IOPub (so IOPub is connected); nbclient reads only the IOPub messages of
    its own requests, so earlier ones need no flushing."""

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            request = self.kernel_info()
            reply = await self._reply_to(self.shell_channel, request, READY_POLL_S * 4)
            if reply is not None and await self._reply_to(self.iopub_channel, request,
                                                           READY_POLL_S) is not None:
                self._handle_kernel_info_reply(reply)
                return
            if not await self._async_is_alive():
                raise KernelStartError(f"the report kernel ({self._kernel_name()}) "
                                       f"{self._how_it_ended()} before it was ready (what it "
                                       f"printed, if anything, is above)")
            if time.monotonic() > deadline:
                raise KernelStartError(f"the report kernel ({self._kernel_name()}) did not "
                                       f"answer within {timeout:.0f} s of starting")

    wait_for_ready = _async_wait_for_ready

    def _kernel_name(self) -> str:
        return getattr(self.parent, "kernel_name", None) or "?"

    def _how_it_ended(self) -> str:
        return how_it_ended(self.parent)

    @staticmethod
    async def _reply_to(channel, msg_id: str, within: float) -> dict | None:
        """The first message on `channel` in reply to `msg_id` within `within` seconds."""
        end = time.monotonic() + within
        while (left := end - time.monotonic()) > 0:
            try:
                msg = await channel.get_msg(timeout=left)
            except Empty:
                return None
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return msg
        return None


def how_it_ended(km) -> str:
    """How the kernel of manager `km` ended: "exited with code 3", "was killed by SIGKILL",
    or "ended" (no process known)."""
    process = getattr(getattr(km, "provisioner", None), "process", None)
    code = process.poll() if process is not None else None
    if code is None:
        return "ended"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


class BuildKernelManager(AsyncKernelManager):
    """A kernel manager that registers its kernel with a :class:`Kernels` before starting
    it, and starts it over IPC in the build's folder."""

    kernels = Any(help="the Kernels of the build").tag(config=True)
    _clients = List()
    client_factory = Type(BuildKernelClient, klass=AsyncKernelClient)

    async def start_kernel(self, **kw):
        self.transport, self.ip = "ipc", self.kernels.socket_prefix()
        kw.setdefault("cwd", str(self.kernels.folder))
        self.kernels.register(self)
        zygote = self.kernels.take_zygote()
        if zygote is not None and self.provisioner is None:
            self.kernel_id = self.kernel_id or str(uuid.uuid4())
            self.provisioner = ForkProvisioner(kernel_id=self.kernel_id, zygote=zygote,
                                               kernel_spec=self.kernel_spec, parent=self)
        elif zygote is not None:
            zygote.discard()
        await super().start_kernel(**kw)
        if getattr(self.provisioner, "forked", False):
            self.kernels.forked = True

    def client(self, **kwargs) -> AsyncKernelClient:
        """A client of the kernel (nbclient makes one per notebook and leaves its channels
        running, a heartbeat thread among them, when the manager is not its own): kept to
        be stopped with the kernel (:meth:`stop_clients`)."""
        kc = super().client(**kwargs)
        self._clients.append(kc)
        return kc

    def stop_clients(self) -> None:
        for kc in self._clients:
            with contextlib.suppress(Exception):
                kc.stop_channels()
        self._clients.clear()


class Kernels:
    """The kernels of one build, their sockets in `folder`."""

    def __init__(self, folder: str | Path, fork: bool = False):
        """`fork`: fork the first kernel from this process (``forked_kernel``) where it can;
        call this before the build starts its threads."""
        self.folder = Path(folder)
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._managers: list[AsyncKernelManager] = []
        self._numbers = itertools.count(1)
        self._zygote = Zygote() if fork and usable() else None
        self.forked = False  # whether a kernel of the build was forked from this process

    def take_zygote(self) -> Zygote | None:
        """The forked child waiting to become this build's first kernel (once), or None."""
        with self._lock:
            zygote, self._zygote = self._zygote, None
        return zygote

    def discard_zygote(self) -> None:
        """End the waiting child when no kernel took it (a build that failed early)."""
        zygote = self.take_zygote()
        if zygote is not None:
            zygote.discard()

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

        if isinstance(km, BuildKernelManager):
            km.stop_clients()
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
        self.discard_zygote()
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
