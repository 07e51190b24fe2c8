"""Spec validation, matrix expansion, run ids and paths, path-escape rejection (fast)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from analysis.campaign.runner import Campaign
from analysis.campaign.spec import SpecError, from_dict, load

SMOKE = """
name: smoke
workload: builtin
model: resnet50
precisions: [fp32]
batch_sizes: [4]
devices: [1n1g, 1n2g]
repeats: 2
iterations: 30
backend: local
"""


def loads(text: str):
    """The spec of YAML `text`, read from a file as `dlperf run` reads it."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spec.yaml"
        path.write_text(text, encoding="utf-8")
        return load(path)


def base(**kw):
    raw = {"name": "t", "workload": "builtin", "precisions": ["fp32"], "batch_sizes": [4],
           "devices": ["1n1g"], "iterations": 30}
    raw.update(kw)
    return raw


def test_minimal_spec_from_issue_expands_to_cases_and_runs(tmp_path):
    spec = loads(SMOKE)
    assert [c.config for c in spec.cases] == ["1n1g", "1n2g"]
    runs = spec.runs()
    assert [r.run_id for r in runs] == [
        "1n1g/resnet50_b4_fp32_1", "1n1g/resnet50_b4_fp32_2",
        "1n2g/resnet50_b4_fp32_1", "1n2g/resnet50_b4_fp32_2"]
    assert runs[2].log_path(tmp_path) == tmp_path / "1n2g" / "resnet50_b4_fp32_1.log"
    assert runs[2].log_path(tmp_path, 1) == tmp_path / "1n2g" / "resnet50_b4_fp32_1.node1.log"
    assert runs[0].path(tmp_path, ".env.json", node=0).name == "resnet50_b4_fp32_1.node0.env.json"
    assert spec.resolve_out_dir().parts[-3:] == ("data", "raw_logs", "smoke")


def test_defaults_and_matrix_product():
    spec = from_dict(base(precisions=["amp", "fp16", "fp32"], batch_sizes=[128, 256],
                          devices=["1n1g", "1n4g"]))
    assert spec.repeats == 5 and spec.retries == 1 and spec.timeout == 3600
    assert len(spec.cases) == 2 * 2 * 2  # fp16 is an alias of amp: one case
    assert [c.precision for c in spec.cases[:4]] == ["amp", "amp", "fp32", "fp32"]
    assert len(spec.runs()) == 8 * 5
    dup = {"devices": "1n1g", "batch_size": 4}
    with pytest.raises(SpecError, match="share the id '1n1g/resnet50_b4_fp32_1'"):
        from_dict(base(cases=[dup, dup], precisions=None))


@pytest.mark.parametrize("key, value, words", [
    ("workload", "tensorflow9", ["'workload'", "builtin", "dle_pytorch_rn50", "oneflow_gpt"]),
    ("devices", ["8g"], ["'devices[0]'", "<N>n<G>g"]),
    ("devices", ["0n1g"], ["'devices[0]'", "1 <= N <= 4096"]),
    ("precisions", ["fp64"], ["'precisions[0]'", "fp32, amp, bf16, tf32"]),
    ("batch_sizes", [0], ["'batch_sizes[0]'", "greater than or equal to 1"]),
    ("repeats", "five", ["'repeats'", "integer"]),
    ("backend", "k8s", ["'backend'", "'local', 'ssh' or 'slurm'"]),
    ("timeout", "soon", ["'timeout'", "'10m'"]),
    ("device", "tpu", ["'device'", "'auto', 'cuda' or 'cpu'"]),
    ("name", "../evil", ["'name'", "no '/'"]),
    ("model", "a/b", ["'model'", "no '/'"]),
    ("env", {"BAD NAME": 1}, ["env.BAD NAME", "variable name"]),
    ("env", {"X": "a\nb"}, ["env.X", "without newlines"]),
    ("hosts", ["bad host!"], ["hosts[0]", "host"]),
    ("master_port", "x", ["spec key 'master_port':", "'auto' or a port"]),
    ("retry_failed", "yes", ["spec key 'retry_failed':", "boolean"]),
])
def test_errors_name_key_value_and_allowed(key, value, words):
    with pytest.raises(SpecError) as err:
        from_dict(base(**{key: value}))
    for w in words:
        assert w in str(err.value)


