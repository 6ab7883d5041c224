#!/usr/bin/python3
"""Greedy generation with a KV cache through ftax, and the per-token latency of the decode step.

  bench/generate.py DIR [--engines ftax,eager,ftax-gen,eager-gen,ort,torch] [--new N] [--max-len T]
                    [--build build] [--work DIR] [--bench] [--threads N] [--iters N] [--batch B]
                    [--json-out FILE]

DIR holds what `bench/models/export.py gpt2_kv[_tiny]` writes: prefill.onnx, decode.onnx and
reference/{prompt,tokens,logits}.pb (torch's greedy generation without a cache). Each engine
generates N new tokens (default: as many as the reference has) from the reference prompt:

  ftax   ftaxc compiles prefill.onnx once (batch 1, seq = prompt length) and decode.onnx once
         (batch 1, max_len = T slots, default prompt + N); the programs run step by step on
         TensorProto files, the decode program's present_* outputs fed back as its past_* inputs
  eager  ftax-eager runs the same two graphs the same way
  ftax-gen, eager-gen
         the decode program's (ftax-eager's) own driver, `--generate N --prompt FILE`: one
         process, decode graph only (the prompt goes in a token per step), the prompt's row
         repeated --batch times (default 1); prints the median time of a decode step
  ort    ONNX Runtime (bench/peers/ort_generate.js): the same graphs in one process
  torch  the exported torch modules (needs torch; DIR's name must be a KV_ZOO model)

Every engine's tokens must equal the reference tokens, and ftax's and eager's logits must match
torch's at every step (|a - b| <= atol + rtol |b|, --atol 1e-4 --rtol 1e-3 by default: GPT-2
small's 12 layers, whose projections export.py scales by 10, drift to about 8e-4 in float32 and
want --atol 2e-3); exit 1 otherwise. --bench then times one
decode step (batch B, T slots, synthetic inputs as every bench/ peer uses) with the compiled
program, ftax-eager and ONNX Runtime (bench/peers/ort_bench.js), adds the in-program drivers'
median step, and prints a markdown table (--json-out: its rows as JSON, for bench/paper).
Needs numpy and onnx (Debian's /usr/bin/python3); torch only for the torch engine.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import load_tensor, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def read_pb(path):
    return numpy_helper.to_array(load_tensor(path))


def write_pb(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def run(cmd, what):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit("%s failed (exit %d): %s\n%s" % (what, r.returncode, " ".join(cmd), r.stdout[-2000:]))
    return r.stdout


def pad_cache(present, max_len):
    """Prefill's present [B, H, P, D] into the first P slots of a zeroed [B, H, T, D] cache."""
    b, h, p, d = present.shape
    cache = np.zeros((b, h, max_len, d), dtype=np.float32)
    cache[:, :, :p] = present
    return cache


class Runner:
    """Runs one graph at fixed dims: a compiled program (ftax) or ftax-eager on .pb files."""

    def __init__(self, engine, model, dims, work, build):
        self.model, self.work, self.engine = model, work, engine
        self.dims = [x for kv in dims.items() for x in ("--dim", "%s=%d" % kv)]
        os.makedirs(work, exist_ok=True)
        if engine == "ftax":
            self.prog = os.path.join(work, "prog")
            # $FTAX_PROGRAM_CFLAGS: the program's compiler flags (the sanitizer build's tests)
            cflags = os.environ.get("FTAX_PROGRAM_CFLAGS")
            cflags = ["--cflags", cflags] if cflags else []
            ftaxc = os.path.join(build, "ftaxc")
            # rebuilt when the model or ftaxc is newer than the program
            if not os.path.exists(self.prog) or \
                    os.path.getmtime(self.prog) < max(os.path.getmtime(model), os.path.getmtime(ftaxc)):
                run([ftaxc, model, "-o", self.prog] + self.dims + cflags,
                    "ftaxc " + os.path.basename(model))
            self.cmd = [self.prog]
        else:
            self.cmd = [os.path.join(build, "ftax-eager"), model] + self.dims

    def __call__(self, named_inputs, n_out, threads):
        """named_inputs: [(name, array)] in graph order; returns the n_out outputs."""
        args = []
        for k, (name, a) in enumerate(named_inputs):
            path = os.path.join(self.work, "in_%d.pb" % k)
            write_pb(path, a, name)
            args.append(path)
        out = os.path.join(self.work, "out")
        shutil.rmtree(out, ignore_errors=True)
        run(self.cmd + args + ["--output-dir", out, "--threads", str(threads)],
            "%s %s" % (self.engine, os.path.basename(self.model)))
        return [read_pb(os.path.join(out, "output_%d.pb" % k)) for k in range(n_out)]


def cache_names(layers):
    return [(kv, i) for i in range(layers) for kv in ("key", "value")]


