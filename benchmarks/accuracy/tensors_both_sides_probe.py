#!/usr/bin/python3
"""What autograd keeps and backward allocates for arithmetic with tensors on both sides (op_rules.md
2.6 #63-#64): x.std / x.var, a / b (b equal or broadcast), a - b (b broadcast), torch.maximum,
torch.minimum, a (C,) bias added, a softmax over another dimension, torch.stack. Saved tensors by
saved_tensors_hooks, backward's peak above its start under the malloc shim, each after a warm-up.

    scripts/torch26-env run python3 benchmarks/accuracy/tensors_both_sides_probe.py   # PyTorch 2.6 CPU
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
def run(name, f, shapes):
    xs = [torch.randn(*s, requires_grad=True) for s in shapes]
    for _ in range(2):
        for x in xs: x.grad = None
        saved = []
        def pack(t): saved.append(tuple(t.shape)); return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = f(*xs)
        g = torch.ones_like(out)
        base = heap.current(); heap.reset_peak()
        out.backward(g)
        peak = heap.peak() - base; after = heap.current() - base
    n = 1
    for d in shapes[0]: n *= d
    print(f"{name}: saved {saved}; bwd peak {peak} = {peak/(4*n):.2f} x; after {after/(4*n):.2f} x")
S = (2, 256, 512)
run("std", lambda x: x.std(-1, keepdim=True), [S])
run("var", lambda x: x.var(-1, keepdim=True, unbiased=False), [S])
run("var hw", lambda x: x.var((1, 2), keepdim=True, unbiased=False), [(2, 64, 32, 64)])
run("div bcast", lambda a, b: a / b, [S, (2, 256, 1)])
run("div same", lambda a, b: a / b, [S, S])
run("sub bcast", lambda a, b: a - b, [S, (2, 256, 1)])
run("sub same", lambda a, b: a - b, [S, S])
run("maximum", lambda a, b: torch.maximum(a, b), [S, S])
run("add bias", lambda a, b: a + b, [S, (512,)])

def run_fwd_bwd(name, f, shape):
    x = torch.randn(*shape, requires_grad=True)
    for _ in range(2):
        x.grad = None
        saved = []
        def pack(t): saved.append(tuple(t.shape)); return t
        base = heap.current(); heap.reset_peak()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = f(x)
        fpeak = heap.peak() - base; fafter = heap.current() - base
        g = torch.ones_like(out)
        base = heap.current(); heap.reset_peak()
        out.backward(g)
        peak = heap.peak() - base; after = heap.current() - base
    n = x.numel() * 4
    print(f"{name}: saved {saved}; fwd peak {fpeak/n:.2f} after {fafter/n:.2f}; bwd peak {peak/n:.2f} x; after {after/n:.2f} x")
run_fwd_bwd("softmax last", lambda x: x.softmax(-1), (2, 2, 64, 32, 32))
run_fwd_bwd("softmax dim1 5d", lambda x: x.softmax(1), (2, 2, 64, 32, 32))
run_fwd_bwd("softmax dim1 5d small", lambda x: x.softmax(1), (2, 2, 64, 1, 1))
run_fwd_bwd("softmax dim1 3d", lambda x: x.softmax(1), (2, 64, 128))
run_fwd_bwd("stack", lambda x: torch.stack([x * 2, x * 3], 1), (2, 64, 32, 32))
run_fwd_bwd("minimum", lambda x: torch.minimum(x * 2, x * 3), (2, 64, 32, 32))
