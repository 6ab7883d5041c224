#!/usr/bin/python3
"""Write tests/models/vad_v5: shaped like Silero VAD v5 (exported with spox), where ftaxc used to
refuse the model when `sr` is a run-time input. An If on Equal(sr, 16000) picks a branch per
sample rate, each fitting another chunk size: the 16 kHz branch cuts x into 4 frames of 128
samples (a 512-sample chunk), the 8 kHz branch into 2 (a 256-sample chunk), so at one pinned
chunk size the other branch cannot be inferred. Inside each branch a nested If, on whether the
chunk is silent (a run-time condition), runs the decoder: a Constant-node projection, an LSTM with
the state as input and output (weights in Constant nodes, as v5 keeps them), Gemm and Sigmoid; a
silent chunk gives 0 and keeps the state. Names clash across the branches, as the exporter's do.

Data sets (numpy references): 0 is 16 kHz at 512 samples, 1 is 8 kHz at 256, 2 is a silent
16 kHz chunk. The e2e test compiles each at its own shape, so the program of set 0 holds the
16 kHz branch and a run-time error for the 8 kHz one, and the program of set 1 the reverse;
tests/e2e/branch_fail.py runs them with the other rate (exit 2, nothing written).

Run with /usr/bin/python3 (it has onnx and numpy); deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from data_sets import write_sets

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "vad_v5")
rng = np.random.default_rng(20261202)
F, I64, B = T.FLOAT, T.INT64, T.BOOL
FR, P, H = 128, 24, 16  # frame length, projected features, LSTM hidden size


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def vi(name, t=F, shape=None):
    return helper.make_tensor_value_info(name, t, shape)


def const(name, arr):
    return helper.make_node("Constant", [], [name], name=name + "_const", value=numpy_helper.from_array(np.asarray(arr), name))


def node(op, i, o, name, **kw):
    return helper.make_node(op, list(i), list(o), name=name, **kw)


# per rate: frames per chunk and its own weights
RATES = {16000: 4, 8000: 2}
weights = {sr: dict(proj=f32(FR, P, scale=0.15), W=f32(1, 4 * H, P, scale=0.3), R=f32(1, 4 * H, H, scale=0.3),
                    B=f32(1, 8 * H, scale=0.1), fc=f32(1, H, scale=0.5), fcb=f32(1, scale=0.1)) for sr in RATES}


def decoder(sr):
    """The nested If's then_branch: the decoder proper, on the frames of this rate."""
    w = weights[sr]
    nodes = [const("proj_w", w["proj"]), const("lstm_w", w["W"]), const("lstm_r", w["R"]), const("lstm_b", w["B"]),
             const("fc_w", w["fc"]), const("fc_b", w["fcb"]), const("axis0", np.array([0], np.int64)),
             const("one", np.array([1], np.int64)), const("two", np.array([2], np.int64)),
             node("MatMul", ["frames", "proj_w"], ["feat"], "proj"),
             node("Relu", ["feat"], ["feat_r"], "relu"),
             node("Slice", ["state", "axis0", "one", "axis0"], ["h0"], "h0"),
             node("Slice", ["state", "one", "two", "axis0"], ["c0"], "c0"),
             node("LSTM", ["feat_r", "lstm_w", "lstm_r", "lstm_b", "", "h0", "c0"], ["", "hn", "cn"], "rnn/LSTM",
                  hidden_size=H),
             node("Concat", ["hn", "cn"], ["state_o"], "state_out", axis=0),
             node("Squeeze", ["hn", "axis0"], ["hsq"], "squeeze"),
             node("Gemm", ["hsq", "fc_w", "fc_b"], ["logit"], "fc", transB=1),
             node("Sigmoid", ["logit"], ["prob_o"], "sigmoid")]
    return helper.make_graph(nodes, "decoder_%d" % sr, [], [vi("prob_o", F, [1, 1]), vi("state_o", F, [2, 1, H])])


silent = helper.make_graph([const("zero", np.zeros((1, 1), np.float32)), node("Identity", ["zero"], ["prob_o"], "prob"),
                            node("Identity", ["state"], ["state_o"], "keep")], "silent", [],
                           [vi("prob_o", F, [1, 1]), vi("state_o", F, [2, 1, H])])


def rate_branch(sr):
    n = RATES[sr]
    nodes = [const("frame_shape", np.array([n, 1, FR], np.int64)),
             node("Reshape", ["x", "frame_shape"], ["frames"], "frames"),
             const("eps", np.array(1e-4, np.float32)),
             node("Abs", ["x"], ["ax"], "abs"),
             node("ReduceMax", ["ax"], ["peak"], "peak", keepdims=0),
             node("Greater", ["peak", "eps"], ["voiced"], "voiced"),
             node("If", ["voiced"], ["prob_b", "state_b"], "decoder/If_1", then_branch=decoder(sr), else_branch=silent)]
    return helper.make_graph(nodes, "branch_%d" % sr, [], [vi("prob_b", F, [1, 1]), vi("state_b", F, [2, 1, H])])


graph = helper.make_graph(
    [const("sr16k", np.array(16000, np.int64)),
     node("Equal", ["sr", "sr16k"], ["is16k"], "is16k"),
     node("If", ["is16k"], ["output", "stateN"], "If_0", then_branch=rate_branch(16000), else_branch=rate_branch(8000))],
    "vad_v5", [vi("x", F, [1, "n"]), vi("sr", I64, []), vi("state", F, [2, 1, H])],
    [vi("output", F, [1, 1]), vi("stateN", F, [2, 1, H])])


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm(X, W, R, Bb, h, c):
    """ONNX LSTM, one direction, gates i, o, f, c; X [S, 1, I]; returns the last h, c."""
    W, R, Bb = W[0].astype(np.float64), R[0].astype(np.float64), Bb[0].astype(np.float64)
    h, c = h[0].astype(np.float64), c[0].astype(np.float64)
    for t in range(X.shape[0]):
        g = X[t].astype(np.float64) @ W.T + h @ R.T + Bb[:4 * H] + Bb[4 * H:]
        i, o, f, cc = sigmoid(g[:, :H]), sigmoid(g[:, H:2 * H]), sigmoid(g[:, 2 * H:3 * H]), np.tanh(g[:, 3 * H:])
        c = f * c + i * cc
        h = o * np.tanh(c)
    return h[None], c[None]


def reference(x, sr, state):
    if np.abs(x).max() <= 1e-4:
        return np.zeros((1, 1), np.float32), state
    w = weights[sr]
    frames = x.reshape(RATES[sr], 1, FR).astype(np.float64)
    feat = np.maximum(frames @ w["proj"].astype(np.float64), 0)
    h, c = lstm(feat, w["W"], w["R"], w["B"], state[0:1], state[1:2])
    logit = h[0] @ w["fc"].astype(np.float64).T + w["fcb"]
    return sigmoid(logit).astype(np.float32), np.concatenate([h, c]).astype(np.float32)


sets = []
for sr, n, scale in ((16000, 512, 0.5), (8000, 256, 0.5), (16000, 512, 0.0)):
    x = f32(1, n, scale=scale) if scale else np.zeros((1, n), np.float32)
    state = f32(2, 1, H, scale=0.3)
    prob, st = reference(x, sr, state)
    sets.append(([("x", x), ("sr", np.array(sr, np.int64)), ("state", state)], [("output", prob), ("stateN", st)]))
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], producer_name="make_vad_v5.py")
model.ir_version = 8
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))
write_sets(out, sets)
