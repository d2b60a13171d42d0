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
import torch.utils.checkpoint  # noqa: E402
import torch.nn.functional as F  # noqa: E402

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


class DoraLinear(LoraLinear):
    """PEFT's lora.Linear with use_dora=True (huggingface/peft 5d602fd, src/peft/tuners/lora/):
    Linear.forward (layer.py) runs the base, then DoraLinearVariant.forward (variants.py), which
    passes the base output as base_result at lora_dropout 0 (the dropped x and base_result=None
    otherwise), then DoraLinearLayer.forward (dora.py) with its get_lora_weight (lora_B(lora_A(eye)).T)
    and get_weight_norm (row norm of W + scaling·lora_weight); the magnitude is update_layer's norm, [out]."""

    def __init__(self, base, r, p):
        super().__init__(base, r, p)
        with torch.no_grad():  # DoraLinearLayer.update_layer: lora_weight = lora_B @ lora_A
            self.magnitude = torch.nn.Parameter(self.get_weight_norm(base.weight, self.lora_B.weight @ self.lora_A.weight))

    def get_lora_weight(self):  # DoraLinearLayer.get_lora_weight
        x_eye = torch.eye(self.lora_A.weight.shape[1], device=self.lora_A.weight.device, dtype=self.lora_A.weight.dtype)
        return self.lora_B(self.lora_A(x_eye)).T

    def get_weight_norm(self, weight, lora_weight):  # DoraLinearLayer.get_weight_norm (fan_in_fan_out=False)
        weight = weight + self.scaling * lora_weight
        return torch.linalg.norm(weight, dim=1).to(weight.dtype)

    def forward(self, x):
        result = self.base_layer(x)  # Linear.forward
        base = self.base_layer
        if isinstance(self.lora_dropout, torch.nn.Identity):  # DoraLinearVariant.forward
            base_result = result
        else:
            x = self.lora_dropout(x)
            base_result = None
        # DoraLinearLayer.forward
        lora_weight = self.get_lora_weight().to(x.dtype)
        magnitude = self.magnitude
        weight = base.weight.to(x.dtype)
        weight_norm = self.get_weight_norm(weight, lora_weight.detach())
        weight_norm = weight_norm.detach()
        mag_norm_scale = (magnitude / weight_norm).view(1, -1)
        lora_result = self.lora_B(self.lora_A(x))
        if base_result is not None:
            bias = base.bias
            if bias is not None:
                base_result = base_result - bias
        else:
            base_result = torch.nn.functional.linear(x, weight)
        result_dora = (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_result * self.scaling
        return result + result_dora  # DoraLinearVariant.forward: result = result + ...


class DoraConv(LoraConv):
    """PEFT's lora.Conv2d with use_dora=True (huggingface/peft 5d602fd, src/peft/tuners/lora/):
    _ConvNd.forward (layer.py) runs the base, then _DoraConvNdVariant.forward (variants.py), which
    passes the base output as base_result at lora_dropout 0 (the dropped x and base_result=None
    otherwise), then _DoraConvNdLayer.forward (dora.py) with its get_lora_weight and
    get_weight_norm; the magnitude is DoraLinearLayer.update_layer's norm, [1, out, 1, 1]."""

    def __init__(self, base, r, p):
        super().__init__(base, r, p)
        with torch.no_grad():  # DoraLinearLayer.update_layer: the norm of W + scaling·lora_weight
            self.magnitude = torch.nn.Parameter(self.get_weight_norm(base.weight, self.get_lora_weight().reshape(base.weight.shape)))

    def get_lora_weight(self):  # _DoraConvNdLayer.get_lora_weight
        r = self.lora_A.weight.shape[0]
        return torch.mm(self.lora_B.weight.view([-1, r]), self.lora_A.weight.view([r, -1]))

    def get_weight_norm(self, weight, lora_weight):  # _DoraConvNdLayer.get_weight_norm
        weight = weight + self.scaling * lora_weight
        dim = tuple(range(1, weight.dim()))
        return weight.norm(p=2, dim=dim, keepdim=True).transpose(1, 0)

    def forward(self, x):
        result = self.base_layer(x)  # _ConvNd.forward
        base = self.base_layer
        if isinstance(self.lora_dropout, torch.nn.Identity):  # _DoraConvNdVariant.forward
            base_result = result
        else:
            x = self.lora_dropout(x)
            base_result = None
        # _DoraConvNdLayer.forward
        weight = base.weight
        lora_weight = self.get_lora_weight().reshape(weight.shape)
        magnitude = self.magnitude
        weight_norm = self.get_weight_norm(weight, lora_weight.detach())
        weight_norm = weight_norm.detach()
        mag_norm_scale = magnitude / weight_norm
        if base_result is None:
            base_result = torch.nn.functional.conv2d(x, weight, bias=None, stride=base.stride, padding=base.padding, dilation=base.dilation,
                                                     groups=base.groups)
        else:
            bias = base.bias
            if bias is not None:
                bias_shape = (1, -1) + (1,) * (base_result.dim() - 2)
                base_result = base_result - bias.view(*bias_shape)
        result_dora = (mag_norm_scale - 1) * base_result + mag_norm_scale * self.lora_B(self.lora_A(x)) * self.scaling
        return result + result_dora  # _DoraConvNdVariant.forward: result = result + ...


class DoraEmbedding(LoraEmbedding):
    """PEFT's lora.Embedding with use_dora=True (huggingface/peft 5d602fd, src/peft/tuners/lora/):
    Embedding.forward (layer.py) runs the base, then DoraEmbeddingVariant.forward (variants.py)
    calls DoraEmbeddingLayer.forward (dora.py; DoraLinearLayer.get_weight_norm with
    fan_in_fan_out=True) and returns mag_norm_scale * result + dora_result; the magnitude is
    DoraLinearLayer.update_layer's norm, one per embedding dimension [dim]."""

    def __init__(self, base, r):
        super().__init__(base, r)
        with torch.no_grad():  # update_layer: lora_weight = lora_B @ lora_A, [dim, num]
            self.magnitude = torch.nn.Parameter(self.get_weight_norm(base.weight, self.lora_embedding_B @ self.lora_embedding_A))

    def get_weight_norm(self, weight, lora_weight):  # DoraLinearLayer.get_weight_norm, fan_in_fan_out=True
        weight = weight.T
        weight = weight + self.scaling * lora_weight
        return torch.linalg.norm(weight, dim=1).to(weight.dtype)

    def forward(self, x):
        result = self.base_layer(x)  # Embedding.forward
        lora_A, lora_B = self.lora_embedding_A.T, self.lora_embedding_B.T  # DoraEmbeddingVariant.forward
        # DoraEmbeddingLayer.forward
        lora_weight = (lora_A @ lora_B).T
        magnitude = self.magnitude
        weight_norm = self.get_weight_norm(self.base_layer.weight, lora_weight.detach())
        weight_norm = weight_norm.detach()
        mag_norm_scale = magnitude / weight_norm
        result_dora = mag_norm_scale * (torch.nn.functional.embedding(x, lora_A) @ lora_B) * self.scaling
        return mag_norm_scale * result + result_dora  # DoraEmbeddingVariant.forward


class OutProjLora(torch.nn.Module):
    """PEFT's lora.Linear around nn.MultiheadAttention.out_proj: never called (the attention's
    forward reads out_proj.weight and .bias, LoraLayer's properties for the base's)."""

    def __init__(self, base, r):
        super().__init__()
        self.base_layer = base
        self.lora_A = torch.nn.Linear(base.in_features, r, bias=False)
        self.lora_B = torch.nn.Linear(r, base.out_features, bias=False)
        self.scaling = 16 / r

    @property
    def weight(self):
        return self.base_layer.weight

    @property
    def bias(self):
        return self.base_layer.bias

    def get_delta_weight(self):
        return (self.lora_B.weight @ self.lora_A.weight) * self.scaling


class LoraMultiheadAttention(torch.nn.Module):
    """PEFT's lora.MultiheadAttention (peft/tuners/lora/layer.py, PEFT 0.15+), its forward with
    merge() and unmerge() written out (safe_merge=False): lora_A [r, E] and lora_B [3E, r] for
    in_proj_weight, out_proj in lora.Linear; the deltas are merged into the weights before the
    attention runs (`del` the parameter, set the merged tensor) and taken out after it (a new
    frozen Parameter of weight - delta); lora.Linear's own merge/unmerge of out_proj add and
    subtract its delta in place on .data. lora_dropout is never applied."""

    def __init__(self, base, r):
        super().__init__()
        self.base_layer = base
        E = base.embed_dim
        self.lora_A = torch.nn.Linear(E, r, bias=False)
        self.lora_B = torch.nn.Linear(r, 3 * E, bias=False)
        self.scaling = 16 / r
        base.out_proj = OutProjLora(base.out_proj, r)

    def get_delta_weight(self):
        return (self.lora_B.weight @ self.lora_A.weight) * self.scaling

    def merge(self):
        base = self.base_layer
        delta_weight = self.get_delta_weight()
        weight_merged = base.in_proj_weight.data.detach() + delta_weight
        del base.in_proj_weight
        base.in_proj_weight = weight_merged
        delta_weight = base.out_proj.get_delta_weight()
        weight_merged = base.out_proj.weight.data.detach() + delta_weight
        del base.out_proj.base_layer.weight
        base.out_proj.base_layer.weight = weight_merged
        base.out_proj.base_layer.weight.data += base.out_proj.get_delta_weight()  # out_proj.merge()

    def unmerge(self):
        base = self.base_layer
        delta_weight = self.get_delta_weight()
        old_weight = base.in_proj_weight.data - delta_weight
        del base.in_proj_weight
        base.register_parameter("in_proj_weight", torch.nn.Parameter(old_weight, requires_grad=False))
        delta_weight = base.out_proj.get_delta_weight()
        old_weight = base.out_proj.base_layer.weight.data - delta_weight
        del base.out_proj.base_layer.weight
        base.out_proj.base_layer.register_parameter("weight", torch.nn.Parameter(old_weight, requires_grad=False))
        base.out_proj.base_layer.weight.data -= base.out_proj.get_delta_weight()  # out_proj.unmerge()

    def forward(self, query, *args, **kwargs):
        try:
            self.merge()
            result = self.base_layer(query, *args, **kwargs)
        finally:
            self.unmerge()
        return result


def wrap(base, r, p, dora=False):
    if isinstance(base, torch.nn.MultiheadAttention):
        return LoraMultiheadAttention(base, r)
    if isinstance(base, torch.nn.Linear):
        return DoraLinear(base, r, p) if dora else LoraLinear(base, r, p)
    if isinstance(base, torch.nn.Embedding):
        return DoraEmbedding(base, r) if dora else LoraEmbedding(base, r)
    if isinstance(base, torch.nn.Conv2d):
        return DoraConv(base, r, p) if dora else LoraConv(base, r, p)
    raise SystemExit(f"no DoRA module here for {type(base).__name__}")


def peft_lora(build, targets, r, p, dora=False):
    """get_peft_model(build(), LoraConfig(r, target_modules=targets, lora_dropout=p, use_dora=dora))
    as PEFT does it: every parameter frozen, then each nn.Linear whose module path equals a target or ends
    with "." + target wrapped in LoraLinear (check_target_module_exists' list rule)."""
    def make():
        model = build()
        for q in model.parameters():
            q.requires_grad_(False)
        hits = [name for name, m in model.named_modules()
                if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d, torch.nn.Embedding, torch.nn.MultiheadAttention))
                and any(name == t or name.endswith("." + t) for t in targets)]
        if not hits:
            raise SystemExit(f"no module matches {targets}")
        for name in hits:
            parent, _, leaf = name.rpartition(".")
            owner = model.get_submodule(parent) if parent else model
            base = getattr(owner, leaf)
            setattr(owner, leaf, wrap(base, r, p, dora))
        return model
    return make


