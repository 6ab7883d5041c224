#!/usr/bin/python3
"""Write tests/models/shape_math: a model whose Reshape target is computed with float arithmetic
on the input's shape (Shape -> Cast(float) -> Mul -> Cast(int64) -> Reshape), as some exports do,
then a little arithmetic; a symbolic batch and two data sets (references from numpy).

For ftaxc the whole shape chain folds away. For ftax-eager --device cuda it is the case where a
shape input of an op lives on the GPU (the float Mul runs there) and has to be copied back to
the host for shape inference. Run with /usr/bin/python3; the output is deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "shape_math")
rng = np.random.default_rng(20261121)

w = rng.standard_normal((3,)).astype(np.float32)
nodes = [
    helper.make_node("Shape", ["x"], ["s"], name="shape"),                        # [batch, 4, 6]
    helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT, name="to_float"),
    helper.make_node("Mul", ["sf", "factor"], ["tf"], name="scale_shape"),         # [batch, 8, 3]
    helper.make_node("Cast", ["tf"], ["t"], to=TensorProto.INT64, name="to_int"),
    helper.make_node("Reshape", ["x", "t"], ["r"], name="reshape"),
    helper.make_node("Mul", ["r", "w"], ["out"], name="weigh"),                    # * [3]
]
graph = helper.make_graph(
    nodes, "shape_math",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 6])],
    [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 8, 3])],
    [numpy_helper.from_array(np.array([1.0, 2.0, 0.5], np.float32), "factor"), numpy_helper.from_array(w, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="ftax tests/e2e/make_shape_math.py")
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))

for k, batch in enumerate([1, 2]):
    x = rng.standard_normal((batch, 4, 6)).astype(np.float32)
    y = x.reshape(batch, 8, 3) * w
    ds = os.path.join(out, "test_data_set_%d" % k)
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(ds, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "out").SerializeToString())
print("wrote", os.path.normpath(out))
