"""InferenceSession: compile (or find in the cache), load the shared library, run."""

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np

# ONNX element type codes -> (numpy dtype, ONNX Runtime's type string)
_DTYPES = {
    1: (np.float32, "tensor(float)"),
    2: (np.uint8, "tensor(uint8)"),
    3: (np.int8, "tensor(int8)"),
    4: (np.uint16, "tensor(uint16)"),
    5: (np.int16, "tensor(int16)"),
    6: (np.int32, "tensor(int32)"),
    7: (np.int64, "tensor(int64)"),
    9: (np.bool_, "tensor(bool)"),
    10: (np.float16, "tensor(float16)"),
    11: (np.float64, "tensor(double)"),
    12: (np.uint32, "tensor(uint32)"),
    13: (np.uint64, "tensor(uint64)"),
    16: (np.uint16, "tensor(bfloat16)"),  # no numpy bfloat16: the raw bits
}

# ftaxc's exit codes (ftaxc --help)
EXIT_CLASSES = {
    1: "usage",
    2: "invalid model or input",
    3: "unsupported model",
    4: "I/O or C compiler failure",
}

_PRECISIONS = ("fp32", "bf16")
_SYMBOL = "model"  # the API prefix of every cached library: model_init, model_run, ...


class CompileError(RuntimeError):
    """ftaxc refused the model or failed: exit_code and exit_class as ftaxc's exit codes say,
    message ftaxc's own words (its standard error)."""

    def __init__(self, exit_code, message, command):
        self.exit_code = exit_code
        self.exit_class = EXIT_CLASSES.get(exit_code, "failure")
        self.message = message
        self.command = command
        super().__init__("ftaxc exit %d (%s): %s" % (exit_code, self.exit_class, message.strip()))


class NodeArg:
    """An input or output as ONNX Runtime describes it: name, shape (the shape the model was
    compiled for: a list of ints, with the symbol's name, e.g. 'seq', where the plans of a
    multi-shape session differ), type ('tensor(float)', ...)."""

    def __init__(self, name, shape, type_, dtype):
        self.name = name
        self.shape = list(shape)
        self.type = type_
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


def find_ftaxc():
    """ftaxc: $FTAX_FTAXC, else ftaxc on the PATH, else build/ftaxc of the checkout this package
    sits in. FileNotFoundError when none is there."""
    env = os.environ.get("FTAX_FTAXC")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise FileNotFoundError("FTAX_FTAXC=%s is not an executable file" % env)
        return env
    on_path = shutil.which("ftaxc")
    if on_path:
        return on_path
    checkout = Path(__file__).resolve().parents[2] / "build" / "ftaxc"
    if checkout.is_file() and os.access(str(checkout), os.X_OK):
        return str(checkout)
    raise FileNotFoundError(
        "ftaxc not found: set FTAX_FTAXC to its path, put it on the PATH, or build the checkout "
        "(cmake -S . -B build && cmake --build build --target ftaxc)")


