"""The report of a real campaign (data/raw_logs/rn50_4gpu: 40 runs of the built-in ResNet-50
workload on 4x H200, one host, `.node<k>.env.json` records per run, `.done` markers with
per-node commands): the defects a reader found in it, each checked where it shows."""

from __future__ import annotations

import html
import re
import subprocess

import pytest
from conftest import ROOT

from analysis import stats
from analysis.env import describe, folder_records
from analysis.env.folder_records import Command, EnvInput
from analysis.i18n import Translator
from analysis.report import build
from analysis.report.sections.problems import outlier_reason

REAL = ROOT / "data" / "raw_logs" / "rn50_4gpu"
TITLE = "ResNet-50 v1.5 on 4× H200 (built-in PyTorch workload)"


@pytest.fixture(scope="module")
def reports():
    return {lang: build(REAL, lang=lang, title=TITLE) for lang in ("en", "zh")}


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)))


# ---- 1. hosts, not env files ----------------------------------------------------------
def test_env_records_grouped_by_host():
    rec = {"hostname": "vm", "gpu_model": "H200", "gpu_count": 4}
    envs = [EnvInput("1n1g/a_1.node0.env.json", rec), EnvInput("2n2g/b_1.node0.env.json", rec),
            EnvInput("2n2g/b_1.node1.env.json", rec),
            EnvInput("env.json", {"hostname": "other", "gpu_model": "V100", "gpu_count": 8})]
    assert [h.name for h in describe.hosts(envs)] == ["vm", "other"]
    types = describe.node_types(envs)
    assert [[h.name for h in t] for t in types] == [["vm"], ["other"]]
    assert len(types[0][0].records) == 3
    assert describe.shared_host_runs(envs) == [("2n2g/b_1", "vm")]
    assert describe.run_stem(envs[2]) == "2n2g/b_1"


def test_environment_section_counts_hosts(reports):
    for lang, rep in reports.items():
        frag = rep.section("environment")
        heading = re.search(r'<a id="node-type-1"></a>.*?<h3[^>]*>(.*?)<a class="anchor-link"',
                            frag, re.S).group(1)
        assert heading.count("vm") == 1, heading
        text = _text(frag)
        want = ("Hosts of this type: 1 (50 environment records)" if lang == "en"
                else "此类服务器共 1 台（50 份环境记录）")
        assert want in text
        assert "50 node" not in text and "50 台" not in text
        # the topology is shown once: the coloured matrix, named by its host in its caption
        assert "<code>nvidia-smi topo -m</code>" not in frag
        assert rep.topology().caption.endswith("— vm")
        assert ".env.json" not in frag
        assert ("10 multi-node runs placed all their nodes on one host (vm)" in text
                if lang == "en" else "10 次“多机”运行的所有节点实际在同一台主机（vm）上" in text)


# ---- 2. the frameworks the runs used, first ---------------------------------------------
def test_software_lists_used_framework_first(reports):
    tr = Translator("en")
    rec = {"frameworks": {"jax": {"version": "0.4"}, "torch": {"version": "2.11.0",
                                                               "git_version": "70d99e998b49ff"}},
           "os": {"pretty_name": "Ubuntu"}}
    lines = describe.software_lines(rec, tr, describe.framework_packages(["PyTorch"]))
    assert lines[0] == ("Framework (torch)", "2.11.0 (git 70d99e998b49)")
    assert lines[-1] == ("Other packages installed (beside the framework)", "jax 0.4")
    assert describe.framework_packages(["PyTorch", "TensorFlow"])[:2] == ["torch", "tensorflow"]
    env = _text(reports["en"].section("environment"))
    assert env.index("Framework (torch) : 2.11.0") < env.index("OS :")
    assert "Other packages installed (beside the framework) : jax 0.11.2" in env
    desc = _text(reports["en"].section("descriptions"))
    assert "PyTorch 2.11.0" in desc and "jax" not in desc and "transformers" not in desc


# ---- 3. launch commands collapsed ---------------------------------------------------------
def test_commands_collapse_ports():
    cmds = [Command(f"2n2g/r_{i}", str(n), f"torchrun --node_rank {n} --master_port {5000 + i} "
                                            f"--log r_{i}.log") for i in (1, 2, 3) for n in (0, 1)]
    groups = folder_records.group_commands(cmds)
    assert [(g.case, g.node, len(g.runs)) for g in groups] == [("2n2g/r", "0", 3), ("2n2g/r", "1", 3)]
    assert groups[1].command == "torchrun --node_rank 1 --master_port <port> --log <run>.log"
    assert folder_records.command_template("x --master_port=123 MASTER_PORT=9 --rdzv_endpoint h:29500") \
        == "x --master_port=<port> MASTER_PORT=<port> --rdzv_endpoint h:<port>"


