// gpubudget/graph.hpp — composing layers into a model: sequential, residual, parallel, repeat,
// checkpointed, frozen and weight-shared blocks.
//
// A `model<N>` is a flat array of N records (see layer.hpp). Boost.Hana is used at the typed
// front end only: here, to splice heterogeneous arguments (layer records, typed op descriptions
// and sub-models of any size) into one array, and in detail/op_record.hpp, to pack a typed op's
// named fields into its record; everything downstream is loops over that array. `repeat<K>(block)`
// stores the block once plus a count, so it costs what one block costs to compile.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget {

/// A model (or block): N layer records in pre-order.
template <std::size_t N>
struct model {
  std::array<layer, N> records{};
  static constexpr std::size_t size = N;
};

namespace detail {
template <class T> struct record_count;
template <> struct record_count<layer> : std::integral_constant<std::size_t, 1> {};
template <std::size_t N> struct record_count<model<N>> : std::integral_constant<std::size_t, N> {};
template <op_description Op> struct record_count<Op> : std::integral_constant<std::size_t, 1> {};

/// What a composition accepts: a layer record, a typed op description, or a sub-model.
template <class T>
concept block_part = requires { record_count<std::remove_cvref_t<T>>::value; };

/// Sum of record counts, as a loop (a fold expression over hundreds of arguments trips
/// Clang 14's bracket-depth limit).
template <class... Parts>
constexpr std::size_t total_records() {
  constexpr std::size_t counts[] = {std::size_t{0}, record_count<std::remove_cvref_t<Parts>>::value...};
  std::size_t n = 0;
  for (auto c : counts) n += c;
  return n;
}

/// A composite record `head` followed by every part's records. A sub-model may leave records
/// past its root's span unused (models::lora_stack's room for layer runs): only the span is
/// copied, and the unused records gather at the end, past the new root's span (never walked).
template <class... Parts>
constexpr model<1 + total_records<Parts...>()> compose(layer head, const Parts&... parts) {
  model<1 + total_records<Parts...>()> m{};
  std::size_t at = 1;
  boost::hana::for_each(boost::hana::make_tuple(parts...), [&](const auto& part) {
    using part_type = std::remove_cvref_t<decltype(part)>;
    if constexpr (std::is_same_v<part_type, layer>) {
      m.records[at++] = part;
    } else if constexpr (op_description<part_type>) {
      m.records[at++] = as_layer(part);
    } else if constexpr (part_type::size > 0) {
      const auto span = part.records[0].span;  // a leaf's may be 0: it is one record
      const auto used = span >= 1 && static_cast<std::size_t>(span) < part_type::size ? static_cast<std::size_t>(span) : part_type::size;
      for (std::size_t i = 0; i < used; ++i) m.records[at++] = part.records[i];
    }
  });
  head.span = static_cast<std::int32_t>(at);
  m.records[0] = head;
  return m;
}

constexpr layer composite(node_kind kind) { layer l{}; l.kind = kind; return l; }
}  // namespace detail

/// Runs parts one after another (nn.Sequential).
template <detail::block_part... Parts>
constexpr auto sequential(const Parts&... parts) { return detail::compose(detail::composite(node_kind::sequence), parts...); }

/// y = x + block(x): the parts run in sequence on x, then an out-of-place add.
template <detail::block_part... Parts>
constexpr auto residual(const Parts&... parts) { return detail::compose(detail::composite(node_kind::residual), parts...); }

/// out = block(x); out += x — the in-place residual of torchvision's ResNet and ConvNeXt blocks
/// (no new tensor for the sum).
template <detail::block_part... Parts>
constexpr auto residual_inplace(const Parts&... parts) {
  layer head = detail::composite(node_kind::residual);
  head.merge = merge_kind::add_inplace;
  return detail::compose(head, parts...);
}

/// Every branch runs on the same input, in order; outputs are merged (concat on dimension 0,
/// add, add in place into the first, multiply, stack as a new dimension 0, or matmul: the
/// batched product of exactly two branches, [n, k] @ [k, m] per sample, as torch.bmm). Use
/// sequential(...) for a multi-layer branch and sequential() for the identity.
template <detail::block_part... Branches>
constexpr auto parallel(merge_kind merge, const Branches&... branches) {
  layer head = detail::composite(node_kind::parallel);
  head.merge = merge;
  return detail::compose(head, branches...);
}

