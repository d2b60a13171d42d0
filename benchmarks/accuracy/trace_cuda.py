#!/usr/bin/env python3
"""Replay a CUDA allocation trace (reference/cuda-h100/<case>.json.gz) and print what is live.

The trace covers measure_cuda.py's whole run_case: warm-up step, saved-bytes pass, measured step.
The measured step starts after the last event of the saved-bytes pass (a `saved_bytes_of`
frame); forward + loss end at the first event of `loss.backward()` (StepEnv.backward's frame or an
autograd node); backward ends at the first event of the optimizer or of the measured step's own
code (`del out, loss`).
The phases are found by function name, not line, so traces of any version of the script read
the same way. Printed per case:
  - memory_allocated replayed with the caching allocator's split rule (allocated_replay), against
    the reference's after_forward / fwd_bwd_peak: the gap to the requested bytes is the allocator's
  - resident base, after-forward and fwd+bwd peak (above the base, as the reference fields are)
  - the blocks live above the base at after-forward and at the peak, grouped by allocating op/node
  - every cuDNN workspace (allocation under at::native::run_conv_plan) of the measured step, with
    its pass (fwd / bwd-data / bwd-weight) and the output allocated by the same conv call

Usage: trace_cuda.py CASE [CASE...]   (names under reference/cuda-h100/)
"""
import gzip
import json
import os
import sys
from collections import defaultdict

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "cuda-h100")


def op_of(frames):
    """The ATen op (first at:: frame that is not an allocator/workspace helper) and autograd node."""
    aten = next((f for f in frames if f.startswith("at::") and "empty" not in f and "alloc" not in f.lower()), "?")
    node = next((f.split("::")[-2] for f in frames if f.endswith("::apply") and "Backward" in f), "")
    py = next((f for f in frames if ".py:" in f), "")
    return aten, node, py


def is_workspace(frames):
    return any("run_conv_plan" in f for f in frames)


def conv_pass(frames):
    for key, name in (("backward_weight", "bwd-weight"), ("backward_input", "bwd-data"), ("forward", "fwd")):
        if any("raw_cudnn_convolution_" + key in f for f in frames):
            return name
    return "?"


def script_frame(f, function):
    """Is `f` measure_cuda.py's frame of `function` (frames read 'measure_cuda.py:LINE NAME')?"""
    return f.startswith("measure_cuda.py:") and f.endswith(" " + function)


def phases(ev):
    start = max(i for i, e in enumerate(ev) if any(script_frame(f, "saved_bytes_of") for f in e[4]))
    fwd_end = next(i for i in range(start + 1, len(ev))
                   if any(script_frame(f, "backward") or ("Backward" in f and f.endswith("::apply")) for f in ev[i][4]))
    bwd_end = next((i for i in range(fwd_end, len(ev)) if ends_backward(ev[i][4])), len(ev))
    return start + 1, fwd_end, bwd_end


def ends_backward(frames):
    """The first event after backward: the optimizer's, or one the measured step's own code
    makes (`del out, loss`: run_case's line in older scripts, _measure_step's since)."""
    innermost = next((f for f in frames if f.startswith("measure_cuda.py:")), "")
    return (any("optim" in f or script_frame(f, "step") for f in frames)
            or script_frame(innermost, "run_case") or script_frame(innermost, "_measure_step"))


def replay(ev, upto, live=None, start=0):
    live = dict(live or {})
    for e in ev[start:upto]:
        if e[0] == "alloc":
            live[e[2]] = (e[1], e[4])
        elif e[0] == "free_requested":
            live.pop(e[2], None)
    return live


SMALL_SEGMENT = 2 * 1024 * 1024  # kSmallBuffer: the small pool's segments (requests <= 1 MiB)
SMALL_SIZE = 1024 * 1024  # kSmallSize: a large-pool block is split only when more than this is left


