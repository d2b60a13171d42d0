"""Saved bytes of transformers' MixtralSparseMoeBlock (written out op for op: transformers is not
installed in the PyTorch 2.6 CPU root) under saved_tensors_hooks, fp32 and CPU bf16 autocast.
The saved total does not depend on how the router splits the tokens (every saved tensor of the
expert loop is linear in an expert's token count), so the random router's split measures what
uniform routing predicts.

    scripts/torch26-env run python3 benchmarks/accuracy/moe_probe.py

Pinned against layers/moe.hpp in tests/unit/test_serving.cpp.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from measure import saved_bytes_of  # noqa: E402


class Expert(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.w1, self.w3 = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False)
        self.w2 = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoe(nn.Module):
    """transformers 4.4x MixtralSparseMoeBlock.forward (no jitter)."""

    def __init__(self, d=64, f=128, experts=4, top_k=2):
        super().__init__()
        self.E, self.k = experts, top_k
        self.gate = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(Expert(d, f) for _ in range(experts))

    def forward(self, hidden_states):
        B, T, D = hidden_states.shape
        hidden_states = hidden_states.view(-1, D)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final = torch.zeros((B * T, D), dtype=hidden_states.dtype, device=hidden_states.device)
        expert_mask = F.one_hot(selected_experts, num_classes=self.E).permute(2, 1, 0)
        for e in range(self.E):
            idx, top_x = torch.where(expert_mask[e])
            current_state = hidden_states[None, top_x].reshape(-1, D)
            current = self.experts[e](current_state) * routing_weights[top_x, idx, None]
            final.index_add_(0, top_x, current.to(hidden_states.dtype))
        return final.reshape(B, T, D)


def main():
    print("torch", torch.__version__)
    print("case                 saved_bytes")
    for top_k in (1, 2):
        for autocast in (None, torch.bfloat16):
            torch.manual_seed(0)
            m = SparseMoe(top_k=top_k).train()
            x = torch.randn(2, 32, 64)
            name = "top%d %s" % (top_k, "bf16" if autocast else "fp32")
            print("%-20s %d" % (name, saved_bytes_of(m, x, autocast)))


if __name__ == "__main__":
    main()
