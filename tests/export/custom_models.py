"""Small custom modules that no zoo entry describes, for tests/export (gpubudget-export's input).

bev_unfold_net: a BEV-style grid network after seed 000's report: a conv stem, then blocks that
gather each cell's 3x3 neighbourhood with F.unfold, mix it with a 1x1 convolution, GroupNorm and
SiLU, and add it back (x + f(x)); a two-branch stage concatenated (a 1x1 conv and a depthwise 3x3),
pooling and a dropout + linear head.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class NeighbourhoodMix(nn.Module):
    def __init__(self, c, k=3):
        super().__init__()
        self.k = k
        self.mix = nn.Conv2d(c * k * k, c, 1)
        self.norm = nn.GroupNorm(8, c)
        self.act = nn.SiLU()

    def forward(self, x):
        b, c, h, w = x.shape
        n = F.unfold(x, self.k, padding=self.k // 2)          # [B, C*k*k, H*W]
        n = n.view(b, c * self.k * self.k, h, w)
        return x + self.act(self.norm(self.mix(n)))


class TwoBranch(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.point = nn.Conv2d(c, c, 1, bias=False)
        self.depth = nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False)
        self.bn = nn.BatchNorm2d(2 * c)

    def forward(self, x):
        return F.relu(self.bn(torch.cat([self.point(x), self.depth(x)], dim=1)), inplace=True)


class BevUnfoldNet(nn.Module):
    def __init__(self, channels=32, blocks=2, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(*[NeighbourhoodMix(channels) for _ in range(blocks)])
        self.fuse = TwoBranch(channels)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(2 * channels, classes))

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = self.pool(self.fuse(x))
        return self.head(torch.flatten(x, 1))


def bev_unfold_net(channels=32, blocks=2, classes=10):
    return BevUnfoldNet(channels, blocks, classes)


class PairScores(nn.Module):
    """A product of two activations written as torch.einsum ('bic,bjc->bij': x @ xᵀ, after a Linear):
    parallel(merge_kind::matmul) of x and its transposed view."""

    def __init__(self, c=16):
        super().__init__()
        self.proj = nn.Linear(c, c)
        self.scores = Scores()

    def forward(self, x):
        return self.scores(self.proj(x))


class Scores(nn.Module):
    def forward(self, x):
        return torch.einsum("bic,bjc->bij", x, x)


def pair_scores():
    return PairScores()


class HeadPairScores(nn.Module):
    """PairScores per head: a 4-D einsum outside the attention patterns (torch.matmul folds its
    batch dimensions by a reshape: not modelled)."""
    def forward(self, x):
        b, n, c = x.shape
        h = x.view(b, n, 2, c // 2).transpose(1, 2)
        return torch.einsum("bhic,bhjc->bhij", h, h)


def head_pair_scores():
    return HeadPairScores()


class ValueBranch(nn.Module):
    """Python control flow on a tensor's values: no trace can follow it, with sizes or without."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        return y if y.sum() > 0 else -y


def value_branch():
    return ValueBranch()


class EncoderBlock(nn.Module):
    def __init__(self, width, heads, mlp):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, mlp), nn.GELU(), nn.Dropout(0.1), nn.Linear(mlp, width))

    def forward(self, x):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class FrameTransformer(nn.Module):
    """A per-frame CNN feature map read as tokens by two pre-norm encoder blocks (after seed 004's
    temporal model): conv stem, patch tokens (flatten + transpose), MultiheadAttention blocks, a
    mean over tokens and a linear head."""

    def __init__(self, width=64, heads=4, blocks=2, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                                  nn.Conv2d(32, width, 4, stride=4))
        self.blocks = nn.Sequential(*[EncoderBlock(width, heads, 4 * width) for _ in range(blocks)])
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)   # [B, tokens, width]
        x = self.ln(self.blocks(x))
        return self.head(x.mean(dim=1))


def frame_transformer(width=64, heads=4, blocks=2, classes=10):
    return FrameTransformer(width, heads, blocks, classes)


class SdpaSelfAttention(nn.Module):
    """Hand-written multi-head self-attention: q, k, v Linears, heads by view + transpose,
    F.scaled_dot_product_attention, heads merged by transpose + reshape, an output Linear."""

    def __init__(self, width, heads, causal=False, dropout=0.0):
        super().__init__()
        self.heads, self.causal, self.dropout = heads, causal, dropout
        self.query, self.key, self.value = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        self.proj = nn.Linear(width, width)

    def split(self, t, b, n, c):
        return t.view(b, n, self.heads, c // self.heads).transpose(1, 2)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.split(self.query(x), b, n, c), self.split(self.key(x), b, n, c), self.split(self.value(x), b, n, c)
        drop = {"dropout_p": self.dropout if self.training else 0.0} if self.dropout else {}
        if self.causal == "mask":  # the causal mask given as a bool attn_mask: SDPA then takes any mask
            drop["attn_mask"] = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        o = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal is True, **drop)
        return self.proj(o.transpose(1, 2).reshape(b, n, c))


class EagerSelfAttention(SdpaSelfAttention):
    """The same attention written out: softmax(q @ kᵀ / √d) @ v (transformers' eager BERT)."""

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.split(self.query(x), b, n, c), self.split(self.key(x), b, n, c), self.split(self.value(x), b, n, c)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        o = torch.matmul(scores.softmax(dim=-1), v)
        return self.proj(o.transpose(1, 2).reshape(b, n, c))


class SdpaBlock(nn.Module):
    def __init__(self, width, heads, mlp, causal=False, eager=False, dropout=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = EagerSelfAttention(width, heads) if eager else SdpaSelfAttention(width, heads, causal, dropout)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, mlp), nn.GELU(), nn.Linear(mlp, width))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class SdpaTransformer(nn.Module):
    """frame_transformer's stem and head around blocks of hand-written SDPA attention (no
    nn.MultiheadAttention): the exporter must recognise the q/k/v/SDPA/out pattern."""

    def __init__(self, width=64, heads=4, blocks=2, classes=10, causal=False, eager=False, dropout=0.0):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                                  nn.Conv2d(32, width, 4, stride=4))
        self.blocks = nn.Sequential(*[SdpaBlock(width, heads, 4 * width, causal, eager, dropout) for _ in range(blocks)])
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        x = self.ln(self.blocks(x))
        return self.head(x.mean(dim=1))


def sdpa_transformer(width=64, heads=4, blocks=2, classes=10, causal=False, dropout=0.0):
    """causal=True: SDPA with is_causal=True (separate_qkv_sdpa with causal_mask); "mask": the causal
    mask as a bool attn_mask, which the exporter must refuse; dropout: SDPA's dropout_p in training
    (2.6 CPU: the math path)."""
    return SdpaTransformer(width, heads, blocks, classes, causal, dropout=dropout)


def eager_transformer(width=64, heads=4, blocks=2, classes=10):
    """sdpa_transformer with the attention written as matmul-softmax-matmul."""
    return SdpaTransformer(width, heads, blocks, classes, eager=True)


class GroupedBlock(nn.Module):
    """A ResNeXt bottleneck in small: 1x1 up, a grouped 3x3 (`conv2`), 1x1 down, a residual add."""

    def __init__(self, c, width, groups):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, width, 1, bias=False), nn.BatchNorm2d(width)
        self.conv2, self.bn2 = nn.Conv2d(width, width, 3, padding=1, groups=groups, bias=False), nn.BatchNorm2d(width)
        self.conv3, self.bn3 = nn.Conv2d(width, c, 1, bias=False), nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        return self.relu(self.bn3(self.conv3(y)) + x)


class GroupedNet(nn.Module):
    """Grouped 3x3 convolutions (groups 8) in residual bottlenecks: PEFT's grouped lora.Conv2d target."""

    def __init__(self, c=32, width=64, groups=8, blocks=2, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(*[GroupedBlock(c, width, groups) for _ in range(blocks)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


def grouped_net(c=32, width=64, groups=8, blocks=2, classes=10):
    return GroupedNet(c, width, groups, blocks, classes)


class ConvBlock(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UpsampleUNet(nn.Module):
    """A small U-Net whose decoder upsamples instead of transposed convolutions: nn.Upsample
    (nearest, x2), F.interpolate(size=..., bilinear) and F.interpolate(scale_factor=2,
    bilinear, align_corners=True), each concatenated with its skip, and a 1x1 head."""

    def __init__(self, c=16, classes=3):
        super().__init__()
        self.enc1, self.enc2, self.enc3 = ConvBlock(3, c), ConvBlock(c, 2 * c), ConvBlock(2 * c, 4 * c)
        self.pool = nn.MaxPool2d(2)
        self.mid = ConvBlock(4 * c, 4 * c)
        self.up3 = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec3, self.dec2, self.dec1 = ConvBlock(8 * c, 2 * c), ConvBlock(4 * c, c), ConvBlock(2 * c, c)
        self.head = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        a = self.enc1(x)
        b = self.enc2(self.pool(a))
        d = self.enc3(self.pool(b))
        m = self.mid(self.pool(d))
        y = self.dec3(torch.cat([self.up3(m), d], dim=1))
        y = self.dec2(torch.cat([F.interpolate(y, size=b.shape[-2:], mode="bilinear", align_corners=False), b], dim=1))
        y = self.dec1(torch.cat([F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=True), a], dim=1))
        return self.head(y)


def upsample_unet(c=16, classes=3):
    return UpsampleUNet(c, classes)


class EncoderStack(nn.Module):
    """nn.TransformerEncoder of nn.TransformerEncoderLayer (batch_first, dropout 0.1), as a
    sequence classifier writes it: a Linear embedding of 16 features, the encoder (post-norm with
    ReLU, or pre-norm with GELU and a final LayerNorm), a mean over tokens and a Linear head."""

    def __init__(self, width=64, heads=4, layers=2, norm_first=False, classes=5):
        super().__init__()
        self.embed = nn.Linear(16, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.1, activation="gelu" if norm_first else "relu",
                                           batch_first=True, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(width) if norm_first else None, enable_nested_tensor=False)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)).mean(dim=1))


def encoder_stack(width=64, heads=4, layers=2, norm_first=False, classes=5):
    return EncoderStack(width, heads, layers, norm_first, classes)


class MaskedEncoderStack(EncoderStack):
    """EncoderStack called with masks, as a language model or a padded-batch classifier calls
    nn.TransformerEncoder: `causal`: the mask nn.Transformer.generate_square_subsequent_mask(L)
    made in forward (TransformerEncoder recognises it as causal, or is_causal=True says so);
    `padded`: forward(x, pad), pad a [B, L] bool key padding mask (True: a padded token)."""

    def __init__(self, width=64, heads=4, layers=2, norm_first=False, classes=5, causal=False, padded=False, dropout=0.1,
                 say_causal=False, band=0):
        super().__init__(width, heads, layers, norm_first, classes)
        for layer in self.encoder.layers:
            layer.dropout.p = layer.dropout1.p = layer.dropout2.p = dropout
            layer.self_attn.dropout = dropout
        self.causal, self.padded, self.say_causal, self.band = causal, padded, say_causal, band

    def forward(self, x, pad=None):
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1), device=x.device) if self.causal else None
        if self.band:  # local attention: a float [L, L] mask, -inf beyond `band` tokens either way (not causal)
            idx = torch.arange(x.size(1), device=x.device)
            mask = torch.zeros(x.size(1), x.size(1), device=x.device).masked_fill((idx[None, :] - idx[:, None]).abs() > self.band, float("-inf"))
        kw = {"is_causal": True} if self.say_causal else {}
        return self.head(self.encoder(self.embed(x), mask=mask, src_key_padding_mask=pad, **kw).mean(dim=1))


def masked_encoder_stack(causal=False, padded=False, dropout=0.1, norm_first=False, say_causal=False, width=64, heads=4, layers=2, band=0):
    return MaskedEncoderStack(width, heads, layers, norm_first, causal=causal, padded=padded, dropout=dropout, say_causal=say_causal, band=band)


class MaskedAttentionBlock(nn.Module):
    """A pre-norm residual block around nn.MultiheadAttention called with its masks."""

    def __init__(self, width, heads, dropout, causal, weights, batch_first=True):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, dropout=dropout, batch_first=batch_first)
        self.causal, self.weights = causal, weights

    def forward(self, h, mask, pad):
        y = self.norm(h)
        if self.weights:  # need_weights left True (the default): the materialized path, the weights dropped
            a, _ = self.attn(y, y, y, attn_mask=mask, key_padding_mask=pad, is_causal=self.causal)
            return h + a
        return h + self.attn(y, y, y, attn_mask=mask, key_padding_mask=pad, need_weights=False, is_causal=self.causal)[0]


class MaskedAttentionNet(nn.Module):
    """nn.MultiheadAttention called directly with masks (a causal attn_mask with is_causal=True, a key
    padding mask, or both), need_weights=False or left True, in two pre-norm residual blocks.
    buffer_tokens=L: open_clip's text tower's way instead, a causal float [L, L] buffer built in
    __init__ and passed as attn_mask without is_causal (SDPA takes it as any mask). batch_first=False:
    nn.MultiheadAttention's default layout, x [L, B, 16] (gpubudget-export --sequence-first)."""

    def __init__(self, width=64, heads=4, causal=True, padded=False, dropout=0.0, weights=False, buffer_tokens=0, batch_first=True):
        super().__init__()
        self.embed = nn.Linear(16, width)
        self.blocks = nn.ModuleList([MaskedAttentionBlock(width, heads, dropout, causal and not buffer_tokens, weights, batch_first) for _ in range(2)])
        self.sequence_first = not batch_first
        self.head = nn.Linear(width, 5)
        self.causal, self.padded = causal, padded
        if buffer_tokens:
            self.register_buffer("attn_mask", torch.empty(buffer_tokens, buffer_tokens).fill_(float("-inf")).triu_(1), persistent=False)
        self.buffered = bool(buffer_tokens)

    def forward(self, x, pad=None):
        if self.buffered:
            mask = self.attn_mask
        else:
            tokens = x.size(0 if self.sequence_first else 1)
            mask = torch.triu(torch.full((tokens, tokens), float("-inf"), device=x.device), diagonal=1) if self.causal else None
        h = self.embed(x)
        for block in self.blocks:
            h = block(h, mask, pad)
        return self.head(h.mean(dim=0 if self.sequence_first else 1))


def masked_attention_net(width=64, heads=4, causal=True, padded=False, dropout=0.0, weights=False, buffer_tokens=0, batch_first=True):
    """weights=True: nn.MultiheadAttention called with need_weights left True (its default)."""
    return MaskedAttentionNet(width, heads, causal, padded, dropout, weights, buffer_tokens, batch_first)


class TutorialPositionalEncoding(nn.Module):
    """PyTorch's tutorial PositionalEncoding (pytorch/tutorials beginner_source/transformer_tutorial.py,
    "Language Modeling with nn.Transformer"): a sine table buffer [max_len, 1, d] for sequence-first
    [L, B, d] tokens, x + pe[:L], then dropout; batch_first: a [1, max_len, d] table, x + pe[:, :L]."""

    def __init__(self, d_model, dropout=0.1, max_len=5000, batch_first=False):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.batch_first = batch_first
        self.register_buffer("pe", pe.transpose(0, 1).contiguous() if batch_first else pe)

    def forward(self, x):
        x = x + (self.pe[:, :x.size(1)] if self.batch_first else self.pe[:x.size(0)])
        return self.dropout(x)


class TutorialTransformerLM(nn.Module):
    """The tutorial's TransformerModel (the same file; pytorch/examples word_language_model's
    TransformerModel is the same shape): token ids [L, B] sequence first (nn.TransformerEncoderLayer's
    default batch_first=False), embedding * sqrt(d), the positional encoding, a causal mask made in
    forward, nn.TransformerEncoder, a Linear to the vocabulary: logits [L, B, V]. batch_first: the
    same model on [B, L] ids (the comparison twin)."""

    def __init__(self, ntoken=2000, d_model=64, nhead=4, d_hid=128, nlayers=2, dropout=0.2, batch_first=False, norm_first=False,
                 flat_logits=False):
        super().__init__()
        self.sequence_first = not batch_first
        self.pos_encoder = TutorialPositionalEncoding(d_model, dropout, batch_first=batch_first)
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout, batch_first=batch_first, norm_first=norm_first)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)
        self.flat_logits = flat_logits  # output.view(-1, ntoken), as the tutorial's training loop flattens them

    def forward(self, src):
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        src_mask = nn.Transformer.generate_square_subsequent_mask(src.size(0) if self.sequence_first else src.size(1), device=src.device)
        output = self.linear(self.transformer_encoder(src, src_mask))
        return output.view(-1, output.size(-1)) if self.flat_logits else output


def tutorial_transformer_lm(**kw):
    return TutorialTransformerLM(**kw)


