#!/usr/bin/python3
"""Small attention blocks for tests/unit/test_fuse_attention.c, exported by torch the way the
zoo's models are (opset 14, constant folding, dynamic batch and seq axes), so the graphs carry
the patterns the attention fusion must find, and the near-misses it must leave alone.

Run: /usr/bin/python3 tests/data/make_attention_models.py   (writes tests/data/attention/)
Deterministic: fixed seeds, so the same torch version writes the same files.

Each NAME/ holds model.onnx and two data sets, test_data_set_0 (batch 1) and test_data_set_1
(batch 2, another length), with torch's outputs. Inputs: x float [batch, seq, E], and for the
masked models attention_mask int64 [batch, seq] (the last row of batch 2 padded at the end).

  bert_div         BERT: q.k^T / sqrt(d) + (1 - mask) * finfo.min, softmax, .v, merged heads
  bert_mul_kperm   K permuted straight to [B,H,D,S]; * 1/sqrt(d); additive mask -10000
  split_scale      q and k each scaled by d^-1/4; no mask
  distilbert_where q / sqrt(d); masked_fill((mask == 0).view(B,1,1,S).expand_as(scores))
  gpt2_causal      Conv1D (addmm) QKV, split, Where(tril slice, w / sqrt(d), finfo.min)
  vit_mha          nn.MultiheadAttention(batch_first=True): packed in-projection, Slice, 3-D heads
  query_mask       additive mask per query row ([B,1,S,1]): broadcast along keys
  long_bert        seq 600: keys in several blocks (online softmax)
  long_gpt2        seq 520 causal: masked key blocks skipped
  nm_softmax_axis  near-miss: softmax over the query axis
  nm_mask_bigger   near-miss: the mask broadcasts the scores to a larger batch
  nm_probs_output  near-miss: the probabilities are an output too
  nm_scale_after   near-miss: (scores + mask) / sqrt(d)
  nm_runtime_scale near-miss: scores / temperature, an input
"""
import math
import os
import shutil

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention")
MIN = torch.finfo(torch.float32).min


def heads(t, h):
    return t.view(t.size(0), t.size(1), h, t.size(2) // h).permute(0, 2, 1, 3)


def merge(t):
    t = t.permute(0, 2, 1, 3).contiguous()
    return t.view(t.size(0), t.size(1), t.size(2) * t.size(3))


class Bert(nn.Module):
    """HF BertSelfAttention and the extended mask HF builds from attention_mask."""

    def __init__(self, e, h, scale="div", kperm=False, fill=MIN, softmax_dim=-1, scale_after=False,
                 probs_out=False):
        super().__init__()
        self.h, self.d = h, e // h
        self.q, self.k, self.v, self.o = (nn.Linear(e, e) for _ in range(4))
        self.scale, self.kperm, self.fill = scale, kperm, fill
        self.softmax_dim, self.scale_after, self.probs_out = softmax_dim, scale_after, probs_out

    def forward(self, x, attention_mask):
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * self.fill
        q, v = heads(self.q(x), self.h), heads(self.v(x), self.h)
        kx = self.k(x)
        if self.kperm:
            kt = kx.view(kx.size(0), kx.size(1), self.h, self.d).permute(0, 2, 3, 1)
        else:
            kt = heads(kx, self.h).transpose(-1, -2)
        s = torch.matmul(q, kt)
        if self.scale_after:
            s = (s + ext) / math.sqrt(self.d)
        else:
            s = s / math.sqrt(self.d) if self.scale == "div" else s * (1.0 / math.sqrt(self.d))
            s = s + ext
        p = F.softmax(s, dim=self.softmax_dim)
        y = self.o(merge(torch.matmul(p, v)))
        return (y, p) if self.probs_out else y


class SplitScale(nn.Module):
    def __init__(self, e, h):
        super().__init__()
        self.h, self.d = h, e // h
        self.q, self.k, self.v = (nn.Linear(e, e) for _ in range(3))

    def forward(self, x):
        c = self.d ** -0.25
        q, k, v = heads(self.q(x), self.h) * c, heads(self.k(x), self.h) * c, heads(self.v(x), self.h)
        return merge(torch.matmul(F.softmax(torch.matmul(q, k.transpose(-1, -2)), dim=-1), v))


class DistilBert(nn.Module):
    def __init__(self, e, h):
        super().__init__()
        self.h, self.d = h, e // h
        self.q, self.k, self.v, self.o = (nn.Linear(e, e) for _ in range(4))

    def forward(self, x, attention_mask):
        b, s = x.size(0), x.size(1)
        q, k, v = heads(self.q(x), self.h), heads(self.k(x), self.h), heads(self.v(x), self.h)
        q = q / math.sqrt(self.d)
        w = torch.matmul(q, k.transpose(2, 3))
        m = (attention_mask == 0).view(b, 1, 1, s).expand_as(w)
        w = w.masked_fill(m, torch.tensor(MIN))
        return self.o(merge(torch.matmul(F.softmax(w, dim=-1), v)))


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.2)
        self.bias = nn.Parameter(torch.randn(nf) * 0.2)

    def forward(self, x):
        out = x.size()[:-1] + (self.nf,)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(out)


