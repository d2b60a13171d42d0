#!/usr/bin/env python3
"""Real training loops on real library code, on a CUDA GPU: the real-library reference (issue F
items 2 and 6). Makes benchmarks/accuracy/reference/cuda-h100/real-libraries-h100.json (and, run
with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, its -expandable twin); `gpubudget
--reference FILE --check` holds the estimator to it (tools/real_library_reference.hpp).

    python3 benchmarks/gpu/measure_real_libraries.py --out $OUT/real-libraries.json       # every case
    python3 benchmarks/gpu/measure_real_libraries.py --list                                # the case table
    python3 benchmarks/gpu/measure_real_libraries.py --cases tv_,maxbatch16_resnet18 --out F
    python3 benchmarks/gpu/measure_real_libraries.py --device cpu --out F                  # dry run (no GPU)

Each case runs alone in a fresh process (a child of this script), so that its device figures
(context, cuBLAS/cuDNN handles, the caching allocator's segments) are what that job alone costs.

Training cases (`tv`, `hf`): the model on the device (torchvision `models.<name>(weights=None)`,
or transformers `AutoModelFor{SequenceClassification,Seq2SeqLM,CausalLM}.from_config` of
hf-configs/<cfg> with the config's dropout and the attention implementation transformers picks),
`base` = dtype of the weights before PEFT, `lora` = PEFT `get_peft_model(LoraConfig(r, target_modules))`,
`ckpt` = `gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})`;
AdamW (PyTorch's default implementation: foreach on CUDA) over the trainable parameters, 3 steps of
zero_grad(set_to_none) + forward + CrossEntropy (torchvision: nn.CrossEntropyLoss on random labels;
transformers: its own loss with labels = input_ids, or random class labels for `cls`) + backward +
step, under torch.autocast for amp_fp16 (with a GradScaler) and amp_bf16. Fields (bytes, absolute):
  alloc_peak_step1 / reserved_peak_step1, alloc_peak_step3 / reserved_peak_step3   per step
      (torch.cuda.reset_peak_memory_stats before the step; max_memory_allocated / _reserved after it)
  alloc_peak, reserved_peak   the largest of the three steps
  trainable_without_grad   trainable elements whose .grad is None after the first backward (not in
      the H100 file: FIELDS_SINCE_H100)
  resident        memory_allocated after step 3 with the gradients freed (parameters, optimizer
                  state, the cuBLAS workspaces the allocator holds, the input batch)
  optimizer_state_allocated   whether AdamW ever stepped: a GradScaler skips optimizer.step() while
      the scaled gradients overflow (since 2026-11-27; FIELDS_SINCE_H100)
  params, trainable, param_bytes   parameter elements, of which require grad, and their bytes
  device_used     cudaMemGetInfo total - free at the end (what nvidia-smi shows for the job)
  reserved_now    memory_reserved at the end; non_allocator = device_used - reserved_now
  seconds
Graph cases (`graph`): a module of tests/export/custom_models.py (`factory`, `kwargs`) on a random
input of the shape its exported graph (`graph`, a file of tests/export/data) starts with, the loss
(out ** 2).mean(), otherwise as a training case; `gpubudget --reference` budgets the graph file, a
copy of which the committed reference keeps in graphs/ beside the file.
Generate cases (`gen`): the config's model in its torch_dtype (bf16 if none), `generate()` of `new`
tokens (greedy, min_new_tokens = new) after a random `prompt` for `batch` sequences, under
inference_mode: weights = memory_allocated before generate, alloc_peak / reserved_peak over it,
out_tokens, params, device_used, reserved_now, non_allocator, seconds.
Largest batch under a capped device (`max`, `maxbatch16_*`): in one fresh process, a batch-1 step
of the same model first (loads cuBLAS and cuDNN), then non_allocator = device_used - memory_reserved
after emptying the cache, and the caching allocator is capped at cap_total = --cap-gib GiB less it
(torch.cuda.set_per_process_memory_fraction(allocator_cap / total_memory)): the device a job with a
--cap-gib GiB GPU would have. Then the trials, each a fresh model + optimizer running the 3 steps
(OOM = torch.cuda.OutOfMemoryError): the start batch doubled until one fails (halved if the start
fails), then bisection (or, with "down_from": L, trials L + 1, L, L - 1, ... until one runs); fields cap_total, non_allocator, allocator_cap, largest_ok, smallest_oom,
trials [[batch, ok], ...], exact (smallest_oom == largest_ok + 1), seconds. A `cap` spec with
"fresh": true runs its one trial without the batch-1 step (a user's job as it starts), the cap taken
from the spec's "non_allocator" (a warm trial's), and records non_allocator_after as measured after it.

The file: {"environment": {... "gpu", "total_memory", "PYTORCH_CUDA_ALLOC_CONF"}, "cap_gib",
"cases": {name: fields}, "specs": {name: [kind, spec]}}; it is rewritten after every case, so a
cut-off run keeps what it measured (--resume FILE measures only what is missing).

--device cpu is a dry run of the same code on the CPU at small sizes (memory fields null, the
search capped by --cpu-max-batch): it exercises the model building, the training loop and the
search, not the numbers. benchmarks/gpu/check_real_libraries_without_gpu.py runs it.
"""
import argparse
import datetime
import gc
import json
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONFIGS = os.path.join(REPO, "benchmarks", "accuracy", "reference", "cuda-h100", "hf-configs")
GRAPHS = os.path.join(REPO, "tests", "export", "data")  # `graph` specs' files (the reference keeps copies in graphs/)
# nanoGPT's train.py default model (GPT-2 124M, bias=False, dropout 0): tests/export/data/nanogpt_124m.json
NANOGPT_124M = {"block_size": 1024, "vocab_size": 50304, "n_layer": 12, "n_head": 12, "n_embd": 768, "dropout": 0.0, "bias": False}
MASKED_W512 = {"width": 512, "heads": 8, "layers": 6, "causal": True, "padded": True}  # masked_encoder_stack: both masks, dropout 0.1
TUTORIAL_W512 = {"ntoken": 28782, "d_model": 512, "nhead": 8, "d_hid": 2048, "nlayers": 6, "dropout": 0.1}  # tutorial_transformer_lm, sequence first
CLIP_B32_TEXT = {"vocab": 49408, "context": 77, "width": 512, "heads": 8, "layers": 12, "embed": 512}  # clip_text_tower: ViT-B/32's
SCRIPT = os.path.abspath(__file__)
STEPS = 3
GiB = 1 << 30

# The cases of real-libraries-h100.json, as its "specs" say (check_real_libraries_without_gpu.py
# holds this table to the committed file).
CASES = {
    "tv_resnet18_b64_224_fp32": ["tv", {"model": "resnet18", "batch": 64, "size": 224, "prec": "fp32"}],
    "tv_resnet101_b32_224_fp16": ["tv", {"model": "resnet101", "batch": 32, "size": 224, "prec": "amp_fp16"}],
    "tv_mobilenet_v3_large_b64_224_bf16": ["tv", {"model": "mobilenet_v3_large", "batch": 64, "size": 224, "prec": "amp_bf16"}],
    "tv_vgg16_b16_224_fp16": ["tv", {"model": "vgg16", "batch": 16, "size": 224, "prec": "amp_fp16"}],
    "tv_vit_b_16_b16_224_fp32": ["tv", {"model": "vit_b_16", "batch": 16, "size": 224, "prec": "fp32"}],
    "tv_convnext_small_b16_224_fp16": ["tv", {"model": "convnext_small", "batch": 16, "size": 224, "prec": "amp_fp16"}],
    "tv_wide_resnet50_2_b32_224_bf16": ["tv", {"model": "wide_resnet50_2", "batch": 32, "size": 224, "prec": "amp_bf16"}],
    "tv_efficientnet_b0_b32_224_fp32": ["tv", {"model": "efficientnet_b0", "batch": 32, "size": 224, "prec": "fp32"}],
    "hf_bert_cls_b16_t512_fp16": ["hf", {"cfg": "bert-base-uncased.json", "arch": "cls", "batch": 16, "seq": 512, "prec": "amp_fp16"}],
    "hf_t5_small_b16_t512_bf16": ["hf", {"cfg": "t5-small.json", "arch": "s2s", "batch": 16, "seq": 512, "prec": "amp_bf16"}],
    "hf_tinyllama_b4_t1024_bf16": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16"}],
    "hf_tinyllama_b4_t2048_bf16_ckpt": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 2048, "prec": "amp_bf16", "ckpt": True}],
    "hf_gemma_2b_b2_t1024_lora_bf16base": ["hf", {"cfg": "gemma-2b.json", "batch": 2, "seq": 1024, "prec": "amp_bf16", "base": "bf16",
                                                  "lora": {"r": 8, "targets": ["q_proj", "v_proj"]}}],
    "hf_phi3_mini_b1_t2048_lora_bf16base_ckpt": ["hf", {"cfg": "phi-3-mini-4k-instruct.json", "batch": 1, "seq": 2048, "prec": "amp_bf16",
                                                        "base": "bf16", "ckpt": True, "lora": {"r": 16, "targets": "all-linear"}}],
    "hf_tinyllama_gen_b16_p512_n128": ["gen", {"cfg": "tinyllama-1.1b.json", "batch": 16, "prompt": 512, "new": 128}],
    "hf_qwen2_7b_gen_b8_p1024_n128": ["gen", {"cfg": "qwen2-7b.json", "batch": 8, "prompt": 1024, "new": 128}],
    "maxbatch16_resnet18_224_fp32": ["max", {"kind": "tv", "model": "resnet18", "size": 224, "prec": "fp32", "start": 64}],
    "maxbatch16_resnet101_224_fp16": ["max", {"kind": "tv", "model": "resnet101", "size": 224, "prec": "amp_fp16", "start": 64}],
    "maxbatch16_vit_b_16_224_fp32": ["max", {"kind": "tv", "model": "vit_b_16", "size": 224, "prec": "fp32", "start": 32}],
    "maxbatch16_tinyllama_t1024_bf16_ckpt": ["max", {"kind": "hf", "cfg": "tinyllama-1.1b.json", "seq": 1024, "prec": "amp_bf16",
                                                     "ckpt": True, "start": 2}],
    "maxbatch16_t5_small_t512_bf16": ["max", {"kind": "hf", "cfg": "t5-small.json", "arch": "s2s", "seq": 512, "prec": "amp_bf16",
                                              "start": 16}],
}

