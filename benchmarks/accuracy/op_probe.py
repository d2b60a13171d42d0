#!/usr/bin/python3
"""Per-op memory probes behind op_rules.md (PyTorch 1.13 CPU, fp32).

For each probe: what autograd saves (by storage; classified as input / output / param /
new), the live bytes after forward (output + new saved storages + host bookkeeping), the
forward transient (peak during forward above the level after it), and the backward peak
above the level just before backward (grad_output already allocated), plus what is still
live after backward (leaf .grad buffers).

Usage: /usr/bin/python3 benchmarks/accuracy/op_probe.py [probe-name-substring ...]
Runs under the same malloc shim as measure.py (re-executes itself with LD_PRELOAD).
"""
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

if __name__ == "__main__":
    measure.ensure_shim()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.checkpoint  # noqa: E402

heap = measure.Heap()
KB = 1024.0


def sptr(t):
    return t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr()


def snb(t):
    return t.untyped_storage().nbytes() if hasattr(t, "untyped_storage") else t.storage().nbytes()


def nb(t):
    return t.numel() * t.element_size()


def probe(name, setup, fn, note=""):
    """setup() -> (module_or_None, [inputs]); fn(module, *inputs) -> output tensor."""
    torch.manual_seed(0)
    mod, inputs = setup()
    params = list(mod.parameters()) if mod is not None else []
    pptr = {sptr(p) for p in params}
    iptr = {sptr(t): i for i, t in enumerate(inputs) if torch.is_tensor(t)}
    # pass 1: saved tensors
    seen = {}

    def pack(t):
        p = sptr(t)
        if p not in seen:
            seen[p] = (tuple(t.shape), str(t.dtype).replace("torch.", ""), snb(t), t._base is not None)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(mod, *inputs)
    optr = sptr(out)
    saved = []
    new_saved = 0
    for p, (shape, dt, n, isview) in seen.items():
        kind = "param" if p in pptr else "input%d" % iptr[p] if p in iptr else "output" if p == optr else "new"
        if kind in ("new", "output"):
            new_saved += n if kind == "new" else 0
        saved.append("%s%s %s %s=%.1fK" % (kind, "(view)" if isview else "", dt, list(shape), n / KB))
    del out
    for p in params:
        p.grad = None
    for t in inputs:
        if torch.is_tensor(t) and t.grad is not None:
            t.grad = None
    gc.collect()
    # pass 2: memory
    base = heap.current()
    heap.reset_peak()
    out = fn(mod, *inputs)
    fwd_peak = heap.peak() - base
    after = heap.current() - base
    out_b = snb(out)
    g = torch.ones_like(out)
    lvl = heap.current()
    heap.reset_peak()
    if out.requires_grad:
        out.backward(g)
    bwd_peak = heap.peak() - lvl
    bwd_after = heap.current() - lvl
    grads = sum(nb(p.grad) for p in params if p.grad is not None) + \
        sum(nb(t.grad) for t in inputs if torch.is_tensor(t) and t.grad is not None)
    in_b = sum(nb(t) for t in inputs if torch.is_tensor(t) and t.is_floating_point())
    print("== %s %s" % (name, note))
    print("   in(float)=%.1fK out=%.1fK  saved: %s" % (in_b / KB, out_b / KB, "; ".join(saved) or "-"))
    print("   fwd: after=%.1fK (out+new_saved=%.1fK, rest=%.1fK)  transient=%.1fK" % (
        after / KB, (out_b + new_saved) / KB, (after - out_b - new_saved) / KB, (fwd_peak - after) / KB))
    print("   bwd: peak_extra=%.1fK  after=%.1fK  leaf_grads=%.1fK  (grad_out=%.1fK)" % (
        bwd_peak / KB, bwd_after / KB, grads / KB, out_b / KB), flush=True)
    del out, g
    return


def leaf(*shape, dtype=torch.float32, rg=True):
    t = torch.randn(*shape).to(dtype) if dtype.is_floating_point else torch.randint(0, 10, shape)
    return t.requires_grad_(rg) if dtype.is_floating_point else t


def M(m):
    return lambda: (m, [])


PROBES = []


def P(name, setup, fn, note=""):
    PROBES.append((name, setup, fn, note))


