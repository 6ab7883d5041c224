#!/usr/bin/env node
// ONNX Runtime (CPU) as a peer for KV-cache generation: greedy decoding with the prefill and
// decode graphs of bench/models/export.py (gpt2_kv*), one session each, the cache kept as the
// decode graph's present outputs fed back as its past inputs. Prints the new tokens and the time
// of every decode step as one JSON line.
//   node ort_generate.js PREFILL.onnx DECODE.onnx --prompt ID,ID,... --new N --max-len T
//                        [--threads N] [--opt all|disabled]
'use strict';
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const o = { files: [], threads: 1, opt: 'all', newTokens: 16 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--prompt') o.prompt = argv[++i].split(',').map((x) => BigInt(x));
    else if (a === '--new') o.newTokens = Number(argv[++i]);
    else if (a === '--max-len') o.maxLen = Number(argv[++i]);
    else if (a === '--threads') o.threads = Number(argv[++i]);
    else if (a === '--opt') o.opt = argv[++i];
    else o.files.push(a);
  }
  if (o.files.length !== 2 || !o.prompt || !o.maxLen) {
    throw new Error('usage: ort_generate.js PREFILL.onnx DECODE.onnx --prompt ID,... --new N --max-len T');
  }
  if (o.maxLen < o.prompt.length + o.newTokens - 1) throw new Error('--max-len is shorter than the prompt and the new tokens');
  return o;
}

function argmax(t) {
  let best = 0;
  for (let i = 1; i < t.data.length; i++) if (t.data[i] > t.data[best]) best = i;
  return BigInt(best);
}

// Prefill's present [1, H, P, D] copied into the first P slots of a zeroed [1, H, T, D] cache.
function padCache(t, maxLen) {
  const [b, h, p, d] = t.dims;
  const out = new Float32Array(b * h * maxLen * d);
  for (let i = 0; i < b * h; i++) out.set(t.data.subarray(i * p * d, (i + 1) * p * d), i * maxLen * d);
  return new ort.Tensor('float32', out, [b, h, maxLen, d]);
}

(async () => {
  const o = parseArgs(process.argv.slice(2));
  const opts = { intraOpNumThreads: o.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: o.opt === 'disabled' ? 'disabled' : 'all' };
  const prefill = await ort.InferenceSession.create(o.files[0], opts);
  const decode = await ort.InferenceSession.create(o.files[1], opts);
  const p = o.prompt.length;
  let out = await prefill.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(o.prompt), [1, p]) });
  const past = {};
  for (const name of decode.inputNames.filter((n) => n.startsWith('past_'))) {
    past[name] = padCache(out[name.replace('past_', 'present_')], o.maxLen);
  }
  const tokens = [argmax(out.logits)];
  const stepMs = [];
  for (let pos = p; tokens.length < o.newTokens; pos++) {
    const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.of(tokens[tokens.length - 1]), [1, 1]),
      position_ids: new ort.Tensor('int64', BigInt64Array.of(BigInt(pos)), [1, 1]), ...past };
    const t0 = process.hrtime.bigint();
    out = await decode.run(feeds);
    stepMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    for (const name of Object.keys(past)) past[name] = out[name.replace('past_', 'present_')];
    tokens.push(argmax(out.logits));
  }
  console.log(JSON.stringify({ program: `onnxruntime-node ${require('onnxruntime-node/package.json').version} opt=${o.opt}`,
    tokens: tokens.map(Number), step_ms: stepMs }));
})().catch((e) => { console.error(`error: ${e.message}`); process.exit(2); });
