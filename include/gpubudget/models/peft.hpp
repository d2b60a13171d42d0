// gpubudget/models/peft.hpp — PEFT's get_peft_model(model, LoraConfig(target_modules=[...])) on any
// model: a torchvision network from the zoo, a graph tools/gpubudget-export wrote from your own
// nn.Module, or one written by hand with named() modules.
//
// PEFT (peft/tuners/tuners_utils.py, check_target_module_exists with a list of names) adapts every
// module whose path `key` satisfies key == target or key.endswith("." + target), and raises for a
// matched module it cannot wrap or a target that matches nothing. The same happens here, on the
// records' PyTorch module paths (detail/module_names.hpp): a matched nn.Linear becomes PEFT's
// lora.Linear (lora_linear: frozen base and bias, adapters of rank r), a matched nn.Conv{1,2,3}d
// PEFT's lora.Conv (lora_conv: lora_A with the base's kernel, stride and padding, a 1x1 lora_B),
// a matched nn.Embedding PEFT's lora.Embedding (lora_embedding: tables A [r, num], B [dim, r]),
// a matched nn.MultiheadAttention PEFT's lora.MultiheadAttention (adapters on in_proj_weight and
// out_proj merged into the weights for each forward: attention_adapters adapt_merged),
// a matched projection of an attention op that names its projections (BERT's self.query, T5's q, GPT-2's c_attn, an
// exported attention's own names: parts_named) takes attention_adapters, and every other module is frozen: PEFT's
// get_peft_model leaves
// requires_grad only on the adapters.
//
// The copies of a repeat are stored once, so a target must name a module in every copy
// (`mlp.fc1`, not `layers.3.mlp.fc1`; lora_config::layers_to_transform is modelled on the Llama
// family's builders, models/transformers.hpp, not here); that, a matched
// module LoRA does not wrap here (norms, dilated or transposed convolutions, whole blocks) and a target that
// matches nothing are named compile-time errors, never a silently different budget.
#pragma once
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <gpubudget/detail/module_names.hpp>
#include <gpubudget/layers/lora_conv.hpp>
#include <gpubudget/layers/lora_embedding.hpp>
#include <gpubudget/models/lora_config.hpp>

