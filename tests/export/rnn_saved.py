#!/usr/bin/python3
"""What nn.LSTM / nn.GRU keep for backward on the CPU (PyTorch 2.6: oneDNN's mkldnn_rnn_layer for LSTM), the
facts behind op_rules.md's "Open: recurrent layers" (no library op yet):

    scripts/torch26-env run python3 tests/export/rnn_saved.py

Prints, per configuration, the autograd nodes and every storage autograd saves (a saved_tensors_hooks
pack hook, one line per storage: shape, dtype, bytes), then oneDNN's workspace (the 1-D uint8 storage)
against T and B. 2026-12-06: LSTM(16, 32) at B 2, T 5: MkldnnRnnLayerBackward0, a 40,960 B workspace;
pages of 4,096 B for T = 1..9: 9, 9, 9, 9, 10, 10, 10, 17, 18.
"""
import collections

import torch
from torch import nn


def saved(cls, batch, steps, inputs=16, hidden=32, layers=1, bidirectional=False):
    torch.manual_seed(0)
    rnn = cls(inputs, hidden, num_layers=layers, batch_first=True, bidirectional=bidirectional)
    storages = collections.OrderedDict()

    def pack(t):
        storages.setdefault(t.untyped_storage().data_ptr(), (tuple(t.shape), t.dtype, t.untyped_storage().nbytes()))
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = rnn(torch.randn(batch, steps, inputs))[0]
    nodes, seen, todo = collections.Counter(), set(), [out.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        nodes[type(fn).__name__] += 1
        todo.extend(f for f, _ in fn.next_functions)
    return nodes, list(storages.values())


def workspace(cls, batch, steps):
    return [b for shape, dtype, b in saved(cls, batch, steps)[1] if dtype == torch.uint8]


def main():
    for cls in (nn.LSTM, nn.GRU):
        nodes, storages = saved(cls, 2, 5)
        print(f"{cls.__name__}(16, 32), B 2, T 5: {dict(nodes)}")
        for shape, dtype, nbytes in storages:
            print(f"  {shape} {dtype} {nbytes} B")
    print("LSTM workspace pages, B 2, T = 1..12:", [sum(workspace(nn.LSTM, 2, t)) // 4096 for t in range(1, 13)])
    print("LSTM workspace pages, T 5, B = 1..8:", [sum(workspace(nn.LSTM, b, 5)) // 4096 for b in range(1, 9)])


if __name__ == "__main__":
    main()
