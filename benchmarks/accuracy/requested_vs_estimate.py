#!/usr/bin/env python3
"""Hold each case's estimated step peak against the reference's *requested* peak as well as the
allocated one (pytorch-2.11-cuda-h100-80gb-hbm3.json: `requested_peak_bytes` is the allocator's
requested_bytes peak above the resident state, i.e. the step peak before the caching allocator's
512 B rounding and unsplit blocks). A live-tensor rule is judged by the requested column; the gap
between the two columns is the allocator's (op_rules.md CV0).

Usage: gpubudget --reference FILE > table.md; requested_vs_estimate.py FILE table.md [name-filter...]
"""
import json
import sys


def main(ref, table, filters):
    est = {}
    for line in open(table):
        p = [x.strip() for x in line.split("|")]
        if len(p) > 6 and p[2] == "step_peak_bytes" and p[4].isdigit():
            est[p[1]] = int(p[4])
    for c in json.load(open(ref))["cases"]:
        n, sp, rq = c.get("case"), c.get("step_peak_bytes"), c.get("requested_peak_bytes")
        if n not in est or not sp or not rq or (filters and not any(f in n for f in filters)):
            continue
        e = est[n]
        print(f"{n:38} allocated {sp:>11} requested {rq:>11} estimate {e:>11}  "
              f"vs allocated {100 * (e / sp - 1):+6.2f} %  vs requested {100 * (e / rq - 1):+6.2f} %")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
