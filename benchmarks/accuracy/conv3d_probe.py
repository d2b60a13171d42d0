#!/usr/bin/python3
"""A 3-D convolution's backward on the CPU (oneDNN, fp32): the transient above its gradients
(dX, dW, db), under the malloc shim, after a warm-up, for shapes from torchvision's video ResNets
and variations of channels, map, kernel, batch and threads (op_rules.md 2.6 #51).

    scripts/torch26-env run python3 benchmarks/accuracy/conv3d_probe.py
    GB_THREADS=4 ...   # intra-op threads (default 2)
    ... conv3d_probe.py 2,128,128,4,8,8 2,256,256,4,16,16   # b, C_in, C_out, T, H, W of 3x3x3 convs instead
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

measure.ensure_shim()
import torch  # noqa: E402

# (batch, C_in, C_out, T, H, W, kernel (t, h, w), stride, padding)
SHAPES = [(2, 512, 512, 1, 4, 4, (3, 3, 3), 1, 1), (2, 256, 256, 2, 8, 8, (3, 3, 3), 1, 1), (2, 128, 128, 4, 16, 16, (3, 3, 3), 1, 1),
          (2, 64, 64, 8, 32, 32, (3, 3, 3), 1, 1), (2, 256, 512, 2, 8, 8, (3, 3, 3), 2, 1), (2, 512, 512, 1, 4, 4, (1, 3, 3), 1, (0, 1, 1)),
          (2, 512, 512, 1, 4, 4, (3, 1, 1), 1, (1, 0, 0)), (4, 512, 512, 1, 4, 4, (3, 3, 3), 1, 1), (2, 512, 512, 2, 8, 8, (3, 3, 3), 1, 1),
          (2, 256, 256, 1, 4, 4, (3, 3, 3), 1, 1), (2, 512, 256, 1, 4, 4, (3, 3, 3), 1, 1), (2, 128, 128, 2, 8, 8, (3, 3, 3), 1, 1),
          (1, 512, 512, 1, 4, 4, (3, 3, 3), 1, 1), (8, 512, 512, 1, 4, 4, (3, 3, 3), 1, 1)]


def rise(heap, b, ci, co, t, h, w, k, s, p):
    x = torch.randn(b, ci, t, h, w, requires_grad=True)
    conv = torch.nn.Conv3d(ci, co, k, s, p)
    y = conv(x)
    g = torch.ones_like(y)
    out = []
    for _ in range(3):
        x.grad = None
        conv.zero_grad(set_to_none=True)
        y = conv(x)
        base = heap.current()
        heap.reset_peak()
        y.backward(g)
        grads = x.numel() * 4 + conv.weight.numel() * 4 + co * 4
        out.append(heap.peak() - base - grads)
    X, Y, W = x.numel() * 4, y.numel() * 4, conv.weight.numel() * 4
    return X, Y, W, out


def shapes():
    """Arguments "b,ci,co,t,h,w" (3x3x3, stride 1, padding 1) instead of SHAPES."""
    if len(sys.argv) < 2:
        return SHAPES
    return [tuple(int(v) for v in one.split(",")) + ((3, 3, 3), 1, 1) for one in sys.argv[1:]]


def main():
    heap = measure.Heap()
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads: shape  X Y W  transient above dX+dW+db (three calls)  /W")
    for shape in shapes():
        X, Y, W, out = rise(heap, *shape)
        print(shape, X, Y, W, out, round(min(out) / W, 2), flush=True)


if __name__ == "__main__":
    main()
