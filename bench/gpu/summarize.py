#!/usr/bin/env python3
"""Turn bench/gpu_run.sh's results.jsonl into a Markdown table (stdout).

Rows: system (ftax compiled, PyTorch), configuration; columns: median GPU compute time, median
host latency without and with data transfers, enqueue time, and the output error against the
reference. Times in milliseconds."""
import json
import sys


def med(r, key):
    v = r.get(key)
    return "%.3f" % v["median"] if isinstance(v, dict) else "-"


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
    models = []
    for r in rows:
        if r.get("model") not in models:
            models.append(r.get("model"))
    for m in models:
        print("### %s\n" % m)
        print("| system | config | GPU compute | latency, no transfers | latency, with transfers | enqueue | max abs err |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for r in rows:
            if r.get("model") != m:
                continue
            if "error" in r:
                print("| %s | %s | failed: %s | | | | |" % (r.get("system"), r.get("config", r.get("mode", "")), r["error"][:80]))
                continue
            if r.get("system") == "ftax":
                nodt, wdt = r.get("nodt", {}), r.get("wdt", {})
                print("| ftax | %s | %s | %s | %s | %s | %s |" % (
                    r["config"], med(nodt, "gpu_compute_ms"), med(nodt, "host_latency_ms"), med(wdt, "host_latency_ms"),
                    med(nodt, "enqueue_ms"), r.get("max_abs_err", "-")))
            else:
                print("| torch %s | %s %s | %s | %s | %s | - | %.3g |" % (
                    r.get("torch", ""), r["mode"], r["precision"], med(r, "gpu_compute_ms"), med(r, "nodt_latency_ms"),
                    med(r, "host_latency_ms"), r.get("max_abs_err_vs_reference", float("nan"))))
        print()


if __name__ == "__main__":
    main()
