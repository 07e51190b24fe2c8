"""Frame helpers shared by the parser tests (this folder is on sys.path under pytest)."""


def rows(result, run_id, metric, phase="train"):
    """Observations of one run and metric in one phase, in line order."""
    o = result.observations
    return o[(o["run_id"] == run_id) & (o["metric"] == metric) & (o["phase"] == phase)] \
        .sort_values("line")
