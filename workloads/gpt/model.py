"""The GPT model: pre-LayerNorm decoder blocks, learned positions, untied logit layer.

The same class is the whole model and one pipeline stage: :meth:`GPT.keep_layers` drops the
layers (and the embedding / final norm / logit layer) another stage owns. The fused qkv
projection lays its outputs out head by head (``[head][q,k,v][head_dim]``), so a column split
of it into tensor-parallel shards gives every shard whole heads, as Megatron-LM does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


@dataclass(frozen=True)
class GPTConfig:
    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


class Attention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.head_dim = cfg.head_dim
        self.qkv = nn.Linear(cfg.hidden, 3 * cfg.hidden)
        self.proj = nn.Linear(cfg.hidden, cfg.hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        qkv = self.qkv(x).view(b, s, -1, 3, self.head_dim)  # heads of this shard
        q, k, v = (t.transpose(1, 2) for t in qkv.unbind(dim=3))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, s, -1))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc1 = nn.Linear(cfg.hidden, 4 * cfg.hidden)
        self.fc2 = nn.Linear(4 * cfg.hidden, cfg.hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.hidden)
        self.attn = Attention(cfg)
        self.ln2 = nn.LayerNorm(cfg.hidden)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Tokens (first stage) or hidden states in; logits (last stage) or hidden states out.

    `autocast` (a dtype or None) runs the forward under ``torch.autocast``; `checkpointing`
    recomputes each block's activations in the backward pass. With ``logits = False`` the
    last stage ends at the final LayerNorm and the loss applies ``head`` itself
    (:class:`workloads.gpt.chunked_loss.ChunkedHeadLoss`)."""

    def __init__(self, cfg: GPTConfig, autocast: torch.dtype | None = None,
                 checkpointing: bool = False):
        super().__init__()
        self.cfg, self.autocast, self.checkpointing = cfg, autocast, checkpointing
        self.logits = True
        self.tok = nn.Embedding(cfg.vocab, cfg.hidden)
        self.pos = nn.Embedding(cfg.seq, cfg.hidden)
        self.blocks = nn.ModuleDict({str(i): Block(cfg) for i in range(cfg.layers)})
        self.norm = nn.LayerNorm(cfg.hidden)
        self.head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        self._init_weights()

    def _init_weights(self) -> None:
        """GPT-2 initialisation; residual output projections scaled by 1/sqrt(2·layers)."""
        out_std = 0.02 / math.sqrt(2 * self.cfg.layers)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif ".ln" in name or name.startswith("norm."):
                nn.init.ones_(p)
            else:
                std = out_std if name.endswith(("proj.weight", "fc2.weight")) else 0.02
                nn.init.normal_(p, mean=0.0, std=std)

    def keep_layers(self, first: int, stop: int, num_layers: int) -> GPT:
        """Keep blocks [first, stop); the embeddings only when first == 0, the final norm and
        logit layer only when stop == num_layers (a pipeline stage). Returns self."""
        for i in list(self.blocks):
            if not first <= int(i) < stop:
                del self.blocks[i]
        if first > 0:
            self.tok = self.pos = None
        if stop < num_layers:
            self.norm = self.head = None
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast(x.device.type, dtype=self.autocast or torch.float32,
                            enabled=self.autocast is not None):
            if self.tok is not None:
                positions = torch.arange(x.shape[1], device=x.device)
                x = self.tok(x) + self.pos(positions)
            for block in self.blocks.values():
                if self.checkpointing and self.training:
                    x = checkpoint(block, x, use_reentrant=False)
                else:
                    x = block(x)
            if self.norm is not None:
                x = self.norm(x)
                if self.logits:
                    x = self.head(x)
            return x


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy (computed in fp32)."""
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())