def resnet18():
    import torchvision
    return torchvision.models.resnet18()


def vit_b_16_96():
    import torchvision
    return torchvision.models.vit_b_16(image_size=96)


def video(name):
    """torchvision's video ResNets (r3d_18, mc3_18, r2plus1d_18) on [3, T, H, W] clips."""
    def make():
        import torchvision.models.video
        return getattr(torchvision.models.video, name)()
    return make


def regnet_y_400mf():
    import torchvision
    return torchvision.models.regnet_y_400mf()


def squeezenet1_1():
    import torchvision
    return torchvision.models.squeezenet1_1()


def googlenet():
    import torchvision
    return torchvision.models.googlenet(aux_logits=False, init_weights=False)


def inception_v3():
    import torchvision
    return torchvision.models.inception_v3(aux_logits=False, init_weights=False)


def mnasnet1_0():
    import torchvision
    return torchvision.models.mnasnet1_0()


def shufflenet_v2_x0_5():
    import torchvision
    return torchvision.models.shufflenet_v2_x0_5()


def torchvision_model(name, **kw):
    """torchvision.models.<name>(**kw), built when measured."""
    def make():
        import torchvision
        return getattr(torchvision.models, name)(**kw)
    return make


def shufflenet_v2_x1_0():
    import torchvision
    return torchvision.models.shufflenet_v2_x1_0()


