// gpubudget/layers/attention.hpp — multi-head attention (self and cross), materialized or flash.
//
// Grouped-query attention: q and the output projection are D×D, k and v D×(kv_heads·D/heads).
// Each implementation replays the exact op sequence of its PyTorch source, because which
// copies autograd keeps (a transposed view reshaped for bmm is copied; a view keeps its whole
// base) decides the bytes.
//
// Runtimes (training::runtime; op_rules.md "PyTorch 2.6 CPU: what changed"):
//  * PyTorch 2.6 CPU: nn.MultiheadAttention (need_weights=False) takes SDPA's flash kernel (#7);
//    SDPA with dropout or grouped-query heads (enable_gqa) takes the math path (#11, #12);
//    the CPU flash kernel has per-thread buffers (#9, #10).
//  * PyTorch 1.13 CPU: the materialized paths (no SDPA).
//  * PyTorch 2.11 CUDA (H100, op_rules.md CT2-CT4): SDPA where attention_impl says so, through
//    the backend sdp_utils.cpp picks (sdpa_kernel_for: cuDNN, flash, efficient or math); torch_mha
//    takes SDPA without dropout, the materialized path as in 1.13 with it.
//  * Attention-probability dropout (attention_dropout(p)) on a materialized path: the softmax
//    output, the mask and the dropped probabilities are all kept (#14, both versions).
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/llama.hpp>
#include <gpubudget/layers/lora_projection.hpp>
#include <gpubudget/layers/options.hpp>
#include <gpubudget/layers/rotary.hpp>

