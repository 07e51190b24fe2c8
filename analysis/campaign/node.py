"""Node agent: runs one node's command of a run and everything around it, on that node.

Started by every backend as ``python /path/to/node.py [options] -- ARGV...`` (run as a file,
so that it needs nothing but the standard library on the node). It

- writes its pid to ``--pidfile`` and becomes a session leader;
- reads the spec's environment variables as one JSON line from stdin (``--env-stdin``), so
  secrets never appear on a command line;
- starts the environment capture (``python -m analysis env -o ENV_JSON``, which records only
  performance-relevant variables, secrets redacted) and, when the node has NVIDIA GPUs, GPU sampling
  (``nvidia-smi --query-gpu=... -lms 500`` into ``--gpu-csv``);
- runs ARGV with the agent's stdout/stderr (the node log), stdin closed;
- stops the whole process tree (torchrun puts its workers in new sessions, so the tree is
  walked through /proc) on SIGTERM/SIGINT/SIGHUP, on ``--timeout``, when its parent dies
  (``--die-with-parent``) or when stdin reaches EOF (``--watch-stdin``: the ssh connection
  is gone);
- writes ``--result`` (JSON: rc, times, host, what happened to env capture and sampling) and
  exits with the command's exit status (128 + signal when killed).

``node.py --kill PIDFILE`` stops the tree of the agent named in PIDFILE (used over ssh).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

GPU_QUERY = "timestamp,index,memory.used,memory.total,utilization.gpu"
GRACE = 5.0


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ..." — comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1:
            kids.setdefault(int(fields[1]), []).append(int(entry.name))
    return kids


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (children first, breadth-first)."""
    kids = _children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        for c in kids.get(p, ()):
            out.append(c)
            todo.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2:][:1] not in ("Z", "X")


