// What carrying a budget's state from one constant evaluation to the next would cost (issue I):
// a state of CAP records, each the size of the simulator's `storage` (9 fields), handed through
// CHUNKS evaluations (static constexpr members of a class template), each evaluation copying the
// state it is given and writing CAP / CHUNKS records of it. Compile with -DCAP=N -DCHUNKS=K and
// bisect -fconstexpr-steps to see what one evaluation needs; /usr/bin/time for memory.
#include <array>
#include <cstddef>
#include <cstdint>

struct record {  // the shape of sim.hpp's storage: bytes, refs, saved, alive, external, rounded, fixed, freed_at, grad
  std::int64_t bytes = 0;
  std::int32_t refs = 0, saved = 0;
  bool alive = false, external = false;
  std::int64_t rounded = 0, fixed = 0;
  std::int32_t freed_at = -1, grad = -1;
};
template <std::size_t M>
struct state {
  std::array<record, M> records{};
  std::int64_t live = 0, peak = 0;
};
constexpr std::size_t cap = CAP, chunks = CHUNKS;

constexpr state<cap> run_chunk(const state<cap>& in, std::size_t k) {
  state<cap> s = in;
  for (std::size_t i = k * (cap / chunks); i < (k + 1) * (cap / chunks); ++i) {
    s.records[i].bytes = static_cast<std::int64_t>(i) * 512, s.records[i].alive = true;
    s.live += s.records[i].bytes;
    if (s.live > s.peak) s.peak = s.live;
  }
  return s;
}
template <std::size_t K>
struct after_chunk {
  static constexpr state<cap> value = run_chunk(after_chunk<K - 1>::value, K - 1);
};
template <>
struct after_chunk<0> {
  static constexpr state<cap> value{};
};
static_assert(after_chunk<chunks>::value.peak > 0);