/// An auxiliary head trained with its own loss (Inception-v3's AuxLogits, GoogLeNet's aux1 and
/// aux2, deep supervision): the head's parts run on x and x passes on unchanged. The trainer holds
/// the head's output with the model's and adds its loss, `loss = loss(out) + w * loss(aux)` (the
/// training plan's loss kind; the weight is a scalar and costs nothing), so the head's saved
/// tensors and its output's gradient live through backward until the engine reaches the head.
/// It runs in inference too, its output held to the end of forward (an overestimate for models
/// that skip the head in eval(), as torchvision's Inception-v3 and GoogLeNet do: at most the head's
/// own activations). gpubudget-export writes it for a model that returns (out, aux, ...).
template <detail::block_part... Parts>
constexpr auto auxiliary_output(const Parts&... parts) {
  return parallel(merge_kind::auxiliary_output, sequential(), sequential(parts...));
}

/// auxiliary_output whose head runs after the model's output (torchvision FCN's and DeepLabV3's
/// aux_classifier with aux_loss=True: the backbone's layer3 features wait in its dict while layer4
/// and the classifier run): x is held until then; the head's nodes come last, so backward runs
/// them first.
template <detail::block_part... Parts>
constexpr auto auxiliary_output_last(const Parts&... parts) {
  return parallel(merge_kind::auxiliary_output_last, sequential(), sequential(parts...));
}

/// A VAE's reparameterized latent (pytorch/examples' VAE, AntixK/PyTorch-VAE's VanillaVAE): `mu`
/// and `logvar` run on x (fc_mu and fc_var; each a layer or a sequential) and must give the same
/// shape; the block's output is z = mu + eps · exp(logvar / 2), eps = randn_like (no gradient).
/// The model returns (recon, mu, logvar): the trainer holds mu and logvar with its output, and
/// the loss adds pytorch/examples' KL term, -0.5 · sum(1 + logvar - mu² - exp(logvar)), after the
/// reconstruction term (the training plan's loss kind). Autograd keeps eps and exp(logvar / 2)
/// for z, mu and exp(logvar) for the KL term (detail/variational.hpp; op_rules.md 2.6 #75).
/// gpubudget-export writes it for a model that returns (out, mu, logvar) with z computed so.
template <detail::block_part Mu, detail::block_part LogVar>
constexpr auto gaussian_latent(const Mu& mu, const LogVar& logvar) {
  return parallel(merge_kind::gaussian_latent, mu, logvar);
}

/// `count` distinct copies of a block in sequence (each with its own weights). The block must
/// keep its input's shape.
template <detail::block_part... Parts>
constexpr auto repeat(std::int64_t count, const Parts&... parts) {
  if (count < 1) detail::repeat_count_must_be_positive();
  layer head = detail::composite(node_kind::repeat);
  head.count = count;
  return detail::compose(head, parts...);
}
template <std::int64_t Count, detail::block_part... Parts>
constexpr auto repeat(const Parts&... parts) {
  static_assert(Count >= 1, "repeat<N> needs N >= 1");
  return repeat(Count, parts...);
}

namespace detail {
/// How many parts composite record `records[i]` holds (its direct children).
constexpr std::int64_t part_count(const layer* records, std::size_t i) {
  std::int64_t parts = 0;
  for (std::size_t k = i + 1; k < i + static_cast<std::size_t>(records[i].span); k += static_cast<std::size_t>(records[k].span)) ++parts;
  return parts;
}

/// numbered_from's numbering on a repeat's own record (a composite record's op fields are free;
/// detail/module_names.hpp reads them). The caller checks `modules_per_copy` against the body.
constexpr void number_copies(layer& repeat_head, std::int64_t first, std::int64_t modules_per_copy) {
  if (repeat_head.kind != node_kind::repeat || first < 0 || modules_per_copy < 1) invalid_layer_argument();
  repeat_head.fields[0] = first;
  repeat_head.fields[1] = modules_per_copy;
}
}  // namespace detail

