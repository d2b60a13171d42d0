// tools/cli_args.hpp — a small, strict command-line parser for the gpubudget tool.
//
// Strict means: every token is accounted for. An unknown option is an error (with "did you
// mean --batch?" when a known option is within a small edit distance), an option given twice is
// an error, an option that needs a value and has none is an error, and a number must be the
// whole token and inside its range (`12abc`, `1e3`, `abc`, `0x10`, ` 5` are all rejected).
// Errors are `cli::usage_error`: one line, naming the option and what it accepts; the caller
// prefixes the program name and exits with status 2.
//
//   std::vector<cli::option_spec> specs = {{"batch", true, "N", "samples per step"}, {"ema", false, "", "EMA"}};
//   auto args = cli::parse({"resnet50", "--batch", "32"}, specs);
//   std::int64_t batch = cli::parse_integer("--batch", args.get("batch").value_or("1"), 1, 4096);
//
// Accepted spellings: `--name value`, `--name=value`, and `--name` for options without a value.
// `--help` or `-h` anywhere on the line sets `help` and stops parsing (so `MODEL --help` and
// `--batch --help` print help instead of asking for a value). Tokens that do not start with `-`
// are positionals. A value that starts with `--` is not taken as a value (`--batch --ema` is
// "--batch needs a value"); a value such as `-3` is (and then fails its range check).
//
// Header-only, no dependencies beyond the standard library; tested in tests/cli/test_cli_args.cpp.
#pragma once
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace gpubudget::cli {

/// Bad command-line input: the message is one line, without the program name.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One option the parser knows: its name without the leading `--`.
struct option_spec {
  std::string name;
  bool takes_value = false;
  std::string value_name;  ///< for help: "N", "NAME", "PCT"
  std::string help;        ///< one line for --help
};

/// Optimal-string-alignment distance (Levenshtein plus adjacent transposition): "bacth" and
/// "batch" are 1 apart, "devcie" and "device" 1, "frobnicate" and "batch" far.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

/// The candidate closest to `word`, if it is close enough to be a likely typo: at most 2 edits,
/// and fewer than half of the word's length (so "ab" does not suggest "lr"). Ties: the first.
inline std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    const auto d = edit_distance(word, c);
    if (d > 2 || 2 * d >= std::max(word.size(), c.size())) continue;
    if (!best || d < best_d) { best = c; best_d = d; }
  }
  return best;
}

/// "; did you mean X?" or "" (for appending to an error message). Candidates that start with
/// `word` come first ("a100" -> "a100_40gb or a100_80gb"), then the closest by edit distance.
inline std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates, std::string_view prefix = "") {
  std::vector<std::string> starts;
  if (word.size() >= 2)
    for (const auto& c : candidates)
      if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) starts.push_back(std::string(prefix) + c);
  if (!starts.empty() && starts.size() <= 3) {
    std::string s = "; did you mean ";
    for (std::size_t i = 0; i < starts.size(); ++i) s += (i ? " or " : "") + starts[i];
    return s + "?";
  }
  const auto c = closest(word, candidates);
  return c ? "; did you mean " + std::string(prefix) + *c + "?" : std::string();
}

/// What `parse` found.
struct parsed_args {
  bool help = false;
  std::vector<std::string> positionals;
  std::map<std::string, std::string> values;  ///< option name (no `--`) -> value ("" for a switch)
  std::vector<std::string> order;             ///< option names in the order given

  bool has(const std::string& name) const { return values.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const {
    const auto it = values.find(name);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
};

/// Parses `args` (without the program name) against `specs`; throws `usage_error`.
inline parsed_args parse(const std::vector<std::string>& args, const std::vector<option_spec>& specs) {
  parsed_args out;
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") { out.help = true; return out; }
  }
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& tok = args[i];
    if (tok.empty()) throw usage_error("empty argument");
    if (tok[0] != '-') { out.positionals.push_back(tok); continue; }
    if (tok.size() < 3 || tok[1] != '-') {
      const auto d = tok.size() >= 2 ? did_you_mean(tok.substr(1), names, "--") : std::string();
      throw usage_error("unknown option " + tok + " (options start with --)" + d);
    }
    std::string name = tok.substr(2);
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const option_spec& s) { return s.name == name; });
    if (spec == specs.end()) throw usage_error("unknown option --" + name + did_you_mean(name, names, "--"));
    if (out.has(name)) throw usage_error("--" + name + " is given twice");
    std::string value;
    if (spec->takes_value) {
      if (inline_value) value = *inline_value;
      else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) value = args[++i];
      else throw usage_error("--" + name + " needs a value (" + spec->value_name + ")");
      if (value.empty()) throw usage_error("--" + name + " needs a value (" + spec->value_name + "), got an empty one");
    } else if (inline_value) {
      throw usage_error("--" + name + " takes no value (got '" + *inline_value + "')");
    }
    out.values[name] = value;
    out.order.push_back(name);
  }
  return out;
}

/// An integer that is the whole token (optional leading '-', then digits) within [lo, hi].
inline std::int64_t parse_integer(std::string_view flag, std::string_view text, std::int64_t lo, std::int64_t hi) {
  const std::string range = "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  const bool digits = !text.empty() && std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                      text != "-";
  if (!digits) throw usage_error(std::string(flag) + ": '" + std::string(text) + "' is not a whole number; " + range);
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && (v < lo || v > hi)))
    throw usage_error(std::string(flag) + ": " + std::string(text) + " is out of range; " + range);
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw usage_error(std::string(flag) + ": '" + std::string(text) + "' is not a whole number; " + range);
  return v;
}

/// A plain decimal number (digits, at most one '.', no sign, exponent, inf or nan) within
/// [lo, hi]; `lo_open` excludes `lo` itself (e.g. a memory size must be > 0).
inline double parse_number(std::string_view flag, std::string_view text, double lo, double hi, bool lo_open = false) {
  auto fmt = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  const std::string range = std::string("expected a number ") + (lo_open ? "greater than " : "from ") + fmt(lo) + (lo_open ? " and up to " : " to ") + fmt(hi);
  const auto dots = std::count(text.begin(), text.end(), '.');
  const auto ndigits = std::count_if(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const bool ok = !text.empty() && dots <= 1 && ndigits >= 1 && static_cast<std::size_t>(dots + ndigits) == text.size() && text.front() != '.' &&
                  text.back() != '.';
  if (!ok) throw usage_error(std::string(flag) + ": '" + std::string(text) + "' is not a plain decimal number; " + range);
  const double v = std::stod(std::string(text));
  if (v > hi || v < lo || (lo_open && v == lo)) throw usage_error(std::string(flag) + ": " + std::string(text) + " is out of range; " + range);
  return v;
}

/// One of `choices`, exactly; otherwise an error listing them (with a "did you mean").
inline std::string parse_choice(std::string_view flag, std::string_view text, const std::vector<std::string>& choices) {
  for (const auto& c : choices)
    if (c == text) return c;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : "|") + c;
  throw usage_error(std::string(flag) + ": unknown value '" + std::string(text) + "' (one of " + list + ")" + did_you_mean(text, choices));
}

/// A comma-separated list without empty elements or repeats ("a,b,c").
inline std::vector<std::string> split_list(std::string_view flag, std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const auto item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) throw usage_error(std::string(flag) + ": empty item in '" + std::string(text) + "' (a comma-separated list, e.g. a,b)");
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw usage_error(std::string(flag) + ": '" + std::string(item) + "' is listed twice");
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace gpubudget::cli
