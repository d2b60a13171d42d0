#!/usr/bin/env python3
"""Compare two outputs of op_probe.py / zoo_op_probe.py (e.g. PyTorch 1.13 vs 2.6) probe by probe:
print the probes whose saved tensors differ, or whose after-forward / forward-transient /
backward-peak / left-after-backward figures differ by more than --kib KiB (default 8: host
bookkeeping moves by a few KiB between versions).

Usage: python3 benchmarks/accuracy/probe_diff.py op_probe_output.txt op_probe_output-2.6.txt [--kib N]
"""
import re
import sys

NUM = r"(-?[0-9.]+)K"


def parse(path):
    probes, cur = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("== "):
            cur = line[3:].split(" ")[0]
            probes[cur] = {"note": line[3:]}
        elif cur and "saved:" in line:
            probes[cur]["saved"] = "; ".join(sorted(line.split("saved:", 1)[1].strip().split("; ")))
        elif cur and line.strip().startswith("fwd:"):
            m = re.search(r"after=" + NUM + r".*transient=" + NUM, line)
            probes[cur]["after"], probes[cur]["fwd_temp"] = float(m.group(1)), float(m.group(2))
        elif cur and line.strip().startswith("bwd:"):
            m = re.search(r"peak_extra=" + NUM + r"\s+after=" + NUM, line)
            probes[cur]["bwd_peak"], probes[cur]["bwd_after"] = float(m.group(1)), float(m.group(2))
        elif cur and line.strip().startswith("nodes:"):
            probes[cur]["nodes"] = line.split("nodes:", 1)[1].strip()
    return probes


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    kib = float(sys.argv[sys.argv.index("--kib") + 1]) if "--kib" in sys.argv else 8.0
    if "--kib" in sys.argv:
        args.remove(sys.argv[sys.argv.index("--kib") + 1])
    a, b = parse(args[0]), parse(args[1])
    same = 0
    for name in a:
        if name not in b:
            print("== %s: only in %s" % (name, args[0]))
            continue
        x, y = a[name], b[name]
        diffs = []
        if x.get("saved") != y.get("saved"):
            diffs.append("   saved: %s\n       -> %s" % (x.get("saved"), y.get("saved")))
        for k in ("after", "fwd_temp", "bwd_peak", "bwd_after"):
            if k in x and k in y and abs(x[k] - y[k]) > kib:
                diffs.append("   %-9s %9.1fK -> %9.1fK  (%+.1fK)" % (k, x[k], y[k], y[k] - x[k]))
        if diffs:
            print("== %s" % x["note"])
            print("\n".join(diffs))
        else:
            same += 1
    for name in b:
        if name not in a:
            print("== %s: only in %s" % (name, args[1]))
    print("# %d probes agree (saved tensors identical, figures within %.0f KiB)" % (same, kib))


if __name__ == "__main__":
    main()
