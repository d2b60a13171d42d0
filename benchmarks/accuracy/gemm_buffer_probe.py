#!/usr/bin/python3
"""Where OpenBLAS's GEMM buffer sets in (op_rules.md 2.6 #43, #59): the transient of F.linear x[M, K] · W[N, K]ᵀ
above its output, under the malloc shim, three calls each after a warm-up, for products M·N·K around
64³ and 2^19; then (#59) OpenBLAS 0.3.29's small-matrix kernel up to M·N·K = 10^6: a Linear's forward
with M·N around 1200, its backward (both gradients) around 10^6, and torch.bmm per matrix with
contiguous and transposed operands.

    scripts/torch26-env run python3 benchmarks/accuracy/gemm_buffer_probe.py   # PyTorch 2.6, OpenBLAS 0.3.29
    /usr/bin/python3 benchmarks/accuracy/gemm_buffer_probe.py                  # Debian's 1.13, OpenBLAS 0.3.21
    GB_THREADS=4 ...                                                            # intra-op threads (default 2)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

measure.ensure_shim()
import torch  # noqa: E402

SHAPES = [(32, 128, 64), (64, 64, 64), (65, 64, 64), (32, 192, 64), (64, 127, 64), (32, 255, 64), (32, 256, 64), (64, 128, 64),
          (128, 64, 64), (16, 512, 64), (64, 256, 32), (32, 257, 64), (64, 130, 64), (96, 96, 64), (100, 100, 100), (128, 128, 64)]


def transients(heap, m, n, k):
    x, w = torch.randn(m, k), torch.randn(n, k)
    torch.nn.functional.linear(x, w)  # warm-up
    out = []
    for _ in range(3):
        base = heap.current()
        heap.reset_peak()
        y = torch.nn.functional.linear(x, w)
        out.append(heap.peak() - base - y.numel() * 4)
        del y
    return out


# (M, N, K) of a Linear: M·N at 1200 and past it, M·N·K at 10^6 and past it
SMALL_KERNEL = [(2, 256, 1152), (2, 600, 480), (2, 601, 480), (2, 600, 833), (2, 600, 834), (20, 60, 440), (2, 500, 1000),
                (2, 500, 1001), (16, 64, 512), (2, 1024, 256), (2, 1024, 512)]
# (matrices, n, k, m) of a bmm [B, n, k] @ [B, k, m]: per-matrix products below 2^19, in (2^19, 10^6], above
BMM = [(16, 64, 64, 64), (2, 196, 16, 49), (2, 128, 64, 96), (2, 96, 96, 64), (2, 32, 512, 40), (2, 256, 16, 256)]


def linear_backward(heap, m, n, k):
    """The transient of F.linear's backward (input and weight gradients) above the two gradients."""
    x, w = torch.randn(m, k, requires_grad=True), torch.randn(n, k, requires_grad=True)
    for _ in range(2):
        y = torch.nn.functional.linear(x, w)
        g = torch.ones_like(y)
        x.grad = w.grad = None
        base = heap.current()
        heap.reset_peak()
        y.backward(g)
        t = heap.peak() - base - (x.numel() + w.numel()) * 4
    return t


def bmm_transients(heap, b, n, k, m, a_transposed, b_transposed):
    """torch.bmm's forward transient above its output and its backward's above the two gradients,
    an operand a transposed view where asked (of a tensor that needs no gradient: no leaf copies)."""
    base_a = torch.randn(b, k, n, requires_grad=True) if a_transposed else torch.randn(b, n, k, requires_grad=True)
    base_b = torch.randn(b, m, k, requires_grad=True) if b_transposed else torch.randn(b, k, m, requires_grad=True)
    for _ in range(2):
        a = base_a.transpose(1, 2) if a_transposed else base_a * 1
        bb = base_b.transpose(1, 2) if b_transposed else base_b * 1
        base = heap.current()
        heap.reset_peak()
        y = torch.bmm(a, bb)
        forward = heap.peak() - base - y.numel() * 4
        base_a.grad = base_b.grad = None
        g = torch.ones_like(y)
        base = heap.current()
        heap.reset_peak()
        y.backward(g)
        backward = heap.peak() - base - (base_a.numel() + base_b.numel()) * 4
        del y, g, a, bb
    return forward, backward


def main():
    heap = measure.Heap()
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads: M N K  M·N·K  transient above the output (B, three calls)")
    for m, n, k in sorted(SHAPES, key=lambda s: s[0] * s[1] * s[2]):
        print(m, n, k, m * n * k, transients(heap, m, n, k), flush=True)
    print("small-matrix kernel (#59): M N K  M·N·K  M·N  forward  backward")
    for m, n, k in SMALL_KERNEL:
        print(m, n, k, m * n * k, m * n, transients(heap, m, n, k)[1], linear_backward(heap, m, n, k), flush=True)
    print("bmm per matrix (#59): B n k m  n·k·m  (forward, backward) for a, b contiguous / a transposed / b transposed")
    for b, n, k, m in BMM:
        print(b, n, k, m, n * k * m, [bmm_transients(heap, b, n, k, m, ta, tb) for ta, tb in ((False, False), (True, False), (False, True))], flush=True)


if __name__ == "__main__":
    main()
