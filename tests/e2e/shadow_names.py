#!/usr/bin/python3
"""A name that a nested subgraph defines again shadows the outer one (ONNX scoping), also after
inlining (docs/control-flow.md).

    shadow_names.py BUILD WORK

Three graphs deep, each defining a value `t`: the main graph (t = x + 1), the then-branch M of a
run-time If (t, an initializer of 7s), and a subgraph M2 nested in M, whose own If's branches D
read `t`: they mean M2's t. Inlining M into the main graph renames M's t (the name is taken) and
tells the subgraphs nested in M; it must stop at M2, which has a `t` of its own. (It went on
into D, so D read M's 7s, exit 0.) M2 defines its t three ways:

  node   t = x - 3, a node's output (M2: the then-branch of an If in M; onnx's checker wants
         node outputs unique across scopes, so this file is not checked: ftax loads it)
  init   t, an initializer of M2 (the same If)
  loop   t, a loop-carried input of M2 (M2: the body of a Loop in M, two iterations, from x;
         unrolling also binds the body's t to the last iteration's t2 while t2 takes a new
         name: the nested If must read the one, not the other)

Each model is compiled, and run by the program and by ftax-eager with the If conditions given at
run time; the outputs must equal numpy's reference for several choices of the conditions.
"""
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from tool_checks import Checks, vi

c = Checks(sys.argv[1], sys.argv[2])
F, B, I64 = T.FLOAT, T.BOOL, T.INT64
S = [2, 3]
x = np.arange(6, dtype=np.float32).reshape(S) - 2
M_INIT, M2_INIT = np.full(S, 7.0, np.float32), np.full(S, 5.0, np.float32)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def graph(name, nodes, outs, inits=(), ins=()):
    return helper.make_graph(nodes, name, list(ins), [vi(o, F, S) for o in outs], list(inits))


def if_node(cond, out, then_g, else_g, name):
    return helper.make_node("If", [cond], [out], name=name, then_branch=then_g, else_branch=else_g)


def innermost():
    """D: an If on c3 whose branches read `t`: 10 t, or -t."""
    then_g = graph("d_then", [helper.make_node("Mul", ["t", "ten"], ["d"])], ["d"], [const("ten", np.float32(10))])
    else_g = graph("d_else", [helper.make_node("Neg", ["t"], ["d"])], ["d"], [])
    return then_g, else_g


def middle(kind):
    """The nodes of M that hold M2 (which defines t, then runs D), writing m."""
    d_then, d_else = innermost()
    if kind == "loop":
        body = helper.make_graph(
            [if_node("c3", "t2", d_then, d_else, "if3"), helper.make_node("Identity", ["cin"], ["cout"])],
            "m2_body", [vi("i", I64, []), vi("cin", B, []), vi("t", F, S)], [vi("cout", B, []), vi("t2", F, S)])
        return [helper.make_node("Loop", ["two", "", "x"], ["m"], name="loop2", body=body)], [const("two", np.int64(2))]
    if kind == "node":
        m2 = graph("m2", [helper.make_node("Sub", ["x", "three"], ["t"]), if_node("c3", "r", d_then, d_else, "if3")],
                   ["r"], [const("three", np.float32(3))])
    else:
        m2 = graph("m2", [if_node("c3", "r", d_then, d_else, "if3")], ["r"], [const("t", M2_INIT)])
    m2_else = graph("m2_else", [helper.make_node("Identity", ["t"], ["r"])], ["r"])  # M's t
    return [if_node("c2", "m", m2, m2_else, "if2")], []


def build(kind):
    nodes, inits = middle(kind)
    m = graph("m", nodes, ["m"], [const("t", M_INIT)] + inits)
    m_else = graph("m_else", [helper.make_node("Identity", ["t"], ["m"])], ["m"])  # the main graph's t
    main = [helper.make_node("Add", ["x", "one"], ["t"]), if_node("c1", "y", m, m_else, "if1"),
            helper.make_node("Identity", ["t"], ["t_out"])]
    ins = [vi("x", F, S), vi("c1", B, []), vi("c2", B, []), vi("c3", B, [])]
    return c.model("shadow_" + kind, main, ins, [vi("y", F, S), vi("t_out", F, S)], [const("one", np.float32(1))],
                   check=kind != "node")


def reference(kind, c1, c2, c3):
    t0 = x + 1
    if not c1:
        return t0
    t1 = M_INIT
    d = (lambda t: t * 10) if c3 else (lambda t: -t)
    if kind == "loop":
        return d(d(x))
    if not c2:
        return t1
    return d(x - 3 if kind == "node" else M2_INIT)


xin = c.pb("x", x)
for kind in ("node", "init", "loop"):
    path = build(kind)
    sets = []
    for conds in ((1, 1, 1), (1, 1, 0), (1, 0, 1), (0, 1, 1)):
        files = [c.pb("c%d_%d" % (k + 1, v), np.array(bool(v)), "c%d" % (k + 1)) for k, v in enumerate(conds)]
        sets.append(([xin] + files, [reference(kind, *conds).astype(np.float32), x + 1]))
    c.both_sets("shadow_" + kind, path, sets, 2)
sys.exit(c.finish("shadow_names"))
