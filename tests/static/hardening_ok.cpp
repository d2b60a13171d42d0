// Twins of the issue-C must-not-compile tests in tests/fail/ (the same models and plans with
// the one argument made valid): each compiles, so each failing twin fails for its own reason.
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/peft.hpp>

namespace {
using namespace gpubudget;

// micro_batch_not_dividing
constexpr auto micro_batch_not_dividing_m = sequential(input(512), linear(256), relu(), linear(10));
static_assert(budget_totals(micro_batch_not_dividing_m, training{.batch = 8, .micro_batch = 4}, devices::generic_16gb).parameter_count >= 0);

// micro_batch_negative
constexpr auto micro_batch_negative_m = sequential(input(512), linear(256), relu(), linear(10));
static_assert(budget_totals(micro_batch_negative_m, training{.batch = 8, .micro_batch = 2}, devices::generic_16gb).parameter_count >= 0);

// batch_zero
constexpr auto batch_zero_m = sequential(input(512), linear(256), relu(), linear(10));
static_assert(budget_totals(batch_zero_m, training{.batch = 1}, devices::generic_16gb).parameter_count >= 0);

// fragmentation_percent_high
constexpr auto fragmentation_percent_high_m = sequential(input(512), linear(256), relu(), linear(10));
static_assert(budget_totals(fragmentation_percent_high_m, training{.batch = 8, .fragmentation_percent = 100}, devices::generic_16gb).parameter_count >= 0);

// fragmentation_percent_negative
constexpr auto fragmentation_percent_negative_m = sequential(input(512), linear(256), relu(), linear(10));
static_assert(budget_totals(fragmentation_percent_negative_m, training{.batch = 8, .fragmentation_percent = 0}, devices::generic_16gb).parameter_count >= 0);

// dropout_percent_high
constexpr auto dropout_percent_high_m = sequential(input(512), linear(256), dropout(100), linear(10));
static_assert(budget_totals(dropout_percent_high_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// attention_dropout_negative
constexpr auto attention_dropout_negative_m = sequential(input(16, 64), attention(64, heads(4), attention_dropout(10)));
static_assert(budget_totals(attention_dropout_negative_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// heads_zero
constexpr auto heads_zero_m = sequential(input(16, 64), attention(64, heads(1)));
static_assert(budget_totals(heads_zero_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// kv_heads_negative
constexpr auto kv_heads_negative_m = sequential(input(16, 64), attention(64, heads(4), kv_heads(2)));
static_assert(budget_totals(kv_heads_negative_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// kv_tokens_negative
constexpr auto kv_tokens_negative_m = sequential(input(16, 64), attention(64, heads(4), kv_tokens(0)));
static_assert(budget_totals(kv_tokens_negative_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// kernel_zero
constexpr auto kernel_zero_m = sequential(input(3, 32, 32), conv2d(16, 1), relu());
static_assert(budget_totals(kernel_zero_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// stride_zero
constexpr auto stride_zero_m = sequential(input(3, 32, 32), conv2d(16, 3), max_pool2d(2, stride(2)));
static_assert(budget_totals(stride_zero_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// window_zero
constexpr auto window_zero_m = sequential(input(8, 8, 32), window_attention(heads(2), 4));
static_assert(budget_totals(window_zero_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// vocabulary_zero
constexpr auto vocabulary_zero_m = sequential(tokens(16), embedding(100, 64), linear(10));
static_assert(budget_totals(vocabulary_zero_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// sequence_zero
constexpr auto sequence_zero_m = sequential(tokens(1), embedding(100, 64), linear(10));
static_assert(budget_totals(sequence_zero_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// input_dimension_zero
constexpr auto input_dimension_zero_m = sequential(input(3, 1, 32), conv2d(16, 1));
static_assert(budget_totals(input_dimension_zero_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// sequence_longer_than_positions
constexpr auto sequence_longer_than_positions_m = sequential(tokens(128), embedding(100, 64), learned_positions(128), linear(10));
static_assert(budget_totals(sequence_longer_than_positions_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// repeat_count_zero
constexpr auto repeat_count_zero_m = sequential(input(64), repeat(1, linear(64), relu()));
static_assert(budget_totals(repeat_count_zero_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// permute_repeated_axis
constexpr auto permute_repeated_axis_m = sequential(input(3, 8, 8), permute(1, 2, 0), linear(10));
static_assert(budget_totals(permute_repeated_axis_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// empty_model
constexpr auto empty_model_m = sequential(input(8));
static_assert(budget_totals(empty_model_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// second_input
constexpr auto second_input_m = sequential(input(64), linear(64), linear(64), linear(10));
static_assert(budget_totals(second_input_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// shared_different_block
constexpr auto shared_different_block_m = sequential(input(64), shared(1, linear(64), relu()), shared(1, linear(64), relu()), linear(10));
static_assert(budget_totals(shared_different_block_m, training{.batch = 8}, devices::generic_16gb).parameter_count >= 0);

// train_only_typo
constexpr auto train_only_typo_m = sequential(input(64), named("body", sequential(linear(64), relu())), named("head", linear(10)));
static_assert(budget_totals(train_only_typo_m, training{.batch = 8, .train_only = "head"}, devices::generic_16gb).parameter_count >= 0);

// train_only_empty_item
constexpr auto train_only_empty_item_m = sequential(input(64), named("body", sequential(linear(64), relu())), named("head", linear(10)));
static_assert(budget_totals(train_only_empty_item_m, training{.batch = 8, .train_only = "head,body"}, devices::generic_16gb).parameter_count >= 0);

// train_only_copy_out_of_range: one copy of a repeated block, and one module inside it (64·64 + 64)
constexpr auto train_only_copy_out_of_range_m = sequential(input(64), named("blocks", repeat(3, named("fc", linear(64)), relu())), named("head", linear(10)));
static_assert(budget_totals(train_only_copy_out_of_range_m, training{.batch = 8, .train_only = "blocks.2"}, devices::generic_16gb).trainable_count == 4160);
static_assert(budget_totals(train_only_copy_out_of_range_m, training{.batch = 8, .train_only = "blocks.0.fc,blocks.2.fc"}, devices::generic_16gb).trainable_count == 2 * 4160);
static_assert(budget_totals(train_only_copy_out_of_range_m, training{.batch = 8, .train_only = "blocks"}, devices::generic_16gb).trainable_count == 3 * 4160);

// train_only_unknown_part: GPT-2's attention parts; c_attn = q (64·64 + 64) and kv (64·128 + 128)
constexpr auto train_only_unknown_part_m = sequential(input(8, 64), named("attn", attention(64, heads(4), projection_names::gpt2)), named("head", linear(10)));
static_assert(budget_totals(train_only_unknown_part_m, training{.batch = 2, .train_only = "attn.c_attn"}, devices::generic_16gb).trainable_count == 64 * 192 + 192);
static_assert(budget_totals(train_only_unknown_part_m, training{.batch = 2, .train_only = "attn.c_proj"}, devices::generic_16gb).trainable_count == 64 * 64 + 64);

// projection_names_misfit: Llama's names on rotary flash attention; q_proj 64·64 (no biases)
constexpr auto projection_names_misfit_m =
    sequential(input(8, 64), named("self_attn", attention(64, heads(4), attention_impl::flash, rotary, no_bias, projection_names::llama)));
static_assert(budget_totals(projection_names_misfit_m, training{.batch = 2, .train_only = "self_attn.q_proj"}, devices::generic_16gb).trainable_count == 64 * 64);

// qkv_bias_on_torch_mha: nn.MultiheadAttention with no_bias, and qkv_bias(false) on an attention
// that can drop the q, k, v biases alone: in_proj 3·64·64, out_proj 64·64 (no biases), and
// 4·64·64 + 64 (the output's bias only)
static_assert(budget_totals(sequential(input(8, 64), attention(64, heads(4), attention_impl::torch_mha, no_bias, qkv_bias(false))),
                            training{.batch = 2}, devices::generic_16gb).parameter_count == 4 * 64 * 64);
static_assert(budget_totals(sequential(input(8, 64), attention(64, heads(4), attention_impl::separate_qkv, qkv_bias(false))),
                            training{.batch = 2}, devices::generic_16gb).parameter_count == 4 * 64 * 64 + 64);

// matmul_of_branches_needs_two_matrices: x @ xᵀ of a [16, 64] sample, [16, 16] (bilinear pooling)
static_assert(budget(sequential(input(16, 64), parallel(merge_kind::matmul, sequential(), transpose(0, 1))), training{.batch = 2},
                     devices::generic_16gb).per_record[2].output.numel() == 16 * 16);

// binary_merge_needs_two_branches: x / (std(x) + eps) of a [16, 64] sample keeps x's shape
static_assert(budget(sequential(input(16, 64), linear(64), parallel(merge_kind::divide, sequential(), sequential(std_over(1, 1, keepdim), scale()))),
                     training{.batch = 2}, devices::generic_16gb).per_record[3].output.numel() == 16 * 64);

// grid_sample_needs_an_image_and_a_grid: the image [1, 28, 28] at the grid affine_grid(14, 14) makes of a
// per-sample [2, 3] theta: [1, 14, 14]
static_assert(budget(sequential(input(1, 28, 28), parallel(merge_kind::grid_sample, sequential(),
                                                           sequential(flatten(), linear(6), reshape(2, 3), affine_grid(14, 14)))),
                     training{.batch = 2}, devices::generic_16gb).per_record[2].output.numel() == 14 * 14);

// auxiliary_output_needs_a_head: the main branch and one head; the head's Linear(64, 10) counts
static_assert(budget_totals(sequential(input(16, 64), linear(64), parallel(merge_kind::auxiliary_output, sequential(), sequential(linear(10))), linear(10)),
                            training{.batch = 2}, devices::generic_16gb).parameter_count == (64 * 64 + 64) + 2 * (64 * 10 + 10));

// condition_outside_conditioned: inside conditioned(...) the branch reads the condition [8]: the
// condition's Linear(8, 8) and the branch's Linear(8, 16) count with the convolution
static_assert(budget_totals(conditioned(sequential(input(8), linear(8)),
                                        sequential(input(4, 8, 8), conv2d(16, 3, padding(1)),
                                                   parallel(merge_kind::add, sequential(), sequential(condition(8), linear(16), reshape(16, 1, 1))))),
                            training{.batch = 2}, devices::generic_16gb).parameter_count == (8 * 8 + 8) + (8 * 16 + 16) + (4 * 16 * 9 + 16));

// cross_attention_memory_width_differs: kv_width(768) names the text states' width; q and the output
// from 64, k and v from 768
static_assert(budget_totals(conditioned(sequential(input(77, 768)), sequential(input(16, 64), cross_attention(64, heads(4), kv_tokens(77), kv_width(768)))),
                            training{.batch = 2}, devices::generic_16gb).parameter_count == (64 * 64 + 64) * 2 + 2 * (768 * 64 + 64));

// gaussian_latent_branches_differ: fc_mu and fc_var both give the 20 latent values
static_assert(budget_totals(sequential(input(784), linear(400), relu(), gaussian_latent(linear(20), linear(20)), linear(784)),
                            training{.batch = 2}, devices::generic_16gb).parameter_count == (784 * 400 + 400) + 2 * (400 * 20 + 20) + (20 * 784 + 784));

// attention_masks_need_torch_mha_self_attention: the causal and key padding masks on nn.MultiheadAttention
// (attention_impl::torch_mha): its in_proj and out_proj, 4·64·64 + 4·64, and the layer norm's 2·64
static_assert(budget_totals(sequential(input(32, 64), residual(layer_norm(), attention(64, heads(4), attention_impl::torch_mha, causal_mask, key_padding_mask))),
                            training{.batch = 8}, devices::generic_16gb).parameter_count == 4 * 64 * 64 + 4 * 64 + 2 * 64);

// sequence_first_needs_torch_mha: nn.MultiheadAttention(batch_first=False), need_weights=False and True, with
// the causal mask (in_proj and out_proj 4·64·64 + 4·64, the layer norm's 2·64)
static_assert(budget_totals(sequential(input(32, 64), residual(layer_norm(), attention(64, heads(4), attention_impl::torch_mha, causal_mask, sequence_first))),
                            training{.batch = 8}, devices::generic_16gb).parameter_count == 4 * 64 * 64 + 4 * 64 + 2 * 64);
static_assert(budget_totals(sequential(input(32, 64), attention(64, heads(4), attention_impl::torch_mha_weights, sequence_first)), training{.batch = 8},
                            devices::generic_16gb).parameter_count == 4 * 64 * 64 + 4 * 64);
static_assert(budget_totals(sequential(input(32, 64), attention(64, heads(4), attention_impl::torch_mha, kv_tokens(77), sequence_first)), training{.batch = 8},
                            devices::generic_16gb).parameter_count == 4 * 64 * 64 + 4 * 64);  // across two tensors (nn.TransformerDecoderLayer's)

// memory_mask_needs_torch_mha: nn.TransformerDecoderLayer's multihead_attn with memory_key_padding_mask, batch and
// sequence first (the encoder's Linear 64·64 + 64, the cross-attention's in_proj and out_proj 4·64·64 + 4·64)
static_assert(budget_totals(sequential(encoder_decoder(sequential(input(48, 64), linear(64)),
                                                       sequential(input(32, 64), cross_attention(64, heads(4), kv_tokens(48), attention_impl::torch_mha,
                                                                                                 key_padding_mask)))),
                            training{.batch = 8}, devices::generic_16gb).parameter_count == 64 * 64 + 64 + 4 * 64 * 64 + 4 * 64);
static_assert(budget_totals(sequential(encoder_decoder(sequential(input(48, 64), linear(64)),
                                                       sequential(input(32, 64), cross_attention(64, heads(4), kv_tokens(48), attention_impl::torch_mha,
                                                                                                 sequence_first, key_padding_mask)))),
                            training{.batch = 8}, devices::generic_16gb).parameter_count == 64 * 64 + 64 + 4 * 64 * 64 + 4 * 64);

// torch_mha_cross_attention_needs_sdpa: nn.MultiheadAttention over 77 other tokens with need_weights=False
// (in_proj 3·64·64 + 3·64 split into q and kv, out_proj 64·64 + 64)
static_assert(budget_totals(sequential(input(32, 64), attention(64, heads(4), attention_impl::torch_mha, kv_tokens(77))), training{.batch = 8},
                            devices::generic_16gb).parameter_count == 4 * 64 * 64 + 4 * 64);

// parts_named_count: the four names of the four projections; the output projection `proj` alone
// trains (64·64 + 64)
constexpr auto parts_named_count_m = sequential(
    input(8, 64), named("attn", parts_named("query,key,value,proj", attention(64, heads(4), attention_impl::separate_qkv_sdpa, projection_names::separate))));
static_assert(budget_totals(parts_named_count_m, training{.batch = 2, .train_only = "attn.proj"}, devices::generic_16gb).trainable_count == 64 * 64 + 64);

// conv_kernel_larger_than_input: the kernel fits once padded (4 + 2·2 >= 7)
static_assert(budget_totals(sequential(input(3, 4, 4), conv2d(8, 7, padding(2))), training{.batch = 8}, devices::generic_16gb).parameter_count == 8 * 3 * 49 + 8);

// pooling_window_larger_than_input: a window as large as the map gives 1x1
static_assert(budget_totals(sequential(input(3, 3, 3), max_pool2d(3, stride(2)), flatten(), linear(2)), training{.batch = 8}, devices::generic_16gb).parameter_count == 3 * 2 + 2);

// unfold_kernel_larger_than_input
static_assert(budget_totals(sequential(input(4, 5, 5), unfold(5)), training{.batch = 8}, devices::generic_16gb).parameter_count == 0);

// patch_larger_than_image
static_assert(budget_totals(sequential(input(3, 16, 16), patch_embedding(64, 16)), training{.batch = 8}, devices::generic_16gb).parameter_count > 0);

// embedding_on_float_input
static_assert(budget_totals(sequential(tokens(32), embedding(1000, 64)), training{.batch = 8}, devices::generic_16gb).parameter_count == 64000);

// device_capacity_zero
static_assert(budget_totals(sequential(input(512), linear(256), relu(), linear(10)), training{.batch = 8}, custom_device("one GiB", GiB)).parameter_count >= 0);

// device_context_negative
static_assert(budget_totals(sequential(input(512), linear(256), relu(), linear(10)), training{.batch = 8}, custom_device("odd", 16 * GB, 0)).parameter_count >= 0);

// fits_percent
static_assert(fits(budget_totals(sequential(input(512), linear(256), relu(), linear(10)), training{.batch = 8}, devices::generic_16gb), 100));

// max_micro_batch_bounds
static_assert(max_micro_batch(sequential(input(512), linear(256), relu(), linear(10)), training{.batch = 8}, devices::generic_16gb,
                              batch_bounds{8, 64}) == 64);

}  // namespace

// Issue G item 5: the twins of the misuses PyTorch refuses.
namespace {
using namespace gpubudget;
// conv_transpose_output_padding: output_padding 1 below stride 2 is valid ([8,16,16] -> [16,32,32])
constexpr auto conv_transpose_output_padding_m = sequential(input(8, 16, 16), conv_transpose2d(16, 3, stride(2), padding(1), output_padding(1)));
static_assert(budget_totals(conv_transpose_output_padding_m, training{.batch = 8}, devices::generic_16gb).parameter_count == 8 * 16 * 9 + 16);
// pooling_padding_over_half_kernel: padding 1 of a 3-window is half the kernel
constexpr auto pooling_padding_over_half_kernel_m = sequential(input(3, 32, 32), max_pool2d(3, stride(2), padding(1)));
static_assert(budget_totals(pooling_padding_over_half_kernel_m, training{.batch = 8}, devices::generic_16gb).parameter_count == 0);
// linear_on_token_ids: an embedding between the ids and the linear
constexpr auto linear_on_token_ids_m = sequential(tokens(128), embedding(1000, 32), linear(64));
static_assert(budget_totals(linear_on_token_ids_m, training{.batch = 8}, devices::generic_16gb).parameter_count == 1000 * 32 + 32 * 64 + 64);
// bf16_on_v100: said to be emulated, or on an Ampere GPU
constexpr auto bf16_on_v100_m = sequential(input(512), linear(256), relu(), linear(10));
static_assert(budget_totals(bf16_on_v100_m, training{.batch = 8, .precision = amp_bf16, .emulated_bf16 = true}, devices::v100_16gb).parameter_count > 0);
static_assert(budget_totals(bf16_on_v100_m, training{.batch = 8, .precision = amp_bf16}, devices::a100_80gb).parameter_count > 0);
// a batch near INT64_MAX: its accumulation steps are computed without overflowing
static_assert(training{.batch = INT64_MAX, .micro_batch = 2}.accumulation_steps() == INT64_MAX / 2 + 1);
// checkpoint_blocks_without_repeat: with a repeated block it checkpoints each repetition
constexpr auto checkpoint_blocks_without_repeat_m = sequential(input(16, 64), repeat<2>(transformer_block(64, heads(4))), linear(10));
static_assert(budget_totals(checkpoint_blocks_without_repeat_m, training{.batch = 8, .checkpoint_blocks = true}, devices::generic_16gb).saved_activations <
              budget_totals(checkpoint_blocks_without_repeat_m, training{.batch = 8}, devices::generic_16gb).saved_activations);
// lora_grouped_conv_rank: r = 32, a multiple of the 32 groups: lora_A [32, 128, 3, 3], lora_B [128, 1, 1, 1]
constexpr auto lora_grouped_conv_rank_m =
    models::get_peft_model(sequential(input(128, 14, 14), named("conv2", conv2d(128, 3, padding(1), groups(32))), relu()), "conv2", {.rank = 32});
static_assert(budget_totals(lora_grouped_conv_rank_m, training{.batch = 8}, devices::generic_16gb).trainable_count == 32 * 128 * 9 + 128);
// lora_target_norm: the convolution `stem` and the Linear `fc` targeted instead, r = 4: lora_A
// [4, 3, 3, 3] and lora_B [16, 4, 1, 1] on the conv, 4 x (16 + 10) on the Linear
constexpr auto lora_target_norm_m =
    models::get_peft_model(sequential(input(3, 32, 32), named("stem", conv2d(16, 3, padding(1))), named("bn", batch_norm()), relu(), adaptive_avg_pool2d(1, 1),
                                      flatten(), named("fc", linear(10))),
                           "stem,fc", {.rank = 4});
static_assert(budget_totals(lora_target_norm_m, training{.batch = 8}, devices::generic_16gb).trainable_count == 4 * 3 * 9 + 16 * 4 + 4 * (16 + 10));
// dora_transposed_conv: DoRA on the plain convolution only: lora_A [4, 8, 3, 3], lora_B [16, 4, 1, 1]
// and the magnitude [1, 16, 1, 1]
constexpr auto dora_transposed_conv_m = models::get_peft_model(
    sequential(input(8, 16, 16), named("down", conv2d(16, 3, padding(1), stride(2))), relu(), named("up", conv_transpose2d(8, 2, stride(2)))), "down",
    {.rank = 4, .dora = true});
static_assert(budget_totals(dora_transposed_conv_m, training{.batch = 8}, devices::generic_16gb).trainable_count == 4 * 8 * 9 + 16 * 4 + 16);

// lora_target_one_copy: `fc` in every copy, r = 4 on 64 -> 64
constexpr auto lora_target_one_copy_m = models::get_peft_model(
    sequential(input(64), named("layers", repeat(4, sequential(named("fc", linear(64)), relu()))), named("head", linear(10))), "fc", {.rank = 4});
static_assert(budget_totals(lora_target_one_copy_m, training{.batch = 8}, devices::generic_16gb).trainable_count == 4 * 4 * (64 + 64));

}  // namespace


// attention_adapters_v_on_packed_kv: the packed projection's own adapter (adapt_qkv) fits
constexpr auto attention_adapters_v_on_packed_kv_m =
    sequential(input(16, 64), attention(64, heads(4), attention_impl::split_qkv, attention_adapters{.rank = 4, .parts = adapt_qkv}));
static_assert(budget_totals(attention_adapters_v_on_packed_kv_m, training{.batch = 8}, devices::generic_16gb).trainable_count == 4 * (64 + 3 * 64));
// attention_adapters_rank_zero: rank 4
constexpr auto attention_adapters_rank_zero_m =
    sequential(input(16, 64), attention(64, heads(4), attention_impl::separate_qkv, attention_adapters{.rank = 4, .parts = adapt_q}));
static_assert(budget_totals(attention_adapters_rank_zero_m, training{.batch = 8}, devices::generic_16gb).trainable_count == 4 * (64 + 64));

namespace {
using namespace gpubudget;
// pool1d_on_image: the same 1-D pool on a [C, L] sequence (MaxPool1d(2): [4, 32])
constexpr auto pool1d_on_sequence_m = sequential(input(4, 64), max_pool1d(2));
static_assert(budget(pool1d_on_sequence_m, training{.batch = 2}, devices::generic_16gb).per_record[2].output_bytes == 2 * 4 * 32 * 4);
// reflection_pad_not_below_input: a reflection pad one narrower than the 8x8 map ([4, 22, 22])
constexpr auto reflection_pad_below_input_m = sequential(input(4, 8, 8), pad(7, 7, 7, 7, pad_mode::reflect));
static_assert(budget(reflection_pad_below_input_m, training{.batch = 2}, devices::generic_16gb).per_record[2].output_bytes == 2 * 4 * 22 * 22 * 4);
// glu_odd_dimension: 6 channels halve to 3
constexpr auto glu_even_dimension_m = sequential(input(6, 16), glu(0));
static_assert(budget(glu_even_dimension_m, training{.batch = 2}, devices::generic_16gb).per_record[2].output_bytes == 2 * 3 * 16 * 4);
// layer_norm_over_too_many_dims: all three per-sample dimensions (a weight and a bias of 4·8·8)
constexpr auto layer_norm_over_all_dims_m = sequential(input(4, 8, 8), layer_norm(over_last(3)));
static_assert(budget_totals(layer_norm_over_all_dims_m, training{.batch = 2}, devices::generic_16gb).parameter_count == 2 * 4 * 8 * 8);
}  // namespace
