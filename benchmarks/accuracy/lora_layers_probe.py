"""Saved bytes of a 4-layer Llama-style decoder (measure26.py's Llama at layers=4, otherwise the
reference case llama2l_b2_t64's sizes) with PEFT's layers_to_transform: LoRA r=8 on q_proj and
v_proj of the listed layers only (lora_llama_probe.py's LoraLinear, every base weight frozen),
batch 2, seq 64, fp32, PyTorch 2.6 CPU, saved_tensors_hooks over the model's forward
(measure.py saved_bytes_of).

    scripts/torch26-env run python3 benchmarks/accuracy/lora_layers_probe.py

Pinned against models::llama_lora's layer runs in tests/unit/test_adapters.cpp.
"""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from lora_llama_probe import lora_model  # noqa: E402
from measure import saved_bytes_of  # noqa: E402
from measure26 import Llama  # noqa: E402


def main():
    print("torch", torch.__version__)
    print("layers_to_transform      trainable  saved_bytes")
    torch.manual_seed(1)
    ids = torch.randint(0, 32000, (2, 64))
    for layers in (None, [0, 1], [2, 3], [3], [0, 3], [1, 2]):
        m = lora_model(functools.partial(Llama, layers=4), ("q", "v"), 8, 0.0, layers)
        trainable = sum(q.numel() for q in m.parameters() if q.requires_grad)
        print("%-24s %9d  %d" % (layers, trainable, saved_bytes_of(m, ids, None)))


if __name__ == "__main__":
    main()