# Cases beyond the committed H100 file (first measured in a later device session): the questions the
# H100 file leaves open. `cap` = one batch under the --cap-gib device (ok or OOM), traced with
# --trace to see where a one-above prediction dies; `ckpt: "reentrant"` = use_reentrant=True;
# lora `dora` = PEFT use_dora=True (a magnitude vector and its weight norm per adapted layer).
EXTRA_CASES = {
    # transformers' GPT-2 with its gelu_new (NewGELUActivation, the formula written out) and with F.gelu
    # (op_rules.md 2.6 #65; run_open_questions.sh 23)
    "hf_gpt2_b8_t512_bf16": ["hf", {"cfg": "gpt2.json", "batch": 8, "seq": 512, "prec": "amp_bf16"}],
    "hf_gpt2_gelu_b8_t512_bf16": ["hf", {"cfg": "gpt2-gelu.json", "batch": 8, "seq": 512, "prec": "amp_bf16"}],
    "tv_resnet50_b64_224_fp32": ["tv", {"model": "resnet50", "batch": 64, "size": 224, "prec": "fp32"}],
    "tv_densenet121_b32_224_fp16": ["tv", {"model": "densenet121", "batch": 32, "size": 224, "prec": "amp_fp16"}],
    "hf_tinyllama_b4_t2048_bf16_ckpt_reentrant": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 2048, "prec": "amp_bf16",
                                                         "ckpt": "reentrant"}],
    "hf_tinyllama_b4_t1024_dora_bf16base": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16", "base": "bf16",
                                                   "lora": {"r": 16, "targets": ["q_proj", "v_proj"], "dora": True}}],
    # the batch at which cuDNN's weight gradient starts staging layout copies (op_rules.md CV4)
    "tv_resnet18_b4_224_fp32": ["tv", {"model": "resnet18", "batch": 4, "size": 224, "prec": "fp32"}],
    "tv_resnet18_b8_224_fp32": ["tv", {"model": "resnet18", "batch": 8, "size": 224, "prec": "fp32"}],
    "tv_resnet18_b16_224_fp32": ["tv", {"model": "resnet18", "batch": 16, "size": 224, "prec": "fp32"}],
    "tv_resnet18_b32_224_fp32": ["tv", {"model": "resnet18", "batch": 32, "size": 224, "prec": "fp32"}],
    "tv_resnet50_b32_224_fp32": ["tv", {"model": "resnet50", "batch": 32, "size": 224, "prec": "fp32"}],
    "maxbatch16_resnet50_224_fp32": ["max", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "fp32", "start": 64}],
    "maxbatch16_efficientnet_b0_224_fp32": ["max", {"kind": "tv", "model": "efficientnet_b0", "size": 224, "prec": "fp32", "start": 64}],
    "cap16_vit_b_16_b115_fp32": ["cap", {"kind": "tv", "model": "vit_b_16", "size": 224, "prec": "fp32", "batch": 115}],
    "cap16_t5_small_b23_t512_bf16": ["cap", {"kind": "hf", "cfg": "t5-small.json", "arch": "s2s", "seq": 512, "prec": "amp_bf16",
                                             "batch": 23}],
    # 2026-11-26, second session (run_open_questions.sh 4): ViT-B/16's conv_proj workspace against the
    # batch (op_rules.md CT10: 23 MB short at b115), the capped trial above b115, and LoRA without
    # DoRA beside the DoRA case (op_rules.md L8 and L9 on one configuration)
    "tv_vit_b_16_b32_224_fp32": ["tv", {"model": "vit_b_16", "batch": 32, "size": 224, "prec": "fp32"}],
    "tv_vit_b_16_b64_224_fp32": ["tv", {"model": "vit_b_16", "batch": 64, "size": 224, "prec": "fp32"}],
    "cap16_vit_b_16_b116_fp32": ["cap", {"kind": "tv", "model": "vit_b_16", "size": 224, "prec": "fp32", "batch": 116}],
    "hf_tinyllama_b4_t1024_lora_bf16base": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16", "base": "bf16",
                                                   "lora": {"r": 16, "targets": ["q_proj", "v_proj"]}}],
    # 2026-11-26, third session: PEFT's modules_to_save (bf16 copies of embed_tokens and lm_head that
    # train, beside their frozen originals) and LoRA on a classifier (SEQ_CLS puts score in
    # modules_to_save; batch 1: LlamaForSequenceClassification needs a pad token for more)
    "hf_tinyllama_b4_t1024_lora_saved_bf16base": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16",
                                                         "base": "bf16", "lora": {"r": 16, "targets": ["q_proj", "v_proj"],
                                                                                  "modules_to_save": ["lm_head", "embed_tokens"]}}],
    "hf_tinyllama_cls_b1_t1024_lora_bf16base": ["hf", {"cfg": "tinyllama-1.1b.json", "arch": "cls", "batch": 1, "seq": 1024, "prec": "amp_bf16",
                                                       "base": "bf16", "lora": {"r": 16, "targets": ["q_proj", "v_proj"]}}],
    # 2026-11-26, fourth session: the capped trial one above ResNet-50's measured largest batch
    # (the estimate passes 182, which OOMed: where does the trial run out?), and patch convs in 16
    # bits beside 7x7 stems (op_rules.md CV5: are 3 input channels padded to 8 in every 16-bit engine?)
    "cap16_resnet50_b182_fp32": ["cap", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "fp32", "batch": 182}],
    "tv_resnet18_b32_224_bf16": ["tv", {"model": "resnet18", "batch": 32, "size": 224, "prec": "amp_bf16"}],
    "tv_convnext_tiny_b32_224_bf16": ["tv", {"model": "convnext_tiny", "batch": 32, "size": 224, "prec": "amp_bf16"}],
    # the H200 reentrant record's twin with bf16 weights said (base) and non-reentrant checkpointing,
    # and the reentrant case again, now in fp32 weights (this script's default since): reentrant
    # against non-reentrant on both weight types (tools/real_library_reference.hpp step_of)
    "hf_tinyllama_b4_t2048_bf16w_ckpt": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 2048, "prec": "amp_bf16", "base": "bf16",
                                                "ckpt": True}],
    "hf_tinyllama_b4_t2048_bf16w_ckpt_reentrant": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 2048, "prec": "amp_bf16",
                                                          "base": "bf16", "ckpt": "reentrant"}],
    # 2026-11-27 (run_open_questions.sh 7, prepared after calls 4-6): cuDNN's backward-data layout
    # copies around the size where they start (op_rules.md, after A13: staged at 401,408 B of input,
    # not at 294,912; ResNet-18 b3's layer4 input is 301,056 B), CV6 (c)'s split-K partials of
    # aligned 16-bit convs against K (ResNet-18 bf16 at b16, b64; ResNet-50 bf16: 1x1 and 3x3), and
    # ConvNeXt-T's 16-bit depthwise weight gradients (256 fp32 partial weights at b32: at b16, b64?)
    "tv_resnet18_b2_224_fp32": ["tv", {"model": "resnet18", "batch": 2, "size": 224, "prec": "fp32"}],
    "tv_resnet18_b3_224_fp32": ["tv", {"model": "resnet18", "batch": 3, "size": 224, "prec": "fp32"}],
    "tv_resnet18_b16_224_bf16": ["tv", {"model": "resnet18", "batch": 16, "size": 224, "prec": "amp_bf16"}],
    "tv_resnet18_b64_224_bf16": ["tv", {"model": "resnet18", "batch": 64, "size": 224, "prec": "amp_bf16"}],
    "tv_resnet50_b32_224_bf16": ["tv", {"model": "resnet50", "batch": 32, "size": 224, "prec": "amp_bf16"}],
    "tv_convnext_tiny_b16_224_bf16": ["tv", {"model": "convnext_tiny", "batch": 16, "size": 224, "prec": "amp_bf16"}],
    "tv_convnext_tiny_b64_224_bf16": ["tv", {"model": "convnext_tiny", "batch": 64, "size": 224, "prec": "amp_bf16"}],
    # call 8 (2026-11-27): 16-bit weight gradients' split-K partials at reductions the traces lack (op_rules.md CV6 c)
    "tv_resnet34_b64_224_bf16": ["tv", {"model": "resnet34", "batch": 64, "size": 224, "prec": "amp_bf16"}],
    "tv_resnet18_b128_224_fp16": ["tv", {"model": "resnet18", "batch": 128, "size": 224, "prec": "amp_fp16"}],
    "tv_vgg16_b4_224_bf16": ["tv", {"model": "vgg16", "batch": 4, "size": 224, "prec": "amp_bf16"}],
    # call 9 (2026-11-27): CV6 c's envelope, set from calls 7-8, on 16-bit configurations it was not set on
    "tv_resnet50_b64_224_fp16": ["tv", {"model": "resnet50", "batch": 64, "size": 224, "prec": "amp_fp16"}],
    "tv_wide_resnet50_2_b16_224_bf16": ["tv", {"model": "wide_resnet50_2", "batch": 16, "size": 224, "prec": "amp_bf16"}],
    "tv_resnet152_b32_224_bf16": ["tv", {"model": "resnet152", "batch": 32, "size": 224, "prec": "amp_bf16"}],
    "tv_resnet18_b256_224_bf16": ["tv", {"model": "resnet18", "batch": 256, "size": 224, "prec": "amp_bf16"}],
    "tv_vgg11_bn_b32_224_bf16": ["tv", {"model": "vgg11_bn", "batch": 32, "size": 224, "prec": "amp_bf16"}],
    "maxbatch16_resnet34_224_bf16": ["max", {"kind": "tv", "model": "resnet34", "size": 224, "prec": "amp_bf16", "start": 256}],
    # call 10: the ResNet-34 bf16 trial one batch above the largest that ran (901), which the estimate passes
    "cap16_resnet34_b902_bf16": ["cap", {"kind": "tv", "model": "resnet34", "size": 224, "prec": "amp_bf16", "batch": 902}],
    # call 11 (prepared 2026-11-27): where backward-data starts staging copies at batch 2 (op_rules.md CV4:
    # none at 96², X + Y + W at 224²), and the capped ResNet-34 trial at the batch that ran
    "tv_resnet18_b2_128_fp32": ["tv", {"model": "resnet18", "batch": 2, "size": 128, "prec": "fp32"}],
    "tv_resnet18_b2_160_fp32": ["tv", {"model": "resnet18", "batch": 2, "size": 160, "prec": "fp32"}],
    "cap16_resnet34_b901_bf16": ["cap", {"kind": "tv", "model": "resnet34", "size": 224, "prec": "amp_bf16", "batch": 901}],
    # ... and (added the same day) whether a stride-1 1x1 conv stages X + Y by its channels or by its
    # map (op_rules.md CV4, observed since: every ResNet-50-family layer4 does, 1024<->256 at 14² and
    # EfficientNet's 7² pointwise convs do not): DenseNet-121's 1024->512 transition at 14² and its
    # 7² 1x1s with 128 out; ResNet-50 at 448², whose layer4 (2048<->512) runs on 14² maps
    "tv_densenet121_b32_224_fp32": ["tv", {"model": "densenet121", "batch": 32, "size": 224, "prec": "fp32"}],
    "tv_resnet50_b8_448_fp32": ["tv", {"model": "resnet50", "batch": 8, "size": 448, "prec": "fp32"}],
    # call 12 (prepared 2026-11-27 evening, after call 11): op_rules.md CV4 e (a strided 1x1 in fp32 on a
    # 28² or larger output map takes X + W at 256 input channels, none at 64: ResNet-18 at 448² has
    # 128->256 on 28² and 64->128 on 56²), CV4 d (a 2^19 weight staged on a longer GEMM in fp16 b64:
    # does fp32 b64?), CV6 d (fp16 pads the stem to 4 at K = 200,704, to 8 at 4,608: b2 and b8 at
    # 224² lie between), and two largest batches under 16 GiB no rule was set on
    "tv_resnet18_b8_448_fp32": ["tv", {"model": "resnet18", "batch": 8, "size": 448, "prec": "fp32"}],
    "tv_resnet18_b2_224_fp16": ["tv", {"model": "resnet18", "batch": 2, "size": 224, "prec": "amp_fp16"}],
    "tv_resnet18_b8_224_fp16": ["tv", {"model": "resnet18", "batch": 8, "size": 224, "prec": "amp_fp16"}],
    "maxbatch16_densenet121_224_fp32": ["max", {"kind": "tv", "model": "densenet121", "size": 224, "prec": "fp32", "start": 128}],
    "maxbatch16_wide_resnet50_2_224_bf16": ["max", {"kind": "tv", "model": "wide_resnet50_2", "size": 224, "prec": "amp_bf16", "start": 256}],
    # call 13 (2026-11-27 evening, after call 12): DenseNet-121 fp32's capped trials at the largest batch that
    # ran (120) and one above (121, OOM; the estimate passes it): the third one-above, traced side by side
    "cap16_densenet121_b120_fp32": ["cap", {"kind": "tv", "model": "densenet121", "size": 224, "prec": "fp32", "batch": 120}],
    "cap16_densenet121_b121_fp32": ["cap", {"kind": "tv", "model": "densenet121", "size": 224, "prec": "fp32", "batch": 121}],
    # call 14 (2026-11-27 evening): ResNet-50 fp32's capped trial at the largest batch that ran (181), beside
    # call 6's b182 (OOM; the estimate passes it), as calls 10-11 did for ResNet-34 and 13 for DenseNet-121
    "cap16_resnet50_b181_fp32": ["cap", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "fp32", "batch": 181}],
    # call 15 (2026-11-27 night): the three one-above trials again, each in a fresh process (no batch-1 step
    # first: the job as a user starts it), the cap from the warm trials' non-allocator bytes (804,061,184 B in
    # cap16_densenet121_b121_fp32 and cap16_resnet34_b902_bf16; 806,158,336 B in cap16_resnet50_b182_fp32): does the
    # one-above batch OOM without the measurement's warm-up (op_rules.md A17)?
    "cap16_densenet121_b121_fp32_fresh": ["cap", {"kind": "tv", "model": "densenet121", "size": 224, "prec": "fp32", "batch": 121,
                                                  "fresh": True, "non_allocator": 804061184}],
    "cap16_resnet50_b182_fp32_fresh": ["cap", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "fp32", "batch": 182,
                                               "fresh": True, "non_allocator": 806158336}],
    "cap16_resnet34_b902_bf16_fresh": ["cap", {"kind": "tv", "model": "resnet34", "size": 224, "prec": "amp_bf16", "batch": 902,
                                               "fresh": True, "non_allocator": 804061184}],
    # and largest batches under 16 GiB on models and precisions never searched (estimates recorded before the run)
    "maxbatch16_resnet152_224_bf16": ["max", {"kind": "tv", "model": "resnet152", "size": 224, "prec": "amp_bf16", "start": 128}],
    "maxbatch16_vgg16_224_fp16": ["max", {"kind": "tv", "model": "vgg16", "size": 224, "prec": "amp_fp16", "start": 128}],
    "maxbatch16_convnext_tiny_224_bf16": ["max", {"kind": "tv", "model": "convnext_tiny", "size": 224, "prec": "amp_bf16", "start": 128}],
    "maxbatch16_mobilenet_v3_large_224_bf16": ["max", {"kind": "tv", "model": "mobilenet_v3_large", "size": 224, "prec": "amp_bf16", "start": 256}],
    "maxbatch16_resnet50_224_bf16": ["max", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "amp_bf16", "start": 256}],
    "maxbatch16_vit_b_16_224_bf16": ["max", {"kind": "tv", "model": "vit_b_16", "size": 224, "prec": "amp_bf16", "start": 128}],
    "maxbatch16_resnet18_160_fp16": ["max", {"kind": "tv", "model": "resnet18", "size": 160, "prec": "amp_fp16", "start": 1024}],
    # call 16 (2026-11-27 night, after 15): VGG16 AMP fp16's largest batch ran 304, the estimate 313 (above): its
    # capped trials at 304 (ran) and 305 (OOM), and an uncapped b128 step, traced
    "cap16_vgg16_b304_fp16": ["cap", {"kind": "tv", "model": "vgg16", "size": 224, "prec": "amp_fp16", "batch": 304}],
    "cap16_vgg16_b305_fp16": ["cap", {"kind": "tv", "model": "vgg16", "size": 224, "prec": "amp_fp16", "batch": 305}],
    "tv_vgg16_b128_224_fp16": ["tv", {"model": "vgg16", "batch": 128, "size": 224, "prec": "amp_fp16"}],
    # call 17 (2026-11-28, after 16): the largest batches that ran, each trial 12 steps instead of 3: the
    # allocator model, capped, frees cache and reserves anew step after step (ResNet-34 bf16 b901: its replay
    # OOMs in step 6); does PyTorch's? (op_rules.md A19)
    "cap16_resnet34_b901_bf16_12steps": ["cap", {"kind": "tv", "model": "resnet34", "size": 224, "prec": "amp_bf16", "batch": 901, "steps": 12}],
    "cap16_resnet50_b181_fp32_12steps": ["cap", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "fp32", "batch": 181, "steps": 12}],
    "cap16_densenet121_b120_fp32_12steps": ["cap", {"kind": "tv", "model": "densenet121", "size": 224, "prec": "fp32", "batch": 120, "steps": 12}],
    "cap16_vgg16_b304_fp16_12steps": ["cap", {"kind": "tv", "model": "vgg16", "size": 224, "prec": "amp_fp16", "batch": 304, "steps": 12}],
    "cap16_resnet152_b167_bf16_12steps": ["cap", {"kind": "tv", "model": "resnet152", "size": 224, "prec": "amp_bf16", "batch": 167, "steps": 12}],
    "cap16_convnext_tiny_b254_bf16_12steps": ["cap", {"kind": "tv", "model": "convnext_tiny", "size": 224, "prec": "amp_bf16", "batch": 254, "steps": 12}],
    "cap16_resnet50_b352_bf16_12steps": ["cap", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "amp_bf16", "batch": 352, "steps": 12}],
    "cap16_vit_b_16_b214_bf16_12steps": ["cap", {"kind": "tv", "model": "vit_b_16", "size": 224, "prec": "amp_bf16", "batch": 214, "steps": 12}],
    "cap16_resnet18_b718_fp32_12steps": ["cap", {"kind": "tv", "model": "resnet18", "size": 224, "prec": "fp32", "batch": 718, "steps": 12}],
    # call 18 (2026-11-28, a new session lent the H200): ResNet-50 fp32's largest batch under 16 GiB when each trial
    # trains 12 steps (b181 passed 3 steps and OOMed within 12; the estimate's long-job answer is checked against it)
    "maxbatch16_resnet50_224_fp32_12steps": ["max", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "fp32", "start": 176, "steps": 12}],
    # call 19 (after 18): every other largest-batch case again with 12-step trials, walking down from the 3-step answer
    # (the CLI's default budgets a long job; a 3-step trial is not one, op_rules.md A19)
    "maxbatch16_resnet34_224_bf16_12steps": ["max", {"kind": "tv", "model": "resnet34", "size": 224, "prec": "amp_bf16", "down_from": 901, "steps": 12}],
    "maxbatch16_densenet121_224_fp32_12steps": ["max", {"kind": "tv", "model": "densenet121", "size": 224, "prec": "fp32", "down_from": 120, "steps": 12}],
    "maxbatch16_vgg16_224_fp16_12steps": ["max", {"kind": "tv", "model": "vgg16", "size": 224, "prec": "amp_fp16", "down_from": 304, "steps": 12}],
    "maxbatch16_resnet50_224_bf16_12steps": ["max", {"kind": "tv", "model": "resnet50", "size": 224, "prec": "amp_bf16", "down_from": 352, "steps": 12}],
    "maxbatch16_vit_b_16_224_bf16_12steps": ["max", {"kind": "tv", "model": "vit_b_16", "size": 224, "prec": "amp_bf16", "down_from": 214, "steps": 12}],
    "maxbatch16_convnext_tiny_224_bf16_12steps": ["max", {"kind": "tv", "model": "convnext_tiny", "size": 224, "prec": "amp_bf16", "down_from": 254, "steps": 12}],
    "maxbatch16_resnet152_224_bf16_12steps": ["max", {"kind": "tv", "model": "resnet152", "size": 224, "prec": "amp_bf16", "down_from": 167, "steps": 12}],
    "maxbatch16_wide_resnet50_2_224_bf16_12steps": ["max", {"kind": "tv", "model": "wide_resnet50_2", "size": 224, "prec": "amp_bf16", "down_from": 261, "steps": 12}],
    "maxbatch16_resnet18_224_fp32_12steps": ["max", {"kind": "tv", "model": "resnet18", "size": 224, "prec": "fp32", "down_from": 718, "steps": 12}],
    "maxbatch16_efficientnet_b0_224_fp32_12steps": ["max", {"kind": "tv", "model": "efficientnet_b0", "size": 224, "prec": "fp32", "down_from": 179, "steps": 12}],
    "maxbatch16_mobilenet_v3_large_224_bf16_12steps": ["max", {"kind": "tv", "model": "mobilenet_v3_large", "size": 224, "prec": "amp_bf16", "down_from": 688, "steps": 12}],
    "maxbatch16_resnet101_224_fp16_12steps": ["max", {"kind": "tv", "model": "resnet101", "size": 224, "prec": "amp_fp16", "down_from": 236, "steps": 12}],
    "maxbatch16_vit_b_16_224_fp32_12steps": ["max", {"kind": "tv", "model": "vit_b_16", "size": 224, "prec": "fp32", "down_from": 114, "steps": 12}],
    "maxbatch16_resnet18_160_fp16_12steps": ["max", {"kind": "tv", "model": "resnet18", "size": 160, "prec": "amp_fp16", "down_from": 2498, "steps": 12}],
    # QLoRA as the notebooks run it (op_rules.md L11, L12: bitsandbytes' Linear4bit casting back,
    # prepare_model_for_kbit_training's fp32 modules and checkpointing), and without the preparation
    # call 21 (prepared 2026-11-28, no GPU that session): modules written as users write them, exported
    # (tools/gpubudget-export) and budgeted from the graph (`graph` specs): a U-Net decoder with
    # nn.Upsample / F.interpolate (op_rules.md U1, read from the CUDA source, not yet traced) and an
    # nn.TransformerEncoder with dropout 0.1 (nn.MultiheadAttention with dropout takes SDPA's fused kernels)
    "graph_upsample_unet_256_b32_fp32": ["graph", {"graph": "upsample_unet_256.json", "factory": "tests.export.custom_models:upsample_unet",
                                                   "batch": 32, "prec": "fp32"}],
    "graph_upsample_unet_256_b32_bf16": ["graph", {"graph": "upsample_unet_256.json", "factory": "tests.export.custom_models:upsample_unet",
                                                   "batch": 32, "prec": "amp_bf16"}],
    "graph_encoder_w512_t256_b32_fp32": ["graph", {"graph": "encoder_stack_w512.json", "factory": "tests.export.custom_models:encoder_stack",
                                                   "kwargs": {"width": 512, "heads": 8, "layers": 6}, "batch": 32, "prec": "fp32"}],
    "graph_encoder_w512_t256_b32_bf16": ["graph", {"graph": "encoder_stack_w512.json", "factory": "tests.export.custom_models:encoder_stack",
                                                   "kwargs": {"width": 512, "heads": 8, "layers": 6}, "batch": 32, "prec": "amp_bf16"}],
    # call 24 (prepared 2026-12-06, no GPU that session): the same encoder called with the causal mask and a key
    # padding mask (op_rules.md 2.6 #76: on CUDA an attn_mask rules out flash; cuDNN and efficient keep the
    # merged [B·H, L, L] mask, its 16-bit copy under autocast: read from sdp_utils.cpp, not yet measured)
    "graph_masked_encoder_w512_t256_b32_fp32": ["graph", {"graph": "masked_encoder_w512.json", "factory": "tests.export.custom_models:masked_encoder_stack",
                                                          "kwargs": MASKED_W512, "batch": 32, "prec": "fp32", "padded": 16}],
    "graph_masked_encoder_w512_t256_b32_bf16": ["graph", {"graph": "masked_encoder_w512.json", "factory": "tests.export.custom_models:masked_encoder_stack",
                                                          "kwargs": MASKED_W512, "batch": 32, "prec": "amp_bf16", "padded": 16}],
    "graph_decoder_w512_t256_m256_b32_bf16": ["graph", {"graph": "decoder_stack_w512.json", "factory": "tests.export.custom_models:decoder_stack",
                                                        "kwargs": {"width": 512, "heads": 8, "layers": 6}, "batch": 32, "prec": "amp_bf16"}],
    # call 25 (prepared 2026-12-06, no GPU that session): sequence-first models (op_rules.md 2.6 #79: no in_proj input
    # copy, no out_proj gradient copy; CLIP's permutes: batch_transpose, LayerNorm copying the permuted stream): the
    # nn.Transformer tutorial's language model at d 512 (8 heads, 6 layers, 256 tokens, vocabulary 28,782: the
    # tutorial's WikiText-2), and OpenAI CLIP ViT-B/32's text tower (77 tokens, vocabulary 49,408) in AMP fp16
    "graph_tutorial_lm_w512_t256_b32_bf16": ["graph", {"graph": "tutorial_lm_w512.json", "factory": "tests.export.custom_models:tutorial_transformer_lm",
                                                       "kwargs": TUTORIAL_W512, "batch": 32, "prec": "amp_bf16", "sequence_first": True}],
    "graph_clip_text_b32_t77_b128_fp16": ["graph", {"graph": "clip_text_b32.json", "factory": "tests.export.custom_models:clip_text_tower",
                                                    "kwargs": CLIP_B32_TEXT, "batch": 128, "prec": "amp_fp16"}],
    # call 26 (prepared 2026-12-06, no GPU that session): nn.LSTM / nn.GRU under cuDNN, for a recurrent op the library
    # lacks. On 2.6 CPU they run oneDNN's mkldnn_rnn_layer (MkldnnRnnLayerBackward0), saving per layer and direction
    # the input, the output, h0/c0, hy/cy and a uint8 workspace in 4,096 B pages that is not linear in T (2 x 5 x 32:
    # 40,960 B; T 5 and 7 alike); on CUDA cuDNN's reserve and workspace are unmeasured. Bare layers at sizes that
    # separate T, B, H, layers and directions, and pytorch/examples' word_language_model LSTM / GRU, traced.
    **{"module_lstm_h%d_t%d_b%d_l%d%s_%s" % (h, t, b, layers, "_bi" if bi else "", prec):
       ["module", {"factory": "tests.export.custom_models:bare_rnn", "batch": b, "prec": prec, "dims": [t, 256],
                   "kwargs": {"rnn_type": "LSTM", "hidden": h, "layers": layers, "bidirectional": bi}}]
       for h, t, b, layers, bi, prec in ((512, 64, 32, 1, False, "fp32"), (512, 128, 32, 1, False, "fp32"), (512, 64, 64, 1, False, "fp32"),
                                         (1024, 64, 32, 1, False, "fp32"), (512, 64, 32, 2, False, "fp32"), (512, 64, 32, 1, True, "fp32"),
                                         (512, 64, 32, 1, False, "amp_bf16"), (512, 64, 32, 1, False, "amp_fp16"))},
    "module_gru_h512_t64_b32_l1_fp32": ["module", {"factory": "tests.export.custom_models:bare_rnn", "batch": 32, "prec": "fp32",
                                                   "dims": [64, 256], "kwargs": {"rnn_type": "GRU", "hidden": 512}}],
    "module_word_lm_lstm_h650_t35_b20_fp32": ["module", {"factory": "tests.export.custom_models:word_language_model_rnn", "batch": 20,
                                                          "prec": "fp32", "tokens": [35, 33278], "sequence_first": True,
                                                          "kwargs": {"ntoken": 33278, "ninp": 650, "nhid": 650, "nlayers": 2, "dropout": 0.5}}],
    "module_word_lm_gru_h650_t35_b20_fp32": ["module", {"factory": "tests.export.custom_models:word_language_model_rnn", "batch": 20,
                                                         "prec": "fp32", "tokens": [35, 33278], "sequence_first": True,
                                                         "kwargs": {"rnn_type": "GRU", "ntoken": 33278, "ninp": 650, "nhid": 650,
                                                                    "nlayers": 2, "dropout": 0.5}}],
    # 2026-12-06 (run_open_questions.sh 27): the rules derived on 2.6 CPU that session, on transformers' own
    # models on CUDA: Qwen3's q_norm / k_norm (op_rules.md L16), Phi-3's partial_rotary_factor (L17: does the
    # cat-made q make cuDNN's / flash's output need the transpose copy?), a sliding window through SDPA (L18:
    # Phi-3-mini's 2047 at 4096 tokens, Mistral-7B's 4096 at 4096; the float mask each layer keeps)
    "hf_qwen3_0_6b_b4_t1024_bf16": ["hf", {"cfg": "qwen3-0.6b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16"}],
    "hf_qwen3_0_6b_b4_t1024_lora_bf16base": ["hf", {"cfg": "qwen3-0.6b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16", "base": "bf16",
                                                    "lora": {"r": 16, "targets": "all-linear"}}],
    "hf_phi3_partial_b1_t2048_lora_bf16base_ckpt": ["hf", {"cfg": "phi-3-mini-partial-rotary.json", "batch": 1, "seq": 2048,
                                                           "prec": "amp_bf16", "base": "bf16", "ckpt": True,
                                                           "lora": {"r": 16, "targets": "all-linear"}}],
    "hf_phi3_mini_b1_t4096_lora_bf16base": ["hf", {"cfg": "phi-3-mini-4k-instruct.json", "batch": 1, "seq": 4096, "prec": "amp_bf16",
                                                   "base": "bf16", "lora": {"r": 16, "targets": "all-linear"}}],
    "hf_mistral_7b_b1_t4096_lora_bf16base": ["hf", {"cfg": "mistral-7b-v0.1.json", "batch": 1, "seq": 4096, "prec": "amp_bf16",
                                                    "base": "bf16", "lora": {"r": 16, "targets": "all-linear"}}],
    # 2026-12-06, second stop (run_open_questions.sh 28): Gemma 3 under LoRA (op_rules.md L20: the 512-token
    # window's mask on five of six layers at 1024 tokens, each layer checkpointed) and OLMo 2 (L22: post-norms,
    # q/k norms over the projections), full and LoRA, on transformers' own models
    "hf_gemma3_1b_b2_t1024_lora_bf16base": ["hf", {"cfg": "gemma-3-1b-it.json", "batch": 2, "seq": 1024, "prec": "amp_bf16", "base": "bf16",
                                                   "lora": {"r": 16, "targets": "all-linear"}}],
    "hf_gemma3_1b_b2_t1024_lora_bf16base_ckpt": ["hf", {"cfg": "gemma-3-1b-it.json", "batch": 2, "seq": 1024, "prec": "amp_bf16", "base": "bf16",
                                                        "ckpt": True, "lora": {"r": 16, "targets": "all-linear"}}],
    "hf_olmo2_1b_b4_t1024_bf16": ["hf", {"cfg": "olmo-2-0425-1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16"}],
    "hf_olmo2_1b_b4_t1024_lora_bf16base": ["hf", {"cfg": "olmo-2-0425-1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16", "base": "bf16",
                                                  "lora": {"r": 16, "targets": "all-linear"}}],
    # 2026-12-07 (run_open_questions.sh 29): OLMo 3 (op_rules.md L23: the 4096-token window's mask on three of four
    # layers at 8192 tokens, one RoPE table) under LoRA on a bf16 base, and Granite (L24: the multipliers' tensors,
    # the logits divided), full and LoRA, on transformers' own models
    "hf_olmo3_7b_b1_t8192_lora_bf16base_ckpt": ["hf", {"cfg": "olmo-3-7b-like.json", "batch": 1, "seq": 8192, "prec": "amp_bf16", "base": "bf16",
                                                      "ckpt": True, "lora": {"r": 16, "targets": "all-linear"}}],
    "hf_granite_2b_b4_t1024_bf16": ["hf", {"cfg": "granite-3.1-2b-like.json", "batch": 4, "seq": 1024, "prec": "amp_bf16"}],
    "hf_granite_2b_b4_t1024_lora_bf16base": ["hf", {"cfg": "granite-3.1-2b-like.json", "batch": 4, "seq": 1024, "prec": "amp_bf16", "base": "bf16",
                                                    "lora": {"r": 16, "targets": "all-linear"}}],
    # 2026-12-07, second stop (run_open_questions.sh 30): Gemma 2 (op_rules.md L25: a 4096-token window on every other
    # layer, one RoPE table, the logits soft-capped, with the attention transformers 5 picks when the config names none,
    # recorded as attn_implementation), full at 1024 tokens and under LoRA at 8192 (the window's mask on 13 of 26 layers)
    "hf_gemma2_2b_b2_t1024_bf16": ["hf", {"cfg": "gemma-2-2b-like.json", "batch": 2, "seq": 1024, "prec": "amp_bf16"}],
    "hf_gemma2_2b_b1_t8192_lora_bf16base_ckpt": ["hf", {"cfg": "gemma-2-2b-like.json", "batch": 1, "seq": 8192, "prec": "amp_bf16", "base": "bf16",
                                                       "ckpt": True, "lora": {"r": 16, "targets": "all-linear"}}],
    # ... and with attn_implementation "eager" (op_rules.md L26: every layer's soft-capped scores kept), as the model's
    # training warning recommends
    "hf_gemma2_2b_b1_t2048_lora_bf16base_eager": ["hf", {"cfg": "gemma-2-2b-eager-like.json", "batch": 1, "seq": 2048, "prec": "amp_bf16",
                                                        "base": "bf16", "lora": {"r": 16, "targets": "all-linear"}}],
    # 2026-12-07, third stop (run_open_questions.sh 31): transformers 5's MixtralExperts (op_rules.md L28: 3-D
    # parameters through grouped_mm_experts_forward, in the weights' type whatever autocast says: fp32 expert
    # activations under AMP with fp32 weights, bf16 with bf16 weights) on a small Mixtral from mixtral-8x7b's config
    "hf_mixtral_small_b4_t1024_bf16": ["hf", {"cfg": "mixtral-small-like.json", "batch": 4, "seq": 1024, "prec": "amp_bf16"}],
    "hf_mixtral_small_b4_t1024_bf16weights": ["hf", {"cfg": "mixtral-small-like.json", "batch": 4, "seq": 1024, "prec": "amp_bf16",
                                                     "base": "bf16"}],
    # call 32 (op_rules.md L31): generate() past a sliding window, as transformers 5's DynamicSlidingWindowLayer holds the
    # prompt's copy from the prefill to the first decode step (measured on the CPU: pytorch-2.6-cpu-transformers.json
    # hf_*_gen_b2_p512_n8); Mistral every layer, Gemma 2 every other, Gemma 3 five of six, OLMo 3 three of four
    "hf_mistral_7b_gen_b2_p6144_n64": ["gen", {"cfg": "mistral-7b-v0.1.json", "batch": 2, "prompt": 6144, "new": 64}],
    "hf_gemma2_2b_gen_b4_p6144_n64": ["gen", {"cfg": "gemma-2-2b-like.json", "batch": 4, "prompt": 6144, "new": 64}],
    "hf_gemma3_1b_gen_b4_p4096_n64": ["gen", {"cfg": "gemma-3-1b-it.json", "batch": 4, "prompt": 4096, "new": 64}],
    "hf_olmo3_7b_gen_b1_p6144_n64": ["gen", {"cfg": "olmo-3-7b-like.json", "batch": 1, "prompt": 6144, "new": 64}],
    # call 33 (op_rules.md L32): a padded batch (every layer's SDPA gets a mask; grouped-query k and v repeated to every
    # head; on CUDA the efficient kernel keeps the mask) and generate()'s decode steps (left-padded prompts repeat a
    # layer's K and V at each step); TinyLlama (32 heads, 4 kv heads), twins of the committed unpadded cases
    "hf_tinyllama_b4_t1024_bf16_padded": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16", "padded": True}],
    "hf_tinyllama_gen_b16_p512_n128_padded": ["gen", {"cfg": "tinyllama-1.1b.json", "batch": 16, "prompt": 512, "new": 128, "padded": True}],
    "hf_tinyllama_gen_b16_p64_n1984": ["gen", {"cfg": "tinyllama-1.1b.json", "batch": 16, "prompt": 64, "new": 1984}],
    "hf_tinyllama_gen_b16_p64_n1984_padded": ["gen", {"cfg": "tinyllama-1.1b.json", "batch": 16, "prompt": 64, "new": 1984, "padded": True}],
    # op_rules.md L33: transformers 5's BERT on a padded batch keeps every layer's [B, 1, T, T] mask beside the
    # efficient kernel's tensors; twin of the committed hf_bert_cls_b16_t512_fp16
    "hf_bert_cls_b16_t512_fp16_padded": ["hf", {"cfg": "bert-base-uncased.json", "arch": "cls", "batch": 16, "seq": 512, "prec": "amp_fp16",
                                                 "padded": True}],
    # op_rules.md L34: transformers 5's GPT-2 (one c_attn; its SDPA kernel keeps the DynamicCache's copies of k and v),
    # unpadded and padded
    "hf_gpt2_b8_t512_bf16": ["hf", {"cfg": "gpt2.json", "batch": 8, "seq": 512, "prec": "amp_bf16"}],
    "hf_gpt2_b8_t512_bf16_padded": ["hf", {"cfg": "gpt2.json", "batch": 8, "seq": 512, "prec": "amp_bf16", "padded": True}],
    # call 34 (op_rules.md L37): T5 through SDPA on configurations the rule was not read off, and eager T5 on CUDA
    "hf_t5_small_b8_t512_fp32": ["hf", {"cfg": "t5-small.json", "arch": "s2s", "batch": 8, "seq": 512, "prec": "fp32"}],
    "hf_t5_base_b8_t512_bf16": ["hf", {"cfg": "t5-base.json", "arch": "s2s", "batch": 8, "seq": 512, "prec": "amp_bf16"}],
    "hf_t5_small_b32_t256_bf16": ["hf", {"cfg": "t5-small.json", "arch": "s2s", "batch": 32, "seq": 256, "prec": "amp_bf16"}],
    "hf_t5_small_b16_t512_bf16_eager": ["hf", {"cfg": "t5-small-eager.json", "arch": "s2s", "batch": 16, "seq": 512, "prec": "amp_bf16"}],
    # ... checkpointed (gradient_checkpointing_enable: use_cache off, cross-attention's zeros made to require grad)
    "hf_t5_small_b16_t512_bf16_ckpt": ["hf", {"cfg": "t5-small.json", "arch": "s2s", "batch": 16, "seq": 512, "prec": "amp_bf16", "ckpt": True}],
    # ... and on a padded batch, which the estimator refuses through SDPA (every call's where(attention_mask, bias, min))
    "hf_t5_small_b16_t512_bf16_padded": ["hf", {"cfg": "t5-small.json", "arch": "s2s", "batch": 16, "seq": 512, "prec": "amp_bf16", "padded": True}],
    "maxbatch16_clip_text_b32_t77_fp16": ["max", {"kind": "graph", "graph": "clip_text_b32.json", "factory": "tests.export.custom_models:clip_text_tower",
                                                  "kwargs": CLIP_B32_TEXT, "prec": "amp_fp16", "start": 256}],
    "maxbatch16_masked_encoder_w512_t256_bf16": ["max", {"kind": "graph", "graph": "masked_encoder_w512.json",
                                                         "factory": "tests.export.custom_models:masked_encoder_stack", "kwargs": MASKED_W512,
                                                         "prec": "amp_bf16", "start": 32, "padded": 16}],
    "maxbatch16_upsample_unet_256_fp32": ["max", {"kind": "graph", "graph": "upsample_unet_256.json",
                                                  "factory": "tests.export.custom_models:upsample_unet", "prec": "fp32", "start": 64}],
    "maxbatch16_encoder_w512_t256_bf16": ["max", {"kind": "graph", "graph": "encoder_stack_w512.json", "factory": "tests.export.custom_models:encoder_stack",
                                                  "kwargs": {"width": 512, "heads": 8, "layers": 6}, "prec": "amp_bf16", "start": 64}],
    # nanoGPT's GPT-2 124M as its train.py trains it (logits, loss = model(X, Y); exported with
    # gpubudget-export --targets), bf16 autocast and fp32; Swin-T at 224² (its window attention
    # mapped whole; CUDA rules of layers/swin.hpp not yet traced); their largest batches (call 22)
    "graph_nanogpt124m_b12_t1024_bf16": ["graph", {"graph": "nanogpt_124m.json", "factory": "tests.export.custom_models:nanogpt",
                                                   "kwargs": NANOGPT_124M, "batch": 12, "prec": "amp_bf16"}],
    "graph_nanogpt124m_b4_t1024_fp32": ["graph", {"graph": "nanogpt_124m.json", "factory": "tests.export.custom_models:nanogpt",
                                                  "kwargs": NANOGPT_124M, "batch": 4, "prec": "fp32"}],
    "graph_swin_t_224_b32_fp32": ["graph", {"graph": "swin_t_224.json", "factory": "torchvision.models:swin_t", "batch": 32, "prec": "fp32"}],
    "graph_swin_t_224_b32_bf16": ["graph", {"graph": "swin_t_224.json", "factory": "torchvision.models:swin_t", "batch": 32, "prec": "amp_bf16"}],
    "maxbatch16_nanogpt124m_bf16": ["max", {"kind": "graph", "graph": "nanogpt_124m.json", "factory": "tests.export.custom_models:nanogpt",
                                            "kwargs": NANOGPT_124M, "prec": "amp_bf16", "start": 16}],
    "maxbatch16_swin_t_224_fp32": ["max", {"kind": "graph", "graph": "swin_t_224.json", "factory": "torchvision.models:swin_t",
                                           "prec": "fp32", "start": 64}],
    "hf_tinyllama_b4_t1024_qlora_nf4dq": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16", "quant": "nf4-dq",
                                                 "lora": {"r": 16, "targets": "all-linear"}}],
    "hf_tinyllama_b4_t1024_qlora_nf4dq_kbit": ["hf", {"cfg": "tinyllama-1.1b.json", "batch": 4, "seq": 1024, "prec": "amp_bf16",
                                                      "quant": "nf4-dq", "prepare_kbit": True, "lora": {"r": 16, "targets": "all-linear"}}],
}
ALL_CASES = dict(CASES, **EXTRA_CASES)
# Fields a training case records beyond the H100 file's (check_real_libraries_without_gpu.py):
# trainable_without_grad, the trainable elements whose .grad is None after the first backward.
FIELDS_SINCE_H100 = ("trainable_without_grad", "optimizer_state_allocated")

