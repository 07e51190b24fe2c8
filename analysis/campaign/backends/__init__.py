"""Registry of launch backends: one module per backend (a :class:`Backend` subclass decorated
with :func:`register`), looked up by name. Adding a backend means adding one module."""

from __future__ import annotations

from analysis.campaign.backends._backend import (
    NODE_AGENT,
    Backend,
    BudgetSpent,
    Launch,
    NodeLaunch,
    NodeOutcome,
    Outcome,
)
from analysis.registry import Registry

_registry: Registry[Backend] = Registry("backend", __name__, __path__)
__all__ = ["NODE_AGENT", "Backend", "BudgetSpent", "Launch", "NodeLaunch",
           "NodeOutcome", "Outcome", "get", "names", "register"]
register = _registry.register
names = _registry.names
get = _registry.get
