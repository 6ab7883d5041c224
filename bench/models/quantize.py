#!/usr/bin/python3
"""Quantized variants of zoo models, in the two forms ONNX Runtime's quantizer writes.

  qdq      static: every Conv, MatMul and Gemm whose weight is a constant gets
           - its weight as an int8 constant, symmetric, one scale per output channel, read
             through DequantizeLinear (axis 0 for Conv and Gemm with transB, 1 for MatMul);
           - its activation input through QuantizeLinear -> DequantizeLinear, uint8, one scale
             and zero point per tensor, from the range the tensor takes on the reference inputs
             (test_data_set_0; the range always includes 0);
           bias and outputs stay float32.
  dynamic  as onnxruntime.quantization.quantize_dynamic writes it: each MatMul with a constant
           weight becomes DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q, x_zp, W_zp) ->
           Cast(float) -> Mul(x_scale * W_scale); W_q int8, symmetric, one scale per tensor.
           One DynamicQuantizeLinear per activation tensor (Q, K and V share theirs).

Rounding as the ONNX spec's QuantizeLinear: x / scale in float32, round half to even, saturate.

The activation ranges come from running the fp32 model with every calibrated tensor made a
graph output, compiled by build/ftaxc (no onnxruntime in Debian's python3).

Usage:
  /usr/bin/python3 bench/models/quantize.py [--zoo DIR] [--out DIR] [--ftaxc PATH] MODEL:FORM...
  e.g.  resnet50:qdq mobilenet_v2:qdq bert_base:qdq bert_base:dynamic
writes OUT/MODEL_FORM/model.onnx and OUT/MODEL_FORM/test_data_set_0/input_*.pb (the zoo's
inputs; the fp32 model's torch outputs are kept as fp32_output_*.pb for accuracy checks).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

QUANTIZABLE = ("Conv", "MatMul", "Gemm")


def weight_axis(node, w):
    """The output-channel axis of a weight, or None where this op is not quantized."""
    if node.op_type == "Conv":
        return 0
    if node.op_type == "MatMul":
        return 1 if w.ndim == 2 else None
    if node.op_type == "Gemm":
        if any(a.name == "transA" and a.i for a in node.attribute) or w.ndim != 2:
            return None
        return 0 if any(a.name == "transB" and a.i for a in node.attribute) else 1
    return None


def quant_targets(model):
    """(node, weight initializer) for every op quantized: a constant float weight at input 1."""
    inits = {t.name: t for t in model.graph.initializer}
    out = []
    for n in model.graph.node:
        if n.op_type in QUANTIZABLE and len(n.input) > 1 and n.input[1] in inits:
            w = numpy_helper.to_array(inits[n.input[1]])
            if w.dtype == np.float32 and weight_axis(n, w) is not None:
                out.append((n, w))
    return out


def quantize_linear(x, scale, zp, lo, hi):
    """ONNX QuantizeLinear: float32 division, round half to even (np.rint), saturate."""
    q = np.rint(np.asarray(x, np.float32) / np.asarray(scale, np.float32)) + zp
    return np.clip(q, lo, hi)


def per_channel_int8(w, axis):
    """Symmetric int8, one scale per slice along axis: max |w| maps to 127."""
    red = tuple(i for i in range(w.ndim) if i != axis)
    amax = np.abs(w).max(axis=red).astype(np.float32)
    scale = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = quantize_linear(w, scale.reshape(shape), 0, -128, 127).astype(np.int8)
    return q, scale


def per_tensor_int8(w):
    amax = np.float32(np.abs(w).max())
    scale = np.float32(amax / np.float32(127)) if amax > 0 else np.float32(1)
    return quantize_linear(w, scale, 0, -128, 127).astype(np.int8), scale


def uint8_params(lo, hi):
    """Asymmetric uint8 scale and zero point of a range (widened to include 0)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1)
    zp = int(np.clip(np.rint(np.float32(-lo) / scale), 0, 255))
    return scale, np.uint8(zp)


def read_inputs(zoo_dir):
    d = os.path.join(zoo_dir, "test_data_set_0")
    files = sorted(f for f in os.listdir(d) if f.startswith("input_"))
    return d, [os.path.join(d, f) for f in files]


