#!/usr/bin/env python3
"""What cuDNN asks of the caching allocator for one convolution, against the batch: every allocation
and free of a convolution's forward and of its backward (input and weight gradients), for the
convolution shapes of torchvision's ResNet-50 (fp32 and bf16) and VGG16 (fp16) at 224², over a sweep
of batch sizes. Written for op_rules.md CV4's open question (ResNet-50's 3×3 forwards ask X + Y + W and
6 to 16 MiB more at some batches, not monotone in shape or batch) and the 1×1 weight-gradient rule
(side branch f-pointwise-wgrad): one shape's requests at many batches, in isolation, uncapped.

Per (model, shape, dtype, batch) and phase ("forward", "backward") the record holds `tokens`, the
allocator events in order as trace_events.py writes them ("+bytes" an allocation, numbered from 0 in
the phase; "-n" allocation n freed; "W" marks none here: no frames are recorded, so a workspace is
told from the output by its size and by being freed inside the phase), `y_bytes` / `x_bytes` /
`w_bytes` (the output, input and weight as the op sees them) and `peak_delta` (max_memory_allocated
over the phase less the bytes allocated at its start).

Usage (on a CUDA machine): python3 benchmarks/gpu/conv_sweep.py --out FILE [--budget SECONDS]
       python3 benchmarks/gpu/conv_sweep.py --dense --out FILE   (ResNet-50's 3×3 shapes, batches 1-256)
       python3 benchmarks/gpu/conv_sweep.py --dry   (the shape list and sizes, no CUDA)
"""
import argparse
import json
import time

# (name, in_ch, out_ch, kernel, stride, in_size): torchvision resnet50 (v1.5: the stride on the 3×3)
RESNET50 = [
    ("stem7x7", 3, 64, 7, 2, 224),
    ("l1_3x3", 64, 64, 3, 1, 56),
    ("l2_3x3_s2", 128, 128, 3, 2, 56),
    ("l2_3x3", 128, 128, 3, 1, 28),
    ("l3_3x3_s2", 256, 256, 3, 2, 28),
    ("l3_3x3", 256, 256, 3, 1, 14),
    ("l4_3x3_s2", 512, 512, 3, 2, 14),
    ("l4_3x3", 512, 512, 3, 1, 7),
    ("l1_1x1_64_64", 64, 64, 1, 1, 56),
    ("l1_1x1_64_256", 64, 256, 1, 1, 56),
    ("l1_1x1_256_64", 256, 64, 1, 1, 56),
    ("l2_1x1_256_128", 256, 128, 1, 1, 56),
    ("l2_1x1_128_512", 128, 512, 1, 1, 28),
    ("l2_1x1_512_128", 512, 128, 1, 1, 28),
    ("l2_down_256_512_s2", 256, 512, 1, 2, 56),
    ("l3_1x1_512_256", 512, 256, 1, 1, 28),
    ("l3_1x1_256_1024", 256, 1024, 1, 1, 14),
    ("l3_1x1_1024_256", 1024, 256, 1, 1, 14),
    ("l3_down_512_1024_s2", 512, 1024, 1, 2, 28),
    ("l4_1x1_1024_512", 1024, 512, 1, 1, 14),
    ("l4_1x1_512_2048", 512, 2048, 1, 1, 7),
    ("l4_1x1_2048_512", 2048, 512, 1, 1, 7),
    ("l4_down_1024_2048_s2", 1024, 2048, 1, 2, 14),
]
# torchvision vgg16's distinct convolutions (3×3, padding 1, bias)
VGG16 = [
    ("c1_3_64", 3, 64, 3, 1, 224),
    ("c2_64_64", 64, 64, 3, 1, 224),
    ("c3_64_128", 64, 128, 3, 1, 112),
    ("c4_128_128", 128, 128, 3, 1, 112),
    ("c5_128_256", 128, 256, 3, 1, 56),
    ("c6_256_256", 256, 256, 3, 1, 56),
    ("c8_256_512", 256, 512, 3, 1, 28),
    ("c9_512_512", 512, 512, 3, 1, 28),
    ("c11_512_512", 512, 512, 3, 1, 14),
]
# --dense (call 20): every batch from 1 to 256 for ResNet-50's 3×3 shapes, fp32 and bf16: is the
# forward's extra workspace (0 or 6-16 MiB, not monotone in the batch) periodic in the batch?
DENSE_PLAN = [("resnet50", [s for s in RESNET50 if s[3] == 3], dtype, False, list(range(1, 257)))
              for dtype in ("float32", "bfloat16")]
PLAN = [  # (model, shapes, dtype, bias, batches)
    ("resnet50", RESNET50, "float32", False, [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160, 181]),
    ("resnet50", RESNET50, "bfloat16", False, [1, 2, 4, 8, 16, 32, 64, 128, 256, 352]),
    ("vgg16", VGG16, "float16", True, [1, 2, 4, 8, 16, 32, 64, 128, 256, 304]),
]


