#!/usr/bin/env python3
"""Set the estimator's allocator replay beside a measured allocation trace, request by request.

    GPUBUDGET_ALLOCATOR_EVENTS=/tmp/ev.txt gpubudget --reference ONE_CASE.json
    python3 benchmarks/gpu/compare_allocator_events.py /tmp/ev.txt TRACE.json.gz [--replay N] [--context 3]

The events file (tools/estimate.cpp, detail::allocator_event_tap) holds every replay the estimator
ran ('R cap', '+ bytes handle', '- 0 handle', 'S bytes', 'F bytes': a segment released under the cap, 'O bytes': a request the cap refused, an OOM, 'P n': step n begins); --replay picks one (default: the
uncapped one with the most requests). The trace is a `measure_*.py --trace` file
(reference/cuda-h*/<case>.json.gz). Both request sequences (bytes rounded to 512) are aligned
with difflib; printed: where they differ (the trace's ATen op and Python line beside each
measured request) and, per side, the new segments and the reserved bytes they reach, so the
first request that makes a segment on one side only is where a rule is missing.
"""
import argparse
import difflib
import gzip
import json


def replays(path):
    runs, cur = [], None
    with open(path) as f:
        for line in f:
            what, a, b = line.split()
            if what == "R":
                cur = {"cap": int(a), "events": []}
                runs.append(cur)
            elif cur is not None:
                cur["events"].append((what, int(a), int(b)))
    return runs


def estimator_side(run):
    reqs, segs, reserved = [], [], 0
    for what, size, _ in run["events"]:
        if what == "+":
            reqs.append((size, ""))
        elif what == "S":
            reserved += size
            segs.append((len(reqs), size, reserved))
        elif what == "F":  # a capped replay's release_cached_blocks
            reserved -= size
    return reqs, segs


def op_of(frames):
    aten = next((f.split("(")[0] for f in frames if f.startswith("at::native") or "Backward" in f), "?")
    py = next((f for f in frames if ".py" in f), "")
    return aten + " " + py


def trace_side(path, start=0):
    d = json.load(gzip.open(path))
    reqs, segs, reserved = [], [], 0
    for action, size, _addr, _stream, frames in d["events"][start:]:
        if action == "alloc":
            reqs.append((size, op_of(frames)))
        elif action == "segment_alloc":
            reserved += size
            segs.append((len(reqs), size, reserved))
        elif action == "segment_free":
            reserved -= size
    return reqs, segs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("events")
    ap.add_argument("trace")
    ap.add_argument("--replay", type=int, help="which replay of the events file (0-based)")
    ap.add_argument("--context", type=int, default=2)
    ap.add_argument("--trace-start", type=int, default=0,
                    help="the trace's event to start at (a cap16_* trial after its batch-1 warm-up run)")
    args = ap.parse_args()
    runs = replays(args.events)
    k = args.replay if args.replay is not None else max(
        (i for i, r in enumerate(runs) if r["cap"] == 0), key=lambda i: len(runs[i]["events"]))
    est, est_segs = estimator_side(runs[k])
    meas, meas_segs = trace_side(args.trace, args.trace_start)
    print("replay %d of %d: %d requests, %d segments, reserved peak %d; trace: %d requests, %d segments, reserved peak %d"
          % (k, len(runs), len(est), len(est_segs), max((s[2] for s in est_segs), default=0),
             len(meas), len(meas_segs), max((s[2] for s in meas_segs), default=0)))
    a = [(s + 511) // 512 for s, _ in est]
    b = [(s + 511) // 512 for s, _ in meas]
    seg_at_est = {i: (size, res) for i, size, res in est_segs}
    seg_at_meas = {i: (size, res) for i, size, res in meas_segs}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        print("--- %s estimate[%d:%d] trace[%d:%d]" % (tag, i1, i2, j1, j2))
        for i in range(i1, min(i2, i1 + 12)):
            seg = seg_at_est.get(i)
            print("  est   %12d%s" % (est[i][0], "  new segment %d -> reserved %d" % seg if seg else ""))
        for j in range(j1, min(j2, j1 + 12)):
            seg = seg_at_meas.get(j)
            print("  trace %12d  %s%s" % (meas[j][0], meas[j][1], "  new segment %d -> reserved %d" % seg if seg else ""))
    return 0


if __name__ == "__main__":
    main()
