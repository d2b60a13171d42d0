"""gpubudget-export --aten-graph FILE: a torch.export dump of a model's training-IR ATen graph
(benchmarks/gpu/transformers-graphs/: every node with its target, arguments, shape, dtype and
nn_module_stack path) to the items the exporter names and writes (docs/export.md, "ATen dumps").

No PyTorch is needed: the dump is JSON. Nodes are matched to the library's ops in two steps, as
for an nn.Module: whole patterns first (attention, GPT-2's Conv1D and gelu_new, learned positions,
BERT's embeddings, the loss), then the remaining nodes one by one. A node with no counterpart
stops the export naming the op and its module path; a side computation (a mask, position ids)
may feed only a pattern that accounts for it.
"""
import json

# --- the dump of a torch.export graph (benchmarks/gpu/dump_transformers_graphs.py and the exporter's
# fallback for what torch.fx cannot trace write the same records) ------------------------------------

def describe(v):
    """A node argument as JSON: another node as "%name", containers element by element."""
    import torch

    if isinstance(v, torch.fx.Node):
        return "%" + v.name
    if isinstance(v, (list, tuple)):
        return [describe(x) for x in v]
    if isinstance(v, dict):
        return {k: describe(x) for k, x in v.items()}
    if isinstance(v, (int, float, bool, str)) or v is None:
        return v
    return repr(v)


def node_record(n):
    """One node of an ExportedProgram's graph: target, arguments, shape, dtype, module path."""
    val = n.meta.get("val")
    shape = list(val.shape) if hasattr(val, "shape") else None
    dtype = str(val.dtype) if hasattr(val, "dtype") else None
    if isinstance(val, (list, tuple)):
        shape = [list(x.shape) if hasattr(x, "shape") else None for x in val]
    stack = (n.meta.get("stack_trace") or "").strip().splitlines()
    mods = [[p, t if isinstance(t, str) else getattr(t, "__name__", repr(t))]
            for p, t in (n.meta.get("nn_module_stack") or {}).values()]
    return {"name": n.name, "op": n.op, "target": str(n.target), "args": describe(n.args), "kwargs": describe(n.kwargs),
            "shape": shape, "dtype": dtype, "module": mods, "stack": stack[-1].strip() if stack else None}


# dump targets that make no tensor of their own (checks), or the same tensor
CHECKS = {"aten._assert_tensor_metadata.default"}
SAME_TENSOR = {"aten.alias.default"}


class AtenError(Exception):
    """A dump the exporter cannot express: the message names the node, its op and module path."""


class Dump:
    """The dump's nodes by name, each one's tensor inputs (the `%name` references) and users."""

    def __init__(self, doc):
        self.doc, self.nodes, self.order = doc, {}, []
        for n in doc["nodes"]:
            self.nodes[n["name"]] = n
            self.order.append(n["name"])
        self.users = {name: [] for name in self.order}
        for name in self.order:
            for r in self.refs(name):
                self.users[r].append(name)

    def refs(self, name):
        found = []

        def walk(a):
            if isinstance(a, str) and a.startswith("%"):
                found.append(a[1:])
            elif isinstance(a, (list, tuple)):
                for x in a:
                    walk(x)
            elif isinstance(a, dict):
                for x in a.values():
                    walk(x)
        walk(self.nodes[name]["args"])
        walk(self.nodes[name]["kwargs"])
        return found

    def node(self, name):
        return self.nodes[name]

    def target(self, name):
        return self.nodes[name]["target"]

    def shape(self, name):
        return self.nodes[name]["shape"]

    def path(self, name):
        m = self.nodes[name]["module"]
        return m[-1][0] if m else ""

    def arg(self, name, i, key=None, default=None):
        n = self.nodes[name]
        if len(n["args"]) > i:
            return n["args"][i]
        return n["kwargs"].get(key, default) if key else default

    def ref(self, name, i):
        """The node named by argument i (None if it is not a node)."""
        a = self.arg(name, i)
        return a[1:] if isinstance(a, str) and a.startswith("%") else None

    def is_param(self, name):
        return name in self.nodes and self.nodes[name]["op"] == "placeholder" and name.startswith("p_")

    def real_users(self, name):
        return [u for u in self.users[name] if self.target(u) not in CHECKS]

    def fail(self, msg, name):
        raise AtenError(f"{msg} (node {name}, {self.target(name)}, module {self.path(name) or '<root>'})")


def is_call(d, name, *targets):
    return name is not None and d.target(name) in targets


def percent(d, p, name):
    pct = round(float(p) * 100)
    if abs(float(p) * 100 - pct) > 1e-6:
        d.fail(f"dropout p={p} (the library's dropout takes a whole percent)", name)
    return pct


# --- patterns: each returns (output node, input node, spec, module path, absorbed nodes) or None ------

def only_within(d, names, outside_ok=()):
    """Every node of `names` is used only by nodes of `names` (or checks), except `outside_ok`."""
    inside = set(names)
    return all(set(d.real_users(n)) <= inside for n in names if n not in outside_ok)


