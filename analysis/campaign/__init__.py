"""Campaigns: describe a benchmark sweep once (YAML spec), launch it on a backend (local,
ssh, slurm), resume it, and land its logs in the DLPerf layout.

    from analysis import campaign
    spec = campaign.load_spec("examples/campaigns/smoke.yaml")
    c = campaign.Campaign(spec, out_dir="OUT")
    c.plan()          # one row per run
    c.run()           # status table (done / failed / pending, with reasons)

Nothing heavy is imported here: the node agent (``node.py``) runs on nodes with only the
standard library.
"""

from __future__ import annotations

import importlib

#: name -> (module of this package, its attribute), imported on first use
_EXPORTS = {"Campaign": ("runner", "Campaign"), "load_spec": ("spec", "load"),
            "spec_from_dict": ("spec", "from_dict")}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        module, attr = _EXPORTS[name]
        return getattr(importlib.import_module(f"analysis.campaign.{module}"), attr)
    raise AttributeError(name)
