"""A test workload ("sleeper") registered with the campaign's workload registry.

Each node runs a real Python process that prints DLL-style lines, starts a grandchild in a new
session (as torchrun does with its workers) and exits with a chosen status; both carry a marker
in their command line so tests can check with ``pgrep -f`` that nothing is left behind.
Options: ``seconds`` (run time), ``fail_node`` (node that exits 3 early), ``marker``; the spec's
``workload_args`` are passed on and printed in the PARAMETER line (``args : ...``).
"""

from __future__ import annotations

import sys

from analysis.campaign import workloads

SCRIPT = r"""
import subprocess, sys, time
marker, seconds, status = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
print("DLL 2026-01-01 00:00:00.000000 - PARAMETER workload : sleeper  args : "
      + " ".join(sys.argv[4:]), flush=True)
kid = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(float(sys.argv[1]))",
                        str(seconds + 60), marker], start_new_session=True)
t0, i = time.time(), 0
while time.time() - t0 < seconds:
    i += 1
    print(f"DLL 2026-01-01 00:00:00.000000 - Epoch: 0 Iteration: {i}  train.total_ips : 100.0 img/s", flush=True)
    time.sleep(0.05)
kid.kill()
sys.exit(status)
"""


@workloads.register
class Sleeper(workloads.Workload):
    name, framework = "test_sleeper", "pytorch"
    precisions = ("fp32",)

    def commands(self, ctx):
        marker = str(ctx.opt("marker", "dlperf-sleeper"))
        seconds = float(ctx.opt("seconds", 0.5))
        fail = ctx.opt("fail_node")
        # the failing node fails early (after 0.5 s at most); the others run `seconds`
        return [[sys.executable, "-c", SCRIPT, f"{marker}-{ctx.run.stem}",
                 str(min(seconds, 0.5) if fail == k else seconds), "3" if fail == k else "0",
                 *ctx.spec.workload_args]
                for k in range(ctx.case.num_nodes)]
