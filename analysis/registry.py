"""A registry of classes by name whose modules are discovered in one package.

Used for the log families (`analysis.parsers`), the launch backends
(`analysis.campaign.backends`), the workload templates (`analysis.campaign.workloads`) and
the per-run throughput methods (`analysis.stats.methods`): adding one means adding one
module whose class, named as its module, is decorated with the registry's `register`. The
report's sections (`analysis.report.sections`) use it too, with a function per notebook cell,
so several names per module. Modules named `base` or starting with `_` are helpers and are
not imported as members.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Generic, TypeVar

from analysis.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, package: str, path) -> None:
        self.kind, self.package, self.path = kind, package, path
        self._classes: dict[str, type[T]] = {}
        self._loaded = False

    def register(self, cls: type[T]) -> type[T]:
        """Class decorator: make `cls` available under `cls.name`."""
        name = cls.name  # type: ignore[attr-defined]
        if name in self._classes and self._classes[name] is not cls:
            raise ValueError(f"{self.kind} {name!r} registered twice")
        self._classes[name] = cls
        return cls

    def _load_all(self) -> None:
        if self._loaded:
            return
        for mod in pkgutil.iter_modules(self.path):
            if mod.name != "base" and not mod.name.startswith("_"):
                importlib.import_module(f"{self.package}.{mod.name}")
        self._loaded = True

    def module_names(self) -> list[str]:
        """The members' names without importing them, for a registry whose members each
        register under the name of their module (all but the report's sections:
        tests/test_registries.py checks it), so listing the package is enough
        (``dlperf summarize --help`` does not load every log family)."""
        return sorted(m.name for m in pkgutil.iter_modules(self.path)
                      if m.name != "base" and not m.name.startswith("_"))

    def classes(self) -> list[type[T]]:
        self._load_all()
        return list(self._classes.values())

    def names(self) -> list[str]:
        self._load_all()
        return sorted(self._classes)

    def get(self, name: str) -> type[T]:
        """The class registered as `name`; UnknownNameError lists the valid names. Only
        the module of that name is imported when it registers it (a warm `summarize` of one
        family's logs need not import the other families)."""
        if name not in self._classes and not self._loaded and name.isidentifier() \
                and name in self.module_names():
            importlib.import_module(f"{self.package}.{name}")
        if name not in self._classes:
            self._load_all()
        try:
            return self._classes[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, list(self._classes)) from None
