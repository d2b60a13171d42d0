#!/usr/bin/env python3
"""The README shows real output: every ```sh block that is one `gpubudget ...` command followed by
an output block (a fence without a language) is run with the built CLI and its output compared
with the block; a command writing `--svg FILE` must also reproduce the committed FILE.

    readme_outputs.py GPUBUDGET [--update]     (from anywhere; --update rewrites README.md and the
                                                pictures from the current build instead of checking)
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)


def commands_with_outputs(text):
    """(command argv, output block span or None) for each sh block of one gpubudget command: its
    output is the block after it when that has no language; an --svg command may have none."""
    blocks = list(FENCE.finditer(text))
    for here, after in zip(blocks, blocks[1:] + [None]):
        command = here.group(2).replace("\\\n", " ").strip()
        argv = shlex.split(command) if here.group(1) == "sh" and "\n" not in command else []
        if not argv or argv[0] != "gpubudget":
            continue
        if after is not None and after.group(1) == "":
            yield argv[1:], after.span(2)
        elif "--svg" in argv:
            yield argv[1:], None


def run(cli, args, svg_dir):
    """The CLI's stdout for `args`; an --svg path is redirected into svg_dir (returned as a pair)."""
    args = list(args)
    pictures = []
    if "--svg" in args:
        i = args.index("--svg") + 1
        out = os.path.join(svg_dir, os.path.basename(args[i]))
        pictures.append((os.path.join(ROOT, args[i]), out))
        args[i] = out
    done = subprocess.run([cli] + args, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit("README command failed (%d): gpubudget %s\n%s" % (done.returncode, " ".join(args), done.stderr))
    return done.stdout, pictures


def main():
    cli, update = os.path.abspath(sys.argv[1]), "--update" in sys.argv[2:]
    path = os.path.join(ROOT, "README.md")
    text = open(path).read()
    checked, stale = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for args, span in reversed(list(commands_with_outputs(text))):
            output, pictures = run(cli, args, tmp)
            checked += 1
            start, end = span if span else (0, 0)
            if span and text[start:end] != output:
                stale.append("gpubudget " + " ".join(args))
                text = text[:start] + output + text[end:]
            for committed, made in pictures:
                fresh = open(made).read()
                if not os.path.exists(committed) or open(committed).read() != fresh:
                    stale.append("the picture " + os.path.relpath(committed, ROOT))
                    if update:
                        open(committed, "w").write(fresh)
    if checked == 0:
        raise SystemExit("no gpubudget command with an output block found in README.md")
    if update:
        open(path, "w").write(text)
        print("%d README commands run; updated: %s" % (checked, "; ".join(stale) or "nothing"))
        return
    if stale:
        raise SystemExit("README output is stale (run tests/readme_outputs.py BUILD/tools/gpubudget --update):\n  " + "\n  ".join(stale))
    print("%d README commands reproduce their output" % checked)


if __name__ == "__main__":
    main()
