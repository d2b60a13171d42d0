#!/usr/bin/python3
"""Measure what PyTorch (1.13, CPU, fp32) really allocates for one training step.

Reproduces the method behind reference/pytorch-1.13-cpu.json (see reference/README.md next to
this script). measure26.py reuses this file's models and measurement for PyTorch 2.6:

* live heap bytes come from an LD_PRELOAD shim over malloc & co (malloc_shim.c, usable
  sizes); PyTorch's CPU allocator does not cache, so this is the live tensor bytes plus
  small host-side bookkeeping. The script builds the shim with gcc into a temp dir and
  re-executes itself with LD_PRELOAD when it is not loaded yet.
* saved_bytes: torch.autograd.graph.saved_tensors_hooks over the model's forward: the tensors
  packed then whose packs are still alive when forward returns (weak references to them), each
  storage counted once with its whole nbytes (a saved view keeps its base alive), parameter
  storages excluded. A graph autograd frees inside forward holds nothing at its end, though the
  hooks saw its packs: PEFT DoRA's lora_weight = lora_B(lora_A(eye)) saves the identity and
  A(eye), and goes when DoRA's forward returns. Measured in a separate forward so the hooks
  cannot disturb the heap figures. null for non-reentrant checkpointing (its own hooks hide the
  saved tensors).
* resident state = parameters + optimizer state (after one warm-up step) + the input batch;
  gradients freed with zero_grad(set_to_none=True). All *_bytes figures are above it:
  after_forward (forward + loss), fwd_bwd_peak (zero_grad -> forward -> loss -> backward),
  step_peak (the same, through optimizer.step()).
* optimizers: PyTorch 1.13's CPU defaults, i.e. the single-tensor (for-loop) code paths:
  sgd, sgd_momentum (0.9), adam, adamw.

Usage:  /usr/bin/python3 benchmarks/accuracy/measure.py [--cases a,b] [--out f.json]
        [--optimizer NAME] [--compare REF.json] [--list]
"""
import argparse
import ctypes
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM_SRC = os.path.join(HERE, "malloc_shim.c")


# --------------------------------------------------------------------------- shim
def _shim_loaded():
    try:
        lib = ctypes.CDLL(None)
        lib.gb_current  # noqa: B018  (raises AttributeError when absent)
        return True
    except (AttributeError, OSError):
        return False


def ensure_shim():
    """Build malloc_shim.so if needed and re-exec this script under LD_PRELOAD."""
    if _shim_loaded():
        return
    if os.environ.get("GB_SHIM_REEXEC") == "1":
        sys.exit("malloc shim did not load (LD_PRELOAD=%s)" % os.environ.get("LD_PRELOAD"))
    so = os.environ.get("GB_SHIM_SO")
    if not so or not os.path.exists(so):
        d = tempfile.mkdtemp(prefix="gpubudget_shim_")
        so = os.path.join(d, "malloc_shim.so")
        subprocess.check_call(["gcc", "-O2", "-shared", "-fPIC", "-o", so, SHIM_SRC])
    env = dict(os.environ)
    env["LD_PRELOAD"] = so + ((" " + env["LD_PRELOAD"]) if env.get("LD_PRELOAD") else "")
    env["GB_SHIM_REEXEC"] = "1"
    env["GB_SHIM_SO"] = so
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


class Heap:
    def __init__(self):
        lib = ctypes.CDLL(None)
        for f in ("gb_current", "gb_peak", "gb_alloc_count"):
            getattr(lib, f).restype = ctypes.c_longlong
        self.lib = lib

    def current(self):
        return self.lib.gb_current()

    def peak(self):
        return self.lib.gb_peak()

    def reset_peak(self):
        self.lib.gb_reset_peak()


if __name__ == "__main__":
    ensure_shim()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.checkpoint  # noqa: E402

# The reference was taken with 2 intra-op threads. The count matters: oneDNN's convolution
# weight-gradient keeps a per-thread scratch buffer (vit_b_16's 16x16 patch conv: ~9.9 MB per
# thread, so 4 threads read 20 MB higher), and OMP_NUM_THREADS=1 removes OpenBLAS's 512 KiB
# GEMM buffer from mlp_b8's backward. Override with GB_THREADS=n.
torch.set_num_threads(int(os.environ.get("GB_THREADS", "2")))


