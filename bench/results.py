"""What bench/sweep, bench/plot and bench/report share: the modes, the CSV layout and reading it.

The CSV is append-only: a resumed or retried sweep appends rows, so a reader keeps the last row
for each (model, mode, batch, seq, threads).
"""

import csv
import math
import os
import re

# Every mode the sweep knows, in the order rows, tables and legends list them.
MODES = {
    "eager": "ftax-eager: the unoptimized graph op by op on ftax's kernels (shape inference, "
             "allocation and one dispatch per node on every run)",
    "compiled": "the program ftaxc writes for this one shape (folded, planned, no per-run shape logic)",
    "compiled_nofuse": "the same program built with ftaxc --no-fuse (fusion off)",
    "compiled_bf16": "the same program built with ftaxc --precision bf16 (MatMul, Gemm and Conv in bfloat16 "
                     "with fp32 accumulation)",
    "ort": "ONNX Runtime (CPU, onnxruntime-node) with graph optimizations 'all'",
    "ort_noopt": "ONNX Runtime with graph optimizations disabled (node by node)",
    "torch": "PyTorch eager (the torch module export.py exports), torch.inference_mode()",
    "torchscript": "torch.jit.freeze(torch.jit.trace(module)) at this shape",
    # GPU modes: latency is host wall time per inference with the inputs copied in from host
    # memory and the outputs copied back, synchronised (the compiled programs' host latency).
    "cuda_eager": "ftax-eager --device cuda: the graph op by op on the GPU (one launch per node, "
                  "caching device allocator, shape inference on every run)",
    "cuda_compiled": "ftaxc --target cuda, fp32 (no TF32), kernels launched one by one",
    "cuda_compiled_nofuse": "the same CUDA program built with ftaxc --no-fuse (fusion off)",
    "cuda_graph": "ftaxc --target cuda, fp32, --cuda-graph (one graph launch per run)",
    "cuda_fp16_graph": "ftaxc --target cuda --precision fp16 --cuda-graph",
    "torch_cuda": "PyTorch eager on the GPU, fp32 (TF32 off), torch.inference_mode()",
    "torchscript_cuda": "torch.jit.freeze(torch.jit.trace(module)) on the GPU, fp32",
    "torch_compile_cuda": "torch.compile(module, mode=\"reduce-overhead\") on the GPU (CUDA graphs), fp32",
}
CUDA_MODES = [m for m in MODES if m.startswith("cuda_") or m.endswith("_cuda")]
# the default CPU group keeps fp32: bf16 is asked for by name (or with "all")
CPU_MODES = [m for m in MODES if m not in CUDA_MODES and m != "compiled_bf16"]
# --modes accepts these names for groups of modes
MODE_GROUPS = {"cpu": CPU_MODES, "cuda": CUDA_MODES, "all": list(MODES)}

# The note of a row that could not be measured on this machine (no CUDA device, a tool built
# without CUDA, torch without CUDA): nothing about the model. A sweep measures such rows again
# every time it runs, since the next machine may have what this one lacked.
NOT_MEASURED = "not measured: "

FIELDS = ["model", "mode", "batch", "seq", "threads", "median_ms", "p90_ms", "kernel_ms",
          "overhead_ms", "status", "note"]

# The framework-bound rule (see bench/README.md): a mode is compute-bound from the smallest
# measured batch b at which going to the next measured batch multiplies latency by at least
# GROWTH per doubling of the batch. log2(1.5) = 0.58: halfway, in exponent, between flat
# latency (framework-bound, L ~ b^0) and proportional latency (compute-bound, L ~ b^1).
GROWTH = 1.5


def results_path(out_dir):
    return os.path.join(out_dir, "results.csv")


def row_key(r):
    return (r["model"], r["mode"], int(r["batch"]), int(r["seq"]), int(r["threads"]))


def _num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def read_rows(path):
    """All rows of a results CSV, the last one winning per key, in first-seen order."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                k = row_key(r)
            except (KeyError, TypeError, ValueError):
                continue  # a torn last line from an interrupted write
            for c in ("median_ms", "p90_ms", "kernel_ms", "overhead_ms"):
                r[c] = _num(r.get(c))
            r["batch"], r["seq"], r["threads"] = k[2], k[3], k[4]
            rows.pop(k, None)
            rows[k] = r
    return rows


def not_measured(r):
    return r["status"] != "ok" and (r.get("note") or "").startswith(NOT_MEASURED)


def ok_rows(rows):
    return [r for r in rows.values() if r["status"] == "ok" and r["median_ms"] is not None]


def modes_in(rows):
    present = {r["mode"] for r in rows}
    return [m for m in MODES if m in present] + sorted(present - set(MODES))


def seq_label(seq):
    return "-" if seq == 0 else str(seq)


def growth_per_doubling(b0, l0, b1, l1):
    """Latency growth factor per doubling of the batch between two measured points."""
    return (l1 / l0) ** (1.0 / math.log2(b1 / b0))


def turning_point(points):
    """points: [(batch, latency)], any order. Returns (batch or None, [growth per step]).

    The batch is the smallest measured one from which latency grows by at least GROWTH per
    doubling up to the next measured batch; None when no step does (framework-bound over the
    whole range)."""
    pts = sorted(points)
    growth = [growth_per_doubling(b0, l0, b1, l1)
              for (b0, l0), (b1, l1) in zip(pts, pts[1:]) if l0 > 0 and b1 > b0]
    for (b0, _), g in zip(pts, growth):
        if g >= GROWTH:
            return b0, growth
    return None, growth


BERT_VARIANT = re.compile(r"bert_L(\d+)_H(\d+)$")


def bert_shape(model):
    """(layers, hidden) of a BERT variant of the zoo, or None."""
    if model == "bert_base":
        return (12, 768)
    m = BERT_VARIANT.match(model)
    return (int(m.group(1)), int(m.group(2))) if m else None
