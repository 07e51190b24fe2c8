import gzip

from analysis.logtext import LogText


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
