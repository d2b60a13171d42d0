#!/usr/bin/env python3
"""transformers' own models exported from their ATen dumps against --hf-config (issue H item 3).

    python3 benchmarks/gpu/transformers-graphs/check_exports.py GPUBUDGET_CLI

Each dump here (transformers 5.17 as torch.export saw it, 2 layers, batch 2 x 64 tokens) is
exported by `gpubudget-export --aten-graph` (tools/gpubudget_export_aten.py; no PyTorch needed)
and budgeted with `gpubudget --graph` beside `gpubudget --hf-config` of the same configuration
(check_counts.py's config with the dump's attn_implementation), at the dump's batch and sequence,
on an H100 80GB, in fp32, AMP bf16 and pure bf16, with the loss the file states (the model's own). Required:
the exported parameter count equals the dump's `params` exactly; saved-for-backward bytes and
the forward, forward+backward and step peaks within 1 % of --hf-config's. The families read:
GPT-2 (causal LM) and BERT (masked LM), sdpa and eager, TinyLlama (causal LM) with sdpa; its eager
dump and T5's must stop naming the node they cannot map (not a silently different model), and so
must dumps changed to hold a node with no counterpart. Exit status 1 on a
mismatch, 2 on a missing file or a CLI failure.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
EXPORTER = os.path.join(ROOT, "tools", "gpubudget-export")
sys.path.insert(0, HERE)
from check_counts import MODELS, config_of  # noqa: E402  (the configurations the dumps were made with)

# the dumps exported, by attn_implementation (--hf-config budgets the Llama family's attention as
# the fused SDPA kernel only, and the exporter reads rotary attention only so)
EXPORTED = {"gpt2": ("sdpa", "eager"), "bert_mlm": ("sdpa", "eager"), "tinyllama": ("sdpa",)}
# dumps that must stop, and the error that names where
STOPS = {"tinyllama-eager": "eager attention with rotary embeddings (the library's rotary attention is the fused SDPA kernel",
         "t5_small-sdpa": "a model output other than the loss and the logits", "t5_small-eager": "a model output other than the loss and the logits"}
# committed exports (read by the CLI's tests without re-exporting): a fresh export must equal them
# (the headers' first line, the command that wrote them, aside)
DATA = os.path.join(ROOT, "tests", "export", "data")
COMMITTED = {"gpt2-sdpa": ["gpt2_sdpa.json", "gpt2_sdpa.hpp"], "tinyllama-sdpa": ["tinyllama_sdpa.json", "tinyllama_sdpa.hpp"]}
# fp32, AMP, and 16-bit weights trained as they are (transformers 5 loads TinyLlama's in bfloat16)
PRECISIONS = (["--precision", "fp32"], ["--precision", "amp_bf16"], ["--precision", "bf16", "--no-master-weights"])
FIELDS = ("saved_for_backward", "forward_peak", "forward_backward_peak", "step_peak")
TOLERANCE = 0.01


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("failed: " + " ".join(cmd) + "\n" + r.stderr.strip(), file=sys.stderr)
        sys.exit(2)
    return r.stdout


def budget(cli, model_args, precision, loss):
    out = run([cli] + model_args + ["--batch", "2", "--device", "h100_80gb", "--format", "json", "--loss", loss] + precision)
    b = json.loads(out)["budgets"][0]
    return b["parameter_count"], b["step"]


def check_committed(dump_path, committed, json_text, tmp):
    """A committed export (tests/export/data) is what the exporter writes from the dump today."""
    if committed.endswith(".hpp"):
        header = os.path.join(tmp, committed)
        run([sys.executable, EXPORTER, "--aten-graph", dump_path, "--format", "header", "-o", header])
        with open(header) as f:
            fresh = f.read().split("\n", 1)[1]
    else:
        fresh = json_text
    with open(os.path.join(DATA, committed)) as f:
        text = f.read()
    same = (text.split("\n", 1)[1] if committed.endswith(".hpp") else text) == fresh
    print("%-4s tests/export/data/%s is the export of %s%s" % ("ok" if same else "FAIL", committed, os.path.basename(dump_path),
                                                               "" if same else " no more: export it again"))
    return 0 if same else 1


def check_family(cli, name, attn, tmp):
    dump_path = os.path.join(HERE, "%s-%s.json" % (name, attn))
    with open(dump_path) as f:
        dump = json.load(f)
    graph = os.path.join(tmp, "%s-%s.graph.json" % (name, attn))
    run([sys.executable, EXPORTER, "--aten-graph", dump_path, "-o", graph])
    with open(graph) as f:
        text = f.read()
    loss = json.loads(text)["loss"]
    failures = 0
    for committed in COMMITTED.get("%s-%s" % (name, attn), []):
        failures += check_committed(dump_path, committed, text, tmp)
    config = config_of(name, dump["layers"])
    config["attn_implementation"] = attn
    config["use_cache"] = False  # as dumped (dump_transformers_graphs.py: torch.export refuses the DynamicCache)
    cfg = os.path.join(tmp, "%s-%s.config.json" % (name, attn))
    with open(cfg, "w") as f:
        json.dump(config, f)
    for precision in PRECISIONS:
        params, got = budget(cli, ["--graph", graph], precision, loss)
        ref_params, ref = budget(cli, ["--hf-config", cfg, "--task", MODELS[name][1], "--seq", str(dump["input"][1])], precision, loss)
        rows = ["params %d (dump %d, --hf-config %d)" % (params, dump["params"], ref_params)]
        bad = params != dump["params"] or ref_params != dump["params"]
        for k in FIELDS:
            diff = (got[k] - ref[k]) / ref[k]
            bad = bad or abs(diff) > TOLERANCE
            rows.append("%s %+.2f %%" % (k, 100 * diff))
        failures += bad
        print("%-4s %-9s %-5s %-8s loss %-13s %s" % ("FAIL" if bad else "ok", name, attn, precision[1], loss, ", ".join(rows)))
    return failures


def check_stop(name, expected):
    r = subprocess.run([sys.executable, EXPORTER, "--aten-graph", os.path.join(HERE, name + ".json")], capture_output=True, text=True)
    ok = r.returncode == 2 and "gpubudget-export: " in r.stderr and expected in r.stderr and not r.stdout
    print("%-4s %-17s stops: %s" % ("ok" if ok else "FAIL", name, r.stderr.strip() or "(exit %d, no error)" % r.returncode))
    return 0 if ok else 1


# a dump changed so that one node has no counterpart: the export must stop naming it and its module
MUTATIONS = [("gpt2-sdpa", "aten.tanh.default", {"target": "aten.erf.default"}, "(node mul, aten.mul.Tensor, module transformer.h.0.mlp.act)"),
             ("bert_mlm-sdpa", "aten.gelu.default", {"target": "aten.mish.default"},
              "no gpubudget op for this ATen node (node gelu, aten.mish.default, module bert.encoder.layer.0.intermediate.intermediate_act_fn)"),
             ("gpt2-sdpa", "aten.scaled_dot_product_attention.default", {"kwargs": {"scale": 0.125, "is_causal": True}},
              "scaled_dot_product_attention with both attn_mask and is_causal"),
             ("gpt2-sdpa", "aten.scaled_dot_product_attention.default", {"kwargs": {"scale": 0.125, "enable_gqa": True}},
              "scaled_dot_product_attention with enable_gqa"),
             ("gpt2-sdpa", "aten.add.Tensor", {"name": "add_4", "target": "aten.sub.Tensor"},
              "no gpubudget op for this ATen node (node add_4, aten.sub.Tensor, module transformer.h.0)"),
             ("tinyllama-sdpa", "aten.rsqrt.default", {"target": "aten.sqrt.default"},
              "no gpubudget op for this ATen node (node to_6, aten.to.dtype, module model.layers.0.input_layernorm)")]


def check_mutation(tmp, name, target, change, expected):
    with open(os.path.join(HERE, name + ".json")) as f:
        dump = json.load(f)
    node = next(n for n in dump["nodes"] if n["target"] == target and n["name"] == change.get("name", n["name"]))
    node.update(change)
    path = os.path.join(tmp, "changed-%s.json" % name)
    with open(path, "w") as f:
        json.dump(dump, f)
    r = subprocess.run([sys.executable, EXPORTER, "--aten-graph", path], capture_output=True, text=True)
    ok = r.returncode == 2 and expected in r.stderr and not r.stdout
    print("%-4s %-17s with %s %s stops: %s" % ("ok" if ok else "FAIL", name, target, change, r.stderr.strip() or "(exit %d)" % r.returncode))
    return 0 if ok else 1


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, attns in EXPORTED.items():
            for attn in attns:
                failures += check_family(sys.argv[1], name, attn, tmp)
        for mutation in MUTATIONS:
            failures += check_mutation(tmp, *mutation)
    for name, expected in STOPS.items():
        failures += check_stop(name, expected)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
