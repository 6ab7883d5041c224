#!/usr/bin/python3
"""Write tests/models/cnn_fusion: a small CNN in which every pattern of the CNN fusion passes
(compiler/fuse/fuse_conv_bn.c, fuse_conv_epilogue.c, fuse_elementwise.c) occurs, exported from torch
*without* folding BatchNorm into the convs, with torch's outputs as the reference.

  stem      Conv + BatchNorm + ReLU                       conv_bn, then a Relu epilogue
  basic     ResNet block: Conv+BN+ReLU, Conv+BN, + x, ReLU  residual before the activation
  down      strided Conv (no bias) + BN + ReLU6 (Clip)      Clip epilogue, shifted-rows mode
  mb        MBConv: 1x1 + BN + SiLU, depthwise + BN + SiLU, 1x1 + BN, + x
                                                           SiLU both operand orders, residual
  dwres     ReLU(x + depthwise(x))                          depthwise residual before act
  after     ReLU(conv(x)) + x                               residual after the activation
  pbias     Conv (no bias) + per-channel parameter + Sigmoid  bias Add folded, Sigmoid
  sub       1x1 stride-2 conv (im2col mode) + BN + ReLU
  gate      x * sigmoid(GAP(x)) * 0.5 + tanh(x) - 0.25     elementwise chain with broadcasting
  head      GAP, Flatten, Linear

Run with /usr/bin/python3 (torch 1.13); the output is deterministic (fixed seed). Data sets:
0 at batch 1, 1 at batch 2. Shapes are [batch, 3, 16, 16] in, [batch, 10] out.
"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "cnn_fusion")
torch.manual_seed(7)


def bn(c):
    b = nn.BatchNorm2d(c)
    # non-trivial statistics and affine parameters, so the fold is really tested
    with torch.no_grad():
        b.running_mean.uniform_(-0.5, 0.5)
        b.running_var.uniform_(0.5, 2.0)
        b.weight.uniform_(0.5, 1.5)
        b.bias.uniform_(-0.3, 0.3)
    return b


class MB(nn.Module):
    def __init__(self, c, e):
        super().__init__()
        self.expand, self.bn1 = nn.Conv2d(c, e, 1), bn(e)
        self.dw, self.bn2 = nn.Conv2d(e, e, 3, padding=1, groups=e), bn(e)
        self.project, self.bn3 = nn.Conv2d(e, c, 1), bn(c)

    def forward(self, x):
        h = self.bn1(self.expand(x))
        h = h * torch.sigmoid(h)                  # SiLU, x first
        h = self.bn2(self.dw(h))
        h = torch.sigmoid(h) * h                  # SiLU, sigmoid first
        return self.bn3(self.project(h)) + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem, self.stem_bn = nn.Conv2d(3, 8, 3, padding=1), bn(8)
        self.b1, self.b1_bn = nn.Conv2d(8, 8, 3, padding=1), bn(8)
        self.b2, self.b2_bn = nn.Conv2d(8, 8, 3, padding=1), bn(8)
        self.down, self.down_bn = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), bn(16)
        self.mb = MB(16, 32)
        self.dwres = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.after = nn.Conv2d(16, 16, 3, padding=1)
        self.pbias_conv = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.pbias = nn.Parameter(torch.randn(16, 1, 1) * 0.2)
        self.sub, self.sub_bn = nn.Conv2d(16, 24, 1, stride=2), bn(24)
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        x = torch.relu(self.stem_bn(self.stem(x)))
        h = torch.relu(self.b1_bn(self.b1(x)))
        x = torch.relu(self.b2_bn(self.b2(h)) + x)
        x = torch.clamp(self.down_bn(self.down(x)), 0.0, 6.0)
        x = self.mb(x)
        x = torch.relu(x + self.dwres(x))
        x = torch.relu(self.after(x)) + x
        x = torch.sigmoid(self.pbias_conv(x) + self.pbias)
        g = torch.sigmoid(torch.mean(x, dim=(2, 3), keepdim=True))
        x = x * g * 0.5 + torch.tanh(x) - 0.25
        x = torch.relu(self.sub_bn(self.sub(x)))
        x = torch.mean(x, dim=(2, 3))
        return self.fc(x)


model = Net().eval()
os.makedirs(out, exist_ok=True)
path = os.path.join(out, "model.onnx")
torch.onnx.export(model, torch.randn(1, 3, 16, 16), path, opset_version=14,
                  input_names=["input"], output_names=["logits"],
                  dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                  do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
m = onnx.load(path)
onnx.checker.check_model(m)
ops = {}
for n in m.graph.node:
    ops[n.op_type] = ops.get(n.op_type, 0) + 1
print("cnn_fusion:", ", ".join("%s %d" % kv for kv in sorted(ops.items())))
assert ops.get("BatchNormalization", 0) == 8, "BatchNorm was folded by the exporter"

for k, batch in enumerate([1, 2]):
    x = torch.randn(batch, 3, 16, 16)
    with torch.no_grad():
        y = model(x)
    ds = os.path.join(out, "test_data_set_%d" % k)
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "input").SerializeToString())
    with open(os.path.join(ds, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.numpy().astype(np.float32), "logits").SerializeToString())
