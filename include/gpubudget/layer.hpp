// gpubudget/layer.hpp — the one record every layer and every composition node is stored as.
//
// Models are flat constexpr arrays of `layer` records in pre-order: a composite node (sequence,
// residual, repeat, ...) is followed by its children, and `span` says how many records its
// subtree occupies. Plain records keep the arithmetic a loop over an array instead of template
// recursion over heterogeneous types, which is what makes 1,600-layer graphs cheap to compile.
//
// A leaf record points at the `op_descriptor` of its op: a typed op description (e.g.
// `linear_op{.out_features = 768}`) with named fields, whose `op_traits` specialization — next to
// it, in one header — holds everything known about the op (shape rule and autograd lowering,
// FLOPs, display name). The op's fields travel in the record packed by detail/op_record.hpp; only
// the op's own traits read them back. Adding an op therefore touches one header (see
// docs/architecture.md).
#pragma once
#include <cstdint>
#include <string_view>

#include <gpubudget/shape.hpp>
#include <gpubudget/units.hpp>

namespace gpubudget {

struct layer;

namespace detail {
struct value;
struct layer_ctx;
}  // namespace detail

/// What the library knows about one op, reached from every leaf record that uses it. Built by
/// detail::op_entry<Op> from `op_traits<Op>`; never written by hand.
struct op_descriptor {
  /// Display name for tables (may depend on the op's fields: "linear (tied)").
  const char* (*name)(const layer&);
  /// Shape rule + autograd lowering: what the op allocates, saves and frees, replayed on the
  /// simulator in `ctx` for input `x`; returns the output.
  detail::value (*lower)(detail::layer_ctx& ctx, const detail::value& x);
  /// Forward FLOPs per sample for input shape `in` and output shape `out`.
  std::int64_t (*flops)(const layer&, const shape& in, const shape& out);
  /// Sub-modules one record holds (attention's q_proj, k_proj, ...), which training::train_only
  /// and get_peft_model may select one by one: the k-th one's name relative to the record's
  /// (empty past the last; always empty for most ops; the record's own `part_names` when it has
  /// them), and in `parts` the bits of the lowering's part indices (bit p: the weights of part p)
  /// it stands for.
  std::string_view (*part_name)(const layer&, std::int32_t k, std::uint8_t& parts);
  /// What two occurrences of a shared(id, ...) block must agree on at this record: -1 = the op
  /// owns no weight (a tied linear reads another record's), which pairs with any op; otherwise
  /// both records run the same op with the same signature (a linear's output width; 0 for most).
  std::int64_t (*weight_signature)(const layer&);
  /// A source (the model's input): takes no input tensor.
  bool source = false;
};

/// Structural role of a record.
enum class node_kind : std::uint8_t {
  leaf,      ///< an op (see `op_descriptor`)
  sequence,  ///< children in sequence (also checkpointed / frozen / shared blocks)
  residual,  ///< x + children(x)
  parallel,  ///< every child on the same input, outputs merged
  repeat,    ///< `count` copies of the children in sequence
  encoder_decoder,  ///< two children: the encoder on the input, then the decoder (from its own tokens) with the encoder's output as memory
  modulated,  ///< two children: the modulation (from the enclosing condition), then the body on the input, its condition() the modulation's output
};

/// How the outputs of parallel branches are combined.
enum class merge_kind : std::uint8_t {
  concat,       ///< torch.cat along per-sample dimension 0
  add,          ///< a + b + ... (out of place)
  add_inplace,  ///< first += others (torchvision's `out += identity`): no new tensor
  multiply,     ///< elementwise product
  stack,        ///< torch.stack: a new dimension 0
  matmul,       ///< torch.bmm / torch.matmul of two branches, [n, k] @ [k, m] per sample (SAGAN's, the non-local block's maps)
  subtract,     ///< a - b of two branches (out of place; SubBackward0 negates b's gradient: a new tensor); b may broadcast
  divide,       ///< a / b of two branches, b equal or broadcast (a LayerNorm written out: (x - mean) / (std + eps)); DivBackward0 keeps both
  maximum,      ///< torch.maximum(a, b) of equal shapes (maxout); MaximumBackward0 keeps both
  minimum,      ///< torch.minimum(a, b): the same memory as maximum
  grid_sample,  ///< F.grid_sample(x, grid): x [C, H, W] sampled at grid [h, w, 2] (affine_grid), [C, h, w]; keeps both
  /// the first branch's output passes on; every further branch is an auxiliary head whose output
  /// the trainer holds and adds to the loss (Inception-v3's AuxLogits): graph.hpp auxiliary_output
  auxiliary_output,
  /// as auxiliary_output, the heads run after the model's output, their input held until then
  /// (torchvision FCN's aux_classifier): graph.hpp auxiliary_output_last
  auxiliary_output_last,
  /// a VAE's reparameterized latent z = mu + eps · exp(logvar / 2) of two branches of equal
  /// shapes, the mean and the log-variance, which the trainer holds: the loss adds their KL
  /// divergence from N(0, 1) (the ELBO): graph.hpp gaussian_latent
  gaussian_latent,
};

/// Does `m` make a parallel's further branches auxiliary heads (graph.hpp auxiliary_output)?
constexpr bool is_auxiliary(merge_kind m) { return m == merge_kind::auxiliary_output || m == merge_kind::auxiliary_output_last; }
/// Does `m` hand the trainer tensors its loss reads besides the model's output?
constexpr bool holds_an_output(merge_kind m) { return is_auxiliary(m) || m == merge_kind::gaussian_latent; }

/// Flags a composition can carry.
struct node_flags {
  bool checkpoint = false;  ///< re-materialize this block in backward (non-reentrant checkpoint)
  bool frozen = false;      ///< parameters of this block do not require grad
  /// repeat only: its copies continue the enclosing sequence, as in nn.Sequential(B0, B1, B2)
  /// modelled sequential(B0, repeat(2, B)): while copy k runs only copy k-1's output is held,
  /// not the repeat's input (see continue_sequence() in graph.hpp).
  bool continues_sequence = false;
  /// sequence only: under training::checkpoint_blocks each of its parts is a block of its own, not
  /// the sequence as one (a repeat's copy of several decoder layers: Gemma 3's period of six,
  /// which transformers checkpoints layer by layer)
  bool parts_are_blocks = false;
  /// sequence only: its parts are steps of one loop of the model's (transformers' `for decoder_layer
  /// in self.layers`) that the walk grouped (a period of alternating layers): the group holds no input
  /// of its own while its parts run (walker::flat_copies)
  bool loop_steps = false;
};

/// Capacity of a record's op fields, in 8-byte words (the largest op, attention, has 12).
inline constexpr std::size_t max_op_fields = 12;

struct layer {
  node_kind kind = node_kind::leaf;
  std::int32_t span = 1;                      ///< records in this subtree, itself included
  const op_descriptor* op = nullptr;          ///< leaves: the op
  std::int64_t fields[max_op_fields] = {};    ///< leaves: the op's fields as words (op_record.hpp)
  std::int64_t count = 1;                     ///< repeat: number of copies
  merge_kind merge = merge_kind::concat;      ///< parallel / residual: how outputs combine
  node_flags flags{};
  std::int32_t share_id = 0;                  ///< >0: parameters shared by every subtree with this id
  const char* name = nullptr;                 ///< optional display / module name
  /// leaves: the model's own names of the op's sub-modules, comma-separated in the order of the
  /// op's part names, replacing them (parts_named: an exported attention's q, k, v, output Linears)
  const char* part_names = nullptr;
};

}  // namespace gpubudget
