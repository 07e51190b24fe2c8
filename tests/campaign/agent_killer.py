"""A test workload ("agent_killer") that kills its node agent the moment it starts.

The node's command is a shell that starts two long ``sleep`` processes, one in a session of its
own (as torchrun starts its workers), appends their pids to a file, then SIGKILLs its parent,
the node agent, and waits. Nothing then remains to stop the sleeps but whoever started the
agent. The sleep's duration is the marker (``sleep 4321.1234``), so that ``pgrep -f`` finds
every process left behind. Options: ``marker`` (the duration, as text), ``pids`` (the file).

Tests register the workload when they run (:func:`register`), not at import: tests that
collect every registered workload (test_campaign_commands.py) must not see it.
"""

from __future__ import annotations

from analysis.campaign import workloads

SCRIPT = r"""
setsid sleep "$1" &
echo "$!" >> "$2"
sleep "$1" &
echo "$!" >> "$2"
kill -KILL "$PPID"
wait
"""


def new_marker() -> str:
    """A sleep duration no other process uses."""
    import uuid

    return f"4000.{uuid.uuid4().int % 10**12:012d}"


class AgentKiller(workloads.Workload):
    name, framework = "test_agent_killer", "pytorch"
    precisions = ("fp32",)

    def commands(self, ctx):
        return [["sh", "-c", SCRIPT, "sh", str(ctx.opt("marker")), str(ctx.opt("pids"))]
                for _ in range(ctx.case.num_nodes)]


def register() -> None:
    workloads.register(AgentKiller)
