"""`dlperf report` as a user runs it: never unpickles what it finds in the output folder,
prints one plain progress line per step and no kernel transport warning."""

from __future__ import annotations

import hashlib
import os
import pickle
import shlex
import subprocess
from pathlib import Path

import pytest
from synth import write_campaign, write_markers

pytestmark = pytest.mark.slow


class _Payload:
    """A pickle that runs a shell command when it is loaded."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


def _stat_rows(paths, root: Path | None = None) -> list[str]:
    rows = []
    for p in paths:
        st = p.stat()
        name = p.relative_to(root).as_posix() if root else str(p.resolve())
        rows.append(f"{name}\t{st.st_size}\t{st.st_mtime_ns}")
    return rows


def _old_cache_file(out: Path, log_dir: Path, code: Path, version: str) -> Path:
    """Where the pickle cache of analysis.report.cache (removed) looked for `log_dir`'s
    data: OUT/.dlperf-cache/dlperf-data-<key>.pkl, the key as that module computed it from
    the files and the code of the `analysis` package in `code`."""
    h = hashlib.sha256()
    h.update("\n".join(["1", version, str(log_dir.resolve()), "dlperf", "None",
                        "None"]).encode())
    h.update("\n".join(_stat_rows(sorted(p for p in log_dir.rglob("*") if p.is_file()),
                                  log_dir)).encode())
    h.update(b"")
    h.update("\n".join(_stat_rows(sorted(code.rglob("*.py")), code)).encode())
    return out / ".dlperf-cache" / f"dlperf-data-{h.hexdigest()[:20]}.pkl"


@pytest.fixture(scope="module")
def planted(tmp_path_factory, dlperf_exe):
    """A small campaign, malicious pickles planted where the old cache read them (and
    other names in the output folder), and one `dlperf report` run (English HTML) over it."""
    tmp = tmp_path_factory.mktemp("planted")
    logs, out, marker = tmp / "logs", tmp / "out", tmp / "PWNED"
    write_markers(logs, write_campaign(logs, configs=((1, 1), (1, 8)), repeats=2))
    payload = pickle.dumps(_Payload(marker))
    env = dict(os.environ, TMPDIR=str(tmp))
    code, version = subprocess.run(
        [Path(dlperf_exe).with_name("python"), "-c",
         "import analysis; print(analysis.__file__); print(analysis.__version__)"],
        env=env, cwd=tmp, capture_output=True, text=True, check=True).stdout.split()
    places = [_old_cache_file(out, logs, Path(code).parent, version),
              out / ".dlperf-cache" / "dlperf-data-0.pkl", out / "report_en.pkl"]
    for place in places:
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_bytes(payload)
    done = subprocess.run([dlperf_exe, "report", str(logs), "-o", str(out), "--lang", "en",
                           "--to", "html"], capture_output=True, text=True, env=env,
                          cwd=tmp, timeout=600)
    return done, out, marker


def test_planted_pickles_are_never_loaded(planted):
    done, out, marker = planted
    assert done.returncode == 0, done.stderr
    assert (out / "report_en.html").is_file()
    assert not marker.exists(), "a pickle from the output folder was loaded"


def test_progress_lines_and_no_transport_warning(planted):
    done, _, _ = planted
    lines = done.stderr.splitlines()
    assert "without encryption" not in done.stderr
    assert "Traceback" not in done.stderr
    for step in ("parsing…", "en: executing…", "en: html"):
        assert step in lines, (step, lines)
    assert lines.index("en: executing…") < lines.index("en: html")
    assert "en: pdf" not in lines  # --to html


def test_publish_leaves_no_temporary_files(planted):
    _, out, _ = planted
    tmp = out.parent  # TMPDIR of the run
    assert not list(tmp.glob("dlperf-report-*")), "the build's private folder was left"
    assert not [p for p in out.iterdir() if ".tmp" in p.name]
