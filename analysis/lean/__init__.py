"""The lean lane of ``dlperf summarize --method dlperf``: plain Python, no numpy or pandas.

DLPerf's own extract scripts read two timestamps per log and are done; the full path
(:func:`analysis.collect.parse_paths`, pandas frames) costs more than that in imports alone.
This lane reads, per log, only the lines the DLPerf rule reads, and only logs it can read
exactly as the full path would: the DLPerf layout, one file per run, the NVIDIA DLE PyTorch
DLLogger and OneFlow CNN families (:mod:`.dll_pytorch`, :mod:`.oneflow_cnn`), every line it
reads of the usual shape, in order, with no problem of any kind. On anything else it gives
up for the whole command (:func:`.lane.summary_rows` returns None) and the full path runs:
the output is the same either way, only the time differs (tests/lean pins both).
"""
