// tools/graph_source.hpp — a zoo entry from a JSON graph that tools/gpubudget-export wrote
// (--graph FILE; the format is docs/export.md's).
//
// The graph is read at run time into the library's own `layer` records, through its public
// factories (conv2d(...), sequential(), parallel(merge_kind::...)): a leaf is {"op": ..., its
// fields, "name"}, a composition {"block": sequential | residual | residual_inplace | parallel |
// repeat, "merge", "count", "first", "modules_per_copy", "parts", "name"}. The library's entry
// points take a `model<N>` of fixed size, so the records are padded into the smallest of a few
// capacities (256, 1024, 4096 records): records after the root's subtree are never walked. An unknown op, an unknown or missing field, a value out of
// range, or a malformed file is an error naming it and where it is (std::invalid_argument, the
// CLI's exit status 2).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "zoo_registry.hpp"

namespace gpubudget::tools {

/// A graph read from a file: its records (pre-order, the root first) and the names they point to.
struct graph_model {
  std::string name;                    ///< the file's "name" (or the file's path)
  std::int64_t stated_parameters = -1; ///< the file's "parameters" (sum(p.numel()) at export), -1 if absent
  std::string loss;                    ///< the file's "loss" (the model's own: cross_entropy, causal_lm), "" if absent
  std::vector<layer> records;
  std::deque<std::string> names;       ///< storage for records' names (a deque keeps their addresses)
};

namespace graph {

[[noreturn]] inline void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument("--graph: " + where + ": " + what);
}

/// One JSON object's fields, each taken once by name; a field nothing took is an error.
class fields {
 public:
  fields(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail(where_, "expected an object");
  }
  const std::string& where() const { return where_; }
  bool has(const char* key) const { return j_.contains(key); }
  const nlohmann::json& take(const char* key) {
    if (!j_.contains(key)) fail(where_, std::string("missing field \"") + key + "\"");
    taken_.insert(key);
    return j_.at(key);
  }
  std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) {
    const auto& v = take(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
      fail(where_, std::string("\"") + key + "\": " + v.dump() + " is not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return v.get<std::int64_t>();
  }
  std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi, std::int64_t fallback) {
    return has(key) ? integer(key, lo, hi) : fallback;
  }
  bool boolean(const char* key, bool fallback) {
    if (!has(key)) return fallback;
    const auto& v = take(key);
    if (!v.is_boolean()) fail(where_, std::string("\"") + key + "\": " + v.dump() + " is not true or false");
    return v.get<bool>();
  }
  std::string text(const char* key) {
    const auto& v = take(key);
    if (!v.is_string()) fail(where_, std::string("\"") + key + "\": " + v.dump() + " is not a string");
    return v.get<std::string>();
  }
  std::vector<std::int64_t> dims(const char* key, std::int64_t lo) {
    const auto& v = take(key);
    if (!v.is_array() || v.empty() || v.size() > 5) fail(where_, std::string("\"") + key + "\": expected a list of 1 to 5 whole numbers");
    std::vector<std::int64_t> out;
    for (const auto& d : v) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < lo) fail(where_, std::string("\"") + key + "\": " + d.dump() + " is not a whole number >= " + std::to_string(lo));
      out.push_back(d.get<std::int64_t>());
    }
    return out;
  }
  /// Every field was taken (the op or block's own key and "name" are taken by the reader).
  void finish() const {
    if (const auto k = untaken(); !k.empty()) fail(where_, "unknown field \"" + k + "\"");
  }
  /// The first field nothing took ("" if none).
  std::string untaken() const {
    for (const auto& [k, v] : j_.items())
      if (!taken_.count(k)) return k;
    return "";
  }

 private:
  const nlohmann::json& j_;
  std::string where_;
  std::set<std::string> taken_;
};

constexpr std::int64_t big = std::int64_t{1} << 40;

/// input / reshape (1 to 5) and permute (2 to 5) take their dimensions as a pack.
template <class F>
layer with_dims(const std::vector<std::int64_t>& d, F make) {
  switch (d.size()) {
    case 1:
      if constexpr (std::is_invocable_v<F, std::int64_t>) return make(d[0]);
      else fail("permute", "\"order\": a permutation of 2 to 5 dimensions");
    case 2: return make(d[0], d[1]);
    case 3: return make(d[0], d[1], d[2]);
    case 4: return make(d[0], d[1], d[2], d[3]);
    default: return make(d[0], d[1], d[2], d[3], d[4]);
  }
}