class WordLanguageModelTransformer(nn.Transformer):
    """pytorch/examples' word_language_model TransformerModel (model.py), as it is written: an
    nn.Transformer whose `decoder` is replaced by the vocabulary Linear (its encoder: TransformerEncoder
    with a final LayerNorm, dropout 0.1, ReLU), [L, B] ids sequence first, the causal mask
    log(tril(ones(L, L))) made in forward and cached on the module (`self.src_mask`), the tutorial's
    positional encoding, log_softmax over the vocabulary."""

    def __init__(self, ntoken=2000, ninp=64, nhead=4, nhid=128, nlayers=2, dropout=0.2):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.src_mask = None
        self.pos_encoder = TutorialPositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.sequence_first = True

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def word_language_model(**kw):
    return WordLanguageModelTransformer(**kw)


class WordLanguageModelRNN(nn.Module):
    """pytorch/examples' word_language_model RNNModel (model.py), its default (`--model LSTM`): an
    embedding, dropout, nn.LSTM / nn.GRU over [L, B] ids sequence first, dropout, the vocabulary
    Linear, log_softmax; called as model(ids, hidden) with the hidden state the training loop carries
    (here zeros made in forward, as init_hidden makes them). Not yet expressible in the library
    (no recurrent op): measured on the GPU by run_open_questions.sh 26 to settle cuDNN's rules."""

    def __init__(self, rnn_type="LSTM", ntoken=2000, ninp=64, nhid=64, nlayers=2, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def forward(self, src):
        emb = self.drop(self.encoder(src))
        zeros = emb.new_zeros(self.nlayers, src.size(1), self.nhid)
        output, _ = self.rnn(emb, (zeros, zeros) if self.rnn_type == "LSTM" else zeros)
        output = self.drop(output)
        return F.log_softmax(self.decoder(output), dim=-1)


def word_language_model_rnn(**kw):
    return WordLanguageModelRNN(**kw)


class BareRNN(nn.Module):
    """nn.LSTM / nn.GRU alone on a batch-first [B, T, I] input, its output sequence returned:
    the recurrent layer's own saved tensors, reserve and workspace, nothing around it."""

    def __init__(self, rnn_type="LSTM", input_size=256, hidden=512, layers=1, bidirectional=False):
        super().__init__()
        self.rnn = getattr(nn, rnn_type)(input_size, hidden, layers, batch_first=True, bidirectional=bidirectional)

    def forward(self, x):
        return self.rnn(x)[0]


def bare_rnn(**kw):
    return BareRNN(**kw)


class ClipResidualAttentionBlock(nn.Module):
    """OpenAI CLIP's ResidualAttentionBlock (openai/CLIP clip/model.py): sequence-first [L, B, d]
    through nn.MultiheadAttention(d, heads) (batch_first=False), x + attn(ln_1(x), need_weights=False,
    attn_mask=the causal float buffer)[0], then x + mlp(ln_2(x)) (c_fc, GELU, c_proj)."""

    def __init__(self, d_model, n_head, attn_mask):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_head)
        self.ln_1 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_model * 4), nn.GELU(), nn.Linear(d_model * 4, d_model))
        self.ln_2 = nn.LayerNorm(d_model)
        self.attn_mask = attn_mask

    def forward(self, x):
        mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if self.attn_mask is not None else None
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, need_weights=False, attn_mask=mask)[0]
        return x + self.mlp(self.ln_2(x))


class ClipTextTower(nn.Module):
    """CLIP's text encoder as openai/CLIP writes it (clip/model.py CLIP.encode_text): token
    embedding + a positional parameter on [B, L], x.permute(1, 0, 2) to [L, B, d] for the
    sequence-first blocks (each holding the causal float [L, L] mask as a plain attribute), permuted back, ln_final, a
    projection of the mean token (CLIP takes the end-of-text token's)."""

    def __init__(self, vocab=2000, context=64, width=64, heads=4, layers=2, embed=32):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, width)
        self.positional_embedding = nn.Parameter(torch.empty(context, width).normal_(std=0.01))
        mask = torch.empty(context, context).fill_(float("-inf")).triu_(1)  # CLIP.build_attention_mask
        self.resblocks = nn.Sequential(*[ClipResidualAttentionBlock(width, heads, mask) for _ in range(layers)])
        self.ln_final = nn.LayerNorm(width)
        self.text_projection = nn.Linear(width, embed, bias=False)

    def forward(self, text):
        x = self.token_embedding(text) + self.positional_embedding
        x = x.permute(1, 0, 2)  # NLD -> LND
        x = self.resblocks(x)
        x = x.permute(1, 0, 2)  # LND -> NLD
        return self.text_projection(self.ln_final(x).mean(dim=1))


def clip_text_tower(**kw):
    return ClipTextTower(**kw)


class LayerMaskWithoutCausal(nn.Module):
    """nn.TransformerEncoderLayer called directly with a bool causal mask and without is_causal=True:
    the layer converts it to a float one per call and passes it to SDPA as any mask, which the library
    does not model (a float [L, L] mask maps: square_mask); exporting must stop. `weights`:
    nn.MultiheadAttention called with a key padding mask and need_weights left True (exports:
    torch_mha_weights, key_padding_mask)."""

    def __init__(self, weights=False):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)
        self.weights = weights

    def forward(self, x, pad=None):
        if self.weights:
            return self.attn(x, x, x, key_padding_mask=pad)[0]
        return self.layer(x, src_mask=torch.ones(x.size(1), x.size(1), dtype=torch.bool, device=x.device).triu(1))


def layer_mask_without_causal(weights=False):
    return LayerMaskWithoutCausal(weights)


class MaskMultipliedIn(nn.Module):
    """A key padding mask the model reads itself (masking the features of padded tokens) before an
    nn.TransformerEncoderLayer: exporting with --key-padding-mask must stop, naming the reader."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)

    def forward(self, x, pad):
        return self.layer(x * (~pad).unsqueeze(-1), src_key_padding_mask=pad)


def mask_multiplied_in():
    return MaskMultipliedIn()


class OptionalMaskEncoder(nn.Module):
    """forward(x, mask=None) passing its mask argument on to nn.TransformerEncoder: exported without
    the argument, the mask is None (a placeholder with no tensor), so no mask."""

    def __init__(self):
        super().__init__()
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), 1, enable_nested_tensor=False)

    def forward(self, x, mask=None):
        return self.enc(x, mask=mask)


def optional_mask_encoder():
    return OptionalMaskEncoder()


class DecoderStack(nn.Module):
    """nn.TransformerDecoder of nn.TransformerDecoderLayer (batch_first) over a conditioning memory, as
    an image captioner or a DETR-style decoder writes it: forward(x, memory), x [L, 16] features made
    d-wide by a Linear, memory [M, d] (the encoder's output, given with --condition M,d), the causal
    tgt_mask (generate_square_subsequent_mask, tgt_is_causal=True) or none, a mean over tokens, a head."""

    def __init__(self, width=64, heads=4, layers=2, norm_first=False, dropout=0.1, causal=True):
        super().__init__()
        self.embed = nn.Linear(16, width)
        layer = nn.TransformerDecoderLayer(width, heads, 4 * width, dropout, activation="gelu" if norm_first else "relu",
                                           batch_first=True, norm_first=norm_first)
        self.decoder = nn.TransformerDecoder(layer, layers, norm=nn.LayerNorm(width) if norm_first else None)
        self.head = nn.Linear(width, 5)
        self.causal = causal

    def forward(self, x, memory):
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1), device=x.device) if self.causal else None
        h = self.decoder(self.embed(x), memory, tgt_mask=mask, tgt_is_causal=self.causal)
        return self.head(h.mean(dim=1))


def decoder_stack(width=64, heads=4, layers=2, norm_first=False, dropout=0.1, causal=True):
    return DecoderStack(width, heads, layers, norm_first, dropout, causal)


class MemoryMaskedDecoder(DecoderStack):
    """DecoderStack with a float [L, M] memory_mask on its cross-attention (not modelled: exporting stops)."""

    def forward(self, x, memory):
        memory_mask = torch.zeros(x.size(1), memory.size(1), device=x.device)
        return self.head(self.decoder(self.embed(x), memory, memory_mask=memory_mask).mean(dim=1))


def memory_masked_decoder():
    return MemoryMaskedDecoder()


class Seq2SeqTransformer(nn.Module):
    """nn.Transformer (batch_first) as a translation model writes it: source and target token
    embeddings, the encoder over the source, the decoder over the target with the causal tgt_mask
    and cross-attention to the encoder's output, a Linear to the vocabulary. forward(tgt, src): the
    target first, as gpubudget-export takes the decoder's tokens as the model's input (--tokens) and
    the source as its condition (--condition tokens:S); a model written forward(src, tgt) takes
    --source-first (source_first_seq2seq). batch_first=False: nn.Transformer's default, [T, B] and
    [S, B] ids (gpubudget-export --sequence-first)."""

    def __init__(self, vocab=1000, width=64, heads=4, layers=2, dropout=0.1, batch_first=True, pad_id=None):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(vocab, width), nn.Embedding(vocab, width)
        self.transformer = nn.Transformer(width, heads, layers, layers, 4 * width, dropout, batch_first=batch_first)
        self.out = nn.Linear(width, vocab)
        self.sequence_first = not batch_first
        self.pad_id = pad_id  # padded batches: the key padding masks made from the ids (`ids == pad_id`, [B, L] bool)

    def forward(self, tgt, src):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(0 if self.sequence_first else 1), device=tgt.device)
        if self.pad_id is None:
            return self.out(self.transformer(self.src_emb(src), self.tgt_emb(tgt), tgt_mask=mask, tgt_is_causal=True))
        src_pad = (src.t() if self.sequence_first else src) == self.pad_id
        tgt_pad = (tgt.t() if self.sequence_first else tgt) == self.pad_id
        return self.out(self.transformer(self.src_emb(src), self.tgt_emb(tgt), tgt_mask=mask, src_key_padding_mask=src_pad,
                                         tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad, tgt_is_causal=True))


def seq2seq_transformer(vocab=1000, width=64, heads=4, layers=2, dropout=0.1, batch_first=True, pad_id=None):
    return Seq2SeqTransformer(vocab, width, heads, layers, dropout, batch_first, pad_id)


class TokenEmbedding(nn.Module):
    """The translation tutorial's TokenEmbedding: embedding(tokens.long()) * sqrt(emb_size)."""

    def __init__(self, vocab_size, emb_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size

    def forward(self, tokens):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


class TranslationTutorialSeq2Seq(nn.Module):
    """PyTorch's "Language Translation with nn.Transformer and torchtext" Seq2SeqTransformer
    (pytorch/tutorials beginner_source/translation_transformer.py) as written: sequence-first [S, B]
    and [T, B] ids, token embeddings scaled by sqrt(d), the tutorial's positional encoding, an
    nn.Transformer (batch_first=False) called with the five masks its training loop makes
    (create_mask: a bool all-False src_mask [S, S], the float causal tgt_mask [T, T], the [B, S] and
    [B, T] bool padding masks, the source's again as memory_key_padding_mask), a generator Linear."""

    def __init__(self, num_encoder_layers=2, num_decoder_layers=2, emb_size=64, nhead=4, src_vocab_size=2000, tgt_vocab_size=2000,
                 dim_feedforward=128, dropout=0.1):
        super().__init__()
        self.transformer = nn.Transformer(d_model=emb_size, nhead=nhead, num_encoder_layers=num_encoder_layers,
                                          num_decoder_layers=num_decoder_layers, dim_feedforward=dim_feedforward, dropout=dropout)
        self.generator = nn.Linear(emb_size, tgt_vocab_size)
        self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
        self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
        self.positional_encoding = TutorialPositionalEncoding(emb_size, dropout=dropout)
        self.sequence_first = True

    def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, memory_key_padding_mask):
        src_emb = self.positional_encoding(self.src_tok_emb(src))
        tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
        outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None, src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
        return self.generator(outs)


def translation_tutorial(**kw):
    return TranslationTutorialSeq2Seq(**kw)


class SourceFirstSeq2Seq(Seq2SeqTransformer):
    """The same model written forward(src, tgt), as translation code writes it (gpubudget-export
    --source-first)."""

    def forward(self, src, tgt):
        return super().forward(tgt, src)


def source_first_seq2seq(vocab=1000, width=64, heads=4, layers=2, dropout=0.1):
    return SourceFirstSeq2Seq(vocab, width, heads, layers, dropout)


class SubPixelNet(nn.Module):
    """An ESPCN-style super-resolution net: convolutions with nn.PReLU (one weight, and one per
    channel), then a sub-pixel convolution: nn.PixelShuffle(2)."""

    def __init__(self, c=32):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 5, padding=2), nn.PReLU(), nn.Conv2d(c, c, 3, padding=1), nn.PReLU(c),
                                  nn.Conv2d(c, 3 * 4, 3, padding=1), nn.PixelShuffle(2))

    def forward(self, x):
        return self.body(x)


def subpixel_net(c=32):
    return SubPixelNet(c)


