"""Run fields stated by the user: --meta values and meta files beside the logs."""

from __future__ import annotations

import pytest

from analysis.errors import UsageError
from analysis.user_meta import check_meta, load_meta_file, merge_meta, parse_meta_option


def test_option_values_are_validated_and_normalised():
    assert parse_meta_option("num_nodes=2, gpus_per_node=8,precision=fp16,model=RN50") == {
        "num_nodes": 2, "gpus_per_node": 8, "precision": "amp", "model": "resnet50"}
    assert merge_meta([{"num_nodes": 1}, {"num_nodes": "2", "framework": "Megatron-LM"}]) == {
        "num_nodes": 2, "framework": "Megatron-LM"}
    assert merge_meta(None) == {}


@pytest.mark.parametrize("values, message", [
    ({"nodes": 2}, "unknown key 'nodes'"),
    ({"case": "x"}, "unknown key 'case'"),
    ({"num_nodes": -1}, "num_nodes must be a positive integer"),
    ({"batch_size_per_device": 2.5}, "batch_size_per_device must be a positive integer"),
    ({"repeat": True}, "repeat must be a positive integer"),
    ({"precision": "int8"}, "precision must be one of"),
    ({"model": "  "}, "model is empty"),
    ({"model": [1, 2]}, "model needs a single value"),
])
def test_bad_keys_and_values_are_usage_errors_naming_them(values, message):
    with pytest.raises(UsageError, match=message):
        check_meta(values, "x.meta.yaml")


def test_meta_files_errors_name_the_file_and_line(tmp_path):
    p = tmp_path / "dlperf-meta.yaml"
    p.write_text("num_nodes: 2\ngpus_per_node: [8\n")
    with pytest.raises(UsageError, match=f"^{p}:3: "):
        load_meta_file(p)
    p.write_text("- 1\n- 2\n")
    with pytest.raises(UsageError, match="expected a mapping"):
        load_meta_file(p)
    p.write_text("a: &x [1]\nb: *x\n")
    with pytest.raises(UsageError, match=f"{p}: unknown key 'a'"):
        load_meta_file(p)
    p.write_bytes(b"model: gpt\n" * 10_000)
    with pytest.raises(UsageError, match="over 64 KiB"):
        load_meta_file(p)
    p.write_text("# nothing stated yet\n")
    assert load_meta_file(p) == {}


@pytest.mark.parametrize("value", [10**30, 2**31, "9" * 5000])
def test_counts_beyond_what_a_run_frame_holds_are_usage_errors(value):
    with pytest.raises(UsageError, match="repeat must be a positive integer .at most 2,147,483,647"):
        check_meta({"repeat": value}, "x.meta.yaml")
    assert check_meta({"repeat": 2**31 - 1}) == {"repeat": 2**31 - 1}


def test_meta_file_with_an_integer_of_thousands_of_digits_names_the_file(tmp_path):
    p = tmp_path / "dlperf-meta.yaml"
    p.write_text("num_nodes: " + "9" * 5000 + "\n")
    with pytest.raises(UsageError, match=f"^{p}: a value YAML cannot read"):
        load_meta_file(p)


def test_alias_bomb_in_a_meta_file_is_refused_at_once(tmp_path):
    parts, prev = ['&a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'], "a"
    for name in "bcdefghijklmnop":  # 9**16 strings once expanded
        parts.append(f"&{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
        prev = name
    p = tmp_path / "dlperf-meta.yaml"
    p.write_text(f"num_nodes: [{', '.join(parts)}]\n")
    with pytest.raises(UsageError, match="more than 100000 YAML values once anchors and aliases"):
        load_meta_file(p)
