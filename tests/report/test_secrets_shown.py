"""A workload that prints its secret arguments keeps them in its log (raw data stays
intact), but the published report shows none of them: not in the workload options of the
appendix, the Problems table's log text, the example line or the launch commands."""

from __future__ import annotations

import json
import shutil

from conftest import ROOT

from analysis.report.build import build
from analysis.report.sections.scripts import workload_options

RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"
DUMPED = "db_password : hunter2hunter2  wandb_api_key : 0123456789abcdef  use_auth_token : True  "
GARBLED = ("DLL 2026-11-21 20:32:50.602154 - Epoch: 0 Iteration: 10  train.loss : x "
           "--db-password hunter2hunter2 --hf-token hf_tok_LEAK_42 n=4242 "
           "train.total_ips : abc img/s")


def _printing_secrets(root):
    shutil.copytree(RN50, root / "1n1g")
    for log in (root / "1n1g").glob("*.log"):
        lines = log.read_text().split("\n")
        lines[0] = lines[0].replace("PARAMETER arch : resnet50  ", "PARAMETER arch : resnet50  "
                                    + DUMPED + "pin_password : 4242  ")
        if log.name == "resnet50_b256_amp_1.log":
            lines.insert(9, GARBLED)
        log.write_text("\n".join(lines))
    done = root / "1n1g" / "resnet50_b256_amp_1.done"  # a marker of a hand-run campaign
    marker = json.loads(done.read_text())
    marker["nodes"] = [{"node": 0, "command": "python -m workloads.resnet --hf-token "
                                              "hf_tok_LEAK_42 --db-password=hunter2hunter2"}]
    done.write_text(json.dumps(marker))
    return root


def test_the_report_shows_no_secret_the_logs_print(tmp_path):
    root = _printing_secrets(tmp_path / "logs")
    raw = (root / "1n1g" / "resnet50_b256_amp_1.log").read_text()
    rep = build(root, lang="en")
    same, _ = workload_options(rep)
    options = dict(same)
    assert options["db_password"] == options["wandb_api_key"] == options["pin_password"] == "***"
    assert options["use_auth_token"] == "True"  # a switch, not a secret
    problems = rep.problems().data.to_string()
    assert "hunter2hunter2" not in problems and "hf_tok_LEAK_42" not in problems
    assert "--db-password *** --hf-token ***" in problems
    assert "n=4242" in problems  # a short secret is hidden by name only, not wherever 4242 is
    table = rep.commands()
    commands = table.caption + table.data.to_string()
    assert table.data["hf-token"].tolist().count("***") == 1  # the hand-run marker's
    assert table.data["db-password"].tolist().count("***") == 1
    shown = "\n".join(str(x) for x in (rep.scripts(), rep.method_section(), problems, commands))
    for secret in ("hunter2hunter2", "0123456789abcdef", "hf_tok_LEAK_42"):
        assert secret not in shown
    assert (root / "1n1g" / "resnet50_b256_amp_1.log").read_text() == raw  # logs untouched
    assert "db_password : hunter2hunter2" in raw


HAND_WRITTEN_SPEC = """name: by hand
repeats: 1
password: pw
env:
  WANDB_API_KEY: wandb0123456789
  NCCL_ALGO: Tree
ssh:
  hosts: [gpu1]
  passphrase: 'secret phrase'
workload_args: [--hf-token, hf_tokenLEAK, --epochs, 1]
data_url: https://alice:s3cr3tpass@example.org/data
"""


def test_a_hand_written_campaign_yaml_is_shown_without_its_secrets(tmp_path):
    """The runner writes campaign.yaml redacted, but one written by hand was shown verbatim
    in the appendix (and its env in the run settings): every secret of it, short ones too."""
    root = tmp_path / "logs"
    shutil.copytree(RN50, root / "1n1g")
    (root / "campaign.yaml").write_text(HAND_WRITTEN_SPEC)
    rep = build(root, lang="en")
    shown = str(rep.campaign_yaml()) + str(rep.scripts())
    for secret in ("pw", "wandb0123456789", "secret phrase", "hf_tokenLEAK", "s3cr3tpass"):
        assert f": {secret}" not in shown and secret not in shown.replace("password", "")
    assert "password: ***" in shown and "passphrase: ***" in shown
    assert "WANDB_API_KEY: ***" in shown and "WANDB_API_KEY=***" in shown
    assert "NCCL_ALGO: Tree" in shown and "NCCL_ALGO=Tree" in shown  # not a secret
    assert "[--hf-token, ***, --epochs, 1]" in shown
    assert "https://alice:***@example.org/data" in shown
    assert (root / "campaign.yaml").read_text() == HAND_WRITTEN_SPEC  # the file untouched
