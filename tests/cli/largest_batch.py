#!/usr/bin/env python3
"""--largest-batch answers the question the budget table answers for one batch: the answer fits
(`--batch N --require-fit` exits 0) and one more sample does not (exits 1), on configurations
that take the search down each of its paths (the capped allocator model, a flat reserve, a
bigger device, AMP, inference).

    largest_batch.py GPUBUDGET
"""
import json
import subprocess
import sys

CASES = [
    ["resnet50"],                                    # the caching allocator model decides (the lines say 171)
    ["resnet50", "--fragmentation", "10"],           # a flat reserve: the traced lines settle it
    ["vit_b_16", "--precision", "amp_fp16", "--device", "a100_40gb"],
    ["resnet18", "--device", "h100_80gb", "--memory-gib", "16", "--loss", "cross_entropy", "--drop-output"],
    ["convnext_tiny", "--inference", "--device", "t4"],
]


def run(exe, args):
    return subprocess.run([exe] + args, capture_output=True, text=True)


def main():
    exe = sys.argv[1]
    failures = 0
    for case in CASES:
        out = run(exe, case + ["--batch", "8", "--largest-batch", "--format", "json"])
        if out.returncode != 0:
            print(f"FAIL {case}: exit {out.returncode}: {out.stderr.strip()}")
            failures += 1
            continue
        n = json.loads(out.stdout)["budgets"][0]["largest_micro_batch"]
        at_n = run(exe, case + ["--batch", str(n), "--require-fit"]).returncode
        above = run(exe, case + ["--batch", str(n + 1), "--require-fit"]).returncode
        ok = n > 1 and at_n == 0 and above == 1
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {' '.join(case)}: largest {n}; --batch {n} exits {at_n}, --batch {n + 1} exits {above}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