# --------------------------------------------------------------------------- models
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1024, 4096)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4096, 1024)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Attention(nn.Module):
    """q = Linear(d, d); k, v = one Linear(d, 2d) split; materialized q @ k^T / sqrt(hd).

    Options for the PyTorch 2.x cases (measure26.py; the defaults are the reference's model):
    attn_drop = dropout on the probabilities (GPT-2's attn_pdrop), sdpa = F.scaled_dot_product_attention
    instead of the materialized scores (same projections), causal = causal mask (SDPA only)."""

    def __init__(self, d, heads, attn_drop=0.0, sdpa=False, causal=False):
        super().__init__()
        self.h, self.hd = heads, d // heads
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.proj = nn.Linear(d, d)
        self.attn_drop, self.sdpa, self.causal = attn_drop, sdpa, causal

    def forward(self, xq, xkv=None):
        if xkv is None:
            xkv = xq
        B, T, C = xq.shape
        S = xkv.shape[1]
        q = self.q(xq).view(B, T, self.h, self.hd).transpose(1, 2)
        k, v = self.kv(xkv).split(C, dim=2)
        k = k.view(B, S, self.h, self.hd).transpose(1, 2)
        v = v.view(B, S, self.h, self.hd).transpose(1, 2)
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop if self.training else 0.0,
                                               is_causal=self.causal)
            return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        att = att.softmax(dim=-1)
        if self.attn_drop:
            att = F.dropout(att, self.attn_drop, self.training)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class Block(nn.Module):
    """Pre-norm transformer block: LN -> attention -> +res -> LN -> MLP(GELU) -> +res.
    drop = dropout on each branch before its residual add (GPT-2's resid_pdrop); attention options
    as in Attention."""

    def __init__(self, d, heads, mlp, drop=0.0, **attn):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads, **attn)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, mlp)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(mlp, d)
        self.drop = drop

    def _d(self, x):
        return F.dropout(x, self.drop, self.training) if self.drop else x

    def forward(self, x):
        x = x + self._d(self.attn(self.ln1(x)))
        return x + self._d(self.fc2(self.act(self.fc(self.ln2(x)))))

    def cross(self, xq, xkv):
        """PWCA: queries from LN(xq), keys/values from LN(concat(xq, xkv)) (same LayerNorm)."""
        x = xq + self.attn(self.ln1(xq), self.ln1(torch.cat([xq, xkv], dim=1)))
        return x + self.fc2(self.act(self.fc(self.ln2(x))))


