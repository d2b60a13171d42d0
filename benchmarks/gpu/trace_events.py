#!/usr/bin/env python3
"""Turns the committed CUDA allocation traces (benchmarks/accuracy/reference/cuda-h100/*.json.gz and
the uncapped ones of cuda-h200/: the capped `cap16_*` runs free segments under the cap)
into tests/unit/data/allocator_traces.txt, the alloc/free sequence test_caching_allocator.cpp
replays through the C++ allocator model (C++ tests do not read gzip).

Format, one block per trace:
  case <name> <max reserved bytes> <events>
  then <events> tokens, whitespace-separated: +<requested bytes> (an allocation; they are numbered
  0, 1, ... in order) or -<n> (allocation n is freed: the trace's free_completed, when the block
  goes back to the pool).
The max reserved bytes are the trace's truth: the running sum of segment_alloc - segment_free.
Usage: python3 benchmarks/gpu/trace_events.py [output]
"""
import glob
import gzip
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def events_of(path):
    d = json.load(gzip.open(path))
    live, tokens, reserved, peak, count = {}, [], 0, 0, 0
    for action, size, addr, *_ in d["events"]:
        if action == "segment_alloc":
            reserved += size
            peak = max(peak, reserved)
        elif action == "segment_free":
            reserved -= size
        elif action == "alloc":
            live[addr] = count
            tokens.append("+%d" % size)
            count += 1
        elif action == "free_completed":
            tokens.append("-%d" % live.pop(addr))
    return d["case"], peak, tokens


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests/unit/data/allocator_traces.txt")
    lines = []
    paths = sorted(glob.glob(os.path.join(ROOT, "benchmarks/accuracy/reference/cuda-h100/*.json.gz")))
    paths += sorted(p for p in glob.glob(os.path.join(ROOT, "benchmarks/accuracy/reference/cuda-h200/*.json.gz"))
                    if not os.path.basename(p).startswith("cap16_"))
    for path in paths:
        case, peak, tokens = events_of(path)
        lines.append("case %s %d %d" % (case, peak, len(tokens)))
        lines += [" ".join(tokens[k:k + 16]) for k in range(0, len(tokens), 16)]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
