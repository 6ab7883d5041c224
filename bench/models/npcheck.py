#!/usr/bin/python3
"""Run an exported zoo model with a tiny numpy interpreter and compare it with
its torch reference data.

This checks the *ONNX graph* against torch, independently of both torch and
ftax: a reference set at a second shape catches an export that baked the
trace-time shape into a constant. It knows only the ops the small zoo models
use and is slow; it is a sanity check for exports, not a runtime.

Usage: /usr/bin/python3 bench/models/npcheck.py MODEL_DIR [MODEL_DIR...]
Exit status 1 if any output differs by more than the tolerance.
"""

import glob
import math
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper, helper

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _conv(x, w, b, a):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    group = a.get("group", 1)
    sh, sw = a.get("strides", [1, 1])
    dh, dw = a.get("dilations", [1, 1])
    pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, m, oh, ow), dtype=np.float64)
    mg = m // group
    for g in range(group):
        xg = x[:, g * cg:(g + 1) * cg]
        wg = w[g * mg:(g + 1) * mg]
        for i in range(kh):
            for j in range(kw):
                patch = xg[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * mg:(g + 1) * mg] += np.moveaxis(
                    np.tensordot(patch, wg[:, :, i, j], axes=([1], [1])), 3, 1)
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def _maxpool(x, a):
    kh, kw = a["kernel_shape"]
    sh, sw = a.get("strides", [1, 1])
    pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=-np.inf)
    oh = (x.shape[2] - kh) // sh + 1
    ow = (x.shape[3] - kw) // sw + 1
    out = np.full(x.shape[:2] + (oh, ow), -np.inf)
    for i in range(kh):
        for j in range(kw):
            out = np.maximum(out, x[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw])
    return out


def _slice(x, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    idx = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        idx[int(ax)] = slice(int(s), int(e), int(st))
    return x[tuple(idx)]


def _reshape(x, shape):
    shape = [x.shape[i] if d == 0 else int(d) for i, d in enumerate(shape)]
    return x.reshape(shape)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _gemm(a, b, c, at):
    a = a.T if at.get("transA") else a
    b = b.T if at.get("transB") else b
    y = at.get("alpha", 1.0) * (a @ b)
    return y + at.get("beta", 1.0) * c if c is not None else y


def _float(x):
    # compute floats in float64, so the check measures torch's float32 error only
    return x.astype(np.float64) if x.dtype == np.float32 else x


ONNX_TO_NP = {1: np.float64, 6: np.int32, 7: np.int64, 9: np.bool_, 11: np.float64}

OPS = {
    "Add": lambda i, a: [i[0] + i[1]],
    "Sub": lambda i, a: [i[0] - i[1]],
    "Mul": lambda i, a: [i[0] * i[1]],
    "Div": lambda i, a: [i[0] // i[1] if i[0].dtype.kind == "i" else i[0] / i[1]],
    "Pow": lambda i, a: [np.power(i[0], i[1])],
    "Sqrt": lambda i, a: [np.sqrt(i[0])],
    "Erf": lambda i, a: [_erf(i[0])],
    "Tanh": lambda i, a: [np.tanh(i[0])],
    "Sigmoid": lambda i, a: [1.0 / (1.0 + np.exp(-i[0]))],
    "Relu": lambda i, a: [np.maximum(i[0], 0)],
    "Clip": lambda i, a: [np.clip(i[0], i[1] if len(i) > 1 and i[1] is not None else -np.inf,
                                  i[2] if len(i) > 2 and i[2] is not None else np.inf)],
    "Equal": lambda i, a: [i[0] == i[1]],
    "Not": lambda i, a: [np.logical_not(i[0])],
    "Where": lambda i, a: [np.where(i[0], i[1], i[2])],
    "Cast": lambda i, a: [i[0].astype(ONNX_TO_NP[a["to"]])],
    "Identity": lambda i, a: [i[0]],
    "Shape": lambda i, a: [np.array(i[0].shape, dtype=np.int64)],
    "ConstantOfShape": lambda i, a: [np.full(tuple(i[0]), _float(numpy_helper.to_array(
        a["value"])).reshape(()) if "value" in a else 0.0)],
    "Range": lambda i, a: [np.arange(i[0], i[1], i[2])],
    "Gather": lambda i, a: [np.take(i[0], i[1], axis=a.get("axis", 0))],
    "Concat": lambda i, a: [np.concatenate(i, axis=a["axis"])],
    "Unsqueeze": lambda i, a: [np.expand_dims(i[0], tuple(int(d) for d in i[1]))],
    "Squeeze": lambda i, a: [np.squeeze(i[0], tuple(int(d) for d in i[1]))
                             if len(i) > 1 else np.squeeze(i[0])],
    "Reshape": lambda i, a: [_reshape(i[0], i[1])],
    "Expand": lambda i, a: [i[0] * np.ones(tuple(i[1]), dtype=i[0].dtype)],
    "Transpose": lambda i, a: [np.transpose(i[0], a.get("perm"))],
    "Slice": lambda i, a: [_slice(*i)],
    "Split": lambda i, a: np.split(i[0], np.cumsum(i[1])[:-1], axis=a.get("axis", 0)),
    "Flatten": lambda i, a: [i[0].reshape(int(np.prod(i[0].shape[:a.get("axis", 1)])), -1)],
    "MatMul": lambda i, a: [np.matmul(i[0], i[1])],
    "Gemm": lambda i, a: [_gemm(i[0], i[1], i[2] if len(i) > 2 else None, a)],
    "ReduceMean": lambda i, a: [i[0].mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))],
    "Softmax": lambda i, a: [_softmax(i[0], a.get("axis", -1))],
    "Conv": lambda i, a: [_conv(i[0], i[1], i[2] if len(i) > 2 else None, a)],
    "MaxPool": lambda i, a: [_maxpool(i[0], a)],
    "GlobalAveragePool": lambda i, a: [i[0].mean(axis=(2, 3), keepdims=True)],
}