def conv1d_projection(d, last):
    """transformers' Conv1D: view(x, [-1, in]) → addmm(bias, ·, W[in, out]) → view(·, [..., out])."""
    if not is_call(d, last, "aten.view.default"):
        return None
    mm = d.ref(last, 0)
    if not is_call(d, mm, "aten.addmm.default"):
        return None
    flat, w, b = d.ref(mm, 1), d.ref(mm, 2), d.ref(mm, 0)
    if not (d.is_param(w) and d.is_param(b) and is_call(d, flat, "aten.view.default")):
        return None
    x = d.ref(flat, 0)
    if not only_within(d, [flat, mm, last], outside_ok=[last]):
        return None
    out = d.shape(w)[1]
    return {"x": x, "out": out, "bias": True, "nodes": [flat, mm, last], "module": d.path(mm), "weight": w}


def linear_projection(d, name):
    """aten.linear(x, W[out, in], bias?)."""
    if not is_call(d, name, "aten.linear.default"):
        return None
    w, b = d.ref(name, 1), d.ref(name, 2)
    if not d.is_param(w) or (b is not None and not d.is_param(b)):
        return None
    return {"x": d.ref(name, 0), "out": d.shape(w)[0], "bias": b is not None, "nodes": [name], "module": d.path(name), "weight": w}


def projection(d, name):
    return linear_projection(d, name) or conv1d_projection(d, name)


def head_split(d, t):
    """transpose(view(y, [B, L, H, hd]), 1, 2) → (y, H, nodes)."""
    if not is_call(d, t, "aten.transpose.int") or sorted([d.arg(t, 1), d.arg(t, 2)]) != [1, 2]:
        return None
    v = d.ref(t, 0)
    if not is_call(d, v, "aten.view.default") or len(d.shape(v)) != 4:
        return None
    return d.ref(v, 0), d.shape(v)[2], [v, t]


def merged_heads(d, proj_in):
    """reshape([B, L, H·hd]) of [contiguous of] transpose(o, 1, 2) → (o, nodes)."""
    r = proj_in
    if not is_call(d, r, "aten.reshape.default", "aten.view.default"):
        return None
    nodes, c = [r], d.ref(r, 0)
    if is_call(d, c, "aten.contiguous.default"):
        nodes.append(c)
        c = d.ref(c, 0)
    if not is_call(d, c, "aten.transpose.int") or sorted([d.arg(c, 1), d.arg(c, 2)]) != [1, 2]:
        return None
    return d.ref(c, 0), nodes + [c]


def eager_core(d, pv, causal_fill=False):
    """matmul(dropout?(to?(softmax(add?(mul|div(matmul(q, transpose(k, -1, -2)), c), mask), -1))), v)
    → (q, k, v, dropout percent, nodes) or None. `causal_fill`: masked_fill(·, mask, -inf) in place
    of the add (Karpathy's heads: `wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))`)."""
    if not is_call(d, pv, "aten.matmul.default"):
        return None
    nodes, p, v = [pv], d.ref(pv, 0), d.ref(pv, 1)
    dropout = 0
    if is_call(d, p, "aten.dropout.default"):
        dropout = percent(d, d.arg(p, 1), p)
        nodes.append(p)
        p = d.ref(p, 0)
    if is_call(d, p, "aten.to.dtype"):
        nodes.append(p)
        p = d.ref(p, 0)
    if not is_call(d, p, "aten.softmax.int") or d.arg(p, 1) not in (-1, 3):
        return None
    nodes.append(p)
    s = d.ref(p, 0)
    if is_call(d, s, "aten.add.Tensor") and not causal_fill:  # the additive mask (a side input)
        nodes.append(s)
        s = d.ref(s, 0)
    if causal_fill:
        if not is_call(d, s, "aten.masked_fill.Scalar") or float(d.arg(s, 2)) != float("-inf"):
            return None
        nodes.append(s)
        s = d.ref(s, 0)
    if not is_call(d, s, "aten.mul.Tensor", "aten.div.Tensor") or d.ref(s, 1) is not None:
        return None
    nodes.append(s)
    qk = d.ref(s, 0)
    if not is_call(d, qk, "aten.matmul.default"):
        return None
    kt = d.ref(qk, 1)
    if not is_call(d, kt, "aten.transpose.int") or sorted([d.arg(kt, 1) % 4, d.arg(kt, 2) % 4]) != [2, 3]:
        return None
    return d.ref(qk, 0), d.ref(kt, 0), v, dropout, nodes + [qk, kt]


def sdpa_core(d, name):
    if not is_call(d, name, "aten.scaled_dot_product_attention.default"):
        return None
    if d.arg(name, 7, "enable_gqa", False):
        d.fail("scaled_dot_product_attention with enable_gqa (the library's grouped-query attention is Llama's, its keys repeated by repeat_kv)", name)
    dropout = percent(d, d.arg(name, 4, "dropout_p", 0.0), name)
    return d.ref(name, 0), d.ref(name, 1), d.ref(name, 2), dropout, [name]


def sdpa_masking(d, name):
    """How an SDPA call masks: "causal" (is_causal=True: nanoGPT), "mask" (an attn_mask side input:
    transformers' causal or padding masks), or None."""
    if not is_call(d, name, "aten.scaled_dot_product_attention.default"):
        return "mask"  # eager attention: the mask, if any, is added to the scores (eager_core)
    has_mask = d.arg(name, 3, "attn_mask", None) is not None
    if d.arg(name, 5, "is_causal", False):
        if has_mask:
            d.fail("scaled_dot_product_attention with both attn_mask and is_causal", name)
        return "causal"
    return "mask" if has_mask else None


# the projection names the library knows, relative to the attention's module, by scheme
SCHEMES = {"gpt2": (["c_attn"] * 3 + ["c_proj"]), "bert": ["self.query", "self.key", "self.value", "output.dense"],
           "llama": ["q_proj", "k_proj", "v_proj", "o_proj"]}


