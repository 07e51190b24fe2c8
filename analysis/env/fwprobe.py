"""Import one framework and print its versions as JSON (run in a child process).

Run by :mod:`analysis.env.software` as ``python -c <this file's text> NAME`` so that a slow,
crashing or hanging framework import cannot take the capture down. It imports nothing from
``analysis`` (that would cost a second per probe). Output: one JSON object with ``version``
and, where the framework states them, ``cuda``, ``cudnn``, ``nccl``; or ``error``.
"""

import json
import sys


def _dotted(v):
    """An integer version as dotted text: 4 digits are M.m.pp (cuDNN 8902 = 8.9.2, NCCL
    2708 = 2.7.8), 5 or more MM.mm.pp (cuDNN 90100 = 9.1.0, NCCL 22105 = 2.21.5); a tuple
    (NCCL's) joined with dots."""
    if isinstance(v, (tuple, list)):
        return ".".join(str(x) for x in v)
    if not isinstance(v, int) or v <= 0:
        return str(v) if v else None
    if v >= 10000:
        return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
    return f"{v // 1000}.{v % 1000 // 100}.{v % 100}"


def _try(fn):
    try:
        return fn()
    except Exception:  # a CPU build or an old release lacks the function: leave it out
        return None


def torch_info():
    import torch

    return {"version": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": _try(lambda: _dotted(torch.backends.cudnn.version())),
            "nccl": _try(lambda: _dotted(torch.cuda.nccl.version()))}


def oneflow_info():
    import oneflow

    sysconfig = getattr(oneflow, "sysconfig", None)
    return {"version": getattr(oneflow, "__version__", None),
            "cuda": _try(lambda: str(sysconfig.get_cuda_version())),
            "git_commit": _try(lambda: oneflow.__git_commit__)}


def tensorflow_info():
    import tensorflow as tf

    build = _try(tf.sysconfig.get_build_info) or {}
    return {"version": tf.__version__, "cuda": build.get("cuda_version"),
            "cudnn": build.get("cudnn_version")}


def paddle_info():
    import paddle

    return {"version": paddle.__version__, "cuda": _try(paddle.version.cuda),
            "cudnn": _try(paddle.version.cudnn), "nccl": _try(lambda: str(paddle.version.nccl()))}


PROBES = {"torch": torch_info, "oneflow": oneflow_info, "tensorflow": tensorflow_info,
          "paddle": paddle_info}


def main(argv):
    name = argv[1] if len(argv) > 1 else ""
    if name not in PROBES:
        out = {"error": f"unknown framework {name!r}; valid: {', '.join(sorted(PROBES))}"}
    else:
        try:
            out = {k: v for k, v in PROBES[name]().items() if v not in (None, "", "None")}
        except BaseException as exc:  # noqa: BLE001 - report any import failure as data
            out = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
