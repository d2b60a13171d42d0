#!/usr/bin/python3
"""Per-op probes for what PyTorch 2.x added or changed on CPU (op_rules.md, "PyTorch 2.6 CPU: what
changed"): F.scaled_dot_product_attention (which kernel, what it saves, its temporaries; causal,
masks, dropout, grouped-query), nn.MultiheadAttention's 2.x training path, dropout, and the ops of
a model under CPU autocast bf16 (which run in bf16, which in fp32, the weight-cast cache).
Same method and output format as op_probe.py (whose `probe` it reuses); the node names of the
graph are printed too (`nodes:`), so the kernel that ran is visible.

Usage (PyTorch 2.6 in the trixie root; the host's 1.13 runs the probes it has ops for):
    scripts/torch26-env run python3 benchmarks/accuracy/op_probe26.py [probe-name-substring ...]
    /usr/bin/python3 benchmarks/accuracy/op_probe26.py
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
from op_probe import leaf  # noqa: E402

PROBES = []


def nodes(out):
    """Names of the autograd nodes behind `out` (breadth first, AccumulateGrad left out)."""
    seen, order, todo = set(), [], [out.grad_fn]
    while todo:
        n = todo.pop(0)
        if n is None or n in seen:
            continue
        seen.add(n)
        if type(n).__name__ != "AccumulateGrad":
            order.append(type(n).__name__)
        todo += [f for f, _ in n.next_functions]
    return order


def P(name, setup, fn, note=""):
    def traced(m, *xs):
        out = fn(m, *xs)
        traced.names = nodes(out) if out.grad_fn is not None else []
        return out

    def probe_with_nodes(name=name, setup=setup, note=note):
        op_probe.probe(name, setup, traced, note)
        print("   nodes: %s" % " <- ".join(traced.names), flush=True)

    PROBES.append((name, probe_with_nodes))


def AC(f):
    """Run f under CPU autocast bf16 (backward outside, as in the AMP recipe)."""
    def g(m, *xs):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return f(m, *xs)
    return g


sdpa = getattr(F, "scaled_dot_product_attention", None)  # absent in 1.13: those probes then report an error
# q = k = v = [B=2, h=4, L=64, d=32] fp32 = 64K each; a materialized score matrix would be 128K
qkv = lambda *s: (lambda: (None, [leaf(*s), leaf(*s), leaf(*s)]))  # noqa: E731
P("sdpa", qkv(2, 4, 64, 32), lambda m, q, k, v: sdpa(q, k, v), "q=k=v=64K out=64K lse=[2,4,64] fp32=2K")
P("sdpa_causal", qkv(2, 4, 64, 32), lambda m, q, k, v: sdpa(q, k, v, is_causal=True), "q=k=v=64K")
P("sdpa_L256", qkv(2, 4, 256, 32), lambda m, q, k, v: sdpa(q, k, v), "q=k=v=256K (scores would be 2048K)")
P("sdpa_L1024", qkv(1, 4, 1024, 32), lambda m, q, k, v: sdpa(q, k, v), "q=k=v=512K (scores would be 16384K)")
P("sdpa_from_transposed_views", qkv(2, 64, 4, 32),
  lambda m, q, k, v: sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)), "q,k,v as [B,L,h,d].transpose(1,2)")
P("sdpa_float_mask", lambda: (None, [leaf(2, 4, 64, 32), leaf(2, 4, 64, 32), leaf(2, 4, 64, 32),
                                     torch.zeros(64, 64)]),
  lambda m, q, k, v, a: sdpa(q, k, v, attn_mask=a), "additive float mask [64,64]")
P("sdpa_bool_mask", lambda: (None, [leaf(2, 4, 64, 32), leaf(2, 4, 64, 32), leaf(2, 4, 64, 32),
                                    torch.ones(64, 64, dtype=torch.bool).tril()]),
  lambda m, q, k, v, a: sdpa(q, k, v, attn_mask=a), "bool mask [64,64]")
P("sdpa_dropout0.1", qkv(2, 4, 64, 32), lambda m, q, k, v: sdpa(q, k, v, dropout_p=0.1), "q=k=v=64K, training dropout")
P("sdpa_gqa", lambda: (None, [leaf(2, 8, 64, 32), leaf(2, 2, 64, 32), leaf(2, 2, 64, 32)]),
  lambda m, q, k, v: sdpa(q, k, v, is_causal=True, enable_gqa=True), "q=128K (8 heads) k=v=32K (2 kv heads)")
P("sdpa_repeat_kv", lambda: (None, [leaf(2, 8, 64, 32), leaf(2, 2, 64, 32), leaf(2, 2, 64, 32)]),
  lambda m, q, k, v: sdpa(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1), is_causal=True),
  "q=128K; k, v repeated to 8 heads (transformers' repeat_kv)")
P("mha_need_weights_false", lambda: (nn.MultiheadAttention(256, 4, batch_first=True), [leaf(2, 64, 256)]),
  lambda m, x: m(x, x, x, need_weights=False)[0], "x=128K (torchvision ViT's call)")
P("mha_need_weights_true", lambda: (nn.MultiheadAttention(256, 4, batch_first=True), [leaf(2, 64, 256)]),
  lambda m, x: m(x, x, x)[0], "x=128K; averaged weights returned")
P("dropout_p0.1", lambda: (None, [leaf(4, 64, 256)]), lambda m, x: F.dropout(x, 0.1, training=True), "x=256K")
P("dropout_bf16_input", lambda: (None, [leaf(4, 64, 256, dtype=torch.bfloat16)]),
  lambda m, x: F.dropout(x, 0.1, training=True), "x=128K bf16")
P("native_dropout", lambda: (None, [leaf(4, 64, 256)]), lambda m, x: torch.native_dropout(x, 0.1, True)[0],
  "x=256K (the fused kernel CUDA uses)")

# ---- CPU autocast bf16: which ops cast, what is saved (x fp32 leaves; weights fp32 params)
P("ac_linear", lambda: (nn.Linear(256, 512), [leaf(64, 256)]), AC(lambda m, x: m(x)), "x[64,256] fp32=64K W=512K")
P("ac_linear_x_nograd", lambda: (nn.Linear(256, 512), [leaf(64, 256, rg=False)]), AC(lambda m, x: m(x)))
P("ac_linear_twice_same_weight", lambda: (nn.Linear(256, 256), [leaf(64, 256)]), AC(lambda m, x: m(m(x))),
  "the bf16 weight copy cached once per autocast region?")
P("ac_conv2d", lambda: (nn.Conv2d(16, 32, 3, padding=1), [leaf(2, 16, 32, 32)]), AC(lambda m, x: m(x)),
  "x=128K out(fp32)=256K W=18K")
P("ac_bn", lambda: (nn.BatchNorm2d(32), [leaf(2, 32, 32, 32)]), AC(lambda m, x: m(x)), "x=256K fp32")
P("ac_conv_bn_relu", lambda: (nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(True)),
                              [leaf(2, 16, 32, 32)]), AC(lambda m, x: m(x)), "conv out bf16 128K -> BN -> ReLU_")
P("ac_layernorm", lambda: (nn.LayerNorm(256), [leaf(4, 64, 256)]), AC(lambda m, x: m(x)), "x=256K fp32")
P("ac_linear_layernorm", lambda: (nn.Sequential(nn.Linear(256, 256), nn.LayerNorm(256)), [leaf(4, 64, 256)]),
  AC(lambda m, x: m(x)), "linear out bf16 128K -> LayerNorm")
P("ac_linear_gelu", lambda: (nn.Sequential(nn.Linear(256, 256), nn.GELU()), [leaf(4, 64, 256)]),
  AC(lambda m, x: m(x)), "bf16 128K -> GELU")
P("ac_linear_softmax", lambda: (nn.Linear(256, 256), [leaf(4, 64, 256)]), AC(lambda m, x: m(x).softmax(-1)),
  "bf16 128K -> softmax")
P("ac_matmul_qkT", lambda: (None, [leaf(2, 4, 64, 32), leaf(2, 4, 64, 32)]),
  AC(lambda m, q, k: q @ k.transpose(-2, -1)), "fp32 q=k=64K")
P("ac_sdpa", qkv(2, 4, 64, 32), AC(lambda m, q, k, v: sdpa(q, k, v)), "fp32 q=k=v=64K")
P("ac_sdpa_bf16_inputs", lambda: (None, [leaf(2, 4, 64, 32, dtype=torch.bfloat16) for _ in range(3)]),
  AC(lambda m, q, k, v: sdpa(q, k, v)), "bf16 q=k=v=32K")
P("ac_embedding", lambda: (nn.Embedding(1000, 256), [torch.randint(0, 1000, (4, 64))]), AC(lambda m, i: m(i)),
  "out 256K fp32?")
P("ac_linear_mse_loss", lambda: (nn.Linear(256, 256), [leaf(4, 64, 256)]), AC(lambda m, x: (m(x) ** 2).mean()),
  "bf16 out 128K -> (out**2).mean()")
P("ac_linear_dropout", lambda: (nn.Linear(256, 256), [leaf(4, 64, 256)]),
  AC(lambda m, x: F.dropout(m(x), 0.1, True)), "bf16 out 128K -> dropout")
P("ac_groupnorm", lambda: (nn.GroupNorm(1, 32), [leaf(2, 32, 32, 32)]), AC(lambda m, x: m(x)), "x=256K fp32")
P("ac_mha_need_weights_false", lambda: (nn.MultiheadAttention(256, 4, batch_first=True), [leaf(2, 64, 256)]),
  AC(lambda m, x: m(x, x, x, need_weights=False)[0]), "x=128K fp32")


# ---- CPU autocast bf16, steady state: one warm-up forward + backward first (as a training step's
# warm-up step does), so the bf16 GEMM workspace that stays allocated after the first backward
# (#32) is part of the base level and the backward peak is that of every later step.
def warm(setup, fn):
    def warmed():
        mod, inputs = setup()
        out = fn(mod, *inputs)
        out.backward(torch.ones_like(out))
        for t in list(mod.parameters() if mod is not None else []) + [t for t in inputs if torch.is_tensor(t)]:
            t.grad = None
        del out
        return mod, inputs
    return warmed


def PW(name, setup, fn, note=""):
    P(name, warm(setup, fn), fn, note)


PW("acw_linear", lambda: (nn.Linear(256, 512), [leaf(64, 256)]), AC(lambda m, x: m(x)), "x[64,256] fp32=64K W=512K")
PW("acw_linear_x_nograd", lambda: (nn.Linear(256, 512), [leaf(64, 256, rg=False)]), AC(lambda m, x: m(x)),
   "W=512K: weight gradient only")
PW("acw_linear_mlp_fc1", lambda: (nn.Linear(1024, 4096), [leaf(8, 1024, rg=False)]), AC(lambda m, x: m(x)),
   "x[8,1024] W=16M (mlp_b8's fc1)")
PW("acw_linear_tall", lambda: (nn.Linear(768, 768), [leaf(2, 512, 768)]), AC(lambda m, x: m(x)),
   "x[2,512,768]=3M W=2.25M")
PW("acw_linear_tall_bf16_input", lambda: (nn.Linear(768, 768), [leaf(2, 512, 768, dtype=torch.bfloat16)]),
   AC(lambda m, x: m(x)), "x bf16 [2,512,768]=1.5M W=2.25M")
PW("acw_matmul_qkT", lambda: (None, [leaf(2, 4, 64, 32), leaf(2, 4, 64, 32)]),
   AC(lambda m, q, k: q @ k.transpose(-2, -1)), "fp32 q=k=64K")
PW("acw_bmm_bf16_L256", lambda: (None, [leaf(2, 12, 256, 64, dtype=torch.bfloat16),
                                        leaf(2, 12, 256, 64, dtype=torch.bfloat16)]),
   AC(lambda m, q, k: q @ k.transpose(-2, -1)), "bf16 q=k=768K, scores bf16 3M")
PW("acw_conv2d", lambda: (nn.Conv2d(16, 32, 3, padding=1), [leaf(2, 16, 32, 32)]), AC(lambda m, x: m(x)),
   "x=128K W=18K")
PW("acw_conv2d_x_nograd", lambda: (nn.Conv2d(16, 32, 3, padding=1), [leaf(2, 16, 32, 32, rg=False)]),
   AC(lambda m, x: m(x)), "x=128K W=18K: weight gradient only")
PW("acw_conv2d_bf16_input", lambda: (nn.Conv2d(64, 64, 3, padding=1), [leaf(2, 64, 24, 24, dtype=torch.bfloat16)]),
   AC(lambda m, x: m(x)), "x bf16 [2,64,24,24]=144K W=144K (resnet18_96 layer1)")
PW("acw_conv2d_first", lambda: (nn.Conv2d(3, 64, 7, 2, 3, bias=False), [leaf(2, 3, 96, 96, rg=False)]),
   AC(lambda m, x: m(x)), "resnet18's conv1 at 96: x fp32 216K, out bf16 288K")
PW("acw_conv_bn_relu", lambda: (nn.Sequential(nn.Conv2d(64, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64),
                                              nn.ReLU(True)), [leaf(2, 64, 24, 24, dtype=torch.bfloat16)]),
   AC(lambda m, x: m(x)), "bf16 [2,64,24,24]=144K")
PW("acw_dwconv7", lambda: (nn.Conv2d(96, 96, 7, padding=3, groups=96), [leaf(2, 96, 16, 16, dtype=torch.bfloat16)]),
   AC(lambda m, x: m(x)), "ConvNeXt depthwise 7x7, bf16 x [2,96,16,16]=96K")
PW("acw_layernorm_bf16", lambda: (nn.LayerNorm(256), [leaf(4, 64, 256, dtype=torch.bfloat16)]), AC(lambda m, x: m(x)),
   "bf16 x=128K")
PW("acw_softmax_bf16", lambda: (None, [leaf(4, 64, 256, dtype=torch.bfloat16)]), AC(lambda m, x: x.softmax(-1)),
   "bf16 x=128K")
PW("acw_gelu_bf16", lambda: (None, [leaf(4, 64, 256, dtype=torch.bfloat16)]), AC(lambda m, x: F.gelu(x)),
   "bf16 x=128K")
PW("acw_linear_mse_loss", lambda: (nn.Linear(256, 256), [leaf(4, 64, 256)]), AC(lambda m, x: (m(x) ** 2).mean()),
   "bf16 out 128K -> (out**2).mean()")

# ConvNeXt's depthwise 7x7 on a channels-last-strided input (the block input comes out of permute
# + residual add; op_rules.md §1b: 258·W of backward scratch in fp32): fp32 x, as the residual stream
# is fp32 under autocast (layer scale promotes), cast to bf16 by autocast
cl = lambda B, H, C: (lambda: (nn.Conv2d(C, C, 7, padding=3, groups=C), [leaf(B, H, H, C)]))  # noqa: E731
P("dwconv_cl_768_fp32", cl(2, 2, 768), lambda m, x: m(x.permute(0, 3, 1, 2)), "fp32, W=147K, X=12K")
PW("acw_dwconv_cl_768", cl(2, 2, 768), AC(lambda m, x: m(x.permute(0, 3, 1, 2))), "autocast bf16, W=147K")
P("dwconv_cl_384_fp32", cl(2, 4, 384), lambda m, x: m(x.permute(0, 3, 1, 2)), "fp32, W=73.5K, X=24K")
PW("acw_dwconv_cl_384", cl(2, 4, 384), AC(lambda m, x: m(x.permute(0, 3, 1, 2))), "autocast bf16, W=73.5K")
PW("acw_dwconv_cl_96_16", cl(2, 16, 96), AC(lambda m, x: m(x.permute(0, 3, 1, 2))), "autocast bf16, W=18.4K, X=192K")

# ViT's patch embedding Conv2d(3, 768, 16, stride 16) (op_rules.md §1b: 4.4·W of scratch per
# thread in fp32), first layer (the image needs no gradient): fp32 and autocast bf16
patch = lambda H: (lambda: (nn.Conv2d(3, 768, 16, 16), [leaf(2, 3, H, H, rg=False)]))  # noqa: E731
P("patch16_96_fp32", patch(96), lambda m, x: m(x), "W=2304K, X=216K, Y=108K")
PW("acw_patch16_96", patch(96), AC(lambda m, x: m(x)), "autocast bf16, W=2304K")
PW("acw_patch16_224", patch(224), AC(lambda m, x: m(x)), "autocast bf16, W=2304K, X=1176K")


def vit_block():
    from torchvision.models.vision_transformer import EncoderBlock
    return EncoderBlock(12, 768, 3072, 0.0, 0.0), [leaf(2, 37, 768)]


# torchvision's ViT encoder block (vit_b_16 at 96 px: 37 tokens) in fp32 and under autocast bf16
P("vit_block_fp32", vit_block, lambda m, x: m(x), "x [2,37,768] fp32 = 222K")
P("ac_vit_block", vit_block, AC(lambda m, x: m(x)), "x [2,37,768] fp32 = 222K; bf16 [2,37,768] = 111K")


def sdpa_scan():
    """Forward transient and backward peak of the CPU flash kernel over shapes (fp32 and bf16)."""
    import gc

    heap = measure.Heap()
    print("## sdpa_scan: flash kernel (CPU) forward transient / backward peak extra above grad_out, by shape")
    for dt in (torch.float32, torch.bfloat16):
        for B, H, L, d in [(2, 4, 32, 32), (2, 4, 64, 32), (2, 4, 128, 32), (2, 4, 192, 32), (2, 4, 256, 32),
                           (2, 4, 512, 32), (2, 4, 768, 32), (1, 4, 1024, 32), (1, 4, 2048, 32), (2, 4, 256, 64),
                           (2, 12, 128, 64), (2, 12, 785, 64), (8, 4, 256, 32)]:
            q, k, v = (torch.randn(B, H, L, d).to(dt).requires_grad_() for _ in range(3))
            gc.collect()
            b = heap.current()
            heap.reset_peak()
            o = sdpa(q, k, v)
            fwd_t = heap.peak() - heap.current()
            g = torch.ones_like(o)
            lvl = heap.current()
            heap.reset_peak()
            o.backward(g)
            bwd = heap.peak() - lvl
            print("  %-8s B=%d H=%2d L=%4d d=%2d  |q|=%8.1fK  fwd transient %8.1fK  bwd peak extra %8.1fK"
                  " (= %.2f |q|)" % (str(dt).replace("torch.", ""), B, H, L, d, q.numel() * q.element_size() / 1024,
                                     fwd_t / 1024, bwd / 1024, bwd / (q.numel() * q.element_size())), flush=True)
            del q, k, v, o, g


def main():
    torch.set_num_threads(int(os.environ.get("GB_THREADS", "2")))
    print("# torch %s, %d threads" % (torch.__version__, torch.get_num_threads()))
    sel = sys.argv[1:]
    if sel == ["scan"]:
        return sdpa_scan()
    for name, run in PROBES:
        if sel and not any(s in name for s in sel):
            continue
        try:
            run()
        except Exception as e:  # e.g. an op 1.13 does not have, when comparing versions
            print("== %s: not available (%s: %s)" % (name, type(e).__name__, str(e).splitlines()[0][:120]), flush=True)


if __name__ == "__main__":
    main()
