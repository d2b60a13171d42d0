#!/usr/bin/env python3
"""Rewrites the per-case tables of README.md ("Estimate vs measured") from the estimator's
comparison:  report_table.py ESTIMATOR   (run from anywhere; edits benchmarks/accuracy/README.md):
the 1.13 reference's table and worst errors, and the LLM reference's tables (pytorch-2.6-cpu-llm.json,
between the `<!-- llm-table -->` markers)."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def compare(est, reference):
    """The estimator's comparison of `reference`: its output and {case: {field: (measured, estimate, error)}}."""
    acc = subprocess.run([est, "--reference", os.path.join(HERE, "reference", reference)],
                         capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in acc.splitlines():
        m = re.match(r"\| (\S+) \| (\S+) \| (\S+) \| (\S+) \| ([^|]+) \|", line)
        if m:
            rows.setdefault(m.group(1), {})[m.group(2)] = (m.group(3), m.group(4), m.group(5).strip().replace(" ", ""))
    return acc, rows


def cell(t):
    return "null (checkpoint hooks)" if t[0] == "null" else "%s → %s (%s)" % t


def training_table(rows, saved_header):
    """One row per training case: saved, after forward and the two peaks, measured → estimate."""
    table = ["| case | %s | after forward | fwd+bwd peak | step peak |" % saved_header, "|---|---|---|---|---|"]
    for case, f in rows.items():
        if "saved_bytes" in f:
            table.append("| %s | %s | %s | %s | %s |" % (case, cell(f["saved_bytes"]), cell(f["after_forward_bytes"]),
                                                       cell(f["fwd_bwd_peak_bytes"]), cell(f["step_peak_bytes"])))
    return table


def llm_tables(est):
    """Training cases (saved, after forward, peaks) and decode cases (KV per token, prefill peak)."""
    _, rows = compare(est, "pytorch-2.6-cpu-llm.json")
    decode = ["| case | KV cache bytes per token (measured → estimate) | prefill peak |", "|---|---|---|"]
    for case, f in rows.items():
        if "prefill_peak_bytes" in f:
            decode.append("| %s | %s | %s |" % (case, cell(f["kv_cache_bytes_per_token"]), cell(f["prefill_peak_bytes"])))
    return "\n".join(training_table(rows, "saved bytes (measured → estimate)")) + "\n\n" + "\n".join(decode)


def main():
    est = sys.argv[1]
    acc, rows = compare(est, "pytorch-1.13-cpu.json")
    table = training_table(rows, "saved (measured → estimate)")
    worst = acc[acc.index("| field | worst error |"):acc.index("\n\n", acc.index("| field | worst error |"))]
    path = os.path.join(HERE, "README.md")
    text = open(path).read()
    if "| case | saved (measured → estimate)" in text:  # the 1.13 section's compact table, when it has one
        start = text.index("| case | saved (measured → estimate)")
        end = text.index("\n\n", start)
        text = text[:start] + "\n".join(table) + text[end:]
        wstart = text.index("| field | worst error |")
        wend = text.index("\n\n", wstart)
        text = text[:wstart] + worst + text[wend:]
    begin, end_marker = "<!-- llm-table -->\n", "\n<!-- /llm-table -->"
    lstart = text.index(begin) + len(begin)
    text = text[:lstart] + llm_tables(est) + text[text.index(end_marker):]
    open(path, "w").write(text)


if __name__ == "__main__":
    main()
