#!/usr/bin/python3
"""Write tests/models/blocked_plain: one inverted residual block on a 16x16 plane whose 1x1
expansion (16 -> 64) is a shape the plain pointwise GEMM takes on its own (few input channels, a
plane that fills its lanes: compiler/ops/conv.c, pointwise_plain_fits); its only reader is the
depthwise conv, so the blocked pass turns it transposed, packs its weights again and blocks the
edge (ft_conv_blocked_transpose). Then the projection back to 16 with the block's input added,
a mean and a linear head. A symbolic batch and two data sets (batch 1 and 2).

The reference is the same network in torch at float64. Run with /usr/bin/python3 (it has torch,
onnx and numpy); deterministic.
"""
import io
import os

import numpy as np
import onnx
import torch
from data_sets import write_sets

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "blocked_plain")
torch.manual_seed(20261129)
rng = np.random.default_rng(20261129)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        c = torch.nn.Conv2d
        self.e, self.d, self.p = c(16, 64, 1), c(64, 64, 3, padding=1, groups=64), c(64, 16, 1)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        r6 = lambda t: torch.clamp(t, 0.0, 6.0)
        b = x + self.p(r6(self.d(r6(self.e(x)))))
        return self.head(b.mean((2, 3)))


net = Net().eval()
with torch.no_grad():  # weights of a scale that keeps the activations near 1
    for m in net.modules():
        if isinstance(m, torch.nn.Conv2d):
            m.weight.mul_(1.5)
buf = io.BytesIO()
torch.onnx.export(net, torch.zeros(1, 16, 16, 16), buf, input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=13,
                  do_constant_folding=True)
model = onnx.load_from_string(buf.getvalue())
model.producer_name = "ftax tests/e2e/make_blocked_plain.py"
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))

net64 = Net().double().eval()
net64.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
sets = []
for batch in [1, 2]:
    x = rng.standard_normal((batch, 16, 16, 16)).astype(np.float32)
    with torch.no_grad():
        y = net64(torch.from_numpy(x).double()).float().numpy()
    sets.append(([("x", x)], [("y", y)]))
write_sets(out, sets)
print("wrote", os.path.normpath(out), len(model.graph.node), "nodes")
