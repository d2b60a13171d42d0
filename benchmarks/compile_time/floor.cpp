// benchmarks/compile_time/floor.cpp — the least a constant-evaluated liveness walk can cost.
//
//   clang++-14 -std=c++20 -fsyntax-only -fconstexpr-steps=100000000 -DEVENTS=27008 floor.cpp
//   g++ -std=c++20 -fsyntax-only -fconstexpr-ops-limit=1000000000 -DEVENTS=27008 floor.cpp
//
// EVENTS tensors, each allocated (three fields written, the live bytes and the peak updated) and
// freed two tensors later: no shapes, no records, no autograd, no allocator model. Whatever walk
// budgets a model tensor by tensor pays at least this per tensor. issue I's 5,000-layer mixed chain
// makes 27,008 tensors in a training step (timeline(): 13,005 in forward, 14,003 in backward), so
// this file at EVENTS=27008 is that walk's floor (README.md, "The floor").
#include <cstdint>

#ifndef EVENTS
#define EVENTS 27008
#endif

struct tensor_event {
  std::int64_t bytes;
  std::int32_t refs;
  bool alive;
};

constexpr std::int64_t walk(int n) {
  tensor_event* storages = new tensor_event[n]{};
  std::int64_t live = 0, peak = 0;
  for (int i = 0; i < n; ++i) {
    storages[i].bytes = 64 + i, storages[i].refs = 1, storages[i].alive = true;
    live += storages[i].bytes;
    peak = live > peak ? live : peak;
    if (i >= 2) storages[i - 2].alive = false, live -= storages[i - 2].bytes;
  }
  delete[] storages;
  return peak;
}
static_assert(walk(EVENTS) > 0);