/// conv1d/2d/3d, conv_transpose1d/2d/3d, depthwise_conv2d with their options.
inline layer conv_leaf(const std::string& op, fields& f) {
  const bool depthwise_op = op == "depthwise_conv2d";
  const auto out = depthwise_op ? 0 : f.integer("out", 1, big);
  const auto k = f.integer("kernel", 1, 1 << 16);
  const stride s(f.integer("stride", 1, 1 << 16, 1));
  const padding p(f.integer("padding", 0, 1 << 16, 0));
  const dilation dl(f.integer("dilation", 1, 1 << 16, 1));
  const groups g(depthwise_op ? 1 : f.integer("groups", 1, big, 1));
  const bool transposed = op.rfind("conv_transpose", 0) == 0;
  const output_padding op_pad(transposed ? f.integer("output_padding", 0, 1 << 16, 0) : 0);
  const bool bias = f.boolean("bias", true);
  // the input's layout (CPU transients, cuDNN's layout copies): a depthwise conv2d's or a conv1d's
  const bool cl = (depthwise_op || op == "conv1d") && f.boolean("channels_last_input", false);
  // a conv2d's own kernel and padding along W (Inception's 1x7, 7x1)
  const kernel_w kw(op == "conv2d" ? f.integer("kernel_w", 1, 1 << 16, k) : k);
  const padding_w pw(op == "conv2d" ? f.integer("padding_w", 0, 1 << 16, p.value) : p.value);
  // a conv3d's own kernel, stride and padding along T (torchvision's video ResNets: (3, 7, 7))
  const kernel_t kt(op == "conv3d" ? f.integer("kernel_t", 1, 1 << 16, k) : k);
  const stride_t st(op == "conv3d" ? f.integer("stride_t", 1, 1 << 16, s.value) : s.value);
  const padding_t pt(op == "conv3d" ? f.integer("padding_t", 0, 1 << 16, p.value) : p.value);
  auto make = [&](auto... extra) {
    if (op == "conv1d") return cl ? conv1d(out, k, s, p, dl, g, channels_last_input, extra...) : conv1d(out, k, s, p, dl, g, extra...);
    if (op == "conv3d") return conv3d(out, k, s, p, dl, g, kt, st, pt, extra...);
    if (op == "conv_transpose1d") return conv_transpose1d(out, k, s, p, dl, g, op_pad, extra...);
    if (op == "conv_transpose2d") return conv_transpose2d(out, k, s, p, dl, g, op_pad, extra...);
    if (op == "conv_transpose3d") return conv_transpose3d(out, k, s, p, dl, g, op_pad, extra...);
    if (depthwise_op) return cl ? depthwise_conv2d(k, s, p, dl, channels_last_input, extra...) : depthwise_conv2d(k, s, p, dl, extra...);
    return conv2d(out, k, s, p, dl, g, kw, pw, extra...);
  };
  // weight_norm (dim 0): the weight recomputed from g and v every forward, by torch.nn.utils.weight_norm's
  // hook ("hook") or torch.nn.utils.parametrizations.weight_norm ("parametrization")
  const auto wn = f.has("weight_norm") ? f.text("weight_norm") : std::string();
  if (!wn.empty() && wn != "hook" && wn != "parametrization")
    fail(f.where(), "\"weight_norm\": \"" + wn + "\" is not hook or parametrization");
  if (wn == "hook") return bias ? make(weight_norm) : make(no_bias, weight_norm);
  if (wn == "parametrization") return bias ? make(weight_norm_parametrization) : make(no_bias, weight_norm_parametrization);
  return bias ? make() : make(no_bias);
}

using leaf_maker = std::function<layer(fields&)>;

/// Views and reductions (per-sample dimensions: PyTorch's less the batch), unfold.
inline void add_view_leaves(std::map<std::string, leaf_maker>& t) {
  t["flatten"] = [](fields& f) { return flatten(f.integer("start", 0, 4, 0)); };
  t["reshape"] = [](fields& f) { return with_dims(f.dims("dims", 1), [](auto... d) { return reshape(d...); }); };
  t["permute"] = [](fields& f) {  // "contiguous": then .contiguous(), a copy
    const bool copied = f.boolean("contiguous", false);
    return with_dims(f.dims("order", 0), [copied]<class... D>(D... d) requires(sizeof...(D) >= 2) { return copied ? contiguous_permute(d...) : permute(d...); });
  };
  // the batch moved between first and second ([B, L, D] <-> [L, B, D]): the same per-sample shape
  t["batch_transpose"] = [](fields& f) { return batch_transpose(f.boolean("contiguous", false)); };
  t["transpose"] = [](fields& f) {
    const auto a = f.integer("dim0", 0, 4), b = f.integer("dim1", 0, 4);
    return transpose(a, b, f.boolean("contiguous", false));
  };
  struct reduction_factories {
    const char* name;
    layer (*plain)(std::int64_t, std::int64_t);
    layer (*keeping)(std::int64_t, std::int64_t, keepdim_t);
  };
  const reduction_factories reductions[] = {
      {"mean_over", mean_over, mean_over}, {"sum_over", sum_over, sum_over}, {"var_over", var_over, var_over}, {"std_over", std_over, std_over}};
  for (const auto& r : reductions)
    t[r.name] = [r](fields& f) {
      const auto dim = f.integer("dim", 0, 4);
      const auto count = f.integer("count", 1, 5 - dim, 1);
      return f.boolean("keepdim", false) ? r.keeping(dim, count, keepdim) : r.plain(dim, count);
    };
  t["narrow"] = [](fields& f) {  // x[..., a:b] on one per-sample dimension, made contiguous or not
    const auto dim = f.integer("dim", 0, 4), start = f.integer("start", 0, big);
    return narrow(dim, start, f.integer("length", 1, big), f.boolean("contiguous", false));
  };
  t["max_over"] = [](fields& f) {  // torch.max(x, dim)[0]: one dimension
    const auto dim = f.integer("dim", 0, 4);
    return f.boolean("keepdim", false) ? max_over(dim, keepdim) : max_over(dim);
  };
  t["select_token"] = [](fields& f) { return select_token(f.integer("index", 0, big)); };
  t["chunk"] = [](fields& f) {  // x.chunk(count, dim)[index]
    const auto count = f.integer("count", 1, big);
    const auto index = f.integer("index", 0, count - 1);
    return chunk(count, index, f.integer("dim", 0, 4, 0));
  };
  t["unfold"] = [](fields& f) {
    const auto k = f.integer("kernel", 1, 1 << 16);
    const padding p(f.integer("padding", 0, 1 << 16, 0));
    return unfold(k, p, stride(f.integer("stride", 1, 1 << 16, 1)));
  };
}

