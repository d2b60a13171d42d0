#!/usr/bin/env python3
"""Measure what PyTorch really allocates on a CUDA GPU for one training step per case: the CUDA
reference (issue B, part 3). One self-contained run for the lent GPU machine; one JSON out.

    python3 benchmarks/gpu/measure_cuda.py --out $OUT/cuda.json          # everything (a few minutes on an H100)
    python3 benchmarks/gpu/measure_cuda.py --list                         # the case table (no GPU needed)
    python3 benchmarks/gpu/measure_cuda.py --device cpu --quick --out F   # dry run of the same code paths on CPU

The models, batches and optimizers are those of the CPU references (benchmarks/accuracy/measure.py
and measure26.py, imported by path; the malloc shim is not needed). Per case, as in the CPU
reference (same field names, same definitions; "live bytes" = torch.cuda.memory_allocated):

  resident state   memory_allocated after a warm-up step, gradients freed with
                   zero_grad(set_to_none=True) (parameters + optimizer state + input batch + the
                   cuBLAS workspace PyTorch keeps in its caching allocator): `resident_bytes`
  after_forward_bytes   memory_allocated after forward + loss, above the resident state
  fwd_bwd_peak_bytes    max_memory_allocated over zero_grad + forward + loss + backward, above it
  step_peak_bytes       the same through optimizer.step() (out and loss released first)
  saved_bytes      saved_tensors_hooks over a separate forward of the model (by storage, parameter
                   storages excluded; only storages on the measured device; host ones in
                   `saved_host_bytes`)
  params, trainable, grad_bytes, opt_state_bytes   as in the CPU files

plus CUDA-only figures: `reserved_peak_bytes` (max_memory_reserved over the measured step, absolute),
`allocated_peak_total_bytes` (max_memory_allocated, absolute), `requested_peak_bytes` (the allocator's
requested-bytes peak above the resident requested bytes: the peak before PyTorch's 512 B rounding),
`reserved_first_step_bytes` (max_memory_reserved over the warm-up step, from an emptied cache),
`device_used_bytes` (cudaMemGetInfo total - free after the step: this process's context + library
modules + reserved), `segments` (torch.cuda.memory_snapshot summary after the step: segment sizes by
pool) and `allocator` (memory_stats counters). For a few cases `device_total_fresh_bytes` = what the
case alone costs the device in a fresh process (context included: what nvidia-smi shows).

Device-wide measurements (`probes`): CUDA context cost per CUDA_MODULE_LOADING (LAZY, EAGER,
inherited) in child processes, stage by stage (init, first allocation, first kernel, first cuBLAS
matmul, first cuDNN conv, first SDPA); the cuBLAS workspace (first matmul's allocations, with
CUBLAS_WORKSPACE_CONFIG unset and set); cuDNN workspace of the chosen convolution algorithms with
torch.backends.cudnn.benchmark off and on; and the C++ probe program (benchmarks/probe, built with
CMake from benchmarks/gpu/probe), its markdown output stored and parsed.

With --device cpu the same code runs on the CPU: memory figures come from the malloc shim when
GB_SHIM_SO names a built one (scripts/torch26-env run passes it), else they are null; CUDA-only
measurements are skipped with the reason in the JSON.
"""
import argparse
import contextlib
import datetime
import gc
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ACC = os.path.join(REPO, "benchmarks", "accuracy")
SCRIPT = os.path.abspath(__file__)


# --------------------------------------------------------------------------- CPU heap (dry run only)
def _shim_loaded():
    import ctypes

    try:
        ctypes.CDLL(None).gb_current  # noqa: B018
        return True
    except (AttributeError, OSError):
        return False


def _maybe_preload_shim():
    """--device cpu: re-exec under the malloc shim when GB_SHIM_SO names a built one (never builds it)."""
    argv = sys.argv[1:]
    cpu = any(a == "--device=cpu" for a in argv) or any(a == "--device" and i + 1 < len(argv) and argv[i + 1] == "cpu"
                                                       for i, a in enumerate(argv))
    so = os.environ.get("GB_SHIM_SO")
    if not cpu or not so or not os.path.exists(so) or _shim_loaded() or os.environ.get("GB_SHIM_REEXEC") == "1":
        return
    env = dict(os.environ)
    env["LD_PRELOAD"] = so + ((" " + env["LD_PRELOAD"]) if env.get("LD_PRELOAD") else "")
    env["GB_SHIM_REEXEC"] = "1"
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


if __name__ == "__main__":
    _maybe_preload_shim()

import torch  # noqa: E402

sys.path.insert(0, ACC)
import measure  # noqa: E402  (models, make_optimizer; no shim unless run as a script)
import measure26  # noqa: E402  (the 2.x case table and models)


# --------------------------------------------------------------------------- memory readers
class CudaMem:
    kind = "torch.cuda (caching allocator)"

    def __init__(self, dev):
        self.dev = dev

    def sync(self):
        torch.cuda.synchronize(self.dev)

    def current(self):
        return torch.cuda.memory_allocated(self.dev)

    def peak(self):
        return torch.cuda.max_memory_allocated(self.dev)

    def reserved(self):
        return torch.cuda.memory_reserved(self.dev)

    def reserved_peak(self):
        return torch.cuda.max_memory_reserved(self.dev)

    def reset_peak(self):
        torch.cuda.reset_peak_memory_stats(self.dev)

    def stats(self):
        return torch.cuda.memory_stats(self.dev)

    def device_used(self):
        free, total = torch.cuda.mem_get_info(self.dev)
        return total - free

    def empty_cache(self):
        torch.cuda.empty_cache()


class HeapMem(measure.Heap):
    """CPU dry run under the malloc shim: live heap bytes (PyTorch's CPU allocator does not cache).
    The shim reader is measure.py's; this adds the CUDA reader's interface."""
    kind = "malloc shim (CPU heap)"

    def sync(self):
        pass

    def reserved(self):
        return None

    def reserved_peak(self):
        return None

    def stats(self):
        return None

    def device_used(self):
        return None

    def empty_cache(self):
        pass


class NoMem:
    """CPU dry run without the shim: every memory figure null."""
    kind = "none (CPU without the malloc shim: memory figures null)"

    def sync(self):
        pass

    def current(self):
        return None

    peak = reserved = reserved_peak = stats = device_used = current

    def reset_peak(self):
        pass

    def empty_cache(self):
        pass


def _sub(a, b):
    return None if a is None or b is None else a - b


# --------------------------------------------------------------------------- cases
SDPA_BACKENDS = ("flash", "efficient", "math")
AMP_BASES = ("mlp_b8", "resnet18_b2_96", "vit_b_16_b2_96", "gpt2_small_b2_t64", "bert_base_b2_t64", "llama2l_b2_t64",
             "convnext_tiny_b2_64")
