"""Whether :func:`analysis.parsers.detect` takes a log for the family a lean reader reads it
as, decided without importing the families (they need numpy).

``detect`` asks each family whose markers occur in the (lower-cased) head; the highest score
wins, the first in name order on a tie, and a score of 90 on the first 4 KiB ends the search.
A lean reader reads a log only when its own family scores at least 90 on those 4 KiB, so the
log is that family's unless another family could score more (or as much, coming first):
such a family must not be asked, i.e. none of its markers may occur. The markers and top
scores are copied here as data; tests/lean/test_lean_sniff.py checks them against the
registry, so a new or changed family cannot slip past.
"""

from __future__ import annotations

from functools import cache

from analysis.logtext import PREFIX_HEAD, has_prefix_at_line_start
from analysis.parsers._oneflow_lines import SNIFF_TRAIN

#: Bytes of a log's head that detect looks at first (`analysis.parsers.SNIFF_SIZES[0]`),
#: and where launcher rank prefixes are looked for.
HEAD = PREFIX_HEAD

#: name: (markers, the highest score its sniff gives), for every registered family.
FAMILIES: dict[str, tuple[tuple[bytes, ...], int]] = {
    "dll_json": ((b"dlll {",), 95),
    "dll_pytorch": ((b"dll ", b"=> creating model", b"running epochs from"), 90),
    "dll_tensorflow": ((b"dll ",), 90),
    "gpu_memory": ((b"memory usage is", b"memory.used"), 95),
    "libai": ((b"utils.events", b"rank of current process: "), 100),
    "megatron": ((b"iteration", b"memory (mb)", b"> building ", b"tensor model parallel"), 90),
    "oneflow_bert": ((b"step: ", b"running bert"), 95),
    "oneflow_cnn": ((b"train: epoch", b"validation: epoch", b"running ",
                     b"loss_print_every_n_iter"), 95),
    "oneflow_gpt": ((b"micro_batches", b"samples=", b"arguments"), 95),
    "oneflow_models": ((b"[train], epoch: ", b"[eval], epoch: ", b"num_devices_per_node ."),
                       100),
    "tf_keras_timehistory": ((b"timehistory: ", b"classifier_trainer.py:"), 95),
}


def _oneflow_cnn_over_90(head: bytes) -> bool:
    """OneFlow CNN scores above 90 only on a training or validation line (its banner: 90)."""
    return SNIFF_TRAIN.search(b"\n" + head) is not None


#: Families whose sniff is known exactly above 90: asked, they win only when this says so
#: (OneFlow CNN's "running " marker is in every DLE PyTorch log's "RUNNING EPOCHS FROM").
_OVER_90 = {"oneflow_cnn": _oneflow_cnn_over_90}


def _probe(marker: bytes) -> bytes:
    """A byte of `marker` that text seldom holds (not a lower-case letter or a space, when
    it has one): looked for first, a search that fails at once in most logs."""
    return next((marker[i:i + 1] for i in range(len(marker)) if not 97 <= marker[i] <= 122
                 and marker[i] != 32), marker[-1:])


@cache
def _rivals(family: str, score: int) -> tuple[tuple[tuple[bytes, bytes], ...], tuple]:
    """(probe byte, marker) of the families that could beat `family` scoring `score`, and
    the exact tests of those known above 90."""
    markers, exact = [], []
    for name, (marks, top) in FAMILIES.items():
        if name == family or not (top > score or (top == score and name < family)):
            continue
        if name in _OVER_90 and (score > 90 or name > family):  # only > 90 can win
            exact.append(_OVER_90[name])
        else:
            markers += marks
    return tuple((_probe(m), m) for m in markers), tuple(exact)


def head_is(family: str, score: int, others: bytes) -> bool:
    """Whether a log whose first HEAD bytes hold, besides lines of `family`'s usual shape
    (which hold no marker and no rank prefix), the lines `others` (joined by newlines) is
    read by the full path as `family` (scoring `score`) with no launcher rank prefixes."""
    return not has_prefix_at_line_start(others) and detected_as(family, score, others)


def detected_as(family: str, score: int, head: bytes) -> bool:
    """Whether detect takes `head` (a log's first HEAD bytes) for `family`, given that
    `family` scores `score` (at least 90) on it."""
    markers, exact = _rivals(family, score)
    lower = head.lower()
    if any(probe in lower and m in lower for probe, m in markers):
        return False
    return not any(test(head) for test in exact)
