"""Built-in benchmark workloads (plain PyTorch), run by campaigns on the machines measured.

``workloads.gpt``: GPT pre-training with data, tensor and pipeline parallelism
(``python -m workloads.gpt``). Modules here import only the standard library and torch
(plus ``analysis.workload.dist``, which does the same), so they run where the analysis
library's dependencies are not installed.
"""