def generate_files(engine, a, prompt, layers):
    """Greedy generation through programs on .pb files: (tokens, logits per step)."""
    work = os.path.join(a.work, engine)
    p = prompt.shape[1]
    prefill = Runner(engine, os.path.join(a.dir, "prefill.onnx"), {"batch": 1, "seq": p},
                     os.path.join(work, "prefill-s%d" % p), a.build)
    decode = Runner(engine, os.path.join(a.dir, "decode.onnx"), {"batch": 1, "max_len": a.max_len},
                    os.path.join(work, "decode-m%d" % a.max_len), a.build)
    names = cache_names(layers)
    out = prefill([("input_ids", prompt)], 1 + len(names), a.threads)
    cache = [pad_cache(t, a.max_len) for t in out[1:]]
    logits = [out[0]]
    tokens = [int(np.argmax(out[0][0]))]
    for pos in range(p, p + a.new - 1):
        ins = [("input_ids", np.array([[tokens[-1]]], dtype=np.int64)),
               ("position_ids", np.array([[pos]], dtype=np.int64))]
        ins += [("past_%s_%d" % kv, c) for kv, c in zip(names, cache)]
        out = decode(ins, 1 + len(names), a.threads)
        cache = out[1:]
        logits.append(out[0])
        tokens.append(int(np.argmax(out[0][0])))
    return tokens, np.stack(logits, axis=1)


def generate_inprogram(engine, a, prompt):
    """The program's (or ftax-eager's) own driver: `--generate N --prompt FILE` runs the decode
    graph alone (the prompt goes in a token per step from an empty cache) in one process. The
    prompt's row is repeated --batch times; every row must come out the same."""
    work = os.path.join(a.work, engine)
    rows = np.repeat(prompt, a.batch, axis=0)
    dims = {"batch": a.batch, "max_len": a.max_len}
    decode = Runner(engine.split("-")[0], os.path.join(a.dir, "decode.onnx"), dims,
                    os.path.join(work, "decode-b%d-m%d" % (a.batch, a.max_len)), a.build)
    path = os.path.join(decode.work, "prompt.pb")
    write_pb(path, rows, "prompt")
    r = json.loads(run(decode.cmd + ["--generate", str(a.new), "--prompt", path, "--json",
                                     "--threads", str(a.threads)], engine).strip().splitlines()[-1])
    tokens = r["tokens"]
    if any(t != tokens[0] for t in tokens):
        print("%-9s rows differ: %s" % (engine, tokens))
        return None, r
    return tokens[0], r


def generate_ort(a, prompt):
    out = run(["node", os.path.join(HERE, "peers", "ort_generate.js"),
               os.path.join(a.dir, "prefill.onnx"), os.path.join(a.dir, "decode.onnx"),
               "--prompt", ",".join(str(int(t)) for t in prompt[0]), "--new", str(a.new),
               "--max-len", str(a.max_len), "--threads", str(a.threads)], "ort_generate.js")
    return json.loads(out.strip().splitlines()[-1])["tokens"], None


def generate_torch(a, prompt):
    sys.path.insert(0, os.path.join(HERE, "models"))
    import torch
    import export
    torch.set_num_threads(a.threads)
    gpt2 = export.build_kv_gpt2(os.path.basename(os.path.normpath(a.dir)))
    tokens = export.gpt2_greedy_cached(export.GPT2Prefill(gpt2), export.GPT2Decode(gpt2),
                                       torch.from_numpy(prompt.copy()), a.new, a.max_len)
    return tokens[0].tolist(), None


def check(engine, tokens, logits, ref_tokens, ref_logits, atol, rtol):
    """One line per engine; False when the tokens (or logits) differ from torch's."""
    ok = tokens == ref_tokens
    msg = "%-9s %s" % (engine, " ".join(map(str, tokens or [])))
    if logits is not None and ref_logits is not None:
        err = np.abs(logits - ref_logits) - (atol + rtol * np.abs(ref_logits))
        worst = float(np.max(np.abs(logits - ref_logits)))
        ok = ok and bool(np.all(err <= 0))
        msg += "  (logits: max |diff| %.2g)" % worst
    print(msg + ("" if ok else "  MISMATCH"))
    return ok


def bench_json(cmd, what):
    return json.loads(run(cmd, what).strip().splitlines()[-1])


