"""Property tests: the DLL parsers never raise, and junk lines never hide a good DLL line."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText

FAMILIES = ("dll_pytorch", "dll_tensorflow", "dll_json", "gpu_memory")
GOOD = [
    b"DLL 2020-09-15 14:29:13.473765 - Epoch: 0 Iteration: %d  train.loss : 7.09304  train.total_ips : 267.44 img/s",
    b"DLL 2020-09-15 14:29:14 - Epoch: 0 Iteration: %d  train.loss : nan None train.total_ips : 1.5e+03 images/s ",
]
JUNK = st.one_of(
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")),  # no line breaks
    st.sampled_from([b"DLL", b"DLL ", b"DLL 2020-09-15 14:29:13 -", b"DLL 2020-09-15 14:29:13 - Epoch: x",
                     b"[1,0]<stdout>:INFO:tensorflow:x", b"\x1b[31m", b"DLLL {", b"DLL 9999-99-99 99:99:99 - ()"]),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=400))
def test_parsers_never_raise_on_bytes(raw):
    log = LogText.from_bytes(raw, "x.log")
    for fam in FAMILIES:
        parsed = parsers.get(fam).parse(log)
        assert all(p.kind == "bad_line" for p in parsed.problems)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.sampled_from(GOOD), min_size=1, max_size=80).map(lambda ls: [t % (i + 1) for i, t in enumerate(ls)]))
def test_dll_prefix_variants_never_raise(lines):
    # long enough runs take the fast path; cut lines make odd shapes at the end of the data
    raw = b"\n".join(lines)[:-3]
    parsed = parsers.get("dll_pytorch").parse(LogText.from_bytes(raw, "y.log"))
    assert len(parsed.obs) >= 2 * (len(lines) - 1)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          deadline=None)
@given(st.binary(max_size=300), st.sampled_from(["r50_b128_fp32_1.log", "a.mem", "a.gpu.csv", "a.json"]))
def test_parse_paths_never_raises(tmp_path, raw, name):
    folder = tmp_path / "1n1g"
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(raw)
    result = parse_paths([folder / name])
    assert "parser_error" not in set(result.problems["kind"])


def _rows(parsed, lines_of_good):
    out = []
    for b in parsed.obs.blocks:
        for ln, v, s, t in zip(b["line"], b["value"], b["step"], b["timestamp"], strict=True):
            out.append((lines_of_good[int(ln)], str(b["metric"]), str(b["phase"]),
                        None if np.isnan(v) else float(v), int(s), float(t)))
    return sorted(out)


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.integers(40, 120), st.lists(st.tuples(st.integers(0, 200), JUNK), max_size=30), st.randoms())
def test_junk_never_loses_a_good_line(n, junk, rnd):
    good = [GOOD[rnd.randrange(2)] % (i + 1) for i in range(n)]
    clean = b"\n".join(good) + b"\n" + b"padding line to keep the end away\n" * 3
    mixed_lines, index = [], {}
    jpos = {}
    for at, j in junk:
        jpos.setdefault(at % (n + 1), []).append(j)
    for i, g in enumerate(good):
        mixed_lines.extend(jpos.get(i, []))
        mixed_lines.append(g)
        index[len(mixed_lines)] = i
    mixed_lines.extend(jpos.get(n, []))
    mixed = b"\n".join(mixed_lines) + b"\n" + b"padding line to keep the end away\n" * 3
    p = parsers.get("dll_pytorch")
    a = p.parse(LogText.from_bytes(clean, "c.log"))
    b = p.parse(LogText.from_bytes(mixed, "m.log"))
    assert LogText.from_bytes(mixed, "m.log").data.count(b"\n") == len(mixed_lines) + 3
    want = _rows(a, {i + 1: i for i in range(n)})
    got = [r for r in _rows(b, {**index, **{k: -k for k in range(1, len(mixed_lines) + 1) if k not in index}})
           if r[0] >= 0]
    assert got == want
