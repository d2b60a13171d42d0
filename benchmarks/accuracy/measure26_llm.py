#!/usr/bin/python3
"""PyTorch 2.6 CPU reference for the LLM features (issue D): LoRA, mixture of experts, decode.

    scripts/torch26-env run python3 benchmarks/accuracy/measure26_llm.py \\
        --out benchmarks/accuracy/reference/pytorch-2.6-cpu-llm.json
    scripts/torch26-env run python3 benchmarks/accuracy/measure26_llm.py --list

Training cases are measured exactly as measure26.py measures a case (its run_case: measure.py's
malloc shim heap reader, saved_tensors_hooks, peaks over zero_grad + forward + backward + step, one
warm-up step first) and carry its descriptive fields, plus:

  lora    {r, targets, dropout, base}: PEFT LoRA (lora_llama_probe.py's LoraLinear, peft's
          lora.Linear.forward written out; peft is not in the root) on every base weight frozen.
          base "fp32": the frozen base in fp32; "bf16": every base weight (embedding, norms,
          projections, lm_head) in bf16 and the adapters in fp32 (PEFT's get_peft_model default
          autocast_adapter_dtype=True upcasts bf16/fp16 adapters to fp32).
  moe     {experts, top_k, tokens_per_expert}: Mixtral-style decoder (moe_probe.py's SparseMoe,
          transformers' MixtralSparseMoeBlock op for op) with a seeded router. Routing is the
          router's own (seed 0), not forced: forcing it would change the ops measured. The actual
          tokens per expert of the measured forward are recorded per layer; every saved tensor of
          the expert loop is linear in an expert's token count, so saved bytes do not depend on
          the split, and the peaks move by the largest expert's excess only (see README).

Decode cases ("kind": "decode") measure serving a 2-layer Llama-style decoder without grad
(model.eval(), torch.no_grad()): prefill `prefill` tokens (the LM head on the last position only,
as vLLM's LogitsProcessor), then `decode` single-token steps, the KV cache either

  static   pre-allocated for prefill + decode tokens, written in place (transformers' StaticCache);
  growing  torch.cat of each new K and V onto the layer's cache (transformers' DynamicCache).

Fields (bytes above the live heap before the phase):
  params                     parameter count;
  kv_cache_bytes_per_token   the cache's bytes per token per sequence: static, the cache's
                             allocation / its tokens; growing, the live heap's growth over the
                             decode steps / (decode · batch);
  prefill_peak_bytes         peak of the prefill (its prompt included) above weights + (static) cache;
  decode_step_peak_bytes     the largest peak of one decode step above the heap before it
                             (growing: the cat's old and new cache of one layer at once; not
                             estimated yet).
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

import measure26  # noqa: E402
from lora_llama_probe import lora_llama, lora_model  # noqa: E402
from measure26 import Llama, _rotate_half  # noqa: E402
from moe_probe import SparseMoe  # noqa: E402
from t5_probe import T5  # noqa: E402

LLAMA_SIZES = dict(vocab=32000, width=256, layers=2, heads=8, kv_heads=2, ffn=688, context=2048)
LLAMA_DESC = ("2-layer Llama-style decoder as llama2l_b2_t64 in pytorch-2.6-cpu.json (RMSNorm, RoPE, SwiGLU, "
              "GQA 8 q / 2 kv heads, SDPA causal, untied head), width 256, ffn 688, vocab 32000")
TARGETS = {"q_proj,v_proj": ("q", "v"), "all-linear": ("q", "k", "v", "o", "gate", "up", "down"),
           "q_proj,v_proj,embed_tokens": ("q", "v", "embed")}

CASES = {}


def _ids(batch, seq):
    return lambda: torch.randint(0, LLAMA_SIZES["vocab"], (batch, seq))


# --------------------------------------------------------------------------- LoRA
def _define_embed_lora_cases(batch=2, seq=64, r=8):
    """PEFT's lora.Embedding on embed_tokens beside q_proj, v_proj (lora_llama_probe.py's LoraEmbedding)."""
    targets = "q_proj,v_proj,embed_tokens"
    for precision, base in (("fp32", "fp32"), ("bf16_autocast", "bf16")):
        name = "llama2l_lora_qv_embed_r%d_d00_%s_b%d_t%d" % (r, "fp32" if base == "fp32" else "bf16_base_bf16", batch, seq)
        desc = "%s, every base weight frozen (%s), LoRA r=%d on %s, lora_dropout 0.0, %s, batch %d, seq %d" % (
            LLAMA_DESC, base, r, targets, "CPU autocast bf16" if precision != "fp32" else "fp32", batch, seq)
        CASES[name] = dict(case=name, description=desc, model="llama", batch=batch, image_size=None, seq=seq,
                           sizes=dict(LLAMA_SIZES), precision=precision, optimizer="adamw",
                           optimizer_impl="for_loop", attention="sdpa", checkpoint="none", dropout=None,
                           train_only=None, lora=dict(r=r, targets=targets, dropout=0.0, base=base),
                           build=_lora_build(targets, r, 0.0, base), make_batch=_ids(batch, seq))


def _lora_build(targets, r, p, base):
    def build():
        m = lora_llama(TARGETS[targets], r, p)
        if base == "bf16":  # the frozen base in bf16, the adapters fp32 (PEFT autocast_adapter_dtype)
            for q in m.parameters():
                if not q.requires_grad:
                    q.data = q.data.to(torch.bfloat16)
        return m
    return build


def _define_lora_cases(batch=2, seq=64, r=8):
    for targets, tag in (("q_proj,v_proj", "qv"), ("all-linear", "all")):
        for p in (0.0, 0.1):
            for precision, base in (("fp32", "fp32"), ("bf16_autocast", "fp32"), ("bf16_autocast", "bf16")):
                name = "llama2l_lora_%s_r%d_d%02d_%s%s_b%d_t%d" % (
                    tag, r, round(p * 100), "fp32" if precision == "fp32" else "bf16",
                    "_base_bf16" if base == "bf16" else "", batch, seq)
                desc = "%s, every base weight frozen (%s), LoRA r=%d on %s, lora_dropout %.1f, %s, batch %d, seq %d" % (
                    LLAMA_DESC, base, r, targets, p, "CPU autocast bf16" if precision != "fp32" else "fp32", batch, seq)
                CASES[name] = dict(case=name, description=desc, model="llama", batch=batch, image_size=None, seq=seq,
                                   sizes=dict(LLAMA_SIZES), precision=precision, optimizer="adamw",
                                   optimizer_impl="for_loop", attention="sdpa", checkpoint="none", dropout=None,
                                   train_only=None, lora=dict(r=r, targets=targets, dropout=p, base=base),
                                   build=_lora_build(targets, r, p, base), make_batch=_ids(batch, seq))


# --------------------------------------------------------------------------- mixture of experts
class Mixtral(Llama):
    """transformers' MixtralForCausalLM at small size: measure26's Llama with each SwiGLU MLP replaced by a
    MixtralSparseMoeBlock (experts of width ffn)."""

    def __init__(self, experts=4, top_k=2, **kw):
        super().__init__(**kw)
        d, f = self.embed.embedding_dim, self.layers[0].gate.out_features
        for m in self.layers:
            del m.gate, m.up, m.down
            m.moe = SparseMoe(d, f, experts, top_k)

    def _mlp(self, m, h):
        return m.moe(h)


def _route_counter(model, top_k, experts, log):
    """Forward hooks on each router that append the tokens per expert of every forward to `log`."""
    def hook(_mod, _inp, logits):
        with torch.no_grad():
            sel = torch.topk(logits.float().softmax(-1), top_k, dim=-1).indices
            log.append(torch.bincount(sel.flatten(), minlength=experts).tolist())
    for m in model.layers:
        m.moe.gate.register_forward_hook(hook)


def _define_moe_cases(batch=2, seq=64, experts=4, top_k=2):
    for precision in ("fp32", "bf16_autocast"):
        name = "mixtral2l_e%dk%d_b%d_t%d%s" % (experts, top_k, batch, seq, "_bf16" if precision != "fp32" else "")
        desc = ("2-layer Mixtral-style decoder: %s with each MLP a MixtralSparseMoeBlock of %d SwiGLU experts "
                "(ffn 688), top-%d, router seeded (torch.manual_seed(0)), %s, batch %d, seq %d" % (
                    LLAMA_DESC, experts, top_k, "CPU autocast bf16" if precision != "fp32" else "fp32", batch, seq))
        CASES[name] = dict(case=name, description=desc, model="mixtral", batch=batch, image_size=None, seq=seq,
                           sizes=dict(LLAMA_SIZES), precision=precision, optimizer="adamw", optimizer_impl="for_loop",
                           attention="sdpa", checkpoint="none", dropout=None, train_only=None,
                           moe=dict(experts=experts, top_k=top_k),
                           build=lambda: Mixtral(experts, top_k), make_batch=_ids(batch, seq))


def run_moe_case(c, heap):
    log = []
    orig = c["build"]
    c = dict(c)

    def build():
        m = orig()
        _route_counter(m, c["moe"]["top_k"], c["moe"]["experts"], log)
        return m
    c["build"] = build
    r = measure26.run_case(c, heap)
    layers = c["sizes"]["layers"]
    # forwards: warm-up, the saved_tensors_hooks pass, the measured one (measure.measure_step)
    r["moe"] = dict(c["moe"], tokens_per_expert=log[2 * layers:3 * layers],
                    routing="the seeded router's own (not forced uniform)")
    return r



# --------------------------------------------------------------------------- the new zoo families
# transformers v4.48.0 written op for op (transformers is not in the root): models/qwen2/modeling_qwen2.py,
# models/gemma/modeling_gemma.py, models/phi3/modeling_phi3.py, models/t5/modeling_t5.py (t5_probe.py's T5).
class Qwen2(Llama):
    """Qwen2ForCausalLM (sdpa): Llama's layers with bias=True on q_proj, k_proj, v_proj (o_proj
    without), lm_head tied to embed_tokens (tie_word_embeddings, Qwen2-0.5B)."""

    def __init__(self, tied=True, **kw):
        super().__init__(**kw)
        for m in self.layers:
            for name in ("q", "k", "v"):
                old = getattr(m, name)
                setattr(m, name, nn.Linear(old.in_features, old.out_features, bias=True))
        if tied:
            self.lm_head.weight = self.embed.weight


class Granite(Llama):
    """GraniteForCausalLM (sdpa; transformers 5 models/granite/modular_granite.py, op for op): Llama's layers with
    GraniteModel's multipliers, each a Python number: the embeddings times embedding_multiplier, each sublayer's
    output times residual_multiplier before its residual add, SDPA's scale attention_multiplier, and the logits
    divided by logits_scaling; lm_head tied to embed_tokens (granite-3.x). The multipliers are granite-3.1-8b's."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.lm_head.weight = self.embed.weight
        self.embedding_multiplier, self.residual_multiplier = 12.0, 0.22
        self.attention_multiplier, self.logits_scaling = 0.0078125, 16.0

    def _embed(self, ids):
        return self.embed(ids) * self.embedding_multiplier

    def _attend(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kvh != self.h,
                                              scale=self.attention_multiplier)

    def _layer(self, m, x, cos, sin, mask=None):
        B, T, _ = x.shape
        q, k, v = self._heads(m, m.n1(x), B, T)
        q, k = self._rope(q, k, cos.unsqueeze(1), sin.unsqueeze(1))
        a = self._attend(q, k, v, mask)
        x = x + m.o(a.transpose(1, 2).contiguous().view(B, T, self.h * self.hd)) * self.residual_multiplier
        return x + self._mlp(m, m.n2(x)) * self.residual_multiplier

    def forward(self, ids):
        return super().forward(ids) / self.logits_scaling


