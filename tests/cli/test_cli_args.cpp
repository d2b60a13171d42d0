// Unit tests of tools/cli_args.hpp: the strict parser behind the gpubudget command line.
#include <catch2/catch.hpp>

#include "cli_args.hpp"

using namespace gpubudget::cli;

namespace {
const std::vector<option_spec> specs = {
    {"batch", true, "N", "samples"}, {"micro-batch", true, "N", "micro"}, {"device", true, "NAME", "gpu"}, {"ema", false, "", "ema"},
    {"devices", true, "A,B", "gpus"}};

std::string error_of(const std::vector<std::string>& args) {
  try {
    parse(args, specs);
  } catch (const usage_error& e) {
    return e.what();
  }
  return "(no error)";
}
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const usage_error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("edit distance counts insertions, deletions, substitutions and transpositions") {
  CHECK(edit_distance("batch", "batch") == 0);
  CHECK(edit_distance("bacth", "batch") == 1);  // transposition
  CHECK(edit_distance("devcie", "device") == 1);
  CHECK(edit_distance("btch", "batch") == 1);
  CHECK(edit_distance("batchh", "batch") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("closest suggests only likely typos") {
  const std::vector<std::string> names = {"batch", "micro-batch", "device", "devices", "ema"};
  CHECK(closest("bacth", names) == std::optional<std::string>("batch"));
  CHECK(closest("devcie", names) == std::optional<std::string>("device"));
  CHECK_FALSE(closest("frobnicate", names).has_value());
  CHECK_FALSE(closest("x", names).has_value());
  CHECK(did_you_mean("bacth", names, "--") == "; did you mean --batch?");
  CHECK(did_you_mean("zzzzzz", names).empty());
  CHECK(did_you_mean("micro", names, "--") == "; did you mean --micro-batch?");      // a prefix
  CHECK(did_you_mean("a100", {"a10", "a100_40gb", "a100_80gb"}) == "; did you mean a100_40gb or a100_80gb?");
}

TEST_CASE("parse: positionals, values, switches, --name=value") {
  const auto a = parse({"resnet50", "--batch", "32", "--ema", "--device=t4"}, specs);
  CHECK_FALSE(a.help);
  REQUIRE(a.positionals.size() == 1);
  CHECK(a.positionals[0] == "resnet50");
  CHECK(a.get("batch") == std::optional<std::string>("32"));
  CHECK(a.get("device") == std::optional<std::string>("t4"));
  CHECK(a.has("ema"));
  CHECK(a.get("ema") == std::optional<std::string>(""));
  CHECK_FALSE(a.has("devices"));
  CHECK(a.order == std::vector<std::string>{"batch", "ema", "device"});
}

TEST_CASE("parse: a negative number is a value (its range check rejects it later)") {
  const auto a = parse({"m", "--batch", "-3"}, specs);
  CHECK(a.get("batch") == std::optional<std::string>("-3"));
}

TEST_CASE("parse: --help or -h anywhere wins, even where a value is expected") {
  CHECK(parse({"--help"}, specs).help);
  CHECK(parse({"-h"}, specs).help);
  CHECK(parse({"resnet50", "--help"}, specs).help);
  CHECK(parse({"resnet50", "--batch", "--help"}, specs).help);
  CHECK(parse({"resnet50", "--bacth", "3", "--help"}, specs).help);
}

TEST_CASE("parse: strict errors") {
  CHECK(error_of({"m", "--bacth", "2"}) == "unknown option --bacth; did you mean --batch?");
  CHECK(error_of({"m", "--devcie", "t4"}) == "unknown option --devcie; did you mean --device?");
  CHECK(error_of({"m", "--frobnicate", "3"}) == "unknown option --frobnicate");
  CHECK(error_of({"m", "-b", "3"}) == "unknown option -b (options start with --)");
  CHECK(error_of({"m", "--batch", "2", "--batch", "3"}) == "--batch is given twice");
  CHECK(error_of({"m", "--batch"}) == "--batch needs a value (N)");
  CHECK(error_of({"m", "--batch", "--ema"}) == "--batch needs a value (N)");
  CHECK(error_of({"m", "--batch="}) == "--batch needs a value (N), got an empty one");
  CHECK(error_of({"m", "--ema=yes"}) == "--ema takes no value (got 'yes')");
  CHECK(error_of({"m", ""}) == "empty argument");
  CHECK(error_of({"m", "--"}) == "unknown option -- (options start with --)");
}

TEST_CASE("parse_integer takes the whole token, in range") {
  CHECK(parse_integer("--batch", "32", 1, 100) == 32);
  CHECK(parse_integer("--batch", "1", 1, 100) == 1);
  CHECK(parse_integer("--batch", "100", 1, 100) == 100);
  CHECK(parse_integer("--x", "-5", -10, 10) == -5);
  CHECK(parse_integer("--x", "0", 0, 0) == 0);
  const std::string range = "expected a whole number from 1 to 100";
  CHECK(error_of([] { parse_integer("--batch", "12abc", 1, 100); }) == "--batch: '12abc' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", "1e3", 1, 100); }) == "--batch: '1e3' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", "abc", 1, 100); }) == "--batch: 'abc' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", "", 1, 100); }) == "--batch: '' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", "-", 1, 100); }) == "--batch: '-' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", "+5", 1, 100); }) == "--batch: '+5' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", " 5", 1, 100); }) == "--batch: ' 5' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", "0x10", 1, 100); }) == "--batch: '0x10' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", "2.0", 1, 100); }) == "--batch: '2.0' is not a whole number; " + range);
  CHECK(error_of([] { parse_integer("--batch", "0", 1, 100); }) == "--batch: 0 is out of range; " + range);
  CHECK(error_of([] { parse_integer("--batch", "-3", 1, 100); }) == "--batch: -3 is out of range; " + range);
  CHECK(error_of([] { parse_integer("--batch", "101", 1, 100); }) == "--batch: 101 is out of range; " + range);
  CHECK(error_of([] { parse_integer("--batch", "99999999999999999999", 1, 100); }) == "--batch: 99999999999999999999 is out of range; " + range);
}

