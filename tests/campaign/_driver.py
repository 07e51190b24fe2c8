"""Run a campaign in its own process (with the test workload registered): argv SPEC OUT."""

import sys

import sleeper  # noqa: F401  (registers test_sleeper; this folder is sys.path[0])

from analysis.campaign.runner import Campaign, CampaignInterrupted

try:
    status = Campaign(sys.argv[1], out_dir=sys.argv[2]).run(progress=False)
except CampaignInterrupted as exc:
    print(f"INTERRUPTED {exc}", flush=True)
    sys.exit(130)
print(status[["run_id", "state", "reason"]].to_string(), flush=True)
