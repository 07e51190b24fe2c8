"""Workload templates: what each node runs for one run of a case.

A template turns a :class:`LaunchContext` (the run, its hosts, master address and port, device)
into one argument list per node (``None`` for a node that a head-node launcher such as
``mpirun`` reaches by itself). Templates never build shell strings.

Launch styles:
- ``per_node`` — the same launcher on every node with its node rank and the master address
  (torchrun, NVIDIA DLE ``multiproc.py``, OneFlow ``--node_ips``).
- ``head`` — one ``mpirun``/``horovodrun`` on node 0 with a host list.

Registry: one module per template (a :class:`Workload` subclass decorated with
:func:`register`, named after its module), looked up by name (``names()``, ``get(name)``);
adding a workload means adding one module. Helpers (the launch context, the template base
class, shared argument lists, the container wrapper) live in :mod:`._template`.
"""

from __future__ import annotations

from analysis.campaign.workloads._template import LaunchContext, Workload, wrap_container
from analysis.registry import Registry

__all__ = ["LaunchContext", "Workload", "get", "names", "register", "wrap_container"]

_registry: Registry[Workload] = Registry("workload", __name__, __path__)
register = _registry.register
names = _registry.names


def get(name: str) -> Workload:
    """A template instance of the workload registered as `name` (UnknownNameError lists the
    valid names)."""
    return _registry.get(name)()
