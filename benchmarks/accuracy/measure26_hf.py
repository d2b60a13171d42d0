#!/usr/bin/python3
"""transformers' own models on PyTorch 2.6 CPU: the `--hf-config` path held to the library as it is.

    scripts/torch26-env run python3 benchmarks/accuracy/measure26_hf.py \\
        --out benchmarks/accuracy/reference/pytorch-2.6-cpu-transformers.json
    scripts/torch26-env run python3 benchmarks/accuracy/measure26_hf.py --write-configs
    scripts/torch26-env run python3 benchmarks/accuracy/measure26_hf.py --list

The other CPU references measure models written out op for op after transformers' code (the
trixie root had no transformers). This one runs transformers itself (Debian forky's
python3-transformers 5.12, which scripts/torch26-env installs into the root; pure Python on
trixie's PyTorch 2.6): `AutoModelForCausalLM.from_config(config)` from a small config.json of each
model_type the `--hf-config` reader takes, trained as users train it,

    loss = model(input_ids=ids, labels=ids).loss      # ForCausalLMLoss; the output object dropped
    loss.backward(); opt.step()                         # AdamW (for-loop, the CPU default)

measured as measure26.py measures a step (measure.py's malloc shim heap reader; one warm-up step;
peaks over zero_grad + forward + backward + step). saved_bytes is what autograd holds saved when
model(input_ids=ids) returns (the model's own graph: no labels, so no loss), as in every reference.

The configs (reference/hf-cpu-configs/NAME.json) are a published config.json of the family
(tests/cli/data/hf/) with its sizes shrunk to what a CPU measures in seconds; `--write-configs`
writes them from CONFIGS below, so the files and this script cannot drift apart. A case's
"hf_config" names its file: `gpubudget --reference` builds the estimate from that file through the
same reader as `--hf-config`, the loss as `--loss causal_lm --drop-output`.
"""
import copy
import gc
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

if __name__ == "__main__":
    measure.ensure_shim()

import torch  # noqa: E402

import measure26  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HF_TESTS = os.path.join(HERE, "..", "..", "tests", "cli", "data", "hf")
CONFIG_DIR = os.path.join(HERE, "reference", "hf-cpu-configs")

# A decoder small enough to measure in seconds, the Llama sizes of measure26_llm.py's cases.
SMALL = dict(hidden_size=256, intermediate_size=688, num_hidden_layers=2, num_attention_heads=8,
             num_key_value_heads=2, vocab_size=32000, max_position_embeddings=2048)