class Gpt2(nn.Module):
    def __init__(self, e, h, positions):
        super().__init__()
        self.h, self.e = h, e
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool)).view(1, 1, positions, positions))
        self.c_attn, self.c_proj = Conv1D(3 * e, e), Conv1D(e, e)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(self.e, dim=2)
        q, k, v = heads(q, self.h), heads(k, self.h), heads(v, self.h)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
        ql, kl = q.size(-2), k.size(-2)
        causal = self.bias[:, :, kl - ql:kl, :kl]
        w = torch.where(causal, w.to(w.dtype), torch.full([], MIN, dtype=w.dtype))
        return self.c_proj(merge(torch.matmul(F.softmax(w, dim=-1), v)))


class Vit(nn.Module):
    def __init__(self, e, h):
        super().__init__()
        self.attn = nn.MultiheadAttention(e, h, batch_first=True)

    def forward(self, x):
        y, _ = self.attn(x, x, x, need_weights=False)
        return y


class QueryMask(nn.Module):
    """An additive mask that differs per query row and is the same for every key."""

    def __init__(self, e, h):
        super().__init__()
        self.h, self.d = h, e // h
        self.q, self.k, self.v = (nn.Linear(e, e) for _ in range(3))

    def forward(self, x, attention_mask):
        rowmask = (1.0 - attention_mask[:, None, :, None].to(torch.float32)) * -3.0
        q, k, v = heads(self.q(x), self.h), heads(self.k(x), self.h), heads(self.v(x), self.h)
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d) + rowmask
        return merge(torch.matmul(F.softmax(s, dim=-1), v))


class MaskBigger(nn.Module):
    """The mask is a float input of batch 2 while x has batch 1: Add broadcasts the scores."""

    def __init__(self, e, h):
        super().__init__()
        self.h, self.d = h, e // h
        self.q, self.k, self.v = (nn.Linear(e, e) for _ in range(3))

    def forward(self, x, mask):
        q, k, v = heads(self.q(x), self.h), heads(self.k(x), self.h), heads(self.v(x), self.h)
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d) + mask
        return merge(torch.matmul(F.softmax(s, dim=-1), v))


class RuntimeScale(nn.Module):
    def __init__(self, e, h):
        super().__init__()
        self.h = h
        self.q, self.k, self.v = (nn.Linear(e, e) for _ in range(3))

    def forward(self, x, temperature):
        q, k, v = heads(self.q(x), self.h), heads(self.k(x), self.h), heads(self.v(x), self.h)
        s = torch.matmul(q, k.transpose(-1, -2)) / temperature
        return merge(torch.matmul(F.softmax(s, dim=-1), v))


def save_pb(arr, name, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.require(arr, requirements="C"), name).SerializeToString())


