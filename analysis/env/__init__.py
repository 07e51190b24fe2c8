"""Environment and topology capture: what a benchmark ran on, as validated records.

- :func:`capture` -> :class:`EnvRecord` (``save``/``load`` JSON) for this host;
- :func:`parse_topology` -> :class:`Topology` for `nvidia-smi topo -m` text;
- :func:`classify_link` for colouring a topology matrix.
"""

from analysis.env.capture import capture
from analysis.env.links import LinkClass, TopologyError, classify_link
from analysis.env.record import EnvRecord, EnvRecordError
from analysis.env.topo_matrix import Topology, parse_topology, read_topology

__all__ = ["EnvRecord", "EnvRecordError", "LinkClass", "Topology", "TopologyError", "capture",
           "classify_link", "parse_topology", "read_topology"]
