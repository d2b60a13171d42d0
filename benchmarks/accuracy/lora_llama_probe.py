"""Saved bytes of a LoRA'd 2-layer Llama-style decoder (measure26.py's Llama, the reference case
llama2l_b2_t64: vocab 32000, width 256, 8 q / 2 kv heads, ffn 688) under PyTorch 2.6 CPU: every
base weight frozen, PEFT's lora.Linear written by hand (peft is not installed in the root) on the
target projections, saved_tensors_hooks over the model's forward (measure.py saved_bytes_of).

    scripts/torch26-env run python3 benchmarks/accuracy/lora_llama_probe.py

Pinned against models::llama_lora in tests/unit/test_adapters.cpp.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from measure import saved_bytes_of  # noqa: E402
from measure26 import Llama  # noqa: E402


class LoraLinear(nn.Module):
    """peft/tuners/lora/layer.py Linear.forward: base(x) + B(A(dropout(x))) * scaling."""

    def __init__(self, base, r, p):
        super().__init__()
        self.base = base
        self.drop = nn.Dropout(p) if p > 0 else nn.Identity()
        self.A = nn.Linear(base.in_features, r, bias=False)
        self.B = nn.Linear(r, base.out_features, bias=False)
        self.scaling = 16 / r

    def forward(self, x):
        return self.base(x) + self.B(self.A(self.drop(x))) * self.scaling


class LoraEmbedding(nn.Module):
    """peft/tuners/lora/layer.py Embedding.forward: base(x) + (F.embedding(x, A.T) @ B.T) * scaling,
    lora_embedding_A [r, num] (zeros), lora_embedding_B [dim, r]; no dropout (its forward has none)."""

    def __init__(self, base, r):
        super().__init__()
        self.base = base
        self.A = nn.Parameter(torch.zeros(r, base.num_embeddings, dtype=torch.float32))
        self.B = nn.Parameter(torch.randn(base.embedding_dim, r, dtype=torch.float32))
        self.scaling = 16 / r

    def forward(self, x):
        return self.base(x) + (nn.functional.embedding(x, self.A.T) @ self.B.T) * self.scaling


def lora_model(build, targets, r, p, layers=None):
    """The decoder `build()` (seed 0) with every weight frozen and LoraLinear on `targets` of each
    layer ("embed": LoraEmbedding on the model's token embedding); `layers`: PEFT's
    layers_to_transform, the indices of the layers that take adapters (None: all)."""
    torch.manual_seed(0)
    m = build()
    for q in m.parameters():
        q.requires_grad_(False)
    for index, layer in enumerate(m.layers):
        if layers is not None and index not in layers:
            continue
        for name in targets:
            if name != "embed":
                setattr(layer, name, LoraLinear(getattr(layer, name), r, p))
    if "embed" in targets:
        m.embed = LoraEmbedding(m.embed, r)
    return m.train()


def lora_llama(targets, r, p):
    return lora_model(Llama, targets, r, p)


def main():
    print("torch", torch.__version__)
    print("case                                     trainable  saved_bytes")
    ids = torch.randint(0, 32000, (2, 64))
    for targets, label in ((("q", "v"), "q_proj,v_proj"), (("q", "k", "v", "o", "gate", "up", "down"), "all-linear")):
        for p in (0.0, 0.1):
            for autocast in (None, torch.bfloat16):
                m = lora_llama(targets, 8, p)
                trainable = sum(q.numel() for q in m.parameters() if q.requires_grad)
                saved = saved_bytes_of(m, ids, autocast)
                name = "%s p=%.1f %s" % (label, p, "bf16" if autocast else "fp32")
                print("%-40s %9d  %d" % (name, trainable, saved))


if __name__ == "__main__":
    main()
