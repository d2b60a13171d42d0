#!/usr/bin/python3
"""Where does a case's training-step peak happen?  Heap timeline per autograd node.

Runs a measure.py case the same way (warm-up step, resident level, zero_grad(set_to_none=True),
forward, loss, backward) and registers a post-hook on every autograd node, recording the live
heap after the node ran and the peak while it ran (above the resident level). Prints the
forward peak, after-forward level, the nodes with the highest peaks, and grads/saved state at
the peak.

Usage: /usr/bin/python3 benchmarks/accuracy/trace_backward.py CASE [--top N] [--all]
       scripts/torch26-env run python3 benchmarks/accuracy/trace_backward.py CASE26 [--all]
CASE26: a measure26.py case (PyTorch 2.6): its optimizer implementation and, for the *_bf16 cases,
CPU autocast bf16 around forward + loss (measure26.py's step).
"""
import argparse
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

if __name__ == "__main__":
    measure.ensure_shim()

import torch  # noqa: E402

MB = 1e6


def _parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--all", action="store_true", help="print every node in execution order")
    return ap.parse_args()


def _case_step(a):
    """The case's (optimizer name, build, make_batch, optimizer implementation, autocast type): a
    measure.py case, a zoo case MODEL:BATCH:SIZE (a.case becomes its name) or a measure26.py case."""
    autocast, impl = None, None
    if a.case in measure.CASES:
        desc, opt_name, build, make_batch = measure.CASES[a.case]
    elif ":" in a.case:
        m, b, s = a.case.split(":")
        a.case = measure.zoo_case(m, int(b), None, int(s))
        desc, opt_name, build, make_batch = measure.CASES[a.case]
    else:  # a PyTorch 2.6 case
        import measure26

        c = measure26.CASES[a.case]
        opt_name, build, make_batch, impl = c["optimizer"], c["build"], c["make_batch"], c["optimizer_impl"]
        autocast = torch.bfloat16 if c["precision"] == "bf16_autocast" else None
    return opt_name, build, make_batch, impl, autocast


def _print_report(a, n_nodes, events, fwd_peak, after):
    print("%s: %d autograd nodes; forward peak %.2f MB, after forward %.2f MB" % (a.case, n_nodes, fwd_peak / MB,
                                                                             after / MB))
    if a.all:
        for i, (nm, cur, pk, g) in enumerate(events):
            print("  %4d %-34s live %9.2f MB  peak %9.2f MB  grads %8.2f MB" % (i, nm, cur / MB, pk / MB, g / MB))
    top = sorted(range(len(events)), key=lambda i: -events[i][2])[: a.top]
    print("highest peaks during backward (node index in execution order):")
    for i in sorted(top):
        nm, cur, pk, g = events[i]
        print("  %4d/%d %-34s peak %9.2f MB  live after %9.2f MB  grads so far %8.2f MB"
              % (i, len(events), nm, pk / MB, cur / MB, g / MB))


def main():
    a = _parse_args()
    heap = measure.Heap()
    opt_name, build, make_batch, impl, autocast = _case_step(a)
    torch.manual_seed(0)
    model = build()
    model.train()
    batch = make_batch()
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = measure.make_optimizer(opt_name, trainable, impl) if impl else measure.make_optimizer(opt_name, trainable)
    opt.zero_grad(set_to_none=True)
    _, loss = measure._run_forward(model, batch, autocast)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    del loss
    gc.collect()

    base = heap.current()
    heap.reset_peak()
    out, loss = measure._run_forward(model, batch, autocast)
    fwd_peak = heap.peak() - base
    after = heap.current() - base
    # collect the graph (inline: what main holds after `base` is in the heap figures)
    nodes, stack, seen = [], [loss.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        nodes.append(n)
        stack.extend(f for f, _ in n.next_functions)
    events = []

    def mk(n):
        def hook(gi, go):
            events.append((n.name(), heap.current() - base, heap.peak() - base,
                           sum(p.grad.numel() * p.grad.element_size() for p in trainable if p.grad is not None)))
            heap.reset_peak()
        return hook

    for n in nodes:
        n.register_hook(mk(n))
    heap.reset_peak()
    loss.backward()
    _print_report(a, len(nodes), events, fwd_peak, after)

if __name__ == "__main__":
    main()
