"""``local``: every node of a run is a process on this host.

A multi-node case (``2n2g``, or two "nodes" on a CPU-only machine) starts N node agents here,
each with its own node rank, through the real torchrun rendezvous on 127.0.0.1, and — when
the host has GPUs — with disjoint ``CUDA_VISIBLE_DEVICES`` sets (node k gets GPUs
k*G .. k*G+G-1 of the visible ones).
"""

from __future__ import annotations

import os
import socket
import time

from analysis.campaign import node as agent
from analysis.campaign.backends import (
    NODE_AGENT,
    Backend,
    Launch,
    Outcome,
    register,
)
from analysis.shell import STDOUT, Process, start_process


def _exit_status(proc: Process) -> int | None:
    """`proc`'s exit status once it ended (-N: killed by signal N), else None — without reaping
    it: while it is an unreaped zombie, its pid (the id of its session) names nothing else."""
    try:
        res = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped already
        return proc.poll()
    if res is None or res.si_pid == 0:
        return None
    return res.si_status if res.si_code == os.CLD_EXITED else -res.si_status


@register
class LocalBackend(Backend):
    """Run the nodes as local processes: node agents in their own sessions, not reaped before
    :func:`~analysis.campaign.node.stop_agents` has killed what is left of each session."""

    name = "local"
    passes_environment = True
    _ids: list[str] | None = None

    def _gpu_ids(self) -> list[str]:
        # asked once: every launch built (and every done run compared on resuming) needs them
        if self._ids is None:
            ids = agent.visible_gpus(dict(os.environ))
            self._ids = ids[: self.spec.gpus_per_host] if self.spec.gpus_per_host else ids
        return self._ids

    def probe_gpus(self) -> int:
        return len(self._gpu_ids())

    def node_hosts(self, num_nodes: int) -> list[str]:
        return ["127.0.0.1"] * num_nodes

    def master_port(self) -> int:
        if self.spec.master_port != "auto":
            return int(self.spec.master_port)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def node_env(self, index: int, gpus_per_node: int) -> dict[str, str]:
        ids = self._gpu_ids()
        if not ids:
            return {}
        return {"CUDA_VISIBLE_DEVICES": ",".join(ids[index * gpus_per_node:
                                                     (index + 1) * gpus_per_node])}

    def check(self, case) -> str:
        have = self.gpus_per_node()
        need = case.num_nodes * case.gpus_per_node
        if have and need > have:
            return f"{case.config} needs {need} GPUs on this host; it has {have}"
        return ""

    def execute(self, launch: Launch) -> Outcome:
        t0, started = time.monotonic(), time.time()
        procs: dict[int, Process] = {}
        flags = ("--die-with-parent", "--parent-pid", str(os.getpid()))
        try:
            for node in launch.active():
                with open(node.log, "wb") as log:
                    procs[node.index] = start_process(
                        self.agent_argv(launch, node, python=launch.python, agent=str(NODE_AGENT),
                                        flags=flags),
                        stdout=log, stderr=STDOUT, env={**os.environ, **node.env},
                        new_session=True)
            reason = self.wait_nodes(lambda: {i: _exit_status(p) for i, p in procs.items()},
                                     t0, launch.timeout)
        finally:  # every agent, ended or not: a killed agent's workload runs on in its session
            agent.stop_agents([p.pid for p in procs.values()])
            for p in procs.values():
                p.wait()
        return self.outcome([self.node_outcome(n, procs[n.index].returncode, started)
                             for n in launch.active()], reason, t0)
