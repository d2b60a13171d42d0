#!/usr/bin/env python3
"""What the ops added on 2026-11-28 keep and allocate on the CPU (op_rules.md U1, U2, and the
activations' rows; cpu-hosts/README.md for the GEMM buffer): for each op on x [2,16,32,32] fp32
(and under CPU autocast bf16 where it differs), the autograd node, the tensors it saves (shape,
storage bytes), the forward's rise over the output and the backward's rise over the input's
gradient, read from measure.py's malloc shim. Then OpenBLAS's GEMM buffer: F.linear's transient
over its output for m·n·k around 64³.

    scripts/torch26-env run python3 benchmarks/accuracy/new_ops_probe.py > benchmarks/accuracy/new_ops_probe_output-2.6.txt
    /usr/bin/python3 benchmarks/accuracy/new_ops_probe.py                 # PyTorch 1.13 (Debian)
"""
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

measure.ensure_shim()
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

heap = measure.Heap()


def storage_bytes(t):
    return t.untyped_storage().nbytes() if hasattr(t, "untyped_storage") else t.numel() * t.element_size()


def probe(name, fn, params=(), autocast=False):
    x = (torch.randn(2, 16, 32, 32) * 1).requires_grad_()
    saved = []
    gc.collect()
    base = heap.current()
    heap.reset_peak()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append((tuple(t.shape), str(t.dtype).split(".")[-1], storage_bytes(t))) or t,
                                                  lambda t: t), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        y = fn(x)
    out = y.numel() * y.element_size()
    forward_extra = heap.peak() - base - out
    g = torch.ones_like(y)
    gc.collect()
    base = heap.current()
    heap.reset_peak()
    grads = torch.autograd.grad(y, [x] + list(params), g)
    backward_extra = heap.peak() - base - sum(t.numel() * t.element_size() for t in grads)
    print("%-28s %-28s out %8d  saves %-60s fwd +%d  bwd +%d" % (name + (" (bf16)" if autocast else ""), type(y.grad_fn).__name__, out,
                                                                 saved, forward_extra, backward_extra), flush=True)


def main():
    print("PyTorch", torch.__version__, "threads", torch.get_num_threads())
    prelu1, prelu16, shuffle = nn.PReLU(), nn.PReLU(16), nn.PixelShuffle(2)
    for autocast in (False, True):
        probe("interpolate nearest x2", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), autocast=autocast)
        probe("interpolate bilinear x2", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), autocast=autocast)
    probe("softplus", F.softplus)
    probe("mish", F.mish)
    probe("prelu (1)", prelu1, prelu1.parameters())
    probe("prelu (16)", prelu16, prelu16.parameters())
    probe("pixel_shuffle 2", shuffle)
    print("F.linear's transient over its output (2 threads): OpenBLAS's GEMM buffer")
    for m, n, k in [(64, 64, 64), (65, 64, 64), (128, 128, 16), (32, 192, 64), (32, 256, 64), (48, 192, 64), (128, 64, 64), (64, 192, 64)]:
        a, w = torch.randn(m, k), torch.randn(n, k)
        F.linear(a, w)
        gc.collect()
        heap.reset_peak()
        y = F.linear(a, w)
        print("  m %4d n %4d k %4d  m·n·k %8d  transient %d" % (m, n, k, m * n * k, heap.peak() - heap.current()), flush=True)
        del y


if __name__ == "__main__":
    main()