def repeat_kv(d, t, nodes):
    """transformers' repeat_kv: reshape(expand(unsqueeze(x, 2), [B, kvH, n, L, d]), [B, kvH·n, L, d])
    → (x, n); (t, 1) when t is not one."""
    if not is_call(d, t, "aten.reshape.default", "aten.view.default"):
        return t, 1
    e = d.ref(t, 0)
    u = d.ref(e, 0) if is_call(d, e, "aten.expand.default") else None
    if not (is_call(d, u, "aten.unsqueeze.default") and d.arg(u, 1) == 2 and len(d.shape(e)) == 5):
        return t, 1
    nodes += [t, e, u]
    return d.ref(u, 0), d.shape(e)[2]


def rotated_half(d, t, nodes):
    """apply_rotary_pos_emb: x·cos + cat([-x[..., h:], x[..., :h]], -1)·sin, cos and sin side
    inputs → (x, True); (t, False) when t is not one."""
    if not is_call(d, t, "aten.add.Tensor"):
        return t, False
    a, b = d.ref(t, 0), d.ref(t, 1)
    if not (is_call(d, a, "aten.mul.Tensor") and is_call(d, b, "aten.mul.Tensor")):
        return t, False
    x, cat = d.ref(a, 0), d.ref(b, 0)
    if not is_call(d, cat, "aten.cat.default"):
        return t, False
    parts = [p[1:] for p in d.arg(cat, 0)]
    if len(parts) != 2 or not is_call(d, parts[0], "aten.neg.default"):
        return t, False
    hi, lo = d.ref(parts[0], 0), parts[1]
    half = d.shape(x)[-1] // 2
    if not (is_call(d, hi, "aten.slice.Tensor") and is_call(d, lo, "aten.slice.Tensor") and d.ref(hi, 0) == x and d.ref(lo, 0) == x
            and d.arg(hi, 2) == half and d.arg(lo, 2) == 0 and d.arg(lo, 3) == half):
        return t, False
    nodes += [t, a, b, cat, parts[0], hi, lo]
    return x, True


def relative(paths, prefix):
    cut = len(prefix) + 1 if prefix else 0
    return [p[cut:] for p in paths]


def common_module(paths):
    parts = [p.split(".") for p in paths]
    out = []
    for xs in zip(*parts):
        if len(set(xs)) != 1:
            break
        out.append(xs[0])
    return ".".join(out)


def packed_qkv(d, q, k, v):
    """getitem 0, 1, 2 of split(Conv1D/Linear output, D, dim 2) → the projection and nodes."""
    items = [q, k, v]
    if not all(is_call(d, x, "<built-in function getitem>") for x in items):
        return None
    sp = {d.ref(x, 0) for x in items}
    if len(sp) != 1 or [d.arg(x, 1) for x in items] != [0, 1, 2]:
        return None
    sp = sp.pop()
    if not is_call(d, sp, "aten.split.Tensor") or d.arg(sp, 2) not in (2, -1):
        return None
    proj = projection(d, d.ref(sp, 0))
    if proj is None or d.arg(sp, 1) * 3 != proj["out"]:
        return None
    return proj, [sp] + items


def split_heads(d, anchor, core, impl_name):
    """q, k, v back to the projections' outputs (through repeat_kv, rotary, the head split) →
    (their outputs, heads, key/value heads, rotary)."""
    q, k, v, _, nodes = core
    heads, qkv_y, rotated, repeated = [], [], [], []
    for t in (q, k, v):
        t, rep = repeat_kv(d, t, nodes)
        t, rot = rotated_half(d, t, nodes)
        hs = head_split(d, t)
        if hs is None:
            d.fail("attention whose query, key or value is not a projection's output split into heads (view, transpose(1, 2))", anchor)
        qkv_y.append(hs[0])
        heads.append(hs[1] * rep)
        rotated.append(rot)
        repeated.append(rep)
        nodes += hs[2]
    if len(set(heads)) != 1 or repeated[1] != repeated[2] or repeated[0] != 1:
        d.fail(f"attention with {heads[0]} query and {heads[1]} key/value heads not repeated to match (repeat_kv)", anchor)
    if rotated not in ([False] * 3, [True, True, False]):
        d.fail("rotary embeddings on other than the query and the key", anchor)
    if rotated[0] and impl_name != "sdpa":
        d.fail("eager attention with rotary embeddings (the library's rotary attention is the fused SDPA kernel, as --hf-config's decoders)", anchor)
    return qkv_y, heads[0], heads[0] // repeated[1], rotated[0]


def output_projection(d, anchor, nodes):
    """transpose(1, 2)[.contiguous()].reshape(B, L, H·d) of the attention, then one Linear or Conv1D."""
    mh, cur = None, anchor
    for _ in range(3):  # transpose, [contiguous,] reshape
        users = d.real_users(cur)
        if len(users) != 1:
            break
        cur = users[0]
        if is_call(d, cur, "aten.reshape.default", "aten.view.default"):
            mh = merged_heads(d, cur)
            break
    if mh is None or mh[0] != anchor:
        d.fail("attention output not merged back to [B, L, H·d] (transpose(1, 2), reshape)", anchor)
    nodes += mh[1]
    out_in = mh[1][0]
    outs = d.real_users(out_in)
    out_proj = None
    if len(outs) == 1:
        out_proj = linear_projection(d, outs[0])
        if out_proj is None and is_call(d, outs[0], "aten.view.default") and len(d.real_users(outs[0])) == 1:
            mm = d.real_users(outs[0])[0]
            if is_call(d, mm, "aten.addmm.default") and len(d.real_users(mm)) == 1:
                out_proj = conv1d_projection(d, d.real_users(mm)[0])
    if out_proj is None or out_proj["x"] != out_in:
        d.fail("attention output not followed by one output projection (Linear or Conv1D)", anchor)
    nodes += out_proj["nodes"]
    return out_proj


