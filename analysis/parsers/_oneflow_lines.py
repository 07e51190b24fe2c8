"""Line shapes of OneFlow-Benchmark CNN logs, without numpy: shared by the family module
(:mod:`analysis.parsers.oneflow_cnn`) and the lean lane of ``dlperf summarize``
(:mod:`analysis.lean`)."""

from __future__ import annotations

import re

BANNER = re.compile(rb"^Running ([^\s:]+): num_gpu_per_node = (\d+), num_nodes = (\d+)\.?[ \t]*$",
                    re.M)
DUMP_LINE = re.compile(rb"^([A-Za-z_][A-Za-z0-9_]*) = ([^\n]*?)[ \t]*$", re.M)
DUMP_END = re.compile(rb"^(?:-{10,}|Time stamp: )", re.M)
#: Bytes from the banner (or the file start) within which the dump is searched.
HEADER_SPAN = 1 << 16

TRAIN_ANCHOR = b"train: epoch "
VAL_ANCHOR = b"validation: epoch "

SNIFF_TRAIN = re.compile(rb"\n(?:train|validation): epoch \d+, iter \d+, ")  # in "\n" + head
