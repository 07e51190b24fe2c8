"""Node agent: runs one node's command of a run and everything around it, on that node.

Started by every backend as ``python /path/to/node.py [options] -- ARGV...`` (run as a file).
Besides the standard library it needs only ``analysis.shell`` (the one command wrapper) and
``analysis.errors``: from the package when the node's Python has it, else from the source tree
the file lies in, else from an ``analysis/`` folder copied beside it. It

- becomes a session leader, unless it leads a process group already (either way its pid names
  its session or group) and writes its pid and start time to ``--pidfile``;
- reads the spec's environment variables as one JSON line from stdin (``--env-stdin``), so
  secrets never appear on a command line;
- starts, in its session, the environment capture (``python -m analysis env -o ENV_JSON``,
  which records only performance-relevant variables, secrets redacted) and, when the node has
  NVIDIA GPUs, GPU sampling (``nvidia-smi --query-gpu=... -lms 500`` into ``--gpu-csv``);
- runs ARGV with the agent's stdout/stderr (the node log), stdin closed;
- stops the whole process tree (torchrun puts its workers in new sessions, so the tree is
  walked through /proc) on SIGTERM/SIGINT/SIGHUP, on ``--timeout``, when its parent dies
  (``--die-with-parent``: PR_SET_PDEATHSIG, and the parent pid is polled) or when stdin
  reaches EOF (``--watch-stdin``: the ssh connection is gone);
- writes ``--result`` (JSON: rc, times, host, what happened to env capture and sampling) and
  exits with the command's exit status (128 + signal when killed).

An agent killed with SIGKILL can stop nothing: its workload (in its session) and the workload's
children (in sessions of their own) run on, re-parented to init. Whoever started the agent
therefore ends with :func:`stop_agents` (local) or ``node.py --kill PIDFILE`` (over ssh), which
stop the agent if it still runs and then :func:`kill_session` of its session: every member and
every descendant of one, stopped before it is looked at, so that nothing escapes. Where no
controller is at hand (Slurm), ``node.py --supervise ...`` does it on the node.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    # run as a file by a Python that lacks the package: take it from the source tree this
    # file lies in (a copy beside this file, as over ssh, is found as the script's own folder)
    _ROOT = Path(__file__).resolve().parent.parent.parent
    if (_ROOT / "analysis" / "shell.py").is_file() and str(_ROOT) not in sys.path:
        sys.path.append(str(_ROOT))

from analysis.shell import (  # noqa: E402  (after the path set-up above)
    DEVNULL,
    PIPE,
    CommandError,
    CommandTimeoutError,
    Process,
    run_command,
    start_process,
)

GPU_QUERY = "timestamp,index,memory.used,memory.total,utilization.gpu,power.draw"
GRACE = 5.0


def _stat_fields(pid: int | str) -> list[str]:
    """``/proc/PID/stat``'s fields after the command name: state, ppid, pgrp, session, ...,
    start time (index 19); [] when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    # "pid (comm) state ppid ..." — comm may hold spaces and parentheses.
    return stat[stat.rfind(")") + 2:].split()


def _process_table() -> dict[int, list[str]]:
    """Every process's :func:`_stat_fields`."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and len(fields := _stat_fields(entry.name)) > 19:
            table[int(entry.name)] = fields
    return table


def _children_map(table: dict[int, list[str]]) -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for pid, fields in table.items():
        kids.setdefault(int(fields[1]), []).append(pid)
    return kids


def _reach(kids: dict[int, list[int]], roots) -> set[int]:
    """`roots` and every descendant of them in the children map `kids`."""
    reached, todo = set(roots), list(roots)
    while todo:
        for c in kids.get(todo.pop(), ()):
            if c not in reached:
                reached.add(c)
                todo.append(c)
    return reached


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`."""
    return sorted(_reach(_children_map(_process_table()), [pid]) - {pid})


def start_time(pid: int) -> str:
    """When `pid` started (clock ticks since boot, as text; '' when there is no such process).
    With the pid it names one process, even once the pid number is reused."""
    fields = _stat_fields(pid)
    return fields[19] if fields else ""


def alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] not in ("Z", "X")


