"""docs/cli.md documents every `dlperf` subcommand and each of its long options, read from the
real parsers, so the reference cannot drift from the CLI; the README stays a short user's guide
that names every subcommand and links the reference."""

from __future__ import annotations

import argparse
import re

from analysis.cli import build_parser


def subcommand_options() -> dict[str, list[str]]:
    """subcommand -> its long options (without --help), from the CLI's own parsers."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: sorted(o for a in p._actions for o in a.option_strings
                         if o.startswith("--") and o != "--help")
            for name, p in sub.choices.items()}


def _command_line_section(readme: str) -> str:
    return re.search(r"^## Command line\n(.*?)^## ", readme, re.S | re.M).group(1)


def test_every_subcommand_and_long_option_is_in_the_cli_reference(root):
    section = _command_line_section((root / "docs" / "cli.md").read_text())
    options = subcommand_options()
    assert {"parse", "summarize", "report", "run", "env", "topo"} <= set(options)
    missing = []
    for name, opts in options.items():
        block = re.search(rf"^#### `dlperf {name}`\n(.*?)(?=^####? |\Z)", section, re.S | re.M)
        if block is None:
            missing.append(f"dlperf {name} (no '#### `dlperf {name}`' heading)")
            continue
        missing += [f"dlperf {name} {o}" for o in opts
                    if not re.search(rf"`{re.escape(o)}\b", block.group(1))]
    assert missing == []


def test_the_readme_says_where_dlperf_is_and_how_to_start(root):
    readme = (root / "README.md").read_text()
    for needed in (".venv/bin/dlperf", "source .venv/bin/activate", "make test-fast",
                   "environment.yml", "make lab", "du -sh .venv"):
        assert needed in readme, needed


def test_the_readme_is_a_short_guide_naming_every_subcommand(root):
    readme = (root / "README.md").read_text()
    assert len(readme.splitlines()) <= 350
    section = _command_line_section(readme)
    assert "docs/cli.md" in section
    assert [name for name in subcommand_options() if f"`dlperf {name}" not in section] == []


def test_the_readmes_links_to_files_resolve(root):
    readme = (root / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme)
    assert targets
    assert [t for t in targets if not (root / t).exists()] == []
