#!/usr/bin/env python3
"""Writes the malformed and hostile model cases of the `malformed` test (tests/malformed).

    python3 gen_malformed.py OUTDIR

OUTDIR/cases/<name>/ gets each case's files (a model, raw bytes, input .pb files, symlinks) and
OUTDIR/cases.json the manifest: one object per case with
    name      unique, also the folder under cases/
    cls       the class (see CLASSES below)
    tool      ftaxc | eager | program | cuda   (cuda: ftaxc --target cuda --emit-only)
    model     the model's path relative to cases/<name>/ (ftaxc, eager, cuda)
    args      extra arguments; {case} is the case's folder, {prog} the program built from
              the program base model (tool program)
    expect    the accepted exit codes (more than one only where each is defensible; the
              note says why)
    has       substrings stderr must contain (the node, value or file at fault)
    lacks     substrings stderr must not contain
    eager     also run the model through ftax-eager (same --dim flags, synthetic inputs):
              it must exit with one of the same codes
    generated on exit 0, compile and scan every generated file: no injected code may be live
    note      why, for a person reading a failure

Exit-code policy these cases hold the tools to (compiler/ir.h, README "Exit codes"):
    ftaxc, ftax-eager:  0 ok; 1 usage (bad command line); 2 invalid or malformed model or input
                        file; 3 valid model that uses something ftax does not support
                        (unsupported op types, all listed at once; an opset or IR version newer
                        than ftax knows; a tensor larger than ftax's size limit); 4 I/O failure
                        (cannot read or write a file, a directory where a file was expected, the
                        C compiler failed).
    generated programs: 0 ok, 1 usage, 2 wrong input file, 4 I/O.
A crash, a signal or a hang is never an accepted outcome.

The models are invalid on purpose: they are built with onnx.helper and never given to
onnx.checker (only the sweep's valid base models are checked, to keep the sweep honest).
"""
import json
import os
import shutil
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

F, I64, B = T.FLOAT, T.INT64, T.BOOL

# class -> what it holds and the codes it expects (written into the manifest as well)
CLASSES = {
    "inject": "names that try to break out of C comments / string literals (*/, newline, quote, "
              "backslash, trigraphs, control bytes, terminal escapes) in every place a name goes. "
              "Expect 0 with generated code that compiles and runs --help without running the "
              "injected code, or a clean refusal 2.",
    "cuda_inject": "the same names with --target cuda --emit-only: 0 with no injected code live in "
                   "OUT.cu / OUT.h, or 2.",
    "arity": "a sweep over common ops: a valid minimal model (0), then the node with no outputs, no "
             "inputs, a required input dropped or given as '', one input too many: each 2 naming "
             "the node.",
    "size": "sizes that overflow or exceed any sane limit: 2 (invalid, e.g. data does not match "
            "dims) or 3 (valid but larger than ftax's limit); never 0, never a crash.",
    "invalid": "invalid models (duplicate names, missing or mistyped attributes, wrong declared "
               "types, constant indices out of range, bad opsets, cycles...): 2. An opset or IR "
               "version newer than ftax knows: 3 (or 2).",
    "exitclass": "each case has one right class: 1 usage, 2 invalid model or input file, 4 I/O; "
                 "for generated programs 2 for a wrong input file, 4 for I/O.",
    "message": "names, op types and paths with control bytes and escapes: stderr holds no byte "
               "below 0x20 but newline and tab, and no 0x7f; format directives print literally.",
    "extdata": "external data reached through a symlink, a symlinked folder, '..' or an absolute "
               "path: 2; out-of-range offsets and lengths: 2.",
    "file": "model files that are not models: empty, garbage, truncated, deeply nested, huge "
            "length prefixes: 2; a directory or a missing file: 4.",
}


class Gen:
    def __init__(self, root):
        self.root = root
        self.cases = []
        self.names = set()

    def case_dir(self, name):
        d = os.path.join(self.root, "cases", name)
        os.makedirs(d, exist_ok=True)
        return d

    def add(self, name, cls, model=None, raw=None, *, tool="ftaxc", args=(), expect=(2,), has=(),
            lacks=(), eager=None, generated=False, note="", filename="model.onnx"):
        assert name not in self.names, name
        assert cls in CLASSES, cls
        self.names.add(name)
        d = self.case_dir(name)
        if model is not None:
            raw = model.SerializeToString()
        if raw is not None:
            p = os.path.join(d, filename)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(raw)
        if eager is None:
            eager = tool == "ftaxc"
        self.cases.append(dict(name=name, cls=cls, tool=tool, model=filename if tool != "program" else None,
                               args=list(args), expect=list(expect), has=list(has), lacks=list(lacks),
                               eager=bool(eager), generated=bool(generated), note=note))
        return d


# ---- building blocks ----------------------------------------------------------------------

def vi(name, et=F, shape=None):
    return helper.make_tensor_value_info(name, et, shape)


def init(name, arr, dtype=None):
    a = np.asarray(arr, dtype=dtype)
    return numpy_helper.from_array(a, name)


def node(op, ins, outs, name, **attrs):
    return helper.make_node(op, list(ins), list(outs), name=name, **attrs)


