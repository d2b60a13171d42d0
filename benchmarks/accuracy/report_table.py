#!/usr/bin/env python3
"""Rewrites the per-case table of README.md ("Estimate vs measured") from the estimator's
comparison:  report_table.py ESTIMATOR   (run from anywhere; edits benchmarks/accuracy/README.md)."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    est = sys.argv[1]
    acc = subprocess.run([est, "--reference", os.path.join(HERE, "reference", "pytorch-1.13-cpu.json")],
                         capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in acc.splitlines():
        m = re.match(r"\| (\S+) \| (\S+) \| (\S+) \| (\S+) \| ([^|]+) \|", line)
        if m:
            rows.setdefault(m.group(1), {})[m.group(2)] = (m.group(3), m.group(4), m.group(5).strip().replace(" ", ""))
    cell = lambda t: "null (checkpoint hooks)" if t[0] == "null" else "%s → %s (%s)" % t
    table = ["| case | saved (measured → estimate) | after forward | fwd+bwd peak | step peak |", "|---|---|---|---|---|"]
    for case, f in rows.items():
        if "saved_bytes" not in f:
            continue
        table.append("| %s | %s | %s | %s | %s |" % (case, cell(f["saved_bytes"]), cell(f["after_forward_bytes"]),
                                                   cell(f["fwd_bwd_peak_bytes"]), cell(f["step_peak_bytes"])))
    worst = acc[acc.index("| field | worst error |"):acc.index("\n\n", acc.index("| field | worst error |"))]
    path = os.path.join(HERE, "README.md")
    text = open(path).read()
    start = text.index("| case | saved (measured → estimate)")
    end = text.index("\n\n", start)
    text = text[:start] + "\n".join(table) + text[end:]
    wstart = text.index("| field | worst error |")
    wend = text.index("\n\n", wstart)
    text = text[:wstart] + worst + text[wend:]
    open(path, "w").write(text)


if __name__ == "__main__":
    main()
