"""``slurm``: one batch job per run, submitted with ``sbatch`` and polled with ``squeue``.

The job asks for ``--nodes N --ntasks-per-node 1``; its script starts one ``srun --relative k``
step per node running the node agent under ``node.py --supervise`` (Slurm's
``proctrack/linuxproc`` loses processes re-parented to init, so the supervisor kills what a
killed agent leaves); the first step that fails stops the others. The master address is only
known inside the job, so templates get ``{{DLPERF_MASTER_ADDR}}`` (and ``{{DLPERF_HOST_k}}``),
which the script expands from ``scontrol show hostnames``; every other word is single-quoted.
Records and messages name the job's hosts in their place (:meth:`SlurmBackend.resolve_nodes`).

The controller polls ``squeue`` every 0.3 s (``sbatch --wait`` notices the end of a job many
seconds late) and cancels on timeout or interruption; the agents' results are read from the
output folder, which must be on a file system shared with the nodes. The spec's environment
goes through sbatch's environment (``--export ALL``), never into the script.

A job that has not started within ``slurm.start_timeout`` is cancelled and its run fails, not
retried in this invocation; under a campaign time budget the wait also ends when the job could
no longer end in time, and the run stays pending (:class:`~analysis.campaign.backends.BudgetSpent`).
"""

from __future__ import annotations

import math
import os
import re
import shlex
import time
from collections.abc import Sequence
from pathlib import Path

from analysis.campaign.backends import (
    NODE_AGENT,
    Backend,
    BudgetSpent,
    Launch,
    Outcome,
    first_failure,
    register,
)
from analysis.errors import DLPerfError
from analysis.fsutil import read_json_object
from analysis.redact import redact_text
from analysis.shell import CommandError, run_command

POLL_S = 0.3
#: Seconds a job may wait in the queue before it starts (``slurm.start_timeout``).
START_TIMEOUT = 3600.0
#: squeue states of a job whose workload has not started yet.
NOT_STARTED = ("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
               "RESV_DEL_HOLD")


#: The suite's own placeholders only: a user's ``{{HOME}}`` is a literal word, not an expansion.
_PLACEHOLDER = re.compile(r"\{\{(DLPERF_[A-Z0-9_]+)\}\}")


def render_shell(argv: Sequence[str]) -> str:
    """Like :func:`shlex.join`, but ``{{DLPERF_NAME}}`` inside a word becomes
    ``"${DLPERF_NAME}"``, expanded by the shell at run time (used for values only a batch job
    knows, such as the master host). Everything else stays single-quoted; placeholders are
    the only expansion."""
    def word(a: str) -> str:
        parts = _PLACEHOLDER.split(a)  # literal, name, literal, ...: the names at odd places
        return "".join(f'"${{{p}}}"' if i % 2 else shlex.quote(p)
                       for i, p in enumerate(parts) if p) or "''"

    return " ".join(word(str(a)) for a in argv)


def fill_placeholders(word: str, values: dict[str, str], unknown: str = "") -> str:
    """`word` with each ``{{DLPERF_NAME}}`` replaced by ``values[NAME]`` — what the batch
    script expanded it to, for records and messages. A name without a value becomes
    `unknown` (formatted with ``name=``) when given, else it stays as written."""
    def value(m: re.Match) -> str:
        name = m.group(1)
        if name in values:
            return values[name]
        return unknown.format(name=name) if unknown else m.group(0)
    return _PLACEHOLDER.sub(value, str(word))


class SlurmError(DLPerfError):
    """sbatch/squeue/scancel failed."""


def slurm_filename(path) -> str:
    """`path` as sbatch/srun ``--output`` take it: ``%`` starts a pattern there (``%j``:
    job id), ``%%`` is a literal ``%``."""
    return str(path).replace("%", "%%")


