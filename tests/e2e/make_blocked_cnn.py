#!/usr/bin/python3
"""Write the blocked-layout test models (compiler/passes/blocked.c; ftaxc --report counts the
edges), each with a symbolic batch and two data sets (batch 1 and 2):

tests/models/blocked_cnn, MobileNetV2-shaped blocks whose pointwise -> depthwise edges take the
blocked layout:
  - an inverted residual block at 14x14 (1x1 16 -> 96, Clip(0, 6), depthwise 3x3, Clip, 1x1
    back to 16, + the block's input): blocked;
  - a 5x5 stride-2 depthwise (14x14 -> 7x7) after a Relu expansion: blocked;
  - a stride-2 3x3 depthwise on a ragged 7x7 plane (-> 4x4) after a linear expansion: blocked;
  - an expansion read by its depthwise conv and by another 1x1 conv (two readers): not blocked;
  - an expansion that is also a graph output: not blocked.

tests/models/blocked_plain, one inverted residual block on a 16x16 plane whose 1x1 expansion
(16 -> 64) is a shape the plain pointwise GEMM takes on its own (few input channels, a plane
that fills its lanes: compiler/ops/conv.c, pointwise_plain_fits); its only reader is the
depthwise conv, so the blocked pass turns it transposed, packs its weights again and blocks the
edge (ft_conv_blocked_transpose).

tests/models/dw_wide, the depthwise channel-vector path's other geometries (templates/c/conv.h):
  - a 3x3 depthwise on a 42x42 plane after an expansion: rows of three 14-pixel chunks, the
    middle one reading the blocked input where it lies, the outer ones through masked loads;
  - a 7x7 depthwise on 42x42 (the generic row function, chunks of 14), a stride-2 depthwise
    42 -> 21, then at 21x21 (chunks of 7) a ConvNeXt block (7x7 depthwise, LayerNorm over the
    channels between two transposes, 4x MLP with GELU, a per-channel scale, the residual) and
    a dilated 3x3 depthwise.

The references are the same networks in torch at float64. Run with /usr/bin/python3 (it has
torch, onnx and numpy); deterministic.
"""
import os

import numpy as np
import torch
from data_sets import export_with_sets

here = os.path.dirname(os.path.abspath(__file__))
c = torch.nn.Conv2d


def r6(t):
    return torch.clamp(t, 0.0, 6.0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e1, self.d1, self.p1 = c(16, 96, 1), c(96, 96, 3, padding=1, groups=96), c(96, 16, 1)
        self.e2, self.d2, self.p2 = c(16, 64, 1), c(64, 64, 5, stride=2, padding=2, groups=64), c(64, 32, 1)
        self.e3, self.d3, self.p3 = c(32, 48, 1), c(48, 48, 3, padding=1, groups=48), c(48, 32, 1)
        self.side = c(48, 32, 1)
        self.e4, self.d4, self.p4 = c(32, 32, 1), c(32, 32, 3, stride=2, padding=1, groups=32), c(32, 16, 1)
        self.e5, self.d5 = c(16, 64, 1), c(64, 64, 3, padding=1, groups=64)
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        b1 = x + self.p1(r6(self.d1(r6(self.e1(x)))))
        b2 = self.p2(r6(self.d2(torch.relu(self.e2(b1)))))
        e3 = r6(self.e3(b2))  # two readers
        b3 = self.p3(r6(self.d3(e3))) + self.side(e3)
        b4 = self.p4(torch.relu(self.d4(self.e4(b3))))
        e5 = self.e5(b4)  # also a graph output
        y = self.head(torch.relu(self.d5(e5)).mean((2, 3)))
        return y, e5


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e, self.d, self.p = c(16, 64, 1), c(64, 64, 3, padding=1, groups=64), c(64, 16, 1)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        b = x + self.p(r6(self.d(r6(self.e(x)))))
        return (self.head(b.mean((2, 3))),)


class ConvNeXtBlock(torch.nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.dw, self.ln = c(ch, ch, 7, padding=3, groups=ch), torch.nn.LayerNorm(ch, eps=1e-6)
        self.f1, self.f2 = torch.nn.Linear(ch, 4 * ch), torch.nn.Linear(4 * ch, ch)
        self.g = torch.nn.Parameter(torch.linspace(0.5, 1.5, ch))

    def forward(self, x):
        y = self.ln(self.dw(x).permute(0, 2, 3, 1))
        y = self.f2(torch.nn.functional.gelu(self.f1(y))) * self.g
        return x + y.permute(0, 3, 1, 2)


class Wide(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e1, self.d1, self.p1 = c(16, 32, 1), c(32, 32, 3, padding=1, groups=32), c(32, 16, 1)
        self.d2 = c(16, 16, 7, padding=3, groups=16)
        self.e3, self.d3 = c(16, 32, 1), c(32, 32, 3, stride=2, padding=1, groups=32)
        self.block = ConvNeXtBlock(32)
        self.d4 = c(32, 32, 3, padding=2, dilation=2, groups=32)
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        b1 = x + self.p1(r6(self.d1(r6(self.e1(x)))))
        b2 = r6(self.d3(torch.relu(self.e3(self.d2(b1)))))
        y = self.head(torch.relu(self.d4(self.block(b2))).mean((2, 3)))
        return (y,)


def write(cls, name, side, outputs, seed):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = cls().eval()
    with torch.no_grad():  # weights of a scale that keeps the activations near 1
        for m in net.modules():
            if isinstance(m, torch.nn.Conv2d):
                m.weight.mul_(1.5)
    export_with_sets(net, cls, os.path.join(here, "..", "models", name), (1, 16, side, side), outputs,
                     "tests/e2e/make_blocked_cnn.py", rng)


write(Net, "blocked_cnn", 14, ["y", "e5"], 20261126)
write(Plain, "blocked_plain", 16, ["y"], 20261129)
write(Wide, "dw_wide", 42, ["y"], 20261130)
