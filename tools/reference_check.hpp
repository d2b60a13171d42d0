// tools/reference_check.hpp — the CLI's reference check (`gpubudget --reference FILE [--check]
// [--known-misses CASE:FIELD,...]`), compiled on its own (reference_check.cpp): reads a measured
// reference file (the CPU probes' format, the 77-case CUDA file, the real-library files), rebuilds
// each case for the estimator, and prints measured vs estimated per field with the tolerances of
// the issue that set them. Kept apart from estimate.cpp (issue G item 6): arguments live in
// cli_args.hpp, model sources in zoo_registry.hpp, hf_cli.hpp and graph_source.hpp.
#pragma once
#include <set>
#include <string>

#include "budget_view.hpp"

namespace gpubudget::tools::reference_check {

/// --json on a reference case: the fields of `b` as the reference files name them.
void print_reference_json(const budget_view& b);
/// --known-misses CASE:FIELD,...; cli::usage_error on a malformed item.
std::set<std::string> parse_known_misses(const std::string& list);
/// --reference FILE [--check]: the table; the exit status (1: a field outside its tolerance or a
/// listed miss that now passes, with --check).
int check_reference(const std::string& path, bool check, const std::set<std::string>& known_misses);

}  // namespace gpubudget::tools::reference_check
