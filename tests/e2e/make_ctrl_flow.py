#!/usr/bin/python3
"""Write three models with control flow decided by the data, each with data sets whose reference
outputs numpy computes here (the same arithmetic, written out):

  tests/models/if_runtime   a wake-word detector's shape: a small MLP scores x; when the score
                            passes a threshold (a run-time condition) a second verifier MLP runs,
                            inside it a nested If on the sign of its sum picks Relu or Neg; else
                            the output is the first stage's features scaled. Data set 0 takes the
                            then branch, data set 1 the else branch, data set 2 the nested else.
  tests/models/loop_const   Loop with trip count 5 and no condition: h = tanh(h W + x), the
                            carried h and every iteration's h as a scan output [5, 1, 8].
  tests/models/loop_while   Loop bounded by 8 whose condition is computed from the data: halve h
                            and add x while sum(h) < 4, counting the iterations; data sets run 0,
                            3 and 8 iterations.
  tests/models/scan_dirs    Scan (opset 11) over axis 1 of x [3, 5, 2] in reverse: a running sum as
                            the state, x*x stacked forward on axis 1, the state stacked in
                            reverse on the last axis.

Run with /usr/bin/python3 (it has onnx and numpy); deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from data_sets import write_sets

here = os.path.dirname(os.path.abspath(__file__))
models = os.path.join(here, "..", "models")
rng = np.random.default_rng(20261124)
F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def init(a, name):
    return numpy_helper.from_array(np.asarray(a), name)


def save(name, graph, sets, opset=13):
    out = os.path.join(models, name)
    os.makedirs(out, exist_ok=True)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_ctrl_flow.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    write_sets(out, sets)


# ---- if_runtime ----------------------------------------------------------------------------------
D, H, O = 16, 12, 4
w1, w2 = f32(D, H, scale=0.4), f32(H, O, scale=0.4)
v1, v2 = f32(H, H, scale=0.4), f32(H, O, scale=0.4)
THR = 0.5

nested = helper.make_graph(
    [helper.make_node("Relu", ["y"], ["t"], name="relu")], "pos", [], [vi("t", [1, O])])
nested_else = helper.make_graph(
    [helper.make_node("Neg", ["y"], ["t"], name="neg")], "neg", [], [vi("t", [1, O])])
then_g = helper.make_graph(
    [helper.make_node("MatMul", ["h", "v1"], ["u"], name="mm1"),
     helper.make_node("Relu", ["u"], ["ur"], name="relu1"),
     helper.make_node("MatMul", ["ur", "v2"], ["y"], name="mm2"),
     helper.make_node("ReduceSum", ["y"], ["ys"], name="sum", keepdims=0),
     helper.make_node("Greater", ["ys", "zero"], ["pos"], name="is_pos"),
     helper.make_node("If", ["pos"], ["t"], name="sign", then_branch=nested, else_branch=nested_else),
     helper.make_node("Add", ["t", "y"], ["out"], name="add")],
    "verify", [], [vi("out", [1, O])], [init(v1, "v1"), init(v2, "v2"), init(np.zeros((1,), np.float32), "zero")])
else_g = helper.make_graph(
    [helper.make_node("MatMul", ["h", "w2"], ["y"], name="mm"),
     helper.make_node("Mul", ["y", "half"], ["out"], name="scale")],
    "skip", [], [vi("out", [1, O])], [init(np.array(0.5, np.float32), "half")])
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="stage1"),
     helper.make_node("Tanh", ["h0"], ["h"], name="tanh"),
     helper.make_node("ReduceMean", ["h"], ["score"], name="score", keepdims=0),
     helper.make_node("Greater", ["score", "thr"], ["fire"], name="fire"),
     helper.make_node("If", ["fire"], ["y"], name="verify", then_branch=then_g, else_branch=else_g)],
    "if_runtime", [vi("x", [1, D])], [vi("y", [1, O]), vi("score", [])],
    [init(w1, "w1"), init(w2, "w2"), init(np.array([THR], np.float32), "thr")])


def if_reference(x):
    h = np.tanh(x @ w1)
    score = h.mean(dtype=np.float32)
    if score > THR:
        y = np.maximum(h @ v1, 0) @ v2
        y = (np.maximum(y, 0) if y.sum() > 0 else -y) + y
    else:
        y = (h @ w2) * np.float32(0.5)
    return y.astype(np.float32), np.array(score, np.float32)


def x_for(want_fire, want_pos):
    for _ in range(10000):  # inputs that take each path by a margin, so rounding cannot flip it
        x = f32(1, D, scale=3.0) + (np.abs(f32(1, D)) * 3.0 * (w1.sum(1) > 0) if want_fire else 0)
        h = np.tanh(x @ w1)
        s = h.mean()
        if want_fire != (s > THR + 0.05) or (not want_fire and s > THR - 0.05):
            continue
        if want_fire:
            ysum = (np.maximum(h @ v1, 0) @ v2).sum()
            if (ysum > 0.05) != want_pos or abs(ysum) < 0.05:
                continue
        return x.astype(np.float32)
    raise SystemExit("no input found for the path %s %s" % (want_fire, want_pos))


sets = []
for fire, pos in ((True, True), (False, True), (True, False)):
    x = x_for(fire, pos)
    y, score = if_reference(x)
    sets.append(([("x", x)], [("y", y), ("score", score)]))
save("if_runtime", graph, sets)

# ---- loop_const ----------------------------------------------------------------------------------
N = 8
wl = f32(N, N, scale=0.5)
body = helper.make_graph(
    [helper.make_node("MatMul", ["h_in", "wl"], ["m"], name="mm"),
     helper.make_node("Add", ["m", "x"], ["a"], name="add"),
     helper.make_node("Tanh", ["a"], ["h_out"], name="tanh"),
     helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
     helper.make_node("Identity", ["h_out"], ["h_scan"], name="scan")],
    "step", [vi("i", [], I64), vi("cond_in", [], B), vi("h_in", [1, N])],
    [vi("cond_out", [], B), vi("h_out", [1, N]), vi("h_scan", [1, N])])
graph = helper.make_graph(
    [helper.make_node("Loop", ["trips", "", "h0"], ["h", "hs"], name="rnn", body=body)],
    "loop_const", [vi("x", [1, N]), vi("h0", [1, N])], [vi("h", [1, N]), vi("hs", [5, 1, N])],
    [init(np.array(5, np.int64), "trips"), init(wl, "wl")])
sets = []
for _ in range(2):
    x, h0 = f32(1, N), f32(1, N)
    h, hs = h0, []
    for _ in range(5):
        h = np.tanh(h @ wl + x).astype(np.float32)
        hs.append(h)
    sets.append(([("x", x), ("h0", h0)], [("h", h), ("hs", np.stack(hs))]))
save("loop_const", graph, sets)

# ---- loop_while ----------------------------------------------------------------------------------
LIMIT = 4.0
body = helper.make_graph(
    [helper.make_node("Mul", ["h_in", "half"], ["hh"], name="halve"),
     helper.make_node("Add", ["hh", "x"], ["h_out"], name="add"),
     helper.make_node("Add", ["n_in", "one"], ["n_out"], name="count"),
     helper.make_node("ReduceSum", ["h_out"], ["s"], name="sum", keepdims=0),
     helper.make_node("Less", ["s", "limit"], ["cond_out"], name="go_on")],
    "step", [vi("i", [], I64), vi("cond_in", [], B), vi("h_in", [1, N]), vi("n_in", [], I64)],
    [vi("cond_out", [], B), vi("h_out", [1, N]), vi("n_out", [], I64)],
    [init(np.array(0.5, np.float32), "half"), init(np.array(1, np.int64), "one"),
     init(np.array(LIMIT, np.float32), "limit")])
graph = helper.make_graph(
    [helper.make_node("ReduceSum", ["h0"], ["s0"], name="sum0", keepdims=0),
     helper.make_node("Less", ["s0", "limit"], ["go"], name="go"),
     helper.make_node("Loop", ["bound", "go", "h0", "zero"], ["h", "n"], name="settle", body=body)],
    "loop_while", [vi("x", [1, N]), vi("h0", [1, N])], [vi("h", [1, N]), vi("n", [], I64)],
    [init(np.array(8, np.int64), "bound"), init(np.array(0, np.int64), "zero"),
     init(np.array(LIMIT, np.float32), "limit")])


def while_reference(x, h0):
    h, n = h0, 0
    go = h.sum(dtype=np.float32) < LIMIT
    while go and n < 8:
        h = (h * np.float32(0.5) + x).astype(np.float32)
        n += 1
        go = h.sum(dtype=np.float32) < LIMIT
    return h, np.array(n, np.int64)


sets = []
# x summing to 1: h's sum tends to 2, below 4 (8 iterations); to 2.5: h crosses 4 at the third
# iteration; h0 summing past 4: none
for xs, h0s in ((0.125, 0.0), (0.3125, 0.0), (0.125, 6.0)):
    x = (np.full((1, N), xs) + f32(1, N, scale=0.01)).astype(np.float32)
    h0 = (np.full((1, N), h0s / N) + f32(1, N, scale=0.01)).astype(np.float32)
    h, n = while_reference(x, h0)
    print("loop_while data set: %d iterations" % n)
    sets.append(([("x", x), ("h0", h0)], [("h", h), ("n", n)]))
save("loop_while", graph, sets)

# ---- scan_dirs -----------------------------------------------------------------------------------
body = helper.make_graph(
    [helper.make_node("ReduceSum", ["xe"], ["r"], name="sum", axes=[0], keepdims=0),
     helper.make_node("Add", ["s_in", "r"], ["s_out"], name="acc"),
     helper.make_node("Mul", ["xe", "xe"], ["y"], name="square"),
     helper.make_node("Identity", ["s_out"], ["z"], name="state")],
    "step", [vi("s_in", [2]), vi("xe", [3, 2])], [vi("s_out", [2]), vi("y", [3, 2]), vi("z", [2])])
graph = helper.make_graph(
    [helper.make_node("Scan", ["s0", "x"], ["s", "y", "z"], name="scan", body=body, num_scan_inputs=1,
                      scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1, -1],
                      scan_output_directions=[0, 1])],
    "scan_dirs", [vi("s0", [2]), vi("x", [3, 5, 2])], [vi("s", [2]), vi("y", [3, 5, 2]), vi("z", [2, 5])])
sets = []
for _ in range(2):
    s0, x = f32(2), f32(3, 5, 2)
    s, ys, zs = s0, [], []
    for t in range(5):
        xe = x[:, 4 - t, :]
        s = (s + xe.sum(0)).astype(np.float32)
        ys.append(xe * xe)
        zs.append(s)
    sets.append(([("s0", s0), ("x", x)], [("s", s), ("y", np.stack(ys, 1)), ("z", np.stack(zs[::-1], -1))]))
save("scan_dirs", graph, sets, opset=11)