/// An attention's "names": the module names of transformers' own projections (GPT-2's c_attn and
/// c_proj with a packed impl, BERT's self.query, ... with separate ones, Llama's q_proj, ... with
/// rotary flash), as --hf-config names them.
inline projection_names projection_scheme(fields& f, attention_impl impl, bool rotary) {
  const auto n = f.text("names");
  const bool packed = impl == attention_impl::split_qkv || impl == attention_impl::flash;
  if (n == "gpt2" && packed && !rotary) return projection_names::gpt2;
  if (n == "bert" && !packed) return projection_names::bert;
  if (n == "llama" && impl == attention_impl::flash && rotary) return projection_names::llama;
  fail(f.where(), "\"names\": \"" + n + "\" does not fit this attention (\"gpt2\" takes impl flash or split_qkv, \"bert\" separate_qkv or "
                  "separate_qkv_sdpa, \"llama\" flash with rotary)");
}

/// Attention, and transformers' embeddings and tied heads (read from ATen dumps:
/// gpubudget-export --aten-graph).
inline void add_attention_leaves(std::map<std::string, leaf_maker>& t) {
  t["learned_positions"] = [](fields& f) { return learned_positions(f.integer("context", 1, big)); };
  t["bert_embeddings"] = [](fields& f) {
    const auto types = f.integer("type_vocab", 1, big);
    return bert_embeddings(types, f.integer("max_positions", 1, big));
  };
  t["tied_linear"] = [](fields& f) { return tied_linear(f.integer("out", 1, big)); };
  t["tied_linear_bias"] = [](fields& f) { return tied_linear_bias(f.integer("features", 1, big)); };
  t["cross_attention"] = [](fields& f) {  // q from the input, k and v from the conditioning sequence (conditioned)
    const auto width = f.integer("width", 1, big), h = f.integer("heads", 1, big), kv = f.integer("kv_tokens", 1, big);
    const auto impl = f.text("impl");
    const std::map<std::string, attention_impl> impls = {{"separate_qkv", attention_impl::separate_qkv}, {"separate_qkv_sdpa", attention_impl::separate_qkv_sdpa},
                                                         {"torch_mha", attention_impl::torch_mha}};
    if (!impls.count(impl))
      fail(f.where(), "\"impl\": \"separate_qkv_sdpa\" and \"separate_qkv\" (q/k/v Linears, SDPA or matmul-softmax-matmul), \"torch_mha\" "
                      "(nn.MultiheadAttention, need_weights=False: nn.TransformerDecoderLayer's multihead_attn) are read");
    const auto pct = f.integer("dropout", 0, 100, 0), hd = f.integer("head_dim", 1, big, 0);
    const bool bias = f.boolean("bias", true);
    const qkv_bias qb(f.boolean("qkv_bias", bias));
    const auto names = impl == "torch_mha" ? projection_names::torchvision : f.has("projections") ? projection_names::separate : projection_names::none;
    const kv_width kw(f.integer("kv_width", 1, big, width));  // the memory's width (SD's text states: 768)
    const auto make = [&](auto... layout) {  // "sequence_first": nn.MultiheadAttention(batch_first=False)
      return bias ? cross_attention(width, heads(h), kv_tokens(kv), impls.at(impl), names, attention_dropout(pct), head_dim(hd), qb, kw, layout...)
                  : cross_attention(width, heads(h), kv_tokens(kv), impls.at(impl), names, attention_dropout(pct), head_dim(hd), qb, kw, no_bias, layout...);
    };
    // nn.MultiheadAttention's ("torch_mha"): "sequence_first", and the memory's "key_padding_mask"
    const bool seq = f.boolean("sequence_first", false), padded = f.boolean("key_padding_mask", false);
    if (seq) return padded ? make(sequence_first, key_padding_mask) : make(sequence_first);
    return padded ? make(key_padding_mask) : make();
  };
  t["attention"] = [](fields& f) {
    const auto width = f.integer("width", 1, big), h = f.integer("heads", 1, big);
    const auto impl = f.text("impl");
    const std::map<std::string, attention_impl> impls = {{"separate_qkv", attention_impl::separate_qkv}, {"separate_qkv_sdpa", attention_impl::separate_qkv_sdpa},
                                                         {"split_qkv", attention_impl::split_qkv}, {"flash", attention_impl::flash},
                                                         {"per_head", attention_impl::per_head}};
    const bool mha = impl == "torch_mha" || impl == "torch_mha_weights";
    if (!mha && !impls.count(impl))
      fail(f.where(), "\"impl\": only \"torch_mha\" and \"torch_mha_weights\" (nn.MultiheadAttention, need_weights False or True), \"separate_qkv_sdpa\" and \"separate_qkv\" (q/k/v Linears, SDPA or "
                      "matmul-softmax-matmul), \"flash\" and \"split_qkv\" (a packed qkv projection, SDPA or matmul-softmax-matmul), \"per_head\" (a Linear per head for each of q, k, v, causal, "
                      "concatenated) are read");
    const auto pct = f.integer("dropout", 0, 100, 0);
    const bool bias = f.boolean("bias", true);
    if (!mha) {  // "projections" (their module names) are applied by append()
      const auto ai = impls.at(impl);
      // Llama's grouped-query rotary attention: key/value heads, RoPE, a head size of its own
      const auto kv = f.integer("kv_heads", 1, h, 0), hd = f.integer("head_dim", 1, big, 0);
      const bool rope = f.boolean("rotary", false);
      const auto names = f.has("names") ? projection_scheme(f, ai, rope) : f.has("projections") ? projection_names::separate : projection_names::none;
      const bool fused = f.boolean("fused_qkv", false);  // one packed q, k, v Linear (timm's Attention), flash
      // the q, k, v projections' bias when not the output's ("qkv_bias": false, timm's qkv_bias=False)
      const qkv_bias qb(f.boolean("qkv_bias", bias));
      const bool causal = f.boolean("causal_mask", false);  // SDPA's is_causal=True
      if (f.boolean("sequence_first", false)) fail(f.where(), "\"sequence_first\" is nn.MultiheadAttention's layout: \"impl\" \"torch_mha\" or \"torch_mha_weights\"");
      const auto make = [&](auto... extra) {
        if (fused) return attention(width, heads(h), ai, attention_dropout(pct), kv_heads(kv), head_dim(hd), fused_qkv, qb, extra...);
        return attention(width, heads(h), ai, names, attention_dropout(pct), kv_heads(kv), head_dim(hd), qb, extra...);
      };
      if (rope) return bias ? make(rotary) : make(rotary, no_bias);
      if (causal) return bias ? make(causal_mask) : make(causal_mask, no_bias);
      return bias ? make() : make(no_bias);
    }
    const auto tv = projection_names::torchvision;
    const auto ai = impl == "torch_mha" ? attention_impl::torch_mha : attention_impl::torch_mha_weights;
    const qkv_bias qb(f.boolean("qkv_bias", bias));  // one that differs from "bias": the library's diagnostic
    // nn.MultiheadAttention's masks: the causal attn_mask, a [B, L] key_padding_mask (causal_mask, key_padding_mask)
    // (a float [L, L] attn_mask given without is_causal: square_mask)
    const bool causal = f.boolean("causal_mask", false), square = f.boolean("square_mask", false), padded = f.boolean("key_padding_mask", false);
    const bool seq = f.boolean("sequence_first", false);  // nn.MultiheadAttention(batch_first=False) on [L, B, D]
    const auto with_layout = [&](auto... masks) {
      return bias ? attention(width, heads(h), ai, tv, attention_dropout(pct), qb, masks...) : attention(width, heads(h), ai, tv, attention_dropout(pct), no_bias, qb, masks...);
    };
    const auto make = [&](auto... masks) { return seq ? with_layout(masks..., sequence_first) : with_layout(masks...); };
    const auto with_padding = [&](auto mask) { return padded ? make(mask, key_padding_mask) : make(mask); };
    if (causal && square) fail(f.where(), "\"causal_mask\" and \"square_mask\": one attn_mask is one or the other");
    if (causal) return with_padding(causal_mask);
    if (square) return with_padding(square_mask);
    return padded ? make(key_padding_mask) : make();
  };
}

