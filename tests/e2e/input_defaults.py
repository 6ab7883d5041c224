#!/usr/bin/python3
"""Graph inputs that have an initializer: from IR 4 on, a default the caller may override
(docs/hostile-input.md, README's flags).

    input_defaults.py BUILD WORK

y = x * w + b, IR 8, inputs [w, x, b] where w ([3]) and b ([2, 1]) have initializers:
  - by default ftaxc compiles w and b as constants: the program and ftax-eager take x alone and
    give x * W + B, and each prints one note naming how many such inputs there are, their names
    and --keep-input;
  - --bind b=FILE.pb: b is that constant instead (the note names w alone);
  - --keep-input w: the program and ftax-eager take w and x (in the model's order) and give
    x * w + B for a w fed at run time; --keep-input all: w, x and b, all fed; the program then
    requires them (given x alone it fails);
  - --keep-input with a name that is no input, an input without an initializer, an initializer
    that is not an input, or `all` for a model with none: usage errors (exit 1) naming it;
  - the same model as IR 3, where every initializer is listed as an input and is a weight: no
    note, and --keep-input w is refused, saying why.
Before, ftaxc and ftax-eager froze the defaults silently and had no way to feed them.
"""
import os
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from tool_checks import Checks, vi

c = Checks(sys.argv[1], sys.argv[2])
F = T.FLOAT
rng = np.random.default_rng(39)
W, B = rng.standard_normal(3).astype(np.float32), rng.standard_normal((2, 1)).astype(np.float32)
x = rng.standard_normal((2, 3)).astype(np.float32)
w1, b1 = rng.standard_normal(3).astype(np.float32), rng.standard_normal((2, 1)).astype(np.float32)
NOTE = "note: "


def build(name, ir, extra_init=()):
    nodes = [helper.make_node("Mul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"])]
    ins = [vi("w", F, [3]), vi("x", F, [2, 3]), vi("b", F, [2, 1])]
    inits = [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")] + list(extra_init)
    return c.model(name, nodes, ins, [vi("y", F, [2, 3])], inits, ir=ir)


def notes(stderr):
    return stderr.decode("utf-8", "replace").count(NOTE)


def note_check(what, p, want, says=()):
    err = p.stderr.decode("utf-8", "replace")
    if notes(p.stderr) != want or any(s not in err for s in says):
        c.fail("%s: %d notes (want %d) holding %r:\n%s" % (what, notes(p.stderr), want, list(says), err[-800:]))


def case(tag, path, keep, feed, expect, note_says, extra=()):
    """Compile with --keep-input keep... and extra, run program and ftax-eager on feed; check the
    outputs and that each printed the note once (note_says) or not at all (None)."""
    flags = sum((["--keep-input", k] for k in keep), []) + list(extra)
    prog = os.path.join(c.work, tag)
    p = c.run([c.ftaxc, path, "-o", prog] + flags)
    if p.returncode:
        return
    note_check("ftaxc " + tag, p, 0 if note_says is None else 1, note_says or ())
    for tool, cmd in (("program", [prog]), ("eager", [c.eager, path] + flags)):
        d = os.path.join(c.work, "%s_%s" % (tag, tool))
        p = c.run(cmd + feed + ["--output-dir", d])
        if p.returncode:
            continue
        if tool == "eager":
            note_check("ftax-eager " + tag, p, 0 if note_says is None else 1, note_says or ())
        y = c.read(os.path.join(d, "output_0.pb"))
        if y.shape != expect.shape or not np.allclose(y, expect, rtol=1e-6, atol=1e-6):
            c.fail("%s %s: y = %r, expected %r" % (tool, tag, y, expect))
    return prog


m8 = build("defaults_ir8", 8)
xf, wf, bf = c.pb("x", x), c.pb("w", w1), c.pb("b", b1)
case("default", m8, [], [xf], x * W + B, ["2 graph inputs", "'w', 'b'", "--keep-input"])
case("keep_w", m8, ["w"], [wf, xf], x * w1 + B, ["1 graph input", "'b'"])
prog = case("keep_all", m8, ["all"], [wf, xf, bf], x * w1 + b1, None)
case("bind_b", m8, [], [xf], x * W + b1, ["1 graph input", "'w'"], ["--bind", "b=" + bf])
if prog:
    p = c.run([prog, xf, "--output-dir", os.path.join(c.work, "keep_all_short")], want=1)
    p = c.run([prog, "--input", "x=" + xf, "--output-dir", os.path.join(c.work, "keep_all_missing")], want=1)
# refusals, by ftaxc and ftax-eager alike
m_extra = build("defaults_extra", 8, [numpy_helper.from_array(np.float32(2), "two")])
no_defaults = c.model("no_defaults", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [2, 3])],
                      [vi("y", F, [2, 3])], ir=8)
for path, name, says in ((m8, "nope", ["'nope'", "no graph input"]), (m8, "x", ["'x'", "has no initializer"]),
                         (m_extra, "two", ["'two'", "not a graph input with a default"]),
                         (no_defaults, "all", ["no graph input with an initializer"])):
    for tool in ([c.ftaxc, path, "-o", os.path.join(c.work, "refused")], [c.eager, path, xf]):
        c.run(tool + ["--keep-input", name], want=1, says=says)
# IR 3: initializers listed as inputs are weights
m3 = build("defaults_ir3", 3)
case("ir3", m3, [], [xf], x * W + B, None)
for tool in ([c.ftaxc, m3, "-o", os.path.join(c.work, "refused")], [c.eager, m3, xf]):
    c.run(tool + ["--keep-input", "w"], want=1, says=["'w'", "before IR 4"])
sys.exit(c.finish("input_defaults"))
