import gzip
import os
import subprocess
import sys

import pytest

from analysis.errors import UsageError
from analysis.logtext import (
    BYTES_PER_LINE,
    DEFAULT_MAX_LOG_BYTES,
    MAX_BYTES_ENV,
    LogText,
    max_log_bytes,
)
from analysis.problems import excerpt


def test_crlf_and_ansi_are_removed_and_lines_kept():
    raw = b"first\r\n\x1b[4mGPU0\x1b[0m\tGPU1\r\nthird line\r\n"
    log = LogText.from_bytes(raw, "x.log")
    assert log.data == b"first\nGPU0\tGPU1\nthird line\n"
    assert log.line_text(2) == "GPU0\tGPU1"
    assert log.line_text(3) == "third line"
    assert log.problems == []


def test_open_mpi_and_horovod_prefixes_are_stripped_with_rank_kept():
    raw = (b"[1,0]<stdout>:DLL 2020-06-20 10:00:00 - (0, 20) imgs_per_sec : 1.0 \n"
           b"[1,3]<stderr>:INFO:tensorflow:noise\n"
           b"Thu Mar 11 01:53:18 2021[2]<stdout>:DLL x\n"
           b"[default5]:hello\n"
           b"12: iteration 10\n"
           b"plain line\n")
    log = LogText.from_bytes(raw, "x.log")
    lines = log.data.split(b"\n")
    assert lines[0].startswith(b"DLL 2020-06-20")
    assert lines[1] == b"INFO:tensorflow:noise"
    assert lines[2] == b"DLL x"
    assert lines[3] == b"hello"
    assert lines[4] == b"iteration 10"
    assert lines[5] == b"plain line"
    assert log.ranks_at([1, 2, 3, 4, 5, 6]).tolist() == [0, 3, 2, 5, 12, -1]


def test_gzip_is_read_transparently(tmp_path):
    p = tmp_path / "a.log.gz"
    p.write_bytes(gzip.compress(b"one\ntwo\n"))
    assert LogText.read(p).data == b"one\ntwo\n"


def test_undecodable_bytes_are_reported_with_their_line_and_kept():
    raw = b"ok line\nbad \xff\xfe bytes\nlast\n"
    log = LogText.from_bytes(raw, "b.log")
    assert log.data == raw
    [p] = log.problems
    assert (p.kind, p.line, p.source) == ("undecodable_bytes", 2, "b.log")
    assert "0xff" in p.reason and "bad" in p.text


def test_lines_at_maps_offsets_to_one_based_lines():
    log = LogText.from_bytes(b"a\nbb\nccc", "c.log")
    assert log.lines_at([0, 1, 2, 4, 5, 7]).tolist() == [1, 1, 2, 2, 3, 3]
    assert log.line_text(3) == "ccc"


# --- reading is capped (issue 9, item 12) ----------------------------------------------------

def _newline_bomb(path, mib: int) -> None:
    """A gzip of `mib` MiB of newlines, a few KB on disk (members of 1 MiB each)."""
    member = gzip.compress(b"\n" * (1 << 20), compresslevel=9)
    path.write_bytes(member * mib)


def test_a_gzip_bomb_is_never_decompressed_past_the_cap(tmp_path):
    """Peak memory of parsing a 256 MiB newline bomb stays far below its size; the file is
    flagged too_large (before: read whole, ~10 bytes of memory per newline, no problem)."""
    bomb = tmp_path / "bomb.log.gz"
    _newline_bomb(bomb, 256)
    assert bomb.stat().st_size < 300_000
    code = (
        "import resource, sys\n"
        "from analysis.collect import parse_paths\n"
        "parse_paths([sys.argv[2]])  # imports every parser first\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "r = parse_paths([sys.argv[1]])\n"
        "grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
        "print(grown // 1024, ';'.join(r.problems['kind']))\n"
        "print(r.problems['reason'].iloc[0])\n"
    )
    (tmp_path / "small.log").write_text(" iteration 1/ 2 | consumed samples: 1 |\n")
    done = subprocess.run([sys.executable, "-c", code, str(bomb), str(tmp_path / "small.log")],
                          capture_output=True,
                          text=True, timeout=300, env={**os.environ, MAX_BYTES_ENV: "64M"})
    assert done.returncode == 0, done.stderr
    grown_mib, kinds = done.stdout.splitlines()[0].split()
    assert kinds == "too_large;unknown_format"
    assert int(grown_mib) < 64, done.stdout  # at most 2 Mi lines (64 MiB / 32) were read
    assert "more than 2,097,152 lines" in done.stdout and "2,097,152 bytes" in done.stdout


def test_the_caps_keep_whole_lines_and_say_so(tmp_path):
    p = tmp_path / "big.log"
    p.write_bytes((b"x" * 39 + b"\n") * 100)  # 4,000 bytes of 40-byte lines
    log = LogText.read(p, max_bytes=220)
    assert log.data == (b"x" * 39 + b"\n") * 5
    [prob] = log.problems
    assert prob.kind == "too_large" and "more than 220 bytes" in prob.reason
    assert "first 200 bytes (5 lines)" in prob.reason
    assert LogText.read(p, max_bytes=4000).problems == []
    p.write_bytes(b"0123456789\r\n" * 100)  # short lines: the line cap (one per 32 bytes)
    log = LogText.read(p, max_bytes=100)
    assert log.data == b"0123456789\n" * 3  # a CRLF is one line end
    assert "more than 3 lines" in log.problems[0].reason