# The dry run's sizes (--device cpu): the same code at sizes a CPU runs in seconds.
DRY = {"size": 64, "seq": 32, "prompt": 16, "new": 4, "batch": 2, "layers": 2}


# --------------------------------------------------------------------------- the search (no torch)
def walk_down(fits, first, most=8):
    """The largest batch for which fits(batch) is true, by trials first, first - 1, ... (at most
    `most`): where a shorter search already found the answer and a longer trial can only lower it.
    Returns (largest_ok or None, smallest_oom, trials)."""
    trials, smallest_oom = [], None
    for b in range(first, max(0, first - most), -1):
        ok = bool(fits(b))
        trials.append([b, ok])
        if ok:
            return b, smallest_oom, trials
        smallest_oom = b
    return None, smallest_oom, trials


def search_largest(fits, start, limit=1 << 20):
    """The largest batch for which fits(batch) is true, as the measurement searches it: `start`
    doubled until a trial fails (halved while the start fails), then bisection between the last
    success and the first failure. Returns (largest_ok, smallest_oom, trials)."""
    trials = []

    def trial(b):
        ok = bool(fits(b))
        trials.append([b, ok])
        return ok

    b = max(1, int(start))
    if trial(b):
        lo, hi = b, None
        while hi is None:
            b *= 2
            if b > limit:
                return lo, None, trials
            if trial(b):
                lo = b
            else:
                hi = b
    else:
        lo, hi = 0, b
        while lo == 0 and hi > 1:
            b = hi // 2
            if trial(b):
                lo = b
            else:
                hi = b
        if lo == 0:
            return 0, hi, trials
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if trial(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi, trials


# --------------------------------------------------------------------------- device statistics
class Stats:
    """torch.cuda's allocator statistics; on the CPU (dry run) every figure is None."""

    def __init__(self, torch, dev):
        self.torch, self.dev, self.cuda = torch, dev, dev.type == "cuda"

    def _call(self, name, *a):
        return getattr(self.torch.cuda, name)(*a) if self.cuda else None

    def sync(self):
        self._call("synchronize", self.dev)

    def allocated(self):
        return self._call("memory_allocated", self.dev)

    def peak(self):
        return self._call("max_memory_allocated", self.dev)

    def reserved(self):
        return self._call("memory_reserved", self.dev)

    def reserved_peak(self):
        return self._call("max_memory_reserved", self.dev)

    def reset_peak(self):
        self._call("reset_peak_memory_stats", self.dev)

    def empty_cache(self):
        self._call("empty_cache")

    def device_used(self):
        if not self.cuda:
            return None
        free, total = self.torch.cuda.mem_get_info(self.dev)
        return total - free

    def cap(self, fraction):
        """torch.cuda.set_per_process_memory_fraction: the caching allocator refuses beyond it."""
        self._call("set_per_process_memory_fraction", fraction, self.dev)

    def total(self):
        return self.torch.cuda.get_device_properties(self.dev).total_memory if self.cuda else None


def _sub(a, b):
    return None if a is None or b is None else a - b


# --------------------------------------------------------------------------- building the models
def load_config(name):
    with open(os.path.join(CONFIGS, name)) as f:
        return json.load(f)


def hf_model(spec, dev, dry, dtype=None):
    """A transformers model from hf-configs/<cfg> (from_config: random weights), its task the
    spec's arch; PEFT LoRA and gradient checkpointing as the spec says. The weights get their
    dtype (`dtype`, or the spec's base) on the host, before they move to the device, so that no
    fp32 copy passes through the caching allocator."""
    import torch
    import transformers

    d = load_config(spec["cfg"])
    model_type = d.pop("model_type")
    if dry:  # the same architecture at a CPU's size
        for k in ("num_hidden_layers", "num_layers", "num_decoder_layers"):
            if k in d:
                d[k] = DRY["layers"]
    config = transformers.AutoConfig.for_model(model_type, **d)
    arch = spec.get("arch", "causal")
    auto = {"cls": transformers.AutoModelForSequenceClassification, "s2s": transformers.AutoModelForSeq2SeqLM,
            "causal": transformers.AutoModelForCausalLM}[arch]
    if spec.get("quant"):  # QLoRA: bitsandbytes quantizes in from_pretrained only
        return quantized_hf_model(spec, auto, config, dev)
    model = auto.from_config(config)
    # the spec's base, else fp32 as the H100 file's cases ran: the H200 run of
    # hf_tinyllama_b4_t2048_bf16_ckpt_reentrant (no base, this code without the default) kept
    # the config's bfloat16 (its param_bytes: 2 per parameter), which from_config then gave
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[spec.get("base", "fp32")] if dtype is None else dtype
    model.to(dtype)
    if spec.get("ckpt"):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": spec["ckpt"] == "reentrant"})
    if spec.get("lora"):
        import peft

        lora = spec["lora"]
        model = peft.get_peft_model(model, peft.LoraConfig(r=lora["r"], target_modules=lora["targets"], use_dora=bool(lora.get("dora")),
                                                           modules_to_save=lora.get("modules_to_save"),
                                                           task_type={"cls": "SEQ_CLS", "s2s": "SEQ_2_SEQ_LM"}.get(arch, "CAUSAL_LM")))
    model.to(dev).train()
    return model, config


def quantized_hf_model(spec, auto, config, dev):
    """QLoRA as its users run it: the model saved once with random weights in the spec's base dtype
    (bf16 unless said), then from_pretrained with a BitsAndBytesConfig (`quant` nf4 | nf4-dq | fp4 |
    int8; compute dtype = the autocast type), PEFT's prepare_model_for_kbit_training when the spec
    says `prepare_kbit` (its defaults: gradient checkpointing on), then get_peft_model. Needs
    bitsandbytes (an ImportError is the case's error)."""
    import tempfile

    import peft
    import torch
    import transformers

    half = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[spec.get("base", "bf16")]
    compute = torch.float16 if spec["prec"] == "amp_fp16" else torch.bfloat16
    q = spec["quant"]
    if q == "int8":
        bnb = transformers.BitsAndBytesConfig(load_in_8bit=True)
    else:
        bnb = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="fp4" if q == "fp4" else "nf4",
                                              bnb_4bit_use_double_quant=q == "nf4-dq", bnb_4bit_compute_dtype=compute)
    with tempfile.TemporaryDirectory() as d:
        auto.from_config(config).to(half).save_pretrained(d)
        model = auto.from_pretrained(d, quantization_config=bnb, dtype=half, device_map={"": dev.index or 0})
    if spec.get("prepare_kbit"):
        model = peft.prepare_model_for_kbit_training(model)
    lora = spec["lora"]
    model = peft.get_peft_model(model, peft.LoraConfig(r=lora["r"], target_modules=lora["targets"], task_type="CAUSAL_LM"))
    model.train()
    return model, config


