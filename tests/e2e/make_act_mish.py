#!/usr/bin/python3
"""Write tests/models/act_mish: one activation (Mish, the worked example of docs/adding-an-op.md)
in every place a scalar op of templates/common/scalar_ops.h runs, with references from numpy:

  folded      Mish of a constant (constant folding at compile time, the op's own kernel)
  ew          Mish(x + folded): an Add -> Mish chain, fused into one ftax.Elementwise
  mm          Mish(x @ W1): the MatMul's epilogue (ftax.FusedMatMul)
  gm          Mish(Gemm(x2, W2, b2)): the Gemm's epilogue (ftax.FusedGemm)
  cv          Mish(Conv(img, Wc, bc)): the convolution's epilogue (ftax.FusedConv)
  lr          LeakyRelu(x @ W3, alpha=0.2): an epilogue activation with a parameter

ftax-eager runs the same model op by op (tests/e2e/run_model_test.sh), and the CUDA tests build
the CUDA program under emulation (tests/cuda). tests/unit/test_fuse_cnn.c checks that each of
these fused as intended and computes what the unfused ops do. Run with /usr/bin/python3 (it has onnx and numpy); deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "act_mish")
rng = np.random.default_rng(20250601)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


c0 = f32(8, scale=2.0)
W1, W3 = f32(8, 16, scale=0.5), f32(8, 16, scale=0.5)
W2, b2 = f32(6, 8, scale=0.5), f32(6)
Wc, bc = f32(4, 3, 3, 3, scale=0.3), f32(4)

nodes = [
    helper.make_node("Mish", ["c0"], ["folded"], name="fold"),
    helper.make_node("Add", ["x", "folded"], ["s"], name="add"),
    helper.make_node("Mish", ["s"], ["ew"], name="ew_mish"),
    helper.make_node("MatMul", ["x", "W1"], ["p1"], name="mm"),
    helper.make_node("Mish", ["p1"], ["mm"], name="mm_mish"),
    helper.make_node("Gemm", ["x2", "W2", "b2"], ["p2"], name="gemm", transB=1),
    helper.make_node("Mish", ["p2"], ["gm"], name="gemm_mish"),
    helper.make_node("Conv", ["img", "Wc", "bc"], ["p3"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Mish", ["p3"], ["cv"], name="conv_mish"),
    helper.make_node("MatMul", ["x", "W3"], ["p4"], name="mm_leaky"),
    helper.make_node("LeakyRelu", ["p4"], ["lr"], name="leaky", alpha=0.2),
]
graph = helper.make_graph(
    nodes, "act_mish",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8]),
     helper.make_tensor_value_info("x2", TensorProto.FLOAT, [4, 8]),
     helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, 6, 6])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
     [("ew", [1, 4, 8]), ("mm", [1, 4, 16]), ("gm", [4, 6]), ("cv", [1, 4, 6, 6]),
      ("lr", [1, 4, 16])]],
    [numpy_helper.from_array(a, n) for a, n in
     [(c0, "c0"), (W1, "W1"), (W2, "W2"), (b2, "b2"), (Wc, "Wc"), (bc, "bc"), (W3, "W3")]])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                          producer_name="ftax tests/e2e/make_act_mish.py")
# onnx 1.12 (Debian's) predates Mish (opset 18): its checker would refuse the model
if "Mish" in {schema.name for schema in onnx.defs.get_all_schemas()}:
    onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))


def mish(v):
    v = v.astype(np.float64)
    return v * np.tanh(np.log1p(np.exp(v)))


def conv(img, w, b):
    n, ci, h, wd = img.shape
    p = np.pad(img.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,oc->nohw", p[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y + b[None, :, None, None]


def reference(x, x2, img):
    x64 = x.astype(np.float64)
    ew = mish(x64 + mish(c0))
    mm = mish(x64 @ W1)
    gm = mish(x2.astype(np.float64) @ W2.T + b2)
    cv = mish(conv(img, Wc, bc))
    p4 = x64 @ W3
    lr = np.where(p4 < 0, 0.2 * p4, p4)
    return [a.astype(np.float32) for a in (ew, mm, gm, cv, lr)]


for k in range(2):
    ins = [("x", f32(1, 4, 8, scale=2.0)), ("x2", f32(4, 8, scale=2.0)), ("img", f32(1, 3, 6, 6))]
    ds = os.path.join(out, "test_data_set_%d" % k)
    os.makedirs(ds, exist_ok=True)
    for i, (name, arr) in enumerate(ins):
        with open(os.path.join(ds, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    for i, (name, arr) in enumerate(zip(["ew", "mm", "gm", "cv", "lr"], reference(*[a for _, a in ins]))):
        with open(os.path.join(ds, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
print("wrote", os.path.normpath(out))
