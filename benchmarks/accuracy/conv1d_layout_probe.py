#!/usr/bin/python3
"""A 1-D convolution fed a channels-last-strided input ([B, L, C].transpose(1, 2), as a text CNN's
embedding) against the same convolution on a contiguous [B, C, L] input: the transient above its
output (forward) and above its gradients (backward), under the malloc shim, after two warm-up
calls, for dense and depthwise shapes (op_rules.md 2.6 #56).

    scripts/torch26-env run python3 benchmarks/accuracy/conv1d_layout_probe.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

measure.ensure_shim()
import torch  # noqa: E402
from conv_channel_blocks_probe import transients  # noqa: E402

# (batch, C_in, C_out, L, kernel, stride, groups)
SHAPES = [(16, 64, 32, 64, 3, 1, 1), (16, 64, 32, 64, 5, 1, 1), (2, 64, 32, 64, 3, 1, 1), (64, 64, 32, 64, 3, 1, 1),
          (16, 128, 128, 256, 3, 1, 1), (16, 64, 64, 512, 7, 1, 1), (16, 32, 64, 256, 3, 2, 1), (16, 256, 64, 128, 1, 1, 1),
          (16, 64, 64, 128, 3, 1, 64)]


def layout_transients(heap, b, ci, co, L, k, s, groups, transposed):
    """The conv's (forward, backward) transients on a [B, C, L] input, or on a [B, L, C] one transposed."""
    def make_input():
        src = torch.randn(b, L, ci, requires_grad=True) if transposed else torch.randn(b, ci, L, requires_grad=True)
        return src, src.transpose(1, 2) if transposed else src
    return transients(heap, torch.nn.Conv1d(ci, co, k, s, groups=groups), make_input)[:2]


def main():
    heap = measure.Heap()
    print("shape (b, C_in, C_out, L, k, stride, groups) | X | forward: contiguous, transposed, difference / X | backward: the same")
    for shape in SHAPES:
        X = shape[0] * shape[1] * shape[3] * 4
        (f0, b0), (f1, b1) = (layout_transients(heap, *shape, t) for t in (False, True))
        print(f"{shape} | {X} | {f0} {f1} {(f1 - f0) / X:.3f} | {b0} {b1} {(b1 - b0) / X:.3f}", flush=True)


if __name__ == "__main__":
    main()
