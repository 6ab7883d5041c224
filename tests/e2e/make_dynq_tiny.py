#!/usr/bin/python3
"""Write tests/models/dynq_tiny: matrix products in the dynamic form onnxruntime's quantize_dynamic
writes, in the variants ftaxc fuses into one int8 GEMM (ftax.QDQMatMul fed by
ftax.DynamicQuantizeScale), with reference outputs computed here in numpy.

  x [2,5,24] -> DynamicQuantizeLinear -> (xq, xs, xz), read by two products:
    y1 = Relu(Mul(Cast(MatMulInteger(xq, W1 int8 [24,40], xz, 0)), Mul(xs, s1)) + b1)   per tensor
    y2 = b2 + Mul(Mul(s2, xs), Cast(MatMulInteger(xq, W2 int8 [24,19], xz, z2)))         per column,
                                                                                         operands swapped
  y3 = Mul(Cast(MatMulInteger(xq, W3 uint8 [24,33], xz, 131)), Mul(xs, s3))             uint8 weight
  y3 -> DynamicQuantizeLinear -> y4 = Mul(Cast(MatMulInteger(., W4 int8 [33,7], ., z4)), Mul(., s4))
                                                                                         per column

The reference follows the ONNX definitions: DynamicQuantizeLinear's range includes 0, its scale
is (max - min) / 255 in float32 and x / scale rounds half to even (np.rint) before saturating;
the sums are exact integers, Cast and the Muls float32. ftaxc's epilogue computes acc * scale +
bias in one fma (within the default tolerance); y3 has no bias, so its bits are the reference's
and y4's quantization sees the same range. Run with /usr/bin/python3 (onnx and numpy);
deterministic.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out_dir = os.path.join(here, "..", "models", "dynq_tiny")
rng = np.random.default_rng(20261125)
f32 = np.float32


def dql(x):
    lo, hi = min(f32(x.min()), f32(0)), max(f32(x.max()), f32(0))
    s = f32((hi - lo) / f32(255))
    z = int(np.clip(np.rint((f32(0) - lo) / s), 0, 255)) if s != 0 else 0
    q = np.clip(np.rint(x.astype(f32) / s) + z, 0, 255).astype(np.int64)
    return q, s, z


def mmi(xq, xz, w, wz):
    """MatMulInteger's exact sums, as float32 (Cast)"""
    return np.matmul(xq - xz, w.astype(np.int64) - np.asarray(wz, np.int64)).astype(f32)


def main():
    os.makedirs(os.path.join(out_dir, "test_data_set_0"), exist_ok=True)
    x = rng.normal(0, 1, (2, 5, 24)).astype(f32)
    w1 = rng.integers(-127, 128, (24, 40)).astype(np.int8)
    s1 = f32(0.004)
    b1 = rng.normal(0, 0.1, 40).astype(f32)
    w2 = rng.integers(-127, 128, (24, 19)).astype(np.int8)
    s2 = rng.uniform(0.001, 0.01, 19).astype(f32)
    z2 = rng.integers(-5, 6, 19).astype(np.int8)
    b2 = rng.normal(0, 0.1, 19).astype(f32)
    w3 = rng.integers(0, 256, (24, 33)).astype(np.uint8)
    s3 = f32(0.003)
    w4 = rng.integers(-127, 128, (33, 7)).astype(np.int8)
    s4 = rng.uniform(0.001, 0.01, 7).astype(f32)
    z4 = np.zeros(7, np.int8)

    # reference
    xq, xs, xz = dql(x)
    y1 = np.maximum(mmi(xq, xz, w1, 0) * f32(xs * s1) + b1, f32(0)).astype(f32)
    y2 = (b2 + (s2 * xs).astype(f32) * mmi(xq, xz, w2, z2.astype(np.int64))).astype(f32)
    y3 = (mmi(xq, xz, w3, 131) * f32(xs * s3)).astype(f32)
    q3, s3x, z3x = dql(y3)
    y4 = (mmi(q3, z3x, w4, z4.astype(np.int64)) * (s3x * s4).astype(f32)).astype(f32)

    inits = [
        numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(np.array(s1, f32), "s1"),
        numpy_helper.from_array(np.array(0, np.int8), "z1"), numpy_helper.from_array(b1, "b1"),
        numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(s2, "s2"), numpy_helper.from_array(z2, "z2"),
        numpy_helper.from_array(b2, "b2"),
        numpy_helper.from_array(w3, "w3"), numpy_helper.from_array(np.array(s3, f32), "s3"),
        numpy_helper.from_array(np.array(131, np.uint8), "z3"),
        numpy_helper.from_array(w4, "w4"), numpy_helper.from_array(s4, "s4"), numpy_helper.from_array(z4, "z4"),
    ]
    N = helper.make_node
    F = TensorProto.FLOAT
    nodes = [
        N("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        N("MatMulInteger", ["xq", "w1", "xz", "z1"], ["m1"]), N("Cast", ["m1"], ["c1"], to=F),
        N("Mul", ["xs", "s1"], ["k1"]), N("Mul", ["c1", "k1"], ["p1"]), N("Add", ["p1", "b1"], ["a1"]),
        N("Relu", ["a1"], ["y1"]),
        N("MatMulInteger", ["xq", "w2", "xz", "z2"], ["m2"]), N("Cast", ["m2"], ["c2"], to=F),
        N("Mul", ["s2", "xs"], ["k2"]), N("Mul", ["k2", "c2"], ["p2"]), N("Add", ["b2", "p2"], ["y2"]),
        N("MatMulInteger", ["xq", "w3", "xz", "z3"], ["m3"]), N("Cast", ["m3"], ["c3"], to=F),
        N("Mul", ["xs", "s3"], ["k3"]), N("Mul", ["c3", "k3"], ["y3"]),
        N("DynamicQuantizeLinear", ["y3"], ["q3", "q3s", "q3z"]),
        N("MatMulInteger", ["q3", "w4", "q3z", "z4"], ["m4"]), N("Cast", ["m4"], ["c4"], to=F),
        N("Mul", ["q3s", "s4"], ["k4"]), N("Mul", ["c4", "k4"], ["y4"]),
    ]
    outs = [("y1", [2, 5, 40]), ("y2", [2, 5, 19]), ("y3", [2, 5, 33]), ("y4", [2, 5, 7])]
    g = helper.make_graph(nodes, "dynq_tiny", [helper.make_tensor_value_info("x", F, [2, 5, 24])],
                          [helper.make_tensor_value_info(n, F, s) for n, s in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out_dir, "model.onnx"))
    d = os.path.join(out_dir, "test_data_set_0")
    onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(d, "input_0.pb"))
    for k, (n, y) in enumerate(zip(["y1", "y2", "y3", "y4"], [y1, y2, y3, y4])):
        onnx.save_tensor(numpy_helper.from_array(y.astype(f32), n), os.path.join(d, "output_%d.pb" % k))
    print("dynq_tiny: xs %g xz %d; y1" % (xs, xz), y1.ravel()[:3], "y4", y4.ravel()[:3])


if __name__ == "__main__":
    main()