/// Norms with a parameter or none, dropout, stochastic depth, PReLU and GLU.
inline void add_norm_and_elementwise_leaves(std::map<std::string, leaf_maker>& t) {
  t["layer_norm"] = [](fields& f) {  // "dims": how many trailing dimensions (nn.LayerNorm([C, H, W]): 3)
    const over_last dims(f.integer("dims", 1, 5, 1));
    if (!f.boolean("affine", true)) return layer_norm(dims, no_affine);
    return f.boolean("bias", true) ? layer_norm(dims) : layer_norm(dims, no_bias);
  };
  t["group_norm"] = [](fields& f) { return group_norm(f.integer("groups", 1, big)); };
  t["instance_norm"] = [](fields& f) { return instance_norm(f.boolean("affine", false)); };
  t["normalize"] = [](fields& f) { return normalize(f.integer("dim", 0, 4, 0)); };  // F.normalize(p=2)
  t["dropout"] = [](fields& f) {
    const auto pct = f.integer("percent", 0, 100);
    return f.boolean("inplace", false) ? dropout_inplace(pct) : dropout(pct);
  };
  t["channel_dropout"] = [](fields& f) {  // nn.Dropout1d/2d/3d
    const auto pct = f.integer("percent", 0, 100);
    return f.boolean("inplace", false) ? channel_dropout_inplace(pct) : channel_dropout(pct);
  };
  t["stochastic_depth"] = [](fields& f) { return stochastic_depth(f.integer("per_mille", 0, 1000)); };
  t["prelu"] = [](fields& f) { return prelu(f.integer("parameters", 1, big, 1)); };
  t["glu"] = [](fields& f) { return glu(f.integer("dim", 0, 4)); };
}

