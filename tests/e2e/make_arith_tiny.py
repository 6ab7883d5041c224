#!/usr/bin/python3
"""Write tests/models/arith_tiny: a small broadcasting arithmetic model with a symbolic batch
dimension, weights, and two ONNX test-data sets at different batch sizes (references from numpy).

It exercises the end-to-end harness with the ops every ftax branch has (Add, Sub, Mul, Div);
the real models (bert_tiny, gpt2_tiny, cnn_small) come from bench/. Run with /usr/bin/python3
(it has onnx and numpy); the output is deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "arith_tiny")
rng = np.random.default_rng(20240501)

w = rng.standard_normal((4, 8)).astype(np.float32)
b = rng.standard_normal((8,)).astype(np.float32)
s = np.array(0.5, dtype=np.float32)

nodes = [
    helper.make_node("Mul", ["x", "w"], ["xw"], name="scale"),   # [batch,4,8] * [4,8]
    helper.make_node("Add", ["xw", "b"], ["h"], name="bias"),    # + [8]
    helper.make_node("Sub", ["h", "y"], ["d"], name="diff"),     # - [batch,1,8]
    helper.make_node("Mul", ["d", "d"], ["sq"], name="square"),
    helper.make_node("Add", ["sq", "one"], ["den"], name="den"),
    helper.make_node("Div", ["h", "den"], ["z"], name="ratio"),
    helper.make_node("Mul", ["z", "s"], ["out"], name="half"),   # scalar broadcast
]
graph = helper.make_graph(
    nodes, "arith_tiny",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 8]),
     helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1, 8])],
    [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 4, 8]),
     helper.make_tensor_value_info("d", TensorProto.FLOAT, ["batch", 4, 8])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
     numpy_helper.from_array(s, "s"), numpy_helper.from_array(np.array([1.0], np.float32), "one")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="ftax tests/e2e/make_arith_tiny.py")
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))


def reference(x, y):
    h = x * w + b
    d = h - y
    return (h / (d * d + np.float32(1.0))) * s, d


for k, batch in enumerate([1, 3]):
    x = rng.standard_normal((batch, 4, 8)).astype(np.float32)
    y = rng.standard_normal((batch, 1, 8)).astype(np.float32)
    ds = os.path.join(out, "test_data_set_%d" % k)
    os.makedirs(ds, exist_ok=True)
    for i, (name, arr) in enumerate([("x", x), ("y", y)]):
        with open(os.path.join(ds, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    for i, (name, arr) in enumerate(zip(["out", "d"], reference(x, y))):
        with open(os.path.join(ds, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
print("wrote", os.path.normpath(out))
