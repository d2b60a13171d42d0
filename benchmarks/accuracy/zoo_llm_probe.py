#!/usr/bin/python3
"""Probes behind op_rules.md rows L5 and L6 (the new zoo families of measure26_llm.py, PyTorch 2.6 CPU):

  tied     a weight W [V, d] used by an embedding and by F.linear (a tied LM head), fp32 and CPU
           autocast bf16: the backward peak above the live heap before backward, in units of |W|
           (fp32). The head's gradient arrives first and waits in AccumulateGrad's input buffer;
           the engine sums in place when that buffer is a tensor it owns alone
           (input_buffer.cpp, can_accumulate_inplace), out of place otherwise.
  fusedqkv saved bytes (saved_tensors_hooks, counted per storage) of SDPA on q, k, v sliced out of one
           fused projection (Phi-3's qkv_proj) vs three separate projections.

    scripts/torch26-env run python3 benchmarks/accuracy/zoo_llm_probe.py > benchmarks/accuracy/zoo_llm_probe_output-2.6.txt
"""
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

if __name__ == "__main__":
    measure.ensure_shim()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

heap = measure.Heap()


def tied(V=32000, d=256, B=2, T=64):
    print("## tied embedding + LM head: backward peak above live-before, in |W| (fp32 %d x %d)" % (V, d))
    for tie in (False, True):
        for ac in (None, torch.bfloat16):
            torch.manual_seed(0)
            emb = torch.randn(V, d, requires_grad=True)
            head = emb if tie else torch.randn(V, d, requires_grad=True)
            ids = torch.randint(0, V, (B, T))
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=ac is not None):
                x = F.embedding(ids, emb)
                out = F.linear(x * 2.0, head)
                loss = out.float().pow(2).mean()
            gc.collect()
            before = heap.current()
            heap.reset_peak()
            loss.backward()
            w = emb.nbytes
            print("%-6s %-5s bwd peak %.3f |W|  (logits %.3f |W|)" % ("tied" if tie else "untied", "bf16" if ac else "fp32",
                                                                   (heap.peak() - before) / w, out.nbytes / w))
            del emb, head, x, out, loss
            gc.collect()


def fusedqkv(B=2, T=64, d=256, h=8):
    print("## SDPA saved bytes: q, k, v from one fused qkv_proj vs separate projections (d %d, %d heads)" % (d, h))
    hd = d // h
    for ac in (None, torch.bfloat16):
        for fused in (False, True):
            torch.manual_seed(0)
            x = torch.randn(B, T, d, requires_grad=True)
            w = torch.randn(3 * d, d, requires_grad=True)
            saved = {}

            def pack(t):
                s = t.untyped_storage()
                saved[s.data_ptr()] = s.nbytes()
                return t
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=ac is not None):
                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    if fused:
                        qkv = F.linear(x, w)
                        q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
                    else:
                        q, k, v = F.linear(x, w[:d]), F.linear(x, w[d:2 * d]), F.linear(x, w[2 * d:])
                    q, k, v = (t.view(B, T, h, hd).transpose(1, 2) for t in (q, k, v))
                    q, k = q * 1.5, k * 1.5  # RoPE's multiply: new tensors, as q, k after rotation
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)
            act = sum(saved.values()) - w.nbytes - x.nbytes  # the activations only
            print("%-5s %-8s saved %8d B (|x| = %d B; per token %.0f B)" % ("bf16" if ac else "fp32", "fused" if fused else "separate",
                                                                        act, x.nbytes, act / (B * T)))


if __name__ == "__main__":
    print("torch", torch.__version__)
    for name in sys.argv[1:] or ["tied", "fusedqkv"]:
        globals()[name]()
