#!/usr/bin/python3
"""Measure one training step per case under PyTorch 2.6 (CPU): the 2.6 reference.

Runs inside the Debian trixie root of scripts/torch26-env (PyTorch 2.6.0, torchvision 0.21):

    scripts/torch26-env run python3 benchmarks/accuracy/measure26.py \\
        --out benchmarks/accuracy/reference/pytorch-2.6-cpu.json
    scripts/torch26-env run python3 benchmarks/accuracy/measure26.py --list
    scripts/torch26-env run python3 benchmarks/accuracy/measure26.py --cases gpt2,llama --out /tmp/x.json

Method and fields: measure.py's (same models, same malloc shim, same step; see reference/README.md),
plus per-case descriptive fields, so the estimator can rebuild each configuration:

  model        the zoo name (scripts/estimate MODEL) or the seed model
  batch, image_size, seq, sizes   input and family sizes (sizes use the C++ config field names)
  precision    fp32 | bf16_autocast (torch.autocast('cpu', torch.bfloat16) around forward + loss;
               parameters, gradients and optimizer state stay fp32; backward outside autocast)
  optimizer, optimizer_impl   sgd | sgd_momentum | adam | adamw, and for_loop | foreach | fused
               (for_loop = foreach=False: what 2.6 picks by default on CPU, see "cpu_default_optimizer_impl")
  attention    materialized (q @ kᵀ, softmax, @ v) | sdpa (F.scaled_dot_product_attention; CPU flash
               kernel) | torch_mha (nn.MultiheadAttention; in 2.6 its training path with
               need_weights=False calls SDPA too) | none
  checkpoint   none | blocks (each transformer block) | frames (each per-frame CNN pass):
               torch.utils.checkpoint(..., use_reentrant=False)
  dropout      {embedding, residual, attention_probs} probabilities where the model has dropout
  train_only   parameter-name prefixes that stay trainable (everything else frozen), or null
  saved_bytes  as in 1.13, and also for checkpointed cases: in 2.6 a non-reentrant checkpoint saves
               its inputs through an ordinary autograd node (NoopSaveInputs) where outer
               saved_tensors_hooks see them, so saved_bytes = what stays saved after forward
               (segment inputs + everything outside the segments), not the recomputed tensors.
"""
import datetime
import gc
import json
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

if __name__ == "__main__":
    measure.ensure_shim()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.checkpoint  # noqa: E402

from measure import GPT2, MLP, Temporal  # noqa: E402


# --------------------------------------------------------------------------- models (2.x only)
class Bert(nn.Module):
    """transformers' BertModel (eager attention), op for op: word + token-type + position embeddings,
    LayerNorm, dropout; post-norm layers with separate q, k, v Linear, scores q @ kᵀ / √d, softmax,
    dropout on the probabilities (attention_probs_dropout_prob), @ v, dense → dropout → LN(+x), then
    dense → GELU → dense → dropout → LN(+h); the pooler tanh(Linear(h[:, 0])) is the output."""

    def __init__(self, vocab=30522, max_pos=512, type_vocab=2, d=768, layers=12, heads=12, ffn=3072, drop=0.1,
                 attn_drop=0.1):
        super().__init__()
        self.h, self.hd, self.drop, self.attn_drop = heads, d // heads, drop, attn_drop
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.tok = nn.Embedding(type_vocab, d)
        self.ln_e = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            m = nn.Module()
            m.q, m.k, m.v, m.o = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            m.ln1 = nn.LayerNorm(d, eps=1e-12)
            m.fc1, m.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
            m.ln2 = nn.LayerNorm(d, eps=1e-12)
            self.layers.append(m)
        self.pool = nn.Linear(d, d)

    def _heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.hd).permute(0, 2, 1, 3)

    def forward(self, ids):
        B, T = ids.shape
        pos = torch.arange(T).unsqueeze(0)
        types = torch.zeros_like(ids)
        x = self.word(ids) + self.tok(types) + self.pos(pos)
        x = F.dropout(self.ln_e(x), self.drop, self.training)
        for m in self.layers:
            q, k, v = self._heads(m.q(x)), self._heads(m.k(x)), self._heads(m.v(x))
            s = (q @ k.transpose(-1, -2)) / (self.hd ** 0.5)
            p = F.dropout(s.softmax(-1), self.attn_drop, self.training)
            c = (p @ v).permute(0, 2, 1, 3).contiguous().view(B, T, -1)
            h = m.ln1(F.dropout(m.o(c), self.drop, self.training) + x)
            x = m.ln2(F.dropout(m.fc2(F.gelu(m.fc1(h))), self.drop, self.training) + h)
        return torch.tanh(self.pool(x[:, 0]))


