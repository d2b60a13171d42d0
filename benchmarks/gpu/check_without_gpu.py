#!/usr/bin/env python3
"""Exercise measure_cuda.py's CUDA-side code without a GPU (PyTorch >= 2.4, any build).

    scripts/torch26-env run python3 benchmarks/gpu/check_without_gpu.py

torch.cuda's memory functions are replaced by fakes fed from the CPU heap (the malloc shim when
GB_SHIM_SO names a built one, as scripts/torch26-env passes it; else zeros), and the child processes by
canned answers, so that the parent-side CUDA branches run: run_case with CudaMem (allocator statistics,
segment summary, reserved figures), measure_context / measure_cublas / measure_isolated arithmetic on
their children's answers, the probe-output parser on docs/probes.md's sample, and the case table.
What it cannot reach: the children's own CUDA calls (child_context, child_cublas), cuDNN, real numbers.
Prints one line per check and exits non-zero on the first failure.
"""
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

so = os.environ.get("GB_SHIM_SO")
if so and os.path.exists(so) and "GB_SHIM_REEXEC" not in os.environ:
    env = dict(os.environ, LD_PRELOAD=so, GB_SHIM_REEXEC="1")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import torch  # noqa: E402

import measure_cuda as mc  # noqa: E402


def ok(cond, what):
    print("%-4s %s" % ("ok" if cond else "FAIL", what), flush=True)
    if not cond:
        sys.exit(1)