def test_unknown_and_missing_keys():
    with pytest.raises(SpecError, match="unknown spec key 'batchsize'.*valid keys"):
        from_dict(base(batchsize=[1]))
    raw = base()
    del raw["devices"]
    with pytest.raises(SpecError, match="'devices' is required"):
        from_dict(raw)
    with pytest.raises(SpecError, match="needs at least 2 hosts"):
        from_dict(base(backend="ssh", devices=["2n1g"], hosts=["a"]))
    with pytest.raises(SpecError, match="precision 'tf32' is not supported by workload 'builtin'"):
        from_dict(base(precisions=["tf32"]))
    with pytest.raises(SpecError, match="'warmup'.*fewer than iterations"):
        from_dict(base(warmup=30))


def test_secret_values_are_not_echoed_in_errors():
    with pytest.raises(SpecError) as err:
        from_dict(base(env={"API_TOKEN": "line1\nline2"}))
    assert "line1" not in str(err.value) and "hidden" in str(err.value)


@pytest.mark.parametrize("name", ["..", "../x", "a/../../b", "/abs", ".hidden", "-rf", "a b",
                                  "x" * 200])
def test_case_names_that_would_escape_are_rejected(name):
    with pytest.raises(SpecError, match="cases\\[0\\].name"):
        from_dict(base(cases=[{"devices": "1n1g", "batch_size": 4, "name": name}],
                       precisions=None))


def test_explicit_cases_and_named_stems(tmp_path):
    spec = from_dict({"name": "c", "workload": "builtin", "repeats": 1, "iterations": 10,
                      "cases": [{"devices": "1n1g", "precision": "amp", "batch_size": 256},
                                {"devices": "2n2g", "precision": "fp32", "batch_size": 128,
                                 "name": "rn50_custom", "args": ["--compile"]}]})
    ids = [r.run_id for r in spec.runs()]
    assert ids == ["1n1g/resnet50_b256_amp_1", "2n2g/rn50_custom_1"]
    assert spec.cases[1].args == ("--compile",)
    c = Campaign(spec, out_dir=tmp_path)
    assert list(c.plan()["state"]) == ["pending", "pending"]


def test_gpt_cases_need_consistent_parallel_sizes():
    case = {"devices": "1n8g", "precision": "amp", "batch_size": 8,
            "params": {"mp": 4, "pp": 1, "global_batch_size": 16, "seq_length": 2048,
                       "num_layers": 16, "hidden_size": 1536, "num_heads": 16}}
    spec = from_dict({"name": "g", "workload": "oneflow_gpt", "repeats": 1, "cases": [case]})
    assert spec.runs()[0].run_id == \
        "1n8g/pretrain_gpt_1n8d_dp2_mp4_pp1_mbz8_gbz16_s2048_l16_h1536_nh16_1"
    bad = {**case, "params": {**case["params"], "dp": 4}}
    with pytest.raises(SpecError, match="dp = 4 but 1n8g with mp 4 and pp 1 gives dp 2"):
        from_dict({"name": "g", "workload": "oneflow_gpt", "cases": [bad]})
    bad = {**case, "params": {"mp": 3, "pp": 1}}
    with pytest.raises(SpecError, match="needs case params global_batch_size"):
        from_dict({"name": "g", "workload": "oneflow_gpt", "cases": [bad]})


def test_example_specs_load():
    from pathlib import Path

    from analysis.campaign.spec import load

    examples = sorted((Path(__file__).resolve().parents[2] / "examples" / "campaigns")
                      .glob("*.yaml"))
    assert {"smoke.yaml", "rn50_4gpu.yaml"} <= {p.name for p in examples}
    for p in examples:
        assert load(p).runs()
    four = load(examples[[p.name for p in examples].index("rn50_4gpu.yaml")])
    configs = sorted({c.config for c in four.cases})
    assert configs == ["1n1g", "1n2g", "1n4g", "2n2g"]
    assert len(four.runs()) == 4 * 2 * 5