def calibrate(model, tensors, zoo_dir, ftaxc):
    """min and max of each named tensor on the reference inputs, by the fp32 model compiled
    with those tensors as extra graph outputs."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    first = len(m.graph.output)
    for t in tensors:
        m.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
    _, inputs = read_inputs(zoo_dir)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calib.onnx")
        onnx.save(m, path)
        prog = os.path.join(tmp, "calib")
        syms = {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}
        dims = [a for s, v in (("batch", 1), ("seq", 128)) if s in syms for a in ("--dim", "%s=%d" % (s, v))]
        subprocess.run([ftaxc, path, "-o", prog] + dims, check=True, stdout=subprocess.DEVNULL)
        subprocess.run([prog] + inputs + ["--output-dir", os.path.join(tmp, "out")],
                       check=True, stdout=subprocess.DEVNULL)
        ranges = {}
        for i, t in enumerate(tensors):
            pb = onnx.TensorProto()
            with open(os.path.join(tmp, "out", "output_%d.pb" % (first + i)), "rb") as f:
                pb.ParseFromString(f.read())
            a = numpy_helper.to_array(pb)
            ranges[t] = (a.min(), a.max())
    return ranges


def const(graph, name, array):
    graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
    return name


def drop_initializers(graph, names):
    keep = [t for t in graph.initializer if t.name not in names]
    del graph.initializer[:]
    graph.initializer.extend(keep)


def static_qdq(model, zoo_dir, ftaxc):
    g = model.graph
    targets = quant_targets(model)
    acts = sorted({n.input[0] for n, _ in targets})
    ranges = calibrate(model, acts, zoo_dir, ftaxc)
    new_nodes, act_dq = [], {}
    for a in acts:  # one Q -> DQ pair per activation tensor, shared by its consumers
        s, z = uint8_params(*ranges[a])
        sn, zn = const(g, a + "_scale", s), const(g, a + "_zero_point", z)
        new_nodes.append(helper.make_node("QuantizeLinear", [a, sn, zn], [a + "_quantized"], name=a + "_QuantizeLinear"))
        new_nodes.append(helper.make_node("DequantizeLinear", [a + "_quantized", sn, zn], [a + "_dequantized"], name=a + "_DequantizeLinear"))
        act_dq[a] = a + "_dequantized"
    weights = {}
    for n, w in targets:
        wn = n.input[1]
        if wn not in weights:
            axis = weight_axis(n, w)
            q, s = per_channel_int8(w, axis)
            qn = const(g, wn + "_quantized", q)
            sn = const(g, wn + "_scale", s)
            zn = const(g, wn + "_zero_point", np.zeros(s.shape, np.int8))
            new_nodes.append(helper.make_node("DequantizeLinear", [qn, sn, zn], [wn + "_dequantized"], name=wn + "_DequantizeLinear", axis=axis))
            weights[wn] = wn + "_dequantized"
        n.input[0] = act_dq[n.input[0]]
        n.input[1] = weights[n.input[1]]
    drop_initializers(g, set(weights))
    return insert_before_users(g, new_nodes)


def insert_before_users(g, new_nodes):
    """Put the new nodes where they are defined before use: each right after the producer of its
    first input (graph inputs and constants: at the top)."""
    produced = {o: i for i, n in enumerate(g.node) for o in n.output}
    slots = {}
    for nn in new_nodes:
        slots.setdefault(produced.get(nn.input[0], -1), []).append(nn)
    order = list(slots.get(-1, []))
    for i, n in enumerate(g.node):
        order.append(n)
        order.extend(slots.get(i, []))
    # a DequantizeLinear follows its QuantizeLinear, which the loop above placed first
    out, seen, pending = [], set(i.name for i in g.input) | set(t.name for t in g.initializer), list(order)
    while pending:
        rest = []
        for n in pending:
            if all(x == "" or x in seen for x in n.input):
                out.append(n)
                seen.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            sys.exit("quantize.py: could not order the graph (a cycle or a missing value)")
        pending = rest
    del g.node[:]
    g.node.extend(out)
    return len(new_nodes)


def dynamic(model):
    g = model.graph
    targets = [(n, w) for n, w in quant_targets(model) if n.op_type == "MatMul"]
    new_nodes, dq = [], {}
    weights = {}
    rewired = []
    for n, w in targets:
        a, wn, y = n.input[0], n.input[1], n.output[0]
        if a not in dq:
            dq[a] = (a + "_quantized", a + "_scale", a + "_zero_point")
            new_nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(dq[a]), name=a + "_DynamicQuantizeLinear"))
        if wn not in weights:
            q, s = per_tensor_int8(w)
            weights[wn] = (const(g, wn + "_quantized", q), const(g, wn + "_scale", s), const(g, wn + "_zero_point", np.int8(0)))
        qw, sw, zw = weights[wn]
        xq, xs, xz = dq[a]
        base = n.name or y
        rewired.append((n, [
            helper.make_node("MatMulInteger", [xq, qw, xz, zw], [y + "_quantized"], name=base + "_quant"),
            helper.make_node("Cast", [y + "_quantized"], [y + "_cast"], name=base + "_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [xs, sw], [y + "_scales"], name=base + "_scales_mul"),
            helper.make_node("Mul", [y + "_cast", y + "_scales"], [y], name=base + "_output_scale_mul"),
        ]))
    drop_initializers(g, set(weights))
    replace = {id(n): nodes for n, nodes in rewired}
    body = []
    for n in g.node:
        body.extend(replace.get(id(n), [n]))
    del g.node[:]
    g.node.extend(body)
    return insert_before_users(g, new_nodes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zoo", default="bench/zoo")
    ap.add_argument("--out", default=None, help="default: the zoo directory")
    ap.add_argument("--ftaxc", default="build/ftaxc")
    ap.add_argument("specs", nargs="+", metavar="MODEL:FORM")
    args = ap.parse_args()
    out_root = args.out or args.zoo
    for spec in args.specs:
        name, _, form = spec.partition(":")
        if form not in ("qdq", "dynamic"):
            sys.exit("quantize.py: %s: the form must be qdq or dynamic" % spec)
        src = os.path.join(args.zoo, name)
        model = onnx.load(os.path.join(src, "model.onnx"))
        added = static_qdq(model, src, args.ftaxc) if form == "qdq" else dynamic(model)
        dst = os.path.join(out_root, "%s_%s" % (name, form))
        os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(dst, "model.onnx"))
        d, inputs = read_inputs(src)
        for f in inputs:
            shutil.copy(f, os.path.join(dst, "test_data_set_0", os.path.basename(f)))
        for f in sorted(os.listdir(d)):
            if f.startswith("output_"):
                shutil.copy(os.path.join(d, f), os.path.join(dst, "test_data_set_0", "fp32_" + f))
        print("%s: %d quantize nodes added -> %s" % (spec, added, dst))


if __name__ == "__main__":
    main()
