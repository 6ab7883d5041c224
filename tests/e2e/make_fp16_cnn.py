#!/usr/bin/python3
"""Write tests/models/fp16_cnn and tests/models/fp16_io: a small torch CNN exported to ONNX and
converted to float16 the way onnxconverter-common's convert_float_to_float16 does it (the converter
here is written for the test, nothing is downloaded):

  - every float initializer, Constant node tensor and float value type becomes float16;
  - fp16_cnn (keep_io_types): the graph inputs and outputs stay float32; a Cast to float16 follows
    each input and a Cast to float32 precedes each output, and both kinds of Cast are appended at
    the END of the node list, so the file is not topologically sorted (real converter output);
  - fp16_io: no keep_io_types, the program's inputs and outputs are float16 themselves.

ftax computes float16 models in float32 (compiler/passes/upcast.c, docs/fp16.md): the weights are
the float16 values widened exactly, the activations are not rounded to float16 between ops. The
reference is therefore the float32 network with the float16-rounded weights (torch, float64),
which ftax matches at the default tolerance; ONNX Runtime's float16 run rounds every activation
and is further from it than ftax is (about 1e-3 relative). fp16_io's input is float16 and its
output is rounded to float16, so its tolerance is float16's (tests/models/fp16_io/tolerance).

Run with /usr/bin/python3 (it has torch, onnx and numpy); deterministic.
"""
import io
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
models = os.path.join(here, "..", "models")
torch.manual_seed(20260414)
rng = np.random.default_rng(20260414)


class Net(torch.nn.Module):
    """Conv+BN+ReLU, a residual block, a strided conv, bilinear upsampling, pooling and a head."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.c3 = torch.nn.Conv2d(8, 12, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(12, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.c1(x)))
        y = torch.relu(y + self.c2(y))
        z = torch.sigmoid(self.c3(y))
        z = torch.nn.functional.interpolate(z, scale_factor=2.0, mode="nearest")
        p = torch.nn.functional.adaptive_avg_pool2d(z * 0.5 + 0.25, 1).flatten(1)
        return torch.softmax(self.fc(p), dim=1), z


net = Net()
with torch.no_grad():  # non-trivial batch-norm statistics
    net.bn.running_mean.copy_(torch.randn(8) * 0.1)
    net.bn.running_var.copy_(torch.rand(8) + 0.5)
net.eval()
# the weights as float16 holds them: the reference network computes with exactly these
with torch.no_grad():
    for p in list(net.parameters()) + list(net.buffers()):
        if p.dtype == torch.float32:
            p.copy_(p.half().float())

buf = io.BytesIO()
torch.onnx.export(net, torch.zeros(1, 3, 16, 16), buf, input_names=["x"], output_names=["probs", "mask"],
                  opset_version=13, do_constant_folding=True)
fp32 = onnx.load_from_string(buf.getvalue())


def to_fp16_tensor(t):
    return numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)


def convert(model, keep_io_types):
    """float32 -> float16 as onnxconverter-common does; Casts for kept I/O appended at the end."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    # Resize's roi and scales are float32 by the specification; the converters leave them
    resize_params = {s for n in g.node if n.op_type == "Resize" for s in n.input[1:3]}
    for k, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[k].CopyFrom(to_fp16_tensor(t))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT and \
                    n.output[0] not in resize_params:
                a.t.CopyFrom(to_fp16_tensor(a.t))
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for v in g.value_info:
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    appended = []
    for v in g.input:
        if keep_io_types:  # x (float32) -> Cast -> x_fp16, which the network reads
            appended.append(helper.make_node("Cast", [v.name], [v.name + "_fp16"], name=v.name + "_cast", to=TensorProto.FLOAT16))
            for n in g.node:
                n.input[:] = [v.name + "_fp16" if s == v.name else s for s in n.input]
        else:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    for v in g.output:
        if keep_io_types:  # the network writes y_fp16 -> Cast -> y (float32)
            for n in g.node:
                n.output[:] = [v.name + "_fp16" if s == v.name else s for s in n.output]
                n.input[:] = [v.name + "_fp16" if s == v.name else s for s in n.input]
            appended.append(helper.make_node("Cast", [v.name + "_fp16"], [v.name], name=v.name + "_cast", to=TensorProto.FLOAT))
        else:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    g.node.extend(appended)
    m.producer_name = "ftax tests/e2e/make_fp16_cnn.py"
    return m


def reference(x):
    with torch.no_grad():
        net64 = Net().double()
        net64.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
        net64.eval()
        return [o.float().numpy() for o in net64(torch.from_numpy(x).double())]


def write(name, model, io_dtype):
    out = os.path.join(models, name)
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for k in range(2):
        x = rng.standard_normal((1, 3, 16, 16)).astype(io_dtype)
        ds = os.path.join(out, "test_data_set_%d" % k)
        os.makedirs(ds, exist_ok=True)
        with open(os.path.join(ds, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        for j, (y, oname) in enumerate(zip(reference(x.astype(np.float32)), ["probs", "mask"])):
            with open(os.path.join(ds, "output_%d.pb" % j), "wb") as f:
                f.write(numpy_helper.from_array(y.astype(io_dtype), oname).SerializeToString())
    print("wrote", os.path.normpath(out), len(model.graph.node), "nodes")


write("fp16_cnn", convert(fp32, keep_io_types=True), np.float32)
write("fp16_io", convert(fp32, keep_io_types=False), np.float16)