def bench_decode(a, gen_runs):
    """Median and p90 of one decode step per engine, at batch B (--batch) and max_len T; the
    in-program drivers' own step times (gen_runs: engine -> their --json) are rows too."""
    decode = os.path.join(a.dir, "decode.onnx")
    dims = ["--dim", "batch=%d" % a.batch, "--dim", "max_len=%d" % a.max_len]
    common = ["--threads", str(a.threads), "--warmup", str(max(1, a.iters // 10)),
              "--iters", str(a.iters), "--json"]
    rows = []
    if "ftax" in a.engines or "ftax-gen" in a.engines:
        prog = Runner("ftax", decode, {"batch": a.batch, "max_len": a.max_len},
                      os.path.join(a.work, "ftax-gen", "decode-b%d-m%d" % (a.batch, a.max_len)), a.build)
        rows.append(("ftaxc program", bench_json(prog.cmd + ["--bench"] + common, "decode --bench")))
    if "eager" in a.engines or "eager-gen" in a.engines:
        rows.append(("ftax-eager", bench_json([os.path.join(a.build, "ftax-eager"), decode] + dims
                                              + ["--bench"] + common, "ftax-eager --bench")))
    if "ort" in a.engines:
        for opt in ("all", "disabled"):
            rows.append(("ONNX Runtime opt=%s" % opt,
                         bench_json(["node", os.path.join(HERE, "peers", "ort_bench.js"), decode]
                                    + dims + ["--opt", opt] + common, "ort_bench.js")))
    for engine, r in gen_runs.items():
        name = "ftaxc program --generate" if engine == "ftax-gen" else "ftax-eager --generate"
        rows.append((name, {"median_ms": r["decode_median_ms"], "p90_ms": float("nan")}))
    print("\ndecode step, batch %d, %d cache slots, %d thread(s), %d iterations:\n" %
          (a.batch, a.max_len, a.threads, a.iters))
    print("| engine | median ms/step | p90 ms | tokens/s |")
    print("|---|---:|---:|---:|")
    for name, r in rows:
        p90 = "%.3f" % r["p90_ms"] if r["p90_ms"] == r["p90_ms"] else "-"
        print("| %s | %.3f | %s | %.1f |" % (name, r["median_ms"], p90, 1e3 * a.batch / r["median_ms"]))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump([{"engine": name, "batch": a.batch, "max_len": a.max_len, "threads": a.threads,
                        "median_ms": r["median_ms"],
                        "p90_ms": r["p90_ms"] if r["p90_ms"] == r["p90_ms"] else None}
                       for name, r in rows], f)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="a gpt2_kv* folder of bench/models/export.py")
    p.add_argument("--engines", default="ftax,eager,ftax-gen,eager-gen,ort,torch")
    p.add_argument("--new", type=int, default=None, help="new tokens (default: the reference's)")
    p.add_argument("--max-len", type=int, default=None, help="cache slots (default prompt + new)")
    p.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--work", default=None, help="programs and step files (default bench/out/generate/NAME)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bench", action="store_true", help="time one decode step per engine")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--batch", type=int, default=1,
                   help="rows of the prompt for ftax-gen and eager-gen (the reference row repeated), "
                        "and the batch --bench times")
    p.add_argument("--json-out", help="--bench: also write the table's rows to this JSON file")
    p.add_argument("--atol", type=float, default=1e-4, help="logits tolerance, absolute (default 1e-4)")
    p.add_argument("--rtol", type=float, default=1e-3, help="logits tolerance, relative (default 1e-3)")
    a = p.parse_args()
    a.engines = [e for e in a.engines.split(",") if e]
    unknown = set(a.engines) - {"ftax", "eager", "ftax-gen", "eager-gen", "ort", "torch"}
    if unknown:
        p.error("unknown engine(s) %s" % ", ".join(sorted(unknown)))
    ref = os.path.join(a.dir, "reference")
    prompt = read_pb(os.path.join(ref, "prompt.pb"))
    ref_tokens = read_pb(os.path.join(ref, "tokens.pb"))[0].tolist()
    ref_logits = read_pb(os.path.join(ref, "logits.pb"))
    a.new = a.new or len(ref_tokens)
    if a.new > len(ref_tokens):
        p.error("the reference holds %d tokens; --new %d cannot be checked" % (len(ref_tokens), a.new))
    ref_tokens, ref_logits = ref_tokens[:a.new], ref_logits[:, :a.new]
    a.max_len = a.max_len or prompt.shape[1] + a.new
    if a.max_len < prompt.shape[1] + a.new - 1:
        p.error("--max-len %d holds fewer than the prompt and the new tokens" % a.max_len)
    a.work = a.work or os.path.join(HERE, "out", "generate", os.path.basename(os.path.normpath(a.dir)))
    import onnx
    layers = sum(i.name.startswith("past_key_") for i in
                 onnx.load(os.path.join(a.dir, "decode.onnx"), load_external_data=False).graph.input)
    print("prompt %s, %d new tokens, %d cache slots" % (" ".join(map(str, prompt[0])), a.new, a.max_len))
    print("%-9s %s" % ("torch", " ".join(map(str, ref_tokens))))
    ok, gen_runs = True, {}
    for engine in a.engines:
        if engine in ("ftax", "eager"):
            tokens, logits = generate_files(engine, a, prompt, layers)
        elif engine in ("ftax-gen", "eager-gen"):
            tokens, r = generate_inprogram(engine, a, prompt)
            gen_runs[engine] = r
            ok = check(engine, tokens, None, ref_tokens, None, a.atol, a.rtol) and ok
            print("%-9s decode step median %.3f ms (batch %d, prompt %.3f ms)"
                  % ("", r["decode_median_ms"], a.batch, r["prompt_ms"]))
            continue
        elif engine == "ort":
            tokens, logits = generate_ort(a, prompt)
        else:
            tokens, logits = generate_torch(a, prompt)
        ok = check(engine, tokens, logits, ref_tokens, ref_logits, a.atol, a.rtol) and ok
        sys.stdout.flush()
    if ok and a.bench:
        bench_decode(a, gen_runs)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