/// Pooling (fixed and adaptive windows) and padding.
inline void add_pool_and_pad_leaves(std::map<std::string, leaf_maker>& t) {
  for (const char* pool : {"max_pool2d", "avg_pool2d", "max_pool1d", "avg_pool1d", "max_pool3d", "avg_pool3d"})
    t[pool] = [name = std::string(pool)](fields& f) {
      const auto k = f.integer("kernel", 1, 1 << 16);
      const stride s(f.integer("stride", 1, 1 << 16, k));
      const padding p(f.integer("padding", 0, 1 << 16, 0));
      const bool ceil = f.boolean("ceil_mode", false);
      if (name == "max_pool3d" || name == "avg_pool3d") {  // no ceil_mode for the 3-D pools; "kernel_t" ...: the window over D
        if (ceil) fail(f.where(), "\"ceil_mode\": the library's 3-D pools floor");
        const kernel_t kt(f.integer("kernel_t", 1, 1 << 16, k));
        const stride_t st(f.integer("stride_t", 1, 1 << 16, s.value));
        const padding_t pt(f.integer("padding_t", 0, 1 << 16, p.value));
        return name == "max_pool3d" ? max_pool3d(k, s, p, kt, st, pt) : avg_pool3d(k, s, p, kt, st, pt);
      }
      if (name == "max_pool1d") return ceil ? max_pool1d(k, s, p, ceil_mode) : max_pool1d(k, s, p);
      if (name == "avg_pool1d") return ceil ? avg_pool1d(k, s, p, ceil_mode) : avg_pool1d(k, s, p);
      if (name == "max_pool2d") return ceil ? max_pool2d(k, s, p, ceil_mode) : max_pool2d(k, s, p);
      return ceil ? avg_pool2d(k, s, p, ceil_mode) : avg_pool2d(k, s, p);
    };
  t["adaptive_avg_pool2d"] = [](fields& f) {
    const auto h = f.integer("h", 1, big);
    return adaptive_avg_pool2d(h, f.integer("w", 1, big));
  };
  t["adaptive_avg_pool1d"] = [](fields& f) { return adaptive_avg_pool1d(f.integer("out", 1, big)); };
  t["adaptive_avg_pool3d"] = [](fields& f) {
    const auto d = f.integer("d", 1, big), h = f.integer("h", 1, big);
    return adaptive_avg_pool3d(d, h, f.integer("w", 1, big));
  };
  t["adaptive_max_pool2d"] = [](fields& f) {
    const auto h = f.integer("h", 1, big);
    return adaptive_max_pool2d(h, f.integer("w", 1, big));
  };
  t["adaptive_max_pool1d"] = [](fields& f) { return adaptive_max_pool1d(f.integer("out", 1, big)); };
  t["pad"] = [](fields& f) {  // F.pad on [C, L] or [C, H, W]
    const auto l = f.integer("left", 0, 1 << 16), r = f.integer("right", 0, 1 << 16);
    const auto top = f.integer("top", 0, 1 << 16, 0), bottom = f.integer("bottom", 0, 1 << 16, 0);
    const auto mode = f.text("mode");
    const std::map<std::string, pad_mode> modes = {{"constant", pad_mode::constant}, {"reflect", pad_mode::reflect}, {"replicate", pad_mode::replicate}};
    if (!modes.count(mode)) fail(f.where(), "\"mode\": \"" + mode + "\" is not constant, reflect or replicate");
    return pad(l, r, top, bottom, modes.at(mode));
  };
}

/// Leaves with sizes: dense, upsampling, vision blocks, inputs (norms and elementwise, pooling and
/// padding, views, attention: the add_*_leaves above).
inline void add_shaped_leaves(std::map<std::string, leaf_maker>& t) {
  t["input"] = [](fields& f) { return with_dims(f.dims("dims", 1), [](auto... d) { return input(d...); }); };
  t["tokens"] = [](fields& f) { return tokens(f.integer("length", 1, big)); };
  t["linear"] = [](fields& f) {
    const auto out = f.integer("out", 1, big);
    return f.boolean("bias", true) ? linear(out) : linear(out, no_bias);
  };
  t["embedding"] = [](fields& f) {
    const auto n = f.integer("num", 1, big);
    return embedding(n, f.integer("dim", 1, big));
  };
  t["patch_embedding"] = [](fields& f) {
    const auto width = f.integer("width", 1, big);
    const auto patch = f.integer("patch", 1, 1 << 16);
    const bool class_token = f.boolean("class_token", true);
    return patch_embedding(width, patch, class_token, f.boolean("positions", true));
  };
  t["pos_embedding"] = [](fields&) { return pos_embedding(); };
  t["window_attention"] = [](fields& f) {  // torchvision's Swin ShiftedWindowAttention; "v2": ShiftedWindowAttentionV2
    const auto h = f.integer("heads", 1, big), w = f.integer("window", 1, big);
    const auto shift = f.integer("shift", 0, w - 1);
    if (f.has("window_t")) {  // torchvision's ShiftedWindowAttention3d (Video Swin)
      const auto wt = f.integer("window_t", 1, big);
      return window_attention_3d(heads(h), wt, w, f.integer("shift_t", 0, wt - 1), shift);
    }
    return f.boolean("v2", false) ? window_attention_v2(heads(h), w, shift) : window_attention(heads(h), w, shift);
  };
  t["patch_merging"] = [](fields& f) { return f.boolean("v2", false) ? patch_merging_v2() : patch_merging(); };
  t["pixel_shuffle"] = [](fields& f) { return pixel_shuffle(f.integer("factor", 1, 1 << 10)); };
  t["upsample"] = [](fields& f) {  // F.interpolate / nn.Upsample by whole factors; "scale_d": 3-D
    const auto mode = f.text("mode");
    const auto sh = f.integer("scale_h", 1, 1 << 16), sw = f.integer("scale_w", 1, 1 << 16), sd = f.integer("scale_d", 1, 1 << 16, 0);
    const std::map<std::string, upsample_mode> modes = {{"nearest", upsample_mode::nearest}, {"bilinear", upsample_mode::bilinear}, {"trilinear", upsample_mode::trilinear}};
    if (!modes.count(mode)) fail(f.where(), "\"mode\": \"" + mode + "\" is not nearest, bilinear or trilinear");
    return sd > 0 ? upsample3d(sd, sh, sw, modes.at(mode)) : upsample(sh, sw, modes.at(mode));
  };
  t["elementwise"] = [](fields& f) {  // torch.exp, x.log(), x ** c, x.clamp(...), -x, ...
    static const std::map<std::string, unary_fn> fns = {{"exp", unary_fn::exp}, {"log", unary_fn::log}, {"sqrt", unary_fn::sqrt},
        {"rsqrt", unary_fn::rsqrt}, {"reciprocal", unary_fn::reciprocal}, {"abs", unary_fn::abs}, {"neg", unary_fn::neg},
        {"pow", unary_fn::pow}, {"clamp", unary_fn::clamp}, {"sin", unary_fn::sin}, {"cos", unary_fn::cos}};
    const auto fn = f.text("fn");
    if (!fns.count(fn)) fail(f.where(), "\"fn\": \"" + fn + "\" is not exp, log, sqrt, rsqrt, reciprocal, abs, neg, pow, clamp, sin or cos");
    return elementwise(fns.at(fn));
  };
  t["resize"] = [](fields& f) {  // F.interpolate(x, size=(h, w)) to any size, 2-D
    const auto mode = f.text("mode");
    if (mode != "nearest" && mode != "bilinear") fail(f.where(), "\"mode\": \"" + mode + "\" is not nearest or bilinear");
    return resize(f.integer("h", 1, 1 << 20), f.integer("w", 1, 1 << 20), mode == "bilinear" ? upsample_mode::bilinear : upsample_mode::nearest);
  };
  add_view_leaves(t);
  add_norm_and_elementwise_leaves(t);
  add_pool_and_pad_leaves(t);
  t["squeeze_excitation"] = [](fields& f) {
    const auto squeeze = f.integer("squeeze", 1, big);
    const auto act = f.text("activation"), gate = f.text("gate");
    if (act != "relu" && act != "silu_inplace") fail(f.where(), "\"activation\": \"" + act + "\" is not relu or silu_inplace");
    if (gate != "sigmoid" && gate != "hardsigmoid") fail(f.where(), "\"gate\": \"" + gate + "\" is not sigmoid or hardsigmoid");
    return squeeze_excitation(squeeze, act == "relu" ? se_activation::relu : se_activation::silu_inplace,
                              gate == "sigmoid" ? se_gate::sigmoid : se_gate::hardsigmoid);
  };
  add_attention_leaves(t);
}