def mk(nodes, inputs, outputs, inits=(), opset=13, name="g", ir=8, opsets=None):
    g = helper.make_graph(list(nodes), name, list(inputs), list(outputs), initializer=list(inits))
    m = helper.make_model(g, opset_imports=opsets if opsets is not None else [helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def tensor_pb(name, dtype, dims, raw=b""):
    t = T()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    if raw:
        t.raw_data = raw
    return t.SerializeToString()


# ---- code injection -----------------------------------------------------------------------

DECL = "int system(const char *); __attribute__((constructor)) static void pwn_{id}(void) {{ system(\"touch pwned_{id}\"); }}"

PAYLOADS = {
    # leave a /* */ comment
    "cmt": "v */ " + DECL + " /*",
    # leave a // comment or a string literal with a raw newline
    "nl": "v\n" + DECL + "\n//",
    "crlf": "v\r\n#error pwn_{id}\r\n",
    "hash": "v\n#error pwn_{id}\n",
    # leave a string literal
    "quote": "v\"; " + DECL + " static const char *pwn_q_{id}[] = {{\"",
    "squote": "v'; int pwn_{id}; static char pwn_c_{id} = '",
    "bs_end": "v\\",
    "bs_quote": "v\\\"; int pwn_{id}; static const char *pwn_q_{id} = \"",
    # trigraphs: ??/ is a backslash under -trigraphs / strict ISO C
    "tri_quote": "v??/\"; int pwn_{id}; static const char *pwn_q_{id} = \"",
    "tri_nl": "v??/\nint pwn_{id};\n",
    "tri_all": "v??=??(??)??'??<??!??>??-??/",
    # bytes a terminal or a C lexer may treat specially
    "esc": "v\x1b[31mred\x1b[0m\x1b]0;pwned\x07",
    "ctrl": "v" + "".join(chr(c) for c in range(1, 32)) + "\x7f",
    "star": "*/",
    "open": "/*",
    "cpp": "v // tail",
    "pct": "v%s%n%x%%",
    "unicode": "v\u202e\u2028\u2029\u00e9\u0085",
    "long": "v" + "*/x" * 20000,
}
# payloads that carry code: the identifier pwn_<id> must never be live code
CODE_PAYLOADS = ["cmt", "nl", "crlf", "hash", "quote", "squote", "bs_quote", "tri_quote", "tri_nl"]


def inject_model(pos, s):
    """x [2,3] -> Relu (node r) -> t -> Add(t, w) (node a) -> y, with s put at position pos."""
    n = dict(x="x", t="t", w="w", y="y", r="r", a="a", g="g")
    n[{"input": "x", "output": "y", "value": "t", "init": "w", "node": "a", "graph": "g",
       "node0": "r"}[pos]] = s
    m = mk([node("Relu", [n["x"]], [n["t"]], n["r"]), node("Add", [n["t"], n["w"]], [n["y"]], n["a"])],
           [vi(n["x"], F, [2, 3])], [vi(n["y"], F, [2, 3])], [init(n["w"], np.ones((2, 3), np.float32))],
           name=n["g"])
    return m


def gen_inject(g):
    positions = ["input", "output", "value", "init", "node", "node0", "graph"]
    for pk, ptxt in PAYLOADS.items():
        for pos in positions:
            cid = "%s_%s" % (pk, pos)
            s = ptxt.format(id=cid)
            g.add("inject_" + cid, "inject", inject_model(pos, s), expect=(0, 2), generated=True,
                  note="payload %r as the %s name: 0 with nothing injected, or a clean 2" % (pk, pos))
    # doc strings and producer fields also travel into comments
    for pk in ["cmt", "nl", "hash"]:
        cid = "%s_doc" % pk
        s = PAYLOADS[pk].format(id=cid)
        m = inject_model("node", "a")
        m.doc_string = s
        m.producer_name = s
        m.producer_version = s
        m.graph.doc_string = s
        m.graph.node[0].doc_string = s
        g.add("inject_" + cid, "inject", m, expect=(0, 2), generated=True,
              note="payload in doc_string / producer fields")
    # a symbolic dimension named by the payload, pinned with --dim
    for pk in ["cmt", "nl", "quote", "esc"]:
        cid = "%s_dimparam" % pk
        s = PAYLOADS[pk].format(id=cid).replace("=", "_")
        m = mk([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [s, 3])], [vi("y", F, [s, 3])])
        g.add("inject_" + cid, "inject", m, args=["--dim", s + "=2"], expect=(0, 2), generated=True,
              note="payload as a dim_param, pinned with --dim")
    # paths: the command line is recorded in the header comment; a path may hold '*/' through
    # its folders (a*/ ... /*/model.onnx) and newlines in its names
    for pk in ["cmt", "nl", "hash"]:
        cid = "%s_path" % pk
        g.add("inject_" + cid, "inject", inject_model("node", "a"), filename="a" + PAYLOADS[pk].format(id=cid) + "/model.onnx",
              expect=(0, 2), generated=True, note="payload in the model's path (recorded in the header comment)")
    for pk in ["cmt", "nl"]:
        cid = "%s_outpath" % pk
        s = PAYLOADS[pk].format(id=cid)
        g.add("inject_" + cid, "inject", inject_model("node", "a"), args=["--out-sub", "o" + s + "/prog"],
              expect=(0, 2), generated=True, note="payload in the -o path (recorded in the header comment)")
    # --name must be an identifier: 1 (usage) or a sanitized name (0)
    for pk in ["cmt", "quote"]:
        cid = "%s_name" % pk
        s = PAYLOADS[pk].format(id=cid)
        g.add("inject_" + cid, "inject", inject_model("node", "a"), args=["--name", s], expect=(0, 1),
              generated=True, eager=False, note="--name is not an identifier: usage error 1, or sanitized 0")
    # CUDA: the same names through emit_cuda
    for pk in CODE_PAYLOADS + ["ctrl", "tri_all", "star"]:
        for pos in ["input", "output", "node", "init", "value"]:
            cid = "cu_%s_%s" % (pk, pos)
            s = PAYLOADS[pk].format(id=cid)
            g.add("cuda_inject_" + cid, "cuda_inject", inject_model(pos, s), tool="cuda", expect=(0, 2),
                  generated=True, eager=False, note="payload %r as the %s name, --target cuda --emit-only" % (pk, pos))


# ---- arity sweep ---------------------------------------------------------------------------

def rnd(*shape):
    return (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 7 - 3) / 4


# op -> (inputs, attrs, output types, min_in, max_in or None for variadic)
# inputs: (name, kind, value) with kind "in" (graph input: value = (dtype, shape)) or "init"
#         (initializer: value = array); name "" is an omitted optional input
def i_(name, shape, dt=F):
    return (name, "in", (dt, shape))


def c_(name, arr, dt=None):
    return (name, "init", np.asarray(arr, dtype=dt))


X23 = i_("x", [2, 3])
X23b = i_("x2", [2, 3])
SWEEP = {
    "Relu": ([X23], {}, [F], 1, 1),
    "Erf": ([X23], {}, [F], 1, 1),
    "Sqrt": ([X23], {}, [F], 1, 1),
    "Tanh": ([X23], {}, [F], 1, 1),
    "Sigmoid": ([X23], {}, [F], 1, 1),
    "Abs": ([X23], {}, [F], 1, 1),
    "Exp": ([X23], {}, [F], 1, 1),
    "Neg": ([X23], {}, [F], 1, 1),
    "Floor": ([X23], {}, [F], 1, 1),
    "Identity": ([X23], {}, [F], 1, 1),
    "Softmax": ([X23], {"axis": -1}, [F], 1, 1),
    "Add": ([X23, X23b], {}, [F], 2, 2),
    "Sub": ([X23, X23b], {}, [F], 2, 2),
    "Mul": ([X23, X23b], {}, [F], 2, 2),
    "Div": ([X23, X23b], {}, [F], 2, 2),
    "Pow": ([X23, X23b], {}, [F], 2, 2),
    "Equal": ([X23, X23b], {}, [B], 2, 2),
    "Max": ([X23, X23b], {}, [F], 1, None),
    "Sum": ([X23, X23b], {}, [F], 1, None),
    "Not": ([i_("x", [2, 3], B)], {}, [B], 1, 1),
    "MatMul": ([i_("a", [2, 3]), i_("b", [3, 4])], {}, [F], 2, 2),
    "Gemm": ([i_("a", [2, 3]), c_("b", rnd(3, 4)), c_("c", rnd(4))], {}, [F], 2, 3),
    "Conv": ([i_("x", [1, 2, 5, 5]), c_("w", rnd(3, 2, 3, 3)), c_("b", rnd(3))], {}, [F], 2, 3),
    "Reshape": ([X23, c_("shape", [3, 2], np.int64)], {}, [F], 2, 2),
    "Transpose": ([X23], {"perm": [1, 0]}, [F], 1, 1),
    "Concat": ([X23, X23b], {"axis": 0}, [F], 1, None),
    "Split": ([i_("x", [4, 3]), c_("split", [2, 2], np.int64)], {"axis": 0}, [F, F], 1, 2),
    "Slice": ([i_("x", [4, 3]), c_("starts", [1], np.int64), c_("ends", [3], np.int64),
               c_("axes", [0], np.int64), c_("steps", [1], np.int64)], {}, [F], 3, 5),
    "Gather": ([i_("x", [4, 3]), c_("idx", [0, 2], np.int64)], {"axis": 0}, [F], 2, 2),
    "GatherElements": ([X23, c_("idx", [[0, 1, 0], [1, 0, 1]], np.int64)], {"axis": 0}, [F], 2, 2),
    "GatherND": ([i_("x", [2, 2]), c_("idx", [[0, 1]], np.int64)], {}, [F], 2, 2),
    "ScatterND": ([i_("x", [4, 3]), c_("idx", [[1]], np.int64), i_("upd", [1, 3])], {}, [F], 3, 3),
    "ScatterElements": ([X23, c_("idx", [[1, 0, 1]], np.int64), i_("upd", [1, 3])], {"axis": 0}, [F], 3, 3),
    "LayerNormalization": ([X23, c_("scale", rnd(3)), c_("bias", rnd(3))], {"axis": -1}, [F], 2, 3),
    "BatchNormalization": ([i_("x", [1, 2, 3, 3]), c_("s", [1, 2], np.float32), c_("bias", [0, 1], np.float32),
                            c_("mean", [0, 0.5], np.float32), c_("var", [1, 2], np.float32)], {}, [F], 5, 5),
    "InstanceNormalization": ([i_("x", [1, 2, 3, 3]), c_("s", [1, 2], np.float32),
                               c_("bias", [0, 1], np.float32)], {}, [F], 3, 3),
    "Cast": ([X23], {"to": I64}, [I64], 1, 1),
    "Shape": ([X23], {}, [I64], 1, 1),
    "Unsqueeze": ([X23, c_("axes", [0], np.int64)], {}, [F], 2, 2),
    "Squeeze": ([i_("x", [1, 3]), c_("axes", [0], np.int64)], {}, [F], 1, 2),
    "ReduceMean": ([X23], {"axes": [1], "keepdims": 0}, [F], 1, 1),
    "ReduceMax": ([X23], {"axes": [1], "keepdims": 0}, [F], 1, 1),
    "ReduceSum": ([X23, c_("axes", [1], np.int64)], {"keepdims": 0}, [F], 1, 2),
    "ArgMax": ([X23], {"axis": 1}, [I64], 1, 1),
    "Where": ([i_("cond", [2, 3], B), X23, X23b], {}, [F], 3, 3),
    "Expand": ([i_("x", [1, 3]), c_("shape", [2, 3], np.int64)], {}, [F], 2, 2),
    "Range": ([c_("start", 0.0, np.float32), c_("limit", 5.0, np.float32), c_("delta", 1.0, np.float32)],
              {}, [F], 3, 3),
    "Pad": ([X23, c_("pads", [0, 1, 0, 1], np.int64), c_("cval", 0.0, np.float32)], {}, [F], 2, 3),
    "Resize": ([i_("x", [1, 1, 2, 2]), ("", None, None), c_("scales", [1, 1, 2, 2], np.float32)],
               {"mode": "nearest"}, [F], 1, 4),
    "Clip": ([X23, c_("lo", -1.0, np.float32), c_("hi", 1.0, np.float32)], {}, [F], 1, 3),
    "MaxPool": ([i_("x", [1, 1, 4, 4])], {"kernel_shape": [2, 2]}, [F], 1, 1),
    "AveragePool": ([i_("x", [1, 1, 4, 4])], {"kernel_shape": [2, 2]}, [F], 1, 1),
    "GlobalAveragePool": ([i_("x", [1, 2, 3, 3])], {}, [F], 1, 1),
    "Flatten": ([X23], {"axis": 1}, [F], 1, 1),
    "Tile": ([X23, c_("rep", [2, 1], np.int64)], {}, [F], 2, 2),
    "LSTM": ([i_("x", [2, 1, 3]), c_("w", rnd(1, 16, 3)), c_("r", rnd(1, 16, 4))], {"hidden_size": 4}, [F], 3, 8),
    "TopK": ([X23, c_("k", [2], np.int64)], {}, [F, I64], 2, 2),
    "Einsum": ([i_("a", [2, 3]), i_("b", [3, 4])], {"equation": "ij,jk->ik"}, [F], 1, None),
    "ConstantOfShape": ([c_("shape", [2, 3], np.int64)], {"value": numpy_helper.from_array(np.array([1.0], np.float32))},
                        [F], 1, 1),
    "CumSum": ([X23, c_("axis", 0, np.int64)], {}, [F], 2, 2),
    "Trilu": ([i_("x", [3, 3]), c_("k", 0, np.int64)], {}, [F], 1, 2),
    "DepthToSpace": ([i_("x", [1, 4, 2, 2])], {"blocksize": 2}, [F], 1, 1),
    "Dropout": ([X23], {}, [F], 1, 3),
}


def sweep_model(op, nm, ins, attrs, otypes, variant):
    graph_in, inits, names = [], [], []
    for (n, kind, val) in ins:
        names.append(n)
        if kind == "in":
            graph_in.append(vi(n, val[0], val[1]))
        elif kind == "init":
            inits.append(init(n, val))
    outs = ["y%d" % k for k in range(len(otypes))]
    extra_nodes, graph_out = [], [vi(o, t, None) for o, t in zip(outs, otypes)]
    if variant == "noout":
        outs = []
        first = next(v for v in graph_in) if graph_in else None
        if first is not None:
            extra_nodes.append(node("Identity", [first.name], ["keep"], "keep_id"))
            graph_out = [vi("keep", first.type.tensor_type.elem_type, None)]
        else:
            inits.append(init("kept", np.ones(2, np.float32)))
            graph_out = [vi("kept", F, [2])]
    return graph_in, inits, names, outs, extra_nodes, graph_out


def gen_sweep(g):
    for op, (ins, attrs, otypes, min_in, max_in) in SWEEP.items():
        variants = [("valid", None), ("noout", None), ("noin", None)]
        if min_in > 1:
            variants += [("drop%d" % k, k) for k in range(min_in)]
        variants += [("empty%d" % k, k) for k in range(min_in)]
        if max_in is not None:
            variants.append(("extra", None))
        for variant, k in variants:
            nm = "node_%s_%s" % (op, variant)
            graph_in, inits, names, outs, extra_nodes, graph_out = sweep_model(op, nm, ins, attrs, otypes, variant)
            if variant in ("valid", "noout"):
                nin = list(names)
            elif variant == "noin":
                nin = []
            elif variant.startswith("drop"):
                nin = names[:min_in]
                del nin[k]
            elif variant.startswith("empty"):
                nin = names[:min_in]
                nin[k] = ""
            else:  # extra
                nin = names + [""] * (max_in - len(names)) + ["extra"]
                graph_in.append(vi("extra", F, [2, 3]))
            m = mk([node(op, nin, outs, nm, **attrs)] + extra_nodes, graph_in, graph_out, inits, opset=17)
            if variant == "valid":
                # the base must be valid: onnx's own shape inference fills in the output types,
                # then the checker (strict) has to accept it
                m = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
                onnx.checker.check_model(m, full_check=True)
                g.add("arity_%s_valid" % op, "arity", m, expect=(0,), note="the sweep's valid base model")
            else:
                g.add("arity_%s_%s" % (op, variant), "arity", m, has=[nm],
                      note="%s: %s; invalid arity, the message names the node" % (op, variant))


# ---- sizes ---------------------------------------------------------------------------------

def gen_sizes(g):
    big = 1 << 62

    def one(name, nodes, ins, outs, inits, note, opset=13, expect=(2, 3), has=()):
        g.add("size_" + name, "size", mk(nodes, ins, outs, inits, opset=opset), expect=expect, has=has, note=note)

    for nm, (s, l, d, dt) in {
        "range_2e62": (0, big, 1, np.int64),
        "range_minmax": (-(1 << 63), (1 << 63) - 1, 1, np.int64),
        "range_float_1e30": (0.0, 1e30, 1.0, np.float32),
        "range_float_inf": (0.0, np.inf, 1.0, np.float32),
        "range_float_nan": (0.0, np.nan, 1.0, np.float32),
        "range_delta0": (0, 10, 0, np.int64),
        "range_float_delta0": (0.0, 10.0, 0.0, np.float32),
    }.items():
        et = I64 if dt == np.int64 else F
        one(nm, [node("Range", ["s", "l", "d"], ["y"], "range_node")], [], [vi("y", et, None)],
            [init("s", np.array(s, dt)), init("l", np.array(l, dt)), init("d", np.array(d, dt))],
            "Range(%r, %r, %r) with constant inputs" % (s, l, d), has=["range_node"])
    for nm, shape in {"reshape_2e61": [(1 << 61) + 1, 8], "reshape_overflow": [1 << 40, 1 << 40, 1 << 40],
                      "reshape_two_minus1": [-1, -1], "reshape_minus5": [-5, 3], "reshape_int64min": [-(1 << 63), 1]}.items():
        one(nm, [node("Reshape", ["x", "shape"], ["y"], "reshape_node")], [vi("x", F, [2, 3])], [vi("y", F, None)],
            [init("shape", np.array(shape, np.int64))], "Reshape [2,3] to %r" % shape, has=["reshape_node"])
    for nm, shape in {"expand_2e62": [1 << 31, 1 << 31], "expand_overflow": [1 << 32, 1 << 32, 1 << 32],
                      "expand_negative": [-4, 3]}.items():
        one(nm, [node("Expand", ["x", "shape"], ["y"], "expand_node")], [vi("x", F, [1, 1])], [vi("y", F, None)],
            [init("shape", np.array(shape, np.int64))], "Expand [1,1] to %r" % shape, has=["expand_node"])
    for nm, pads in {"pad_2e40": [0, 1 << 40, 0, 1 << 40], "pad_overflow": [0, (1 << 63) - 1, 0, (1 << 63) - 1],
                     "pad_negative_beyond": [0, -10, 0, 0]}.items():
        one(nm, [node("Pad", ["x", "pads"], ["y"], "pad_node")], [vi("x", F, [2, 3])], [vi("y", F, None)],
            [init("pads", np.array(pads, np.int64))], "Pad [2,3] with pads %r" % pads, has=["pad_node"])
    for nm, sc in {"resize_1e9": [1, 1, 1e9, 1e9], "resize_inf": [1, 1, np.inf, 1], "resize_nan": [1, 1, np.nan, 1],
                   "resize_negative": [1, 1, -2, 2], "resize_zero": [1, 1, 0, 0]}.items():
        one(nm, [node("Resize", ["x", "", "scales"], ["y"], "resize_node", mode="nearest")], [vi("x", F, [1, 1, 2, 2])],
            [vi("y", F, None)], [init("scales", np.array(sc, np.float32))], "Resize with scales %r" % sc,
            has=["resize_node"])
    for nm, shape in {"cos_2e62": [1 << 31, 1 << 31, 4], "cos_overflow": [1 << 40, 1 << 40],
                      "cos_negative": [-1, 3]}.items():
        one(nm, [node("ConstantOfShape", ["shape"], ["y"], "cos_node")], [], [vi("y", F, None)],
            [init("shape", np.array(shape, np.int64))], "ConstantOfShape %r" % shape, has=["cos_node"])
    for nm, rep in {"tile_2e40": [1 << 40, 1 << 40], "tile_negative": [-1, 1]}.items():
        one(nm, [node("Tile", ["x", "rep"], ["y"], "tile_node")], [vi("x", F, [2, 3])], [vi("y", F, None)],
            [init("rep", np.array(rep, np.int64))], "Tile [2,3] by %r" % rep, has=["tile_node"])
    # initializers whose dims are huge and whose data is missing or short
    for nm, (dims, raw) in {"init_2e31sq_nodata": ([1 << 31, 1 << 31, 2, 4], b""),
                            "init_overflow_nodata": ([1 << 40, 1 << 40, 1 << 40], b""),
                            "init_2e31sq_4bytes": ([1 << 31, 1 << 31, 2, 4], b"\0\0\0\0"),
                            "init_negative_dim": ([-1, 3], b"\0" * 12),
                            "init_int64min_dim": ([-(1 << 63), 1], b""),
                            "init_zero_times_huge": ([0, 1 << 62, 1 << 62], b"")}.items():
        t = T()
        t.name = "w"
        t.data_type = F
        t.dims.extend(dims)
        if raw:
            t.raw_data = raw
        expect = (2,) if nm in ("init_negative_dim", "init_int64min_dim") else (2, 3)
        g.add("size_" + nm, "size",
              mk([node("Add", ["x", "w"], ["y"], "add_node")], [vi("x", F, [2, 3])], [vi("y", F, None)], [t]),
              expect=expect, has=["w"], note="initializer dims %r with %d bytes of data" % (dims, len(raw)))
    # graph inputs that are too large, or whose pinned dim is
    g.add("size_input_2e40sq", "size", mk([node("Relu", ["x"], ["y"], "r")], [vi("x", F, [1 << 40, 1 << 40])],
                                          [vi("y", F, None)]), expect=(2, 3), has=["x"],
          note="an input of 2^80 elements")
    g.add("size_dim_pin_2e62", "size", mk([node("Relu", ["x"], ["y"], "r")], [vi("x", F, ["n", 4])], [vi("y", F, None)]),
          args=["--dim", "n=%d" % (1 << 62)], expect=(2, 3), note="--dim n=2^62: an input of 2^64 elements")
    g.add("size_dim_pin_overflow", "size", mk([node("Relu", ["x"], ["y"], "r")], [vi("x", F, ["n", 4])],
                                              [vi("y", F, None)]),
          args=["--dim", "n=99999999999999999999999"], expect=(1,), note="--dim value does not fit int64: usage")
    g.add("size_dim_pin_negative", "size", mk([node("Relu", ["x"], ["y"], "r")], [vi("x", F, ["n", 4])],
                                              [vi("y", F, None)]),
          args=["--dim", "n=-3"], expect=(1,), note="--dim with a negative value: usage")
    # pools and convolutions with zero strides or kernels larger than the input
    for nm, attrs in {"maxpool_stride0": dict(kernel_shape=[2, 2], strides=[0, 0]),
                      "maxpool_kernel0": dict(kernel_shape=[0, 0]),
                      "maxpool_kernel_huge": dict(kernel_shape=[1 << 40, 1 << 40]),
                      "maxpool_pads_huge": dict(kernel_shape=[2, 2], pads=[1 << 40, 0, 1 << 40, 0]),
                      "maxpool_dilation0": dict(kernel_shape=[2, 2], dilations=[0, 0])}.items():
        one(nm, [node("MaxPool", ["x"], ["y"], "pool_node", **attrs)], [vi("x", F, [1, 1, 4, 4])], [vi("y", F, None)],
            [], "MaxPool %r" % attrs, has=["pool_node"])
    for nm, attrs in {"conv_stride0": dict(strides=[0, 0]), "conv_pads_huge": dict(pads=[1 << 40] * 4),
                      "conv_dilation_huge": dict(dilations=[1 << 40, 1 << 40]), "conv_group0": dict(group=0),
                      "conv_group3": dict(group=3)}.items():
        one(nm, [node("Conv", ["x", "w"], ["y"], "conv_node", **attrs)], [vi("x", F, [1, 2, 5, 5])],
            [vi("y", F, None)], [init("w", rnd(3, 2, 3, 3))], "Conv %r" % attrs, has=["conv_node"])
    one("slice_step0", [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], "slice_node")], [vi("x", F, [4, 3])],
        [vi("y", F, None)], [init("st", np.array([0], np.int64)), init("en", np.array([4], np.int64)),
                             init("ax", np.array([0], np.int64)), init("sp", np.array([0], np.int64))],
        "Slice with step 0", has=["slice_node"])


