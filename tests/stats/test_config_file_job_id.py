"""A configuration file written per job (BigScience's launch scripts name their DeepSpeed
config ``ds_config.<SLURM_JOBID>.json``) is one configuration for every repeat, whatever its
job id; configuration files of other names (``zero2``/``zero3``, ``_a``/``_b``) still make
the repeats mixed."""

from __future__ import annotations

import pytest

from analysis.stats.case_stats import differing_keys


def _dumps(key: str, values: list[str]) -> list[dict]:
    return [{key: v, "micro_batch_size": "4", "seed": str(i)} for i, v in enumerate(values)]


@pytest.mark.parametrize("values", [
    ["ds_config.41230.json", "ds_config.41231.json", "ds_config.41232.json"],
    ["/scratch/run/ds_config-1234567.yaml", "/scratch/run/ds_config-1234590.yaml"],
])
def test_a_config_file_named_per_job_is_one_configuration(values):
    assert differing_keys(_dumps("deepspeed_config", values)) == {}


@pytest.mark.parametrize("values", [
    ["ds_config_zero2.json", "ds_config_zero3.json"],
    ["ds_config_a.json", "ds_config_b.json"],
    ["ds_config.41230.json", "ds_zero3.41231.json"],
    ["ds_config_1024.json", "ds_config_2048.json"],  # a size, not a job id
    ["/jobs/41230/ds_config.json", "/jobs/41231/ds_config_b.json"],
])
def test_other_config_files_still_differ(values):
    assert list(differing_keys(_dumps("deepspeed_config", values))) == ["deepspeed_config"]


def test_a_job_id_outside_a_configuration_key_is_compared_as_stated():
    assert list(differing_keys(_dumps("vocab", ["v.41230.json", "v.41231.json"]))) == ["vocab"]
