#!/usr/bin/env python3
"""Exercise measure_real_libraries.py without a GPU.

    python3 benchmarks/gpu/check_real_libraries_without_gpu.py                 # table + search + fake CUDA
    scripts/torch26-env run python3 benchmarks/gpu/check_real_libraries_without_gpu.py   # + a CPU dry run

1. The case table is the committed files' "specs" (real-libraries-h100.json and its expandable twin).
2. The batch search reproduces every recorded trial sequence of both files (same doublings, same
   bisection, same answer) when a trial fits exactly up to the recorded largest_ok; so does walk_down
   for the H200 file's 12-step searches ("down_from").
3. With PyTorch importable: the capped search's arithmetic on fake torch.cuda statistics (the
   allocator cap = cap_total - the measured non-allocator bytes, the memory fraction passed to
   set_per_process_memory_fraction, OOM and cuBLAS-style allocation failures counted as failed
   trials), and a CPU dry run of a torchvision case and a max case in fresh processes: the same
   fields as the committed file, the same parameter counts. transformers / peft cases run when
   those are installed, and are reported as skipped otherwise.
Prints one line per check and exits non-zero on the first failure.
"""
import json
import os
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure_real_libraries as mrl  # noqa: E402

REF = os.path.join(mrl.REPO, "benchmarks", "accuracy", "reference", "cuda-h100")
FILES = ("real-libraries-h100.json", "real-libraries-h100-expandable.json")


def ok(cond, what):
    print("%-4s %s" % ("ok" if cond else "FAIL", what), flush=True)
    if not cond:
        sys.exit(1)


def load(name):
    with open(os.path.join(REF, name)) as f:
        return json.load(f)


def check_table_and_search():
    for name in FILES:
        d = load(name)
        ok(all(mrl.CASES.get(n) == s for n, s in d["specs"].items()), "%s: every spec is the script's case table (%d)" % (name, len(d["specs"])))
        for n, c in d["cases"].items():
            if "trials" not in c:
                continue
            largest = c["largest_ok"]
            lo, hi, trials = mrl.search_largest(lambda b: b <= largest, d["specs"][n][1].get("start", 1))
            ok(trials == c["trials"] and lo == largest and hi == c["smallest_oom"],
               "%s: %s: the search reproduces its %d trials (largest %d)" % (name, n, len(trials), largest))
    ok(mrl.load_config("t5-small.json")["model_type"] == "t5", "hf-configs found at %s" % mrl.CONFIGS)
    check_walk_down()


def check_walk_down():
    """The 12-step searches of the H200 file (calls 18-19, spec "down_from"): walk_down reproduces
    every recorded trial sequence, and its specs are the script's extra cases."""
    with open(os.path.join(os.path.dirname(REF), "cuda-h200", "real-libraries-h200.json")) as f:
        d = json.load(f)
    walked = [n for n, s in d["specs"].items() if "down_from" in s[1]]
    ok(len(walked) == 14, "real-libraries-h200.json: 14 searches walk down from a 3-step answer")
    for n in walked:
        c, spec = d["cases"][n], d["specs"][n]
        ok(mrl.ALL_CASES.get(n) == spec, "real-libraries-h200.json: %s is the script's extra case" % n)
        largest = c["largest_ok"]
        lo, hi, trials = mrl.walk_down(lambda b: b <= largest, spec[1]["down_from"] + 1)
        ok(trials == c["trials"] and lo == largest and hi == c["smallest_oom"],
           "real-libraries-h200.json: %s: walk_down reproduces its %d trials (largest %d)" % (n, len(trials), largest))


