#!/usr/bin/env python3
"""cuDNN's workspace requests of a traced torchvision CNN, matched to its convolutions
(op_rules.md CV4-CV6 read traces this way).

Usage (PyTorch and torchvision on the CPU are enough: scripts/torch26-env run python3 ...):
  conv_workspaces.py TRACE.json.gz MODEL BATCH SIZE ELEMENT_BYTES [STEP]
e.g. conv_workspaces.py benchmarks/accuracy/reference/cuda-h200/tv_resnet50_b8_448_fp32.json.gz resnet50 8 448 4

Each `run_conv_plan` allocation (a cuDNN workspace; an `oom` one, refused under a cap, is shown
with `!`) follows the request of its convolution's result (the output, the input gradient or the
weight gradient), so the workspaces group by call: forward convs in module order, backward-data
and weight gradients in reverse. A step starts at the first forward conv after a backward one.
Each workspace is named as X, Y, W sums (X input, Y output, W weight, compute dtype, unpadded)
where one fits within 64 KiB.
"""
import gzip
import json
import sys

MiB = 1 << 20


def conv_list(name, batch, size, element_bytes):
    import torch
    import torchvision
    model, out = getattr(torchvision.models, name)(), []

    def hook(mod, inp, outp):
        x = inp[0]
        out.append(dict(name=mod.gb_name, k=mod.kernel_size[0], s=mod.stride[0], cin=mod.in_channels, cout=mod.out_channels,
                        X=x[0].numel() * batch * element_bytes, Y=outp[0].numel() * batch * element_bytes,
                        W=mod.weight.numel() * element_bytes))
    for n, mod in model.named_modules():
        if isinstance(mod, torch.nn.Conv2d):
            mod.gb_name = n
            mod.register_forward_hook(hook)
    with torch.no_grad():
        model.eval()(torch.zeros(1, 3, size, size))
    return out


def call_kind(frames):
    for f in frames:
        if "backward_input" in f:
            return "bd"
        if "backward_weight" in f:
            return "bw"
        if "convolution_forward" in f or "cudnn_convolution(" in f or "cudnn_convolution_add_relu" in f:
            return "fw"
    return None


def conv_calls(events):
    calls = []  # [kind, result bytes, [workspace bytes; negative: refused]]
    for e in events:
        if e[0] not in ("alloc", "oom"):
            continue
        frames = e[4] if len(e) > 4 and e[4] else []
        kind = call_kind(frames)
        if kind is None:
            continue
        if frames[0].startswith("at::native::run_conv_plan"):
            if calls:
                calls[-1][2].append(e[1] if e[0] == "alloc" else -e[1])
        else:
            calls.append([kind, e[1], []])
    steps, current, last = [], [], None
    for c in calls:
        if c[0] == "fw" and last in ("bd", "bw"):
            steps.append(current)
            current = []
        current.append(c)
        last = c[0]
    return steps + [current]


def named(workspaces, conv):
    X, Y, W = conv["X"], conv["Y"], conv["W"]
    sums = (("X+Y+W", X + Y + W), ("X+Y", X + Y), ("X+W", X + W), ("Y+W", Y + W), ("X", X), ("Y", Y))
    out = []
    for w in workspaces:
        tag = next((n for n, v in sums if abs(abs(w) - v) < 64 * 1024), "")
        out.append("%s%.2fM%s" % ("!" if w < 0 else "", abs(w) / MiB, "=" + tag if tag else ""))
    return " ".join(out)


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    trace, model, batch, size, element_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    convs = conv_list(model, batch, size, element_bytes)
    steps = conv_calls(json.load(gzip.open(trace))["events"])
    step = steps[min(int(sys.argv[6]) if len(sys.argv) > 6 else 2, len(steps) - 1)]
    by_kind = {k: [c for c in step if c[0] == k] for k in ("fw", "bd", "bw")}
    print("%d steps (%s conv calls); step shown: fw %d, bd %d, bw %d; %d convs" % (
        len(steps), "/".join(str(len(s)) for s in steps), len(by_kind["fw"]), len(by_kind["bd"]), len(by_kind["bw"]), len(convs)))
    if len(by_kind["fw"]) != len(convs):
        print("warning: forward calls and convolutions differ in number: the match below is by order only")
    n, bd, bw = len(convs), by_kind["bd"][::-1], by_kind["bw"][::-1]
    for i, cv in enumerate(convs):
        fw = by_kind["fw"][i][2] if i < len(by_kind["fw"]) else []
        j = i - (n - len(bd))  # the first conv's input needs no gradient
        print("%-28s %dx%d/%d %4d->%4d X %7.2fM Y %7.2fM W %6.2fM | fw %s | bd %s | bw %s" % (
            cv["name"], cv["k"], cv["k"], cv["s"], cv["cin"], cv["cout"], cv["X"] / MiB, cv["Y"] / MiB, cv["W"] / MiB,
            named(fw, cv), named(bd[j][2], cv) if 0 <= j < len(bd) else "", named(bw[i][2], cv) if i < len(bw) else ""))


if __name__ == "__main__":
    main()
