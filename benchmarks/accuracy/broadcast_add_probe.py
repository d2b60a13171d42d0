#!/usr/bin/python3
"""a + b with b broadcast (op_rules.md 2.6 #68: a diffusion U-Net's `h + time_emb[..., None, None]`):
what autograd keeps and backward's peak above the incoming gradient, under the malloc shim.

    scripts/torch26-env run python3 benchmarks/accuracy/broadcast_add_probe.py   # PyTorch 2.6 CPU
"""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure
measure.ensure_shim()
import torch
torch.set_num_threads(2)
heap = measure.Heap()
N, C, H, W = 2, 64, 64, 64
for it in range(2):
    h = torch.randn(N, C, H, W, requires_grad=True); e = torch.randn(N, C, requires_grad=True)
    saved = []
    def pack(t): saved.append((tuple(t.shape))); return t
    base = heap.current(); heap.reset_peak()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        a = h * 1.0
        b = e * 1.0
        y = a + b[:, :, None, None]
    fa = heap.current() - base; fp = heap.peak() - base
    g = torch.ones_like(y)
    b0 = heap.current(); heap.reset_peak()
    y.backward(g)
    bp = heap.peak() - b0; ba = heap.current() - b0
    del a, b, y, g
X = N*C*H*W*4; E = N*C*4
print("saved", saved, "X", X, "E", E)
print(f"fwd after {fa} peak {fp} ({fa/X:.3f} X); bwd peak {bp} ({bp/X:.4f} X, -1 X: {(bp-X)})  after {ba}")
