// gpubudget/base/diagnostics.hpp — named failure points for constant evaluation.
//
// Each function is deliberately *not* constexpr: calling one inside a constant expression stops
// compilation and both GCC and Clang print the function's name, which names the problem
// ("call to non-'constexpr' function ... heads_do_not_divide_model_width"). At run time they
// throw std::invalid_argument with the same words.
#pragma once
#include <stdexcept>

namespace gpubudget::detail {

[[noreturn]] inline void fail(const char* what) { throw std::invalid_argument(what); }

[[noreturn]] inline void byte_count_overflows_64_bits() { fail("gpubudget: byte count overflows 64 bits"); }
[[noreturn]] inline void shape_mismatch_between_layers() { fail("gpubudget: shape mismatch between layers"); }
[[noreturn]] inline void heads_do_not_divide_model_width() { fail("gpubudget: attention heads do not divide the model width"); }
[[noreturn]] inline void channels_not_divisible_by_groups() { fail("gpubudget: channels not divisible by groups"); }
[[noreturn]] inline void layer_needs_an_input_shape() { fail("gpubudget: model must start with input(...)"); }
[[noreturn]] inline void output_size_not_positive() { fail("gpubudget: layer output size is not positive (kernel larger than padded input?)"); }
[[noreturn]] inline void repeated_block_must_keep_its_shape() { fail("gpubudget: repeat<N> needs a block whose output shape equals its input shape"); }
[[noreturn]] inline void parallel_branches_disagree_on_shape() { fail("gpubudget: parallel branches produce shapes that cannot be merged"); }
[[noreturn]] inline void reshape_changes_element_count() { fail("gpubudget: reshape changes the number of elements"); }
[[noreturn]] inline void invalid_layer_argument() { fail("gpubudget: invalid layer argument (size, stride or count must be positive)"); }
[[noreturn]] inline void batch_must_be_positive() { fail("gpubudget: batch must be positive (training::batch >= 1)"); }
// An internal invariant of budget_of's split replay (a bug if ever seen, not bad input).
[[noreturn]] inline void snapshot_capacity_too_small() { fail("gpubudget: internal: the allocator state outgrew the capacity its split replay reserved"); }
[[noreturn]] inline void matmul_of_branches_needs_two_matrices() { fail("gpubudget: parallel(merge_kind::matmul, a, b) takes two branches whose outputs are per-sample matrices [n, k] and [k, m]"); }
[[noreturn]] inline void binary_merge_needs_two_branches() { fail("gpubudget: parallel(merge_kind::divide, maximum, minimum or gaussian_latent, a, b) takes exactly two branches"); }
[[noreturn]] inline void grid_sample_needs_an_image_and_a_grid() { fail("gpubudget: parallel(merge_kind::grid_sample, x, grid) takes an image [C, H, W] and a grid [h, w, 2] (affine_grid)"); }
[[noreturn]] inline void auxiliary_output_needs_a_head() { fail("gpubudget: auxiliary_output(...) needs a head: parallel(merge_kind::auxiliary_output, main, head, ...) takes the main branch and at least one head"); }
[[noreturn]] inline void gaussian_latent_branches_differ() { fail("gpubudget: gaussian_latent(mu, logvar): the mean and log-variance branches must give the same shape"); }
[[noreturn]] inline void too_many_auxiliary_outputs() { fail("gpubudget: more than 8 auxiliary outputs in one model (auxiliary_output, gaussian_latent)"); }
[[noreturn]] inline void tensor_rank_unsupported() { fail("gpubudget: tensor rank not supported by this layer"); }

// Parallel layouts (distributed.hpp).
[[noreturn]] inline void zero_stage_out_of_range() { fail("gpubudget: ZeRO stage must be 0, 1, 2 or 3"); }
[[noreturn]] inline void world_size_not_divisible_by_tp_pp_cp() { fail("gpubudget: world size is not divisible by tensor x pipeline x context parallel size"); }
[[noreturn]] inline void parallel_size_must_be_positive() { fail("gpubudget: world, tensor, pipeline, context and expert parallel sizes must be positive"); }
[[noreturn]] inline void offload_needs_zero_or_fsdp() { fail("gpubudget: CPU offload needs DeepSpeed ZeRO or FSDP sharding"); }
[[noreturn]] inline void parameter_offload_needs_zero_stage_3() { fail("gpubudget: DeepSpeed offloads parameters at ZeRO stage 3 only"); }
[[noreturn]] inline void fsdp_offload_moves_parameters_and_optimizer_together() { fail("gpubudget: FSDP's CPUOffload offloads parameters (and with them gradients and the optimizer step), not the optimizer alone"); }
[[noreturn]] inline void hybrid_shard_group_does_not_divide_data_parallel_size() { fail("gpubudget: HYBRID_SHARD's shard group size must divide the data-parallel size"); }
[[noreturn]] inline void tensor_parallel_does_not_divide_heads() { fail("gpubudget: tensor parallel size does not divide the attention heads or the FFN width"); }
[[noreturn]] inline void pipeline_parallel_larger_than_layer_count() { fail("gpubudget: pipeline parallel size is larger than the layer count"); }
[[noreturn]] inline void expert_parallel_does_not_divide_data_parallel_size() { fail("gpubudget: expert parallel size does not divide the data-parallel size"); }
[[noreturn]] inline void expert_parallel_does_not_divide_expert_count() { fail("gpubudget: expert parallel size does not divide the number of experts"); }
[[noreturn]] inline void expert_parallel_needs_a_mixture_of_experts_model() { fail("gpubudget: expert parallelism needs a model with mixture-of-experts layers"); }
[[noreturn]] inline void pipeline_stage_out_of_range() { fail("gpubudget: pipeline stage must be between 0 and pipeline parallel size - 1"); }
[[noreturn]] inline void fsdp_version_must_be_1_or_2() { fail("gpubudget: FSDP version must be 1 (FullyShardedDataParallel) or 2 (fully_shard)"); }
[[noreturn]] inline void fsdp2_has_no_no_shard() { fail("gpubudget: FSDP2 (fully_shard) has no NO_SHARD strategy; use DDP"); }
[[noreturn]] inline void no_layout_fits() { fail("gpubudget: no parallel layout fits every rank"); }

// Sizes of layers and models (issue C): each names the argument and its valid range.
[[noreturn]] inline void heads_must_be_positive() { fail("gpubudget: attention heads must be positive (heads >= 1)"); }
[[noreturn]] inline void kv_heads_must_not_be_negative() { fail("gpubudget: kv_heads must be 0 (= heads) or positive"); }
[[noreturn]] inline void kv_tokens_must_not_be_negative() { fail("gpubudget: kv_tokens must be 0 (= query length) or positive"); }
[[noreturn]] inline void kernel_size_must_be_positive() { fail("gpubudget: kernel size must be positive (kernel >= 1)"); }
[[noreturn]] inline void stride_must_be_positive() { fail("gpubudget: stride must be positive (stride >= 1)"); }
[[noreturn]] inline void prelu_parameters_must_be_one_or_channels() { fail("gpubudget: PReLU num_parameters must be 1 or the input's channel count (dimension 0)"); }
[[noreturn]] inline void pixel_shuffle_factor_must_divide_channels() { fail("gpubudget: pixel_shuffle needs an upscale factor >= 1 whose square divides the channels"); }
[[noreturn]] inline void upsample_scale_must_be_positive() { fail("gpubudget: upsample scale factor must be a positive whole number (scale >= 1)"); }
[[noreturn]] inline void window_size_must_be_positive() { fail("gpubudget: window size must be positive (window >= 1)"); }
[[noreturn]] inline void vocabulary_size_must_be_positive() { fail("gpubudget: vocabulary size (num_embeddings) must be positive"); }
[[noreturn]] inline void sequence_length_must_be_positive() { fail("gpubudget: sequence length must be positive (tokens(n): n >= 1)"); }
[[noreturn]] inline void input_dimension_must_be_positive() { fail("gpubudget: every input dimension must be positive (input(...): each >= 1)"); }
[[noreturn]] inline void sequence_longer_than_positions() { fail("gpubudget: sequence longer than the model's positions (tokens <= context / max_positions)"); }
[[noreturn]] inline void repeat_count_must_be_positive() { fail("gpubudget: repeat count must be positive (repeat(n, ...): n >= 1)"); }
[[noreturn]] inline void dropout_percent_out_of_range() { fail("gpubudget: dropout percent out of range (0 to 100)"); }
/// A linear, convolution, norm or attention fed int64 token ids: PyTorch raises (addmm and conv
/// have no Long kernels: "not implemented for 'Long'"); an embedding belongs in between.
[[noreturn]] inline void layer_needs_float_features_not_token_ids() { fail("gpubudget: layer needs float features, not token ids (put an embedding(...) between tokens(n) and it)"); }
/// `chunk(count, index, dim)` on a dimension `count` does not divide: torch.chunk's last chunk
/// would be smaller, or fewer than `count` chunks would come out.
[[noreturn]] inline void chunks_do_not_divide_the_dimension() { fail("gpubudget: chunk count does not divide the dimension (x.chunk(n, dim) in n equal parts)"); }
[[noreturn]] inline void permute_repeats_an_axis() { fail("gpubudget: permute names an axis twice (a permutation of 0..rank-1 is needed)"); }

// Structure of a model (issue C).
[[noreturn]] inline void model_has_no_layers() { fail("gpubudget: the model has no layers (an empty sequential()?)"); }
[[noreturn]] inline void second_input_inside_model() { fail("gpubudget: input(...) in the middle of a model (only the first layer may be an input)"); }
[[noreturn]] inline void shared_id_reused_for_a_different_block() { fail("gpubudget: shared(id, ...) reused for a block of a different structure (same id = same layers)"); }

// The training policy and the device (issue C).
[[noreturn]] inline void micro_batch_must_not_be_negative() { fail("gpubudget: micro_batch must be 0 (= batch) or positive"); }
[[noreturn]] inline void micro_batch_does_not_divide_batch() { fail("gpubudget: micro_batch does not divide batch (batch = micro_batch x accumulation steps)"); }
[[noreturn]] inline void checkpoint_blocks_needs_a_repeated_block() { fail("gpubudget: checkpoint_blocks checkpoints the repetitions of repeat(...) blocks and the model has none: it would change nothing (checkpointed(...) or checkpoint_all checkpoint other blocks)"); }
[[noreturn]] inline void fragmentation_percent_out_of_range() { fail("gpubudget: fragmentation_percent out of range (0 to 100)"); }
[[noreturn]] inline void projection_names_do_not_fit_the_attention_impl() { fail("gpubudget: attention projection_names that do not fit its attention_impl (llama, phi3: flash with rotary; gpt2: split_qkv or flash; bert, separate: separate_qkv or separate_qkv_sdpa; torchvision: torch_mha or torch_mha_weights; t5: t5)"); }
[[noreturn]] inline void qkv_bias_on_torch_mha() { fail("gpubudget: qkv_bias on nn.MultiheadAttention (torch_mha, torch_mha_weights), whose one bias argument covers in_proj and out_proj alike: use no_bias or nothing"); }
[[noreturn]] inline void embed_tokens_both_adapted_and_saved() { fail("gpubudget: embed_tokens is both a LoRA target and in modules_to_save: choose one (an adapter on the frozen table, or the table trained whole)"); }
[[noreturn]] inline void parts_named_lists_another_number_of_parts() { fail("gpubudget: parts_named lists a number of names (comma-separated, none empty) other than the op's parts (an attention with projection_names::separate: four, q, k, v, out); an op that names no parts takes none"); }
[[noreturn]] inline void train_only_names_an_unknown_part() { fail("gpubudget: a train_only name goes below a module into a part its op does not name (self_attn.x_proj); module_names() lists the parts"); }
[[noreturn]] inline void train_only_prefix_matches_no_record_name() { fail("gpubudget: a train_only prefix matches no record name (or is empty); check the model's named(...) blocks"); }
[[noreturn]] inline void freeze_all_contradicts_train_only() { fail("gpubudget: freeze_all and train_only contradict each other (set one)"); }
[[noreturn]] inline void percent_of_capacity_out_of_range() { fail("gpubudget: percent of capacity out of range (1 to 100)"); }
[[noreturn]] inline void batch_bounds_out_of_order() { fail("gpubudget: batch bounds out of order (1 <= min <= max)"); }
[[noreturn]] inline void max_remedies_must_not_be_negative() { fail("gpubudget: plan_constraints::max_remedies must be 0 or positive"); }
[[noreturn]] inline void device_capacity_must_be_positive() { fail("gpubudget: device capacity must be positive (bytes >= 1)"); }
[[noreturn]] inline void bf16_needs_compute_capability_8() { fail("gpubudget: bf16 precision on a GPU below compute capability 8.0 (T4, V100: no bf16 arithmetic); use amp_fp16, an Ampere or newer GPU, or training::emulated_bf16 = true"); }
[[noreturn]] inline void master_weights_off_needs_16_bit_parameters() { fail("gpubudget: master_weights = false needs 16-bit parameters (pure_fp16 or pure_bf16): with fp32 or AMP the parameters are fp32 and there is no master copy to leave out"); }
[[noreturn]] inline void parallel_layouts_keep_master_weights() { fail("gpubudget: master_weights = false is not modelled in the parallel layouts (ZeRO, FSDP and Megatron keep fp32 master weights)"); }
[[noreturn]] inline void device_memory_terms_must_not_be_negative() { fail("gpubudget: device context and cuBLAS workspace must not be negative (bytes >= 0)"); }
/// generate()'s replay (serving::model_allocator) decodes with the prefill's DynamicCache: a K and a V per decoder layer.
[[noreturn]] inline void generate_cache_is_not_a_k_and_v_per_layer() {
  fail("gpubudget: generate()'s allocator replay: the prefill's forward holds no DynamicCache of one K and one V per decoder layer");
}

// The LLM zoo (issue D).
[[noreturn]] inline void layer_order_is_built_by_its_own_builder() {
  fail("gpubudget: a llama_config of OLMo 2 (olmo2: norms after the sublayers), OLMo 3 (olmo3), Gemma 2 or 3 (gemma2, gemma3: alternating layers) or "
       "Granite (granite: multipliers) is built by models::olmo2, models::visit_olmo3, models::visit_gemma2, models::visit_gemma3 or models::granite "
       "(LoRA: their _lora builders), not models::llama");
}
[[noreturn]] inline void padded_batch_under_flash_attention_2_is_not_modelled() {
  fail("gpubudget: a padded batch (llama_config::padded_batch) under flash_attention_2 (kernel_window) is not modelled: transformers "
       "unpads q, k and v into copies of the real tokens (_upad_input) instead of masking; use attn_implementation sdpa or eager");
}
[[noreturn]] inline void attention_softcap_needs_eager_attention() {
  fail("gpubudget: a llama_config with attention_softcap (Gemma 2's attn_logit_softcapping) needs eager_attention: SDPA and flash-attn "
       "keep no scores to cap");
}
[[noreturn]] inline void logit_softcap_is_built_by_visit_gemma2() {
  fail("gpubudget: a llama_config with logit_softcap (Gemma 2's final_logit_softcapping) is built by models::visit_gemma2 (LoRA: "
       "models::visit_gemma2_lora), which caps the logits; the other builders would leave the cap out");
}
[[noreturn]] inline void olmo3_layers_are_built_by_visit_olmo3() {
  fail("gpubudget: a llama_config of OLMo 3 (olmo3: a sliding window on three layers of four) is built by models::visit_olmo3 (LoRA: "
       "models::visit_olmo3_lora), not by OLMo 2's builders, which repeat one layer");
}
[[noreturn]] inline void fused_projections_are_built_by_phi3() { fail("gpubudget: a llama_config with fused_projections (Phi-3's qkv_proj, gate_up_proj) is built by models::phi3, not models::llama"); }

}  // namespace gpubudget::detail
