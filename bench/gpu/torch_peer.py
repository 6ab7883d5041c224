#!/usr/bin/env python3
"""PyTorch peers for the GPU bench: the zoo model export.py builds (same seed, so the same
weights), on the GPU, timed like the ftax CUDA programs' --bench (trtexec-like statistics).

For each model and mode it prints one JSON line:
  mode      eager | script (torch.jit.freeze(torch.jit.trace(module)), fp32 only) |
            compile (torch.compile(mode="reduce-overhead"), CUDA graphs)
  precision fp32 (TF32 off in matmuls and cuDNN, as ftax's fp32) | tf32 | fp16 (autocast)
  host_latency_ms   inputs copied from pinned host memory, forward, outputs copied back, wait
  gpu_compute_ms    CUDA events around the forward, inputs already on the GPU
  nodt_latency_ms   wall clock of a forward with inputs on the GPU, synchronised
and checks torch's output against the data set's reference (max abs error).

  python3 bench/gpu/torch_peer.py --zoo DIR --model bert_base [--model resnet50] [--iters N]
"""
import argparse
import importlib.util
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ftax_export", os.path.join(HERE, "..", "models", "export.py"))
export = importlib.util.module_from_spec(spec)
spec.loader.exec_module(export)


def read_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def build(name, seed=0):
    """The model exactly as export.py exports it (see export_one)."""
    kind, ctor, in_names, out_names = export.ZOO[name]
    torch.manual_seed(seed)
    args = argparse.Namespace(seed=seed, layers=None, hidden=None, batch=1, seq=None, set=0)
    model = ctor(args)
    if kind != "image":
        export.init_transformer(model)
    if kind == "image":
        size = export.IMAGE_SIZE.get(name, 224)
        export.perturb_constant_parameters(model)
        export.calibrate_batchnorm(model, size, seed)
    return model.eval(), in_names, out_names


def stats(v):
    v = sorted(v)
    n = len(v)
    pct = lambda q: v[min(n - 1, int(round(q * (n - 1))))]
    return {"min": v[0], "mean": sum(v) / n, "median": pct(0.5), "p90": pct(0.9), "p99": pct(0.99), "max": v[-1]}


def run(name, zoo, mode, precision, warmup, iters):
    model, in_names, _ = build(name)
    dev = torch.device("cuda")
    model = model.to(dev)
    data = os.path.join(zoo, name, "test_data_set_0")
    host_in = [torch.from_numpy(np.array(read_pb(os.path.join(data, "input_%d.pb" % i)))).pin_memory() for i in range(len(in_names))]
    refs = []
    k = 0
    while os.path.exists(os.path.join(data, "output_%d.pb" % k)):
        refs.append(read_pb(os.path.join(data, "output_%d.pb" % k)))
        k += 1
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    dev_in = [x.to(dev, non_blocking=True) for x in host_in]
    fwd = model
    if mode == "compile":
        fwd = torch.compile(model, mode="reduce-overhead")
    elif mode == "script":
        with torch.no_grad():
            fwd = torch.jit.freeze(torch.jit.trace(model, tuple(dev_in), check_trace=False))
    # torch.compile's CUDA graphs reuse their output buffers: a new step says the last outputs
    # may be overwritten (they are copied out or dropped by then)
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None) if mode == "compile" else None

    def forward(xs):
        if mark:
            mark()
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16, enabled=precision == "fp16"):
            y = fwd(*xs)
        return y if isinstance(y, (tuple, list)) else (y,)

    t_first = time.perf_counter()
    ys = forward(dev_in)
    torch.cuda.synchronize()
    first_ms = (time.perf_counter() - t_first) * 1e3
    max_err = max(float(np.max(np.abs(y.float().cpu().numpy() - r))) for y, r in zip(ys, refs))
    for _ in range(warmup):
        forward(dev_in)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    gpu, nodt, host = [], [], []
    for _ in range(iters):  # inputs on the GPU
        t0 = time.perf_counter()
        e0.record()
        forward(dev_in)
        e1.record()
        torch.cuda.synchronize()
        nodt.append((time.perf_counter() - t0) * 1e3)
        gpu.append(e0.elapsed_time(e1))
    for _ in range(iters):  # from and to pinned host memory
        t0 = time.perf_counter()
        xs = [x.to(dev, non_blocking=True) for x in host_in]
        ys = forward(xs)
        outs = [y.to("cpu") for y in ys]
        torch.cuda.synchronize()
        host.append((time.perf_counter() - t0) * 1e3)
    return {"system": "torch", "model": name, "mode": mode, "precision": precision,
            "torch": torch.__version__, "device": torch.cuda.get_device_name(0), "warmup": warmup, "iters": iters,
            "first_run_ms": first_ms, "max_abs_err_vs_reference": max_err,
            "host_latency_ms": stats(host), "gpu_compute_ms": stats(gpu), "nodt_latency_ms": stats(nodt)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zoo", required=True)
    p.add_argument("--model", action="append", required=True)
    p.add_argument("--modes", default="eager,script,compile")
    p.add_argument("--precisions", default="fp32,fp16")
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--deadline", type=float, default=0, help="unix time after which no new run starts")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_peer.py: torch sees no CUDA device")
    for mode in a.modes.split(","):
        for name in a.model:
            for prec in a.precisions.split(","):
                if mode == "script" and prec != "fp32":
                    continue  # TorchScript is timed in fp32 only, next to eager fp32 (autocast under torch.jit is a separate path)
                if a.deadline and time.time() > a.deadline:
                    print("torch_peer.py: out of time, skipping %s %s %s" % (name, mode, prec), file=sys.stderr)
                    continue
                try:
                    r = run(name, a.zoo, mode, prec, a.warmup, a.iters)
                except Exception as e:  # a peer that fails is reported, the others still run
                    r = {"system": "torch", "model": name, "mode": mode, "precision": prec, "error": repr(e)[:500]}
                print(json.dumps(r), flush=True)
                torch._dynamo.reset() if hasattr(torch, "_dynamo") else None


if __name__ == "__main__":
    main()
