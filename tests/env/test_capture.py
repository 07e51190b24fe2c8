"""`capture()` and `EnvRecord` on this GPU-less host, and with a fake `nvidia-smi` on PATH.

No GPU exists on CI machines, so the only stand-in used is a real executable named
`nvidia-smi` written into tmp_path and put first on PATH; it prints what nvidia-smi prints.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from analysis.env import describe
from analysis.env.capture import capture, select_env
from analysis.env.probes import parse_gpu_csv, parse_lscpu, probe_infiniband
from analysis.env.record import EnvRecord, EnvRecordError
from analysis.env.topo_matrix import parse_topology
from analysis.i18n import Translator
from analysis.redact import REDACTED, redact_env

ROOT = Path(__file__).resolve().parents[2]
DLPERF = Path(sys.executable).parent / "dlperf"  # the running environment's console script
TOPO = ROOT / "tests" / "data" / "topology" / "h200_x4" / "topo.txt"
GPU_CSV = "".join(
    f"{i}, NVIDIA H200, GPU-0000000{i}-aaaa-bbbb-cccc-dddddddddddd, 00000000:{0x18 + i:02X}:00.0, "
    f"143771, 560.35.03, 700.00, 1980, 9.0\n" for i in range(4))
BANNER = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 560.35.03              Driver Version: 560.35.03      CUDA Version: 12.6     |
|-----------------------------------------+------------------------+----------------------+
"""


def write_exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_nvidia_smi(bindir: Path, topo: str | None = None, csv: str = GPU_CSV,
                    old_driver: bool = False) -> Path:
    """A shell script answering the nvidia-smi calls capture() makes."""
    (bindir / "topo.txt").parent.mkdir(parents=True, exist_ok=True)
    with open(bindir / "topo.txt", "w", newline="") as fh:
        fh.write(TOPO.read_text() if topo is None else topo)
    (bindir / "gpus.csv").write_text(csv)
    (bindir / "banner.txt").write_text(BANNER)
    reject = ('*compute_cap*) echo \'Field "compute_cap" is not a valid field to query.\'; '
              'exit 2 ;;') if old_driver else ""
    return write_exe(bindir / "nvidia-smi", f"""#!/bin/sh
here=$(dirname "$0")
case "$*" in
  "topo -m") cat "$here/topo.txt" ;;
  {reject}
  --query-gpu=*) cut -d, -f1-$(echo "$1" | tr -cd , | wc -c | xargs expr 1 +) "$here/gpus.csv" ;;
  "") cat "$here/banner.txt" ;;
  *) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 2 ;;
esac
""")


def on_path(monkeypatch, bindir: Path) -> None:
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")


def dlperf(*args: str, env: dict | None = None, stdin: str | None = None):
    return subprocess.run([str(DLPERF), *args], capture_output=True, text=True, timeout=120,
                          env=env, input=stdin)


