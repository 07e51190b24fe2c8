"""`dlperf topo`: parse saved `nvidia-smi topo -m` output into JSON, CSV or Markdown."""

from __future__ import annotations

import sys
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
    from analysis.env.topo_matrix import parse_topology, read_topology
    from analysis.errors import UsageError

    if args.file == "-":
        raw = sys.stdin.buffer.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise UsageError(f"stdin holds more than {MAX_BYTES:,} bytes: no `nvidia-smi topo "
                             "-m` output is that long")
        topo = parse_topology(raw)
    else:
        path = Path(args.file)
        if not path.is_file():
            raise UsageError(f"topology file {args.file!r} does not exist or is not a file")
        if path.stat().st_size > MAX_BYTES:
            raise UsageError(f"topology file {args.file!r} holds more than {MAX_BYTES:,} bytes: "
                             "no `nvidia-smi topo -m` output is that long")
        topo = read_topology(path)
    text = {"json": topo.to_json, "csv": topo.to_csv, "markdown": topo.to_markdown}[args.format]()
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
