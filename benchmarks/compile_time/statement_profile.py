#!/usr/bin/env python3
"""Where a budget's constant-evaluation steps go, function by function (issue I).

Clang charges one step per statement it evaluates (a function call costs its body's braces and
its statements; an expression inside one statement costs none), and reports only the total. The
library's functions are all `constexpr`, so the same budget can run at run time: this script
rewrites a case written by generate.py so that its budget runs in `main`, builds it with gcov
(g++ --coverage -O0), runs it, and sums the executed lines of every function. Executed lines
track evaluated statements closely (one statement per line is the library's style; a
multi-line statement counts once per line, so treat the figures as a profile, not as steps).

    benchmarks/compile_time/statement_profile.py CASE.cpp [--top 40] [--include DIR]

prints each function's calls, executed lines per call and in all, the share of the total, and
the totals per header (grouped into the walk's phases). Cases with `require_fits<b>` or
`max_micro_batch_of<...>()` are rewritten to their run-time forms.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_INCLUDE = os.path.normpath(os.path.join(HERE, "..", "..", "include"))

# header -> phase, as issue I names them
PHASES = [
    ("detail/sim.hpp", "liveness (simulator)"),
    ("detail/walk.hpp", "walk (forward, backward)"),
    ("detail/ops.hpp", "lowering (op rules)"),
    ("layers/", "lowering (op rules)"),
    ("detail/op_record.hpp", "lowering (op rules)"),
    ("shape.hpp", "shapes and bytes"),
    ("units.hpp", "shapes and bytes"),
    ("base/dyn_array.hpp", "arrays"),
    ("allocator", "allocator model"),
    ("budget.hpp", "totals"),
    ("check.hpp", "max_micro_batch"),
]


def phase_of(header):
    for prefix, phase in PHASES:
        if prefix in header:
            return phase
    return "other"


def runtime_version(source):
    """The case with its budget evaluated in main() instead of in constant expressions."""
    lines = source.splitlines()
    first = next((i for i, l in enumerate(lines) if l.startswith("constexpr auto b =") or l.startswith("constexpr auto mb =")
                  or (l.startswith("static_assert(") and "max_micro_batch" in l)), None)
    if first is None:
        sys.exit("statement_profile: no `constexpr auto b = ...` or max_micro_batch static_assert in the case")
    body = ["int main() {"]
    for l in lines[first:]:
        l = re.sub(r"max_micro_batch_of<(.*)>\(\)", r"max_micro_batch(\1)", l)
        if l.startswith("constexpr auto "):
            body.append("  auto " + l[len("constexpr auto "):])  # not const: a const one may be constant-initialized
        elif l.startswith("static_assert("):
            if "<b>" in l:
                continue  # require_fits<b>: the same budget again, as a template argument
            expr = l[len("static_assert("):l.rindex(")")]
            body.append(f"  if (!({expr})) return 1;")
        elif l.strip():
            body.append("  " + l)
    body.append("  return 0;\n}")
    return "\n".join(lines[:first] + body) + "\n"


def profile(case, include, workdir):
    src = os.path.join(workdir, "case.cpp")
    with open(case) as f, open(src, "w") as out:
        out.write(runtime_version(f.read()))
    obj = os.path.join(workdir, "case.o")
    subprocess.run(["g++", "-std=c++20", "-O0", "--coverage", "-I", include, "-c", src, "-o", obj], check=True)
    subprocess.run(["g++", "--coverage", obj, "-o", os.path.join(workdir, "case")], check=True)
    if subprocess.run([os.path.join(workdir, "case")], cwd=workdir).returncode != 0:
        sys.exit("statement_profile: the case's checks failed at run time")
    subprocess.run(["gcov", "--json-format", "-o", workdir, src], cwd=workdir, check=True, stdout=subprocess.DEVNULL)
    with gzip.open(os.path.join(workdir, "case.gcov.json.gz")) as f:
        return json.load(f)


def functions(report, include):
    """(header, first line) -> [calls, executed lines, name]; template instances summed."""
    out = {}
    for f in report["files"]:
        path = os.path.normpath(f["file"])
        if not path.startswith(include):
            continue
        header = os.path.relpath(path, include)
        counts = {}
        for l in f["lines"]:
            counts[l["line_number"]] = counts.get(l["line_number"], 0) + l["count"]
        for fn in f["functions"]:
            key = (header, fn["start_line"])
            if key not in out:
                lines = sum(c for n, c in counts.items() if fn["start_line"] <= n <= fn["end_line"])
                out[key] = [0, lines, re.sub(r"\(.*", "", fn["demangled_name"])]
            out[key][0] += fn["execution_count"]
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", help="a .cpp case written by generate.py")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--include", default=DEFAULT_INCLUDE)
    args = ap.parse_args(argv)
    include = os.path.normpath(os.path.abspath(args.include))
    with tempfile.TemporaryDirectory() as work:
        fns = functions(profile(args.case, include, work), include)
    total = sum(v[1] for v in fns.values()) or 1
    print(f"{os.path.basename(args.case)}: {total:,} executed lines in the library's functions")
    print(f"\n{'calls':>9} {'lines/call':>10} {'lines':>9} {'share':>6}  function (header:line)")
    for (header, line), (calls, lines, name) in sorted(fns.items(), key=lambda kv: -kv[1][1])[:args.top]:
        per = lines / calls if calls else 0
        print(f"{calls:>9,} {per:>10.1f} {lines:>9,} {100 * lines / total:>5.1f}%  {name} ({header}:{line})")
    phases = {}
    for (header, _), (_, lines, _) in fns.items():
        phases[phase_of(header)] = phases.get(phase_of(header), 0) + lines
    print(f"\n{'lines':>9} {'share':>6}  phase")
    for phase, lines in sorted(phases.items(), key=lambda kv: -kv[1]):
        print(f"{lines:>9,} {100 * lines / total:>5.1f}%  {phase}")


if __name__ == "__main__":
    main(sys.argv[1:])
