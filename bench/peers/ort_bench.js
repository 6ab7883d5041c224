#!/usr/bin/env node
// ONNX Runtime (CPU) as a peer: time a model at one shape with the same statistics as ftax
// programs. Inputs are synthetic with the same policy as ftax's --bench (floats uniform in
// [-1, 1), integers 1).
//   node ort_bench.js MODEL.onnx [--dim SYM=N]... [--threads N] [--warmup N] [--iters N]
//                    [--opt all|disabled] [--json]
'use strict';
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const o = { dims: {}, threads: 1, warmup: 10, iters: 100, opt: 'all', json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--dim') { const [k, v] = argv[++i].split('='); o.dims[k] = Number(v); }
    else if (a === '--threads') o.threads = Number(argv[++i]);
    else if (a === '--warmup') o.warmup = Number(argv[++i]);
    else if (a === '--iters') o.iters = Number(argv[++i]);
    else if (a === '--opt') o.opt = argv[++i];
    else if (a === '--json') o.json = true;
    else if (!o.model) o.model = a;
    else throw new Error(`unexpected argument ${a}`);
  }
  if (!o.model) throw new Error('usage: ort_bench.js MODEL.onnx [--dim SYM=N]... [--threads N] [--opt all|disabled]');
  return o;
}

function synthetic(meta, dims) {
  const shape = meta.shape.map((d) => {
    if (typeof d === 'number' && d >= 0) return d;
    if (!(d in dims)) throw new Error(`input ${meta.name}: dimension '${d}' not pinned; add --dim ${d}=N`);
    return dims[d];
  });
  const n = shape.reduce((a, b) => a * b, 1);
  let s = 12345;
  const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return (s >>> 8) / (1 << 24) * 2 - 1; };
  switch (meta.type) {
    case 'float32': return new ort.Tensor('float32', Float32Array.from({ length: n }, rnd), shape);
    case 'int64': return new ort.Tensor('int64', new BigInt64Array(n).fill(1n), shape);
    case 'int32': return new ort.Tensor('int32', new Int32Array(n).fill(1), shape);
    case 'bool': return new ort.Tensor('bool', new Uint8Array(n).fill(1), shape);
    default: throw new Error(`input ${meta.name}: type ${meta.type} not handled`);
  }
}

function pct(sorted, q) {
  const pos = q * (sorted.length - 1), lo = Math.floor(pos), fr = pos - lo;
  return lo + 1 < sorted.length ? sorted[lo] * (1 - fr) + sorted[lo + 1] * fr : sorted[lo];
}

(async () => {
  const o = parseArgs(process.argv.slice(2));
  const session = await ort.InferenceSession.create(o.model, {
    intraOpNumThreads: o.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: o.opt === 'disabled' ? 'disabled' : 'all',
  });
  const feeds = {};
  for (const m of session.inputMetadata) feeds[m.name] = synthetic(m, o.dims);
  for (let i = 0; i < o.warmup; i++) await session.run(feeds);
  const ms = [];
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < o.iters; i++) {
    const a = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  const total = Number(process.hrtime.bigint() - t0) / 1e6;
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  ms.sort((a, b) => a - b);
  const r = { program: `onnxruntime-node ${require('onnxruntime-node/package.json').version} opt=${o.opt}`,
    warmup: o.warmup, iters: o.iters, threads: o.threads, min_ms: ms[0], mean_ms: mean,
    median_ms: pct(ms, 0.5), p90_ms: pct(ms, 0.9), p99_ms: pct(ms, 0.99), max_ms: ms[ms.length - 1],
    throughput_per_s: o.iters * 1000 / total };
  if (o.json) console.log(JSON.stringify(r));
  else console.log(`${r.program}: median ${r.median_ms.toFixed(4)} ms, p90 ${r.p90_ms.toFixed(4)} ms, ${r.throughput_per_s.toFixed(1)}/s`);
})().catch((e) => { console.error(`error: ${e.message}`); process.exit(2); });
