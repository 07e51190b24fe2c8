"""Registry of launch backends: one module per backend (a :class:`Backend` subclass decorated
with :func:`register`), looked up by name. Adding a backend means adding one module."""

from __future__ import annotations

import importlib
import pkgutil

from analysis.campaign.backends.base import Backend
from analysis.errors import UnknownNameError

_REGISTRY: dict[str, type[Backend]] = {}
_loaded = False


def register(cls: type[Backend]) -> type[Backend]:
    """Class decorator: make `cls` available under `cls.name`."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"backend {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    global _loaded
    if not _loaded:
        for mod in pkgutil.iter_modules(__path__):
            if mod.name != "base" and not mod.name.startswith("_"):
                importlib.import_module(f"{__name__}.{mod.name}")
        _loaded = True


def names() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def get(name: str) -> type[Backend]:
    """The backend class registered as `name`; UnknownNameError lists the valid names."""
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError("backend", name, list(_REGISTRY)) from None