# ---- bounds: alias bombs, sizes, counts (issue 9, item 13) -----------------------------------
def alias_bomb(levels: int) -> str:
    """The classic "billion laughs": each level is 9 aliases of the one before (9**levels)."""
    lines = ["options:", '  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"  a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + f"\nname: *a{levels - 1}\nworkload: builtin\n"


def test_alias_bomb_is_refused_before_expansion_and_not_echoed():
    text = alias_bomb(7)  # 9**7 = 4.8 million "lol" once expanded
    with pytest.raises(SpecError) as err:
        loads(text)
    msg = str(err.value)
    assert "alias" in msg and len(msg) < 300 and "lol" not in msg


def test_recursive_and_deep_documents_are_refused():
    with pytest.raises(SpecError, match="refers to its own anchor"):
        loads("name: &a [*a]\nworkload: builtin\n")
    with pytest.raises(SpecError, match="nested more than"):
        loads("name: " + "[" * 200 + "]" * 200 + "\nworkload: builtin\n")


@pytest.mark.parametrize("key, value, words", [
    ("repeats", 10_000_000, ["'repeats'", "less than or equal to 1000"]),
    ("iterations", 10**12, ["'iterations'", "less than or equal to 10000000"]),
    ("batch_sizes", [2**40], ["'batch_sizes[0]'", "less than or equal to 1048576"]),
    ("devices", ["99999999999999999999n99g"], ["'devices[0]'", "N <= 4096"]),
    ("timeout", float("inf"), ["'timeout'", "at most 30 days"]),
    ("timeout", "99999999h", ["'timeout'", "at most 30 days"]),
    ("retries", 10**6, ["'retries'", "less than or equal to 100"]),
    ("batch_sizes", list(range(1, 1002)), ["'batch_sizes'", "at most 1000 items"]),
])
def test_sizes_are_bounded(key, value, words):
    with pytest.raises(SpecError) as err:
        from_dict(base(**{key: value}))
    for w in words:
        assert w in str(err.value)
    assert len(str(err.value)) < 300


def test_matrix_that_expands_to_too_many_runs_is_refused_before_expanding():
    with pytest.raises(SpecError, match="= 1000000 runs; a campaign has at most 10000"):
        from_dict(base(batch_sizes=list(range(1, 1001)),
                       devices=[f"{n}n1g" for n in range(1, 1001)], repeats=1))


def test_long_values_are_shortened_in_errors():
    with pytest.raises(SpecError) as err:
        from_dict(base(name="x" * 100_000))
    assert len(str(err.value)) < 300


# ---- one declaration per key, nested mappings checked (issue 9, item 22) ---------------------
def test_slurm_keys_are_declared_once_and_used():
    from analysis.campaign.spec_schema import KEYS, SlurmOptions

    spec = from_dict(base(backend="slurm", devices=["2n1g"],
                          slurm={"time_limit": "90m", "cpus_per_task": 4, "partition": "p"}))
    assert spec.slurm == {"time_limit": 5400.0, "cpus_per_task": 4, "partition": "p"}
    c = Campaign(spec, out_dir="/tmp/unused")
    c.backend._gpus = 0
    argv = c.backend.sbatch_argv(c.launch(c.runs[0], "cpu", port=29500), "/x.sbatch", "j")
    assert "--time=90" in argv and "--cpus-per-task=4" in argv and "--partition=p" in argv
    for name in SlurmOptions.model_fields:  # the documentation names every key that is read
        assert name in KEYS["slurm"]


@pytest.mark.parametrize("key, value, words", [
    ("slurm", {"time_limit_s": 60}, ["'slurm.time_limit_s'", "time_limit", "cpus_per_task"]),
    ("ssh", {"keyfile": "/k"}, ["'ssh.keyfile'", "key_file", "connect_timeout"]),
    ("container", {"imgae": "x"}, ["'container.imgae'", "image, mounts"]),
    ("hosts", [{"host": "h", "prot": 22}], ["'hosts[0].prot'", "host, port, user"]),
    ("slurm", {"cpus_per_task": "four"}, ["'slurm.cpus_per_task'", "integer"]),
    ("ssh", {"port": 70000}, ["'ssh.port'", "less than or equal to 65535"]),
    ("container", {"runtime": "docker"}, ["'container.image' is required"]),
    ("slurm", ["a"], ["'slurm'", "a mapping"]),
])
def test_nested_mappings_are_checked(key, value, words):
    raw = base(backend="ssh", hosts=["h1"]) if key in ("ssh", "hosts") else base()
    with pytest.raises(SpecError) as err:
        from_dict({**raw, key: value})
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("key, value", [
    ("hosts", ["admin:hunter2@h1"]),
    ("hosts", [{"host": "h1", "password": "hunter2"}]),
    ("ssh", {"password": "hunter2"}),
    ("ssh", {"passphrase": "hunter2"}),
])
def test_passwords_in_specs_are_refused(key, value):
    with pytest.raises(SpecError) as err:
        from_dict({**base(backend="ssh", hosts=["h1"]), key: value})
    assert "use SSH keys or an agent" in str(err.value) and "hunter2" not in str(err.value)


# ---- the spec file: one line, exit 2, no traceback (issue 9, items 10 and 13) ------------------
def _limited_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.parametrize("content, words", [
    (b"name: t\xff\nworkload: builtin\n", [":1:", "not UTF-8"]),
    (alias_bomb(9).encode(), ["alias"]),  # the 600-byte billion laughs
    (b"x: " + b"a" * (2 << 20), ["over 1024 KiB"]),
    (SMOKE.replace("[1n1g, 1n2g]", '["99999999999999999999n99g"]').encode(), ["'devices[0]'"]),
    (b"name: t\nworkload: [unclosed\n", [":3:", "not valid YAML"]),
    (None, ["is a directory"]),
    (b"/dev/zero", ["not a regular file"]),
    (b"/proc/self/environ", [":1:", "not valid YAML"]),
    (b"name: t\nworkload: \x00builtin\n", [":2:", "not valid YAML"]),
    (b"", ["the spec is empty"]),
    (SMOKE.replace("repeats: 2", "repeats: 2\nrepeats: 500").encode(),
     [":9:", "'repeats' appears twice", "line 8"]),
    (SMOKE.replace("backend: local", "env:\n  A: 1\n  A: 2").encode(),
     [":12:", "'A' appears twice", "line 11"]),
    (SMOKE.replace("[4]", '[4, "x"]').encode(), [":6:", "'batch_sizes[1]'", "'x'"]),
    (SMOKE.replace("backend: local", "slurm:\n  partiton: x").encode(),
     [":11:", "'slurm.partiton'"]),
])
def test_bad_spec_files_give_one_line_and_exit_2(tmp_path, content, words):
    import subprocess
    import sys
    from pathlib import Path

    if content is None:
        path = tmp_path
    elif content in (b"/dev/zero", b"/proc/self/environ"):
        path = Path(content.decode())
    else:
        path = tmp_path / "spec.yaml"
        path.write_bytes(content)
    res = subprocess.run([sys.executable, "-m", "analysis", "run", str(path), "--dry-run"],
                         capture_output=True, text=True, timeout=120,
                         preexec_fn=_limited_memory)
    assert res.returncode == 2, res.stderr[-2000:]
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert lines[0].startswith("dlperf: error: ") and lines[0].count(str(path)) == 1
    for w in words:
        assert w in lines[0]
    assert len(lines[0]) < 400


def test_archived_attempts_are_never_overwritten(tmp_path):
    """Two crashes of the same run leave two sets of leftovers, archived as attempt 0 each
    time: the second archive took the first one's name and the first crash's log was lost."""
    from analysis.campaign import records

    run = from_dict(base()).runs()[0]
    log = run.log_path(tmp_path).with_name(run.log_path(tmp_path).name + ".partial")
    log.parent.mkdir(parents=True)
    moved = []
    for text in ("first crash", "second crash"):
        log.write_text(text)
        moved += records.archive([log], tmp_path, run, 0)
    assert len(set(moved)) == 2
    assert sorted((tmp_path / m).read_text() for m in moved) == ["first crash", "second crash"]
    assert all(m.endswith(".failed") for m in moved)


@pytest.mark.parametrize("budget", ["-5", "nan", "inf", "0"])
def test_time_budget_must_be_a_positive_number(tmp_path, budget):
    """'--time-budget -5' started nothing and said nothing; 'nan' was no budget at all."""
    import subprocess
    import sys

    spec = tmp_path / "spec.yaml"
    spec.write_text(SMOKE)
    res = subprocess.run([sys.executable, "-m", "analysis", "run", str(spec), "-o",
                          str(tmp_path / "out"), f"--time-budget={budget}"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "--time-budget" in res.stderr, res.stderr[-2000:]
    assert "Traceback" not in res.stderr and not (tmp_path / "out").exists()


def test_backend_override_is_checked_like_the_spec(tmp_path):
    """`dlperf run SPEC --backend ssh` of a spec without hosts was an internal IndexError."""
    import subprocess
    import sys

    spec = tmp_path / "spec.yaml"
    spec.write_text(SMOKE)
    res = subprocess.run([sys.executable, "-m", "analysis", "run", str(spec), "--backend",
                          "ssh", "--dry-run"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "'hosts'" in lines[0] and str(spec) in lines[0], lines