class RMSNorm(nn.Module):
    """transformers' LlamaRMSNorm."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        h = x.to(torch.float32)
        v = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(v + self.eps)
        return self.weight * h.to(x.dtype)


def _rotate_half(x):
    return torch.cat((-x[..., x.shape[-1] // 2:], x[..., : x.shape[-1] // 2]), dim=-1)


def _repeat_kv(x, n):
    """transformers' repeat_kv (integrations/sdpa_attention.py): [B, kv_heads, T, d] expanded to n copies
    of each head and reshaped (a copy) to [B, kv_heads · n, T, d]."""
    B, kvh, T, d = x.shape
    return x[:, :, None, :, :].expand(B, kvh, n, T, d).reshape(B, kvh * n, T, d)


class Llama(nn.Module):
    """transformers' LlamaForCausalLM (sdpa attention), op for op: embedding; per layer
    x + o(SDPA(RoPE(q(RMSNorm(x))), RoPE(k(..)), v(..), causal, enable_gqa)) and
    x + down(silu(gate(RMSNorm(h))) * up(RMSNorm(h))); final RMSNorm; untied lm_head; no biases.
    cos/sin [B, T, head_dim] are computed once per forward (transformers >= 4.38), in the
    activations' type. ckpt: each decoder layer under non-reentrant checkpoint."""

    def __init__(self, vocab=32000, d=256, layers=2, heads=8, kv_heads=2, ffn=688, ctx=2048, ckpt=False):
        super().__init__()
        self.h, self.kvh, self.hd, self.ckpt = heads, kv_heads, d // heads, ckpt
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            m = nn.Module()
            m.n1, m.n2 = RMSNorm(d), RMSNorm(d)
            m.q = nn.Linear(d, d, bias=False)
            m.k = nn.Linear(d, kv_heads * self.hd, bias=False)
            m.v = nn.Linear(d, kv_heads * self.hd, bias=False)
            m.o = nn.Linear(d, d, bias=False)
            m.gate, m.up = nn.Linear(d, ffn, bias=False), nn.Linear(d, ffn, bias=False)
            m.down = nn.Linear(ffn, d, bias=False)
            self.layers.append(m)
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd)),
                             persistent=False)

    def _layer(self, m, x, cos, sin, mask=None):
        B, T, _ = x.shape
        h = m.n1(x)
        q, k, v = self._heads(m, h, B, T)
        q, k = self._rope(q, k, cos.unsqueeze(1), sin.unsqueeze(1))
        a = self._attend(q, k, v, mask)
        x = x + m.o(a.transpose(1, 2).contiguous().view(B, T, self.h * self.hd))
        h = m.n2(x)
        return x + self._mlp(m, h)

    eager = False  # attn_implementation="eager" (transformers 5's eager_attention_forward) instead of "sdpa"
    softcap = None  # eager only: Gemma 2's attn_logit_softcapping

    def _attend(self, q, k, v, mask):
        """SDPA as transformers' sdpa_attention_forward calls it: causal without a mask (grouped-query
        heads through enable_gqa); with one, k and v repeated to every query head first (repeat_kv).
        eager: transformers 5's eager_attention_forward, op for op: repeat_kv, q @ kᵀ times the scaling (a
        Python number), Gemma 2's softcap (tanh(w / cap) * cap), the float mask added, softmax in fp32 cast
        back to q's type, dropout (p 0: none), @ v."""
        if self.eager:
            n = self.h // self.kvh
            k, v = (_repeat_kv(k, n), _repeat_kv(v, n)) if n > 1 else (k, v)
            w = torch.matmul(q, k.transpose(2, 3)) * self.hd ** -0.5
            if self.softcap is not None:
                w = torch.tanh(w / self.softcap) * self.softcap
            w = F.softmax(w + mask, dim=-1, dtype=torch.float32).to(q.dtype)
            w = F.dropout(w, p=0.0, training=self.training)
            return torch.matmul(w, v)
        if mask is not None and self.kvh != self.h:
            k, v = _repeat_kv(k, self.h // self.kvh), _repeat_kv(v, self.h // self.kvh)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None,
                                              enable_gqa=self.kvh != self.h and mask is None)

    def _rope_table(self, x, inv_freq):
        """cos and sin [B, T, head_dim] of `inv_freq` in x's type (a model's rotary_emb, once per forward)."""
        B, T = x.shape[:2]
        freqs = torch.outer(torch.arange(T).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1).unsqueeze(0).expand(B, -1, -1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    def _qkv(self, m, h):
        """The q, k, v projections (measure26_llm.py's Phi3 slices one fused qkv_proj)."""
        return m.q(h), m.k(h), m.v(h)

    def _heads(self, m, h, B, T):
        """q, k, v as [B, heads, T, head_dim] views of the projections (measure26_llm.py's Qwen3
        normalizes q and k per head first)."""
        q, k, v = self._qkv(m, h)
        return (q.view(B, T, self.h, self.hd).transpose(1, 2), k.view(B, T, self.kvh, self.hd).transpose(1, 2),
                v.view(B, T, self.kvh, self.hd).transpose(1, 2))

    def _rope(self, q, k, c, s):
        """RoPE on q and k (measure26_llm.py's Phi3PartialRotary rotates the first channels of each head)."""
        return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s

    def _mask(self, B, T):
        """SDPA's attn_mask, None for is_causal (measure26_llm.py's SlidingWindow makes transformers' window mask)."""
        return None

    def _eager_mask(self, B, T, dtype, window=None):
        """transformers 5's eager_mask (masking_utils.py): the bool mask on broadcast indices, never skipped,
        expanded to [B, 1, T, T], then torch.where(mask, tensor(0.0, dtype), finfo(dtype).min): a float mask in
        the embeddings' type, made once per forward for every layer that reads it (causal, or within a window)."""
        q_idx = torch.arange(T)[None, None, :, None]
        kv_idx = torch.arange(T)[None, None, None, :]
        m = torch.ones((), dtype=torch.bool) & (kv_idx <= q_idx)
        if window is not None:
            m = m & (kv_idx > q_idx - window)
        return torch.where(m.expand(B, -1, T, T), torch.tensor(0.0, dtype=dtype), torch.finfo(dtype).min)

    def _masks(self, B, T, dtype):
        """(the masked layers' mask, every other layer's): SDPA's (_mask, None); eager's float masks, the
        sliding one where the model has a window."""
        if not self.eager:
            return self._mask(B, T), None
        full = self._eager_mask(B, T, dtype)
        window = getattr(self, "window", None)
        return (self._eager_mask(B, T, dtype, window) if window is not None else full), full

    def _masked(self, i):
        """Whether layer i reads the mask (measure26_llm.py's Olmo3: its sliding layers only)."""
        return True

    def _mlp(self, m, h):
        """LlamaMLP (measure26_llm.py's Mixtral replaces it by the sparse MoE block)."""
        return m.down(F.silu(m.gate(h)) * m.up(h))

    def _embed(self, ids):
        """embed_tokens (measure26_llm.py's Gemma scales it by √hidden_size)."""
        return self.embed(ids)

    def forward(self, ids):
        B, T = ids.shape
        x = self._embed(ids)
        cos, sin = self._rope_table(x, self.inv_freq)
        mask, full = self._masks(B, T, x.dtype)
        for i, m in enumerate(self.layers):
            layer_mask = mask if mask is not None and self._masked(i) else full
            args = (cos, sin) if layer_mask is None else (cos, sin, layer_mask)
            if self.ckpt:
                x = torch.utils.checkpoint.checkpoint(self._layer, m, x, *args, use_reentrant=False)
            else:
                x = self._layer(m, x, *args)
        return self.lm_head(self.norm(x))


def _train_only(model, prefixes):
    for n, p in model.named_parameters():
        if not any(n == q or n.startswith(q + ".") for q in prefixes):
            p.requires_grad_(False)
    return model


# --------------------------------------------------------------------------- cases
CASES = {}  # name -> dict(config fields..., build, batch)


def case(name, model, build, make_batch, description, batch, image_size=None, seq=None, sizes=None, precision="fp32",
         optimizer="adamw", optimizer_impl="for_loop", attention="none", checkpoint="none", dropout=None,
         train_only=None):
    CASES[name] = dict(case=name, description=description, model=model, batch=batch, image_size=image_size, seq=seq,
                       sizes=sizes, precision=precision, optimizer=optimizer, optimizer_impl=optimizer_impl,
                       attention=attention, checkpoint=checkpoint, dropout=dropout, train_only=train_only,
                       build=build, make_batch=make_batch)


def image(name, model, size, batch=2, **kw):
    tvkw = {"image_size": size} if model.startswith("vit") else {}
    att = "torch_mha" if model.startswith("vit") else ("window_materialized" if model.startswith("swin") else "none")
    kw.setdefault("attention", att)
    train_only = kw.get("train_only")
    build = (lambda: _train_only(measure._tv(model, **tvkw), train_only)) if train_only else \
        (lambda: measure._tv(model, **tvkw))
    case(name, model, build, lambda: torch.randn(batch, 3, size, size),
         kw.pop("description", "torchvision %s, %dx%d, batch %d" % (model, size, size, batch)), batch, image_size=size,
         **kw)


def gpt2(name, seq=128, batch=2, description=None, **kw):
    g = dict(kw.pop("gpt", {}))
    ckpt = kw.get("checkpoint", "none") == "blocks"
    drop = kw.get("dropout") or {}
    sdpa = kw.get("attention") == "sdpa"
    sizes = dict(vocab=50257, context=1024, width=768, layers=12, heads=12)
    sizes.update(g)
    kw.setdefault("attention", "materialized")
    build = lambda: GPT2(ckpt=ckpt, vocab=sizes["vocab"], ctx=sizes["context"], d=sizes["width"],  # noqa: E731
                         layers=sizes["layers"], heads=sizes["heads"], drop=drop.get("residual", 0.0),
                         attn_drop=drop.get("attention_probs", 0.0), sdpa=sdpa)
    case(name, "gpt2", build, lambda: torch.randint(0, sizes["vocab"], (batch, seq)),
         description or "GPT-2 small as in the 1.13 reference (tied head, no mask), batch %d, seq %d" % (batch, seq),
         batch, seq=seq, sizes=sizes, **kw)


def ref13(name, model, **kw):
    """A case of the 1.13 reference, same model definition, same batch and optimizer."""
    desc, opt, build, mk = measure.CASES[name]
    case(name, model, build, mk, desc + " (as in pytorch-1.13-cpu.json)", optimizer=opt, **kw)


# the 2-layer Llama of sections 3 and 6
LLAMA_SIZES = dict(vocab=32000, width=256, layers=2, heads=8, kv_heads=2, ffn=688, context=2048)
LLAMA_DESC = ("2-layer Llama-style decoder (RMSNorm, RoPE, SwiGLU, GQA 8 q / 2 kv heads, SDPA causal with "
              "enable_gqa, untied head), width 256, ffn 688, vocab 32000, batch 2, seq 64")


def _reference_113_cases():
    """Sections 1 and 2: the 1.13 reference's cases and the zoo's torchvision models."""
    # 1. every case of the 1.13 reference (fp32, for-loop optimizers)
    ref13("mlp_b8", "mlp", batch=8)
    ref13("resnet18_b2", "resnet18", batch=2, image_size=224)
    ref13("vit_b_16_b2", "vit_b_16", batch=2, image_size=224, attention="torch_mha")
    ref13("gpt2_small_b2_t128", "gpt2", batch=2, seq=128, attention="materialized",
          sizes=dict(vocab=50257, context=1024, width=768, layers=12, heads=12))
    ref13("gpt2_small_ckpt_b2_t128", "gpt2", batch=2, seq=128, attention="materialized", checkpoint="blocks",
          sizes=dict(vocab=50257, context=1024, width=768, layers=12, heads=12))
    ref13("dual_vit_pwca_b1_448", "dual_vit_pwca", batch=1, image_size=448, attention="materialized")
    ref13("bev_unfold_b1_64", "bev_unfold", batch=1, image_size=64)
    ref13("bev_dwconv_b1_64", "bev_dwconv", batch=1, image_size=64)
    ref13("gat_n2000_e20000", "gat", batch=1, sizes=dict(nodes=2000, edges=20000, ids=5000))
    ref13("convnext_tiny_frozen_b2", "convnext_tiny", batch=2, image_size=224, train_only=["classifier"])
    ref13("convnext_tiny_full_b2", "convnext_tiny", batch=2, image_size=224)
    ref13("temporal_64_128_256_b2_t5", "temporal", batch=2, image_size=96, attention="materialized")

    # 2. the zoo's torchvision models at small sizes, fp32, AdamW for-loop (SGD+momentum for the biggest)
    for m, s in [("resnet34", 64), ("resnet50", 64), ("resnet101", 64), ("resnet152", 64), ("wide_resnet50_2", 64),
                 ("vit_b_16", 96), ("vit_l_16", 64), ("convnext_small", 64), ("vgg11", 64), ("vgg11_bn", 64),
                 ("vgg16", 64), ("vgg16_bn", 64), ("mobilenet_v2", 96), ("mobilenet_v3_large", 96),
                 ("efficientnet_b0", 96), ("densenet121", 64), ("swin_t", 64), ("convnext_tiny", 64),
                 ("resnet18", 96)]:
        big = m in ("vit_l_16", "vgg16", "vgg16_bn", "vgg11", "vgg11_bn", "resnet152", "wide_resnet50_2")
        image("%s_b2_%d" % (m, s), m, s, optimizer="sgd_momentum" if big else "adamw")


def _transformer_and_seed_cases():
    """Sections 3 and 4: transformers at short sequences, the seed models at other sizes."""
    # 3. transformers at short sequences
    gpt2("gpt2_small_b2_t64", seq=64)
    case("bert_base_b2_t64", "bert-base", Bert, lambda: torch.randint(0, 30522, (2, 64)),
         "BERT-base (transformers BertModel eager attention, pooler output; hidden and attention-probability "
         "dropout 0.1), batch 2, seq 64", 2, seq=64, attention="materialized",
         sizes=dict(vocab=30522, max_positions=512, type_vocab=2, width=768, layers=12, heads=12, ffn=3072),
         dropout=dict(embedding=0.1, residual=0.1, attention_probs=0.1))
    case("llama2l_b2_t64", "llama", lambda: Llama(), lambda: torch.randint(0, 32000, (2, 64)), LLAMA_DESC, 2, seq=64,
         sizes=LLAMA_SIZES, attention="sdpa")

    # 4. the seed models at other sizes (the reference sizes are in section 1)
    case("temporal_64_128_256_b1_t5_64", "temporal", Temporal, lambda: torch.randn(1, 5, 3, 64, 64),
         "seed 004 temporal model at 64x64, batch 1", 1, image_size=64, attention="materialized")


def _variant_cases():
    """Sections 5 to 7: bf16 autocast, checkpointing and the optimizer implementations."""
    # 5. bf16 autocast (CPU)
    for base in ("mlp_b8", "resnet18_b2_96", "vit_b_16_b2_96", "gpt2_small_b2_t64", "bert_base_b2_t64", "llama2l_b2_t64",
                 "convnext_tiny_b2_64"):
        c = dict(CASES[base])
        c["case"] = base + "_bf16"
        c["precision"] = "bf16_autocast"
        c["description"] += ", CPU autocast bf16"
        CASES[c["case"]] = c

    # 6. checkpointing
    gpt2("gpt2_small_ckpt_b2_t64", seq=64, checkpoint="blocks",
         description="GPT-2 small, each block checkpointed (non-reentrant), batch 2, seq 64")
    case("llama2l_ckpt_b2_t64", "llama", lambda: Llama(ckpt=True), lambda: torch.randint(0, 32000, (2, 64)),
         LLAMA_DESC + ", each decoder layer checkpointed (non-reentrant)", 2, seq=64, sizes=LLAMA_SIZES,
         attention="sdpa", checkpoint="blocks")
    # (b) seed 004 with each per-frame CNN pass checkpointed
    case("temporal_ckpt_frames_b2_t5", "temporal", lambda: Temporal(ckpt_frames=True),
         lambda: torch.randn(2, 5, 3, 96, 96),
         "seed 004 temporal model (as temporal_64_128_256_b2_t5), each frame's CNN under "
         "torch.utils.checkpoint (non-reentrant)", 2, image_size=96, attention="materialized", checkpoint="frames")

    # 7. optimizer implementations (foreach / fused AdamW; foreach SGD+momentum)
    for impl in ("foreach", "fused"):
        for base in ("mlp_b8", "resnet18_b2_96", "gpt2_small_b2_t64"):
            c = dict(CASES[base])
            c["case"] = "%s_adamw_%s" % (base, impl)
            c["optimizer"], c["optimizer_impl"] = "adamw", impl
            c["description"] += ", AdamW %s=True" % impl
            CASES[c["case"]] = c
    c = dict(CASES["resnet18_b2_96"])
    c.update(case="resnet18_b2_96_sgdm_foreach", optimizer="sgd_momentum", optimizer_impl="foreach",
             description=c["description"] + ", SGD momentum 0.9 foreach=True")
    CASES[c["case"]] = c


def _attention_and_known_miss_cases():
    """Sections 8 and 9: attention through SDPA; GPT-2 with dropout, ResNet-50 training only fc."""
    # 8. attention through F.scaled_dot_product_attention (GPT-2 small; the ViT cases use nn.MultiheadAttention,
    #    which in 2.6 runs SDPA)
    gpt2("gpt2_small_sdpa_b2_t128", seq=128, attention="sdpa",
         description="GPT-2 small, attention through F.scaled_dot_product_attention (no mask, same projections), "
                     "batch 2, seq 128")
    gpt2("gpt2_small_sdpa_b2_t64", seq=64, attention="sdpa",
         description="GPT-2 small, attention through F.scaled_dot_product_attention, batch 2, seq 64")

    # 9. the configurations today's estimator gets wrong
    # (a) GPT-2 with dropout 0.1 in embeddings, attention probabilities and residuals (GPT-2's pdrops)
    gpt2("gpt2_small_drop_b2_t128", seq=128, dropout=dict(embedding=0.1, residual=0.1, attention_probs=0.1),
         description="GPT-2 small with dropout 0.1 after embeddings, on attention probabilities and on both "
                     "residual branches (GPT-2's embd/attn/resid_pdrop), batch 2, seq 128")
    gpt2("gpt2_small_residdrop_b2_t128", seq=128, dropout=dict(embedding=0.1, residual=0.1, attention_probs=0.0),
         description="GPT-2 small with dropout 0.1 after embeddings and on both residual branches only "
                     "(no attention-probability dropout), batch 2, seq 128")
    # (c) resnet50 with everything frozen except fc
    image("resnet50_fc_only_b2_224", "resnet50", 224, train_only=["fc"],
          description="torchvision resnet50, 224x224, batch 2, every parameter frozen except fc")


def _define_cases():
    _reference_113_cases()
    _transformer_and_seed_cases()
    _variant_cases()
    _attention_and_known_miss_cases()


_define_cases()


# --------------------------------------------------------------------------- run
def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "unknown")
    except OSError:
        return "unknown"


