#!/usr/bin/python3
"""Write tests/models/concat_elide: a small CNN whose Concats take every case the memory plan's
Concat elision (compiler/passes/memplan.c) must get right, with a symbolic batch and two data
sets, batch 1 (where channel Concats of NCHW tensors are one run per input, so they are elided)
and batch 2 (where they are not):

  - fire modules as SqueezeNet's: Concat(Relu(Conv1x1(q)), Relu(Conv3x3(q)));
  - a Concat input read again after the Concat (and an in-place candidate there);
  - a Conv with a residual that is a Concat input, once the Concat is dead (written over the slice);
  - nested Concats, a Concat of views (Flatten), the same value twice;
  - inputs that are a graph output, the graph input, a constant;
  - Concat on an axis with more than one run per input, and a Concat that is a graph output.

The reference is the same network in torch at float64. Run with /usr/bin/python3 (it has torch,
onnx and numpy); deterministic.
"""
import os

import numpy as np
import torch
from data_sets import export_with_sets

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "concat_elide")
torch.manual_seed(20261125)
rng = np.random.default_rng(20261125)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        c = torch.nn.Conv2d
        self.stem = c(3, 16, 3, stride=2, padding=1)  # 16x16 -> 8x8
        self.sq1, self.e1, self.e3 = c(16, 8, 1), c(8, 16, 1), c(8, 16, 3, padding=1)
        self.sq2, self.f1, self.f3 = c(32, 8, 1), c(8, 16, 1), c(8, 16, 3, padding=1)
        self.res = c(32, 16, 1)
        self.side = c(16, 16, 1)
        self.mix = c(64, 16, 3, padding=1)
        self.inc = c(3, 5, 3, padding=1)
        self.head = torch.nn.Linear(16 * 8 * 8 * 2, 10)
        self.bias = torch.nn.Parameter(torch.randn(1, 16, 8, 8))

    def forward(self, x):
        s = torch.relu(self.stem(x))
        q = torch.relu(self.sq1(s))
        a, b = torch.relu(self.e1(q)), torch.relu(self.e3(q))
        fire1 = torch.cat([a, b], 1)
        a_late = torch.sigmoid(a) * 2.0  # a read after the Concat, while fire1 lives on
        q2 = torch.relu(self.sq2(fire1))
        u, v = torch.relu(self.f1(q2)), torch.relu(self.f3(q2))
        fire2 = torch.cat([u, v], 1)
        r = torch.relu(self.res(fire2) + v)  # v's last read, fire2 dead: may be written over v's slice
        side = torch.relu(self.side(s))  # also a graph output
        nested = torch.cat([torch.cat([r, a_late], 1), side, u], 1)  # 64 channels
        m = torch.relu(self.mix(nested))
        twice = torch.cat([m, m], 1)
        with_input = torch.cat([x, self.inc(x)], 1)
        with_const = torch.cat([m, self.bias.expand(m.shape[0], -1, -1, -1)], 1)
        rows = torch.cat([m, m * 0.5], 2)  # axis 2: 16 runs per input
        flat = torch.cat([torch.flatten(m, 1), torch.flatten(r, 1)], 1)  # views of activations
        logits = self.head(flat)
        pooled = (twice.mean((2, 3)).sum(1, keepdim=True) + with_input.mean((1, 2, 3)).unsqueeze(1)
                  + with_const.mean((2, 3)).sum(1, keepdim=True) + rows.mean((1, 2, 3)).unsqueeze(1))
        return torch.cat([logits, pooled], 1), side


net = Net().eval()
export_with_sets(net, Net, out, (1, 3, 16, 16), ["y", "side"], "tests/e2e/make_concat_elide.py", rng)
