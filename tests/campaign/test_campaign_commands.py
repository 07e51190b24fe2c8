"""Dry-run command generation for every workload template and backend, quoting of hostile
values, sbatch scripts, secret redaction (fast: nothing is launched)."""

from __future__ import annotations

import io
import shlex
import subprocess

import pytest

from analysis.campaign import workloads
from analysis.campaign.backends.slurm import fill_placeholders, render_shell
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict
from analysis.redact import redact_argv

HOSTILE = "a b; rm -rf / $(touch /tmp/pwned) `id` 'q' \"d\""
GPT_CASE = {"devices": "2n8g", "precision": "amp", "batch_size": 8,
            "params": {"mp": 8, "pp": 1, "global_batch_size": 16, "seq_length": 2048,
                       "num_layers": 24, "hidden_size": 2304, "num_heads": 24}}


def spec_for(workload, backend="local", devices="2n8g", **kw):
    raw = {"name": "t", "workload": workload, "repeats": 1, "iterations": 120,
           "backend": backend, "device": "cuda", "master_port": 29511,
           "hosts": ["node-a", "root@node-b:2200"], "env": {"HF_TOKEN": "tok-123", "X": HOSTILE}}
    if workloads.get(workload).warmup_option:  # the others refuse a warm-up they cannot pass
        raw["warmup"] = 20
    if workload == "oneflow_gpt":
        raw["cases"] = [GPT_CASE]
    elif workload == "gpt":  # the suite's own GPT: same case params, bf16 instead of amp
        raw["cases"] = [dict(GPT_CASE, precision="bf16")]
    else:
        raw.update(precisions=["amp"], batch_sizes=[256], devices=[devices])
    raw.update(kw)
    return from_dict(raw)


def launch_of(spec, tmp_path, port=29511):
    c = Campaign(spec, out_dir=tmp_path)
    return c, c.launch(c.runs[0], "cuda", port=port)


def test_builtin_per_node_torchrun(tmp_path):
    _, launch = launch_of(spec_for("builtin", workload_args=[HOSTILE]), tmp_path)
    a0, a1 = (n.argv for n in launch.nodes)
    assert a0[1:3] == ["-m", "torch.distributed.run"]
    assert a0[a0.index("--node_rank") + 1] == "0" and a1[a1.index("--node_rank") + 1] == "1"
    assert a0[a0.index("--master_addr") + 1] == "127.0.0.1"
    assert a0[a0.index("--master_port") + 1] == "29511"
    assert a0[a0.index("--nproc_per_node") + 1] == "8"
    i = a0.index("workloads.resnet")
    assert a0[i + 1:i + 15] == ["--arch", "resnet50", "--precision", "amp", "--batch-size", "256",
                                "--iterations", "120", "--print-freq", "1", "--device", "cuda",
                                "--dist-backend", "nccl"]
    assert "--warmup-iterations" in a0 and a0[-1] == HOSTILE  # one word, untouched
    assert "--image-size" not in a0


def test_builtin_on_cpu_uses_gloo_and_reduced_size(tmp_path):
    spec = spec_for("builtin", devices="1n2g", device="auto")
    c = Campaign(spec, out_dir=tmp_path)
    argv = c.launch(c.runs[0], "cpu").nodes[0].argv
    assert "--standalone" in argv
    assert argv[argv.index("--device") + 1] == "cpu"
    assert argv[argv.index("--dist-backend") + 1] == "gloo"
    assert argv[argv.index("--image-size") + 1] == "32" and argv[argv.index("--width") + 1] == "8"


def test_dle_pytorch_multiproc(tmp_path):
    _, launch = launch_of(spec_for("dle_pytorch_rn50", options={"code_dir": "/ws/rn50",
                                                                 "data_dir": HOSTILE}), tmp_path)
    a1 = launch.nodes[1].argv
    assert a1[:2] == ["python", "/ws/rn50/multiproc.py"]
    assert a1[a1.index("--node_rank") + 1] == "1" and "--master_port=29511" in a1
    assert "/ws/rn50/main.py" in a1 and "--training-only" in a1
    assert a1[a1.index("--prof") + 1] == "120" and a1[a1.index("-b") + 1] == "256"
    assert a1[a1.index("--amp"):a1.index("--amp") + 3] == ["--amp", "--static-loss-scale", "128"]
    assert a1[-1] == HOSTILE


def test_dle_tensorflow_horovod_head_node_only(tmp_path):
    _, launch = launch_of(spec_for("dle_tf_rn50", backend="ssh"), tmp_path)
    head, other = launch.nodes[0].argv, launch.nodes[1].argv
    assert other is None
    assert head[:4] == ["mpirun", "--allow-run-as-root", "-np", "16"]
    assert head[head.index("-H") + 1] == "node-a:8,node-b:8"
    assert "--mode=train" in head and "--batch_size=256" in head and "--amp" in head
    assert ["-x", "HF_TOKEN"] == head[head.index("HF_TOKEN") - 1:head.index("HF_TOKEN") + 1]
    assert "tok-123" not in " ".join(head)
    _, launch = launch_of(spec_for("dle_tf_rn50", backend="ssh",
                                   options={"launcher": "horovodrun"}), tmp_path)
    assert launch.nodes[0].argv[:5] == ["horovodrun", "-np", "16", "-H", "node-a:8,node-b:8"]


