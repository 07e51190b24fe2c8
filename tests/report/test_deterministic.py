"""The same logs and code give the same report files, byte for byte: no cell ids drawn at
random, no timings, no temporary build paths, no PDF creation time."""

from __future__ import annotations

import subprocess

import pytest
import synth

from analysis.report import webpdf

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    """The en report of one synthetic campaign built twice, into sibling folders."""
    from analysis.report.publish import publish

    root = tmp_path_factory.mktemp("deterministic")
    logs = root / "logs"
    synth.write_markers(logs, synth.write_campaign(logs, configs=((1, 1), (1, 8)), repeats=2))
    return [publish(logs, root / name, langs="en", to="html,pdf", progress=None)
            for name in ("first", "second")]


def test_two_builds_write_the_same_bytes(two_builds):
    first, second = two_builds
    assert sorted(first.files["en"]) == ["html", "ipynb", "json", "pdf"]
    for kind, path in first.files["en"].items():
        assert path.read_bytes() == second.files["en"][kind].read_bytes(), kind


def test_written_notebook_names_no_build_folder_and_no_times(two_builds):
    text = two_builds[0].files["en"]["ipynb"].read_text(encoding="utf-8")
    assert "dlperf-report-" not in text
    assert str(two_builds[0].out_dir) not in text
    for key in ('"start_time"', '"end_time"', '"duration"', '"iopub.execute_input"'):
        assert key not in text, key
    assert '"id": "injected-parameters"' in text


def test_pdf_links_nothing_on_the_build_machine(two_builds):
    """The HTML links the logs relative to itself; printed from a temporary copy, such a
    link became file:///tmp/dlperf-report-XXXX/... (a new name each build, a dead link for
    every reader). In the PDF the paths stay text; in-document links stay links."""
    html = two_builds[0].files["en"]["html"].read_text(encoding="utf-8")
    assert 'href="../logs/1n1g/' in html
    pdf = two_builds[0].files["en"]["pdf"].read_bytes()
    assert b"/URI (file:" not in pdf and b"dlperf-report-" not in pdf
    assert b"/Dest" in pdf or b"/GoTo" in pdf  # the contents still jump to their sections


def test_pdf_dates_are_fixed_at_the_same_length():
    pdf = (b"<</Producer (Skia/PDF m156)\n/CreationDate (D:20261122173853+00'00')\n"
           b"/ModDate (D:20261122173853+00'00')>>")
    fixed = webpdf.with_fixed_dates(pdf, epoch=86400)
    assert len(fixed) == len(pdf)
    assert fixed.count(b"(D:19700102000000+00'00')") == 2
    assert webpdf.with_fixed_dates(b"/CreationDate (D:20200101000000Z)", 0) == \
        b"/CreationDate (D:19700101000000Z)"


@pytest.mark.parametrize("value, epoch", [(None, 0), ("1700000000", 1700000000)])
def test_source_date_epoch(monkeypatch, value, epoch):
    if value is None:
        monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    else:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    assert webpdf.source_date_epoch() == epoch


@pytest.mark.parametrize("value", ["yesterday", "-1", "253402300800"])
def test_bad_source_date_epoch_is_a_usage_error(monkeypatch, value):
    from analysis.errors import UsageError

    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    with pytest.raises(UsageError, match="SOURCE_DATE_EPOCH"):
        webpdf.source_date_epoch()


def test_the_commit_shown_ignores_commits_of_generated_reports(tmp_path):
    """Committing rebuilt reports must not change the commit the next build shows."""
    from analysis.suite_version import suite_commit

    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              cwd=tmp_path, capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    (tmp_path / "analysis.py").write_text("x = 1\n")
    git("add", "."), git("commit", "-qm", "code")
    code = git("rev-parse", "--short", "HEAD").strip()
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "report_en.html").write_text("<p>1</p>\n")
    git("add", "."), git("commit", "-qm", "reports")
    assert suite_commit(tmp_path) == code != git("rev-parse", "--short", "HEAD").strip()
