#!/usr/bin/python3
"""Write tests/models/unsorted: a small CNN whose nodes the file lists out of topological order
(ONNX requires sorted files; converters do not always keep them sorted, and ONNX Runtime sorts
them), so that ftax's loader has to sort it (onnx/toposort.c). The nodes are shuffled with a fixed
seed; the Reshape target is computed from the input's shape (Shape -> Gather -> Concat), a chain
that only folds when it runs in dependency order. References from numpy.

Run with /usr/bin/python3 (it has onnx and numpy); deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "unsorted")
rng = np.random.default_rng(20260413)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


Wc, bc = f32(4, 3, 3, 3, scale=0.3), f32(4)
Wf = f32(4 * 4 * 4, 5, scale=0.2)
nodes = [
    helper.make_node("Conv", ["x", "Wc", "bc"], ["c"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Shape", ["p"], ["s"], name="shape"),
    helper.make_node("Gather", ["s", "zero"], ["batch"], name="batch_dim", axis=0),
    helper.make_node("Concat", ["batch", "minus_one"], ["target"], name="target", axis=0),
    helper.make_node("Reshape", ["p", "target"], ["flat"], name="flatten"),
    helper.make_node("MatMul", ["flat", "Wf"], ["logits"], name="fc"),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
order = rng.permutation(len(nodes))
assert any(order[k] != k for k in range(len(nodes)))
graph = helper.make_graph(
    [nodes[k] for k in order], "unsorted",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 5])],
    [numpy_helper.from_array(a, n) for a, n in
     [(Wc, "Wc"), (bc, "bc"), (Wf, "Wf"), (np.array([0], np.int64), "zero"),
      (np.array([-1], np.int64), "minus_one")]])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="ftax tests/e2e/make_unsorted.py")
# onnx's checker refuses unsorted graphs, as the specification does: this model is meant to break
# that rule
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))


def conv(img, w, b):
    n, ci, h, wd = img.shape
    p = np.pad(img.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,oc->nohw", p[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y + b[None, :, None, None]


def reference(x):
    r = np.maximum(conv(x, Wc, bc), 0)
    p = r.reshape(1, 4, 4, 2, 4, 2).max(axis=(3, 5))
    logits = p.reshape(1, -1) @ Wf
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


for k in range(2):
    x = f32(1, 3, 8, 8)
    ds = os.path.join(out, "test_data_set_%d" % k)
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(ds, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(reference(x), "probs").SerializeToString())
print("wrote", os.path.normpath(out), "node order", list(order))