def input_projections(d, anchor, qkv_y, rotary, nodes):
    """The q, k, v projections: one packed Conv1D/Linear split in three (GPT-2's c_attn), or three
    Linears on one tensor → (projections, packed)."""
    packed = packed_qkv(d, *qkv_y) if not rotary else None
    if packed:
        nodes += packed[1] + packed[0]["nodes"]
        return [packed[0]] * 3, True
    projs = [linear_projection(d, y) for y in qkv_y]
    if None in projs or len({p["x"] for p in projs}) != 1:
        d.fail("attention whose q, k, v are not three Linears on one tensor nor a packed projection split in three", anchor)
    for p in projs:
        nodes += p["nodes"]
    return projs, False


def attention_spec(d, anchor, impl_name, shape, names, packed, rotary):
    """The attention op: --hf-config's impl and projection names for the same structure."""
    width, heads, kv_heads, head_width = shape
    spec = {"op": "attention", "width": width, "heads": heads}
    masking = sdpa_masking(d, anchor)
    if masking == "causal" and not packed:
        d.fail("causal attention (is_causal=True) whose q, k, v are three Linears (the library's causal attention is GPT-2's, one packed c_attn)", anchor)
    if packed and masking is None:
        d.fail("packed-qkv attention without a mask or is_causal (the library's packed attention is GPT-2's, causal)", anchor)
    if packed:
        spec.update({"impl": "flash" if impl_name == "sdpa" else "split_qkv", "names": "gpt2"})
        if names != SCHEMES["gpt2"]:
            d.fail(f"packed-qkv attention whose projections are {names}, not GPT-2's c_attn and c_proj", anchor)
    elif rotary:  # Llama's: grouped-query rotary SDPA, as --hf-config's llama_attention
        spec.update({"impl": "flash", "rotary": True, "names": "llama"})
        if kv_heads != heads:
            spec["kv_heads"] = kv_heads
        if heads * head_width != width:
            spec["head_dim"] = head_width
        if names != SCHEMES["llama"]:
            d.fail(f"rotary attention whose projections are {names}, not q_proj, k_proj, v_proj, o_proj", anchor)
    else:
        if kv_heads != heads:
            d.fail("grouped-query attention without rotary embeddings (the library's grouped-query attention is Llama's)", anchor)
        spec["impl"] = "separate_qkv_sdpa" if impl_name == "sdpa" else "separate_qkv"
        if names == SCHEMES["bert"]:
            spec["names"] = "bert"
        else:
            spec["projections"] = names
    return spec


def attention_at(d, anchor, impl_name, active):
    """The whole attention around `anchor` (an SDPA call, or eager's probabilities @ v): every node
    from the projections' input to the output projection, used only inside it."""
    # eager: an additive mask (transformers), or masked_fill(·, tril == 0, -inf) (minGPT's causal mask)
    core = sdpa_core(d, anchor) if impl_name == "sdpa" else eager_core(d, anchor) or eager_core(d, anchor, causal_fill=True)
    if core is None:
        return None
    nodes, dropout = core[4], core[3]
    qkv_y, heads, kv_heads, rotary = split_heads(d, anchor, core, impl_name)
    out_proj = output_projection(d, anchor, nodes)
    projs, packed = input_projections(d, anchor, qkv_y, rotary, nodes)
    projs = projs + [out_proj]
    x = projs[0]["x"]
    width, head_width = d.shape(x)[-1], d.shape(anchor)[-1]
    if not packed and (projs[0]["out"] != heads * head_width or any(p["out"] != kv_heads * head_width for p in projs[1:3])) or out_proj["out"] != width:
        d.fail("attention projections whose widths are not the heads' (query: heads x head size, key and value: key/value heads x head size, output: the input's)", anchor)
    if len({p["bias"] for p in projs}) != 1:
        d.fail("attention projections with and without bias", anchor)
    if not only_within(d, list(dict.fromkeys(nodes)), outside_ok=[out_proj["nodes"][-1]]):
        d.fail("an intermediate of the attention is used outside it", anchor)
    inside = set(nodes) | {x}
    for n in nodes:  # the mask, cos and sin are side inputs: nothing else of the main stream enters
        for r in d.refs(n):
            if r in active and r not in inside:
                d.fail(f"attention that reads {r} of the main stream besides its input (a mask or bias computed from the activations)", anchor)
    module = common_module([p["module"] for p in projs])
    spec = attention_spec(d, anchor, impl_name, (width, heads, kv_heads, head_width), relative([p["module"] for p in projs], module), packed, rotary)
    if dropout:
        spec["dropout"] = dropout
    if not projs[0]["bias"]:
        spec["bias"] = False
    return out_proj["nodes"][-1], x, spec, module, nodes