def test_scripts_section_real_campaign(reports):
    frag = reports["en"].section("scripts")
    rows = re.findall(r"<tr>(.*?)</tr>", frag.split('class="dlperf-table dlperf-commands')[1],
                      re.S)
    assert len(rows) == 1 + 10  # header + 8 cases, the two 2-node cases with 2 nodes each
    assert "<port>" not in frag and "&lt;port&gt;" in frag
    assert "--master_port 51713" not in frag
    assert "<code>/opt/torch/.venv/bin/python3 -m torch.distributed.run [--standalone]" in frag
    assert "--warmup-iterations 20" in frag  # the same in every command: in the template
    text = _text(frag)
    assert "Iterations per run : 150, of which the first 20 are the workload's warm-up" in text
    assert "channels_last=True" in text and "tf32=True" in text
    assert "ddp_static_graph=True" in text and "ddp_bucket_cap_mb=25.0" in text
    assert "40 runs, 10 distinct commands" in text


# ---- 4. tables fit the page -----------------------------------------------------------------
def test_ci_is_one_compact_cell(reports):
    frag = reports["en"].results().to_html()
    assert "6,006.60–6,061.02" in frag
    assert 'class="dlperf-table dlperf-results"' in frag


# ---- 5. alignment and the outlier rule ----------------------------------------------------
def test_outlier_reason_states_the_rule(reports):
    runs = reports["en"].runs
    rid = runs["run_id"].iloc[0]
    en = outlier_reason(reports["en"], 1234.5, rid)
    assert "more than 3 scaled MADs (1.4826 × MAD, at least 0.5% of the median each)" in en
    assert en.startswith("throughput 1,234.50 samples/s is more than")  # with its unit
    assert "case median 2,998.16 samples/s" in en
    zh = outlier_reason(reports["zh"], 1234.5, rid)
    assert "3 倍标准化 MAD" in zh and "1.4826 × MAD" in zh and "0.5%" in zh
    assert "用例中位数 2,998.16 samples/s" in zh
    assert stats.per_run.OUTLIER_MADS == 3.0  # the label states the rule's numbers from here


def test_problem_table_aligns_text_left():
    import pandas as pd

    from analysis.report import styled

    out = styled.table(pd.DataFrame({"run": ["a"], "line": ["12"]}), "t", "lr").to_html()
    assert re.search(r"#T_t_row0_col0 \{\s*text-align: left;", out)
    assert re.search(r"#T_t_row0_col1 \{\s*text-align: right;", out)


# ---- 6. method described in the report's language ---------------------------------------
def test_method_described_in_each_language(reports):
    cat = Translator("en")
    for m in stats.METHODS:
        assert cat.has(f"method.{m}"), m
    zh = str(reports["zh"].method_section())
    assert "日志为 DLLogger PyTorch 格式）。** DLPerf 规则：" in zh  # the family that ran
    assert stats.describe_method("dlperf") not in zh
    assert "每次运行的第 25 至 125 次迭代（共 100 次）" in zh
    en = str(reports["en"].method_section())
    assert "iterations 25 to 125 of every run (100 iterations)" in en


# ---- 7. what was run ------------------------------------------------------------------------
def test_descriptions_state_benchmark_and_options(reports):
    en = _text(reports["en"].section("descriptions"))
    assert ("DLPerf Suite built-in workload: ResNet-50 v1.5, trained on "
            "synthetic data generated on the device") in en
    commit = reports["en"].suite_commit
    from analysis import __version__
    assert f"DLPerf Suite version : {__version__}, commit {commit or 'unknown'}" in en
    assert "AMP (FP16 autocast, dynamic loss scaling) and FP32 (TF32 on for matmuls and convolutions)" in en
    assert "Iterations per run : 150" in en
    assert "torch 2.11.0+cu130" in en  # versions as the runs report them
    zh = _text(reports["zh"].section("descriptions"))
    assert "DLPerf Suite 内置 ResNet-50 v1.5" in zh and "FP32（矩阵乘与卷积均开启 TF32）" in zh


# ---- the published PDF: nothing cut off on the right -----------------------------------
@pytest.mark.slow
def test_real_pdf_tables_fit_the_page(tmp_path_factory):
    from analysis.report.publish import publish

    out = tmp_path_factory.mktemp("real")
    done = publish(REAL, out, langs="en,zh", to="pdf", title=TITLE)
    for lang, last_col in (("en", "efficiency"), ("zh", "扩展效率")):
        pdf = done.files[lang]["pdf"]
        # pdftotext keeps only what lies on the page: a cut-off column loses its header
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                              text=True, check=True).stdout
        assert text.count(last_col) >= 2, lang
        # an interval may wrap after its dash on A4; exact µs: 11,658.005 (the scripts give .01)
        for low, high in (("6,006.60", "6,061.02"), ("11,631.74", "11,658.01")):
            assert f"{low}–" in text and high in text, (lang, low, high)
        bbox = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True,
                              text=True, check=True).stdout
        width = float(re.search(r'<page width="([\d.]+)"', bbox).group(1))
        right = max(float(x) for x in re.findall(r'xMax="([\d.]+)"', bbox))
        assert right <= width, (lang, right, width)
