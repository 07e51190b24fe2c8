"""analysis.redact: the one place that decides what is secret (issue 9, item 14)."""

from __future__ import annotations

import pytest

from analysis.redact import (
    REDACTED,
    is_secret_name,
    redact_argv,
    redact_env,
    redact_shown,
    redact_text,
    redact_tree,
    redact_yaml_text,
    scrub,
    secrets_in,
)


@pytest.mark.parametrize("name", ["CUDA_API_CREDENTIAL", "SLURM_JOB_PASS", "TORCH_HUB_AUTH",
                                  "OMP_PASS", "MY_PASSWD", "DB_PASSWORD", "GITHUB_TOKEN",
                                  "AWS_SECRET_ACCESS_KEY", "hub_token", "SESSION_COOKIE",
                                  "OPENAI_API_KEY", "AWS_SECRET_KEY", "HF_TOKEN", "NCCL_API_KEY",
                                  "UCX_SECRET_KEY", "NCCL_IB_PKEY_PASSWORD", "SSL_PKEY",
                                  "JWT_PKEY"])
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS",
                                  "SLURM_NTASKS", "key_file", "SSL_CERT_FILE", "TOKENIZER_DIR",
                                  "LD_LIBRARY_PATH", "NCCL_IB_PKEY", "UCX_IB_PKEY",
                                  "OMPI_MCA_btl_openib_pkey", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX",
                                  "UCX_TCP_KEEPIDLE", "UCX_IB_SL"])
def test_names_that_are_not_secrets(name):
    assert not is_secret_name(name)


@pytest.mark.parametrize("text, want", [
    ("mysql://root:pw@h", "mysql://root:***@h"),
    ("postgres://admin:p@ss@db/x", "postgres://admin:***@db/x"),
    ("http://proxyuser:hunter2@proxy:3128", "http://proxyuser:***@proxy:3128"),
    ("admin:hunter2@h1", "admin:***@h1"),
    ("https://h/x?user=a&token=abc123&n=1", "https://h/x?user=a&token=***&n=1"),
    ("--password=hunter2", "--password=***"),
    ("Authorization: Bearer abc.def.ghi", "Authorization: Bearer ***"),
    ("ghp_" + "a" * 36, REDACTED),
    ("hf_" + "B" * 34, REDACTED),
    # nothing secret: unchanged
    ("http://host:8080/a@b", "http://host:8080/a@b"),
    ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
    ("root@h1:22", "root@h1:22"),
    ("NCCL_SOCKET_IFNAME=eth0", "NCCL_SOCKET_IFNAME=eth0"),
])
def test_scrub(text, want):
    assert scrub(text) == want


def test_env_argv_text_and_tree():
    env = {"API_TOKEN": "tok-123456", "DB_URL": "postgres://u:dbpass99@db/x", "PIN_PASSWORD": 123456,
           "NCCL_DEBUG": "INFO"}
    assert redact_env(env) == {"API_TOKEN": REDACTED, "DB_URL": "postgres://u:***@db/x",
                               "PIN_PASSWORD": REDACTED, "NCCL_DEBUG": "INFO"}
    assert set(secrets_in(env)) == {"tok-123456", "dbpass99", "123456"}
    argv = ["run", "--tok", "tok-123456", "--db-password", "x1", "dbpass99", "INFO"]
    assert redact_argv(argv, env) == ["run", "--tok", REDACTED, "--db-password", REDACTED,
                                      REDACTED, "INFO"]
    assert redact_text("failed: tok-123456 rejected", secrets_in(env)) == \
        "failed: *** rejected"
    tree = {"env": env, "options": {"hub_token": "t0k", "n": 3},
            "runs": [{"reason": "ssh: dbpass99 refused"}]}
    out = redact_tree(tree, secrets_in(tree))
    assert out["env"]["API_TOKEN"] == REDACTED and out["options"] == {"hub_token": REDACTED,
                                                                       "n": 3}
    assert out["runs"][0]["reason"] == "ssh: *** refused"
    assert redact_tree({"tokens_per_s": 5}, by_name=False) == {"tokens_per_s": 5}


def test_campaign_records_are_written_scrubbed(tmp_path):
    from analysis.campaign import records

    row = {"run_id": "1n1g/x_1", "state": "failed", "attempts": 1,
           "reason": "git clone https://u:S3CRET-clone@git.example/r failed"}
    records.write_status(tmp_path, "c", [row])
    text = (tmp_path / "status.json").read_text()
    assert "S3CRET" not in text and "https://u:***@git.example/r" in text
    assert not [p for p in tmp_path.iterdir() if p.name != "status.json"]  # no temp file left


