#!/usr/bin/python3
"""Tiny ONNX models for the ftax unit tests. Run from anywhere: /usr/bin/python3 make_models.py
writes the .onnx files next to this script. Deterministic: the same script gives the same bytes.

eager_arith.onnx        x, y: float[batch, 4]
    a = x + c1 (c1 = [1, 2, 3, 4]);  out0 = ((a * y) - 0.5) / [2] + x ** 2
    out1 = x < y (bool);  out2 = a (a graph output that nodes also read)
    and an Add nobody reads (its result is released at once)
eager_shape_chain.onnx  x: float[batch, seq, 4]
    the chain torch exports for x.view(x.size(0), -1):
    Shape -> Gather(0) -> Unsqueeze -> Concat(with Constant [-1]) -> Reshape, then
    out0 = reshaped * 2 + 1  (float[batch, seq*4])
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def c(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def arith():
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Add", ["x", "c1"], ["a"], name="add_c1"),
        helper.make_node("Mul", ["a", "y"], ["b"], name="mul_y"),
        helper.make_node("Sub", ["b", "half"], ["d"], name="sub_half"),
        helper.make_node("Div", ["d", "two1"], ["e"], name="div_two"),
        helper.make_node("Pow", ["x", "two"], ["p"], name="pow_two"),
        helper.make_node("Add", ["e", "p"], ["out0"], name="add_out"),
        helper.make_node("Less", ["x", "y"], ["out1"], name="less"),
        helper.make_node("Add", ["x", "x"], ["unused"], name="dead_add"),
        helper.make_node("Add", ["a", "zero"], ["out2"], name="keep_a"),
    ]
    g = helper.make_graph(
        nodes, "eager_arith",
        [helper.make_tensor_value_info("x", f, ["batch", 4]), helper.make_tensor_value_info("y", f, ["batch", 4])],
        [helper.make_tensor_value_info("out0", f, ["batch", 4]),
         helper.make_tensor_value_info("out1", TensorProto.BOOL, ["batch", 4]),
         helper.make_tensor_value_info("out2", f, ["batch", 4])],
        [c("c1", np.array([1, 2, 3, 4], np.float32)), c("half", np.array(0.5, np.float32)),
         c("two1", np.array([2], np.float32)), c("two", np.array(2, np.float32)),
         c("zero", np.array(0, np.float32))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="ftax tests")
    m.ir_version = 8
    save(m, "eager_arith.onnx")


def shape_chain():
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i0"], ["b"], name="gather_batch", axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["ub"], name="unsqueeze_batch"),
        helper.make_node("Constant", [], ["minus1"], name="minus_one",
                         value=helper.make_tensor("m1", TensorProto.INT64, [1], [-1])),
        helper.make_node("Concat", ["ub", "minus1"], ["target"], name="concat_target", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"], name="view"),
        helper.make_node("Mul", ["r", "two"], ["r2"], name="times_two"),
        helper.make_node("Add", ["r2", "one"], ["out0"], name="plus_one"),
    ]
    g = helper.make_graph(
        nodes, "eager_shape_chain",
        [helper.make_tensor_value_info("x", f, ["batch", "seq", 4])],
        [helper.make_tensor_value_info("out0", f, ["batch", None])],
        [c("i0", np.array(0, np.int64)), c("ax0", np.array([0], np.int64)),
         c("two", np.array(2, np.float32)), c("one", np.array(1, np.float32))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="ftax tests")
    m.ir_version = 8
    save(m, "eager_shape_chain.onnx")


if __name__ == "__main__":
    arith()
    shape_chain()
