#!/usr/bin/env python3
"""Holds gpubudget-export's folded repeats to the written-out graphs they replace.

    check_repeats.py GPUBUDGET REPO

The exporter writes consecutive copies of a block (a ModuleList or nn.Sequential of identical
modules) as one {"block": "repeat"}, which the library walks as at most three copies and a stand-in
for the rest (docs/architecture.md §5). For every committed graph of tests/export/data: a file
written out is folded with the exporter's own fold (no PyTorch needed), a file with repeats is
written out by this script's own reading of the format (docs/export.md), and both forms are
budgeted with the CLI under several plans: every number of the two --format json documents must be equal (the
model's name and file aside). A plan that picks one copy by name (--freeze-all-but) takes the walk's
told-apart path, the flat reserve (--fragmentation) the stand-in's. tests/export/fixtures/
frozen_chain.json (hand-written) has a stem block before the copies, so its no-grad forward peak
shows whether the copies continue the sequence (the stem's output freed once copy 1 ran): 294,912 B
at batch 2 written out, 327,680 B when the reader's repeat held its input through every copy. Exits 1 on any difference, and
when fewer than FOLDED_AT_LEAST files had a repeat to fold (the fold must keep finding them).
"""
import glob
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

FOLDED_AT_LEAST = 16  # the committed graphs and fixtures with copies to fold or write out (2026-11-28)

# every plan on every folded file; "{copy}" is a module path inside the file's last repeat's copy 1,
# "{linear}" the path of a Linear or convolution inside every copy of it, relative to the copy (PEFT's
# target_modules by the path's end: one adapter per copy)
PLANS = [
    ["--batch", "8", "--device", "t4"],                                  # the CUDA budget, caching allocator model
    ["--batch", "8", "--device", "t4", "--fragmentation", "10"],        # flat reserve: the stand-in copies
    ["--batch", "4", "--device", "a100_40gb", "--precision", "amp_bf16", "--optimizer", "adamw", "--fragmentation", "10"],
    ["--batch", "4", "--device", "a100_40gb", "--checkpoint-all", "--fragmentation", "10"],
    ["--batch", "2", "--device", "v100_16gb", "--freeze-all-but", "{copy}", "--fragmentation", "10"],
    ["--batch", "2", "--device", "t4", "--inference"],
    ["--batch", "8", "--device", "t4", "--largest-batch"],
    ["--batch", "4", "--device", "t4", "--lora", "r=8,targets={linear}", "--fragmentation", "10"],
]
IGNORED = {"model", "graph", "name", "file"}  # what names the input


