"""`dlperf topo`: parse saved `nvidia-smi topo -m` output into JSON, CSV or Markdown."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path

COMMAND = "topo"
HELP = "parse a saved `nvidia-smi topo -m` output (validated) into json, csv or markdown"
FORMATS = ("json", "csv", "markdown")


def add_arguments(p) -> None:
    p.add_argument("file", metavar="FILE", help="text file with the output ('-' reads stdin)")
    p.add_argument("--format", choices=FORMATS, default="markdown",
                   help="output format (default markdown)")


#: Bytes of topology text read at most (a 64-GPU matrix with its legend is ~30 KB).
MAX_BYTES = 4 << 20


def run(args) -> int:
    from analysis.env.topo_matrix import TopologyError, parse_topology
    from analysis.errors import UsageError

    stdin = args.file == "-"
    name = "stdin" if stdin else f"topology file {args.file!r}"
    if not stdin and not Path(args.file).is_file():
        raise UsageError(f"{name} does not exist or is not a file")
    with nullcontext(sys.stdin.buffer) if stdin else open(args.file, "rb") as fh:
        raw = fh.read(MAX_BYTES + 1)  # a bound: `cat /dev/zero | dlperf topo -` ends here
    if len(raw) > MAX_BYTES:
        raise UsageError(f"{name} holds more than {MAX_BYTES:,} bytes: no `nvidia-smi topo -m` "
                         "output is that long")
    try:
        topo = parse_topology(raw)
    except TopologyError as exc:
        raise TopologyError(str(exc) if stdin else f"{args.file}: {exc}") from None
    text = {"json": topo.to_json, "csv": topo.to_csv, "markdown": topo.to_markdown}[args.format]()
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
