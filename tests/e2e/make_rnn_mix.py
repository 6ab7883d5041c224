#!/usr/bin/python3
"""Write tests/models/rnn_mix: recurrent layers next to GEMM and convolution kernels, as every
real recurrent model has them (a program with rnn.h and gemm.h/conv.h pasted together once
failed to build: both declared FT_ACT_SIGMOID). References from numpy in float64:

  lstm_mm   LSTM -> Squeeze -> MatMul          (the 3-node model of the report)
  gru_conv  GRU -> Transpose -> Conv -> Relu   (GRU beside a convolution with an epilogue)
  gru_gemm  GRU's last state -> Gemm + Sigmoid (the GEMM epilogue's sigmoid beside the GRU's)

Run with /usr/bin/python3 (it has onnx and numpy); deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "models", "rnn_mix")
rng = np.random.default_rng(20260412)
SEQ, BATCH, IN, HID = 5, 1, 4, 6


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ONNX gate orders: LSTM i, o, f, c; GRU z, r, h
Wl, Rl, Bl = f32(1, 4 * HID, IN, scale=0.4), f32(1, 4 * HID, HID, scale=0.4), f32(1, 8 * HID, scale=0.2)
Wg, Rg, Bg = f32(1, 3 * HID, IN, scale=0.4), f32(1, 3 * HID, HID, scale=0.4), f32(1, 6 * HID, scale=0.2)
Wm = f32(HID, 3, scale=0.5)
Wc, bc = f32(2, 1, 3, 3, scale=0.4), f32(2)
Wgm, bgm = f32(3, HID, scale=0.5), f32(3)

nodes = [
    helper.make_node("LSTM", ["x", "Wl", "Rl", "Bl"], ["yl"], name="lstm", hidden_size=HID),
    helper.make_node("Squeeze", ["yl", "axis1"], ["yls"], name="squeeze"),     # [SEQ, BATCH, HID]
    helper.make_node("MatMul", ["yls", "Wm"], ["lstm_mm"], name="matmul"),
    helper.make_node("GRU", ["x", "Wg", "Rg", "Bg"], ["yg", "hg"], name="gru", hidden_size=HID),
    helper.make_node("Transpose", ["yg"], ["ygt"], name="to_image", perm=[2, 1, 0, 3]),  # [1,1,SEQ,HID]
    helper.make_node("Conv", ["ygt", "Wc", "bc"], ["cv"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["cv"], ["gru_conv"], name="relu"),
    helper.make_node("Squeeze", ["hg", "axis0"], ["hgs"], name="squeeze_h"),   # [BATCH, HID]
    helper.make_node("Gemm", ["hgs", "Wgm", "bgm"], ["gm"], name="gemm", transB=1),
    helper.make_node("Sigmoid", ["gm"], ["gru_gemm"], name="sigmoid"),
]
inits = [(Wl, "Wl"), (Rl, "Rl"), (Bl, "Bl"), (Wg, "Wg"), (Rg, "Rg"), (Bg, "Bg"), (Wm, "Wm"),
         (Wc, "Wc"), (bc, "bc"), (Wgm, "Wgm"), (bgm, "bgm"),
         (np.array([1], np.int64), "axis1"), (np.array([0], np.int64), "axis0")]
graph = helper.make_graph(
    nodes, "rnn_mix",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [SEQ, BATCH, IN])],
    [helper.make_tensor_value_info("lstm_mm", TensorProto.FLOAT, [SEQ, BATCH, 3]),
     helper.make_tensor_value_info("gru_conv", TensorProto.FLOAT, [1, 2, SEQ, HID]),
     helper.make_tensor_value_info("gru_gemm", TensorProto.FLOAT, [BATCH, 3])],
    [numpy_helper.from_array(a, n) for a, n in inits])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                          producer_name="ftax tests/e2e/make_rnn_mix.py")
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "model.onnx"))


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def lstm(x, W, R, B):
    W, R, B = W[0].astype(np.float64), R[0].astype(np.float64), B[0].astype(np.float64)
    h = np.zeros((x.shape[1], HID))
    c = np.zeros_like(h)
    ys = []
    for t in range(x.shape[0]):
        g = x[t] @ W.T + h @ R.T + B[:4 * HID] + B[4 * HID:]
        i, o, f, cc = (g[:, k * HID:(k + 1) * HID] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
        h = sigmoid(o) * np.tanh(c)
        ys.append(h)
    return np.stack(ys)[:, None]                                    # [SEQ, 1, BATCH, HID]


def gru(x, W, R, B):
    W, R, B = W[0].astype(np.float64), R[0].astype(np.float64), B[0].astype(np.float64)
    Wb, Rb = B[:3 * HID], B[3 * HID:]
    part = [slice(k * HID, (k + 1) * HID) for k in range(3)]
    h = np.zeros((x.shape[1], HID))
    ys = []
    for t in range(x.shape[0]):
        xw = x[t] @ W.T + Wb
        z = sigmoid(xw[:, part[0]] + h @ R[part[0]].T + Rb[part[0]])
        r = sigmoid(xw[:, part[1]] + h @ R[part[1]].T + Rb[part[1]])
        hh = np.tanh(xw[:, part[2]] + (r * h) @ R[part[2]].T + Rb[part[2]])
        h = (1 - z) * hh + z * h
        ys.append(h)
    return np.stack(ys)[:, None], h[None]


def conv(img, w, b):
    n, ci, hgt, wd = img.shape
    p = np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], hgt, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,oc->nohw", p[:, :, i:i + hgt, j:j + wd], w[:, :, i, j])
    return y + b[None, :, None, None]


def reference(x):
    x64 = x.astype(np.float64)
    lstm_mm = lstm(x64, Wl, Rl, Bl)[:, 0] @ Wm
    yg, hg = gru(x64, Wg, Rg, Bg)
    gru_conv = np.maximum(conv(yg.transpose(2, 1, 0, 3), Wc, bc), 0)
    gru_gemm = sigmoid(hg[0] @ Wgm.T + bgm)
    return [a.astype(np.float32) for a in (lstm_mm, gru_conv, gru_gemm)]


for k in range(2):
    x = f32(SEQ, BATCH, IN, scale=1.5)
    ds = os.path.join(out, "test_data_set_%d" % k)
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    for i, (name, arr) in enumerate(zip(["lstm_mm", "gru_conv", "gru_gemm"], reference(x))):
        with open(os.path.join(ds, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
print("wrote", os.path.normpath(out))
