"""Trainable parameters and saved bytes of a 4-layer Qwen2-style decoder (measure26_llm.py's Qwen2
at layers=4: q, k, v with biases, tied head) under PEFT's LoraConfig.bias: LoRA r=8 on q_proj and
v_proj (lora_llama_probe.py's LoraLinear, every base weight frozen), then the biases PEFT's
BaseTuner._mark_only_adapters_as_trainable (peft/tuners/tuners_utils.py) sets trainable: "all",
every parameter whose name ends in ".bias"; "lora_only", the bias of each LoRA layer's base.
Optionally layers_to_transform. Batch 2, seq 64, PyTorch 2.6 CPU, fp32 and autocast bf16,
saved_tensors_hooks over the model's forward (measure.py saved_bytes_of).

    scripts/torch26-env run python3 benchmarks/accuracy/lora_bias_probe.py

Pinned against models::llama_lora with lora_config::bias in tests/unit/test_adapters.cpp.
"""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from lora_llama_probe import LoraLinear, lora_model  # noqa: E402
from measure import saved_bytes_of  # noqa: E402
from measure26_llm import Qwen2  # noqa: E402


def mark_biases(m, bias):
    if bias == "all":
        for n, p in m.named_parameters():
            if n == "bias" or n.endswith(".bias"):
                p.requires_grad_(True)
    elif bias == "lora_only":
        for mod in m.modules():
            if isinstance(mod, LoraLinear) and mod.base.bias is not None:
                mod.base.bias.requires_grad_(True)
    return m


def main():
    print("torch", torch.__version__)
    print("bias       layers_to_transform  autocast  trainable  saved_bytes")
    torch.manual_seed(1)
    ids = torch.randint(0, 32000, (2, 64))
    for bias in ("none", "all", "lora_only"):
        for layers in (None, [2, 3]):
            for autocast in (None, torch.bfloat16):
                m = mark_biases(lora_model(functools.partial(Qwen2, layers=4), ("q", "v"), 8, 0.0, layers), bias)
                trainable = sum(q.numel() for q in m.parameters() if q.requires_grad)
                saved = saved_bytes_of(m, ids, autocast)
                print("%-10s %-20s %-9s %9d  %d" % (bias, layers, "bf16" if autocast else "fp32", trainable, saved))


if __name__ == "__main__":
    main()