# NAME: (published config in tests/cli/data/hf, the sizes that replace its own)
CONFIGS = {
    "llama": ("llama-2-7b.json", SMALL),
    "llama-eager": ("llama-2-7b.json", dict(SMALL, attn_implementation="eager")),
    "llama-nocache": ("llama-2-7b.json", dict(SMALL, use_cache=False)),
    # eight layers: the estimator walks three copies of a repeated layer and stands one record in for the rest; a
    # 1024-token vocabulary, so that the cache outweighs the logits
    "llama-8l": ("llama-2-7b.json", dict(SMALL, num_hidden_layers=8, vocab_size=1024)),
    "mistral": ("mistral-7b-v0.1.json", dict(SMALL, sliding_window=32)),
    "qwen2": ("qwen2-0.5b.json", dict(SMALL, max_window_layers=2)),
    "qwen3": ("qwen3-0.6b.json", dict(SMALL, head_dim=64, max_window_layers=2)),
    "gemma": ("gemma-2b.json", dict(SMALL, num_attention_heads=4, num_key_value_heads=1, head_dim=128)),
    "gemma2": ("gemma2_2b_like.json", dict(SMALL, num_hidden_layers=4, num_attention_heads=4, head_dim=64,
                                           sliding_window=32, query_pre_attn_scalar=64)),
    "gemma2-eager": ("gemma2_2b_like.json", dict(SMALL, num_hidden_layers=4, num_attention_heads=4, head_dim=64,
                                                 sliding_window=32, query_pre_attn_scalar=64,
                                                 attn_implementation="eager")),
    "gemma3": ("gemma-3-1b-it.json", dict(SMALL, num_hidden_layers=7, num_attention_heads=4, num_key_value_heads=1,
                                          head_dim=64, sliding_window=32, query_pre_attn_scalar=64)),
    "olmo2": ("olmo-2-0425-1b.json", SMALL),
    "olmo3": ("olmo3_7b_like.json", dict(SMALL, num_hidden_layers=4, sliding_window=32)),
    "granite": ("granite_3_1_2b_like.json", SMALL),
    "phi3": ("phi-3-mini-4k-instruct.json", dict(SMALL, num_key_value_heads=8, original_max_position_embeddings=2048)),
    "phi3-eager": ("phi-3-mini-4k-instruct.json", dict(SMALL, num_key_value_heads=8, original_max_position_embeddings=2048,
                                                        attn_implementation="eager")),
    "mixtral": ("mixtral-8x7b-v0.1.json", dict(SMALL, num_local_experts=4, num_experts_per_tok=2)),
    # an encoder fine-tuned as a classifier (GLUE's recipe: AutoModelForSequenceClassification, 2 labels), its dropout 0.1
    "bert": ("bert-base-uncased.json", dict(hidden_size=256, intermediate_size=1024, num_hidden_layers=2, num_attention_heads=8,
                                            architectures=["BertForSequenceClassification"])),
}
# the same without attention dropout (attention_probs_dropout_prob 0, as some recipes set it): on the 2.6 CPU SDPA then
# takes its flash kernel, which keeps a padded batch's mask, instead of the math path
CONFIGS["bert-no-attention-dropout"] = (CONFIGS["bert"][0], dict(CONFIGS["bert"][1], attention_probs_dropout_prob=0.0))
# GPT-2 (its own keys; gelu_new, learned positions, a tied head), fine-tuned as a causal LM; its dropout 0.1
GPT2_SMALL = dict(n_embd=256, n_layer=2, n_head=8, vocab_size=32000, n_positions=1024, n_ctx=1024)
CONFIGS["gpt2"] = ("gpt2.json", GPT2_SMALL)
CONFIGS["gpt2-eager"] = ("gpt2.json", dict(GPT2_SMALL, attn_implementation="eager"))
CONFIGS["gpt2-no-attention-dropout"] = ("gpt2.json", dict(GPT2_SMALL, attn_pdrop=0.0))  # the 2.6 CPU's flash kernel
# decoders fine-tuned as classifiers (the last non-padding token's logits; a pad token set, as users set it to batch)
CONFIGS["gpt2-cls"] = ("gpt2.json", dict(GPT2_SMALL, architectures=["GPT2ForSequenceClassification"], pad_token_id=0))
CONFIGS["qwen2-cls"] = ("qwen2-0.5b-seq-cls-3.json", dict(SMALL, max_window_layers=2, pad_token_id=0))
CLASSIFIERS = ("bert", "bert-no-attention-dropout", "gpt2-cls", "qwen2-cls")
# T5 (its own keys; relative position buckets, ReLU, a tied head scaled by d_model^-0.5) as
# AutoModelForSeq2SeqLM: the labels are the input ids, the decoder's input ids their shift right
CONFIGS["t5"] = ("t5-small.json", dict(d_model=256, d_ff=1024, d_kv=32, num_heads=8, num_layers=2, num_decoder_layers=2,
                                       vocab_size=32000))
CONFIGS["t5-no-dropout"] = ("t5-small.json", dict(CONFIGS["t5"][1], dropout_rate=0.0))
SEQ2SEQ = ("t5", "t5-no-dropout")  # configs built by AutoModelForSequenceClassification
# generate(): eight layers, as many kv heads as heads and a 1024-token vocabulary, so that the cache outweighs the
# logits; a 64-token window where the family has one (prompts of 512 tokens run past it)
GEN = dict(SMALL, num_hidden_layers=8, num_key_value_heads=8, vocab_size=1024)
CONFIGS.update({
    "llama-gen": ("llama-2-7b.json", GEN),
    "mistral-gen": ("mistral-7b-v0.1.json", dict(GEN, sliding_window=64)),
    "gemma2-gen": ("gemma2_2b_like.json", dict(GEN, num_attention_heads=4, num_key_value_heads=4, head_dim=64, sliding_window=64,
                                               query_pre_attn_scalar=64)),
    "gemma3-gen": ("gemma-3-1b-it.json", dict(GEN, num_attention_heads=4, num_key_value_heads=4, head_dim=64, sliding_window=64,
                                              query_pre_attn_scalar=64)),
    "olmo3-gen": ("olmo3_7b_like.json", dict(GEN, sliding_window=64)),
    # grouped-query heads (4 to a kv head): a padded batch's masked SDPA repeats k and v to every head; a 512-token
    # vocabulary, so that a decode step's LM head (2 x 512 x 256) stays below OpenBLAS's threaded GEMM and its buffer
    "llama-gen-gqa": ("llama-2-7b.json", dict(GEN, num_key_value_heads=2, vocab_size=512)),
    "mistral-gen-gqa": ("mistral-7b-v0.1.json", dict(GEN, num_key_value_heads=2, sliding_window=64)),
})


