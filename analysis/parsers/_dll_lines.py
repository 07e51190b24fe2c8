"""Line shapes of DLLogger stdout logs (PyTorch and TensorFlow), without numpy: shared by the
two families' sniffing and by the lean lane of ``dlperf summarize`` (:mod:`analysis.lean`)."""

from __future__ import annotations

import re

DT = rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? - "
# line-start patterns begin with a newline (searched in "\n" + head): a literal prefix is
# searched for fast, where ``^`` with re.M is tried at every byte
PT_STEP = re.compile(rb"\nDLL " + DT + rb"(?:Epoch: \d+ |Summary:|Training Epoch: \d+ )")
TF_STEP = re.compile(rb"\nDLL " + DT + rb"(?:\(|Iteration: )")
PARAM = re.compile(rb"\nDLL " + DT + rb"PARAMETER ")
ANY = re.compile(rb"\nDLL " + DT)
