#!/usr/bin/python3
"""oneDNN's 16-channel blocks in 2-D convolutions on the 2.6 CPU (fp32, 2 threads), under the malloc
shim, after two warm-up calls (op_rules.md 2.6 #58):

- a dense Conv2d's backward (input and weight gradients) with fewer than 16 output channels, or a
  count that is not a multiple of 16: the transient above its gradients against X + Yp, Yp the
  output padded to a multiple of 16 channels (a U-Net's 1x1 conv to 2 classes);
- a ConvTranspose2d whose input channels are not a multiple of 16 (DCGAN's 100-channel latent):
  the forward transient above its output and the backward transient above its gradients against
  the weight padded to a multiple of 16 input channels, Wp.

    scripts/torch26-env run python3 benchmarks/accuracy/conv_channel_blocks_probe.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

measure.ensure_shim()
import torch  # noqa: E402


def transients(heap, conv, make_input):
    """`conv`'s transient above its output in forward and above its gradients in backward, the
    third of three calls; `make_input()` gives (the leaf that takes the gradient, the conv's input)."""
    for _ in range(3):
        leaf, x = make_input()
        conv.zero_grad(set_to_none=True)
        base = heap.current()
        heap.reset_peak()
        y = conv(x)
        forward = heap.peak() - base - y.numel() * 4
        g = torch.ones_like(y)
        base = heap.current()
        heap.reset_peak()
        y.backward(g)
        grads = leaf.numel() * 4 + sum(p.numel() * 4 for p in conv.parameters())
        backward = heap.peak() - base - grads
        Y = y.numel() * 4
        del y, g, x, leaf
    return forward, backward, Y


def leaf_input(*shape):
    return lambda: (lambda t: (t, t))(torch.randn(*shape, requires_grad=True))


def padded(n):
    return (n + 15) // 16 * 16


def main():
    heap = measure.Heap()
    print("dense Conv2d backward: (b, C_in, C_out, H, k) | X | Y | measured | X + Yp | measured / (X + Yp)")
    for b, ci, co, h, k in [(2, 16, 1, 64, 1), (2, 16, 2, 64, 1), (2, 16, 3, 64, 1), (2, 16, 8, 64, 1), (2, 16, 12, 64, 1), (2, 16, 16, 64, 1),
                            (2, 64, 2, 32, 1), (2, 64, 8, 32, 1), (2, 16, 2, 64, 3), (2, 16, 8, 64, 3), (8, 16, 2, 64, 1), (2, 32, 24, 32, 3)]:
        _, bw, Y = transients(heap, torch.nn.Conv2d(ci, co, k, 1, k // 2), leaf_input(b, ci, h, h))
        X = b * ci * h * h * 4
        expect = X + Y // co * padded(co)
        print(f"({b}, {ci}, {co}, {h}, {k}) | {X} | {Y} | {bw} | {expect} | {bw / expect:.3f}", flush=True)
    print("ConvTranspose2d(C_in, C_out, 4, stride, padding): (b, C_in, C_out, H, stride, padding) | W | Wp | forward, forward / (Y + Wp) | backward, backward / Wp")
    for b, ci, co, h, s, p in [(2, 100, 256, 1, 1, 0), (2, 100, 64, 1, 1, 0), (2, 40, 256, 1, 1, 0), (2, 200, 256, 2, 2, 1), (2, 256, 128, 4, 2, 1)]:
        conv = torch.nn.ConvTranspose2d(ci, co, 4, s, p, bias=False)
        fw, bw, Y = transients(heap, conv, leaf_input(b, ci, h, h))
        W = conv.weight.numel() * 4
        Wp = W // ci * padded(ci)
        print(f"({b}, {ci}, {co}, {h}, {s}, {p}) | {W} | {Wp} | {fw} {fw / (Y + Wp):.3f} | {bw} {bw / Wp:.3f}", flush=True)


if __name__ == "__main__":
    main()
