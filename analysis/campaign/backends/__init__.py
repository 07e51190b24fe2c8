"""Launch backends: what every backend provides, the records a launch produces, and the
registry (one module per backend, a :class:`Backend` subclass decorated with
:func:`register`, looked up by name; adding a backend means adding one module).

The runner turns a run into a :class:`Launch` (one :class:`NodeLaunch` per node: the workload's
argument list, environment and output paths) and hands it to :meth:`Backend.execute`, which
starts the node agents (``analysis/campaign/node.py``) concurrently, waits, stops every node
when one fails, times out or the campaign is interrupted (KeyboardInterrupt, which the runner
also raises on SIGTERM, goes on once the nodes are stopped), and returns an :class:`Outcome`.
"""

from __future__ import annotations

import random
import shlex
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from analysis.fsutil import read_json_object
from analysis.redact import redact_argv, redact_env
from analysis.registry import Registry

NODE_AGENT = Path(__file__).resolve().parent.parent / "node.py"
POLL_S = 0.05


@dataclass
class NodeLaunch:
    """One node of a run: its command and where its outputs go (paths on the controller)."""

    index: int
    host: str
    argv: list[str] | None  # None: the node runs nothing itself (head-node launchers)
    env: dict[str, str]
    log: Path  # <stem>[.node<k>].log.partial
    env_json: Path
    gpu_csv: Path
    result: Path  # agent result (JSON) in the run's work folder
    pidfile: Path


@dataclass
class Launch:
    run_id: str
    nodes: list[NodeLaunch]
    timeout: float
    workdir: str
    work: Path  # <out>/.campaign/runs/<config>/<stem>/ : scripts, agent results
    device: str = "cpu"
    python: str = sys.executable
    gpus_per_node: int = 1
    #: time.monotonic() by which the run must have started to end within the campaign's time
    #: budget (None: no budget); backends that queue (slurm) stop waiting then
    start_by: float | None = None

    def active(self) -> list[NodeLaunch]:
        return [n for n in self.nodes if n.argv is not None]


@dataclass
class NodeOutcome:
    index: int
    host: str
    rc: int | None
    duration_s: float | None = None
    stopped: str = ""
    env_capture: str = ""
    gpu_sampling: str = ""
    command: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    ok: bool
    reason: str
    nodes: list[NodeOutcome]
    wall_s: float = 0.0
    extra: dict = field(default_factory=dict)
    #: why another attempt now would only fail the same way ('': a failure worth retrying);
    #: the runner then makes none and says so in the run's reason
    no_retry: str = ""


class BudgetSpent(Exception):
    """The campaign's time budget ran out while the run waited to start (a queued job); the
    backend cancelled it before it ran. The run stays pending."""


