#!/usr/bin/python3
"""Accuracy of ftaxc --precision bf16 on the zoo: each model compiled twice (fp32, bf16) at the
reference's shape, both run on test_data_set_0, and per output

  max abs err    max |bf16 - fp32| over the output's elements
  rel err        that over max |fp32| (the output's scale: an element-wise relative error is
                 dominated by elements near zero)
  top-1          image classifiers ([1, classes] logits): whether bf16's argmax is fp32's (and
                 torch's); the text models' outputs are hidden states (no classes)

Writes a markdown table to stdout and to OUT/table.md.

  /usr/bin/python3 bench/bf16_accuracy.py [--zoo /tmp/zoo] [--build build] [--out DIR] [--reuse] [MODEL...]

Models are bench/models/export.py's, exported beforehand (bench/zoo_check.sh does that); --reuse
keeps programs already compiled in OUT. Needs python3-onnx (Debian's is enough).
"""
import argparse
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, numpy_helper

TEXT = {"bert_base", "bert_L2_H128", "distilbert", "gpt2"}
ALL = ["bert_L2_H128", "bert_base", "distilbert", "gpt2", "vit_b_16", "resnet50", "squeezenet1_1",
       "mobilenet_v2", "efficientnet_b0"]


def load(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t).astype(np.float64)


def build_and_run(a, model, prec):
    prog = os.path.join(a.out, f"{model}_{prec}")
    dims = ["--dim", "batch=1"] + (["--dim", "seq=128"] if model in TEXT else [])
    onnx_path = os.path.join(a.zoo, model, "model.onnx")
    if not (a.reuse and os.path.exists(prog)):
        cmd = [os.path.join(a.build, "ftaxc"), onnx_path, "-o", prog, "--precision", prec] + dims
        with open(prog + ".ftaxc.log", "w") as log:
            subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT)
    data = os.path.join(a.zoo, model, "test_data_set_0")
    ins = sorted(f for f in os.listdir(data) if f.startswith("input_"))
    outdir = prog + ".out"
    subprocess.run([prog] + [os.path.join(data, f) for f in ins] + ["--output-dir", outdir],
                   check=True, stdout=subprocess.DEVNULL)
    outs = sorted(f for f in os.listdir(data) if f.startswith("output_"))
    return [load(os.path.join(outdir, f)) for f in outs], [load(os.path.join(data, f)) for f in outs]


def top1(model, f32, b16, ref):
    if model not in TEXT and f32.ndim == 2 and f32.shape[0] == 1:  # image classifiers' [1, classes]
        a, b, r = f32.argmax(), b16.argmax(), ref.argmax()
        return f"{'yes' if a == b else 'NO'} (class {b}; torch {'agrees' if b == r else r})"
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zoo", default="bench/zoo")
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="bench/out/bf16_accuracy")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = ["| model | output | shape | max abs err bf16 vs fp32 | rel err (/ max abs fp32) | "
            "fp32 vs torch max abs | top-1 bf16 = fp32 |", "|---|---|---|---:|---:|---:|---|"]
    print("\n".join(rows), flush=True)
    for model in a.models or ALL:
        try:
            f32s, refs = build_and_run(a, model, "fp32")
            b16s, _ = build_and_run(a, model, "bf16")
        except (subprocess.CalledProcessError, OSError) as ex:
            row = f"| {model} | failed: {ex} | | | | | |"
            rows.append(row)
            print(row, flush=True)
            continue
        for k, (f32, b16, ref) in enumerate(zip(f32s, b16s, refs)):
            err = float(np.abs(b16 - f32).max())
            scale = float(np.abs(f32).max()) or 1.0
            row = (f"| {model} | {k} | {'x'.join(map(str, f32.shape))} | {err:.3g} | {err / scale:.2e} | "
                   f"{float(np.abs(f32 - ref).max()):.2g} | {top1(model, f32, b16, ref)} |")
            rows.append(row)
            print(row, flush=True)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())