QUICK = ("mlp_b8", "mlp_b8_bf16", "mlp_b8_fp16", "mlp_b8_adamw_foreach", "mlp_b8_adamw_fused", "bev_dwconv_b1_64",
         "gat_n2000_e20000", "resnet18_b2_96", "llama2l_b2_t64", "llama2l_ckpt_b2_t64", "llama2l_sdpa_math_b2_t64_bf16",
         "llama2l_sdpa_flash_b2_t64_bf16", "temporal_ckpt_frames_b2_t5")
# Run again each in a fresh process for the device total (context + reserved + workspaces).
ISOLATED = ("mlp_b8", "resnet18_b2", "gpt2_small_b2_t128", "resnet50_b16_224_fp16_foreach",
            "vit_b_16_b16_224_bf16_foreach", "gpt2_small_sdpa_b8_t512_bf16_foreach")
ISOLATED_QUICK = ("mlp_b8",)


def _variant(base, name, **changes):
    c = dict(CASES[base] if base in CASES else measure26.CASES[base])
    c.setdefault("sdpa_backend", "default")
    c.setdefault("grad_scaler", False)
    desc = changes.pop("describe", "")
    c.update(changes)
    c["case"] = name
    c["description"] = c["description"] + desc
    CASES[name] = c
    return c


CASES = {}


def _define_cases():
    # 1 + 2 + 3 + ...: every case of the 2.6 CPU file (the 1.13 cases first, then the zoo at small sizes,
    # CPU-bf16 cases = CUDA autocast bf16 here, checkpointing, foreach/fused, SDPA, issue-B configurations)
    for n, c in measure26.CASES.items():
        d = dict(c)
        d["description"] = d["description"].replace("CPU autocast bf16", "autocast bf16")
        d.setdefault("sdpa_backend", "default")
        d.setdefault("grad_scaler", False)
        CASES[n] = d
    # AMP fp16 (torch.autocast(device, float16) + GradScaler, the usual fp16 recipe)
    for base in AMP_BASES:
        _variant(base, base + "_fp16", precision="fp16_autocast", grad_scaler=True,
                 describe=", autocast fp16 + GradScaler")
    # SDPA backends (torch.nn.attention.sdpa_kernel): flash needs 16-bit inputs, so bf16 autocast for all three,
    # and fp32 for efficient and math
    for b in SDPA_BACKENDS:
        _variant("gpt2_small_sdpa_b2_t128", "gpt2_small_sdpa_%s_b2_t128_bf16" % b, precision="bf16_autocast",
                 sdpa_backend=b, describe=", autocast bf16, SDPA backend %s only" % b)
        _variant("llama2l_b2_t64", "llama2l_sdpa_%s_b2_t64_bf16" % b, precision="bf16_autocast", sdpa_backend=b,
                 describe=", autocast bf16, SDPA backend %s only" % b)
        if b != "flash":
            _variant("gpt2_small_sdpa_b2_t128", "gpt2_small_sdpa_%s_b2_t128" % b, sdpa_backend=b,
                     describe=", fp32, SDPA backend %s only" % b)
    # checkpointing under AMP, fused AdamW under AMP
    _variant("gpt2_small_ckpt_b2_t64", "gpt2_small_ckpt_b2_t64_bf16", precision="bf16_autocast",
             describe=", autocast bf16")
    _variant("gpt2_small_b2_t64", "gpt2_small_b2_t64_bf16_adamw_fused", precision="bf16_autocast",
             optimizer_impl="fused", describe=", autocast bf16, AdamW fused=True")
    # a few training-sized steps (CUDA's default optimizer path: foreach), for the device total
    saved = dict(measure26.CASES)
    measure26.image("resnet50_b16_224", "resnet50", 224, batch=16)
    measure26.image("vit_b_16_b16_224", "vit_b_16", 224, batch=16)
    measure26.gpt2("gpt2_small_sdpa_b8_t512", seq=512, batch=8, attention="sdpa",
                   description="GPT-2 small, attention through F.scaled_dot_product_attention, batch 8, seq 512")
    extra = [n for n in measure26.CASES if n not in saved]
    for n in extra:
        c = measure26.CASES.pop(n)
        c.setdefault("sdpa_backend", "default")
        c.setdefault("grad_scaler", False)
        CASES[n] = c
    _variant("resnet50_b16_224", "resnet50_b16_224_fp16_foreach", precision="fp16_autocast", grad_scaler=True,
             optimizer_impl="foreach", describe=", autocast fp16 + GradScaler, AdamW foreach")
    _variant("vit_b_16_b16_224", "vit_b_16_b16_224_bf16_foreach", precision="bf16_autocast", optimizer_impl="foreach",
             describe=", autocast bf16, AdamW foreach")
    _variant("gpt2_small_sdpa_b8_t512", "gpt2_small_sdpa_b8_t512_bf16_foreach", precision="bf16_autocast",
             optimizer_impl="foreach", describe=", autocast bf16, AdamW foreach")
    for n in extra:  # only their variants are cases
        del CASES[n]


_define_cases()

PRECISIONS = {"fp32": None, "bf16_autocast": torch.bfloat16, "fp16_autocast": torch.float16}


# --------------------------------------------------------------------------- one case
def _to(batch, dev):
    if isinstance(batch, (tuple, list)):
        return type(batch)(t.to(dev) for t in batch)
    return batch.to(dev)


class StepEnv:
    """The contexts of one case: the device as default for factory calls inside the model (GPT's
    torch.arange, GAT's torch.zeros: the models were written for CPU), autocast around forward + loss,
    the SDPA backend around forward and backward, and GradScaler for fp16."""

    def __init__(self, c, dev):
        self.dev = dev
        self.amp = PRECISIONS[c["precision"]]
        self.backend = c.get("sdpa_backend", "default")
        self.scaler = None
        self.scaler_note = None
        if c.get("grad_scaler"):
            try:
                self.scaler = torch.amp.GradScaler(dev.type, init_scale=2.0 ** 10)
            except Exception as e:  # noqa: BLE001  (GradScaler on this device type unsupported)
                self.scaler_note = "GradScaler(%r) unavailable: %s" % (dev.type, e)

    @contextlib.contextmanager
    def outer(self):
        """Around forward and backward (checkpoint recomputation runs in backward)."""
        with contextlib.ExitStack() as st:
            if self.dev.type != "cpu":
                st.enter_context(torch.device(self.dev))
            if self.backend != "default":
                from torch.nn.attention import SDPBackend, sdpa_kernel

                st.enter_context(sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION,
                                              "efficient": SDPBackend.EFFICIENT_ATTENTION,
                                              "math": SDPBackend.MATH}[self.backend]))
            yield

    def autocast(self):
        return torch.autocast(self.dev.type, dtype=self.amp) if self.amp is not None else contextlib.nullcontext()

    def forward(self, model, batch):
        with self.autocast():
            out = model(batch)
            return out, (out ** 2).mean()

    def backward(self, loss):
        (self.scaler.scale(loss) if self.scaler else loss).backward()

    def step(self, opt):
        if self.scaler:
            self.scaler.step(opt)
            self.scaler.update()
        else:
            opt.step()


