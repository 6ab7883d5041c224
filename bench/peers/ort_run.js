#!/usr/bin/env node
// ONNX Runtime (CPU) as a reference: run a model once on TensorProto files and write its
// outputs as TensorProto files (output_0.pb ...), for build/ftax-compare.
//   node ort_run.js MODEL.onnx INPUT.pb... --output-dir DIR [--threads N]
// Inputs are bound in the order given to the model's inputs. Only raw_data (and packed
// float/int64 fields) are read: what torch exports and ftax programs write.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// ONNX TensorProto.DataType <-> onnxruntime-node types
const TYPES = { 1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool' };
const ARRAYS = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array };

function varint(buf, at) {
  let v = 0n, shift = 0n;
  for (;;) {
    const b = buf[at.i++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
    shift += 7n;
  }
}

function readTensor(file) {
  const buf = fs.readFileSync(file);
  const at = { i: 0 };
  const t = { dims: [], type: 1, raw: null, floats: [], int64s: [] };
  while (at.i < buf.length) {
    const key = Number(varint(buf, at)), field = key >> 3, wire = key & 7;
    if (wire === 0) {
      const v = varint(buf, at);
      if (field === 1) t.dims.push(Number(v));
      else if (field === 2) t.type = Number(v);
      else if (field === 7) t.int64s.push(BigInt.asIntN(64, v));
    } else if (wire === 2) {
      const n = Number(varint(buf, at)), body = buf.subarray(at.i, at.i + n);
      at.i += n;
      if (field === 9) t.raw = body;
      else if (field === 1) { const a = { i: 0 }; while (a.i < body.length) t.dims.push(Number(varint(body, a))); }
      else if (field === 4) for (let j = 0; j < n; j += 4) t.floats.push(body.readFloatLE(j));
      else if (field === 7) { const a = { i: 0 }; while (a.i < body.length) t.int64s.push(BigInt.asIntN(64, varint(body, a))); }
    } else if (wire === 5) {
      if (field === 4) t.floats.push(buf.readFloatLE(at.i));
      at.i += 4;
    } else if (wire === 1) at.i += 8;
    else throw new Error(`${file}: unexpected wire type ${wire}`);
  }
  const type = TYPES[t.type];
  if (!type) throw new Error(`${file}: element type ${t.type} not supported here`);
  const A = ARRAYS[type];
  let data;
  if (t.raw) data = new A(t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + t.raw.length));
  else if (type === 'int64') data = BigInt64Array.from(t.int64s);
  else data = A.from(t.floats);
  return new ort.Tensor(type, data, t.dims);
}

function putVarint(out, v) {
  v = BigInt.asUintN(64, BigInt(v));
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
}

function writeTensor(file, name, t) {
  const code = Number(Object.keys(TYPES).find((k) => TYPES[k] === t.type));
  const head = [];
  for (const d of t.dims) { head.push(0x08); putVarint(head, d); }
  head.push(0x10); putVarint(head, code);
  const nm = Buffer.from(name);
  head.push(0x42); putVarint(head, nm.length);
  const raw = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const tail = [0x4a];
  putVarint(tail, raw.length);
  fs.writeFileSync(file, Buffer.concat([Buffer.from(head), nm, Buffer.from(tail), raw]));
}

async function main() {
  const argv = process.argv.slice(2);
  let model = null, dir = null, threads = 1;
  const inputs = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--output-dir') dir = argv[++i];
    else if (argv[i] === '--threads') threads = Number(argv[++i]);
    else if (!model) model = argv[i];
    else inputs.push(argv[i]);
  }
  if (!model || !dir) throw new Error('usage: ort_run.js MODEL.onnx INPUT.pb... --output-dir DIR [--threads N]');
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const feeds = {};
  s.inputNames.forEach((n, i) => { feeds[n] = readTensor(inputs[i]); });
  const r = await s.run(feeds);
  fs.mkdirSync(dir, { recursive: true });
  s.outputNames.forEach((n, i) => writeTensor(path.join(dir, `output_${i}.pb`), n, r[n]));
}

main().catch((e) => { console.error(`ort_run.js: ${e.message}`); process.exit(1); });
