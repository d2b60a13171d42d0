#!/usr/bin/python3
"""Saved bytes of nn.TransformerEncoder with and without masks under CPU autocast bf16 (PyTorch 2.6):
every tensor autograd saves, counted once per storage (a saved_tensors_hooks pack hook), for
custom_models.masked_encoder_stack (2 post-norm layers, d 64, 4 heads, 32 tokens, batch 2, no
dropout: SDPA's flash kernel). Shows that autocast casts the attn_mask SDPA receives to bf16 and that
the cast is what the kernel keeps (op_rules.md 2.6 #76):

    scripts/torch26-env run python3 tests/export/masks_under_autocast.py

2026-12-06: none 402,304 B, causal 402,304, padded 403,328 (+2 x 2·4·32·2), both 435,072
(+2 x 2·4·32·32·2); the budget (--precision amp_bf16 --runtime torch2.6-cpu) 400,256 / 400,256 /
401,280 / 433,024: the masks' bytes to the byte.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import custom_models  # noqa: E402


def saved_bytes(model, x, pad):
    storages = {}

    def pack(t):
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast("cpu", dtype=torch.bfloat16):
        model(x, pad)
    return sum(storages.values())


def main():
    torch.manual_seed(0)
    for causal, padded in ((False, False), (True, False), (False, True), (True, True)):
        model = custom_models.masked_encoder_stack(causal=causal, padded=padded, dropout=0.0).train()
        pad = torch.zeros(2, 32, dtype=torch.bool) if padded else None
        if padded:
            pad[::2, -4:] = True
        print(f"causal={causal} padded={padded}: saved {saved_bytes(model, torch.randn(2, 32, 16), pad)} B")


if __name__ == "__main__":
    main()