class GPT2(nn.Module):
    """drop = embedding and residual dropout (embd_pdrop, resid_pdrop), attn_drop = dropout on the
    attention probabilities (attn_pdrop), sdpa/causal as in Attention; defaults: the reference's."""

    def __init__(self, ckpt=False, vocab=50257, ctx=1024, d=768, layers=12, heads=12, drop=0.0, attn_drop=0.0,
                 sdpa=False, causal=False):
        super().__init__()
        self.ckpt = ckpt
        self.drop = drop
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList([Block(d, heads, 4 * d, drop=drop, attn_drop=attn_drop, sdpa=sdpa, causal=causal)
                                     for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)

    def forward(self, idx):
        T = idx.shape[1]
        pos = torch.arange(T, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        if self.drop:
            x = F.dropout(x, self.drop, self.training)
        for b in self.blocks:
            if self.ckpt:
                x = torch.utils.checkpoint.checkpoint(b, x, use_reentrant=False)
            else:
                x = b(x)
        return self.ln_f(x) @ self.wte.weight.t()


class DualViT(nn.Module):
    """Seed 001: ViT-B/16 at 448 shared by SA(target), SA(pair) and PWCA paths."""

    def __init__(self, img=448, patch=16, d=768, layers=12, heads=12, classes=200):
        super().__init__()
        n = (img // patch) ** 2 + 1
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.zeros(1, n, d))
        self.blocks = nn.ModuleList([Block(d, heads, 4 * d) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def embed(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        return x + self.pos

    def forward(self, pair):
        x = self.embed(pair[:, 0])
        y = self.embed(pair[:, 1])
        p = x
        for b in self.blocks:
            p = b.cross(p, y)  # keys/values from the pair tokens entering this block
            x = b(x)
            y = b(y)  # the last block's pair update feeds nothing: its graph is freed
        x = self.head(self.norm(x[:, 0]))
        p = self.head(self.norm(p[:, 0]))
        return torch.cat([x, p], dim=1)


def stem(c):
    return nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU())


class UnfoldLocalAttn(nn.Module):
    def __init__(self, c=64, heads=4, k=7):
        super().__init__()
        self.c, self.h, self.k = c, heads, k
        self.qkv = nn.Conv2d(c, 3 * c, 1, bias=False)
        self.proj = nn.Conv2d(c, c, 1)

    def forward(self, x):
        B, C, H, W = x.shape
        h, hd, K = self.h, C // self.h, self.k * self.k
        q, k, v = self.qkv(x).chunk(3, dim=1)
        q = q.reshape(B, h, hd, 1, H * W)
        k = F.unfold(k, self.k, padding=self.k // 2).view(B, h, hd, K, H * W)
        v = F.unfold(v, self.k, padding=self.k // 2).view(B, h, hd, K, H * W)
        att = (q * k).sum(dim=2).softmax(dim=2)  # [B, h, K, HW]
        y = (att.unsqueeze(2) * v).sum(dim=3)  # [B, h, hd, HW]
        return x + self.proj(y.reshape(B, C, H, W))


class DWConvGate(nn.Module):
    def __init__(self, c=64, heads=4, k=7):
        super().__init__()
        self.c, self.h = c, heads
        self.qkv = nn.Conv2d(c, 3 * c, 1, bias=False)
        self.dw = nn.Conv2d(3 * c, 3 * c, k, padding=k // 2, groups=3 * c, bias=False)
        self.norm = nn.GroupNorm(1, c)
        self.proj = nn.Conv2d(c, c, 1)

    def forward(self, x):
        B, C, H, W = x.shape
        h, hd = self.h, C // self.h
        q, k, v = self.dw(self.qkv(x)).chunk(3, dim=1)
        q = q.reshape(B, h, hd, H, W)
        k = k.reshape(B, h, hd, H, W)
        v = v.reshape(B, h, hd, H, W)
        gate = torch.sigmoid((q * k).sum(dim=2, keepdim=True) / math.sqrt(hd))
        y = (gate * v).reshape(B, C, H, W)
        return x + self.proj(self.norm(y))


class BEV(nn.Module):
    def __init__(self, layer, c=64, classes=10):
        super().__init__()
        self.stem = stem(c)
        self.layers = nn.Sequential(layer(c), layer(c))
        self.out = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        return self.out(self.layers(self.stem(x)))


class GATLayer(nn.Module):
    def __init__(self, din, heads=4, dh=32):
        super().__init__()
        self.h, self.dh = heads, dh
        self.lin = nn.Linear(din, heads * dh, bias=False)
        self.a_src = nn.Parameter(torch.randn(heads, dh) * 0.1)
        self.a_dst = nn.Parameter(torch.randn(heads, dh) * 0.1)

    def forward(self, x, src, dst):
        N = x.shape[0]
        z = self.lin(x).view(N, self.h, self.dh)
        e_src = (z * self.a_src).sum(-1)  # [N, h]
        e_dst = (z * self.a_dst).sum(-1)
        logits = F.leaky_relu(e_src[src] + e_dst[dst], 0.2)  # [E, h]
        e = torch.exp(logits - logits.max())  # global max for stability (max() saves logits)
        denom = torch.zeros(N, self.h).index_add_(0, dst, e)
        alpha = e / denom[dst]
        msg = alpha.unsqueeze(-1) * z[src]  # [E, h, dh]
        out = torch.zeros(N, self.h, self.dh).index_add_(0, dst, msg)
        return F.elu(out.reshape(N, self.h * self.dh))


class GAT(nn.Module):
    def __init__(self, vocab=5000, d=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.g1 = GATLayer(d)
        self.g2 = GATLayer(128)
        self.out = nn.Linear(128, 2)

    def forward(self, batch):
        ids, src, dst = batch
        x = self.emb(ids)
        x = self.g1(x, src, dst)
        x = self.g2(x, src, dst)
        return self.out(x)


class Temporal(nn.Module):
    """ckpt_frames: each frame's CNN pass under torch.utils.checkpoint (non-reentrant)."""

    def __init__(self, chans=(64, 128, 256), heads=4, blocks=2, ckpt_frames=False):
        super().__init__()
        self.ckpt = ckpt_frames
        layers, cin = [], 3
        for c in chans:
            layers += [nn.Conv2d(cin, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2)]
            cin = c
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.cnn = nn.Sequential(*layers)
        self.blocks = nn.Sequential(*[Block(cin, heads, 4 * cin) for _ in range(blocks)])
        self.head = nn.Linear(cin, 1)

    def forward(self, x):
        # each frame through the CNN, features stacked over frames
        if self.ckpt:
            f = torch.stack([torch.utils.checkpoint.checkpoint(self.cnn, x[:, t], use_reentrant=False)
                             for t in range(x.shape[1])], dim=1)
        else:
            f = torch.stack([self.cnn(x[:, t]) for t in range(x.shape[1])], dim=1)
        return self.head(self.blocks(f).mean(dim=1))


# --------------------------------------------------------------------------- cases
def _tv(name, **kw):
    import torchvision

    return getattr(torchvision.models, name)(**kw)


def _convnext(frozen):
    m = _tv("convnext_tiny")
    if frozen:
        for n, p in m.named_parameters():
            if not n.startswith("classifier"):
                p.requires_grad_(False)
    return m


def _gat_batch():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 5000, (2000,), generator=g)
    edges = torch.randint(0, 2000, (2, 20000), generator=g)
    return (ids, edges[0], edges[1])


CASES = {
    "mlp_b8": ("Linear(1024,4096)+GELU+Linear(4096,1024), batch 8", "adamw",
               MLP, lambda: torch.randn(8, 1024)),
    "resnet18_b2": ("torchvision resnet18, 224x224, batch 2", "sgd_momentum",
                    lambda: _tv("resnet18"), lambda: torch.randn(2, 3, 224, 224)),
    "vit_b_16_b2": ("torchvision vit_b_16, 224x224, batch 2", "adamw",
                    lambda: _tv("vit_b_16"), lambda: torch.randn(2, 3, 224, 224)),
    "gpt2_small_b2_t128": ("GPT-2 small (tied head, materialized attention, no dropout), batch 2, seq 128",
                           "adamw", GPT2, lambda: torch.randint(0, 50257, (2, 128))),
    "gpt2_small_ckpt_b2_t128": ("same, each block checkpointed (torch.utils.checkpoint, non-reentrant)",
                                "adamw", lambda: GPT2(ckpt=True), lambda: torch.randint(0, 50257, (2, 128))),
    "dual_vit_pwca_b1_448": ("seed 001: ViT-B/16 at 448, SA(target)+SA(pair)+PWCA(kv=1570 tokens), "
                             "shared weights, batch 1", "adamw",
                             DualViT, lambda: torch.randn(1, 2, 3, 448, 448)),
    "bev_unfold_b1_64": ("seed 000 before: 2 local-attention layers via unfold, K=7, C=64, 64x64 BEV, batch 1",
                         "adamw", lambda: BEV(UnfoldLocalAttn), lambda: torch.randn(1, 64, 64, 64)),
    "bev_dwconv_b1_64": ("seed 000 after: depthwise 7x7 over qkv + sigmoid gating, same sizes", "adamw",
                         lambda: BEV(DWConvGate), lambda: torch.randn(1, 64, 64, 64)),
    "gat_n2000_e20000": ("seed 002: embedding(5000,64) + 2 GAT layers (4 heads x 32) over 2000 nodes / "
                         "20000 edges", "adamw", GAT, _gat_batch),
    "convnext_tiny_frozen_b2": ("seed 003 stage 1: convnext_tiny, backbone frozen, classifier trained, batch 2",
                                "adamw", lambda: _convnext(True), lambda: torch.randn(2, 3, 224, 224)),
    "convnext_tiny_full_b2": ("seed 003 stage 2: convnext_tiny, everything trained, batch 2", "adamw",
                              lambda: _convnext(False), lambda: torch.randn(2, 3, 224, 224)),
    "temporal_64_128_256_b2_t5": ("seed 004: per-frame CNN 64/128/256 + 2 transformer blocks, 5 frames 96x96, "
                                  "batch 2", "adamw", Temporal, lambda: torch.randn(2, 5, 3, 96, 96)),
}


def make_optimizer(name, params, impl="for_loop"):
    """impl: for_loop (foreach=False, 1.13's and 2.6's CPU default, spelled out so the code path is
    explicit), foreach (foreach=True), fused (fused=True; PyTorch >= 2.4 on CPU), default (neither
    given: the version's own choice)."""
    kw = {"for_loop": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True},
          "default": {}}[impl]
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3, **kw)
    if name == "sgd_momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, **kw)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4, **kw)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, **kw)
    raise ValueError("unknown optimizer " + name)


# --------------------------------------------------------------------------- measurement
def conv_backward_rise(heap, conv, make_input):
    """How far the malloc shim's peak rises above the live bytes while conv(x).backward(g) runs,
    for an op probe (op_rules.md 2.6 #66, #67): measured on a second run, after a warm-up."""
    for _ in range(2):
        conv.zero_grad(set_to_none=True)
        x = make_input()
        y = conv(x)
        g = torch.randn_like(y)
        before = heap.current()
        heap.reset_peak()
        y.backward(g)
        rise = heap.peak() - before
        del x, y, g
    return rise


def _autocast(dtype):
    """CPU autocast to `dtype` (None: a no-op context)."""
    import contextlib

    return torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext()


def _run_forward(model, batch, autocast=None):
    with _autocast(autocast):  # forward and loss inside autocast, backward outside (the AMP recipe)
        out = model(batch)
        return out, training_loss(out)


class VaeOutputs(tuple):
    """A VAE's (recon, mu, logvar), as pytorch/examples' VAE returns them: training_loss takes its
    ELBO, the reconstruction term every case's, the KL term pytorch/examples' loss_function's
    (`-0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())`), added after it."""


def training_loss(out):
    """(out ** 2).mean(). A model with auxiliary outputs (a tuple, its first element the output:
    torchvision's Inception-v3 and GoogLeNet in train(); a dict with "out": its segmentation models
    with aux_loss=True) adds each one's loss weighted, as PyTorch's fine-tuning tutorial trains
    Inception-v3 (loss1 + 0.4 * loss2) and torchvision's segmentation reference FCN (+ 0.5 * aux)."""
    if isinstance(out, VaeOutputs):
        recon, mu, logvar = out
        return (recon ** 2).mean() + -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    if isinstance(out, dict):
        main, further = out["out"], [v for k, v in out.items() if k != "out"]
    elif isinstance(out, tuple):
        main, further = out[0], [v for v in out[1:] if v is not None]
    else:
        return (out ** 2).mean()
    loss = (main ** 2).mean()
    for aux in further:
        loss = loss + 0.4 * (aux ** 2).mean()
    return loss


def _storage(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()  # 1.13: storage()


def live_saved_storages(model, forward):
    """The storages autograd holds saved when `forward()` (a forward of `model` under the caller's
    contexts) returns, by data_ptr: those of the tensors packed in it whose packs are still alive
    then, parameter storages excluded (those of the parameters the model holds when the tensor is
    saved: PEFT's lora.MultiheadAttention frees its weights in forward and registers new ones, and
    a freed weight's address can come back as an activation's). A graph freed inside forward holds
    nothing at its end (PEFT DoRA's lora_weight = lora_B(lora_A(eye)), a local whose packs go when
    DoRA's forward returns; the hooks see its packs, the end of forward does not)."""
    def parameter_ptrs():
        return {_storage(p).data_ptr() for p in model.parameters()}
    param_ptrs = parameter_ptrs()
    packs = []  # weak references: a pack dies with the graph that holds it

    def pack(t):
        # detach(): the same storage without the grad_fn. Returning t itself makes a saved *output*
        # hold its own node (node -> packed PyObject -> grad_fn -> node), a cycle through C++ that
        # Python's gc cannot see: the whole graph of this pass, parameters included, then leaks
        # (2.6: ~100 MB per resnet18 case, 3 GB for dual_vit).
        packed = t.detach()
        ptr = _storage(t).data_ptr()
        if ptr not in param_ptrs or ptr not in parameter_ptrs():
            packs.append(weakref.ref(packed))
        return packed

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = forward()
    alive = {}  # while `out` keeps the graph
    for ref in packs:
        kept = ref()
        if kept is not None:
            alive.setdefault(_storage(kept).data_ptr(), _storage(kept))
    del out
    return alive


def saved_bytes_of(model, batch, autocast=None):
    """Bytes autograd holds saved when the model's forward returns (live_saved_storages; the model
    only: the loss's own saved tensor is not counted), each storage once with its whole nbytes."""
    def forward():
        with _autocast(autocast):
            return model(batch)
    return sum(s.nbytes() for s in live_saved_storages(model, forward).values())


def zoo_case(model, batch, optimizer, image=None, seq=None, sizes=None):
    """A case for any zoo model at any size: torchvision classifiers by name, the GPT family
    (sizes: vocab, ctx, d, layers, heads), and the seed models. Returns its CASES name."""
    sizes = sizes or {}
    name = "%s_b%d" % (model, batch)
    if model == "mlp":
        build, mk = MLP, lambda: torch.randn(batch, 1024)
    elif model in ("gpt", "gpt2"):
        t = seq or 128
        kw = {k: sizes[k] for k in ("vocab", "ctx", "d", "layers", "heads") if k in sizes}
        build, mk = (lambda: GPT2(**kw)), (lambda: torch.randint(0, kw.get("vocab", 50257), (batch, t)))
        name += "_t%d" % t
    elif model in ("bev_unfold", "bev_dwconv"):
        s_ = image or 64
        layer = UnfoldLocalAttn if model == "bev_unfold" else DWConvGate
        build, mk = (lambda: BEV(layer)), (lambda: torch.randn(batch, 64, s_, s_))
        name += "_%d" % s_
    elif model == "temporal":
        s_ = image or 96
        build, mk = Temporal, (lambda: torch.randn(batch, 5, 3, s_, s_))
        name += "_%d" % s_
    elif model == "gat":
        build, mk = GAT, _gat_batch
    else:
        s_ = image or 224
        kw = {"image_size": s_} if model.startswith("vit") else {}  # ViTs size their positions
        build, mk = (lambda: _tv(model, **kw)), (lambda: torch.randn(batch, 3, s_, s_))
        name += "_%d" % s_
    CASES[name] = ("zoo case %s" % name, optimizer or "adamw", build, mk)
    return name


def measure_case(name, heap, optimizer=None):
    desc, opt_name, build, make_batch = CASES[name]
    opt_name = optimizer or opt_name
    torch.manual_seed(0)
    model = build()
    model.train()
    batch = make_batch()
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(opt_name, trainable)
    r = {"case": name, "description": desc, "optimizer": opt_name, "dtype": "float32"}
    r.update(measure_step(model, batch, opt, heap))
    return r


def measure_step(model, batch, opt, heap, autocast=None, saved="hooks", forward=_run_forward):
    """One measured training step of `model` on `batch` with optimizer `opt` (after a warm-up step),
    forward + loss under CPU autocast to `autocast` (None: fp32). saved: "hooks" (saved_tensors_hooks
    pass; null for a checkpointed model), "hooks_always" (the pass even for checkpointing), None
    (report null), or a callable(model, batch) -> bytes. forward(model, batch, autocast) -> (output
    kept through backward or None, loss): the loop's forward and loss (default: training_loss of the
    output). Returns the reference fields."""
    params = list(model.parameters())
    trainable = [p for p in params if p.requires_grad]
    if saved == "hooks" and getattr(model, "ckpt", False):
        saved = None  # 1.13 non-reentrant checkpointing: its own hooks hide the saved tensors
    elif saved == "hooks_always":  # 2.x: the checkpoint's inputs are saved where outer hooks see them
        saved = "hooks"

    # warm-up step: creates the optimizer state (and any lazily built host structures)
    opt.zero_grad(set_to_none=True)
    _, loss = forward(model, batch, autocast)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    del loss

    if saved == "hooks":
        saved = saved_bytes_of(model, batch, autocast)
    elif callable(saved):
        saved = saved(model, batch)
    gc.collect()

    base = heap.current()
    heap.reset_peak()
    opt.zero_grad(set_to_none=True)
    out, loss = forward(model, batch, autocast)
    after_forward = heap.current() - base
    loss.backward()
    fwd_bwd_peak = heap.peak() - base
    grad_bytes = sum(p.grad.numel() * p.grad.element_size() for p in trainable if p.grad is not None)
    del out, loss  # the reference steps with the output and loss already released
    opt.step()
    step_peak = heap.peak() - base

    opt_state = 0
    for st in opt.state.values():
        for k, v in st.items():
            if torch.is_tensor(v) and k != "step":
                opt_state += v.numel() * v.element_size()
    return {
        "params": sum(p.numel() for p in params),
        "trainable": sum(p.numel() for p in trainable),
        "saved_bytes": saved,
        "after_forward_bytes": after_forward,
        "fwd_bwd_peak_bytes": fwd_bwd_peak,
        "step_peak_bytes": step_peak,
        "grad_bytes": grad_bytes,
        "opt_state_bytes": opt_state,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    ap.add_argument("--optimizer", help="override every case's optimizer (sgd, sgd_momentum, adam, adamw)")
    ap.add_argument("--compare", help="reference JSON to print a comparison against")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--model", help="measure any zoo model instead (torchvision name, gpt, mlp, bev_unfold, "
                    "bev_dwconv, temporal, gat)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--image-size", type=int)
    ap.add_argument("--seq", type=int)
    ap.add_argument("--size", action="append", default=[], help="family size KEY=N (gpt: vocab ctx d layers heads)")
    args = ap.parse_args()
    if args.model:
        sizes = dict((k, int(v)) for k, v in (kv.split("=") for kv in args.size))
        args.cases = zoo_case(args.model, args.batch, args.optimizer, args.image_size, args.seq, sizes)
    if args.list:
        for n, c in CASES.items():
            print("%-28s %-13s %s" % (n, c[1], c[0]))
        return
    names = args.cases.split(",") if args.cases else list(CASES)
    for n in names:
        if n not in CASES:
            sys.exit("unknown case %r (see --list)" % n)
    import torchvision

    heap = Heap()
    res = {
        "source": "PyTorch %s (CPU) and torchvision %s; fp32; one training step; measured by "
                  "benchmarks/accuracy/measure.py (malloc shim + saved_tensors_hooks)"
                  % (torch.__version__, torchvision.__version__),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "cases": [],
    }
    ref = {}
    if args.compare:
        ref = {c["case"]: c for c in json.load(open(args.compare))["cases"]}
    for n in names:
        r = measure_case(n, heap, args.optimizer)
        res["cases"].append(r)
        print("measured %s" % n, file=sys.stderr, flush=True)
        if n in ref:
            for k in ("params", "trainable", "saved_bytes", "after_forward_bytes", "fwd_bwd_peak_bytes",
                      "step_peak_bytes", "grad_bytes", "opt_state_bytes"):
                a, b = r[k], ref[n][k]
                d = "" if a is None or b is None else "%+d (%+.3f%%)" % (a - b, 100.0 * (a - b) / max(b, 1))
                print("  %-20s %14s ref %14s  %s" % (k, a, b, d), file=sys.stderr, flush=True)
        if args.out:  # write as we go so partial results survive
            with open(args.out, "w") as f:
                json.dump(res, f, indent=1)
                f.write("\n")
        gc.collect()
    if not args.out:
        json.dump(res, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
