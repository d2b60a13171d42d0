#!/usr/bin/python3
"""Measures one CPU training step of the custom modules of custom_models.py under PyTorch 2.6, as
benchmarks/accuracy/measure26.py measures its cases (malloc shim, saved_tensors_hooks, a warm-up
step, AdamW for-loop, (out ** 2).mean(), 2 threads), for tests/export's committed comparison:

    scripts/torch26-env run python3 tests/export/measure_custom.py > tests/export/data/custom-pytorch-2.6-cpu.json
    scripts/torch26-env run python3 tests/export/measure_custom.py CASE...   # only these cases
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../benchmarks/accuracy"))
sys.path.insert(0, os.path.join(HERE, "../.."))
import measure  # noqa: E402  (re-executes this script under the malloc shim)

measure.ensure_shim()
import torch  # noqa: E402

from tests.export import custom_models  # noqa: E402

class LoraLinear(torch.nn.Module):
    """PEFT's lora.Linear forward (peft/tuners/lora/layer.py Linear.forward, fp32): result =
    base_layer(x); result = result + lora_B(lora_A(dropout(x))) * scaling; base frozen."""

    def __init__(self, base, r, p):
        super().__init__()
        self.base_layer = base
        self.lora_dropout = torch.nn.Dropout(p) if p > 0 else torch.nn.Identity()
        self.lora_A = torch.nn.Linear(base.in_features, r, bias=False)
        self.lora_B = torch.nn.Linear(r, base.out_features, bias=False)
        self.scaling = 8 / r

    def forward(self, x):
        result = self.base_layer(x)
        return result + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling


class LoraConv(torch.nn.Module):
    """PEFT's lora.Conv2d (peft/tuners/lora/layer.py, _ConvNd.update_layer and forward): lora_A with
    the base's kernel, stride and padding, lora_B 1x1 with the base's groups (huggingface/peft#2403); result = base_layer(x) + lora_B(lora_A(dropout(x))) * scaling."""

    def __init__(self, base, r, p):
        super().__init__()
        self.base_layer = base
        self.lora_dropout = torch.nn.Dropout(p) if p > 0 else torch.nn.Identity()
        self.lora_A = torch.nn.Conv2d(base.in_channels, r, base.kernel_size, base.stride, base.padding, bias=False)
        self.lora_B = torch.nn.Conv2d(r, base.out_channels, (1, 1), (1, 1), groups=base.groups, bias=False)
        self.scaling = 8 / r

    def forward(self, x):
        result = self.base_layer(x)
        return result + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling


class LoraEmbedding(torch.nn.Module):
    """PEFT's lora.Embedding (peft/tuners/lora/layer.py, Embedding.update_layer and forward):
    lora_embedding_A [r, num], lora_embedding_B [dim, r]; result = base_layer(x) +
    (F.embedding(x, A.T) @ B.T) * scaling, no dropout."""

    def __init__(self, base, r):
        super().__init__()
        self.base_layer = base
        self.lora_embedding_A = torch.nn.Parameter(torch.zeros(r, base.num_embeddings))
        self.lora_embedding_B = torch.nn.Parameter(torch.randn(base.embedding_dim, r))
        self.scaling = 8 / r

    def forward(self, x):
        result = self.base_layer(x)
        after_a = torch.nn.functional.embedding(x, self.lora_embedding_A.T)
        return result + (after_a @ self.lora_embedding_B.T) * self.scaling


def wrap(base, r, p):
    if isinstance(base, torch.nn.Linear):
        return LoraLinear(base, r, p)
    if isinstance(base, torch.nn.Embedding):
        return LoraEmbedding(base, r)
    return LoraConv(base, r, p)


def peft_lora(build, targets, r, p):
    """get_peft_model(build(), LoraConfig(r, target_modules=targets, lora_dropout=p)) as PEFT
    does it: every parameter frozen, then each nn.Linear whose module path equals a target or ends
    with "." + target wrapped in LoraLinear (check_target_module_exists' list rule)."""
    def make():
        model = build()
        for q in model.parameters():
            q.requires_grad_(False)
        hits = [name for name, m in model.named_modules()
                if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d, torch.nn.Embedding)) and any(name == t or name.endswith("." + t) for t in targets)]
        if not hits:
            raise SystemExit(f"no module matches {targets}")
        for name in hits:
            parent, _, leaf = name.rpartition(".")
            owner = model.get_submodule(parent) if parent else model
            base = getattr(owner, leaf)
            setattr(owner, leaf, wrap(base, r, p))
        return model
    return make


def resnet18():
    import torchvision
    return torchvision.models.resnet18()


