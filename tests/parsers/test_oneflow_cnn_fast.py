"""The bulk reading of OneFlow CNN training lines agrees with the regex path on any mix of lines."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import parsers
from analysis.logtext import LogText
from analysis.parsers import oneflow_cnn

HEADER = [b"Running resnet50: num_gpu_per_node = 8, num_nodes = 1.", b"batch_size_per_device = 128",
          b"-" * 20, b"Time stamp: 2020-08-21-23:13:45"]
GOOD = b"train: epoch %d, iter %d, loss: %s, top_1: %s, top_k: %s, samples/s: %s%s"
NUMBERS = [b"6.505637", b"0.000000", b"1", b"12.", b"-0.5", b".25", b"5917.583", b"123456789.123",
           b"12345678901234.5", b"1234567890123456789", b"1e5", b"nan", b"None", b"+3", b"1.2.3",
           b"", b"-", b"1,5", b"99999999", b"0.00000001"]
TAILS = [b"", b" 1597933977.6064055", b" 1597933942.98", b" 12", b" 12.", b"  12", b" ", b"\t12",
         b" 1.2.3", b" x", b" 1597933977.60640551234567890", b" 12 ", b"\t"]
ODD = [b"train: epoch 0, iter 5", b"train: epoch x, iter 1, loss: 1", b"validation: epoch 0, iter 1, "
       b"top_1: 0.5, top_k: 0.7, samples/s: 10.5", b"train: epoch 0, iter 1, loss: 1, top_1: 1, top_5: "
       b"1, samples/s: 2 3", b"train: epoch 12345678, iter 1, loss: 1, top_1: 1, top_k: 1, samples/s: 2",
       b"utilization.gpu [%], memory.used [MiB]", b"100 %, 11838 MiB", b"train: epoch ", b"xx"]

line = st.one_of(
    st.builds(lambda e, i, a, b, c, d, t: GOOD % (e, i, a, b, c, d, t),
              st.integers(0, 3), st.integers(0, 10**8), st.sampled_from(NUMBERS[:8]),
              st.sampled_from(NUMBERS), st.sampled_from(NUMBERS[:10]), st.sampled_from(NUMBERS),
              st.sampled_from(TAILS)),
    st.sampled_from(ODD),
)


def _frame(parsed):
    out = []
    for b in parsed.obs.blocks:
        n = b["n"]
        cols = [np.broadcast_to(b[k], (n,)) for k in ("line", "step", "epoch", "value", "timestamp")]
        out += [(str(b["phase"]), str(b["metric"]), *(x.item() for x in row)) for row in zip(*cols)]
    return out


def _both(raw: bytes, monkeypatch):
    parser = parsers.get("oneflow_cnn")
    log = LogText.from_bytes(raw, "a.log")
    fast = parser.parse(log)
    with monkeypatch.context() as m:
        m.setattr(oneflow_cnn, "_fast_train", lambda log: None)
        slow = parser.parse(LogText.from_bytes(raw, "a.log"))
    return fast, slow


def _same(fast, slow):
    a, b = _frame(fast), _frame(slow)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x[:2] == y[:2]
        # bit-identical values (NaN == NaN)
        assert np.array(x[2:], dtype=np.float64).tobytes() == np.array(y[2:], dtype=np.float64).tobytes()
    assert fast.problems == slow.problems


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow,
                                                   HealthCheck.function_scoped_fixture], deadline=None)
@given(st.lists(line, min_size=0, max_size=120), st.booleans())
def test_fast_path_equals_regex_path(monkeypatch, lines, trailing_newline):
    raw = b"\n".join(HEADER + lines) + (b"\n" if trailing_newline else b"")
    _same(*_both(raw, monkeypatch))


def test_fast_path_equals_regex_path_on_a_long_run(monkeypatch):
    rng = np.random.default_rng(1)
    lines = [GOOD % (0, i, b"%.6f" % rng.uniform(0, 8), b"%.6f" % rng.uniform(),
                     b"%.6f" % rng.uniform(), b"%.3f" % rng.uniform(10, 3e6),
                     b" %.7f" % (1.6e9 + i * rng.uniform(0.1, 2))) for i in range(1, 3000)]
    lines[7] = lines[7].replace(b"loss: ", b"loss: 1e-3 ")
    lines[9] = lines[9][:30]
    raw = b"train: epoch 0, iter 0, loss: 1, top_1: 1, top_k: 1, samples/s: 1 1\n" + b"\n".join(HEADER + lines)
    fast, slow = _both(raw, monkeypatch)
    _same(fast, slow)
    assert [p.line for p in fast.problems] == [13, 15]  # lines 7 and 9 after 5 others
    assert len(fast.obs) == 4 * (3000 - 2)


def test_long_run_takes_the_fast_path():
    lines = [GOOD % (0, i, b"1.5", b"0.5", b"0.25", b"1234.5", b" 1597933977.6064055") for i in range(100)]
    pre = oneflow_cnn._fast_train(LogText.from_bytes(b"\n".join(HEADER + lines) + b"\n", "a.log"))
    assert len(pre[0]) >= 97 and len(pre[-1][0]) <= 3