# ---- this host, as it is -------------------------------------------------------------------
def test_capture_without_any_tool_records_what_is_absent(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing can be found: no nvidia-smi, no lscpu
    rec = capture(timeout=20)
    assert rec.absent["nvidia-smi"] == "not found on PATH"
    assert rec.absent["lscpu"] == "not found on PATH"
    assert rec.absent["topology"] == "nvidia-smi topo -m not found on PATH"
    assert rec.topology is None and rec.topology_text is None
    assert rec.cpu == {} and "cpu" not in rec.sources  # one probe per fact: lscpu
    assert rec.python["executable"] == sys.executable
    # listed from package metadata and torch's version.py, without importing torch
    assert rec.frameworks["torch"]["version"] == metadata.version("torch")
    assert len(rec.frameworks["torch"]["git_version"]) == 40


@pytest.mark.no_gpu
def test_capture_on_this_gpu_less_host():
    rec = capture(import_frameworks=True)
    assert rec.absent["nvidia-smi"] == "not found on PATH"
    assert rec.gpu_count == 0 and rec.gpus == [] and rec.gpu_model is None
    assert rec.cpu["logical_cpus"] == os.cpu_count() and rec.cpu["model"]
    assert rec.memory["total_mib"] > 0 and rec.os["pretty_name"] and rec.kernel == os.uname().release
    assert rec.frameworks["torch"]["version"] == metadata.version("torch")  # the workload extra
    assert not [k for k in rec.absent if k.endswith(" import")]  # torch imported fine
    assert rec.capture_seconds < 20  # ~2-5 s here (torch import); ~0.3 s without imports
    assert EnvRecord(**json.loads(rec.to_json())).to_dict() == rec.to_dict()


def _broken_framework(site: Path, body: str) -> None:
    """An installed package named oneflow whose import fails or hangs."""
    (site / "oneflow").mkdir(parents=True)
    (site / "oneflow" / "__init__.py").write_text(textwrap.dedent(body))
    (site / "oneflow-0.9.0.dist-info").mkdir()
    (site / "oneflow-0.9.0.dist-info" / "METADATA").write_text("Name: oneflow\nVersion: 0.9.0\n")


@pytest.mark.parametrize("body, reason", [
    ("raise ImportError('libcudart.so.11.0: cannot open shared object file')",
     "ImportError: libcudart.so.11.0: cannot open shared object file"),
    ("import time\ntime.sleep(60)\n", "import timed out after 3 s"),
])
def test_broken_or_hanging_framework_import_is_recorded(monkeypatch, tmp_path, body, reason):
    _broken_framework(tmp_path, body)
    monkeypatch.syspath_prepend(str(tmp_path))  # for the metadata scan in this process
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # for the child that imports it
    rec = capture(timeout=3, import_frameworks=True)
    assert rec.frameworks["oneflow"] == {"version": "0.9.0"}
    assert rec.absent["oneflow import"] == reason
    assert rec.capture_seconds < 15


# ---- a fake nvidia-smi ---------------------------------------------------------------------
def test_fake_nvidia_smi_is_picked_up_and_parsed(monkeypatch, tmp_path):
    on_path(monkeypatch, fake_nvidia_smi(tmp_path / "bin").parent)
    rec = capture(timeout=20)
    assert "nvidia-smi" not in rec.absent and rec.sources["gpus"] == "nvidia-smi"
    assert (rec.gpu_count, rec.gpu_model, rec.gpu_memory_mib) == (4, "NVIDIA H200", 143771)
    assert rec.driver_version == "560.35.03"
    assert rec.gpus[3] == {"index": 3, "name": "NVIDIA H200",
                           "uuid": "GPU-00000003-aaaa-bbbb-cccc-dddddddddddd",
                           "pci_bus_id": "00000000:1B:00.0", "memory_total_mib": 143771,
                           "driver_version": "560.35.03", "power_limit_w": 700.0,
                           "max_sm_clock_mhz": 1980, "compute_cap": "9.0"}
    assert rec.cuda_version == "12.6" and rec.sources["cuda_version"] == "nvidia-smi"
    assert rec.topology_text == TOPO.read_text()
    topo = rec.topology
    assert topo["devices"] == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1"]
    assert topo["matrix"]["GPU0"]["GPU3"] == "NV18" and topo["matrix"]["GPU3"]["NIC1"] == "PXB"
    assert rec.topology["affinity"]["GPU2"]["CPU Affinity"] == "48-95,144-191"
    assert (rec.gpu_model, rec.gpu_count, rec.gpu_memory_mib, rec.driver_version) == (
        "NVIDIA H200", 4, 143771, "560.35.03")


def test_old_driver_without_compute_cap(monkeypatch, tmp_path):
    on_path(monkeypatch, fake_nvidia_smi(tmp_path / "bin", old_driver=True).parent)
    rec = capture(timeout=20)
    assert rec.gpu_count == 4 and rec.gpus[0]["compute_cap"] is None
    assert rec.gpus[0]["max_sm_clock_mhz"] == 1980


def test_nvidia_smi_failure_and_bad_topology_are_recorded(monkeypatch, tmp_path):
    bindir = tmp_path / "bin"
    fake_nvidia_smi(bindir, topo="Failed to initialize NVML: Driver/library version mismatch\n")
    on_path(monkeypatch, bindir)
    rec = capture(timeout=20)
    assert rec.topology is None
    assert rec.topology_text.startswith("Failed to initialize NVML")
    assert rec.absent["topology"].startswith("unparseable nvidia-smi topo -m output: no ")
    write_exe(bindir / "nvidia-smi", "#!/bin/sh\necho 'No devices were found'\nexit 6\n")
    rec = capture(timeout=20)
    assert rec.absent["nvidia-smi"] == "exited with code 6: No devices were found"
    assert rec.gpu_count == 0


def test_hanging_nvidia_smi_times_out(monkeypatch, tmp_path):
    on_path(monkeypatch, write_exe(tmp_path / "bin" / "nvidia-smi", "#!/bin/sh\nsleep 60\n").parent)
    rec = capture(timeout=1)
    assert rec.absent["topology"] == "nvidia-smi topo -m timed out after 1 s"
    assert rec.absent["nvidia-smi"] == "timed out after 1 s"
    assert rec.capture_seconds < 10


def test_dlperf_env_subprocess_with_fake_nvidia_smi(tmp_path):
    bindir = fake_nvidia_smi(tmp_path / "bin").parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    out = tmp_path / "run" / "env.json"
    res = dlperf("env", "-o", str(out), env=env)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"wrote {out} (4 GPU(s); absent: ")
    data = json.loads(out.read_text())
    assert data["gpu_count"] == 4 and data["topology"]["devices"][-1] == "NIC1"
    assert EnvRecord(**data).topology["matrix"]["GPU1"]["NIC0"] == "PXB"