def gelu_tanh(d, last):
    """gelu_new: mul(mul(x, 0.5), add(tanh(mul(add(x, mul(pow(x, 3), 0.044715)), √(2/π))), 1))."""
    if not is_call(d, last, "aten.mul.Tensor"):
        return None
    half, one = d.ref(last, 0), d.ref(last, 1)
    if not (is_call(d, half, "aten.mul.Tensor") and d.arg(half, 1) == 0.5 and is_call(d, one, "aten.add.Tensor") and d.arg(one, 1) == 1.0):
        return None
    th = d.ref(one, 0)
    inner = d.ref(th, 0) if is_call(d, th, "aten.tanh.default") else None
    s = d.ref(inner, 0) if is_call(d, inner, "aten.mul.Tensor") else None
    if not is_call(d, s, "aten.add.Tensor"):
        return None
    x, cube = d.ref(s, 0), d.ref(s, 1)
    pw = d.ref(cube, 0) if is_call(d, cube, "aten.mul.Tensor") else None
    if not (is_call(d, pw, "aten.pow.Tensor_Scalar") and d.arg(pw, 1) == 3.0 and d.ref(pw, 0) == x and d.ref(half, 0) == x):
        return None
    nodes = [half, pw, cube, s, inner, th, one, last]
    if not only_within(d, nodes, outside_ok=[last]):
        return None
    return last, x, {"op": "gelu_new"}, d.path(last), nodes


def rms_norm(d, last):
    """transformers' RMSNorm: weight · to(x32 · rsqrt(mean(x32², -1, keepdim) + eps)), x32 = x.to(float32)."""
    if not is_call(d, last, "aten.mul.Tensor") or not d.is_param(d.ref(last, 0)):
        return None
    nodes, y = [last], d.ref(last, 1)
    if is_call(d, y, "aten.to.dtype"):
        nodes.append(y)
        y = d.ref(y, 0)
    if not is_call(d, y, "aten.mul.Tensor"):
        return None
    x32, r = d.ref(y, 0), d.ref(y, 1)
    a = d.ref(r, 0) if is_call(d, r, "aten.rsqrt.default") else None
    m = d.ref(a, 0) if is_call(d, a, "aten.add.Tensor") else None
    pw = d.ref(m, 0) if is_call(d, m, "aten.mean.dim") and d.arg(m, 1) == [-1] and d.arg(m, 2) else None
    if not (is_call(d, pw, "aten.pow.Tensor_Scalar") and d.arg(pw, 1) == 2 and d.ref(pw, 0) == x32):
        return None
    nodes += [y, r, a, m, pw]
    x = x32
    if is_call(d, x32, "aten.to.dtype") and d.arg(x32, 1) == "torch.float32":
        nodes.append(x32)
        x = d.ref(x32, 0)
    if d.shape(d.ref(last, 0)) != [d.shape(last)[-1]] or not only_within(d, nodes, outside_ok=[last]):
        return None
    return last, x, {"op": "rms_norm"}, d.path(last), nodes


def side_embedding(d, e, active):
    """embedding(param, indices not from the model's input) [→ to(same dtype)] → (table, nodes)."""
    nodes = []
    if is_call(d, e, "aten.to.dtype_layout", "aten.to.dtype") and e not in active:
        nodes.append(e)
        e = d.ref(e, 0)
    if not is_call(d, e, "aten.embedding.default") or e in active or not d.is_param(d.ref(e, 0)):
        return None
    return d.ref(e, 0), nodes + [e]


def position_adds(d, add, active):
    """x + pos_table(ids) (GPT-2's wpe: learned_positions), or x + type_table(t) + pos_table(p)
    (BERT's embeddings: bert_embeddings), matched at the first add."""
    if not is_call(d, add, "aten.add.Tensor") or d.ref(add, 0) not in active:
        return None
    first = side_embedding(d, d.ref(add, 1), active)
    if first is None:
        return None
    users = d.real_users(add)
    second = None
    if len(users) == 1 and is_call(d, users[0], "aten.add.Tensor") and d.ref(users[0], 0) == add:
        second = side_embedding(d, d.ref(users[0], 1), active)
    x = d.ref(add, 0)
    if second is None:
        table = first[0]
        return add, x, {"op": "learned_positions", "context": d.shape(table)[0]}, d.path(first[1][-1]), [add] + first[1]
    types, positions = first[0], second[0]
    spec = {"op": "bert_embeddings", "type_vocab": d.shape(types)[0], "max_positions": d.shape(positions)[0]}
    return users[0], x, spec, d.path(users[0]), [add, users[0]] + first[1] + second[1]


def loss_tail(d, out_node):
    """The model's own loss on its logits: cross_entropy_loss(view(logits[.float()], [-1, V]), labels)
    → (logits, "causal_lm" | "cross_entropy", nodes). ForCausalLMLoss upcasts (`to float32`) and
    shifts the labels (pad, slice); BertForMaskedLM's CrossEntropyLoss does neither."""
    outs = d.arg(out_node, 0)
    refs = [o[1:] for o in outs if isinstance(o, str) and o.startswith("%")] if isinstance(outs, list) else []
    losses = [r for r in refs if is_call(d, r, "aten.cross_entropy_loss.default")]
    if not losses and len(refs) == 1 and isinstance(d.shape(refs[0]), list) and isinstance(d.shape(refs[0])[0], int):
        return refs[0], "", []  # the logits alone (nanoGPT without targets): the trainer's loss, --loss
    if len(losses) != 1:
        d.fail("a model output other than one tensor (the logits) or the logits and transformers' loss (cross_entropy_loss of the logits and the labels)", out_node)
    loss = losses[0]
    flat = d.ref(loss, 0)
    if not is_call(d, flat, "aten.view.default"):
        d.fail("a loss not on the logits viewed as [-1, vocab]", loss)
    src, nodes, kind = d.ref(flat, 0), [loss, flat], "cross_entropy"
    if is_call(d, src, "aten.to.dtype") and d.arg(src, 1) == "torch.float32":
        nodes.append(src)
        src, kind = d.ref(src, 0), "causal_lm"
    others = [r for r in refs if r not in (loss, src) and r not in nodes]
    if others:
        d.fail(f"a model output other than the loss and the logits ({others[0]})", out_node)
    return src, kind, nodes