class AudioCNN(nn.Module):
    """A 1-D CNN over a raw waveform (keyword spotting, ECG): Conv1d + BatchNorm1d + ReLU stages
    pooled by nn.MaxPool1d, nn.AvgPool1d (padded) and F.max_pool1d with ceil_mode, then
    nn.AdaptiveAvgPool1d(1), a dropout and a linear head."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(1, 32, 9, stride=2, padding=4), nn.BatchNorm1d(32), nn.ReLU(inplace=True), nn.MaxPool1d(2))
        self.stage1 = nn.Sequential(nn.Conv1d(32, 64, 5, padding=2), nn.BatchNorm1d(64), nn.ReLU(inplace=True),
                                    nn.AvgPool1d(3, stride=2, padding=1))
        self.stage2 = nn.Sequential(nn.Conv1d(64, 128, 3, padding=1), nn.BatchNorm1d(128), nn.ReLU(inplace=True))
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(128, classes))

    def forward(self, x):
        x = self.stage2(self.stage1(self.stem(x)))
        return self.head(self.pool(F.max_pool1d(x, 3, 2, ceil_mode=True)))


def audio_cnn(classes=10):
    return AudioCNN(classes)


class ConvAutoencoder(nn.Module):
    """A convolutional autoencoder: strided convolutions with LeakyReLU, a Linear bottleneck
    (nn.Flatten, then nn.Unflatten back to a map), transposed convolutions with ELU and a sigmoid."""

    def __init__(self, c=16, latent=64, size=64):
        super().__init__()
        m = size // 4
        self.encoder = nn.Sequential(nn.Conv2d(3, c, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(c, 2 * c, 4, 2, 1), nn.LeakyReLU(0.2),
                                     nn.Flatten(), nn.Linear(2 * c * m * m, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 2 * c * m * m), nn.Unflatten(1, (2 * c, m, m)), nn.ConvTranspose2d(2 * c, c, 4, 2, 1),
                                     nn.ELU(), nn.ConvTranspose2d(c, 3, 4, 2, 1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


def conv_autoencoder(c=16, latent=64, size=64):
    return ConvAutoencoder(c, latent, size)


class TokenMixer(nn.Module):
    """Tokens through nn.MultiheadAttention called as most code calls it, `a, _ = attn(x, x, x)`:
    need_weights=True by default, so PyTorch takes the materialized path and returns the
    head-averaged weights, which the caller drops; then a post-norm residual, a GELU MLP and a
    mean-pooled head."""

    def __init__(self, features=32, width=128, heads=4, dropout=0.0, classes=3):
        super().__init__()
        self.proj = nn.Linear(features, width)
        self.attn = nn.MultiheadAttention(width, heads, dropout=dropout, batch_first=True)
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = self.proj(x)
        a, _ = self.attn(x, x, x)
        x = self.norm(x + a)
        x = x + self.mlp(x)
        return self.head(x.mean(1))


def token_mixer(features=32, width=128, heads=4, dropout=0.0, classes=3):
    return TokenMixer(features, width, heads, dropout, classes)


class ChannelDropoutNet(nn.Module):
    """Spatial dropout as segmentation and detection heads use it: nn.Dropout2d after a conv stage,
    nn.Dropout2d(inplace=True) and F.dropout1d over a [N, C, L] sequence of the pooled rows."""

    def __init__(self, c=32, classes=10):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.Dropout2d(0.1))
        # in place right after the conv (which keeps its input, not its output), before the ReLU
        self.stage2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.Dropout2d(0.2, inplace=True), nn.ReLU())
        self.rows = nn.Conv1d(2 * c, 2 * c, 3, padding=1)
        self.head = nn.Linear(2 * c, classes)

    def forward(self, x):
        x = self.stage2(self.stage1(x)).mean(2)  # [N, 2c, W/2]
        x = F.dropout1d(self.rows(x), 0.1, training=self.training)
        return self.head(x.mean(2))


def channel_dropout_net(c=32, classes=10):
    return ChannelDropoutNet(c, classes)


class MetricEmbedding(nn.Module):
    """An embedding net as metric-learning and style-transfer code writes it: a reflection-padded
    7x7 stem, LayerNorm over [C, H, W], ZeroPad2d before a stride-2 conv, F.pad replicate, features
    normalized per position (F.normalize over channels), adaptive max pooling, an L2-normalized
    embedding, a cosine-style head and nn.LogSoftmax."""

    def __init__(self, c=32, size=64, dim=64, classes=10):
        super().__init__()
        self.pad = nn.ReflectionPad2d(3)
        self.stem = nn.Conv2d(3, c, 7)
        self.ln = nn.LayerNorm([c, size, size])
        self.zp = nn.ZeroPad2d((0, 1, 0, 1))
        self.down = nn.Conv2d(c, 2 * c, 3, stride=2)
        self.conv = nn.Conv2d(2 * c, 2 * c, 3)
        self.pool = nn.AdaptiveMaxPool2d((4, 4))
        self.fc = nn.Linear(2 * c * 16, dim)
        self.head = nn.Linear(dim, classes, bias=False)
        self.out = nn.LogSoftmax(dim=1)

    def forward(self, x):
        x = F.gelu(self.ln(self.stem(self.pad(x))))
        x = F.relu(self.down(self.zp(x)))
        x = F.normalize(self.conv(F.pad(x, (1, 1, 1, 1), mode="replicate")), dim=1)
        e = F.normalize(self.fc(self.pool(x).flatten(1)), dim=1)
        return self.out(self.head(e))


def metric_embedding(c=32, size=64):
    return MetricEmbedding(c, size)


class GatedTCN(nn.Module):
    """A gated 1-D conv net over a [N, C, L] signal: F.glu and nn.GLU halving the channels,
    nn.ReflectionPad1d and nn.ReplicationPad1d, nn.AdaptiveMaxPool1d, x.sum(dim), x.mean(dim,
    keepdim=True).squeeze(-1), x.unsqueeze(1) into a Conv1d, torch.cat of the branches and
    F.log_softmax."""

    def __init__(self, channels=16, c=32, classes=5):
        super().__init__()
        self.inp = nn.Conv1d(channels, 2 * c, 3, padding=1)
        self.pad = nn.ReflectionPad1d(2)
        self.conv = nn.Conv1d(c, 2 * c, 5)
        self.glu = nn.GLU(dim=1)
        self.rep = nn.ReplicationPad1d(1)
        self.conv2 = nn.Conv1d(c, c, 3)
        self.pool = nn.AdaptiveMaxPool1d(8)
        self.mix = nn.Conv1d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * c + c, classes)

    def forward(self, x):
        h = F.glu(self.inp(x), dim=1)
        h = h + self.glu(self.conv(self.pad(h)))
        h = F.relu(self.conv2(self.rep(h)))
        s = self.pool(h).sum(dim=2)
        u = self.mix(s.unsqueeze(1)).flatten(1)
        m = h.mean(dim=2, keepdim=True).squeeze(-1)
        return F.log_softmax(self.fc(torch.cat([u, m], 1)), dim=-1)


def gated_tcn(channels=16, c=32, classes=5):
    return GatedTCN(channels, c, classes)


class AttentionCNN(nn.Module):
    """Channel and spatial attention as papers' code writes them by hand: a squeeze-excitation gate
    (pool, view, Linears, sigmoid, view(b, c, 1, 1), x * w), CBAM's spatial gate (mean and max over
    the channels with keepdim, torch.cat, a 7x7 conv, sigmoid, x * g), a depthwise conv with
    padding="same", nn.LeakyReLU(0.2, inplace=True) and nn.ELU(inplace=True)."""

    def __init__(self, c=32, r=4, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.act = nn.LeakyReLU(0.2, inplace=True)
        self.fc1 = nn.Linear(c, c // r)
        self.fc2 = nn.Linear(c // r, c)
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)
        self.dw = nn.Conv2d(c, c, 5, groups=c, padding="same")
        self.pw = nn.Conv2d(c, 2 * c, 1)
        self.elu = nn.ELU(inplace=True)
        self.head = nn.Linear(2 * c, classes)

    def forward(self, x):
        x = self.act(self.stem(x))
        b, c, _, _ = x.shape
        w = F.adaptive_avg_pool2d(x, 1).view(b, c)
        x = x * torch.sigmoid(self.fc2(F.relu(self.fc1(w)))).view(b, c, 1, 1)
        avg = torch.mean(x, dim=1, keepdim=True)
        mx, _ = torch.max(x, dim=1, keepdim=True)
        x = x * torch.sigmoid(self.spatial(torch.cat([avg, mx], dim=1)))
        x = self.elu(self.pw(self.dw(x)))
        return self.head(x.mean(dim=(2, 3)))


def attention_cnn(c=32):
    return AttentionCNN(c)


class UNet3D(nn.Module):
    """A two-level 3-D U-Net as medical-imaging code writes it: Conv3d + BatchNorm3d +
    ReLU(inplace=True) pairs, nn.MaxPool3d(2), nn.ConvTranspose3d(2, stride 2) up, a skip torch.cat."""

    def __init__(self, c=8, classes=2):
        super().__init__()
        def double(i, o):
            return nn.Sequential(nn.Conv3d(i, o, 3, padding=1), nn.BatchNorm3d(o), nn.ReLU(inplace=True),
                                 nn.Conv3d(o, o, 3, padding=1), nn.BatchNorm3d(o), nn.ReLU(inplace=True))
        self.enc1 = double(1, c)
        self.pool = nn.MaxPool3d(2)
        self.enc2 = double(c, 2 * c)
        self.up = nn.ConvTranspose3d(2 * c, c, 2, stride=2)
        self.dec = double(2 * c, c)
        self.out = nn.Conv3d(c, classes, 1)

    def forward(self, x):
        a = self.enc1(x)
        return self.out(self.dec(torch.cat([a, self.up(self.enc2(self.pool(a)))], dim=1)))


def unet3d(c=8):
    return UNet3D(c)


class UNet3DTrilinear(UNet3D):
    """The same 3-D U-Net with nn.Upsample(scale_factor=2, mode="trilinear") and a 1x1x1 Conv3d as
    its up path (the other common decoder)."""

    def __init__(self, c=8, classes=2):
        super().__init__(c, classes)
        self.up = nn.Sequential(nn.Upsample(scale_factor=2, mode="trilinear", align_corners=False), nn.Conv3d(2 * c, c, 1))


def unet3d_trilinear(c=8):
    return UNet3DTrilinear(c)


class WaveAutoencoder(nn.Module):
    """A 1-D convolutional autoencoder: strided Conv1d down, nn.ConvTranspose1d up, nn.AvgPool1d."""

    def __init__(self, c=16):
        super().__init__()
        self.down1 = nn.Conv1d(1, c, 9, stride=2, padding=4)
        self.down2 = nn.Conv1d(c, 2 * c, 9, stride=2, padding=4)
        self.pool = nn.AvgPool1d(2)
        self.up1 = nn.ConvTranspose1d(2 * c, c, 4, stride=4)
        self.up2 = nn.ConvTranspose1d(c, 1, 4, stride=2, padding=1)

    def forward(self, x):
        h = self.pool(F.relu(self.down2(F.relu(self.down1(x)))))
        return torch.tanh(self.up2(F.relu(self.up1(h))))


def wave_autoencoder(c=16):
    return WaveAutoencoder(c)


class TimmAttention(nn.Module):
    """timm's vision_transformer.Attention (fused_attn, q_norm/k_norm Identity) as its forward reads."""

    def __init__(self, dim, num_heads, qkv_bias=True, attn_drop=0.0, proj_drop=0.0):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, dim // num_heads
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim, bias=qkv_bias)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj_drop(self.proj(x))


class TimmEagerAttention(TimmAttention):
    """timm's Attention with fused_attn=False: q scaled first, the scores materialized; exporting must stop."""

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * self.head_dim ** -0.5) @ k.transpose(-2, -1)
        x = self.attn_drop(attn.softmax(dim=-1)) @ v
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(B, N, C)))


def timm_eager_attention():
    return TimmEagerAttention(32, 4)


class TimmBlock(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = TimmAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TimmStyleViT(nn.Module):
    """A ViT as timm writes it (and as many hand-written ViTs copy it): PatchEmbed's conv(x)
    .flatten(2).transpose(1, 2), torch.cat with an expanded class-token parameter, + a position
    parameter, blocks of one packed qkv Linear split by reshape/permute/unbind into
    F.scaled_dot_product_attention, a final LayerNorm and a head on the class token."""

    def __init__(self, img=64, patch=8, dim=96, depth=2, heads=4, classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, (img // patch) ** 2 + 1, dim))
        self.blocks = nn.Sequential(*[TimmBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def timm_style_vit(img=64, depth=2):
    return TimmStyleViT(img=img, depth=depth)


class HandViT(nn.Module):
    """A ViT written by hand around nn.TransformerEncoderLayer: a class-token parameter concatenated
    to conv(x).flatten(2).transpose(1, 2), a position parameter added, x[:, 0] into the head."""

    def __init__(self, dim=64, heads=4, patch=8, img=64, layers=2, classes=10):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, (img // patch) ** 2 + 1, dim))
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True,
                                                                        norm_first=True), layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.encoder(x))[:, 0])


def hand_vit():
    return HandViT()


class ConvMixer(nn.Module):
    """ConvMixer (Trockman & Kolter) as its paper's code writes it: a patch stem, depthwise convs with
    padding="same" in a residual, pointwise convs, GELU after every conv, BatchNorm."""

    def __init__(self, dim=64, depth=2, kernel=5, patch=4, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, patch, patch), nn.GELU(), nn.BatchNorm2d(dim))
        self.dw = nn.ModuleList([nn.Sequential(nn.Conv2d(dim, dim, kernel, groups=dim, padding="same"), nn.GELU(), nn.BatchNorm2d(dim))
                                 for _ in range(depth)])
        self.pw = nn.ModuleList([nn.Sequential(nn.Conv2d(dim, dim, 1), nn.GELU(), nn.BatchNorm2d(dim)) for _ in range(depth)])
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, classes))

    def forward(self, x):
        x = self.stem(x)
        for dw, pw in zip(self.dw, self.pw):
            x = pw(x + dw(x))
        return self.head(x)


def conv_mixer():
    return ConvMixer()


class PatchGAN(nn.Module):
    """pix2pix's PatchGAN discriminator: 4x4 strided convs, nn.LeakyReLU(0.2, True), InstanceNorm2d."""

    def __init__(self, c=32):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, c, 4, 2, 1), nn.LeakyReLU(0.2, True),
                                 nn.Conv2d(c, 2 * c, 4, 2, 1), nn.InstanceNorm2d(2 * c), nn.LeakyReLU(0.2, True),
                                 nn.Conv2d(2 * c, 4 * c, 4, 1, 1), nn.InstanceNorm2d(4 * c), nn.LeakyReLU(0.2, True),
                                 nn.Conv2d(4 * c, 1, 4, 1, 1))

    def forward(self, x):
        return self.net(x)


def patchgan():
    return PatchGAN()


class CircularPad(nn.Module):
    """F.pad(mode="circular"): the library pads constant, reflect or replicate; exporting must stop."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        return self.conv(F.pad(x, (1, 1, 1, 1), mode="circular"))


def circular_pad():
    return CircularPad()


class LSTMTagger(nn.Module):
    """nn.LSTM returns (output, (h, c)): the library has no recurrent op; exporting must stop."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.fc = nn.Linear(32, 5)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out)


def lstm_tagger():
    return LSTMTagger()


class BicubicUp(nn.Module):
    """F.interpolate(mode="bicubic"): the library upsamples nearest or bilinear; exporting must stop."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return F.interpolate(self.conv(x), scale_factor=2, mode="bicubic")


def bicubic_up():
    return BicubicUp()


class SeqFirstCumsum(nn.Module):
    """A sequence-first encoder layer then x.cumsum(0) over the tokens: an op the exporter does not
    translate to batch-first shapes (it must stop, naming it)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 4, 32)

    def forward(self, x):
        return self.layer(x).cumsum(0)


def seq_first_cumsum():
    return SeqFirstCumsum()


def seq_first_encoder():
    """nn.TransformerEncoderLayer without batch_first: [L, B, E] tensors; exporting must stop."""
    return nn.Sequential(nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32), 1, enable_nested_tensor=False))


class TokenLM(nn.Module):
    """A small language model on int64 token ids: nn.Embedding, sdpa_transformer's blocks, a final
    LayerNorm and an untied vocabulary head (output [B, T, vocab]): PEFT's lora.Embedding target."""

    def __init__(self, vocab=2000, width=64, heads=4, blocks=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.Sequential(*[SdpaBlock(width, heads, 4 * width) for _ in range(blocks)])
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.ln(self.blocks(self.embed(ids))))


def token_lm(vocab=2000, width=64, heads=4, blocks=2):
    return TokenLM(vocab, width, heads, blocks)


class TokenLayerScale(nn.Module):
    """timm's LayerScale on tokens: gamma of shape (C,) times [B, L, C]: layer_scale(true), the last
    dimension's (the library's layer_scale() scales channels of [C, H, W], a (C, 1, 1) parameter)."""

    def __init__(self, c=16):
        super().__init__()
        self.proj = nn.Linear(c, c)
        self.gamma = nn.Parameter(torch.ones(c))

    def forward(self, x):
        return self.gamma * self.proj(x)


def token_layer_scale():
    return TokenLayerScale()


class LoneCat(nn.Module):
    """torch.cat([x], 1) that starts no dense block (no later cat extends its list): a copy the
    library has no op for, so the export must stop naming it (DenseNet's first cat is recognised
    only with the cats that extend it)."""

    def __init__(self, c=8):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)

    def forward(self, x):
        return torch.relu(torch.cat([self.conv(x)], 1))


def lone_cat():
    return LoneCat()


class UnevenChunk(nn.Module):
    """x.chunk(3, dim=1) of 8 channels (parts of 3, 3 and 2): the library's chunks are equal parts,
    so the export must stop naming the chunk."""

    def __init__(self, c=8):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 1)

    def forward(self, x):
        a, b, c = self.conv(x).chunk(3, dim=1)
        return torch.cat((a, b), 1)


def uneven_chunk():
    return UnevenChunk()


# --- nanoGPT ------------------------------------------------------------------------------------------
# The GPT of Andrej Karpathy's nanoGPT (github.com/karpathy/nanoGPT, model.py, MIT licence), its
# modules and forward as written there (generate(), from_pretrained() and the optimizer helpers
# left out; flash=True: torch 2.x always has scaled_dot_product_attention): the model people copy
# and train with `logits, loss = model(X, Y)`. torch.fx cannot trace it (`b, t = idx.size()` then
# `torch.arange(0, t)`), so gpubudget-export reads it through torch.export (--targets: the ids'
# targets are the model's second input, its loss its own).

class NanoLayerNorm(nn.Module):
    """LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False"""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class NanoCausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, dropout, bias):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head, self.n_embd, self.dropout = n_head, n_embd, dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                                                             is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class NanoMLP(nn.Module):
    def __init__(self, n_embd, dropout, bias):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class NanoBlock(nn.Module):
    def __init__(self, n_embd, n_head, dropout, bias):
        super().__init__()
        self.ln_1 = NanoLayerNorm(n_embd, bias=bias)
        self.attn = NanoCausalSelfAttention(n_embd, n_head, dropout, bias)
        self.ln_2 = NanoLayerNorm(n_embd, bias=bias)
        self.mlp = NanoMLP(n_embd, dropout, bias)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    def __init__(self, block_size, vocab_size, n_layer, n_head, n_embd, dropout, bias):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([NanoBlock(n_embd, n_head, dropout, bias) for _ in range(n_layer)]),
            ln_f=NanoLayerNorm(n_embd, bias=bias),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.block_size, f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])  # inference-time mini-optimization: only the last position
            loss = None
        return logits, loss


def nanogpt(block_size=64, vocab_size=2000, n_layer=2, n_head=4, n_embd=64, dropout=0.0, bias=True):
    return NanoGPT(block_size, vocab_size, n_layer, n_head, n_embd, dropout, bias)


class BufferPositionsGPT(NanoGPT):
    """nanoGPT's modules with its positions sliced from a buffer (t = idx.size(1)) and the logits
    returned: torch.fx traces this one, and its causal SDPA on the packed c_attn is not an FX
    pattern, so the exporter reads it through torch.export (as nanoGPT's own GPT)."""

    def __init__(self):
        super().__init__(64, 2000, 2, 4, 64, 0.0, True)
        self.register_buffer("pos", torch.arange(64), persistent=False)

    def forward(self, idx):
        t = idx.size(1)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(self.pos[:t]))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def buffer_positions_gpt():
    return BufferPositionsGPT()


