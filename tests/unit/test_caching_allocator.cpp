// The caching allocator model (detail/caching_allocator.hpp) replayed on the allocation traces of
// the H100 run (benchmarks/accuracy/reference/cuda-h100/*.json.gz, turned into
// tests/unit/data/allocator_traces.txt by benchmarks/gpu/trace_events.py): the same requests and
// frees, in the same order, must reserve what PyTorch reserved (max_memory_reserved).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <gpubudget/detail/caching_allocator.hpp>

using gpubudget::allocator_settings;
using gpubudget::detail::caching_allocator;

namespace {

struct trace {
  std::string name;
  std::int64_t reserved_peak = 0;
  std::vector<std::int64_t> events;  // > 0: allocation of that many bytes; <= 0: -(index) freed
};

std::vector<trace> read_traces() {
  std::ifstream in(GPUBUDGET_ALLOCATOR_TRACES);
  std::vector<trace> out;
  std::string word;
  while (in >> word) {
    REQUIRE(word == "case");
    trace t;
    std::size_t n = 0;
    in >> t.name >> t.reserved_peak >> n;
    for (std::size_t k = 0; k < n && in >> word; ++k) t.events.push_back(word[0] == '+' ? std::stoll(word.substr(1)) : -std::stoll(word.substr(1)));
    out.push_back(std::move(t));
  }
  return out;
}

std::int64_t replay(const trace& t, const allocator_settings& conf = {}) {
  caching_allocator a(conf);
  std::vector<std::int32_t> handle;
  for (auto e : t.events) {
    if (e > 0) handle.push_back(a.malloc(e));
    else a.free(handle[static_cast<std::size_t>(-e)]);
  }
  return a.reserved_peak();
}

}  // namespace

TEST_CASE("the allocator model reserves what PyTorch reserved on every H100 trace") {
  const auto traces = read_traces();
  REQUIRE(traces.size() == 12);
  for (const auto& t : traces) {
    INFO(t.name);
    CHECK(replay(t) == t.reserved_peak);
  }
}