def per_head_attention(d, cat):
    """Karpathy's "Let's build GPT" MultiHeadAttention: cat([head(x) for head in heads], -1), each
    head k = key(x), q = query(x), v = value(x) (Linear(D, d) each, one x), matmul(q, transpose(k,
    -2, -1)) * c, masked_fill(tril == 0, -inf), softmax, dropout, matmul(·, v); then proj, one
    Linear(D, D) → attention(D, heads(H), attention_impl::per_head), or None."""
    parts = d.arg(cat, 0)
    if not is_call(d, cat, "aten.cat.default") or d.arg(cat, 1, "dim", 0) not in (-1, 2) or not isinstance(parts, list) or not parts:
        return None
    nodes, projs, dropout = [cat], [], set()
    for part in parts:
        core = eager_core(d, part[1:], causal_fill=True) if isinstance(part, str) and part.startswith("%") else None
        head = [linear_projection(d, t) for t in core[:3]] if core else [None]
        if None in head or len(d.shape(core[0])) != 3:
            return None
        nodes += core[4] + [n for p in head for n in p["nodes"]]
        projs += head
        dropout.add(core[3])
    users = d.real_users(cat)
    out = linear_projection(d, users[0]) if len(users) == 1 else None
    x, width = projs[0]["x"], d.shape(projs[0]["x"])[-1]
    if out is None or len({p["x"] for p in projs}) != 1 or len({p["out"] for p in projs}) != 1 or len({p["bias"] for p in projs}) != 1 \
            or projs[0]["out"] * len(parts) != width or out["out"] != width:
        return None
    nodes += out["nodes"]
    if not only_within(d, list(dict.fromkeys(nodes)), outside_ok=[out["nodes"][-1]]):
        d.fail("an intermediate of the per-head attention is used outside it", cat)
    if len(dropout) != 1:
        d.fail("heads with different dropout", cat)
    spec = {"op": "attention", "width": width, "heads": len(parts), "impl": "per_head", "bias": out["bias"]}
    if projs[0]["bias"] != out["bias"]:
        spec["qkv_bias"] = projs[0]["bias"]
    if dropout != {0}:
        spec["dropout"] = dropout.pop()
    return out["nodes"][-1], x, spec, common_module([p["module"] for p in projs + [out]]), nodes


def find_patterns(d, active, impl_name):
    fused, absorbed = {}, set()

    def take(found):
        out, x, spec, path, nodes = found
        fused[out] = (x, spec, path)
        absorbed.update(n for n in nodes if n != out)

    for name in d.order:  # Karpathy's heads first: their softmaxes are not an attention of their own
        if is_call(d, name, "aten.cat.default") and name in active:
            found = per_head_attention(d, name)
            if found:
                take(found)
    # SDPA calls; then (a model's own dump: minGPT's and nanoGPT's non-flash path) or instead (a
    # dump of transformers' eager attention) softmaxes whose probabilities meet v in a matmul
    for kind in ("sdpa", "eager"):
        if kind == "sdpa" and impl_name != "sdpa":
            continue
        anchor = "aten.scaled_dot_product_attention.default" if kind == "sdpa" else "aten.softmax.int"
        for name in d.order:
            if name in absorbed or name in fused or d.target(name) != anchor:
                continue
            if kind == "eager":  # the anchor of eager attention is probabilities @ v
                users = d.real_users(name)
                while len(users) == 1 and not is_call(d, users[0], "aten.matmul.default"):
                    users = d.real_users(users[0])
                if len(users) != 1:
                    d.fail("softmax outside an attention (no gpubudget op for it on its own here)", name)
                name = users[0]
            found = attention_at(d, name, kind, active)
            if found is None:
                d.fail("attention not in the forms read from ATen dumps (docs/export.md)", name)
            take(found)
    for name in d.order:
        if name in absorbed or name in fused or name not in active:
            continue
        for match in (lambda n: position_adds(d, n, active), lambda n: gelu_tanh(d, n), lambda n: conv1d_leaf(d, n), lambda n: rms_norm(d, n)):
            found = match(name)
            if found:
                take(found)
                break
    return fused, absorbed


def conv1d_leaf(d, name):
    p = conv1d_projection(d, name)
    if p is None:
        return None
    return name, p["x"], {"op": "linear", "out": p["out"]}, p["module"], p["nodes"]


# --- one node → one op -------------------------------------------------------------------------------

