"""`dlperf compare BASE_LOGS NEW --store STORE` where NEW is a stored campaign some of whose
runs are copies of BASE's logs: the store keeps each run's training rows, by which the copies
are found as in a comparison of two log folders, and a case of copies only is not
re-measured (exit 4), never BASE's measurement counted again as NEW's."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

from analysis.cli import main

from .campaigns import BUNDLED, rerun

COPIED = {"PyTorch/resnet50/amp/b256/1n1g", "PyTorch/resnet50/fp32/b128/1n1g"}


def _run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


def _stored(store, folder) -> str:
    """`folder` added to `store`; its key."""
    status, out, _ = _run("store", "add", folder, "--store", store)
    assert status == 0 and out.startswith("added "), out
    return out.split()[1]


def _base(tmp_path, *configs):
    for config in configs:
        shutil.copytree(BUNDLED / config, tmp_path / "base" / config)
    return tmp_path / "base"


def test_a_stored_campaign_of_byte_copies_is_not_re_measured(tmp_path):
    base = _base(tmp_path, "1n1g")
    new = tmp_path / "new"
    shutil.copytree(base, new)
    key = _stored(tmp_path / "store", new)
    status, out, err = _run("compare", base, key, "--store", tmp_path / "store",
                            "--format", "json")
    # before: a usage error, "keeps no parse to summarise the others from", exit 2
    assert status == 4, err
    rows = {r["case_key"]: r for r in json.loads(out)}
    assert set(rows) == COPIED
    assert {r["verdict"] for r in rows.values()} == {"not re-measured"}
    assert {r["new_repeats"] for r in rows.values()} == {0}
    logs = sorted((base / "1n1g").glob("*.log"))
    for log in logs:  # each copy named with both logs
        assert f"{new / '1n1g' / log.name}: duplicate_run: the same training stamps" in err
        assert f"as {log} (run 1n1g/{log.stem})" in err
    assert "not re-measured in" in err


def test_the_cases_it_measured_itself_are_compared_beside(tmp_path):
    base = _base(tmp_path, "1n1g", "1n2g")
    new = tmp_path / "new"
    rerun(new)  # its own timing everywhere ...
    for config in ("1n4g", "2n2g"):
        shutil.rmtree(new / config)
    shutil.rmtree(new / "1n1g")  # ... but 1n1g's logs are BASE's
    shutil.copytree(base / "1n1g", new / "1n1g")
    key = _stored(tmp_path / "store", new)
    status, out, err = _run("compare", base, key, "--store", tmp_path / "store",
                            "--format", "json")
    assert status == 4, err
    verdicts = {r["case_key"]: r["verdict"] for r in json.loads(out)}
    assert {k for k, v in verdicts.items() if v == "not re-measured"} == COPIED
    others = {v for k, v in verdicts.items() if k not in COPIED}
    assert others == {"unchanged"} and len(verdicts) == 4


def test_a_case_of_copies_beside_its_own_runs_is_a_usage_error_naming_it(tmp_path):
    base = _base(tmp_path, "1n1g")
    new = tmp_path / "new"
    rerun(new)
    for config in ("1n2g", "1n4g", "2n2g"):
        shutil.rmtree(new / config)
    copied = new / "1n1g" / "resnet50_b128_fp32_2.log"
    shutil.copy(base / "1n1g" / copied.name, copied)
    key = _stored(tmp_path / "store", new)
    status, out, err = _run("compare", base, key, "--store", tmp_path / "store")
    assert status == 2 and out == ""
    assert "1 case(s) hold copies of another campaign's logs beside runs of their own " \
           "(e.g. PyTorch/resnet50/fp32/b128/1n1g)" in err and "give it as its logs" in err
    assert "Traceback" not in err
    # its logs, given as such, are compared with the copy left out
    status, out, err = _run("compare", base, new, "--format", "json")
    assert status == 0 and {r["verdict"] for r in json.loads(out)} == {"unchanged"}