def test_oneflow_cnn_node_ips(tmp_path):
    _, launch = launch_of(spec_for("oneflow_cnn", backend="ssh", options={"data_dir": "/d"}),
                          tmp_path)
    a0, a1 = (n.argv for n in launch.nodes)
    assert a0 == a1
    assert a0[1] == "cnns/of_cnn_train_val.py"
    assert "--node_ips=node-a,node-b" in a0 and "--num_nodes=2" in a0
    assert "--gpu_num_per_node=8" in a0 and "--batch_size_per_device=256" in a0
    assert f"--num_examples={2 * 8 * 256 * 120}" in a0 and "--use_fp16" in a0
    assert "--train_data_dir=/d/train" in a0


def test_oneflow_gpt(tmp_path):
    c, launch = launch_of(spec_for("oneflow_gpt", backend="ssh"), tmp_path)
    a0 = launch.nodes[0].argv
    assert a0[:3] == ["python3", "-m", "oneflow_gpt.training"]
    for flag, value in (("--tensor-model-parallel-size", "8"), ("--num-nodes", "2"),
                        ("--node-ips", "node-a,node-b"), ("--micro-batch-size", "8"),
                        ("--global-batch-size", "16"), ("--num-layers", "24")):
        assert a0[a0.index(flag) + 1] == value
    assert launch.nodes[0].log.name == \
        "pretrain_gpt_2n8d_dp2_mp8_pp1_mbz8_gbz16_s2048_l24_h2304_nh24_1.log.partial"


@pytest.mark.parametrize("workload", [w for w in workloads.names() if w != "test_sleeper"])
@pytest.mark.parametrize("backend", ["local", "ssh", "slurm"])
def test_dry_run_prints_every_node_and_hides_secrets(workload, backend, tmp_path):
    spec = spec_for(workload, backend=backend)
    buf = io.StringIO()
    lines = Campaign(spec, out_dir=tmp_path / "out").dry_run(file=buf)
    text = buf.getvalue()
    assert "node 0 @" in text and "node 1 @" in text
    assert "tok-123" not in text and "HF_TOKEN=***" in text
    assert shlex.quote(f"X={HOSTILE}") in text  # shown quoted
    assert not (tmp_path / "out").exists()  # a dry run writes nothing
    assert len(lines) > 2


@pytest.mark.parametrize("backend", ["ssh", "slurm"])
def test_dry_run_hides_secrets_in_workload_arguments(backend, tmp_path):
    """The nodes' lines were redacted, but the ssh remote command and the sbatch script
    printed below them (and kept in 00_launch.ipynb) showed the arguments in clear."""
    secret_args = ["--data-url", "https://u:S3CRET-url@h/x", "--hf-token",
                   "hf_S3CRETabcdefghijklmnopqrstu", "--password", "S3CRET-pw"]
    spec = spec_for("builtin", backend=backend, workload_args=secret_args)
    buf = io.StringIO()
    Campaign(spec, out_dir=tmp_path / "out").dry_run(file=buf)
    text = buf.getvalue()
    assert "S3CRET" not in text, [x for x in text.splitlines() if "S3CRET" in x][0][-300:]
    assert "https://u:***@h/x" in text


def test_ssh_remote_command_round_trips_hostile_words(tmp_path):
    spec = spec_for("builtin", backend="ssh", workload_args=[HOSTILE, "--x=$HOME"])
    c, launch = launch_of(spec, tmp_path)
    node = launch.nodes[1]
    line = c.backend.remote_command(launch, node)
    words = shlex.split(line)
    assert words[-2:] == [HOSTILE, "--x=$HOME"]
    assert words[words.index("--") + 1:] == node.argv
    assert "--env-stdin" in words and "--watch-stdin" in words
    assert "tok-123" not in line  # the environment goes over stdin
    # and a real shell gives back exactly the same words
    out = subprocess.run(["sh", "-c", "printf '%s\\n' " + line], capture_output=True, text=True,
                         check=True).stdout.split("\n")[:-1]
    assert out == words


def test_render_shell_expands_only_placeholders():
    argv = ["torchrun", "--master_addr", "{{DLPERF_MASTER_ADDR}}",
            "--node_ips={{DLPERF_MASTER_ADDR}},{{DLPERF_HOST_1}}", HOSTILE, "", "$(id)"]
    line = render_shell(argv)
    script = f'DLPERF_MASTER_ADDR="h 0"; DLPERF_HOST_1=h1; printf "%s\\n" {line}'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                         check=True).stdout.split("\n")[:-1]
    assert out == ["torchrun", "--master_addr", "h 0", "--node_ips=h 0,h1", HOSTILE, "", "$(id)"]