class GemmaRMSNorm(nn.Module):
    """GemmaRMSNorm: normalized in fp32, scaled by (1 + weight) in fp32, cast back (weight init zeros)."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (h * (1.0 + self.weight.float())).type_as(x)


class Gemma(Llama):
    """GemmaForCausalLM (sdpa): heads of head_dim channels (≠ width / heads), multi-query (one kv head),
    GemmaRMSNorm, the embeddings × √hidden_size (a tensor in their dtype), GeGLU with
    gelu_pytorch_tanh, lm_head tied to embed_tokens."""

    def __init__(self, vocab=32000, d=256, layers=2, heads=4, kv_heads=1, head_dim=128, ffn=688, ctx=2048, ckpt=False):
        super().__init__(vocab, d, layers, heads, kv_heads, ffn, ctx, ckpt)
        self.hd = head_dim
        for m in self.layers:
            m.n1, m.n2 = GemmaRMSNorm(d), GemmaRMSNorm(d)
            m.q = nn.Linear(d, heads * head_dim, bias=False)
            m.k = nn.Linear(d, kv_heads * head_dim, bias=False)
            m.v = nn.Linear(d, kv_heads * head_dim, bias=False)
            m.o = nn.Linear(heads * head_dim, d, bias=False)
        self.norm = GemmaRMSNorm(d)
        self.lm_head.weight = self.embed.weight
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim)),
                             persistent=False)

    def _embed(self, ids):
        x = self.embed(ids)
        return x * torch.tensor(self.embed.embedding_dim ** 0.5, dtype=x.dtype)

    def _mlp(self, m, h):
        return m.down(F.gelu(m.gate(h), approximate="tanh") * m.up(h))


class Phi3(Llama):
    """Phi3ForCausalLM (sdpa): one qkv_proj whose output is sliced into q, k, v (views), RoPE through
    torch.cat as modeling_phi3.py applies it, one gate_up_proj chunked into gate and up, up * silu(gate),
    untied head. Written out without transformers 5's DynamicCache (measure26_hf.py runs the real one)."""

    def __init__(self, vocab=32000, d=256, layers=2, heads=8, kv_heads=8, ffn=688, ctx=2048, ckpt=False):
        super().__init__(vocab, d, layers, heads, kv_heads, ffn, ctx, ckpt)
        for m in self.layers:
            del m.q, m.k, m.v, m.gate, m.up
            m.qkv = nn.Linear(d, (heads + 2 * kv_heads) * self.hd, bias=False)
            m.gate_up = nn.Linear(d, 2 * ffn, bias=False)

    def _qkv(self, m, h):
        qkv = m.qkv(h)
        qp, kvp = self.h * self.hd, self.kvh * self.hd
        return qkv[..., :qp], qkv[..., qp:qp + kvp], qkv[..., qp + kvp:]

    def _mlp(self, m, h):
        gate, up = m.gate_up(h).chunk(2, dim=-1)
        return m.down(up * F.silu(gate))

    def _rope(self, q, k, c, s):
        """modeling_phi3.py's apply_rotary_pos_emb: the first rotary_dim channels rotated, then torch.cat
        with the rest, also when that rest is empty (every channel rotated)."""
        rd = c.shape[-1]
        q_rot, q_pass = q[..., :rd], q[..., rd:]
        k_rot, k_pass = k[..., :rd], k[..., rd:]
        return (torch.cat([(q_rot * c) + (_rotate_half(q_rot) * s), q_pass], dim=-1),
                torch.cat([(k_rot * c) + (_rotate_half(k_rot) * s), k_pass], dim=-1))



