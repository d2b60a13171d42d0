#!/usr/bin/env python3
"""Rewrites the per-reference tables of README.md ("Estimate vs measured": case, field, measured,
estimate, error, tolerance; the worst error per field; the summary line) from the estimator's
comparison, one table per reference file:

    report_table.py ESTIMATOR      (run from anywhere; edits benchmarks/accuracy/README.md)

Each reference's table sits under its own heading (`### ... (\`reference/FILE\``); the known misses
of benchmarks/accuracy/CMakeLists.txt are passed along so they show as such."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCES = ["pytorch-1.13-cpu.json", "pytorch-2.6-cpu.json", "pytorch-2.6-cpu-llm.json"]


def known_misses(reference):
    """The CASE:FIELD known misses CMakeLists.txt passes with `reference`: the words after the file
    name in its accuracy_reference(NAME FILE [CASE:FIELD ...]) call (comments dropped)."""
    text = open(os.path.join(HERE, "CMakeLists.txt")).read()
    for call in re.finditer(r"^accuracy_reference\((.*?)\)", text, re.S | re.M):
        words = " ".join(line.split("#")[0] for line in call.group(1).splitlines()).split()
        if len(words) >= 2 and words[1] == reference:
            return words[2:]
    return []


def comparison(estimator, reference):
    args = [estimator, "--reference", os.path.join(HERE, "reference", reference)]
    misses = known_misses(reference)
    if misses:
        args += ["--known-misses", ",".join(misses)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    start = out.index("| case | field | measured |")
    end = out.index(" cases (", start)
    return out[start:out.index("\n", end)]


def main():
    estimator = sys.argv[1]
    path = os.path.join(HERE, "README.md")
    text = open(path).read()
    for reference in REFERENCES:
        heading = text.index("(`reference/%s`" % reference)
        start = text.index("| case | field | measured |", heading)
        end = text.index("\n", text.index(" cases (", start))
        text = text[:start] + comparison(estimator, reference) + text[end:]
    open(path, "w").write(text)


if __name__ == "__main__":
    main()