def exporter(repo):
    path = os.path.join(repo, "tools", "gpubudget-export")
    loader = importlib.machinery.SourceFileLoader("gpubudget_export", path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def repeats(node, path, out):
    """(module path of copy 1's first leaf, count) of every repeat below `node`."""
    here = path + ([node["name"]] if "name" in node and node.get("block") != "repeat" else [])
    if node.get("block") == "repeat":
        prefix = node.get("name", "")
        copy = here + [f"{prefix}{node['first'] + node.get('modules_per_copy', 1)}"]
        out.append(".".join(copy + names_to(node["parts"][0], lambda op: True)))
    for p in node.get("parts", []):
        repeats(p, here, out)
    return out


def names_to(node, wanted):
    """The names from `node` down to its first leaf whose op `wanted` accepts (None: none)."""
    if "op" in node:
        return [] if wanted(node["op"]) else None
    for p in node["parts"]:
        names = names_to(p, wanted)
        if names is not None:
            return ([p["name"]] if "name" in p else []) + names
    return None


def last_repeat(node):
    found = None
    for p in node.get("parts", []):
        found = last_repeat(p) or found
    return node if node.get("block") == "repeat" and found is None else found


def unrolled(node):
    """The node with every repeat written out: copy r's modules named <name><first + r·per_copy + j>
    in the enclosing sequence (docs/export.md's "repeat")."""
    if "parts" not in node:
        return node
    parts = []
    for p in node["parts"]:
        if p.get("block") != "repeat":
            parts.append(unrolled(p))
            continue
        per_copy, body = p.get("modules_per_copy", 1), unrolled(p["parts"][0])
        modules = body["parts"] if per_copy > 1 else [body]
        assert len(p["parts"]) == 1 and len(modules) == per_copy, p
        for r in range(p["count"]):
            parts += [dict(m, name=f"{p.get('name', '')}{p['first'] + r * per_copy + j}") for j, m in enumerate(modules)]
    return dict(node, parts=parts)


def budget(gpubudget, graph, plan):
    r = subprocess.run([gpubudget, "--graph", graph, "--format", "json"] + plan, capture_output=True, text=True)
    return r.returncode, (strip(json.loads(r.stdout)) if r.returncode == 0 else r.stderr.strip())


def strip(doc):
    if isinstance(doc, dict):
        return {k: strip(v) for k, v in doc.items() if k not in IGNORED}
    if isinstance(doc, list):
        return [strip(v) for v in doc]
    return doc


def differences(a, b, at=""):
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: written out {a!r}, folded {b!r}"]


SHAPE_CHANGING_REPEAT = "repeat<N> needs a block whose output shape equals its input shape"


def blind_fold_changes_shape(gpubudget, doc, written_out, folded):
    """A file written out and folded here without its traced shapes (`trust_unknown`) may fold
    copies whose first one changes the shape (Conv3d(1, 8) then Conv3d(8, 8), each with its norm and
    activation: the same ops in JSON); the CLI rejects that repeat, the written-out file it accepts."""
    if repeats(doc["model"], [], []):
        return False
    (rc_a, _), (rc_b, b) = budget(gpubudget, written_out, PLANS[0]), budget(gpubudget, folded, PLANS[0])
    return rc_a == 0 and rc_b != 0 and SHAPE_CHANGING_REPEAT in b


def main(argv):
    gpubudget, repo = argv
    export = exporter(repo)
    failed, folded_files = False, 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(glob.glob(os.path.join(repo, "tests/export/data/*.json")) + glob.glob(os.path.join(repo, "tests/export/fixtures/*.json"))):
            name = os.path.basename(path)
            with open(path) as f:
                doc = json.load(f)
            if doc.get("format") != "gpubudget-graph":  # the measurements beside the graphs
                continue
            copies = repeats(doc["model"], [], [])
            if copies:  # as the exporter writes it now: compare with the written-out form
                model, other = doc["model"], unrolled(doc["model"])
            else:
                model, other = export.without_shapes(export.folded(doc["model"], top=True, trust_unknown=True)), doc["model"]
                copies = repeats(model, [], [])
            if not copies:
                continue
            folded_files += 1
            out, path = os.path.join(tmp, "folded.json"), os.path.join(tmp, "written_out.json")
            for file, m in ((out, model), (path, other)):
                with open(file, "w") as f:
                    json.dump(dict(doc, model=m), f)
            if blind_fold_changes_shape(gpubudget, doc, path, out):
                print(f"{name}: the blind fold's copies change the shape (a first copy that changes the channels, "
                      "which the exporter's traced fold keeps written out): not compared")
                folded_files -= 1
                continue
            linear = names_to(last_repeat(model)["parts"][0], lambda op: op in ("linear", "conv1d", "conv2d"))
            for plan in PLANS:
                if "{linear}" in " ".join(plan) and not linear:
                    continue
                plan = [a.replace("{copy}", copies[-1]).replace("{linear}", ".".join(linear or [])) for a in plan]
                (rc_a, a), (rc_b, b) = budget(gpubudget, path, plan), budget(gpubudget, out, plan)
                diff = differences(a, b) if rc_a == rc_b == 0 else ([] if (rc_a, a) == (rc_b, b) else [f"exit {rc_a} / {rc_b}: {(a if rc_a else b)!s:.300}"])
                print(f"{name} ({len(copies)} repeats) {' '.join(plan)}: {'equal' if not diff else '**DIFFERS**'}")
                for d in diff[:8]:
                    print("   ", d)
                failed |= bool(diff)
    print(f"{folded_files} files had repeats to fold")
    return 1 if failed or folded_files < FOLDED_AT_LEAST else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