def run(model, feeds):
    env = {t.name: _float(numpy_helper.to_array(t)) for t in model.graph.initializer}
    env.update({k: _float(v) for k, v in feeds.items()})
    for node in model.graph.node:
        a = _attrs(node)
        if node.op_type == "Constant":
            outs = [_float(numpy_helper.to_array(a["value"]))]
        elif node.op_type in OPS:
            outs = OPS[node.op_type]([env[n] if n else None for n in node.input], a)
        else:
            raise NotImplementedError("npcheck: no %s" % node.op_type)
        for name, v in zip(node.output, outs):
            env[name] = np.asarray(v)
    return [env[o.name] for o in model.graph.output]


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def check(model_dir, atol=1e-4, rtol=1e-3):
    model = onnx.load(os.path.join(model_dir, "model.onnx"))
    ok = True
    for data_dir in sorted(glob.glob(os.path.join(model_dir, "test_data_set_*"))):
        n_in = len(glob.glob(os.path.join(data_dir, "input_*.pb")))
        n_out = len(glob.glob(os.path.join(data_dir, "output_*.pb")))
        feeds = dict(load(os.path.join(data_dir, "input_%d.pb" % i)) for i in range(n_in))
        expect = [load(os.path.join(data_dir, "output_%d.pb" % i)) for i in range(n_out)]
        got = run(model, feeds)
        for (name, ref), out in zip(expect, got):
            err = np.abs(out - ref.astype(np.float64))
            bad = err > atol + rtol * np.abs(ref)
            ok &= not bad.any() and out.shape == ref.shape
            print("%s %s %s: max abs err %.3g, %d/%d over tolerance, |ref| max %.3g"
                  % (model_dir, os.path.basename(data_dir), name, err.max(), bad.sum(),
                     bad.size, np.abs(ref).max()))
    return ok


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(0 if all([check(d) for d in sys.argv[1:]]) else 1)