class Qwen3(Llama):
    """Qwen3ForCausalLM (sdpa; transformers 5 models/qwen3/modeling_qwen3.py Qwen3Attention, op for op):
    Llama's layers without biases, heads of head_dim channels (8 · 64 != 256, as Qwen3-0.6B's 16 · 128 !=
    1024), q_norm and k_norm (LlamaRMSNorm over head_dim) on the [B, T, heads, head_dim] views of q_proj's
    and k_proj's outputs before the transpose and RoPE, lm_head tied to embed_tokens (Qwen3-0.6B)."""

    def __init__(self, vocab=32000, d=256, layers=2, heads=8, kv_heads=2, head_dim=64, ffn=688, ctx=2048, ckpt=False):
        super().__init__(vocab, d, layers, heads, kv_heads, ffn, ctx, ckpt)
        self.hd = head_dim
        for m in self.layers:
            m.q = nn.Linear(d, heads * head_dim, bias=False)
            m.k = nn.Linear(d, kv_heads * head_dim, bias=False)
            m.v = nn.Linear(d, kv_heads * head_dim, bias=False)
            m.o = nn.Linear(heads * head_dim, d, bias=False)
            m.qn, m.kn = measure26.RMSNorm(head_dim), measure26.RMSNorm(head_dim)
        self.lm_head.weight = self.embed.weight
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim)),
                             persistent=False)

    def _heads(self, m, h, B, T):
        return (m.qn(m.q(h).view(B, T, -1, self.hd)).transpose(1, 2), m.kn(m.k(h).view(B, T, -1, self.hd)).transpose(1, 2),
                m.v(h).view(B, T, -1, self.hd).transpose(1, 2))


class Olmo2RMSNorm(measure26.RMSNorm):
    """Olmo2RMSNorm: LlamaRMSNorm's weight and eps, multiplied by the weight in fp32, then cast back."""

    def forward(self, x):
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (self.weight * h).to(x.dtype)


