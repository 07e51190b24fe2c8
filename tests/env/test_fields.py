"""analysis.env.fields: the one declared layout of an env record, read strictly by EnvRecord
and with legacy spellings by reports and comparisons."""

from __future__ import annotations

import pytest

from analysis.env.fields import usable
from analysis.env.record import EnvRecord, EnvRecordError

#: A hand-written record of the older spellings the report still reads.
LEGACY = {"host": "n1", "gpu": {"name": "V100", "count": 8, "memory_mib": 16160,
                                "driver": "470.57"},
          "cpu_model": "Xeon", "cpu_cores": 40, "numa_nodes": 2, "memory_mib": 515000,
          "os": "Ubuntu 20.04", "python": "3.8.10", "cuda": "11.4", "cudnn": "8.2",
          "nccl": "2.10", "framework_versions": {"torch": "1.10", "apex": {"version": "0.1"}},
          "topo": "GPU0 X", "notes": {"anything": [1, 2]}}


def test_legacy_spellings_and_unknown_keys_are_used_as_they_are():
    record, problems = usable(LEGACY)
    assert problems == [] and record == LEGACY


@pytest.mark.parametrize("change, path", [
    ({"gpu": {"count": "8"}}, "gpu.count"),
    ({"framework_versions": {"torch": 1.1}}, "framework_versions.torch"),
    ({"cuda": 11.4}, "cuda"),
    ({"os": {"pretty_name": ["Ubuntu"]}}, "os.pretty_name"),
    ({"infiniband": [{"device": "mlx5_0", "ports": [{"rate": 200}]}]}, "infiniband[0].ports[0].rate"),
    ({"gpu_count": True}, "gpu_count"),
])
def test_a_wrong_type_is_named_by_its_path_and_left_out(change, path):
    record, problems = usable({**LEGACY, **change})
    assert [p.path for p in problems] == [path]
    key = path.split(".")[0].split("[")[0]
    assert record.get(key) != change[key]  # the wrong field is gone from what is used...
    assert {k: v for k, v in record.items() if k != key} == \
        {k: v for k, v in LEGACY.items() if k != key}  # ...and the rest is kept


def test_a_secret_named_field_of_a_wrong_type_is_named_without_its_value():
    _, problems = usable({"env": {"DB_PASSWORD": 12345678}})
    assert str(problems[0]) == "env.DB_PASSWORD: *** is an integer, expected a string; not used"


def test_env_record_checks_the_types_written_now_only():
    with pytest.raises(EnvRecordError, match="field 'os' is 'Ubuntu'; expected dict"):
        EnvRecord(captured_at="t", hostname="h", os="Ubuntu")
