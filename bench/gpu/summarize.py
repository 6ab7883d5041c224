#!/usr/bin/env python3
"""Turn bench/gpu_run.sh's results.jsonl into Markdown tables (stdout).

Per model, one row per system and configuration, in a fixed order (ftax eager; ftax compiled
fp32, + CUDA graph, tf32 + graph, fp16 + graph; PyTorch eager, TorchScript, torch.compile
reduce-overhead, fp32 and fp16), every one present even when it was not measured (then it says
why). Columns: median host latency with data transfers (the comparable figure: inputs copied in,
the model, outputs copied back, synchronised), its ratio to ftax eager, median GPU time, median
latency without transfers, enqueue time, and the output error against the reference. Then the
framework tax of ftax-eager on the GPU: its --profile run split into GPU kernel time and
overhead (the paper's Figure 3). Times in milliseconds.

  python3 bench/gpu/summarize.py RESULTS.jsonl
"""
import json
import sys

# (label, predicate on a results.jsonl line)
ROWS = [
    ("ftax eager", lambda r: r.get("system") == "ftax-eager"),
    ("ftax compiled fp32", lambda r: r.get("system") == "ftax" and r.get("config") == "fp32"),
    ("ftax compiled fp32 + CUDA graph", lambda r: r.get("system") == "ftax" and r.get("config") == "fp32+graph"),
    ("ftax compiled tf32 + CUDA graph", lambda r: r.get("system") == "ftax" and r.get("config") == "tf32+graph"),
    ("ftax compiled fp16 + CUDA graph", lambda r: r.get("system") == "ftax" and r.get("config") == "fp16+graph"),
    ("PyTorch eager fp32", lambda r: torch_is(r, "eager", "fp32")),
    ("PyTorch eager fp16 (autocast)", lambda r: torch_is(r, "eager", "fp16")),
    ("TorchScript fp32", lambda r: torch_is(r, "script", "fp32")),
    ("torch.compile reduce-overhead fp32", lambda r: torch_is(r, "compile", "fp32")),
    ("torch.compile reduce-overhead fp16", lambda r: torch_is(r, "compile", "fp16")),
]


def torch_is(r, mode, precision):
    return r.get("system") == "torch" and r.get("mode") == mode and r.get("precision") == precision


def med(obj, key):
    v = (obj or {}).get(key)
    if isinstance(v, dict) and isinstance(v.get("median"), (int, float)):
        return float(v["median"])
    return None


def num(v):
    return float(v) if isinstance(v, (int, float)) else None


def fmt(v, digits=3):
    return "%.*f" % (digits, v) if v is not None else "—"


def figures(r):
    """host latency, GPU time, latency without transfers, enqueue, error, note: or None when
    the line holds no measurement."""
    sysname = r.get("system")
    if sysname == "ftax":
        nodt, wdt = r.get("nodt") or {}, r.get("wdt") or {}
        host = med(wdt, "host_latency_ms")
        if host is None and med(nodt, "host_latency_ms") is None:
            return None
        return (host, med(nodt, "gpu_compute_ms") or med(wdt, "gpu_compute_ms"), med(nodt, "host_latency_ms"),
                med(nodt, "enqueue_ms"), (r.get("max_abs_err") or "").strip() or "—", "")
    if sysname == "ftax-eager":
        b, p = r.get("bench") or {}, r.get("profile") or {}
        p = p.get("profile", p)
        host = num(b.get("median_ms"))
        if host is None:
            return None
        return (host, num(p.get("kernel_ms")), None, None, (r.get("max_abs_err") or "").strip() or "—",
                "GPU time: its kernels' sum (--profile)")
    if sysname == "torch":
        host = med(r, "host_latency_ms")
        if host is None:
            return None
        err = r.get("max_abs_err_vs_reference")
        return (host, med(r, "gpu_compute_ms"), med(r, "nodt_latency_ms"), None,
                "%.3g" % err if isinstance(err, (int, float)) else "—", "torch %s" % r.get("torch", ""))
    return None