# x sizes chosen so in/out/weight sizes differ: x[64,256]=64K, out[64,512]=128K, W=512K
P("linear_2d", lambda: (nn.Linear(256, 512), [leaf(64, 256)]), lambda m, x: m(x), "x[64,256] W[512,256]")
P("linear_2d_x_nograd", lambda: (nn.Linear(256, 512), [leaf(64, 256, rg=False)]), lambda m, x: m(x))
P("linear_3d", lambda: (nn.Linear(256, 512), [leaf(4, 16, 256)]), lambda m, x: m(x), "x[4,16,256]")
P("linear_3d_noncontig", lambda: (nn.Linear(256, 512), [leaf(16, 4, 256)]),
  lambda m, x: m(x.transpose(0, 1)), "x[16,4,256].transpose(0,1)")
P("linear_3d_viewslice", lambda: (nn.Linear(256, 512), [leaf(4, 32, 256)]),
  lambda m, x: m(x[:, :16]), "x[4,32,256][:, :16] (view of a 2x bigger base)")
P("linear_nobias", lambda: (nn.Linear(256, 512, bias=False), [leaf(64, 256)]), lambda m, x: m(x))
P("conv2d", lambda: (nn.Conv2d(16, 32, 3, padding=1), [leaf(2, 16, 32, 32)]), lambda m, x: m(x),
  "x[2,16,32,32]=128K out=256K W=18K")
P("conv2d_stride2", lambda: (nn.Conv2d(16, 32, 3, stride=2, padding=1), [leaf(2, 16, 32, 32)]), lambda m, x: m(x))
P("conv2d_1x1", lambda: (nn.Conv2d(16, 32, 1), [leaf(2, 16, 32, 32)]), lambda m, x: m(x))
P("conv2d_depthwise7", lambda: (nn.Conv2d(32, 32, 7, padding=3, groups=32, bias=False), [leaf(2, 32, 32, 32)]),
  lambda m, x: m(x), "x=out=256K")
P("conv2d_groups4", lambda: (nn.Conv2d(32, 32, 3, padding=1, groups=4), [leaf(2, 32, 32, 32)]), lambda m, x: m(x))
P("conv2d_patch16", lambda: (nn.Conv2d(3, 64, 16, stride=16), [leaf(2, 3, 64, 64)]), lambda m, x: m(x),
  "x=96K out=8K")
P("convtranspose2d", lambda: (nn.ConvTranspose2d(32, 16, 2, stride=2), [leaf(2, 32, 16, 16)]), lambda m, x: m(x),
  "x=64K out=128K")
P("batchnorm2d_train", lambda: (nn.BatchNorm2d(32), [leaf(2, 32, 32, 32)]), lambda m, x: m(x), "x=256K")
P("batchnorm2d_eval", lambda: (nn.BatchNorm2d(32).eval(), [leaf(2, 32, 32, 32)]), lambda m, x: m(x))
P("layernorm", lambda: (nn.LayerNorm(256), [leaf(4, 64, 256)]), lambda m, x: m(x), "x=256K, rows=256")
P("groupnorm1", lambda: (nn.GroupNorm(1, 32), [leaf(2, 32, 32, 32)]), lambda m, x: m(x), "x=256K")
P("groupnorm8", lambda: (nn.GroupNorm(8, 32), [leaf(2, 32, 32, 32)]), lambda m, x: m(x))
P("embedding", lambda: (nn.Embedding(1000, 256), [torch.randint(0, 1000, (4, 64))]), lambda m, i: m(i),
  "ids[4,64] int64=2K out=256K W=1000K")