inline const std::map<std::string, leaf_maker>& leaf_makers() {
  static const std::map<std::string, leaf_maker> m = [] {
    std::map<std::string, leaf_maker> t;
    for (const char* c : {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "depthwise_conv2d"})
      t[c] = [op = std::string(c)](fields& f) { return conv_leaf(op, f); };
    const std::map<std::string, layer> plain = {
        {"batch_norm", batch_norm()}, {"rms_norm", rms_norm()}, {"scale", scale()},
        {"relu", relu()}, {"relu_inplace", relu_inplace()}, {"gelu", gelu()}, {"silu", silu()}, {"silu_inplace", silu_inplace()},
        {"sigmoid", sigmoid()}, {"tanh", tanh()}, {"leaky_relu", leaky_relu()}, {"leaky_relu_inplace", leaky_relu_inplace()}, {"elu", elu()}, {"elu_inplace", elu_inplace()}, {"mish", mish()}, {"softplus", softplus()}, {"relu6", relu6()},
        {"relu6_inplace", relu6_inplace()}, {"hardswish", hardswish()}, {"hardswish_inplace", hardswish_inplace()}, {"hardsigmoid", hardsigmoid()}, {"written_layer_norm", written_layer_norm()},
        {"scalar_gain", scalar_gain()}, {"gelu_new", gelu_new()}};
    for (const auto& entry : plain) t[entry.first] = [l = entry.second](fields&) { return l; };
    // gamma over dimension 0 (torchvision's (C, 1, 1)) or the last (the official ConvNeXt's (C,) on channels-last)
    // over the last dimension, or a per-sample `dim`
    t["softmax"] = [](fields& f) { return softmax(f.integer("dim", -1, 4, -1)); };
    t["log_softmax"] = [](fields& f) { return log_softmax(f.integer("dim", -1, 4, -1)); };
    t["layer_scale"] = [](fields& f) { return layer_scale(f.boolean("last_dimension", false)); };
    t["affine_grid"] = [](fields& f) {
      const auto h = f.integer("h", 1, big);
      return affine_grid(h, f.integer("w", 1, big));
    };
    t["learned_bias"] = [](fields& f) { return learned_bias(f.boolean("last_dimension", false)); };
    t["condition"] = [](fields& f) { return condition(f.has("width") ? f.integer("width", 1, big) : 0); };
    add_shaped_leaves(t);
    return t;
  }();
  return m;
}

/// The composition record a block starts with, from the public factories.
inline layer block_head(fields& f) {
  const auto kind = f.text("block");
  if (kind == "sequential") return sequential().records[0];
  if (kind == "residual") return residual().records[0];
  if (kind == "residual_inplace") return residual_inplace().records[0];
  if (kind == "repeat") {  // copies that continue the enclosing sequence, numbered as its modules
    layer head = continue_sequence(repeat(f.integer("count", 1, big), sequential())).records[0];
    const auto first = f.has("first") ? f.integer("first", 0, big) : 0;
    gpubudget::detail::number_copies(head, first, f.has("modules_per_copy") ? f.integer("modules_per_copy", 1, big) : 1);
    return head;
  }
  if (kind == "conditioned") return conditioned(sequential(), sequential()).records[0];
  if (kind == "modulated") return modulated(sequential(), sequential()).records[0];
  if (kind != "parallel") fail(f.where(), "unknown block \"" + kind + "\" (expected sequential, residual, residual_inplace, repeat, parallel, conditioned or modulated)");
  const std::map<std::string, merge_kind> merges = {
      {"add", merge_kind::add}, {"add_inplace", merge_kind::add_inplace}, {"concat", merge_kind::concat}, {"multiply", merge_kind::multiply}, {"stack", merge_kind::stack}, {"matmul", merge_kind::matmul}, {"subtract", merge_kind::subtract},
      {"divide", merge_kind::divide}, {"maximum", merge_kind::maximum}, {"minimum", merge_kind::minimum}, {"grid_sample", merge_kind::grid_sample},
      {"auxiliary_output", merge_kind::auxiliary_output}, {"auxiliary_output_last", merge_kind::auxiliary_output_last}, {"gaussian_latent", merge_kind::gaussian_latent}};
  const auto m = f.text("merge");
  if (!merges.count(m)) fail(f.where(), "unknown merge \"" + m + "\" (expected add, add_inplace, concat, multiply, stack, matmul, subtract, divide, maximum, minimum, grid_sample, auxiliary_output, auxiliary_output_last or gaussian_latent)");
  return parallel(merges.at(m)).records[0];
}