namespace gpubudget::models {

namespace detail {
[[noreturn]] inline void lora_target_matches_no_module() {
  gpubudget::detail::fail("gpubudget: get_peft_model: a target module matches no module of the model (PEFT: \"Target modules ... not found in the base "
                          "model\"); a target is a PyTorch module path or its end: `fc1`, `mlp.fc1`, `encoder.layers.encoder_layer_0.mlp.0` is one copy");
}
[[noreturn]] inline void lora_target_cannot_take_an_adapter() {
  gpubudget::detail::fail("gpubudget: get_peft_model: a target module is not one LoRA is modelled on (nn.Linear, nn.Conv1d/2d/3d with dilation 1, "
                          "an untied nn.Embedding, nn.MultiheadAttention (PEFT's lora.MultiheadAttention), the projections an attention op names; "
                          "norms, tied heads and embeddings, dilated, transposed or non-square (kernel_w) convolutions, DoRA on an nn.MultiheadAttention, other "
                          "attention modules and whole blocks are not)");
}
[[noreturn]] inline void lora_target_names_one_copy_of_a_repeat() {
  gpubudget::detail::fail("gpubudget: get_peft_model: a target module names some copies of a repeated block: name the module in every copy, "
                          "e.g. `mlp.fc1` (layers_to_transform is modelled on the Llama family: llama_lora, phi3_lora, mixtral_lora)");
}
[[noreturn]] inline void lora_all_linear_needs_a_transformers_model() {
  gpubudget::detail::fail("gpubudget: get_peft_model: target_modules=\"all-linear\" is refused by PEFT outside a transformers PreTrainedModel "
                          "(it drops the output embedding by convention): list the Linear modules");
}
[[noreturn]] inline void lora_module_to_save_is_not_a_linear() {
  gpubudget::detail::fail("gpubudget: get_peft_model: a modules_to_save name matches no nn.Linear (PEFT's trainable copy beside the frozen original "
                          "is modelled on Linear heads: a classifier, a score)");
}
[[noreturn]] inline void lora_option_not_modelled_on_any_model() {
  gpubudget::detail::fail("gpubudget: get_peft_model: base=, quantization, modules_to_save, labels and prepare_kbit are modelled on the transformers "
                          "families only (llama_lora, gpt_lora, ...), layers_to_transform, layers_pattern and bias on the Llama family (llama_lora, "
                          "phi3_lora, mixtral_lora); here the frozen base keeps the precision's parameter type");
}

/// One component of a module path: a name, or the copy number of a repeat (`copy`; `text` the
/// prefix of a repeat that numbers its copies in its name, "encoder_layer_").
struct path_component {
  std::string_view text{};
  bool copy = false;
};

enum class target_match : std::uint8_t { none, module, one_copy };

/// Is `c` "prefix" + a decimal number?
constexpr bool is_copy_number(std::string_view c, std::string_view prefix) {
  if (!c.starts_with(prefix) || c.size() == prefix.size()) return false;
  for (const char ch : c.substr(prefix.size()))
    if (ch < '0' || ch > '9') return false;
  return true;
}

/// PEFT's rule: does `target` spell all of `path` or its end after a dot? Through a repeat's copy
/// number only as that number (one copy).
constexpr target_match match_path_end(const gpubudget::detail::dyn_array<path_component>& path, std::string_view target) {
  std::size_t k = path.size();
  bool through_copy = false;
  for (;;) {
    const auto dot = target.rfind('.');
    const auto last = dot == std::string_view::npos ? target : target.substr(dot + 1);
    if (k == 0) return target_match::none;
    const path_component& c = path.data_[--k];
    if (c.copy ? !is_copy_number(last, c.text) : c.text != last) return target_match::none;
    through_copy = through_copy || c.copy;
    if (dot == std::string_view::npos) return through_copy ? target_match::one_copy : target_match::module;
    target = target.substr(0, dot);
  }
}

/// Appends the dot-separated components of `name`, calling on_prefix() after each but the last
/// (`mlp.0` names a leaf below the module `mlp`).
template <class F>
constexpr void push_components(gpubudget::detail::dyn_array<path_component>& path, std::string_view name, F on_prefix) {
  for (;;) {
    const auto dot = name.find('.');
    path.push_back({name.substr(0, dot), false});
    if (dot == std::string_view::npos) return;
    on_prefix();
    name = name.substr(dot + 1);
  }
}

/// Calls on(record, parts, path) for every module of the model: each named record (parts =
/// all_parts), each projection a leaf's op names (its parts mask), and each module a dotted name
/// passes through (`mlp` of a leaf named `mlp.0`; parts 0), with its module path.
template <class F>
constexpr void for_each_module_path(const layer* records, F on) {
  using gpubudget::detail::numbers_in_its_name;
  gpubudget::detail::dyn_array<path_component> path;
  gpubudget::detail::dyn_array<std::int32_t> open_end, open_size, open_record;  // the records above: subtree end, path size before it
  for (std::int32_t i = 0; i < records[0].span; ++i) {
    for (; open_end.size() > 0 && open_end.back() <= i; open_end.pop_back(), open_size.pop_back(), open_record.pop_back())
      path.resize(static_cast<std::size_t>(open_size.back()));
    const layer& L = records[i];
    // the parts of a repeat whose copies are several numbered modules are named by number alone
    const std::int32_t parent = open_record.size() > 0 ? open_record.back() : -1;
    const bool numbered = parent > 0 && records[parent - 1].kind == node_kind::repeat && gpubudget::detail::modules_per_copy(records[parent - 1]) > 1;
    open_end.push_back(i + L.span), open_size.push_back(static_cast<std::int32_t>(path.size())), open_record.push_back(i);
    if (L.name && *L.name && !numbered) {
      push_components(path, L.name, [&] { on(i, std::uint8_t{0}, path); });
      if (numbers_in_its_name(L)) path.back().copy = true;  // "encoder_layer_": the copies are its modules
      else on(i, gpubudget::detail::all_parts, path);
    }
    std::uint8_t parts = 0;
    std::int32_t k = 0;
    for (std::string_view n; L.kind == node_kind::leaf && L.op && !(n = L.op->part_name(L, k, parts)).empty(); ++k) {
      const auto before = path.size();
      push_components(path, n, [&] { on(i, std::uint8_t{0}, path); });
      on(i, parts, path);
      path.resize(before);
    }
    if (L.kind == node_kind::repeat && !numbers_in_its_name(L)) path.push_back({"", true});
  }
}

/// The attention_adapter_parts of the projections whose weights are `parts` (the op's parameter
/// parts: q 1, k 2, output 4, v 8; GPT-2's c_attn is q and the packed k, v together).
constexpr std::int64_t adapter_parts_of(projection_names names, std::uint8_t parts) {
  if (names == projection_names::gpt2 || names == projection_names::gpt2_q_kv) return ((parts & 3) != 0 ? std::int64_t{adapt_qkv} : 0) | ((parts & 4) != 0 ? std::int64_t{adapt_out} : 0);
  return parts & (adapt_q | adapt_k | adapt_out | adapt_v);
}

/// Adds adapters on the projections `parts` of attention record `r` (Op: attention_op or
/// cross_attention_op).
template <class Op>
constexpr void adapt_projections(layer& r, std::uint8_t parts, const lora_config& l) {
  auto op = gpubudget::detail::unpack_fields<Op>(r);
  const auto had = op.adapters != 0 ? gpubudget::detail::unpack_adapters(op.adapters).parts : 0;
  op.adapters = gpubudget::detail::pack_adapters({l.rank, had | adapter_parts_of(op.names, parts), l.dropout_percent, base_weights::same, l.dora, l.cast_input});
  if constexpr (std::is_same_v<Op, attention_op>) gpubudget::detail::check_adapters(op);  // rotary, nn.MultiheadAttention: said here
  else gpubudget::detail::check_adapters(gpubudget::detail::as_attention(op));
  replace_op(r, as_layer(op));
}

/// PEFT's lora.Conv on a matched convolution: its kernel, stride and padding for lora_A.
constexpr void adapt_conv(layer& r, const lora_config& l) {
  const auto op = gpubudget::detail::unpack_fields<conv_op>(r);
  // PEFT's lora_A takes no dilation; lora_conv's kernel is square (a kernel_w conv is not adapted)
  if (op.dilation != 1 || op.transposed || op.rectangular()) lora_target_cannot_take_an_adapter();
  replace_op(r, lora_conv(op.dims, op.out_channels, op.kernel, op.stride, op.padding, l.rank, l.dropout_percent, op.bias, op.groups, op.channels_last,
                          l.dora));
}

/// PEFT's lora.Embedding on a matched nn.Embedding (no dropout: its forward has none).
constexpr void adapt_embedding(layer& r, const lora_config& l) {
  const auto op = gpubudget::detail::unpack_fields<embedding_op>(r);
  replace_op(r, lora_embedding(op.num_embeddings, op.dim, l.rank, base_weights::same, l.dora));
}

/// Some projections of an attention op a target named (BERT's `self.query`, T5's `q`).
constexpr void adapt_some_projections(layer& r, std::uint8_t parts, const lora_config& l) {
  using gpubudget::detail::op_entry;
  if (r.op == &op_entry<attention_op>::descriptor) return adapt_projections<attention_op>(r, parts, l);
  if (r.op == &op_entry<cross_attention_op>::descriptor) return adapt_projections<cross_attention_op>(r, parts, l);
  lora_target_cannot_take_an_adapter();
}

/// PEFT's lora.MultiheadAttention on a matched nn.MultiheadAttention (torch_mha): adapters on
/// in_proj_weight and out_proj together, merged into the weights for each forward (no DoRA:
/// PEFT raises for it; lora_dropout is never applied on that path).
constexpr void adapt_multihead_attention(layer& r, const lora_config& l) {
  auto op = gpubudget::detail::unpack_fields<attention_op>(r);
  if (!is_torch_mha(op.impl) || l.dora) lora_target_cannot_take_an_adapter();
  op.adapters = gpubudget::detail::pack_adapters({l.rank, adapt_merged, 0, base_weights::same, false, l.cast_input});
  replace_op(r, as_layer(op));
}

/// Did an earlier target wrap leaf `r` whole already (a second name for the same module)?
constexpr bool wrapped_already(const layer& r) {
  using gpubudget::detail::op_entry;
  if (r.op == &op_entry<lora_linear_op>::descriptor) return gpubudget::detail::unpack_fields<lora_linear_op>(r).rank > 0;
  if (r.op == &op_entry<attention_op>::descriptor)
    return (gpubudget::detail::unpack_adapters(gpubudget::detail::unpack_fields<attention_op>(r).adapters).parts & adapt_merged) != 0;
  return r.op == &op_entry<lora_conv_op>::descriptor || r.op == &op_entry<lora_embedding_op>::descriptor;
}

/// PEFT's wrapping of the module a target matched: record `r` whole (parts = all_parts), some
/// projections of its op, or (parts 0) a module its dotted name passes through: not a Linear.
constexpr void adapt_matched(layer& r, std::uint8_t parts, const lora_config& l) {
  using gpubudget::detail::op_entry;
  if (parts == 0 || r.kind != node_kind::leaf) lora_target_cannot_take_an_adapter();
  if (parts != gpubudget::detail::all_parts) return adapt_some_projections(r, parts, l);
  if (wrapped_already(r)) return;
  if (r.op == &op_entry<conv_op>::descriptor) return adapt_conv(r, l);
  if (r.op == &op_entry<embedding_op>::descriptor) return adapt_embedding(r, l);
  if (r.op == &op_entry<attention_op>::descriptor) return adapt_multihead_attention(r, l);
  if (r.op != &op_entry<linear_op>::descriptor) lora_target_cannot_take_an_adapter();
  const auto op = gpubudget::detail::unpack_fields<linear_op>(r);
  if (op.tied) lora_target_cannot_take_an_adapter();
  replace_op(r, lora_linear(op.out_features, l.rank, l.dropout_percent, base_weights::same, l.dora, l.cast_input, op.bias));
}

/// PEFT's ModulesToSaveWrapper on the module a modules_to_save name matched: a Linear becomes
/// saved_linear (its frozen original and a trainable copy).
constexpr void save_matched(layer& r, std::uint8_t parts) {
  using gpubudget::detail::op_entry;
  if (r.kind == node_kind::leaf && r.op == &op_entry<saved_linear_op>::descriptor && parts == gpubudget::detail::all_parts) return;  // named twice
  if (r.kind != node_kind::leaf || r.op != &op_entry<linear_op>::descriptor || parts != gpubudget::detail::all_parts) lora_module_to_save_is_not_a_linear();
  const auto op = gpubudget::detail::unpack_fields<linear_op>(r);
  replace_op(r, saved_linear(op.out_features, base_weights::same, op.tied, op.bias));
}

/// Calls wrap(record, parts) for every module that one of the comma-separated `names` matches
/// (PEFT's list rule); a name that matches nothing, or some copies of a repeat, is an error.
template <std::size_t N, class F>
constexpr void for_each_named_module(model<N>& m, const char* names, F wrap) {
  gpubudget::detail::for_each_list_item(names, [&](const char* b, const char* e) {
    const std::string_view name(b, static_cast<std::size_t>(e - b));
    if (name == "all-linear") lora_all_linear_needs_a_transformers_model();
    bool found = false;
    for_each_module_path(m.records.data(), [&](std::int32_t i, std::uint8_t parts, const auto& path) {
      const auto match = name.empty() ? target_match::none : match_path_end(path, name);
      if (match == target_match::one_copy) lora_target_names_one_copy_of_a_repeat();
      if (match == target_match::none) return;
      wrap(m.records[static_cast<std::size_t>(i)], parts);
      found = true;
    });
    if (!found) lora_target_matches_no_module();
  });
}

/// Does leaf `r` carry adapters or a trainable copy (a trainable part)?
constexpr bool has_adapters(const layer& r) {
  using gpubudget::detail::op_entry;
  if (r.op == &op_entry<saved_linear_op>::descriptor || r.op == &op_entry<lora_conv_op>::descriptor || r.op == &op_entry<lora_embedding_op>::descriptor)
    return true;
  if (r.op == &op_entry<lora_linear_op>::descriptor) return gpubudget::detail::unpack_fields<lora_linear_op>(r).rank > 0;
  if (r.op == &op_entry<attention_op>::descriptor) return gpubudget::detail::unpack_fields<attention_op>(r).adapters != 0;
  if (r.op == &op_entry<cross_attention_op>::descriptor) return gpubudget::detail::unpack_fields<cross_attention_op>(r).adapters != 0;
  return false;
}
}  // namespace detail

/// get_peft_model(model, LoraConfig(r=l.rank, target_modules=[...], lora_dropout, use_dora)) on any
/// model: `target_modules` is PEFT's list, comma-separated (`"qkv,proj"`, `"mlp.fc1,mlp.fc2"`),
/// each name matched as PEFT matches it (the whole module path or its end after a dot). Every
/// matched nn.Linear becomes lora.Linear (a frozen base, bias kept, adapters A [r, in] and B
/// [out, r]); a matched projection of an attention op that names them takes attention_adapters;
/// everything else is frozen. l.layers_to_transform, l.layers_pattern and l.bias must be their defaults. `modules_to_save` (PEFT's LoraConfig.modules_to_save, and what its
/// SEQ_CLS task type adds: `score`, `classifier`): each matched nn.Linear keeps its frozen original
/// beside a trainable copy (saved_linear). l.targets is not read (the names replace it); l.base,
/// l.modules_to_save, l.labels and l.kbit_prepared must be their defaults. The budget's
/// parameter_count is PEFT's "all params" and its trainable_count PEFT's "trainable params":
///
///   constexpr auto vit = models::get_peft_model(models::vit_b_16(224, 1000), "mlp.0,mlp.3", {.rank = 8});
///   static_assert(budget(vit, training{.batch = 64}, devices::t4).trainable_count == 12 * 8 * 2 * (768 + 3072));
template <std::size_t N>
constexpr model<N> get_peft_model(model<N> m, const char* target_modules, const lora_config& l, const char* modules_to_save = nullptr) {
  if (l.base != base_weights::same || l.modules_to_save != 0 || l.labels != 0 || l.kbit_prepared || !l.layers_to_transform.all() || l.layers_pattern ||
      l.bias != peft_bias::none)
    detail::lora_option_not_modelled_on_any_model();
  if (l.rank < 1) gpubudget::detail::lora_rank_must_be_positive_and_at_most_the_layer_width();
  if (target_modules == nullptr) detail::lora_target_matches_no_module();
  detail::for_each_named_module(m, target_modules, [&](layer& r, std::uint8_t parts) { detail::adapt_matched(r, parts, l); });
  if (modules_to_save != nullptr) detail::for_each_named_module(m, modules_to_save, [](layer& r, std::uint8_t parts) { detail::save_matched(r, parts); });
  for (std::int32_t i = 0; i < m.records[0].span; ++i) {
    layer& r = m.records[static_cast<std::size_t>(i)];
    if (r.kind == node_kind::leaf && !detail::has_adapters(r)) r.flags.frozen = true;
  }
  return m;
}

}  // namespace gpubudget::models