def _environment():
    import torchvision

    env = {"torch": torch.__version__, "torchvision": torchvision.__version__,
           "python": platform.python_version(), "threads": torch.get_num_threads(),
           "date": datetime.date.today().isoformat(),
           # oneDNN picks its kernels (and their transients) by the CPU: record which one measured
           "cpu_capability": torch.backends.cpu.get_cpu_capability(), "cpu": _cpu_model()}
    try:
        q = subprocess.run(["dpkg-query", "-W", "python3-torch", "python3-torchvision", "libopenblas0-pthread",
                            "libc6", "libdnnl3"], capture_output=True, text=True).stdout
        env["debian_packages"] = dict(line.split("\t") for line in q.strip().splitlines())
    except OSError:
        pass
    try:
        from torch.optim.optimizer import _default_to_fused_or_foreach

        p = [torch.zeros(2, requires_grad=True)]
        fused, foreach = _default_to_fused_or_foreach(p, False, False)
        env["cpu_default_optimizer_impl"] = "fused" if fused else "foreach" if foreach else "for_loop"
    except ImportError:
        env["cpu_default_optimizer_impl"] = "for_loop"
    return env


def run_case(c, heap):
    torch.manual_seed(0)
    model = c["build"]()
    model.train()
    batch = c["make_batch"]()
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = measure.make_optimizer(c["optimizer"], trainable, c["optimizer_impl"])
    ac = torch.bfloat16 if c["precision"] == "bf16_autocast" else None
    r = {k: v for k, v in c.items() if k not in ("build", "make_batch")}
    r["dtype"] = "float32"  # parameters, gradients, optimizer state
    r["loss"] = "(out ** 2).mean()"
    r.update(measure.measure_step(model, batch, opt, heap, autocast=ac, saved="hooks_always"))
    return r


