"""Built-in benchmark workloads (plain PyTorch), run by campaigns on the machines measured.

``workloads.resnet``: ResNet-50 v1.5 trained with DDP (``python -m workloads.resnet``).
``workloads.gpt``: GPT pre-training with data, tensor and pipeline parallelism
(``python -m workloads.gpt``). ``workloads.dist``: the process's place in the job and
process-group set-up, shared by both. Modules here import only the standard library and
torch (never ``analysis``), so they run where the analysis library's dependencies are not
installed.
"""