def out_size(size, kernel, stride):
    return (size + 2 * (kernel // 2) - kernel) // stride + 1


def tokens_since(torch, start):
    """The allocator events since event index `start` of the recorded history, as +bytes / -n."""
    events = [e for t in torch.cuda.memory._snapshot()["device_traces"] for e in t][start:]
    live, tokens, count = {}, [], 0
    for e in events:
        if e["action"] == "alloc":
            live[e["addr"]] = count
            tokens.append("+%d" % e["size"])
            count += 1
        elif e["action"] == "free_completed" and e["addr"] in live:
            tokens.append("-%d" % live.pop(e["addr"]))
        elif e["action"] == "oom":
            tokens.append("X%d" % e["size"])
    return tokens


def history_length(torch):
    return sum(len(t) for t in torch.cuda.memory._snapshot()["device_traces"])


def phase(torch, fn):
    torch.cuda.synchronize()
    start_alloc = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    start = history_length(torch)
    result = fn()
    torch.cuda.synchronize()
    return result, {"tokens": tokens_since(torch, start),
                    "peak_delta": torch.cuda.max_memory_allocated() - start_alloc}


def one(torch, shape, dtype, bias, batch):
    name, cin, cout, k, s, size = shape
    dev = torch.device("cuda", 0)
    x = torch.randn(batch, cin, size, size, device=dev, dtype=dtype, requires_grad=cin != 3)
    conv = torch.nn.Conv2d(cin, cout, k, s, k // 2, bias=bias).to(dev, dtype)
    o = out_size(size, k, s)
    gy = torch.randn(batch, cout, o, o, device=dev, dtype=dtype)
    y, fwd = phase(torch, lambda: conv(x))
    _, bwd = phase(torch, lambda: y.backward(gy))
    e = x.element_size()
    rec = {"shape": name, "in_ch": cin, "out_ch": cout, "kernel": k, "stride": s, "in_size": size,
           "out_size": o, "dtype": str(dtype).replace("torch.", ""), "bias": bias, "batch": batch,
           "x_bytes": x.numel() * e, "y_bytes": y.numel() * e, "w_bytes": conv.weight.numel() * e,
           "forward": fwd, "backward": bwd}
    del x, conv, gy, y
    return rec


def record_history(torch):
    """Allocator history without frames (sizes and order only: a workspace is told by being freed)."""
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=4000000)


def write(path, env, records, t0, stopped):
    with open(path, "w") as f:
        json.dump({"environment": env, "records": records, "seconds": round(time.time() - t0, 1), "stopped_at": stopped}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="conv_sweep.json")
    ap.add_argument("--budget", type=float, default=150, help="seconds: start no new shape after this many")
    ap.add_argument("--dry", action="store_true", help="print the plan's sizes; no CUDA")
    ap.add_argument("--dense", action="store_true", help="ResNet-50's 3x3 shapes at every batch from 1 to 256")
    args = ap.parse_args()
    plan = DENSE_PLAN if args.dense else PLAN
    if args.dry:
        for model, shapes, dtype, _, batches in plan:
            for name, cin, cout, k, s, size in shapes:
                o = out_size(size, k, s)
                print(model, dtype, name, "out %d²" % o, "batches", batches)
        return
    import torch

    torch.cuda.init()
    record_history(torch)
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
           "gpu": torch.cuda.get_device_name(0), "benchmark": torch.backends.cudnn.benchmark,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    records, t0, stopped = [], time.time(), None
    for model, shapes, dtype_name, bias, batches in plan:
        dtype = getattr(torch, dtype_name)
        for shape in shapes:
            if time.time() - t0 > args.budget:
                stopped = stopped or "%s %s %s" % (model, dtype_name, shape[0])
                continue
            for batch in batches:
                try:
                    rec = one(torch, shape, dtype, bias, batch)
                except Exception as e:  # noqa: BLE001  (kept in the file, the sweep goes on)
                    rec = {"shape": shape[0], "dtype": dtype_name, "batch": batch, "error": "%s: %s" % (type(e).__name__, e)}
                rec["model"] = model
                records.append(rec)
                torch.cuda.empty_cache()
                torch.cuda.memory._record_memory_history(None)  # restart the history: snapshots stay short
                record_history(torch)
            write(args.out, env, records, t0, stopped)  # after every shape: a timed-out run keeps what ran
    write(args.out, env, records, t0, stopped)
    print("conv_sweep: %d records in %.1f s%s" % (len(records), time.time() - t0,
                                                  ", stopped at " + stopped if stopped else ""))


if __name__ == "__main__":
    main()