def why_not(r):
    for k in ("not_measured", "error"):
        if r.get(k):
            return ("not measured: " if k == "not_measured" else "failed: ") + str(r[k])[:160]
    return "no timings in its output"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = []
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    machine = next((r for r in rows if r.get("system") == "machine"), {})
    no_device = machine.get("no_device")
    torch_missing = next((r.get("not_measured") for r in rows if r.get("system") == "torch" and "model" not in r), None)
    models = []
    for r in rows:
        m = r.get("model")
        if m and m not in models:
            models.append(m)
    for m in ("bert_base", "resnet50"):
        if m not in models:
            models.append(m)

    measured = [r for r in rows if r.get("model") and figures(r)]
    if not measured:
        print("**Nothing was measured**: %s.\n" % (
            (no_device if no_device.startswith("no CUDA device") else "no CUDA device (%s)" % no_device)
            if no_device else "see the reasons below and log.txt"))
    if machine.get("dry"):
        print("This was a dry run (FTAX_GPU_RUN_DRY=1): the script went on without a device to check itself.\n")
    if machine.get("device"):
        print("Device: %s%s.\n" % (machine["device"], ", --quick" if machine.get("quick") else ""))

    for m in models:
        shape = {"bert_base": " (batch 1, seq 128)", "resnet50": " (batch 1)"}.get(m, "")
        print("### %s%s\n" % (m, shape))
        print("| system | host latency | ftax eager / this | GPU time | latency, no transfers | enqueue | max abs err | note |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        mine = [r for r in rows if r.get("model") == m]
        export = next((r["error"] for r in mine if r.get("system") == "export" and r.get("error")), None)
        eager = next((figures(r) for r in mine if ROWS[0][1](r) and figures(r)), None)
        base = eager[0] if eager else None
        seen = set()
        for label, pred in ROWS:
            hits = [r for r in mine if pred(r)]
            seen.update(id(r) for r in hits)
            got = next((figures(r) for r in hits if figures(r)), None)
            if got:
                host, gpu, nodt, enq, err, note = got
                ratio = "×%.2f" % (base / host) if base and host else "—"
                print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    label, fmt(host), ratio, fmt(gpu), fmt(nodt), fmt(enq), err, note))
                continue
            if hits:
                why = why_not(hits[-1])
            elif label.startswith(("PyTorch", "TorchScript", "torch.compile")) and torch_missing:
                why = "not measured: " + torch_missing
            elif no_device:
                why = "not measured: no CUDA device"
            elif export:
                why = "not measured: " + export
            else:
                why = "not run (log.txt: out of time, --quick, or a step before it failed)"
            print("| %s | — | — | — | — | — | — | %s |" % (label, why.replace("|", "\\|")))
        for r in mine:  # anything else the run recorded
            if id(r) in seen or not figures(r):
                continue
            host, gpu, nodt, enq, err, note = figures(r)
            label = "%s %s %s" % (r.get("system"), r.get("mode", r.get("config", "")), r.get("precision", ""))
            ratio = "×%.2f" % (base / host) if base and host else "—"
            print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (label.strip(), fmt(host), ratio, fmt(gpu), fmt(nodt),
                                                                fmt(enq), err, note))
        print()

    print("Host latency: median wall time of one inference with the inputs copied in from host memory and the "
          "outputs copied back, synchronised (the figure the systems share). GPU time: CUDA events around the "
          "whole model for the compiled programs and PyTorch (idle gaps between kernels included), the sum of "
          "the kernels' own times for ftax eager. \"ftax eager / this\" above 1: faster than ftax eager.\n")

    prof_rows = []
    for m in models:
        r = next((r for r in rows if r.get("model") == m and r.get("system") == "ftax-eager" and figures(r)), None)
        if not r:
            continue
        p = (r.get("profile") or {}).get("profile", r.get("profile") or {})
        wall, kern = num(p.get("wall_ms")), num(p.get("kernel_ms"))
        if wall is None or kern is None:
            continue
        graph = next((figures(x) for x in rows if x.get("model") == m and x.get("system") == "ftax"
                      and x.get("config") == "fp32+graph" and figures(x)), None)
        ops = sorted(p.get("ops") or [], key=lambda o: -(num(o.get("kernel_ms")) or 0))[:3]
        prof_rows.append("| %s | %s | %s | %s | %.0f%% | %s | %s |" % (
            m, fmt(wall), fmt(kern), fmt(wall - kern), 100.0 * (wall - kern) / wall if wall > 0 else 0.0,
            fmt(graph[1]) if graph else "—",
            ", ".join("%s %.0f%%" % (o.get("op"), 100.0 * (num(o.get("share")) or 0)) for o in ops) or "—"))
    print("### The framework tax on the GPU (ftax-eager --profile)\n")
    if prof_rows:
        print("| model | wall per run | GPU kernels | overhead | overhead share | compiled fp32 + graph: GPU time | top kernels |")
        print("|---|---:|---:|---:|---:|---:|---|")
        print("\n".join(prof_rows))
        print("\nOverhead is wall minus kernel time: shape inference, allocation, dispatch and launches, and the "
              "waits for the GPU. The profile's timers slow a run a little, so its wall time runs above the "
              "latency in the table before.\n")
    else:
        why = next((why_not(r) for r in rows if r.get("system") == "ftax-eager" and not figures(r)), None)
        if not why and no_device:
            why = "not measured: no CUDA device"
        print("Not measured%s.\n" % (": " + why[len("not measured: "):] if why and why.startswith("not measured: ")
                                     else " (%s)" % why if why else ""))


if __name__ == "__main__":
    main()