def test_value_after_a_secret_option_in_a_list_is_a_secret(tmp_path):
    """A spec's ``workload_args: [--db-password, pw]``: the done marker hid ``pw`` (through
    redact_argv) but campaign.yaml, saved with the spec's secrets, kept it."""
    from analysis.campaign.runner import Campaign
    from analysis.campaign.spec import from_dict

    args = ["--db-password", "plainpw99", "--api-key", "k3y-abc", "--verbose", "--lr", "0.1"]
    assert set(secrets_in({"workload_args": args})) == {"plainpw99", "k3y-abc"}
    spec = from_dict({"name": "t", "workload": "builtin", "precisions": ["fp32"],
                      "batch_sizes": [4], "devices": ["1n1g"], "workload_args": args})
    Campaign(spec, out_dir=tmp_path)._write_spec()
    text = (tmp_path / "campaign.yaml").read_text()
    assert "plainpw99" not in text and "k3y-abc" not in text and "0.1" in text


def test_text_a_report_shows_hides_known_secrets_of_8_characters_and_secret_option_values():
    line = "step 12 loss 1234 --hf-token abc --lr 0.1 --key-file /k --db-password x pw=hunter2hunter2"
    assert redact_shown(line, ["hunter2hunter2", "1234"]) == \
        "step 12 loss 1234 --hf-token *** --lr 0.1 --key-file /k --db-password *** pw=***"
    assert redact_shown("mysql://root:pw@h ghp_" + "a" * 36) == "mysql://root:***@h ***"


#: Options whose value is a secret, and options of counts and sizes whose value a
#: performance engineer must see (their names hold "key" or "token" too).
SECRET_OPTIONS = ["--api-key", "--hub-token", "--password", "--secret",
                  "--aws-secret-access-key", "--hf_token", "--apiKey", "--db-pass",
                  "--pgpassword", "-token", "--oauth", "--ssl-pkey", "--session-cookie"]
SHOWN_OPTIONS = ["--num-keys", "--key-size", "--tokens-per-batch", "--max-tokens",
                 "--vocab-size", "--num-tokens", "--keyword", "--max-token-len",
                 "--n-key", "--passes", "--author", "--tokenizer"]


@pytest.mark.parametrize("option", SECRET_OPTIONS)
def test_the_value_of_a_secret_option_is_hidden_in_shown_text(option):
    assert redact_shown(f"run {option} 4096 --lr 0.1") == f"run {option} *** --lr 0.1"
    assert redact_shown(f"run {option}=4096 --lr 0.1") == f"run {option}=*** --lr 0.1"
    assert redact_argv(["run", option, "4096"]) == ["run", option, REDACTED]
    assert is_secret_name(option.lstrip("-"))


@pytest.mark.parametrize("option", SHOWN_OPTIONS)
def test_the_value_of_a_count_or_size_option_is_shown(option):
    line = f"run {option} 4096 --lr 0.1 {option}=16"
    assert redact_shown(line) == line
    assert redact_argv(["run", option, "4096"]) == ["run", option, "4096"]
    assert secrets_in({"workload_args": [option, "4096"]}) == []
    assert not is_secret_name(option.lstrip("-"))


@pytest.mark.parametrize("name, secret", [
    ("PGPASSWORD", True), ("SECRET_KEY_BASE", True), ("AWS_ACCESS_KEY_ID", True),
    ("WANDB_API_KEY", True), ("hubToken", True),
    ("TOKENIZERS_PARALLELISM", False), ("NUM_KEYS", False), ("MAX_TOKENS", False),
    ("KEY_SIZE", False), ("NCCL_NTOKENS", False),
    # a plural ending a name holds several secrets, not a count (unless a count word says so)
    ("OPENAI_API_KEYS", True), ("HF_TOKENS", True), ("DB_PASSWORDS", True),
    ("NUM_API_KEYS", False), ("TOKENS_PER_BATCH", False),
])
def test_env_and_yaml_names_by_the_same_rule(name, secret):
    assert redact_env({name: "4096"}) == {name: REDACTED if secret else "4096"}
    assert redact_yaml_text(f"{name}: 4096") == f"{name}: {REDACTED if secret else 4096}"


def test_yaml_text_keeps_its_blank_lines_and_final_newline():
    """The pattern of a key: value line ran past its line end (whitespace), so the blank
    line after a secret and the file's last newline disappeared from the shown YAML."""
    text = "a: 1\npassword: x\n\nb: 2\n  - token: y  \n"
    assert redact_yaml_text(text) == f"a: 1\npassword: {REDACTED}\n\nb: 2\n  - token: {REDACTED}\n"