def int_mask(b, s, pad):
    m = np.ones((b, s), np.int64)
    if pad:
        m[-1, s - pad:] = 0
    return m


def export(name, model, inputs, outputs, sets, dynamic=None):
    """sets: a list of input-array lists, one per data set."""
    torch.manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():  # nonzero biases, weights large enough to give peaky softmax
            p.copy_(torch.randn_like(p) * (0.3 if p.dim() > 1 else 0.2))
    model.eval()
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    axes = dynamic or {n: {0: "batch", 1: "seq"} for n in inputs}
    for n in outputs:
        axes.setdefault(n, {0: "batch", 1: "seq"})
    args = tuple(torch.from_numpy(a) for a in sets[0])
    path = os.path.join(d, "model.onnx")
    # with grad enabled, so nn.MultiheadAttention takes its exportable (non-fused) path
    torch.onnx.export(model, args, path, input_names=inputs, output_names=outputs, opset_version=14,
                      do_constant_folding=True, dynamic_axes=axes)
    onnx.checker.check_model(onnx.load(path))
    for k, arrays in enumerate(sets):
        sd = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(sd)
        with torch.no_grad():
            ys = model(*(torch.from_numpy(a) for a in arrays))
        ys = ys if isinstance(ys, tuple) else (ys,)
        for i, (n, a) in enumerate(zip(inputs, arrays)):
            save_pb(a, n, os.path.join(sd, "input_%d.pb" % i))
        for i, (n, y) in enumerate(zip(outputs, ys)):
            save_pb(y.numpy().astype(np.float32), n, os.path.join(sd, "output_%d.pb" % i))


def x(b, s, e, seed):
    return np.random.RandomState(seed).randn(b, s, e).astype(np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    E, H = 32, 4
    xm = ["x", "attention_mask"]
    masked = [[x(1, 7, E, 1), int_mask(1, 7, 2)], [x(2, 5, E, 2), int_mask(2, 5, 2)]]
    plain = [[x(1, 7, E, 3)], [x(2, 5, E, 4)]]
    export("bert_div", Bert(E, H), xm, ["y"], masked)
    export("bert_mul_kperm", Bert(E, H, scale="mul", kperm=True, fill=-10000.0), xm, ["y"], masked)
    export("split_scale", SplitScale(E, H), ["x"], ["y"], plain)
    export("distilbert_where", DistilBert(E, H), xm, ["y"], masked)
    export("gpt2_causal", Gpt2(E, H, 16), ["x"], ["y"], plain)
    export("vit_mha", Vit(E, H), ["x"], ["y"], plain)
    export("query_mask", QueryMask(E, H), xm, ["y"], masked)
    export("long_bert", Bert(16, 2), xm, ["y"], [[x(1, 600, 16, 5), int_mask(1, 600, 150)], [x(2, 300, 16, 6), int_mask(2, 300, 40)]])
    export("long_gpt2", Gpt2(16, 2, 520), ["x"], ["y"], [[x(1, 520, 16, 7)], [x(2, 300, 16, 8)]])
    export("nm_softmax_axis", Bert(E, H, softmax_dim=2), xm, ["y"], masked)
    export("nm_mask_bigger", MaskBigger(E, H), ["x", "mask"], ["y"],
           [[x(1, 7, E, 9), np.random.RandomState(9).randn(2, 1, 1, 7).astype(np.float32)]],
           dynamic={"x": {1: "seq"}, "mask": {3: "seq"}, "y": {1: "seq"}})
    export("nm_probs_output", Bert(E, H, probs_out=True), xm, ["y", "probs"], masked,
           dynamic={"x": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                    "probs": {0: "batch", 2: "seq", 3: "seq"}})
    export("nm_scale_after", Bert(E, H, scale_after=True, fill=-10000.0), xm, ["y"], masked)
    export("nm_runtime_scale", RuntimeScale(E, H), ["x", "temperature"], ["y"],
           [[x(1, 7, E, 10), np.array(2.5, np.float32)]], dynamic={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})


if __name__ == "__main__":
    main()