def alias_of(d, name):
    """The node's input when the node is the same tensor (a view to the same shape, alias, a cast
    to the same type, dropout with p = 0), else None."""
    t, x = d.target(name), d.ref(name, 0)
    if t in SAME_TENSOR:
        return x
    if t in ("aten.view.default", "aten.reshape.default") and d.shape(name) == d.shape(x):
        return x
    if t in ("aten.to.dtype", "aten.to.dtype_layout") and d.node(name)["dtype"] == d.node(x)["dtype"]:
        return x
    if t == "aten.dropout.default" and float(d.arg(name, 1)) == 0.0:
        return x
    return None


def layer_norm_spec(d, name):
    w, b = d.ref(name, 2), d.ref(name, 3)
    shape = d.arg(name, 1)
    if shape != [d.shape(name)[-1]] or not d.is_param(w) or (b is not None and not d.is_param(b)):
        d.fail("layer_norm other than over the last dimension with a weight (and a bias or none)", name)
    return {"op": "layer_norm"} if b is not None else {"op": "layer_norm", "bias": False}


def single_op(d, name, tied):
    """The library op of one node (the mapping table of docs/export.md, ATen column)."""
    t = d.target(name)
    if t == "aten.layer_norm.default":
        return layer_norm_spec(d, name)
    if t == "aten.dropout.default":
        if not d.arg(name, 2, "train", True):
            return None
        return {"op": "dropout", "percent": percent(d, d.arg(name, 1), name)}
    if t == "aten.gelu.default":
        return {"op": "gelu"}
    if t == "aten.tanh.default":
        return {"op": "tanh"}
    if t == "aten.silu.default":
        return {"op": "silu"}
    if t == "aten.relu.default":  # nn.ReLU() (Karpathy's FeedForward)
        return {"op": "relu"}
    if t == "aten.linear.default":
        w, b = d.ref(name, 1), d.ref(name, 2)
        if not d.is_param(w):
            d.fail("linear whose weight is not a parameter", name)
        if w in tied:
            return {"op": "tied_linear", "out": d.shape(w)[0], "tie": tied[w], "bias": b is not None}
        return {"op": "linear", "out": d.shape(w)[0]} if b is not None else {"op": "linear", "out": d.shape(w)[0], "bias": False}
    return None


def tied_weights(d, active):
    """Parameters read by more than one op (an embedding and a head): {parameter: tie id}."""
    count = {}
    for name in d.order:
        if name in active or d.target(name) == "aten.embedding.default":
            for r in set(d.refs(name)):
                if d.is_param(r):
                    count[r] = count.get(r, 0) + 1
    return {p: i + 1 for i, p in enumerate(p for p, c in count.items() if c > 1)}


def token_embedding(d):
    """The first embedding of the integer model input: the start of the graph's main stream."""
    for name in d.order:
        if d.target(name) != "aten.embedding.default":
            continue
        idx = d.ref(name, 1)
        while idx and d.node(idx)["op"] != "placeholder" and d.target(idx) in ("aten.view.default", "aten.reshape.default"):
            idx = d.ref(idx, 0)
        if idx and d.node(idx)["op"] == "placeholder" and not idx.startswith(("p_", "b_")):
            return name
    raise AtenError("no embedding of the model's integer input (token ids): the dump is not a token model")


def activations(d, seed):
    active = {seed}
    for name in d.order:
        if name not in active and any(r in active for r in d.refs(name)):
            active.add(name)
    return active