def saved_bytes_of(model, batch, env):
    """Bytes autograd holds saved when the model's forward (not the loss) returns, by storage,
    parameter storages excluded, with the device split out: measure.live_saved_storages (the
    packs still alive then; a graph freed inside forward holds nothing, like PEFT DoRA's
    lora_B(lora_A(eye)) or dual_vit's last pair update). The committed CUDA files were measured
    before that definition, counting every pack the hooks saw: only dual_vit_pwca_b1_448 differs
    (its saved bytes 68,175,680 B more than the live packs, PyTorch 2.6 and 1.13 CPU)."""
    def forward():
        with env.autocast():
            return model(batch)
    with env.outer():
        kept = measure.live_saved_storages(model, forward)
    dev = sum(s.nbytes() for s in kept.values() if s.device.type == env.dev.type)
    host = sum(s.nbytes() for s in kept.values() if s.device.type != env.dev.type)
    return dev, host


def segments_summary(dev):
    """torch.cuda.memory_snapshot(): segment sizes per pool, and what is allocated / free inside them."""
    snap = torch.cuda.memory_snapshot()
    out = {"count": 0, "total_bytes": 0, "allocated_bytes": 0, "requested_bytes": 0, "pools": {}, "sizes": {}}
    for s in snap:
        if s.get("device", 0) != dev.index and dev.index is not None:
            continue
        pool = s.get("segment_type", "?")
        size = s["total_size"]
        out["count"] += 1
        out["total_bytes"] += size
        out["allocated_bytes"] += s.get("allocated_size", 0)
        out["requested_bytes"] += s.get("requested_size", 0)
        p = out["pools"].setdefault(pool, {"count": 0, "bytes": 0})
        p["count"] += 1
        p["bytes"] += size
        out["sizes"][str(size)] = out["sizes"].get(str(size), 0) + 1
    out["sizes"] = dict(sorted(out["sizes"].items(), key=lambda kv: int(kv[0])))
    return out


STAT_KEYS = ("allocated_bytes.all.peak", "reserved_bytes.all.peak", "requested_bytes.all.peak",
             "inactive_split_bytes.all.peak", "active_bytes.all.peak", "num_alloc_retries", "num_ooms",
             "num_device_alloc", "num_device_free", "segment.all.peak", "allocation.all.peak")


def _case_fields(c, dev):
    """A case's JSON record to start from: its table fields (not its builders) and the device."""
    r = {k: v for k, v in c.items() if k not in ("build", "make_batch")}
    r["device"] = str(dev)
    return r


def _build_on(c, dev, mem):
    """The case's model and batch on `dev`, built from seed 0 after an emptied cache and peak."""
    gc.collect()
    mem.empty_cache()
    mem.reset_peak()
    torch.manual_seed(0)
    model = c["build"]()
    model.train()
    batch = c["make_batch"]()  # after the model, on the CPU: the same values as the CPU references
    model.to(dev)
    return model, _to(batch, dev)


def _warm_up(model, batch, opt, env, trainable, mem):
    """The warm-up steps: they create the optimizer state; with GradScaler, again while inf/nan
    skipped the step. Returns how many ran; the gradients are freed after them."""
    warmups = 0
    for warmups in range(1, 5):
        opt.zero_grad(set_to_none=True)
        with env.outer():
            out, loss = env.forward(model, batch)
            env.backward(loss)
        del out, loss
        env.step(opt)
        if opt.state or not trainable:
            break
    opt.zero_grad(set_to_none=True)
    mem.sync()
    return warmups


def _measure_step(model, batch, opt, env, trainable, mem):
    """The measured step from the resident state: live bytes after forward, the peaks through
    backward and optimizer.step() above the resident bytes, and the allocator's statistics
    before (st0) and after (st1) it."""
    m = {"base": mem.current(), "base_reserved": mem.reserved(), "st0": mem.stats()}
    mem.reset_peak()
    opt.zero_grad(set_to_none=True)
    with env.outer():
        out, loss = env.forward(model, batch)
        mem.sync()
        m["after_forward"] = _sub(mem.current(), m["base"])
        env.backward(loss)
    mem.sync()
    m["fwd_bwd_peak"] = _sub(mem.peak(), m["base"])
    m["fwd_bwd_reserved"] = mem.reserved_peak()
    m["grad_bytes"] = sum(p.grad.numel() * p.grad.element_size() for p in trainable if p.grad is not None)
    del out, loss  # the step runs with the output and loss released, as in the CPU references
    scale0 = env.scaler.get_scale() if env.scaler else None
    env.step(opt)
    mem.sync()
    m["step_peak"] = _sub(mem.peak(), m["base"])
    # GradScaler lowers its scale when it skipped the step (inf/nan gradients): no optimizer work
    m["step_skipped"] = env.scaler.get_scale() < scale0 if env.scaler else None
    m["st1"] = mem.stats()
    return m


def _optimizer_state_bytes(opt):
    """Bytes of the optimizer's state tensors, its step counters left out."""
    opt_state = 0
    for s in opt.state.values():
        for k, v in s.items():
            if torch.is_tensor(v) and k != "step":
                opt_state += v.numel() * v.element_size()
    return opt_state


def _allocator_fields(st0, st1, dev):
    """The CUDA caching allocator's fields of a case: requested-bytes peak, counters, segments."""
    if st1 is None:
        return {"requested_peak_bytes": None, "segments": {"skipped": "torch.cuda.memory_snapshot is CUDA only"}}
    return {"requested_peak_bytes": st1.get("requested_bytes.all.peak", 0) - st0.get("requested_bytes.all.current", 0),
            "allocator": {k: st1.get(k) for k in STAT_KEYS},
            "segments": segments_summary(dev)}


