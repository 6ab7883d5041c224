#!/usr/bin/python3
"""Write tests/models/qdq_tiny: a small quantized network in both forms ONNX Runtime's quantizer
writes, with its reference outputs computed here in numpy.

  x [1,3,12,12] -> Q/DQ (uint8) -> Conv 3x3 s2 p1 (8, int8 per channel) -> Relu -> Q/DQ
    -> Conv 1x1 (16, int8 per channel, no bias) -> GlobalAveragePool -> Flatten = f [1,16]
  y1 = Gemm(Q/DQ(f), DQ(int8 W1 [10,16] per channel), transB=1, bias)       (static QDQ)
  y2 = Mul(Cast(MatMulInteger(DynamicQuantizeLinear(f), W2 int8 [16,6], x_zp, 0)), x_s * w_s)
                                                                            (dynamic)

ftaxc fuses every QDQ matrix product into the int8 GEMM core (ftax.QDQConv, ftax.QDQMatMul), and
the dynamic MatMulInteger -> Cast -> Mul into ftax.QDQMatMul too. The reference follows the ONNX definitions: QuantizeLinear
divides in float32 and rounds half to even (np.rint) before saturating; a DequantizeLinear ->
Conv/Gemm pair is computed as the exact integer sum times the scales in float32 (what the
kernel does: the float op on dequantized values equals it up to float rounding). Run with
/usr/bin/python3 (onnx and numpy); deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out_dir = os.path.join(here, "..", "models", "qdq_tiny")
rng = np.random.default_rng(20261124)
f32 = np.float32


def q_u8(x, s, z):
    return np.clip(np.rint(x.astype(f32) / f32(s)) + z, 0, 255).astype(np.int64)


def per_channel(w, axis):
    red = tuple(i for i in range(w.ndim) if i != axis)
    s = (np.abs(w).max(axis=red) / 127).astype(f32)
    shape = [1] * w.ndim
    shape[axis] = -1
    return np.clip(np.rint(w / s.reshape(shape)), -128, 127).astype(np.int8), s


def conv_int(xq, zx, wq, stride, pad):
    """exact sums of (xq - zx) * wq, NCHW, padding holds zx (contributes 0)"""
    n, c, h, w = xq.shape
    m, _, kh, kw = wq.shape
    xp = np.pad(xq - zx, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    for a in range(kh):
        for b in range(kw):
            patch = xp[:, :, a:a + stride * oh:stride, b:b + stride * ow:stride]
            y += np.einsum("nchw,mc->nmhw", patch, wq[:, :, a, b].astype(np.int64))
    return y


def main():
    os.makedirs(os.path.join(out_dir, "test_data_set_0"), exist_ok=True)
    x = rng.uniform(-1, 1, (1, 3, 12, 12)).astype(f32)
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(f32)
    b1 = rng.normal(0, 0.1, 8).astype(f32)
    w2 = rng.normal(0, 0.3, (16, 8, 1, 1)).astype(f32)
    g1 = rng.normal(0, 0.3, (10, 16)).astype(f32)
    gb = rng.normal(0, 0.1, 10).astype(f32)
    m2 = rng.normal(0, 0.3, (16, 6)).astype(f32)

    sx, zx = f32(2.0 / 255), 128
    w1q, w1s = per_channel(w1, 0)
    w2q, w2s = per_channel(w2, 0)
    g1q, g1s = per_channel(g1, 0)
    m2s = f32(np.abs(m2).max() / 127)
    m2q = np.clip(np.rint(m2 / m2s), -128, 127).astype(np.int8)

    # reference
    xq = q_u8(x, sx, zx)
    a1 = conv_int(xq, zx, w1q, 2, 1).astype(f32) * (sx * w1s).reshape(1, -1, 1, 1) + b1.reshape(1, -1, 1, 1)
    r1 = np.maximum(a1, 0).astype(f32)
    s1, z1 = f32(r1.max() / 255), 0
    r1q = q_u8(r1, s1, z1)
    a2 = conv_int(r1q, z1, w2q, 1, 0).astype(f32) * (s1 * w2s).reshape(1, -1, 1, 1)
    f = a2.mean(axis=(2, 3), dtype=f32).astype(f32).reshape(1, 16)
    lo, hi = min(f32(f.min()), f32(0)), max(f32(f.max()), f32(0))
    sf, zf = f32((hi - lo) / 255), int(np.clip(np.rint(-lo / f32((hi - lo) / 255)), 0, 255))
    fq = q_u8(f, sf, zf)
    y1 = ((fq - zf) @ g1q.T.astype(np.int64)).astype(f32) * (sf * g1s) + gb
    # DynamicQuantizeLinear as the spec's reference: the range includes 0, scale (max - min) / 255
    dlo, dhi = min(f32(f.min()), f32(0)), max(f32(f.max()), f32(0))
    ds = f32((dhi - dlo) / f32(255))
    dz = int(np.clip(np.rint((f32(0) - dlo) / ds), 0, 255))
    dq = q_u8(f, ds, dz)
    y2 = ((dq - dz) @ m2q.astype(np.int64)).astype(f32) * f32(ds * m2s)

    # the model
    inits = [
        numpy_helper.from_array(np.array(sx, f32), "sx"), numpy_helper.from_array(np.array(zx, np.uint8), "zx"),
        numpy_helper.from_array(w1q, "w1q"), numpy_helper.from_array(w1s, "w1s"), numpy_helper.from_array(np.zeros(8, np.int8), "w1z"),
        numpy_helper.from_array(b1, "b1"),
        numpy_helper.from_array(np.array(s1, f32), "s1"), numpy_helper.from_array(np.array(z1, np.uint8), "z1"),
        numpy_helper.from_array(w2q, "w2q"), numpy_helper.from_array(w2s, "w2s"), numpy_helper.from_array(np.zeros(16, np.int8), "w2z"),
        numpy_helper.from_array(np.array(sf, f32), "sf"), numpy_helper.from_array(np.array(zf, np.uint8), "zf"),
        numpy_helper.from_array(g1q, "g1q"), numpy_helper.from_array(g1s, "g1s"), numpy_helper.from_array(np.zeros(10, np.int8), "g1z"),
        numpy_helper.from_array(gb, "gb"),
        numpy_helper.from_array(m2q, "m2q"), numpy_helper.from_array(np.array(m2s, f32), "m2s"),
        numpy_helper.from_array(np.array(0, np.int8), "m2z"),
    ]
    N = helper.make_node
    nodes = [
        N("QuantizeLinear", ["x", "sx", "zx"], ["xq"]), N("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        N("DequantizeLinear", ["w1q", "w1s", "w1z"], ["w1d"], axis=0),
        N("Conv", ["xd", "w1d", "b1"], ["c1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        N("Relu", ["c1"], ["r1"]),
        N("QuantizeLinear", ["r1", "s1", "z1"], ["r1q"]), N("DequantizeLinear", ["r1q", "s1", "z1"], ["r1d"]),
        N("DequantizeLinear", ["w2q", "w2s", "w2z"], ["w2d"], axis=0),
        N("Conv", ["r1d", "w2d"], ["c2"], kernel_shape=[1, 1]),
        N("GlobalAveragePool", ["c2"], ["gp"]), N("Flatten", ["gp"], ["f"]),
        N("QuantizeLinear", ["f", "sf", "zf"], ["fq"]), N("DequantizeLinear", ["fq", "sf", "zf"], ["fd"]),
        N("DequantizeLinear", ["g1q", "g1s", "g1z"], ["g1d"], axis=0),
        N("Gemm", ["fd", "g1d", "gb"], ["y1"], transB=1),
        N("DynamicQuantizeLinear", ["f"], ["dq", "ds", "dz"]),
        N("MatMulInteger", ["dq", "m2q", "dz", "m2z"], ["mi"]),
        N("Cast", ["mi"], ["mf"], to=TensorProto.FLOAT),
        N("Mul", ["ds", "m2s"], ["scl"]), N("Mul", ["mf", "scl"], ["y2"]),
    ]
    g = helper.make_graph(nodes, "qdq_tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                          [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 10]),
                           helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 6])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out_dir, "model.onnx"))
    d = os.path.join(out_dir, "test_data_set_0")
    onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(d, "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(y1.astype(f32), "y1"), os.path.join(d, "output_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(y2.astype(f32), "y2"), os.path.join(d, "output_1.pb"))
    print("qdq_tiny: y1", y1.ravel()[:4], "y2", y2.ravel()[:4])


if __name__ == "__main__":
    main()
