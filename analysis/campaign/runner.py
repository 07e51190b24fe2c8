"""Run a campaign: every run of the spec on its backend, resumable.

Per run: the node agents capture the environment on every node and sample GPU memory (when
there are GPUs) next to the logs; logs are written as ``*.partial`` and renamed only when
every node succeeded, then the done marker is written. Re-running skips completed runs,
retries failed ones (``retry_failed``, ``retries``), and never overwrites a finished log. A
failure that another attempt would only repeat (``Outcome.no_retry``: a Slurm job that never
started) is not retried within the invocation; its reason says so. An
interruption (SIGINT/SIGTERM) stops the nodes and leaves the run pending — never done.

One run of a campaign at a time per output folder (:func:`records.campaign_lock`). Every
process of every run gets ``OMP_NUM_THREADS`` (:data:`OMP_THREADS`, unless the spec's ``env``
sets it), so that 1 and N processes per node compute with the same threads per process.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import asdict
from functools import cached_property
from pathlib import Path

import yaml

from analysis import config
from analysis.campaign import backends, records, resume
from analysis.campaign.backends import (
    BudgetSpent,
    Launch,
    NodeLaunch,
    NodeOutcome,
    Outcome,
)
from analysis.campaign.node import visible_gpus
from analysis.campaign.spec import Run, Spec, from_dict, load
from analysis.campaign.workloads import LaunchContext, wrap_container
from analysis.campaign.workloads import get as get_workload
from analysis.env.capture import select_env
from analysis.errors import DLPerfError
from analysis.fsutil import atomic_write_text
from analysis.interrupt import restore_sigterm, trap_sigterm
from analysis.redact import redact_argv, redact_env, redact_tree
from analysis.run_settings import compared_variables
from analysis.strays import CampaignFolders
from analysis.suite_version import suite_version

#: Threads per process when the spec's ``env`` does not set ``OMP_NUM_THREADS``. torchrun
#: sets 1 only when it starts more than one process, so a 1-process case would otherwise use
#: every core while an N-process case uses one per process (the CPU smoke campaign showed a
#: "speedup" of 25x with 2 processes).
OMP_THREADS = 1


class CampaignInterrupted(DLPerfError):
    """The campaign stopped on SIGINT/SIGTERM; the status table says what is left."""


def _last_line(path: Path, limit: int = 200) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - 4096))
            lines = [x.strip() for x in f.read().decode("utf-8", "replace").splitlines()]
    except OSError:
        return ""
    lines = [x for x in lines if x]
    return lines[-1][:limit] if lines else ""


class Campaign:
    """A spec bound to an output folder and a backend.

    ``plan()``/``status()`` read the state from disk; ``dry_run()`` prints every node's command;
    ``run()`` runs what is not done and returns the status table.
    """

    def __init__(self, spec: Spec | str | Path, out_dir: str | Path | None = None,
                 backend: str | None = None):
        if not isinstance(spec, Spec):
            spec = load(spec, overrides={"backend": backend})
        if backend and backend != spec.backend:  # checked like a spec that names it
            spec = from_dict({**spec.raw, "backend": backend})
        self.spec = spec
        self.out = spec.resolve_out_dir(out_dir)
        self.runs = spec.runs()
        self.workload = get_workload(spec.workload)
        self.suite: dict | None = None  # the suite that runs it (suite_version), set by run()
        self._kept: list[dict] = []  # status rows of done runs the spec no longer has

    # -- planning ---------------------------------------------------------------------
    @cached_property
    def backend(self):
        return backends.get(self.spec.backend)(self.spec)

    def _row(self, run: Run, state: str, reason: str, attempts: int,
             duration: float | None = None) -> dict:
        c = run.case
        marker = records.read_json(run.path(self.out, ".done")) or {}
        if duration is None:
            duration = marker.get("duration_s")
        return {"run_id": run.run_id, "config": c.config, "model": c.model,
                "precision": c.precision, "batch_size": c.batch_size, "repeat": run.repeat,
                "state": state, "reason": reason, "attempts": attempts,
                "duration_s": float("nan") if duration is None else float(duration),
                "log": str(run.log_path(self.out).relative_to(self.out))}

    def _log_missing(self, run: Run) -> bool:
        marker = records.read_json(run.path(self.out, ".done"))
        return bool(marker and marker.get("ok")) and not run.log_path(self.out).exists()

    def _retried(self, run: Run) -> bool:
        """A failed run is retried when an attempt failed: not a log without a done marker
        (made by hand?), nor a done run whose log is gone (its other files would clash)."""
        marker = records.read_json(run.path(self.out, ".done"))
        return marker is not None and not marker.get("ok") and \
            not records.finished_files(run, self.out)

    def _rows(self) -> dict[str, dict]:
        folders = CampaignFolders()
        return {r.run_id: self._row(r, *self._state(r, folders)) for r in self.runs}

    def _state(self, run: Run, folders: CampaignFolders) -> tuple[str, str, int]:
        """`run`'s (state, reason, attempts) from disk, as ``dlperf summarize`` counts it: a
        log whose done marker is missing or unreadable is done where status.json lists it
        as done (:meth:`~analysis.strays.CampaignFolders.stray_reason`), so that a resume
        does not rewrite it as failed and change the count with no run made."""
        state = records.disk_state(run, self.out)
        log = run.log_path(self.out)
        if state[0] == "failed" and records.read_json(run.path(self.out, ".done")) is None \
                and log.exists() and not folders.stray_reason(log.parent, run.stem):
            return "done", "", state[2]
        return state

    def status(self):
        """The status table from the files on disk (see :func:`records.status_frame`)."""
        return records.status_frame(list(self._rows().values()))

    plan = status

    def resolve_device(self, probe: bool = True) -> tuple[str, str]:
        """("cuda" | "cpu", note for the run record)."""
        if self.spec.device != "auto":
            return self.spec.device, f"device {self.spec.device} set in the spec"
        if not probe:
            return "cuda", "device auto: assumed cuda (not probed in a dry run)"
        if self.backend.gpus_per_node():
            return "cuda", ""
        note = "no CUDA GPU found: ran on CPU with gloo"
        if self.spec.scale != "full":
            note += " at reduced size (--image-size 32 --width 8)"
        return "cpu", note

    def launch(self, run: Run, device: str, port: int | None = None,
               start_by: float | None = None, hosts: list[str] | None = None) -> Launch:
        """The node commands and output paths of `run` (`start_by`: see Launch; `hosts`:
        instead of the backend's)."""
        b, case, spec = self.backend, run.case, self.spec
        hosts = hosts or b.node_hosts(case.num_nodes)
        python = spec.python or sys.executable
        ctx = LaunchContext(spec, run, hosts, hosts[0], port or b.master_port(), device, python)
        workdir = str(spec.workdir or config.PROJECT_DIR)
        work = self.out / ".campaign" / "runs" / case.config / run.stem
        nodes = []
        for k, argv in enumerate(self.workload.commands(ctx)):
            env = {"OMP_NUM_THREADS": str(OMP_THREADS), **spec.env,
                   **b.node_env(k, case.gpus_per_node)}
            if argv is not None and spec.container:
                argv = wrap_container(argv, spec.container, workdir, sorted(env), device == "cuda")
            log, env_json, gpu_csv = (p.with_name(p.name + ".partial")
                                      for p in run.files(self.out, k))
            nodes.append(NodeLaunch(
                index=k, host=hosts[k], argv=argv, env=env, log=log, env_json=env_json,
                gpu_csv=gpu_csv, result=work / f"node{k}.result", pidfile=work / f"node{k}.pid"))
        return Launch(run_id=run.run_id, nodes=nodes, timeout=spec.timeout, workdir=workdir,
                      work=work, device=device, python=python,
                      gpus_per_node=case.gpus_per_node, start_by=start_by)

    def dry_run(self, file=None, fresh: bool = False) -> list[str]:
        """Print (to `file`, default stdout) and return every node's command of every run,
        writing nothing; then raise :class:`~analysis.campaign.resume.FolderMismatch` where
        :meth:`run` would (not with `fresh`: the real run moves the folder aside first)."""
        changes = {} if fresh else self.changes(create_key=False)
        probe = self.spec.backend == "local"
        device, note = self.resolve_device(probe=probe)
        if device == "cuda" and not visible_gpus(dict(os.environ)):
            where = "" if self.spec.backend == "local" else \
                f" (they are needed on the {self.spec.backend} nodes, not here)"
            print(f"warning: campaign {self.spec.name} asks for GPUs (device cuda) but no "
                  f"NVIDIA GPU is visible on this machine{where}", file=sys.stderr)
        lines = [f"# campaign {self.spec.name}: {len(self.runs)} runs, backend "
                 f"{self.spec.backend}, workload {self.spec.workload}, device {device}"
                 + (f" ({note})" if note else "") + f", out {self.out}"]
        for run in self.runs:
            launch = self.launch(run, device, port=self.spec.master_port
                                 if self.spec.master_port != "auto" else 29500)
            lines.append(f"run {run.run_id}:")
            lines += self.backend.describe(launch)
        print("\n".join(lines), file=file or sys.stdout, flush=True)
        if changes:
            raise resume.FolderMismatch(resume.mismatch_message(self.out, changes))
        return lines

    # -- running ----------------------------------------------------------------------
    def _write_spec(self) -> None:
        raw = redact_tree(dict(self.spec.raw), self.spec.secrets())
        raw["backend"] = self.spec.backend
        self.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.out / "campaign.yaml", yaml.safe_dump(raw, sort_keys=False))

    def run(self, progress: bool = True, time_budget: float | None = None,
            fresh: bool = False):
        """Run every run that is not done; returns the status table (also in status.json).

        With `time_budget` (seconds), no run is started once the next one would probably
        end past the budget (judged by the longest run recorded in the folder or run so far;
        with none yet, the first run starts), and a queued Slurm job that has not started by
        then is cancelled (its run stays pending); the rest stay pending and a
        later call resumes them — for job time limits and lent machines. Raises
        :class:`~analysis.campaign.records.CampaignBusy` at once when another process runs a
        campaign in the same output folder, :class:`~analysis.campaign.resume.FolderMismatch`
        before anything runs when the folder holds done runs that this spec would run
        differently (:meth:`changes`), :class:`CampaignInterrupted` on SIGINT/SIGTERM.
        With `fresh`, the folder's contents are first moved aside into a dated folder beside
        it (:func:`~analysis.campaign.resume.move_aside`; nothing is deleted).
        """
        with records.campaign_lock(self.out) as lock:
            if fresh:
                moved = resume.move_aside(self.out, keep=lock)
                if moved:
                    print(f"{self.spec.name}: moved the contents of {self.out} to {moved}",
                          file=sys.stderr, flush=True)
            changes = self.changes()
            if changes:
                raise resume.FolderMismatch(resume.mismatch_message(self.out, changes))
            return self._run_locked(progress, time_budget)

    # -- resuming ---------------------------------------------------------------------
    def expected_marker(self, run: Run, device: str, hosts: list[str], port: int,
                        create_key: bool = True) -> dict:
        """The done marker this spec would write for `run` run on `hosts` with `port`
        (`create_key`: see :func:`records.campaign_key`)."""
        launch = self.launch(run, device, port=port, hosts=hosts)
        nodes = [NodeOutcome(n.index, n.host, None, command=redact_argv(n.argv or [], n.env))
                 for n in launch.active()]
        return self._marker(run, launch, Outcome(True, "", nodes), device, "", 1, 1,
                            create_key)

    def changes(self, create_key: bool = True) -> dict[str, list[str]]:
        """``{run_id: ['key: old → new', ...]}`` for each done run in the folder that this
        spec would run differently (see :mod:`analysis.campaign.resume`); a done run of a
        case the spec no longer has is compared on the campaign-wide settings only.
        Without `create_key`, writes nothing (:func:`records.campaign_key`)."""
        by_id = {r.run_id: r for r in self.runs}
        found: dict[str, list[str]] = {}
        other_key: list[str] = []  # done runs whose digests another key made
        relabelled: list[tuple] = []  # done runs whose recorded warm-up is not what ran
        for run_id, old in resume.done_markers(self.out).items() if self.runs else ():
            run = by_id.get(run_id, self.runs[0])
            device = self.spec.device if self.spec.device != "auto" else old.get("device")
            n = run.case.num_nodes
            builds = [self.expected_marker(run, device or "cpu",
                                           [f"dlperf-host-{tag}{k}" for k in range(n)], port,
                                           create_key)
                      for tag, port in (("a", 10001), ("b", 10002))]
            drop = set(self.backend.node_env(0, run.case.gpus_per_node))
            recorded = resume.recorded_env(self.out, run_id) \
                if self.backend.passes_environment else None
            shell = None if recorded is None else compared_variables(
                select_env({**os.environ, **builds[0]["env"]}))
            key, old_key = resume.digest_key(builds[0]), resume.digest_key(old)
            digests = key is not None and key == old_key
            if key and old_key and not digests:
                other_key.append(run_id)
            new, other = (resume.settings(m, drop, shell, digests) for m in builds)
            read = resume.warmup_run(old)
            if read is not old:
                relabelled.append((run_id, old["case"].get("warmup"), read["case"]["warmup"]))
            was = resume.settings(read, drop, recorded, digests)
            if "workdir" not in old:  # a marker of an older suite does not say
                new.pop("workdir", None)
            if run_id not in by_id:
                new, was = resume.spec_wide(new), resume.spec_wide(was)
            lines = resume.differences(was, new, resume.masked_positions(new, other))
            if self.backend.passes_environment and recorded is None and resume.record_gone(old):
                lines.append(resume.RECORD_GONE)
            if lines:
                found[run_id] = lines
        resume.key_warning(self.out, other_key)
        resume.warmup_note(self.out, relabelled)
        return found

    def _skipped_line(self, rows: dict, todo: list[Run]) -> str:
        done = sum(rows[r.run_id]["state"] == "done" for r in self.runs)
        kept = len(self.runs) - done - len(todo)
        if not done and not kept:
            return ""
        line = f"{self.spec.name}: skipping {done} run(s) already done"
        if kept:
            line += f" and {kept} failed run(s) not retried (reasons in status.json)"
        return line + f"; {len(todo)} to run"

    def _run_locked(self, progress: bool, time_budget: float | None):
        self.suite = suite_version(exclude=[self.out])
        self._write_spec()
        self._kept = records.kept_rows(self.out, resume.done_markers(self.out),
                                       {r.run_id for r in self.runs})
        if self._kept:
            print(f"{self.spec.name}: {len(self._kept)} done run(s) of cases this spec does not "
                  f"run stay listed in status.json (e.g. {self._kept[0]['run_id']})",
                  file=sys.stderr, flush=True)
        rows = self._rows()
        todo = [r for r in self.runs if rows[r.run_id]["state"] == "pending" or (
            rows[r.run_id]["state"] == "failed" and self.spec.retry_failed and self._retried(r))]
        self._save(rows)
        resume.stray_note(self.out, self.spec.name, set(rows))
        skipped = self._skipped_line(rows, todo)
        if skipped:
            print(skipped, file=sys.stderr, flush=True)
        for run in filter(self._log_missing, self.runs):
            print(f"{self.spec.name}: {run.run_id}: {rows[run.run_id]['reason']}",
                  file=sys.stderr, flush=True)
        if not todo:
            return records.status_frame(list(rows.values()))
        device, note = self.resolve_device()
        # progress on stderr: a bar that redraws in place on a terminal; elsewhere (a file,
        # a notebook, a CI log, where each redraw would be a line) a line per finished run
        done = len(self.runs) - len(todo)
        bar = None
        if progress and sys.stderr.isatty():
            from tqdm import tqdm

            bar = tqdm(total=len(self.runs), initial=done, unit="run", desc=self.spec.name,
                       file=sys.stderr)
        old = trap_sigterm()
        current = None
        # the longest run recorded in the folder (earlier invocations) or run here so far:
        # without the record, each invocation started one run whatever the budget
        recorded = [r["duration_s"] for r in rows.values() if math.isfinite(r["duration_s"])]
        start, longest = time.monotonic(), max(recorded, default=0.0)
        try:
            self.backend.prepare(self.out)
            for run in todo:
                # a run (a queued job too) must start early enough to end within the budget
                start_by = None if time_budget is None else start + time_budget - longest
                if start_by is not None and time.monotonic() > start_by:
                    break
                current = run
                if bar is not None:
                    bar.set_postfix_str(run.run_id)
                t0 = time.monotonic()
                try:
                    self._run_one(run, rows, device, note, start_by)
                except BudgetSpent as exc:
                    state, reason, attempts = records.disk_state(run, self.out)
                    rows[run.run_id] = self._row(run, state, reason if state != "pending"
                                                 else str(exc), attempts)
                    current = None
                    break
                longest = max(longest, time.monotonic() - t0)
                done += 1
                if bar is not None:
                    bar.update(1)
                elif progress:
                    print(f"{self.spec.name}: [{done}/{len(self.runs)}] {run.run_id} "
                          f"{rows[run.run_id]['state']} in {time.monotonic() - t0:.1f} s",
                          file=sys.stderr, flush=True)
                current = None
        except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM through trap_sigterm
            why = f"interrupted ({str(exc) or 'SIGINT'}); nodes stopped, will run next time"
            if current is not None:
                state, _, attempts = records.disk_state(current, self.out)
                if state != "done":
                    rows[current.run_id].update(state="pending", reason=why, attempts=attempts)
            raise CampaignInterrupted(f"campaign {self.spec.name} interrupted at "
                                      f"{current.run_id if current else 'start'}; status in "
                                      f"{self.out / 'status.json'}") from None
        finally:
            if bar is not None:
                bar.close()
            self.backend.close()
            restore_sigterm(old)
            self._save(rows)
        return records.status_frame(list(rows.values()))

    def _save(self, rows: dict) -> None:
        records.write_status(self.out, self.spec.name,
                             [rows[r.run_id] for r in self.runs] + self._kept, suite=self.suite)

    def _run_one(self, run: Run, rows: dict, device: str, note: str,
                 start_by: float | None = None) -> None:
        _, _, before = records.disk_state(run, self.out)
        why_not = self.backend.check(run.case)
        attempts = 0
        for _ in range(1 + self.spec.retries):
            attempts += 1
            total = before + attempts
            if why_not:
                outcome = Outcome(False, why_not, [])
                launch = None
            else:
                launch = self.launch(run, device, start_by=start_by)
                outcome = self._attempt(run, launch, total)
            if not outcome.ok and outcome.no_retry and attempts <= self.spec.retries:
                outcome.reason += f"; not retried: {outcome.no_retry}"
            marker = self._marker(run, launch, outcome, device, note, attempts, total)
            records.write_json(run.path(self.out, ".done"), marker)
            rows[run.run_id] = self._row(run, marker["state"], marker["reason"], total,
                                         marker["duration_s"])
            if outcome.ok:
                return
            self._save(rows)
            if why_not or outcome.no_retry:
                return

    def _outputs(self, launch: Launch) -> list[Path]:
        return [p for n in launch.nodes for p in (n.log, n.gpu_csv, n.env_json)]

    def _attempt(self, run: Run, launch: Launch, attempt: int) -> Outcome:
        launch.work.mkdir(parents=True, exist_ok=True)
        run.log_path(self.out).parent.mkdir(parents=True, exist_ok=True)
        records.archive(self._outputs(launch), self.out, run, 0)  # leftovers of a crash
        for n in launch.nodes:
            for p in (n.result, n.pidfile):
                p.unlink(missing_ok=True)
        try:
            outcome = self.backend.execute(launch)
        except (KeyboardInterrupt, BudgetSpent):
            records.archive(self._outputs(launch), self.out, run, attempt)
            raise
        except (DLPerfError, OSError) as exc:
            outcome = Outcome(False, f"{self.spec.backend} backend error: {exc}", [])
        if outcome.ok:
            problem = self._finalize(run, launch)
            if not problem:
                return outcome
            outcome.ok, outcome.reason = False, problem
        failing = next((n for n in outcome.nodes if n.rc not in (0, None)), None)
        tail = _last_line(launch.nodes[failing.index if failing else 0].log)
        if tail and "log:" not in outcome.reason:
            outcome.reason += f"; log: {tail}"
        outcome.extra["archived"] = records.archive(self._outputs(launch), self.out, run,
                                                    attempt)
        return outcome

    def _finalize(self, run: Run, launch: Launch) -> str:
        """Rename the partial files to their final names; '' or why it could not."""
        moves = [(p, p.with_name(p.name.removesuffix(".partial")))
                 for p in self._outputs(launch) if p.exists()]
        if not launch.nodes[0].log.exists() and launch.nodes[0].argv is not None:
            return "node 0 wrote no log"
        clash = [str(dst) for _, dst in moves if dst.exists()]
        if clash:
            return f"finished file(s) already exist, not overwritten: {', '.join(clash)}"
        for src, dst in moves:
            os.replace(src, dst)
        return ""

    def _marker(self, run: Run, launch: Launch | None, outcome: Outcome, device: str,
                note: str, attempt: int, total: int, create_key: bool = True) -> dict:
        c = run.case
        # the node's fields in their order, its index named "node"
        nodes = [{"node": d.pop("index"), **d} for d in map(asdict, outcome.nodes)]
        marker = redact_tree({
            "run_id": run.run_id, "ok": outcome.ok, "state": "done" if outcome.ok else "failed",
            "reason": outcome.reason, "attempt": attempt, "attempts_total": total,
            "finished": time.time(), "duration_s": outcome.wall_s,
            "campaign": self.spec.name, "suite": self.suite, "backend": self.spec.backend,
            "workload": self.spec.workload, "framework": self.spec.framework,
            "device": device, "device_note": note, "timeout_s": self.spec.timeout,
            "workdir": str(self.spec.workdir or config.PROJECT_DIR),
            "case": {"model": c.model, "num_nodes": c.num_nodes, "gpus_per_node": c.gpus_per_node,
                     "precision": c.precision, "batch_size_per_device": c.batch_size,
                     "repeat": run.repeat, "iterations": self.spec.iterations,
                     "warmup": self.workload.warmup_given(launch.nodes[0].argv or [])
                     if launch else None, **c.param},
            "env": redact_env(launch.nodes[0].env) if launch else {},
            "nodes": nodes, **outcome.extra,
        }, self.spec.secrets(), by_name=False)
        if launch is not None and self.backend.passes_environment:  # no secret: not redacted
            marker[resume.DIGESTS] = resume.env_digests(
                dict(os.environ), launch.nodes[0].env,
                records.campaign_key(self.out, create_key))
        return marker

