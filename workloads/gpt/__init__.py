"""GPT pre-training in plain PyTorch: DDP / FSDP2 data parallel, DTensor tensor parallel
(Megatron column/row splits), ``torch.distributed.pipelining`` (GPipe, 1F1B), bf16 autocast
or bf16 weights with fp32 master weights, SDPA flash attention, fused AdamW, synthetic tokens
on the device, optional torch.compile, activation checkpointing and chunked logit layer +
loss. Prints OneFlow GPT style tables (FORMATS.md §3).

    python -m workloads.gpt --hidden-size 1536 --num-layers 16 --num-attention-heads 16
    torchrun --nproc_per_node 4 -m workloads.gpt --tensor-model-parallel-size 2 ...
"""