def vit_b_16_96():
    import torchvision
    return torchvision.models.vit_b_16(image_size=96)


TOKENS = (64, 2000)  # token_lm's ids: 64 per sample, in 0..1999

# case, factory, per-sample input shape, batch
CASES = [("bev_unfold_net_b2_64", custom_models.bev_unfold_net, (3, 64, 64), 2),
         ("frame_transformer_b2_64", custom_models.frame_transformer, (3, 64, 64), 2),
         ("sdpa_transformer_b2_64", custom_models.sdpa_transformer, (3, 64, 64), 2),
         ("eager_transformer_b2_64", custom_models.eager_transformer, (3, 64, 64), 2),
         # PEFT-style LoRA by module name (gpubudget --graph FILE --lora r=N,targets=...; models::get_peft_model)
         ("sdpa_transformer_lora_mlp_r4_b2_64", peft_lora(custom_models.sdpa_transformer, ["mlp.0", "mlp.2"], 4, 0.0), (3, 64, 64), 2),
         ("sdpa_transformer_lora_mlp_r4_drop10_b2_64", peft_lora(custom_models.sdpa_transformer, ["mlp.0", "mlp.2"], 4, 0.1), (3, 64, 64), 2),
         ("vit_b_16_lora_mlp_r8_b2_96", peft_lora(vit_b_16_96, ["mlp.0", "mlp.3"], 8, 0.0), (3, 96, 96), 2),
         ("vit_b_16_lora_head_r8_b2_96", peft_lora(vit_b_16_96, ["head"], 8, 0.0), (3, 96, 96), 2),
         ("resnet18_lora_conv2_r8_b2_224", peft_lora(resnet18, ["conv2"], 8, 0.0), (3, 224, 224), 2),
         # PEFT's lora.Conv2d on grouped 3x3 convs (groups 8: lora_B grouped, r a multiple of 8)
         ("grouped_net_b2_64", custom_models.grouped_net, (3, 64, 64), 2),
         ("grouped_net_lora_conv2_r8_b2_64", peft_lora(custom_models.grouped_net, ["conv2"], 8, 0.0), (3, 64, 64), 2),
         ("grouped_net_lora_conv2_r16_b2_64", peft_lora(custom_models.grouped_net, ["conv2"], 16, 0.0), (3, 64, 64), 2),
         # token ids (TOKENS: per-sample length, vocabulary)
         ("token_lm_b2_t64", custom_models.token_lm, TOKENS, 2),
         ("token_lm_lora_embed_r8_b2_t64", peft_lora(custom_models.token_lm, ["embed"], 8, 0.0), TOKENS, 2),
         ("token_lm_lora_embed_mlp_r8_b2_t64", peft_lora(custom_models.token_lm, ["embed", "mlp.0", "mlp.2"], 8, 0.0), TOKENS, 2),
         # PEFT's lora.Linear on an attention's own projections (the exporter names them: parts_named)
         ("sdpa_transformer_lora_qv_r4_b2_64", peft_lora(custom_models.sdpa_transformer, ["query", "value"], 4, 0.0), (3, 64, 64), 2),
         ("sdpa_transformer_lora_attn_r8_drop10_b2_64", peft_lora(custom_models.sdpa_transformer, ["query", "key", "value", "proj"], 8, 0.1), (3, 64, 64), 2),
         ("eager_transformer_lora_qv_r4_b2_64", peft_lora(custom_models.eager_transformer, ["query", "value"], 4, 0.0), (3, 64, 64), 2),
         ("token_lm_lora_qv_r8_b2_t64", peft_lora(custom_models.token_lm, ["attn.query", "attn.value"], 8, 0.0), TOKENS, 2)]


def example_input(shape, batch):
    if shape == TOKENS:
        return torch.randint(0, TOKENS[1], (batch, TOKENS[0]))
    return torch.randn((batch,) + shape)


def main():
    out = {"source": f"PyTorch {torch.__version__} CPU, tests/export/measure_custom.py (measure.py's method)", "cases": []}
    only = set(sys.argv[1:])  # case names: measure only these
    for name, factory, shape, batch in CASES:
        if only and name not in only:
            continue
        torch.manual_seed(0)
        model = factory()
        model.train()
        x = example_input(shape, batch)
        opt = measure.make_optimizer("adamw", list(model.parameters()), "for_loop")
        r = {"case": name, "batch": batch, "input": list(shape), "optimizer": "adamw", "optimizer_impl": "for_loop"}
        r.update(measure.measure_step(model, x, opt, measure.Heap(), saved="hooks_always"))
        out["cases"].append(r)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
