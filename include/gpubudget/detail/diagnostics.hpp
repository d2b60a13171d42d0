// gpubudget/detail/diagnostics.hpp — named failure points for constant evaluation.
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
[[noreturn]] inline void batch_must_be_positive() { fail("gpubudget: batch and micro-batch must be positive and divide evenly"); }
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
[[noreturn]] inline void no_layout_fits() { fail("gpubudget: no parallel layout fits every rank"); }

}  // namespace gpubudget::detail