def test_python_m_analysis_env(tmp_path):
    out = tmp_path / "env.json"
    res = subprocess.run([sys.executable, "-m", "analysis", "env", "-o", str(out)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["hostname"] == os.uname().nodename


# ---- secrets ---------------------------------------------------------------------------------
SECRETS = {"MY_API_TOKEN": "tok-123-SECRETVALUE", "DB_PASSWORD": "pw-456-SECRETVALUE",
           "SOME_KEY": "key-789-SECRETVALUE", "NCCL_IB_SECRET": "nccl-SECRETVALUE",
           "cuda_private_key": "lower-SECRETVALUE"}


def test_dlperf_env_redacts_secrets():
    env = {**os.environ, **SECRETS, "NCCL_IB_HCA": "mlx5_0", "OMP_NUM_THREADS": "4",
           "CUDA_VISIBLE_DEVICES": "0,1"}
    res = dlperf("env", "--env-var", "MY_*", "--env-var", "DB_*", "--env-var", "cuda_*", env=env)
    assert res.returncode == 0, res.stderr
    assert "SECRETVALUE" not in res.stdout + res.stderr
    rec_env = json.loads(res.stdout)["env"]
    assert rec_env["NCCL_IB_HCA"] == "mlx5_0" and rec_env["OMP_NUM_THREADS"] == "4"
    assert rec_env["CUDA_VISIBLE_DEVICES"] == "0,1"
    for name in ("MY_API_TOKEN", "DB_PASSWORD", "NCCL_IB_SECRET", "cuda_private_key"):
        assert rec_env[name] == REDACTED
    assert "SOME_KEY" not in rec_env  # not asked for, so not recorded at all


def test_redaction_applies_to_every_record(tmp_path):
    assert redact_env({"a_Token": "x", "Password2": "y", "ssh_key": "z", "PATH": "/bin",
                       "ssh_key_file": "/k"}) == {  # where a key lives is not a secret
        "a_Token": REDACTED, "Password2": REDACTED, "ssh_key": REDACTED, "PATH": "/bin",
        "ssh_key_file": "/k"}
    assert select_env({"NCCL_DEBUG": "INFO", "NCCL_AUTH_TOKEN": "t", "HOME": "/root"}) == {
        "NCCL_AUTH_TOKEN": REDACTED, "NCCL_DEBUG": "INFO"}
    rec = EnvRecord(captured_at="2026-01-01T00:00:00+00:00", hostname="h",
                    env={"GITHUB_TOKEN": "ghp_SECRETVALUE", "NCCL_DEBUG": "WARN"})
    assert rec.env == {"GITHUB_TOKEN": REDACTED, "NCCL_DEBUG": "WARN"}
    # a record built from a hand-edited dict with a plain secret is redacted again
    data = rec.to_dict() | {"env": {"AWS_SECRET_ACCESS_KEY": "SECRETVALUE"}}
    assert EnvRecord(**data).env == {"AWS_SECRET_ACCESS_KEY": REDACTED}
    rec_env = capture(environ={"NCCL_PASSWORD": "SECRETVALUE", "RANK": "3"}).env
    assert rec_env == {"NCCL_PASSWORD": REDACTED, "RANK": "3"}


def test_opentofu_state_encryption_config_is_not_recorded():
    tofu = 'key_provider "pbkdf2" "k" { passphrase = "tofu-LEAK-passphrase" }'
    env = select_env({"TF_ENCRYPTION": tofu, "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert env == {"TF_CPP_MIN_LOG_LEVEL": "2"}


def test_infiniband_partition_keys_are_recorded_and_nccl_secrets_are_not():
    env = select_env({"NCCL_IB_PKEY": "0x8001", "UCX_IB_PKEY": "0x8002",
                      "OMPI_MCA_btl_openib_pkey": "0x8003", "NCCL_IB_HCA": "mlx5_0",
                      "NCCL_API_KEY": "k-LEAK-123456", "UCX_SECRET_KEY": "s-LEAK-123456",
                      "NCCL_IB_PKEY_PASSWORD": "p-LEAK-123456", "AWS_SECRET_ACCESS_KEY": "aws"})
    assert env == {"NCCL_API_KEY": REDACTED, "NCCL_IB_HCA": "mlx5_0",
                   "NCCL_IB_PKEY": "0x8001", "NCCL_IB_PKEY_PASSWORD": REDACTED,
                   "OMPI_MCA_btl_openib_pkey": "0x8003", "UCX_IB_PKEY": "0x8002",
                   "UCX_SECRET_KEY": REDACTED}
    assert EnvRecord(captured_at="t", hostname="h", env=env).env["NCCL_IB_PKEY"] == "0x8001"


# what leaked before the allow-list (issue 9, item 14), and Terraform's TF_* (item 21)
LEAKED = {"DLPERF_DB": "mysql://root:pw-LEAK1@h", "CUDA_API_CREDENTIAL": "cred-LEAK2",
          "SLURM_JOB_PASS": "slurm-LEAK3", "TORCH_HUB_AUTH": "hub-LEAK4", "OMP_PASS": "omp-LEAK5",
          "HTTPS_PROXY": "http://proxyuser:proxy-LEAK6@proxy:3128", "MY_PASSWD": "passwd-LEAK7",
          "TF_CLI_CONFIG_FILE": "/home/u/.terraformrc", "TF_VAR_db_password": "tfvar-LEAK8",
          "NCCL_SOCKET_IFNAME": "postgres://admin:nccl-LEAK9@db/x"}


def test_dlperf_env_records_an_allow_list_and_never_a_secret(tmp_path):
    env = {**os.environ, **LEAKED, "OMP_NUM_THREADS": "4", "SLURM_JOB_NUM_NODES": "2",
           "SLURM_NTASKS": "16", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTORCH_CUDA_ALLOC_CONF": "x:1"}
    out = tmp_path / "env.json"
    res = dlperf("env", "-o", str(out), env=env)
    assert res.returncode == 0, res.stderr
    text = out.read_text() + res.stdout + res.stderr
    assert "LEAK" not in text, [line for line in text.splitlines() if "LEAK" in line]
    rec_env = json.loads(out.read_text())["env"]
    for name in ("OMP_NUM_THREADS", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS",
                 "TF_CPP_MIN_LOG_LEVEL", "PYTORCH_CUDA_ALLOC_CONF"):
        assert rec_env[name] == env[name]
    for name in ("DLPERF_DB", "HTTPS_PROXY", "MY_PASSWD", "TF_CLI_CONFIG_FILE",
                 "TF_VAR_db_password"):
        assert name not in rec_env  # not on the allow-list
    for name in ("CUDA_API_CREDENTIAL", "SLURM_JOB_PASS", "TORCH_HUB_AUTH", "OMP_PASS"):
        assert name not in rec_env or rec_env[name] == REDACTED
    assert rec_env["NCCL_SOCKET_IFNAME"] == "postgres://admin:***@db/x"
    # asked for by pattern: recorded, with the credentials still hidden
    res = dlperf("env", "--env-var", "*PROXY*", "--env-var", "DLPERF_*", env=env)
    assert res.returncode == 0 and "LEAK" not in res.stdout + res.stderr
    rec_env = json.loads(res.stdout)["env"]
    assert rec_env["HTTPS_PROXY"] == "http://proxyuser:***@proxy:3128"
    assert rec_env["DLPERF_DB"] == "mysql://root:***@h"


def test_a_record_with_a_url_password_is_scrubbed_when_built():
    data = _record() | {"env": {"NCCL_X": "https://u:SECRETVALUE@host/p"}}
    rec = EnvRecord(**data)
    assert rec.env == {"NCCL_X": "https://u:***@host/p"}


# ---- the record ------------------------------------------------------------------------------
def _record(**kw) -> dict:
    return EnvRecord(captured_at="2026-01-01T00:00:00+00:00", hostname="h", **kw).to_dict()


def test_save_load_round_trip_with_topology(tmp_path):
    topo = parse_topology(TOPO.read_bytes()).to_dict()
    text = topo.pop("text")
    rec = EnvRecord(captured_at="2026-01-01T00:00:00+00:00", hostname="node1",
                    topology_text=text, topology=topo, absent={"nvml": "not installed"})
    path = rec.save(tmp_path / "a" / "env.json")
    back = EnvRecord(**json.loads(path.read_text()))
    assert back.to_dict() == rec.to_dict()
    assert list(json.loads(path.read_text())) == list(rec.to_dict())
    assert back.topology["affinity"]["GPU0"]["GPU NUMA ID"] == "N/A"


@pytest.mark.parametrize("change, message", [
    ({"gpu_count": 2}, "gpu_count is 2 but 0 GPU entries"),
    ({"gpu_count": "4"}, "field 'gpu_count' is '4'; expected int"),
    ({"cuda_version": 12.6}, "field 'cuda_version' is 12.6; expected str or null"),
    ({"gpus": [{"index": 0}], "gpu_count": 1}, r"gpus\[0\] must be a dict with keys index, name"),
    ({"absent": {"x": 1}}, "'absent' values must be strings"),
    ({"schema_version": 9}, "schema_version 9"),
    ({"topology": {"devices": []}}, "parsed topology but no topology_text"),
])
def test_invalid_records_are_rejected(change, message):
    with pytest.raises(EnvRecordError, match=message):
        EnvRecord(**(_record() | change))


def test_parse_gpu_csv_handles_not_available_cells():
    gpus = parse_gpu_csv("0, Tesla V100-SXM2-16GB, GPU-1, 00000000:1A:00.0, 16160, 440.33.01, "
                         "[N/A], [Not Supported], 7.0\n\n")
    assert gpus[0]["memory_total_mib"] == 16160 and gpus[0]["power_limit_w"] is None
    assert gpus[0]["max_sm_clock_mhz"] is None and gpus[0]["compute_cap"] == "7.0"
    with pytest.raises(ValueError, match="has 2 fields, expected 9"):
        parse_gpu_csv("0, x\n")


def test_parse_lscpu():
    cpu = parse_lscpu("Architecture: x86_64\nCPU(s): 48\nThread(s) per core: 2\n"
                      "Core(s) per socket: 12\nSocket(s): 2\nNUMA node(s): 2\n"
                      "Model name: Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz\n"
                      "NUMA node0 CPU(s): 0-11,24-35\nNUMA node1 CPU(s): 12-23,36-47\n")
    assert cpu == {"model": "Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz", "sockets": 2,
                   "cores_per_socket": 12, "threads_per_core": 2, "logical_cpus": 48,
                   "numa_nodes": 2, "numa_cpus": {"0": "0-11,24-35", "1": "12-23,36-47"}}


def test_infiniband_from_sysfs(tmp_path):
    port = tmp_path / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "state").write_text("4: ACTIVE\n")
    (port / "rate").write_text("100 Gb/sec (4X EDR)\n")
    (port / "link_layer").write_text("InfiniBand\n")
    (tmp_path / "mlx5_0" / "hca_type").write_text("MT4115\n")
    (tmp_path / "mlx5_0" / "fw_ver").write_text("12.23.1020\n")
    found = probe_infiniband(5, sysfs=tmp_path)
    assert found.values["infiniband"] == [{
        "device": "mlx5_0", "hca_type": "MT4115", "board_id": None, "fw_ver": "12.23.1020",
        "ports": [{"port": 1, "state": "ACTIVE", "rate": "100 Gb/sec (4X EDR)",
                   "link_layer": "InfiniBand"}]}]
    rec = EnvRecord(captured_at="t", hostname="h", infiniband=found.values["infiniband"])
    tr = Translator("en")
    shown = dict(describe.hardware_lines(rec.to_dict(), tr))[tr("env.network")]
    assert shown == "mlx5_0 100 Gb/sec (4X EDR) (InfiniBand)"


def test_compiler_and_kernel_library_variables_are_recorded():
    # each changes what a compiled or cuBLAS/Transformer Engine step runs: a resume that
    # exports one must be compared (and refused), so the record must hold it
    shown = {"TORCHINDUCTOR_MAX_AUTOTUNE": "1", "TORCHDYNAMO_DISABLE": "1",
             "TRITON_CACHE_DIR": "/tmp/t", "CUBLAS_WORKSPACE_CONFIG": ":16:8",
             "CUBLASLT_LOG_LEVEL": "0", "NVTE_FLASH_ATTN": "0"}
    assert select_env({**shown, "HOME": "/root", "EDITOR": "vi"}) == shown
