#!/usr/bin/python3
"""Per-op memory probes for the ops the model zoo added (op_rules.md §7): MobileNet/EfficientNet
activations (ReLU6, Hardswish, Hardsigmoid, SiLU, in place and not), squeeze-excitation, in-place
dropout, Swin's pad/roll/patch-merging, the RMSNorm, SwiGLU and rotary-embedding op sequences of
Hugging Face's Llama. Same method and output format as op_probe.py (whose `probe` it reuses).

Usage: /usr/bin/python3 benchmarks/accuracy/zoo_op_probe.py [probe-name-substring ...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

if __name__ == "__main__":
    measure.ensure_shim()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import op_probe  # noqa: E402
from op_probe import leaf, probe  # noqa: E402

PROBES = []


def P(name, setup, fn, note=""):
    PROBES.append((name, setup, fn, note))


# In-place activations need a non-leaf input: they follow a BatchNorm2d (x = 256K), as in
# Conv2dNormActivation; compare with op_probe.py's bn_relu_inplace.
for nm, act in [("bn_relu6_inplace", nn.ReLU6(inplace=True)), ("bn_relu6", nn.ReLU6()),
                ("bn_hardswish_inplace", nn.Hardswish(inplace=True)), ("bn_hardswish", nn.Hardswish()),
                ("bn_silu_inplace", nn.SiLU(inplace=True)), ("bn_silu", nn.SiLU()),
                ("bn_hardsigmoid", nn.Hardsigmoid()), ("bn_dropout_inplace", nn.Dropout(0.2, inplace=True))]:
    P(nm, (lambda a: lambda: (nn.Sequential(nn.BatchNorm2d(32), a), [leaf(2, 32, 32, 32)]))(act),
      lambda m, x: m(x), "x=256K")


class SE(nn.Module):  # torchvision.ops.SqueezeExcitation with MobileNetV3's gate
    def __init__(self, c, s, act, gate):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.fc1, self.fc2, self.act, self.gate = nn.Conv2d(c, s, 1), nn.Conv2d(s, c, 1), act, gate

    def forward(self, x):
        x = self.bn(x)
        scale = self.gate(self.fc2(self.act(self.fc1(F.adaptive_avg_pool2d(x, 1)))))
        return scale * x


P("bn_se_hardsigmoid", lambda: (SE(32, 8, nn.ReLU(), nn.Hardsigmoid()), [leaf(2, 32, 32, 32)]), lambda m, x: m(x),
  "x=256K (BN output 256K)")
P("bn_se_sigmoid_silu", lambda: (SE(32, 8, nn.SiLU(inplace=True), nn.Sigmoid()), [leaf(2, 32, 32, 32)]),
  lambda m, x: m(x), "x=256K")
P("pad_zero", lambda: (None, [leaf(2, 32, 32, 32)]), lambda m, x: F.pad(x, (0, 0, 0, 0, 0, 0)), "x=256K")
P("roll", lambda: (None, [leaf(2, 32, 32, 32)]), lambda m, x: torch.roll(x, (-3, -3), (1, 2)), "x=256K")
P("patch_merging_cat", lambda: (None, [leaf(2, 32, 32, 32)]),
  lambda m, x: torch.cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :]], -1),
  "x=256K out=256K")


class RMS(nn.Module):  # transformers' LlamaRMSNorm
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        h = x.to(torch.float32)
        v = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(v + 1e-6)
        return self.weight * h.to(x.dtype)


P("rms_norm", lambda: (RMS(256), [leaf(4, 64, 256)]), lambda m, x: m(x), "x=256K rows=256")


class SwiGLU(nn.Module):  # transformers' LlamaMLP
    def __init__(self, d, f):
        super().__init__()
        self.gate, self.up, self.down = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False), nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


P("swiglu", lambda: (SwiGLU(256, 512), [leaf(4, 64, 256)]), lambda m, x: m(x), "x=256K hidden=512K")


def rotate_half(x):
    return torch.cat((-x[..., x.shape[-1] // 2:], x[..., : x.shape[-1] // 2]), dim=-1)


def rope(q, cos, sin):
    return q * cos + rotate_half(q) * sin


P("rotary_q", lambda: (None, [leaf(2, 64, 4, 32), torch.randn(2, 1, 64, 32), torch.randn(2, 1, 64, 32)]),
  lambda m, q, c, s: rope(q.transpose(1, 2), c, s), "q=64K (a [B,T,h,d].transpose(1,2) view), cos=sin=16K")


if __name__ == "__main__":
    op_probe.main(PROBES)