/// The leaf just appended takes "projections" (a list of module names, relative to the leaf's)
/// as its part names: parts_named, with the names kept in `g`.
inline void name_parts(graph_model& g, fields& leaf) {
  const auto& list = leaf.take("projections");
  std::string joined;
  for (std::size_t k = 0; list.is_array() && k < list.size(); ++k) {
    if (!list[k].is_string() || list[k].get<std::string>().empty() || list[k].get<std::string>().find(',') != std::string::npos)
      fail(leaf.where(), "\"projections\": " + list[k].dump() + " is not a module name");
    joined += (k ? "," : "") + list[k].get<std::string>();
  }
  if (!list.is_array() || list.size() != 4) fail(leaf.where(), "\"projections\": expected the module names of the q, k, v and output Linears");
  g.records.back() = parts_named(g.names.emplace_back(joined).c_str(), g.records.back());
}

/// The leaf at `self` (the last record) as shared(id, leaf): its weight is the one every leaf of
/// the same "tie" id uses (a token embedding and the head tied to it).
inline void share(graph_model& g, std::size_t self, std::int64_t id) {
  const auto tied = shared(static_cast<std::int32_t>(id), g.records[self]);
  g.records.resize(self);
  for (std::int32_t k = 0; k < tied.records[0].span; ++k) g.records.push_back(tied.records[static_cast<std::size_t>(k)]);
}

/// The leaf at `self` (the last record) as frozen(leaf): a parameter that requires no gradient
/// (DiT's fixed sin-cos pos_embed, nn.Parameter(..., requires_grad=False)).
inline void freeze(graph_model& g, std::size_t self) {
  const auto cold = frozen(g.records[self]);
  g.records.resize(self);
  for (std::int32_t k = 0; k < cold.records[0].span; ++k) g.records.push_back(cold.records[static_cast<std::size_t>(k)]);
}

/// A repeat's copies are whole: with "modules_per_copy" N > 1 its one part is a sequential of the N
/// modules (numbered_from's rule).
inline void check_repeat_body(const graph_model& g, std::size_t self, std::size_t parts, const std::string& at) {
  const std::int64_t per_copy = gpubudget::detail::modules_per_copy(g.records[self]);
  if (parts == 0) fail(at, "a repeat needs its block in \"parts\"");
  if (per_copy <= 1) return;
  if (parts != 1 || g.records[self + 1].kind != node_kind::sequence || gpubudget::detail::part_count(g.records.data(), self + 1) != per_copy)
    fail(at, "\"modules_per_copy\": " + std::to_string(per_copy) + " needs one sequential part of that many modules");
}

/// Appends the records of `node` (a leaf or a block and its parts) to `g`.
inline void append(graph_model& g, const nlohmann::json& node, const std::string& where) {
  fields f(node, where);
  const std::string name = f.has("name") ? f.text("name") : "";
  const std::string at = name.empty() ? where : where + " (\"" + name + "\")";
  const std::size_t self = g.records.size();
  if (f.has("op")) {
    const auto op = f.text("op");
    const auto& makers = leaf_makers();
    const auto it = makers.find(op);
    if (it == makers.end()) fail(at, "unknown op \"" + op + "\" (docs/export.md lists the ops)");
    fields leaf(node, at + ", op " + op);
    leaf.take("op");
    if (!name.empty()) leaf.take("name");
    const bool cold = leaf.boolean("frozen", false);  // read before the op's own fields are checked
    try {
      g.records.push_back(it->second(leaf));
    } catch (const std::invalid_argument& e) {  // a misspelt field: name it rather than the one it hides
      if (const auto k = leaf.untaken(); !k.empty() && k != "name") fail(leaf.where(), "unknown field \"" + k + "\"");
      const std::string what = e.what(), prefix = "gpubudget: ";  // the library's check of the op's own arguments
      if (what.rfind(prefix, 0) == 0) fail(leaf.where(), what.substr(prefix.size()));
      throw;
    }
    if (leaf.has("projections")) name_parts(g, leaf);
    if (leaf.has("tie")) share(g, self, leaf.integer("tie", 1, 1 << 20));
    if (cold) freeze(g, self);
    leaf.finish();
  } else if (f.has("block")) {
    g.records.push_back(block_head(f));
    const auto& parts = f.take("parts");
    if (!parts.is_array()) fail(at, "\"parts\" is not a list");
    for (std::size_t k = 0; k < parts.size(); ++k) append(g, parts[k], at + ".parts[" + std::to_string(k) + "]");
    g.records[self].span = static_cast<std::int32_t>(g.records.size() - self);
    if (g.records[self].kind == node_kind::repeat) check_repeat_body(g, self, parts.size(), at);
    if (g.records[self].kind == node_kind::encoder_decoder && parts.size() != 2)
      fail(at, "a conditioned block takes two parts: the condition and the model, each from its own input");
    if (g.records[self].kind == node_kind::modulated && parts.size() != 2)
      fail(at, "a modulated block takes two parts: the modulation (from condition()) and the body");
    f.finish();
  } else {
    fail(at, "neither an \"op\" nor a \"block\"");
  }
  if (!name.empty()) g.records[self].name = g.names.emplace_back(name).c_str();
}

}  // namespace graph

