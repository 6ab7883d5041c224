#!/usr/bin/python3
"""Write missing_twins.onnx: a model whose ConvTranspose and Trilu have no CUDA twin (yet) and
whose Relu has one, for the test that ftaxc --target cuda lists every missing kernel at once.
  /usr/bin/python3 tests/cuda/make_missing_twins.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(np.ones((1, 2, 3, 3), np.float32), "w")
nodes = [
    helper.make_node("ConvTranspose", ["x", "w"], ["a"], name="up"),
    helper.make_node("Relu", ["a"], ["b"], name="act"),
    helper.make_node("Trilu", ["b"], ["y"], name="tri", upper=1),
]
g = helper.make_graph(nodes, "missing_twins", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6, 6])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="ftax tests")
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "missing_twins.onnx"))