def test_max_log_bytes_default_environment_and_bad_values(monkeypatch):
    monkeypatch.delenv(MAX_BYTES_ENV, raising=False)
    assert max_log_bytes() == DEFAULT_MAX_LOG_BYTES == 256 << 20
    for text, size in (("512M", 512 << 20), ("8GiB", 8 << 30), ("1000", 1000), ("2 kb", 2048)):
        monkeypatch.setenv(MAX_BYTES_ENV, text)
        assert max_log_bytes() == size
    for bad in ("lots", "-5", "0"):
        monkeypatch.setenv(MAX_BYTES_ENV, bad)
        with pytest.raises(UsageError, match=MAX_BYTES_ENV):
            max_log_bytes()


def test_a_huge_line_becomes_a_short_excerpt_in_problems(tmp_path):
    p = tmp_path / "r50_b256_amp_1.log"
    p.write_bytes(b"x" * 50 + b"\xff" + b"y" * 2_000_000 + b"\n")
    log = LogText.read(p)
    [prob] = log.problems
    assert prob.kind == "undecodable_bytes"
    assert len(prob.text) < 400 and prob.text.startswith("x" * 50)
    assert prob.text.endswith("… [2,000,051 characters]")
    assert excerpt("short") == "short"


def test_the_line_cap_reached_exactly_at_a_read_chunk_boundary(tmp_path):
    p = tmp_path / "blank.log"
    p.write_bytes(b"\n" * (9 << 20))
    limit = BYTES_PER_LINE * (8 << 20)  # 8 Mi lines: exactly the first 8 MiB chunk
    log = LogText.read(p, max_bytes=limit)
    assert len(log.data) == 8 << 20
    assert "more than 8,388,608 lines" in log.problems[0].reason


def test_contains_is_a_substring_test():
    """`contains` (memchr on single bytes first) answers what ``in`` answers, also past the
    first-byte tries and for needles whose bytes are all present but never together."""
    import random

    from analysis.logtext import contains

    rng = random.Random(1)
    for _ in range(2000):
        data = bytes(rng.choice(b"[]<stdefaul \n") for _ in range(rng.randint(0, 3000)))
        for needle in (b"[default", b"]<std", b"la", b"[", b"memory_max_allocated"):
            assert contains(data, needle) == (needle in data), (data, needle)


def test_a_stream_without_line_ends_is_not_held_up_to_the_cap(tmp_path):
    """A gzip bomb of zeros (no line end): reading stops after LONGEST_LINE bytes of one
    line, not at the cap, and says so; memory stays near that line's size."""
    from analysis.logtext import LONGEST_LINE

    bomb = tmp_path / "zeros.log.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as fh:
        block = b"\0" * (1 << 20)
        for _ in range(2 * (LONGEST_LINE >> 20)):  # twice the longest line
            fh.write(block)
    code = (
        "import resource, sys\n"
        "from analysis.logtext import LogText\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "t = LogText.read(sys.argv[1])\n"
        "grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
        "print(grown // 1024, len(t.data), t.problems[0].kind)\n"
        "print(t.problems[0].reason)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    grown_mib, size, kind = done.stdout.splitlines()[0].split()
    assert (size, kind) == ("0", "too_large")
    assert int(grown_mib) < 3 * (LONGEST_LINE >> 20), done.stdout
    assert f"a line of more than {LONGEST_LINE:,} bytes" in done.stdout


def test_a_cut_or_damaged_gzip_gives_the_lines_before_the_damage(tmp_path):
    lines = "".join(f"train: iter {i}, samples/s: {1000 + i}.5\n" for i in range(1, 20001))
    whole = gzip.compress(lines.encode())
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    t = LogText.read(cut)
    assert 0 < t.data.count(b"\n") < 20000 and lines.encode().startswith(t.data)
    assert t.problems[0].kind == "unreadable_file"
    assert "breaks off" in t.problems[0].reason and "Compressed file ended" in t.problems[0].reason
    junk = tmp_path / "junk.log.gz"
    junk.write_bytes(whole + b"junk\n")
    t = LogText.read(junk)
    assert t.data == lines.encode() and "Not a gzipped file" in t.problems[0].reason
    two = tmp_path / "two.log.gz"  # members appended: read as one text, no problem
    two.write_bytes(gzip.compress(b"a\n") + gzip.compress(b"b\n"))
    t = LogText.read(two)
    assert t.data == b"a\nb\n" and t.problems == []
    with pytest.raises(EOFError):  # nothing readable at all: the caller's unreadable_file
        (tmp_path / "head.log.gz").write_bytes(whole[:12])
        LogText.read(tmp_path / "head.log.gz")
