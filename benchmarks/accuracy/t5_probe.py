"""Saved bytes of a small T5 (transformers' T5ForConditionalGeneration, modeling_t5.py written
op for op: transformers is not installed in the root) under PyTorch 2.6 CPU, training mode
(dropout 0.1), saved_tensors_hooks over the model's forward (measure.py saved_bytes_of).

    scripts/torch26-env run python3 benchmarks/accuracy/t5_probe.py

Pinned against models::t5 in tests/unit/test_llm_zoo.cpp.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from measure import saved_bytes_of  # noqa: E402


class T5LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, h):
        variance = h.to(torch.float32).pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(variance + self.eps)
        if self.weight.dtype in (torch.float16, torch.bfloat16):
            h = h.to(self.weight.dtype)
        return self.weight * h


def relative_position_bucket(relative_position, bidirectional, num_buckets=32, max_distance=128):
    buckets = 0
    if bidirectional:
        num_buckets //= 2
        buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, relative_position, large)


class T5Attention(nn.Module):
    def __init__(self, d, dkv, heads, has_bias, is_decoder, p, buckets=32):
        super().__init__()
        self.h, self.dkv, self.inner, self.p, self.is_decoder, self.has_bias = heads, dkv, heads * dkv, p, is_decoder, has_bias
        self.q, self.k, self.v = (nn.Linear(d, self.inner, bias=False) for _ in range(3))
        self.o = nn.Linear(self.inner, d, bias=False)
        if has_bias:
            self.relative_attention_bias = nn.Embedding(buckets, heads)

    def compute_bias(self, q_len, k_len):
        rel = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
        bucket = relative_position_bucket(rel, bidirectional=not self.is_decoder)
        return self.relative_attention_bias(bucket).permute([2, 0, 1]).unsqueeze(0)

    def forward(self, x, mask, kv=None, position_bias=None):
        B = x.shape[0]
        src = x if kv is None else kv
        q = self.q(x).view(B, -1, self.h, self.dkv).transpose(1, 2)
        k = self.k(src).view(B, -1, self.h, self.dkv).transpose(1, 2)
        v = self.v(src).view(B, -1, self.h, self.dkv).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(3, 2))
        if position_bias is None:
            lq, lk = scores.shape[-2], scores.shape[-1]
            position_bias = self.compute_bias(lq, lk) if self.has_bias else torch.zeros((1, self.h, lq, lk), dtype=scores.dtype)
            position_bias = position_bias + mask
        scores += position_bias
        w = F.softmax(scores.float(), dim=-1).type_as(scores)
        w = F.dropout(w, p=self.p, training=self.training)
        out = torch.matmul(w, v).transpose(1, 2).contiguous().view(B, -1, self.inner)
        return self.o(out), position_bias


class T5Stack(nn.Module):
    def __init__(self, shared, d, dkv, ff, layers, heads, is_decoder, p):
        super().__init__()
        self.shared, self.is_decoder, self.p = shared, is_decoder, p
        self.blocks = nn.ModuleList()
        for i in range(layers):
            b = nn.Module()
            b.ln0, b.att = T5LayerNorm(d), T5Attention(d, dkv, heads, i == 0, is_decoder, p)
            if is_decoder:
                b.ln1, b.cross = T5LayerNorm(d), T5Attention(d, dkv, heads, False, True, p)
            b.ln2, b.wi, b.wo = T5LayerNorm(d), nn.Linear(d, ff, bias=False), nn.Linear(ff, d, bias=False)
            self.blocks.append(b)
        self.final = T5LayerNorm(d)

    def forward(self, ids, enc=None):
        B, L = ids.shape
        drop = lambda t: F.dropout(t, p=self.p, training=self.training)  # noqa: E731
        h = drop(self.shared(ids))
        ones = torch.ones(B, L)
        if self.is_decoder:  # the 4-D causal mask, and the inverted encoder mask
            causal = torch.tril(torch.ones(L, L))[None, None].expand(B, 1, L, L)
            mask = (1.0 - causal) * torch.finfo(torch.float32).min
            enc_mask = (1.0 - torch.ones(B, enc.shape[1])[:, None, None, :]) * torch.finfo(torch.float32).min
        else:
            mask = (1.0 - ones[:, None, None, :]) * torch.finfo(torch.float32).min
        pb, epb = None, None
        for b in self.blocks:
            a, pb = b.att(b.ln0(h), mask, position_bias=pb)
            h = h + drop(a)
            if self.is_decoder:
                a, epb = b.cross(b.ln1(h), enc_mask, kv=enc, position_bias=epb)
                h = h + drop(a)
            f = drop(F.relu(b.wi(b.ln2(h))))
            if f.dtype != b.wo.weight.dtype:  # T5DenseActDense: h.to(self.wo.weight.dtype)
                f = f.to(b.wo.weight.dtype)
            h = h + drop(b.wo(f))
        return drop(self.final(h))


class T5(nn.Module):
    def __init__(self, vocab, d, dkv, ff, layers, heads, source, p=0.1):
        super().__init__()
        self.d, self.source = d, source
        self.shared = nn.Embedding(vocab, d)
        self.encoder = T5Stack(self.shared, d, dkv, ff, layers, heads, False, p)
        self.decoder = T5Stack(self.shared, d, dkv, ff, layers, heads, True, p)

    def forward(self, ids):  # [B, source + target] ids: the encoder's, then the decoder's
        enc = self.encoder(ids[:, :self.source])
        dec = self.decoder(ids[:, self.source:], enc)
        return F.linear(dec * self.d ** -0.5, self.shared.weight)  # the tied lm_head


CASES = [  # name, vocab, d_model, d_kv, d_ff, layers, heads, source, target, dropout
    ("t5_d64_h4_s32_t16", 1000, 64, 16, 128, 2, 4, 32, 16, 0.1),
    ("t5_d64_h8x16_s32_t16", 1000, 64, 16, 128, 2, 8, 32, 16, 0.1),  # heads x d_kv = 128 != d_model
    ("t5_d128_h4_s64_t64", 2000, 128, 32, 512, 3, 4, 64, 64, 0.1),
    ("t5_d64_h4_s32_t16_nodrop", 1000, 64, 16, 128, 2, 4, 32, 16, 0.0),
]


def main():
    print("torch", torch.__version__)
    print("case                          params  saved_fp32  saved_bf16_autocast")  # batch 2
    for name, vocab, d, dkv, ff, layers, heads, source, target, p in CASES:
        torch.manual_seed(0)
        m = T5(vocab, d, dkv, ff, layers, heads, source, p).train()
        params = sum(q.numel() for q in m.parameters())
        ids = torch.randint(0, vocab, (2, source + target))
        saved = [saved_bytes_of(m, ids, a) for a in (None, torch.bfloat16)]
        print("%-28s %8d  %10d  %10d" % (name, params, saved[0], saved[1]))


if __name__ == "__main__":
    main()
