#!/usr/bin/env python3
"""The ATen graphs of transformers' own models, for issue H's exporter (transformers cannot be
installed on the development machines; the GPU machine's image has transformers 5.x).

    python3 benchmarks/gpu/dump_transformers_graphs.py --out DIR [--layers 2]

For each model (BERT masked-lm and sequence classification, GPT-2, TinyLlama, T5-small; configs
from benchmarks/accuracy/reference/cuda-h100/hf-configs/ or transformers' defaults; `--layers`
hidden layers, train mode, the config's dropout, attn_implementation sdpa and eager), on the CPU:
  1. `torch.export.export(model, (ids,), strict=False)` (the training IR: ATen ops before
     decomposition), written as DIR/<model>-<attn>.json: {"model", "transformers", "torch",
     "params": sum(p.numel()), "input": [batch, seq], "nodes": [{"name", "op", "target", "args",
     "kwargs", "shape", "dtype", "module": [[path, type], ...], "stack"}]}; `module` is the
     nn_module_stack (outermost first), `stack` the last line of the node's stack trace;
  2. tools/gpubudget-export on the same model (what it says today), recorded in DIR/summary.json.
Neither needs a GPU; the script runs wherever transformers imports.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))
from gpubudget_export_aten import node_record  # noqa: E402  (one record format for the dumps and the exporter)
CONFIGS = os.path.join(REPO, "benchmarks", "accuracy", "reference", "cuda-h100", "hf-configs")
BATCH, SEQ = 2, 64

# name: (config file or None for transformers' defaults, model_type, Auto class)
MODELS = {
    "bert_mlm": ("bert-base-uncased.json", "bert", "AutoModelForMaskedLM"),
    "bert_cls": ("bert-base-uncased.json", "bert", "AutoModelForSequenceClassification"),
    "gpt2": (None, "gpt2", "AutoModelForCausalLM"),
    "tinyllama": ("tinyllama-1.1b.json", "llama", "AutoModelForCausalLM"),
    "t5_small": ("t5-small.json", "t5", "AutoModelForSeq2SeqLM"),
}


def factory(name, layers=2, attn="sdpa"):
    """The model, built as a user builds it (from_config, random weights), `layers` deep."""
    import transformers

    cfg_file, model_type, auto = MODELS[name]
    d = {}
    if cfg_file:
        with open(os.path.join(CONFIGS, cfg_file)) as f:
            d = json.load(f)
        d.pop("model_type", None)
    for k in ("num_hidden_layers", "num_layers", "num_decoder_layers", "n_layer"):
        if k in d or (model_type == "gpt2" and k == "n_layer"):
            d[k] = layers
    config = transformers.AutoConfig.for_model(model_type, **d)
    config.use_cache = False  # training: no KV cache in the output (torch.export refuses DynamicCache)
    model = getattr(transformers, auto).from_config(config, attn_implementation=attn)
    return model.train()


def export_one(name, attn, layers, out_dir):
    import torch
    import transformers

    model = factory(name, layers, attn)
    ids = torch.randint(0, model.config.vocab_size, (BATCH, SEQ))
    kwargs = {"labels": ids} if name != "bert_cls" else {"labels": torch.zeros(BATCH, dtype=torch.long)}
    if name == "t5_small":
        kwargs = {"labels": ids}
    ep = torch.export.export(model, (ids,), kwargs=kwargs, strict=False)
    doc = {"model": name, "attn_implementation": attn, "layers": layers, "transformers": transformers.__version__,
           "torch": torch.__version__, "params": sum(p.numel() for p in model.parameters()), "input": [BATCH, SEQ],
           "nodes": [node_record(n) for n in ep.graph.nodes]}
    path = os.path.join(out_dir, "%s-%s.json" % (name, attn))
    with open(path, "w") as f:
        json.dump(doc, f)
    return {"nodes": len(doc["nodes"]), "params": doc["params"], "file": os.path.basename(path)}


def exporter_says(name, layers, vocab):
    """tools/gpubudget-export on the model, as a user would run it."""
    cmd = [sys.executable, os.path.join(REPO, "tools", "gpubudget-export"), "dump_transformers_graphs:factory",
           "--path", HERE, "--tokens", str(SEQ), "--vocab", str(vocab), "--kwargs", json.dumps({"name": name, "layers": layers})]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return {"rc": p.returncode, "stderr": p.stderr[-1500:], "stdout_head": p.stdout[:300]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--models", help="comma-separated subset of " + ",".join(MODELS))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    summary = {}
    for name in (args.models.split(",") if args.models else MODELS):
        for attn in ("sdpa", "eager"):
            t0 = time.time()
            try:
                r = export_one(name, attn, args.layers, args.out)
            except Exception as e:  # noqa: BLE001  (recorded; the next model goes on)
                r = {"error": "%s: %s" % (type(e).__name__, str(e)[:1500])}
            r["seconds"] = round(time.time() - t0, 1)
            summary["%s-%s" % (name, attn)] = r
            print(name, attn, json.dumps(r)[:300], flush=True)
        try:
            summary[name + "-gpubudget-export"] = exporter_says(name, args.layers, factory(name, 1).config.vocab_size)
        except Exception as e:  # noqa: BLE001
            summary[name + "-gpubudget-export"] = {"error": repr(e)}
        print(name, "gpubudget-export rc", summary[name + "-gpubudget-export"].get("rc"), flush=True)
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