/// Reads a graph file (format "gpubudget-graph", version 1).
inline std::shared_ptr<graph_model> read_graph(const std::string& path) {
  std::ifstream in(path);
  if (!in) graph::fail(path, "cannot open the file");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    graph::fail(path, std::string("not JSON: ") + e.what());
  }
  graph::fields top(doc, path);
  if (top.text("format") != "gpubudget-graph") graph::fail(path, "\"format\" is not \"gpubudget-graph\"");
  if (top.integer("version", 1, 1000) != 1) graph::fail(path, "\"version\" is not 1 (this gpubudget reads version 1)");
  auto g = std::make_shared<graph_model>();
  g->name = top.has("name") ? top.text("name") : path;
  if (top.has("source")) top.text("source");
  if (top.has("torch")) top.text("torch");
  g->stated_parameters = top.has("parameters") ? top.integer("parameters", 0, graph::big) : -1;
  if (top.has("loss")) {  // the model's own loss (an ATen dump's): --loss's default
    g->loss = top.text("loss");
    if (g->loss != "cross_entropy" && g->loss != "causal_lm") graph::fail(path, "\"loss\": \"" + g->loss + "\" is not cross_entropy or causal_lm");
  }
  graph::append(*g, top.take("model"), path + ": model");
  top.finish();
  if (g->records.size() < 2 || g->records[0].kind != node_kind::sequence)
    graph::fail(path, "\"model\" must be a sequential block that starts with an input");
  return g;
}

/// --lora on a graph: PEFT's target_modules names and the adapters' settings.
struct graph_lora {
  std::string targets;
  models::lora_config config;
};

namespace graph {
/// The records padded into a model<N> (records past the root's subtree are never walked), with
/// `lora` (targets, config) applied by models::get_peft_model when given.
template <std::size_t N>
evaluation evaluate_padded(const std::vector<layer>& records, const training& t, const device& d, const graph_lora* lora) {
  auto m = std::make_unique<model<N>>();
  std::copy(records.begin(), records.end(), m->records.begin());
  if (lora) *m = models::get_peft_model(*m, lora->targets.c_str(), lora->config);
  return evaluate(*m, t, d);
}
}  // namespace graph

/// Budgets a graph's records (under LoRA, `lora`): the smallest capacity that holds them.
inline evaluation evaluate_graph(const graph_model& g, const training& t, const device& d, const graph_lora* lora = nullptr) {
  const auto n = g.records.size();
  if (n <= 256) return graph::evaluate_padded<256>(g.records, t, d, lora);
  if (n <= 1024) return graph::evaluate_padded<1024>(g.records, t, d, lora);
  if (n <= 4096) return graph::evaluate_padded<4096>(g.records, t, d, lora);
  graph::fail(g.name, std::to_string(n) + " records; the command line budgets graphs of up to 4096 (use the exported C++ header)");
}

/// What --lora adds when a target matches nothing in a graph with an attention op the exporter
/// folded without naming its projections (its q, k, v and output Linears are one op, and were not
/// sub-modules of the module that calls the attention, so the file carries no "projections"):
/// a user's `query,value` is then a target LoRA cannot reach here, not a typo.
inline std::string folded_attention_hint(const graph_model& g) {
  for (const auto& r : g.records) {
    if (r.kind != node_kind::leaf || r.op != &gpubudget::detail::op_entry<attention_op>::descriptor) continue;
    if (gpubudget::detail::unpack_fields<attention_op>(r).names != projection_names::none) continue;
    return std::string("; the exporter folded an attention's q, k, v and output Linears into one attention op without their names (the first: \"") +
           (r.name ? r.name : "") + "\"; it names them when they are sub-modules of the module that calls the attention), so they are not targets here";
  }
  return "";
}

/// --graph FILE as a zoo entry (family "graph": no size options; the file fixes every size).
/// Budgets graph `g` read from `path` (under LoRA, `lora`), holding its parameter count to the
/// file's: the exporter's sum(p.numel()) against the library's count (under LoRA, the frozen
/// base's), so that a mapping that lost or added a weight is an error, never a quietly different
/// budget.
inline evaluation evaluate_graph_file(const graph_model& g, const std::string& path, const training& t, const device& d, const graph_lora* lora) {
  evaluation e;
  try {
    e = evaluate_graph(g, t, d, lora);
  } catch (const std::invalid_argument& ex) {  // the library's own check (a shape that does not fit the next op)
    if (lora) {  // a target LoRA cannot take: --lora's error
      const std::string what = ex.what();
      if (what.find("matches no module") != std::string::npos) throw std::invalid_argument(what + folded_attention_hint(g));
      throw;
    }
    const std::string what = ex.what(), prefix = "gpubudget: ";
    throw std::runtime_error("--graph: " + path + ": the library rejects the model: " + (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
  }
  const auto held = e.budget.parameter_count - (lora ? e.budget.trainable_count : 0);
  if (g.stated_parameters >= 0 && held != g.stated_parameters)
    throw std::runtime_error("--graph: " + path + ": the file states " + std::to_string(g.stated_parameters) +
                             " parameters (sum(p.numel()) at export), its ops hold " + std::to_string(held));
  return e;
}

inline zoo_entry graph_entry(const std::string& path) {
  std::shared_ptr<const graph_model> g = read_graph(path);
  zoo_entry entry{g->name, "graph", [g, path](const model_options&, const training& t, const device& d) { return evaluate_graph_file(*g, path, t, d, nullptr); }};
  entry.default_loss = g->loss;
  entry.lora_by_name = [g, path](const std::string& targets, const models::lora_config& l, const model_options&, const training& t, const device& d) {
    const graph_lora lora{targets, l};
    return evaluate_graph_file(*g, path, t, d, &lora);
  };
  return entry;
}

}  // namespace gpubudget::tools