def allocated_replay(ev):
    """memory_allocated after each event, by replaying the caching allocator's block splitting
    (c10/cuda/CUDACachingAllocator.cpp: round_size to 512 B; should_split: small pool when >= 512 B
    remain, large pool when > kSmallSize remain; free blocks merge with free neighbours). The trace
    gives each block's address, so only the split decision is modelled. Returns a list."""
    segs = {}  # segment start -> (size, {block addr: [size, allocated]})
    out, allocated = [], 0
    for e in ev:
        act, size, addr = e[0], e[1], e[2]
        if act == "segment_alloc":
            segs[addr] = (size, {addr: [size, False]})
        elif act == "segment_free":
            segs.pop(addr, None)
        elif act in ("alloc", "free_requested", "free_completed"):
            start = next((a for a, (n, _) in segs.items() if a <= addr < a + n), None)
            if start is None:
                out.append(allocated)
                continue
            seg_size, blocks = segs[start]
            if act == "alloc":
                bsize = blocks[addr][0]
                rounded = max(512, -(-size // 512) * 512)
                rest = bsize - rounded
                if rest >= 512 if seg_size == SMALL_SEGMENT else rest > SMALL_SIZE:
                    blocks[addr] = [rounded, True]
                    blocks[addr + rounded] = [rest, False]
                else:
                    blocks[addr] = [bsize, True]
                allocated += blocks[addr][0]
            elif act == "free_requested":
                allocated -= blocks[addr][0]
            else:
                blocks[addr][1] = False
                _merge(blocks)
        out.append(allocated)
    return out


def _merge(blocks):
    keys = sorted(blocks)
    for a, b in zip(keys, keys[1:]):
        if a in blocks and not blocks[a][1] and not blocks[b][1] and a + blocks[a][0] == b:
            blocks[a][0] += blocks.pop(b)[0]
            return _merge(blocks)


def total(live):
    return sum(v[0] for v in live.values())


def grouped(live, base):
    g = defaultdict(lambda: [0, 0])
    for addr, (size, frames) in live.items():
        if addr in base:
            continue
        aten, node, py = op_of(frames)
        k = ("WORKSPACE " + conv_pass(frames) if is_workspace(frames) else aten) + (" <" + node + ">" if node else "")
        g[k][0] += size
        g[k][1] += 1
    return sorted(g.items(), key=lambda kv: -kv[1][0])


def report(case):
    d = json.load(gzip.open(os.path.join(HERE, case + ".json.gz")))
    ev, res = d["events"], d["result"]
    s, f, b = phases(ev)
    base = replay(ev, s)
    base_bytes = total(base)
    after = replay(ev, f, base, s)
    live, peak, peak_at, peak_live = dict(base), 0, s, dict(base)
    for i in range(s, b):
        e = ev[i]
        if e[0] == "alloc":
            live[e[2]] = (e[1], e[4])
            if total(live) - base_bytes > peak:
                peak, peak_at, peak_live = total(live) - base_bytes, i, dict(live)
        elif e[0] == "free_requested":
            live.pop(e[2], None)
    alloc = allocated_replay(ev)
    print(f"=== {case}: events {s}..{f} forward+loss, {f}..{b} backward")
    print(f"allocated (allocator replay, CV0): after forward {alloc[f - 1] - alloc[s - 1]} (reference "
          f"{res['after_forward_bytes']}), fwd+bwd peak {max(alloc[s:b]) - alloc[s - 1]} (reference {res['fwd_bwd_peak_bytes']})")
    print(f"resident base {base_bytes}  (reference resident_bytes {res['resident_bytes']})")
    print(f"after forward {total(after) - base_bytes}  (reference {res['after_forward_bytes']})")
    print(f"fwd+bwd peak  {peak} at event {peak_at}  (reference {res['fwd_bwd_peak_bytes']})")
    print("-- live above base after forward, by op:")
    for k, (n, c) in grouped(after, base):
        print(f"   {n:>12} {c:>4}x {k}")
    print(f"-- live above base at the peak (event {peak_at}: {ev[peak_at][1]} B by {op_of(ev[peak_at][4])}):")
    for k, (n, c) in grouped(peak_live, base):
        print(f"   {n:>12} {c:>4}x {k}")
    print("-- cuDNN workspaces of the measured step (event, pass, bytes, the conv call's result alloc):")
    for i in range(s, b):
        e = ev[i]
        if e[0] == "alloc" and is_workspace(e[4]):
            out = next((ev[j][1] for j in range(i - 1, max(s, i - 6), -1)
                        if ev[j][0] == "alloc" and not is_workspace(ev[j][4])), None)
            print(f"   {i:>5} {conv_pass(e[4]):<10} {e[1]:>10}  prev-alloc {out}")


if __name__ == "__main__":
    for c in sys.argv[1:]:
        report(c)