class OwnLoss(torch.nn.Module):
    """A model called as model(ids, targets) that returns (logits, loss), as nanoGPT's train.py
    calls it (`logits, loss = model(X, Y)`, then backward with `logits` still referenced): its
    forward returns the loss, which measure_step squares (a scalar: a few bytes more than the
    model's own step), holding the logits as long as the loss (measure_step releases both before
    step(), as the library's training::output_held). The targets are the ids."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        logits, loss = self.model(ids, ids)
        loss.held_logits = logits
        return loss


class WithTimesteps(torch.nn.Module):
    """A model called as model(x, t): t a batch of integers in 0..steps-1 (a diffusion model's steps, a
    conditional GAN's class labels), made with the data before the step (a plain attribute, not a
    buffer), as a training loop samples it."""

    def __init__(self, model, batch, steps):
        super().__init__()
        self.model = model
        self.t = torch.randint(0, steps, (batch,))

    def forward(self, x):
        return self.model(x, self.t)


class WithTimestepsAndLabels(torch.nn.Module):
    """A model called as model(x, t, y): t a batch of steps in 0..steps-1, y of class labels in
    0..classes-1 (DiT's forward), both made with the data before the step."""

    def __init__(self, model, batch, steps, classes):
        super().__init__()
        self.model = model
        self.t, self.y = torch.randint(0, steps, (batch,)), torch.randint(0, classes, (batch,))

    def forward(self, x):
        return self.model(x, self.t, self.y)


class WithTimestepsAndContext(torch.nn.Module):
    """A model called as model(x, t, context): t a batch of steps, context a batch of the text
    encoder's states (no gradient, as a frozen text encoder gives them), made before the step."""

    def __init__(self, model, batch, steps, context):
        super().__init__()
        self.model = model
        self.t, self.context = torch.randint(0, steps, (batch,)), torch.randn(batch, *context)

    def forward(self, x):
        return self.model(x, self.t, self.context)


class WithSecondImage(torch.nn.Module):
    """A model called as model(x1, x2) on two images (a siamese network): x2 made with the data
    before the step, a plain attribute."""

    def __init__(self, model, batch, shape):
        super().__init__()
        self.model = model
        self.x2 = torch.randn(batch, *shape)

    def forward(self, x):
        return self.model(x, self.x2)


class WithPaddingMask(torch.nn.Module):
    """A model called as model(x, pad): pad a [B, L] bool key padding mask (the last `padded`
    tokens of every other sample True), made with the data before the step, as a padded batch
    comes from its collate function."""

    def __init__(self, model, batch, tokens, padded):
        super().__init__()
        self.model = model
        self.sequence_first = getattr(model, "sequence_first", False)  # the mask [B, L] all the same
        self.pad = torch.zeros(batch, tokens, dtype=torch.bool)
        self.pad[::2, tokens - padded:] = True

    def forward(self, x):
        return self.model(x, self.pad)


def with_padding_mask(build, batch, tokens, padded=4, **kw):
    return lambda: WithPaddingMask(build(padded=True, **kw), batch, tokens, padded)


class WithSource(torch.nn.Module):
    """An encoder-decoder called as model(tgt, src): src a batch of `length` source token ids below
    `vocab`, made with the data before the step (a plain attribute), as a translation batch brings it."""

    def __init__(self, model, batch, length, vocab):
        super().__init__()
        self.model = model
        self.sequence_first = getattr(model, "sequence_first", False)  # [S, B] source ids beside [T, B] target ids
        self.src = torch.randint(0, vocab, (length, batch) if self.sequence_first else (batch, length))

    def forward(self, ids):
        return self.model(ids, self.src)


class WithTranslationMasks(torch.nn.Module):
    """The translation tutorial's training call, model(src, tgt, src_mask, tgt_mask, src_padding_mask,
    tgt_padding_mask, src_padding_mask), its create_mask run with the data before the step: src [S, B]
    ids (every other sample's last `padded` tokens the pad id 1), a bool all-False src_mask [S, S],
    the float causal tgt_mask [T, T] (the tutorial's generate_square_subsequent_mask), the [B, S] and
    [B, T] bool padding masks."""

    def __init__(self, model, batch, tokens, source, vocab, padded=4):
        super().__init__()
        self.model, self.sequence_first = model, True
        self.src = torch.randint(2, vocab, (source, batch))
        self.src[source - padded:, ::2] = 1
        mask = (torch.triu(torch.ones((tokens, tokens))) == 1).transpose(0, 1)
        self.tgt_mask = mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, float(0.0))
        self.src_mask = torch.zeros((source, source)).type(torch.bool)
        self.src_padding_mask = (self.src == 1).transpose(0, 1)

    def forward(self, tgt):
        tgt_padding_mask = (tgt == 1).transpose(0, 1)
        return self.model(self.src, tgt, self.src_mask, self.tgt_mask, self.src_padding_mask, tgt_padding_mask, self.src_padding_mask)


class Variational(torch.nn.Module):
    """A VAE's (recon, mu, logvar) as measure.VaeOutputs: its training loss is the ELBO
    (measure.training_loss), as pytorch/examples' vae/main.py trains it."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return measure.VaeOutputs(self.model(x))


def variational(build, **kw):
    return lambda: Variational(build(**kw))


def own_loss(build, **kw):
    return lambda: OwnLoss(build(**kw))


class Checkpointed(torch.nn.Module):
    """A block under torch.utils.checkpoint (non-reentrant), as forks of nanoGPT's model.py run
    their Blocks for longer contexts (`x = checkpoint(block, x, use_reentrant=False)` in the loop):
    the training a graph of the plain model is budgeted for with --checkpoint-blocks."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False)