heap = mc.HeapMem() if mc._shim_loaded() else None
cur = (lambda: heap.current()) if heap else (lambda: 0)
pk = (lambda: heap.peak()) if heap else (lambda: 0)
MiB2 = 2 << 20
TOTAL = 80 * (1 << 30)
fake = types.SimpleNamespace(
    memory_allocated=lambda d=None: cur(),
    max_memory_allocated=lambda d=None: pk(),
    memory_reserved=lambda d=None: -(-cur() // MiB2) * MiB2,
    max_memory_reserved=lambda d=None: -(-pk() // MiB2) * MiB2,
    reset_peak_memory_stats=lambda d=None: heap.reset_peak() if heap else None,
    memory_stats=lambda d=None: {"requested_bytes.all.peak": pk(), "requested_bytes.all.current": cur(),
                                 "allocated_bytes.all.peak": pk(), "num_alloc_retries": 0},
    mem_get_info=lambda d=None: (TOTAL - 600 * (1 << 20), TOTAL),  # the parent's context only
    memory_snapshot=lambda: [
        {"device": 0, "segment_type": "large", "total_size": 20 << 20, "allocated_size": 9 << 20,
         "requested_size": 9 << 20, "blocks": [{"size": 9 << 20, "state": "active_allocated"}]},
        {"device": 0, "segment_type": "small", "total_size": MiB2, "allocated_size": 4096, "requested_size": 4000,
         "blocks": [{"size": 4096, "state": "active_allocated"}]},
        {"device": 0, "segment_type": "small", "total_size": MiB2, "allocated_size": 0, "requested_size": 0,
         "blocks": []}],
    synchronize=lambda d=None: None,
    empty_cache=lambda: None,
)
for k, v in vars(fake).items():
    setattr(torch.cuda, k, v)

# 1. the case table
ok(len(mc.CASES) >= 20, "case table: %d cases (>= 20)" % len(mc.CASES))
ref13 = [c["case"] for c in
         __import__("json").load(open(os.path.join(mc.ACC, "reference", "pytorch-1.13-cpu.json")))["cases"]]
ok(all(n in mc.CASES for n in ref13), "every pytorch-1.13-cpu.json case is a CUDA case (%d)" % len(ref13))
for what, pred in (("fp16_autocast", lambda c: c["precision"] == "fp16_autocast"),
                   ("bf16_autocast", lambda c: c["precision"] == "bf16_autocast"),
                   ("SDPA flash", lambda c: c.get("sdpa_backend") == "flash"),
                   ("SDPA efficient", lambda c: c.get("sdpa_backend") == "efficient"),
                   ("SDPA math", lambda c: c.get("sdpa_backend") == "math"),
                   ("checkpointing", lambda c: c["checkpoint"] != "none"),
                   ("fused AdamW", lambda c: c["optimizer_impl"] == "fused" and c["optimizer"] == "adamw"),
                   ("foreach AdamW", lambda c: c["optimizer_impl"] == "foreach" and c["optimizer"] == "adamw")):
    n = sum(1 for c in mc.CASES.values() if pred(c))
    ok(n > 0, "cases with %s: %d" % (what, n))
ok(all(n in mc.CASES for n in mc.QUICK + mc.ISOLATED), "--quick and isolated names exist")
ok(all(k in c for c in mc.CASES.values() for k in ("sdpa_backend", "grad_scaler", "precision", "optimizer_impl")),
   "every case has sdpa_backend, grad_scaler, precision, optimizer_impl")

# 2. run_case through the CUDA memory reader (fake statistics; the model runs on the CPU)
cpu = torch.device("cpu")
mem = mc.CudaMem(cpu)
r = mc.run_case(mc.CASES["mlp_b8_fp16"], cpu, mem)
need = ("params", "trainable", "grad_bytes", "opt_state_bytes", "saved_bytes", "after_forward_bytes",
        "fwd_bwd_peak_bytes", "step_peak_bytes", "reserved_peak_bytes", "requested_peak_bytes", "device_used_bytes",
        "resident_bytes", "allocated_peak_total_bytes", "reserved_first_step_bytes")
ok(all(r.get(k) is not None for k in need), "run_case via CudaMem: every field set")
ok(r["segments"]["count"] == 3 and r["segments"]["pools"]["small"]["count"] == 2
   and r["segments"]["sizes"] == {str(MiB2): 2, str(20 << 20): 1}, "segments summary: %s" % r["segments"]["pools"])
ok(r["allocator"]["num_alloc_retries"] == 0 and "requested_bytes.all.peak" in r["allocator"], "allocator counters")
ok(r["grad_scaler"] and r.get("grad_scale") == 1024.0 and r["warmup_steps"] >= 1, "GradScaler path (scale %s)" %
   r.get("grad_scale"))
if heap:
    ok(r["step_peak_bytes"] > 0 and r["fwd_bwd_peak_bytes"] <= r["step_peak_bytes"], "peaks ordered (shim loaded)")

# 3. parent-side arithmetic of the device-wide probes on canned child answers
calls = []


def fake_child(args_list, env_extra=None, timeout=180):
    calls.append((args_list, env_extra))
    if args_list[1] == "context":
        free = TOTAL - 600 * (1 << 20)
        return {"module_loading": (env_extra or {}).get("CUDA_MODULE_LOADING", "(unset)"),
                "stages": [{"stage": "init", "free": free - (500 << 20), "reserved": 0, "allocated": 0},
                           {"stage": "zeros", "free": free - (504 << 20), "reserved": MiB2, "allocated": 512}]}
    if args_list[1] == "cublas":
        return {"CUBLAS_WORKSPACE_CONFIG": (env_extra or {}).get("CUBLAS_WORKSPACE_CONFIG", "(unset)"), "steps": []}
    return {"case": args_list[3], "reserved_peak_bytes": 100 << 20, "free_after_step": TOTAL - (1200 << 20)}


mc._child = fake_child
gpu = torch.device("cuda", 0)
cm = mc.CudaMem(gpu)
ctx = mc.measure_context(gpu, cm)
ctx = mc.measure_context(gpu, cm, ("EAGER",), ctx)
modes = [r_["requested_mode"].split(" ")[0] for r_ in ctx["runs"]]
ok(modes == ["LAZY", "(inherited:", "EAGER"], "context: LAZY, inherited, then EAGER appended (%s)" % modes)
st = ctx["runs"][0]["stages"]
ok(st[0]["used"] == 500 << 20 and st[1]["non_allocator"] == (504 << 20) - MiB2,
   "context: used = parent free - child free; non_allocator = used - reserved")
cb = mc.measure_cublas(gpu)
ok([r_["CUBLAS_WORKSPACE_CONFIG"] for r_ in cb["runs"]] == ["(unset)", ":4096:8", ":16:8"], "cuBLAS: three children")
iso = mc.measure_isolated(["mlp_b8"], gpu, cm)
ok(iso["cases"]["mlp_b8"]["device_total_fresh_bytes"] == 600 << 20,
   "isolated: device total = parent free before - free after the child's step")

# 4. the C++ probe's markdown
src = open(os.path.join(mc.REPO, "docs", "probes.md")).read()
sample = re.search(r"```text\n(# gpubudget device probe.*?)```", src, re.S).group(1)
sec = mc.parse_markdown(sample)
ok("CUDA context cost" in sec and sec["CUDA context cost"]["tables"][0][1]["CUDA_MODULE_LOADING"] == "LAZY",
   "probe output parser: %d sections" % len(sec))
print("all checks passed")