def check_fake_cuda(torch):
    """largest_batch's CUDA branch on fake statistics: no GPU, no model."""
    MiB = 1 << 20
    state = {"fraction": None, "reserved": 0}
    total = 80 * (1 << 30)
    fake_cuda = types.SimpleNamespace(
        synchronize=lambda d=None: None, memory_allocated=lambda d=None: 0, max_memory_allocated=lambda d=None: 0,
        memory_reserved=lambda d=None: state["reserved"], max_memory_reserved=lambda d=None: 0,
        reset_peak_memory_stats=lambda d=None: None, empty_cache=lambda: state.update(reserved=0),
        mem_get_info=lambda d=None: (total - 767 * MiB - state["reserved"], total),
        get_device_properties=lambda d=None: types.SimpleNamespace(total_memory=total),
        set_per_process_memory_fraction=lambda f, d=None: state.update(fraction=f),
        OutOfMemoryError=torch.cuda.OutOfMemoryError)
    fake_torch = types.SimpleNamespace(cuda=fake_cuda)
    stats = mrl.Stats(fake_torch, torch.device("cuda", 0))
    real_train = mrl.train

    def fake_train(kind, spec, batch, dev, stats_, dry):
        state["reserved"] = 40 * MiB  # the warm-up's cache, emptied before the non-allocator bytes are read
        if batch > 300:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if batch > 250:
            raise RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
        return {}

    mrl.train = fake_train
    try:
        res = mrl.largest_batch({"kind": "tv", "model": "resnet18", "size": 224, "prec": "fp32", "start": 64}, torch.device("cuda", 0),
                                stats, 16.0, False, 3)
    finally:
        mrl.train = real_train
    ok(res["non_allocator"] == 767 * MiB, "non_allocator = device_used - memory_reserved after emptying the cache (767 MiB)")
    ok(res["allocator_cap"] == 16 * (1 << 30) - 767 * MiB, "allocator_cap = 16 GiB - non_allocator")
    ok(abs(state["fraction"] - res["allocator_cap"] / total) < 1e-12, "set_per_process_memory_fraction(allocator_cap / total_memory)")
    ok(res["largest_ok"] == 250 and res["smallest_oom"] == 251 and res["exact"], "OOM and cuBLAS allocation failures are failed trials: largest 250")


def check_dry_run(torch):
    try:
        import torchvision  # noqa: F401
    except ImportError:
        print("skip the CPU dry run: no torchvision")
        return
    have_hf = all(_importable(m) for m in ("transformers", "peft"))
    cases = ["tv_resnet18_b64_224_fp32", "maxbatch16_resnet18_224_fp32"] + (["hf_t5_small_b16_t512_bf16", "hf_gemma_2b_b2_t1024_lora_bf16base"] if have_hf else [])
    if not have_hf:
        print("skip the transformers / PEFT cases of the dry run: transformers or peft not installed")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "dry.json")
        p = subprocess.run([sys.executable, mrl.SCRIPT, "--device", "cpu", "--cases", ",".join(cases), "--out", out],
                           capture_output=True, text=True, timeout=1200)
        ok(p.returncode == 0, "dry run of %s exits 0%s" % (", ".join(cases), "" if p.returncode == 0 else ":\n" + p.stdout + p.stderr[-2000:]))
        with open(out) as f:
            dry = json.load(f)
    ref = load(FILES[0])
    ok(dry["environment"]["PYTORCH_CUDA_ALLOC_CONF"] == os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "environment records PYTORCH_CUDA_ALLOC_CONF")
    for n in cases:
        got, want = dry["cases"][n], ref["cases"][n]
        ok([k for k in got if k not in mrl.FIELDS_SINCE_H100] == list(want), "%s: the committed file's fields, in its order" % n)
        if "params" in want and not n.startswith("hf_"):  # the dry run shrinks hf models' layers
            ok(got["params"] == want["params"], "%s: %d parameters, as on the H100" % (n, want["params"]))
        ok(dry["specs"][n] == ref["specs"][n], "%s: its spec written as in the committed file" % n)
    trials = dry["cases"]["maxbatch16_resnet18_224_fp32"]["trials"]
    ok(trials[-1][0] in (3, 4) and dry["cases"]["maxbatch16_resnet18_224_fp32"]["largest_ok"] == 3, "dry-run search: largest 3 under --cpu-max-batch 3")


def _importable(mod):
    try:
        __import__(mod)
        return True
    except ImportError:
        return False


def main():
    check_table_and_search()
    try:
        import torch
    except ImportError:
        print("skip the fake-CUDA and dry-run checks: no PyTorch here (scripts/torch26-env run ... has it)")
        return 0
    check_fake_cuda(torch)
    check_dry_run(torch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
