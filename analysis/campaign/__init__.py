"""Campaigns: describe a benchmark sweep once (YAML spec), launch it on a backend (local,
ssh, slurm), resume it, and land its logs in the DLPerf layout.

    from analysis import campaign
    spec = campaign.load_spec("examples/campaigns/smoke.yaml")
    c = campaign.Campaign(spec, out_dir="OUT")
    c.plan()          # one row per run
    c.run()           # status table (done / failed / pending, with reasons)

The node agent (``node.py``) is run as a file on the nodes, not through this package: it
needs only the standard library there.
"""

from __future__ import annotations

from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict as spec_from_dict
from analysis.campaign.spec import load as load_spec

__all__ = ["Campaign", "load_spec", "spec_from_dict"]
