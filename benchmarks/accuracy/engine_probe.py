#!/usr/bin/python3
"""Probes behind op_rules.md sections 2-5: host bookkeeping per autograd node, autograd-engine
buffer lifetimes, optimizer.step() temporaries, non-reentrant checkpointing.

Usage: /usr/bin/python3 benchmarks/accuracy/engine_probe.py [host|engine|optim|ckpt ...]
"""
import gc
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

if __name__ == "__main__":
    measure.ensure_shim()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.checkpoint as cp  # noqa: E402

heap = measure.Heap()
K = 1024.0


def host():
    print("## host bookkeeping: N-op chains on tiny tensors (bytes per op, live after forward)")
    N = 1000
    cases = {
        "relu (saves output)": lambda x, w: F.relu(x),
        "x + 1.0 (saves nothing; intermediates freed)": lambda x, w: x + 1.0,
        "x * w (saves both; w shared)": lambda x, w: x * w,
        "x * w + x (2 nodes)": lambda x, w: x * w + x,
        "gelu (saves input)": lambda x, w: F.gelu(x),
        "tanh": lambda x, w: torch.tanh(x),
        "view(-1) (view node)": lambda x, w: x.view(-1),
    }
    for nm, f in cases.items():
        for shape in [(1,), (256,)]:
            x0 = torch.randn(*shape, requires_grad=True)
            w = torch.randn(*shape, requires_grad=True)
            gc.collect()
            # no-grad reference: the same chain without autograd
            with torch.no_grad():
                b = heap.current()
                x = x0
                keep = []
                for _ in range(N):
                    x = f(x, w)
                nog = heap.current() - b
                del x, keep
            gc.collect()
            b = heap.current()
            x = x0
            for _ in range(N):
                x = f(x, w)
            after = heap.current() - b
            lvl = heap.current()
            heap.reset_peak()
            x.backward(torch.ones_like(x))
            bwd = heap.peak() - lvl
            tb = x0.numel() * 4
            del x
            x0.grad = None
            w.grad = None
            gc.collect()
            print("  %-48s elem=%-4d tensor=%4dB  with grad: %7.1f B/op  (no_grad chain: %.0f B total)  bwd peak %.1f KiB"
                  % (nm, x0.numel(), tb, after / N, nog, bwd / K))
    # A real module: per-Linear bookkeeping on a tiny Linear
    for d in (4,):
        m = nn.Sequential(*[nn.Linear(d, d) for _ in range(200)])
        x0 = torch.randn(2, d, requires_grad=True)
        gc.collect()
        b = heap.current()
        y = m(x0)
        after = heap.current() - b
        print("  %-48s per layer %.1f B (tensor bytes %d)" % ("Linear(4,4) x200 on [2,4]", after / 200, 2 * d * 4))
        del y


def engine():
    print("## autograd engine")
    n = 256 * 1024  # 1 MiB fp32
    X = n * 4 / K

    def run(nm, build, leafs):
        gc.collect()
        out = build()
        g = torch.ones_like(out)
        lvl = heap.current()
        heap.reset_peak()
        out.backward(g)
        pk = heap.peak() - lvl
        aft = heap.current() - lvl
        print("  %-62s bwd peak extra %7.1f KiB (%.2f X)  left %7.1f KiB (%.2f X)"
              % (nm, pk / K, pk / K / X, aft / K, aft / K / X))
        for t in leafs:
            t.grad = None
        del out, g

    x = torch.randn(n, requires_grad=True)
    run("leaf -> y = x*2: AccumulateGrad (steals?)", lambda: x * 2.0, [x])
    run("leaf -> relu -> *2 -> *2 (chain of 3)", lambda: F.relu(x) * 2.0 * 2.0, [x])
    run("leaf used twice: x*2 + x*3", lambda: x * 2.0 + x * 3.0, [x])
    run("nonleaf used twice: h=relu(x); h*2 + h*3", lambda: (lambda h: h * 2.0 + h * 3.0)(F.relu(x)), [x])
    run("nonleaf used 3x: h=relu(x); h*2 + h*3 + h*4", lambda: (lambda h: h * 2.0 + h * 3.0 + h * 4.0)(F.relu(x)), [x])
    run("residual: h=relu(x); h + relu(h)*2", lambda: (lambda h: h + F.relu(h) * 2.0)(F.relu(x)), [x])
    xs = torch.randn(n, requires_grad=False)
    w = torch.randn(n, requires_grad=True)
    run("param grad from a mul: (xs*w)", lambda: xs * w, [w])
    # grads accumulate into an existing .grad (no set_to_none)
    gc.collect()
    y = x * 2.0
    y.backward(torch.ones_like(y))
    del y
    out = x * 3.0
    g = torch.ones_like(out)
    lvl = heap.current()
    heap.reset_peak()
    out.backward(g)
    print("  %-62s bwd peak extra %7.1f KiB (%.2f X)  left %7.1f KiB"
          % ("accumulate into existing .grad (zero_grad(set_to_none=False))", (heap.peak() - lvl) / K,
             (heap.peak() - lvl) / K / X, (heap.current() - lvl) / K))
    x.grad = None
    del out, g
    # when is the graph (saved tensors) freed during backward?  chain of 4 relus, 1 MiB each
    gc.collect()
    b = heap.current()
    h = x
    for _ in range(4):
        h = F.relu(h * 1.0)
    fwd = heap.current() - b
    g = torch.ones_like(h)
    lvl = heap.current()
    heap.reset_peak()
    h.backward(g)
    print("  chain of 4x(mul-scalar, relu), 1 MiB each: after fwd %.2f X; bwd peak extra %.2f X; left %.2f X"
          % (fwd / K / X, (heap.peak() - lvl) / K / X, (heap.current() - lvl) / K / X))
    x.grad = None
    del h, g


