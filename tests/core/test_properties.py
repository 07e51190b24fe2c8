"""Every registered parser survives arbitrary input (property-based)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import parsers
from analysis.logtext import LogText

FAMILIES = parsers.names()
# Bytes biased towards log-like text so the parsers' regexes actually engage.
TOKENS = st.sampled_from([
    b"DLL ", b"DLLL {", b"train: epoch 0, iter ", b"validation: ", b"step: ", b"| step ",
    b" iteration ", b"samples/s: ", b"throughput: ", b"latency", b" : ", b"nan", b"None",
    b"1.5e+03", b"12", b"\n", b"\r\n", b"\t", b"\x1b[4m", b"[1,0]<stdout>:", b"\xff\xfe",
    b"utilization.gpu [%], memory.used [MiB]\n", b"100 %, 11838 MiB", b"max device0 memory usage is: ",
    b"Iteration: ", b"Epoch: ", b"(0, 20)", b"2020-09-15 14:29:13.473765", b" = ", b"|", b",",
])
LOGLIKE = st.lists(st.one_of(TOKENS, st.binary(max_size=8)), max_size=60).map(b"".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.one_of(st.binary(max_size=2000), LOGLIKE))
def test_no_parser_raises_on_arbitrary_bytes(data):
    log = LogText.from_bytes(data, "fuzz.log")
    for name in FAMILIES:
        parsed = parsers.get(name).parse(log)
        n = len(parsed.obs)
        for b in parsed.obs.blocks:
            assert (b["line"] >= 1).all() and (b["line"] <= log.data.count(b"\n") + 1).all()
        assert n >= 0
