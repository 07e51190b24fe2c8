"""Which DLPerf Suite ran a campaign: the package version and, when the suite is a git
checkout, its commit and whether tracked files differed from it.

Recorded as ``suite: {version, commit, dirty}`` in every done marker and in ``status.json``.
``commit`` is ``git rev-parse HEAD`` of the suite's own checkout (the folder that holds the
``analysis`` package, and only when that folder is the top of a git work tree, not a folder
inside some other repository); ``dirty`` is whether ``git status --porcelain`` shows a tracked
file changed, not counting campaign logs, generated reports and the campaign's own output
folder (the campaign writes there as it runs). Without git or a checkout both are None: a run
never fails for want of git.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from analysis import __version__, config
from analysis.errors import DLPerfError
from analysis.shell import run_command

#: The suite's own checkout: the folder that holds the ``analysis`` package.
CHECKOUT = config.PACKAGE_DIR.parent
#: Tracked folders that are the suite's products, not the suite: they never make it dirty.
PRODUCTS = ("data/raw_logs", "reports")
GIT_TIMEOUT_S = 30


def suite_version(exclude: Iterable[str | Path] = (), checkout: str | Path | None = None) -> dict:
    """``{"version", "commit", "dirty"}`` of the suite in `checkout` (default :data:`CHECKOUT`);
    changes under `exclude` (folders such as the campaign's output) do not count as dirty."""
    root = Path(checkout or CHECKOUT).resolve()
    record = {"version": __version__, "commit": None, "dirty": None}
    head = _git(root, "rev-parse", "--show-toplevel", "HEAD")
    lines = head.splitlines() if head else []
    if len(lines) != 2 or Path(lines[0]).resolve() != root:
        return record
    skipped = [*PRODUCTS, *(_inside(root, Path(p)) for p in exclude)]
    changed = _git(root, "status", "--porcelain", "--untracked-files=no", "--", ".",
                   *(f":(exclude,literal){p}" for p in skipped if p))
    record["commit"] = lines[1].strip()
    record["dirty"] = None if changed is None else bool(changed.strip())
    return record


def _inside(root: Path, path: Path) -> str:
    """`path` relative to `root` ('' when it is not inside it, or is `root` itself)."""
    try:
        rel = path.resolve().relative_to(root)
    except ValueError:
        return ""
    return "" if rel == Path(".") else rel.as_posix()


def _git(root: Path, *args: str) -> str | None:
    """What ``git -C root ARGS`` printed; None when git is missing, fails or hangs."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}  # status takes no lock
    try:
        done = run_command(["git", "-C", str(root), *args], timeout=GIT_TIMEOUT_S, check=False,
                           env=env)
    except (DLPerfError, OSError):
        return None
    return done.stdout if done.ok else None


def suite_commit(project_dir: str | Path | None = None) -> str:
    """The short hash of the last commit that changed the suite itself, i.e. anything but the
    generated ``reports/`` ('' when git or the repository is absent). Committing rebuilt
    reports therefore does not change the commit the next build shows, so rebuilding
    unchanged logs with unchanged code leaves the tree clean."""
    commit = _git(Path(project_dir or config.PROJECT_DIR), "log", "-1", "--format=%h", "--",
                  ".", ":(exclude)reports")
    return (commit or "").strip()
