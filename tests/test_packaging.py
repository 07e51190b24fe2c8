"""pyproject.toml, environment.yml, README and .ci/run agree with each other."""

import re

import tomllib
import yaml

CONDA_NAMES = {"torch": "pytorch"}  # PyPI name -> conda-forge name


def _pyproject(root):
    return tomllib.loads((root / "pyproject.toml").read_text())


def _pip_deps(root):
    proj = _pyproject(root)["project"]
    deps = list(proj["dependencies"])
    for items in proj["optional-dependencies"].values():
        deps += [d for d in items if not d.startswith("dlperf-suite")]
    return {CONDA_NAMES.get(re.split(r"[<>=!~ \[]", d)[0], re.split(r"[<>=!~ \[]", d)[0]):
            d[len(re.split(r"[<>=!~ \[]", d)[0]):] for d in deps}


def test_environment_yml_declares_the_same_dependencies(root):
    env = yaml.safe_load((root / "environment.yml").read_text())
    conda = {}
    for d in env["dependencies"]:
        if isinstance(d, str) and not d.startswith(("python", "pip")):
            name = re.split(r"[<>=!~ ]", d)[0]
            conda[name] = d[len(name):]
    assert conda == _pip_deps(root)
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip == ["-e .[all,dev]"]


def test_console_script_and_extras(root):
    proj = _pyproject(root)["project"]
    assert proj["scripts"]["dlperf"] == "analysis.cli:main"
    assert set(proj["optional-dependencies"]) >= {"report", "campaign", "workload", "dev", "all"}


def test_ci_runs_the_readme_test_command(root):
    readme = (root / "README.md").read_text()
    ci = (root / ".ci" / "run").read_text()
    block = re.search(r"```(?:bash|sh)?\n(.*?)```", readme, re.S).group(1)
    commands = [c.strip() for c in block.strip().splitlines() if c.strip() and not c.startswith("#")]
    assert len(commands) == 2, commands
    assert commands[1] in ci.splitlines()