def run_case(c, dev, mem):
    """One case's training step measured on `dev`: its JSON record (the fields of the module docstring)."""
    t0 = time.time()
    r = _case_fields(c, dev)
    r["dtype"] = "float32"  # parameters, gradients, optimizer state
    r["loss"] = "(out ** 2).mean()"
    model, batch = _build_on(c, dev, mem)
    params = list(model.parameters())
    trainable = [p for p in params if p.requires_grad]
    opt = measure.make_optimizer(c["optimizer"], trainable, c["optimizer_impl"])
    env = StepEnv(c, dev)
    if env.scaler_note:
        r["grad_scaler_note"] = env.scaler_note
    r["warmup_steps"] = _warm_up(model, batch, opt, env, trainable, mem)
    r["reserved_first_step_bytes"] = mem.reserved_peak()
    if env.scaler:
        r["grad_scale"] = float(env.scaler.get_scale())

    saved_dev, saved_host = saved_bytes_of(model, batch, env)
    gc.collect()
    mem.sync()

    m = _measure_step(model, batch, opt, env, trainable, mem)
    if env.scaler:
        r["measured_step_skipped"] = m["step_skipped"]
    r.update({
        "params": sum(p.numel() for p in params),
        "trainable": sum(p.numel() for p in trainable),
        "saved_bytes": saved_dev,
        "saved_host_bytes": saved_host,
        "after_forward_bytes": m["after_forward"],
        "fwd_bwd_peak_bytes": m["fwd_bwd_peak"],
        "step_peak_bytes": m["step_peak"],
        "grad_bytes": m["grad_bytes"],
        "opt_state_bytes": _optimizer_state_bytes(opt),
        "resident_bytes": m["base"],
        "allocated_peak_total_bytes": mem.peak(),
        "reserved_before_step_bytes": m["base_reserved"],
        "reserved_fwd_bwd_peak_bytes": m["fwd_bwd_reserved"],
        "reserved_peak_bytes": mem.reserved_peak(),
        "device_used_bytes": mem.device_used(),
    })
    r.update(_allocator_fields(m["st0"], m["st1"], dev))
    del opt, model, batch, params, trainable
    gc.collect()
    mem.empty_cache()
    r["seconds"] = round(time.time() - t0, 2)
    return r


# --------------------------------------------------------------------------- child processes
def _child(args_list, env_extra=None, timeout=180):
    """Run this script with args_list in a fresh process; its last stdout line is a JSON object."""
    env = dict(os.environ)
    env.update(env_extra or {})
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, SCRIPT] + args_list, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % timeout}
    lines = [ln for ln in p.stdout.strip().splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"error": "child exited %d" % p.returncode, "stderr_tail": p.stderr[-2000:]}
    res = json.loads(lines[-1])
    res["child_seconds"] = round(time.time() - t0, 2)
    return res


def _device(name):
    """torch.device with an explicit index for CUDA (some torch.cuda calls want one; 0 = the first visible)."""
    dev = torch.device(name)
    return torch.device("cuda", 0) if dev.type == "cuda" and dev.index is None else dev


def _free(dev):
    return torch.cuda.mem_get_info(dev)[0]


def child_context(device):
    """In a fresh process: device memory used after each first-time CUDA action (free-memory readings;
    the parent read free memory before starting us and subtracts)."""
    stages = []
    dev = _device(device)
    if dev.type != "cuda":
        return {"skipped": "CUDA only (device %s)" % device}

    def mark(name):
        torch.cuda.synchronize(dev)
        stages.append({"stage": name, "free": _free(dev), "reserved": torch.cuda.memory_reserved(dev),
                       "allocated": torch.cuda.memory_allocated(dev)})

    torch.cuda.init()
    mark("torch.cuda.init() + cudaMemGetInfo (primary context)")
    x = torch.zeros(1, device=dev)
    mark("first allocation + fill kernel (torch.zeros(1))")
    y = x + 1
    mark("first elementwise kernel (x + 1)")
    a = torch.randn(256, 256, device=dev)
    mark("randn 256x256")
    b = a @ a
    mark("first fp32 matmul 256x256 (cuBLAS handle, workspace, kernels)")
    h = (a.to(torch.bfloat16) @ a.to(torch.bfloat16))
    mark("first bf16 matmul (cuBLASLt)")
    conv = torch.nn.Conv2d(3, 8, 3).to(dev)
    o = conv(torch.randn(1, 3, 16, 16, device=dev))
    mark("first conv2d (cuDNN handle, kernels)")
    try:
        q = torch.randn(1, 2, 64, 64, device=dev, dtype=torch.bfloat16)
        s = torch.nn.functional.scaled_dot_product_attention(q, q, q)
        mark("first SDPA bf16 (flash kernel)")
        del s, q
    except RuntimeError as e:
        stages.append({"stage": "first SDPA bf16", "error": str(e)[:300]})
    del x, y, a, b, h, o, conv
    return {"module_loading": os.environ.get("CUDA_MODULE_LOADING", "(unset)"), "stages": stages}


def measure_context(dev, mem, modes=("LAZY", None), prior=None):
    """modes: CUDA_MODULE_LOADING values (None = inherited), one child each; prior: an earlier result to extend
    (EAGER runs last: it loads every module of every library and is the slowest)."""
    if dev.type != "cuda":
        r = _child(["--child", "context", "--device", str(dev)])  # exercises the child plumbing
        r["skipped"] = "CUDA only: the CUDA context exists only on a GPU (child ran: %s)" % json.dumps(r)[:200]
        return {"skipped": r["skipped"]}
    mem.empty_cache()
    out = {"method": "child processes, one per CUDA_MODULE_LOADING; used = parent's free before the child "
                     "started - the child's free after each stage (device-wide; the parent is idle meanwhile); "
                     "non_allocator = used - the child's memory_reserved (context, modules, library handles)",
           "runs": []}
    if prior and "runs" in prior:
        out = prior
    for mode in modes:
        env = {"CUDA_MODULE_LOADING": mode} if mode else {}
        mem.sync()
        free0 = _free(dev)
        r = _child(["--child", "context", "--device", str(dev)], env, timeout=150)
        r["requested_mode"] = mode or "(inherited: %s)" % os.environ.get("CUDA_MODULE_LOADING", "unset")
        r["parent_free_before"] = free0
        for s in r.get("stages", []):
            if "free" in s:
                s["used"] = free0 - s["free"]
                s["non_allocator"] = s["used"] - s["reserved"]
        out["runs"].append(r)
    return out