for nm, f in [("relu", F.relu), ("gelu", F.gelu), ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
              ("silu", F.silu), ("sigmoid", torch.sigmoid), ("tanh", torch.tanh),
              ("leaky_relu", lambda x: F.leaky_relu(x, 0.2)), ("elu", F.elu),
              ("softmax", lambda x: x.softmax(-1)), ("log_softmax", lambda x: x.log_softmax(-1)),
              ("exp", torch.exp), ("pow2", lambda x: x ** 2), ("pow3", lambda x: x ** 3),
              ("mul_scalar", lambda x: x * 3.0), ("div_scalar", lambda x: x / 8.0),
              ("sum_all", lambda x: x.sum()), ("sum_dim", lambda x: x.sum(-1)), ("mean_all", lambda x: x.mean()),
              ("mean_dim", lambda x: x.mean(1)), ("max_all", lambda x: x.max()),
              ("contiguous_of_transpose", lambda x: x.transpose(0, 1).contiguous()),
              ("view_reshape_permute", lambda x: x.view(4, 64, 4, 64).permute(0, 2, 1, 3)),
              ("flatten", lambda x: x.flatten(1)),
              ("reshape_of_transpose(copy)", lambda x: x.transpose(1, 2).reshape(4, -1)),
              ("sqrt", torch.sqrt), ("abs", torch.abs)]:
    P(nm, lambda: (None, [leaf(4, 64, 256)]), (lambda f: lambda m, x: f(x))(f), "x=256K")
P("relu_after_linear_inplace", lambda: (nn.Linear(256, 256), [leaf(256, 256)]),
  lambda m, x: F.relu(m(x), inplace=True), "linear out=256K then relu_")
P("relu_after_linear", lambda: (nn.Linear(256, 256), [leaf(256, 256)]),
  lambda m, x: F.relu(m(x)), "linear out=256K then relu")
P("bn_relu_inplace", lambda: (nn.BatchNorm2d(32), [leaf(2, 32, 32, 32)]),
  lambda m, x: F.relu(m(x), inplace=True), "x=256K")
P("sigmoid_after_linear", lambda: (nn.Linear(256, 256), [leaf(256, 256)]), lambda m, x: torch.sigmoid(m(x)))
P("dropout_p0.1", lambda: (None, [leaf(4, 64, 256)]), lambda m, x: F.dropout(x, 0.1, training=True), "x=256K")
P("dropout_module_after_linear", lambda: (nn.Sequential(nn.Linear(256, 256), nn.Dropout(0.1)), [leaf(256, 256)]),
  lambda m, x: m(x), "linear out=256K")
P("maxpool2", lambda: (None, [leaf(2, 32, 32, 32)]), lambda m, x: F.max_pool2d(x, 2), "x=256K out=64K")
P("maxpool3s2p1", lambda: (None, [leaf(2, 32, 32, 32)]), lambda m, x: F.max_pool2d(x, 3, 2, 1), "x=256K out=64K")
P("avgpool2", lambda: (None, [leaf(2, 32, 32, 32)]), lambda m, x: F.avg_pool2d(x, 2), "x=256K")
P("adaptive_avgpool1", lambda: (None, [leaf(2, 32, 32, 32)]), lambda m, x: F.adaptive_avg_pool2d(x, 1))
P("add_residual", lambda: (None, [leaf(4, 64, 256), leaf(4, 64, 256)]), lambda m, x, y: x + y, "x=y=256K")
P("add_broadcast", lambda: (None, [leaf(4, 64, 256), leaf(64, 256)]), lambda m, x, y: x + y, "x=256K y=64K")
P("mul_elementwise", lambda: (None, [leaf(4, 64, 256), leaf(4, 64, 256)]), lambda m, x, y: x * y, "x=y=256K")
P("mul_broadcast", lambda: (None, [leaf(4, 64, 256), leaf(4, 64, 1)]), lambda m, x, y: x * y, "x=256K y=1K")
P("div_tensor", lambda: (None, [leaf(4, 64, 256), leaf(4, 64, 256)]), lambda m, x, y: x / y, "x=y=256K")
P("cat_dim1", lambda: (None, [leaf(4, 64, 256), leaf(4, 64, 256)]), lambda m, x, y: torch.cat([x, y], 1))
P("stack", lambda: (None, [leaf(4, 64, 256), leaf(4, 64, 256)]), lambda m, x, y: torch.stack([x, y], 1))
P("split_chunk_then_add", lambda: (None, [leaf(4, 64, 512)]),
  lambda m, x: (lambda a, b: a * b)(*x.chunk(2, -1)), "x=512K, chunks 256K; mul saves views")
