#!/usr/bin/python3
"""PyTorch (CPU) as a peer: time a zoo model at one shape with the same statistics as ftax programs.

  /usr/bin/python3 bench/peers/torch_bench.py NAME [--dim SYM=N]... [--threads N] [--warmup N]
                   [--iters N] [--mode eager|script] [--json]
                   [--target-s S --min-iters N --max-iters N] [--max-run-s S]
  /usr/bin/python3 bench/peers/torch_bench.py --about      (versions and BLAS, as JSON)

NAME is a zoo model of bench/models/export.py (bert_base, resnet50, ...), or bert_L<N>_H<H> for
export.py's bert_scaled. The torch module is the one export.py exports (imported from it, built
with the same seed and initialisation), so torch runs the same network as the ONNX file.
Inputs are synthetic with the policy of ftax's --bench and ort_bench.js: floats uniform in
[-1, 1), integers 1.

--mode eager runs the module under torch.inference_mode(); --mode script runs
torch.jit.freeze(torch.jit.trace(module)) (traced at this shape, since the models read their
shapes at run time). The JSON line has the fields of ftax's --bench --json.

--target-s replaces --warmup/--iters by a time budget: the first warm-up run is timed, and the
iteration count is chosen so the timed runs take about S seconds (within --min-iters and
--max-iters; warm-up a tenth of that, 1 to 10). --max-run-s gives up (exit 5) when that first
run takes longer than S seconds, so one huge point cannot stall a sweep.
Exit codes: 0 ok, 1 usage, 3 NAME has no torch module, 5 too slow for --max-run-s.
"""

import argparse
import os
import re
import sys
import time
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))


def percentile(sorted_ms, q):
    """Linear interpolation between closest ranks, as ftax's cli.h and ort_bench.js do."""
    pos = q * (len(sorted_ms) - 1)
    lo = int(pos)
    fr = pos - lo
    if lo + 1 < len(sorted_ms):
        return sorted_ms[lo] * (1 - fr) + sorted_ms[lo + 1] * fr
    return sorted_ms[lo]


def zoo_entry(name):
    """(zoo key, export.py-like args) for NAME, or None when export.py cannot build it."""
    import export
    m = re.fullmatch(r"bert_L(\d+)_H(\d+)", name)
    if m:
        return "bert_scaled", types.SimpleNamespace(layers=int(m.group(1)), hidden=int(m.group(2)), seed=0)
    if name in export.ZOO and name != "bert_scaled":
        return name, types.SimpleNamespace(layers=None, hidden=None, seed=0)
    return None


def build_module(key, args):
    """The module export.py exports for KEY, with the same seed and initialisation."""
    import torch
    import export
    kind, ctor, in_names, _ = export.ZOO[key]
    torch.manual_seed(args.seed)
    model = ctor(args)
    size = export.IMAGE_SIZE.get(key, 224)
    if kind == "image":
        export.perturb_constant_parameters(model)
        export.calibrate_batchnorm(model, size, args.seed)
    else:
        export.init_transformer(model)
    model.eval()
    return model, kind, in_names, size


def synthetic_inputs(kind, in_names, dims, size):
    import torch
    batch = dims.get("batch", 1)
    if kind == "image":
        g = torch.Generator().manual_seed(12345)
        return (torch.rand(batch, 3, size, size, generator=g) * 2 - 1,)
    if "seq" not in dims:
        raise SystemExit("error: text model: dimension 'seq' not pinned; add --dim seq=N")
    return tuple(torch.ones(batch, dims["seq"], dtype=torch.int64) for _ in in_names)


def about():
    import json
    import torch
    cfg = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=(\w+)", cfg)
    lib = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
    print(json.dumps({"torch": torch.__version__, "blas_info": blas.group(1) if blas else "?",
                      "libblas": os.path.realpath(lib) if os.path.exists(lib) else ""}))
    return 0


def plan_iters(est_ms, target_s, min_iters, max_iters):
    """(warm-up, iterations) so the timed runs take about target_s (the sweep's rule too)."""
    n = int(round(target_s * 1000.0 / max(est_ms, 1e-3)))
    n = max(min_iters, min(max_iters, n))
    return max(1, min(10, int(round(n / 10.0)))), n


def main():
    if sys.argv[1:] == ["--about"]:
        return about()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name")
    p.add_argument("--dim", action="append", default=[], metavar="SYM=N")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--mode", choices=("eager", "script"), default="eager")
    p.add_argument("--json", action="store_true")
    p.add_argument("--target-s", type=float, default=None)
    p.add_argument("--min-iters", type=int, default=3)
    p.add_argument("--max-iters", type=int, default=1000)
    p.add_argument("--max-run-s", type=float, default=None)
    a = p.parse_args()
    dims = {}
    for d in a.dim:
        k, _, v = d.partition("=")
        if not v.isdigit():
            p.error("--dim %s: expected SYM=N" % d)
        dims[k] = int(v)
    a.iters = max(1, a.iters)

    import torch
    torch.set_num_threads(max(1, a.threads))
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set in this process
    entry = zoo_entry(a.name)
    if entry is None:
        print("error: %s: no torch module for this model (torch_bench.py knows the zoo of "
              "bench/models/export.py and bert_L<N>_H<H>)" % a.name, file=sys.stderr)
        return 3
    model, kind, in_names, size = build_module(*entry)
    inputs = synthetic_inputs(kind, in_names, dims, size)

    run = model
    warmup = a.warmup
    if a.mode == "script":
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        with torch.no_grad():
            run = torch.jit.freeze(torch.jit.trace(model, inputs, check_trace=False))
        # The profiling executor specialises a scripted graph on its first runs; those are
        # compilation, not inference.
        warmup = max(warmup, 3)

    ms = []
    done = 0  # warm-up runs so far
    with torch.inference_mode():
        if a.target_s is not None or a.max_run_s is not None:
            t0 = time.perf_counter()
            run(*inputs)
            first = time.perf_counter() - t0
            done = 1
            if a.mode == "script":  # the first scripted runs are compilation: time a later one
                run(*inputs)
                t0 = time.perf_counter()
                run(*inputs)
                first = time.perf_counter() - t0
                done = 3
            if a.max_run_s is not None and first > a.max_run_s:
                print("error: one run took %.1f s, over --max-run-s %g" % (first, a.max_run_s),
                      file=sys.stderr)
                return 5
            if a.target_s is not None:
                warmup, a.iters = plan_iters(first * 1e3, a.target_s, a.min_iters, a.max_iters)
        for _ in range(done, warmup):
            run(*inputs)
        warmup = max(warmup, done)
        t_all = time.perf_counter()
        for _ in range(a.iters):
            t0 = time.perf_counter()
            run(*inputs)
            ms.append((time.perf_counter() - t0) * 1e3)
        t_all = time.perf_counter() - t_all
    mean = sum(ms) / len(ms)
    ms.sort()
    r = {"program": "torch %s %s" % (torch.__version__, "jit.trace+freeze" if a.mode == "script" else "eager"),
         "warmup": warmup, "iters": a.iters, "threads": a.threads, "min_ms": ms[0], "mean_ms": mean,
         "median_ms": percentile(ms, 0.5), "p90_ms": percentile(ms, 0.9), "p99_ms": percentile(ms, 0.99),
         "max_ms": ms[-1], "throughput_per_s": a.iters / t_all}
    if a.json:
        import json
        print(json.dumps(r))
    else:
        print("%s: median %.4f ms, p90 %.4f ms, %.1f/s" % (r["program"], r["median_ms"], r["p90_ms"],
                                                          r["throughput_per_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
