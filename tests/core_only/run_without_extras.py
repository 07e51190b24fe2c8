"""Run ``dlperf ARGS`` (or import modules) as on a core-only install: the optional extras'
top-level packages cannot be imported. Used by test_core_install.py in a subprocess."""

import importlib
import importlib.abc
import sys

#: top-level packages of the report, campaign and workload extras (pyproject.toml)
EXTRAS = {"matplotlib", "seaborn", "jinja2", "babel", "papermill", "nbformat", "nbclient",
          "nbconvert", "IPython", "ipykernel", "jupyter_client", "jupyterlab", "playwright",
          "tqdm", "pynvml", "torch"}


class BlockExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in EXTRAS:
            raise ModuleNotFoundError(f"No module named {name!r} (not installed)", name=name)
        return None


sys.meta_path.insert(0, BlockExtras())
if sys.argv[1] == "--import":
    for module in sys.argv[2:]:
        importlib.import_module(module)
    sys.exit(0)
from analysis.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