/// Numbers a repeat's copies from `first` instead of 0, below the repeat's name or else below
/// the enclosing name: torchvision's layer4 = Sequential(block 0, block 1, block 2) is
/// named("layer4", sequential(named("0", block_down), numbered_from(1, repeat(2, block)))), so
/// `layer4.2` is the repeat's copy 1. A repeat whose name ends in '_' puts the number in that
/// component: named("encoder.layers.encoder_layer_", repeat(12, b)) has `encoder_layer_11`.
/// `modules_per_copy` > 1: each copy is that many consecutive modules of the enclosing
/// nn.Sequential (the parts of the one sequential(...) block repeated): VGG's repeat(2,
/// sequential(conv, relu)) after module 4 is numbered_from(5, ..., 2), modules 5..8.
template <std::size_t N>
constexpr model<N> numbered_from(std::int64_t first, model<N> m, std::int64_t modules_per_copy = 1) {
  const auto& body = m.records[N > 1 ? 1 : 0];
  const bool one_block = N > 1 && body.span + 1 == m.records[0].span && body.kind == node_kind::sequence;
  if (modules_per_copy > 1 && (!one_block || detail::part_count(m.records.data(), 1) != modules_per_copy)) detail::invalid_layer_argument();
  detail::number_copies(m.records[0], first, modules_per_copy);
  return m;
}

/// A repeat whose copies are further blocks of the enclosing nn.Sequential, not a nested
/// module: torchvision's layer1 = Sequential(Bottleneck-with-downsample, Bottleneck, Bottleneck)
/// is sequential(bottleneck_down, continue_sequence(repeat(2, bottleneck))). The sequence
/// drops its reference to the repeat's input after the first copy, as PyTorch's loop
/// `for module in self: input = module(input)` does (what a frozen backbone's forward peak sees);
/// copies of several modules each (numbered_from's modules_per_copy > 1: locuslab/TCN's
/// [Conv1d, Chomp1d, ReLU, Dropout] runs) are that loop's modules too: each copy's input is
/// dropped after its first module.
template <std::size_t N>
constexpr model<N> continue_sequence(model<N> m) {
  if (m.records[0].kind != node_kind::repeat) detail::invalid_layer_argument();
  m.records[0].flags.continues_sequence = true;
  return m;
}

/// Gradient checkpointing (torch.utils.checkpoint, non-reentrant): keeps only the block's input
/// in forward and re-runs the block in backward.
template <detail::block_part... Parts>
constexpr auto checkpointed(const Parts&... parts) {
  layer head = detail::composite(node_kind::sequence);
  head.flags.checkpoint = true;
  return detail::compose(head, parts...);
}

/// Parameters do not require grad (requires_grad_(False)); the block saves nothing for backward
/// unless a gradient must flow through it to a trainable layer before it.
template <detail::block_part... Parts>
constexpr auto frozen(const Parts&... parts) {
  layer head = detail::composite(node_kind::sequence);
  head.flags.frozen = true;
  return detail::compose(head, parts...);
}

/// Weight sharing: every `shared(id, ...)` with the same id applies the *same* parameters.
/// Parameters and their gradients are counted once; activations once per application. The
/// blocks must have the same structure (the first occurrence defines the parameters).
template <detail::block_part... Parts>
constexpr auto shared(std::int32_t id, const Parts&... parts) {
  layer head = detail::composite(node_kind::sequence);
  head.share_id = id;
  return detail::compose(head, parts...);
}

/// An encoder-decoder (T5): `encoder` runs on the model's input; `decoder` starts from its own
/// tokens(...) and its cross_attention(...) layers attend to the encoder's output. The output
/// is the decoder's.
template <detail::block_part Encoder, detail::block_part Decoder>
constexpr auto encoder_decoder(const Encoder& encoder, const Decoder& decoder) {
  return detail::compose(detail::composite(node_kind::encoder_decoder), encoder, decoder);
}

