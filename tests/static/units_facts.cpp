// Hand-checkable facts about element types, byte units and overflow-checked arithmetic.
#include <gpubudget/gpubudget.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace {
using namespace gpubudget;

// Element sizes as PyTorch stores them (torch.bool is one byte).
static_assert(bytes_per_element(dtype::fp32) == 4);
static_assert(bytes_per_element(dtype::fp16) == 2);
static_assert(bytes_per_element(dtype::bf16) == 2);
static_assert(bytes_per_element(dtype::fp8) == 1);
static_assert(bytes_per_element(dtype::int8) == 1);
static_assert(bytes_per_element(dtype::int64) == 8);
static_assert(bytes_per_element(dtype::boolean) == 1);
static_assert(to_string(dtype::bf16) == "bf16");

// Binary and decimal units.
static_assert(KiB == 1024 && MiB == 1024 * 1024 && GiB == std::int64_t{1} << 30);
static_assert(GB == 1'000'000'000);
static_assert([] { using namespace gpubudget::literals; return 3_GiB == 3 * GiB && 16_GB == 16 * GB && 512_KiB == MiB / 2; }());

// bytes_of: elements × element size.
static_assert(bytes_of(1000, dtype::fp32) == 4000);
static_assert(bytes_of(1000, dtype::bf16) == 2000);
static_assert(bytes_of(std::int64_t{1} << 60, dtype::int8) == std::int64_t{1} << 60);

// Rounding up to whole MiB (what the fit diagnostics print).
static_assert(to_mib_ceil(0) == 0);
static_assert(to_mib_ceil(1) == 1);
static_assert(to_mib_ceil(MiB) == 1);
static_assert(to_mib_ceil(MiB + 1) == 2);
static_assert(to_mib_ceil(16 * GB) == 15259);  // 16·10⁹ B = 15258.79 MiB
static_assert(16 * GB / MiB == 15258);         // ... and 15258 rounded down (capacity)

// Checked arithmetic: exact up to the edge of int64 ...
constexpr std::int64_t max64 = std::numeric_limits<std::int64_t>::max();
static_assert(checked_mul(std::int64_t{1} << 31, std::int64_t{1} << 31) == std::int64_t{1} << 62);
static_assert(checked_mul(-(std::int64_t{1} << 31), std::int64_t{1} << 32) == std::numeric_limits<std::int64_t>::min());
static_assert(checked_add(max64 - 1, 1) == max64);
static_assert(checked_mul(max64, 1) == max64);
static_assert(checked_mul(0, max64) == 0);

// ... and one step past it is not a constant expression (the fail tests check the message).
template <std::int64_t A, std::int64_t B>
concept mul_is_constant = requires { typename std::integral_constant<std::int64_t, checked_mul(A, B)>; };
template <std::int64_t A, std::int64_t B>
concept add_is_constant = requires { typename std::integral_constant<std::int64_t, checked_add(A, B)>; };
template <std::int64_t E, dtype T>
concept bytes_is_constant = requires { typename std::integral_constant<std::int64_t, bytes_of(E, T)>; };

static_assert(mul_is_constant<std::int64_t{1} << 31, std::int64_t{1} << 31>);
static_assert(!mul_is_constant<std::int64_t{1} << 32, std::int64_t{1} << 31>);
static_assert(add_is_constant<max64 - 1, 1>);
static_assert(!add_is_constant<max64, 1>);
static_assert(bytes_is_constant<std::int64_t{1} << 60, dtype::fp32>);   // 2⁶² B
static_assert(!bytes_is_constant<std::int64_t{1} << 61, dtype::fp32>);  // 2⁶³ B: one too many
static_assert(!bytes_is_constant<std::int64_t{1} << 60, dtype::int64>);
}  // namespace