def config_dict(name):
    """CONFIGS[name] as the config.json written to reference/hf-cpu-configs/NAME.json."""
    src, sizes = CONFIGS[name]
    with open(os.path.join(HF_TESTS, src)) as f:
        d = json.load(f)
    d = {k: v for k, v in d.items() if k not in ("torch_dtype", "dtype", "_name_or_path", "auto_map")}
    d.update(copy.deepcopy(sizes))
    if d.get("layer_types"):  # a published per-layer list follows the new layer count
        d.pop("layer_types")
    for k in ("pad_token_id", "bos_token_id", "eos_token_id"):  # ids of the published vocabulary
        if isinstance(d.get(k), int) and d[k] >= d["vocab_size"]:
            d[k] = None
    return d


def write_configs():
    os.makedirs(CONFIG_DIR, exist_ok=True)
    for name in CONFIGS:
        with open(os.path.join(CONFIG_DIR, name + ".json"), "w") as f:
            json.dump(config_dict(name), f, indent=2, sort_keys=True)
            f.write("\n")
        print("wrote", os.path.join(CONFIG_DIR, name + ".json"), file=sys.stderr)


def build_model(cfg_name, checkpoint):
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoModelForSequenceClassification

    d = config_dict(cfg_name)
    attn = d.pop("attn_implementation", None)
    config = AutoConfig.for_model(d.pop("model_type"), **d)
    auto = (AutoModelForSequenceClassification if cfg_name in CLASSIFIERS else AutoModelForSeq2SeqLM if cfg_name in SEQ2SEQ
            else AutoModelForCausalLM)
    model = auto.from_config(config, attn_implementation=attn) if attn else auto.from_config(config)
    if checkpoint:
        model.gradient_checkpointing_enable()  # transformers' default: every decoder layer
    return model


CASES = {}


PRECISIONS = {  # a case's precision: (name suffix, description, autocast dtype, the weights' dtype)
    "fp32": ("", "fp32", None, torch.float32),
    "bf16_autocast": ("_bf16", "CPU autocast bf16", torch.bfloat16, torch.float32),
    # model.to(torch.bfloat16) (from_pretrained's torch_dtype=torch.bfloat16): AdamW updates the 16-bit
    # weights directly, no master copy, its state bf16 too
    "bf16": ("_bf16weights", "bf16 weights (model.to(torch.bfloat16)), no autocast", None, torch.bfloat16),
}


