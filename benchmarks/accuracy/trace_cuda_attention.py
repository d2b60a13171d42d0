#!/usr/bin/env python3
"""Replay a CUDA allocation trace (benchmarks/accuracy/reference/cuda-h100/<case>.json.gz) and print
what is live after forward and at the fwd+bwd peak of the MEASURED step, grouped by the ATen op,
the autograd node and the model's Python line that allocated it (issue 17, items 1 and 5:
transformer cases).

The trace covers measure_cuda.run_case's whole run: warm-up step, saved-bytes pass, measured step.
The measured step's forward is the last stretch of allocations under StepEnv.forward's model
line (`measure_cuda.py:LINE forward`, after `saved_bytes_of`); its end is the first allocation of
an autograd node after its loss line (StepEnv.forward's last line). The lines are
read from the trace, so traces of any version of the script read the same way. Live bytes follow the caching allocator's `allocated_bytes` stat: +block
size at `alloc`, - at `free_requested` (DeviceCachingAllocator::free updates the stats before the
stream-use events complete); block sizes are requests rounded up to 512 B (round_size, kMinBlockSize).

    python3 trace_cuda_attention.py CASE [CASE ...]   (names or paths; default: the transformer traces)
"""
import collections
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = os.path.join(HERE, "reference", "cuda-h100")
DEFAULT = ["gpt2_small_b2_t64", "gpt2_small_sdpa_b8_t512_bf16_foreach", "llama2l_b2_t64_bf16",
           "vit_b_16_b2", "vit_b_16_b16_224_bf16_foreach"]
SKIP_PY = ("_device.py", "overrides.py", "_tensor.py", "module.py", "functional.py", "autocast_mode.py",
           "graph.py", "_ops.py", "checkpoint.py")


