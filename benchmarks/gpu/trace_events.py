#!/usr/bin/env python3
"""Turns the committed CUDA allocation traces (benchmarks/accuracy/reference/cuda-h100/*.json.gz,
cuda-h200/*.json.gz with the capped `cap16_*` trials, and cuda-h200/cuda-cases/*.json.gz, named
`h200:<case>`) into tests/unit/data/allocator_traces.txt,
the alloc/free sequence test_caching_allocator.cpp replays through the C++ allocator model (C++
tests do not read gzip).

Format, one block per trace:
  case <name> <max reserved bytes> <segments> <events>
  then <segments> device addresses, the trace's segment_alloc events in order (PyTorch orders
  equal-size free blocks by address), then <events> tokens, whitespace-separated:
  +<requested bytes>  an allocation (they are numbered 0, 1, ... in order)
  W<bytes>            an allocation that is a cuDNN workspace (first frame run_conv_plan): optional, as
                      cuDNN catches its OOM and tries another plan; numbered with the others
  -<n>                allocation n is freed (the trace's free_completed: the block goes back to the pool)
  E                   torch.cuda.empty_cache() (a run of segment_free that no OOM caused)
  C<bytes>            set_per_process_memory_fraction: the allocator's cap from here on (a capped
                      trial's `allocator_cap`, set after the batch-1 job's empty_cache)
  R<bytes>            a cuDNN workspace the cap refused (an `oom` event under cuDNN's try_configs /
                      run_conv_plan: cuDNN catches the error and tries its next plan; the run goes on)
  X<bytes>            the request that raised torch.OutOfMemoryError (the trace's last event that counts)
The max reserved bytes are the trace's truth: the running sum of segment_alloc - segment_free.
Usage: python3 benchmarks/gpu/trace_events.py [output]
"""
import glob
import gzip
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def frames_of(event):
    return event[4] if len(event) > 4 and event[4] else []


def is_cudnn_workspace(event):
    frames = frames_of(event)
    return bool(frames) and frames[0].startswith("at::native::run_conv_plan")


def caught_by_cudnn(event):
    """An OOM cuDNN's plan search catches (it then tries a plan with a smaller workspace)."""
    return any(f.startswith(("at::native::try_configs", "at::native::run_conv_plan")) for f in frames_of(event))


def events_of(path):
    d = json.load(gzip.open(path))
    cap = (d.get("result") or {}).get("allocator_cap") if os.path.basename(path).startswith("cap16_") else None
    ev = d["events"]
    live, tokens, addresses, reserved, peak, count, k = {}, [], [], 0, 0, 0, 0
    while k < len(ev):
        action, size, addr = ev[k][0], ev[k][1], ev[k][2]
        if action == "segment_alloc":
            reserved += size
            peak = max(peak, reserved)
            addresses.append(addr)
        elif action == "segment_free":  # a run of them: empty_cache(), or the release before an OOM
            while k < len(ev) and ev[k][0] == "segment_free":
                reserved -= ev[k][1]
                k += 1
            if k < len(ev) and ev[k][0] == "oom":
                continue
            tokens.append("E")
            if cap is not None:
                tokens.append("C%d" % cap)
                cap = None
            continue
        elif action == "alloc":
            live[addr] = count
            tokens.append(("W%d" if is_cudnn_workspace(ev[k]) else "+%d") % size)
            count += 1
        elif action == "free_completed":
            tokens.append("-%d" % live.pop(addr))
        elif action == "oom" and caught_by_cudnn(ev[k]):
            tokens.append("R%d" % size)
        elif action == "oom":
            tokens.append("X%d" % size)
            break
        k += 1
    return d["case"], peak, addresses, tokens


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests/unit/data/allocator_traces.txt")
    lines = []
    paths = sorted(glob.glob(os.path.join(ROOT, "benchmarks/accuracy/reference/cuda-h100/*.json.gz")))
    paths += sorted(glob.glob(os.path.join(ROOT, "benchmarks/accuracy/reference/cuda-h200/*.json.gz")))
    paths += sorted(glob.glob(os.path.join(ROOT, "benchmarks/accuracy/reference/cuda-h200/cuda-cases/*.json.gz")))
    for path in paths:
        case, peak, addresses, tokens = events_of(path)
        if os.path.basename(os.path.dirname(path)) == "cuda-cases":  # the 77-case file's cases again, on the H200
            case = "h200:" + case
        lines.append("case %s %d %d %d" % (case, peak, len(addresses), len(tokens)))
        lines += [" ".join(map(str, addresses[k:k + 8])) for k in range(0, len(addresses), 8)]
        lines += [" ".join(tokens[k:k + 16]) for k in range(0, len(tokens), 16)]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