def select_cases(doc, cases, list_line):
    """The command line of a measuring script (--cases, --skip, --out, --list): returns the parsed
    arguments and the selected case names, or None after printing the list (`list_line(name, case)`)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", help="comma-separated names or substrings (default: all)")
    ap.add_argument("--skip", help="comma-separated names or substrings to leave out")
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        for n, c in cases.items():
            print(list_line(n, c))
        return args, None
    sel = args.cases.split(",") if args.cases else None
    skip = args.skip.split(",") if args.skip else []
    names = [n for n in cases if (sel is None or n in sel or any(s in n for s in sel)) and
             not any(s in n for s in skip)]
    if sel and not names:
        sys.exit("no case matches %s (see --list)" % args.cases)
    return args, names


def measure_cases(names, cases, run, heap, res, out):
    """Measures each named case with run(case, heap) into res["cases"] (timed), writing res to `out`
    after every case (a long run keeps what it has), or to stdout at the end."""
    import time

    def write():
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")

    t_all = time.time()
    for n in names:
        t0 = time.time()
        r = run(cases[n], heap)
        r["seconds"] = round(time.time() - t0, 2)
        # the ISA decides where a 16-bit GEMM runs (op_rules.md 2.6 #82): every case says which it ran on
        r.setdefault("cpu_capability", torch.backends.cpu.get_cpu_capability())
        res["cases"].append(r)
        print("measured %-44s %6.1f s  saved %s  peak %s" % (n, r["seconds"], r.get("saved_bytes"),
                                                           r.get("step_peak_bytes", r.get("prefill_peak_bytes"))),
              file=sys.stderr, flush=True)
        if out:
            write()
        gc.collect()
    res["environment"]["total_seconds"] = round(time.time() - t_all, 1)
    if out:
        write()
    else:
        json.dump(res, sys.stdout, indent=1)
        print()


def main():
    args, names = select_cases(__doc__, CASES, lambda n, c: "%-34s %-14s %-8s %-10s %-9s %s" % (
        n, c["precision"], c["optimizer"], c["optimizer_impl"], c["checkpoint"], c["description"]))
    if names is None:
        return
    env = _environment()
    res = {"source": "PyTorch %s (CPU) and torchvision %s in a Debian trixie root (scripts/torch26-env); one "
                     "training step; measured by benchmarks/accuracy/measure26.py (malloc shim + "
                     "saved_tensors_hooks)" % (env["torch"], env["torchvision"]),
           "environment": env, "cases": []}
    measure_cases(names, CASES, run_case, measure.Heap(), res, args.out)


if __name__ == "__main__":
    main()
