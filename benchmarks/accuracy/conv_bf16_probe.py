#!/usr/bin/python3
"""The backward peak of one Conv2d under CPU autocast bf16 (op_rules.md 2.6 #45, an observation, not
yet a rule): x[B, C_in, H, W] fp32 through the conv in bf16, y.backward(g) under the malloc shim, the
peak above the live bytes before it, against X16 (the input's bf16 bytes).

    scripts/torch26-env run python3 benchmarks/accuracy/conv_bf16_probe.py
"""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure
measure.ensure_shim()
import torch
h = measure.Heap()
torch.set_num_threads(2)
def probe(cin, cout, k, hw, B=2, dt=torch.bfloat16, st=1, xg=True):
    conv = torch.nn.Conv2d(cin, cout, k, padding=k // 2, stride=st)
    x = torch.randn(B, cin, hw, hw, requires_grad=xg)
    for _ in range(2):
        with torch.autocast("cpu", dtype=dt):
            y = conv(x)
        g = torch.randn_like(y)
        base = h.current(); h.reset_peak()
        y.backward(g)
        peak = h.peak() - base
        x.grad = None; conv.weight.grad = None; conv.bias.grad = None
        del y, g
    X = B * cin * hw * hw * 2; Y = B * cout * hw * hw * 2; W = cout * cin * k * k * 4
    return peak, X, Y, W
CASES = [  # C_in, C_out, k, H = W, stride, x needs grad, threads, batch
    (16, 16, 3, 64, 1, True, 2, 2), (32, 32, 3, 64, 1, True, 2, 2), (64, 64, 3, 64, 1, True, 2, 2), (16, 32, 3, 64, 1, True, 2, 2),
    (16, 16, 1, 64, 1, True, 2, 2), (16, 16, 5, 64, 1, True, 2, 2), (16, 16, 3, 64, 2, True, 2, 2), (16, 16, 3, 64, 1, False, 2, 2),
    (16, 16, 3, 64, 1, True, 1, 2), (16, 16, 3, 64, 1, True, 4, 2), (16, 16, 3, 64, 1, True, 2, 1), (16, 16, 3, 64, 1, True, 2, 4),
    (32, 32, 3, 32, 1, True, 2, 8)]
for (cin, cout, k, hw, st, xg, t, B) in CASES:
    torch.set_num_threads(t)
    peak, X, Y, W = probe(cin, cout, k, hw, B=B, st=st, xg=xg)
    print(f"C_in {cin} C_out {cout} k {k} H {hw} stride {st} x.grad {xg} threads {t} batch {B}: backward peak {peak} B = {peak / X:.2f} X16", flush=True)