def make_job(kind, spec, batch, dev, dry):
    """(model, batch_inputs, loss_fn): loss_fn(model, inputs) -> the step's loss."""
    import torch

    if kind == "graph":
        return graph_job(spec, batch, dev)
    if kind == "module":
        return module_job(spec, batch, dev)
    if kind == "tv":
        import torchvision

        size = DRY["size"] if dry else spec["size"]
        model = getattr(torchvision.models, spec["model"])(weights=None).to(dev).train()
        x = torch.randn(batch, 3, size, size, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)
        ce = torch.nn.CrossEntropyLoss()
        return model, (x, y), lambda m, xy: ce(m(xy[0]), xy[1])
    model, config = hf_model(spec, dev, dry)
    seq = DRY["seq"] if dry else spec["seq"]
    ids = torch.randint(0, config.vocab_size, (batch, seq), device=dev)
    mask = torch.ones_like(ids)
    mask[-1, seq - seq // 4:] = 0  # a collator's padded batch: the last sequence's last quarter padding
    if spec.get("arch") == "cls":
        labels = torch.randint(0, config.num_labels, (batch,), device=dev)
        if spec.get("padded"):
            return model, (ids, mask, labels), lambda m, iml: m(input_ids=iml[0], attention_mask=iml[1], labels=iml[2]).loss
        return model, (ids, labels), lambda m, il: m(input_ids=il[0], labels=il[1]).loss
    if spec.get("padded"):  # labels -100 at the padding
        labels = ids.masked_fill(mask == 0, -100)
        return model, (ids, mask, labels), lambda m, iml: m(input_ids=iml[0], attention_mask=iml[1], labels=iml[2]).loss
    return model, (ids,), lambda m, i: m(input_ids=i[0], labels=i[0]).loss


def graph_job(spec, batch, dev):
    """An exported module (`graph`: a file of tests/export/data, written by tools/gpubudget-export from
    `factory` with `kwargs`): the factory's model on a random input of the graph's per-sample shape,
    the loss (out ** 2).mean() that the graph's budget assumes (loss_kind::mean_square). A token
    model (its graph starts with `tokens`) gets ids below the graph's token embedding's rows; one
    whose graph has its own "loss" (gpubudget-export --targets: nanoGPT) is called as
    model(ids, ids) and its returned loss backpropagated, the logits dropped."""
    import importlib

    import torch

    with open(os.path.join(GRAPHS, spec["graph"])) as f:
        graph = json.load(f)
    first = graph["model"]["parts"][0]
    memory_dims = None
    if first.get("block") == "conditioned":  # forward(x, memory): the conditioning input first, then the model's
        memory_dims, first = first["parts"][0]["dims"], first["parts"][1]["parts"][0]
    module, factory = spec["factory"].split(":")
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    model = getattr(importlib.import_module(module), factory)(**spec.get("kwargs", {})).to(dev).train()
    if first["op"] == "tokens":
        vocab = min(m.num_embeddings for m in model.modules() if isinstance(m, torch.nn.Embedding))
        x = torch.randint(0, vocab, (batch, first["length"]), device=dev)
    else:
        x = torch.randn(batch, *first["dims"], device=dev)
    if spec.get("sequence_first"):  # exported with --sequence-first: the batch second, [L, B, ...]
        x = x.transpose(0, 1).contiguous()
    if graph.get("loss"):
        return model, (x,), lambda m, xs: m(xs[0], xs[0])[1]
    if memory_dims is not None:  # a decoder over a memory (--condition M,D): made with the data, no gradient
        memory = torch.randn(batch, *memory_dims, device=dev)
        return model, (x, memory), lambda m, xs: (m(xs[0], xs[1]) ** 2).mean()
    if spec.get("padded"):  # forward(x, pad): the last `padded` tokens of every other sample padded (--key-padding-mask)
        pad = torch.zeros(batch, x.shape[1], dtype=torch.bool, device=dev)
        pad[::2, x.shape[1] - spec["padded"]:] = True
        return model, (x, pad), lambda m, xs: (m(xs[0], xs[1]) ** 2).mean()
    return model, (x,), lambda m, xs: (m(xs[0]) ** 2).mean()


def module_job(spec, batch, dev):
    """A module the library cannot describe yet (no graph): `factory` with `kwargs` on a random input,
    ids [batch, length] below `vocab` (`tokens`: [length, vocab]) or floats of the per-sample `dims`,
    moved sequence first when `sequence_first`; the loss (out ** 2).mean(). Measured to settle the rules
    an op would need (call 26: nn.LSTM / nn.GRU under cuDNN)."""
    import importlib

    import torch

    module, factory = spec["factory"].split(":")
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    model = getattr(importlib.import_module(module), factory)(**spec.get("kwargs", {})).to(dev).train()
    if "tokens" in spec:
        length, vocab = spec["tokens"]
        x = torch.randint(0, vocab, (batch, length), device=dev)
    else:
        x = torch.randn(batch, *spec["dims"], device=dev)
    if spec.get("sequence_first"):
        x = x.transpose(0, 1).contiguous()
    return model, (x,), lambda m, xs: (m(xs[0]) ** 2).mean()


def autocast_of(prec, dev):
    import contextlib

    import torch

    if prec == "fp32":
        return contextlib.nullcontext
    dtype = torch.float16 if prec == "amp_fp16" else torch.bfloat16
    return lambda: torch.autocast(dev.type, dtype=dtype)


# --------------------------------------------------------------------------- one training run
def train(kind, spec, batch, dev, stats, dry):
    """The 3-step training loop; returns its fields (see the module's docstring)."""
    import torch

    t0 = time.time()
    model, inputs, loss_fn = make_job(kind, spec, batch, dev, dry)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4)  # PyTorch's default implementation (foreach on CUDA)
    scaler = torch.amp.GradScaler(dev.type) if spec["prec"] == "amp_fp16" and dev.type == "cuda" else None
    autocast = autocast_of(spec["prec"], dev)
    out = {}
    steps = spec.get("steps", STEPS)  # a `cap` trial may run longer: does a later step OOM?
    for step in range(1, steps + 1):
        stats.sync()
        stats.reset_peak()
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = loss_fn(model, inputs)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        del loss
        if step == 1:  # trainable elements that got no gradient (reentrant checkpointing's trap)
            out["trainable_without_grad"] = sum(p.numel() for p in params if p.grad is None)
        stats.sync()
        out["alloc_peak_step%d" % step], out["reserved_peak_step%d" % step] = stats.peak(), stats.reserved_peak()
    opt.zero_grad(set_to_none=True)
    gc.collect()
    stats.sync()
    peaks = [out["alloc_peak_step%d" % k] for k in range(1, steps + 1)]
    reserved = [out["reserved_peak_step%d" % k] for k in range(1, steps + 1)]
    res = {k: out[k] for k in ("alloc_peak_step1", "reserved_peak_step1", "alloc_peak_step3", "reserved_peak_step3", "trainable_without_grad")}
    if steps != STEPS:
        res["steps"] = steps
    res["resident"] = stats.allocated()
    # a GradScaler skips optimizer.step() while the scaled gradients overflow (the first steps of a
    # fresh model at the initial scale 65,536): then no optimizer state was ever allocated, and the
    # peaks are not the steady state the estimate budgets (tv_resnet50_b64_224_fp16, call 9)
    res["optimizer_state_allocated"] = bool(opt.state)
    res["alloc_peak"] = None if None in peaks else max(peaks)
    res["reserved_peak"] = None if None in reserved else max(reserved)
    res.update(_counts(model))
    res.update(_device_fields(stats))
    res["seconds"] = round(time.time() - t0, 1)
    return res


