#!/usr/bin/python3
"""PyTorch as a peer: time a zoo model at one shape with the same statistics as ftax programs.

  /usr/bin/python3 bench/peers/torch_bench.py NAME [--dim SYM=N]... [--threads N] [--warmup N]
                   [--iters N] [--mode eager|script|compile] [--device cpu|cuda] [--json]
                   [--target-s S --min-iters N --max-iters N] [--max-run-s S]
  /usr/bin/python3 bench/peers/torch_bench.py --about      (versions, BLAS and GPU, as JSON)

NAME is a zoo model of bench/models/export.py (bert_base, resnet50, ...), or bert_L<N>_H<H> for
export.py's bert_scaled. The torch module is the one export.py exports (imported from it, built
with the same seed and initialisation), so torch runs the same network as the ONNX file.
Inputs are synthetic with the policy of ftax's --bench and ort_bench.js: floats uniform in
[-1, 1), integers 1.

--mode eager runs the module under torch.inference_mode(); --mode script runs
torch.jit.freeze(torch.jit.trace(module)) (traced at this shape, since the models read their
shapes at run time); --mode compile runs torch.compile(module, mode="reduce-overhead") (CUDA
graphs on a GPU). The JSON line has the fields of ftax's --bench --json.

--device cuda runs on the GPU in fp32 with TF32 off (as ftax's fp32 programs), and times what
ftax's CUDA programs call host latency: each run copies the inputs in from pinned host memory,
runs the model, copies the outputs back and waits for the GPU. The JSON adds gpu_compute_ms
(CUDA events around the model alone, as the programs' GPU compute). Without a CUDA device it
exits 6 saying why.

--target-s replaces --warmup/--iters by a time budget: the first warm-up run is timed, and the
iteration count is chosen so the timed runs take about S seconds (within --min-iters and
--max-iters; warm-up a tenth of that, 1 to 10). --max-run-s gives up (exit 5) when that first
run takes longer than S seconds, so one huge point cannot stall a sweep.
Exit codes: 0 ok, 1 usage, 3 NAME has no torch module, 5 too slow for --max-run-s,
6 --device cuda without a CUDA device.
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
    if kind == "speech":
        import export
        g = torch.Generator().manual_seed(12345)
        return (torch.rand(batch, export.AUDIO_SAMPLES, generator=g) * 2 - 1,)
    if "seq" not in dims:
        raise SystemExit("error: text model: dimension 'seq' not pinned; add --dim seq=N")
    return tuple(torch.ones(batch, dims["seq"], dtype=torch.int64) for _ in in_names)


def cuda_missing():
    """Why torch cannot run on a GPU here, or None when it can."""
    import torch
    if torch.version.cuda is None:
        return "torch %s was built without CUDA" % torch.__version__
    if not torch.cuda.is_available():
        return "no CUDA device (torch %s, built with CUDA %s, sees none)" % (torch.__version__, torch.version.cuda)
    return None


def about():
    import json
    import torch
    cfg = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=(\w+)", cfg)
    lib = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
    missing = cuda_missing()
    print(json.dumps({"torch": torch.__version__, "blas_info": blas.group(1) if blas else "?",
                      "libblas": os.path.realpath(lib) if os.path.exists(lib) else "",
                      "cuda": torch.version.cuda, "cuda_device": None if missing else torch.cuda.get_device_name(0),
                      "cuda_missing": missing}))
    return 0


def plan_iters(est_ms, target_s, min_iters, max_iters):
    """(warm-up, iterations) so the timed runs take about target_s (the sweep's rule too)."""
    n = int(round(target_s * 1000.0 / max(est_ms, 1e-3)))
    n = max(min_iters, min(max_iters, n))
    return max(1, min(10, int(round(n / 10.0)))), n


def one_run_cpu(run, inputs):
    """One inference on the CPU; returns the function that does it."""
    return lambda: run(*inputs)


def one_run_cuda(run, inputs, mode, gpu_ms):
    """One inference on the GPU as ftax's CUDA programs time it: inputs copied in from pinned
    host memory, the model, outputs copied back, wait. Appends the model's GPU time (CUDA
    events around it alone) to gpu_ms."""
    import torch
    dev = torch.device("cuda")
    host = [x.pin_memory() for x in inputs]
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # torch.compile's CUDA graphs reuse their output buffers: a new step says the previous
    # outputs (already copied out) may be overwritten.
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None) if mode == "compile" else None

    def once():
        xs = [x.to(dev, non_blocking=True) for x in host]
        if mark:
            mark()
        ev0.record()
        ys = run(*xs)
        ev1.record()
        ys = ys if isinstance(ys, (tuple, list)) else (ys,)
        outs = [y.to("cpu", non_blocking=True) for y in ys if isinstance(y, torch.Tensor)]
        torch.cuda.synchronize()
        gpu_ms.append(ev0.elapsed_time(ev1))
        return outs
    return once


