#!/usr/bin/python3
"""Write two models whose Loop runs a number of iterations known only at run time (ftax compiles
it as a loop of the program, compiler/passes/loop.c), each with data sets and reference outputs:

  tests/models/loop_script  torch.jit.script of a `while` loop, as torch exports it (Loop with
                            trip count INT64_MAX and a condition computed from the data):
                            x = x * 0.5 + 1 until x.sum() <= 13, counting the iterations; y, the
                            first x scaled by a weight, read in the body from outside the loop.
                            Data sets take 0, 1 and 23 iterations. References: the torch module.
  tests/models/loop_count   built with onnx.helper: Loop whose trip count is the int64 graph input
                            `M` (no condition input): carried h [1, 8] and a swapped pair (p, q) ->
                            (q, p + q) (the body gives one carried value as another's next value);
                            the body reads x and values computed from it outside the loop (x * 3
                            only in its first node, so that the memory plan must keep it alive
                            through the body), the
                            iteration number, runs an If on a condition computed from h (Relu or
                            Neg), and a Loop of trip count 2 (unrolled inside the loop). Data sets
                            M = 0, 1, 3, 7. References: numpy, the same arithmetic.

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
F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


# ---- loop_script ---------------------------------------------------------------------------------
class WhileHalve(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(20261124)
        self.w = torch.nn.Parameter(torch.randn(2, 3))

    def forward(self, x):
        y = x * self.w
        n = torch.zeros([], dtype=torch.int64)
        while bool(x.sum() > 13.0):
            x = x * 0.5 + 1.0 + y * 0.0
            n = n + 1
        return x + y, n


def loop_script():
    out = os.path.join(models, "loop_script")
    os.makedirs(out, exist_ok=True)
    m = torch.jit.script(WhileHalve().eval())
    path = os.path.join(out, "model.onnx")
    x0 = torch.ones(2, 3)
    torch.onnx.export(m, (x0,), path, opset_version=13, input_names=["x"], output_names=["y", "n"])
    loops = [n for n in onnx.load(path).graph.node if n.op_type == "Loop"]
    assert len(loops) == 1, [n.op_type for n in onnx.load(path).graph.node]
    sets, want = [], []
    for scale, iters in ((1.0, 0), (2.2, 1), (1e6, 23)):
        xs = np.full((2, 3), scale, dtype=np.float32) + rng.uniform(0, 0.1, (2, 3)).astype(np.float32)
        with torch.no_grad():
            y, n = m(torch.from_numpy(xs))
        want.append((int(n), iters))
        sets.append(([("x", xs)], [("y", y.numpy()), ("n", n.numpy())]))
    assert want[0][0] == 0 and want[1][0] == 1 and want[2][0] > 10, want
    write_sets(out, sets)


# ---- loop_count ----------------------------------------------------------------------------------
H = 8


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def init(a, name):
    return numpy_helper.from_array(np.asarray(a), name)


def loop_count():
    w = (rng.standard_normal((H, H)) * 0.4).astype(np.float32)
    twice_body = helper.make_graph(  # inner Loop of trip count 2: t = t * 0.9 + 0.05
        [helper.make_node("Mul", ["t_in", "c09"], ["t_m"], name="inner_mul"),
         helper.make_node("Add", ["t_m", "c005"], ["t_out"], name="inner_add"),
         helper.make_node("Identity", ["ic"], ["ic_out"], name="inner_cond")],
        "twice", [vi("ii", [], I64), vi("ic", [], B), vi("t_in", [1, H])],
        [vi("ic_out", [], B), vi("t_out", [1, H])])
    pos = helper.make_graph([helper.make_node("Relu", ["u"], ["r"], name="relu")], "pos", [], [vi("r", [1, H])])
    neg = helper.make_graph([helper.make_node("Neg", ["u"], ["r"], name="neg")], "neg", [], [vi("r", [1, H])])
    body = helper.make_graph(
        [helper.make_node("Add", ["h", "x3"], ["hx"], name="add_x3"),  # x3: read here only
         helper.make_node("MatMul", ["hx", "w"], ["hw"], name="mm"),
         helper.make_node("Add", ["hw", "x2"], ["a"], name="add_x2"),  # x2: computed outside the loop
         helper.make_node("Cast", ["i"], ["fi"], name="iter_float", to=F),
         helper.make_node("Mul", ["fi", "c01"], ["fi01"], name="iter_scale"),
         helper.make_node("Add", ["a", "fi01"], ["u0"], name="add_iter"),
         helper.make_node("Tanh", ["u0"], ["u"], name="tanh"),
         helper.make_node("ReduceSum", ["u"], ["us"], name="sum", keepdims=0),
         helper.make_node("Greater", ["us", "zero"], ["upos"], name="is_pos"),
         helper.make_node("If", ["upos"], ["r"], name="sign", then_branch=pos, else_branch=neg),
         helper.make_node("Loop", ["two", "", "r"], ["h_out"], name="twice", body=twice_body),
         helper.make_node("Add", ["p", "q"], ["pq"], name="fib"),
         helper.make_node("Identity", ["cond"], ["cond_out"], name="keep")],
        "body", [vi("i", [], I64), vi("cond", [], B), vi("h", [1, H]), vi("p", [1, H]), vi("q", [1, H])],
        [vi("cond_out", [], B), vi("h_out", [1, H]), vi("q_out", [1, H]), vi("pq_out", [1, H])])
    # the body's outputs q and p + q: q_out is the carried q itself, pq_out the sum
    body.output[2].name = "q"
    body.output[3].name = "pq"
    nodes = [helper.make_node("Mul", ["x", "c2"], ["x2"], name="twice_x"),
             helper.make_node("Mul", ["x", "c3"], ["x3"], name="thrice_x"),
             helper.make_node("Loop", ["M", "", "h0", "x", "x2"], ["h_end", "p_end", "q_end"], name="steps", body=body),
             helper.make_node("Add", ["h_end", "x2"], ["y"], name="after")]
    graph = helper.make_graph(
        nodes, "loop_count", [vi("x", [1, H]), vi("M", [], I64)],
        [vi("y", [1, H]), vi("p_end", [1, H]), vi("q_end", [1, H])],
        [init(w, "w"), init(np.zeros((1, H), np.float32), "h0"), init(np.float32(2), "c2"), init(np.float32(3), "c3"), init(np.float32(0.1), "c01"),
         init(np.float32(0), "zero"), init(np.float32(0.9), "c09"), init(np.float32(0.05), "c005"),
         init(np.int64(2), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_loop_runtime.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    out = os.path.join(models, "loop_count")
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    sets = []
    for m in (0, 1, 3, 7):
        x = rng.standard_normal((1, H)).astype(np.float32)
        x2, x3 = x * np.float32(2), x * np.float32(3)
        h, p, q = np.zeros((1, H), np.float32), x.copy(), x2.copy()
        for i in range(m):
            u = np.tanh((h + x3) @ w + x2 + np.float32(i) * np.float32(0.1)).astype(np.float32)
            r = np.maximum(u, 0) if u.sum() > 0 else -u
            for _ in range(2):
                r = (r * np.float32(0.9) + np.float32(0.05)).astype(np.float32)
            h, p, q = r, q, (p + q).astype(np.float32)
        sets.append(([("x", x), ("M", np.int64(m))], [("y", h + x2), ("p_end", p), ("q_end", q)]))
    write_sets(out, sets)


loop_script()
loop_count()
