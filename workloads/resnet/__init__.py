"""Built-in PyTorch workload: ResNet-50 v1.5 trained with DDP on synthetic, device-resident data.

Run it as ``python -m workloads.resnet [options]``, alone or under ``torchrun``; global rank 0
prints NVIDIA DeepLearningExamples-style DLLogger lines (``DLL <datetime> - ...``) to stdout.
The modules of this package import only the standard library and torch, so the workload runs
on machines where the rest of the suite's dependencies are not installed.
"""
