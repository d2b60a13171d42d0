// gpubudget/alloc_conf.hpp — PyTorch's caching allocator settings, written as users write them.
//
//   constexpr auto conf = alloc_conf("expandable_segments:True,max_split_size_mb:512");
//   budget(net, training{.batch = 8, .model_allocator = true, .allocator = conf}, devices::h100_80gb);
//
// The syntax is PYTORCH_CUDA_ALLOC_CONF's (c10/core/AllocatorConfig.cpp, ConfigTokenizer and
// AcceleratorAllocatorConfig::parseArgs: keys and values separated by ':', options by ',', lists
// in '[...]'). Where PyTorch skips a key it does not know, this is an error (a misspelt key would
// otherwise silently change nothing): alloc_conf_unknown_key, alloc_conf_malformed_value.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpubudget {

/// PYTORCH_CUDA_ALLOC_CONF's settings that change how much the allocator reserves.
struct allocator_settings {
  bool expandable_segments = false;
  std::int64_t max_split_size = 0;  ///< bytes; 0: unlimited (PyTorch's default SIZE_MAX)
  /// roundup_power2_divisions per power-of-two size interval, [1 MiB, 2 MiB) (index 0, and every
  /// smaller size) up to >= 32 GiB (index 15); 0 or 1: plain 512 B rounding
  std::array<std::int64_t, 16> roundup_power2_divisions{};
  friend constexpr bool operator==(const allocator_settings&, const allocator_settings&) = default;
};

namespace detail {

// Named failure points (see diagnostics.hpp): not constexpr, so a constant evaluation stops here.
[[noreturn]] inline void alloc_conf_unknown_key(std::string_view key) {
  throw std::invalid_argument("gpubudget: unknown PYTORCH_CUDA_ALLOC_CONF key '" + std::string(key) +
                              "' (known: expandable_segments, max_split_size_mb, roundup_power2_divisions, garbage_collection_threshold)");
}
[[noreturn]] inline void alloc_conf_malformed_value(std::string_view key) {
  throw std::invalid_argument("gpubudget: malformed PYTORCH_CUDA_ALLOC_CONF value for '" + std::string(key) +
                              "' (expandable_segments:True|False, max_split_size_mb:N with N > 20, roundup_power2_divisions:N or "
                              "[MB:N,...,>:N] with powers of two)");
}

/// ConfigTokenizer: words, and ',' ':' '[' ']' as tokens of their own; spaces dropped.
class conf_tokens {
 public:
  constexpr explicit conf_tokens(std::string_view s) : s_(s) { skip(); }
  constexpr bool done() const { return pos_ >= s_.size(); }
  constexpr std::string_view next() {
    const auto begin = pos_;
    if (is_sep(s_[pos_])) ++pos_;
    else while (pos_ < s_.size() && !is_sep(s_[pos_]) && s_[pos_] != ' ') ++pos_;
    const auto word = s_.substr(begin, pos_ - begin);
    skip();
    return word;
  }
  constexpr std::string_view peek() const {
    conf_tokens copy = *this;
    return copy.done() ? std::string_view{} : copy.next();
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
  static constexpr bool is_sep(char c) { return c == ',' || c == ':' || c == '[' || c == ']'; }
  constexpr void skip() { while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_; }
};

/// A decimal number, or -1 when `w` is not one.
constexpr std::int64_t conf_number(std::string_view w) {
  if (w.empty() || w.size() > 12) return -1;
  std::int64_t v = 0;
  for (char c : w) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}
constexpr bool power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// The next token must be `want`.
constexpr void expect_token(conf_tokens& t, std::string_view want, std::string_view key) {
  if (t.done() || t.next() != want) alloc_conf_malformed_value(key);
}
/// A number satisfying `ok`, else the key's malformed-value error.
template <class Ok>
constexpr std::int64_t conf_value(conf_tokens& t, std::string_view key, Ok ok) {
  const auto v = t.done() ? -1 : conf_number(t.next());
  if (v < 0 || !ok(v)) alloc_conf_malformed_value(key);
  return v;
}

/// parseRoundUpPower2Divisions: one count for every size, or [MB:count, ..., >:count].
constexpr void parse_divisions(conf_tokens& t, allocator_settings& a, std::string_view key) {
  auto& d = a.roundup_power2_divisions;
  auto division = [](std::int64_t v) { return v == 0 || power_of_two(v); };
  if (t.peek() != "[") {
    const auto v = conf_value(t, key, power_of_two);
    for (auto& x : d) x = v;
    return;
  }
  t.next();
  std::size_t last = 0;
  bool first = true;
  while (!t.done() && t.peek() != "]") {
    const auto bound = t.next();
    expect_token(t, ":", key);
    const auto v = conf_value(t, key, division);
    if (bound == ">") {
      for (auto k = last + 1; k < d.size(); ++k) d[k] = v;
    } else {
      const auto mb = conf_number(bound);
      if (!power_of_two(mb)) alloc_conf_malformed_value(key);
      std::size_t index = 0;
      for (auto m = mb; m > 1; m /= 2) ++index;
      if (index > 15) index = 15;
      for (std::size_t k = 0; first && k < index; ++k) d[k] = v;
      d[index] = v, last = index, first = false;
    }
    if (t.peek() == ",") t.next();
  }
  expect_token(t, "]", key);
}

/// One `key:value` option.
constexpr void parse_option(conf_tokens& t, allocator_settings& a) {
  const auto key = t.next();
  expect_token(t, ":", key);
  if (key == "expandable_segments") {
    const auto v = t.done() ? std::string_view{} : t.next();
    if (v != "True" && v != "False") alloc_conf_malformed_value(key);
    a.expandable_segments = v == "True";
  } else if (key == "max_split_size_mb") {
    // parseMaxSplitSize: "must be > kLargeBuffer / kMB" (20)
    a.max_split_size = conf_value(t, key, [](std::int64_t v) { return v > 20; }) * 1024 * 1024;
  } else if (key == "roundup_power2_divisions") {
    parse_divisions(t, a, key);
  } else if (key == "garbage_collection_threshold") {
    t.next();  // reclaims cache only near a cap: not modelled, accepted (its value is PyTorch's to check)
  } else {
    alloc_conf_unknown_key(key);
  }
}

}  // namespace detail

/// Parses a PYTORCH_CUDA_ALLOC_CONF string ("" gives PyTorch's defaults).
constexpr allocator_settings alloc_conf(std::string_view text) {
  allocator_settings a{};
  detail::conf_tokens t(text);
  while (!t.done()) {
    detail::parse_option(t, a);
    if (!t.done()) detail::expect_token(t, ",", "(between options)");
  }
  return a;
}

}  // namespace gpubudget
