#!/usr/bin/python3
"""Where OpenBLAS's GEMM buffer sets in (op_rules.md 2.6 #43): the transient of F.linear x[M, K] · W[N, K]ᵀ
above its output, under the malloc shim, three calls each after a warm-up, for products M·N·K around
64³ and 2^19.

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


def main():
    heap = measure.Heap()
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads: M N K  M·N·K  transient above the output (B, three calls)")
    for m, n, k in sorted(SHAPES, key=lambda s: s[0] * s[1] * s[2]):
        print(m, n, k, m * n * k, transients(heap, m, n, k), flush=True)


if __name__ == "__main__":
    main()