class CheckpointedConditioned(torch.nn.Module):
    """A block called as block(x, c) under torch.utils.checkpoint (non-reentrant): DiT's training
    forks' `x = checkpoint(block, x, c, use_reentrant=False)`."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x, c):
        return torch.utils.checkpoint.checkpoint(self.block, x, c, use_reentrant=False)


def checkpointed_dit():
    model = custom_models.dit()
    model.blocks = torch.nn.ModuleList(CheckpointedConditioned(b) for b in model.blocks)
    return WithTimestepsAndLabels(model, 2, 1000, 1000)


def checkpointed_nanogpt(n_layer):
    def make():
        model = custom_models.nanogpt(n_layer=n_layer)
        model.transformer.h = torch.nn.ModuleList(Checkpointed(b) for b in model.transformer.h)
        return OwnLoss(model)
    return make


def saved_without_loss(model, batch):
    """The saved bytes of an OwnLoss model's forward without its loss's (the library's saved bytes
    are the model's; its loss is budgeted after forward): F.cross_entropy run under no_grad."""
    real = F.cross_entropy

    def unsaved(*args, **kwargs):
        with torch.no_grad():
            return real(*args, **kwargs).requires_grad_()
    F.cross_entropy = unsaved
    try:
        return measure.saved_bytes_of(model, batch)
    finally:
        F.cross_entropy = real


TOKENS = (64, 2000)  # token_lm's ids: 64 per sample, in 0..1999
CHARACTERS = (256, 65)  # Karpathy's GPT: a 256-character block of tiny Shakespeare's 65
CONTEXT_77 = (77, 500)  # CLIP's text context: 77 ids per sample, in 0..499

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
         # nn.Upsample and F.interpolate (nearest, bilinear) with skip concatenations
         ("upsample_unet_b2_64", custom_models.upsample_unet, (3, 64, 64), 2),
         # nn.PReLU and nn.PixelShuffle (sub-pixel convolution)
         ("subpixel_net_b2_64", custom_models.subpixel_net, (3, 64, 64), 2),
         # nn.MaxPool1d, nn.AvgPool1d, F.max_pool1d (ceil_mode), nn.AdaptiveAvgPool1d over a waveform
         ("audio_cnn_b2_4000", custom_models.audio_cnn, (1, 4000), 2),
         # nn.Unflatten after a Linear bottleneck, nn.ConvTranspose2d(4, 2, 1), LeakyReLU, ELU, Sigmoid
         ("conv_autoencoder_b2_64", custom_models.conv_autoencoder, (3, 64, 64), 2),
         # nn.MultiheadAttention with need_weights=True (its default; the weights dropped), without and with dropout
         ("token_mixer_b2_t64", custom_models.token_mixer, (64, 32), 2),
         ("token_mixer_drop10_b2_t64", lambda: custom_models.token_mixer(dropout=0.1), (64, 32), 2),
         # nn.Dropout2d (and inplace) and F.dropout1d: one noise value per sample and channel
         ("channel_dropout_net_b2_64", custom_models.channel_dropout_net, (3, 64, 64), 2),
         # reflection, zero and replicate padding, LayerNorm over [C, H, W], F.normalize of a feature
         # map and of an embedding, adaptive max pooling, nn.LogSoftmax (measured 2026-11-29)
         ("metric_embedding_b2_64", custom_models.metric_embedding, (3, 64, 64), 2),
         # F.glu / nn.GLU, 1-D reflection and replication pads, adaptive max pooling, sum(dim),
         # mean(dim, keepdim=True).squeeze(-1), unsqueeze, F.log_softmax
         ("gated_tcn_b2_2000", custom_models.gated_tcn, (16, 2000), 2),
         # Kim's text CNN: Conv1d on the transposed embedding (op_rules.md 2.6 #56, #57), max over time, cat
         ("text_cnn_b2_t64", custom_models.text_cnn, TOKENS, 2),
         # vit-pytorch's attention: one packed Linear chunked into q, k, v; torch.einsum (and @, SDPA)
         # products; q, k, v Linears without a bias beside an output Linear with one (measured 2026-11-29)
         ("einsum_transformer_b2_128", custom_models.einsum_transformer, (128, 64), 2),
         ("einsum_transformer_matmul_b2_128", lambda: custom_models.einsum_transformer("matmul"), (128, 64), 2),
         ("einsum_transformer_sdpa_b2_128", lambda: custom_models.einsum_transformer("sdpa"), (128, 64), 2),
         ("einsum_transformer_unbiased_qkv_b2_128", lambda: custom_models.einsum_transformer("unbiased_qkv"), (128, 64), 2),
         # kuangliu/pytorch-cifar's ResNet18 (F.relu, `out += shortcut(x)`, F.avg_pool2d, view), an
         # MLP-Mixer, an encoder classifier (norm_first, a position parameter, h[:, 0]), a 1-D keyword spotter
         ("cifar_resnet18_b2_32", custom_models.cifar_resnet18, (3, 32, 32), 2),
         ("mlp_mixer_b2_32", custom_models.mlp_mixer, (3, 32, 32), 2),
         ("sequence_classifier_b2_t64", custom_models.sequence_classifier, TOKENS, 2),
         # the same on padded batches (src_key_padding_mask, 2026-12-06): a BERT-style classifier's call
         ("sequence_classifier_padded_b2_t64", with_padding_mask(custom_models.sequence_classifier, 2, 64, 8), TOKENS, 2),
         # the mask made in forward from the ids (pad = ids == 0; random ids below the vocabulary, some 0)
         ("sequence_classifier_pad_id_b2_t64", lambda: custom_models.sequence_classifier(pad_id=0), TOKENS, 2),
         ("keyword_spotter_b2_100", custom_models.keyword_spotter, (40, 100), 2),
         # milesial/Pytorch-UNet: F.pad by amounts computed from sizes (0 at 64²: a copy), both up paths;
         # the PyTorch examples' DCGAN generator and discriminator (measured 2026-11-29)
         ("milesial_unet_b2_64", custom_models.milesial_unet, (3, 64, 64), 2),
         ("milesial_unet_bilinear_b2_64", lambda: custom_models.milesial_unet(True), (3, 64, 64), 2),
         ("dcgan_generator_b2", custom_models.dcgan_generator, (100, 1, 1), 2),
         ("dcgan_discriminator_b2_64", custom_models.dcgan_discriminator, (3, 64, 64), 2),
         # Karpathy's "Let's build GPT" at the lecture's size: per-head modules, masked_fill causal masks,
         # torch.cat of the heads (read through torch.export: attention_impl::per_head), dropout 0.2
         ("karpathy_gpt_b2_t256", custom_models.karpathy_gpt, CHARACTERS, 2),
         # None-indexing (w[:, :, None, None]) and a per-sample scalar output (.squeeze(-1)): views
         ("indexed_se_net_b2_64", custom_models.indexed_se_net, (3, 64, 64), 2),
         ("residual_regressor_b2_512", custom_models.residual_regressor, (512,), 2),
         # facebookresearch/ConvNeXt's Block and its channels_first LayerNorm written out (measured 2026-11-29)
         ("official_convnext_b2_64", custom_models.official_convnext, (3, 64, 64), 2),
         # locuslab/TCN's Chomp1d (x[:, :, :-k].contiguous(): narrow), PointNet's classifier (measured 2026-11-29)
         ("tcn_b2_2000", custom_models.tcn, (8, 2000), 2),
         ("pointnet_b2_1024", custom_models.pointnet, (3, 1024), 2),
         # the same TCN with the repository's weight_norm (op_rules.md 2.6 #61), and a HiFi-GAN-style
         # generator of weight-normed transposed and dilated convolutions
         ("tcn_weight_norm_b2_2000", lambda: custom_models.tcn(weight_norm=True), (8, 2000), 2),
         ("tcn_weight_norm_parametrization_b2_2000", lambda: custom_models.tcn(weight_norm="parametrization"), (8, 2000), 2),
         ("hifigan_generator_b2_64", custom_models.hifigan_generator, (80, 64), 2),
         # minGPT's NewGELU and Llama's RMSNorm written out (torch.pow, torch.rsqrt, torch.tanh; op_rules.md 2.6 #62)
         ("hand_written_mlp_b2_128", custom_models.hand_written_mlp, (128, 64), 2),
         ("difference_cnn_b2_64", custom_models.difference_cnn, (3, 64, 64), 2),
         # tensors on both sides of -, / and torch.maximum (op_rules.md 2.6 #63): the annotated
         # transformer's LayerNorm (x.std, broadcast - and /, (C,) gain and bias), the style-transfer
         # tutorial's input normalization (plain tensor attributes), maxout, a softmax written out
         # (measured 2026-12-06)
         ("annotated_ff_stack_b2_128", custom_models.annotated_ff_stack, (128, 256), 2),
         ("normalized_cnn_b2_64", custom_models.normalized_cnn, (3, 64, 64), 2),
         ("maxout_mlp_b2", custom_models.maxout_mlp, (1, 28, 28), 2),
         ("written_softmax_mlp_b2_128", custom_models.written_softmax_mlp, (128, 64), 2),
         # the annotated transformer's MultiHeadedAttention with its `self.attn = p_attn` deleted, two layers
         ("annotated_attention_b2_128", lambda: custom_models.annotated_attention_layer(False, 128, 2), (128, 128), 2),
         # timm's DropPath as written (new_empty(...).bernoulli_(keep).div_(keep)), and its older form
         ("drop_path_mlp_b2_128", custom_models.drop_path_mlp, (128, 128), 2),
         ("old_drop_path_cnn_b2_64", custom_models.old_drop_path_cnn, (3, 64, 64), 2),
         # one convolution called eight times (DRCN's recursion): weights shared, activations per call
         ("recursive_conv_net_b2_64", custom_models.recursive_conv_net, (1, 64, 64), 2),
         # the PyTorch tutorial's spatial transformer network (F.affine_grid, F.grid_sample) on MNIST's 28²
         ("spatial_transformer_net_b2_28", custom_models.spatial_transformer_net, (1, 28, 28), 2),
         # SKNet's SKConv (nn.Softmax(dim=1) over its branches), branches averaged through torch.stack
         ("sk_net_b2_64", custom_models.sk_net, (3, 64, 64), 2),
         # auxiliary outputs, each trained with its own loss (measure.training_loss: + 0.4 x each):
         # torchvision's GoogLeNet and Inception-v3 in train(), FCN with aux_loss=True (its aux head
         # after the main one), a side classifier (deep supervision)
         ("googlenet_aux_b2_128", custom_models.googlenet_aux, (3, 128, 128), 2),
         ("inception_v3_aux_b2_299", custom_models.inception_v3_aux, (3, 299, 299), 2),
         ("fcn_resnet50_aux_b2_64", custom_models.fcn_resnet50_aux, (3, 64, 64), 2),
         ("fcn_resnet50_b2_64", lambda: custom_models.fcn_resnet50_aux(False), (3, 64, 64), 2),
         ("deeplabv3_mobilenet_aux_b2_64", custom_models.deeplabv3_mobilenet_aux, (3, 64, 64), 2),
         ("side_head_net_b2_64", custom_models.side_head_net, (3, 64, 64), 2),
         # a conditioning input: the "diffusion models from scratch" SimpleUnet, forward(x, t)
         ("simple_unet_b2_32", lambda: WithTimesteps(custom_models.simple_unet(), 2, 300), (3, 32, 32), 2),
         ("simple_unet_b2_64", lambda: WithTimesteps(custom_models.simple_unet(), 2, 300), (3, 64, 64), 2),
         # labml.ai's DDPM U-Net blocks (Swish written out, GroupNorm, the time embedding added in place);
         # PyTorch-GAN's conditional generator, forward(noise, labels) (labels through an nn.Embedding)
         ("labml_unet_b2_32", lambda: WithTimesteps(custom_models.labml_unet(), 2, 1000), (3, 32, 32), 2),
         ("cgan_generator_b2", lambda: WithTimesteps(custom_models.cgan_generator(), 2, 10), (100,), 2),
         ("cgan_discriminator_b2", lambda: WithTimesteps(custom_models.cgan_discriminator(), 2, 10), (1, 32, 32), 2),
         # pytorch/examples' siamese network: one ResNet-18 trunk on two images, forward(input1, input2)
         ("siamese_network_b2_28", lambda: WithSecondImage(custom_models.siamese_network(), 2, (1, 28, 28)), (1, 28, 28), 2),
         ("siamese_network_b2_64", lambda: WithSecondImage(custom_models.siamese_network(), 2, (1, 64, 64)), (1, 64, 64), 2),
         ("side_head_last_net_b2_64", lambda: custom_models.side_head_net(True), (3, 64, 64), 2),
         # facebookresearch/DiT (adaLN-Zero: each block's adaLN_modulation(c) chunked into shift, scale
         # and gate), DiT-S/2 on a 32x32x4 latent, forward(x, t) and forward(x, t, y)
         ("dit_s2_t_b2_32", lambda: WithTimesteps(custom_models.dit(with_labels=False), 2, 1000), (4, 32, 32), 2),
         ("dit_s2_b2_32", lambda: WithTimestepsAndLabels(custom_models.dit(), 2, 1000, 1000), (4, 32, 32), 2),
         # torchvision's Swin V2-T: ShiftedWindowAttentionV2 and PatchMergingV2 mapped whole; 96² held out
         ("swin_v2_t_b2_64", custom_models.swin_v2_t, (3, 64, 64), 2),
         ("swin_v2_t_b2_96", custom_models.swin_v2_t, (3, 96, 96), 2),
         # Stable Diffusion's BasicTransformerBlocks (diffusers' AttnProcessor2_0), cross-attention to CLIP's
         # [77, 768] text states: forward(hidden_states, encoder_hidden_states); 2 blocks on 256 tokens of 320, and
         # held out 3 blocks of 640 on 64 tokens
         ("sd_transformer_b2_256", lambda: WithSecondImage(custom_models.sd_transformer(), 2, (77, 768)), (256, 320), 2),
         ("sd_transformer_640_b2_64", lambda: WithSecondImage(custom_models.sd_transformer(640, 10, 3), 2, (77, 768)), (64, 640), 2),
         # a two-level Stable Diffusion UNet (diffusers' parts): forward(sample, timestep, encoder_hidden_states)
         ("sd_unet_b2_32", lambda: WithTimestepsAndContext(custom_models.sd_unet(), 2, 1000, (77, 768)), (4, 32, 32), 2),
         ("sd_unet_96_b2_24", lambda: WithTimestepsAndContext(custom_models.sd_unet(96, 192, 8), 2, 1000, (77, 768)), (4, 24, 24), 2),
         # Stable Diffusion 1.x's whole UNet topology (4 levels, 2 layers each, 12 skips, 1x1-conv projections) at
         # widths 32-64 (the 859,520,964-parameter model at 320-1280)
         ("sd15_unet_narrow_b2_32", lambda: WithTimestepsAndContext(custom_models.sd15_unet((32, 64, 64, 64)), 2, 1000, (77, 768)), (4, 32, 32), 2),
         # torchvision's S3D (3-D pools whose window over time differs), 16 frames at 224²
         ("s3d_b2_16x224", custom_models.s3d, (3, 16, 224, 224), 2),
         # torchvision's Video Swin (swin3d_t): 8 frames at 64² (the window shrinks to 4 frames, unshifted in time),
         # held out 32 frames (16 after the patch embedding: windows of 8 frames shifted by 4)
         ("swin3d_t_b2_8x64", custom_models.swin3d_t, (3, 8, 64, 64), 2),
         ("swin3d_t_b2_32x64", custom_models.swin3d_t, (3, 32, 64, 64), 2),
         # VAEs trained on their ELBO (measure.VaeOutputs): pytorch/examples' MLP VAE on MNIST, at b2 and b64,
         # and AntixK's VanillaVAE-style conv VAE (eps * std + mu) at 64x64 (measured 2026-12-06)
         ("vae_b2", variational(custom_models.vae), (1, 28, 28), 2),
         ("vae_b64", variational(custom_models.vae), (1, 28, 28), 64),
         ("conv_vae_b2_64", variational(custom_models.conv_vae), (3, 64, 64), 2),
         # held out: four stages (32-256) on 32x32 RGB, latent 64
         ("conv_vae_small_b2_32", variational(custom_models.conv_vae, latent=64, hidden=(32, 64, 128, 256)), (3, 32, 32), 2),
         # each block under torch.utils.checkpoint (--checkpoint-blocks on dit_s2's graph)
         ("dit_s2_ckpt_b2_32", checkpointed_dit, (4, 32, 32), 2),
         # held out: DiT-B/2's width (768, 12 heads) on a 64x64x4 latent (1,024 tokens)
         # openai/guided-diffusion's ResBlocks with use_scale_shift_norm (scale, shift = chunk(emb_out, 2, dim=1) on
         # [2C, 1, 1]) and without (h + emb_out), GroupNorm32, forward(x, t) and, class-conditional, forward(x, t, y);
         # one ResBlock whose 1x1 skip conv runs after its body (`self.skip_connection(x) + h`)
         ("guided_diffusion_unet_b2_32", lambda: WithTimesteps(custom_models.guided_diffusion_unet(), 2, 1000), (3, 32, 32), 2),
         ("guided_diffusion_unet_plain_b2_32", lambda: WithTimesteps(custom_models.guided_diffusion_unet(scale_shift=False), 2, 1000), (3, 32, 32), 2),
         ("guided_diffusion_resblock_b2_32", lambda: WithTimesteps(custom_models.guided_diffusion_resblock(), 2, 1000), (192, 32, 32), 2),
         ("guided_diffusion_unet_y_b2_64", lambda: WithTimestepsAndLabels(custom_models.guided_diffusion_unet(96, 10), 2, 1000, 10), (3, 64, 64), 2),
         ("dit_b2_b2_64", lambda: WithTimestepsAndLabels(custom_models.dit(hidden_size=768, num_heads=12, input_size=64), 2, 1000, 1000), (4, 64, 64), 2),
         ("stacked_branches_net_b2_64", custom_models.stacked_branches_net, (3, 64, 64), 2),
         # held out: an instance norm written out (x.var over H, W) after a registered-buffer normalization
         ("written_instance_norm_cnn_b2_64", custom_models.written_instance_norm_cnn, (3, 64, 64), 2),
         # torch.bmm / torch.matmul of two activations: SAGAN's self-attention (with its scalar gamma),
         # the non-local block (`*x.size()[2:]`: traced with the example's sizes), bilinear pooling
         # (measured 2026-11-29)
         ("sagan_discriminator_b2_64", custom_models.sagan_discriminator, (3, 64, 64), 2),
         ("nonlocal_net_b2_28", custom_models.nonlocal_net, (1, 28, 28), 2),
         ("bilinear_cnn_b2_32", custom_models.bilinear_cnn, (3, 32, 32), 2),
         ("pair_scores_b2_512", custom_models.pair_scores, (512, 16), 2),
         # held out (no rule was set on them): BigGAN's Attention (a 0-d gamma, max-pooled phi and g), a
         # U-Net whose up step resizes when the skip's size differs (62²: 15 -> 30 -> 31, `if` on sizes)
         ("biggan_discriminator_b2_32", custom_models.biggan_discriminator, (3, 32, 32), 2),
         ("size_checked_unet_b2_62", custom_models.size_checked_unet, (3, 62, 62), 2),
         # torchvision's video ResNets on 8-frame 64² clips: Conv3d with T's own kernel, stride and
         # padding ((3, 7, 7) / (1, 2, 2) stems, R(2+1)D's (1, 3, 3) and (3, 1, 1)), Conv3DSimple and
         # friends (nn.Conv3d subclasses), BatchNorm3d, AdaptiveAvgPool3d(1) (measured 2026-11-29)
         ("r3d_18_b2_8x64", video("r3d_18"), (3, 8, 64, 64), 2),
         ("mc3_18_b2_8x64", video("mc3_18"), (3, 8, 64, 64), 2),
         ("r2plus1d_18_b2_8x64", video("r2plus1d_18"), (3, 8, 64, 64), 2),
         # hand-written squeeze-excitation and CBAM spatial gates (broadcast products, torch.max over
         # the channels), padding="same", in-place LeakyReLU and ELU (measured 2026-11-29)
         ("attention_cnn_b2_64", custom_models.attention_cnn, (3, 64, 64), 2),
         # nn.MaxPool3d, nn.ConvTranspose3d, BatchNorm3d on a 16x64x64 volume
         ("unet3d_b2_16x64", custom_models.unet3d, (1, 16, 64, 64), 2),
         # nn.Upsample(mode="trilinear") + a 1x1x1 Conv3d as the up path (measured 2026-11-29)
         ("unet3d_trilinear_b2_16x64", custom_models.unet3d_trilinear, (1, 16, 64, 64), 2),
         # held out from op_rules 2.6 #52's probe: 12 channels (padded to 16), another volume
         ("unet3d_c12_b2_24x48", lambda: custom_models.unet3d(12), (1, 24, 48, 48), 2),
         # the Kinetics clip size (16 x 112²): layer4 at T = 2 takes #51's gemm weight gradient
         ("r3d_18_b2_16x112", video("r3d_18"), (3, 16, 112, 112), 2),
         # a ViT as timm writes it: PatchEmbed's flatten(2).transpose(1, 2), class token and position
         # parameters, one packed qkv Linear split by reshape/permute/unbind into SDPA (measured 2026-11-29)
         ("timm_style_vit_b2_64", custom_models.timm_style_vit, (3, 64, 64), 2),
         # a hand-written ViT around nn.TransformerEncoder; ConvMixer; pix2pix's PatchGAN (2026-11-29)
         ("hand_vit_b2_64", custom_models.hand_vit, (3, 64, 64), 2),
         ("conv_mixer_b2_64", custom_models.conv_mixer, (3, 64, 64), 2),
         ("patchgan_b2_128", custom_models.patchgan, (3, 128, 128), 2),
         # nn.ConvTranspose1d, strided Conv1d, nn.AvgPool1d on 8,000 samples
         ("wave_autoencoder_b2_8000", custom_models.wave_autoencoder, (1, 8000), 2),
         # nn.TransformerEncoder: post-norm ReLU, and pre-norm GELU with a final norm
         ("encoder_stack_b2_t32", custom_models.encoder_stack, (32, 16), 2),
         ("encoder_stack_prenorm_b2_t32", lambda: custom_models.encoder_stack(norm_first=True), (32, 16), 2),
         # nn.TransformerEncoder with masks (2026-12-06): a causal mask made in forward, a key padding mask, both;
         # attention dropout 0.1 (2.6 CPU: SDPA's math path) and 0 (its flash kernel)
         ("masked_encoder_causal_b2_t32", lambda: custom_models.masked_encoder_stack(causal=True), (32, 16), 2),
         ("masked_encoder_causal_nodrop_b2_t32", lambda: custom_models.masked_encoder_stack(causal=True, dropout=0.0), (32, 16), 2),
         ("masked_encoder_padded_b2_t32", with_padding_mask(custom_models.masked_encoder_stack, 2, 32), (32, 16), 2),
         ("masked_encoder_padded_nodrop_b2_t32", with_padding_mask(custom_models.masked_encoder_stack, 2, 32, dropout=0.0), (32, 16), 2),
         ("masked_encoder_both_b2_t32", with_padding_mask(custom_models.masked_encoder_stack, 2, 32, causal=True), (32, 16), 2),
         ("masked_encoder_both_nodrop_b2_t32", with_padding_mask(custom_models.masked_encoder_stack, 2, 32, causal=True, dropout=0.0), (32, 16), 2),
         ("masked_encoder_nodrop_b2_t32", lambda: custom_models.masked_encoder_stack(dropout=0.0), (32, 16), 2),
         # hand-written SDPA attention with is_causal=True (separate_qkv_sdpa, causal_mask): the flash kernel, and
         # the math path with dropout_p 0.1 (the causal mask added to the scores)
         ("sdpa_transformer_causal_b2_64", lambda: custom_models.sdpa_transformer(causal=True), (3, 64, 64), 2),
         ("sdpa_transformer_causal_drop10_b2_64", lambda: custom_models.sdpa_transformer(causal=True, dropout=0.1), (3, 64, 64), 2),
         ("sdpa_transformer_drop10_b2_64", lambda: custom_models.sdpa_transformer(dropout=0.1), (3, 64, 64), 2),
         # nn.MultiheadAttention called with masks (need_weights=False): held out
         ("masked_mha_both_b4_t64", with_padding_mask(custom_models.masked_attention_net, 4, 64, 8, causal=True), (64, 16), 4),
         ("masked_mha_causal_drop10_b4_t64", lambda: custom_models.masked_attention_net(dropout=0.1), (64, 16), 4),
         ("masked_mha_none_b4_t64", lambda: custom_models.masked_attention_net(causal=False), (64, 16), 4),
         # open_clip's text tower's way (held out): a causal float buffer as attn_mask without is_causal (square_mask)
         ("masked_mha_buffer_b4_t64", lambda: custom_models.masked_attention_net(buffer_tokens=64), (64, 16), 4),
         # sequence first (2026-12-06): PyTorch's nn.Transformer language-model tutorial on [L, B] ids
         # (nn.TransformerEncoderLayer's default batch_first=False), and its batch-first twin; OpenAI
         # CLIP's text tower (permute(1, 0, 2) around sequence-first nn.MultiheadAttention blocks)
         ("tutorial_lm_b2_t64", custom_models.tutorial_transformer_lm, TOKENS, 2),
         ("tutorial_lm_batch_first_b2_t64", lambda: custom_models.tutorial_transformer_lm(batch_first=True), TOKENS, 2),
         ("tutorial_lm_nodrop_b2_t64", lambda: custom_models.tutorial_transformer_lm(dropout=0.0), TOKENS, 2),
         ("tutorial_lm_batch_first_nodrop_b2_t64", lambda: custom_models.tutorial_transformer_lm(batch_first=True, dropout=0.0), TOKENS, 2),
         ("clip_text_b2_t64", custom_models.clip_text_tower, TOKENS, 2),
         # pytorch/examples' word_language_model TransformerModel as written (its mask log(tril(ones)) cached on self)
         ("word_language_model_b2_t64", custom_models.word_language_model, TOKENS, 2),
         # nn.MultiheadAttention(batch_first=False) called directly on [L, B, 16] (no mask; the causal mask and
         # a key padding mask; need_weights left True): masked_mha_*'s sequence-first twins
         ("seq_first_mha_none_b4_t64", lambda: custom_models.masked_attention_net(causal=False, batch_first=False), (64, 16), 4),
         ("seq_first_mha_both_b4_t64", with_padding_mask(custom_models.masked_attention_net, 4, 64, batch_first=False), (64, 16), 4),
         ("seq_first_mha_weights_b4_t64", lambda: custom_models.masked_attention_net(causal=False, weights=True, batch_first=False), (64, 16), 4),
         # nn.Transformer on padded batches: src_key_padding_mask, tgt_key_padding_mask and memory_key_padding_mask made
         # in forward from the ids (`ids == pad_id`), the causal tgt_mask; dropout 0.1 and 0 (2.6 CPU: the flash kernel keeps masks)
         ("seq2seq_transformer_padded_b2_t64_s48", lambda: WithSource(custom_models.seq2seq_transformer(vocab=2000, pad_id=0), 2, 48, 2000), TOKENS, 2),
         ("seq2seq_transformer_padded_nodrop_b2_t64_s48",
          lambda: WithSource(custom_models.seq2seq_transformer(vocab=2000, pad_id=0, dropout=0.0), 2, 48, 2000), TOKENS, 2),
         ("seq2seq_transformer_nodrop_b2_t64_s48", lambda: WithSource(custom_models.seq2seq_transformer(vocab=2000, dropout=0.0), 2, 48, 2000), TOKENS, 2),
         # held out (measured after the rules were written): sequence first, padded, d 256, 8 heads, 3 + 3 layers, no
         # dropout, 77 target tokens over 64 source tokens, vocabulary 500, batch 4
         ("seq2seq_seq_first_padded_w256_b4_t77_s64",
          lambda: WithSource(custom_models.seq2seq_transformer(vocab=500, width=256, heads=8, layers=3, dropout=0.0, batch_first=False, pad_id=0),
                             4, 64, 500), CONTEXT_77, 4),
         # PyTorch's translation tutorial's Seq2SeqTransformer as written and trained (sequence first, its five masks
         # as arguments: gpubudget-export --source-first --mask ...), dropout 0.1; the same without dropout
         ("translation_tutorial_b2_t64_s48", lambda: WithTranslationMasks(custom_models.translation_tutorial(), 2, 64, 48, 2000), TOKENS, 2),
         ("translation_tutorial_nodrop_b2_t64_s48", lambda: WithTranslationMasks(custom_models.translation_tutorial(dropout=0.0), 2, 64, 48, 2000),
          TOKENS, 2),
         ("seq2seq_transformer_seq_first_b2_t64_s48",
          lambda: WithSource(custom_models.seq2seq_transformer(vocab=2000, batch_first=False), 2, 48, 2000), TOKENS, 2),
         # held out (measured after the rules were written): the tutorial LM at width 256, 8 heads, 3 layers, dropout 0.1
         # on CLIP's 77 tokens, batch 4; CLIP's text tower at width 128, 8 heads, 3 layers, 77 tokens, batch 4
         ("tutorial_lm_w256_b4_t77", lambda: custom_models.tutorial_transformer_lm(ntoken=500, d_model=256, nhead=8, d_hid=1024,
                                                                                  nlayers=3, dropout=0.1), CONTEXT_77, 4),
         ("clip_text_w128_b4_t77", lambda: custom_models.clip_text_tower(vocab=500, context=77, width=128, heads=8, layers=3), CONTEXT_77, 4),
         # the same with need_weights left True (the materialized path: baddbmm(mask, q, kᵀ))
         ("masked_mha_weights_both_b4_t64", with_padding_mask(custom_models.masked_attention_net, 4, 64, 8, causal=True, weights=True), (64, 16), 4),
         ("masked_mha_weights_causal_b4_t64", lambda: custom_models.masked_attention_net(weights=True), (64, 16), 4),
         ("masked_mha_weights_none_b4_t64", lambda: custom_models.masked_attention_net(causal=False, weights=True), (64, 16), 4),
         # nn.TransformerDecoder over a memory (2026-12-06): its cross-attention is nn.MultiheadAttention on two tensors
         ("decoder_stack_b2_t32_m48", lambda: WithSecondImage(custom_models.decoder_stack(), 2, (48, 64)), (32, 16), 2),
         ("decoder_stack_nodrop_b2_t32_m48", lambda: WithSecondImage(custom_models.decoder_stack(dropout=0.0), 2, (48, 64)), (32, 16), 2),
         # held out: pre-norm GELU, width 128, 8 heads, 64 tokens over a 96-token memory, batch 4, no dropout
         ("decoder_stack_prenorm_b4_t64_m96", lambda: WithSecondImage(custom_models.decoder_stack(128, 8, norm_first=True, dropout=0.0), 4, (96, 128)),
          (64, 16), 4),
         # a float [L, L] band mask (not causal: SDPA takes it as an attn_mask), alone and with a padding mask
         ("masked_encoder_band_b2_t32", lambda: custom_models.masked_encoder_stack(band=4), (32, 16), 2),
         ("masked_encoder_band_nodrop_b2_t32", lambda: custom_models.masked_encoder_stack(band=4, dropout=0.0), (32, 16), 2),
         ("masked_encoder_band_padded_nodrop_b2_t32", with_padding_mask(custom_models.masked_encoder_stack, 2, 32, band=4, dropout=0.0), (32, 16), 2),
         # nn.Transformer as a translation model: the encoder over 48 source ids (the condition), the decoder over the
         # 64 target ids (causal), cross-attention to the encoder's output (2026-12-06)
         ("seq2seq_transformer_b2_t64_s48", lambda: WithSource(custom_models.seq2seq_transformer(vocab=2000), 2, 48, 2000), TOKENS, 2),
         # held out (measured after the rules were written): width 128, 8 heads, 128 tokens, batch 4, pre-norm
         ("masked_encoder_both_nodrop_b4_t128", with_padding_mask(custom_models.masked_encoder_stack, 4, 128, 16, causal=True, dropout=0.0,
                                                                  width=128, heads=8, norm_first=True), (128, 16), 4),
         ("masked_encoder_both_b4_t128", with_padding_mask(custom_models.masked_encoder_stack, 4, 128, 16, causal=True, width=128, heads=8,
                                                           norm_first=True), (128, 16), 4),
         ("masked_encoder_causal_nodrop_b4_t128", lambda: custom_models.masked_encoder_stack(causal=True, dropout=0.0, width=128, heads=8,
                                                                                             norm_first=True), (128, 16), 4),
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
         ("token_lm_lora_qv_r8_b2_t64", peft_lora(custom_models.token_lm, ["attn.query", "attn.value"], 8, 0.0), TOKENS, 2),
         # PEFT's lora.MultiheadAttention: the deltas merged into in_proj_weight and out_proj.weight for the forward
         ("frame_transformer_lora_mha_r8_b2_64", peft_lora(custom_models.frame_transformer, ["attn"], 8, 0.0), (3, 64, 64), 2),
         ("frame_transformer_lora_mha_mlp_r8_b2_64", peft_lora(custom_models.frame_transformer, ["attn", "mlp.0", "mlp.3"], 8, 0.0), (3, 64, 64), 2),
         ("vit_b_16_lora_mha_r8_b2_96", peft_lora(vit_b_16_96, ["self_attention"], 8, 0.0), (3, 96, 96), 2),
         # PEFT's DoRA (use_dora=True) on convolutions (stem: biased, its first input needs no
         # gradient; grouped_net: groups 8) and on an embedding (DoraConv, DoraEmbedding above)
         ("resnet18_dora_conv2_r8_b2_224", peft_lora(resnet18, ["conv2"], 8, 0.0, dora=True), (3, 224, 224), 2),
         ("sdpa_transformer_dora_stem_r4_b2_64", peft_lora(custom_models.sdpa_transformer, ["stem.0", "stem.3"], 4, 0.0, dora=True), (3, 64, 64), 2),
         ("grouped_net_dora_conv2_r8_b2_64", peft_lora(custom_models.grouped_net, ["conv2"], 8, 0.0, dora=True), (3, 64, 64), 2),
         # lora_dropout 0.1: DoRA convolves the dropped input with the base weight again (base_result=None)
         ("grouped_net_dora_conv2_r8_drop10_b2_64", peft_lora(custom_models.grouped_net, ["conv2"], 8, 0.1, dora=True), (3, 64, 64), 2),
         ("sdpa_transformer_dora_stem_r4_drop10_b2_64", peft_lora(custom_models.sdpa_transformer, ["stem.0", "stem.3"], 4, 0.1, dora=True), (3, 64, 64), 2),
         ("token_lm_dora_embed_r8_b2_t64", peft_lora(custom_models.token_lm, ["embed"], 8, 0.0, dora=True), TOKENS, 2),
         # DoRA on biased nn.Linear layers (DoraLinear above): `base_result - bias` at lora_dropout 0; at 0.1
         # the dropped input through the base weight again (F.linear, base_result=None)
         ("sdpa_transformer_dora_mlp_r4_b2_64", peft_lora(custom_models.sdpa_transformer, ["mlp.0", "mlp.2"], 4, 0.0, dora=True), (3, 64, 64), 2),
         ("sdpa_transformer_dora_mlp_r4_drop10_b2_64", peft_lora(custom_models.sdpa_transformer, ["mlp.0", "mlp.2"], 4, 0.1, dora=True),
          (3, 64, 64), 2),
         ("token_lm_dora_qv_r8_b2_t64", peft_lora(custom_models.token_lm, ["attn.query", "attn.value"], 8, 0.0, dora=True), TOKENS, 2),
         ("token_lm_dora_qv_r8_drop10_b2_t64", peft_lora(custom_models.token_lm, ["attn.query", "attn.value"], 8, 0.1, dora=True), TOKENS, 2),
         # nanoGPT's GPT trained as its train.py does (logits, loss = model(X, Y)): read through
         # torch.export (gpubudget-export --targets), its own cross-entropy loss; with dropout 0.1
         ("nanogpt_b2_t64", own_loss(custom_models.nanogpt), TOKENS, 2),
         ("nanogpt_drop10_b2_t64", own_loss(custom_models.nanogpt, dropout=0.1), TOKENS, 2),
         # bias=False, train.py's default: LayerNorm weights only (layer_norm(no_bias)), Linears without bias
         ("nanogpt_nobias_b2_t64", own_loss(custom_models.nanogpt, bias=False), TOKENS, 2),
         # five Blocks (gpubudget-export folds them into one repeat: three copies walked, two stood in
         # for), plain and each Block checkpointed (--checkpoint-blocks on the same graph)
         ("nanogpt_l5_b2_t64", own_loss(custom_models.nanogpt, n_layer=5), TOKENS, 2),
         # minGPT: the manual causal attention (masked_fill from a buffer) and NewGELU written out
         ("mingpt_b2_t64", own_loss(custom_models.mingpt), TOKENS, 2),
         ("nanogpt_l5_ckpt_b2_t64", checkpointed_nanogpt(5), TOKENS, 2),
         # a torchvision model the zoo does not have, whose factory reads tensor data while it builds
         # (gpubudget-export --build-on-cpu): squeeze-excitation, grouped 3x3 convs, no zoo twin
         ("regnet_y_400mf_b2_64", regnet_y_400mf, (3, 64, 64), 2),
         # max pools with ceil_mode=True (and SqueezeNet's Fire concatenations, GoogLeNet's inception
         # branches), not in the zoo
         ("squeezenet1_1_b2_64", squeezenet1_1, (3, 64, 64), 2),
         ("googlenet_b2_64", googlenet, (3, 64, 64), 2),
         # 1x7 and 7x1 convolutions (conv2d with kernel_w, padding_w), not in the zoo
         ("inception_v3_b2_96", inception_v3, (3, 96, 96), 2),
         # x.mean([2, 3]) (mean_over two dimensions) after inverted residual blocks, not in the zoo
         ("mnasnet1_0_b2_64", mnasnet1_0, (3, 64, 64), 2),
         # x1, x2 = x.chunk(2, dim=1) (chunk views), cat with branch2(x2), the channel shuffle
         # (view, transpose, contiguous, view), not in the zoo
         ("shufflenet_v2_x0_5_b2_64", shufflenet_v2_x0_5, (3, 64, 64), 2),
         ("shufflenet_v2_x1_0_b2_64", shufflenet_v2_x1_0, (3, 64, 64), 2),
         # 2026-12-06, torchvision models no case had: Fused-MBConv and stochastic depth (EfficientNetV2),
         # grouped 3x3 bottlenecks (ResNeXt), AlexNet's adaptive pool and dropout classifier, MobileNetV3-Small,
         # a ViT of 32-pixel patches, EfficientNet-B3's widths
         ("efficientnet_v2_s_b2_64", torchvision_model("efficientnet_v2_s"), (3, 64, 64), 2),
         ("resnext50_32x4d_b2_64", torchvision_model("resnext50_32x4d"), (3, 64, 64), 2),
         ("alexnet_b2_64", torchvision_model("alexnet"), (3, 64, 64), 2),
         ("mobilenet_v3_small_b2_64", torchvision_model("mobilenet_v3_small"), (3, 64, 64), 2),
         ("vit_b_32_b2_64", torchvision_model("vit_b_32", image_size=64), (3, 64, 64), 2),
         ("efficientnet_b3_b2_64", torchvision_model("efficientnet_b3"), (3, 64, 64), 2)]


