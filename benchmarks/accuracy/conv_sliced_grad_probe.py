#!/usr/bin/python3
"""A convolution's backward given its gradient as a slice of a torch.cat / torch.stack along dim 1
(strided at batch > 1) against a contiguous one (op_rules.md 2.6 #64): backward's rise above its start
in units of the output's bytes Y, under the malloc shim.

    scripts/torch26-env run python3 benchmarks/accuracy/conv_sliced_grad_probe.py   # PyTorch 2.6 CPU
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

measure.ensure_shim()
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(int(os.environ.get("GB_THREADS", "2")))
heap = measure.Heap()
def rise(k, sliced, dim=1, cin=32, cout=32, hw=64):
    conv = nn.Conv2d(cin, cout, k, padding=k // 2)
    x = torch.randn(2, cin, hw, hw, requires_grad=True)
    for _ in range(2):
        x.grad = None; conv.zero_grad(set_to_none=True)
        y = conv(x)
        if sliced:
            big = torch.randn(2, 3, cout, hw, hw) if dim == "stack" else torch.randn(2, 3 * cout, hw, hw)
            g = big[:, 1] if dim == "stack" else big[:, cout:2 * cout]
        else:
            g = torch.randn_like(y)
        base = heap.current(); heap.reset_peak()
        y.backward(g)
        r = heap.peak() - base
    Y = y.numel() * 4
    return r / Y
for k in (1, 3, 5):
    print(k, "contiguous %.2f  cat-slice %.2f  stack-slice %.2f (x Y)" % (rise(k, False), rise(k, True), rise(k, True, "stack")))
print("cin 64 cout 32 k3", "contiguous %.2f  cat-slice %.2f" % (rise(3, False, cin=64), rise(3, True, cin=64)))
print("hw 32 k3", "contiguous %.2f  cat-slice %.2f" % (rise(3, False, hw=32), rise(3, True, hw=32)))
