#!/usr/bin/python3
"""A spatial transformer's ops (op_rules.md 2.6 #66): F.affine_grid and F.grid_sample's saved tensors,
forward and backward transients; then oneDNN's backward of small-channel convolutions with and
without the input's gradient (the first conv behind grid_sample), under the malloc shim.

    scripts/torch26-env run python3 benchmarks/accuracy/spatial_transformer_probe.py   # PyTorch 2.6 CPU
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
N, C, H, W = 2, 16, 64, 64
x = torch.randn(N, C, H, W, requires_grad=True)
theta0 = torch.randn(N, 6, requires_grad=True)
for it in range(2):
    x.grad = None; theta0.grad = None
    saved = []
    def pack(t): saved.append((tuple(t.shape), t.dtype)); return t
    theta = theta0 * 1.0
    base = heap.current(); heap.reset_peak()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        grid = F.affine_grid(theta.view(-1, 2, 3), x.size(), align_corners=False)
        a1 = heap.current() - base; p1 = heap.peak() - base
        y = F.grid_sample(x, grid, align_corners=False)
    a2 = heap.current() - base; p2 = heap.peak() - base
    g = torch.ones_like(y)
    b0 = heap.current(); heap.reset_peak()
    y.backward(g)
    bp = heap.peak() - b0; ba = heap.current() - b0
    del grid, y, g, theta
X = N * C * H * W * 4; G = N * H * W * 2 * 4
print("saved", saved)
print(f"X={X} G={G}; after affine_grid {a1} (peak {p1}); after grid_sample {a2} (peak {p2}); backward peak {bp} after {ba}")
print(f"in X: fwd peak {p2/X:.3f}, bwd peak {bp/X:.3f}; in G: affine peak {p1/G:.3f}")

def rise(n, cin, cout, k, hw, xgrad, wgrad=True):
    conv = nn.Conv2d(cin, cout, k)
    conv.weight.requires_grad_(wgrad); conv.bias.requires_grad_(wgrad)
    return measure.conv_backward_rise(heap, conv, lambda: torch.randn(n, cin, hw, hw, requires_grad=xgrad))
print("n cin cout k hw | X Y W | rise(w only) rise(x+w) rise(x only) | dx = x+w - w - X")
for n, cin, cout, k, hw in [(2,1,10,5,28),(1,1,10,5,28),(4,1,10,5,28),(2,1,10,5,56),(2,2,10,5,28),(2,4,10,5,28),(2,8,10,5,28),(2,16,10,5,28),(2,1,10,3,28),(2,1,32,5,28),(2,3,16,3,32),(2,3,16,3,64)]:
    X = n*cin*hw*hw*4; Ho = hw-k+1; Y = n*cout*Ho*Ho*4; W = cin*cout*k*k*4
    a = rise(n,cin,cout,k,hw,False); b = rise(n,cin,cout,k,hw,True); c = rise(n,cin,cout,k,hw,True,False)
    col = n*cin*k*k*Ho*Ho*4
    print(f"{n} {cin} {cout} {k} {hw} | {X} {Y} {W} | {a} {b} {c} | dx {b-a-X} col {col} c-X {c-X}")
