#!/usr/bin/python3
"""Measures one CPU training step of the custom modules of custom_models.py under PyTorch 2.6, as
benchmarks/accuracy/measure26.py measures its cases (malloc shim, saved_tensors_hooks, a warm-up
step, AdamW for-loop, (out ** 2).mean(), 2 threads), for tests/export's committed comparison:

    scripts/torch26-env run python3 tests/export/measure_custom.py > tests/export/data/custom-pytorch-2.6-cpu.json
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

from tests.export import custom_models  # noqa: E402

# case, factory, per-sample input shape, batch
CASES = [("bev_unfold_net_b2_64", custom_models.bev_unfold_net, (3, 64, 64), 2),
         ("frame_transformer_b2_64", custom_models.frame_transformer, (3, 64, 64), 2),
         ("sdpa_transformer_b2_64", custom_models.sdpa_transformer, (3, 64, 64), 2),
         ("eager_transformer_b2_64", custom_models.eager_transformer, (3, 64, 64), 2)]


def main():
    out = {"source": f"PyTorch {torch.__version__} CPU, tests/export/measure_custom.py (measure.py's method)", "cases": []}
    for name, factory, shape, batch in CASES:
        torch.manual_seed(0)
        model = factory()
        model.train()
        x = torch.randn((batch,) + shape)
        opt = measure.make_optimizer("adamw", list(model.parameters()), "for_loop")
        r = {"case": name, "batch": batch, "input": list(shape), "optimizer": "adamw", "optimizer_impl": "for_loop"}
        r.update(measure.measure_step(model, x, opt, measure.Heap(), saved="hooks_always"))
        out["cases"].append(r)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