def _signal_all(pids: list[int], sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_tree(pid: int, grace: float = 5.0, include_root: bool = True) -> None:
    """SIGTERM `pid` and all its descendants, wait up to `grace` s, then SIGKILL what is left.

    The tree is re-read before the SIGKILL so that processes forked in between are caught too.
    """
    tree = ([pid] if include_root else []) + descendants(pid)
    _signal_all(tree, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in tree):
        time.sleep(0.05)
    left = [p for p in tree + descendants(pid) if alive(p)]
    _signal_all(left, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(alive(p) for p in left):
        time.sleep(0.02)


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value)
    except (OSError, AttributeError):
        pass


def _set_pdeathsig(sig: int) -> None:
    _prctl(1, sig)  # PR_SET_PDEATHSIG


def _become_subreaper() -> None:
    """Orphans of the workload (torchrun's workers when torchrun dies) become our children,
    so they can be found and stopped."""
    _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER


def _stop_orphans(keep: set[int]) -> None:
    """After the command exited: stop what it left behind (re-parented to us), then reap."""
    keep = keep | {q for p in keep for q in descendants(p)}
    orphans = [p for p in descendants(os.getpid()) if p not in keep]
    if not orphans:
        return
    _signal_all(orphans, signal.SIGTERM)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(alive(p) for p in orphans):
        time.sleep(0.05)
    _signal_all([p for p in orphans if alive(p)], signal.SIGKILL)
    for p in orphans:
        try:
            os.waitpid(p, 0)
        except ChildProcessError:
            pass


def _visible_gpus(env: dict) -> list[str]:
    """Indices of the NVIDIA GPUs this node may use ([] when there are none)."""
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    found = [x.strip() for x in out.stdout.splitlines() if x.strip().isdigit()]
    want = env.get("CUDA_VISIBLE_DEVICES")
    if want is not None:
        chosen = [x.strip() for x in want.split(",") if x.strip()]
        return [x for x in chosen if x in found]
    return found


def _start_env_capture(path: str, env: dict) -> tuple[subprocess.Popen | None, str]:
    # `dlperf env` records an allow-list of variables, redacted by analysis.redact
    try:
        proc = subprocess.Popen([sys.executable, "-m", "analysis", "env", "-o", path],
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        return None, f"failed: {exc}"
    return proc, "started"


def _finish_env_capture(proc: subprocess.Popen | None, status: str, path: str) -> str:
    if proc is None:
        return status
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid, grace=1)
        return "failed: env capture took more than 60 s"
    if proc.returncode == 0 and Path(path).exists():
        return "ok"
    tail = (err or "").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
    return f"failed: {tail[0][:300]}"


def _start_gpu_sampling(path: str, gpus: list[str]):
    if not gpus:
        return None, "none: no NVIDIA GPU on this node"
    f = open(path, "w")
    try:
        proc = subprocess.Popen(["nvidia-smi", f"--query-gpu={GPU_QUERY}", "--format=csv",
                                 "-lms", "500", "-i", ",".join(gpus)],
                                stdout=f, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    except OSError as exc:
        f.close()
        return None, f"failed: {exc}"
    finally:
        f.close()
    return proc, "nvidia-smi"


def run_agent(opts) -> int:
    started = time.time()
    try:
        os.setsid()
    except OSError:  # already a session leader (e.g. started by sshd or start_new_session)
        pass
    if opts.die_with_parent:
        _set_pdeathsig(signal.SIGTERM)
    _become_subreaper()
    if opts.pidfile:
        Path(opts.pidfile).write_text(f"{os.getpid()}\n")
    env = dict(os.environ)
    if opts.env_stdin:
        line = sys.stdin.readline()
        env.update({str(k): str(v) for k, v in json.loads(line or "{}").items()})
    stop = {"reason": ""}
    done = threading.Event()

    def on_signal(signum, _frame):
        stop["reason"] = stop["reason"] or f"signal {signal.Signals(signum).name}"
        done.set()

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    if opts.die_with_parent and os.getppid() == 1:
        stop["reason"] = "parent gone before start"
    if opts.watch_stdin:
        def watch():
            while sys.stdin.buffer.read(4096):
                pass
            stop["reason"] = stop["reason"] or "connection to the controller lost (stdin EOF)"
            done.set()
        threading.Thread(target=watch, daemon=True).start()

    env_proc, env_status = (None, "skipped")
    if opts.env_json:
        env_proc, env_status = _start_env_capture(opts.env_json, env)
    sampler, gpu_status = (None, "skipped")
    if opts.gpu_csv:
        sampler, gpu_status = _start_gpu_sampling(opts.gpu_csv, _visible_gpus(env))
    rc, child = None, None
    if not stop["reason"]:
        try:
            child = subprocess.Popen(opts.argv, env=env, stdin=subprocess.DEVNULL,
                                     cwd=opts.cwd or None)
        except OSError as exc:
            print(f"dlperf node agent: cannot start {opts.argv[0]!r}: {exc}", file=sys.stderr)
            rc, stop["reason"] = 127, f"cannot start {opts.argv[0]!r}: {exc.strerror or exc}"
    deadline = time.monotonic() + opts.timeout if opts.timeout else None
    while child is not None and rc is None:
        rc = child.poll()
        if rc is not None:
            break
        if deadline and time.monotonic() > deadline:
            stop["reason"] = stop["reason"] or f"timeout after {opts.timeout:g} s"
        if stop["reason"]:
            kill_tree(child.pid, grace=GRACE)
            child.wait()
            rc = child.returncode
            break
        done.wait(0.1)
    _stop_orphans({p.pid for p in (sampler, env_proc) if p is not None})
    if sampler is not None:
        kill_tree(sampler.pid, grace=1)
        sampler.wait()
    env_status = _finish_env_capture(env_proc, env_status, opts.env_json or "")
    if stop["reason"] and rc is not None and rc >= 0 and child is not None and \
            not stop["reason"].startswith("cannot start"):
        rc = rc or 143
    rc = 128 - rc if rc is not None and rc < 0 else rc  # killed by signal N → 128 + N
    if opts.result:
        tmp = Path(f"{opts.result}.tmp")
        tmp.write_text(json.dumps({
            "rc": rc, "host": socket.gethostname(), "pid": os.getpid(),
            "started": started, "ended": time.time(), "duration_s": time.time() - started,
            "stopped": stop["reason"], "env_capture": env_status, "gpu_sampling": gpu_status,
        }))
        tmp.replace(opts.result)
    return 1 if rc is None else rc


def stop_agents(pids: list[int], grace: float = GRACE) -> None:
    """SIGTERM agents (each stops its own tree), wait up to `grace` (+2) s, then SIGKILL
    whatever of their trees — as seen before the signal, torchrun's workers included — is
    still alive."""
    pids = [p for p in pids if alive(p)]
    if not pids:
        return
    tree = [q for p in pids for q in [p, *descendants(p)]]
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace + 2
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    left = [p for p in tree + [q for p in pids for q in descendants(p)] if alive(p)]
    _signal_all(left, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(alive(p) for p in left):
        time.sleep(0.02)


def kill_from_pidfile(path: str, grace: float = GRACE) -> int:
    try:
        pid = int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    stop_agents([pid], grace)
    return 0


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
    p.add_argument("--die-with-parent", action="store_true")
    p.add_argument("--kill", metavar="PIDFILE")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    opts = p.parse_args(argv)
    if opts.kill:
        return kill_from_pidfile(opts.kill)
    if opts.argv and opts.argv[0] == "--":
        opts.argv = opts.argv[1:]
    if not opts.argv:
        p.error("no command given after --")
    return run_agent(opts)


if __name__ == "__main__":
    sys.exit(main())
