#!/usr/bin/env python3
"""The library's layers, written down and held against its #include lines.

A header may include headers of its own floor or of floors below it, never above: the data flows
up from the vocabulary (units, shapes, records, the training policy) through the machinery that
lowers records onto the liveness simulator (detail/), the ops and the composition that build
records, the budget, the analyses that read budgets, to the models and the umbrella header.
Nothing under detail/ includes an analysis, an op family or a model: `detail/` is the machinery,
below every public header except the vocabulary it works in (docs/architecture.md).

  tests/layering.py                    check every include of include/gpubudget (CTest layering.includes)
  tests/layering.py --self-contained   also compile each header on its own with $CXX -fsyntax-only
                                       (CTest layering.self_contained): a header names what it uses
  tests/layering.py --self-check       the checker finds a planted include that runs back up

Exit 1 with every violation listed; 0 when the house is in order.
"""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "include"

# (floor, what it is, path patterns relative to include/gpubudget); the first pattern that
# matches a header gives its floor.
FLOORS = [
    (0, "foundation: diagnostics, containers, units, allocator settings, device probes",
     ["base/*", "units.hpp", "alloc_conf.hpp", "probe/*", "probe/detail/*"]),
    (1, "vocabulary: shapes, records, devices, the training policy, op arguments",
     ["shape.hpp", "layer.hpp", "devices.hpp", "training.hpp", "layers/options.hpp"]),
    (2, "machinery: the simulator, shared autograd rules, op records, the walk, the allocator model",
     ["detail/*"]),
    (3, "ops and composition", ["graph.hpp", "layers.hpp", "layers/*"]),
    (4, "the budget", ["budget.hpp", "budget_of.hpp"]),
    (5, "analyses that read budgets", ["check.hpp", "timeline.hpp", "flops.hpp", "planner.hpp", "report.hpp", "svg.hpp", "svg/*",
                                       "distributed.hpp"]),
    (6, "models, serving, config readers, the umbrella header, the probe's bridge to budgets",
     ["models/*", "serving.hpp", "hf_config.hpp", "gpubudget.hpp", "budget_probe.hpp"]),
]

INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*<gpubudget/([^>]+)>', re.M)


def matches(rel: str, pattern: str) -> bool:
    if pattern.endswith("!"):  # an exception listed ahead of a folder's pattern: not this floor
        return False
    if pattern.endswith("/*"):
        folder = pattern[:-1]
        return rel.startswith(folder) and "/" not in rel[len(folder):]
    return rel == pattern


def floor_of(rel: str):
    for floor, _, patterns in FLOORS:
        if any(p.endswith("!") and rel == p[:-1] for p in patterns):
            continue
        if any(matches(rel, p) for p in patterns):
            return floor
    return None


def headers():
    base = INCLUDE / "gpubudget"
    return sorted(str(p.relative_to(base)) for p in base.rglob("*.hpp"))


def violations(sources):
    """sources: {relative path: text}. Every include that runs back up, and every header no floor holds."""
    found = []
    for rel, text in sorted(sources.items()):
        floor = floor_of(rel)
        if floor is None:
            found.append(f"{rel}: on no floor (add it to tests/layering.py FLOORS)")
            continue
        for target in INCLUDE_LINE.findall(text):
            target_floor = floor_of(target)
            if target_floor is None:
                found.append(f"{rel} includes {target}, which is on no floor")
            elif target_floor > floor:
                found.append(f"{rel} (floor {floor}) includes {target} (floor {target_floor}): an include that runs back up")
    return found


def read_sources():
    base = INCLUDE / "gpubudget"
    return {rel: (base / rel).read_text() for rel in headers()}


def self_contained(cxx: str):
    """Each header compiles alone (-fsyntax-only), but the CUDA probes (probe/cuda_*.hpp)."""
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        unit = Path(tmp) / "one_header.cpp"
        for rel in headers():
            if rel.startswith("probe/cuda_"):  # the CUDA probes need the toolkit's headers (tests/probe builds them)
                continue
            unit.write_text(f"#include <gpubudget/{rel}>\nint main() {{}}\n")
            r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-I{INCLUDE}", str(unit)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                first = next((l for l in r.stderr.splitlines() if "error" in l), r.stderr.strip()[:200])
                failed.append(f"{rel} does not compile on its own: {first}")
    return failed


def self_check():
    """A planted back-up include and a header on no floor must both be found."""
    planted = {"detail/walk.hpp": "#include <gpubudget/check.hpp>\n", "check.hpp": "#include <gpubudget/budget.hpp>\n",
               "nowhere.hpp": ""}
    found = violations(planted)
    ok = any("detail/walk.hpp (floor 2) includes check.hpp (floor 5)" in v for v in found) and any("nowhere.hpp: on no floor" in v for v in found) \
        and not any(v.startswith("check.hpp") for v in found)
    print("layering self-check:", "ok" if ok else f"FAILED ({found})")
    return 0 if ok else 1


def main(argv):
    if "--self-check" in argv:
        return self_check()
    found = violations(read_sources())
    if "--self-contained" in argv:
        found += self_contained(os.environ.get("CXX", "c++"))
    for v in found:
        print(v)
    if found:
        return 1
    print(f"layering: {len(headers())} headers on {len(FLOORS)} floors, no include runs back up" +
          (", each compiles on its own" if "--self-contained" in argv else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