def main():
    if sys.argv[1:] == ["--about"]:
        return about()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name")
    p.add_argument("--dim", action="append", default=[], metavar="SYM=N")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--mode", choices=("eager", "script", "compile"), default="eager")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
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
    cuda = a.device == "cuda"
    if cuda:
        missing = cuda_missing()
        if missing:
            print("error: %s" % missing, file=sys.stderr)
            return 6
        # fp32 as ftax's fp32 programs compute it: no TF32 in matmuls or convolutions
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
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
    if cuda:
        model = model.to("cuda")

    run = model
    # Runs before the timed ones that are not inference: the profiling executor specialises a
    # scripted graph on its first runs; torch.compile compiles on the first and records its CUDA
    # graphs on the next ones.
    prep = {"eager": 0, "script": 2, "compile": 3}[a.mode]
    warmup = max(a.warmup, prep + 1 if prep else 0)
    if a.mode == "script":
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        with torch.no_grad():
            xs = [x.to("cuda") for x in inputs] if cuda else inputs
            run = torch.jit.freeze(torch.jit.trace(model, tuple(xs), check_trace=False))
    elif a.mode == "compile":
        run = torch.compile(model, mode="reduce-overhead")

    gpu_ms = []
    once = one_run_cuda(run, inputs, a.mode, gpu_ms) if cuda else one_run_cpu(run, inputs)
    ms = []
    done = 0  # warm-up runs so far
    with torch.inference_mode():
        if a.target_s is not None or a.max_run_s is not None:
            for _ in range(prep):  # compilation, not inference: time a later run
                once()
            t0 = time.perf_counter()
            once()
            first = time.perf_counter() - t0
            done = prep + 1
            if a.max_run_s is not None and first > a.max_run_s:
                print("error: one run took %.1f s, over --max-run-s %g" % (first, a.max_run_s),
                      file=sys.stderr)
                return 5
            if a.target_s is not None:
                warmup, a.iters = plan_iters(first * 1e3, a.target_s, a.min_iters, a.max_iters)
        for _ in range(done, warmup):
            once()
        warmup = max(warmup, done)
        del gpu_ms[:]
        t_all = time.perf_counter()
        for _ in range(a.iters):
            t0 = time.perf_counter()
            once()
            ms.append((time.perf_counter() - t0) * 1e3)
        t_all = time.perf_counter() - t_all
    mean = sum(ms) / len(ms)
    ms.sort()
    what = {"eager": "eager", "script": "jit.trace+freeze", "compile": "compile(reduce-overhead)"}[a.mode]
    r = {"program": "torch %s %s%s" % (torch.__version__, what, " cuda" if cuda else ""),
         "warmup": warmup, "iters": a.iters, "threads": a.threads, "min_ms": ms[0], "mean_ms": mean,
         "median_ms": percentile(ms, 0.5), "p90_ms": percentile(ms, 0.9), "p99_ms": percentile(ms, 0.99),
         "max_ms": ms[-1], "throughput_per_s": a.iters / t_all}
    if cuda:
        g = sorted(gpu_ms)
        r["device"] = torch.cuda.get_device_name(0)
        r["gpu_compute_ms"] = {"min": g[0], "mean": sum(g) / len(g), "median": percentile(g, 0.5),
                               "p90": percentile(g, 0.9), "p99": percentile(g, 0.99), "max": g[-1]}
    if a.json:
        import json
        print(json.dumps(r))
    else:
        print("%s: median %.4f ms, p90 %.4f ms, %.1f/s%s" % (
            r["program"], r["median_ms"], r["p90_ms"], r["throughput_per_s"],
            ", GPU compute median %.4f ms" % r["gpu_compute_ms"]["median"] if cuda else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