def child_cublas(device):
    dev = _device(device)
    if dev.type != "cuda":
        return {"skipped": "CUDA only (device %s)" % device}
    res = {"CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG", "(unset)"),
           "CUBLASLT_WORKSPACE_SIZE": os.environ.get("CUBLASLT_WORKSPACE_SIZE", "(unset)"), "steps": []}

    def blocks():
        out = []
        for s in torch.cuda.memory_snapshot():
            for b in s.get("blocks", []):
                if b.get("state") == "active_allocated":
                    out.append(b["size"])
        return sorted(out)

    a = torch.randn(1024, 1024, device=dev)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated(dev)
    blocks0 = blocks()
    for name, dt in (("fp32 matmul 1024^3", torch.float32), ("bf16 matmul 1024^3", torch.bfloat16),
                     ("fp16 matmul 1024^3", torch.float16)):
        x = a.to(dt)
        m0 = torch.cuda.memory_allocated(dev)
        y = x @ x
        torch.cuda.synchronize()
        m1 = torch.cuda.memory_allocated(dev)
        res["steps"].append({"step": name, "allocated_delta": m1 - m0, "output_bytes": y.numel() * y.element_size(),
                             "workspace_bytes": m1 - m0 - y.numel() * y.element_size()})
        del x, y
    # backward runs on the autograd engine's device thread, which has its own cuBLAS handle (and workspace)
    w = torch.randn(1024, 1024, device=dev, requires_grad=True)
    m0 = torch.cuda.memory_allocated(dev)
    (a @ w).sum().backward()
    torch.cuda.synchronize()
    m1 = torch.cuda.memory_allocated(dev)
    res["steps"].append({"step": "fp32 matmul backward (autograd device thread)", "allocated_delta": m1 - m0,
                         "output_bytes": w.grad.numel() * w.grad.element_size(),
                         "workspace_bytes": m1 - m0 - w.grad.numel() * w.grad.element_size()})
    del w
    torch.cuda.synchronize()
    after = torch.cuda.memory_allocated(dev)
    new = list(blocks())
    for b in blocks0:
        if b in new:
            new.remove(b)
    res["allocated_kept_bytes"] = after - before
    res["kept_blocks"] = new
    try:
        torch._C._cuda_clearCublasWorkspaces()
        torch.cuda.synchronize()
        res["freed_by_clearCublasWorkspaces"] = after - torch.cuda.memory_allocated(dev)
    except AttributeError as e:
        res["freed_by_clearCublasWorkspaces"] = "n/a: %s" % e
    return res


def measure_cublas(dev):
    if dev.type != "cuda":
        r = _child(["--child", "cublas", "--device", str(dev)])
        return {"skipped": "CUDA only: cuBLAS workspace (child ran: %s)" % json.dumps(r)[:200]}
    return {"method": "child processes: allocations of the first matmuls (memory_allocated delta minus the "
                      "output), the blocks they keep, and what torch._C._cuda_clearCublasWorkspaces() frees",
            "runs": [_child(["--child", "cublas", "--device", str(dev)], env)
                     for env in ({}, {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}, {"CUBLAS_WORKSPACE_CONFIG": ":16:8"})]}


CONVS = [  # name, N, C, H, W, K, kernel, stride, padding, dtype
    ("resnet50.conv1 b32", 32, 3, 224, 224, 64, 7, 2, 3, torch.float32),
    ("resnet50.conv1 b32 fp16", 32, 3, 224, 224, 64, 7, 2, 3, torch.float16),
    ("resnet 3x3 64ch 56x56 b32", 32, 64, 56, 56, 64, 3, 1, 1, torch.float32),
    ("resnet 3x3 64ch 56x56 b32 fp16", 32, 64, 56, 56, 64, 3, 1, 1, torch.float16),
    ("resnet 1x1 256->64 56x56 b32 bf16", 32, 256, 56, 56, 64, 1, 1, 0, torch.bfloat16),
    ("vit_b_16 patch 16x16/16 b32", 32, 3, 224, 224, 768, 16, 16, 0, torch.float32),
]
CONVS_QUICK = [("small 3x3 16ch 32x32 b2", 2, 16, 32, 32, 16, 3, 1, 1, torch.float32)]


def measure_cudnn(dev, mem, quick):
    """Per conv shape, cudnn.benchmark off and on: the transient bytes above the tensors themselves in the
    first forward/backward (includes benchmark's search) and the second (the chosen algorithm)."""
    out = {"method": "memory_allocated peak of conv forward / backward minus the resident tensors and the "
                     "outputs (y; dx, dw, db): the workspace the chosen algorithm took from the caching allocator",
           "shapes": []}
    if dev.type == "cuda":
        out["cudnn_version"] = torch.backends.cudnn.version()
        out["allow_tf32"] = torch.backends.cudnn.allow_tf32
    else:
        out["note"] = "CPU dry run: oneDNN convolution, cudnn.benchmark has no effect; figures from %s" % mem.kind
    old = torch.backends.cudnn.benchmark
    try:
        for (name, n, ci, h, w, k, ks, st, pd, dt) in (CONVS_QUICK if quick else CONVS):
            if dev.type == "cpu" and dt != torch.float32:
                continue
            for bench in (False, True):
                torch.backends.cudnn.benchmark = bench
                torch.manual_seed(0)
                conv = torch.nn.Conv2d(ci, k, ks, stride=st, padding=pd).to(dev, dt)
                x = torch.randn(n, ci, h, w, device=dev, dtype=dt, requires_grad=True)
                row = {"shape": name, "dtype": str(dt).replace("torch.", ""), "cudnn_benchmark": bench, "iterations": []}
                for it in range(2):
                    x.grad = None
                    conv.zero_grad(set_to_none=True)
                    gc.collect()
                    mem.sync()
                    base = mem.current()
                    mem.reset_peak()
                    y = conv(x)
                    mem.sync()
                    fwd = _sub(_sub(mem.peak(), base), y.numel() * y.element_size())
                    g = torch.ones_like(y)
                    mem.sync()
                    base2 = mem.current()
                    mem.reset_peak()
                    y.backward(g)
                    mem.sync()
                    grads = x.grad.numel() * x.grad.element_size() + sum(
                        p.grad.numel() * p.grad.element_size() for p in conv.parameters())
                    bwd = _sub(_sub(mem.peak(), base2), grads)
                    row["iterations"].append({"forward_workspace_bytes": fwd, "backward_workspace_bytes": bwd})
                    del y, g
                out["shapes"].append(row)
                del conv, x
                mem.empty_cache()
    finally:
        torch.backends.cudnn.benchmark = old
    return out


def child_case(name, device, trace_dir=None):
    """One case in a fresh process: the device total it costs alone (context + reserved + libraries).
    With `trace_dir` (CUDA): the allocator's event history of the whole run_case as
    <trace_dir>/<case>.json.gz, in the format of reference/cuda-h100/<case>.json.gz
    (measure_real_libraries.write_trace: every alloc/free with its ATen, autograd and Python frames)."""
    dev = _device(device)
    if dev.type == "cuda":
        torch.cuda.init()
        mem = CudaMem(dev)
    else:
        mem = HeapMem() if _shim_loaded() else NoMem()
    tracing = trace_dir and dev.type == "cuda"
    if tracing:
        sys.path.insert(0, os.path.dirname(SCRIPT))
        from measure_real_libraries import trace_context  # noqa: E402  (GB_TRACE_STACKS / GB_TRACE_FRAMES)

        torch.cuda.memory._record_memory_history(enabled="all", **trace_context(), max_entries=2000000)
    r = run_case(CASES[name], dev, mem)
    if tracing:
        sys.path.insert(0, os.path.dirname(SCRIPT))
        import measure_real_libraries  # noqa: E402  (its trace writer and frame filter)

        measure_real_libraries.write_trace(torch, name, r, trace_dir)
        torch.cuda.memory._record_memory_history(enabled=None)
    keep = ("case", "step_peak_bytes", "reserved_peak_bytes", "resident_bytes", "allocated_peak_total_bytes")
    out = {k: r.get(k) for k in keep}
    if dev.type == "cuda":  # device-wide used after the step (read before run_case's final empty_cache)
        out["free_after_step"] = torch.cuda.mem_get_info(dev)[1] - r["device_used_bytes"]
    return out


