#!/usr/bin/env python3
"""The hf-config builder's parameter counts against transformers' own models (issue H item 3).

    python3 benchmarks/gpu/transformers-graphs/check_counts.py GPUBUDGET_CLI

Each graph file here is transformers 5.17's model as torch.export saw it (dump_transformers_graphs.py
on the GPU machine's CPU: from_config, 2 layers); its "params" is sum(p.numel()) of that model.
This builds the same configuration for `gpubudget --hf-config` (the config file of
../../accuracy/reference/cuda-h100/hf-configs/ with the same layer keys set to 2, as the dump
script sets them; GPT-2: transformers' GPT2Config() defaults, written out below) and requires the
budget's parameter_count to equal it exactly, for the sdpa and the eager graph alike, and for every
module that holds parameters (nn_module_stack of the node reading each), `--freeze-all-but
MODULE` to train exactly that module's parameters (PyTorch's module paths as names). It also
prints what the graphs show of transformers' attention (the SDPA calls, their dropout_p and the
mask they pass). Exit status 1 on a mismatch, 2 on a missing file or a CLI failure.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "..", "..", "accuracy", "reference", "cuda-h100", "hf-configs")
LAYER_KEYS = ("num_hidden_layers", "num_layers", "num_decoder_layers", "n_layer")
# transformers' GPT2Config() defaults (configuration_gpt2.py), which the dump script used for "gpt2"
GPT2_DEFAULTS = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 50257, "n_positions": 1024, "n_embd": 768,
                 "n_layer": 12, "n_head": 12, "n_inner": None, "activation_function": "gelu_new", "resid_pdrop": 0.1, "embd_pdrop": 0.1,
                 "attn_pdrop": 0.1, "layer_norm_epsilon": 1e-05, "tie_word_embeddings": True}
# graph name: (config file or None for GPT-2's defaults, the CLI's --task)
MODELS = {"bert_mlm": ("bert-base-uncased.json", "masked-lm"), "gpt2": (None, "causal-lm"), "tinyllama": ("tinyllama-1.1b.json", "causal-lm"),
          "t5_small": ("t5-small.json", "seq2seq")}


def config_of(name, layers):
    cfg_file, _ = MODELS[name]
    if cfg_file is None:
        d = dict(GPT2_DEFAULTS)
    else:
        with open(os.path.join(CONFIGS, cfg_file)) as f:
            d = json.load(f)
    for k in LAYER_KEYS:
        if k in d:
            d[k] = layers
    return d


def budget_count(cli, config, task, seq):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(config, f)
        path = f.name
    try:
        r = subprocess.run([cli, "--hf-config", path, "--task", task, "--seq", str(seq), "--format", "json", "--device", "h100_80gb"],
                           capture_output=True, text=True)
    finally:
        os.unlink(path)
    if r.returncode != 0:
        print("gpubudget failed: " + r.stderr.strip(), file=sys.stderr)
        sys.exit(2)
    return json.loads(r.stdout)["budgets"][0]["parameter_count"]


def module_parameters(graph):
    """{module path: elements of the parameters it uses}: each parameter placeholder belongs to the
    deepest module of the first node that reads it (nn_module_stack). Tied parameters (torch.export
    lifts one placeholder per name and reads one of them; the others stay unused) are left out:
    their module is ambiguous, and the total count holds them."""
    params = {n["name"]: n for n in graph["nodes"] if n["op"] == "placeholder" and n["name"].startswith("p_")}
    first = {}
    for n in graph["nodes"]:
        for token in json.dumps(n["args"]).replace('"', " ").replace(",", " ").replace("[", " ").replace("]", " ").split():
            if token.startswith("%") and token[1:] in params and token[1:] not in first:
                first[token[1:]] = n
    tied_shapes = {tuple(p["shape"]) for name, p in params.items() if name not in first}
    modules, tied = {}, set()
    for name, p in params.items():
        if name not in first or not first[name]["module"]:
            continue
        path = first[name]["module"][-1][0]
        numel = 1
        for d in p["shape"]:
            numel *= d
        modules[path] = modules.get(path, 0) + numel
        if tuple(p["shape"]) in tied_shapes:
            tied.add(path)
    return {m: c for m, c in modules.items() if m not in tied}


def trainable_with(cli, path, task, seq, module):
    r = subprocess.run([cli, "--hf-config", path, "--task", task, "--seq", str(seq), "--format", "json", "--device", "h100_80gb",
                        "--freeze-all-but", module], capture_output=True, text=True)
    if r.returncode != 0:
        return r.stderr.strip()
    return json.loads(r.stdout)["budgets"][0]["trainable_count"]


def attention_census(graph):
    calls = [n for n in graph["nodes"] if n["target"] == "aten.scaled_dot_product_attention.default"]
    dropout = sorted({n["args"][4] if len(n["args"]) > 4 else 0.0 for n in calls})
    masked = sum(1 for n in calls if len(n["args"]) > 3 and n["args"][3] not in (None, "None"))
    return "%d SDPA calls, dropout_p %s, %d with an attn_mask" % (len(calls), dropout, masked)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cli, failures = sys.argv[1], 0
    for name, (_, task) in MODELS.items():
        for attn in ("sdpa", "eager"):
            path = os.path.join(HERE, "%s-%s.json" % (name, attn))
            if not os.path.exists(path):
                print("missing " + path, file=sys.stderr)
                return 2
            with open(path) as f:
                graph = json.load(f)
            seq = graph["input"][1]
            got = budget_count(cli, config_of(name, graph["layers"]), task, seq)
            ok = got == graph["params"]
            failures += not ok
            print("%-4s %-9s %-5s transformers %s: sum(p.numel()) %d, gpubudget --hf-config %d%s" %
                  ("ok" if ok else "FAIL", name, attn, graph["transformers"], graph["params"], got,
                   "; " + attention_census(graph) if attn == "sdpa" else ""))
        failures += check_modules(cli, name, graph, task, seq)
    return 1 if failures else 0


def check_modules(cli, name, graph, task, seq):
    """Every module of transformers' model that holds parameters, as --freeze-all-but names it:
    the budget's trainable count is that module's parameters, exactly."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(config_of(name, graph["layers"]), f)
        path = f.name
    wrong = []
    try:
        modules = module_parameters(graph)
        for module, count in modules.items():
            got = trainable_with(cli, path, task, seq, module)
            if got != count:
                wrong.append("%s: transformers %d, gpubudget %s" % (module, count, got))
    finally:
        os.unlink(path)
    print("%-4s %-9s       %d modules with parameters (tied ones aside): --freeze-all-but MODULE trains exactly them%s" %
          ("ok" if not wrong else "FAIL", name, len(modules), "".join("\n       " + w for w in wrong)))
    return len(wrong)


if __name__ == "__main__":
    sys.exit(main())
