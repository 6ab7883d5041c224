#!/usr/bin/python3
"""Run-time values are not errors, in the program and in ftax-eager alike (docs/hostile-input.md).

    runtime_data.py BUILD WORK

Four small models whose data only arrives at run time, each compiled with ftaxc and run by the
program and by ftax-eager on the same inputs: both must exit 0 and write the same outputs.
(ftax-eager ran the checks meant for constants on its live tensors and refused them, exit 2.)

  gather    a Gather index read from the input file, out of range (7 for a dim of 3): that row
            is zeros
  loopidx   a Loop (trip count from the input, 5) gathering row `iteration number` of a [3, 2]
            input: iterations 3 and 4 read out of range and add zeros
  quant     QuantizeLinear whose scale is a graph input, given 0
  dynq      DynamicQuantizeLinear on an all-zero input (its scale comes out 0) into
            DequantizeLinear
"""
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from tool_checks import Checks, vi

c = Checks(sys.argv[1], sys.argv[2])
F, I64, U8 = T.FLOAT, T.INT64, T.UINT8
model, pb, both = c.model, c.pb, c.both

x32 = np.arange(6, dtype=np.float32).reshape(3, 2)
both("gather", model("gather", [helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
                     [vi("x", F, [3, 2]), vi("i", I64, [2])], [vi("y", F, [2, 2])]),
     [pb("x", x32), pb("i", np.array([1, 7], np.int64))], 1, [np.array([[2, 3], [0, 0]], np.float32)])
body = helper.make_graph([helper.make_node("Gather", ["x", "it"], ["g"], axis=0),
                          helper.make_node("Add", ["acc", "g"], ["acc2"]),
                          helper.make_node("Identity", ["c"], ["c2"])], "body",
                         [vi("it", I64, []), vi("c", T.BOOL, []), vi("acc", F, [2])],
                         [vi("c2", T.BOOL, []), vi("acc2", F, [2])])
both("loopidx", model("loopidx", [helper.make_node("Loop", ["M", "", "a0"], ["y"], body=body)],
                      [vi("x", F, [3, 2]), vi("M", I64, []), vi("a0", F, [2])], [vi("y", F, [2])]),
     [pb("x", x32), pb("M", np.array(5, np.int64)), pb("a0", np.zeros(2, np.float32))], 1,
     [x32.sum(0)])
both("quant", model("quant", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
                    [vi("x", F, [4]), vi("s", F, [])], [vi("y", U8, [4])],
                    [numpy_helper.from_array(np.array(0, np.uint8), "z")]),
     [pb("x", np.array([1, 2, 3, 4], np.float32)), pb("s", np.array(0.0, np.float32))], 1)
both("dynq", model("dynq", [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "zp"]),
                            helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])],
                   [vi("x", F, [4])], [vi("y", F, [4])]),
     [pb("x", np.zeros(4, np.float32))], 1, [np.zeros(4, np.float32)])

sys.exit(c.finish("runtime_data"))
