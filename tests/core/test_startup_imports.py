"""`dlperf <command>` imports only that command's module (issue 10: start-up counts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from analysis import cli

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> set[str]:
    """The modules imported by a fresh interpreter that runs `code`."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_a_light_command_does_not_import_pandas():
    mods = _modules_after("from analysis.cli import main\ntry:\n    main(['env', '--help'])\n"
                          "except SystemExit:\n    pass")
    assert "pandas" not in mods
    assert "analysis.cli.env" in mods and "analysis.cli.summarize" not in mods


def test_summarize_imports_no_other_subcommand(tmp_path):
    mods = _modules_after("import sys\nfrom analysis.cli import main\n"
                          f"main(['summarize', {str(tmp_path)!r}, '--no-cache'])")
    others = {f"analysis.cli.{name}" for name in cli._command_names()} - {"analysis.cli.summarize"}
    assert "analysis.cli.summarize" in mods
    assert not mods & others
    assert "analysis.changes" not in mods  # `dlperf compare`'s statistics


def test_each_subcommand_is_named_after_its_module():
    for mod in cli._commands():
        assert mod.__name__ == f"analysis.cli.{mod.COMMAND}"


def test_the_full_parser_still_lists_every_command():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert sorted(sub.choices) == cli._command_names()
    assert len(cli._command_names()) >= 9


def test_the_full_help_does_not_import_pandas():
    """`dlperf --help` lists every command: their modules import pandas only to run."""
    mods = _modules_after("from analysis.cli import main\ntry:\n    main(['--help'])\n"
                          "except SystemExit:\n    pass")
    assert {f"analysis.cli.{name}" for name in cli._command_names()} <= mods
    assert "pandas" not in mods


def test_a_warm_summarize_imports_no_other_log_family(tmp_path, monkeypatch):
    """On its cache, `summarize` of DLE PyTorch logs imports that family's module and not
    the others' (sniffing, which needs them all, happens only when a log is read)."""
    import os
    import shutil
    import time

    real = ROOT / "tests/data/real/paddle_perf_pytorch_resnet/pytorch_gpu8_amp_bs256.txt"
    logs = tmp_path / "logs" / "1n8g"
    logs.mkdir(parents=True)
    for repeat in (1, 2):
        log = logs / f"r50_b256_amp_{repeat}.log"
        shutil.copy(real, log)
        old = time.time() - 3600  # the cache keeps only files that have settled
        os.utime(log, (old, old))
    monkeypatch.setenv("DLPERF_CACHE_DIR", str(tmp_path / "cache"))
    code = f"from analysis.cli import main\nmain(['summarize', {str(logs.parent)!r}])"
    first = _modules_after(code)
    assert "analysis.parsers.megatron" in first  # read: every family sniffed
    warm = _modules_after(code)
    assert "analysis.parsers.dll_pytorch" in warm
    assert not {"analysis.parsers.megatron", "analysis.parsers.oneflow_cnn",
                "analysis.parsers.libai", "analysis.parsers.dll_tensorflow"} & warm