TEST_CASE("parse_number takes plain decimals only") {
  CHECK(parse_number("--memory-gib", "24", 0, 100, true) == Approx(24.0));
  CHECK(parse_number("--memory-gib", "12.5", 0, 100, true) == Approx(12.5));
  CHECK(parse_number("--memory-gib", "0.25", 0, 100, true) == Approx(0.25));
  CHECK(parse_number("--p", "0", 0, 100) == Approx(0.0));
  const std::string open = "expected a number greater than 0 and up to 100";
  CHECK(error_of([] { parse_number("--m", "0", 0, 100, true); }) == "--m: 0 is out of range; " + open);
  CHECK(error_of([] { parse_number("--m", "100.5", 0, 100, true); }) == "--m: 100.5 is out of range; " + open);
  for (const char* bad : {"1e3", "-5", "inf", "nan", "", ".5", "5.", "1.2.3", "12abc", "0x1p3", " 1"})
    CHECK(error_of([bad] { parse_number("--m", bad, 0, 100, true); }) == "--m: '" + std::string(bad) + "' is not a plain decimal number; " + open);
  CHECK(error_of([] { parse_number("--p", "101", 0, 100); }) == "--p: 101 is out of range; expected a number from 0 to 100");
}

TEST_CASE("parse_choice accepts exact names and suggests near ones") {
  const std::vector<std::string> p = {"fp32", "amp_fp16", "amp_bf16", "fp16", "bf16"};
  CHECK(parse_choice("--precision", "amp_bf16", p) == "amp_bf16");
  CHECK(error_of([&] { parse_choice("--precision", "fp8", p); }) == "--precision: unknown value 'fp8' (one of fp32|amp_fp16|amp_bf16|fp16|bf16)");
  CHECK(error_of([&] { parse_choice("--precision", "amp_fp61", p); }) ==
        "--precision: unknown value 'amp_fp61' (one of fp32|amp_fp16|amp_bf16|fp16|bf16); did you mean amp_fp16?");
  CHECK(error_of([&] { parse_choice("--precision", "FP32", p); }).rfind("--precision: unknown value 'FP32'", 0) == 0);
}

TEST_CASE("split_list rejects empty and repeated items") {
  CHECK(split_list("--devices", "t4") == std::vector<std::string>{"t4"});
  CHECK(split_list("--devices", "t4,a10,l4") == std::vector<std::string>{"t4", "a10", "l4"});
  CHECK(error_of([] { split_list("--devices", "t4,,a10"); }) == "--devices: empty item in 't4,,a10' (a comma-separated list, e.g. a,b)");
  CHECK(error_of([] { split_list("--devices", ",t4"); }) == "--devices: empty item in ',t4' (a comma-separated list, e.g. a,b)");
  CHECK(error_of([] { split_list("--devices", "t4,"); }) == "--devices: empty item in 't4,' (a comma-separated list, e.g. a,b)");
  CHECK(error_of([] { split_list("--devices", "t4,t4"); }) == "--devices: 't4' is listed twice");
}