namespace gpubudget {

enum class attention_impl : std::int64_t {
  /// q = Linear(D, D), kv = Linear(D, 2D) split; scores = q @ kᵀ / √d materialized; softmax;
  /// @ v; output Linear (the GPT / ViT blocks of the reference measurements).
  split_qkv = 0,
  /// torch.nn.MultiheadAttention's training path (packed in_proj, q scaled before bmm).
  torch_mha = 1,
  /// Fused qkv Linear + scaled_dot_product_attention's flash kernel: no score matrix; keeps
  /// q, k, v, the output and a per-row fp32 log-sum-exp.
  flash = 2,
  /// split_qkv with k and v from Linears of their own (transformers' BertSelfAttention): the same
  /// parameters and, in fp32, the same activations; under autocast each of the three casts its
  /// input, so three 16-bit copies of it are saved, not two.
  separate_qkv = 3,
  /// transformers' T5Attention: separate_qkv's projections and softmax(scores.float())
  /// .type_as(scores) (under CPU autocast an fp32 softmax output, then a 16-bit copy for @ v).
  t5 = 4,
  /// transformers 5's BertSelfAttention with attn_implementation="sdpa" (its default): separate_qkv's
  /// projections, then scaled_dot_product_attention with the probability dropout inside the
  /// kernel (dropout_p = attention_probs_dropout_prob in training): no score matrix kept.
  separate_qkv_sdpa = 5,
  /// torch.nn.MultiheadAttention called with need_weights=True, its default (`out, _ = attn(x, x, x)`):
  /// torch_mha's projections, then the materialized path that returns the head-averaged weights
  /// (torch_mha_materialized).
  torch_mha_weights = 6,
  /// Karpathy's "Let's build GPT" MultiHeadAttention: H Head modules (key, query, value Linears of
  /// their own, width / H each) run one after another, each with its causal mask
  /// (masked_fill(tril == 0, -inf)) on materialized scores; torch.cat of the heads; the output
  /// Linear (per_head_attention).
  per_head = 7,
  /// transformers' T5Attention through sdpa_attention_forward (attn_implementation "sdpa", the default
  /// since PR #47014, in transformers 5.17; 5.12 ran t5): t5's projections, the position bias passed
  /// to SDPA as a float attn_mask (t5_sdpa_attention). causal_mask marks the decoder's self-attention.
  t5_sdpa = 8,
};

/// Is `i` nn.MultiheadAttention (with or without the weights returned)?
constexpr bool is_torch_mha(attention_impl i) { return i == attention_impl::torch_mha || i == attention_impl::torch_mha_weights; }

/// Module names of the projections an attention op holds, as its PyTorch source names them
/// (relative to the op's own name), so that training::train_only can select one projection:
/// `model.layers.31.self_attn.q_proj`. Each scheme fits the implementation that source uses.
enum class projection_names : std::int64_t {
  none = 0,         ///< the projections are not selectable one by one
  llama = 1,        ///< transformers' LlamaAttention (also Qwen2, Gemma, Mixtral): q_proj, k_proj, v_proj, o_proj (rotary flash)
  gpt2 = 2,         ///< transformers' GPT2Attention: c_attn (q, k and v), c_proj (split_qkv or flash); the module
                    ///< structure too: one Conv1D c_attn whose q, k, v are views of its output (nanoGPT's
                    ///< c_attn alike), so under autocast one 16-bit copy of the input
  bert = 3,         ///< transformers' BertAttention: self.query, self.key, self.value, output.dense (separate_qkv)
  torchvision = 4,  ///< nn.MultiheadAttention: out_proj (q, k and v are one parameter, in_proj_weight; torch_mha)
  t5 = 5,           ///< transformers' T5Attention (SelfAttention, EncDecAttention): q, k, v, o (t5)
  phi3 = 6,         ///< transformers' Phi3Attention: qkv_proj (q, k and v), o_proj (rotary flash); the module
                    ///< structure itself: one packed projection whose q, k, v are views (fused_qkv)
  separate = 7,     ///< four nn.Linear: q, k, v, out unless parts_named gives the model's own names
                    ///< (an exported attention: gpubudget-export writes them; separate_qkv or separate_qkv_sdpa)
  gpt2_q_kv = 8,    ///< GPT-2's names over a q Linear and a packed k, v Linear of their own (the project's
                    ///< reference GPT, models::gpt: under autocast each casts its input)
};

/// The projections of an attention op that LoRA adapters can sit on, as bits (the op's parts:
/// q, k (or the packed k and v), the output, a separate v), and GPT-2's c_attn: one adapter
/// over q, k and v together.
/// adapt_merged: PEFT's lora.MultiheadAttention on nn.MultiheadAttention (torch_mha), alone: one
/// adapter over in_proj_weight and one over out_proj, merged into the weights for the forward.
enum attention_adapter_parts : std::int64_t { adapt_q = 1, adapt_k = 2, adapt_out = 4, adapt_v = 8, adapt_qkv = 16, adapt_merged = 32 };

/// PEFT LoRA adapters on an attention op's projections (get_peft_model with target_modules naming
/// them; lora.Linear on each, layers/lora_projection.hpp): every projection's base weight is frozen
/// and stored as `base`, and those in `parts` get an adapter of rank `rank`. The option
/// `attention(..., attention_adapters{...})`; transformers' GPT-2, BERT and T5 under PEFT
/// (models::gpt_lora, bert_lora, t5_lora).
struct attention_adapters {
  std::int64_t rank = 0;     ///< 1 to 65,535
  std::int64_t parts = 0;    ///< attention_adapter_parts: adapt_q | adapt_k | adapt_v | adapt_out, or adapt_qkv (| adapt_out); 0: all frozen, none adapted
  std::int64_t dropout = 0;  ///< lora_dropout, percent
  base_weights base = base_weights::same;
  bool dora = false;        ///< PEFT's use_dora
  bool cast_input = true;   ///< PEFT >= 0.15's input cast (lora_projection)
};

namespace detail {
[[noreturn]] inline void attention_masks_need_torch_mha_self_attention() {
  fail("gpubudget: causal_mask, square_mask and key_padding_mask are nn.MultiheadAttention's masks: they take attention_impl::torch_mha "
       "or torch_mha_weights, self-attention (across two tensors: key_padding_mask alone, on torch_mha), no rotary, and one of "
       "causal_mask and square_mask; causal_mask alone (SDPA's is_causal) also takes separate_qkv_sdpa and flash, and t5_sdpa (T5's "
       "decoder self-attention)");
}
[[noreturn]] inline void torch_mha_cross_attention_needs_sdpa() {
  fail("gpubudget: nn.MultiheadAttention across two tensors (attention_impl::torch_mha with kv_tokens(n), or in cross_attention) "
       "is modelled as PyTorch 2.x calls it from nn.TransformerDecoderLayer: need_weights=False (not torch_mha_weights), "
       "a torch2 runtime, no attention_adapters");
}
[[noreturn]] inline void sequence_first_needs_torch_mha() {
  fail("gpubudget: sequence_first is nn.MultiheadAttention(batch_first=False)'s layout: it takes attention_impl::torch_mha "
       "or torch_mha_weights (in cross_attention: torch_mha)");
}
[[noreturn]] inline void padded_batch_needs_a_transformers_sdpa_attention() {
  fail("gpubudget: padded_batch is transformers' mask of a padded batch: it takes rotary attention (the Llama family), "
       "attention_impl::separate_qkv_sdpa (transformers 5's BERT) or flash with projection_names::gpt2 (its GPT-2); on another "
       "attention it is not modelled");
}
[[noreturn]] inline void training_kv_cache_needs_a_transformers_decoder() {
  fail("gpubudget: training_kv_cache is transformers' DynamicCache in a training forward: it takes rotary attention (the Llama family), "
       "flash with projection_names::gpt2 (its GPT-2's SDPA) or attention_impl::t5_sdpa (T5's decoder)");
}
[[noreturn]] inline void sdpa_flash_takes_no_attention_mask() {
  fail("gpubudget: training::sdpa = sdpa_backend::flash with a key_padding_mask or square_mask: SDPA's flash kernel takes no attn_mask "
       "(PyTorch raises \"No available kernel\"); choose efficient, cudnn, math or automatic");
}
[[noreturn]] inline void attention_adapters_do_not_fit_the_attention_impl() {
  fail("gpubudget: attention_adapters do not fit this attention: adapt_v needs separate k and v projections (BERT, T5), "
       "adapt_qkv a packed one (GPT-2's c_attn); rotary attention takes lora_attention; nn.MultiheadAttention takes adapt_merged alone "
       "(PEFT's lora.MultiheadAttention: its module as the target, not out_proj, no DoRA), and only it does");
}
[[noreturn]] inline void attention_adapters_out_of_range() {
  fail("gpubudget: attention_adapters: rank 1 to 65535, parts a set of adapt_q, adapt_k, adapt_v, adapt_out "
       "(or adapt_qkv, GPT-2's c_attn, without adapt_q, adapt_k, adapt_v), dropout 0 to 100 percent");
}
/// attention_adapters as one word of attention_op (0: none): rank in bits 0-15, parts 16-21,
/// dropout 24-30, base 32-35, dora 40, cast_input 41, and bit 42 set.
constexpr std::int64_t pack_adapters(const attention_adapters& a) {
  const auto base = static_cast<std::int64_t>(a.base);
  const bool fused_and_apart = (a.parts & adapt_qkv) && (a.parts & (adapt_q | adapt_k | adapt_v));
  if (a.rank < 1 || a.rank > 65535 || a.parts < 0 || a.parts > 63 || fused_and_apart || a.dropout < 0 || a.dropout > 100 || base < 0 || base > 15)
    attention_adapters_out_of_range();
  return a.rank | a.parts << 16 | a.dropout << 24 | base << 32 | std::int64_t{a.dora} << 40 | std::int64_t{a.cast_input} << 41 | std::int64_t{1} << 42;
}
constexpr attention_adapters unpack_adapters(std::int64_t w) {
  return {w & 65535, (w >> 16) & 63, (w >> 24) & 127, static_cast<base_weights>((w >> 32) & 15), ((w >> 40) & 1) != 0, ((w >> 41) & 1) != 0};
}
}  // namespace detail

/// Multi-head attention of `heads` heads over [tokens, width]: self-attention (kv_tokens 0) or
/// cross-attention over kv_tokens, grouped-query with kv_heads (0 = heads), RoPE with rotary,
/// heads of head_width channels (0 = width / heads; Gemma, T5-3B: heads · head_width ≠ width).
/// The q, k, v projections' bias beside the output projection's (`attention_op::bias`).
enum class qkv_bias_kind : std::int64_t {
  as_output = 0,  ///< as the output projection's
  with = 1,       ///< a bias even when the output has none (Qwen2Attention)
  without = 2,    ///< none while the output has one (timm's Attention(qkv_bias=False), vit-pytorch's to_qkv)
};

/// What an attention does with token positions besides the product itself (`attention_op::positions`):
/// RoPE on q and k (the flash path, causal: transformers' LlamaAttention), or the masks
/// nn.MultiheadAttention is called with and how its tokens are laid out (torch_mha; bits: a causal
/// mask 2, a key padding mask 4, a square mask 8, sequence first 16).
enum class token_positions : std::int64_t {
  plain = 0,
  rotary = 1,
  causal_mask = 2,                   ///< attn_mask the [L, L] causal mask (is_causal=True, or nn.TransformerEncoder recognising it)
  key_padding_mask = 4,              ///< key_padding_mask a [B, L] bool mask of padded tokens
  causal_and_key_padding_masks = 6,  ///< both: MHA merges them into one [B·H, L, L] float mask
  square_mask = 8,                   ///< attn_mask a float [L, L] mask not read as causal (a band, a bias; a causal buffer without is_causal)
  square_and_key_padding_masks = 12, ///< both: merged as causal_and_key_padding_masks
  sequence_first = 16,               ///< nn.MultiheadAttention(batch_first=False) on [L, B, D] tokens (a bit beside the masks)
  rotary_qk_norm = 33,               ///< RoPE after an RMSNorm of each head's q and k (a bit beside rotary: Qwen3Attention's q_norm, k_norm)
  rotary_gemma_qk_norm = 97,         ///< the same with Gemma's RMSNorm ((1 + w), cast back: Gemma3Attention)
  rotary_olmo2_qk_norm = 161,        ///< RoPE after an RMSNorm of the whole q and k projections (Olmo2Attention)
  rotary_eager = 257,                ///< RoPE, then transformers' eager_attention_forward (attn_implementation "eager")
  rotary_eager_softcap = 769,        ///< the same with the scores soft-capped (Gemma 2's attn_logit_softcapping)
  kv_training_cache = 1024,          ///< k and v through transformers >= 5's DynamicCache in a training forward (use_cache; RoPE, or GPT-2's)
  rotary_per_sample_tables = 2049,   ///< RoPE whose cos/sin tables are [B, T, d], one per sample (per_sample_rope_tables)
  rotary_positional_inputs = 4097,   ///< RoPE whose tables and masks a checkpointed layer gets positionally (positional_layer_inputs)
  rotary_fp32_tables = 8193,         ///< RoPE whose cos/sin stay fp32 whatever the hidden states' type (fp32_rope_tables)
  rotary_batch_attention_mask = 16385, ///< RoPE in a model called with attention_mask: its masks one per sample (batch_attention_mask)
  padded_batch_mask = 49152,         ///< its mask padding some sequence: no call's mask skipped (padded_batch)
};

/// Attention options (torch_mha): nn.MultiheadAttention called with the causal attn_mask (is_causal=True,
/// nn.Transformer.generate_square_subsequent_mask(L) given to nn.TransformerEncoder), with a [B, L] bool
/// key_padding_mask (src_key_padding_mask), or both; square_mask: an attn_mask of [L, L] floats that
/// SDPA takes as any mask (a band or a bias; open_clip's causal buffer passed without is_causal).
/// causal_mask alone on separate_qkv_sdpa and flash: F.scaled_dot_product_attention(q, k, v,
/// is_causal=True) on hand-written projections.
struct causal_mask_t {};
inline constexpr causal_mask_t causal_mask{};
struct square_mask_t {};
inline constexpr square_mask_t square_mask{};
struct key_padding_mask_t {};
inline constexpr key_padding_mask_t key_padding_mask{};
/// sequence_first (torch_mha, torch_mha_weights; also cross_attention's): nn.MultiheadAttention(batch_first=False),
/// PyTorch's default, on tokens laid out [L, B, D] (nn.Transformer's tutorials, OpenAI CLIP's text tower).
/// The per-sample shapes are the same; the bytes differ: batch_first=True's input is a transposed
/// view that in_proj's matmul copies, and out_proj's backward copies its gradient (op_rules.md 2.6 #79).
struct sequence_first_t {};
inline constexpr sequence_first_t sequence_first{};
/// rotary_dims(n) (with rotary): RoPE rotates the first n channels of each head (even, at most
/// head_dim; 0: all of them) and concatenates the rest back, as Phi-3 does with partial_rotary_factor (Phi-4-mini:
/// 0.75 · 128 = 96): narrower cos/sin tables, and q, k laid out [B, H, L, d] by the torch.cat, so a
/// kernel that allocates its output like q makes the model's transpose(1, 2).contiguous() copy it
/// (op_rules.md L17).
struct rotary_dims {
  std::int64_t value = 0;
  constexpr explicit rotary_dims(std::int64_t v) : value(v) {}
};
/// attention_window(n) (with rotary; causal self-attention): each query attends to the n most recent
/// tokens (transformers' sliding_window, Mistral, Phi-3, Qwen2 with use_sliding_window). Through
/// SDPA transformers makes the window a mask once the keys reach it (transformers_sdpa_mask); below
/// it the call is is_causal, as without a window. 0: none.
struct attention_window {
  std::int64_t value = 0;
  constexpr explicit attention_window(std::int64_t v) : value(v) {}
};
/// qk_norm (with rotary): an RMSNorm over each head's head_dim channels on q and on k after their
/// projections and before RoPE, one weight of head_dim each (transformers' Qwen3Attention:
/// `self.q_norm(self.q_proj(x).view(*shape, -1, head_dim))`, named q_norm and k_norm). Each is
/// layers/llama.hpp's rms_norm on the [tokens, heads, head_dim] view: it keeps the projection's
/// output, the [tokens, heads, 1] rsqrt and the normalized tensor (fp32), and its product with
/// the fp32 weight is fp32 under autocast, as RoPE's product with cos is without it.
struct qk_norm_t {};
inline constexpr qk_norm_t qk_norm{};
/// gemma_qk_norm (with rotary): qk_norm with Gemma's RMSNorm, (1 + weight) in fp32 and the result
/// cast back to q's type (Gemma3Attention's q_norm, k_norm: Gemma3RMSNorm; rms_weighting::one_plus_then_cast).
struct gemma_qk_norm_t {};
inline constexpr gemma_qk_norm_t gemma_qk_norm{};
/// olmo2_qk_norm (with rotary): an RMSNorm over the whole q projection (heads · head_dim weights)
/// and the whole k projection (kv_heads · head_dim), before the heads' view and RoPE, weighted in
/// fp32 and cast back (Olmo2Attention: `self.q_norm(self.q_proj(x))`; Olmo2RMSNorm).
struct olmo2_qk_norm_t {};
inline constexpr olmo2_qk_norm_t olmo2_qk_norm{};
/// local_rope (with rotary): the model's second RoPE tables, made beside the first in every forward
/// (Gemma 3: rotary_emb_local, base 10,000, for its sliding-window layers; the full-attention ones
/// read the global pair).
struct local_rope_t {};
inline constexpr local_rope_t local_rope{};
/// How a rotary attention computes its scores: SDPA (transformers 5's default attn_implementation),
/// or transformers' eager_attention_forward (attn_implementation "eager"), Gemma 2's soft-capped.
enum class scores_impl : std::int64_t { sdpa, eager, eager_softcap };
/// eager_scores (with rotary): transformers' eager_attention_forward instead of SDPA (a config's
/// attn_implementation "eager"): the [B, heads, Lq, Lk] scores materialized, masked by a float mask
/// made once per forward, softmax in fp32 (detail::eager_attention). eager_softcapped_scores: the
/// same with the scores soft-capped first, tanh(w / cap) · cap (Gemma 2's attn_logit_softcapping,
/// which only the eager path applies).
struct eager_scores_t {};
inline constexpr eager_scores_t eager_scores{};
struct eager_softcapped_scores_t {};
inline constexpr eager_softcapped_scores_t eager_softcapped_scores{};
/// training_kv_cache (with rotary, or on flash named gpt2: transformers' GPT-2): the config's use_cache is true, so transformers >= 5 makes a
/// DynamicCache in every forward, training and eval, and DynamicLayer.update's torch.cat copies k and
/// v before the attention reads them; the model output's past_key_values holds the copies until the
/// output is dropped (gradient checkpointing turns use_cache off): detail::dynamic_cache_copy.
struct training_kv_cache_t {};
inline constexpr training_kv_cache_t training_kv_cache{};
/// per_sample_rope_tables (with rotary): the model's cos and sin are [B, T, d], one table per
/// sample — position_ids of the batch's shape (generate() derives them from the attention mask; a
/// model written out so). Without it they are [1, T, d], shared by the batch: transformers' forward
/// without position_ids (position_ids = cache_position.unsqueeze(0)), as a training loop calls it
/// (op_rules.md L28).
struct per_sample_rope_tables_t {};
inline constexpr per_sample_rope_tables_t per_sample_rope_tables{};
/// positional_layer_inputs (with rotary): the model's RoPE tables and attention masks reach a
/// checkpointed layer as positional arguments, which the checkpoint saves (NoopSaveInputs: saved
/// bytes). Without it they are keyword arguments, as transformers' decoder layers take them
/// (position_embeddings=, attention_mask=): held until the layer's recomputation, not saved.
struct positional_layer_inputs_t {};
inline constexpr positional_layer_inputs_t positional_layer_inputs{};
/// fp32_rope_tables (with rotary): the model's rotary embedding returns cos and sin in fp32 as it
/// computes them, not cast to the hidden states' type (transformers 5's Olmo2RotaryEmbedding; Llama's
/// and the other families' return cos.to(x.dtype)). With 16-bit weights the rotation then runs in
/// fp32 and its apply_rotary_pos_emb casts q and k back (`.to(q_type)`): the tables kept for backward
/// are fp32 (hf_olmo2_b2_t64_bf16weights of pytorch-2.6-cpu-transformers.json; op_rules.md L30).
struct fp32_rope_tables_t {};
inline constexpr fp32_rope_tables_t fp32_rope_tables{};
/// batch_attention_mask (with rotary): the model is called with an attention_mask (generate() always
/// passes one; a collated batch does). transformers' sdpa_mask then ANDs the padding mask in
/// (padding_mask_function indexes the batch): a sliding-window mask is a bool [B, 1, Lq, Lk], one
/// per sample, where without it the mask function on broadcast indices gives [1, 1, Lq, Lk]
/// expanded over the batch (op_rules.md L31). A full causal mask is still skipped while no token is
/// padded (_ignore_causal_mask_sdpa).
struct batch_attention_mask_t {};
inline constexpr batch_attention_mask_t batch_attention_mask{};
/// padded_batch (with rotary, on separate_qkv_sdpa, or on flash named gpt2; implies batch_attention_mask): the attention_mask
/// pads some sequence (a collator's padded batch, DataCollatorWithPadding). _ignore_causal_mask_sdpa
/// skips a mask only while padding_mask.all(), so every SDPA call gets a bool [B, 1, Lq, Lk] one — the
/// full causal layers, and the sliding ones below their window — and with it repeat_kv's copies and,
/// on CUDA, a kernel that takes a mask (op_rules.md L32). transformers 5's BERT (separate_qkv_sdpa)
/// likewise: create_bidirectional_mask is skipped only while nothing is padded, and its mask is the
/// full [B, 1, Lq, Lk] (bidirectional_mask_function's [1, 1, Lq, 1] & the padding's [B, 1, 1, Lk];
/// op_rules.md L33), and its GPT-2 (flash, projection_names::gpt2) the causal one (L34).
struct padded_batch_t {};
inline constexpr padded_batch_t padded_batch{};

struct attention_op {
  std::int64_t width = {};
  std::int64_t heads = {};
  std::int64_t kv_tokens = {};
  attention_impl impl = {};
  std::int64_t kv_heads = {};
  flag bias = {};
  token_positions positions = {};  ///< RoPE, or nn.MultiheadAttention's masks (one word: a record holds max_op_fields)
  std::int64_t dropout = {};  ///< attention-probability dropout, percent
  std::int64_t head_width = {};  ///< channels per head (0: width / heads)
  qkv_bias_kind qkv_bias = {};   ///< q, k, v projections' bias when not `bias`'s (Qwen2's with, timm's qkv_bias=False without)
  projection_names names = {};   ///< module names of the projections (train_only selects them)
  std::int64_t adapters = {};    ///< LoRA adapters on the projections (attention_adapters, packed; 0: none)
};

/// What attention_op::head_width holds, one word (a record holds max_op_fields): the channels per
/// head (0: width / heads), those RoPE rotates (rotary_dims: Phi-3's partial_rotary_factor; 0:
/// all) and the sliding window of a causal self-attention (attention_window; 0: none).
struct head_layout {
  std::int64_t width = 0, rotary = 0, window = 0;
  bool local_rope = false;  ///< the model's second, local RoPE tables (local_rope: Gemma 3's sliding layers)
};
/// head_layout in one word: width bits 0-15, rotary 16-31, window 32-61, local_rope 62.
constexpr std::int64_t pack_head_layout(const head_layout& h) {
  if (h.width < 0 || h.width > 0xFFFF || h.rotary < 0 || h.rotary > 0xFFFF || h.window < 0 || h.window > 0x3FFFFFFF)
    detail::invalid_layer_argument();
  return h.width | h.rotary << 16 | h.window << 32 | std::int64_t{h.local_rope} << 62;
}
constexpr head_layout unpack_head_layout(std::int64_t packed) {
  return {packed & 0xFFFF, (packed >> 16) & 0xFFFF, (packed >> 32) & 0x3FFFFFFF, ((packed >> 62) & 1) != 0};
}

/// Bytes of one [B, heads, Lq, Lk] score matrix of type t: what the materialized path allocates.
/// Do `op`'s q, k, v projections have a bias?
constexpr bool qkv_have_bias(const attention_op& op) {
  return op.qkv_bias == qkv_bias_kind::with || (op.bias && op.qkv_bias != qkv_bias_kind::without);
}

constexpr std::int64_t score_matrix_bytes(std::int64_t batch, std::int64_t h, std::int64_t lq, std::int64_t lk, dtype t) {
  return bytes_of(checked_mul(checked_mul(checked_mul(batch, h), lq), lk), t);
}

namespace detail {


/// PyTorch 2.6's CPU flash kernel: per-thread blocks of T·(qS·kvS + qS·(d+2)) fp32 values, qS =
/// 32 (L < 192), 64 (L < 768), 256, kvS = min(512, L), plus T OpenBLAS 2 MiB buffers in fp32 once
/// L ≥ 256 (op_rules.md 2.6 #9, sdpa_scan_output-2.6.txt).
constexpr std::int64_t cpu_flash_transient(const sim& s, std::int64_t lq, std::int64_t lk, std::int64_t d, dtype t) {
  const auto T = s.plan.cpu_threads > 0 ? s.plan.cpu_threads : 1;
  const std::int64_t qS = lq < 192 ? 32 : lq < 768 ? 64 : 256, kvS = lk < 512 ? lk : 512;
  const auto blocks = bytes_of(checked_mul(T, qS * kvS + qS * (d + 2)), dtype::fp32);
  return blocks + (t == dtype::fp32 && lq >= 256 ? T * 2 * MiB : 0);
}

/// The kernel F.scaled_dot_product_attention runs: 2.6 CPU's flash kernel, or CUDA's cuDNN,
/// flash, memory-efficient or math backend (the math path on both).
enum class sdpa_kernel : std::uint8_t { cpu_flash, cudnn, flash, efficient, math };

/// Which kernel SDPA (no mask; is_causal or not) takes for inputs of type `t` with `head_dim`.
/// 2.6 CPU: math with dropout or grouped-query heads (#11, #12), else flash. CUDA, PyTorch 2.11
/// (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, select_sdp_backend): the kernels
/// `training::sdpa` allows, tried in priority_order: cuDNN first on sm90/sm100 with cuDNN > 9.15
/// (check_prefer_cudnn_attention; the H100 run: cuDNN 9.19), then flash, efficient, math.
/// cuDNN and flash need fp16/bf16 (check_dtypes_low_precision); cuDNN a head size that is a
/// multiple of 8 up to 128 (check_cudnn_tensor_shapes; 256 with newer cuDNN frontends: flash takes
/// those, with the same memory), flash up to 256 (check_head_dim_size_flash); efficient a head
/// size divisible by 4 (fp32) or 8 (16 bit), and in 2.11 no grouped-query heads (the H100 run's
/// llama2l_sdpa_efficient_b2_t64_bf16: "No available kernel"). op_rules.md CT3. An `attn_mask`
/// rules flash out (check_for_attn_mask); cuDNN (check_attn_mask_shape) and efficient take one
/// (read from sdp_utils.cpp, not measured on a GPU: op_rules.md 2.6 #76) whose last dimension has
/// stride 1: a strided one (`mask_strided`: T5's permuted position bias) rules every CUDA fused kernel
/// out (sdp_utils_cpp.h check_last_dim_stride_equals_1_dense; the CPU has no such check: op_rules.md L37).
constexpr sdpa_kernel sdpa_kernel_for(const sim& s, dtype t, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                                      std::int64_t dropout_percent, bool attn_mask = false, bool mask_strided = false) {
  const bool gqa = kv_heads != heads;
  // enable_gqa takes the CPU math path without grad too: a no-grad prefill's SDPA holds the [B, H, L, L]
  // scores and probabilities (measure26_llm.py decode cases; op_rules.md LLM features #L2)
  if (s.on_cpu()) return s.torch26_cpu() && ((dropout_percent > 0 && !s.no_grad) || gqa) ? sdpa_kernel::math : sdpa_kernel::cpu_flash;
  switch (s.plan.sdpa) {
    case sdpa_backend::flash: return attn_mask ? sdpa_flash_takes_no_attention_mask(), sdpa_kernel::math : sdpa_kernel::flash;
    case sdpa_backend::efficient: return sdpa_kernel::efficient;
    case sdpa_backend::cudnn: return sdpa_kernel::cudnn;
    case sdpa_backend::math: return sdpa_kernel::math;
    case sdpa_backend::automatic: break;
  }
  if (attn_mask && mask_strided) return sdpa_kernel::math;
  const bool half = t == dtype::fp16 || t == dtype::bf16;
  if (half && head_dim % 8 == 0 && head_dim <= 128) return sdpa_kernel::cudnn;
  if (half && head_dim <= 256 && !attn_mask) return sdpa_kernel::flash;  // check_for_attn_mask: flash takes none
  if (!gqa && head_dim % (half ? 8 : 4) == 0) return sdpa_kernel::efficient;
  return sdpa_kernel::math;
}

/// A fused SDPA kernel (scaled_dot_product_attention): a new [Lq, D] output and a per-row fp32
/// log-sum-exp [B, H, Lq]; keeps its inputs (views keep their bases), the output and the
/// log-sum-exp; no score matrix, with dropout too (op_rules.md 2.6 #8, CT4). CUDA's efficient
/// kernel pads the log-sum-exp to a multiple of 32 rows (mem_eff_attention kernel_forward.h,
/// kAlignLSE); cuDNN and flash keep two 8-byte CUDA tensors more (cuDNN's philox seed and offset,
/// flash's rng_state; the seed and offset of the efficient kernel live on the host). Consumes the inputs.
template <std::size_t K>
constexpr value flash_kernel(sim& s, const value (&inputs)[K], const shape& out, dtype t, std::int64_t heads, sdpa_kernel kind,
                             const value& attn_mask = {}) {
  bool rg = false;
  for (const auto& v : inputs) rg = rg || v.requires_grad;
  value o = s.make(out, t, rg);
  // 2.6 CPU: per-thread buffers in forward; backward ≈ 4.1–5.3·|q| above grad_out, of which
  // the q, k, v gradients are 3·|q| (op_rules.md 2.6 #10)
  const auto buffers = s.torch26_cpu() ? cpu_flash_transient(s, out[0], out[0], out[1] / (heads > 0 ? heads : 1), t) : 0;
  s.transient(buffers);
  auto n = s.record(o);
  s.backward_temp(n, buffers > 0 ? buffers + s.bytes_of_value(out, t) : 0);
  for (const auto& v : inputs) s.save(n, v);
  s.save(n, o);
  s.save(n, attn_mask);  // the backward reads the mask too (2.6 CPU: masked_encoder_*_nodrop)
  const auto rows = kind == sdpa_kernel::efficient ? (out[0] + 31) / 32 * 32 : out[0];
  s.save_new(n, bytes_of(checked_mul(checked_mul(s.batch, heads), rows), dtype::fp32));
  if (kind == sdpa_kernel::cudnn || kind == sdpa_kernel::flash) s.save_new(n, 8, 2, true);
  for (const auto& v : inputs) s.grad_to(n, v);
  for (const auto& v : inputs) s.release(v);
  return o;
}

/// SDPA's math kernel without grad (PyTorch 2.6 attention.cpp _scaled_dot_product_attention_math):
/// the scaled q, k and v expanded to all heads (repeat_interleave) and the causal float mask
/// [Lq, Lk] live to its end; q @ (k·√s)ᵀ adds the scaled k; the mask is added in place;
/// _safe_softmax holds its input, its output and a bool `== -inf` of the scores; then @ v.
/// matmul folds [B, H, L, d] into bmm's batch by a reshape, which copies the scaled q (a
/// transposed view of the projection) when B > 1. Measured: measure26_llm.py's decode cases
/// (op_rules.md, LLM features #L3).
constexpr value sdpa_math_no_grad(sim& s, const value& q16, const value& k16, const value& v16, std::int64_t H, bool causal, dtype out_type) {
  value q = cast_to(s, q16, dtype::fp32), k = cast_to(s, k16, dtype::fp32), v = cast_to(s, v16, dtype::fp32);
  const auto Lq = q.s[0], Lk = k.s[0], D = q.s[1];
  const auto mask_bytes = causal ? bytes_of(checked_mul(Lq, Lk), dtype::fp32) : 0;
  const auto mask = mask_bytes > 0 ? s.allocate(mask_bytes, false, -1, mask_bytes) : -1;  // one per call, not per sequence
  value qs = pointwise(s, q, q.s, q.type, keeps::nothing);            // query * √scale
  value kx = s.make(make_shape(Lk, D), k.type, false);                // key_expanded
  value vx = s.make(make_shape(Lk, D), v.type, false);                // value_expanded
  value ks = pointwise(s, kx, kx.s, kx.type, keeps::nothing);         // key_expanded.transpose(-2, -1) * √scale
  value qc = s.batch > 1 ? s.make(qs.s, qs.type, false) : value{};    // the reshape's copy of q
  value scores = bmm(s, qs, ks, make_shape(H * Lq, Lk), dtype::fp32, {Lq, Lk, D / H, false, true});
  s.release(ks), s.release(qc);
  value p = s.make(scores.s, dtype::fp32, false);                      // _safe_softmax
  s.transient(s.bytes_of_value(scores.s, dtype::boolean));
  s.release(scores);
  value o = bmm(s, p, vx, make_shape(Lq, D), dtype::fp32, {Lq, D / H, Lk});
  s.release(p), s.release(vx), s.release(kx), s.release(qs), s.release(mask);
  s.release(q), s.release(k), s.release(v);
  value out = cast_to(s, o, out_type);
  s.release(o);
  return out;
}

/// SDPA's math path (2.6 CPU with dropout_p > 0 or enable_gqa, op_rules.md 2.6 #11, #12):
/// q·√s and kᵀ·√s (k expanded to all H heads) copies, the scores, a mask's add, the fp32
/// softmax output, the dropout mask and dropped probabilities, v expanded to all heads and
/// copied; q @ kᵀ keeps both scaled copies, softmax its output, @ v the probabilities and v's
/// copy. `mask_added`: is_causal's mask or an attn_mask added to the scores as a new tensor (the
/// 2.6 CPU's measured cases; without grad, is_causal's float [Lq, Lk] mask, sdpa_math_no_grad);
/// false where no mask is added, or where it is added in place (T5's, op_rules.md L37).
/// `q` is [Lq, D]; `k`, `v` [Lk, KVH·d] (views of one tensor when `v` is `k`). `v_as_bmm_view`:
/// v is laid out [Lk, B·H, d] (nn.MultiheadAttention's view of its packed projection), so bmm's
/// reshape is an alias and the saved v keeps the whole packed projection (2.6 CPU, measured:
/// tests/export `encoder_stack_*`, +2·|v| over a copy). Consumes nothing; returns the [Lq, D] output.
constexpr value sdpa_math(sim& s, const value& q16, const value& k16, const value& v16, std::int64_t H, bool mask_added,
                          std::int64_t dropout_percent, dtype out_type, bool v_as_bmm_view = false) {
  if (s.no_grad) return sdpa_math_no_grad(s, q16, k16, v16, H, mask_added, out_type);
  // the CPU math kernel computes 16-bit inputs in fp32 (fp32 copies of q, k, v; the output cast
  // back), which is why its softmax output is fp32 under bf16 autocast too (op_rules.md 2.6 #11)
  const dtype mt = dtype::fp32;
  value q = cast_to(s, q16, mt), k = cast_to(s, k16, mt), v = k16.id == v16.id ? k : cast_to(s, v16, mt);
  if (k16.id == v16.id) s.retain(v.id);
  const auto Lq = q.s[0], Lk = k.s[0], D = q.s[1];
  value qs = pointwise(s, q, q.s, q.type, keeps::nothing, scalar_operand_saved(s));   // q * sqrt(scale)
  value ks = pointwise(s, k, make_shape(Lk, D), k.type, keeps::nothing, scalar_operand_saved(s));  // kᵀ * sqrt(scale), all heads
  // matmul folds [B, H, L, d] into bmm's batch by reshapes, which copy the scaled q and kᵀ (laid out as
  // their projections, heads second) when B > 1: bmm keeps the copies, the scaled tensors live to the
  // call's end (cuda-h200/hf_t5_small_b16_t512_bf16: clone under reshape_symint under _matmul_impl)
  const bool folds = s.batch > 1;
  value qb = folds ? copy(s, qs, qs.s) : qs, kb = folds ? copy(s, ks, ks.s) : ks;
  value scores = bmm(s, qb, kb, make_shape(H * Lq, Lk), mt, {Lq, Lk, D / H, false, true});
  if (folds) s.release(qb), s.release(kb);
  if (mask_added) {  // attn + the mask: a new tensor, nothing kept
    value masked = pointwise(s, scores, scores.s, scores.type, keeps::nothing);
    s.release(scores);
    scores = masked;
  }
  value p = softmax_op(s, scores);
  s.release(scores);
  value pd = attention_probs_dropout(s, p, dropout_percent);
  s.release(p);
  // the probabilities it returns beside the output, cast back to the inputs' type (attn.to(origin_dtype),
  // evaluated first), alive until the call returns
  value weights = q16.type != mt ? s.make(pd.s, q16.type, false) : value{};
  // v expanded to all heads, made contiguous for bmm (or read in place, keeping its base)
  value vx = v_as_bmm_view ? s.view(v, make_shape(Lk, D)) : copy(s, v, make_shape(Lk, D));
  value o = bmm(s, pd, vx, make_shape(Lq, D), mt, {Lq, D / H, Lk});
  s.release(pd);
  s.release(vx);
  value out = cast_to(s, o, out_type);
  s.release(o), s.release(weights), s.release(qs), s.release(ks);
  s.release(q), s.release(k), s.release(v);
  return out;
}

/// One projection of nn.MultiheadAttention under PEFT's lora.MultiheadAttention (peft/tuners/lora/
/// layer.py MultiheadAttention.forward: merge(), the attention, unmerge()): part 0 in_proj_weight
/// [3D, D], part 1 out_proj.weight [D, D], frozen, with lora_A [r, in] and lora_B [out, r] (keys
/// 2·part + 1 on). merge() replaces the weight by W.data + (B @ A)·scaling, a tensor that requires
/// grad, so the product keeps its input and (when the input needs a gradient) that merged copy
/// until its backward, as a trained Linear does; unmerge() registers a new frozen Parameter W' -
/// delta in its place. Backward makes the merged copy's gradient, which waits: merge() recorded
/// the delta's nodes (AddBackward, MulBackward by scaling, MmBackward of B @ A) before the
/// attention's, so the engine runs them after the in_proj product, out_proj's first (op by op on
/// PyTorch 2.6 CPU, tests/export/trace_peak.py): at the in_proj product both gradients exist
/// (`pending`: out_proj's, waiting); each MulBackward's scaled copy comes once that product has
/// let its merged weight go, below that moment. Under autocast the merged copy is cast for every
/// call (not a leaf: nothing caches it) and the cast kept for the input's gradient.
constexpr value merged_projection(layer_ctx& c, const value& x, std::int64_t out_features, bool bias, std::int32_t part, std::int64_t rank,
                                  std::int64_t pending) {
  auto& s = c.s;
  const auto in = x.s.last(), weight = checked_mul(in, out_features);
  if (rank > in || rank > out_features) lora_rank_must_be_positive_and_at_most_the_layer_width();
  const auto merged = bytes_of(weight, c.param_type()), cast = c.amp() ? bytes_of(weight, c.half_type()) : 0;
  c.add_frozen_base(bias ? weight + out_features : weight, bytes_of(bias ? weight + out_features : weight, c.param_type()));
  layer_ctx ad = c.sub(2 * part + 1);
  ad.add_param(rank * in), ad.add_param(out_features * rank);
  shape out = x.s;
  out[-1] = out_features;
  const dtype mt = c.matmul_type(x.type);
  value xin = cast_to(s, x, mt);
  const auto gemm = cpu_linear_gemm_buffers(s, checked_mul(s.batch, x.s.numel() / x.s.last()), out_features, in, mt, true);  // the merged weight's gradient
  value y = s.make(out, mt, true);
  s.transient(gemm.forward + cast, true);
  const auto n = s.record(y);
  s.save(n, xin);
  if (x.requires_grad) s.save_new(n, merged, 1, true);  // the input's gradient needs the weight (mm saves it only then)
  if (cast && x.requires_grad) s.save_new(n, cast, 1, true);
  s.grad_to(n, xin);
  ad.param_grads(n, rank * (in + out_features));
  s.backward_temp(n, gemm.backward + cast + merged + pending, true);
  s.release(xin);
  c.absorb(ad, 2 * part + 1);
  return y;
}

/// Part `part` of an attention with adapters (layer_ctx::adapters): PEFT's lora.Linear on a frozen
/// base, with an adapter when `part` is one the adapters name (its keys 2·part and 2·part + 1);
/// PEFT's lora.MultiheadAttention's merged weights (adapt_merged: both parts).
constexpr value adapted_projection(layer_ctx& c, const value& x, std::int64_t width, bool bias, std::int32_t part) {
  const auto a = unpack_adapters(c.adapters);
  if (a.parts & adapt_merged)  // in_proj (part 0) runs its backward with out_proj's [D, D] weight gradient waiting
    return merged_projection(c, x, width, bias, part, a.rank, part == 0 ? bytes_of(checked_mul(x.s.last(), x.s.last()), c.param_type()) : 0);
  const auto rank = (a.parts >> part) & 1 ? a.rank : 0;
  return lora_projection(c, x, width, rank, a.dropout, static_cast<std::int64_t>(a.base), 2 * part, bias, false, {a.dora, a.cast_input});
}

/// The projection of part `part` (q 0, k or kv 1, output 2, separate v 3; torch_mha: in_proj 0,
/// out_proj 1): an nn.Linear that trains unless a train_only name selected only other parts of
/// this attention (on_part).
constexpr value projection(layer_ctx& c, const value& x, std::int64_t width, bool bias, std::int32_t part) {
  if (c.adapters != 0) return adapted_projection(c, x, width, bias, part);
  return on_part(c, part, [&](layer_ctx& pc) { return linear_op(pc, x, width, bias, part); });
}

/// o (the [Lq, D] attention output, heads interleaved) -> transpose(..).contiguous() (a copy)
/// -> the output Linear. Consumes `o`.
constexpr value output_projection(layer_ctx& c, const value& o, std::int64_t D, bool bias, std::int32_t part) {
  value oc = copy(c.s, o, o.s);
  c.s.release(o);
  value result = projection(c, oc, D, bias, part);
  c.s.release(oc);
  return result;
}

/// Does SDPA's output need a copy for the model's transpose(1, 2).contiguous() (nn.MultiheadAttention:
/// permute(2, 0, 1, 3).contiguous(), `seq_first_q`: q is [L, B, H, d] in memory)? Not where the
/// kernel stores it in the layout the model wants. PyTorch 2.6's CPU flash kernel: [B, L, H, d]
/// (op_rules.md 2.6 #7). CUDA (op_rules.md CT2): cuDNN and flash allocate it like q
/// (alloc_with_matching_layout, empty_like), which the model laid out [B, L, H, d] (or
/// [L, B, H, d]) and viewed as [B, H, L, d]: never a copy; the efficient kernel allocates
/// [B, L, H, d] (_efficient_attention_forward: {B, M, num_heads, Kv}): a copy for
/// nn.MultiheadAttention only. The math path's bmm output is [B, H, L, d]: always a copy.
/// `heads_first_q`: q laid out [B, H, L, d] (a partial RoPE's torch.cat, rotated_qk): the kernels
/// that allocate their output like q (2.6 CPU's flash kernel too: probe, op_rules.md L17) return
/// it so, and the transpose copies; the efficient kernel's [B, L, H, d] does not.
constexpr bool sdpa_output_needs_copy(sdpa_kernel kind, bool seq_first_q, bool heads_first_q = false) {
  return kind == sdpa_kernel::math || (kind == sdpa_kernel::efficient && seq_first_q) || (heads_first_q && kind != sdpa_kernel::efficient);
}

/// The fused kernel's output -> transpose(1, 2).contiguous() -> the output Linear. Consumes `o`.
constexpr value flash_output_projection(layer_ctx& c, const value& o, std::int64_t D, bool bias, std::int32_t part, sdpa_kernel kind,
                                        bool seq_first_q = false, bool heads_first_q = false) {
  if (sdpa_output_needs_copy(kind, seq_first_q, heads_first_q)) return output_projection(c, o, D, bias, part);
  value result = projection(c, o, D, bias, part);
  c.s.release(o);
  return result;
}

/// Sizes of one attention call, checked once.
struct attention_dims {
  std::int64_t D = 0, H = 0, KVH = 0, d = 0, Lq = 0, Lk = 0;
  dtype mt = dtype::fp32;  ///< the matmuls' type (autocast)
  std::int64_t inner = 0;  ///< H · d: the q projection's and the attention output's width
  std::int64_t rotary = 0; ///< channels of a head RoPE rotates (d unless rotary_dims)
  std::int64_t window = 0; ///< a sliding window's tokens (attention_window; 0: none)
  bool local_rope = false; ///< the second RoPE tables (local_rope)
  bool keyword_inputs = true; ///< tables and masks reach a checkpointed layer by keyword (positional_layer_inputs: false)
  bool batch_mask = false;    ///< the model got an attention_mask: its sliding-window mask is one per sample (batch_attention_mask)
  bool padded = false;        ///< that attention_mask pads some sequence: no call's mask is skipped (padded_batch)
};

constexpr bool is_rotary(const attention_op& op) { return (static_cast<std::int64_t>(op.positions) & 1) != 0; }
/// Which q/k norm `op` runs before RoPE (qk_norm, gemma_qk_norm, olmo2_qk_norm; bits 32, 64, 128 of positions).
constexpr qk_norm_kind qk_norm_of(const attention_op& op) {
  const auto p = static_cast<std::int64_t>(op.positions);
  if ((p & 32) == 0) return qk_norm_kind::none;
  return p & 64 ? qk_norm_kind::per_head_gemma : p & 128 ? qk_norm_kind::whole_projection : qk_norm_kind::per_head;
}
constexpr bool has_qk_norm(const attention_op& op) { return qk_norm_of(op) != qk_norm_kind::none; }
/// How a rotary attention computes its scores (eager_scores, eager_softcapped_scores; bits 256, 512 of positions).
constexpr scores_impl scores_of(const attention_op& op) {
  const auto p = static_cast<std::int64_t>(op.positions);
  return (p & 256) == 0 ? scores_impl::sdpa : (p & 512) != 0 ? scores_impl::eager_softcap : scores_impl::eager;
}
/// Does `op` run k and v through a DynamicCache in training (training_kv_cache; bit 1024 of positions)?
constexpr bool has_training_cache(const attention_op& op) { return (static_cast<std::int64_t>(op.positions) & 1024) != 0; }
/// Is `op` transformers' GPT-2 attention through SDPA (flash on one c_attn, projection_names::gpt2),
/// which takes a padded batch's mask and the DynamicCache's copies (op_rules.md L34)?
constexpr bool is_gpt2_sdpa(const attention_op& op) { return op.impl == attention_impl::flash && op.names == projection_names::gpt2; }
/// Are `op`'s RoPE tables one per sample (per_sample_rope_tables; bit 2048 of positions)?
constexpr bool has_per_sample_rope_tables(const attention_op& op) { return (static_cast<std::int64_t>(op.positions) & 2048) != 0; }
/// Are `op`'s RoPE tables fp32 whatever the hidden states' type (fp32_rope_tables; bit 8192 of positions)?
constexpr bool has_fp32_rope_tables(const attention_op& op) { return (static_cast<std::int64_t>(op.positions) & 8192) != 0; }
/// `op`'s masks as token_positions bits (causal_mask 2, key_padding_mask 4, square_mask 8); 0: none, or rotary.
constexpr std::int64_t masks_of(const attention_op& op) { return static_cast<std::int64_t>(op.positions) & 14; }
/// Is `op` nn.MultiheadAttention(batch_first=False) on [L, B, D] tokens (sequence_first)?
constexpr bool is_sequence_first(const attention_op& op) { return (static_cast<std::int64_t>(op.positions) & 16) != 0; }
constexpr void add_positions(attention_op& o, token_positions p) {
  const auto both = static_cast<std::int64_t>(o.positions) | static_cast<std::int64_t>(p);
  if ((both & 1) && (both & 16)) sequence_first_needs_torch_mha();
  if (((both & 1) && (both & 14)) || ((both & 2) && (both & 8))) attention_masks_need_torch_mha_self_attention();
  o.positions = static_cast<token_positions>(both);
}
/// Masks fit self-attention through SDPA: nn.MultiheadAttention's both (torch_mha); SDPA's is_causal
/// (causal_mask) on hand-written q, k, v projections too (separate_qkv_sdpa, flash). Across two
/// tensors (nn.TransformerDecoderLayer's multihead_attn) the memory's key padding mask alone.
constexpr void check_masks(const attention_op& op, const value& x, const value& kv_src) {
  const bool sdpa_causal =
      (op.impl == attention_impl::separate_qkv_sdpa || op.impl == attention_impl::flash || op.impl == attention_impl::t5_sdpa) && masks_of(op) == 2;
  const bool memory_padding = op.impl == attention_impl::torch_mha && masks_of(op) == 4 && kv_src.id != x.id;
  if (memory_padding) return;
  if ((!is_torch_mha(op.impl) && !sdpa_causal) || kv_src.id != x.id || op.kv_tokens != 0) attention_masks_need_torch_mha_self_attention();
}

/// Adapters fit the projections the implementation has: a separate v (adapt_v) only where k and
/// v are Linears of their own, one adapter over q, k, v (adapt_qkv) only where they are not;
/// none on the rotary path (lora_attention); on nn.MultiheadAttention PEFT's
/// lora.MultiheadAttention alone (adapt_merged, without DoRA: PEFT raises for it), which fits
/// nothing else; none on Karpathy's per-head modules (3·H Linears).
constexpr void check_adapters(const attention_op& op) {
  const auto a = unpack_adapters(op.adapters);
  const bool separate = op.impl == attention_impl::separate_qkv || op.impl == attention_impl::t5 || op.impl == attention_impl::t5_sdpa ||
                        op.impl == attention_impl::separate_qkv_sdpa;
  const bool mha = is_torch_mha(op.impl);
  if (is_rotary(op) || op.impl == attention_impl::per_head || (mha != (a.parts == adapt_merged)) || (mha && a.dora) || (separate && (a.parts & adapt_qkv)) || (!separate && !mha && (a.parts & adapt_v)))
    attention_adapters_do_not_fit_the_attention_impl();
}

constexpr attention_dims check_attention(const layer_ctx& c, const attention_op& op, const value& x, const value& kv_src) {
  const auto D = op.width, H = op.heads;
  if (H <= 0) heads_must_be_positive();
  if (D <= 0) invalid_layer_argument();
  if (op.kv_heads < 0) kv_heads_must_not_be_negative();
  if (op.kv_tokens < 0) kv_tokens_must_not_be_negative();
  // another tensor's keys and values (cross-attention) project from its own width
  if (x.s.rank != 2 || x.s[1] != D || kv_src.s.rank != 2 || (kv_src.id == x.id && kv_src.s[1] != D)) shape_mismatch_between_layers();
  const auto KVH = op.kv_heads > 0 ? op.kv_heads : H;
  const auto [hw, rw, window, local] = unpack_head_layout(op.head_width);
  if (op.head_width < 0) invalid_layer_argument();
  if ((hw == 0 && D % H != 0) || H % KVH != 0) heads_do_not_divide_model_width();
  if (is_rotary(op) && op.impl != attention_impl::flash) invalid_layer_argument();  // rotary: flash only
  if (has_qk_norm(op) && op.names == projection_names::phi3) invalid_layer_argument();  // q_norm, k_norm: separate q and k projections
  if (masks_of(op) != 0) check_masks(op, x, kv_src);
  if (is_sequence_first(op) && !is_torch_mha(op.impl)) sequence_first_needs_torch_mha();
  // one packed q, k, v projection (fused_qkv): flash's, without adapters unless rotary (lora_attention)
  if (op.names == projection_names::phi3 && (op.impl != attention_impl::flash || (!is_rotary(op) && op.adapters != 0))) invalid_layer_argument();
  if (hw > 0 && is_torch_mha(op.impl)) invalid_layer_argument();  // nn.MultiheadAttention: width / heads
  if (op.adapters != 0) check_adapters(op);
  const auto d = hw > 0 ? hw : D / H;
  if (rw != 0 && (!is_rotary(op) || rw < 0 || rw > d || rw % 2 != 0)) invalid_layer_argument();  // rotary_dims: RoPE's, even, at most d
  if (window != 0 && (!is_rotary(op) || kv_src.id != x.id)) invalid_layer_argument();  // attention_window: causal self-attention
  if (local && !is_rotary(op)) invalid_layer_argument();  // local_rope: RoPE's
  const auto p = static_cast<std::int64_t>(op.positions);
  const bool keyword = (p & 4096) == 0, batch_mask = (p & 16384) != 0, padded = (p & 32768) != 0;
  if (padded && !is_rotary(op) && op.impl != attention_impl::separate_qkv_sdpa && !is_gpt2_sdpa(op)) padded_batch_needs_a_transformers_sdpa_attention();
  if (has_training_cache(op) && !is_rotary(op) && !is_gpt2_sdpa(op) && op.impl != attention_impl::t5_sdpa) training_kv_cache_needs_a_transformers_decoder();
  return {D, H, KVH, d, x.s[0], kv_src.s[0], c.matmul_type(x.type), checked_mul(H, d), rw > 0 ? rw : d, window, local, keyword, batch_mask, padded};
}

/// The q and the packed k, v projections of split_qkv and flash: two projections, or where the
/// model has one c_attn (transformers' GPT-2, projection_names::gpt2; or one adapter over q, k and
/// v, adapt_qkv: a frozen c_attn and its adapter) one projection, q and kv views of its output.
constexpr std::array<value, 2> q_and_kv(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x, const value& kv_src, bool bias) {
  const auto ad = unpack_adapters(c.adapters);
  const bool adapted = (ad.parts & adapt_qkv) != 0;
  if (!adapted && op.names != projection_names::gpt2) return {projection(c, x, a.inner, bias, 0), projection(c, kv_src, 2 * a.KVH * a.d, bias, 1)};
  if (x.id != kv_src.id) invalid_layer_argument();  // one c_attn reads one input
  const auto width = a.inner + 2 * a.KVH * a.d;
  value qkv = adapted ? lora_projection(c, x, width, ad.rank, ad.dropout, static_cast<std::int64_t>(ad.base), 0, bias, false, {ad.dora, ad.cast_input})
                      : projection(c, x, width, bias, 0);
  std::array<value, 2> out{c.s.view(qkv, make_shape(a.Lq, a.inner)), c.s.view(qkv, make_shape(a.Lk, 2 * a.KVH * a.d))};
  c.s.release(qkv);
  return out;
}

/// transformers' causal mask through SDPA (masking_utils.py create_causal_mask,
/// create_sliding_window_causal_mask, sdpa_mask; op_rules.md L18, L32) for a layer of sliding window
/// `a.window` (0: full attention): none while _ignore_causal_mask_sdpa skips it (no padding, and the keys
/// fewer than the window or no window: the call is is_causal); else a bool [1, 1, Lq, Lk] made once per
/// forward for every layer of its kind (the mask function on broadcast indices, expanded over the batch;
/// [B, 1, Lq, Lk] where the model got an attention_mask: a.batch_mask), and in each SDPA call
/// attention.cpp's convert_boolean_attn_mask, where(mask.logical_not(), -inf, 0): a bool [B, 1, Lq, Lk]
/// (freed) and the float mask [B, 1, Lq, Lk] in q's type a.mt: the call's attn_mask (returned), which a
/// fused kernel keeps for backward. {} without a mask.
constexpr value transformers_sdpa_mask(sim& s, const attention_dims& a) {
  if (!a.padded && (a.window <= 0 || a.Lk < a.window)) return {};
  const auto Lq = a.Lq, Lk = a.Lk;
  value model = s.shared_input(Lq, Lk, dtype::boolean, a.window > 0 ? 4 : 9, a.batch_mask, false, a.keyword_inputs);
  value inverted = s.make(make_shape(Lq, Lk), dtype::boolean, false);
  value mask = s.make(make_shape(Lq, Lk), a.mt, false);
  s.release(inverted);
  s.release(model);
  return mask;
}

/// transformers' sdpa_attention_forward with an attention mask on grouped-query heads: no enable_gqa
/// (use_gqa_in_sdpa), but repeat_kv, k and v expanded to every head and reshaped: new [Lk, heads·d]
/// copies (the kernel keeps them). `kv` ({k, v}) is replaced by the copies (the old references
/// released). One key/value head (multi-query): the reshape of the expand is a view (the head
/// dimension of size 1 merges with the stride-0 one), nothing new (probed on 2.6 CPU, Gemma 3's);
/// but where autocast casts k for SDPA (`k_cast`: RoPE made it fp32), it casts that expanded view:
/// a full [Lk, heads·d] copy (gemma3_7l_b2_t64_bf16: 49,152 B a sliding layer).
constexpr void repeat_kv_for_mask(sim& s, value (&kv)[2], std::int64_t width, bool one_kv_head, bool k_cast) {
  for (auto& t : kv) {
    const bool view = one_kv_head && !(k_cast && &t == &kv[0]);
    value y = view ? s.view(t, make_shape(t.s[0], width)) : s.make(make_shape(t.s[0], width), t.type, t.requires_grad);
    if (auto n = view ? -1 : s.record(y); n >= 0) s.grad_to(n, t);  // the expand's backward sums the copies' gradient
    s.release(t);
    t = y;
  }
}

/// The attn_mask `mask` as kernel `kind` takes it: the efficient kernel pads a last dimension that
/// is not a multiple of 16 (attention.cpp pad_bias<mem_eff_alignment>: at::pad, then a slice that
/// keeps the padded tensor), a copy as large as the mask's storage with that dimension padded (one
/// per sample or batch-independent, as the mask is). Consumes `mask`; returns the mask the kernel reads.
constexpr value mask_for_kernel(sim& s, const value& mask, sdpa_kernel kind) {
  const auto last = mask.s.last();
  if (mask.id < 0 || kind != sdpa_kernel::efficient || last % 16 == 0) return mask;
  const auto padded_last = (last + 15) / 16 * 16;
  const auto& source = s.storages.data_[mask.id];
  const auto bytes = checked_mul(source.bytes / last, padded_last), fixed = checked_mul(source.fixed / last, padded_last);
  value padded{s.allocate(bytes, false, -1, fixed), make_shape(mask.s[0], padded_last), mask.type, false};
  s.release(mask);
  return padded;
}

/// The attention output of one SDPA call.
struct sdpa_output {
  value o;           ///< [Lq, H·d]
  sdpa_kernel kind;  ///< the kernel that made it (whether the model's transpose copies it: sdpa_output_needs_copy)
};

/// One scaled_dot_product_attention call through kernel `kind` on `qkv` — q and separate k, v ([L, H·d] /
/// [L, KVH·d]), or q and one packed [Lk, 2·KVH·d] projection whose k and v are views (K = 2) — with
/// attn_mask `mask` ({}: none), all consumed: the math path (sdpa_math; `mask_added`: is_causal's mask or
/// the attn_mask added as a new score tensor) materializes the probabilities, a fused kernel keeps its
/// inputs, log-sum-exp and the mask (the efficient kernel's padded copy: mask_for_kernel) (op_rules.md CT3, CT4).
template <std::size_t K>
constexpr sdpa_output sdpa_call(sim& s, const attention_dims& a, const value (&qkv)[K], value mask, sdpa_kernel kind, bool mask_added,
                                std::int64_t dropout) {
  static_assert(K == 2 || K == 3, "q with separate k and v, or with one packed kv");
  if (kind == sdpa_kernel::math) {
    const value k = K == 2 ? s.view(qkv[1], make_shape(a.Lk, a.KVH * a.d)) : qkv[1];
    value o = sdpa_math(s, qkv[0], k, K == 2 ? k : qkv[K - 1], a.H, mask_added, dropout, a.mt);
    if (K == 2) s.release(k);
    for (const auto& t : qkv) s.release(t);
    s.release(mask);
    return {o, kind};
  }
  mask = mask_for_kernel(s, mask, kind);
  value o = flash_kernel(s, qkv, make_shape(a.Lq, a.inner), a.mt, a.H, kind, mask);
  s.release(mask);
  return {o, kind};
}

/// scaled_dot_product_attention over separate q, k, v ([L, H·d] / [L, KVH·d]; consumed) through the
/// backend sdp_utils picks (sdpa_kernel_for, sdpa_call). A sliding window (attention_dims::window)
/// past its length, or a padded batch, adds the mask (transformers_sdpa_mask), which rules CUDA's flash kernel out, a fused
/// kernel keeps and the math path adds as the causal mask; with it grouped-query heads are repeated
/// (repeat_kv_for_mask; `k_cast`: autocast casts k for the kernel). Both rotary paths' call.
constexpr sdpa_output windowed_sdpa(sim& s, const attention_dims& a, const value& q, const value& k, const value& v, bool causal,
                                    std::int64_t dropout, bool k_cast) {
  value mask = transformers_sdpa_mask(s, a), kv[] = {k, v};
  if (mask.id >= 0 && a.KVH != a.H) repeat_kv_for_mask(s, kv, a.inner, a.KVH == 1, k_cast);
  const auto kind = sdpa_kernel_for(s, a.mt, a.H, mask.id >= 0 ? a.H : a.KVH, a.d, dropout, mask.id >= 0);
  const value qkv[] = {q, kv[0], kv[1]};
  return sdpa_call(s, a, qkv, mask, kind, causal, dropout);
}

/// transformers' eager float mask of a layer (masking_utils.py eager_mask): the bool mask never
/// skipped, then torch.where(mask, 0, finfo.min) in the embeddings' type `t`, [B, 1, Lq, Lk], made once
/// per forward for every layer that reads it — one causal, one within the window where the model has
/// sliding layers (create_sliding_window_causal_mask) — and alive to the forward's end (or, under
/// checkpointing, to the recomputation's).
constexpr value eager_mask(sim& s, std::int64_t window, std::int64_t Lq, std::int64_t Lk, dtype t, bool by_keyword) {
  return s.shared_input(Lq, Lk, t, window > 0 ? 8 : 7, true, false, by_keyword);
}

/// How eager attention's operands come laid out: q and k [B, H, L, d] after a partial RoPE's cat
/// (`qk_heads_first`), k and v so as DynamicCache's copies (`kv_heads_first`).
struct eager_layout {
  bool qk_heads_first = false, kv_heads_first = false;
};

/// transformers' eager_attention_forward on q, k, v after RoPE (consumed; q and k in the kernel type
/// a.mt, laid out as `layout` says): matmul(q, kᵀ) folds into bmm by reshapes that copy q (unless
/// heads first) and k — repeat_kv's copy with grouped-query heads, the reshape's unless heads first
/// — and keeps both; `* scaling`, Gemma 2's softcap (÷ cap, tanh keeping its
/// output, × cap) and `+ mask` are new score tensors keeping nothing; softmax(dtype=float32) of an
/// fp32 copy (CUDA's half_to_float path takes fp16 as it is) keeps its fp32 output; `.to(q.dtype)` a
/// 16-bit copy under autocast; dropout; matmul with v (repeat_kv's copy, the reshape's, or v itself
/// heads first) keeps the probabilities and v. Returns the [Lq, H·d] output laid out [B, H, L, d] (the caller's transpose
/// copies it). Measured op by op on PyTorch 2.6 CPU (op_rules.md L26).
constexpr value eager_attention(sim& s, const attention_dims& a, const value& q, const value& k, const value& v, dtype hidden, bool softcap,
                                eager_layout layout, std::int64_t dropout) {
  const value mask = eager_mask(s, a.window, a.Lq, a.Lk, hidden, a.keyword_inputs);
  // a [B, H, L, d] operand folds into bmm as a view; repeat_kv (grouped-query heads) and any other layout copy
  const bool k_view = (layout.qk_heads_first || layout.kv_heads_first) && a.KVH == a.H, v_view = layout.kv_heads_first && a.KVH == a.H;
  value qb = layout.qk_heads_first ? (s.retain(q.id), q) : copy(s, q, q.s);
  value kb = k_view ? (s.retain(k.id), k) : copy(s, k, make_shape(a.Lk, a.inner));
  value vb = v_view ? (s.retain(v.id), v) : copy(s, v, make_shape(a.Lk, a.inner));
  s.release(q), s.release(k), s.release(v);
  value w = bmm(s, qb, kb, make_shape(a.H * a.Lq, a.Lk), a.mt, {a.Lq, a.Lk, a.d, false, true});
  s.release(qb), s.release(kb);
  const auto then = [&s](value x, keeps kept) {
    value y = kept == keeps::output ? keep_output_activation(s, x) : pointwise(s, x, x.s, x.type, kept);
    s.release(x);
    return y;
  };
  w = then(w, keeps::nothing);  // * scaling
  if (softcap) w = then(then(then(w, keeps::nothing), keeps::output), keeps::nothing);  // / cap, tanh, * cap
  w = then(w, keeps::nothing);  // + mask
  s.release(mask);
  const bool fused_upcast = !s.on_cpu() && w.type == dtype::fp16;  // at::softmax's half_to_float
  value p = fused_upcast ? s.make(w.s, dtype::fp32, w.requires_grad) : value{};
  if (fused_upcast) {
    const auto n = s.record(p);
    s.save(n, p);
    s.grad_to(n, w);
  } else {
    value w32 = cast_to(s, w, dtype::fp32);
    p = keep_output_activation(s, w32);
    s.release(w32);
  }
  s.release(w);
  value p16 = cast_to(s, p, a.mt);
  s.release(p);
  value pd = attention_probs_dropout(s, p16, dropout);
  s.release(p16);
  value o = bmm(s, pd, vb, make_shape(a.Lq, a.inner), a.mt, {a.Lq, a.d, a.Lk});
  s.release(pd), s.release(vb);
  return o;
}

/// windowed_sdpa, then the output Linear (part 2).
constexpr value sdpa_then_output(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& q, const value& k,
                                 const value& v, bool causal, bool heads_first_q = false, bool k_cast = false) {
  const auto [o, kind] = windowed_sdpa(c.s, a, q, k, v, causal, op.dropout, k_cast);
  if (kind == sdpa_kernel::math) return output_projection(c, o, a.D, op.bias, 2);
  return flash_output_projection(c, o, a.D, op.bias, 2, kind, false, heads_first_q);
}

/// A rotary attention's scores (`how`: SDPA through windowed_sdpa, or eager_attention), then the
/// output Linear (part 2) after the transpose's copy where there is one.
constexpr value rotary_scores_then_output(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& q, const value& k,
                                          const value& v, bool heads_first, dtype hidden, bool kv_cached) {
  const auto how = scores_of(op);
  if (how == scores_impl::sdpa) return sdpa_then_output(c, op, a, q, k, v, true, heads_first, promoted_type(a.mt, hidden) != a.mt);
  const eager_layout layout{heads_first, kv_cached};
  return output_projection(c, eager_attention(c.s, a, q, k, v, hidden, how == scores_impl::eager_softcap, layout, op.dropout), a.D, op.bias, 2);
}

/// Does `op`'s layer run k and v through a DynamicCache here (training_kv_cache)? Not in a
/// checkpointed block or its re-run: gradient checkpointing sets use_cache=False.
constexpr bool caches_kv(const sim& s, bool training_cache) { return training_cache && s.dropping_saves_for < 0 && s.replay_cursor < 0; }

/// k or v after transformers >= 5's DynamicCache.update (caches_kv): torch.cat([empty, x], dim=-2),
/// a new [B, kv, T, d] tensor that keeps nothing, laid out heads first, held by the cache — the
/// model output's past_key_values — until the output is dropped (sim::hold_with_output). A kernel
/// then keeps the copy, not the packed projection v was a view of (Phi-3's qkv_proj: hf_phi3_b2_t64
/// of pytorch-2.6-cpu-transformers.json); an eval forward holds every layer's pair (op_rules.md L27).
/// Consumes `x`.
constexpr value dynamic_cache_copy(sim& s, const value& x) {
  value c = copy(s, x, x.s);
  s.release(x);
  s.hold_with_output(c.id);
  return c;
}

/// GPT-2's k and v, views of the packed c_attn output `kv` (consumed), each copied by transformers >= 5's
/// DynamicLayer.update (dynamic_cache_copy): a fused kernel keeps the copies, not c_attn's output
/// (op_rules.md L34; hf_gpt2_no_attention_dropout_b2_t64 of pytorch-2.6-cpu-transformers.json).
constexpr std::array<value, 2> cached_k_and_v(sim& s, const attention_dims& a, const value& kv) {
  const auto shape = make_shape(a.Lk, a.KVH * a.d);
  std::array<value, 2> out{dynamic_cache_copy(s, s.view(kv, shape)), dynamic_cache_copy(s, s.view(kv, shape))};
  s.release(kv);
  return out;
}

/// transformers' LlamaAttention: q, k, v projections; RoPE on q and k; a flash kernel with
/// native grouped-query support (flash-attn 2, or SDPA with enable_gqa) keeps q, k, v at their
/// own head counts, the output and a per-row fp32 log-sum-exp (2.6 CPU: the math path).
constexpr value rotary_attention(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x, const value& kv_src) {
  auto& s = c.s;
  const bool in_bias = qkv_have_bias(op);
  value q{}, k{}, v{};
  if (op.names == projection_names::phi3) {  // one packed qkv_proj: qkv[..., :q], [q:q + kv], [q + kv:]: views, each keeping the whole projection
    if (a.Lq != a.Lk) invalid_layer_argument();  // a packed projection reads one input
    value packed = projection(c, x, a.inner + 2 * a.KVH * a.d, in_bias, 0);
    q = s.view(packed, make_shape(a.Lq, a.inner)), k = s.view(packed, make_shape(a.Lk, a.KVH * a.d)), v = s.view(packed, make_shape(a.Lk, a.KVH * a.d));
    s.release(packed);
  } else {
    q = projection(c, x, a.inner, in_bias, 0), k = projection(c, kv_src, a.KVH * a.d, in_bias, 1), v = projection(c, kv_src, a.KVH * a.d, in_bias, 3);
  }
  head_rms_norms(c, q, k, a.d, 4, base_weights::same, false, qk_norm_of(op));  // q_norm (part 4), k_norm (5)
  const auto r = rotary_qk(s, q, k, a.d, a.rotary, x.type, a.mt, {a.local_rope, op.names == projection_names::phi3, has_per_sample_rope_tables(op), a.keyword_inputs, has_fp32_rope_tables(op)});
  s.release(q);
  s.release(k);
  const bool cached = caches_kv(s, has_training_cache(op));
  const value kc = cached ? dynamic_cache_copy(s, r.k) : r.k, vc = cached ? dynamic_cache_copy(s, v) : v;
  // transformers >= 4.48 passes enable_gqa=True, is_causal=True (SDPA)
  return rotary_scores_then_output(c, op, a, r.q, kc, vc, r.heads_first, x.type, cached);
}

/// Fused q and kv projections + scaled_dot_product_attention's flash kernel (2.6 CPU with
/// dropout or grouped-query heads: the math path).
constexpr value flash_attention(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x, const value& kv_src) {
  auto& s = c.s;
  const bool in_bias = qkv_have_bias(op);
  // fused_qkv (timm's Attention: one Linear(D, 3D) whose q, k, v are views): one projection, one
  // autocast copy of its input; else q and the packed k, v (q_and_kv)
  const bool fused = op.names == projection_names::phi3;
  if (fused && a.Lq != a.Lk) invalid_layer_argument();  // a packed projection reads one input
  value packed = fused ? projection(c, x, a.inner + 2 * a.KVH * a.d, in_bias, 0) : value{};
  const auto [q, kv] = fused ? std::array<value, 2>{s.view(packed, make_shape(a.Lq, a.inner)), s.view(packed, make_shape(a.Lk, 2 * a.KVH * a.d))}
                             : q_and_kv(c, op, a, x, kv_src, in_bias);
  if (fused) s.release(packed);
  if (caches_kv(s, has_training_cache(op))) {  // GPT-2's k and v through transformers >= 5's DynamicCache
    const auto [k, v] = cached_k_and_v(s, a, kv);
    return sdpa_then_output(c, op, a, q, k, v, true);
  }
  value mask = transformers_sdpa_mask(s, a);  // a padded batch's (GPT-2: op_rules.md L34); none otherwise
  const auto kind = sdpa_kernel_for(s, a.mt, a.H, a.KVH, a.d, op.dropout, mask.id >= 0);
  const value qkv[] = {q, kv};  // k and v: views of one projection
  const auto out = sdpa_call(s, a, qkv, mask, kind, masks_of(op) != 0 || mask.id >= 0, op.dropout);
  return flash_output_projection(c, out.o, a.D, op.bias, 2, kind);
}

/// nn.MultiheadAttention(batch_first=True) returns `attn_output.transpose(1, 0)`: the [L, B, D]
/// out_proj output seen as [B, L, D], not contiguous (op_rules.md CT10). Its gradient comes back
/// laid out [B, L, D], and `attn_output.view(tgt_len, bsz, E)`'s backward reshapes it to out_proj's
/// [L·B, E]: a copy, alive while out_proj's backward runs (ViewBackward0's clone right before
/// AddmmBackward0 in every block of the H100 trace vit_b_16_b2; 2.6 CPU masked_mha_none_b4_t64).
/// Sequence first (batch_first=False) it returns the [L, B, D] output as it is: its gradient comes
/// back laid out so, and the view's backward is a view (op_rules.md 2.6 #79).
constexpr value batch_first_view(sim& s, value out, const attention_op& op) {
  if (is_sequence_first(op)) return out;
  s.backward_temp(s.record_of(out), s.bytes_of_value(out));
  out.strided = true;
  return out;
}

/// in_proj's input as F.multi_head_attention_forward's linear reads it: batch_first=True's
/// transposed view of `x`, which matmul's reshape copies (the copy saved for the weight gradient;
/// released by the caller), or sequence first `x` itself (linear folds [L, B, D] as a view).
constexpr value in_proj_input(sim& s, const attention_op& op, const value& x) {
  if (!is_sequence_first(op)) return copy(s, x, x.s);
  s.retain(x.id);
  return x;
}

/// nn.MultiheadAttention's materialized path from q, k, v on (consumed): q scaled (a new
/// tensor; `scalar_saved`: what its MulBackward keeps of the scalar), bmm(q, kᵀ) keeps both,
/// softmax keeps its output, the dropout, bmm(·, v) keeps the probabilities and v,
/// transpose(0, 1).contiguous() copies the output for out_proj, which keeps the copy. With
/// need_weights=True (torch_mha_weights) it then returns the weights averaged over the heads,
/// [B, Lq, Lk] fp32, which the caller drops: a transient (op_rules.md 2.6 #44).
constexpr value torch_mha_materialized(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& q, const value& k,
                                       const value& v, std::int64_t scalar_saved) {
  auto& s = c.s;
  value qs = pointwise(s, q, q.s, q.type, keeps::nothing, scalar_saved);
  s.release(q);
  value scores = bmm(s, qs, k, make_shape(a.H * a.Lq, a.Lk), a.mt, {a.Lq, a.Lk, a.d, false, true});
  s.release(qs), s.release(k);
  value p16 = softmax_for_matmul(s, scores, a.mt);
  s.release(scores);
  value pd = attention_probs_dropout(s, p16, op.dropout);
  s.release(p16);
  value o = bmm(s, pd, v, make_shape(a.Lq, a.D), a.mt, {a.Lq, a.d, a.Lk});
  s.release(pd), s.release(v);
  value y = output_projection(c, o, a.D, op.bias, 1);
  if (op.impl == attention_impl::torch_mha_weights) s.transient(s.bytes_of_value(make_shape(a.Lq, a.Lk), dtype::fp32));  // attn_output_weights.mean(dim=1)
  return batch_first_view(s, y, op);
}

/// The masks nn.MultiheadAttention is called with, as F.multi_head_attention_forward builds them
/// before the product (op_rules.md 2.6 #76, traced op by op on 2.6 CPU: tests/export
/// masked_encoder_*). Model-wide, one per forward: the float [L, L] causal mask the model made
/// (generate_square_subsequent_mask), and on 2.x nn.TransformerEncoder's float copy of the bool
/// [B, L] padding mask (_canonical_mask), made once in the encoder input's dtype and kept in that
/// dtype for every layer (under CUDA autocast: bf16 from a Linear embedding, though LayerNorm hands
/// later layers fp32; op_rules.md 2.6 #81). Per call: the padding mask expanded to the heads,
/// view/expand/reshape: a [B·H, 1, L] copy (bool on 1.13); with both masks their sum, a float
/// [B·H, L, L] (1.13: masked_fill); 1.13 turns a bool padding mask alone into a float copy. A
/// square mask (a float [L, L] given without is_causal) is the model's, as the causal one, and goes
/// to SDPA as it is (a fused kernel keeps it: no new bytes), or merged with a padding mask. All
/// live until the call returns; the causal mask alone goes to 2.x's SDPA as is_causal. With
/// need_weights=True (torch_mha_weights) baddbmm(mask, q, kᵀ) reads them and keeps none.
struct mha_masks {
  value model, padding, per_head, merged;
  bool is_causal = false, square = false;
  /// The float mask the product adds (SDPA's attn_mask, 1.13's baddbmm input): the merged or the
  /// padding mask, a square mask as it is; none: no mask, or the causal one alone (is_causal).
  constexpr value attn_mask() const { return merged.id >= 0 ? merged : per_head.id >= 0 ? per_head : square ? model : value{}; }
};
constexpr mha_masks mha_masks_for(sim& s, std::int64_t masks, const attention_dims& a, dtype x_type) {
  mha_masks m{};
  const bool causal = (masks & 2) != 0, padded = (masks & 4) != 0, square = (masks & 8) != 0;
  if (causal || square) m.model = s.shared_input(a.Lq, a.Lk, dtype::fp32, 2, false);
  m.is_causal = causal && !padded && s.torch2(), m.square = square;
  if (!padded) return m;
  if (s.torch2()) m.padding = s.shared_input(1, a.Lk, x_type, 3, true, true);
  const dtype padding_type = s.torch2() ? m.padding.type : x_type;
  m.per_head = s.make(make_shape(a.H, a.Lk), s.torch2() ? padding_type : dtype::boolean, false);
  if (causal || square) m.merged = s.make(make_shape(a.H * a.Lq, a.Lk), promoted_type(dtype::fp32, padding_type), false);
  else if (!s.torch2()) m.merged = s.make(make_shape(a.H, a.Lk), x_type, false);
  return m;
}
constexpr void release_masks(sim& s, const mha_masks& m) { s.release(m.model), s.release(m.padding), s.release(m.per_head), s.release(m.merged); }

/// PyTorch 2.x's SDPA call inside nn.MultiheadAttention on its q, k, v (consumed), then
/// out_proj: the backend sdpa_kernel_for picks, with the attn_mask cast to the kernel's type under
/// autocast (scaled_dot_product_attention is on its lower-precision list: a new copy); a fused
/// kernel keeps the mask, the math path adds it (or the causal mask) as a new score tensor.
/// `q_base` holds q, `kv_base` k and v (self-attention: one packed copy, the same value; both consumed).
constexpr value torch_mha_sdpa(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& q_base, const value& kv_base,
                               const mha_masks& m) {
  auto& s = c.s;
  const bool packed = q_base.id == kv_base.id;
  const value sdpa_mask = m.attn_mask();
  value mask = sdpa_mask.id >= 0 ? cast_to(s, sdpa_mask, a.mt) : value{};
  const auto kind = sdpa_kernel_for(s, a.mt, a.H, a.H, a.d, op.dropout, mask.id >= 0);
  value y{};
  if (kind == sdpa_kernel::math) {
    value q = s.view(q_base, make_shape(a.Lq, a.D)), k = s.view(kv_base, make_shape(a.Lk, a.D)), v = s.view(kv_base, make_shape(a.Lk, a.D));
    s.release(q_base);
    if (!packed) s.release(kv_base);
    value o = sdpa_math(s, q, k, v, a.H, m.is_causal || mask.id >= 0, op.dropout, a.mt, true);
    s.release(q), s.release(k), s.release(v), s.release(mask);
    y = output_projection(c, o, a.D, op.bias, 1);
  } else {
    const value self_inputs[] = {q_base}, cross_inputs[] = {q_base, kv_base};
    value o = packed ? flash_kernel(s, self_inputs, make_shape(a.Lq, a.D), a.mt, a.H, kind, mask)
                     : flash_kernel(s, cross_inputs, make_shape(a.Lq, a.D), a.mt, a.H, kind, mask);
    s.release(mask);
    y = flash_output_projection(c, o, a.D, op.bias, 1, kind, true);
  }
  return batch_first_view(s, y, op);
}

/// nn.MultiheadAttention(batch_first=True) across two tensors, PyTorch 2.x (nn.TransformerDecoderLayer's
/// multihead_attn: the query x, key and value the memory; need_weights=False): _in_projection_packed
/// splits in_proj_weight into w_q [D, D] and w_kv [2D, D]; each input is the transposed batch-first
/// view, so matmul's reshape copies it (the copy kept for the weight gradient); q = linear(x, w_q),
/// kv = linear(memory, w_kv) (part 2: a gradient of its own, SplitWithSizesBackward's to join),
/// kv.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous() copies kv, k and v
/// views of the copy; then SDPA and out_proj as self-attention's (traced on 2.6 CPU:
/// `trace_peak.py decoder_stack_nodrop_b2_t32_m48` ops 40-80; op_rules.md 2.6 #78). The memory's
/// key_padding_mask (memory_key_padding_mask) as self-attention's padding mask over Lk: its
/// [B·H, 1, Lk] copy, which a fused kernel keeps (op_rules.md 2.6 #80).
constexpr value torch_mha_cross(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x, const value& memory) {
  auto& s = c.s;
  if (!s.torch2() || op.impl != attention_impl::torch_mha || c.adapters != 0) torch_mha_cross_attention_needs_sdpa();
  value xf = in_proj_input(s, op, x);
  value q = projection(c, xf, a.D, op.bias, 0);
  s.release(xf);
  value mf = in_proj_input(s, op, memory);
  value kv = projection(c, mf, 2 * a.D, op.bias, 2);
  s.release(mf);
  value kv_packed = copy(s, kv, kv.s);
  s.release(kv);
  const auto masks = mha_masks_for(s, masks_of(op), a, x.type);  // the memory's key padding mask: [B·H, 1, Lk]
  value y = torch_mha_sdpa(c, op, a, q, kv_packed, masks);
  release_masks(s, masks);
  return y;
}

/// torch.nn.MultiheadAttention's training path. PyTorch 2.x (op_rules.md 2.6 #7, self-attention;
/// torch/nn/functional.py multi_head_attention_forward calls scaled_dot_product_attention with
/// dropout_p when need_weights=False, on any device): the in_proj input copy (in_proj_input; none
/// sequence first), the packed qkv
/// projection (q, k, v are views of it), its masks (mha_masks_for), then SDPA (torch_mha_sdpa): a
/// fused kernel (log-sum-exp fp32; no probabilities, with dropout too), or the math path (the 2.6
/// CPU with dropout: probabilities, the dropout mask, the dropped probabilities; nn.TransformerEncoderLayer's
/// self_attn, tests/export `encoder_stack_*`), then out_proj (flash_output_projection: the CPU
/// kernel's output needs no copy).
/// PyTorch 1.13 (F.multi_head_attention_forward, batch_first): in_proj on the transposed input
/// (matmul folds it with reshape, which copies; sequence first: no copy); q, k, v = proj.chunk(3): views, each made contiguous
/// (copies); the masks; q / sqrt(d); bmm (baddbmm with a mask: the same tensors); softmax; bmm; out_proj.
constexpr value torch_mha_forward(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x) {
  auto& s = c.s;
  value xf = in_proj_input(s, op, x);
  value proj = projection(c, xf, 3 * a.D, op.bias, 0);
  s.release(xf);
  if (s.torch2() && a.Lq == a.Lk) {
    // _in_projection_packed: proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2)
    // .contiguous() copies the projection, and q, k, v are views of the copy (op_rules.md CT9)
    value packed = copy(s, proj, proj.s);
    s.release(proj);
    const auto masks = mha_masks_for(s, masks_of(op), a, x.type);
    value y{};
    if (op.impl == attention_impl::torch_mha_weights) {  // need_weights=True: the materialized path on views of the packed copy
      value q = s.view(packed, make_shape(a.Lq, a.D)), k = s.view(packed, make_shape(a.Lk, a.D)), v = s.view(packed, make_shape(a.Lk, a.D));
      s.release(packed);
      y = torch_mha_materialized(c, op, a, q, k, v, scalar_operand_saved(s));  // baddbmm(mask, q, kᵀ): bmm's tensors
    } else {
      y = torch_mha_sdpa(c, op, a, packed, packed, masks);
    }
    release_masks(s, masks);
    return y;
  }
  value qv = s.view(proj, make_shape(a.Lq, a.D)), kv = s.view(proj, make_shape(a.Lk, a.D)), vv = s.view(proj, make_shape(a.Lk, a.D));
  s.release(proj);
  value qc = copy(s, qv, qv.s), kc = copy(s, kv, kv.s), vc = copy(s, vv, vv.s);
  s.release(qv), s.release(kv), s.release(vv);
  const auto masks = mha_masks_for(s, masks_of(op), a, x.type);
  value y = torch_mha_materialized(c, op, a, qc, kc, vc, 0);  // q / sqrt(d) keeps nothing in 1.13's measurements
  release_masks(s, masks);
  return y;
}

/// The peak of PEFT's lora.MultiheadAttention.unmerge() over the weights (peft/tuners/lora/layer.py),
/// W_in and W_out the in_proj and out_proj weights' bytes; `in_saved`: the in_proj product kept its
/// merged weight (its input needs a gradient; the out_proj product always does). In order: B @ A
/// and its scaled copy (2·W_in); the new weight beside that delta (2·W_in); the merged weight
/// let go (kept if saved); out_proj's B @ A and scaled copy while the in_proj delta is still
/// bound ((1 + in_saved)·W_in + 2·W_out); its new weight, then lora.Linear.unmerge()'s own delta
/// and scaled copy beside the new and merged out_proj weights (in_saved·W_in + 4·W_out).
constexpr std::int64_t unmerge_peak(std::int64_t w_in, std::int64_t w_out, bool in_saved) {
  const std::int64_t kept_in = in_saved ? w_in : 0;
  const auto in_delta = 2 * w_in, out_delta = w_in + kept_in + 2 * w_out, out_unmerge = kept_in + 4 * w_out;
  return in_delta > out_delta ? (in_delta > out_unmerge ? in_delta : out_unmerge) : (out_delta > out_unmerge ? out_delta : out_unmerge);
}

/// nn.MultiheadAttention (torch_mha_forward); under PEFT's lora.MultiheadAttention (adapters:
/// adapt_merged) between its merge() and unmerge(). The real merged weights take the deleted
/// ones' place until unmerge() registers new ones; the walk counts each saved merged weight from
/// its product on (merged_projection). merge() computes B @ A and its scaled copy [3D, D] before
/// the in_proj weight is deleted: +2·W_in over the weights, the walk counting nothing yet;
/// unmerge(): unmerge_peak over the weights, less the merged weights the walk holds.
constexpr value torch_mha_attention(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x, const value& kv_src) {
  if (kv_src.id != x.id) return torch_mha_cross(c, op, a, x, kv_src);
  if (c.adapters == 0) return torch_mha_forward(c, op, a, x);
  const auto w_out = bytes_of(checked_mul(a.D, a.D), c.param_type()), w_in = 3 * w_out;
  c.s.transient(2 * w_in, true);
  value y = torch_mha_forward(c, op, a, x);
  c.s.transient(unmerge_peak(w_in, w_out, x.requires_grad) - (x.requires_grad ? w_in : 0) - w_out, true);
  return y;
}

/// T5Attention's softmax(scores.float(), dim=-1).type_as(scores): fp32 whatever autocast does
/// with a softmax (the fp32 output kept), then the scores' type again (the copy @ v keeps).
constexpr value softmax_of_float(sim& s, const value& scores) {
  value f = cast_to(s, scores, dtype::fp32);
  value p = keep_output_activation(s, f);
  s.release(f);
  value back = cast_to(s, p, scores.type);
  s.release(p);
  return back;
}

/// q = Linear(D, D), kv = Linear(D, 2D) split (t5: k and v Linears, softmax_of_float); scores = q @ kᵀ / √d
/// materialized; softmax; dropout on the probabilities (GPT-2's attn_pdrop, BERT's
/// attention_probs_dropout_prob); @ v; output Linear.
constexpr value materialized_attention(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x, const value& kv_src) {
  auto& s = c.s;
  const bool in_bias = qkv_have_bias(op);
  const bool t5 = op.impl == attention_impl::t5;  // softmax(scores.float())
  const bool separate = t5 || op.impl == attention_impl::separate_qkv;  // k and v Linears of their own
  const auto [q, k] = separate ? std::array<value, 2>{projection(c, x, a.inner, in_bias, 0), projection(c, kv_src, a.KVH * a.d, in_bias, 1)}
                                : q_and_kv(c, op, a, x, kv_src, in_bias);
  value v = separate ? projection(c, kv_src, a.KVH * a.d, in_bias, 3) : k;  // else both views of one kv
  if (!separate) s.retain(v.id);
  // q @ k.transpose(-2, -1): both transposed views are reshaped for bmm, i.e. copied
  value qc = copy(s, q, q.s);
  value kc = copy(s, k, make_shape(a.Lk, a.KVH * a.d));
  value scores = bmm(s, qc, kc, make_shape(a.H * a.Lq, a.Lk), a.mt, {a.Lq, a.Lk, a.d});  // kᵀ copied: contiguous
  s.release(qc), s.release(kc);
  value scaled = pointwise(s, scores, scores.s, scores.type, keeps::nothing);  // / sqrt(d)
  s.release(scores);
  value p16 = t5 ? softmax_of_float(s, scaled) : softmax_for_matmul(s, scaled, a.mt);
  s.release(scaled);
  value pd = attention_probs_dropout(s, p16, op.dropout);
  s.release(p16);
  value vc = copy(s, v, make_shape(a.Lk, a.KVH * a.d));
  value o = bmm(s, pd, vc, make_shape(a.Lq, a.inner), a.mt, {a.Lq, a.d, a.Lk});
  s.release(pd), s.release(vc);
  value result = output_projection(c, o, a.D, op.bias, 2);
  s.release(q), s.release(k), s.release(v);  // the function's locals q, k, v die when it returns
  return result;
}

/// transformers 5's sdpa_attention_forward (integrations/sdpa_attention.py) under BertSelfAttention:
/// query, key and value Linears, each viewed [B, H, L, d]; scaled_dot_product_attention(q, k, v,
/// dropout_p) through the backend sdp_utils picks (the fused ones keep no probabilities, dropout
/// included: op_rules.md CT4); transpose(1, 2).contiguous() of an output laid out like q is no copy
/// (CT2); the output Linear. PyTorch 1.13 has no SDPA: the materialized path.
constexpr value separate_sdpa_attention(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x, const value& kv_src) {
  auto& s = c.s;
  if (!s.torch2()) return materialized_attention(c, op, a, x, kv_src);
  const bool in_bias = qkv_have_bias(op);
  value q = projection(c, x, a.inner, in_bias, 0);
  value k = projection(c, kv_src, a.KVH * a.d, in_bias, 1);
  value v = projection(c, kv_src, a.KVH * a.d, in_bias, 3);
  return sdpa_then_output(c, op, a, q, k, v, masks_of(op) != 0 || a.padded);
}

/// The tensors transformers' T5 stacks share among their layers (sim::shared_input's `which`): the
/// encoder's and the decoder's position bias, the cross-attention's zeros.
inline constexpr std::int64_t t5_encoder_bias = 10, t5_decoder_bias = 11, t5_cross_zeros = 12;

/// The attn_mask T5's sdpa_attention_forward hands SDPA (transformers' integrations/sdpa_attention.py,
/// create_position_bias_mask; modeling_t5.py T5Stack), each [1, H, Lq, Lk], batch-independent:
/// - self-attention: the stack's position bias (compute_bias: relative_attention_bias's embedding
///   output [Lq, Lk, H] permuted, in the table's type `bias_type`), made by the first layer and passed
///   to every other, alive to the forward's end (a shared input);
/// - the decoder's (`causal`) per call where(arange(Lq)[:, None] >= arange(Lk)[None, :], bias, min):
///   a bool [Lq, Lk] (which WhereBackward0 keeps while the bias trains) and a new [1, H, Lq, Lk] in the
///   bias's type, alive while SDPA runs;
/// - cross-attention: torch.zeros in q's type, made by the first decoder layer, shared likewise;
/// - under autocast scaled_dot_product_attention casts a mask in another type to q's (a new copy).
/// Returns {the mask SDPA reads, the call's own tensor to release after it ({} if none)}.
constexpr std::array<value, 2> t5_sdpa_mask(sim& s, const attention_dims& a, bool cross, bool causal, dtype bias_type, bool bias_trains) {
  const auto rows = checked_mul(a.H, a.Lq);  // [1, H, Lq, Lk] as [H·Lq, Lk]
  const auto batch_free = [&](dtype t, bool rg) { return s.make_batch_free(bytes_of(checked_mul(rows, a.Lk), t), make_shape(rows, a.Lk), t, rg); };
  if (cross) return {s.shared_input(rows, a.Lk, a.mt, t5_cross_zeros, false), {}};
  value source = s.shared_input(rows, a.Lk, bias_type, causal ? t5_decoder_bias : t5_encoder_bias, false);
  if (causal) {  // WhereBackward0 keeps the bool condition while the bias trains
    const value tril = s.make_batch_free(bytes_of(checked_mul(a.Lq, a.Lk), dtype::boolean), make_shape(a.Lq, a.Lk), dtype::boolean, false);
    value masked = batch_free(bias_type, bias_trains);
    s.save(s.record(masked), tril);
    s.release(tril), s.release(source);
    source = masked;
  }
  if (source.type == a.mt) return {source, {}};
  return {batch_free(a.mt, false), source};
}

/// transformers' T5Attention with attn_implementation "sdpa" (attention_impl::t5_sdpa; PR #47014):
/// the q, k and v Linears; in the decoder (training_kv_cache) k and v through the
/// EncoderDecoderCache (dynamic_cache_copy: copies the output's past_key_values holds);
/// scaled_dot_product_attention(q, k, v, attn_mask = t5_sdpa_mask, dropout_p, scale = 1). The
/// self-attention's mask is the bias's permuted view, its last dimension of stride H, which CUDA's
/// fused kernels refuse (sdp_utils_cpp.h check_last_dim_stride_equals_1_dense: "GPU backends require
/// attn_mask's last dimension to have stride 1 while the CPU does not"): the math path, which adds
/// the mask in place (attn.add_), keeps no mask. The cross-attention's contiguous zeros go to the
/// kernel sdp_utils picks (cuDNN for 16-bit inputs on an H100), which keeps the mask. Then
/// transpose(1, 2).contiguous() and the output Linear. Read off the H200 trace
/// cuda-h200/hf_t5_small_b16_t512_bf16.json.gz (transformers 5.17, op_rules.md L37).
constexpr value t5_sdpa_attention(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x, const value& kv_src) {
  auto& s = c.s;
  if (!s.torch2()) {  // PyTorch 1.13 has no SDPA (nor does transformers 5 run on it): T5's eager attention
    attention_op eager = op;
    eager.impl = attention_impl::t5;
    return materialized_attention(c, eager, a, x, kv_src);
  }
  const bool cross = kv_src.id != x.id;
  value q = projection(c, x, a.inner, false, 0);
  value k = projection(c, kv_src, a.KVH * a.d, false, 1);
  value v = projection(c, kv_src, a.KVH * a.d, false, 3);
  if (caches_kv(s, has_training_cache(op))) k = dynamic_cache_copy(s, k), v = dynamic_cache_copy(s, v);
  const auto [mask, held] = t5_sdpa_mask(s, a, cross, masks_of(op) == 2, c.param_type(), c.trainable);
  // the self-attentions' mask is the bias's permuted view; cross-attention's zeros are contiguous
  const auto kind = sdpa_kernel_for(s, a.mt, a.H, a.KVH, a.d, op.dropout, true, !cross);
  const value qkv[] = {q, k, v};
  const auto out = sdpa_call(s, a, qkv, mask, kind, false, op.dropout);  // the mask added in place (attn.add_)
  s.release(held);
  return flash_output_projection(c, out.o, a.D, op.bias, 2, kind);
}

/// The heads per_head_attention holds at once before it concatenates them.
inline constexpr std::int64_t max_separate_heads = 64;

/// Karpathy's per-head attention (attention_impl::per_head) on `x` ([L, D]): for each head in
/// turn, k = key(x), q = query(x) ([L, d], contiguous: the products copy nothing), wei = q @ kᵀ
/// · d^-0.5 (a new tensor), masked_fill(tril[:L, :L] == 0, -inf) (a new tensor; MaskedFillBackward
/// keeps the bool [L, L] mask, one per head, batch-independent), softmax (kept), dropout, v =
/// value(x), wei @ v; torch.cat of the heads' [L, d] outputs (a new [L, D]; their gradients are
/// views of its gradient); the output Linear keeps the cat.
constexpr value per_head_attention(layer_ctx& c, const attention_op& op, const attention_dims& a, const value& x) {
  auto& s = c.s;
  if (a.H > max_separate_heads || a.Lq != a.Lk) invalid_layer_argument();
  const bool in_bias = qkv_have_bias(op);
  std::array<value, max_separate_heads> heads{};
  for (std::int64_t h = 0; h < a.H; ++h) {
    // each head's key, query and value are weights of their own: keys from 3 + 3·h on (the output 2)
    const auto first = static_cast<std::int32_t>(3 + 3 * h);
    layer_ctx hc = c.sub(first);
    value k = linear_op(hc, x, a.d, in_bias, 0), q = linear_op(hc, x, a.d, in_bias, 1);
    value scores = bmm(s, q, k, make_shape(a.Lq, a.Lk), a.mt, {a.Lq, a.Lk, a.d, false, true});  // q @ k.transpose(-2, -1)
    s.release(q), s.release(k);
    value scaled = pointwise(s, scores, scores.s, scores.type, keeps::nothing);
    s.release(scores);
    value masked = pointwise(s, scaled, scaled.s, scaled.type, keeps::nothing);
    s.save_new(s.record_of(masked), checked_mul(a.Lq, a.Lk), 1, true);  // the bool mask
    s.release(scaled);
    value p16 = softmax_for_matmul(s, masked, a.mt);
    s.release(masked);
    value pd = attention_probs_dropout(s, p16, op.dropout);
    s.release(p16);
    value v = linear_op(hc, x, a.d, in_bias, 2);
    heads[static_cast<std::size_t>(h)] = bmm(s, pd, v, make_shape(a.Lq, a.d), a.mt, {a.Lq, a.d, a.Lk});
    s.release(pd), s.release(v);
    c.absorb(hc, first);
  }
  value cat = s.make(make_shape(a.Lq, a.inner), heads[0].type, x.requires_grad || heads[0].requires_grad);
  const auto n = s.record(cat);
  for (std::int64_t h = 0; h < a.H; ++h) s.grad_to(n, heads[static_cast<std::size_t>(h)], true), s.release(heads[static_cast<std::size_t>(h)]);
  value y = projection(c, cat, a.D, op.bias, 2);
  s.release(cat);
  return y;
}

/// Attention of queries `x` ([Lq, D]) over keys/values computed from `kv_src` ([Lk, D]; the
/// same value as `x` for self-attention), with the settings of `op`. Each implementation replays
/// the op sequence of its PyTorch source.
constexpr value multi_head_attention(layer_ctx& c, const attention_op& op, const value& x, const value& kv_src) {
  const auto a = check_attention(c, op, x, kv_src);
  if (op.impl == attention_impl::flash) return is_rotary(op) ? rotary_attention(c, op, a, x, kv_src) : flash_attention(c, op, a, x, kv_src);
  if (is_torch_mha(op.impl)) return torch_mha_attention(c, op, a, x, kv_src);
  if (op.impl == attention_impl::separate_qkv_sdpa) return separate_sdpa_attention(c, op, a, x, kv_src);
  if (op.impl == attention_impl::t5_sdpa) return t5_sdpa_attention(c, op, a, x, kv_src);
  if (op.impl == attention_impl::per_head) return per_head_attention(c, op, a, x);
  return materialized_attention(c, op, a, x, kv_src);
}

}  // namespace detail

namespace detail {
// transformers' modeling_llama.py, modeling_gpt2.py, modeling_bert.py, modeling_t5.py, modeling_phi3.py;
// torch.nn.MultiheadAttention
inline constexpr named_part llama_projections[] = {{"q_proj", 1}, {"k_proj", 2}, {"v_proj", 8}, {"o_proj", 4}};
inline constexpr named_part qwen3_projections[] = {{"q_proj", 1}, {"k_proj", 2}, {"v_proj", 8}, {"o_proj", 4}, {"q_norm", 16}, {"k_norm", 32}};
inline constexpr named_part gpt2_projections[] = {{"c_attn", 1 | 2}, {"c_proj", 4}};
inline constexpr named_part bert_projections[] = {{"self.query", 1}, {"self.key", 2}, {"self.value", 8}, {"output.dense", 4}};
inline constexpr named_part torchvision_projections[] = {{"out_proj", 2}};
inline constexpr named_part t5_projections[] = {{"q", 1}, {"k", 2}, {"v", 8}, {"o", 4}};
inline constexpr named_part phi3_projections[] = {{"qkv_proj", 1 | 2 | 8}, {"o_proj", 4}};
inline constexpr named_part separate_projections[] = {{"q", 1}, {"k", 2}, {"v", 8}, {"out", 4}};

/// Does naming scheme `n` fit the implementation (the part indices its lowering gives)?
constexpr bool projection_names_fit(const attention_op& op) {
  switch (op.names) {
    case projection_names::none: return true;
    case projection_names::llama:
    case projection_names::phi3: return op.impl == attention_impl::flash;  // one packed q, k, v projection
    case projection_names::gpt2:
    case projection_names::gpt2_q_kv: return op.impl == attention_impl::split_qkv || (op.impl == attention_impl::flash && !is_rotary(op));
    case projection_names::bert:
    case projection_names::separate: return op.impl == attention_impl::separate_qkv || op.impl == attention_impl::separate_qkv_sdpa;
    case projection_names::torchvision: return is_torch_mha(op.impl);
    case projection_names::t5: return op.impl == attention_impl::t5 || op.impl == attention_impl::t5_sdpa;
  }
  return false;
}
}  // namespace detail

template <>
struct op_traits<attention_op> {
  static constexpr const char* name(const attention_op& op) { return op.adapters != 0 ? "attention (lora)" : "attention"; }
  /// The projections' module names (projection_names), which train_only selects one by one.
  static constexpr const char* part_name(const attention_op& op, std::int32_t k, std::uint8_t& parts) {
    switch (op.names) {
      case projection_names::llama:
        return detail::has_qk_norm(op) ? detail::nth_part(detail::qwen3_projections, k, parts) : detail::nth_part(detail::llama_projections, k, parts);
      case projection_names::gpt2:
      case projection_names::gpt2_q_kv: return detail::nth_part(detail::gpt2_projections, k, parts);
      case projection_names::bert: return detail::nth_part(detail::bert_projections, k, parts);
      case projection_names::torchvision: return detail::nth_part(detail::torchvision_projections, k, parts);
      case projection_names::t5: return detail::nth_part(detail::t5_projections, k, parts);
      case projection_names::phi3: return detail::nth_part(detail::phi3_projections, k, parts);
      case projection_names::separate: return detail::nth_part(detail::separate_projections, k, parts);
      case projection_names::none: break;
    }
    return nullptr;
  }
  static constexpr detail::value lower(detail::layer_ctx& c, const attention_op& op, const detail::value& x) {
    c.adapters = op.adapters;  // the projections' (projection)
    const auto Lk = op.kv_tokens > 0 ? op.kv_tokens : x.s[0];
    if (Lk == x.s[0]) return detail::multi_head_attention(c, op, x, x);
    // Cross-attention over Lk tokens that come from elsewhere: budget their [Lk, D] tensor as a
    // new activation derived from the input (its producer's own cost is not part of this layer).
    if (x.s.rank != 2) detail::shape_mismatch_between_layers();
    detail::value kv_src = c.s.make(make_shape(Lk, x.s[1]), x.type, x.requires_grad);
    auto n = c.s.record(kv_src);
    c.s.grad_to(n, x);
    detail::value y = detail::multi_head_attention(c, op, x, kv_src);
    c.s.release(kv_src);
    return y;
  }
  /// Projections (q, output; k and v at their head count), the score and value products.
  static constexpr std::int64_t flops(const attention_op& op, const shape& in, const shape&) {
    const auto D = op.width, H = op.heads > 0 ? op.heads : 1, Lq = in[0], Lk = op.kv_tokens > 0 ? op.kv_tokens : in[0];
    const auto hw = unpack_head_layout(op.head_width).width;
    const auto d = hw > 0 ? hw : D / H, inner = H * d;
    const auto kvw = 2 * (op.kv_heads > 0 ? op.kv_heads : H) * d;
    return 2 * Lq * D * inner * 2 + 2 * Lk * D * kvw + 2 * 2 * Lq * Lk * inner;
  }
};

namespace detail {
constexpr void apply_attention_option(attention_op& o, kv_tokens t) { o.kv_tokens = t.value; }
constexpr void apply_attention_option(attention_op& o, attention_impl i) { o.impl = i; }
constexpr void apply_attention_option(attention_op& o, kv_heads h) { o.kv_heads = h.value; }
constexpr void apply_attention_option(attention_op& o, no_bias_t) { o.bias = false; }
constexpr void apply_attention_option(attention_op& o, rotary_t) { add_positions(o, token_positions::rotary); }
constexpr void apply_attention_option(attention_op& o, causal_mask_t) { add_positions(o, token_positions::causal_mask); }
constexpr void apply_attention_option(attention_op& o, key_padding_mask_t) { add_positions(o, token_positions::key_padding_mask); }
constexpr void apply_attention_option(attention_op& o, square_mask_t) { add_positions(o, token_positions::square_mask); }
constexpr void apply_attention_option(attention_op& o, sequence_first_t) { add_positions(o, token_positions::sequence_first); }
constexpr void apply_attention_option(attention_op& o, qk_norm_t) { add_positions(o, token_positions::rotary_qk_norm); }
constexpr void apply_attention_option(attention_op& o, gemma_qk_norm_t) { add_positions(o, token_positions::rotary_gemma_qk_norm); }
constexpr void apply_attention_option(attention_op& o, olmo2_qk_norm_t) { add_positions(o, token_positions::rotary_olmo2_qk_norm); }
constexpr void apply_attention_option(attention_op& o, eager_scores_t) { add_positions(o, token_positions::rotary_eager); }
constexpr void apply_attention_option(attention_op& o, eager_softcapped_scores_t) { add_positions(o, token_positions::rotary_eager_softcap); }
constexpr void apply_attention_option(attention_op& o, training_kv_cache_t) { add_positions(o, token_positions::kv_training_cache); }
constexpr void apply_attention_option(attention_op& o, per_sample_rope_tables_t) { add_positions(o, token_positions::rotary_per_sample_tables); }
constexpr void apply_attention_option(attention_op& o, positional_layer_inputs_t) { add_positions(o, token_positions::rotary_positional_inputs); }
constexpr void apply_attention_option(attention_op& o, fp32_rope_tables_t) { add_positions(o, token_positions::rotary_fp32_tables); }
constexpr void apply_attention_option(attention_op& o, batch_attention_mask_t) { add_positions(o, token_positions::rotary_batch_attention_mask); }
constexpr void apply_attention_option(attention_op& o, padded_batch_t) { add_positions(o, token_positions::padded_batch_mask); }
/// One of the options above chosen at run time (token_positions::plain: none): a model's settings.
constexpr void apply_attention_option(attention_op& o, token_positions p) { add_positions(o, p); }
constexpr void apply_attention_option(attention_op& o, local_rope_t) {
  auto l = unpack_head_layout(o.head_width);
  l.local_rope = true;
  o.head_width = pack_head_layout(l);
}
constexpr void apply_attention_option(attention_op& o, head_dim h) {
  auto l = unpack_head_layout(o.head_width);
  l.width = h.value;
  o.head_width = pack_head_layout(l);
}
constexpr void apply_attention_option(attention_op& o, rotary_dims r) {
  auto l = unpack_head_layout(o.head_width);
  l.rotary = r.value;  // 0: every channel
  o.head_width = pack_head_layout(l);
}
constexpr void apply_attention_option(attention_op& o, attention_window w) {
  auto l = unpack_head_layout(o.head_width);
  l.window = w.value;  // 0: none
  o.head_width = pack_head_layout(l);
}
constexpr void apply_attention_option(attention_op& o, qkv_bias b) { o.qkv_bias = b.value ? qkv_bias_kind::with : qkv_bias_kind::without; }
/// fused_qkv: Phi-3's packed qkv_proj, i.e. its module names (an op field of its own would not fit
/// a record: detail::max_op_fields).
constexpr void apply_attention_option(attention_op& o, fused_qkv_t) { o.names = projection_names::phi3; }
constexpr void apply_attention_option(attention_op& o, projection_names n) { o.names = n; }
constexpr void apply_attention_option(attention_op& o, const attention_adapters& a) { o.adapters = pack_adapters(a); }
constexpr void apply_attention_option(attention_op& o, gpubudget::attention_dropout p) {
  if (p.percent < 0 || p.percent > 100) dropout_percent_out_of_range();
  o.dropout = p.percent;
}
}  // namespace detail

/// Multi-head attention over [tokens, width] with `heads` heads; options: kv_tokens(n) for
/// cross-attention over n key/value tokens, an attention_impl, kv_heads(n), no_bias, rotary
/// (flash only: RoPE on q and k, separate k and v projections; see rotary.hpp),
/// attention_dropout(percent) on the probabilities, head_dim(n) channels per head (default
/// width / heads), qkv_bias(true) (with no_bias: biases on q, k, v only, as Qwen2), qkv_bias(false)
/// (q, k, v without a bias, the output projection with one: timm's qkv_bias=False), fused_qkv
/// (flash: one packed q, k, v projection, as Phi-3 with rotary and timm's Attention without), a projection_names scheme (one that fits the attention_impl) naming the projections,
/// attention_adapters{...} (PEFT LoRA on the projections; not with rotary: lora_attention);
/// with rotary (each implies it, as qk_norm does): eager_scores / eager_softcapped_scores
/// (transformers' eager_attention_forward: the scores materialized and kept).
template <class... Opts>
constexpr layer attention(std::int64_t width, heads h, Opts... opts) {
  attention_op o{width, h.value, 0, attention_impl::split_qkv, 0, true, token_positions::plain, 0, 0, qkv_bias_kind::as_output, projection_names::none, 0};
  (detail::apply_attention_option(o, opts), ...);
  if (!detail::projection_names_fit(o)) detail::projection_names_do_not_fit_the_attention_impl();
  // nn.MultiheadAttention's one `bias` argument covers in_proj and out_proj alike
  if (is_torch_mha(o.impl) && o.qkv_bias != qkv_bias_kind::as_output && qkv_have_bias(o) != static_cast<bool>(o.bias))
    detail::qkv_bias_on_torch_mha();
  return as_layer(o);
}

}  // namespace gpubudget
