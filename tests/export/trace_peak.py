#!/usr/bin/python3
"""Where a measured step of measure_custom.py peaks, op by op: the case's warm-up step, then its
measured forward and backward under a TorchDispatchMode that reads the malloc shim (measure.py's
Heap) after every ATen op. Prints the ops that raised the peak and, with FROM TO, every op in that
range with the live bytes after it (relative to the step's start) and its tensor arguments' shapes.

    scripts/torch26-env run python3 tests/export/trace_peak.py CASE [FROM TO]
    scripts/torch26-env run python3 tests/export/trace_peak.py CASE --rise OP   # each OP's own rise

--rise: the malloc shim's peak is reset before every op, and each op whose name contains OP
prints the live bytes before it, its rise above them inside the op, and the live bytes after
(an op's temporaries: rise minus what it returns), with its tensor arguments' shapes.

How tests/export/check_export.py's known misses of the LoRA cases were found (2026-11-26).
"""
import gc
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../benchmarks/accuracy"))
sys.path.insert(0, HERE)
import measure  # noqa: E402

measure.ensure_shim()
import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import measure_custom  # noqa: E402


def main(argv):
    name = argv[0]
    found = [c for c in measure_custom.CASES if c[0] == name]
    if not found:
        raise SystemExit(f"no case {name} (measure_custom.py's: {', '.join(c[0] for c in measure_custom.CASES)})")
    _, factory, shape, batch = found[0]
    heap = measure.Heap()
    torch.manual_seed(0)
    model = factory().train()
    x = measure_custom.example_input(shape, batch, getattr(model, "sequence_first", False))
    opt = measure.make_optimizer("adamw", list(model.parameters()), "for_loop")
    out, loss = measure._run_forward(model, x, None)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    del out, loss
    gc.collect()
    log, base = [], heap.current()

    rise = len(argv) == 3 and argv[1] == "--rise"

    class Trace(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if rise:
                start = heap.current()
                heap.reset_peak()
                r = func(*args, **(kwargs or {}))
                if argv[2] in str(func):
                    print(len(log), func, "before", start - base, "rise", heap.peak() - start, "after", heap.current() - base,
                          [tuple(a.shape) for a in args if torch.is_tensor(a)])
                log.append((str(func), heap.current() - base, 0, False, []))
                return r
            before = heap.peak()
            r = func(*args, **(kwargs or {}))
            log.append((str(func), heap.current() - base, heap.peak() - base, heap.peak() > before,
                        [tuple(a.shape) for a in args if torch.is_tensor(a)]))
            return r

    heap.reset_peak()
    with Trace():
        out, loss = measure._run_forward(model, x, None)
        print("after forward", heap.current() - base, "peak so far", heap.peak() - base)
        loss.backward()
    print("forward+backward peak", heap.peak() - base)
    for i, (op, cur, peak, raised, _) in enumerate(log):
        if raised:
            print(f"{i} {op}: live {cur}, peak {peak}")
    if len(argv) == 3 and not rise:
        for i in range(int(argv[1]), min(int(argv[2]), len(log))):
            print(i, log[i][0], log[i][1], log[i][2], log[i][4])


if __name__ == "__main__":
    main(sys.argv[1:])
