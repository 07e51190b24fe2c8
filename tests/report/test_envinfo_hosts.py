"""Environment records are grouped by host = hostname + hardware fingerprint (issue 9,
item 21): a CPU box and a GPU box both named `vm` stay two hosts in a report."""

from __future__ import annotations

from analysis.env import describe
from analysis.env.folder_records import EnvInput


def gpu(i: int, uuid: str) -> dict:
    return {"index": i, "name": "NVIDIA H200", "uuid": uuid, "memory_total_mib": 143771}


GPU_BOX = {"hostname": "vm", "gpu_model": "NVIDIA H200", "gpu_count": 2,
           "gpus": [gpu(0, "GPU-a"), gpu(1, "GPU-b")], "cpu": {"model": "Xeon 8480",
                                                              "logical_cpus": 224},
           "memory": {"total_mib": 2_000_000}, "machine": "x86_64"}
CPU_BOX = {"hostname": "vm", "gpu_count": 0, "gpus": [], "cpu": {"model": "EPYC 7B13",
                                                                  "logical_cpus": 16},
           "memory": {"total_mib": 64_000}, "machine": "x86_64"}


def test_same_hostname_different_hardware_are_two_hosts():
    envs = [EnvInput("1n1g/a_1.node0.env.json", GPU_BOX),
            EnvInput("1n1g/a_2.node0.env.json", {**CPU_BOX, "captured_at": "2026"}),
            EnvInput("2n1g/b_1.node0.env.json", GPU_BOX),
            EnvInput("2n1g/b_1.node1.env.json", CPU_BOX)]
    hosts = describe.hosts(envs)
    assert [h.name for h in hosts] == ["vm (2x NVIDIA H200)", "vm (no GPU)"]
    assert [len(h.records) for h in hosts] == [2, 2]
    assert [[h.name for h in t] for t in describe.node_types(envs)] == [
        ["vm (2x NVIDIA H200)"], ["vm (no GPU)"]]
    # a run whose nodes ran on the two machines did not share one host
    assert describe.shared_host_runs(envs) == []


def test_same_hostname_and_hardware_but_other_gpus_are_two_hosts():
    twin = {**GPU_BOX, "gpus": [gpu(0, "GPU-c"), gpu(1, "GPU-d")]}
    envs = [EnvInput("a.env.json", GPU_BOX), EnvInput("b.env.json", twin)]
    assert [h.name for h in describe.hosts(envs)] == ["vm (2x NVIDIA H200 #1)",
                                                     "vm (2x NVIDIA H200 #2)"]


def test_records_of_one_machine_merge_and_keep_the_plain_name():
    later = {**GPU_BOX, "captured_at": "2026-02-01", "memory": {"total_mib": 2_000_100}}
    envs = [EnvInput("2n1g/b_1.node0.env.json", GPU_BOX),
            EnvInput("2n1g/b_1.node1.env.json", later)]
    hosts = describe.hosts(envs)
    assert [h.name for h in hosts] == ["vm"] and hosts[0].record is later
    assert describe.shared_host_runs(envs) == [("2n1g/b_1", "vm")]
