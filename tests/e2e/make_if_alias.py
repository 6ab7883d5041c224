#!/usr/bin/python3
"""Write tests/models/if_alias: a wake-word detector's shape (openWakeWord's hey_jarvis has it)
whose run-time If conditions reach the If through ops that change nothing but the value's name or
shape, the ones ftaxc turns into aliases: GreaterOrEqual -> Cast(to=BOOL) -> If, and the same
condition through Identity, through Reshape to [1], and through Unsqueeze -> Squeeze. Each If runs
a small verifier MLP in one branch and a scaled copy in the other. Data set 0 fires every If,
data set 1 none, data set 2 some (the conditions use different thresholds). numpy references.

Run with /usr/bin/python3 (it has onnx and numpy); deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from data_sets import write_sets

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "if_alias")
rng = np.random.default_rng(20261202)
F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
D, H, O = 16, 12, 4
THR = [0.0, -0.2, 0.2, 0.4]


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def init(a, name):
    return numpy_helper.from_array(np.asarray(a), name)


w1 = f32(D, H, scale=0.4)
vs = [(f32(H, H, scale=0.4), f32(H, O, scale=0.4)) for _ in THR]
w2 = f32(H, O, scale=0.4)

nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="stage1"),
         helper.make_node("Tanh", ["h0"], ["h"], name="tanh"),
         helper.make_node("ReduceMean", ["h"], ["score"], name="score", keepdims=0)]
inits = [init(w1, "w1"), init(w2, "w2")]
outs = []
for k, thr in enumerate(THR):
    inits.append(init(np.array(thr, np.float32), "thr%d" % k))
    nodes.append(helper.make_node("GreaterOrEqual", ["score", "thr%d" % k], ["ge%d" % k], name="ge%d" % k))
    # the condition, through a no-op of a different kind per If
    c = "cond%d" % k
    if k == 0:
        nodes.append(helper.make_node("Cast", ["ge0"], [c], name="cast_bool", to=B))
    elif k == 1:
        nodes.append(helper.make_node("Identity", ["ge1"], [c], name="same"))
    elif k == 2:
        inits.append(init(np.array([1], np.int64), "one_shape"))
        nodes.append(helper.make_node("Reshape", ["ge2", "one_shape"], [c], name="as_1"))
    else:
        inits.append(init(np.array([0], np.int64), "axis0"))
        nodes += [helper.make_node("Unsqueeze", ["ge3", "axis0"], ["ge3u"], name="unsq"),
                  helper.make_node("Squeeze", ["ge3u", "axis0"], ["ge3s"], name="sq"),
                  helper.make_node("Cast", ["ge3s"], [c], name="cast_again", to=B)]
    v1, v2 = vs[k]
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["h", "v1_%d" % k], ["u"], name="mm1"),
         helper.make_node("Relu", ["u"], ["ur"], name="relu1"),
         helper.make_node("MatMul", ["ur", "v2_%d" % k], ["t"], name="mm2")],
        "verify%d" % k, [], [vi("t", [1, O])], [init(v1, "v1_%d" % k), init(v2, "v2_%d" % k)])
    else_g = helper.make_graph(
        [helper.make_node("MatMul", ["h", "w2"], ["m"], name="mm"),
         helper.make_node("Mul", ["m", "half"], ["t"], name="scale")],
        "skip%d" % k, [], [vi("t", [1, O])], [init(np.array(0.5, np.float32), "half")])
    nodes.append(helper.make_node("If", [c], ["y%d" % k], name="verify%d" % k, then_branch=then_g, else_branch=else_g))
    outs.append(vi("y%d" % k, [1, O]))

graph = helper.make_graph(nodes, "if_alias", [vi("x", [1, D])], outs + [vi("score", [])], inits)


def reference(x):
    h = np.tanh(x @ w1)
    score = h.mean(dtype=np.float32)
    ys = []
    for k, thr in enumerate(THR):
        v1, v2 = vs[k]
        ys.append((np.maximum(h @ v1, 0) @ v2) if score >= thr else (h @ w2) * np.float32(0.5))
    return [y.astype(np.float32) for y in ys], np.array(score, np.float32)


def x_for(lo, hi):
    for _ in range(100000):  # a score inside (lo, hi), away from every threshold
        x = f32(1, D, scale=2.0)
        s = np.tanh(x @ w1).mean()
        if lo < s < hi and min(abs(s - t) for t in THR) > 0.02:
            return x
    raise SystemExit("no input with a score in (%g, %g)" % (lo, hi))


sets = []
for lo, hi in ((0.45, 2.0), (-2.0, -0.25), (0.05, 0.15)):
    x = x_for(lo, hi)
    ys, score = reference(x)
    sets.append(([("x", x)], [("y%d" % k, y) for k, y in enumerate(ys)] + [("score", score)]))
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_if_alias.py")
model.ir_version = 7
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))
write_sets(out, sets)