# ---- invalid models that must be refused ---------------------------------------------------

def base_relu(nodes=None, ins=None, outs=None, inits=(), **kw):
    return mk(nodes or [node("Relu", ["x"], ["y"], "relu_node")], ins or [vi("x", F, [2, 3])],
              outs or [vi("y", F, None)], inits, **kw)


def gen_invalid(g):
    def add(name, m, has=(), expect=(2,), note="", **kw):
        g.add("invalid_" + name, "invalid", m, has=has, expect=expect, note=note, **kw)

    add("relu_two_inputs", base_relu([node("Relu", ["x", "x"], ["y"], "relu2")]), has=["relu2"],
        note="Relu takes one input")
    add("relu_two_outputs", base_relu([node("Relu", ["x"], ["y", "z"], "relu2o")]), has=["relu2o"],
        note="Relu has one output")
    add("relu_unknown_attr", base_relu([node("Relu", ["x"], ["y"], "relu_attr", frobnicate=3)]), has=["relu_attr"],
        note="an attribute Relu does not have")
    # Split
    for nm, (n_out, split) in {"split_4_into_5": (5, None), "split_sum_short": (2, [1, 1]),
                               "split_sum_long": (2, [3, 3]), "split_negative": (2, [-1, 5]),
                               "split_count_mismatch": (3, [2, 2]), "split_zero_outputs": (0, None)}.items():
        ins = ["x"] if split is None else ["x", "split"]
        inits = [] if split is None else [init("split", np.array(split, np.int64))]
        outs = ["y%d" % k for k in range(n_out)]
        add(nm, mk([node("Split", ins, outs, "split_node", axis=0)], [vi("x", F, [4, 3])],
                   [vi(o, F, None) for o in outs] or [vi("x", F, None)], inits),
            has=["split_node"], note="Split of a dim of 4 into %d outputs, split=%r" % (n_out, split))
    add("split_opset11_attr_bad", mk([node("Split", ["x"], ["a", "b"], "split_node", axis=0, split=[1, 1])],
                                     [vi("x", F, [4, 3])], [vi("a", F, None), vi("b", F, None)], opset=11),
        has=["split_node"], note="opset-11 Split attribute that does not sum to 4")
    # quantization parameters: a constant scale must be positive and finite; per-channel lengths must match
    for nm, sc in {"quant_scale_zero": 0.0, "quant_scale_negative": -0.5, "quant_scale_nan": float("nan")}.items():
        add(nm, mk([node("QuantizeLinear", ["x", "s", "z"], ["y"], "q_node")], [vi("x", F, [2, 3])],
                   [vi("y", T.UINT8, None)], [init("s", np.array(sc, np.float32)), init("z", np.array(0, np.uint8))]),
            has=["q_node", "scale"], note="QuantizeLinear with a constant scale of %r" % sc)
    add("dequant_scale_inf_per_channel",
        mk([node("DequantizeLinear", ["w", "s"], ["y"], "dq_node", axis=0)], [vi("w", T.INT8, [3, 2])],
           [vi("y", F, None)], [init("s", np.array([0.5, np.inf, 0.25], np.float32))]),
        has=["dq_node", "scale"], note="a per-channel scale with an infinite entry")
    wq = np.ones((4, 2, 1, 1), np.int8)
    add("qdq_conv_scale_length",
        mk([node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], "q_x"), node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"], "dq_x"),
            node("DequantizeLinear", ["wq", "ws"], ["wd"], "dq_w", axis=0), node("Conv", ["xd", "wd"], ["y"], "conv_node")],
           [vi("x", F, [1, 2, 4, 4])], [vi("y", F, None)],
           [init("sx", np.array(0.1, np.float32)), init("zx", np.array(128, np.uint8)), init("wq", wq),
            init("ws", np.array([0.1, 0.2, 0.3], np.float32))]),
        has=["dq_w", "3 values"], note="a Conv weight of 4 output channels with 3 per-channel scales")
    # graph structure
    add("output_unproduced", base_relu(outs=[vi("y", F, None), vi("ghost", F, [2, 3])]), has=["ghost"],
        note="a graph output no node produces, not an input or initializer")
    add("input_undefined", base_relu([node("Relu", ["nowhere"], ["y"], "relu_node")]), has=["nowhere"],
        note="a node input defined nowhere")
    add("dup_graph_input", base_relu(ins=[vi("x", F, [2, 3]), vi("x", F, [2, 3])]), has=["x"],
        note="two graph inputs named x")
    add("dup_graph_input_shapes", base_relu(ins=[vi("x", F, [2, 3]), vi("x", F, [5])]), has=["x"],
        note="two graph inputs named x with different shapes")
    add("dup_graph_output", base_relu(outs=[vi("y", F, None), vi("y", F, None)]), expect=(0, 2),
        note="the same graph output twice: onnx's checker accepts it and ftax writes the value to both outputs; "
             "0, or a clean 2")
    add("dup_initializer", mk([node("Add", ["x", "w"], ["y"], "add_node")], [vi("x", F, [2, 3])], [vi("y", F, None)],
                              [init("w", np.ones((2, 3), np.float32)), init("w", np.zeros((2, 3), np.float32))]),
        has=["w"], note="two initializers named w")
    add("two_writers", mk([node("Relu", ["x"], ["y"], "writer_a"), node("Neg", ["x"], ["y"], "writer_b")],
                          [vi("x", F, [2, 3])], [vi("y", F, None)]), has=["y"], note="two nodes write y")
    add("writes_graph_input", mk([node("Relu", ["x"], ["x"], "overwrite")], [vi("x", F, [2, 3])], [vi("x", F, None)]),
        has=["overwrite"], note="a node writes a graph input")
    add("writes_initializer", mk([node("Relu", ["x"], ["w"], "overwrite"), node("Add", ["x", "w"], ["y"], "add_node")],
                                 [vi("x", F, [2, 3])], [vi("y", F, None)], [init("w", np.ones((2, 3), np.float32))]),
        has=["w"], note="a node writes an initializer")
    add("cycle", mk([node("Relu", ["b"], ["a"], "cyc_a"), node("Neg", ["a"], ["b"], "cyc_b"),
                     node("Add", ["a", "x"], ["y"], "add_node")], [vi("x", F, [2, 3])], [vi("y", F, None)]),
        has=["cycle", "'cyc_a' (Relu)", "'cyc_b' (Neg)"], note="a -> b -> a: both named")
    add("self_loop", mk([node("Add", ["a", "x"], ["a"], "loop_node"), node("Relu", ["a"], ["y"], "relu_node")],
                        [vi("x", F, [2, 3])], [vi("y", F, None)]), has=["cycle", "loop_node"],
        note="a node reads its own output")
    # a cycle of 12 behind a sorted head, with a name that must come out escaped: the loader sorts
    # what it can and names the loop (the first 8 nodes of it)
    ring = [node("Neg", ["r%d" % ((k + 11) % 12)], ["r%d" % k], "ring_%d" % k if k else "ring\n0*/") for k in range(12)]
    add("long_cycle", mk([node("Relu", ["x"], ["h"], "head")] + ring + [node("Add", ["r5", "h"], ["y"], "add_node")],
                         [vi("x", F, [2, 3])], [vi("y", F, None)]),
        has=["cycle (12 nodes)", "ring_1", "more)", "ring\\x0a0*/"], note="a loop of 12 nodes, one with a newline in its name")
    # out of order but acyclic: sorted at load, as ONNX Runtime does
    add("unsorted_ok", mk([node("Neg", ["h"], ["y"], "second"), node("Relu", ["x"], ["h"], "first")],
                          [vi("x", F, [2, 3])], [vi("y", F, None)]), expect=(0,), note="two nodes listed consumer first")
    # If: branches are loaded, sorted and checked like the main graph; the branch taken replaces
    # the If when its condition is known at compile time
    def branch(nodes, outs, inits=()):
        return helper.make_graph(nodes, "b", [], [vi(o, F, None) for o in outs], list(inits))
    ok_b = branch([node("Neg", ["x"], ["nx"], "neg_b")], ["nx"])
    cond_true = [init("c", np.array(True))]
    add("if_branch_cycle", mk([node("If", ["c"], ["y"], "if_node", then_branch=branch(
        [node("Relu", ["q"], ["p"], "loop_p"), node("Neg", ["p"], ["q"], "loop_q"), node("Add", ["p", "x"], ["yb"], "out_b")],
        ["yb"]), else_branch=ok_b)], [vi("x", F, [2, 3])], [vi("y", F, None)], cond_true),
        has=["cycle", "'loop_p' (Relu)", "'loop_q' (Neg)"], note="a cycle inside a branch")
    add("if_branch_reads_undefined", mk([node("If", ["c"], ["y"], "if_node", then_branch=branch(
        [node("Add", ["x", "nowhere"], ["yb"], "add_b")], ["yb"]), else_branch=ok_b)],
        [vi("x", F, [2, 3])], [vi("y", F, None)], cond_true), has=["nowhere", "if_node"],
        note="a branch reads a name no enclosing graph defines")
    add("if_outputs_mismatch", mk([node("If", ["c"], ["y", "z"], "if_node", then_branch=ok_b, else_branch=ok_b)],
                                  [vi("x", F, [2, 3])], [vi("y", F, None), vi("z", F, None)], cond_true),
        has=["if_node", "then_branch"], note="If with 2 outputs, its branch has 1")
    add("if_cond_not_scalar", mk([node("If", ["c"], ["y"], "if_node", then_branch=ok_b, else_branch=ok_b)],
                                 [vi("x", F, [2, 3])], [vi("y", F, None)], [init("c", np.array([True, False]))]),
        has=["if_node", "2 elements"], note="a condition of two elements")
    add("if_no_branch_graph", mk([node("If", ["c"], ["y"], "if_node", then_branch=ok_b)],
                                 [vi("x", F, [2, 3])], [vi("y", F, None)], cond_true),
        has=["if_node", "else_branch"], note="If without its else_branch")
    # a condition computed from data: both branches are planned, their outputs must agree
    runtime_c = [node("ReduceSum", ["x"], ["sx"], "sum", keepdims=0), node("Greater", ["sx", "zero"], ["c"], "positive")]
    zero = [init("zero", np.array(0, np.float32))]
    add("if_runtime_condition", mk(runtime_c + [node("If", ["c"], ["y"], "if_node", then_branch=ok_b, else_branch=ok_b)],
                                   [vi("x", F, [2, 3])], [vi("y", F, None)], zero),
        expect=(0,), note="a condition computed from data: an if in the program")
    flat_b = branch([node("Flatten", ["x"], ["fx"], "flat_b", axis=0)], ["fx"])
    add("if_branch_shapes_differ", mk(runtime_c + [node("If", ["c"], ["y"], "if_node\n*/", then_branch=ok_b,
                                                        else_branch=flat_b)],
                                      [vi("x", F, [2, 3])], [vi("y", F, None)], zero),
        expect=(3,), has=["if_node\\x0a*/", "2x3", "1x6", "then_branch", "one shape"],
        note="run-time If whose branches give [2, 3] and [1, 6]: named, unsupported")
    # Loop: unrolled when its trip count is known and small; otherwise a loop of the program, as
    # long as its carried values keep their shapes and it has no scan output
    def body(nodes, ins, outs, inits=()):
        return helper.make_graph(nodes, "body", ins, outs, list(inits))
    step = body([node("Identity", ["ci"], ["co"], "keep"), node("Neg", ["v"], ["vo"], "neg_v")],
                [vi("i", I64, []), vi("ci", B, []), vi("v", F, [2, 3])], [vi("co", B, []), vi("vo", F, [2, 3])])
    step_scan = body([node("Identity", ["ci"], ["co"], "keep"), node("Neg", ["v"], ["vo"], "neg_v")],
                     [vi("i", I64, []), vi("ci", B, []), vi("v", F, [2, 3])],
                     [vi("co", B, []), vi("vo", F, [2, 3]), vi("v", F, [2, 3])])
    add("loop_runtime_trips", mk([node("Loop", ["n", "", "x"], ["y"], "loop_node", body=step)],
                                 [vi("x", F, [2, 3]), vi("n", I64, [])], [vi("y", F, None)]),
        expect=(0,), note="trip count from an input: a loop of the program")
    add("loop_runtime_trips_scan", mk([node("Loop", ["n", "", "x"], ["y", "ys"], "loop_node", body=step_scan)],
                                      [vi("x", F, [2, 3]), vi("n", I64, [])], [vi("y", F, None), vi("ys", F, None)]),
        expect=(3,), has=["loop_node", "trip count", "scan outputs", "--bind n="],
        note="trip count from an input and a scan output of that length: bind it")
    # while sum(v) > 0: v = -v (ends after one iteration at most; ftax-eager runs it too)
    flip = body([node("Neg", ["v"], ["vo"], "neg_v"), node("ReduceSum", ["vo"], ["sv"], "sum_v", keepdims=0),
                 node("Greater", ["sv", "zero"], ["co"], "positive_v")],
                [vi("i", I64, []), vi("ci", B, []), vi("v", F, [2, 3])], [vi("co", B, []), vi("vo", F, [2, 3])])
    add("loop_unbounded", mk(runtime_c + [node("Loop", ["", "c", "x"], ["y"], "loop_node", body=flip)],
                             [vi("x", F, [2, 3])], [vi("y", F, None)], zero),
        expect=(0,), note="no trip count, a run-time condition: a while loop of the program")
    # a trip count and a run-time condition: unrolled, each iteration would guard all after it (the
    # guards as long as the iterations: compiling took seconds, a minute with the sanitizers)
    add("loop_guarded_long", mk(runtime_c + [node("Loop", ["n", "c", "x"], ["y"], "loop_node", body=flip)],
                                [vi("x", F, [2, 3])], [vi("y", F, None)], zero + [init("n", np.array(1000, np.int64))]),
        args=["--report"], expect=(0,), has=["folded           8 nodes"], eager=False,
        note="1000 iterations under a run-time condition: past 64 unrolled, a loop of the program")
    add("loop_too_long", mk([node("Loop", ["n", "", "x"], ["y"], "loop_node", body=step)],
                            [vi("x", F, [2, 3])], [vi("y", F, None)], [init("n", np.array(2000, np.int64))]),
        expect=(0,), note="2000 iterations: over the unrolling limit, a loop of the program")
    add("loop_too_long_scan", mk([node("Loop", ["n", "", "x"], ["y", "ys"], "loop_node", body=step_scan)],
                                 [vi("x", F, [2, 3])], [vi("y", F, None), vi("ys", F, None)],
                                 [init("n", np.array(1 << 40, np.int64))]),
        expect=(3,), has=["loop_node", "1099511627776 iterations", "unrolls"],
        note="2^40 iterations with a scan output: over the limit")
    grow = body([node("Identity", ["ci"], ["co"], "keep"), node("Flatten", ["v"], ["vo"], "flat_v", axis=0)],
                [vi("i", I64, []), vi("ci", B, []), vi("v", F, [2, 3])], [vi("co", B, []), vi("vo", F, [1, 6])])
    add("loop_runtime_shape_changes", mk([node("Loop", ["n", "", "x"], ["y"], "loop_node\n*/", body=grow)],
                                         [vi("x", F, [2, 3]), vi("n", I64, [])], [vi("y", F, None)]),
        expect=(3,), has=["loop_node\\x0a*/", "x@carried", "'vo'", "2x3", "1x6", "keep its shape"],
        note="a run-time Loop whose body turns carried [2, 3] into [1, 6]: named, unsupported")
    # each loop alone is under the unrolling limits; nested, they would ask for 10^9 nodes
    inner_ops = [node("Identity", ["ci"], ["co"], "keep")] + [
        node("Neg", ["v" if k == 0 else "t%d" % (k - 1)], ["t%d" % k if k < 39 else "vo"], "neg%d" % k) for k in range(40)]
    inner = body(inner_ops, [vi("i", I64, []), vi("ci", B, []), vi("v", F, [2, 3])], [vi("co", B, []), vi("vo", F, [2, 3])])
    outer = body([node("Identity", ["ci"], ["co"], "keep"), node("Loop", ["n", "", "v"], ["vo"], "inner_loop", body=inner)],
                 [vi("i", I64, []), vi("ci", B, []), vi("v", F, [2, 3])], [vi("co", B, []), vi("vo", F, [2, 3])])
    mid = body([node("Identity", ["ci"], ["co"], "keep"), node("Loop", ["n", "", "v"], ["vo"], "mid_loop", body=outer)],
               [vi("i", I64, []), vi("ci", B, []), vi("v", F, [2, 3])], [vi("co", B, []), vi("vo", F, [2, 3])])
    add("loop_nested_blowup", mk([node("Loop", ["n", "", "x"], ["y"], "loop_node", body=mid)],
                                 [vi("x", F, [2, 3])], [vi("y", F, None)], [init("n", np.array(1000, np.int64))]),
        expect=(3,), has=["inner_loop", "nested", "100000 nodes"], note="three Loops of 1000 iterations nested: refused")
    # Sequences: lowered into lists of tensors at compile time (compiler/passes/sequence.c)
    pair = [node("SequenceConstruct", ["x", "x"], ["s"], "construct")]
    i64 = lambda nm, v: init(nm, np.array(v, np.int64))
    add("seq_at_out_of_range", mk(pair + [node("SequenceAt", ["s", "p"], ["y"], "at_node")], [vi("x", F, [2, 3])],
                                  [vi("y", F, None)], [i64("p", 5)]),
        has=["at_node", "position 5", "2 elements"], note="SequenceAt 5 of a sequence of 2")
    add("seq_at_runtime_position", mk(pair + [node("SequenceAt", ["s", "p"], ["y"], "at_node")],
                                      [vi("x", F, [2, 3]), vi("p", I64, [])], [vi("y", F, None)]),
        expect=(3,), has=["at_node", "position", "--bind p="], note="a position from an input: bind it")
    add("seq_at_tensor", mk([node("SequenceAt", ["x", "p"], ["y"], "at_node")], [vi("x", F, [2, 3])],
                            [vi("y", F, None)], [i64("p", 0)]),
        has=["at_node", "is a tensor"], note="SequenceAt of a tensor")
    add("seq_at_arity", mk(pair + [node("SequenceAt", ["s", "p", "p"], ["y"], "at_node")], [vi("x", F, [2, 3])],
                           [vi("y", F, None)], [i64("p", 0)]),
        has=["at_node"], note="SequenceAt with three inputs")
    add("seq_insert_type", mk(pair + [node("SequenceInsert", ["s", "k"], ["s2"], "insert_node"),
                                      node("ConcatFromSequence", ["s2"], ["y"], "concat_node", axis=0)],
                              [vi("x", F, [2, 3])], [vi("y", F, None)], [i64("k", [[1, 2, 3]])]),
        has=["insert_node", "'k'", "sequence holds"], note="an int64 tensor into a float sequence")
    add("seq_erase_empty", mk([node("SequenceEmpty", [], ["s"], "empty"), node("SequenceErase", ["s"], ["s2"], "erase_node"),
                               node("ConcatFromSequence", ["s2"], ["y"], "concat_node", axis=0)],
                              [vi("x", F, [2, 3])], [vi("y", F, None)]),
        has=["erase_node", "empty"], note="SequenceErase of an empty sequence")
    add("seq_concat_empty", mk([node("SequenceEmpty", [], ["s"], "empty"),
                                node("ConcatFromSequence", ["s"], ["y"], "concat_node", axis=0)],
                               [vi("x", F, [2, 3])], [vi("y", F, None)]),
        has=["concat_node", "empty sequence"], note="ConcatFromSequence of nothing")
    add("seq_split_sizes", mk([node("SplitToSequence", ["x", "sz"], ["s"], "split_node", axis=1),
                               node("ConcatFromSequence", ["s"], ["y"], "concat_node", axis=1)],
                              [vi("x", F, [2, 3])], [vi("y", F, None)], [i64("sz", [2, 2])]),
        has=["split_node", "add up"], note="split sizes 2+2 of a dim of 3")
    add("seq_split_huge", mk([node("SplitToSequence", ["x"], ["s"], "split_node", axis=0),
                              node("ConcatFromSequence", ["s"], ["y"], "concat_node", axis=0)],
                             [vi("x", F, [5000, 1])], [vi("y", F, None)]),
        expect=(3,), has=["split_node", "5000 pieces", "4096"], note="5000 pieces: past the sequence limit")
    add("seq_read_by_relu", mk(pair + [node("Relu", ["s"], ["y"], "relu_node")], [vi("x", F, [2, 3])],
                               [vi("y", F, None)]),
        expect=(2, 3), has=["relu_node"], note="a sequence where a tensor goes")
    add("seq_graph_output", mk(pair, [vi("x", F, [2, 3])], [helper.make_tensor_sequence_value_info("s", F, None)]),
        expect=(3,), has=["'s'", "is a sequence"], note="a sequence as the model's output")
    add("seq_graph_input", mk([node("ConcatFromSequence", ["s"], ["y"], "concat_node", axis=0)],
                              [helper.make_tensor_sequence_value_info("s", F, None)], [vi("y", F, None)]),
        expect=(3,), has=["'s'", "is a sequence"], note="a sequence as the model's input")
    seq_b = branch([node("SequenceConstruct", ["x"], ["sb"], "construct_b")], ["sb"])
    add("seq_runtime_if", mk(runtime_c + [node("If", ["c"], ["s"], "if_node", then_branch=seq_b, else_branch=seq_b),
                                          node("ConcatFromSequence", ["s"], ["y"], "concat_node", axis=0)],
                             [vi("x", F, [2, 3])], [vi("y", F, None)], zero),
        expect=(3,), has=["if_node", "sequence", "run time"], note="a sequence out of a run-time If")
    add("empty_graph", mk([], [], []), note="no nodes, no outputs")
    add("no_outputs", mk([node("Relu", ["x"], ["y"], "relu_node")], [vi("x", F, [2, 3])], []),
        note="a graph without outputs")
    add("output_empty_name", base_relu(outs=[vi("", F, None)]), note="a graph output with an empty name")
    add("input_empty_name", mk([node("Relu", [""], ["y"], "relu_node")], [vi("", F, [2, 3])], [vi("y", F, None)]),
        note="a graph input with an empty name")
    add("node_output_empty_name", base_relu([node("Relu", ["x"], [""], "relu_node"), node("Neg", ["x"], ["y"], "neg")]),
        has=["relu_node"], note="a node whose only output is ''")
    m = base_relu()
    m.ClearField("graph")
    add("no_graph", m, note="a ModelProto without a graph")
    # attributes
    n = node("Transpose", ["x"], ["y"], "dup_attr_node")
    n.attribute.extend([helper.make_attribute("perm", [1, 0]), helper.make_attribute("perm", [0, 1])])
    add("dup_attribute", base_relu([n]), has=["dup_attr_node"], note="perm given twice")
    for nm, (op, ins, attrs, inits, x_shape, opset) in {
        "cast_no_to": ("Cast", ["x"], {}, [], [2, 3], 13),
        "concat_no_axis": ("Concat", ["x", "x"], {}, [], [2, 3], 13),
        "einsum_no_equation": ("Einsum", ["x", "x"], {}, [], [2, 3], 13),
        "maxpool_no_kernel": ("MaxPool", ["x"], {}, [], [1, 1, 4, 4], 13),
        "averagepool_no_kernel": ("AveragePool", ["x"], {}, [], [1, 1, 4, 4], 13),
        "depthtospace_no_blocksize": ("DepthToSpace", ["x"], {}, [], [1, 4, 2, 2], 13),
        "unsqueeze11_no_axes": ("Unsqueeze", ["x"], {}, [], [2, 3], 11),
        "lstm_no_hidden_size": ("LSTM", ["x", "w", "r"], {}, [init("w", rnd(1, 16, 3)), init("r", rnd(1, 16, 4))],
                                [2, 1, 3], 13),
        "constant_no_value": ("Constant", [], {}, [], [2, 3], 13),
        "concat_axis_float": ("Concat", ["x", "x"], {"axis": 1.0}, [], [2, 3], 13),
        "concat_axis_string": ("Concat", ["x", "x"], {"axis": "one"}, [], [2, 3], 13),
        "concat_axis_ints": ("Concat", ["x", "x"], {"axis": [0, 1]}, [], [2, 3], 13),
        "transpose_perm_int": ("Transpose", ["x"], {"perm": 1}, [], [2, 3], 13),
        "transpose_perm_dup": ("Transpose", ["x"], {"perm": [0, 0]}, [], [2, 3], 13),
        "transpose_perm_range": ("Transpose", ["x"], {"perm": [0, 5]}, [], [2, 3], 13),
        "transpose_perm_short": ("Transpose", ["x"], {"perm": [0]}, [], [2, 3], 13),
        "cast_to_string": ("Cast", ["x"], {"to": "FLOAT"}, [], [2, 3], 13),
        "cast_to_float": ("Cast", ["x"], {"to": 1.0}, [], [2, 3], 13),
        "softmax_axis_ints": ("Softmax", ["x"], {"axis": [1]}, [], [2, 3], 13),
        "softmax_axis_range": ("Softmax", ["x"], {"axis": 10}, [], [2, 3], 13),
        "concat_axis_range": ("Concat", ["x", "x"], {"axis": 7}, [], [2, 3], 13),
        "flatten_axis_range": ("Flatten", ["x"], {"axis": 9}, [], [2, 3], 13),
        "gather_axis_range": ("Gather", ["x", "i"], {"axis": 5}, [init("i", np.array([0], np.int64))], [2, 3], 13),
        "maxpool_kernel_int": ("MaxPool", ["x"], {"kernel_shape": 2}, [], [1, 1, 4, 4], 13),
        "maxpool_kernel_rank": ("MaxPool", ["x"], {"kernel_shape": [2, 2, 2]}, [], [1, 1, 4, 4], 13),
        "einsum_equation_int": ("Einsum", ["x", "x"], {"equation": 3}, [], [2, 3], 13),
        "einsum_equation_bad": ("Einsum", ["x", "x"], {"equation": "ij,jk->ikq"}, [], [2, 3], 13),
        "leakyrelu_alpha_string": ("LeakyRelu", ["x"], {"alpha": "big"}, [], [2, 3], 13),
    }.items():
        add(nm, mk([node(op, ins, ["y"], nm + "_node", **attrs)], [vi("x", F, x_shape)], [vi("y", F, None)], inits,
                   opset=opset), note="%s with attributes %r" % (op, attrs),
            # hidden_size is optional in the ONNX signature: W's shape [dirs, 4*hidden, input] gives it
            **({"expect": (0, 2)} if nm == "lstm_no_hidden_size" else {"has": [nm + "_node"]}))
    n = node("Constant", [], ["y"], "constant_two_values", value_float=1.0)
    n.attribute.extend([helper.make_attribute("value_int", 2)])
    add("constant_two_values", base_relu([n], ins=[]), has=["constant_two_values"],
        note="Constant with value_float and value_int")
    # declared types and shapes that the graph does not compute
    add("output_declared_int64", base_relu(outs=[vi("y", I64, None)]), has=["y"],
        note="graph output declared int64, computed float")
    add("output_declared_shape", base_relu(outs=[vi("y", F, [5, 5])]), has=["y"],
        note="graph output declared [5,5], computed [2,3]")
    m = base_relu([node("Relu", ["x"], ["t"], "relu_node"), node("Neg", ["t"], ["y"], "neg")])
    m.graph.value_info.extend([vi("t", I64, [2, 3])])
    add("value_info_wrong_type", m, has=["t"], note="value_info declares t int64, the graph computes float")
    # constant indices out of range
    for nm, (op, data_shape, idx, upd_shape, attrs) in {
        "gather_idx_7": ("Gather", [4, 3], np.array([7], np.int64), None, {"axis": 0}),
        "gather_idx_minus5": ("Gather", [4, 3], np.array([-5], np.int64), None, {"axis": 0}),
        "gather_idx_int64max": ("Gather", [4, 3], np.array([(1 << 63) - 1], np.int64), None, {"axis": 0}),
        "gather_idx_int32_big": ("Gather", [4, 3], np.array([1 << 30], np.int32), None, {"axis": 0}),
        "gatherelements_idx_9": ("GatherElements", [2, 3], np.array([[0, 9, 0], [1, 0, 1]], np.int64), None, {"axis": 1}),
        "gatherelements_idx_neg": ("GatherElements", [2, 3], np.array([[0, -9, 0], [1, 0, 1]], np.int64), None, {"axis": 1}),
        "gathernd_idx_4": ("GatherND", [2, 2], np.array([[0, 4]], np.int64), None, {}),
        "scatternd_idx_4": ("ScatterND", [4, 3], np.array([[4]], np.int64), [1, 3], {}),
        "scatternd_idx_minus9": ("ScatterND", [4, 3], np.array([[-9]], np.int64), [1, 3], {}),
        "scatternd_idx_deep": ("ScatterND", [4, 3], np.array([[1, 2, 3]], np.int64), [1], {}),
        "scatterelements_idx_9": ("ScatterElements", [2, 3], np.array([[1, 0, 9]], np.int64), [1, 3], {"axis": 0}),
        "scatterelements_idx_neg": ("ScatterElements", [2, 3], np.array([[1, 0, -7]], np.int64), [1, 3], {"axis": 0}),
    }.items():
        ins = ["x", "idx"] + (["upd"] if upd_shape else [])
        gin = [vi("x", F, data_shape)] + ([vi("upd", F, upd_shape)] if upd_shape else [])
        add(nm, mk([node(op, ins, ["y"], nm + "_node", **attrs)], gin, [vi("y", F, None)], [init("idx", idx)]),
            has=[nm + "_node"], note="%s with constant indices %r" % (op, idx.tolist()))
    # opsets and IR versions
    for v, exp in {0: (2,), -5: (2,), 99: (2, 3)}.items():
        add("opset_%s" % str(v).replace("-", "minus"), base_relu(opset=v), expect=exp,
            note="default-domain opset %d (newer than ftax knows: 3, or 2)" % v)
    add("ir_version_99", base_relu(ir=99), expect=(2, 3), note="ir_version 99: newer than ftax knows (3, or 2)")
    add("ir_version_0", base_relu(ir=0), note="ir_version 0")
    add("ir_version_negative", base_relu(ir=-3), note="ir_version -3")
    add("no_opset_import", base_relu(opsets=[]), note="no opset_import for the default domain")
    add("dup_opset_import", base_relu(opsets=[helper.make_opsetid("", 13), helper.make_opsetid("", 7)]),
        note="the default domain imported twice with different versions")
    # initializers whose data does not match
    for nm, (dims, kw) in {"init_short_raw": ([2, 3], dict(raw=b"\0" * 7)),
                           "init_long_raw": ([2, 3], dict(raw=b"\0" * 40)),
                           "init_short_floats": ([2, 3], dict(floats=[1.0] * 5)),
                           "init_both_fields": ([2, 3], dict(raw=b"\0" * 24, floats=[1.0] * 6))}.items():
        t = T()
        t.name = "w"
        t.data_type = F
        t.dims.extend(dims)
        if "raw" in kw:
            t.raw_data = kw["raw"]
        if "floats" in kw:
            t.float_data.extend(kw["floats"])
        add(nm, mk([node("Add", ["x", "w"], ["y"], "add_node")], [vi("x", F, [2, 3])], [vi("y", F, None)], [t]),
            has=["w"], note="initializer w [2,3] float with %r" % {k: (len(v) if hasattr(v, "__len__") else v)
                                                                   for k, v in kw.items()})
    for nm, dt in {"init_dtype_0": 0, "init_dtype_99": 99, "init_dtype_negative": -1}.items():
        t = T()
        t.name = "w"
        t.data_type = dt
        t.dims.extend([2, 3])
        t.raw_data = b"\0" * 24
        add(nm, mk([node("Add", ["x", "w"], ["y"], "add_node")], [vi("x", F, [2, 3])], [vi("y", F, None)], [t]),
            has=["w"], note="initializer with data_type %d" % dt)


