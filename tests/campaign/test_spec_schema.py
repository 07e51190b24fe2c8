"""The JSON Schema editors check specs with: committed, current, and true to the examples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

from analysis.campaign.spec_schema import SpecFile

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "campaign.schema.json"


def test_the_committed_schema_is_the_models_schema():
    out = subprocess.run([sys.executable, "-m", "analysis.campaign.spec_schema"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert json.loads(out) == SpecFile.model_json_schema()
    assert SCHEMA.read_text(encoding="utf-8") == out, "run `make schema` and commit the file"


def test_the_examples_pass_the_schema_and_name_it():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    examples = sorted((ROOT / "examples" / "campaigns").glob("*.yaml"))
    assert examples
    for path in examples:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# yaml-language-server: $schema=../../docs/campaign.schema.json")
        jsonschema.validate(yaml.safe_load(text), schema)


def test_the_schema_refuses_what_the_models_refuse():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    good = {"name": "t", "workload": "builtin", "devices": ["1n8g"], "batch_sizes": [4],
            "ssh": {"port": 22}, "hosts": ["a", {"host": "b", "port": 2222}]}
    jsonschema.validate(good, schema)
    for bad in ({**good, "batchsize": [4]}, {**good, "ssh": {"keyfile": "k"}},
                {**good, "devices": ["8g"]}, {**good, "repeats": 0},
                {**good, "backend": "k8s"}, {"workload": "builtin"}):
        try:
            jsonschema.validate(bad, schema)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"the schema accepts {bad}")


def test_every_nested_mapping_is_a_section_whose_keys_errors_list():
    from analysis.campaign.spec_schema import SECTIONS, _Section

    assert set(_Section.__subclasses__()) - {SpecFile} == set(SECTIONS.values())
