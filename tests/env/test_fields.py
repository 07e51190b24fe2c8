"""analysis.env.record: the one declared layout of an env record, read strictly by EnvRecord
and leniently (wrong fields left out) by reports and comparisons."""

from __future__ import annotations

import pytest

from analysis.env.record import EnvRecord, EnvRecordError, usable

#: A hand-written record in the spellings ``dlperf env`` writes, with a key of its own.
HAND = {"hostname": "n1", "gpu_model": "V100", "gpu_count": 8, "gpu_memory_mib": 16160,
        "driver_version": "470.57", "cpu": {"model": "Xeon", "logical_cpus": 40},
        "os": {"pretty_name": "Ubuntu 20.04"}, "python": {"version": "3.8.10"},
        "cuda_version": "11.4", "cudnn_version": "8.2",
        "frameworks": {"torch": {"version": "1.10"}}, "notes": {"anything": [1, 2]}}


def test_a_record_and_its_unknown_keys_are_used_as_they_are():
    record, problems = usable(HAND)
    assert problems == [] and record == HAND


@pytest.mark.parametrize("change, path", [
    ({"cpu": {"logical_cpus": "8"}}, "cpu.logical_cpus"),
    ({"frameworks": {"torch": 1.1}}, "frameworks.torch"),
    ({"cuda_version": 11.4}, "cuda_version"),
    ({"os": {"pretty_name": ["Ubuntu"]}}, "os.pretty_name"),
    ({"infiniband": [{"device": "mlx5_0", "ports": [{"rate": 200}]}]}, "infiniband[0].ports[0].rate"),
    ({"gpu_count": True}, "gpu_count"),
])
def test_a_wrong_type_is_named_by_its_path_and_left_out(change, path):
    record, problems = usable({**HAND, **change})
    assert [p.path for p in problems] == [path]
    key = path.split(".")[0].split("[")[0]
    assert record.get(key) != change[key]  # the wrong field is gone from what is used...
    assert {k: v for k, v in record.items() if k != key} == \
        {k: v for k, v in HAND.items() if k != key}  # ...and the rest is kept


def test_a_secret_named_field_of_a_wrong_type_is_named_without_its_value():
    _, problems = usable({"env": {"DB_PASSWORD": 12345678}})
    assert str(problems[0]) == "env.DB_PASSWORD: *** is an integer, expected a string; not used"


def test_env_record_checks_the_types_written_now_only():
    with pytest.raises(EnvRecordError, match="field 'os' is 'Ubuntu'; expected dict"):
        EnvRecord(captured_at="t", hostname="h", os="Ubuntu")