def measure_isolated(names, dev, mem):
    out = {"method": "each case alone in a fresh process: device_total_fresh_bytes = the parent's free memory "
                     "before it started - the free memory right after the child's measured step (= the child's "
                     "context + library modules + reserved, what nvidia-smi shows for it); the parent is idle "
                     "meanwhile, its cache emptied", "cases": {}}
    for n in names:
        if dev.type == "cuda":
            mem.sync()
            mem.empty_cache()
            free0 = _free(dev)
        else:
            free0 = None
        r = _child(["--child", "case", "--cases", n, "--device", str(dev)], timeout=400)
        if dev.type == "cuda" and "free_after_step" in r:
            r["device_total_fresh_bytes"] = free0 - r["free_after_step"]
        else:
            r.setdefault("device_total_fresh_bytes", None)
            if dev.type != "cuda":
                r["note"] = "CPU dry run: no device total (child plumbing exercised)"
        out["cases"][n] = r
    return out


# --------------------------------------------------------------------------- the C++ probe
def _cudnn_roots():
    roots = []
    try:
        import importlib.util

        spec = importlib.util.find_spec("nvidia.cudnn")
        if spec and spec.submodule_search_locations:
            roots += list(spec.submodule_search_locations)
    except (ImportError, ValueError):
        pass
    return roots


def _hana_include(explicit):
    for d in ([explicit] if explicit else []) + [os.environ.get("GPUBUDGET_HANA_INCLUDE", ""),
                                                 os.path.join(REPO, ".gpucarry", "include"), "/usr/include",
                                                 "/usr/local/include"]:
        if d and os.path.exists(os.path.join(d, "boost", "hana.hpp")):
            return d
    return None


def parse_markdown(text):
    """The probe's markdown: {section: [table rows as dicts, ...] or [lines]}."""
    sections, cur, header = {}, None, None
    for line in text.splitlines():
        if line.startswith("## "):
            cur, header = line[3:].strip(), None
            sections[cur] = {"tables": [], "text": []}
            continue
        if cur is None:
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
                sections[cur]["tables"].append([])
            elif all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                continue
            else:
                sections[cur]["tables"][-1].append(dict(zip(header, cells)))
        else:
            header = None
            if line.strip():
                sections[cur]["text"].append(line.strip())
    return sections


def run_cpp_probe(dev, args):
    res = {"source": "benchmarks/probe/probe_main.cpp built from benchmarks/gpu/probe/CMakeLists.txt"}
    if args.no_probe:
        res["skipped"] = "--no-probe"
        return res
    cmake = shutil.which("cmake")
    hana = _hana_include(args.hana_include)
    if not cmake:
        res["skipped"] = "cmake not found"
        return res
    if not hana:
        res["skipped"] = ("Boost.Hana headers not found (/usr/include, .gpucarry/include, GPUBUDGET_HANA_INCLUDE): "
                          "run benchmarks/gpu/run_on_device.sh --prepare here and carry .gpucarry")
        return res
    build = args.probe_build_dir or tempfile.mkdtemp(prefix="gpubudget_probe_")
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    cfg = [cmake, "-S", os.path.join(HERE, "probe"), "-B", build, "-DCMAKE_BUILD_TYPE=Release",
           "-DGPUBUDGET_HANA_INCLUDE=" + hana] + gen
    roots = _cudnn_roots()
    if roots:
        cfg.append("-DGPUBUDGET_CUDNN_HINTS=" + ";".join(roots))
    res.update({"build_dir": build, "hana_include": hana, "cudnn_hints": roots})
    t0 = time.time()
    for step, cmd in (("configure", cfg), ("build", [cmake, "--build", build, "-j", str(os.cpu_count() or 2)])):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.probe_timeout)
        except subprocess.TimeoutExpired:
            res["error"] = "%s timed out after %d s" % (step, args.probe_timeout)
            return res
        res[step + "_log_tail"] = (p.stdout + p.stderr)[-3000:]
        if p.returncode != 0:
            res["error"] = "%s failed (exit %d)" % (step, p.returncode)
            return res
    res["build_seconds"] = round(time.time() - t0, 1)
    exe = os.path.join(build, "gpubudget_probe")
    try:
        p = subprocess.run([exe], capture_output=True, text=True, timeout=args.probe_timeout)
    except subprocess.TimeoutExpired:
        res["error"] = "gpubudget_probe timed out after %d s" % args.probe_timeout
        return res
    res["exit_code"] = p.returncode
    res["exit_meaning"] = {0: "budget fits", 1: "budget does not fit", 2: "a probe failed",
                           77: "no CUDA device"}.get(p.returncode, "?")
    res["stdout"] = p.stdout
    res["stderr"] = p.stderr[-3000:]
    res["sections"] = parse_markdown(p.stdout)
    return res


