// gpubudget/units.hpp — element types, byte units and overflow-checked byte arithmetic.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <gpubudget/base/diagnostics.hpp>

namespace gpubudget {

/// Element types a tensor can hold.
enum class dtype : std::uint8_t { fp32, fp16, bf16, fp8, int8, int64, boolean };

namespace detail {
/// Bytes per element of each dtype, in its order (torch.bool is one byte per element).
inline constexpr std::int64_t dtype_bytes[] = {4, 2, 2, 1, 1, 8, 1};
}  // namespace detail

/// Bytes per element of `t` (a table, not a switch: one statement for constant evaluation,
/// which charges per statement and asks this of every tensor).
constexpr std::int64_t bytes_per_element(dtype t) { return detail::dtype_bytes[static_cast<std::size_t>(t)]; }

/// Storage of a frozen base weight: `same` follows the training precision's parameter type;
/// the quantized kinds are bitsandbytes' (see quantized_weight_bytes). Embeddings and the LM head
/// are not quantized (transformers' BitsAndBytesConfig keeps lm_head in 16 bit): with a quantized
/// base they are stored in the precision's 16-bit type.
enum class base_weights : std::int64_t {
  same = 0, fp32 = 1, fp16 = 2, bf16 = 3,
  nf4 = 4,     ///< 4-bit NormalFloat, block 64, fp32 absmax per block (QLoRA)
  fp4 = 5,     ///< 4-bit float, same layout
  nf4_dq = 6,  ///< NF4 with double quantization (bnb_4bit_use_double_quant)
  fp4_dq = 7,
  int8 = 8,    ///< LLM.int8(): int8 weights + one fp32 scale per output row
  half = 9,    ///< the precision's 16-bit type (fp16, or bf16 under a bf16 precision)
};

constexpr bool is_quantized(base_weights b) { return b >= base_weights::nf4 && b <= base_weights::int8; }

constexpr std::string_view to_string(dtype t) {
  switch (t) {
    case dtype::fp32: return "fp32";
    case dtype::fp16: return "fp16";
    case dtype::bf16: return "bf16";
    case dtype::fp8: return "fp8";
    case dtype::int8: return "int8";
    case dtype::int64: return "int64";
    case dtype::boolean: return "bool";
  }
  return "?";
}

/// Binary byte units.
inline constexpr std::int64_t KiB = 1024;
inline constexpr std::int64_t MiB = 1024 * KiB;
inline constexpr std::int64_t GiB = 1024 * MiB;
/// Decimal units, as GPU vendors print capacities.
inline constexpr std::int64_t MB = 1000 * 1000;
inline constexpr std::int64_t GB = 1000 * MB;

namespace literals {
constexpr std::int64_t operator""_KiB(unsigned long long v) { return static_cast<std::int64_t>(v) * KiB; }
constexpr std::int64_t operator""_MiB(unsigned long long v) { return static_cast<std::int64_t>(v) * MiB; }
constexpr std::int64_t operator""_GiB(unsigned long long v) { return static_cast<std::int64_t>(v) * GiB; }
constexpr std::int64_t operator""_GB(unsigned long long v) { return static_cast<std::int64_t>(v) * GB; }
}  // namespace literals

/// Overflow-checked arithmetic: a byte count that does not fit in 64 bits stops constant
/// evaluation with `byte_count_overflows_64_bits` in the diagnostic (and throws at run time).
/// (`r` is scratch for the result, a parameter so that the body is one statement: constant
/// evaluation charges per statement, and every tensor's byte count goes through these.)
constexpr std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::int64_t r = 0) {
  return __builtin_mul_overflow(a, b, &r) ? (detail::byte_count_overflows_64_bits(), r) : r;
}
constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b, std::int64_t r = 0) {
  return __builtin_add_overflow(a, b, &r) ? (detail::byte_count_overflows_64_bits(), r) : r;
}

/// Bytes of `elements` values of type `t`, overflow-checked.
constexpr std::int64_t bytes_of(std::int64_t elements, dtype t) { return checked_mul(elements, bytes_per_element(t)); }

/// Whole MiB, rounded up (what diagnostics print).
constexpr std::int64_t to_mib_ceil(std::int64_t bytes) { return (bytes + MiB - 1) / MiB; }

/// "123.45 MiB"-style rendering with binary units.
inline std::string format_bytes(std::int64_t bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes < 0 ? -bytes : bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) { v /= 1024.0; ++u; }
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%s%lld B", bytes < 0 ? "-" : "", static_cast<long long>(v));
  else std::snprintf(buf, sizeof buf, "%s%.2f %s", bytes < 0 ? "-" : "", v, unit[u]);
  return buf;
}

}  // namespace gpubudget