# ---- round 2: functions, subgraphs and names (issue 39) --------------------------------------

def fn_model(nodes, inputs, outputs, functions, inits=(), opset=13):
    m = mk(nodes, inputs, outputs, inits, opset=opset,
           opsets=[helper.make_opsetid("", opset), helper.make_opsetid("local", 1)])
    m.functions.extend(functions)
    return m


def fn(name, ins, outs, nodes):
    return helper.make_function("local", name, list(ins), list(outs), list(nodes),
                                [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)])


def call(f, ins, outs, name):
    return helper.make_node(f, list(ins), list(outs), name=name, domain="local")


def gen_round2(g):
    def add(name, m, cls="invalid", expect=(2,), **kw):
        g.add(cls + "_" + name, cls, m, expect=expect, **kw)

    # a function that calls itself through an If's branch or a Loop's body: the depth limit must
    # count across subgraphs (it restarted in every one, and the recursion ran out of stack)
    then_g = helper.make_graph([call("Rec", ["X"], ["t"], "again")], "then", [], [vi("t", F, None)])
    else_g = helper.make_graph([node("Identity", ["X"], ["t"], "stop")], "else", [], [vi("t", F, None)])
    rec = fn("Rec", ["X"], ["Y"], [node("If", ["c"], ["Y"], "rec_if", then_branch=then_g, else_branch=else_g)])
    # (c is read from outside the function: refused too, but only after the recursion is found)
    rec_c = fn("Rec", ["X"], ["Y"], [node("Constant", [], ["c"], "cst", value=helper.make_tensor("v", B, [], [True])),
                                     node("If", ["c"], ["Y"], "rec_if", then_branch=then_g, else_branch=else_g)])
    add("fn_recursive_if", fn_model([call("Rec", ["x"], ["y"], "top")], [vi("x", F, [2])], [vi("y", F, None)], [rec_c]),
        has=["Rec", "itself"], note="a local function calling itself from an If branch (was a stack overflow)")
    body = helper.make_graph([call("RecL", ["h"], ["h2"], "again"), node("Identity", ["cond"], ["cond2"], "keep")],
                             "body", [vi("i", I64, []), vi("cond", B, []), vi("h", F, None)],
                             [vi("cond2", B, []), vi("h2", F, None)])
    recl = fn("RecL", ["X"], ["Y"], [node("Constant", [], ["n"], "cst", value=helper.make_tensor("v", I64, [], [2])),
                                     node("Loop", ["n", "", "X"], ["Y"], "rec_loop", body=body)])
    add("fn_recursive_loop", fn_model([call("RecL", ["x"], ["y"], "top")], [vi("x", F, [2])], [vi("y", F, None)], [recl]),
        has=["RecL", "itself"], note="a local function calling itself from a Loop body")
    # 12 functions each calling the next 10 times: 10^11 nodes from 3 KB
    fns = []
    for k in range(12):
        if k == 11:
            fns.append(fn("F11", ["A"], ["B"], [node("Relu", ["A"], ["B"], "leaf")]))
            continue
        chain = []
        for j in range(10):
            chain.append(call("F%d" % (k + 1), ["A" if j == 0 else "t%d" % (j - 1)], ["B" if j == 9 else "t%d" % j], "c%d" % j))
        fns.append(fn("F%d" % k, ["A"], ["B"], chain))
    add("fn_expansion_bomb", fn_model([call("F0", ["x"], ["y"], "top")], [vi("x", F, [2])], [vi("y", F, None)], fns),
        cls="size", expect=(3,), has=["F0", "100000"],
        note="12 functions each calling the next 10 times: stop at the graph's node limit (was 5.8 GB, then SIGSEGV)")
    # names resolve by scope: an undefined name in a body is not the caller's value of the same
    # prefixed name
    leak = fn("Leak", ["A"], ["B"], [node("Add", ["A", "t"], ["B"], "add_t")])
    add("fn_reads_caller_value", fn_model([call("Leak", ["x"], ["y"], "call")], [vi("x", F, [2]), vi("call#0/t", F, [2])],
                                          [vi("y", F, None)], [leak]),
        has=["Leak", "'t'"], note="the body reads 't', which it does not define; the caller has 'call#0/t'")
    long = "L" * 1100
    cut = fn("Cut", ["A"], ["B"], [node("Relu", ["A"], [long + "a"], "r"), node("Neg", [long + "b"], ["B"], "n")])
    add("fn_long_names_merge", fn_model([call("Cut", ["x"], ["y"], "call")], [vi("x", F, [2])], [vi("y", F, None)], [cut]),
        has=["Cut", long[:100]], note="two names that differ after 1,100 bytes (cut at 1,023 and merged)")
    tw = fn("Twice", ["A"], ["B"], [node("Add", ["A", "A"], ["T"], "add"), node("Mul", ["T", "T"], ["B"], "mul")])
    nm = "N" * 600
    add("fn_long_caller_names", fn_model([call("Twice", ["x"], ["u"], nm + "1"), call("Twice", ["u"], ["y"], nm + "2")],
                                         [vi("x", F, [2])], [vi("y", F, None)], [tw]),
        cls="exitclass", expect=(0,), note="two calls whose 600-byte names share a prefix: each call keeps its own T (was refused)")
    add("fn_too_many_inputs", fn_model([call("Twice", ["x", "x", "x"], ["y"], "call3")], [vi("x", F, [2])],
                                       [vi("y", F, None)], [tw]),
        has=["call3", "Twice"], note="a 1-input function called with 3 inputs")
    add("fn_too_many_outputs", fn_model([call("Twice", ["x"], ["y", "z"], "call2o")], [vi("x", F, [2])],
                                        [vi("y", F, None)], [tw]),
        has=["call2o", "Twice"], note="a 1-output function called with 2 outputs")
    sub_leak = fn("SubLeak", ["A"], ["B"], [
        node("Constant", [], ["c"], "cst", value=helper.make_tensor("v", B, [], [True])),
        node("If", ["c"], ["B"], "sub_if",
             then_branch=helper.make_graph([node("Add", ["A", "t"], ["o"], "add_t")], "then", [], [vi("o", F, None)]),
             else_branch=helper.make_graph([node("Identity", ["A"], ["o"], "same")], "else", [], [vi("o", F, None)]))])
    add("fn_subgraph_reads_caller", fn_model([call("SubLeak", ["x"], ["y"], "call")],
                                             [vi("x", F, [2]), vi("t", F, [2])], [vi("y", F, None)], [sub_leak]),
        has=["SubLeak", "'t'"], note="an If branch inside a body reads 't', which only the caller has")
    # a body's private value read by an If branch inside it (resolved by scope, renamed for the branch)
    priv = fn("Priv", ["A"], ["B"], [
        node("Relu", ["A"], ["T"], "relu"),
        node("Constant", [], ["c"], "cst", value=helper.make_tensor("v", B, [], [True])),
        node("If", ["c"], ["B"], "sub_if",
             then_branch=helper.make_graph([node("Neg", ["T"], ["o"], "neg")], "then", [], [vi("o", F, None)]),
             else_branch=helper.make_graph([node("Identity", ["T"], ["o"], "same")], "else", [], [vi("o", F, None)]))])
    add("fn_subgraph_reads_body", fn_model([call("Priv", ["x"], ["y"], "call1"), call("Priv", ["y"], ["z"], "call2")],
                                           [vi("x", F, [2]), vi("T", F, [2])], [vi("z", F, None)], [priv]),
        cls="exitclass", expect=(0,), note="an If branch in a body reads the body's T (the caller has a T of its own): valid")
    # NUL bytes inside names: protobuf-c stops at the NUL, and 'x\\0a' became the input 'x'
    add("name_nul_reads_input", base_relu([node("Relu", ["x\0a"], ["y"], "relu_nul")]), has=["NUL", "x\\x00a"],
        note="a node reads 'x\\0a', undefined; cut at the NUL it was the graph input 'x'")
    add("name_nul_two_values", mk([node("Relu", ["x"], ["t\0a"], "r1"), node("Neg", ["x"], ["t\0b"], "r2"),
                                   node("Add", ["t\0a", "t\0b"], ["y"], "add")], [vi("x", F, [2])], [vi("y", F, None)]),
        has=["NUL"], note="two values 't\\0a' and 't\\0b' that protobuf-c reads as one 't'")
    add("name_nul_node", base_relu([node("Relu", ["x"], ["y"], "relu\0hidden")]), has=["NUL"],
        note="a node name with a NUL byte")
    # int64 attributes are range-checked where they are read, never narrowed
    big = 2 ** 32
    add("split18_num_outputs_2p32", mk([node("Split", ["x"], ["a", "b"], "split_node", axis=0, num_outputs=big + 2)],
                                       [vi("x", F, [4, 3])], [vi("a", F, None), vi("b", F, None)], opset=18),
        has=["split_node", "num_outputs", str(big + 2)], note="num_outputs 2^32 + 2 (was read as 2)")
    add("gathernd_batch_dims_2p32", mk([node("GatherND", ["x", "i"], ["y"], "gnd_node", batch_dims=big)],
                                       [vi("x", F, [2, 3])], [vi("y", F, None)], [init("i", np.array([[1], [0]], np.int64))]),
        has=["gnd_node", "batch_dims"], note="batch_dims 2^32 (was read as 0)")
    add("reshape_allowzero_2p32", mk([node("Reshape", ["x", "s"], ["y"], "reshape_node", allowzero=big + 1)],
                                     [vi("x", F, [2, 3])], [vi("y", F, None)], [init("s", np.array([3, 2], np.int64))],
                                     opset=14),
        has=["reshape_node", "allowzero"], note="allowzero 2^32 + 1 (was read as 1)")
    sbody = helper.make_graph([node("Add", ["s_in", "xe"], ["s_out"], "acc")], "step",
                              [vi("s_in", F, [2]), vi("xe", F, [2])], [vi("s_out", F, [2])])
    add("scan_num_scan_inputs_2p32", mk([node("Scan", ["s0", "x"], ["s"], "scan_node", body=sbody, num_scan_inputs=big + 1)],
                                        [vi("s0", F, [2]), vi("x", F, [3, 2])], [vi("s", F, None)], opset=11),
        has=["scan_node", "num_scan_inputs"], note="num_scan_inputs 2^32 + 1 (was read as 1)")
    add("lstm_layout_2p32", mk([node("LSTM", ["x", "w", "r"], ["y"], "lstm_node", hidden_size=2, layout=big)],
                               [vi("x", F, [1, 1, 2])], [vi("y", F, None)],
                               [init("w", np.zeros((1, 8, 2), np.float32)), init("r", np.zeros((1, 8, 2), np.float32))],
                               opset=14),
        has=["lstm_node", "layout"], note="LSTM layout 2^32 (was read as 0)")
    # silent acceptance: each of these is invalid
    lbody = helper.make_graph([node("Identity", ["cond"], ["cond2"], "keep"), node("Neg", ["h"], ["h2"], "neg")],
                              "body", [vi("i", I64, []), vi("cond", B, []), vi("h", F, [2])],
                              [vi("cond2", B, []), vi("h2", F, [2])])
    for nm, m_arr in {"loop_trip_float": np.array(3.0, np.float32), "loop_trip_two": np.array([3, 3], np.int64)}.items():
        add(nm, mk([node("Loop", ["M", "", "x"], ["y"], "loop_node", body=lbody)], [vi("x", F, [2])], [vi("y", F, None)],
                   [init("M", m_arr)]),
            has=["loop_node", "trip count"], note="a constant Loop trip count %r (read as a count)" % m_arr.tolist())
    for nm, attrs in {"scan_direction_7": dict(scan_input_directions=[7]),
                      "scan_axes_too_long": dict(scan_input_axes=[0, 0, 0])}.items():
        add(nm, mk([node("Scan", ["s0", "x"], ["s"], "scan_node", body=sbody, num_scan_inputs=1, **attrs)],
                   [vi("s0", F, [2]), vi("x", F, [3, 2])], [vi("s", F, None)], opset=11),
            has=["scan_node", list(attrs)[0]], note="Scan with %r" % attrs)
    add("quant_zero_point_shape", mk([node("QuantizeLinear", ["x", "s", "z"], ["y"], "q_node", axis=1)],
                                     [vi("x", F, [2, 3])], [vi("y", T.UINT8, None)],
                                     [init("s", np.array([0.5, 0.25, 1.0], np.float32)),
                                      init("z", np.zeros((1, 3), np.uint8))]),
        has=["q_node", "zero point"], note="a zero point of shape [1,3] for a scale of [3]")
    add("matmulinteger_zp_type", mk([node("MatMulInteger", ["a", "b", "az"], ["y"], "mmi_node")],
                                    [vi("a", T.UINT8, [2, 3])], [vi("y", T.INT32, None)],
                                    [init("b", np.ones((3, 2), np.uint8)), init("az", np.array(3, np.int8))]),
        has=["mmi_node", "zero point"], note="an int8 a_zero_point for a uint8 A")
    h = T()
    h.name = "w"
    h.data_type = T.FLOAT16
    h.dims.extend([2])
    h.int32_data.extend([15360, 70000])
    add("fp16_int32_data_70000", mk([node("Cast", ["w"], ["wf"], "cast_node", to=F), node("Add", ["x", "wf"], ["y"], "add_node")],
                                    [vi("x", F, [2])], [vi("y", F, None)], [h]),
        has=["'w'", "70000"], note="float16 int32_data holding 70000 (was cut to 16 bits)")
    # ftaxc --dump prints names escaped, as every other path does
    esc = "\x1b]0;owned\x07\x1b[2J"
    add("dump_escapes_names", mk([node("Relu", ["x" + esc], ["y" + esc], "relu" + esc), node("Neg", ["y" + esc], ["y"], "neg")],
                                 [vi("x" + esc, F, [2, 2])], [vi("y", F, None)]),
        cls="message", expect=(0,), args=["--dump", "--emit-only"],
        note="names with terminal escapes through --dump (printed raw before)")

    # invalid models named as such: the model's node (not the Stack made from it), exit 2; sparse is 3
    sbody2 = helper.make_graph([node("Add", ["s_in", "xe"], ["s_out"], "acc"), node("Identity", ["xe"], ["ye"], "pick")],
                               "step", [vi("s_in", F, [2]), vi("xe", F, [2])], [vi("s_out", F, [2]), vi("ye", F, [2])])
    add("scan_output_axis_5", mk([node("Scan", ["s0", "x"], ["s", "ys"], "scan_node", body=sbody2, num_scan_inputs=1,
                                       scan_output_axes=[5])],
                                 [vi("s0", F, [2]), vi("x", F, [3, 2])], [vi("s", F, None), vi("ys", F, None)], opset=11),
        has=["'scan_node' (Scan)", "axis 5"], lacks=["Stack"], note="a scan output axis of 5 for pieces of rank 1")
    add("cfs_axis_5", mk([node("SplitToSequence", ["x"], ["q"], "sts_node", axis=0),
                          node("ConcatFromSequence", ["q"], ["y"], "cfs_node", axis=5, new_axis=1)],
                         [vi("x", F, [3, 2])], [vi("y", F, None)]),
        has=["'cfs_node' (ConcatFromSequence)", "axis 5"], lacks=["Stack"],
        note="ConcatFromSequence new_axis 1, axis 5 for elements of rank 2")
    sp = mk([node("Add", ["x", "w"], ["y"], "add_node")], [vi("x", F, [4])], [vi("y", F, None)])
    sp.graph.sparse_initializer.extend([helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.0], np.float32), "w"),
                                                                  numpy_helper.from_array(np.array([2], np.int64), "wi"),
                                                                  [4])])
    add("sparse_initializer", sp, cls="exitclass", expect=(3,), has=["sparse"],
        note="a sparse initializer: valid ONNX that ftax does not support (3, was 2)")

    # SplitToSequence counts pieces without overflowing: a scalar split near INT64_MAX is one piece
    imax = 2 ** 63 - 1
    for nm, (split, exp) in {"seq_split_int64_max": (np.array(imax, np.int64), 0),
                             "seq_split_int64_max_minus_1": (np.array(imax - 1, np.int64), 0),
                             "seq_split_list_overflow": (np.array([imax, imax, 7], np.int64), 2)}.items():
        add(nm, mk([node("SplitToSequence", ["x", "s"], ["q"], "sts_node", axis=0),
                    node("ConcatFromSequence", ["q"], ["y"], "cfs_node", axis=0)],
                   [vi("x", F, [5, 2])], [vi("y", F, None)], [init("s", split)]),
            cls="exitclass" if exp == 0 else "invalid", expect=(exp,), has=[] if exp == 0 else ["sts_node"],
            note="SplitToSequence of a dim of 5 with split %r (len + chunk - 1 overflowed)" % split.tolist())


