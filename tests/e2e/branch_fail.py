#!/usr/bin/python3
"""A run-time If whose other branch cannot run at the compiled shapes (docs/control-flow.md).

    branch_fail.py BUILD WORK

tests/models/vad_v5 at 512 samples holds the 16 kHz branch and, for the 8 kHz one (which needs a
256-sample chunk), a run-time error; at 256 samples the reverse. Each program, and ftax-eager at
the same shape, must run the rate it fits (exit 0; the e2e test checks the values), and for the
other rate exit 2 with a message naming the If and the branch, writing no output file.
A model in which no branch fits is still refused when compiled: the same model at 384 samples
(neither 4 nor 2 frames of 128) exits 2 naming a node of the last branch it tried.
"""
import os
import sys

import numpy as np

from tool_checks import Checks

c = Checks(sys.argv[1], sys.argv[2])
here = os.path.dirname(os.path.abspath(__file__))
model = os.path.join(here, "..", "models", "vad_v5", "model.onnx")
ftaxc, eager, work, run = c.ftaxc, c.eager, c.work, c.run
H = 16


def pb(name, arr):
    return c.pb(name, arr, name.split("_")[0])


rng = np.random.default_rng(7)
state = pb("state", (rng.standard_normal((2, 1, H)) * 0.3).astype(np.float32))
for n, fits, other in ((512, 16000, 8000), (256, 8000, 16000)):
    x = pb("x_%d" % n, (rng.standard_normal((1, n)) * 0.5).astype(np.float32))
    prog = os.path.join(work, "vad_%d" % n)
    run([ftaxc, model, "-o", prog, "--shape", "x=1x%d" % n], 0)
    branch = "else_branch" if other == 8000 else "then_branch"
    for tool, cmd in (("program", [prog]), ("eager", [eager, model, "--shape", "x=1x%d" % n])):
        for sr, want in ((fits, 0), (other, 2)):
            d = os.path.join(work, "out_%s_%d_%d" % (tool, n, sr))
            run(cmd + [x, pb("sr_%d" % sr, np.array(sr, np.int64)), state, "--output-dir", d], want,
                () if want == 0 else ("If_0", branch, "cannot run at the shapes"))
            left = os.listdir(d) if os.path.isdir(d) else []
            if want and left:
                c.fail("%s at %d samples, sr %d: wrote %s after the error" % (tool, n, sr, left))
            if not want and sorted(left) != ["output_0.pb", "output_1.pb"]:
                c.fail("%s at %d samples, sr %d: outputs %s" % (tool, n, sr, left))
run([ftaxc, model, "-o", os.path.join(work, "vad_384"), "--shape", "x=1x384"], 2, ("frames",))
if os.path.exists(os.path.join(work, "vad_384")):
    c.fail("a program was written for 384 samples, where no branch fits")

sys.exit(c.finish("branch_fail"))
