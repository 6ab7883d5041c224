#!/usr/bin/python3
"""Write two models whose sequences ftax lowers into tensors at compile time
(compiler/passes/sequence.c), each with data sets and reference outputs:

  tests/models/seq_split  torch.jit.script of a module that loops over torch.split(x, 3, dim=1)
                          (pieces of 3, 3 and 2 columns): each piece's tanh plus its row sums,
                          collected in a list; the list joined by torch.cat, and its first two
                          (one scaled by a weight) by torch.stack, plus the sum of piece 1. The export is
                          SplitToSequence, SequenceEmpty, SequenceLength, a Loop over
                          SequenceAt/SequenceInsert, ConcatFromSequence, as torch writes them.
                          References: the torch module itself.
  tests/models/seq_ops    built with onnx.helper: SequenceConstruct, SequenceInsert at a
                          position, SequenceErase, SequenceAt from the end, SequenceLength,
                          SplitToSequence with keepdims 0 and with a list of sizes,
                          ConcatFromSequence with new_axis 1. References: numpy.

Run with /usr/bin/python3 (it has onnx, numpy and torch); deterministic.
"""
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from data_sets import write_sets

here = os.path.dirname(os.path.abspath(__file__))
models = os.path.join(here, "..", "models")
rng = np.random.default_rng(20261124)


class SplitLoop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(20261124)
        self.scale = torch.nn.Parameter(torch.randn(1, 3))

    def forward(self, x):
        parts = torch.split(x, 3, dim=1)
        outs = []
        for p in parts:
            outs.append(torch.tanh(p * 2.0) + p.sum(dim=1, keepdim=True))
        joined = torch.cat(outs, dim=1) + parts[1].sum()
        return joined, torch.stack([outs[0], outs[1] * self.scale], dim=0)


def seq_split():
    out = os.path.join(models, "seq_split")
    os.makedirs(out, exist_ok=True)
    m = torch.jit.script(SplitLoop().eval())
    x = torch.from_numpy(rng.standard_normal((4, 8)).astype(np.float32))
    path = os.path.join(out, "model.onnx")
    torch.onnx.export(m, (x,), path, opset_version=13, input_names=["x"], output_names=["joined", "stacked"])
    ops = set(n.op_type for n in onnx.load(path).graph.node)
    assert {"SplitToSequence", "ConcatFromSequence", "Loop"} <= ops, ops
    sets = []
    for k in range(2):
        xs = rng.standard_normal((4, 8)).astype(np.float32) * (k + 1)
        with torch.no_grad():
            j, s = m(torch.from_numpy(xs))
        sets.append(([("x", xs)], [("joined", j.numpy()), ("stacked", s.numpy())]))
    write_sets(out, sets)


def seq_ops():
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    c = lambda name, v: numpy_helper.from_array(np.asarray(v, dtype=np.int64), name)
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s0"], name="construct"),
        helper.make_node("SequenceInsert", ["s0", "c", "zero"], ["s1"], name="insert_front"),  # c a b
        helper.make_node("SequenceInsert", ["s1", "a"], ["s2"], name="insert_back"),  # c a b a
        helper.make_node("SequenceErase", ["s2", "one"], ["s3"], name="erase_1"),  # c b a
        helper.make_node("SequenceAt", ["s3", "minus_one"], ["last"], name="at_last"),  # a
        helper.make_node("SequenceLength", ["s3"], ["len"], name="length"),
        helper.make_node("Cast", ["len"], ["lenf"], name="len_float", to=F),
        helper.make_node("Mul", ["last", "lenf"], ["y0"], name="scale"),
        helper.make_node("ConcatFromSequence", ["s3"], ["y1"], name="stack", axis=1, new_axis=1),
        helper.make_node("SplitToSequence", ["m"], ["rows"], name="split_rows", axis=0, keepdims=0),
        helper.make_node("SequenceAt", ["rows", "two"], ["row2"], name="row_2"),
        helper.make_node("SplitToSequence", ["m", "sizes"], ["cols"], name="split_cols", axis=1),
        helper.make_node("SequenceErase", ["cols"], ["cols2"], name="erase_last"),
        helper.make_node("ConcatFromSequence", ["cols2"], ["y2"], name="concat", axis=-1),
        helper.make_node("Add", ["row2", "a"], ["y3"], name="add_row"),
    ]
    graph = helper.make_graph(
        nodes, "seq_ops",
        [helper.make_tensor_value_info(n, F, [2, 3]) for n in ("a", "b", "c")] + [helper.make_tensor_value_info("m", F, [4, 3])],
        [helper.make_tensor_value_info("y0", F, [2, 3]), helper.make_tensor_value_info("y1", F, [2, 3, 3]),
         helper.make_tensor_value_info("y2", F, [4, 2]), helper.make_tensor_value_info("y3", F, [2, 3])],
        [c("zero", 0), c("one", 1), c("two", 2), c("minus_one", -1), c("sizes", [1, 1, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_seq_split.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    out = os.path.join(models, "seq_ops")
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    a, b, cc = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3))
    m = rng.standard_normal((4, 3)).astype(np.float32)
    outs = [("y0", a * np.float32(3)), ("y1", np.stack([cc, b, a], axis=1)), ("y2", m[:, 0:2]), ("y3", m[2] + a)]
    write_sets(out, [([("a", a), ("b", b), ("c", cc), ("m", m)], outs)])


seq_split()
seq_ops()