# ---- wrong exit class today ----------------------------------------------------------------

def gen_exitclass(g):
    def add(name, m=None, **kw):
        return g.add("exitclass_" + name, "exitclass", m, **kw)

    add("cast_to_999", base_relu([node("Cast", ["x"], ["y"], "cast_node", to=999)]), has=["cast_node"],
        note="Cast to=999 is not a data type: invalid")
    add("cast_to_0", base_relu([node("Cast", ["x"], ["y"], "cast_node", to=0)]), has=["cast_node"],
        note="Cast to=0 (UNDEFINED): invalid")
    add("input_elem_type_0", base_relu(ins=[vi("x", 0, [2, 3])]), has=["x"], note="graph input elem_type 0")
    add("input_elem_type_99", base_relu(ins=[vi("x", 99, [2, 3])]), has=["x"], note="graph input elem_type 99")
    add("input_dim_minus5", base_relu(ins=[vi("x", F, [-5, 3])]), has=["x"], note="graph input dim -5")
    add("input_no_type", base_relu(ins=[helper.make_empty_tensor_value_info("x")]), has=["x"],
        note="graph input without a type")
    relu_sym = mk([node("Relu", ["x"], ["y"], "relu_node")], [vi("x", F, ["d0", 3])], [vi("y", F, None)])
    dims65 = []
    for k in range(65):
        dims65 += ["--dim", "s%d=1" % k]
    add("dim_flags_65", relu_sym, args=dims65 + ["--dim", "d0=2"], expect=(1,), has=["--dim"],
        note="more than 64 --dim flags: usage error with a message")
    shapes65 = []
    for k in range(65):
        shapes65 += ["--shape", "x=2x3"]
    add("shape_flags_65", relu_sym, args=shapes65, expect=(1,), has=["--shape"], eager=True,
        note="more than 64 --shape flags: usage error with a message")
    # --bind: Reshape's shape operand bound from a file
    rs = mk([node("Reshape", ["x", "shape"], ["y"], "reshape_node")], [vi("x", F, [2, 3]), vi("shape", I64, [2])],
            [vi("y", F, None)])
    binds65 = []
    for k in range(65):
        binds65 += ["--bind", "shape={case}/shape.pb"]
    d = add("bind_flags_65", rs, args=binds65, expect=(1,), has=["--bind"], eager=False,
            note="more than 64 --bind flags: usage error with a message")
    with open(os.path.join(d, "shape.pb"), "wb") as f:
        f.write(tensor_pb("shape", I64, [2], struct.pack("<2q", 3, 2)))
    for nm, (content, expect, has, lacks, note) in {
        "bind_empty_pb": (b"", (2,), [], ["unsupported data_type", "unsupported or missing data_type"],
                          "a 0-byte tensor file: 2, saying what is wrong with it"),
        "bind_garbage_pb": (b"\xff\xff\xff\xff\x0f", (2,), [], [], "not a TensorProto"),
        "bind_truncated_pb": (tensor_pb("shape", I64, [2], struct.pack("<2q", 3, 2))[:-5], (2,), [], [],
                              "a TensorProto cut short"),
        "bind_wrong_dtype": (tensor_pb("shape", F, [2], struct.pack("<2f", 3, 2)), (2,), [], [],
                             "float data for an int64 shape operand"),
        "bind_wrong_shape": (tensor_pb("shape", I64, [3], struct.pack("<3q", 3, 2, 1)), (2,), [], [],
                             "3 elements for a [2] operand"),
        "bind_huge_dims": (tensor_pb("shape", I64, [1 << 40]), (2,), [], [],
                           "dims claim 8 TB, no data"),
    }.items():
        fname = nm[len("bind_"):] + ".pb"
        d = add(nm, rs, args=["--bind", "shape={case}/" + fname], expect=expect, has=has + [fname], lacks=lacks,
                eager=False,
                note=note)
        with open(os.path.join(d, fname), "wb") as f:
            f.write(content)
    d = add("bind_directory", rs, args=["--bind", "shape={case}/adir.pb"], expect=(4,), has=["adir.pb"], eager=False,
            note="a directory where a tensor file was expected: I/O")
    os.makedirs(os.path.join(d, "adir.pb"), exist_ok=True)
    add("bind_missing", rs, args=["--bind", "shape={case}/missing.pb"], expect=(4,), has=["missing.pb"], eager=False,
        note="a tensor file that does not exist: I/O")
    add("bind_no_such_input", rs, args=["--bind", "nosuch={case}/missing.pb"], expect=(1, 2), has=["nosuch"],
        eager=False, note="--bind names no input: a bad command line (1) or an invalid request (2)")

    # the generated program (built from the program base model) and ftax-eager on input files
    def prog(name, files, expect, has=(), note="", extra_args=(), make=None):
        for tool in ("program", "eager"):
            args = []
            for fn in files:
                args.append("{case}/" + fn)
            args += list(extra_args)
            d = g.add("exitclass_%s_%s" % (tool, name), "exitclass", None, tool=tool, args=args, expect=expect,
                      has=has, eager=False, note=note)
            if tool == "eager":
                g.cases[-1]["model"] = "../program_base/model.onnx"
            if make:
                make(d)

    def writer(fn, content):
        def w(d):
            with open(os.path.join(d, fn), "wb") as f:
                f.write(content)
        return w

    prog("input_directory", ["in.pb"], (4,), ["in.pb"], "a directory passed as an input file: I/O",
         make=lambda d: os.makedirs(os.path.join(d, "in.pb"), exist_ok=True))
    prog("input_missing", ["in.pb"], (4,), ["in.pb"], "an input file that does not exist: I/O")
    good = tensor_pb("x", F, [2, 3], struct.pack("<6f", *range(6)))
    prog("input_truncated", ["in.pb"], (2,), ["in.pb"], "a TensorProto cut short", make=writer("in.pb", good[:-7]))
    prog("input_garbage", ["in.pb"], (2,), ["in.pb"], "bytes that are not a TensorProto",
         make=writer("in.pb", b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01garbage"))
    prog("input_empty", ["in.pb"], (2,), ["in.pb"], "a 0-byte input file", make=writer("in.pb", b""))
    huge = tensor_pb("x", F, [2, 1088000000])
    prog("input_claims_8GB", ["in.pb"], (2,), ["in.pb"],
         "a %d-byte TensorProto whose dims claim 8.7 GB: refused quickly, without allocating" % len(huge),
         make=writer("in.pb", huge))
    prog("input_claims_2e62", ["in.pb"], (2,), ["in.pb"], "dims [2^31, 2^31] and no data",
         make=writer("in.pb", tensor_pb("x", F, [1 << 31, 1 << 31])))
    prog("input_dims_overflow", ["in.pb"], (2,), ["in.pb"], "dims whose product overflows int64",
         make=writer("in.pb", tensor_pb("x", F, [1 << 40, 1 << 40, 1 << 40])))
    prog("input_negative_dim", ["in.pb"], (2,), ["in.pb"], "dims [-2, -3] (product 6)",
         make=writer("in.pb", tensor_pb("x", F, [-2, -3], struct.pack("<6f", *range(6)))))
    prog("input_short_data", ["in.pb"], (2,), ["in.pb"], "dims [2,3] with 20 bytes of data",
         make=writer("in.pb", tensor_pb("x", F, [2, 3], b"\0" * 20)))
    prog("input_length_2e62", ["in.pb"], (2,), ["in.pb"], "raw_data's length prefix claims 2^62 bytes",
         make=writer("in.pb", b"\x08\x02\x08\x03\x10\x01\x4a" + bytes([0x80] * 8) + b"\x40" + b"\0" * 8))
    prog("output_dir_is_file", ["in.pb"], (4,), ["afile"], "--output-dir names a regular file: I/O",
         extra_args=["--output-dir", "{case}/afile"],
         make=lambda d: (writer("in.pb", good)(d), writer("afile", b"x")(d)))


# ---- messages with raw bytes ---------------------------------------------------------------

def gen_messages(g):
    esc = "\x1b]0;pwned\x07"

    def add(name, m, **kw):
        return g.add("message_" + name, "message", m, **kw)

    add("optype_osc", base_relu([node("Evil" + esc + "Op", ["x"], ["y"], "evil_node")]), expect=(3,), has=["Evil"],
        note="an unknown op type with an OSC title sequence: 3, listed without the raw bytes")
    add("optype_ctrl", base_relu([node("Bad\x1b[2J\x1b[H\r\x08\x7fOp", ["x"], ["y"], "bad_node")]), expect=(3,),
        has=["Bad"], note="an unknown op type with clear-screen and control bytes")
    add("optype_newline", base_relu([node("Fake\nftaxc: ok", ["x"], ["y"], "fake_node")]), expect=(3,), has=["Fake"],
        note="an unknown op type that forges a second message line")
    add("domain_osc", base_relu([helper.make_node("Relu", ["x"], ["y"], name="dom_node", domain="evil" + esc)],
                                opsets=[helper.make_opsetid("", 13), helper.make_opsetid("evil" + esc, 1)]),
        expect=(3,), has=["evil"], note="an op in an unknown domain named with escapes")
    for nm, s in {"osc": "n" + esc, "csi": "n\x1b[31m\x1b[0m", "cr_bs": "n\r\x08\x08\x7f", "newline": "n\nftaxc: ok",
                  "ctrl_all": "n" + "".join(chr(c) for c in range(1, 32)), "pct": "n%s%s%n%n%x",
                  "long": "n" + "Q" * 100000}.items():
        add("node_" + nm, base_relu([node("Relu", ["x", "x"], ["y"], s)]), has=[s if nm == "pct" else "n"],
            note="an invalid node (Relu with two inputs) named %r" % s[:40])
        add("input_" + nm, mk([node("Relu", [s], ["y"], "relu_node")], [vi(s, F, ["batch", 3])], [vi("y", F, None)]),
            expect=(1,), has=[] if nm == "long" else ["batch"], note="an unpinned input named %r: usage error naming it" % s[:40])
        add("dimparam_" + nm, mk([node("Relu", ["x"], ["y"], "relu_node")], [vi("x", F, [s, 3])], [vi("y", F, None)]),
            expect=(1,), has=["x"], note="an unpinned dim_param named %r" % s[:40])
        add("output_" + nm, base_relu(outs=[vi("y", F, None), vi(s, F, [2, 3])]),
            has=[s if nm == "pct" else "n"], note="an unproduced graph output named %r" % s[:40])
        # an input with an initializer (IR 8: a default): the note that names it, and --keep-input
        dflt = mk([node("Add", ["x", s], ["y"], "add_node")], [vi("x", F, [2, 3]), vi(s, F, [3])], [vi("y", F, None)],
                  [init(s, np.ones(3, np.float32))])
        add("default_" + nm, dflt, expect=(0,), args=["--emit-only"], has=["note:", "--keep-input"],
            note="an input with a default named %r: compiled as a constant, the note names it escaped" % s[:40])
        if nm != "long":
            add("keep_unknown_" + nm, dflt, expect=(1,), args=["--emit-only", "--keep-input", s + "z"], eager=False,
                has=["--keep-input"], note="--keep-input naming no input, %r: usage error" % (s + "z")[:40])
            add("keep_unknown_eager_" + nm, dflt, tool="eager", expect=(1,), args=["--keep-input", s + "z"],
                has=["--keep-input"], note="ftax-eager --keep-input naming no input, %r: usage error" % (s + "z")[:40])
    g.add("message_file_escape", "message", raw=b"\xff\xfe garbage", filename="bad\x1b[2J\x1b]0;pwned\x07.onnx",
          has=["bad"], note="a garbage model whose file name holds escapes: 2, the name printed without them")
    g.add("message_flag_escape", "message", base_relu(), args=["--frob\x1b]0;pwned\x07"], expect=(1,), has=["--frob"], eager=False,
          note="an unknown flag with escapes: usage error")
    g.add("message_dim_escape", "message", mk([node("Relu", ["x"], ["y"], "relu_node")], [vi("x", F, ["b", 3])],
                                              [vi("y", F, None)]),
          args=["--dim", "b=2\x1b[31m"], expect=(1,), has=["b="], note="a --dim value with escapes: usage error")


# ---- external data -------------------------------------------------------------------------

def ext_model(location, offset=None, length=None):
    t = T()
    t.name = "w"
    t.data_type = F
    t.dims.extend([2, 3])
    t.data_location = T.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key = k
            e.value = str(v)
    return mk([node("Add", ["x", "w"], ["y"], "add_node")], [vi("x", F, [2, 3])], [vi("y", F, None)], [t])


def gen_extdata(g):
    data = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    outside = os.path.join(g.root, "outside")
    os.makedirs(outside, exist_ok=True)
    with open(os.path.join(outside, "data.bin"), "wb") as f:
        f.write(data)

    def add(name, m, expect=(2,), has=("w",), note=""):
        return g.add("extdata_" + name, "extdata", m, expect=expect, has=list(has), note=note)

    d = add("plain_ok", ext_model("data.bin"), expect=(0,), has=(), note="a regular file next to the model: loads")
    with open(os.path.join(d, "data.bin"), "wb") as f:
        f.write(data)
    d = add("symlink_abs_outside", ext_model("link.bin"), note="link.bin -> an absolute path outside the folder")
    os.symlink(os.path.abspath(os.path.join(outside, "data.bin")), os.path.join(d, "link.bin"))
    d = add("symlink_rel_outside", ext_model("link.bin"), note="link.bin -> ../../outside/data.bin")
    os.symlink(os.path.join("..", "..", "outside", "data.bin"), os.path.join(d, "link.bin"))
    d = add("symlink_dev_zero", ext_model("link.bin"), note="link.bin -> /dev/zero")
    os.symlink("/dev/zero", os.path.join(d, "link.bin"))
    d = add("symlink_dir_component", ext_model("sub/data.bin"), note="sub -> a folder outside; sub/data.bin")
    os.symlink(os.path.abspath(outside), os.path.join(d, "sub"))
    d = add("symlink_dir_component_rel", ext_model("sub/data.bin"), note="sub -> ../../outside; sub/data.bin")
    os.symlink(os.path.join("..", "..", "outside"), os.path.join(d, "sub"))
    add("dotdot", ext_model("../../outside/data.bin"), note="'..' in the location")
    d = add("dotdot_inner", ext_model("sub/../../../outside/data.bin"), note="'..' after a folder")
    os.makedirs(os.path.join(d, "sub"), exist_ok=True)
    add("absolute", ext_model(os.path.abspath(os.path.join(outside, "data.bin"))), note="an absolute location")
    add("absolute_etc", ext_model("/etc/passwd"), note="an absolute location")
    add("empty_location", ext_model(""), note="an empty location")
    add("no_location", ext_model(None), note="external data without a location")
    for nm, (off, ln) in {"offset_beyond": (100, None), "length_beyond": (0, 1000), "offset_negative": (-8, None),
                          "length_negative": (0, -24), "offset_2e62": (1 << 62, 24), "offset_garbage": ("12abc", None),
                          "length_short": (0, 12)}.items():
        d = add(nm, ext_model("data.bin", off, ln), note="offset %r length %r into a 24-byte file" % (off, ln))
        with open(os.path.join(d, "data.bin"), "wb") as f:
            f.write(data)
    d = add("location_directory", ext_model("adir"), expect=(2, 4),
            note="the location is a folder (a directory where a file was expected: 4; or invalid model: 2)")
    os.makedirs(os.path.join(d, "adir"), exist_ok=True)
    d = add("location_fifo", ext_model("fifo.bin"), expect=(2, 4),
            note="the location is a FIFO nobody writes: refused (2 or 4), never a hang")
    os.mkfifo(os.path.join(d, "fifo.bin"))


# ---- files that are not models -------------------------------------------------------------

def pb_field(num, wire, payload):
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            if v:
                out.append(b | 0x80)
            else:
                out.append(b)
                return bytes(out)
    if wire == 0:
        return varint(num << 3) + varint(payload)
    return varint((num << 3) | 2) + varint(len(payload)) + payload


def gen_files(g):
    def add(name, raw, expect=(2,), fn="model.onnx", note="", has=None):
        return g.add("file_" + name, "file", raw=raw, filename=fn, expect=expect,
                     has=[os.path.basename(fn)] if has is None else has, note=note)

    good = base_relu().SerializeToString()
    add("empty", b"", note="a 0-byte model")
    add("garbage", b"\x08\x07\x12\xff\xff\xff", note="not a ModelProto")
    add("text", b"this is not a model\n", note="a text file")
    add("zeros", b"\0" * 4096, note="4 KB of zeros")
    for cut in (1, len(good) // 3, len(good) // 2, len(good) - 1):
        add("truncated_%d" % cut, good[:cut], note="a valid model cut to %d of %d bytes" % (cut, len(good)))
    add("length_2e62", pb_field(1, 0, 8) + b"\x3a" + bytes([0xff] * 8) + b"\x3f", note="graph's length claims 2^62")
    add("varint_overlong", b"\x08" + b"\xff" * 12, note="a varint of 12 bytes")
    add("wrong_wiretype", pb_field(7, 0, 5) + pb_field(1, 0, 8), note="graph as a varint")
    # nested subgraphs, 20000 deep: must not overflow the stack
    gbytes = b""
    for _ in range(20000):
        attr = pb_field(1, 2, b"then_branch") + pb_field(20, 0, 5) + pb_field(6, 2, gbytes)
        nd = pb_field(4, 2, b"If") + pb_field(5, 2, attr)
        gbytes = pb_field(1, 2, nd)
    deep = pb_field(1, 0, 8) + pb_field(8, 2, pb_field(2, 0, 13)) + pb_field(7, 2, gbytes)
    add("nested_20000", deep, expect=(2, 3), note="If subgraphs nested 20000 deep (invalid: no outputs; 3 for If "
                                                  "is acceptable): never a stack overflow")
    d = g.case_dir("file_directory")
    os.makedirs(os.path.join(d, "model.onnx"), exist_ok=True)
    g.names.add("file_directory")
    g.cases.append(dict(name="file_directory", cls="file", tool="ftaxc", model="model.onnx", args=[], expect=[4],
                        has=["model.onnx"], lacks=[], eager=True, generated=False,
                        note="a directory given as the model: I/O"))
    g.names.add("file_missing")
    g.case_dir("file_missing")
    g.cases.append(dict(name="file_missing", cls="file", tool="ftaxc", model="missing.onnx", args=[], expect=[4],
                        has=["missing.onnx"], lacks=[], eager=True, generated=False, note="no such file: I/O"))


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: gen_malformed.py OUTDIR\n")
        return 1
    root = os.path.abspath(sys.argv[1])
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    g = Gen(root)
    # the model every program case runs against: y = x + w, x float [2,3]
    pb = os.path.join(root, "cases", "program_base")
    os.makedirs(pb)
    base = mk([node("Add", ["x", "w"], ["y"], "add_node")], [vi("x", F, [2, 3])], [vi("y", F, [2, 3])],
              [init("w", np.ones((2, 3), np.float32))])
    onnx.checker.check_model(base, full_check=True)
    with open(os.path.join(pb, "model.onnx"), "wb") as f:
        f.write(base.SerializeToString())
    gen_inject(g)
    gen_sweep(g)
    gen_sizes(g)
    gen_invalid(g)
    gen_exitclass(g)
    gen_messages(g)
    gen_extdata(g)
    gen_files(g)
    gen_round2(g)
    with open(os.path.join(root, "cases.json"), "w") as f:
        json.dump({"policy": __doc__[__doc__.index("Exit-code policy"):__doc__.index("A crash")].strip(),
                   "classes": CLASSES, "program_base": "program_base/model.onnx", "cases": g.cases}, f, indent=1)
    counts = {}
    for c in g.cases:
        counts[c["cls"]] = counts.get(c["cls"], 0) + 1
    sys.stdout.write("%d cases (%s)\n" % (len(g.cases), ", ".join("%s %d" % kv for kv in counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