class Stream:
    """The main stream as tensor values (aliases folded): each value's spec, inputs and users."""

    def __init__(self, d, impl_name):
        self.d = d
        seed = token_embedding(d)
        self.active = activations(d, seed)
        out_node = next(n for n in d.order if d.node(n)["op"] == "output")
        logits, self.loss, loss_nodes = loss_tail(d, out_node)
        self.tied = tied_weights(d, self.active)
        fused, absorbed = find_patterns(d, self.active, impl_name)
        absorbed |= set(loss_nodes)
        self.rep, self.spec, self.inputs, self.users, self.path, self.order = {}, {}, {}, {}, {}, []
        w = d.ref(seed, 0)
        emb = {"op": "embedding", "num": d.shape(w)[0], "dim": d.shape(w)[1]}
        if w in self.tied:
            emb["tie"] = self.tied[w]
        self.enter("<tokens>", [], {"op": "tokens", "length": d.shape(seed)[1]}, "")
        self.enter(seed, ["<tokens>"], emb, d.path(seed))
        for name in d.order:
            if name == seed or name not in self.active or name in absorbed or d.target(name) in CHECKS or name == out_node:
                continue
            self.add(name, fused)
        if logits not in self.rep:
            d.fail("the logits the loss reads do not come from the model's input", logits)
        self.final = self.rep[logits]

    def add(self, name, fused):
        d = self.d
        if name in fused:
            x, spec, path = fused[name]
            if x not in self.rep:
                d.fail(f"{spec['op']} reads {x}, a tensor that does not come from the model's input", name)
            self.enter(name, [self.rep[x]], spec, path)
            return
        for r in d.refs(name):
            if r not in self.active and not d.is_param(r):
                d.fail(f"uses {r} ({d.target(r)}), a tensor that does not come from the model's input "
                       "(a mask, position ids or a buffer outside the patterns of docs/export.md)", name)
        same = alias_of(d, name)
        if same is not None:
            self.rep[name] = self.rep[same]
            return
        ins = [r for r in d.refs(name) if r in self.active]
        merges = {"aten.add.Tensor": "add", "aten.mul.Tensor": "multiply"}
        if d.target(name) in merges and len(ins) == 2:
            a, b = self.rep[d.ref(name, 0)], self.rep[d.ref(name, 1)]
            if a == b:
                d.fail("a value joined with itself", name)
            self.enter(name, [a, b], {"merge": merges[d.target(name)]}, d.path(name))
            return
        spec = single_op(d, name, self.tied)
        if spec is None:
            d.fail("no gpubudget op for this ATen node", name)
        if ins != [d.ref(name, 0)]:  # a parameter used directly (a weight outside the patterns), or two tensors in
            d.fail("no gpubudget op for this ATen node on these inputs", name)
        self.enter(name, [self.rep[d.ref(name, 0)]], spec, d.path(name))
        if spec["op"] == "tied_linear" and spec.pop("bias"):  # its own bias: BertLMPredictionHead's decoder.bias
            self.enter(name + "#bias", [name], {"op": "tied_linear_bias", "features": spec["out"]}, d.path(name))
            self.rep[name] = name + "#bias"

    def enter(self, name, ins, spec, path):
        self.rep[name] = name
        self.spec[name], self.inputs[name], self.users[name], self.path[name] = spec, ins, [], path
        for a in ins:
            self.users[a].append(name)
        self.order.append(name)

    def post_dominators(self):
        """Each value's join: the first value every path from it to the output passes through."""
        self.index = {v: i for i, v in enumerate(self.order)}
        self.ancestors, self.ipdom = {}, {}
        for v in self.order:
            bits = 1 << self.index[v]
            for a in self.inputs[v]:
                bits |= self.ancestors[a]
            self.ancestors[v] = bits
        for v in reversed(self.order):
            if v == self.final:
                self.ipdom[v] = None
                continue
            if not self.users[v]:
                self.d.fail("a result the model computes and never uses", v.split("#")[0])
            self.ipdom[v] = self.join_of(self.users[v])

    def join_of(self, users):
        j = users[0]
        for u in users[1:]:
            while j != u:
                if self.index[j] < self.index[u]:
                    j = self.ipdom[j]
                else:
                    u = self.ipdom[u]
        return j

    def reaches(self, a, b):
        return bool(self.ancestors[b] >> self.index[a] & 1)

    def chain(self, start, end, users):
        """Items computing `end` from `start`, the first step taking `users` of start: leaves, and
        the joins of forks (an add or multiply) as merges of their branches."""
        items, cur = [], start
        while cur != end:
            if len(users) == 1:
                u = users[0]
                if len(self.inputs[u]) != 1:
                    self.d.fail("a join whose inputs do not fork from one value (not series-parallel)", u)
                items.append(self.leaf(u))
                cur = u
            else:
                j = self.join_of(users)
                items.append(self.merge(cur, j, users))
                cur = j
            users = self.users[cur]
        return items

    def merge(self, cur, j, users):
        if "merge" not in self.spec[j]:
            self.d.fail(f"branches from {cur} meet at {self.d.target(j)}, not at an add or a multiply", j)
        branches, claimed = [], set()
        for a in self.inputs[j]:
            if a == cur:
                branches.append(None)
                continue
            mine = [u for u in users if u != j and self.reaches(u, a)]
            if not mine or claimed & set(mine):
                self.d.fail(f"input {a} of the join is not a branch of its own from {cur}", j)
            claimed |= set(mine)
            branches.append(self.chain(cur, a, mine))
        if len(claimed) + (1 if j in users else 0) != len(users):
            self.d.fail(f"a branch from {cur} does not end in this join", j)
        return {"merge": self.spec[j]["merge"], "branches": branches, "path": self.split(self.path[j]), "out": self.out(j)}

    def leaf(self, v):
        return {"leaf": self.spec[v], "path": self.split(self.path[v]), "own": True, "out": self.out(v)}

    def out(self, v):
        """v's per-sample output shape (None when it is not one tensor): the repeat fold's check."""
        shape = self.d.nodes[v]["shape"] if v in self.d.nodes else None
        return shape[1:] if isinstance(shape, list) and all(isinstance(x, int) for x in shape) else None

    @staticmethod
    def split(path):
        return path.split(".") if path else []

    def items(self):
        self.post_dominators()
        return [self.leaf("<tokens>")] + self.chain("<tokens>", self.final, self.users["<tokens>"])


def read(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise AtenError(f"--aten-graph {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise AtenError(f"--aten-graph {path}: not JSON: {e}")
    for key in ("nodes", "params", "input"):
        if key not in doc:
            raise AtenError(f"--aten-graph {path}: no \"{key}\" (not a dump of benchmarks/gpu/dump_transformers_graphs.py)")
    return doc


def check_vocab(d, vocab):
    """Token ids up to vocab-1 must index the token embedding."""
    seed = token_embedding(d)
    rows = d.shape(d.ref(seed, 0))[0]
    if vocab and rows < vocab:
        d.fail(f"--vocab {vocab}: ids up to {vocab - 1} index past the token embedding's {rows} rows", seed)


def items_of(doc, vocab=None):
    """(items for the exporter's naming, the loss: "causal_lm", "cross_entropy", or "" when the
    model returns its logits alone). `vocab`: the ids' range, checked against the token embedding."""
    d = Dump(doc)
    check_vocab(d, vocab)
    impl = doc.get("attn_implementation", "sdpa")
    if impl not in ("sdpa", "eager"):
        raise AtenError(f"attn_implementation {impl!r} (ATen dumps of sdpa and eager attention are read)")
    s = Stream(d, impl)
    return s.items(), s.loss
