"""What autograd saves through a LoRA-adapted linear (PEFT's lora.Linear written by hand: peft is
not installed in the PyTorch 2.6 CPU root): base frozen nn.Linear + dropout + A + B, scaled add.

    scripts/torch26-env run python3 benchmarks/accuracy/lora_probe.py

Counts the distinct storages that saved_tensors_hooks sees during the adapted layer's forward
(parameters excluded), in bytes, for fp32 and CPU bf16 autocast, dropout 0 and 0.1, with the
layer input requiring grad (a trainable layer before it) or not. Layer: [B=2, T=16, 64] -> 32,
rank 4 (the case of tests/unit/test_adapters.cpp).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class LoraLinear(nn.Module):
    def __init__(self, d_in, d_out, r, p):
        super().__init__()
        self.base = nn.Linear(d_in, d_out, bias=False)
        self.base.weight.requires_grad_(False)
        self.drop = nn.Dropout(p) if p > 0 else nn.Identity()
        self.A = nn.Linear(d_in, r, bias=False)
        self.B = nn.Linear(r, d_out, bias=False)
        self.scaling = 16 / r

    def forward(self, x):
        result = self.base(x)
        return result + self.B(self.A(self.drop(x))) * self.scaling


def saved_bytes(layer, x, autocast):
    params = {p.untyped_storage().data_ptr() for p in layer.parameters()}
    seen = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params:
            seen[ptr] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            y = layer(x)
    return sum(seen.values()), y


def main():
    print("torch", torch.__version__)
    print("case                          saved_bytes")
    for autocast in (False, True):
        for p in (0.0, 0.1):
            for rank in (0, 4):
                for x_grad in (False, True):
                    layer = LoraLinear(64, 32, rank if rank else 1, p).train()
                    if rank == 0:  # frozen base only
                        layer = layer.base
                    x = torch.randn(2, 16, 64, requires_grad=x_grad)
                    b, _ = saved_bytes(layer, x, autocast)
                    name = f"{'bf16' if autocast else 'fp32'} p={p} r={rank} x_grad={int(x_grad)}"
                    print(f"{name:30s}{b}")


if __name__ == "__main__":
    main()
