"""Environment and topology capture: what a benchmark ran on, as validated records.

- :func:`analysis.env.capture.capture` -> :class:`~analysis.env.record.EnvRecord`
  (saved as JSON) for this host;
- :func:`analysis.env.topo_matrix.parse_topology` -> :class:`~analysis.env.topo_matrix.Topology`
  for `nvidia-smi topo -m` text.
"""