def _signal_all(pids: list[int], sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _wait_gone(pids, seconds: float) -> None:
    """Wait up to `seconds` until none of `pids` runs (a zombie has ended)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.02)


def _kill_frozen(is_root: Callable[[int, list[str]], bool]) -> list[int]:
    """SIGKILL every process that `is_root(pid, stat fields)` selects and all their
    descendants, wherever these moved (torchrun's workers, like any process that calls setsid,
    leave their session but not their parent); the pids killed.

    Nothing escapes, by construction: a process found is stopped (SIGSTOP) before the next
    pass reads the process table, so it can neither fork nor die and orphan a child unseen;
    passes repeat until one finds nothing new, then all found are killed.
    """
    found: set[int] = set()
    while True:
        table = _process_table()
        roots = [p for p, f in table.items() if is_root(p, f)]
        new = _reach(_children_map(table), [*roots, *found]) - found - {os.getpid()}
        if not new:
            break
        _signal_all(sorted(new), signal.SIGSTOP)
        found |= new
    _signal_all(sorted(found), signal.SIGKILL)
    _wait_gone(found, 2.0)
    return sorted(found)


def kill_session(sid: int, started: str = "") -> list[int]:
    """SIGKILL what is left of session (or process group) `sid` — an agent's: the agent's pid —
    and everything its members started (see :func:`_kill_frozen`); the pids killed.

    The caller keeps the number `sid` from naming another session: the leader is its unreaped
    child, or `started` (the leader's :func:`start_time`) is given, and processes older than
    the leader are ignored.
    """
    def member(_pid: int, f: list[str]) -> bool:
        return sid in (int(f[2]), int(f[3])) and (not started or int(f[19]) >= int(started))

    return _kill_frozen(member)


def _stop_trees(is_root: Callable[[int, list[str]], bool], grace: float) -> set[int]:
    """SIGTERM every process `is_root` selects and all their descendants, wait up to `grace`
    s, then :func:`_kill_frozen` what is left of them, wherever it moved; every pid met."""
    table = _process_table()
    tree = _reach(_children_map(table), [p for p, f in table.items() if is_root(p, f)])
    _signal_all(sorted(tree), signal.SIGTERM)
    _wait_gone(tree, grace)
    return tree | set(_kill_frozen(lambda p, f: p in tree or is_root(p, f)))


def kill_tree(pid: int, grace: float) -> None:
    """SIGTERM `pid` and all its descendants, wait up to `grace` s, then SIGKILL what is left
    (also what they forked in between, and what was re-parented away from `pid`)."""
    _stop_trees(lambda p, _f: p == pid, grace)


def _stop_orphans(keep: set[int]) -> None:
    """After the command exited: stop what it left behind (re-parented to us, the subreaper)
    and what that started, and reap it."""
    me = os.getpid()
    for p in _stop_trees(lambda pid, f: int(f[1]) == me and pid not in keep, 3.0):
        try:
            os.waitpid(p, os.WNOHANG)
        except ChildProcessError:  # not ours to reap
            pass


def visible_gpus(env: dict) -> list[str]:
    """Indices of the NVIDIA GPUs this node may use ([] when there are none)."""
    try:
        out = run_command(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], 20)
    except CommandError:
        return []
    found = [x.strip() for x in out.stdout.splitlines() if x.strip().isdigit()]
    want = env.get("CUDA_VISIBLE_DEVICES")
    if want is not None:
        chosen = [x.strip() for x in want.split(",") if x.strip()]
        return [x for x in chosen if x in found]
    return found


def _start_env_capture(path: str, env: dict) -> tuple[Process | None, str]:
    # `dlperf env` records an allow-list of variables, redacted by analysis.redact
    try:
        proc = start_process([sys.executable, "-m", "analysis", "env", "-o", path], env=env,
                             stdout=DEVNULL, stderr=PIPE)  # in the agent's session
    except CommandError as exc:
        return None, f"failed: {exc.reason}"
    return proc, "started"


def _finish_env_capture(proc: Process | None, status: str, path: str) -> str:
    if proc is None:
        return status
    try:
        _, err = proc.communicate(timeout=60)
    except CommandTimeoutError:
        kill_tree(proc.pid, grace=1)
        return "failed: env capture took more than 60 s"
    if proc.returncode == 0 and Path(path).exists():
        return "ok"
    tail = (err or "").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
    return f"failed: {tail[0][:300]}"


def _start_gpu_sampling(path: str, gpus: list[str]):
    if not gpus:
        return None, "none: no NVIDIA GPU on this node"
    with open(path, "wb") as f:
        try:
            proc = start_process(["nvidia-smi", f"--query-gpu={GPU_QUERY}", "--format=csv",
                                  "-lms", "500", "-i", ",".join(gpus)], stdout=f, stderr=DEVNULL)
        except CommandError as exc:
            return None, f"failed: {exc.reason}"
    return proc, "nvidia-smi"


class _StopFlag:
    """Why the agent must stop ('' while it need not; the first reason wins). The signal
    handlers only record the reason (no lock: a handler that took one once deadlocked the
    agent); the main loop, which polls it, does the stopping."""

    def __init__(self):
        self.reason = ""
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, lambda signum, _frame: self.set(
                f"signal {signal.Signals(signum).name}"))

    def set(self, reason: str) -> None:
        self.reason = self.reason or reason


def _parent_gone(parent: int | None) -> str:
    if parent is not None and os.getppid() != parent:
        return f"parent process {parent} is gone"
    return ""


def run_agent(opts) -> int:
    started = time.time()
    try:
        os.setsid()
    except OSError:  # already a session leader (e.g. started by sshd or start_new_session)
        pass
    parent, libc = None, ctypes.CDLL(None)  # the agent runs on Linux: it reads /proc
    if opts.die_with_parent:
        parent = opts.parent_pid or os.getppid()
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    # PR_SET_CHILD_SUBREAPER: orphans of the workload (torchrun's workers when torchrun
    # dies) become our children, so they can be found and stopped
    libc.prctl(36, 1)
    if opts.pidfile:
        # the start time makes the pid name this process only: read by kill_from_pidfile
        Path(opts.pidfile).write_text(f"{os.getpid()} {start_time(os.getpid())}\n")
    env = dict(os.environ)
    if opts.env_stdin:
        line = sys.stdin.readline()
        env.update({str(k): str(v) for k, v in json.loads(line or "{}").items()})
    stop = _StopFlag()
    if _parent_gone(parent):
        stop.set(f"{_parent_gone(parent)} before the start")
    if opts.watch_stdin:
        def watch():
            # os.read, not sys.stdin: a daemon thread blocked inside the buffered reader
            # holds its lock, and the interpreter's exit then aborts ("could not acquire
            # lock for <stdin>", status 134) instead of returning the workload's status
            while os.read(0, 4096):
                pass
            stop.set("connection to the controller lost (stdin EOF)")
        threading.Thread(target=watch, daemon=True).start()

    env_proc, env_status = (None, "skipped")
    if opts.env_json:
        env_proc, env_status = _start_env_capture(opts.env_json, env)
    sampler, gpu_status = (None, "skipped")
    if opts.gpu_csv:
        sampler, gpu_status = _start_gpu_sampling(opts.gpu_csv, visible_gpus(env))
    rc, child, why = None, None, ""
    if not stop.reason and opts.cwd and not os.path.isdir(opts.cwd):
        why = (f"the working directory {opts.cwd!r} (the spec's workdir) does not exist on "
               f"{socket.gethostname()}")
    elif not stop.reason:
        try:
            child = start_process(opts.argv, env=env, cwd=opts.cwd or None)
        except CommandError as exc:
            why = f"cannot start {opts.argv[0]!r}: {exc.reason}"
    if why:
        print(f"dlperf node agent: {why}", file=sys.stderr)
        rc = 127
        stop.set(why)
    deadline = time.monotonic() + opts.timeout if opts.timeout else None
    while child is not None and (rc := child.poll()) is None:
        if deadline and time.monotonic() > deadline:
            stop.set(f"timeout after {opts.timeout:g} s")
        if _parent_gone(parent):
            stop.set(_parent_gone(parent))
        if stop.reason:
            kill_tree(child.pid, grace=GRACE)
            rc = child.wait()
            break
        time.sleep(0.1)
    _stop_orphans({p.pid for p in (sampler, env_proc) if p is not None})
    if sampler is not None:
        kill_tree(sampler.pid, grace=1)
        sampler.wait()
    env_status = _finish_env_capture(env_proc, env_status, opts.env_json or "")
    if stop.reason and rc is not None and rc >= 0 and child is not None:
        rc = rc or 143
    rc = 128 - rc if rc is not None and rc < 0 else rc  # killed by signal N → 128 + N
    if opts.result:
        tmp = Path(f"{opts.result}.tmp")
        tmp.write_text(json.dumps({
            "rc": rc, "host": socket.gethostname(), "pid": os.getpid(),
            "started": started, "ended": time.time(), "duration_s": time.time() - started,
            "stopped": stop.reason, "env_capture": env_status, "gpu_sampling": gpu_status,
        }))
        tmp.replace(opts.result)
    return 1 if rc is None else rc


def stop_agents(pids: list[int], started: str = "", grace: float = GRACE) -> None:
    """Stop agents — each pid an agent's, alive or an unreaped zombie of the caller's — and
    everything they started: SIGTERM to the live ones (each stops its own tree and writes its
    result), up to `grace` (+2) s for them to end, then :func:`kill_session` of each agent
    (`started`: see there), which kills an agent that did not stop and what a killed agent
    left running."""
    live = [p for p in pids if alive(p)]
    _signal_all(live, signal.SIGTERM)
    _wait_gone(live, grace + 2)
    for p in pids:
        kill_session(p, started)


def kill_from_pidfile(path: str, grace: float = GRACE) -> int:
    """``--kill PIDFILE``: stop the agent named in PIDFILE and what is left of its session —
    also when the agent itself was killed and its workload runs on (used over ssh)."""
    try:
        words = Path(path).read_text().split()
        pid, started = int(words[0]), "".join(words[1:2])
    except (OSError, ValueError, IndexError):
        return 0
    now = start_time(pid)
    if not (now and started and now != started):  # else another process has the number
        stop_agents([pid], started, grace)
    return 0


def supervise(agent_args: list[str]) -> int:
    """``--supervise``: run the agent (this file with `agent_args` and ``--die-with-parent``) as
    a child in a session of its own; once it has ended, even killed by SIGKILL, kill what is
    left of its session (:func:`kill_session`: it is not reaped before) and exit with its
    status. SIGTERM/SIGINT/SIGHUP are passed on to the agent. For nodes where no controller
    is at hand when the agent dies (Slurm steps); its stdin is /dev/null."""
    agent = start_process([sys.executable, str(Path(__file__).resolve()), "--die-with-parent",
                           *agent_args], new_session=True)

    def forward(signum, _frame):
        _signal_all([agent.pid], signum)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, forward)
    try:
        os.waitid(os.P_PID, agent.pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:
        pass
    kill_session(agent.pid)
    rc = agent.wait()
    return 128 - rc if rc is not None and rc < 0 else (1 if rc is None else rc)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="node.py", description=__doc__.split("\n")[0])
    p.add_argument("--result")
    p.add_argument("--pidfile")
    p.add_argument("--env-json")
    p.add_argument("--gpu-csv")
    p.add_argument("--cwd")
    p.add_argument("--timeout", type=float, default=0)
    p.add_argument("--env-stdin", action="store_true")
    p.add_argument("--watch-stdin", action="store_true")
    p.add_argument("--die-with-parent", action="store_true",
                   help="stop when the parent process dies")
    p.add_argument("--parent-pid", type=int, default=None,
                   help="with --die-with-parent: the parent's pid as its starter knows it "
                        "(default: the parent at start)")
    p.add_argument("--kill", metavar="PIDFILE")
    p.add_argument("--supervise", action="store_true",
                   help="run the agent as a child and kill what it leaves (see supervise)")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    args = sys.argv[1:] if argv is None else argv
    opts = p.parse_args(args)
    if opts.kill:
        return kill_from_pidfile(opts.kill)
    if opts.supervise:
        own = args[:args.index("--")] if "--" in args else args
        at = own.index("--supervise")
        return supervise(args[:at] + args[at + 1:])
    if opts.argv and opts.argv[0] == "--":
        opts.argv = opts.argv[1:]
    if not opts.argv:
        p.error("no command given after --")
    return run_agent(opts)


if __name__ == "__main__":
    sys.exit(main())
