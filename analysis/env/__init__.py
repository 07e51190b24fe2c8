"""Environment and topology capture: what a benchmark ran on, as validated records.

- :func:`capture` -> :class:`EnvRecord` (``save``/``load`` JSON) for this host;
- :func:`parse_topology` -> :class:`Topology` for `nvidia-smi topo -m` text.
"""

from analysis.env.capture import capture
from analysis.env.record import EnvRecord, EnvRecordError
from analysis.env.topo_matrix import Topology, TopologyError, parse_topology, read_topology

__all__ = ["EnvRecord", "EnvRecordError", "Topology", "TopologyError", "capture",
           "parse_topology", "read_topology"]