/// A model with a conditioning input (a diffusion U-Net's `forward(x, t)`, a class-conditional
/// generator's `forward(z, y)`): `condition` runs first from its own input(...) (the timestep
/// embedding's MLP on the sinusoidal features, a class embedding) and its output stays alive while
/// `model` runs from its own input(...); `condition()` branches inside `model` read it. The output
/// is the model's. Walked as encoder_decoder: the condition is the memory.
template <detail::block_part Condition, detail::block_part Model>
constexpr auto conditioned(const Condition& condition, const Model& model) {
  return detail::compose(detail::composite(node_kind::encoder_decoder), condition, model);
}

/// A block modulated by its own projection of the condition (DiT's adaLN: `shift, scale, gate =
/// self.adaLN_modulation(c).chunk(...)`, guided diffusion's scale-shift norm): `modulation` runs
/// first, from the enclosing conditioned(...)'s condition() (`sequential(condition(), silu(),
/// linear(6 * D))`), then `body` on the block's input, where condition() reads the modulation's
/// output (chunk(...) of it the shift, scale and gate vectors). The output is the body's; the
/// modulation's output lives while anything keeps it (a gate's product keeps its chunk, a view).
template <detail::block_part Modulation, detail::block_part Body>
constexpr auto modulated(const Modulation& modulation, const Body& body) {
  return detail::compose(detail::composite(node_kind::modulated), modulation, body);
}

/// Gives a block (or layer) its module name, relative to the nearest named block around it, as
/// PyTorch names submodules: named("layer4", sequential(named("0", block), ...)) is `layer4.0`;
/// a name may hold several components ("encoder.ln"). training::train_only selects records by
/// these names (detail/module_names.hpp); tables print them.
template <std::size_t N>
constexpr model<N> named(const char* name, model<N> m) { m.records[0].name = name; return m; }
constexpr layer named(const char* name, layer l) { l.name = name; return l; }

/// Gives a leaf's sub-modules the model's own names, comma-separated in the order of the op's
/// part names (relative to the leaf's name), as PyTorch names them: an attention whose four
/// Linears are `attn.query`, `attn.key`, `attn.value`, `attn.proj` is
/// named("attn", parts_named("query,key,value,proj", attention(D, heads(H), attention_impl::separate_qkv_sdpa,
/// projection_names::separate))). training::train_only and models::get_peft_model select them by
/// these names; gpubudget-export writes them. `names` must outlive the model (a literal).
constexpr layer parts_named(const char* names, layer l) {
  if (names == nullptr || l.op == nullptr || l.part_names != nullptr) detail::parts_named_lists_another_number_of_parts();
  std::int32_t own = 0, listed = 1;
  std::uint8_t parts = 0;
  while (!l.op->part_name(l, own, parts).empty()) ++own;
  for (const char* c = names; *c; ++c) listed += *c == ',';
  for (std::int32_t k = 0; k < listed; ++k)
    if (detail::nth_listed(names, k).empty()) detail::parts_named_lists_another_number_of_parts();
  if (listed != own) detail::parts_named_lists_another_number_of_parts();
  l.part_names = names;
  return l;
}

namespace detail {
/// "0" .. "99": the names indexed() gives (static storage, usable in constant expressions).
struct module_number_texts {
  char text[100][3]{};
};
inline constexpr module_number_texts module_numbers = [] {
  module_number_texts t{};
  for (int k = 0; k < 100; ++k) {
    t.text[k][0] = static_cast<char>(k < 10 ? '0' + k : '0' + k / 10);
    t.text[k][1] = k < 10 ? '\0' : static_cast<char>('0' + k % 10);
  }
  return t;
}();
}  // namespace detail

/// Names a block (or layer) by its position `index` (0..99) in the enclosing nn.Sequential, as
/// PyTorch does: torchvision VGG's features.0 (a conv), features.4 (a pooling).
template <std::size_t N>
constexpr model<N> indexed(std::int64_t index, model<N> m) {
  if (index < 0 || index >= 100) detail::invalid_layer_argument();
  return named(detail::module_numbers.text[index], m);
}
constexpr layer indexed(std::int64_t index, layer l) {
  if (index < 0 || index >= 100) detail::invalid_layer_argument();
  return named(detail::module_numbers.text[index], l);
}

}  // namespace gpubudget
