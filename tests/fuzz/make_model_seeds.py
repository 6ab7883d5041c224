#!/usr/bin/python3
"""Write tests/fuzz/seeds/fuzz_model/*.onnx: small models shaped like the classes the loader's
function inlining and subgraph scoping must get right, for the fuzz_model target to mutate
(seeds.sh copies them in). Run with /usr/bin/python3 (onnx); deterministic.

  fn_if_body_values   a function whose If branches read the body's own values, called twice
  fn_nested_refs      functions calling functions, attributes passed down by reference
  fn_loop_calls       a function holding a Loop whose body calls another function
  fn_scan             a Scan whose body calls a function
  fn_omitted_output   a two-output function called with one output
  fn_fanout           4 functions each calling the next 3 times (81 leaves)
  fn_recursive_if     a function calling itself from an If branch (invalid: recursion)
  if_nested_outer     Ifs nested three deep, each branch reading values of every enclosing graph
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

F, I64, B = T.FLOAT, T.INT64, T.BOOL
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "fuzz_model")
os.makedirs(out, exist_ok=True)
OPS = [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)]


def vi(n, t=F, s=None):
    return helper.make_tensor_value_info(n, t, s)


def node(op, i, o, name, **kw):
    return helper.make_node(op, list(i), list(o), name=name, **kw)


def call(f, i, o, name, **kw):
    return helper.make_node(f, list(i), list(o), name=name, domain="local", **kw)


def fn(name, i, o, nodes, attrs=()):
    return helper.make_function("local", name, list(i), list(o), list(nodes), OPS, list(attrs))


def true(name):
    return node("Constant", [], [name], name + "_c", value=helper.make_tensor("v", B, [], [True]))


def save(name, nodes, ins, outs, fns=(), inits=()):
    g = helper.make_graph(list(nodes), name, list(ins), list(outs), list(inits))
    m = helper.make_model(g, opset_imports=OPS, producer_name="make_model_seeds.py")
    m.ir_version = 8
    m.functions.extend(fns)
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


branch = lambda op, src: helper.make_graph([node(op, [src], ["o"], op.lower())], op, [], [vi("o")])
f_if = fn("IfBody", ["A"], ["B"], [node("Relu", ["A"], ["T"], "relu"), node("ReduceSum", ["T"], ["s"], "sum", keepdims=0),
                                   node("Greater", ["s", "A0"], ["c"], "gt"), node("Constant", [], ["A0"], "zero",
                                                                                  value=numpy_helper.from_array(np.array(0, np.float32))),
                                   node("If", ["c"], ["B"], "pick", then_branch=branch("Neg", "T"), else_branch=branch("Abs", "T"))])
save("fn_if_body_values", [call("IfBody", ["x"], ["u"], "c1"), call("IfBody", ["u"], ["y"], "c2")], [vi("x", F, [4])],
     [vi("y")], [f_if])
def ref(name, to, t=onnx.AttributeProto.FLOAT):
    a = helper.AttributeProto()
    a.name, a.ref_attr_name, a.type = name, to, t
    return a


lr = node("LeakyRelu", ["A"], ["B"], "lr")
lr.attribute.append(ref("alpha", "k"))
scale = fn("Scale", ["A"], ["B"], [lr], ["k"])
twice = fn("Twice", ["P"], ["Q"], [call("Scale", ["P"], ["t"], "s1"), call("Scale", ["t"], ["Q"], "s2")], ["k"])
for n in twice.node:
    n.attribute.append(ref("k", "k"))
save("fn_nested_refs", [call("Twice", ["x"], ["y"], "outer", k=0.25)], [vi("x", F, [2, 3])], [vi("y")], [twice, scale])
inc = fn("Inc", ["A"], ["B"], [node("Constant", [], ["one"], "one", value=numpy_helper.from_array(np.array(1, np.float32))),
                               node("Add", ["A", "one"], ["B"], "add")])
body = helper.make_graph([call("Inc", ["h"], ["h2"], "inc"), node("Identity", ["cond"], ["cond2"], "keep")], "body",
                         [vi("i", I64, []), vi("cond", B, []), vi("h", F, [3])], [vi("cond2", B, []), vi("h2", F, [3])])
looped = fn("Looped", ["X", "N"], ["Y"], [node("Loop", ["N", "", "X"], ["Y"], "loop", body=body)])
save("fn_loop_calls", [call("Looped", ["x", "n"], ["y"], "c")], [vi("x", F, [3])], [vi("y")], [looped, inc],
     [numpy_helper.from_array(np.array(3, np.int64), "n")])
sbody = helper.make_graph([call("Inc", ["xe"], ["xi"], "inc"), node("Add", ["s_in", "xi"], ["s_out"], "acc")], "step",
                          [vi("s_in", F, [2]), vi("xe", F, [2])], [vi("s_out", F, [2])])
save("fn_scan", [node("Scan", ["s0", "x"], ["s"], "scan", body=sbody, num_scan_inputs=1)], [vi("s0", F, [2]), vi("x", F, [3, 2])],
     [vi("s")], [inc])
two = fn("Two", ["A"], ["B", "C"], [node("Relu", ["A"], ["B"], "r"), node("Neg", ["A"], ["C"], "n")])
save("fn_omitted_output", [call("Two", ["x"], ["y"], "c")], [vi("x", F, [2])], [vi("y")], [two])
fans = []
for k in range(4):
    if k == 3:
        fans.append(fn("G3", ["A"], ["B"], [node("Relu", ["A"], ["B"], "leaf")]))
        continue
    fans.append(fn("G%d" % k, ["A"], ["B"], [call("G%d" % (k + 1), ["A" if j == 0 else "t%d" % (j - 1)],
                                                  ["B" if j == 2 else "t%d" % j], "c%d" % j) for j in range(3)]))
save("fn_fanout", [call("G0", ["x"], ["y"], "top")], [vi("x", F, [2])], [vi("y")], fans)
then_g = helper.make_graph([call("Rec", ["X"], ["t"], "again")], "then", [], [vi("t")])
else_g = helper.make_graph([node("Identity", ["X"], ["t"], "stop")], "else", [], [vi("t")])
rec = fn("Rec", ["X"], ["Y"], [true("c"), node("If", ["c"], ["Y"], "rec_if", then_branch=then_g, else_branch=else_g)])
save("fn_recursive_if", [call("Rec", ["x"], ["y"], "top")], [vi("x", F, [2])], [vi("y")], [rec])
inner = helper.make_graph([node("Add", ["a", "b"], ["o"], "add3")], "l3", [], [vi("o")])
mid = helper.make_graph([node("Mul", ["a", "a"], ["b"], "mul2"), node("If", ["c"], ["o"], "if3", then_branch=inner,
                                                                         else_branch=branch("Neg", "b"))], "l2", [], [vi("o")])
top = helper.make_graph([node("If", ["c"], ["o"], "if2", then_branch=mid, else_branch=branch("Abs", "a"))], "l1", [], [vi("o")])
save("if_nested_outer", [node("Relu", ["x"], ["a"], "relu"), node("ReduceSum", ["a"], ["s"], "sum", keepdims=0),
                         node("Greater", ["s", "z"], ["c"], "gt"),
                         node("If", ["c"], ["y"], "if1", then_branch=top, else_branch=branch("Neg", "a"))],
     [vi("x", F, [3])], [vi("y")], inits=[numpy_helper.from_array(np.array(1, np.float32), "z")])