class Olmo2(Llama):
    """Olmo2ForCausalLM (sdpa; transformers 5 models/olmo2/modeling_olmo2.py, op for op): no norm before the
    attention or the MLP, post_attention_layernorm on the attention's output and post_feedforward_layernorm on
    the MLP's, each before its residual add; q_norm over the whole q projection (heads * head_dim) and k_norm
    over the whole k projection (kv_heads * head_dim) before the heads' view and RoPE; Olmo2RMSNorm
    everywhere; untied head (OLMo-2-1124-7B). 8 q / 2 kv heads here (OLMo 2's released models: as many)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        d = self.embed.embedding_dim
        for m in self.layers:
            del m.n1, m.n2
            m.npa, m.npf = Olmo2RMSNorm(d), Olmo2RMSNorm(d)
            m.qn, m.kn = Olmo2RMSNorm(self.h * self.hd), Olmo2RMSNorm(self.kvh * self.hd)
        self.norm = Olmo2RMSNorm(d)

    def _qkv(self, m, h):
        return m.qn(m.q(h)), m.kn(m.k(h)), m.v(h)

    def _layer(self, m, x, cos, sin, mask=None):
        B, T, _ = x.shape
        q, k, v = self._heads(m, x, B, T)
        q, k = self._rope(q, k, cos.unsqueeze(1), sin.unsqueeze(1))
        a = self._attend(q, k, v, mask)
        x = x + m.npa(m.o(a.transpose(1, 2).contiguous().view(B, T, self.h * self.hd)))
        return x + m.npf(self._mlp(m, x))


class Phi3PartialRotary(Phi3):
    """Phi3ForCausalLM with partial_rotary_factor (Phi-4-mini: 0.75; transformers 5 modeling_phi3.py
    apply_rotary_pos_emb): cos and sin of head_dim · factor channels, the first rotary_dim channels of
    q and k rotated and concatenated back to the rest."""

    def __init__(self, factor=0.75, **kw):
        super().__init__(**kw)
        rd = int(self.hd * factor)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, rd, 2).float() / rd)), persistent=False)


class SlidingWindow(Llama):
    """A Llama-style decoder whose layers attend within a sliding window (MistralForCausalLM, Phi-3),
    through SDPA as transformers 5 runs it (masking_utils.py create_sliding_window_causal_mask ->
    sdpa_mask, written out: transformers is not in the root): while the keys are fewer than the
    window, no mask and is_causal=True (_ignore_causal_mask_sdpa); from there one bool [1, 1, L, L]
    mask per forward, causal_mask_function & sliding_window_overlay on broadcast indices
    (and_masks: ones & causal & overlay), expanded to [B, 1, L, L] and given to every layer's
    SDPA as attn_mask (is_causal False: sdpa_attention_forward)."""

    def __init__(self, window=32, **kw):
        super().__init__(**kw)
        self.window = window

    def _mask(self, B, T):
        if T < self.window:
            return None
        q_idx = torch.arange(T)[None, None, :, None]
        kv_idx = torch.arange(T)[None, None, None, :]
        m = torch.ones((), dtype=torch.bool)
        m = m & (kv_idx <= q_idx)
        m = m & (kv_idx > q_idx - self.window)
        return m.expand(B, -1, T, T)


class Olmo3(Olmo2):
    """Olmo3ForCausalLM (sdpa; transformers 5 models/olmo3/modular_olmo3.py, op for op): Olmo2's layers; in every
    4 layers (Olmo3Config's default layer_types) three attend within a sliding window (transformers' window mask:
    SlidingWindow's; with grouped-query heads and a mask, repeat_kv as sdpa_attention_forward does) and the
    fourth is causal (is_causal); one RoPE table for every layer (Olmo3Model.rotary_emb)."""

    def __init__(self, layers=5, window=32, **kw):
        super().__init__(layers=layers, **kw)
        self.window = window

    _mask = SlidingWindow._mask

    def _masked(self, i):
        return (i + 1) % 4 != 0


class Gemma3(Gemma):
    """Gemma3ForCausalLM (sdpa; transformers 5 models/gemma3/modeling_gemma3.py written op for op): Gemma's
    embedding scale, GeGLU and (1 + w) RMSNorm, with four norms a layer (input_layernorm,
    post_attention_layernorm on the attention's output before the residual add, pre_ and
    post_feedforward_layernorm around the MLP), q_norm and k_norm (Gemma3RMSNorm over head_dim) on the
    [B, H, T, d] q and k, and in every 6 layers five sliding-window layers (the local RoPE, base 10,000,
    and transformers' window mask: SlidingWindow's) then one full-attention layer (the global RoPE,
    base 1,000,000, is_causal). A mask on grouped-query heads repeats k and v (Llama._layer)."""

    def __init__(self, layers=7, window=32, heads=4, kv_heads=1, head_dim=64, ckpt=False, **kw):
        super().__init__(layers=layers, heads=heads, kv_heads=kv_heads, head_dim=head_dim, ckpt=ckpt, **kw)
        self.window = window
        d = self.embed.embedding_dim
        for m in self.layers:
            del m.n2
            m.npa, m.npf, m.npo = GemmaRMSNorm(d), GemmaRMSNorm(d), GemmaRMSNorm(d)
            m.qn, m.kn = GemmaRMSNorm(head_dim), GemmaRMSNorm(head_dim)
        self.register_buffer("inv_freq_global", 1.0 / (1e6 ** (torch.arange(0, head_dim, 2).float() / head_dim)), persistent=False)

    _mask = SlidingWindow._mask

    def _heads(self, m, h, B, T):
        q = m.qn(m.q(h).view(B, T, -1, self.hd).transpose(1, 2))
        k = m.kn(m.k(h).view(B, T, -1, self.hd).transpose(1, 2))
        return q, k, m.v(h).view(B, T, -1, self.hd).transpose(1, 2)

    def _layer(self, m, x, cos, sin, mask=None):
        B, T, _ = x.shape
        q, k, v = self._heads(m, m.n1(x), B, T)
        q, k = self._rope(q, k, cos.unsqueeze(1), sin.unsqueeze(1))
        a = self._attend(q, k, v, mask)
        x = x + m.npa(m.o(a.transpose(1, 2).contiguous().view(B, T, self.h * self.hd)))
        return x + m.npo(self._mlp(m, m.npf(x)))

    def forward(self, ids):
        B, T = ids.shape
        x = self._embed(ids)
        tables = [self._rope_table(x, inv) for inv in (self.inv_freq_global, self.inv_freq)]
        mask, full = self._masks(B, T, x.dtype)
        for i, m in enumerate(self.layers):
            sliding = (i + 1) % 6 != 0
            cos, sin = tables[1] if sliding else tables[0]
            layer_mask = mask if sliding and mask is not None else full
            args = (cos, sin) if layer_mask is None else (cos, sin, layer_mask)
            if self.ckpt:
                x = torch.utils.checkpoint.checkpoint(self._layer, m, x, *args, use_reentrant=False)
            else:
                x = self._layer(m, x, *args)
        return self.lm_head(self.norm(x))


class Gemma2(Gemma3):
    """Gemma2ForCausalLM (transformers 5 models/gemma2/modular_gemma2.py written op for op, with "sdpa", the
    attn_implementation from_config and from_pretrained give it): Gemma 3's four (1 + w) norms a layer without q_norm
    and k_norm; of every 2 layers (Gemma2Config's default layer_types) the first attends within a sliding window
    (SlidingWindow's mask; repeat_kv with it) and the second is causal; one RoPE table (Gemma2Model.rotary_emb);
    the logits soft-capped, tanh(logits / 30) * 30 (final_logit_softcapping). attn_logit_softcapping is eager's
    only: sdpa_attention_forward takes no softcap."""

    def __init__(self, layers=5, heads=4, kv_heads=2, **kw):
        super().__init__(layers=layers, heads=heads, kv_heads=kv_heads, **kw)
        for m in self.layers:
            del m.qn, m.kn
        del self.inv_freq_global

    _heads = Llama._heads

    def _masked(self, i):
        return (i + 1) % 2 != 0

    def forward(self, ids):
        logits = Llama.forward(self, ids)
        return torch.tanh(logits / 30.0) * 30.0


QWEN2_SIZES = dict(LLAMA_SIZES)
QWEN3_SIZES = dict(LLAMA_SIZES, head_dim=64)
GEMMA_SIZES = dict(vocab=32000, width=256, layers=2, heads=4, kv_heads=1, head_dim=128, ffn=688, context=2048)
PHI3_SIZES = dict(LLAMA_SIZES, kv_heads=8)
OLMO2_SIZES = dict(LLAMA_SIZES)
OLMO3_SIZES = dict(LLAMA_SIZES, layers=5)
GEMMA2_SIZES = dict(GEMMA_SIZES, layers=5, kv_heads=2, head_dim=64)
GRANITE_SIZES = dict(LLAMA_SIZES)
T5_SIZES = dict(vocab=2000, width=128, head_width=32, ffn=512, layers=2, heads=4)
ZOO_DESC = {
    "qwen2": "2-layer Qwen2-style decoder: %s, with bias on q_proj, k_proj, v_proj and lm_head tied to "
             "embed_tokens (Qwen2-0.5B)" % LLAMA_DESC.replace(", untied head", ""),
    "qwen3": "2-layer Qwen3-style decoder: %s, heads of head_dim 64 (8 q / 2 kv heads, 8 * 64 != 256), q_norm and "
             "k_norm (RMSNorm over head_dim before RoPE), no biases, lm_head tied to embed_tokens (Qwen3-0.6B)"
             % LLAMA_DESC.replace(", untied head", ""),
    "gemma": "2-layer Gemma-style decoder (GemmaRMSNorm (1 + w) in fp32, embeddings x sqrt(256), RoPE, GeGLU "
             "gelu_pytorch_tanh, multi-query 4 q / 1 kv head of head_dim 128 != 256 / 4, SDPA causal, tied head), "
             "width 256, ffn 688, vocab 32000",
    "phi3": "2-layer Phi-3-style decoder (RMSNorm, RoPE, fused qkv_proj sliced into q, k, v, fused gate_up_proj "
            "chunked, up * silu(gate), 8 heads = kv heads, SDPA causal, untied head), width 256, ffn 688, vocab 32000",
    "phi3_partial_rotary": "the 2-layer Phi-3-style decoder with partial_rotary_factor 0.75 (Phi-4-mini's): RoPE on the "
                           "first 24 of 32 channels per head, cat with the rest",
    "olmo2": "2-layer OLMo-2-style decoder: %s, norms after the attention and the MLP (none before), q_norm / k_norm "
             "over the whole q and k projections, Olmo2RMSNorm (weight * h in fp32, cast back)" % LLAMA_DESC,
    "olmo3": "5-layer OLMo-3-style decoder (Olmo3ForCausalLM written out): OLMo 2's layers (norms after the attention "
             "and the MLP, q_norm / k_norm over the whole projections, Olmo2RMSNorm), layers 0-2 and 4 attending within a "
             "sliding window of 32 tokens through SDPA (transformers 5's mask written out; repeat_kv with the mask), layer 3 "
             "causal, one RoPE table; GQA 8 q / 2 kv heads, width 256, ffn 688, vocab 32000, untied head",
    "gemma2": "5-layer Gemma-2-style decoder (Gemma2ForCausalLM written out: four (1 + w) norms a layer, layers 0, 2 "
              "and 4 attending within a sliding window of 32 tokens through SDPA (transformers 5's mask; repeat_kv with "
              "it), 1 and 3 causal, one RoPE table, GQA 4 q / 2 kv heads of 64, GeGLU, embeddings x sqrt(256), tied head, "
              "logits tanh-softcapped at 30), width 256, ffn 688, vocab 32000",
    "granite": "2-layer Granite-style decoder: %s, with GraniteModel's multipliers (embeddings x 12, each sublayer's "
               "output x 0.22 before its residual add, SDPA scale 1/128, logits / 16) and lm_head tied to embed_tokens "
               "(granite-3.x)" % LLAMA_DESC.replace(", untied head", ""),
    "t5": "T5ForConditionalGeneration (t5_probe.py's T5: 2 + 2 layers, d_model 128, d_kv 32, 4 heads, d_ff 512, "
          "vocab 2000, relative position bias, dropout 0.1 everywhere, tied head), 64 source + 64 target tokens",
}
ZOO_BUILD = {
    "qwen2": lambda ckpt: Qwen2(ckpt=ckpt),
    "qwen3": lambda ckpt: Qwen3(ckpt=ckpt),
    "gemma": lambda ckpt: Gemma(ckpt=ckpt),
    "phi3": lambda ckpt: Phi3(ckpt=ckpt),
    "phi3_partial_rotary": lambda ckpt: Phi3PartialRotary(ckpt=ckpt),
    "olmo2": lambda ckpt: Olmo2(ckpt=ckpt),
    "olmo3": lambda ckpt: Olmo3(ckpt=ckpt),
    "granite": lambda ckpt: Granite(ckpt=ckpt),
    "gemma2": lambda ckpt: Gemma2(ckpt=ckpt),
    "t5": lambda ckpt: T5(2000, 128, 32, 512, 2, 4, 64),
}
ZOO_SIZES = {"qwen2": QWEN2_SIZES, "qwen3": QWEN3_SIZES, "phi3_partial_rotary": PHI3_SIZES, "gemma": GEMMA_SIZES, "phi3": PHI3_SIZES, "olmo2": OLMO2_SIZES,
             "olmo3": OLMO3_SIZES, "granite": GRANITE_SIZES, "gemma2": GEMMA2_SIZES, "t5": T5_SIZES}


def _lora_on(model, targets, r, p):
    """PEFT's LoRA (lora_llama_probe.py's LoraLinear) on `targets` of a decoder built by `model`."""
    return lambda: lora_model(model, targets, r, p)


def _zoo_case(name, model, precision, checkpoint="none", lora=None, batch=2, seq=64):
    desc = "%s, %s, batch %d, seq %d" % (ZOO_DESC[model], "CPU autocast bf16" if precision != "fp32" else "fp32", batch, seq)
    if checkpoint != "none":
        desc += ", each decoder layer checkpointed (non-reentrant)"
    build = lambda: ZOO_BUILD[model](checkpoint != "none")  # noqa: E731
    if lora:
        desc += ", every base weight frozen, LoRA r=%d on %s" % (lora["r"], lora["targets"])
        build = _lora_on(build, TARGETS[lora["targets"]], lora["r"], lora["dropout"])
    tokens = 2 * seq if model == "t5" else seq  # T5: the encoder's ids, then the decoder's
    vocab = ZOO_SIZES[model]["vocab"]
    CASES[name] = dict(case=name, description=desc, model=model, batch=batch, image_size=None, seq=seq,
                       sizes=dict(ZOO_SIZES[model]), precision=precision, optimizer="adamw",
                       optimizer_impl="for_loop", attention="materialized" if model == "t5" else "sdpa",
                       checkpoint=checkpoint, train_only=None,
                       dropout=dict(embedding=0.1, residual=0.1, attention_probs=0.1) if model == "t5" else None,
                       build=build, make_batch=lambda: torch.randint(0, vocab, (batch, tokens)))
    if lora:
        CASES[name]["lora"] = dict(lora, base="fp32")


def _gemma3_case(precision, seq, ckpt, lora):
    """A 7-layer Gemma-3-style case (Gemma3 below), whole or under LoRA r=8 on `lora`'s targets."""
    name = "gemma3_7l_%sb2_t%d%s%s" % ("lora_all_r8_" if lora else "", seq, "_ckpt" if ckpt else "",
                                      "_bf16" if precision != "fp32" else "")
    sizes = dict(vocab=32000, width=256, layers=7, heads=4, kv_heads=1, head_dim=64, ffn=688, context=2048)
    desc = ("7-layer Gemma-3-style decoder (Gemma3ForCausalLM written out: four (1 + w) norms a layer, q_norm / k_norm, "
            "five sliding-window layers of 32 tokens on a local RoPE then a full one, 4 q / 1 kv heads of 64, GeGLU, "
            "tied head), width 256, ffn 688, vocab 32000, %s, batch 2, seq %d%s%s"
            % ("CPU autocast bf16" if precision != "fp32" else "fp32", seq, ", each layer checkpointed" if ckpt else "",
               ", every base weight frozen, LoRA r=8 on %s" % lora if lora else ""))
    build = (lambda c: lambda: Gemma3(ckpt=c))(ckpt)
    CASES[name] = dict(case=name, description=desc, model="gemma3", batch=2, image_size=None, seq=seq, sizes=sizes,
                       sliding_window=32, precision=precision, optimizer="adamw", optimizer_impl="for_loop",
                       attention="sdpa", checkpoint="blocks" if ckpt else "none", train_only=None, dropout=None,
                       build=_lora_on(build, TARGETS[lora], 8, 0.0) if lora else build,
                       make_batch=(lambda t: lambda: torch.randint(0, 32000, (2, t)))(seq))
    if lora:
        CASES[name]["lora"] = dict(r=8, targets=lora, dropout=0.0, base="fp32")


def _eager(build, softcap=None):
    """`build`'s model with attn_implementation="eager" (measure26.Llama.eager), Gemma 2's softcap on the scores."""
    def made():
        m = build()
        m.eager, m.softcap = True, softcap
        return m
    return made


def _eager_cases():
    """The eager attention cases: each is its sdpa twin's case with eager attention ("attention": "eager")."""
    for precision in ("fp32", "bf16_autocast"):
        suffix = "_bf16" if precision != "fp32" else ""
        _zoo_case("gemma2_5l_eager_b2_t256" + suffix, "gemma2", precision, seq=256)
        _zoo_case("gemma2_5l_eager_lora_all_r8_b2_t256" + suffix, "gemma2", precision, lora=dict(r=8, targets="all-linear", dropout=0.0), seq=256)
    _zoo_case("gemma2_5l_eager_ckpt_b2_t256", "gemma2", "fp32", checkpoint="blocks", seq=256)
    for name in [n for n in CASES if n.startswith("gemma2_5l_eager")]:
        c = CASES[name]
        c["sliding_window"] = 32
        lora = c.get("lora")
        base = (lambda ck: lambda: Gemma2(ckpt=ck))(c["checkpoint"] != "none")
        c["build"] = _lora_on(_eager(base, 50.0), TARGETS[lora["targets"]], lora["r"], lora["dropout"]) if lora else _eager(base, 50.0)
        c["attention"] = "eager"
        c["description"] += ", attn_implementation eager (attn_logit_softcapping 50)"
    for precision in ("fp32", "bf16_autocast"):
        name = "llama2l_eager_b2_t256" + ("_bf16" if precision != "fp32" else "")
        CASES[name] = dict(case=name, description="%s, attn_implementation eager, %s, batch 2, seq 256"
                           % (LLAMA_DESC, "CPU autocast bf16" if precision != "fp32" else "fp32"),
                           model="llama", batch=2, image_size=None, seq=256, sizes=dict(LLAMA_SIZES), precision=precision,
                           optimizer="adamw", optimizer_impl="for_loop", attention="eager", checkpoint="none", train_only=None,
                           dropout=None, build=_eager(lambda: Llama()), make_batch=lambda: torch.randint(0, 32000, (2, 256)))
    # Phi-3 with Phi-4-mini's partial RoPE: q and k laid out heads first by the cat, kv heads = heads (matmul's views)
    for precision in ("fp32", "bf16_autocast"):
        name = "phi3_partial_rotary_eager_2l_b2_t256" + ("_bf16" if precision != "fp32" else "")
        _zoo_case(name, "phi3_partial_rotary", precision, seq=256)
        CASES[name].update(model="phi3", partial_rotary_factor=0.75, attention="eager", build=_eager(lambda: Phi3PartialRotary()))
        CASES[name]["description"] += ", attn_implementation eager"
    for precision in ("fp32", "bf16_autocast"):
        sdpa = "gemma3_7l_b2_t64" + ("_bf16" if precision != "fp32" else "")
        name = sdpa.replace("gemma3_7l_", "gemma3_7l_eager_").replace("_t64", "_t256")
        CASES[name] = dict(CASES[sdpa], case=name, attention="eager", build=_eager(lambda: Gemma3()), seq=256,
                           make_batch=lambda: torch.randint(0, 32000, (2, 256)),
                           description=CASES[sdpa]["description"].replace("seq 64", "seq 256") + ", attn_implementation eager")


def _family_cases(prefix, model, window=None):
    """A zoo family's cases: full and under LoRA r=8 on all-linear, fp32 and CPU autocast bf16, and checkpointed in fp32
    (`prefix`_b2_t64, _lora_all_r8_b2_t64, each _bf16, _ckpt_b2_t64); `window`: the model's sliding window."""
    names = []
    for precision in ("fp32", "bf16_autocast"):
        suffix = "_bf16" if precision != "fp32" else ""
        names += [prefix + "_b2_t64" + suffix, prefix + "_lora_all_r8_b2_t64" + suffix]
        _zoo_case(names[-2], model, precision)
        _zoo_case(names[-1], model, precision, lora=dict(r=8, targets="all-linear", dropout=0.0))
    names.append(prefix + "_ckpt_b2_t64")
    _zoo_case(names[-1], model, "fp32", checkpoint="blocks")
    for name in names if window is not None else ():
        CASES[name]["sliding_window"] = window


def _define_zoo_cases():
    for model in ("qwen2", "gemma", "phi3", "t5"):
        for precision in ("fp32", "bf16_autocast"):
            _zoo_case("%s_%s_b2_t64%s" % (model, "2p2l" if model == "t5" else "2l", "_bf16" if precision != "fp32" else ""), model, precision)
    _zoo_case("qwen2_2l_ckpt_b2_t64", "qwen2", "fp32", checkpoint="blocks")
    for precision in ("fp32", "bf16_autocast"):
        _zoo_case("qwen2_2l_lora_qv_r8_b2_t64%s" % ("_bf16" if precision != "fp32" else ""), "qwen2", precision,
                  lora=dict(r=8, targets="q_proj,v_proj", dropout=0.0))
    # Qwen3 (added 2026-12-06): the qk_norm attention, full, checkpointed and under LoRA on all linear layers
    for precision in ("fp32", "bf16_autocast"):
        _zoo_case("qwen3_2l_b2_t64%s" % ("_bf16" if precision != "fp32" else ""), "qwen3", precision)
        _zoo_case("qwen3_2l_lora_all_r8_b2_t64%s" % ("_bf16" if precision != "fp32" else ""), "qwen3", precision,
                  lora=dict(r=8, targets="all-linear", dropout=0.0))
    _zoo_case("qwen3_2l_ckpt_b2_t64", "qwen3", "fp32", checkpoint="blocks")
    _zoo_case("qwen3_2l_b4_t128_bf16", "qwen3", "bf16_autocast", batch=4, seq=128)
    # a sliding window through SDPA (MistralForCausalLM's, Phi-3's): 32 tokens at 64 (the mask), 128 at 64
    # (none); 8 kv heads (2.6 CPU: the flash kernel, which keeps the mask) and 2 (GQA: the math path)
    for kvh, precision, window, ckpt in ((8, "fp32", 32, False), (8, "bf16_autocast", 32, False), (2, "fp32", 32, False),
                                         (8, "fp32", 128, False), (8, "fp32", 32, True)):
        name = "window%d_kv%d_2l_b2_t64%s%s" % (window, kvh, "_ckpt" if ckpt else "", "_bf16" if precision != "fp32" else "")
        sizes = dict(LLAMA_SIZES, kv_heads=kvh)
        desc = ("2-layer Llama-style decoder (%d kv heads) whose layers attend within a sliding window of %d tokens through "
                "SDPA (Mistral's, Phi-3's; transformers 5's mask written out), %s, batch 2, seq 64%s"
                % (kvh, window, "CPU autocast bf16" if precision != "fp32" else "fp32", ", each layer checkpointed" if ckpt else ""))
        CASES[name] = dict(case=name, description=desc, model="llama", batch=2, image_size=None, seq=64, sizes=sizes,
                           sliding_window=window, precision=precision, optimizer="adamw", optimizer_impl="for_loop",
                           attention="sdpa", checkpoint="blocks" if ckpt else "none", train_only=None, dropout=None,
                           build=(lambda w, h, c: lambda: SlidingWindow(window=w, kv_heads=h, ckpt=c))(window, kvh, ckpt),
                           make_batch=lambda: torch.randint(0, 32000, (2, 64)))
    # Gemma 3 (gemma3_text): 7 layers (a period of 5 sliding + 1 full, then 1 sliding), window 32 at 64 tokens (the
    # mask on the sliding layers) and at 24 (none), multi-query (4 q / 1 kv heads of 64), fp32, bf16, checkpointed;
    # under LoRA on all linear layers (added 2026-12-06, second stop), also checkpointed
    for precision, seq, ckpt, lora in (("fp32", 64, False, None), ("bf16_autocast", 64, False, None), ("fp32", 64, True, None),
                                       ("fp32", 24, False, None), ("fp32", 64, False, "all-linear"),
                                       ("bf16_autocast", 64, False, "all-linear"), ("fp32", 64, True, "all-linear")):
        _gemma3_case(precision, seq, ckpt, lora)
    # Phi-3's partial_rotary_factor, budgeted at full RoPE width (hf_config.hpp): what that costs
    for precision in ("fp32", "bf16_autocast"):
        name = "phi3_partial_rotary_2l_b2_t64%s" % ("_bf16" if precision != "fp32" else "")
        _zoo_case(name, "phi3_partial_rotary", precision)
        CASES[name].update(model="phi3", partial_rotary_factor=0.75)  # budgeted as the phi3 config it is
    # OLMo 2 (added 2026-12-06, second stop): post-norms, q/k norms over the projections
    _family_cases("olmo2_2l", "olmo2")
    # OLMo 3 (added 2026-12-07): OLMo 2's layers, a window on three of four (5 layers: a period and one more sliding)
    _family_cases("olmo3_5l", "olmo3", window=32)
    # Granite (added 2026-12-07): Llama's layers with GraniteModel's multipliers
    _family_cases("granite_2l", "granite")
    # Gemma 2 (added 2026-12-07, second stop): Gemma 3's norms, no q/k norms, a window on every other layer, one RoPE
    # table, softcapped logits; 5 layers (two periods and one sliding), window 32 at 64 tokens (the mask) and at 24
    _family_cases("gemma2_5l", "gemma2", window=32)
    _zoo_case("gemma2_5l_b2_t24", "gemma2", "fp32", seq=24)
    CASES["gemma2_5l_b2_t24"]["sliding_window"] = 32
    # attn_implementation="eager" (added 2026-12-07, second stop): transformers 5's eager_attention_forward and eager
    # float masks on the 2-layer Llama (GQA 8 / 2: repeat_kv's copies), Gemma 2 (its attn_logit_softcapping, which only
    # eager applies, as Gemma2ForCausalLM's training warning recommends) and Gemma 3 (one kv head)
    _eager_cases()
    for precision in ("fp32", "bf16_autocast"):
        _zoo_case("gemma_2l_lora_all_r8_b2_t64%s" % ("_bf16" if precision != "fp32" else ""), "gemma", precision,
                  lora=dict(r=8, targets="all-linear", dropout=0.0))

# --------------------------------------------------------------------------- decode
class KVCache:
    """One layer's K and V: static (pre-allocated for `capacity` tokens, written in place) or growing
    (torch.cat of each step's K and V)."""

    def __init__(self, kind, batch, kv_heads, head_dim, capacity, dtype):
        self.kind, self.len = kind, 0
        if kind == "static":
            self.k = torch.zeros(batch, kv_heads, capacity, head_dim, dtype=dtype)
            self.v = torch.zeros(batch, kv_heads, capacity, head_dim, dtype=dtype)
        else:
            self.k = self.v = None

    def update(self, k, v):
        T = k.shape[2]
        if self.kind == "static":
            self.k[:, :, self.len:self.len + T] = k
            self.v[:, :, self.len:self.len + T] = v
            self.len += T
            return self.k[:, :, :self.len], self.v[:, :, :self.len]
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        self.len += T
        return self.k, self.v


def _decode_attention(model, m, h, cos, sin, cache):
    """LlamaAttention.forward with a cache (sdpa): its locals live until it returns, as transformers'."""
    B, T, _ = h.shape
    q = m.q(h).view(B, T, model.h, model.hd).transpose(1, 2)
    k = m.k(h).view(B, T, model.kvh, model.hd).transpose(1, 2)
    v = m.v(h).view(B, T, model.kvh, model.hd).transpose(1, 2)
    q, k = q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
    k, v = cache.update(k, v)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=T > 1, enable_gqa=model.kvh != model.h)
    return m.o(a.transpose(1, 2).contiguous().view(B, T, -1))


def _decode_forward(model, ids, caches, start):
    """transformers' LlamaForCausalLM.forward with a cache, its lifetimes included (LlamaModel keeps
    `inputs_embeds` bound through the forward; the decoder layer holds the residual and the normed
    input while attention runs): positions start.., the LM head on the last position only; causal in
    the prefill, no mask for one new token."""
    B, T = ids.shape
    inputs_embeds = model.embed(ids)
    x = inputs_embeds
    pos = torch.arange(start, start + T).float()
    freqs = torch.outer(pos, model.inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1).unsqueeze(0).expand(B, -1, -1)
    cos, sin = emb.cos().to(x.dtype).unsqueeze(1), emb.sin().to(x.dtype).unsqueeze(1)
    del freqs, emb
    for m, cache in zip(model.layers, caches):
        h = m.n1(x)
        x = x + _decode_attention(model, m, h, cos, sin, cache)
        h = m.n2(x)
        x = x + m.down(F.silu(m.gate(h)) * m.up(h))
        del h
    return model.lm_head(model.norm(x[:, -1:]))


def run_decode_case(c, heap):
    torch.manual_seed(0)
    model = Llama().eval()
    B, P, D = c["batch"], c["prefill"], c["decode"]
    r = {k: v for k, v in c.items() if k not in ("build", "make_batch")}
    r["dtype"] = "float32"
    with torch.no_grad():
        gc.collect()
        before_cache = heap.current()
        caches = [KVCache(c["cache"], B, model.kvh, model.hd, P + D, torch.float32) for _ in model.layers]
        static_bytes = sum(x.k.nbytes + x.v.nbytes for x in caches) if c["cache"] == "static" else 0
        base = heap.current()
        heap.reset_peak()
        prompt = torch.randint(0, LLAMA_SIZES["vocab"], (B, P))  # the prompt counts to the prefill, as serve()'s
        logits = _decode_forward(model, prompt, caches, 0)
        r["prefill_peak_bytes"] = heap.peak() - base
        nxt = logits.argmax(-1)
        del logits, prompt
        gc.collect()
        after_prefill = heap.current()
        step_peak = 0
        for i in range(D):
            before = heap.current()
            heap.reset_peak()
            logits = _decode_forward(model, nxt, caches, P + i)
            nxt = logits.argmax(-1)
            del logits
            step_peak = max(step_peak, heap.peak() - before)
        gc.collect()
        grown = heap.current() - after_prefill
    r["params"] = sum(p.numel() for p in model.parameters())
    r["kv_cache_bytes_per_token"] = (static_bytes // ((P + D) * B) if c["cache"] == "static" else grown // (D * B))
    r["kv_cache_heap_bytes"] = base - before_cache if c["cache"] == "static" else grown
    r["decode_step_peak_bytes"] = step_peak
    return r


def _define_decode_cases(prefill=128, decode=64):
    for cache in ("static", "growing"):
        for batch in (1, 4):
            name = "llama2l_decode_%s_b%d_p%d_d%d" % (cache, batch, prefill, decode)
            desc = ("%s, fp32, no grad: prefill %d tokens (LM head on the last position), then %d decode steps, "
                    "%s KV cache, batch %d" % (LLAMA_DESC, prefill, decode,
                                               "pre-allocated (static)" if cache == "static" else
                                               "growing by torch.cat", batch))
            CASES[name] = dict(case=name, kind="decode", description=desc, model="llama", batch=batch,
                               sizes=dict(LLAMA_SIZES), precision="fp32", attention="sdpa", prefill=prefill,
                               decode=decode, cache=cache)


_define_lora_cases()
_define_embed_lora_cases()
_define_moe_cases()
_define_decode_cases()
_define_zoo_cases()


# --------------------------------------------------------------------------- run
def run(c, heap):
    if c.get("kind") == "decode":
        return run_decode_case(c, heap)
    if "moe" in c:
        return run_moe_case(c, heap)
    return measure26.run_case(c, heap)


def main():
    args, names = measure26.select_cases(__doc__, CASES, lambda n, c: "%-44s %s" % (n, c["description"]))
    if names is None:
        return
    env = measure26._environment()
    res = {"source": "PyTorch %s (CPU) in a Debian trixie root (scripts/torch26-env); LoRA, MoE, decode and zoo-family cases "
                     "measured by benchmarks/accuracy/measure26_llm.py (measure26.py's step: malloc shim + "
                     "saved_tensors_hooks)" % env["torch"], "environment": env, "cases": []}
    measure26.measure_cases(names, CASES, run, measure.Heap(), res, args.out)


if __name__ == "__main__":
    main()