def test_render_shell_leaves_user_braces_alone():
    """Only the suite's own DLPERF_ placeholders expand: a user argument '{{HOME}}' or
    '{{UNSET}}' (fatal under the batch script's `set -u`) reaches the workload as written."""
    argv = ["x", "--tag={{HOME}}", "{{UNSET_NAME}}", "{{DLPERF_MASTER_ADDR}}"]
    script = f'set -u; DLPERF_MASTER_ADDR=h0; printf "%s\\n" {render_shell(argv)}'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                         check=True).stdout.split("\n")[:-1]
    assert out == ["x", "--tag={{HOME}}", "{{UNSET_NAME}}", "h0"]


def test_sbatch_script_and_arguments(tmp_path):
    spec = spec_for("builtin", backend="slurm",
                    slurm={"partition": "gpu", "account": "acct; rm -rf /",
                           "extra_args": ["--exclusive"]})
    c, launch = launch_of(spec, tmp_path)
    c.backend._gpus = 8  # the partition's GPUs, as sinfo would report them
    argv = c.backend.sbatch_argv(launch, "/x/job.sbatch", "dlperf-t")
    assert argv[0] == "sbatch" and argv[-1] == "/x/job.sbatch"
    for word in ("--nodes=2", "--ntasks-per-node=1", "--gpus-per-node=8", "--partition=gpu",
                 "--account=acct; rm -rf /", "--exclusive", "--export=ALL", "--parsable"):
        assert word in argv
    assert any(w.startswith("--time=") for w in argv)
    script = c.backend.script(launch)
    assert script.startswith("#!/bin/bash\n")
    assert 'scontrol show hostnames "$SLURM_JOB_NODELIST"' in script
    steps = [x for x in script.splitlines() if x.startswith("srun ")]
    assert len(steps) == 2 and "--relative=0" in steps[0] and "--relative=1" in steps[1]
    assert "--node_rank 1" in steps[1] and '--master_addr "${DLPERF_MASTER_ADDR}"' in steps[1]
    assert "tok-123" not in script and HOSTILE not in script.replace("'\"'\"'", "'")
    subprocess.run(["bash", "-n", "-c", script], check=True)  # valid bash
    c.backend._gpus = 0
    assert not any(w.startswith("--gpus-per-node") for w in
                   c.backend.sbatch_argv(launch, "/x/job.sbatch", "dlperf-t"))


def test_local_multi_node_gets_disjoint_gpu_sets(tmp_path):
    spec = spec_for("builtin", devices="2n2g", gpus_per_host=4)
    c = Campaign(spec, out_dir=tmp_path)
    c.backend._gpu_ids = lambda: ["0", "1", "2", "3"]  # a 4-GPU host
    c.backend._gpus = 4
    launch = c.launch(c.runs[0], "cuda")
    assert [n.env["CUDA_VISIBLE_DEVICES"] for n in launch.nodes] == ["0,1", "2,3"]
    assert launch.nodes[0].argv[launch.nodes[0].argv.index("--nnodes") + 1] == "2"
    assert c.backend.check(c.runs[0].case) == ""
    big = from_dict({**spec.raw, "devices": ["1n8g"]})
    assert "needs 8 GPUs" in c.backend.check(big.cases[0])


def test_container_wrapping_passes_env_by_name(tmp_path):
    spec = spec_for("builtin", container={"image": "nvcr.io/nvidia/pytorch:24.01-py3",
                                          "mounts": ["/data:/data"]})
    _, launch = launch_of(spec, tmp_path)
    argv = launch.nodes[0].argv
    assert argv[:3] == ["docker", "run", "--rm"]
    assert ["-e", "HF_TOKEN"] == argv[argv.index("HF_TOKEN") - 1:argv.index("HF_TOKEN") + 1]
    assert "--gpus" in argv and "nvcr.io/nvidia/pytorch:24.01-py3" in argv
    assert "tok-123" not in argv


def test_redaction_helpers():
    env = {"GITHUB_TOKEN": "ghp_x", "MY_PASSWORD": "pw", "PATH": "/bin"}
    assert redact_argv(["--token=ghp_x", "pw", "/bin"], env) == ["--token=***", "***", "/bin"]


def test_each_workload_is_a_module_of_its_name():
    """Adding a workload template is adding one module (the one Registry, as log families)."""
    import analysis.campaign.workloads as package

    members = package._registry.module_names()
    assert {"builtin", "gpt", "oneflow_gpt", "dle_tf_rn50"} <= set(members)
    assert set(members) <= set(workloads.names())
    for name in members:
        assert type(workloads.get(name)).__module__ == f"analysis.campaign.workloads.{name}"


def test_fill_placeholders_names_what_the_script_expanded():
    """Records say what ran: the suite's host placeholders become the job's hosts; user braces
    stay; a placeholder without a value stays or gets the wording given."""
    values = {"DLPERF_MASTER_ADDR": "n0", "DLPERF_HOST_1": "n1"}
    word = "--node_ips={{DLPERF_MASTER_ADDR}},{{DLPERF_HOST_1}},{{HOME}}"
    assert fill_placeholders(word, values) == "--node_ips=n0,n1,{{HOME}}"
    assert fill_placeholders("{{DLPERF_HOST_2}}", values) == "{{DLPERF_HOST_2}}"
    assert fill_placeholders("{{DLPERF_HOST_2}}", {}, "<{name}?>") == "<DLPERF_HOST_2?>"
