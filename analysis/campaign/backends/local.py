"""``local``: every node of a run is a process on this host.

A multi-node case (``2n2g``, or two "nodes" on a CPU-only machine) starts N node agents here,
each with its own node rank, through the real torchrun rendezvous on 127.0.0.1, and — when
the host has GPUs — with disjoint ``CUDA_VISIBLE_DEVICES`` sets (node k gets GPUs
k*G .. k*G+G-1 of the visible ones).
"""

from __future__ import annotations

import os
import signal
import socket
import time

from analysis.campaign import node as agent
from analysis.campaign.backends import register
from analysis.campaign.backends.base import (
    NODE_AGENT,
    POLL_S,
    Backend,
    Interrupted,
    Launch,
    Outcome,
    first_failure,
)
from analysis.shell import STDOUT, Process, start_process


def _start_time(pid: int) -> str:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return ""
    return stat[stat.rfind(")") + 2:].split()[19]


def _reap(seen: set[tuple[int, str]]) -> None:
    """SIGKILL processes of the runs' trees that outlived their agent (an agent killed with
    SIGKILL cannot stop its workload); the start time guards against reused pids."""
    seen = seen | {(q, _start_time(q)) for pid, st in seen if _start_time(pid) == st
                   for q in agent.descendants(pid)}
    for pid, started in seen:
        if started and _start_time(pid) == started and agent.alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@register
class LocalBackend(Backend):
    """Run the nodes as local processes (node agents in their own sessions)."""

    name = "local"

    def _gpu_ids(self) -> list[str]:
        ids = agent.visible_gpus(dict(os.environ))
        if self.spec.gpus_per_host:
            ids = ids[: self.spec.gpus_per_host]
        return ids

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
        ids = self._gpu_ids() if self.gpus_per_node() else []
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
        reason = ""
        flags = ("--die-with-parent", "--parent-pid", str(os.getpid()))
        try:
            for node in launch.active():
                with open(node.log, "wb") as log:
                    procs[node.index] = start_process(
                        self.agent_argv(launch, node, python=launch.python, agent=str(NODE_AGENT),
                                        flags=flags),
                        stdout=log, stderr=STDOUT, env={**os.environ, **node.env},
                        new_session=True)
            seen: set[tuple[int, str]] = set()
            last_scan = 0.0
            while True:
                if time.monotonic() - last_scan > 0.25:  # remember the trees: see _reap
                    seen |= {(q, _start_time(q)) for p in procs.values()
                             for q in agent.descendants(p.pid)}
                    last_scan = time.monotonic()
                rcs = {i: p.poll() for i, p in procs.items()}
                bad = [i for i, rc in rcs.items() if rc not in (None, 0)]
                if bad:
                    break
                if all(rc == 0 for rc in rcs.values()):
                    break
                if time.monotonic() - t0 > launch.timeout:
                    reason = f"timeout after {launch.timeout:g} s"
                    break
                time.sleep(POLL_S)
        except BaseException as exc:
            agent.stop_agents([p.pid for p in procs.values()])
            for p in procs.values():
                p.wait()
            if isinstance(exc, KeyboardInterrupt):
                raise Interrupted(str(exc) or "SIGINT") from None
            raise
        agent.stop_agents([p.pid for p in procs.values() if p.poll() is None])
        for p in procs.values():
            p.wait()
        _reap(seen)
        nodes = [self.node_outcome(n, procs[n.index].returncode, started)
                 for n in launch.active()]
        reason = reason or first_failure(nodes)
        return Outcome(ok=not reason, reason=reason, nodes=nodes,
                       wall_s=time.monotonic() - t0)