def round512(n):
    return max(512, (n + 511) // 512 * 512)


def describe(frames):
    """(ATen op, autograd node, model line) of an allocation's frames."""
    aten = next((f for f in frames if f.startswith("at::") and "TensorIterator" not in f
                 and "empty" not in f and "detail" not in f), frames[0] if frames else "?")
    node = next((f.split("::")[-2] for f in frames if f.endswith("::apply") and "Backward" in f), "")
    if not node:
        node = next((f for f in frames if "autograd::generated" in f), "")
    py = next((f for f in frames if ".py:" in f and not f.startswith(SKIP_PY)), "")
    return aten[:70], node[:40], py[:40]


def forward_lines(events):
    """StepEnv.forward's frames, 'measure_cuda.py:LINE forward': the model's call (the line under
    which most allocations happen) and the loss (the last line; autocast's entry may add one)."""
    counts = collections.Counter(f for e in events if e[0] == "alloc" for f in e[4]
                                 if f.startswith("measure_cuda.py:") and f.endswith(" forward"))
    loss_line = max(counts, key=lambda f: int(f.split(":")[1].split()[0]))
    model_line = max((f for f in counts if f != loss_line), key=counts.get)
    return model_line, loss_line


def phases(events):
    """Index where the measured forward starts, where it ends (first backward alloc after the loss)."""
    saved_pass = max(i for i, e in enumerate(events) if e[0] == "alloc" and any("saved_bytes_of" in f for f in e[4]))
    model_line, loss_line = forward_lines(events)
    start = next(i for i in range(saved_pass, len(events))
                 if events[i][0] == "alloc" and model_line in events[i][4])
    loss = max(i for i, e in enumerate(events) if e[0] == "alloc" and loss_line in e[4])
    end = next(i for i in range(loss, len(events)) if events[i][0] == "alloc"
               and not any("measure_cuda.py" in f for f in events[i][4]))
    return start, end


SMALL_SEGMENT = 2 << 20  # kSmallBuffer: the small pool's segments; every large-pool segment is bigger
SMALL_REQUEST = 1 << 20  # kSmallSize


class Blocks:
    """Where each block of the caching allocator ends, so an allocation's block size (what
    memory_allocated counts) follows from its address: CUDACachingAllocator.cpp's should_split keeps
    a remainder only if it is >= 512 B (small pool) or > 1 MiB (large pool), otherwise the block is
    handed out whole."""

    def __init__(self):
        self.free = {}  # start -> size, free blocks
        self.seg_of = {}  # free block start -> segment is small pool

    def segment(self, addr, size):
        self.free[addr] = size
        self.seg_of[addr] = size == SMALL_SEGMENT

    def drop_segment(self, addr):
        self.free.pop(addr, None)

    def take(self, addr, size):
        want = round512(size)
        block = self.free.pop(addr, None)
        if block is None:  # allocation in a block the replay did not see split
            return want, None
        small = self.seg_of.pop(addr)
        rest = block - want
        if rest >= 512 and (small or rest > SMALL_REQUEST):
            self.free[addr + want] = rest
            self.seg_of[addr + want] = small
            return want, small
        return block, small

    def give(self, addr, size, small):
        end = addr + size
        if end in self.free:  # merge with the free block after it
            size += self.free.pop(end)
            self.seg_of.pop(end)
        before = next((a for a, s in self.free.items() if a + s == addr), None)
        if before is not None:
            self.free[before] += size
        else:
            self.free[addr] = size
            self.seg_of[addr] = small


def replay(events):
    """Live bytes as memory_allocated counts them (block sizes), event by event."""
    live, info, blocks = 0, {}, Blocks()
    for i, (action, size, addr, _stream, frames) in enumerate(events):
        if action == "segment_alloc":
            blocks.segment(addr, size)
        elif action == "segment_free":
            blocks.drop_segment(addr)
        elif action == "alloc":
            got, small = blocks.take(addr, size)
            info[addr] = (got, describe(frames), i, small, round512(size))
            live += got
        elif action == "free_requested" and addr in info:
            live -= info[addr][0]
        elif action == "free_completed" and addr in info:
            got, _, _, small, _ = info.pop(addr)
            if small is not None:
                blocks.give(addr, got, small)
        yield i, live, info


def table(title, blocks, since):
    groups = collections.defaultdict(lambda: [0, 0, set()])
    for size, key, idx, _, _ in blocks:
        if idx < since:
            continue
        g = groups[key]
        g[0] += size
        g[1] += 1
        g[2].add(size)
    total = sum(g[0] for g in groups.values())
    asked = sum(b[4] for b in blocks if b[2] >= since)
    print("  %s: %d bytes in blocks allocated inside the measured step (requests rounded to 512 B: %d,"
          " block slack %d)" % (title, total, asked, total - asked))
    for key, (b, n, sizes) in sorted(groups.items(), key=lambda kv: -kv[1][0]):
        print("    %12d %4d x  %-70s %-28s %s  sizes=%s" % (b, n, key[0], key[1], key[2],
                                                          ",".join(str(s) for s in sorted(sizes)[-3:])))


def report(path):
    d = json.load(gzip.open(path))
    ev, r = d["events"], d["result"]
    start, end = phases(ev)
    print("== %s" % d["case"])
    base = after = peak = None
    peak_at = start
    peak_blocks = fwd_blocks = None
    for i, live, info in replay(ev):
        if i == start - 1:
            base = live
        if i == end - 1:
            after = live - base
            fwd_blocks = list(info.values())
        if base is not None and i >= start and (peak is None or live - base > peak):
            peak, peak_at = live - base, i
            peak_blocks = list(info.values())
    print("  resident (replayed) %d  measured %d" % (base, r["resident_bytes"]))
    print("  after forward (replayed) %d  measured %d" % (after, r["after_forward_bytes"]))
    print("  step peak (replayed) %d  measured fwd_bwd %d step %d  at event %d: %s" % (
        peak, r["fwd_bwd_peak_bytes"], r["step_peak_bytes"], peak_at, describe(ev[peak_at][4])))
    print("  saved_bytes (measured) %d" % r["saved_bytes"])
    for i, e in enumerate(ev):  # cuBLAS / cuBLASLt workspaces: which window allocates them
        ws = [f for f in e[4] if "setWorkspaceForHandle" in f or "getCUDABlasLtWorkspace" in f]
        if e[0] == "alloc" and ws:
            print("  %s workspace %d B at event %d (%s the measured step)" % (
                ws[0].split("::")[-1], e[1], i, "inside" if i >= start else "before"))
    table("live after forward", fwd_blocks, start)
    table("live at the peak", peak_blocks, start)


def main(argv):
    names = argv or DEFAULT
    for n in names:
        report(n if os.path.exists(n) else os.path.join(TRACES, n + ".json.gz"))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