class TextCNN(nn.Module):
    """Kim (2014)'s sentence CNN as tutorials write it: nn.Embedding, .transpose(1, 2) to [B, E, L],
    one Conv1d per kernel size, F.relu, .max(dim=2)[0] over time, torch.cat, dropout, a Linear."""

    def __init__(self, vocab=2000, dim=64, n=32, kernels=(3, 4, 5), classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.convs = nn.ModuleList([nn.Conv1d(dim, n, k) for k in kernels])
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(n * len(kernels), classes)

    def forward(self, x):
        e = self.emb(x).transpose(1, 2)
        hs = [F.relu(conv(e)).max(dim=2)[0] for conv in self.convs]
        return self.fc(self.drop(torch.cat(hs, dim=1)))


def text_cnn():
    return TextCNN()


class EinsumAttention(nn.Module):
    """vit-pytorch's Attention written without einops: one Linear(D, 3D, bias=False) chunked into
    q, k, v, heads by reshape + transpose, an output Linear with a bias. `mode`: "einsum" (torch.einsum
    scores and output), "matmul" (the same products as @), "sdpa" (F.scaled_dot_product_attention)."""

    def __init__(self, dim, heads, mode="einsum"):
        super().__init__()
        self.heads, self.scale, self.mode = heads, (dim // heads) ** -0.5, mode
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = [t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v)]
        if self.mode == "einsum":
            attn = (torch.einsum("b h i d, b h j d -> b h i j", q, k) * self.scale).softmax(dim=-1)
            out = torch.einsum("bhij,bhjd->bhid", attn, v)
        elif self.mode == "matmul":
            out = (q @ k.transpose(-2, -1) * self.scale).softmax(dim=-1) @ v
        else:
            out = F.scaled_dot_product_attention(q, k, v)
        return self.to_out(out.transpose(1, 2).reshape(b, n, d))


class UnbiasedQkvAttention(nn.Module):
    """Separate q, k, v Linears without a bias, SDPA with dropout in training, an output Linear with one."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = (nn.Linear(dim, dim, bias=False) for _ in range(3))
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = [lin(x).view(b, n, self.heads, -1).transpose(1, 2) for lin in (self.q, self.k, self.v)]
        o = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1 if self.training else 0.0)
        return self.out(o.transpose(1, 2).reshape(b, n, d))


class EinsumTransformer(nn.Module):
    """Pre-norm blocks of an attention (EinsumAttention(mode), or UnbiasedQkvAttention for mode
    "unbiased_qkv") and a GELU MLP over [tokens, 64] features; mean-pooled head."""

    def __init__(self, dim=64, depth=2, heads=4, mode="einsum"):
        super().__init__()
        attention = (lambda: UnbiasedQkvAttention(dim, heads)) if mode == "unbiased_qkv" else (lambda: EinsumAttention(dim, heads, mode))
        self.layers = nn.ModuleList([nn.ModuleList([nn.LayerNorm(dim), attention(), nn.LayerNorm(dim),
                                                    nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))])
                                     for _ in range(depth)])
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        for ln1, attn, ln2, ff in self.layers:
            x = attn(ln1(x)) + x
            x = ff(ln2(x)) + x
        return self.head(x.mean(dim=1))


def einsum_transformer(mode="einsum"):
    return EinsumTransformer(mode=mode)


class CifarBasicBlock(nn.Module):
    """kuangliu/pytorch-cifar's BasicBlock: F.relu(self.bn1(self.conv1(x))), `out += self.shortcut(x)`
    with an empty nn.Sequential() shortcut where the shapes agree."""

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return F.relu(out)


class CifarResNet(nn.Module):
    """kuangliu/pytorch-cifar's ResNet18 for 32x32 images: a 3x3 stem without pooling,
    F.avg_pool2d(out, 4), out.view(out.size(0), -1)."""

    def __init__(self, num_blocks=(2, 2, 2, 2), num_classes=10):
        super().__init__()
        self.in_planes = 64
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.layer1, self.layer2 = self._make_layer(64, num_blocks[0], 1), self._make_layer(128, num_blocks[1], 2)
        self.layer3, self.layer4 = self._make_layer(256, num_blocks[2], 2), self._make_layer(512, num_blocks[3], 2)
        self.linear = nn.Linear(512, num_classes)

    def _make_layer(self, planes, n, stride):
        layers = []
        for s in [stride] + [1] * (n - 1):
            layers.append(CifarBasicBlock(self.in_planes, planes, s))
            self.in_planes = planes
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
        out = F.avg_pool2d(out, 4)
        return self.linear(out.view(out.size(0), -1))


def cifar_resnet18():
    return CifarResNet()


class MixerBlock(nn.Module):
    """MLP-Mixer's block: a token-mixing MLP on the transposed LayerNorm output, then a channel MLP."""

    def __init__(self, tokens, dim):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Linear(2 * tokens, tokens))
        self.channel_mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.token_mlp(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.ln2(x))


