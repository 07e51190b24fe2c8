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

__all__ = ["Campaign", "load_spec", "spec_from_dict", "run_campaign"]


def load_spec(path, overrides=None):
    from analysis.campaign.spec import load

    return load(path, overrides)


def spec_from_dict(raw):
    from analysis.campaign.spec import from_dict

    return from_dict(raw)


def __getattr__(name):
    if name in ("Campaign", "run_campaign"):
        from analysis.campaign import runner

        return getattr(runner, name)
    raise AttributeError(name)
