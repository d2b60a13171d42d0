#!/usr/bin/env python3
"""The README shows real output: every ```sh block that is one `gpubudget ...` command followed by
an output block (a fence without a language) is run with the built CLI and its output compared
with the block; a command writing `--svg FILE` must also reproduce the committed FILE. A user page
of docs/ is checked the same way when named (docs/hf_models.md: commands run from the root).

    readme_outputs.py GPUBUDGET [PAGE.md] [--update]   (from anywhere; PAGE.md relative to the
                                                repository root, default README.md; --update rewrites
                                                the page and the pictures from the current build)
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
        raise SystemExit("command failed (%d): gpubudget %s\n%s" % (done.returncode, " ".join(args), done.stderr))
    return done.stdout, pictures


def main():
    cli, update = os.path.abspath(sys.argv[1]), "--update" in sys.argv[2:]
    page = next((a for a in sys.argv[2:] if a.endswith(".md")), "README.md")
    path = os.path.join(ROOT, page)
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
        raise SystemExit("no gpubudget command with an output block found in " + page)
    if update:
        open(path, "w").write(text)
        print("%d %s commands run; updated: %s" % (checked, page, "; ".join(stale) or "nothing"))
        return
    if stale:
        raise SystemExit("%s output is stale (run tests/readme_outputs.py BUILD/tools/gpubudget %s --update):\n  " % (page, page) + "\n  ".join(stale))
    print("%d %s commands reproduce their output" % (checked, page))


if __name__ == "__main__":
    main()