# matmul: q,k [B=2,h=4,T=64,d=32] = 64K each; scores [2,4,64,64]=128K
P("matmul_qkT_4d", lambda: (None, [leaf(2, 4, 64, 32), leaf(2, 4, 64, 32)]),
  lambda m, q, k: q @ k.transpose(-2, -1), "q=k=64K scores=128K")
P("matmul_qkT_4d_from_transposed_views", lambda: (None, [leaf(2, 64, 4, 32), leaf(2, 64, 4, 32)]),
  lambda m, q, k: q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1), "q,k as [B,T,h,d].transpose(1,2)")
P("matmul_attn_v_4d", lambda: (None, [leaf(2, 4, 64, 64), leaf(2, 4, 64, 32)]), lambda m, a, v: a @ v,
  "a=128K v=64K")
P("matmul_3d_2d", lambda: (None, [leaf(4, 64, 256), leaf(256, 128)]), lambda m, a, b: a @ b, "a=256K b=128K")
P("matmul_3d_2dT", lambda: (None, [leaf(4, 64, 256), leaf(128, 256)]), lambda m, a, b: a @ b.t(),
  "a=256K b=128K (tied head)")
P("bmm", lambda: (None, [leaf(8, 64, 32), leaf(8, 32, 64)]), lambda m, a, b: torch.bmm(a, b))
P("unfold_k7", lambda: (None, [leaf(1, 16, 32, 32)]), lambda m, x: F.unfold(x, 7, padding=3),
  "x=64K out=49x=3136K")
P("unfold_k3", lambda: (None, [leaf(1, 16, 32, 32)]), lambda m, x: F.unfold(x, 3, padding=1), "x=64K out=576K")
P("pad", lambda: (None, [leaf(2, 32, 32, 32)]), lambda m, x: F.pad(x, (1, 1, 1, 1)), "x=256K")
P("index_select", lambda: (None, [leaf(1000, 64), torch.randint(0, 1000, (4000,))]),
  lambda m, x, i: x.index_select(0, i), "x=250K idx=31.25K out=1000K")
P("index_tensor", lambda: (None, [leaf(1000, 64), torch.randint(0, 1000, (4000,))]),
  lambda m, x, i: x[i], "x=250K idx=31.25K out=1000K")
P("gather", lambda: (None, [leaf(1000, 64), torch.randint(0, 64, (1000, 16))]),
  lambda m, x, i: x.gather(1, i), "x=250K idx=125K out=62.5K")
P("index_add_into_zeros", lambda: (None, [leaf(4000, 64), torch.randint(0, 1000, (4000,))]),
  lambda m, s, i: torch.zeros(1000, 64).index_add_(0, i, s), "src=1000K idx=31.25K out=250K")
P("scatter_add", lambda: (None, [leaf(4000, 64), torch.randint(0, 1000, (4000, 64))]),
  lambda m, s, i: torch.zeros(1000, 64).scatter_add(0, i, s), "src=1000K idx=2000K out=250K")
P("mse_loss_style", lambda: (None, [leaf(4, 64, 256)]), lambda m, x: (x ** 2).mean(), "x=256K")
P("cross_entropy", lambda: (None, [leaf(256, 1000), torch.randint(0, 1000, (256,))]),
  lambda m, x, t: F.cross_entropy(x, t), "logits=1000K")
P("sdpa_style_attention", lambda: (None, [leaf(2, 4, 64, 32), leaf(2, 4, 64, 32), leaf(2, 4, 64, 32)]),
  lambda m, q, k, v: ((q @ k.transpose(-2, -1)) / 8.0).softmax(-1) @ v, "q=k=v=64K scores=128K")
P("mha_torch", lambda: (nn.MultiheadAttention(256, 4, batch_first=True), [leaf(2, 64, 256)]),
  lambda m, x: m(x, x, x, need_weights=False)[0], "x=128K scores=2*4*64*64*4=128K")


def main(probes=None):
    """Runs `probes` (default: this file's) whose names contain one of the command-line words."""
    torch.set_num_threads(int(os.environ.get("GB_THREADS", "2")))
    sel = sys.argv[1:]
    for name, setup, fn, note in probes or PROBES:
        if sel and not any(s in name for s in sel):
            continue
        probe(name, setup, fn, note)
        gc.collect()


if __name__ == "__main__":
    main()