def _sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _cache_root():
    root = os.environ.get("FTAX_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "ftax"


def _aligned_empty(shape, dtype):
    """A C-contiguous array, 64-byte aligned, with 64 bytes of room past its end (the generated
    kernels' rule for the buffers they are given, as the generated program's own)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + 128, dtype=np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off:off + nbytes].view(dtype).reshape(shape)


class _Lib:
    """The shared library of one compiled model, its API typed for ctypes."""

    def __init__(self, path):
        self.cdll = ctypes.CDLL(str(path))  # RTLD_LOCAL: every model's library keeps its own names
        P = _SYMBOL
        c_p, c_pp, c_char_p, c_int, c_size = (ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                              ctypes.c_int, ctypes.c_size_t)

        def fn(name, res, *args):
            f = getattr(self.cdll, "%s_%s" % (P, name))
            f.restype = res
            f.argtypes = list(args)
            return f

        self.model_open = fn("model_open", c_int, c_pp, c_char_p, c_char_p, c_size)
        self.model_close = fn("model_close", None, c_p)
        self.ctx_new = fn("ctx_new", c_int, c_pp, c_p, c_p, c_char_p, c_size)
        self.ctx_free = fn("ctx_free", None, c_p)
        self.ctx_set_threads = fn("ctx_set_threads", None, c_p, c_int)
        self.run_plan = fn("run_plan", c_int, c_p, c_int, c_pp, c_pp)
        self.num_inputs = fn("num_inputs", c_int)
        self.num_outputs = fn("num_outputs", c_int)
        self.num_plans = fn("num_plans", c_int)
        self.plan_name = fn("plan_name", c_char_p, c_int)
        self.plan_io_info = fn("plan_io_info", c_int, c_int, c_int, c_int, ctypes.POINTER(c_char_p),
                               ctypes.POINTER(c_int), ctypes.POINTER(c_int),
                               ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)))

    def describe(self, plan, is_output):
        args = []
        for i in range(self.num_outputs() if is_output else self.num_inputs()):
            name, dtype, rank, dims = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int(), ctypes.POINTER(ctypes.c_int64)()
            if self.plan_io_info(plan, is_output, i, ctypes.byref(name), ctypes.byref(dtype), ctypes.byref(rank),
                                 ctypes.byref(dims)):
                raise RuntimeError("the library does not describe its %s %d" % ("output" if is_output else "input", i))
            if dtype.value not in _DTYPES:
                raise RuntimeError("element type %d has no numpy type" % dtype.value)
            np_type, ort_type = _DTYPES[dtype.value]
            shape = [int(dims[d]) for d in range(rank.value)]
            args.append(NodeArg(name.value.decode("utf-8", "replace"), shape, ort_type, np_type))
        return args


class InferenceSession:
    """ONNX Runtime's InferenceSession, on a model ftaxc compiles for one shape.

    path       the .onnx file
    dims       {symbol: size} for the model's symbolic dimensions (ftaxc --dim SYM=N); a list of
               sizes ({"seq": [16, 32, 64, 128]}) compiles one plan per size into one library
               with one copy of the weights, and run() picks the plan from the inputs' shapes
    shapes     {input: shape} to pin whole input shapes (ftaxc --shape IN=AxB); a list of shapes
               makes plans likewise (every list as long)
    threads    threads each run uses for its kernels (None: every CPU the process may use)
    precision  'fp32' (default) or 'bf16'
    cflags     C compiler flags for ftaxc (--cflags; None: ftaxc's default)
    cache_dir  the cache folder (None: $FTAX_CACHE, else ~/.cache/ftax)
    ftaxc      the compiler (None: find_ftaxc())
    providers, sess_options: accepted for ONNX Runtime compatibility and ignored.

    run() may be called from any number of threads at once: each call takes a context (an arena)
    of its own from the session's pool and all of them share the one copy of the weights.
    Attributes after construction: cache_hit (bool), compile_seconds (0.0 on a hit),
    artifact_dir (the cache entry).
    """

    def __init__(self, path, dims=None, shapes=None, threads=None, precision="fp32", cflags=None, cache_dir=None,
                 ftaxc=None, providers=None, sess_options=None):
        self._model = None
        self._free = []
        self._all = []
        self._lock = threading.Lock()
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError("%s: no such model file" % path)
        if precision not in _PRECISIONS:
            raise ValueError("precision %r: expected one of %s" % (precision, ", ".join(_PRECISIONS)))
        if threads is not None and (not isinstance(threads, int) or threads < 0):
            raise ValueError("threads must be a non-negative int (0 or None: every CPU)")
        flags = []
        for sym, n in sorted((dims or {}).items()):
            sizes = list(n) if isinstance(n, (list, tuple)) else [n]
            for x in sizes:
                if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or x <= 0:
                    raise ValueError("dims[%r] = %r: expected a positive int or a list of them" % (sym, n))
            flags += ["--dim", "%s=%s" % (sym, ",".join(str(int(x)) for x in sizes))]
        for name, shape in sorted((shapes or {}).items()):
            many = len(shape) > 0 and all(isinstance(d, (list, tuple)) for d in shape)
            text = ",".join("x".join(str(int(d)) for d in s) for s in (shape if many else [shape]))
            flags += ["--shape", "%s=%s" % (name, text)]
        if precision != "fp32":
            flags += ["--precision", precision]
        if cflags is not None:
            flags += ["--cflags", cflags]
        self._threads = threads or 0
        compiler = ftaxc or find_ftaxc()
        self.artifact_dir, self.cache_hit, self.compile_seconds = self._compiled(path, flags, compiler, cache_dir)
        self._lib = _Lib(self.artifact_dir / ("lib%s.so" % _SYMBOL))
        self._plans = []  # per plan: (name, inputs, outputs)
        for p in range(self._lib.num_plans()):
            self._plans.append(((self._lib.plan_name(p) or b"").decode("utf-8", "replace"),
                                self._lib.describe(p, 0), self._lib.describe(p, 1)))
        self._by_shape = {tuple(tuple(a.shape) for a in ins): p for p, (_, ins, _) in enumerate(self._plans)}
        self._inputs = self._merged(1)
        self._outputs = self._merged(2)
        model = ctypes.c_void_p()
        err = ctypes.create_string_buffer(1024)
        rc = self._lib.model_open(ctypes.byref(model), str(self.artifact_dir / (_SYMBOL + ".weights")).encode(), err,
                                  len(err))
        if rc:
            raise RuntimeError("cannot load the compiled model (%d): %s" % (rc, err.value.decode(errors="replace")))
        self._model = model

    def _merged(self, which):
        """One NodeArg per input (output) over every plan: a dim the plans disagree on is named
        by the symbol it came from where that can be told, else 'dim_K' (as ONNX Runtime shows a
        symbolic dim)."""
        out = []
        for i, a in enumerate(self._plans[0][which]):
            shape = []
            for d, size in enumerate(a.shape):
                sizes = {plan[which][i].shape[d] for plan in self._plans}
                shape.append(size if len(sizes) == 1 else self._symbol_for(which, i, d))
            out.append(NodeArg(a.name, shape, a.type, a.dtype))
        return out

    def _symbol_for(self, which, i, d):
        """The symbol whose listed values are this dim's in every plan ('seq'), or 'dim_D'."""
        sizes = [str(plan[which][i].shape[d]) for plan in self._plans]
        values = [dict(item.split("=", 1) for item in name.split(",") if "=" in item) for name, _, _ in self._plans]
        for sym in values[0]:
            if [v.get(sym) for v in values] == sizes:
                return sym
        return "dim_%d" % d

    @property
    def plans(self):
        """The compiled shapes: one label per plan ('seq=16'; '' for a single shape)."""
        return [name for name, _, _ in self._plans]

    # ---- compile, or find in the cache ----

    @staticmethod
    def _compiled(path, flags, compiler, cache_dir):
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.strip()
        key = hashlib.sha256(json.dumps({
            "model": _sha256_file(path),
            "flags": flags,
            "ftaxc": version,
            "ftaxc_binary": _sha256_file(compiler),  # a rebuilt ftaxc of the same version compiles anew
        }, sort_keys=True).encode()).hexdigest()[:32]
        root = Path(cache_dir) if cache_dir else _cache_root()
        entry = root / key
        lib = entry / ("lib%s.so" % _SYMBOL)
        if lib.is_file() and (entry / (_SYMBOL + ".weights")).is_file():
            return entry, True, 0.0
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=key + ".", dir=str(root)))
        try:
            cmd = [compiler, os.path.abspath(path), "-o", str(work / _SYMBOL), "--shared"] + flags
            import time
            t0 = time.monotonic()
            p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
            seconds = time.monotonic() - t0
            if p.returncode:
                raise CompileError(p.returncode, p.stderr or p.stdout, cmd)
            (work / "command").write_text(" ".join(cmd) + "\n")
            try:
                os.rename(str(work), str(entry))  # whole, or not at all; another process may have won
            except OSError:
                if not lib.is_file():
                    raise
            return entry, False, seconds
        finally:
            if work.exists():
                shutil.rmtree(str(work), ignore_errors=True)

    # ---- ONNX Runtime's API ----

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named (None: all, in the model's order) as new numpy arrays the caller
        owns, for the inputs in input_feed ({name: array}). The inputs must have the names, the
        element types and the shapes get_inputs() gives; ValueError says which does not."""
        if self._model is None:
            raise RuntimeError("the session is closed")
        plan, ins = self._check_inputs(input_feed)
        want = self._output_indices(output_names)
        outs = [_aligned_empty(tuple(o.shape), o.dtype) for o in self._plans[plan][2]]
        in_ptrs = (ctypes.c_void_p * max(1, len(ins)))(*[a.ctypes.data for a in ins])
        out_ptrs = (ctypes.c_void_p * max(1, len(outs)))(*[a.ctypes.data for a in outs])
        ctx = self._take_context()
        try:
            rc = self._lib.run_plan(ctx, plan, in_ptrs, out_ptrs)  # ctypes drops the GIL for the call
        finally:
            with self._lock:
                self._free.append(ctx)
        if rc:
            raise RuntimeError("the run failed (%d)" % rc)
        return [outs[i] for i in want]

    def run_padded(self, output_names, input_feed, axis=1, mask="attention_mask", pad_value=0):
        """Model-specific help for sequence models (BERT-like encoders that take an attention
        mask): every input is padded along axis to the shortest compiled length that holds it
        (pad_value; the mask input, when the model has one by that name, with 0 so the padding
        is masked out), the plan of that length runs, and every output whose dim at axis is the
        padded length is cut back to the input's length. Whether masked padding leaves the other
        positions' results as they were depends on the model (it does for attention with a key
        mask; it does not for a model that pools or normalizes over the sequence without the
        mask): check yours. Results are close to, not bit-identical with, an unpadded run."""
        arrays = {k: np.asarray(v) for k, v in input_feed.items()}
        lengths = {a.shape[axis] for a in arrays.values() if a.ndim > axis}
        if len(lengths) != 1:
            raise ValueError("run_padded: the inputs disagree on their length along axis %d: %s" % (axis, sorted(lengths)))
        n = lengths.pop()
        fits = []
        for p, (_, ins, _) in enumerate(self._plans):
            shapes = {arg.name: arg.shape for arg in ins}
            if all(k in shapes and a.ndim == len(shapes[k]) and shapes[k][axis] >= n and
                   all(shapes[k][d] == a.shape[d] for d in range(a.ndim) if d != axis) for k, a in arrays.items()):
                fits.append((ins[0].shape[axis], p))
        if not fits:
            raise ValueError("run_padded: no plan holds length %d along axis %d; the plans are: %s"
                             % (n, axis, ", ".join(self.plans)))
        target = min(fits)[0]
        padded = {}
        for k, a in arrays.items():
            widths = [(0, 0)] * a.ndim
            widths[axis] = (0, target - n)
            padded[k] = np.pad(a, widths, constant_values=0 if k == mask else pad_value)
        outs = self.run(output_names, padded)
        return [o[(slice(None),) * axis + (slice(0, n),)] if o.ndim > axis and o.shape[axis] == target and target != n
                else o for o in outs]

    def _check_inputs(self, feed):
        if not isinstance(feed, dict):
            raise TypeError("input_feed must be a dict {input name: numpy array}")
        names = [i.name for i in self._inputs]
        unknown = [k for k in feed if k not in names]
        missing = [n for n in names if n not in feed]
        if unknown or missing:
            raise ValueError("input_feed: %s%s%s; the model's inputs are %s" % (
                "unknown input(s) %s" % ", ".join(map(repr, unknown)) if unknown else "",
                "; " if unknown and missing else "",
                "missing input(s) %s" % ", ".join(map(repr, missing)) if missing else "",
                ", ".join(map(repr, names))))
        arrays = []
        for arg in self._inputs:
            a = np.asarray(feed[arg.name])
            if a.dtype != arg.dtype:
                raise ValueError("input %r: element type %s, expected %s (%s)" % (arg.name, a.dtype, arg.dtype, arg.type))
            arrays.append(a)
        plan = self._by_shape.get(tuple(tuple(a.shape) for a in arrays))
        if plan is None:
            if len(self._plans) == 1:
                bad = next(i for i, a in enumerate(arrays) if list(a.shape) != self._inputs[i].shape)
                raise ValueError("input %r: shape %s, the model was compiled for %s (compile another with dims=/shapes=)"
                                 % (self._inputs[bad].name, list(arrays[bad].shape), self._inputs[bad].shape))
            raise ValueError("input shapes %s were not compiled; the plans are: %s" % (
                ", ".join("%s %s" % (arg.name, list(a.shape)) for arg, a in zip(self._inputs, arrays)),
                "; ".join("%s (%s)" % (name, ", ".join(str(x.shape) for x in ins)) for name, ins, _ in self._plans)))
        out = []
        for a in arrays:
            buf = _aligned_empty(a.shape, a.dtype)
            buf[...] = a
            out.append(buf)
        return plan, out

    def _output_indices(self, output_names):
        names = [o.name for o in self._outputs]
        if output_names is None:
            return list(range(len(names)))
        idx = []
        for n in output_names:
            if n not in names:
                raise ValueError("output %r: the model's outputs are %s" % (n, ", ".join(map(repr, names))))
            idx.append(names.index(n))
        return idx

    def _take_context(self):
        with self._lock:
            if self._free:
                return self._free.pop()
        ctx = ctypes.c_void_p()
        err = ctypes.create_string_buffer(1024)
        rc = self._lib.ctx_new(ctypes.byref(ctx), self._model, None, err, len(err))
        if rc:
            raise MemoryError("cannot make a context (%d): %s" % (rc, err.value.decode(errors="replace")))
        if self._threads:
            self._lib.ctx_set_threads(ctx, self._threads)
        with self._lock:
            self._all.append(ctx)
        return ctx

    @property
    def num_contexts(self):
        """Contexts (arenas) made so far: at most the number of run() calls at once."""
        return len(self._all)

    def close(self):
        """Frees the contexts and the weights (also done when the session is collected). Not while
        a run is going on."""
        with self._lock:
            ctxs, self._all, self._free = self._all, [], []
            model, self._model = self._model, None
        for c in ctxs:
            self._lib.ctx_free(c)
        if model is not None:
            self._lib.model_close(model)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