def _fused_cpu():
    try:
        torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1e-3, fused=True)
        return True
    except (TypeError, RuntimeError):
        return False


def _with_fused(ctor, ps):
    """The optimizer `ctor` builds, with fused=True instead of a foreach argument."""
    import inspect

    opt = ctor(ps, False)
    kw = {k: v for k, v in opt.defaults.items() if k in inspect.signature(type(opt)).parameters
          and k not in ("foreach", "fused", "params")}
    return type(opt)(ps, fused=True, **kw)


def optim():
    print("## optimizer.step() temporaries (peak above params+grads+state, after a warm-up step)")
    sizes = [1 << 20, 1 << 18, 1 << 16]  # 4 MiB, 1 MiB, 256 KiB params
    P = (1 << 20) * 4 / K
    for name, ctor in [
        ("sgd", lambda p, fe: torch.optim.SGD(p, lr=1e-3, foreach=fe)),
        ("sgd wd", lambda p, fe: torch.optim.SGD(p, lr=1e-3, weight_decay=1e-4, foreach=fe)),
        ("sgd_momentum", lambda p, fe: torch.optim.SGD(p, lr=1e-3, momentum=0.9, foreach=fe)),
        ("sgd_momentum wd", lambda p, fe: torch.optim.SGD(p, lr=1e-3, momentum=0.9, weight_decay=1e-4, foreach=fe)),
        ("adam", lambda p, fe: torch.optim.Adam(p, lr=1e-4, foreach=fe)),
        ("adam wd", lambda p, fe: torch.optim.Adam(p, lr=1e-4, weight_decay=1e-2, foreach=fe)),
        ("adamw", lambda p, fe: torch.optim.AdamW(p, lr=1e-4, foreach=fe)),
    ]:
        # fe: foreach=False / True, or "fused" (fused=True: PyTorch >= 2.4 on CPU; SGD, Adam, AdamW)
        for fe in (False, True) + (("fused",) if _fused_cpu() else ()):
            ps = [torch.randn(s, requires_grad=True) for s in sizes]
            opt = ctor(ps, fe) if fe != "fused" else _with_fused(ctor, ps)
            for p in ps:
                p.grad = torch.randn_like(p)
            gc.collect()
            b0 = heap.current()
            heap.reset_peak()
            opt.step()  # first step: creates state
            first = heap.peak() - b0
            st = heap.current() - b0
            for p in ps:
                p.grad = torch.randn_like(p)
            gc.collect()
            lvl = heap.current()
            heap.reset_peak()
            opt.step()
            pk = heap.peak() - lvl
            print("  %-16s foreach=%-5s state %.2f P_tot; first step peak %.2f P_max; steady step temp %8.1f KiB = %.3f P_max (P_max = %d KiB, sum P = %.2f P_max)"
                  % (name, fe, st / K / (sum(sizes) * 4 / K), first / K / P, pk / K, pk / K / P, P, sum(sizes) * 4 / K / P))
            del opt, ps


def ckpt():
    print("## non-reentrant checkpoint (use_reentrant=False) vs plain, 4 pre-norm blocks d=256 T=128 B=2")
    torch.manual_seed(0)
    blocks = nn.ModuleList([measure.Block(256, 4, 1024) for _ in range(4)])
    x0 = torch.randn(2, 128, 256, requires_grad=True)
    Xb = x0.numel() * 4 / K
    for mode in ("plain", "ckpt", "plain", "ckpt"):
        gc.collect()
        b = heap.current()
        heap.reset_peak()
        h = x0
        for blk in blocks:
            h = cp.checkpoint(blk, h, use_reentrant=False) if mode == "ckpt" else blk(h)
        after = heap.current() - b
        fpk = heap.peak() - b
        g = torch.ones_like(h)
        heap.reset_peak()
        h.backward(g)
        pk = heap.peak() - b
        grads = sum(p.grad.numel() * 4 for p in blocks.parameters()) + x0.numel() * 4
        print("  %-5s after fwd %8.1f KiB (%.2f x-sized)  fwd peak %8.1f KiB  fwd+bwd peak %8.1f KiB (grads %.1f KiB)"
              % (mode, after / K, after / K / Xb, fpk / K, pk / K, grads / K))
        for p in blocks.parameters():
            p.grad = None
        x0.grad = None
        del h, g
    # saved bytes of one block, for comparison
    seen = {}
    pp = {p.storage().data_ptr() for p in blocks.parameters()}

    def pack(t):
        s = t.storage()
        if s.data_ptr() not in pp:
            seen[s.data_ptr()] = s.nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = blocks[0](x0)
    print("  one block saves %.1f KiB (%.2f x-sized); x-sized = %.1f KiB" % (sum(seen.values()) / K,
                                                                           sum(seen.values()) / K / Xb, Xb))


def main():
    torch.set_num_threads(int(os.environ.get("GB_THREADS", "2")))
    sel = sys.argv[1:] or ["host", "engine", "optim", "ckpt"]
    for s in sel:
        globals()[s]()


if __name__ == "__main__":
    main()