def example_input(shape, batch, sequence_first=False):
    """The batch of `shape` samples; `sequence_first` (a model whose `sequence_first` is True, as
    PyTorch's nn.Transformer tutorials lay tokens out): [L, B, ...], the batch second."""
    if shape in (TOKENS, CHARACTERS, CONTEXT_77):
        return torch.randint(0, shape[1], (shape[0], batch) if sequence_first else (batch, shape[0]))
    return torch.randn((shape[0], batch) + shape[1:] if sequence_first else (batch,) + shape)


def main():
    out = {"source": f"PyTorch {torch.__version__} CPU, tests/export/measure_custom.py (measure.py's method)", "cases": []}
    only = set(sys.argv[1:])  # case names: measure only these
    for name, factory, shape, batch in CASES:
        if only and name not in only:
            continue
        torch.manual_seed(0)
        model = factory()
        model.train()
        x = example_input(shape, batch, getattr(model, "sequence_first", False))
        # the trainable parameters, as transformers' Trainer passes them: PEFT's MultiheadAttention
        # replaces its frozen weights every forward, and an optimizer given every parameter would
        # keep the first ones alive (the frozen ones it holds cost nothing otherwise)
        opt = measure.make_optimizer("adamw", [q for q in model.parameters() if q.requires_grad], "for_loop")
        r = {"case": name, "batch": batch, "input": list(shape), "optimizer": "adamw", "optimizer_impl": "for_loop"}
        r.update(measure.measure_step(model, x, opt, measure.Heap(), saved=saved_without_loss if isinstance(model, OwnLoss) else "hooks_always"))
        if isinstance(model, OwnLoss):
            r["loss"] = "cross_entropy (the model's own: logits, loss = model(ids, ids); saved bytes without the loss's)"
        out["cases"].append(r)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