@register
class SlurmBackend(Backend):
    """Submit each run as a Slurm batch job."""

    name = "slurm"
    passes_environment = True  # sbatch --export=ALL

    def probe_gpus(self) -> int:
        if "gpus_per_node" in self.spec.slurm:
            return self.spec.slurm["gpus_per_node"]
        argv = ["sinfo", "-h", "-o", "%G"]
        if self.spec.slurm.get("partition"):
            argv += ["-p", str(self.spec.slurm["partition"])]
        try:
            out = run_command(argv, timeout=30).stdout
        except CommandError:
            return 0
        counts = [int(m.group(1)) for m in re.finditer(r"gpu(?::[^:,(\s]+)?:(\d+)", out)]
        return max(counts, default=0)

    def node_hosts(self, num_nodes: int) -> list[str]:
        return ["{{DLPERF_MASTER_ADDR}}"] + [f"{{{{DLPERF_HOST_{k}}}}}"
                                             for k in range(1, num_nodes)]

    def resolve_nodes(self, nodes: list, launch: Launch, hosts: list[str], job_id: str
                      ) -> None:
        """Put the job's hosts in place of the placeholders in each node's host and command,
        so that records and messages say what ran. Without the job's node list, a node's host
        is the one its agent reported; what is still unknown (the job never ran) says so."""
        values = {("DLPERF_MASTER_ADDR" if k == 0 else f"DLPERF_HOST_{k}"): h
                  for k, h in enumerate(hosts)}  # as the batch script sets them
        results = {n.index: n.result for n in launch.nodes}
        unknown = f"<{{name}} of slurm job {job_id}: not known>"
        for n in nodes:
            host = fill_placeholders(n.host, values)
            if "{{DLPERF_" in host:
                ran_on = str((read_json_object(results[n.index]) or {}).get("host") or "")
                host = ran_on or fill_placeholders(host, {}, unknown)
            n.host = host
            n.command = [fill_placeholders(w, values, unknown) for w in n.command]

    def sbatch_argv(self, launch: Launch, script_path: str, job_name: str) -> list[str]:
        """The sbatch command line: every job option is its own argument (no #SBATCH text
        built from spec values)."""
        n, opts = len(launch.nodes), self.spec.slurm
        minutes = math.ceil(opts.get("time_limit", launch.timeout + 120) / 60)
        argv = ["sbatch", "--parsable", "--export=ALL", f"--job-name={job_name}",
                f"--nodes={n}", "--ntasks-per-node=1", f"--time={minutes}",
                f"--output={slurm_filename(launch.work / 'job.stdout')}",
                f"--chdir={launch.workdir}"]
        if self.gpus_per_node() and launch.device == "cuda":
            argv.append(f"--gpus-per-node={launch.gpus_per_node}")
        for key, flag in (("partition", "--partition"), ("account", "--account"),
                          ("cpus_per_task", "--cpus-per-task")):
            if opts.get(key):
                argv.append(f"{flag}={opts[key]}")
        argv += opts.get("extra_args", [])
        return [*argv, script_path]

    def script(self, launch: Launch) -> str:
        """The batch script of `launch`: one srun step per node (no secrets: the environment
        is inherited from sbatch)."""
        n = len(launch.nodes)
        lines = ["#!/bin/bash", f"# dlperf campaign {self.spec.name}: {launch.run_id}"]
        lines += [
            "set -u",
            'mapfile -t DLPERF_HOSTS < <(scontrol show hostnames "$SLURM_JOB_NODELIST")',
            'DLPERF_MASTER_ADDR="${DLPERF_HOSTS[0]}"',
            *[f'DLPERF_HOST_{k}="${{DLPERF_HOSTS[{k}]}}"' for k in range(1, n)],
            "export DLPERF_MASTER_ADDR",
            "pids=()",
        ]
        for node in launch.active():
            agent = self.agent_argv(launch, node, python=launch.python, agent=str(NODE_AGENT),
                                    flags=("--supervise",))
            step = ["srun", "--nodes=1", "--ntasks=1", f"--relative={node.index}",
                    "--kill-on-bad-exit=1", f"--output={slurm_filename(node.log)}", *agent]
            lines += [render_shell(step) + " &", 'pids+=("$!")']
        lines += [
            "rc=0",
            'for _ in "${pids[@]}"; do',
            "  wait -n; r=$?",
            '  if [ "$r" -ne 0 ]; then rc=$r; kill -TERM "${pids[@]}" 2>/dev/null; wait; break; fi',
            "done",
            'exit "$rc"', ""]
        return "\n".join(lines)

    def prepare(self, out_dir: Path) -> None:
        """Refuse an output folder whose name Slurm would rewrite: a backslash in an
        ``--output`` file name is dropped, with no way to escape it."""
        if "\\" in str(out_dir):
            raise SlurmError(f"output folder {out_dir}: Slurm drops the backslash from log "
                             "file names; choose a folder name without '\\'")

    def describe(self, launch: Launch) -> list[str]:
        lines = super().describe(launch)
        path = str(launch.work / "job.sbatch")
        sbatch = shlex.join(self.sbatch_argv(launch, path, f"dlperf-{self.spec.name}"))
        lines.append("  " + redact_text(sbatch, self.spec.secrets()))
        lines.append(f"  {path}:")
        lines += ["    " + redact_text(x, self.spec.secrets())
                  for x in self.script(launch).splitlines()]
        return lines

    def _sbatch(self, launch: Launch) -> str:
        launch.work.mkdir(parents=True, exist_ok=True)
        path = launch.work / "job.sbatch"
        # readable by its owner alone (sbatch reads it as that owner): the script holds the
        # workload's arguments, secrets included; one left by an earlier attempt is made so too
        path.touch(mode=0o600)
        path.chmod(0o600)
        path.write_text(self.script(launch), encoding="utf-8")
        # the nodes' variables (the runner's OMP_NUM_THREADS, the spec's env) reach the steps
        # only through sbatch's environment; every node of a Slurm run gets the same ones
        env = {**os.environ, **{k: v for n in launch.active() for k, v in n.env.items()}}
        argv = self.sbatch_argv(launch, str(path), f"dlperf-{self.spec.name}")
        try:
            out = run_command(argv, timeout=60, env=env).stdout
        except CommandError as exc:
            raise SlurmError(f"sbatch failed: {exc}") from None
        return out.strip().split(";")[0]

    @staticmethod
    def job_info(job_id: str) -> tuple[str, str, list[str]]:
        """(state, exit code 'rc:signal', hosts in node order) from scontrol; empty when
        unknown (hosts: also when the job never had nodes)."""
        try:
            out = run_command(["scontrol", "show", "job", job_id], timeout=30).stdout
        except CommandError:
            return "", "", []
        state = re.search(r"JobState=(\S+)", out)
        code = re.search(r"\bExitCode=(\S+)", out)
        nodes = re.search(r"^\s*NodeList=(\S+)", out, re.M)
        hosts = []
        if nodes and nodes.group(1) != "(null)":
            try:  # the same expansion as the batch script's, so the same order
                hosts = run_command(["scontrol", "show", "hostnames", nodes.group(1)],
                                    timeout=30).stdout.split()
            except CommandError:
                pass
        return (state.group(1) if state else ""), (code.group(1) if code else ""), hosts

    @staticmethod
    def _squeue(job_id: str) -> tuple[str, str]:
        """squeue's (state, reason) of the job (('', '') once it left the queue)."""
        try:
            out = run_command(["squeue", "-h", "-j", job_id, "-o", "%T %r"], timeout=30,
                              check=False).stdout.strip()
        except CommandError:
            return "", ""
        state, _, reason = out.partition(" ")
        return state, reason.strip()

    def _cancel(self, job_id: str, started: bool = True) -> None:
        """Cancel the job: its agents get SIGTERM first, and 8 s to stop their trees, when it
        `started`; a job still waiting is simply removed. Waits until it left the queue."""
        steps = [(["scancel", "--signal=TERM", "--full", job_id], 8)] if started else []
        for argv, seconds in [*steps, (["scancel", job_id], 60)]:
            try:
                run_command(argv, timeout=30, check=False)
            except CommandError:
                pass
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and self._squeue(job_id)[0]:
                time.sleep(POLL_S)

    def execute(self, launch: Launch) -> Outcome:
        t0, started = time.monotonic(), time.time()
        try:
            job_id = self._sbatch(launch)
        except SlurmError as exc:
            return self.outcome([], str(exc), t0)
        start_timeout = self.spec.slurm.get("start_timeout", START_TIMEOUT)
        by_budget = launch.start_by is not None and launch.start_by < t0 + start_timeout
        start_by = launch.start_by if by_budget else t0 + start_timeout
        reason, running_since, extra, no_retry = "", None, {}, ""
        try:
            while True:
                state, why = self._squeue(job_id)
                if not state:
                    break
                if running_since is None and state not in NOT_STARTED:
                    running_since = time.monotonic()
                if running_since is None and time.monotonic() > start_by:
                    waiting = f"{state} ({why})" if why else state
                    self._cancel(job_id, started=False)
                    if by_budget:
                        raise BudgetSpent(f"time budget reached while slurm job {job_id} was "
                                          f"waiting to start ({waiting}); cancelled, the run "
                                          "stays pending")
                    reason = (f"slurm job {job_id} did not start within {start_timeout:g} s "
                              f"(slurm.start_timeout): {waiting}; cancelled")
                    extra = {"pending_state": state, "pending_reason": why}
                    no_retry = (f"a job that did not start within slurm.start_timeout is not a "
                                f"transient failure: another would wait {start_timeout:g} s "
                                "again")
                    break
                if running_since and time.monotonic() - running_since > launch.timeout:
                    reason = f"timeout after {launch.timeout:g} s"
                    self._cancel(job_id)
                    break
                time.sleep(POLL_S)
        except KeyboardInterrupt:
            self._cancel(job_id, started=running_since is not None)
            raise
        final, code, hosts = self.job_info(job_id)
        nodes = [self.node_outcome(n, None, started) for n in launch.active()]
        self.resolve_nodes(nodes, launch, hosts, job_id)
        if not reason:
            reason = first_failure(nodes)
        if not reason and final and final != "COMPLETED":
            reason = f"slurm job {job_id} ended {final} (ExitCode {code})"
        if not reason and any(n.rc is None for n in nodes):
            reason = f"slurm job {job_id}: node agent(s) left no result (job state {final})"
        if reason and not reason.startswith("slurm job"):
            reason = f"slurm job {job_id}: {reason}"
        return self.outcome(nodes, reason, t0, no_retry=no_retry, extra={
            "job_id": job_id, "job_state": final, "job_hosts": hosts, **extra})