class MlpMixer(nn.Module):
    """A small MLP-Mixer: patchifying Conv2d, flatten(2).transpose(1, 2) tokens, mixer blocks, mean pool."""

    def __init__(self, dim=64, patch=4, image=32, depth=2):
        super().__init__()
        self.stem = nn.Conv2d(3, dim, patch, patch)
        self.blocks = nn.Sequential(*[MixerBlock((image // patch) ** 2, dim) for _ in range(depth)])
        self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, 10)

    def forward(self, x):
        x = self.blocks(self.stem(x).flatten(2).transpose(1, 2))
        return self.head(self.ln(x).mean(dim=1))


def mlp_mixer():
    return MlpMixer()


class SequenceClassifier(nn.Module):
    """Token ids -> nn.Embedding + a learned [1, L, D] position parameter -> nn.TransformerEncoder of
    pre-norm (norm_first) batch-first layers -> the first token's features -> Linear."""

    def __init__(self, vocab=2000, dim=64, length=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, length, dim))
        layer = nn.TransformerEncoderLayer(dim, 4, 128, 0.1, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.fc = nn.Linear(dim, 3)

    def forward(self, x, pad=None):
        if self.pad_id is not None:  # the padding mask made from the ids, as BERT-style classifiers do
            pad = x == self.pad_id
        return self.fc(self.enc(self.emb(x) + self.pos, src_key_padding_mask=pad)[:, 0])


def sequence_classifier(padded=False, pad_id=None):
    """padded: called as model(ids, pad) with a [B, L] key padding mask (the factory's flag only names
    the call; forward takes the mask whenever it is given); pad_id: forward makes the mask itself,
    ids == pad_id."""
    m = SequenceClassifier()
    m.pad_id = pad_id
    return m


def keyword_spotter():
    """A 1-D depthwise-separable keyword-spotting CNN over 40 MFCC channels: Conv1d + BatchNorm1d +
    ReLU, depthwise (groups = channels, kernel 9) and pointwise Conv1d pairs, AdaptiveAvgPool1d(1)."""
    def separable(ci, co, stride):
        return nn.Sequential(nn.Conv1d(ci, ci, 9, stride, 4, groups=ci, bias=False), nn.BatchNorm1d(ci), nn.ReLU(),
                             nn.Conv1d(ci, co, 1, bias=False), nn.BatchNorm1d(co), nn.ReLU())
    return nn.Sequential(nn.Conv1d(40, 64, 3, 1, 1), nn.BatchNorm1d(64), nn.ReLU(), separable(64, 64, 1), separable(64, 128, 2),
                         separable(128, 128, 1), separable(128, 256, 2), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(256, 12))


class UNetDoubleConv(nn.Module):
    """milesial/Pytorch-UNet's DoubleConv (unet_parts.py): (Conv2d 3x3 without a bias, BatchNorm2d, ReLU(inplace)) x 2."""

    def __init__(self, i, o, mid=None):
        super().__init__()
        mid = mid or o
        self.double_conv = nn.Sequential(nn.Conv2d(i, mid, 3, padding=1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
                                         nn.Conv2d(mid, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.double_conv(x)


class UNetDown(nn.Module):
    """milesial's Down: MaxPool2d(2), DoubleConv."""

    def __init__(self, i, o):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), UNetDoubleConv(i, o))

    def forward(self, x):
        return self.maxpool_conv(x)


class UNetUp(nn.Module):
    """milesial's Up: a bilinear Upsample (align_corners=True) or ConvTranspose2d(2, 2), x1 padded to
    x2 by amounts computed from their sizes, cat([x2, x1]), DoubleConv."""

    def __init__(self, i, o, bilinear=True):
        super().__init__()
        if bilinear:
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
            self.conv = UNetDoubleConv(i, o, i // 2)
        else:
            self.up = nn.ConvTranspose2d(i, i // 2, 2, 2)
            self.conv = UNetDoubleConv(i, o)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        diff_y = x2.size()[2] - x1.size()[2]
        diff_x = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diff_x // 2, diff_x - diff_x // 2, diff_y // 2, diff_y - diff_y // 2])
        return self.conv(torch.cat([x2, x1], dim=1))


class MilesialUNet(nn.Module):
    """milesial/Pytorch-UNet's UNet (unet_model.py) at `w` base channels (64 there)."""

    def __init__(self, n_channels=3, n_classes=2, bilinear=False, w=16):
        super().__init__()
        factor = 2 if bilinear else 1
        self.inc = UNetDoubleConv(n_channels, w)
        self.down1, self.down2, self.down3 = UNetDown(w, 2 * w), UNetDown(2 * w, 4 * w), UNetDown(4 * w, 8 * w)
        self.down4 = UNetDown(8 * w, 16 * w // factor)
        self.up1, self.up2 = UNetUp(16 * w, 8 * w // factor, bilinear), UNetUp(8 * w, 4 * w // factor, bilinear)
        self.up3, self.up4 = UNetUp(4 * w, 2 * w // factor, bilinear), UNetUp(2 * w, w, bilinear)
        self.outc = nn.Conv2d(w, n_classes, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x = self.up1(self.down4(x4), x4)
        x = self.up2(x, x3)
        x = self.up3(x, x2)
        return self.outc(self.up4(x, x1))


def milesial_unet(bilinear=False):
    return MilesialUNet(bilinear=bilinear)


def dcgan_generator(nz=100, ngf=32, nc=3):
    """The PyTorch examples' DCGAN generator (ngf 32): ConvTranspose2d(4, 2, 1) without a bias, BatchNorm2d, ReLU(True), Tanh."""
    return nn.Sequential(nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())


def dcgan_discriminator(ndf=32, nc=3):
    """The PyTorch examples' DCGAN discriminator (ndf 32): strided Conv2d, BatchNorm2d, LeakyReLU(0.2, inplace=True), Sigmoid."""
    return nn.Sequential(nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid())


class KarpathyHead(nn.Module):
    """One head of Karpathy's "Let's build GPT" (ng-video-lecture gpt.py): key, query, value
    Linears without a bias, a tril buffer, masked_fill(tril == 0, -inf), softmax, dropout."""

    def __init__(self, n_embd, head_size, block_size, dropout):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        _, T, _ = x.shape
        k, q = self.key(x), self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = self.dropout(F.softmax(wei.masked_fill(self.tril[:T, :T] == 0, float("-inf")), dim=-1))
        return wei @ self.value(x)


class KarpathyMultiHead(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.heads = nn.ModuleList([KarpathyHead(n_embd, n_embd // n_head, block_size, dropout) for _ in range(n_head)])
        self.proj = nn.Linear(n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.proj(torch.cat([h(x) for h in self.heads], dim=-1)))


class KarpathyBlock(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.sa = KarpathyMultiHead(n_embd, n_head, block_size, dropout)
        self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout))
        self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        return x + self.ffwd(self.ln2(x))


class KarpathyGPT(nn.Module):
    """The lecture's GPTLanguageModel called without targets: token and position embeddings
    (torch.arange(T): torch.fx cannot trace it, torch.export can), blocks, ln_f, lm_head."""

    def __init__(self, vocab_size, n_embd, n_head, n_layer, block_size, dropout):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[KarpathyBlock(n_embd, n_head, block_size, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx):
        _, T = idx.shape
        x = self.token_embedding_table(idx) + self.position_embedding_table(torch.arange(T, device=idx.device))
        return self.lm_head(self.ln_f(self.blocks(x)))


def karpathy_gpt(vocab_size=65, n_embd=384, n_head=6, n_layer=6, block_size=256, dropout=0.2):
    """The lecture's hyperparameters (the tiny Shakespeare run): 10,788,929 parameters."""
    return KarpathyGPT(vocab_size, n_embd, n_head, n_layer, block_size, dropout)


class IndexedSqueezeExcitation(nn.Module):
    """A squeeze-excitation written with None-indexing: `x * w[:, :, None, None]` (new dimensions
    of 1: a view), its gate from Linears on `F.adaptive_avg_pool2d(x, 1).flatten(1)`."""

    def __init__(self, c, r=4):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(c, c // r), nn.Linear(c // r, c)

    def forward(self, x):
        w = torch.sigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(x, 1).flatten(1)))))
        return x * w[:, :, None, None]


def indexed_se_net(c=64):
    return nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), IndexedSqueezeExcitation(c), nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
                         IndexedSqueezeExcitation(c), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 10))


class ResidualRegressor(nn.Module):
    """Pre-norm residual MLP blocks (LayerNorm, Linear, SiLU, Dropout, Linear) and a one-number
    head, `.squeeze(-1)` to [B] (a per-sample scalar: the library's [1])."""

    def __init__(self, width=512, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 4 * width), nn.SiLU(), nn.Dropout(0.1),
                                                   nn.Linear(4 * width, width)) for _ in range(depth)])
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x).squeeze(-1)


def residual_regressor():
    return ResidualRegressor()


class ConvNeXtLayerNorm(nn.Module):
    """facebookresearch/ConvNeXt's LayerNorm (models/convnext.py): F.layer_norm on channels-last
    input, or written out in elementwise ops over the channels of [N, C, H, W] (channels_first)."""

    def __init__(self, normalized_shape, eps=1e-6, data_format="channels_last"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps, self.data_format, self.normalized_shape = eps, data_format, (normalized_shape,)

    def forward(self, x):
        if self.data_format == "channels_last":
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class ConvNeXtBlock(nn.Module):
    """facebookresearch/ConvNeXt's Block: depthwise 7x7, permute to channels-last, LayerNorm, an MLP
    of Linears, `self.gamma * x` with a (C,) gamma, permute back, the residual (drop path 0)."""

    def __init__(self, dim, layer_scale_init_value=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = ConvNeXtLayerNorm(dim, eps=1e-6)
        self.pwconv1, self.act, self.pwconv2 = nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale_init_value * torch.ones((dim)), requires_grad=True)

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.gamma * self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


class OfficialConvNeXt(nn.Module):
    """A two-stage ConvNeXt from facebookresearch/ConvNeXt's parts: the 4x4 stem and the
    downsampling layer with the channels_first LayerNorm, two Blocks a stage, a mean-pooled head."""

    def __init__(self, dims=(32, 64)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), ConvNeXtLayerNorm(dims[0], data_format="channels_first"))
        self.stage1 = nn.Sequential(ConvNeXtBlock(dims[0]), ConvNeXtBlock(dims[0]))
        self.down = nn.Sequential(ConvNeXtLayerNorm(dims[0], data_format="channels_first"), nn.Conv2d(dims[0], dims[1], 2, 2))
        self.stage2 = nn.Sequential(ConvNeXtBlock(dims[1]), ConvNeXtBlock(dims[1]))
        self.norm, self.head = nn.LayerNorm(dims[1]), nn.Linear(dims[1], 10)

    def forward(self, x):
        x = self.stage2(self.down(self.stage1(self.stem(x))))
        return self.head(self.norm(x.mean([-2, -1])))


def official_convnext():
    return OfficialConvNeXt()


class Chomp1d(nn.Module):
    """locuslab/TCN's Chomp1d: x[:, :, :-k].contiguous() (the causal padding's right side dropped)."""

    def __init__(self, chomp_size):
        super().__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    """locuslab/TCN's TemporalBlock: two dilated causal Conv1d (weight_norm in the repository: `wn`),
    each chomped, ReLU, dropout; a 1x1 downsample on the residual when the widths differ."""

    def __init__(self, n_in, n_out, kernel, dilation, dropout=0.2, wn=False):
        super().__init__()
        pad = (kernel - 1) * dilation
        # wn: True for the repository's torch.nn.utils.weight_norm, "parametrization" for PyTorch's newer form
        wrap = (torch.nn.utils.parametrizations.weight_norm if wn == "parametrization" else torch.nn.utils.weight_norm) if wn else (lambda m: m)
        self.net = nn.Sequential(wrap(nn.Conv1d(n_in, n_out, kernel, padding=pad, dilation=dilation)), Chomp1d(pad), nn.ReLU(), nn.Dropout(dropout),
                                 wrap(nn.Conv1d(n_out, n_out, kernel, padding=pad, dilation=dilation)), Chomp1d(pad), nn.ReLU(), nn.Dropout(dropout))
        self.downsample = nn.Conv1d(n_in, n_out, 1) if n_in != n_out else None
        self.relu = nn.ReLU()

    def forward(self, x):
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(self.net(x) + res)


def tcn(channels=(32, 32, 32), kernel=2, weight_norm=False):
    """locuslab/TCN's TemporalConvNet over 8 input channels (without its weight_norm by default;
    weight_norm=True: the repository's torch.nn.utils.weight_norm, "parametrization": PyTorch's
    newer torch.nn.utils.parametrizations.weight_norm)."""
    return nn.Sequential(*[TemporalBlock(8 if i == 0 else channels[i - 1], c, kernel, 2 ** i, wn=weight_norm) for i, c in enumerate(channels)])


class PointNetClassifier(nn.Module):
    """PointNet's classification head without its input/feature transforms (T-Nets use bmm):
    shared MLPs as Conv1d(·, ·, 1) + BatchNorm1d over [3, N] points, torch.max(x, 2, keepdim=True)[0],
    view(-1, 1024), Linear + BatchNorm1d + dropout, log_softmax."""

    def __init__(self, k=10):
        super().__init__()
        self.conv1, self.conv2, self.conv3 = nn.Conv1d(3, 64, 1), nn.Conv1d(64, 128, 1), nn.Conv1d(128, 1024, 1)
        self.bn1, self.bn2, self.bn3 = nn.BatchNorm1d(64), nn.BatchNorm1d(128), nn.BatchNorm1d(1024)
        self.fc1, self.fc2, self.fc3 = nn.Linear(1024, 512), nn.Linear(512, 256), nn.Linear(256, k)
        self.bn4, self.bn5, self.dropout = nn.BatchNorm1d(512), nn.BatchNorm1d(256), nn.Dropout(p=0.3)

    def forward(self, x):
        x = F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))
        x = torch.max(self.bn3(self.conv3(x)), 2, keepdim=True)[0].view(-1, 1024)
        x = F.relu(self.bn5(self.dropout(self.fc2(F.relu(self.bn4(self.fc1(x)))))))
        return F.log_softmax(self.fc3(x), dim=1)


def pointnet():
    return PointNetClassifier()


# --- batched products of two activations (torch.bmm / torch.matmul: parallel(merge_kind::matmul)) ---

# heykkro/pytorch-self-attention-GAN sagan_models.py Self_Attn (returns out only; the repo also returns the attention map)
class Self_Attn(nn.Module):
    def __init__(self, in_dim):
        super().__init__()
        self.query_conv = nn.Conv2d(in_dim, in_dim // 8, kernel_size=1)
        self.key_conv = nn.Conv2d(in_dim, in_dim // 8, kernel_size=1)
        self.value_conv = nn.Conv2d(in_dim, in_dim, kernel_size=1)
        self.gamma = nn.Parameter(torch.zeros(1))
        self.softmax = nn.Softmax(dim=-1)
    def forward(self, x):
        m_batchsize, C, width, height = x.size()
        proj_query = self.query_conv(x).view(m_batchsize, -1, width * height).permute(0, 2, 1)
        proj_key = self.key_conv(x).view(m_batchsize, -1, width * height)
        energy = torch.bmm(proj_query, proj_key)
        attention = self.softmax(energy)
        proj_value = self.value_conv(x).view(m_batchsize, -1, width * height)
        out = torch.bmm(proj_value, attention.permute(0, 2, 1))
        out = out.view(m_batchsize, C, width, height)
        out = self.gamma * out + x
        return out

class SaganDiscriminator(nn.Module):
    def __init__(self, conv_dim=32):
        super().__init__()
        self.l1 = nn.Sequential(nn.Conv2d(3, conv_dim, 4, 2, 1), nn.LeakyReLU(0.1))
        self.l2 = nn.Sequential(nn.Conv2d(conv_dim, conv_dim * 2, 4, 2, 1), nn.LeakyReLU(0.1))
        self.l3 = nn.Sequential(nn.Conv2d(conv_dim * 2, conv_dim * 4, 4, 2, 1), nn.LeakyReLU(0.1))
        self.attn1 = Self_Attn(conv_dim * 4)
        self.l4 = nn.Sequential(nn.Conv2d(conv_dim * 4, conv_dim * 8, 4, 2, 1), nn.LeakyReLU(0.1))
        self.attn2 = Self_Attn(conv_dim * 8)
        self.last = nn.Conv2d(conv_dim * 8, 1, 4)
    def forward(self, x):
        out = self.l3(self.l2(self.l1(x)))
        out = self.attn1(out)
        out = self.l4(out)
        out = self.attn2(out)
        return self.last(out).squeeze()

def sagan_discriminator(): return SaganDiscriminator()

# AlexHex7/Non-local_pytorch lib/non_local_embedded_gaussian.py (2-D, sub_sample, bn_layer)
class NONLocalBlock2D(nn.Module):
    def __init__(self, in_channels, inter_channels=None, sub_sample=True, bn_layer=True):
        super().__init__()
        self.in_channels = in_channels
        self.inter_channels = inter_channels or max(in_channels // 2, 1)
        self.g = nn.Conv2d(in_channels, self.inter_channels, 1)
        if bn_layer:
            self.W = nn.Sequential(nn.Conv2d(self.inter_channels, in_channels, 1), nn.BatchNorm2d(in_channels))
            nn.init.constant_(self.W[1].weight, 0); nn.init.constant_(self.W[1].bias, 0)
        else:
            self.W = nn.Conv2d(self.inter_channels, in_channels, 1)
        self.theta = nn.Conv2d(in_channels, self.inter_channels, 1)
        self.phi = nn.Conv2d(in_channels, self.inter_channels, 1)
        if sub_sample:
            self.g = nn.Sequential(self.g, nn.MaxPool2d(kernel_size=(2, 2)))
            self.phi = nn.Sequential(self.phi, nn.MaxPool2d(kernel_size=(2, 2)))
    def forward(self, x):
        batch_size = x.size(0)
        g_x = self.g(x).view(batch_size, self.inter_channels, -1)
        g_x = g_x.permute(0, 2, 1)
        theta_x = self.theta(x).view(batch_size, self.inter_channels, -1)
        theta_x = theta_x.permute(0, 2, 1)
        phi_x = self.phi(x).view(batch_size, self.inter_channels, -1)
        f = torch.matmul(theta_x, phi_x)
        f_div_C = F.softmax(f, dim=-1)
        y = torch.matmul(f_div_C, g_x)
        y = y.permute(0, 2, 1).contiguous()
        y = y.view(batch_size, self.inter_channels, *x.size()[2:])
        W_y = self.W(y)
        z = W_y + x
        return z

# a small MNIST network in the repository's demo_MNIST manner, with the block after each of the first two conv stages
class NonLocalNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(1, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            NONLocalBlock2D(32),
            nn.Conv2d(32, 64, 3, 1, 1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            NONLocalBlock2D(64),
            nn.Conv2d(64, 128, 3, 1, 1), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Sequential(nn.Linear(128 * 3 * 3, 256), nn.ReLU(), nn.Dropout(0.5), nn.Linear(256, 10))
    def forward(self, x):
        x = self.convs(x)
        return self.fc(x.view(x.size(0), -1))

def nonlocal_net(): return NonLocalNet()

# Bilinear CNN (Lin et al.; HaoMood/bilinear-cnn's BCNN head on a small conv trunk)
class BilinearCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(inplace=True))
        self.fc = nn.Linear(128 * 128, 10)
    def forward(self, x):
        N = x.size(0)
        x = self.features(x)
        x = x.view(N, 128, 8 * 8)
        x = torch.bmm(x, torch.transpose(x, 1, 2)) / (8 * 8)
        x = x.view(N, 128 * 128)
        x = F.normalize(x)
        return self.fc(x)

def bilinear_cnn(): return BilinearCNN()


# ajbrock/BigGAN-PyTorch layers.py Attention, with nn.Conv2d for its SNConv2d
class BigGANAttention(nn.Module):
    def __init__(self, ch, which_conv=nn.Conv2d):
        super().__init__()
        self.ch = ch
        self.theta = which_conv(self.ch, self.ch // 8, kernel_size=1, padding=0, bias=False)
        self.phi = which_conv(self.ch, self.ch // 8, kernel_size=1, padding=0, bias=False)
        self.g = which_conv(self.ch, self.ch // 2, kernel_size=1, padding=0, bias=False)
        self.o = which_conv(self.ch // 2, self.ch, kernel_size=1, padding=0, bias=False)
        self.gamma = nn.Parameter(torch.tensor(0.), requires_grad=True)
    def forward(self, x, y=None):
        theta = self.theta(x)
        phi = F.max_pool2d(self.phi(x), [2, 2])
        g = F.max_pool2d(self.g(x), [2, 2])
        theta = theta.view(-1, self.ch // 8, x.shape[2] * x.shape[3])
        phi = phi.view(-1, self.ch // 8, x.shape[2] * x.shape[3] // 4)
        g = g.view(-1, self.ch // 2, x.shape[2] * x.shape[3] // 4)
        beta = F.softmax(torch.bmm(theta.transpose(1, 2), phi), -1)
        o = self.o(torch.bmm(g, beta.transpose(1, 2)).view(-1, self.ch // 2, x.shape[2], x.shape[3]))
        return self.gamma * o + x

class BigGANDisc(nn.Module):
    def __init__(self, ch=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, ch, 3, 1, 1), nn.ReLU(), nn.AvgPool2d(2))
        self.b1 = nn.Sequential(nn.Conv2d(ch, 2 * ch, 3, 1, 1), nn.ReLU(), nn.AvgPool2d(2))
        self.attn = BigGANAttention(2 * ch)
        self.b2 = nn.Sequential(nn.Conv2d(2 * ch, 4 * ch, 3, 1, 1), nn.ReLU(), nn.AvgPool2d(2))
        self.linear = nn.Linear(4 * ch, 1)
    def forward(self, x):
        h = self.b2(self.attn(self.b1(self.stem(x))))
        h = torch.sum(F.relu(h), [2, 3])
        return self.linear(h)

def biggan_discriminator(): return BigGANDisc()

# a U-Net as many repositories write its up step: resize when the skip's size differs (control flow on sizes)
class Up(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cin // 2, 2, stride=2)
        self.conv = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))
    def forward(self, x, skip):
        x = self.up(x)
        if x.shape[-2:] != skip.shape[-2:]:
            x = F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
        return self.conv(torch.cat([skip, x], dim=1))

class SizeCheckedUNet(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.inc = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(inplace=True))
        self.d1 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(c, 2 * c, 3, padding=1), nn.BatchNorm2d(2 * c), nn.ReLU(inplace=True))
        self.d2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(2 * c, 4 * c, 3, padding=1), nn.BatchNorm2d(4 * c), nn.ReLU(inplace=True))
        self.u1 = Up(4 * c, 2 * c)
        self.u2 = Up(2 * c, c)
        self.outc = nn.Conv2d(c, 2, 1)
    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.d1(x1)
        x3 = self.d2(x2)
        return self.outc(self.u2(self.u1(x3, x2), x1))

def size_checked_unet(): return SizeCheckedUNet()


# jik876/hifi-gan models.py's Generator (ResBlock1), its convolutions under weight_norm, at a small
# size: 80 mel bins, upsample_initial_channel 128, upsample rates (8, 4), kernels (16, 8),
# resblock kernels (3, 7) with dilations (1, 3, 5)
LRELU_SLOPE = 0.1


class ResBlock1(nn.Module):
    def __init__(self, channels, kernel_size=3, dilation=(1, 3, 5)):
        super().__init__()
        from torch.nn.utils import weight_norm
        pad = lambda k, d: int((k * d - d) / 2)  # noqa: E731 (hifi-gan's get_padding)
        self.convs1 = nn.ModuleList([weight_norm(nn.Conv1d(channels, channels, kernel_size, 1, dilation=d, padding=pad(kernel_size, d)))
                                     for d in dilation])
        self.convs2 = nn.ModuleList([weight_norm(nn.Conv1d(channels, channels, kernel_size, 1, dilation=1, padding=pad(kernel_size, 1)))
                                     for _ in dilation])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = F.leaky_relu(x, LRELU_SLOPE)
            xt = c1(xt)
            xt = F.leaky_relu(xt, LRELU_SLOPE)
            xt = c2(xt)
            x = xt + x
        return x


class HifiGanGenerator(nn.Module):
    def __init__(self, mels=80, initial=128, rates=(8, 4), kernels=(16, 8), res_kernels=(3, 7), dilations=((1, 3, 5), (1, 3, 5))):
        super().__init__()
        from torch.nn.utils import weight_norm
        self.num_kernels, self.num_upsamples = len(res_kernels), len(rates)
        self.conv_pre = weight_norm(nn.Conv1d(mels, initial, 7, 1, padding=3))
        self.ups = nn.ModuleList([weight_norm(nn.ConvTranspose1d(initial // (2 ** i), initial // (2 ** (i + 1)), k, u, padding=(k - u) // 2))
                                  for i, (u, k) in enumerate(zip(rates, kernels))])
        self.resblocks = nn.ModuleList([ResBlock1(initial // (2 ** (i + 1)), k, d) for i in range(len(rates))
                                        for k, d in zip(res_kernels, dilations)])
        self.conv_post = weight_norm(nn.Conv1d(initial // (2 ** len(rates)), 1, 7, 1, padding=3))

    def forward(self, x):
        x = self.conv_pre(x)
        for i in range(self.num_upsamples):
            x = F.leaky_relu(x, LRELU_SLOPE)
            x = self.ups[i](x)
            xs = None
            for j in range(self.num_kernels):
                if xs is None:
                    xs = self.resblocks[i * self.num_kernels + j](x)
                else:
                    xs += self.resblocks[i * self.num_kernels + j](x)
            x = xs / self.num_kernels
        x = F.leaky_relu(x)
        x = self.conv_post(x)
        return torch.tanh(x)


def hifigan_generator():
    return HifiGanGenerator()


def weight_normed_mlp():
    """weight_norm on a Linear: the exporter's weight_norm is a convolution's (a stop naming it)."""
    return nn.Sequential(torch.nn.utils.weight_norm(nn.Linear(8, 8)), nn.ReLU())


# elementwise math written by hand (op_rules.md 2.6 #62): minGPT's / transformers' NewGELUActivation
# and Llama's RMSNorm as modeling_llama.py writes it, in a residual MLP stack over tokens
class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class HandRMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class HandWrittenMLPBlock(nn.Module):
    def __init__(self, d=64, hidden=256):
        super().__init__()
        self.norm, self.fc, self.act, self.proj = HandRMSNorm(d), nn.Linear(d, hidden), NewGELU(), nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.proj(self.act(self.fc(self.norm(x))))


def hand_written_mlp(blocks=3):
    return nn.Sequential(*[HandWrittenMLPBlock() for _ in range(blocks)])


class DifferenceBlock(nn.Module):
    """A difference of two convolutions of one input (a learned difference-of-Gaussians), then
    |.|: tensor - tensor (SubBackward0 negates the second gradient) and torch.abs."""
    def __init__(self, c):
        super().__init__()
        self.narrow_conv, self.wide_conv = nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, c, 5, padding=2)

    def forward(self, x):
        return torch.abs(self.narrow_conv(x) - self.wide_conv(x))


def difference_cnn():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), DifferenceBlock(16), nn.MaxPool2d(2), DifferenceBlock(16),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


# normalization and other arithmetic written out with tensors on both sides (op_rules.md 2.6 #63):
# harvardnlp/annotated-transformer's LayerNorm (the_annotated_transformer.py, as written there:
# x.std(-1), a broadcast subtract and divide, (C,) gain and bias) in its SublayerConnection around
# its PositionwiseFeedForward
class AnnotatedLayerNorm(nn.Module):
    "Construct a layernorm module (See citation for details)."
    def __init__(self, features, eps=1e-6):
        super().__init__()
        self.a_2 = nn.Parameter(torch.ones(features))
        self.b_2 = nn.Parameter(torch.zeros(features))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return self.a_2 * (x - mean) / (std + self.eps) + self.b_2


class SublayerConnection(nn.Module):
    def __init__(self, size, dropout):
        super().__init__()
        self.norm = AnnotatedLayerNorm(size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer):
        return x + self.dropout(sublayer(self.norm(x)))


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(self.w_1(x).relu()))


class FeedForwardLayer(nn.Module):
    def __init__(self, size, feed_forward, dropout):
        super().__init__()
        self.feed_forward = feed_forward
        self.sublayer = SublayerConnection(size, dropout)

    def forward(self, x):
        return self.sublayer(x, self.feed_forward)


def annotated_ff_stack(d=256, ff=1024, n=3):
    return nn.Sequential(*[FeedForwardLayer(d, PositionwiseFeedForward(d, ff, 0.1), 0.1) for _ in range(n)], AnnotatedLayerNorm(d))


class StyleNormalization(nn.Module):
    """pytorch/tutorials advanced_source/neural_style_tutorial.py's Normalization: plain tensor
    attributes (no buffers), (img - mean) / std."""
    def __init__(self, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)):
        super().__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


def normalized_cnn():
    return nn.Sequential(StyleNormalization(), nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


class Maxout(nn.Module):
    """Goodfellow et al.'s maxout of two affine maps, torch.maximum (MaximumBackward0 keeps both)."""
    def __init__(self, i, o):
        super().__init__()
        self.a, self.b = nn.Linear(i, o), nn.Linear(i, o)

    def forward(self, x):
        return torch.maximum(self.a(x), self.b(x))


def maxout_mlp():
    return nn.Sequential(nn.Flatten(), Maxout(784, 512), nn.Dropout(0.2), Maxout(512, 256), nn.Linear(256, 10))


class WrittenSoftmax(nn.Module):
    """A softmax over the last dimension written out: e / e.sum(-1, keepdim=True)."""
    def forward(self, x):
        e = torch.exp(x)
        return e / e.sum(-1, keepdim=True)


def written_softmax_mlp():
    return nn.Sequential(nn.Linear(64, 256), WrittenSoftmax(), nn.Linear(256, 64))


# held out (no rule set on them): an instance norm written out with x.var over (H, W) and a
# registered-buffer input normalization
class WrittenInstanceNorm(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        mu = x.mean(dim=(2, 3), keepdim=True)
        var = x.var(dim=(2, 3), keepdim=True, unbiased=False)
        return (x - mu) / torch.sqrt(var + self.eps)


class BufferNormalization(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, x):
        return (x - self.mean) / self.std


def written_instance_norm_cnn():
    return nn.Sequential(BufferNormalization(), nn.Conv2d(3, 32, 3, padding=1), WrittenInstanceNorm(), nn.ReLU(),
                         nn.Conv2d(32, 32, 3, padding=1), WrittenInstanceNorm(), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


class Reciprocal(nn.Module):
    def forward(self, x):
        return 1.0 / x


def number_over_tensor():
    """`1.0 / x`: no gpubudget op (x.reciprocal() is elementwise(unary_fn::reciprocal)): a stop naming it."""
    return nn.Sequential(nn.Linear(8, 8), Reciprocal())


# ResearchingDexter/SKNet_pytorch's SKConv (sknet.py, as written there): two dilated grouped
# branches cat and viewed to [N, M, C, H, W], summed, squeezed, M attention vectors cat, viewed,
# nn.Softmax(dim=1) over the branches (softmax(0) per sample), the weighted sum over M
class SKConv(nn.Module):
    def __init__(self, features, M=2, G=32, r=16, stride=1, L=32):
        super().__init__()
        d = max(int(features / r), L)
        self.M = M
        self.features = features
        self.convs = nn.ModuleList([])
        for i in range(M):
            self.convs.append(nn.Sequential(
                nn.Conv2d(features, features, kernel_size=3, stride=stride, padding=1 + i, dilation=1 + i, groups=G, bias=False),
                nn.BatchNorm2d(features),
                nn.ReLU(inplace=True)))
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Sequential(nn.Conv2d(features, d, kernel_size=1, stride=1, bias=False), nn.BatchNorm2d(d), nn.ReLU(inplace=True))
        self.fcs = nn.ModuleList([])
        for i in range(M):
            self.fcs.append(nn.Conv2d(d, features, kernel_size=1, stride=1))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        batch_size = x.shape[0]
        feats = [conv(x) for conv in self.convs]
        feats = torch.cat(feats, dim=1)
        feats = feats.view(batch_size, self.M, self.features, feats.shape[2], feats.shape[3])
        feats_U = torch.sum(feats, dim=1)
        feats_S = self.gap(feats_U)
        feats_Z = self.fc(feats_S)
        attention_vectors = [fc(feats_Z) for fc in self.fcs]
        attention_vectors = torch.cat(attention_vectors, dim=1)
        attention_vectors = attention_vectors.view(batch_size, self.M, self.features, 1, 1)
        attention_vectors = self.softmax(attention_vectors)
        feats_V = torch.sum(feats * attention_vectors, dim=1)
        return feats_V


def sk_net():
    return nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), SKConv(64), nn.MaxPool2d(2), SKConv(64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


class StackedBranches(nn.Module):
    """Three kernel sizes on one input averaged through torch.stack(..., dim=1).mean(1)."""
    def __init__(self, c):
        super().__init__()
        self.narrow, self.middle, self.wide = nn.Conv2d(c, c, 1), nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, c, 5, padding=2)

    def forward(self, x):
        return torch.stack([self.narrow(x), self.middle(x), self.wide(x)], dim=1).mean(1)


def stacked_branches_net():
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), StackedBranches(32), nn.ReLU(), nn.MaxPool2d(2), StackedBranches(32), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


# --- minGPT -----------------------------------------------------------------------------------------
# Andrej Karpathy's minGPT (github.com/karpathy/minGPT, mingpt/model.py, MIT licence): its NewGELU,
# its CausalSelfAttention (packed c_attn split, q @ k.transpose(-2, -1) * (1 / sqrt(d)), masked_fill
# from its registered tril buffer, softmax, dropout, @ v), Block (its mlpf lambda) and GPT.forward(idx,
# targets) as written there (configure_optimizers, generate and from_pretrained left out; the
# 'gpt-nano' sizes at block 64, dropout 0.1): read through torch.export (--targets).
class MinNewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class MinCausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, attn_pdrop, resid_pdrop):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y


class MinBlock(nn.Module):
    def __init__(self, n_embd, n_head, block_size, attn_pdrop, resid_pdrop):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = MinCausalSelfAttention(n_embd, n_head, block_size, attn_pdrop, resid_pdrop)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(
            c_fc=nn.Linear(n_embd, 4 * n_embd),
            c_proj=nn.Linear(4 * n_embd, n_embd),
            act=MinNewGELU(),
            dropout=nn.Dropout(resid_pdrop),
        ))
        m = self.mlp
        self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlpf(self.ln_2(x))
        return x


class MinGPT(nn.Module):
    def __init__(self, vocab_size=2000, block_size=64, n_layer=2, n_head=4, n_embd=64, embd_pdrop=0.1, resid_pdrop=0.1, attn_pdrop=0.1):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(embd_pdrop),
            h=nn.ModuleList([MinBlock(n_embd, n_head, block_size, attn_pdrop, resid_pdrop) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.block_size, f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def mingpt():
    return MinGPT()


# the annotated transformer's MultiHeadedAttention as written there: `self.attn = p_attn` keeps
# every layer's attention probabilities on the module until the next forward (an expected stop)
def annotated_attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadedAttention(nn.Module):
    def __init__(self, h, d_model, dropout=0.1, keep_attention=True):
        super().__init__()
        self.keep_attention = keep_attention  # False: the assignment deleted, as the export's stop asks
        assert d_model % h == 0
        self.d_k = d_model // h
        self.h = h
        self.linears = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(4)])
        self.attn = None
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        nbatches = query.size(0)
        query, key, value = [lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2) for lin, x in zip(self.linears, (query, key, value))]
        if self.keep_attention:
            x, self.attn = annotated_attention(query, key, value, mask=mask, dropout=self.dropout)
        else:
            x, _ = annotated_attention(query, key, value, mask=mask, dropout=self.dropout)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        del query
        del key
        del value
        return self.linears[-1](x)


class AnnotatedSelfAttentionLayer(nn.Module):
    def __init__(self, d_model=64, h=4, keep_attention=True):
        super().__init__()
        self.self_attn = MultiHeadedAttention(h, d_model, keep_attention=keep_attention)
        self.sublayer = SublayerConnection(d_model, 0.1)

    def forward(self, x):
        return self.sublayer(x, lambda x: self.self_attn(x, x, x))


def annotated_attention_layer(keep_attention=True, d_model=64, layers=1):
    """The annotated transformer's self-attention sublayers; keep_attention=False: without the
    `self.attn = p_attn` that keeps each layer's probabilities (its `d_k = query.size(-1)` beside
    the scores is a size query, not a second use)."""
    return nn.Sequential(*[AnnotatedSelfAttentionLayer(d_model, 4, keep_attention) for _ in range(layers)], AnnotatedLayerNorm(d_model))


# timm's DropPath (timm/layers/drop.py, as written there) in pre-norm MLP blocks, with rising drop
# rates as ViTs and ConvNeXts set them; and the older form many repositories still copy
# (`keep_prob + torch.rand(shape)`, `floor_()`, `x.div(keep_prob) * random_tensor`) in a residual CNN
def timm_drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0. or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)  # work with diff dim tensors, not just 2D ConvNets
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


def old_drop_path(x, drop_prob: float = 0., training: bool = False):
    if drop_prob == 0. or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
    random_tensor.floor_()  # binarize
    output = x.div(keep_prob) * random_tensor
    return output


class DropPath(nn.Module):
    def __init__(self, drop_prob=0., old=False):
        super().__init__()
        self.drop_prob, self.old = drop_prob, old

    def forward(self, x):
        return old_drop_path(x, self.drop_prob, self.training) if self.old else timm_drop_path(x, self.drop_prob, self.training)


class DropPathMLPBlock(nn.Module):
    def __init__(self, d, p):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1, self.act, self.fc2 = nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)
        self.drop_path = DropPath(p)

    def forward(self, x):
        return x + self.drop_path(self.fc2(self.act(self.fc1(self.norm(x)))))


def drop_path_mlp(d=128, blocks=4):
    return nn.Sequential(*[DropPathMLPBlock(d, 0.05 * (i + 1)) for i in range(blocks)])


class DropPathConvBlock(nn.Module):
    def __init__(self, c, p):
        super().__init__()
        self.conv1, self.bn1, self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.drop_path = DropPath(p, old=True)

    def forward(self, x):
        return torch.relu(x + self.drop_path(self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))))


def old_drop_path_cnn():
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), DropPathConvBlock(32, 0.1), DropPathConvBlock(32, 0.2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


class GlobalMax(nn.Module):
    def forward(self, x):
        return torch.max(x)


def global_max_head():
    """torch.max(x) over all elements: an expected stop."""
    return nn.Sequential(nn.Linear(16, 16), GlobalMax())


class RecursiveConvNet(nn.Module):
    """A deeply-recursive convolutional network (DRCN's inference net, Kim et al. 2016): one 3x3
    convolution applied `recursions` times, the same weights each time (shared(id, ...) per call)."""
    def __init__(self, channels=64, recursions=8):
        super().__init__()
        self.embed = nn.Conv2d(1, channels, 3, padding=1)
        self.recursive = nn.Conv2d(channels, channels, 3, padding=1)
        self.reconstruct = nn.Conv2d(channels, 1, 3, padding=1)
        self.recursions = recursions

    def forward(self, x):
        h = torch.relu(self.embed(x))
        for _ in range(self.recursions):
            h = torch.relu(self.recursive(h))
        return self.reconstruct(h)


def recursive_conv_net():
    return RecursiveConvNet()


# the PyTorch tutorial's spatial transformer network (intermediate/spatial_transformer_tutorial.py, as
# written there): a localization net and fc_loc predict theta, F.affine_grid(theta, x.size()) and
# F.grid_sample(x, grid) resample the input, then the MNIST classifier
class SpatialTransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 3 * 3, 32),
            nn.ReLU(True),
            nn.Linear(32, 3 * 2)
        )
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size())
        x = F.grid_sample(x, grid)
        return x

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def spatial_transformer_net():
    return SpatialTransformerNet()


# Auxiliary outputs, as the models train: torchvision's GoogLeNet and Inception-v3 in train() return
# (logits, aux...) (GoogLeNetOutputs, InceptionOutputs), its FCN with aux_loss=True {"out", "aux"},
# the aux classifier run after the main one on layer3's features (auxiliary_output_last)
def googlenet_aux():
    import torchvision
    return torchvision.models.googlenet(aux_logits=True, init_weights=False)


def inception_v3_aux():
    import torchvision
    return torchvision.models.inception_v3(aux_logits=True, init_weights=False)


def fcn_resnet50_aux(aux_loss=True):
    import torchvision
    return torchvision.models.segmentation.fcn_resnet50(weights=None, weights_backbone=None, aux_loss=aux_loss)


class SideHeadNet(nn.Module):
    """A CNN with a side classifier after its second stage (deep supervision), returned after the
    main output: `return self.head(x), self.side(mid)`; `last`: the side head runs after the main
    head (FCN's order), `mid` held until then."""

    def __init__(self, classes=10, last=False):
        super().__init__()
        self.last = last
        self.stage1 = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.stage2 = nn.Sequential(nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.side = nn.Sequential(nn.Conv2d(64, 32, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))
        self.stage3 = nn.Sequential(nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(inplace=True))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, classes))

    def forward(self, x):
        mid = self.stage2(self.stage1(x))
        if self.last:
            out = self.head(self.stage3(mid))
            return out, self.side(mid)
        side = self.side(mid)
        return self.head(self.stage3(mid)), side


def side_head_net(last=False):
    return SideHeadNet(last=last)


# A diffusion model's U-Net with a timestep input, forward(x, t), written as the widely copied
# "diffusion models from scratch" notebook writes its SimpleUnet (DeepFindr, 2022): sinusoidal
# features of t, a Linear + ReLU, and in every block `h + relu(time_mlp(t))[(...,) + (None,) * 2]`;
# down blocks end in a stride-2 conv, up blocks take the skip by torch.cat and end in a ConvTranspose2d
class SinusoidalPositionEmbeddings(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, time):
        half_dim = self.dim // 2
        scale = math.log(10000) / (half_dim - 1)
        freqs = torch.exp(torch.arange(half_dim, device=time.device) * -scale)
        args = time[:, None] * freqs[None, :]
        return torch.cat((args.sin(), args.cos()), dim=-1)


class TimeBlock(nn.Module):
    def __init__(self, in_ch, out_ch, time_emb_dim, up=False):
        super().__init__()
        self.time_mlp = nn.Linear(time_emb_dim, out_ch)
        if up:
            self.conv1 = nn.Conv2d(2 * in_ch, out_ch, 3, padding=1)
            self.transform = nn.ConvTranspose2d(out_ch, out_ch, 4, 2, 1)
        else:
            self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
            self.transform = nn.Conv2d(out_ch, out_ch, 4, 2, 1)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.bnorm1 = nn.BatchNorm2d(out_ch)
        self.bnorm2 = nn.BatchNorm2d(out_ch)
        self.relu = nn.ReLU()

    def forward(self, x, t):
        h = self.bnorm1(self.relu(self.conv1(x)))
        time_emb = self.relu(self.time_mlp(t))
        time_emb = time_emb[(...,) + (None,) * 2]
        h = h + time_emb
        h = self.bnorm2(self.relu(self.conv2(h)))
        return self.transform(h)


class SimpleUnet(nn.Module):
    def __init__(self, down_channels=(64, 128, 256, 512, 1024), time_emb_dim=32):
        super().__init__()
        up_channels = tuple(reversed(down_channels))
        self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(time_emb_dim), nn.Linear(time_emb_dim, time_emb_dim), nn.ReLU())
        self.conv0 = nn.Conv2d(3, down_channels[0], 3, padding=1)
        self.downs = nn.ModuleList([TimeBlock(down_channels[i], down_channels[i + 1], time_emb_dim) for i in range(len(down_channels) - 1)])
        self.ups = nn.ModuleList([TimeBlock(up_channels[i], up_channels[i + 1], time_emb_dim, up=True) for i in range(len(up_channels) - 1)])
        self.output = nn.Conv2d(up_channels[-1], 3, 1)

    def forward(self, x, timestep):
        t = self.time_mlp(timestep)
        x = self.conv0(x)
        residual_inputs = []
        for down in self.downs:
            x = down(x, t)
            residual_inputs.append(x)
        for up in self.ups:
            residual_x = residual_inputs.pop()
            x = torch.cat((x, residual_x), dim=1)
            x = up(x, t)
        return self.output(x)


def simple_unet(down_channels=(32, 64, 128, 256)):
    return SimpleUnet(tuple(down_channels))


class VAE(nn.Module):
    """pytorch/examples' VAE (vae/main.py): it returns (recon, mu, logvar), z = mu + eps * std
    (reparameterize written inline), the trainer's loss the reconstruction term plus the KL
    divergence of N(mu, exp(logvar)) from N(0, 1): gaussian_latent."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def forward(self, x):
        h1 = F.relu(self.fc1(x.view(-1, 784)))
        mu, logvar = self.fc21(h1), self.fc22(h1)
        z = mu + torch.randn_like(logvar) * torch.exp(0.5 * logvar)
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar


def vae():
    return VAE()


class VAEZOnly(VAE):
    """VAE's forward returning its reconstruction alone: the KL term has nothing to read (the export stops)."""

    def forward(self, x):
        return super().forward(x)[0]


def vae_z_only():
    return VAEZOnly()


class ConvVAE(nn.Module):
    """AntixK/PyTorch-VAE's VanillaVAE (models/vanilla_vae.py; a widely used conv VAE): five stride-2
    Conv2d + BatchNorm2d + LeakyReLU stages, fc_mu and fc_var from the flattened features,
    reparameterize (std = exp(0.5 * logvar); eps = randn_like(std); eps * std + mu), a Linear back
    to [512, 2, 2], transposed convolutions up, a Tanh. It returns (recon, mu, logvar) (VanillaVAE's
    list also holds the input, which its loss reads; the input is held by the caller anyway)."""

    def __init__(self, in_channels=3, latent=128, hidden=(32, 64, 128, 256, 512)):
        super().__init__()
        layers, c = [], in_channels
        for h in hidden:
            layers.append(nn.Sequential(nn.Conv2d(c, h, 3, stride=2, padding=1), nn.BatchNorm2d(h), nn.LeakyReLU()))
            c = h
        self.encoder = nn.Sequential(*layers)
        self.fc_mu = nn.Linear(hidden[-1] * 4, latent)
        self.fc_var = nn.Linear(hidden[-1] * 4, latent)
        self.decoder_input = nn.Linear(latent, hidden[-1] * 4)
        rev = list(reversed(hidden))
        self.decoder = nn.Sequential(*[nn.Sequential(nn.ConvTranspose2d(rev[i], rev[i + 1], 3, stride=2, padding=1, output_padding=1),
                                                     nn.BatchNorm2d(rev[i + 1]), nn.LeakyReLU()) for i in range(len(rev) - 1)])
        self.final_layer = nn.Sequential(nn.ConvTranspose2d(rev[-1], rev[-1], 3, stride=2, padding=1, output_padding=1),
                                         nn.BatchNorm2d(rev[-1]), nn.LeakyReLU(), nn.Conv2d(rev[-1], in_channels, 3, padding=1), nn.Tanh())
        self.top = hidden[-1]

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return eps * std + mu

    def forward(self, x):
        result = torch.flatten(self.encoder(x), start_dim=1)
        mu, log_var = self.fc_mu(result), self.fc_var(result)
        z = self.reparameterize(mu, log_var)
        result = self.decoder_input(z).view(-1, self.top, 2, 2)
        return self.final_layer(self.decoder(result)), mu, log_var


def conv_vae(**kw):
    return ConvVAE(**kw)


class FeaturesToo(nn.Module):
    """Returns its logits and the features they are computed from (`return self.head(f), f`): the
    second output is no auxiliary head (the export stops, naming it)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 128), nn.ReLU())
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        f = self.body(x)
        return self.head(f), f


def features_too():
    return FeaturesToo()


# labml.ai's annotated DDPM U-Net, its blocks as written (Swish written out, GroupNorm, the time
# embedding added in place: `h += self.time_emb(self.time_act(t))[:, :, None, None]`), two levels, no
# attention
class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class LabmlTimeEmbedding(nn.Module):
    def __init__(self, n_channels):
        super().__init__()
        self.n_channels = n_channels
        self.lin1 = nn.Linear(self.n_channels // 4, self.n_channels)
        self.act = Swish()
        self.lin2 = nn.Linear(self.n_channels, self.n_channels)

    def forward(self, t):
        half_dim = self.n_channels // 8
        emb = math.log(10_000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=t.device) * -emb)
        emb = t[:, None] * emb[None, :]
        emb = torch.cat((emb.sin(), emb.cos()), dim=1)
        return self.lin2(self.act(self.lin1(emb)))


class LabmlResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, time_channels, n_groups=32, dropout=0.1):
        super().__init__()
        self.norm1 = nn.GroupNorm(n_groups, in_channels)
        self.act1 = Swish()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=(3, 3), padding=(1, 1))
        self.norm2 = nn.GroupNorm(n_groups, out_channels)
        self.act2 = Swish()
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=(3, 3), padding=(1, 1))
        self.shortcut = nn.Conv2d(in_channels, out_channels, kernel_size=(1, 1)) if in_channels != out_channels else nn.Identity()
        self.time_emb = nn.Linear(time_channels, out_channels)
        self.time_act = Swish()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, t):
        h = self.conv1(self.act1(self.norm1(x)))
        h += self.time_emb(self.time_act(t))[:, :, None, None]
        h = self.conv2(self.dropout(self.act2(self.norm2(h))))
        return h + self.shortcut(x)


class LabmlUNet(nn.Module):
    def __init__(self, ch=32):
        super().__init__()
        self.image_proj = nn.Conv2d(3, ch, kernel_size=(3, 3), padding=(1, 1))
        self.time_emb = LabmlTimeEmbedding(ch * 4)
        self.down1 = LabmlResidualBlock(ch, ch, ch * 4)
        self.downsample = nn.Conv2d(ch, ch, (3, 3), (2, 2), (1, 1))
        self.down2 = LabmlResidualBlock(ch, 2 * ch, ch * 4)
        self.middle = LabmlResidualBlock(2 * ch, 2 * ch, ch * 4)
        self.up1 = LabmlResidualBlock(4 * ch, 2 * ch, ch * 4)
        self.upsample = nn.ConvTranspose2d(2 * ch, 2 * ch, (4, 4), (2, 2), (1, 1))
        self.up2 = LabmlResidualBlock(3 * ch, ch, ch * 4)
        self.norm = nn.GroupNorm(8, ch)
        self.act = Swish()
        self.final = nn.Conv2d(ch, 3, kernel_size=(3, 3), padding=(1, 1))

    def forward(self, x, t):
        t = self.time_emb(t)
        x = self.image_proj(x)
        h1 = self.down1(x, t)
        h2 = self.down2(self.downsample(h1), t)
        u = self.up1(torch.cat((self.middle(h2, t), h2), dim=1), t)
        u = self.up2(torch.cat((self.upsample(u), h1), dim=1), t)
        return self.final(self.act(self.norm(u)))


def labml_unet():
    return LabmlUNet()


class CGANGenerator(nn.Module):
    """eriklindernoren/PyTorch-GAN's conditional GAN generator as written: forward(noise, labels),
    the labels' embedding concatenated before the noise."""

    def __init__(self, n_classes=10, latent_dim=100, img_shape=(1, 32, 32)):
        super().__init__()
        self.img_shape = img_shape
        self.label_emb = nn.Embedding(n_classes, n_classes)

        def block(in_feat, out_feat, normalize=True):
            layers = [nn.Linear(in_feat, out_feat)]
            if normalize:
                layers.append(nn.BatchNorm1d(out_feat, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers
        self.model = nn.Sequential(*block(latent_dim + n_classes, 128, normalize=False), *block(128, 256), *block(256, 512), *block(512, 1024),
                                   nn.Linear(1024, int(math.prod(img_shape))), nn.Tanh())

    def forward(self, noise, labels):
        gen_input = torch.cat((self.label_emb(labels), noise), -1)
        img = self.model(gen_input)
        return img.view(img.size(0), *self.img_shape)


def cgan_generator():
    return CGANGenerator()


# guided-diffusion's way of conditioning, reduced: a time embedding from a registered frequency buffer,
# six identical residual blocks each adding emb_layers(emb) = Linear(SiLU(emb)) unsqueezed twice
# (exported as one repeat whose copies read the condition: tests/export/check_repeats.py)
class FreqEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("freqs", torch.exp(-math.log(10000) * torch.arange(dim // 2) / (dim // 2)))

    def forward(self, t):
        a = t.float()[:, None] * self.freqs[None]
        return torch.cat([torch.sin(a), torch.cos(a)], dim=-1)


class EmbResBlock(nn.Module):
    def __init__(self, c, tdim):
        super().__init__()
        self.norm = nn.GroupNorm(8, c)
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.emb_layers = nn.Sequential(nn.SiLU(), nn.Linear(tdim, c))

    def forward(self, x, emb):
        h = self.conv(F.silu(self.norm(x)))
        h = h + self.emb_layers(emb).unsqueeze(-1).unsqueeze(-1)
        return x + h


class ConditionedBlocks(nn.Module):
    def __init__(self, c=32, tdim=64, blocks=6):
        super().__init__()
        self.temb = nn.Sequential(FreqEmbedding(tdim), nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, c, 3, padding=1)
        self.blocks = nn.ModuleList([EmbResBlock(c, tdim) for _ in range(blocks)])
        self.out = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x, t):
        emb = self.temb(t)
        h = self.inp(x)
        for b in self.blocks:
            h = b(h, emb)
        return self.out(h)


def conditioned_blocks(blocks=6):
    return ConditionedBlocks(blocks=blocks)


class SiameseNetwork(nn.Module):
    """pytorch/examples' siamese_network as written: one ResNet-18 trunk (1-channel stem, no fc) run
    on both images, forward(input1, input2), the two embeddings concatenated into a small head: the
    second image is a conditioning input whose block shares the trunk's weights."""

    def __init__(self):
        super().__init__()
        import torchvision
        self.resnet = torchvision.models.resnet18(weights=None)
        self.resnet.conv1 = nn.Conv2d(1, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
        self.fc_in_features = self.resnet.fc.in_features
        self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
        self.fc = nn.Sequential(nn.Linear(self.fc_in_features * 2, 256), nn.ReLU(inplace=True), nn.Linear(256, 1))
        self.sigmoid = nn.Sigmoid()

    def forward_once(self, x):
        output = self.resnet(x)
        return output.view(output.size()[0], -1)

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        return self.sigmoid(self.fc(output))


def siamese_network():
    return SiameseNetwork()


class CGANDiscriminator(nn.Module):
    """eriklindernoren/PyTorch-GAN's conditional GAN discriminator as written: forward(img, labels),
    the labels' embedding concatenated after the flattened image."""

    def __init__(self, n_classes=10, img_shape=(1, 32, 32)):
        super().__init__()
        self.label_embedding = nn.Embedding(n_classes, n_classes)
        self.model = nn.Sequential(nn.Linear(n_classes + int(math.prod(img_shape)), 512), nn.LeakyReLU(0.2, inplace=True),
                                   nn.Linear(512, 512), nn.Dropout(0.4), nn.LeakyReLU(0.2, inplace=True),
                                   nn.Linear(512, 512), nn.Dropout(0.4), nn.LeakyReLU(0.2, inplace=True), nn.Linear(512, 1))

    def forward(self, img, labels):
        d_in = torch.cat((img.view(img.size(0), -1), self.label_embedding(labels)), -1)
        return self.model(d_in)


def cgan_discriminator():
    return CGANDiscriminator()


def deeplabv3_mobilenet_aux():
    import torchvision
    return torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=True)


# facebookresearch/DiT's class-conditional diffusion transformer (models.py: DiT, DiTBlock, FinalLayer,
# TimestepEmbedder, LabelEmbedder), written here with torch only: timm's PatchEmbed, Attention (fused:
# F.scaled_dot_product_attention) and Mlp as timm writes them. adaLN-Zero: every block's
# adaLN_modulation(c) is chunked into shift / scale / gate vectors that modulate the tokens.
class DiTPatchEmbed(nn.Module):
    def __init__(self, in_chans, dim, patch):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, dim, patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class DiTAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.num_heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


class DiTMlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def dit_modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


class DiTTimestepEmbedder(nn.Module):
    def __init__(self, hidden, frequency_embedding_size=256):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(frequency_embedding_size, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.frequency_embedding_size = frequency_embedding_size

    @staticmethod
    def timestep_embedding(t, dim, max_period=10000):
        half = dim // 2
        freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half).to(device=t.device)
        args = t[:, None].float() * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    def forward(self, t):
        return self.mlp(self.timestep_embedding(t, self.frequency_embedding_size))


class DiTLabelEmbedder(nn.Module):
    """With DiT's class dropout for classifier-free guidance: in training each label is replaced by the
    null class num_classes with probability dropout_prob (torch.rand at every step)."""

    def __init__(self, num_classes, hidden, dropout_prob=0.1):
        super().__init__()
        self.embedding_table = nn.Embedding(num_classes + 1, hidden)
        self.num_classes, self.dropout_prob = num_classes, dropout_prob

    def token_drop(self, labels):
        drop_ids = torch.rand(labels.shape[0], device=labels.device) < self.dropout_prob
        return torch.where(drop_ids, self.num_classes, labels)

    def forward(self, labels, train):
        if train and self.dropout_prob > 0:
            labels = self.token_drop(labels)
        return self.embedding_table(labels)


class DiTBlock(nn.Module):
    def __init__(self, hidden, heads, mlp_ratio=4.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.attn = DiTAttention(hidden, heads)
        self.norm2 = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.mlp = DiTMlp(hidden, int(hidden * mlp_ratio))
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 6 * hidden))

    def forward(self, x, c):
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.adaLN_modulation(c).chunk(6, dim=1)
        x = x + gate_msa.unsqueeze(1) * self.attn(dit_modulate(self.norm1(x), shift_msa, scale_msa))
        x = x + gate_mlp.unsqueeze(1) * self.mlp(dit_modulate(self.norm2(x), shift_mlp, scale_mlp))
        return x


class DiTFinalLayer(nn.Module):
    def __init__(self, hidden, patch, out_channels):
        super().__init__()
        self.norm_final = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.linear = nn.Linear(hidden, patch * patch * out_channels)
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 2 * hidden))

    def forward(self, x, c):
        shift, scale = self.adaLN_modulation(c).chunk(2, dim=1)
        return self.linear(dit_modulate(self.norm_final(x), shift, scale))


class DiT(nn.Module):
    def __init__(self, input_size=32, patch_size=2, in_channels=4, hidden_size=384, depth=12, num_heads=6,
                 num_classes=1000, learn_sigma=True, with_labels=True):
        super().__init__()
        self.out_channels = in_channels * 2 if learn_sigma else in_channels
        self.patch_size, self.with_labels = patch_size, with_labels
        self.x_embedder = DiTPatchEmbed(in_channels, hidden_size, patch_size)
        self.t_embedder = DiTTimestepEmbedder(hidden_size)
        self.y_embedder = DiTLabelEmbedder(num_classes, hidden_size) if with_labels else None
        tokens = (input_size // patch_size) ** 2
        self.pos_embed = nn.Parameter(torch.zeros(1, tokens, hidden_size), requires_grad=False)
        self.blocks = nn.ModuleList([DiTBlock(hidden_size, num_heads) for _ in range(depth)])
        self.final_layer = DiTFinalLayer(hidden_size, patch_size, self.out_channels)

    def unpatchify(self, x):
        c, p = self.out_channels, self.patch_size
        h = w = int(x.shape[1] ** 0.5)
        x = x.reshape(x.shape[0], h, w, p, p, c)
        x = torch.einsum("nhwpqc->nchpwq", x)
        return x.reshape(x.shape[0], c, h * p, h * p)

    def forward(self, x, t, y=None):
        x = self.x_embedder(x) + self.pos_embed
        c = self.t_embedder(t)
        if self.with_labels:
            c = c + self.y_embedder(y, self.training)
        for block in self.blocks:
            x = block(x, c)
        return self.unpatchify(self.final_layer(x, c))


def dit(depth=4, hidden_size=384, num_heads=6, input_size=32, with_labels=True):
    """DiT-S/2 (hidden 384, 6 heads, patch 2) by default, `depth` blocks (DiT-S has 12)."""
    return DiT(input_size=input_size, hidden_size=hidden_size, depth=depth, num_heads=num_heads, with_labels=with_labels)


# openai/guided-diffusion's UNetModel ResBlock with use_scale_shift_norm=True (unet.py): the step (and
# class) embedding's emb_layers project to 2C, `while len(emb_out.shape) < len(h.shape): emb_out =
# emb_out[..., None]`, then `scale, shift = th.chunk(emb_out, 2, dim=1); h = out_norm(h) * (1 + scale) +
# shift`; GroupNorm32 computes in fp32 (`super().forward(x.float()).type(x.dtype)`), two levels, no
# attention blocks, torch only
class GroupNorm32(nn.GroupNorm):
    def forward(self, x):
        return super().forward(x.float()).type(x.dtype)


def gd_timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half).to(device=timesteps.device)
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class GDResBlock(nn.Module):
    def __init__(self, channels, emb_channels, out_channels, dropout=0.0, scale_shift=True):
        super().__init__()
        self.scale_shift = scale_shift
        self.in_layers = nn.Sequential(GroupNorm32(32, channels), nn.SiLU(), nn.Conv2d(channels, out_channels, 3, padding=1))
        self.emb_layers = nn.Sequential(nn.SiLU(), nn.Linear(emb_channels, (2 if scale_shift else 1) * out_channels))
        self.out_layers = nn.Sequential(GroupNorm32(32, out_channels), nn.SiLU(), nn.Dropout(p=dropout),
                                        nn.Conv2d(out_channels, out_channels, 3, padding=1))
        self.skip_connection = nn.Identity() if out_channels == channels else nn.Conv2d(channels, out_channels, 1)

    def forward(self, x, emb):
        h = self.in_layers(x)
        emb_out = self.emb_layers(emb).type(h.dtype)
        while len(emb_out.shape) < len(h.shape):
            emb_out = emb_out[..., None]
        if self.scale_shift:
            out_norm, out_rest = self.out_layers[0], self.out_layers[1:]
            scale, shift = torch.chunk(emb_out, 2, dim=1)
            h = out_norm(h) * (1 + scale) + shift
            h = out_rest(h)
        else:
            h = self.out_layers(h + emb_out)
        return self.skip_connection(x) + h


class GuidedDiffusionUNet(nn.Module):
    def __init__(self, model_channels=64, channel_mult=(1, 2), num_res_blocks=1, num_classes=None, scale_shift=True):
        super().__init__()
        block = lambda *a: GDResBlock(*a, scale_shift=scale_shift)  # noqa: E731
        self.model_channels, self.num_classes = model_channels, num_classes
        emb = model_channels * 4
        self.time_embed = nn.Sequential(nn.Linear(model_channels, emb), nn.SiLU(), nn.Linear(emb, emb))
        self.label_emb = nn.Embedding(num_classes, emb) if num_classes else None
        self.input_conv = nn.Conv2d(3, model_channels, 3, padding=1)
        self.down = nn.ModuleList()
        ch, skips = model_channels, []
        for level, mult in enumerate(channel_mult):
            for _ in range(num_res_blocks):
                self.down.append(block(ch, emb, mult * model_channels))
                ch = mult * model_channels
                skips.append(ch)
        self.middle = block(ch, emb, ch)
        self.up = nn.ModuleList()
        for mult in reversed(channel_mult):
            for _ in range(num_res_blocks):
                self.up.append(block(ch + skips.pop(), emb, mult * model_channels))
                ch = mult * model_channels
        self.out = nn.Sequential(GroupNorm32(32, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    def forward(self, x, timesteps, y=None):
        emb = self.time_embed(gd_timestep_embedding(timesteps, self.model_channels))
        if self.num_classes is not None:
            emb = emb + self.label_emb(y)
        h = self.input_conv(x)
        hs = []
        for block in self.down:
            h = block(h, emb)
            hs.append(h)
        h = self.middle(h, emb)
        for block in self.up:
            h = block(torch.cat([h, hs.pop()], dim=1), emb)
        return self.out(h)


def guided_diffusion_unet(model_channels=64, num_classes=None, scale_shift=True):
    return GuidedDiffusionUNet(model_channels=model_channels, num_classes=num_classes, scale_shift=scale_shift)


class GDOneBlock(nn.Module):
    """One of guided diffusion's ResBlocks after a 1x1 stem (its input needs a gradient), 192 -> 64
    channels: `self.skip_connection(x) + h` runs its 1x1 skip conv after the block's body."""

    def __init__(self, channels=192, out_channels=64, scale_shift=False):
        super().__init__()
        self.time_embed = nn.Sequential(nn.Linear(64, 256), nn.SiLU(), nn.Linear(256, 256))
        self.stem = nn.Conv2d(channels, channels, 1)
        self.block = GDResBlock(channels, 256, out_channels, scale_shift=scale_shift)

    def forward(self, x, timesteps):
        return self.block(self.stem(x), self.time_embed(gd_timestep_embedding(timesteps, 64)))


def guided_diffusion_resblock(channels=192, out_channels=64):
    return GDOneBlock(channels, out_channels)


class ConditionsApart(nn.Module):
    """forward(x, t, y) whose step and label embeddings join the model apart (never added to each other):
    not one conditioning tensor (the export stops, saying so)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 32)
        self.t_emb = nn.Linear(8, 32)
        self.y_emb = nn.Embedding(10, 32)

    def forward(self, x, t, y):
        return self.lin(x) + self.t_emb(gd_timestep_embedding(t, 8)) + self.y_emb(y)


def conditions_apart():
    return ConditionsApart()


def swin_v2_t():
    """torchvision's Swin Transformer V2-T as built (cosine attention with a continuous position bias MLP,
    post-norm blocks, PatchMergingV2), window 8."""
    import torchvision
    return torchvision.models.swin_v2_t()


# Stable Diffusion's transformer blocks as diffusers writes them (attention_processor.py's Attention
# with AttnProcessor2_0: to_q / to_k / to_v without bias, to_out with one, F.scaled_dot_product_attention;
# attention.py's BasicTransformerBlock: self-attention, cross-attention to the text encoder's states,
# a GEGLU feed-forward), on tokens, torch only: forward(hidden_states, encoder_hidden_states)
class SDAttention(nn.Module):
    def __init__(self, query_dim, heads, dim_head, cross_attention_dim=None):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner, bias=False)
        self.to_k = nn.Linear(cross_attention_dim or query_dim, inner, bias=False)
        self.to_v = nn.Linear(cross_attention_dim or query_dim, inner, bias=False)
        self.to_out = nn.ModuleList([nn.Linear(inner, query_dim), nn.Dropout(0.0)])

    def forward(self, hidden_states, encoder_hidden_states=None):
        batch_size = hidden_states.shape[0]
        if encoder_hidden_states is None:
            encoder_hidden_states = hidden_states
        query = self.to_q(hidden_states)
        key = self.to_k(encoder_hidden_states)
        value = self.to_v(encoder_hidden_states)
        inner_dim = key.shape[-1]
        head_dim = inner_dim // self.heads
        query = query.view(batch_size, -1, self.heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.heads, head_dim).transpose(1, 2)
        hidden_states = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False)
        hidden_states = hidden_states.transpose(1, 2).reshape(batch_size, -1, self.heads * head_dim)
        hidden_states = self.to_out[0](hidden_states)
        return self.to_out[1](hidden_states)


class GEGLU(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out * 2)

    def forward(self, hidden_states):
        hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)
        return hidden_states * F.gelu(gate)


class SDFeedForward(nn.Module):
    def __init__(self, dim, mult=4):
        super().__init__()
        self.net = nn.ModuleList([GEGLU(dim, dim * mult), nn.Dropout(0.0), nn.Linear(dim * mult, dim)])

    def forward(self, hidden_states):
        for module in self.net:
            hidden_states = module(hidden_states)
        return hidden_states


class SDBasicTransformerBlock(nn.Module):
    def __init__(self, dim, heads, dim_head, cross_attention_dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn1 = SDAttention(dim, heads, dim_head)
        self.norm2 = nn.LayerNorm(dim)
        self.attn2 = SDAttention(dim, heads, dim_head, cross_attention_dim)
        self.norm3 = nn.LayerNorm(dim)
        self.ff = SDFeedForward(dim)

    def forward(self, hidden_states, encoder_hidden_states):
        hidden_states = self.attn1(self.norm1(hidden_states)) + hidden_states
        hidden_states = self.attn2(self.norm2(hidden_states), encoder_hidden_states) + hidden_states
        return self.ff(self.norm3(hidden_states)) + hidden_states


class SDTransformer(nn.Module):
    def __init__(self, dim=320, heads=8, blocks=2, cross_attention_dim=768):
        super().__init__()
        self.blocks = nn.ModuleList([SDBasicTransformerBlock(dim, heads, dim // heads, cross_attention_dim) for _ in range(blocks)])
        self.norm_out = nn.LayerNorm(dim)

    def forward(self, hidden_states, encoder_hidden_states):
        for block in self.blocks:
            hidden_states = block(hidden_states, encoder_hidden_states)
        return self.norm_out(hidden_states)


def sd_transformer(dim=320, heads=8, blocks=2, cross_attention_dim=768):
    return SDTransformer(dim, heads, blocks, cross_attention_dim)


# A two-level Stable Diffusion UNet as diffusers writes its parts (unet_2d_blocks.py's CrossAttnDownBlock2D
# and CrossAttnUpBlock2D, resnet.py's ResnetBlock2D, transformer_2d.py's Transformer2DModel with
# use_linear_projection, embeddings.py's Timesteps and TimestepEmbedding), torch only: forward(sample,
# timestep, encoder_hidden_states), the steps' embedding added in every ResnetBlock2D, the text states
# read by every transformer block's cross-attention
class SDResnetBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, in_channels, eps=1e-5)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(32, out_channels, eps=1e-5)
        self.dropout = nn.Dropout(0.0)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.nonlinearity = nn.SiLU()
        self.conv_shortcut = nn.Conv2d(in_channels, out_channels, 1) if in_channels != out_channels else None

    def forward(self, input_tensor, temb):
        hidden_states = self.conv1(self.nonlinearity(self.norm1(input_tensor)))
        temb = self.time_emb_proj(self.nonlinearity(temb))[:, :, None, None]
        hidden_states = hidden_states + temb
        hidden_states = self.conv2(self.dropout(self.nonlinearity(self.norm2(hidden_states))))
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        return (input_tensor + hidden_states) / 1.0


class SDTransformer2D(nn.Module):
    def __init__(self, channels, heads, cross_attention_dim):
        super().__init__()
        self.norm = nn.GroupNorm(32, channels, eps=1e-6)
        self.proj_in = nn.Linear(channels, channels)
        self.transformer_blocks = nn.ModuleList([SDBasicTransformerBlock(channels, heads, channels // heads, cross_attention_dim)])
        self.proj_out = nn.Linear(channels, channels)

    def forward(self, hidden_states, encoder_hidden_states):
        batch, _, height, width = hidden_states.shape
        residual = hidden_states
        hidden_states = self.norm(hidden_states)
        inner_dim = hidden_states.shape[1]
        hidden_states = hidden_states.permute(0, 2, 3, 1).reshape(batch, height * width, inner_dim)
        hidden_states = self.proj_in(hidden_states)
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, encoder_hidden_states)
        hidden_states = self.proj_out(hidden_states)
        hidden_states = hidden_states.reshape(batch, height, width, inner_dim).permute(0, 3, 1, 2).contiguous()
        return hidden_states + residual


class SDUNet(nn.Module):
    def __init__(self, channels=(64, 128), heads=4, cross_attention_dim=768, in_channels=4):
        super().__init__()
        c0, c1 = channels
        temb = 4 * c0
        self.c0 = c0
        self.time_embedding = nn.Sequential(nn.Linear(c0, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(in_channels, c0, 3, padding=1)
        self.down_res = SDResnetBlock2D(c0, c0, temb)
        self.down_attn = SDTransformer2D(c0, heads, cross_attention_dim)
        self.downsample = nn.Conv2d(c0, c0, 3, stride=2, padding=1)
        self.mid_res1 = SDResnetBlock2D(c0, c1, temb)
        self.mid_attn = SDTransformer2D(c1, heads, cross_attention_dim)
        self.mid_res2 = SDResnetBlock2D(c1, c1, temb)
        self.upsample = nn.Conv2d(c1, c1, 3, padding=1)
        self.up_res = SDResnetBlock2D(c1 + c0, c0, temb)
        self.up_attn = SDTransformer2D(c0, heads, cross_attention_dim)
        self.conv_norm_out = nn.GroupNorm(32, c0, eps=1e-5)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(c0, in_channels, 3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states):
        emb = self.time_embedding(gd_timestep_embedding(timestep, self.c0))
        h = self.conv_in(sample)
        skip = self.down_attn(self.down_res(h, emb), encoder_hidden_states)
        h = self.downsample(skip)
        h = self.mid_res2(self.mid_attn(self.mid_res1(h, emb), encoder_hidden_states), emb)
        h = self.upsample(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        h = self.up_attn(self.up_res(torch.cat([h, skip], dim=1), emb), encoder_hidden_states)
        return self.conv_out(self.conv_act(self.conv_norm_out(h)))


def sd_unet(c0=64, c1=128, heads=4):
    return SDUNet((c0, c1), heads)


class SDTransformer2DConv(nn.Module):
    """Transformer2DModel with use_linear_projection=False (SD 1.x): proj_in and proj_out 1x1 convolutions."""

    def __init__(self, channels, heads, cross_attention_dim):
        super().__init__()
        self.norm = nn.GroupNorm(32, channels, eps=1e-6)
        self.proj_in = nn.Conv2d(channels, channels, 1)
        self.transformer_blocks = nn.ModuleList([SDBasicTransformerBlock(channels, heads, channels // heads, cross_attention_dim)])
        self.proj_out = nn.Conv2d(channels, channels, 1)

    def forward(self, hidden_states, encoder_hidden_states):
        batch, _, height, width = hidden_states.shape
        residual = hidden_states
        hidden_states = self.proj_in(self.norm(hidden_states))
        inner_dim = hidden_states.shape[1]
        hidden_states = hidden_states.permute(0, 2, 3, 1).reshape(batch, height * width, inner_dim)
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, encoder_hidden_states)
        hidden_states = hidden_states.reshape(batch, height, width, inner_dim).permute(0, 3, 1, 2).contiguous()
        return self.proj_out(hidden_states) + residual


class SD15UNet(nn.Module):
    """Stable Diffusion 1.x's UNet2DConditionModel as its config builds it (block_out_channels 320, 640, 1280,
    1280; layers_per_block 2; 8 heads; cross_attention_dim 768; CrossAttnDownBlock2D x 3, DownBlock2D,
    UNetMidBlock2DCrossAttn, UpBlock2D, CrossAttnUpBlock2D x 3), diffusers' parts written with torch."""

    def __init__(self, block_out=(320, 640, 1280, 1280), layers=2, heads=8, cross_attention_dim=768):
        super().__init__()
        c0, temb = block_out[0], 4 * block_out[0]
        self.c0 = c0
        self.time_embedding = nn.Sequential(nn.Linear(c0, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(4, c0, 3, padding=1)
        self.down = nn.ModuleList()
        skips, ch = [c0], c0
        for level, out in enumerate(block_out):
            for _ in range(layers):
                attn = SDTransformer2DConv(out, heads, cross_attention_dim) if level < len(block_out) - 1 else None
                self.down.append(nn.ModuleList([SDResnetBlock2D(ch, out, temb)] + ([attn] if attn else [])))
                ch = out
                skips.append(ch)
            if level < len(block_out) - 1:
                self.down.append(nn.Conv2d(ch, ch, 3, stride=2, padding=1))
                skips.append(ch)
        self.mid = nn.ModuleList([SDResnetBlock2D(ch, ch, temb), SDTransformer2DConv(ch, heads, cross_attention_dim), SDResnetBlock2D(ch, ch, temb)])
        self.up = nn.ModuleList()
        for level, out in enumerate(reversed(block_out)):
            for _ in range(layers + 1):
                attn = SDTransformer2DConv(out, heads, cross_attention_dim) if level > 0 else None
                self.up.append(nn.ModuleList([SDResnetBlock2D(ch + skips.pop(), out, temb)] + ([attn] if attn else [])))
                ch = out
            if level < len(block_out) - 1:
                self.up.append(nn.Conv2d(ch, ch, 3, padding=1))
        self.conv_norm_out = nn.GroupNorm(32, ch, eps=1e-5)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(ch, 4, 3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states):
        emb = self.time_embedding(gd_timestep_embedding(timestep, self.c0))
        h = self.conv_in(sample)
        skips = [h]
        for m in self.down:
            if isinstance(m, nn.Conv2d):
                h = m(h)
            else:
                h = m[0](h, emb)
                if len(m) > 1:
                    h = m[1](h, encoder_hidden_states)
            skips.append(h)
        h = self.mid[2](self.mid[1](self.mid[0](h, emb), encoder_hidden_states), emb)
        for m in self.up:
            if isinstance(m, nn.Conv2d):
                h = m(F.interpolate(h, scale_factor=2.0, mode="nearest"))
            else:
                h = m[0](torch.cat([h, skips.pop()], dim=1), emb)
                if len(m) > 1:
                    h = m[1](h, encoder_hidden_states)
        return self.conv_out(self.conv_act(self.conv_norm_out(h)))


def sd15_unet(block_out=(320, 640, 1280, 1280)):
    return SD15UNet(tuple(block_out))


def s3d():
    """torchvision's S3D as built: separable 3-D convolutions ((1, k, k) then (k, 1, 1)), MaxPool3d((1, 3, 3),
    (1, 2, 2), (0, 1, 1)) and the like, the final AvgPool3d((2, 7, 7))."""
    import torchvision
    return torchvision.models.video.s3d()


def swin3d_t():
    """torchvision's Video Swin (swin3d_t) as built: PatchEmbed3d (2, 4, 4), ShiftedWindowAttention3d with an
    (8, 7, 7) window shifted by (4, 3, 3), PatchMerging on [T, H, W, C]."""
    import torchvision
    return torchvision.models.video.swin3d_t()