class Backend(ABC):
    """A way to start the nodes of a run. Subclasses set :attr:`name` and register."""

    name: str = ""
    #: Whether the nodes' processes get this process's environment (plus the launch's): a
    #: resume then compares the variables a done run recorded with this shell's.
    passes_environment: bool = False

    def __init__(self, spec):
        self.spec = spec
        self._gpus: int | None = None

    # -- what the runner asks before building a launch -------------------------------
    @abstractmethod
    def probe_gpus(self) -> int:
        """NVIDIA GPUs a node of this backend has (0: none, run on CPU)."""

    def gpus_per_node(self) -> int:
        if self._gpus is None:
            self._gpus = self.probe_gpus()
        return self._gpus

    @abstractmethod
    def node_hosts(self, num_nodes: int) -> list[str]:
        """The address of each node as the other nodes reach it (node-rank order)."""

    def master_port(self) -> int:
        if self.spec.master_port != "auto":
            return int(self.spec.master_port)
        return random.randint(29500, 30999)

    def node_env(self, index: int, gpus_per_node: int) -> dict[str, str]:
        """Variables a node needs on top of the spec's ``env`` (e.g. its GPU set)."""
        return {}

    def check(self, case) -> str:
        """Why `case` cannot run on this backend ('' when it can)."""
        return ""

    # -- running ----------------------------------------------------------------------
    def prepare(self, out_dir: Path) -> None:  # noqa: B027 - optional hook
        """Called once before the first run."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections; called once after the last run."""

    @abstractmethod
    def execute(self, launch: Launch) -> Outcome:
        """Run every node of `launch` to the end, the first failure, the timeout or an
        interruption (then stop all nodes and let KeyboardInterrupt go on)."""

    def describe(self, launch: Launch) -> list[str]:
        """Dry run: the command of every node, as text (secrets redacted)."""
        lines = []
        for n in launch.nodes:
            if n.argv is None:
                lines.append(f"  node {n.index} @ {n.host}: (started by node 0's launcher)")
                continue
            shown = shlex.join(f"{k}={v}" for k, v in redact_env(n.env).items())
            cmd = shlex.join(redact_argv(n.argv, n.env))
            lines.append(f"  node {n.index} @ {n.host}: {shown + ' ' if shown else ''}{cmd}")
        return lines

    # -- helpers for subclasses -------------------------------------------------------
    def agent_argv(self, launch: Launch, node: NodeLaunch, *, python: str, agent: str,
                   paths: dict[str, str] | None = None, flags: tuple[str, ...] = ()) -> list[str]:
        """The node agent's command line for `node` (`paths` override the output paths, for
        backends whose nodes see other file names)."""
        p = {"result": str(node.result), "pidfile": str(node.pidfile),
             "env_json": str(node.env_json), "gpu_csv": str(node.gpu_csv), **(paths or {})}
        return [python, agent, "--result", p["result"], "--pidfile", p["pidfile"],
                "--env-json", p["env_json"], "--gpu-csv", p["gpu_csv"],
                "--timeout", f"{launch.timeout + 30:g}", "--cwd", launch.workdir, *flags,
                "--", *node.argv]

    @staticmethod
    def wait_nodes(exit_statuses, t0: float, timeout: float) -> str:
        """Poll ``exit_statuses()`` ({node: status or None}) until a node fails or all ended
        with 0 (''), or `timeout` seconds after `t0` (the timeout as a reason)."""
        while True:
            rcs = exit_statuses().values()
            if any(rc not in (None, 0) for rc in rcs) or all(rc == 0 for rc in rcs):
                return ""
            if time.monotonic() - t0 > timeout:
                return f"timeout after {timeout:g} s"
            time.sleep(POLL_S)

    @staticmethod
    def outcome(nodes: list[NodeOutcome], reason: str, t0: float, **more) -> Outcome:
        """The run's outcome: `reason`, else the node that failed first; ok when neither."""
        reason = reason or first_failure(nodes)
        return Outcome(ok=not reason, reason=reason, nodes=nodes,
                       wall_s=time.monotonic() - t0, **more)

    def node_outcome(self, node: NodeLaunch, rc: int | None, started: float) -> NodeOutcome:
        res = read_json_object(node.result) or {}
        rc = res.get("rc", rc)
        if rc is not None and rc < 0:  # killed by signal N (no agent result) → 128 + N
            rc = 128 - rc
        return NodeOutcome(
            index=node.index, host=node.host, rc=rc,
            duration_s=res.get("duration_s", time.time() - started),
            stopped=res.get("stopped", ""), env_capture=res.get("env_capture", "no result"),
            gpu_sampling=res.get("gpu_sampling", "no result"),
            command=redact_argv(node.argv or [], node.env))


def first_failure(nodes: list[NodeOutcome]) -> str:
    """'node k (host) exited with status s' for the node that failed first, or ''.

    Nodes stopped by the harness because another failed exit by SIGTERM/SIGKILL (143/137);
    a node that failed on its own is named before them, since it holds the root cause.
    """
    bad = [n for n in nodes if n.rc not in (0, None)]
    if not bad:
        return ""
    n = min(bad, key=lambda b: b.rc in (137, 143))
    why = f"exited with status {n.rc}"
    if n.rc and n.rc > 128:
        why += f" (signal {n.rc - 128})"
    return f"node {n.index} ({n.host}) {why}"


_registry: Registry[Backend] = Registry("backend", __name__, __path__)
register = _registry.register
names = _registry.names
get = _registry.get