def _counts(model):
    ps = list(model.parameters())
    res = {"params": sum(p.numel() for p in ps), "trainable": sum(p.numel() for p in ps if p.requires_grad),
           "param_bytes": sum(p.numel() * p.element_size() for p in ps)}
    # the attention transformers chose where the config named none (Gemma 2's default: op_rules.md L25)
    attn = getattr(getattr(model, "config", None), "_attn_implementation", None)
    if isinstance(attn, str):
        res["attn_implementation"] = attn
    return res


def _device_fields(stats):
    used, reserved = stats.device_used(), stats.reserved()
    return {"device_used": used, "reserved_now": reserved, "non_allocator": _sub(used, reserved)}


def generate(spec, dev, stats, dry):
    """generate() of `new` tokens after a `prompt` for `batch` sequences (no grad)."""
    import torch

    t0 = time.time()
    d = load_config(spec["cfg"])
    dtype = {"float32": torch.float32, "float16": torch.float16}.get(d.get("torch_dtype"), torch.bfloat16)
    model, config = hf_model(dict(spec, arch="causal"), dev, dry, dtype)
    model.eval()
    batch = DRY["batch"] if dry else spec["batch"]
    prompt, new = (DRY["prompt"], DRY["new"]) if dry else (spec["prompt"], spec["new"])
    ids = torch.randint(0, config.vocab_size, (batch, prompt), device=dev)
    mask = torch.ones_like(ids)
    if spec.get("padded"):  # prompts of unequal lengths, left-padded: the last one's first quarter
        mask[-1, :prompt // 4] = 0
        ids[-1, :prompt // 4] = config.pad_token_id if config.pad_token_id is not None else 0
    stats.sync()
    weights = stats.allocated()
    stats.reset_peak()
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new, min_new_tokens=new, do_sample=False,
                             pad_token_id=config.pad_token_id if config.pad_token_id is not None else 0)
    stats.sync()
    res = {"weights": weights, "alloc_peak": stats.peak(), "reserved_peak": stats.reserved_peak(), "out_tokens": int(out.shape[1]),
           "params": _counts(model)["params"]}
    res.update(_device_fields(stats))
    res["seconds"] = round(time.time() - t0, 1)
    return res


def is_oom(e):
    text = str(e)
    return "out of memory" in text or "ALLOC_FAILED" in text or "CUDNN_STATUS_NOT_ENOUGH_WORKSPACE" in text


def largest_batch(spec, dev, stats, cap_gib, dry, cpu_max_batch):
    """The largest batch that trains under a cap_gib device (see the module's docstring)."""
    import torch

    t0 = time.time()
    kind = spec["kind"]
    cap_total = int(cap_gib * GiB)
    if spec.get("fresh") and stats.cuda:
        # a fresh process, as a user's job starts: no batch-1 step first, so cuBLAS's workspaces and
        # cuDNN's first plans come inside the trial; the cap takes the non-allocator bytes the warm
        # trials measured (spec "non_allocator"), and the trial records what this process measured after
        non_allocator = int(spec["non_allocator"])
    else:
        train(kind, spec, 1, dev, stats, dry)  # loads cuBLAS, cuBLASLt and cuDNN as the trials will
        gc.collect()
        stats.empty_cache()
        non_allocator = _sub(stats.device_used(), stats.reserved())
    res = {"cap_total": cap_total, "non_allocator": non_allocator}
    if stats.cuda:
        res["allocator_cap"] = cap_total - non_allocator
        stats.cap(res["allocator_cap"] / stats.total())
    else:
        res["allocator_cap"] = None

    def fits(batch):
        if not stats.cuda and batch > cpu_max_batch:  # the dry run's stand-in for an OOM
            return False
        try:
            train(kind, spec, batch, dev, stats, dry)
            return True
        except torch.cuda.OutOfMemoryError:
            return False
        except RuntimeError as e:  # cuBLAS / cuDNN report a failed workspace allocation their own way
            if is_oom(e):
                return False
            raise
        finally:
            gc.collect()
            stats.empty_cache()

    if "batch" in spec:  # a `cap` case: the one batch, ok or not
        ok = fits(spec["batch"])
        res.update({"batch": spec["batch"], "ok": ok, "seconds": round(time.time() - t0, 1)})
        if spec.get("fresh"):
            res["non_allocator_after"] = _sub(stats.device_used(), stats.reserved())
        return res
    if "down_from" in spec:  # near a known answer: walk down from one above it (the 12-step searches)
        largest, smallest_oom, trials = walk_down(fits, spec["down_from"] + 1)
    else:
        largest, smallest_oom, trials = search_largest(fits, spec.get("start", 1))
    res.update({"largest_ok": largest, "smallest_oom": smallest_oom, "trials": trials,
                "exact": smallest_oom is not None and smallest_oom == largest + 1, "seconds": round(time.time() - t0, 1)})
    return res


def compact_frames(frames):
    """A trace event's stack as the H100 traces keep it: the ATen / autograd / cuDNN / cuBLAS C++
    frames (at most 6) and up to 5 Python lines (file:line function)."""
    cpp, py = [], []
    for f in frames:
        name, fn = f.get("name", ""), f.get("filename", "")
        if fn.endswith(".py"):
            if len(py) < 5:
                py.append("%s:%s %s" % (os.path.basename(fn), f.get("line"), name))
        elif len(cpp) < 6 and (name.startswith(("at::native::", "torch::autograd::", "at::cuda")) or "Backward" in name
                               or "cudnn" in name.lower() or "cublas" in name.lower() or "run_conv_plan" in name):
            cpp.append(name)
    return cpp + py


def trace_context():
    """_record_memory_history's frame settings: GB_TRACE_STACKS=python (Python frames only) or
    GB_TRACE_FRAMES=none (no frames: sizes and order only; the checkpointed temporal CNN's backward
    raised SystemError from run_backward with stacks "all" and "python" on the H200, 2026-11-27)."""
    if os.environ.get("GB_TRACE_FRAMES") == "none":
        return {"context": None}
    return {"stacks": os.environ.get("GB_TRACE_STACKS", "all")}


def write_trace(torch, name, res, trace_dir):
    """The allocator's event history of this process as <trace_dir>/<name>.json.gz, in the format of
    benchmarks/accuracy/reference/cuda-h100/*.json.gz: {"case", "result", "events": [[action, size,
    addr, stream, frames]]}."""
    import gzip

    snap = torch.cuda.memory._snapshot()
    events = [[e["action"], e.get("size", 0), e.get("addr", 0), e.get("stream", 0), compact_frames(e.get("frames", []))]
              for dev_trace in snap.get("device_traces", []) for e in dev_trace]
    os.makedirs(trace_dir, exist_ok=True)
    with gzip.open(os.path.join(trace_dir, name + ".json.gz"), "wt") as f:
        json.dump({"case": name, "result": res, "events": events}, f)


def child(name, device, cap_gib, cpu_max_batch, trace_dir=None):
    """One case in this (fresh) process: its fields as one JSON line on stdout."""
    import torch

    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", 0)
    stats = Stats(torch, dev)
    dry = dev.type != "cuda"
    torch.manual_seed(0)
    kind, spec = ALL_CASES[name]
    tracing = trace_dir and dev.type == "cuda"
    if tracing:
        torch.cuda.memory._record_memory_history(enabled="all", **trace_context(), max_entries=2000000)
    try:
        if kind == "gen":
            res = generate(spec, dev, stats, dry)
        elif kind in ("max", "cap"):
            res = largest_batch(spec, dev, stats, cap_gib, dry, cpu_max_batch)
        else:
            res = train(kind, spec, DRY["batch"] if dry else spec["batch"], dev, stats, dry)
    except Exception as e:  # noqa: BLE001  (recorded in the file, the run goes on)
        res = {"error": "%s: %s" % (type(e).__name__, e), "traceback": traceback.format_exc()[-3000:]}
    if tracing:
        try:
            write_trace(torch, name, res, trace_dir)
        except Exception as e:  # noqa: BLE001  (the measurement stands without its trace)
            res["trace_error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(res), flush=True)


# --------------------------------------------------------------------------- the parent
def run_child(name, args, timeout):
    cmd = [sys.executable, SCRIPT, "--child", name, "--device", args.device, "--cap-gib", str(args.cap_gib),
           "--cpu-max-batch", str(args.cpu_max_batch)] + (["--trace", args.trace] if args.trace else [])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % timeout}
    lines = [ln for ln in p.stdout.strip().splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"error": "child exited %d" % p.returncode, "stderr_tail": p.stderr[-2000:]}
    return json.loads(lines[-1])


def environment(device):
    import torch

    env = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.device(device))
        env.update({"cudnn": torch.backends.cudnn.version(), "gpu": props.name, "total_memory": props.total_memory})
    else:
        env.update({"gpu": None, "total_memory": None, "note": "CPU dry run of measure_real_libraries.py: not a CUDA reference"})
    for mod in ("transformers", "torchvision", "peft"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            env[mod] = None
    # the allocator settings the cases ran with: `gpubudget --reference` estimates with them
    env["PYTORCH_CUDA_ALLOC_CONF"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    return env


def select(args):
    names = list(CASES) + (list(EXTRA_CASES) if args.extra else [])
    if args.cases:
        want = [w for w in args.cases.split(",") if w]
        names = [n for n in names if any(w == n or w in n for w in want)]
    if args.skip:
        names = [n for n in names if not any(w in n for w in args.skip.split(",") if w)]
    return names


def write(path, doc):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu (dry run)")
    ap.add_argument("--out", help="the JSON (default: $OUT/real-libraries.json when $OUT is set, else ./real-libraries.json)")
    ap.add_argument("--cases", help="comma-separated names or substrings (default: all)")
    ap.add_argument("--skip", help="comma-separated substrings to leave out")
    ap.add_argument("--list", action="store_true", help="print the case table and exit (no device needed)")
    ap.add_argument("--cap-gib", type=float, default=16.0, help="the device the maxbatch cases emulate, in GiB (default 16)")
    ap.add_argument("--budget", type=float, default=1e9, help="seconds: start no case after this many (the file keeps what ran)")
    ap.add_argument("--case-timeout", type=int, default=300, help="seconds for one case's process (default 300)")
    ap.add_argument("--resume", help="an earlier (cut-off) output: keep its cases, measure the rest")
    ap.add_argument("--cpu-max-batch", type=int, default=3, help=argparse.SUPPRESS)
    ap.add_argument("--extra", action="store_true", help="also the cases beyond the committed H100 file (EXTRA_CASES)")
    ap.add_argument("--trace", help="a directory: record each case's allocator history there as <case>.json.gz")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.device, args.cap_gib, args.cpu_max_batch, args.trace)
    if args.list:
        for n, (kind, spec) in (ALL_CASES if args.extra else CASES).items():
            print("%-44s %-4s %s" % (n, kind, json.dumps(spec)))
        return 0
    out = args.out or os.path.join(os.environ.get("OUT", "."), "real-libraries.json")
    doc = {"environment": environment(args.device), "cap_gib": args.cap_gib, "cases": {}, "specs": {}}
    if args.resume and os.path.exists(args.resume):
        with open(args.resume) as f:
            old = json.load(f)
        doc["cases"] = {k: v for k, v in old.get("cases", {}).items() if "error" not in v}
        doc["specs"] = {k: old["specs"][k] for k in doc["cases"] if k in old.get("specs", {})}
    t0 = time.time()
    for name in select(args):
        if name in doc["cases"]:
            continue
        if time.time() - t0 > args.budget:
            print("budget reached: %s and later cases not run" % name, flush=True)
            break
        res = run_child(name, args, args.case_timeout)
        doc["cases"][name], doc["specs"][name] = res, ALL_CASES[name]
        write(out, doc)
        brief = {k: res[k] for k in ("alloc_peak", "reserved_peak", "device_used", "largest_ok", "error") if k in res}
        print("%-44s %s" % (name, json.dumps(brief)), flush=True)
    errors = [n for n, r in doc["cases"].items() if "error" in r]
    print("wrote %s: %d cases, %d with an error%s" % (out, len(doc["cases"]), len(errors), (": " + ", ".join(errors)) if errors else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
