#!/usr/bin/python3
"""Write tests/models/vad_if: a small model shaped like Silero VAD, whose exports wrap most of the
network in If nodes whose conditions are known at compile time:

  If Equal(sr, 16000)                     sr is bound (tests/models/vad_if/bind: --bind sr=sr.pb)
    then: If Equal(Gather(Shape(x), 1), 64)   constant once x's shape is known (nested If)
            then: Reshape(x, [1, 1, 64])          else: Reshape(x, [1, 1, -1]) (not taken)
          Conv(k=8, stride 4) with the branch's own weights -> Relu
    else: Conv(k=4, stride 4) with other weights -> Relu (not taken)
  Transpose -> LSTM (initial state from the state input) -> new state, Sigmoid(MatMul(last h))

Branch-local names clash with the outer graph on purpose ("t", "w_conv" in both branches), and
the inner If reads an outer-scope value of the enclosing branch ("n") and of the main graph (x).
Inputs: x [1, 64], state [2, 1, 16]; outputs: prob [1, 1], state_out [2, 1, 16]. References from
numpy (the 16 kHz path). Run with /usr/bin/python3 (it has onnx and numpy); deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "vad_if")
rng = np.random.default_rng(20260414)
N, C, HID = 64, 8, 16
F = TensorProto.FLOAT


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def init(a, name):
    return numpy_helper.from_array(np.asarray(a), name)


W16, b16 = f32(C, 1, 8, scale=0.4), f32(C, scale=0.1)
W8, b8 = f32(C, 1, 4, scale=0.4), f32(C, scale=0.1)
Wl, Rl, Bl = f32(1, 4 * HID, C, scale=0.3), f32(1, 4 * HID, HID, scale=0.3), f32(1, 8 * HID, scale=0.1)
Wo = f32(HID, 1, scale=0.5)
T16 = (N - 8) // 4 + 1

len_then = helper.make_graph([helper.make_node("Reshape", ["x", "shape_a"], ["xr_a"], "reshape_a")], "len_ok", [],
                             [vi("xr_a", [1, 1, N])], [init(np.array([1, 1, N], np.int64), "shape_a")])
len_else = helper.make_graph([helper.make_node("Reshape", ["x", "shape_b"], ["xr_b"], "reshape_b")], "len_other", [],
                             [vi("xr_b", None)], [init(np.array([1, 1, -1], np.int64), "shape_b")])
sr16 = helper.make_graph([
    helper.make_node("Shape", ["x"], ["s"], "shape"),
    helper.make_node("Gather", ["s", "one"], ["n"], "samples", axis=0),
    helper.make_node("Equal", ["n", "n64"], ["len_ok"], "is_64"),
    helper.make_node("If", ["len_ok"], ["xr"], "by_length", then_branch=len_then, else_branch=len_else),
    helper.make_node("Conv", ["xr", "w_conv", "b_conv"], ["t"], "conv16", strides=[4]),
    helper.make_node("Relu", ["t"], ["feat16"], "relu16"),
], "sr16", [], [vi("feat16", [1, C, T16])],
    [init(W16, "w_conv"), init(b16, "b_conv"), init(np.array(1, np.int64), "one"), init(np.array(N, np.int64), "n64")])
sr8 = helper.make_graph([
    helper.make_node("Reshape", ["x", "shape8"], ["xr8"], "reshape8"),
    helper.make_node("Conv", ["xr8", "w_conv", "b_conv"], ["t"], "conv8", strides=[4]),
    helper.make_node("Relu", ["t"], ["feat8"], "relu8"),
], "sr8", [], [vi("feat8", None)],
    [init(W8, "w_conv"), init(b8, "b_conv"), init(np.array([1, 1, -1], np.int64), "shape8")])

nodes = [
    helper.make_node("Equal", ["sr", "k16000"], ["is_16k"], "is_16k"),
    helper.make_node("If", ["is_16k"], ["feat"], "by_rate", then_branch=sr16, else_branch=sr8),
    helper.make_node("Transpose", ["feat"], ["t"], "to_seq", perm=[2, 0, 1]),          # [T, 1, C]
    helper.make_node("Split", ["state", "halves"], ["h0", "c0"], "split_state", axis=0),
    helper.make_node("LSTM", ["t", "Wl", "Rl", "Bl", "", "h0", "c0"], ["", "hn", "cn"], "lstm", hidden_size=HID),
    helper.make_node("Concat", ["hn", "cn"], ["state_out"], "new_state", axis=0),
    helper.make_node("Squeeze", ["hn", "axis0"], ["last"], "last"),
    helper.make_node("MatMul", ["last", "Wo"], ["logit"], "head"),
    helper.make_node("Sigmoid", ["logit"], ["prob"], "prob"),
]
graph = helper.make_graph(
    nodes, "vad_if",
    [vi("x", [1, N]), vi("state", [2, 1, HID]), vi("sr", [], TensorProto.INT64)],
    [vi("prob", [1, 1]), vi("state_out", [2, 1, HID])],
    [init(np.array(16000, np.int64), "k16000"), init(np.array([1, 1], np.int64), "halves"),
     init(np.array([0], np.int64), "axis0"), init(Wl, "Wl"), init(Rl, "Rl"), init(Bl, "Bl"), init(Wo, "Wo")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="ftax tests/e2e/make_vad_if.py")
# no onnx.checker: names that clash across scopes ("t", "w_conv") are what this model tests
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))
with open(os.path.join(out, "sr.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.array(16000, np.int64), "sr").SerializeToString())
with open(os.path.join(out, "bind"), "w") as f:
    f.write("# the sample rate is bound, as a user of Silero VAD compiles it: --bind sr=sr.pb\nsr=sr.pb\n")


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def reference(x, state):
    x64 = x.astype(np.float64).reshape(N)
    cols = np.stack([x64[4 * t:4 * t + 8] for t in range(T16)])        # [T, 8]
    feat = np.maximum(cols @ W16[:, 0, :].T + b16, 0)                  # [T, C]
    W, R, B = Wl[0].astype(np.float64), Rl[0].astype(np.float64), Bl[0].astype(np.float64)
    h, c = state[0].astype(np.float64), state[1].astype(np.float64)    # [1, HID]
    for t in range(T16):
        g = feat[t:t + 1] @ W.T + h @ R.T + B[:4 * HID] + B[4 * HID:]
        i, o, f, cc = (g[:, k * HID:(k + 1) * HID] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
        h = sigmoid(o) * np.tanh(c)
    prob = sigmoid(h @ Wo)
    return prob.astype(np.float32), np.stack([h, c]).astype(np.float32)


for k in range(2):
    x, state = f32(1, N), f32(2, 1, HID, scale=0.5)
    ds = os.path.join(out, "test_data_set_%d" % k)
    os.makedirs(ds, exist_ok=True)
    for i, (name, arr) in enumerate([("x", x), ("state", state)]):
        with open(os.path.join(ds, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    for i, (name, arr) in enumerate(zip(["prob", "state_out"], reference(x, state))):
        with open(os.path.join(ds, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
print("wrote", os.path.normpath(out))