def padded_attention_mask(batch, seq):
    """What DataCollatorWithPadding hands the model for `batch` sequences of `seq` tokens but the last, a quarter
    shorter: ones, the last row's tail zeros (right padding)."""
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[-1, seq - seq // 4:] = 0
    return mask


def _case(cfg, precision="fp32", checkpoint=False, batch=2, seq=64, padded=False, mask=False):
    """`padded`: a collator's padded batch; `mask`: an attention_mask of ones passed (a collator's or a tokenizer's
    output given whole, nothing padded)."""
    classifier, seq2seq = cfg in CLASSIFIERS, cfg in SEQ2SEQ
    suffix, how, _, weights = PRECISIONS[precision]
    name = "hf_%s_b%d_t%d%s%s%s%s" % (cfg.replace("-", "_"), batch, seq, suffix, "_ckpt" if checkpoint else "",
                                      "_padded" if padded else "", "_mask" if mask else "")
    desc = "transformers %s from hf-cpu-configs/%s.json, %s, batch %d, seq %d%s%s%s" % (
        "AutoModelForSequenceClassification" if classifier else "AutoModelForSeq2SeqLM" if seq2seq else "AutoModelForCausalLM", cfg,
        how, batch, seq,
        ", gradient_checkpointing_enable()" if checkpoint else "",
        ", a padded batch (attention_mask, the last sequence's last quarter padding%s)" % ("" if classifier else ", labels -100 there")
        if padded else "", ", an attention_mask of ones (nothing padded)" if mask else "")
    CASES[name] = dict(case=name, description=desc, hf_config=cfg + ".json",
                       task="seq_cls" if classifier else "seq2seq" if seq2seq else "causal_lm", batch=batch,
                       seq=seq, precision=precision, optimizer="adamw", optimizer_impl="for_loop",
                       checkpoint="blocks" if checkpoint else "none", loss="cross_entropy" if classifier or seq2seq else "causal_lm",
                       output_held=False,
                       padded_batch=padded, attention_mask_passed=padded or mask, build=lambda: build_model(cfg, checkpoint).to(weights),
                       make_batch=lambda: torch.randint(0, min(SMALL["vocab_size"], config_dict(cfg)["vocab_size"]), (batch, seq)))


def _inference_case(cfg, batch=2, seq=64, precision="fp32"):
    """An eval forward as users run one: model.eval(), torch.no_grad(), out = model(input_ids=ids), the
    output kept (its logits and, with the config's use_cache, past_key_values' DynamicCache)."""
    suffix, how, _, weights = PRECISIONS[precision]
    name = "hf_%s_infer_b%d_t%d%s" % (cfg.replace("-", "_"), batch, seq, suffix)
    desc = "transformers AutoModelForCausalLM from hf-cpu-configs/%s.json, eval forward under no_grad, %s, batch %d, seq %d, " \
           "the output kept" % (cfg, how, batch, seq)
    CASES[name] = dict(case=name, description=desc, hf_config=cfg + ".json", task="causal_lm", kind="inference", batch=batch,
                       seq=seq, precision=precision, build=lambda: build_model(cfg, False).to(weights),
                       make_batch=lambda: torch.randint(0, config_dict(cfg)["vocab_size"], (batch, seq)))


def _generate_case(cfg, batch=2, prompt=512, new=8, precision="fp32", padded=False):
    """generate() as users call it: greedy, `new` tokens after a `prompt`-token prompt for `batch` sequences, the
    output (sequences and past_key_values) kept. `padded`: the prompts of unequal lengths, left-padded as a
    decoder's tokenizer pads them (padding_side="left"): the last one's first quarter padding."""
    suffix, how, _, weights = PRECISIONS[precision]
    name = "hf_%s_b%d_p%d_n%d%s%s" % (cfg.replace("-", "_"), batch, prompt, new, suffix, "_padded" if padded else "")
    desc = "transformers AutoModelForCausalLM from hf-cpu-configs/%s.json, generate() of %d tokens after %d, batch %d, %s, " \
           "greedy%s" % (cfg, new, prompt, batch, how, ", the prompts left-padded (the last one's first quarter)" if padded else "")
    CASES[name] = dict(case=name, description=desc, hf_config=cfg + ".json", task="causal_lm", kind="generate", batch=batch,
                       prompt=prompt, new=new, precision=precision, padded_batch=padded, build=lambda: build_model(cfg, False).to(weights),
                       make_batch=lambda: torch.randint(3, config_dict(cfg)["vocab_size"], (batch, prompt)))


def _define_cases():
    for cfg in CONFIGS:
        if cfg not in ("llama-nocache", "llama-8l") and "-gen" not in cfg and cfg not in CLASSIFIERS:
            _case(cfg)
    for cfg in ("llama", "qwen2", "gemma2", "phi3", "mixtral"):
        _case(cfg, precision="bf16_autocast")
    for cfg in ("llama", "gemma3"):
        _case(cfg, checkpoint=True)
    for cfg in ("llama", "llama-nocache", "llama-8l", "phi3", "gemma2", "llama-eager", "mixtral"):
        _inference_case(cfg)
    for cfg in ("llama", "qwen3", "gemma2", "gemma3", "phi3", "mixtral"):
        _case(cfg, precision="bf16")
    _case("llama", precision="bf16", checkpoint=True)
    _case("qwen2", precision="bf16", batch=1, seq=256)
    for cfg in ("olmo2", "olmo3", "granite"):  # OLMo 2's RoPE tables stay fp32, OLMo 3's do not
        _case(cfg, precision="bf16")
    for cfg in ("llama", "gemma2", "mixtral", "phi3", "gemma3", "mistral", "qwen3", "olmo2"):
        _inference_case(cfg, precision="bf16")
    for cfg in ("gemma3", "mistral", "olmo3"):
        _inference_case(cfg)
    for cfg in ("llama-gen", "mistral-gen", "gemma2-gen", "gemma3-gen", "olmo3-gen"):
        _generate_case(cfg)
        _inference_case(cfg, seq=512)  # generate()'s prefill alone
    for cfg in ("llama-gen", "mistral-gen", "gemma3-gen"):  # from_pretrained(torch_dtype=torch.bfloat16), then generate()
        _generate_case(cfg, precision="bf16")
    for cfg in ("llama", "mistral", "gemma2", "gemma3", "qwen2", "olmo3", "phi3", "mixtral"):  # a collated, padded batch
        _case(cfg, padded=True)
    _case("gemma2", precision="bf16_autocast", padded=True)
    _case("llama", checkpoint=True, padded=True)
    for cfg in ("bert", "bert-no-attention-dropout"):  # an encoder fine-tuned as a classifier, on a collated batch and a padded one
        _case(cfg)
        _case(cfg, padded=True)
    for cfg in ("gpt2", "gpt2-eager", "gpt2-no-attention-dropout"):  # GPT-2 as transformers 5 loads it: SDPA (its default), eager
        _case(cfg)
        _case(cfg, padded=True)
    _case("gpt2", precision="bf16_autocast")
    for cfg in SEQ2SEQ:  # T5 as transformers 5 loads it, fine-tuned with labels = its input ids
        _case(cfg)
    _case("t5", precision="bf16_autocast")
    _case("t5", padded=True)
    for cfg in ("gpt2-cls", "qwen2-cls"):  # decoders as classifiers, on a collated batch and a padded one
        _case(cfg)
        _case(cfg, padded=True)
    for cfg in ("llama", "mistral", "gemma2", "gemma3", "olmo3", "bert"):  # an attention_mask of ones (nothing padded)
        _case(cfg, mask=True)
    # grouped-query heads; batched prompts of unequal lengths (Mistral's window cache is small: four sequences, so that
    # it outweighs the ~10 KB of Python objects the output holds besides)
    _generate_case("llama-gen-gqa")
    _generate_case("mistral-gen-gqa", batch=4)
    for cfg in ("llama-gen", "llama-gen-gqa", "gemma3-gen"):
        _generate_case(cfg, padded=True)
    _generate_case("mistral-gen-gqa", batch=4, padded=True)
    _generate_case("llama-gen-gqa", precision="bf16", padded=True)
    # a short prompt, many new tokens: the last decode steps' peak above the prefill's (the attention's copies of the
    # keys, or the LM head's GEMM buffer where there are none)
    for padded in (False, True):
        for precision in ("fp32", "bf16"):
            _generate_case("llama-gen-gqa", prompt=64, new=448, padded=padded, precision=precision)
    _generate_case("llama-gen", prompt=64, new=192)


_define_cases()


def _hf_forward(model, ids, autocast, labels, attention_mask=None):
    """model(input_ids=ids, ...), with the collator's attention_mask and -100 labels at its padding where given; a
    classifier's labels one class a sequence."""
    with measure._autocast(autocast):
        if model.config.architectures and model.config.architectures[0].endswith("ForSequenceClassification"):
            targets = torch.arange(ids.shape[0]) % model.config.num_labels if labels else None
        else:
            targets = None if not labels else ids if attention_mask is None else ids.masked_fill(attention_mask == 0, -100)
        if model.config.is_encoder_decoder:  # without labels the decoder's input ids given as the labels would make them
            out = model(input_ids=ids, attention_mask=attention_mask, labels=targets,
                        decoder_input_ids=None if labels else model._shift_right(ids))
        else:
            out = model(input_ids=ids, attention_mask=attention_mask, labels=targets)
        return out.loss if labels else out.logits


def run_inference_case(c, heap):
    """An eval forward (warmed up once): the live heap above the weights after it with the output kept,
    and its peak."""
    torch.manual_seed(0)
    model = c["build"]()
    model.eval()
    ids = c["make_batch"]()
    with torch.no_grad():
        model(input_ids=ids)
    gc.collect()
    base = heap.current()
    heap.reset_peak()
    with torch.no_grad():
        out = model(input_ids=ids)
        after = heap.current() - base
    peak = heap.peak() - base
    cache = out.past_key_values
    r = {k: v for k, v in c.items() if k not in ("build", "make_batch")}
    r.update(dtype=str(next(model.parameters()).dtype).replace("torch.", ""), attn_implementation=model.config._attn_implementation,
             use_cache=model.config.use_cache,
             params=sum(p.numel() for p in model.parameters()), after_forward_bytes=after, forward_peak_bytes=peak,
             cache_bytes=0 if cache is None else sum(t.numel() * t.element_size() for l in cache.layers for t in (l.keys, l.values)))
    del out, cache
    return r


def run_generate_case(c, heap):
    """generate() (warmed up once with one new token): the live heap above the weights at its peak and after it
    (the output kept), and the bytes of its cache's K and V storages."""
    torch.manual_seed(0)
    model = c["build"]()
    model.eval()
    ids = c["make_batch"]()
    mask = torch.ones_like(ids)
    if c.get("padded_batch"):  # left padding: the last prompt a quarter shorter
        mask[-1, :ids.shape[1] // 4] = 0
        ids[-1, :ids.shape[1] // 4] = 0
    kw = dict(attention_mask=mask, do_sample=False, pad_token_id=0, return_dict_in_generate=True)
    with torch.no_grad():
        model.generate(ids, max_new_tokens=1, **kw)
    gc.collect()
    base = heap.current()
    heap.reset_peak()
    out = model.generate(ids, max_new_tokens=c["new"], min_new_tokens=c["new"], **kw)
    peak, after = heap.peak() - base, heap.current() - base
    storages = {}
    for layer in out.past_key_values.layers:
        for t in (layer.keys, layer.values):
            storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    r = {k: v for k, v in c.items() if k not in ("build", "make_batch")}
    r.update(dtype=str(next(model.parameters()).dtype).replace("torch.", ""), attn_implementation=model.config._attn_implementation,
             cache=type(out.past_key_values).__name__, layer_kinds=[type(l).__name__ for l in out.past_key_values.layers],
             params=sum(p.numel() for p in model.parameters()), generate_peak_bytes=peak, after_generate_bytes=after,
             cache_bytes=sum(storages.values()))
    del out
    return r


def run_case(c, heap):
    """One measured step: measure.measure_step's, the loss transformers' own (the output dropped)."""
    if c.get("kind") == "inference":
        return run_inference_case(c, heap)
    if c.get("kind") == "generate":
        return run_generate_case(c, heap)
    torch.manual_seed(0)
    model = c["build"]()
    model.train()
    ids = c["make_batch"]()
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = measure.make_optimizer(c["optimizer"], trainable, c["optimizer_impl"])
    ac = PRECISIONS[c["precision"]][2]
    mask = (padded_attention_mask(*ids.shape) if c.get("padded_batch") else
            torch.ones(ids.shape, dtype=torch.int64) if c.get("attention_mask_passed") else None)

    def saved(m, batch):  # the model's own graph: no labels, the logits returned
        return sum(s.nbytes() for s in measure.live_saved_storages(m, lambda: _hf_forward(m, batch, ac, False, mask)).values())

    fields = measure.measure_step(model, ids, opt, heap, ac, saved, lambda m, batch, a: (None, _hf_forward(m, batch, a, True, mask)))
    r = {k: v for k, v in c.items() if k not in ("build", "make_batch")}
    r.update(dtype=str(next(model.parameters()).dtype).replace("torch.", ""), attn_implementation=model.config._attn_implementation,
             **fields)
    return r


def main():
    if "--write-configs" in sys.argv:
        return write_configs()
    args, names = measure26.select_cases(__doc__, CASES, lambda n, c: "%-34s %s" % (n, c["description"]))
    if names is None:
        return
    import transformers

    env = measure26._environment()
    env["transformers"] = transformers.__version__
    res = {"source": "transformers %s's own models on PyTorch %s (CPU) in a Debian trixie root (scripts/torch26-env), "
                     "measured by benchmarks/accuracy/measure26_hf.py (measure26.py's step: malloc shim + "
                     "saved_tensors_hooks; the loss transformers' own)" % (transformers.__version__, env["torch"]),
           "environment": env, "cases": []}
    measure26.measure_cases(names, CASES, run_case, measure.Heap(), res, args.out)


if __name__ == "__main__":
    main()
