#!/usr/bin/python3
"""Zero-sized dims through compile, run and --generate (ONNX allows a dim of 0; ftax does too).

    zero_dims.py BUILD WORK

- arith_tiny at batch 0: ftaxc compiles it, the program and ftax-eager run it on empty inputs
  and write empty outputs of the shapes they declare ([0, 4, 8] ...), exit 0.
- gpt2_kv_tiny's decode step at batch 0: compiles; `--generate` in the program and in ftax-eager
  refuses with exit 1 and a message (it divided by the batch: SIGFPE), nothing written.
- the same at max_len 0 (a cache of no position, "seq 0"): compiles; --generate refuses (1).
- at batch 1, max_len 8: --generate runs (0), so the refusals above are about the zero dims.
"""
import os
import subprocess
import sys

import numpy as np
from onnx import numpy_helper

build, work = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
models = os.path.join(here, "..", "models")
os.makedirs(work, exist_ok=True)
ftaxc, eager = os.path.join(build, "ftaxc"), os.path.join(build, "ftax-eager")
failures = []


def run(cmd, want, says=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != want or (says and says not in err):
        failures.append("%s: exit %d (want %d)%s\n%s" % (" ".join(cmd), p.returncode, want,
                                                         ", stderr lacks %r" % says if says else "", err[-800:]))
    return p


def pb(name, arr):
    path = os.path.join(work, name + ".pb")
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr, name).SerializeToString())
    return path


def read(path):
    from onnx import TensorProto
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


# arith_tiny at batch 0
m = os.path.join(models, "arith_tiny", "model.onnx")
x, y = pb("x", np.zeros((0, 4, 8), np.float32)), pb("y", np.zeros((0, 1, 8), np.float32))
prog = os.path.join(work, "arith_b0")
run([ftaxc, m, "-o", prog, "--dim", "batch=0"], 0)
for tool, cmd in (("program", [prog]), ("eager", [eager, m, "--dim", "batch=0"])):
    out = os.path.join(work, "out_" + tool)
    if run(cmd + [x, y, "--output-dir", out], 0).returncode == 0:
        for k in range(2):
            a = read(os.path.join(out, "output_%d.pb" % k))
            if a.size != 0 or a.ndim < 1 or a.shape[0] != 0:
                failures.append("%s: output_%d has shape %s, expected batch 0" % (tool, k, a.shape))

# the decode step at batch 0 and at max_len 0: --generate refuses; at 1 and 8 it runs
d = os.path.join(models, "gpt2_kv_tiny", "decode.onnx")
prompts = {0: pb("prompt0", np.zeros((0, 3), np.int64)), 1: pb("prompt1", np.array([[1, 2, 3]], np.int64))}
for b, t, want, says in ((0, 8, 1, "batch of at least 1"), (0, 0, 1, "batch of at least 1"),
                         (1, 0, 1, "the cache holds 0 positions"), (1, 8, 0, None)):
    dims = ["--dim", "batch=%d" % b, "--dim", "max_len=%d" % t]
    prog = os.path.join(work, "decode_%d_%d" % (b, t))
    run([ftaxc, d, "-o", prog] + dims, 0)
    for tool, cmd in (("program", [prog]), ("eager", [eager, d] + dims)):
        out = os.path.join(work, "gen_%s_%d_%d" % (tool, b, t))
        run(cmd + ["--generate", "2", "--prompt", prompts[b], "--output-dir", out], want, says)
        if want and os.path.exists(os.path.join(out, "tokens.pb")):
            failures.append("%s at batch %d, max_len %d: tokens.pb written after a refusal" % (tool, b, t))

for f in failures:
    sys.stderr.write("FAIL " + f + "\n")
sys.stdout.write("zero_dims: %d failures\n" % len(failures))
sys.exit(1 if failures else 0)