# --------------------------------------------------------------------------- environment
def environment(dev, mem):
    env = {"torch": torch.__version__, "device": dev.type, "python": platform.python_version(),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "memory_reader": mem.kind, "threads": torch.get_num_threads()}
    for mod in ("torchvision", "transformers", "timm", "peft", "accelerate"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            env[mod] = None
    for var in ("CUDA_MODULE_LOADING", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "CUBLAS_WORKSPACE_CONFIG",
                "CUDA_VISIBLE_DEVICES"):
        env[var] = os.environ.get(var)
    p = [torch.zeros(2, device=dev, requires_grad=True)]
    try:
        from torch.optim.optimizer import _default_to_fused_or_foreach

        fused, foreach = _default_to_fused_or_foreach(p, False, False)
        env["default_optimizer_impl"] = "fused" if fused else "foreach" if foreach else "for_loop"
    except Exception:  # noqa: BLE001  (private API: absent or another signature in other versions)
        env["default_optimizer_impl"] = None
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        free, total = torch.cuda.mem_get_info(dev)
        env.update({"cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "gpu": props.name,
                    "compute_capability": "%d.%d" % (props.major, props.minor),
                    "multiprocessors": props.multi_processor_count, "total_memory_bytes": props.total_memory,
                    "mem_get_info_total_bytes": total, "free_at_start_bytes": free,
                    "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                    "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32})
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,memory.used",
                                "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
            env["nvidia_smi"] = q.stdout.strip()
            env["driver"] = q.stdout.split(",")[1].strip() if q.returncode == 0 and "," in q.stdout else None
        except (OSError, subprocess.TimeoutExpired) as e:
            env["driver"] = None
            env["nvidia_smi"] = "n/a: %s" % e
    else:
        env.update({"cuda": torch.version.cuda, "gpu": None, "total_memory_bytes": None, "driver": None,
                    "note": "CPU dry run of benchmarks/gpu/measure_cuda.py: not a CUDA reference"})
    return env


# --------------------------------------------------------------------------- main
FIELDS = ("params", "trainable", "grad_bytes", "opt_state_bytes", "saved_bytes", "after_forward_bytes",
          "fwd_bwd_peak_bytes", "step_peak_bytes")


def compare(res, ref_path):
    """Measured vs a reference file, per case and field (cases of the same name only)."""
    ref = {c["case"]: c for c in json.load(open(ref_path))["cases"]}
    print("compare with %s (%s)" % (ref_path, ", ".join(FIELDS)), file=sys.stderr)
    for r in res["cases"]:
        if r["case"] not in ref or "error" in r:
            continue
        print("  %s" % r["case"], file=sys.stderr)
        for k in FIELDS:
            a, b = r.get(k), ref[r["case"]].get(k)
            d = "" if a is None or b is None else "%+d B (%+.3f%%)" % (a - b, 100.0 * (a - b) / max(b, 1))
            print("    %-20s %14s ref %14s  %s" % (k, a, b, d), file=sys.stderr)


def select(args):
    if args.cases:
        sel = args.cases.split(",")
        names = [n for n in CASES if n in sel or any(s in n for s in sel)]
    else:
        names = [n for n in (QUICK if args.quick else CASES) if n in CASES]
    skip = args.skip.split(",") if args.skip else []
    names = [n for n in names if not any(s in n for s in skip)]
    if not names:
        sys.exit("no case matches (see --list)")
    return names


def _parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu (dry run)")
    ap.add_argument("--out", help="the JSON (default: $OUT/pytorch-cuda.json when $OUT is set, else stdout)")
    ap.add_argument("--cases", help="comma-separated names or substrings (default: all, or the --quick set)")
    ap.add_argument("--skip", help="comma-separated names or substrings to leave out")
    ap.add_argument("--quick", action="store_true", help="a dozen small cases covering every code path")
    ap.add_argument("--list", action="store_true", help="print the case table and exit (no device needed)")
    ap.add_argument("--no-probe", action="store_true", help="skip building and running the C++ probe")
    ap.add_argument("--no-device-probes", action="store_true", help="skip context / cuBLAS / cuDNN / isolated runs")
    ap.add_argument("--probe-build-dir", help="where to build the C++ probe (default: a temp dir)")
    ap.add_argument("--hana-include", help="directory holding boost/hana.hpp")
    ap.add_argument("--probe-timeout", type=int, default=240, help="seconds for each probe build step and its run")
    ap.add_argument("--budget", type=float, default=400.0,
                    help="stop starting new cases after this many seconds (default 400: one 10-minute call, "
                    "with the runs that follow the cases)")
    ap.add_argument("--resume", help="an earlier (cut-off) output: keep its cases and probes, measure the rest")
    ap.add_argument("--probes-only", action="store_true", help="the device-wide probes only, no cases")
    ap.add_argument("--compare", help="a reference JSON (e.g. a CPU one): print measured vs reference per case and "
                    "field on stderr")
    ap.add_argument("--trace", metavar="DIR", help="CUDA: each selected case alone in a fresh process with the allocator's "
                    "history, written as DIR/<case>.json.gz (the format of reference/cuda-h100/); no JSON of fields")
    ap.add_argument("--child", choices=("context", "cublas", "case"), help=argparse.SUPPRESS)
    return ap.parse_args()


def _print_case_table():
    """--list: one line per case, then the counts and the isolated (fresh-process) runs."""
    for n, c in CASES.items():
        tag = " *quick" if n in QUICK else ""
        print("%-40s %-13s %-12s %-8s %-9s %-9s %s%s" % (n, c["precision"], c["optimizer"], c["optimizer_impl"],
                                                      c["checkpoint"], c.get("sdpa_backend", "default"),
                                                      c["description"], tag))
    print("%d cases (%d in --quick); isolated (fresh process) runs: %s" % (len(CASES), len(QUICK), ", ".join(ISOLATED)))


def _run_child(args):
    """--child: one fresh-process measurement, printed as one JSON line on stdout."""
    try:
        if args.child == "context":
            r = child_context(args.device)
        elif args.child == "cublas":
            r = child_cublas(args.device)
        else:
            r = child_case(args.cases, args.device, args.trace)
    except Exception as e:  # noqa: BLE001
        r = {"error": "%s: %s" % (type(e).__name__, e), "traceback": traceback.format_exc()[-1500:]}
    print(json.dumps(r))


def _trace_cases(names, dev, trace_dir):
    """--trace: each case in a child that records the allocator's history (no JSON of fields)."""
    for n in names:
        r = _child(["--child", "case", "--cases", n, "--device", str(dev), "--trace", trace_dir], timeout=400)
        done = "traced" if dev.type == "cuda" else "ran (no allocator history on the CPU)"
        print("%s: %s" % (n, "error: " + r["error"] if "error" in r else "%s (step peak %s B)" % (done, r.get("step_peak_bytes"))),
              file=sys.stderr, flush=True)


def _memory_of(dev):
    """The memory statistics of `dev`: torch.cuda's, else the malloc shim's when loaded, else none."""
    if dev.type == "cuda":
        torch.cuda.init()
        mem = CudaMem(dev)
        # measure.py pins 2 CPU threads (the CPU references' condition); on the GPU machine they only build models
        torch.set_num_threads(int(os.environ.get("GB_THREADS", os.cpu_count() or 2)))
        return mem
    return HeapMem() if _shim_loaded() else NoMem()


def _new_result(dev, mem, resume):
    """The output to fill: the environment, and with --resume the cases and probes of `resume`."""
    res = {"source": None, "environment": environment(dev, mem), "cases": [], "probes": {}}
    if resume:
        old = json.load(open(resume))
        if old["environment"].get("gpu") != res["environment"].get("gpu") or \
                old["environment"]["torch"] != res["environment"]["torch"]:
            sys.exit("--resume %s: measured on %s / torch %s, not this machine" % (
                resume, old["environment"].get("gpu"), old["environment"]["torch"]))
        res["cases"], res["probes"] = old.get("cases", []), old.get("probes", {})
        res["environment"]["resumed_from"] = {"date": old["environment"].get("date"),
                                              "total_seconds": old["environment"].get("total_seconds")}
    env = res["environment"]
    res["source"] = ("PyTorch %s on %s (%s); one training step per case; measured by benchmarks/gpu/measure_cuda.py "
                     "(torch.cuda memory statistics + saved_tensors_hooks)"
                     % (env["torch"], env.get("gpu") or "CPU (dry run)", "CUDA %s" % env.get("cuda") if dev.type == "cuda"
                        else "dry run"))
    return res


class _Run:
    """One measuring run: its output `res`, written to `out_path` after every probe and case (so a
    killed run keeps what it measured), and the log, timed from `t_all`."""

    def __init__(self, args, dev, mem, res, out_path, t_all):
        self.args, self.dev, self.mem, self.res, self.out_path, self.t_all = args, dev, mem, res, out_path, t_all

    def write(self):
        if self.out_path:
            os.makedirs(os.path.dirname(os.path.abspath(self.out_path)), exist_ok=True)
            with open(self.out_path + ".part", "w") as f:
                json.dump(self.res, f, indent=1)
                f.write("\n")
            os.replace(self.out_path + ".part", self.out_path)

    def log(self, msg):
        print("[%6.1f s] %s" % (time.time() - self.t_all, msg), file=sys.stderr, flush=True)

    def probe(self, key, fn):
        """Runs device-wide probe `key` unless --no-device-probes or --resume's file holds it
        (without an error; the context probe adds its runs); an error is stored, not raised."""
        probes = self.res["probes"]
        if self.args.no_device_probes or (key in probes and "error" not in probes[key]
                                          and "skipped" not in probes[key] and key != "context"):
            return
        t0 = time.time()
        try:
            probes[key] = fn()
        except Exception as e:  # noqa: BLE001  (one failed probe must not lose the rest)
            probes[key] = {"error": "%s: %s" % (type(e).__name__, e), "traceback": traceback.format_exc()[-1500:]}
        probes[key]["seconds"] = round(probes[key].get("seconds", 0) + time.time() - t0, 1)
        self.log("probe %s done (%.1f s)" % (key, time.time() - t0))
        self.write()

    def ctx_modes(self, wanted):
        """The CUDA_MODULE_LOADING modes of `wanted` the context probe has not measured yet."""
        runs = self.res["probes"].get("context", {}).get("runs", [])
        done = {r.get("requested_mode", "").split(" ")[0].strip("(:") for r in runs if "error" not in r}
        return tuple(m for m in wanted if (m or "inherited") not in done)

    def first_probes(self):
        """The device-wide probes that run while this process holds nothing but its context."""
        dev, mem, probes = self.dev, self.mem, self.res["probes"]
        if self.args.no_device_probes:
            probes["skipped"] = "--no-device-probes"
        self.probe("context", lambda: measure_context(dev, mem, self.ctx_modes(("LAZY", None)), probes.get("context")))
        self.probe("cublas", lambda: measure_cublas(dev))
        self.probe("cpp_probe", lambda: run_cpp_probe(dev, self.args))
        self.probe("cudnn", lambda: measure_cudnn(dev, mem, self.args.quick))

    def measure_case(self, n):
        """Case `n`, or its fields with the error that stopped it (e.g. an SDPA backend without a
        kernel for it)."""
        try:
            return run_case(CASES[n], self.dev, self.mem)
        except Exception as e:  # noqa: BLE001
            r = _case_fields(CASES[n], self.dev)
            r["error"] = "%s: %s" % (type(e).__name__, str(e)[:600])
            gc.collect()
            self.mem.empty_cache()
            return r

    def cases(self, names):
        """Measures the cases of `names` not already in the output, in `names`' order, until
        --budget; the ones left are listed as skipped. The output keeps CASES' order."""
        res, skipped = self.res, []
        done = {c["case"] for c in res["cases"] if "error" not in c}
        res["cases"] = [c for c in res["cases"] if c["case"] in done]
        for n in names:
            if n in done:
                continue
            if time.time() - self.t_all > self.args.budget:
                skipped.append(n)
                continue
            r = self.measure_case(n)
            res["cases"].append(r)
            self.log("%-40s %s" % (n, r.get("error") or "saved %s  peak %s  reserved %s  %.1f s" % (
                r["saved_bytes"], r["step_peak_bytes"], r["reserved_peak_bytes"], r["seconds"])))
            self.write()
        res.pop("skipped_cases", None)
        if skipped:
            res["skipped_cases"] = {"reason": "--budget %.0f s reached (measure them with --resume)" % self.args.budget,
                                    "cases": skipped}
        order = {n: i for i, n in enumerate(CASES)}
        res["cases"].sort(key=lambda c: order.get(c["case"], len(order)))

    def last_probes(self):
        """The fresh-process runs and the EAGER context child (the slowest), after the cases; the
        fresh processes' device totals go to their cases."""
        dev, mem, quick = self.dev, self.mem, self.args.quick
        isolated = [n for n in (ISOLATED_QUICK if quick else ISOLATED) if n in CASES]
        self.probe("isolated", lambda: measure_isolated(isolated, dev, mem))
        if not quick:
            self.probe("context", lambda: measure_context(dev, mem, self.ctx_modes(("EAGER",)),
                                                          self.res["probes"].get("context")))
        iso = self.res["probes"].get("isolated", {}).get("cases", {})
        for c in self.res["cases"]:
            if c["case"] in iso:
                c["device_total_fresh_bytes"] = iso[c["case"]].get("device_total_fresh_bytes")

    def finish(self):
        """The run's totals; the output written to --out (or printed), --compare's table on stderr."""
        env = self.res["environment"]
        env["total_seconds"] = round(time.time() - self.t_all, 1)
        env["cases_measured"] = sum(1 for c in self.res["cases"] if "error" not in c)
        env["cases_failed"] = [c["case"] for c in self.res["cases"] if "error" in c]
        if self.args.compare:
            compare(self.res, self.args.compare)
        if self.out_path:
            self.write()
            self.log("wrote %s" % self.out_path)
        else:
            json.dump(self.res, sys.stdout, indent=1)
            print()


def main():
    args = _parse_args()
    if args.list:
        _print_case_table()
        return
    dev = _device(args.device)
    if args.child:  # fresh-process measurements: one JSON line on stdout
        _run_child(args)
        return
    names = select(args)
    if args.trace:  # traces only: each case in a child that records the allocator's history
        _trace_cases(names, dev, args.trace)
        return
    if dev.type == "cuda" and not torch.cuda.is_available():
        sys.exit("measure_cuda.py: --device %s but torch.cuda.is_available() is False (use --device cpu for a dry run)"
                 % args.device)
    out_path = args.out or (os.path.join(os.environ["OUT"], "pytorch-cuda.json") if os.environ.get("OUT") else None)
    t_all = time.time()
    mem = _memory_of(dev)
    run = _Run(args, dev, mem, _new_result(dev, mem, args.resume), out_path, t_all)
    # Device-wide probes first, while this process holds nothing but its context; then the cases, which stop
    # starting at --budget (each is written as it completes, so a killed run keeps what it measured); then the
    # fresh-process runs and the EAGER context child (the slowest). With --resume, what the file already holds
    # (without an error) is kept and not measured again.
    run.first_probes()
    run.cases([] if args.probes_only else names)
    run.last_probes()
    run.finish()


if __name__ == "__main__":
    main()
