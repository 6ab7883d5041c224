#!/usr/bin/python3
"""Export the ftax model zoo to ONNX, with reference data computed by torch.

Text models are written here in plain torch, following the way HuggingFace
writes BertModel, DistilBertModel and GPT2Model (shapes read from the inputs at
run time, additive / boolean masks, Conv1D as addmm, ...), so that their ONNX
exports carry the same patterns a real HF export does. Image models come from
torchvision. All weights are random (fixed seed).

Usage:
  /usr/bin/python3 bench/models/export.py [--out DIR] [--batch N] [--seq N]
        [--seed N] [--layers N] [--hidden N] [--set K] NAME [NAME...]

For every NAME this writes DIR/NAME/model.onnx and
DIR/NAME/test_data_set_K/{input,output}_I.pb, and prints the op-type counts.
"""

import argparse
import collections
import math
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 14


# --------------------------------------------------------------------------
# BERT, after HF BertModel
# --------------------------------------------------------------------------

class BertConfig:
    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, ffn=3072,
                 positions=512, type_vocab=2, eps=1e-12):
        self.vocab, self.hidden, self.layers, self.heads = vocab, hidden, layers, heads
        self.ffn, self.positions, self.type_vocab, self.eps = ffn, positions, type_vocab, eps


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab, c.hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(c.positions, c.hidden)
        self.token_type_embeddings = nn.Embedding(c.type_vocab, c.hidden)
        self.LayerNorm = nn.LayerNorm(c.hidden, eps=c.eps)
        # HF keeps position ids as a buffer and slices it to the sequence length.
        self.register_buffer("position_ids", torch.arange(c.positions).expand((1, -1)))

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size()[1]
        position_ids = self.position_ids[:, 0:seq_length]
        emb = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        emb = emb + self.position_embeddings(position_ids)
        return self.LayerNorm(emb)


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_heads = c.heads
        self.head_size = c.hidden // c.heads
        self.all_head_size = self.num_heads * self.head_size
        self.query = nn.Linear(c.hidden, self.all_head_size)
        self.key = nn.Linear(c.hidden, self.all_head_size)
        self.value = nn.Linear(c.hidden, self.all_head_size)

    def transpose_for_scores(self, x):
        new_shape = x.size()[:-1] + (self.num_heads, self.head_size)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, hidden, attention_mask):
        q = self.transpose_for_scores(self.query(hidden))
        k = self.transpose_for_scores(self.key(hidden))
        v = self.transpose_for_scores(self.value(hidden))
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(self.head_size)
        scores = scores + attention_mask
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)
        ctx = ctx.permute(0, 2, 1, 3).contiguous()
        new_shape = ctx.size()[:-2] + (self.all_head_size,)
        return ctx.view(new_shape)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attention_output = nn.Linear(c.hidden, c.hidden)
        self.attention_norm = nn.LayerNorm(c.hidden, eps=c.eps)
        self.intermediate = nn.Linear(c.hidden, c.ffn)
        self.output = nn.Linear(c.ffn, c.hidden)
        self.output_norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, hidden, attention_mask):
        a = self.attention(hidden, attention_mask)
        a = self.attention_norm(self.attention_output(a) + hidden)
        h = F.gelu(self.intermediate(a))
        return self.output_norm(self.output(h) + a)


class BertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.layers = nn.ModuleList([BertLayer(c) for _ in range(c.layers)])
        self.pooler = nn.Linear(c.hidden, c.hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        # HF get_extended_attention_mask: [batch, seq] -> [batch, 1, 1, seq],
        # 0 where attended, a very large negative number where masked.
        dtype = torch.float32
        ext = attention_mask[:, None, None, :].to(dtype=dtype)
        ext = (1.0 - ext) * torch.finfo(dtype).min
        hidden = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            hidden = layer(hidden, ext)
        pooled = torch.tanh(self.pooler(hidden[:, 0]))
        return hidden, pooled


# --------------------------------------------------------------------------
# DistilBERT, after HF DistilBertModel
# --------------------------------------------------------------------------

class DistilBertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_heads = c.heads
        self.dim = c.hidden
        self.q_lin = nn.Linear(c.hidden, c.hidden)
        self.k_lin = nn.Linear(c.hidden, c.hidden)
        self.v_lin = nn.Linear(c.hidden, c.hidden)
        self.out_lin = nn.Linear(c.hidden, c.hidden)

    def forward(self, x, mask):
        bs, q_length, dim = x.size()
        k_length = x.size(1)
        dim_per_head = self.dim // self.n_heads
        mask_reshp = (bs, 1, 1, k_length)

        def shape(t):
            return t.view(bs, -1, self.n_heads, dim_per_head).transpose(1, 2)

        def unshape(t):
            return t.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * dim_per_head)

        q = shape(self.q_lin(x))
        k = shape(self.k_lin(x))
        v = shape(self.v_lin(x))
        q = q / math.sqrt(dim_per_head)
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (mask == 0).view(mask_reshp).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        weights = F.softmax(scores, dim=-1)
        ctx = unshape(torch.matmul(weights, v))
        return self.out_lin(ctx)


class DistilBertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = DistilBertAttention(c)
        self.sa_layer_norm = nn.LayerNorm(c.hidden, eps=c.eps)
        self.lin1 = nn.Linear(c.hidden, c.ffn)
        self.lin2 = nn.Linear(c.ffn, c.hidden)
        self.output_layer_norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, x, mask):
        sa = self.sa_layer_norm(self.attention(x, mask) + x)
        ff = self.lin2(F.gelu(self.lin1(sa)))
        return self.output_layer_norm(ff + sa)


class DistilBertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab, c.hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(c.positions, c.hidden)
        self.LayerNorm = nn.LayerNorm(c.hidden, eps=c.eps)
        self.register_buffer("position_ids", torch.arange(c.positions).expand((1, -1)))
        self.layers = nn.ModuleList([DistilBertLayer(c) for _ in range(c.layers)])

    def forward(self, input_ids, attention_mask):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        x = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        x = self.LayerNorm(x)
        for layer in self.layers:
            x = layer(x, attention_mask)
        return x


# --------------------------------------------------------------------------
# GPT-2, after HF GPT2Model
# --------------------------------------------------------------------------

class Conv1D(nn.Module):
    """HF's GPT-2 projection: a Linear with a transposed [in, out] weight, via addmm."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf).normal_(std=0.02))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = c.positions
        self.register_buffer(
            "bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n))
        self.embed_dim = c.hidden
        self.num_heads = c.heads
        self.head_dim = c.hidden // c.heads
        self.split_size = c.hidden
        self.c_attn = Conv1D(3 * c.hidden, c.hidden)
        self.c_proj = Conv1D(c.hidden, c.hidden)

    def _split_heads(self, t):
        new_shape = t.size()[:-1] + (self.num_heads, self.head_dim)
        return t.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, t):
        t = t.permute(0, 2, 1, 3).contiguous()
        new_shape = t.size()[:-2] + (self.num_heads * self.head_dim,)
        return t.view(new_shape)

    def _attn(self, q, k, v):
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
        query_length, key_length = q.size(-2), k.size(-2)
        causal = self.bias[:, :, key_length - query_length:key_length, :key_length]
        mask_value = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
        w = torch.where(causal, w.to(w.dtype), mask_value)
        w = F.softmax(w, dim=-1)
        return torch.matmul(w, v)

    def forward(self, hidden):
        q, k, v = self.c_attn(hidden).split(self.split_size, dim=2)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
        a = self._merge_heads(self._attn(q, k, v))
        return self.c_proj(a)


class GPT2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = Conv1D(c.ffn, c.hidden)
        self.c_proj = Conv1D(c.hidden, c.ffn)

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c.hidden, eps=c.eps)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(c.hidden, eps=c.eps)
        self.mlp = GPT2MLP(c)

    def forward(self, h):
        h = self.attn(self.ln_1(h)) + h
        return h + self.mlp(self.ln_2(h))


class GPT2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c.vocab, c.hidden)
        self.wpe = nn.Embedding(c.positions, c.hidden)
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c.layers)])
        self.ln_f = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, input_ids):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        h = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            h = block(h)
        h = self.ln_f(h)
        output_shape = input_shape + (h.size(-1),)
        return h.view(output_shape)


# --------------------------------------------------------------------------
# GPT-2 generation with a KV cache: prefill and decode graphs over GPT2Model's weights
# --------------------------------------------------------------------------
#
# The cache has a fixed capacity (the symbolic dimension max_len): the decode graph takes one
# token, its position and every layer's past keys/values [batch, heads, max_len, head_dim],
# writes the new key/value into slot `position` (Where over a one-hot of the slots) and attends
# to the slots <= position (Where with the finfo.min mask, as HF's _attn). So every decode step
# has the same shapes and ftaxc, which pins every dimension, compiles it once per capacity
# instead of once per past length; slots past the position cost a few masked dot products.
# The prefill graph is HF's: input_ids [batch, seq] -> last-position logits and present
# keys/values [batch, heads, seq, head_dim], which the driver copies into the cache's first
# seq slots. The LM head is tied to wte (HF's GPT2LMHeadModel).

def _gpt2_qkv(block, h):
    a = block.attn
    q, k, v = a.c_attn(block.ln_1(h)).split(a.split_size, dim=2)
    return a._split_heads(q), a._split_heads(k), a._split_heads(v)


def _gpt2_block_rest(block, h, ctx):
    h = block.attn.c_proj(block.attn._merge_heads(ctx)) + h
    return h + block.mlp(block.ln_2(h))


def _gpt2_last_logits(gpt2, h):
    """Logits of the last position: ln_f, then the tied LM head ([batch, vocab])."""
    return torch.matmul(gpt2.ln_f(h[:, -1]), gpt2.wte.weight.t())


class GPT2Prefill(nn.Module):
    def __init__(self, gpt2):
        super().__init__()
        self.gpt2 = gpt2

    def forward(self, input_ids):
        m = self.gpt2
        position_ids = torch.arange(0, input_ids.size(1), dtype=torch.long).unsqueeze(0)
        h = m.wte(input_ids) + m.wpe(position_ids)
        presents = []
        for block in m.h:
            q, k, v = _gpt2_qkv(block, h)
            presents += [k, v]
            h = _gpt2_block_rest(block, h, block.attn._attn(q, k, v))
        return (_gpt2_last_logits(m, h),) + tuple(presents)


class GPT2Decode(nn.Module):
    def __init__(self, gpt2):
        super().__init__()
        self.gpt2 = gpt2

    def forward(self, input_ids, position_ids, *past):
        m = self.gpt2
        h = m.wte(input_ids) + m.wpe(position_ids)  # [batch, 1, hidden]
        slots = torch.arange(0, past[0].size(2), dtype=torch.long).unsqueeze(0)
        write = (slots == position_ids)[:, None, :, None]  # [batch, 1, max_len, 1]
        valid = (slots <= position_ids)[:, None, None, :]  # [batch, 1, 1, max_len]
        presents = []
        for i, block in enumerate(m.h):
            q, k, v = _gpt2_qkv(block, h)
            k = torch.where(write, k, past[2 * i])
            v = torch.where(write, v, past[2 * i + 1])
            presents += [k, v]
            w = torch.matmul(q, k.transpose(-1, -2))
            w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
            w = torch.where(valid, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
            h = _gpt2_block_rest(block, h, torch.matmul(F.softmax(w, dim=-1), v))
        return (_gpt2_last_logits(m, h),) + tuple(presents)


def gpt2_greedy_reference(gpt2, prompt, new_tokens):
    """torch's greedy tokens and their logits, recomputing the whole sequence at every step (no
    cache): the KV-cache graphs must reproduce these."""
    ids, tokens, logits = prompt, [], []
    with torch.no_grad():
        for _ in range(new_tokens):
            step = torch.matmul(gpt2(ids)[:, -1], gpt2.wte.weight.t())
            nxt = torch.argmax(step, dim=-1, keepdim=True)
            tokens.append(nxt)
            logits.append(step)
            ids = torch.cat([ids, nxt], dim=1)
    return torch.cat(tokens, dim=1), torch.stack(logits, dim=1)


def gpt2_greedy_cached(prefill, decode, prompt, new_tokens, max_len):
    """The same greedy generation through the prefill and decode modules (what gets exported)."""
    with torch.no_grad():
        out = prefill(prompt)
        b, p = prompt.shape
        past = [F.pad(t, (0, 0, 0, max_len - p)) for t in out[1:]]
        tokens = [torch.argmax(out[0], dim=-1, keepdim=True)]
        for pos in range(p, p + new_tokens - 1):
            out = decode(tokens[-1], torch.full((b, 1), pos, dtype=torch.long), *past)
            past = list(out[1:])
            tokens.append(torch.argmax(out[0], dim=-1, keepdim=True))
    return torch.cat(tokens, dim=1)


# --------------------------------------------------------------------------
# Funnel Transformer, after HF FunnelModel (funnel-transformer/small)
# --------------------------------------------------------------------------

def funnel_pool(x, dim_pool):
    """HF's separate_cls + truncate_seq mean pooling by 2 along the sequence: the [CLS] vector is
    kept in front, the rest pooled in pairs ([B, S, ...] -> [B, S/2, ...]). dim_pool is "mean"
    for hidden states and "min" for the attention mask."""
    x = torch.cat([x[:, :1], x], dim=1)[:, :-1]
    if dim_pool == "mean":
        return F.avg_pool2d(x[:, None], (2, 1), stride=(2, 1), ceil_mode=True)[:, 0]
    return -F.max_pool2d(-x[:, None, :, None], (2, 1), stride=(2, 1), ceil_mode=True)[:, 0, :, 0]


class FunnelLayer(nn.Module):
    """A post-LN transformer layer whose queries may come from a pooled sequence while keys and
    values see the full one (Funnel's pool_q_only)."""

    def __init__(self, c):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attention_output = nn.Linear(c.hidden, c.hidden)
        self.attention_norm = nn.LayerNorm(c.hidden, eps=c.eps)
        self.intermediate = nn.Linear(c.hidden, c.ffn)
        self.output = nn.Linear(c.ffn, c.hidden)
        self.output_norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, q_in, kv_in, mask):
        at = self.attention
        q = at.transpose_for_scores(at.query(q_in))
        k = at.transpose_for_scores(at.key(kv_in))
        v = at.transpose_for_scores(at.value(kv_in))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(at.head_size) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (at.all_head_size,))
        a = self.attention_norm(self.attention_output(ctx) + q_in)
        return self.output_norm(self.output(F.gelu(self.intermediate(a))) + a)


class FunnelModel(nn.Module):
    """Funnel-Transformer small: blocks of 4 layers (block_sizes 4-4-4), the sequence mean-pooled
    by 2 before every block but the first, then upsampled back to full length and refined by 2
    decoder layers. Simplified: BERT's absolute position embeddings instead of Funnel's relative
    positional attention (which adds operators; leaving it out favours Funnel)."""

    def __init__(self, c, blocks=(4, 4, 4), decoder_layers=2):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.blocks = nn.ModuleList([nn.ModuleList([FunnelLayer(c) for _ in range(n)]) for n in blocks])
        self.decoder = nn.ModuleList([FunnelLayer(c) for _ in range(decoder_layers)])

    @staticmethod
    def additive(mask):
        return (1.0 - mask[:, None, None, :]) * torch.finfo(torch.float32).min

    def forward(self, input_ids, attention_mask, token_type_ids):
        mask = attention_mask.to(torch.float32)
        h = self.embeddings(input_ids, token_type_ids)
        first = None
        for i, block in enumerate(self.blocks):
            for j, layer in enumerate(block):
                if i > 0 and j == 0:  # pool the queries; keys and values see the unpooled sequence
                    q = funnel_pool(h, "mean")
                    h = layer(q, h, self.additive(mask))
                    mask = funnel_pool(mask, "min")
                else:
                    h = layer(h, h, self.additive(mask))
            if i == 0:
                first = h
        # upsample: repeat every pooled vector 2^(blocks-1) times, [CLS] kept in front
        stride = 2 ** (len(self.blocks) - 1)
        target = first.size(1)
        cls, rest = h[:, :1], h[:, 1:]
        up = rest.unsqueeze(2).expand(rest.size(0), rest.size(1), stride, rest.size(2))
        up = up.reshape(rest.size(0), rest.size(1) * stride, rest.size(2))
        up = F.pad(up, (0, 0, 0, stride - 1))[:, :target - 1]
        h = torch.cat([cls, up], dim=1) + first
        full = self.additive(attention_mask.to(torch.float32))
        for layer in self.decoder:
            h = layer(h, h, full)
        return h


# --------------------------------------------------------------------------
# SqueezeBERT, after HF SqueezeBertModel (squeezebert/squeezebert-uncased)
# --------------------------------------------------------------------------

class SqueezeConvNorm(nn.Module):
    """Grouped 1x1 Conv1d over [B, C, S], plus the residual, then LayerNorm over C."""

    def __init__(self, cin, cout, groups, eps):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, 1, groups=groups)
        self.norm = nn.LayerNorm(cout, eps=eps)

    def forward(self, x, residual):
        y = self.conv(x) + residual
        return self.norm(y.permute(0, 2, 1)).permute(0, 2, 1)


class SqueezeBertLayer(nn.Module):
    def __init__(self, c, qkv_groups=4, post_groups=1, ffn_groups=4, out_groups=4):
        super().__init__()
        self.heads, self.head_size = c.heads, c.hidden // c.heads
        self.query = nn.Conv1d(c.hidden, c.hidden, 1, groups=qkv_groups)
        self.key = nn.Conv1d(c.hidden, c.hidden, 1, groups=qkv_groups)
        self.value = nn.Conv1d(c.hidden, c.hidden, 1, groups=qkv_groups)
        self.post_attention = SqueezeConvNorm(c.hidden, c.hidden, post_groups, c.eps)
        self.intermediate = nn.Conv1d(c.hidden, c.ffn, 1, groups=ffn_groups)
        self.output = SqueezeConvNorm(c.ffn, c.hidden, out_groups, c.eps)

    def split(self, x):  # [B, C, S] -> [B, heads, head_size, S]
        return x.view(x.size(0), self.heads, self.head_size, x.size(-1))

    def forward(self, x, mask):
        q = self.split(self.query(x)).permute(0, 1, 3, 2)
        k = self.split(self.key(x))
        v = self.split(self.value(x)).permute(0, 1, 3, 2)
        scores = torch.matmul(q, k) / math.sqrt(self.head_size) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v)  # [B, heads, S, head_size]
        ctx = ctx.permute(0, 1, 3, 2).contiguous().view(x.size())
        a = self.post_attention(ctx, x)
        return self.output(F.gelu(self.intermediate(a)), a)


class SqueezeBertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.layers = nn.ModuleList([SqueezeBertLayer(c) for _ in range(c.layers)])

    def forward(self, input_ids, attention_mask, token_type_ids):
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        x = self.embeddings(input_ids, token_type_ids).permute(0, 2, 1)  # [B, C, S]
        for layer in self.layers:
            x = layer(x, ext)
        return x.permute(0, 2, 1)


# --------------------------------------------------------------------------
# MobileBERT, after HF MobileBertModel (google/mobilebert-uncased)
# --------------------------------------------------------------------------

class NoNorm(nn.Module):
    """MobileBERT's normalization_type "no_norm": an elementwise scale and shift."""

    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n) + 0.05 * torch.randn(n))
        self.bias = nn.Parameter(0.02 * torch.randn(n))

    def forward(self, x):
        return x * self.weight + self.bias


class MobileBertLayer(nn.Module):
    """hidden 512 -> bottleneck 128 (queries and keys share one bottleneck, values read the full
    hidden state), attention with 4 heads at 128, 4 stacked FFNs (128 -> 512 -> 128), then back
    to 512."""

    def __init__(self, hidden=512, inner=128, heads=4, ffn=512, ffns=4):
        super().__init__()
        self.heads, self.head_size = heads, inner // heads
        self.input_bottleneck = nn.Linear(hidden, inner)
        self.input_norm = NoNorm(inner)
        self.shared_bottleneck = nn.Linear(hidden, inner)
        self.shared_norm = NoNorm(inner)
        self.query = nn.Linear(inner, inner)
        self.key = nn.Linear(inner, inner)
        self.value = nn.Linear(hidden, inner)
        self.attention_output = nn.Linear(inner, inner)
        self.attention_norm = NoNorm(inner)
        self.ffn_in = nn.ModuleList([nn.Linear(inner, ffn) for _ in range(ffns)])
        self.ffn_out = nn.ModuleList([nn.Linear(ffn, inner) for _ in range(ffns)])
        self.ffn_norm = nn.ModuleList([NoNorm(inner) for _ in range(ffns)])
        self.output_bottleneck = nn.Linear(inner, hidden)
        self.output_norm = NoNorm(hidden)

    def heads_of(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_size)).permute(0, 2, 1, 3)

    def forward(self, h, mask):
        layer_input = self.input_norm(self.input_bottleneck(h))
        shared = self.shared_norm(self.shared_bottleneck(h))
        q, k, v = self.heads_of(self.query(shared)), self.heads_of(self.key(shared)), self.heads_of(self.value(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.heads * self.head_size,))
        x = self.attention_norm(self.attention_output(ctx) + layer_input)
        for fin, fout, norm in zip(self.ffn_in, self.ffn_out, self.ffn_norm):
            x = norm(fout(F.relu(fin(x))) + x)
        return self.output_norm(self.output_bottleneck(x) + h)


class MobileBertModel(nn.Module):
    """24 layers; embeddings of 128 widened by the trigram input (each token next to its
    neighbours: 384) and projected to 512."""

    def __init__(self, c, layers=24, embed=128, hidden=512):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab, embed, padding_idx=0)
        self.embedding_transformation = nn.Linear(3 * embed, hidden)
        self.position_embeddings = nn.Embedding(c.positions, hidden)
        self.token_type_embeddings = nn.Embedding(c.type_vocab, hidden)
        self.embedding_norm = NoNorm(hidden)
        self.register_buffer("position_ids", torch.arange(c.positions).expand((1, -1)))
        self.layers = nn.ModuleList([MobileBertLayer(hidden) for _ in range(layers)])

    def forward(self, input_ids, attention_mask, token_type_ids):
        e = self.word_embeddings(input_ids)
        e = torch.cat([F.pad(e[:, 1:], [0, 0, 0, 1, 0, 0]), e, F.pad(e[:, :-1], [0, 0, 1, 0, 0, 0])], dim=2)
        e = self.embedding_transformation(e)
        e = e + self.position_embeddings(self.position_ids[:, :input_ids.size(1)])
        h = self.embedding_norm(e + self.token_type_embeddings(token_type_ids))
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        for layer in self.layers:
            h = layer(h, ext)
        return h


# --------------------------------------------------------------------------
# WavLM-base-shaped speech model, after HF WavLMModel (microsoft/wavlm-base)
# --------------------------------------------------------------------------

AUDIO_SAMPLES = 32000  # 2 s of 16 kHz audio


class WavLMFeatureEncoder(nn.Module):
    """7 convolutions of 512 channels, kernels 10,3,3,3,3,2,2 and strides 5,2,2,2,2,2,2 (320x
    downsampling: 2 s -> 99 frames), GELU, GroupNorm after the first (feat_extract_norm "group")."""

    def __init__(self, dim=512):
        super().__init__()
        ks, ss = (10, 3, 3, 3, 3, 2, 2), (5, 2, 2, 2, 2, 2, 2)
        self.convs = nn.ModuleList([nn.Conv1d(1 if i == 0 else dim, dim, k, stride=s, bias=False)
                                    for i, (k, s) in enumerate(zip(ks, ss))])
        self.norm = nn.GroupNorm(dim, dim)

    def forward(self, wav):
        x = wav[:, None]
        for i, conv in enumerate(self.convs):
            x = conv(x)
            if i == 0:
                x = self.norm(x)
            x = F.gelu(x)
        return x.transpose(1, 2)  # [B, frames, 512]


def wavlm_buckets(t, buckets=320, max_distance=800):
    """WavLM's bidirectional relative position buckets for t frames: [t, t] int64."""
    pos = torch.arange(t)
    rel = pos[None, :] - pos[:, None]
    half = buckets // 2
    out = (rel > 0).to(torch.long) * half
    rel = rel.abs()
    exact = half // 2
    large = exact + (torch.log(rel.float() / exact + 1e-6) / math.log(max_distance / exact)
                     * (half - exact)).to(torch.long)
    large = torch.minimum(large, torch.full_like(large, half - 1))
    return out + torch.where(rel < exact, rel, large)


class WavLMLayer(nn.Module):
    """Post-LN transformer layer with WavLM's gated relative position bias: per head, a gate from
    the query (Linear 64 -> 8, grouped sums, sigmoid) scales the shared bias."""

    def __init__(self, c):
        super().__init__()
        self.attn = BertLayer(c)
        self.heads, self.head_size = c.heads, c.hidden // c.heads
        self.gru_rel_pos_linear = nn.Linear(self.head_size, 8)
        self.gru_rel_pos_const = nn.Parameter(torch.ones(1, c.heads, 1, 1) + 0.05 * torch.randn(1, c.heads, 1, 1))

    def forward(self, h, bias):
        b, t, _ = h.size()
        g = self.gru_rel_pos_linear(h.view(b, t, self.heads, self.head_size).permute(0, 2, 1, 3))
        g = torch.sigmoid(g.view(b, self.heads, t, 2, 4).sum(-1))
        gate = g[..., :1] * (g[..., 1:] * self.gru_rel_pos_const - 1.0) + 2.0  # [B, heads, T, 1]
        return self.attn(h, gate * bias)


class WavLMModel(nn.Module):
    def __init__(self, c, conv_dim=512, pos_kernel=128, pos_groups=16):
        super().__init__()
        self.features = WavLMFeatureEncoder(conv_dim)
        self.feature_norm = nn.LayerNorm(conv_dim, eps=1e-5)
        self.projection = nn.Linear(conv_dim, c.hidden)
        self.pos_conv = nn.Conv1d(c.hidden, c.hidden, pos_kernel, padding=pos_kernel // 2, groups=pos_groups)
        self.norm = nn.LayerNorm(c.hidden, eps=1e-5)
        self.rel_attn_embed = nn.Embedding(320, c.heads)
        self.layers = nn.ModuleList([WavLMLayer(c) for _ in range(c.layers)])

    def forward(self, input_values):
        h = self.projection(self.feature_norm(self.features(input_values)))
        t = h.size(1)
        p = self.pos_conv(h.transpose(1, 2))[:, :, :-1]  # SamePad: the even kernel's extra frame
        h = self.norm(h + F.gelu(p).transpose(1, 2))
        bias = self.rel_attn_embed(wavlm_buckets(t)).permute(2, 0, 1)[None]  # [1, heads, T, T]
        for layer in self.layers:
            h = layer(h, bias)
        return h


def init_transformer(model, std=0.02):
    """HF's _init_weights: N(0, 0.02) for Linear/Embedding, zero biases, unit LayerNorm."""
    for m in model.modules():
        if isinstance(m, nn.Linear):
            m.weight.data.normal_(std=std)
            m.bias.data.normal_(std=std)  # HF zeroes biases; nonzero tests bias handling
        elif isinstance(m, nn.Embedding):
            m.weight.data.normal_(std=std)
        elif isinstance(m, nn.LayerNorm):
            # slightly off identity, so scale and shift are exercised
            m.weight.data.fill_(1.0).add_(torch.randn_like(m.weight) * 0.05)
            m.bias.data.normal_(std=0.02)
    return model


# --------------------------------------------------------------------------
# cnn_small: a small CNN of our own covering the common vision ops
# --------------------------------------------------------------------------

class CnnSmall(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(16), nn.ReLU())
        self.res_a = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False),
                                   nn.BatchNorm2d(16), nn.ReLU())
        self.res_b = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False),
                                   nn.BatchNorm2d(16))
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False),
                                  nn.BatchNorm2d(32), nn.ReLU6())
        self.pool = nn.MaxPool2d(2)
        self.dw = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False),
                                nn.BatchNorm2d(32), nn.SiLU())
        self.pw = nn.Sequential(nn.Conv2d(32, 64, 1), nn.ReLU6())
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.stem(x)
        x = F.relu(self.res_b(self.res_a(x)) + x)
        x = self.pool(self.down(x))
        x = self.pw(self.dw(x))
        x = torch.flatten(self.gap(x), 1)
        return self.fc(x)


# --------------------------------------------------------------------------
# the zoo
# --------------------------------------------------------------------------

def _bert_cfg(args, **kw):
    c = BertConfig(**kw)
    if args.layers is not None:
        c.layers = args.layers
    if args.hidden is not None:
        c.hidden = args.hidden
        c.heads = max(1, args.hidden // 64)
        c.ffn = 4 * args.hidden
    if c.hidden % c.heads:
        sys.exit("--hidden must be a multiple of the head count (%d)" % c.heads)
    return c


def _gpt2_cfg(**kw):
    base = dict(vocab=50257, hidden=768, layers=12, heads=12, ffn=3072, positions=1024, eps=1e-5)
    base.update(kw)
    return BertConfig(**base)


def _torchvision(fn):
    def make(args):
        import torchvision
        return getattr(torchvision.models, fn)(weights=None)
    return make


TEXT_BERT = ("input_ids", "attention_mask", "token_type_ids")

ZOO = {
    # name: (kind, constructor(args), input names, output names)
    "bert_base": ("bert", lambda a: BertModel(BertConfig()),
                  TEXT_BERT, ("last_hidden_state", "pooler_output")),
    "bert_scaled": ("bert", lambda a: BertModel(_bert_cfg(a)),
                    TEXT_BERT, ("last_hidden_state", "pooler_output")),
    "bert_tiny": ("bert", lambda a: BertModel(BertConfig(vocab=1024, hidden=64, layers=2, heads=2,
                                                         ffn=256, positions=128)),
                  TEXT_BERT, ("last_hidden_state", "pooler_output")),
    "distilbert": ("bert", lambda a: DistilBertModel(BertConfig(layers=6)),
                   ("input_ids", "attention_mask"), ("last_hidden_state",)),
    "distilbert_tiny": ("bert", lambda a: DistilBertModel(BertConfig(vocab=1024, hidden=64, layers=2,
                                                                     heads=2, ffn=256,
                                                                     positions=128)),
                        ("input_ids", "attention_mask"), ("last_hidden_state",)),
    "gpt2": ("gpt2", lambda a: GPT2Model(_gpt2_cfg()), ("input_ids",), ("last_hidden_state",)),
    "gpt2_tiny": ("gpt2", lambda a: GPT2Model(_gpt2_cfg(vocab=1024, hidden=64, layers=2, heads=2,
                                                        ffn=256, positions=128)),
                  ("input_ids",), ("last_hidden_state",)),
    "funnel_small": ("bert", lambda a: FunnelModel(BertConfig()), TEXT_BERT, ("last_hidden_state",)),
    "funnel_H256": ("bert", lambda a: FunnelModel(BertConfig(hidden=256, heads=4, ffn=1024)), TEXT_BERT,
                    ("last_hidden_state",)),
    "squeezebert": ("bert", lambda a: SqueezeBertModel(BertConfig()), TEXT_BERT, ("last_hidden_state",)),
    "squeezebert_H256": ("bert", lambda a: SqueezeBertModel(BertConfig(hidden=256, heads=4, ffn=1024)),
                         TEXT_BERT, ("last_hidden_state",)),
    "mobilebert": ("bert", lambda a: MobileBertModel(BertConfig()), TEXT_BERT, ("last_hidden_state",)),
    "wavlm_base": ("speech", lambda a: WavLMModel(BertConfig()), ("input_values",), ("last_hidden_state",)),
    "resnet18": ("image", _torchvision("resnet18"), ("input",), ("logits",)),
    "resnet34": ("image", _torchvision("resnet34"), ("input",), ("logits",)),
    "resnet50": ("image", _torchvision("resnet50"), ("input",), ("logits",)),
    "resnet101": ("image", _torchvision("resnet101"), ("input",), ("logits",)),
    "squeezenet": ("image", _torchvision("squeezenet1_0"), ("input",), ("logits",)),
    "mobilenet_v2": ("image", _torchvision("mobilenet_v2"), ("input",), ("logits",)),
    "efficientnet_b0": ("image", _torchvision("efficientnet_b0"), ("input",), ("logits",)),
    "vit_b_16": ("image", _torchvision("vit_b_16"), ("input",), ("logits",)),
    "squeezenet1_1": ("image", _torchvision("squeezenet1_1"), ("input",), ("logits",)),
    "cnn_small": ("image", lambda a: CnnSmall(), ("input",), ("logits",)),
}

IMAGE_SIZE = {"cnn_small": 32}


def perturb_constant_parameters(model, std=0.02):
    """Add small random values to every parameter whose elements are all equal.

    torchvision zero-initialises many biases (and ViT its whole classifier head,
    which would make ViT's logits exactly 0) and sets norm scales to one. Trained
    models have no such tensors; left alone, the exporter merges identical
    initializers and leaves Identity nodes behind that no real export has.
    """
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() > 1 and bool((p == p.flatten()[0]).all()):
                p.add_(torch.randn_like(p) * std * max(1.0, float(p.flatten()[0].abs())))


def calibrate_batchnorm(model, size, seed):
    """Set BatchNorm running statistics from one random batch.

    With the default statistics (mean 0, var 1) every BatchNorm is the identity
    and activations grow layer after layer; one calibration pass gives
    non-trivial, well-scaled statistics, so folded BatchNorms are really tested
    and reference outputs stay in a sensible range.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average: after one batch, exactly its stats
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(4, 3, size, size, generator=g)
    model.train()
    with torch.no_grad():
        model(x)
    model.eval()


def make_inputs(kind, model, names, batch, seq, size, rng, vocab):
    """Reference inputs as numpy arrays, in graph input order."""
    if kind == "image":
        return [rng.standard_normal((batch, 3, size, size)).astype(np.float32)]
    if kind == "speech":
        return [(0.1 * rng.standard_normal((batch, AUDIO_SAMPLES))).astype(np.float32)]
    ids = rng.integers(1, vocab, size=(batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    types = np.zeros((batch, seq), dtype=np.int64)
    if kind == "bert":
        # The last row is padded at the end (a quarter of the sequence), like a
        # tokenizer padding a short sentence; padded ids are 0 ([PAD]).
        pad = seq // 4
        if pad:
            mask[-1, seq - pad:] = 0
            ids[-1, seq - pad:] = 0
        # a sentence pair: the second half of the real tokens is segment 1
        for b in range(batch):
            real = int(mask[b].sum())
            types[b, real // 2:real] = 1
    arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    return [arrays[n] for n in names]


def dynamic_axes_for(kind, inputs, outputs):
    axes = {}
    fixed = kind in ("image", "speech")  # no seq axis: 224x224 images, 2 s of audio
    for n in inputs:
        axes[n] = {0: "batch"} if fixed else {0: "batch", 1: "seq"}
    for n in outputs:
        axes[n] = {0: "batch"} if (fixed or n == "pooler_output") \
            else {0: "batch", 1: "seq"}
    return axes


def save_tensor(path, array, name):
    from onnx import numpy_helper
    t = numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def op_counts(model_proto):
    counts = collections.Counter()

    def walk(graph):
        for node in graph.node:
            counts[(node.domain + "." if node.domain else "") + node.op_type] += 1
            for attr in node.attribute:
                if attr.g.node:
                    walk(attr.g)
                for g in attr.graphs:
                    walk(g)
    walk(model_proto.graph)
    return counts


def export_one(name, args):
    import onnx

    kind, ctor, in_names, out_names = ZOO[name]
    torch.manual_seed(args.seed)
    model = ctor(args)
    if kind != "image":
        init_transformer(model)
    size = IMAGE_SIZE.get(name, 224)
    if kind == "image":
        perturb_constant_parameters(model)
        calibrate_batchnorm(model, size, args.seed)
    model.eval()

    vocab = max([m.num_embeddings for m in model.modules() if isinstance(m, nn.Embedding)],
                default=0)  # the word embedding is the largest table
    seq = args.seq if args.seq is not None else (8 if name.endswith("_tiny") else 128)
    rng = np.random.default_rng(args.seed + 1000 * args.set)
    inputs = make_inputs(kind, model, in_names, args.batch, seq, size, rng, vocab)
    torch_inputs = tuple(torch.from_numpy(a) for a in inputs)

    dirname = name
    if name == "bert_scaled":
        c = _bert_cfg(args)
        dirname = "bert_L%d_H%d" % (c.layers, c.hidden)
    outdir = os.path.join(args.out, dirname)
    os.makedirs(outdir, exist_ok=True)
    onnx_path = os.path.join(outdir, "model.onnx")
    with torch.no_grad():
        outputs = model(*torch_inputs)
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
    if not args.data_only:
        # Traced with autograd on: under no_grad, torch 1.13's nn.MultiheadAttention
        # (ViT) takes a fused fast path that has no ONNX export.
        torch.onnx.export(model, torch_inputs, onnx_path, opset_version=OPSET,
                          do_constant_folding=True, input_names=list(in_names),
                          output_names=list(out_names),
                          dynamic_axes=dynamic_axes_for(kind, in_names, out_names))

    proto = onnx.load(onnx_path)
    onnx.checker.check_model(proto)
    graph_in = [i.name for i in proto.graph.input]
    graph_out = [o.name for o in proto.graph.output]
    if graph_in != list(in_names) or graph_out != list(out_names):
        sys.exit("%s: graph names %s -> %s differ from %s -> %s"
                 % (name, graph_in, graph_out, in_names, out_names))

    data_dir = os.path.join(outdir, "test_data_set_%d" % args.set)
    os.makedirs(data_dir, exist_ok=True)
    for i, (n, a) in enumerate(zip(in_names, inputs)):
        save_tensor(os.path.join(data_dir, "input_%d.pb" % i), a, n)
    for i, (n, t) in enumerate(zip(out_names, outputs)):
        save_tensor(os.path.join(data_dir, "output_%d.pb" % i),
                    t.detach().numpy().astype(np.float32), n)

    counts = op_counts(proto)
    print("%s: %s (%.1f MB), %d nodes" % (name, onnx_path, os.path.getsize(onnx_path) / 2**20,
                                         sum(counts.values())))
    print("  inputs:  " + ", ".join("%s %s %s" % (n, a.dtype, list(a.shape))
                                    for n, a in zip(in_names, inputs)))
    print("  outputs: " + ", ".join("%s float32 %s" % (n, list(t.shape))
                                    for n, t in zip(out_names, outputs)))
    print("  ops: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    sys.stdout.flush()


# KV-cache generation models: name -> GPT2Model constructor. export_kv writes prefill.onnx,
# decode.onnx and reference/{prompt,tokens,logits}.pb (torch's greedy generation, no cache).
KV_ZOO = {
    "gpt2_kv": lambda: GPT2Model(_gpt2_cfg()),
    "gpt2_kv_tiny": lambda: GPT2Model(_gpt2_cfg(vocab=256, hidden=32, layers=2, heads=2, ffn=128,
                                                 positions=64)),
}


def _export_graph(module, inputs, path, in_names, out_names, axes):
    import onnx
    torch.onnx.export(module, inputs, path, opset_version=OPSET, do_constant_folding=True,
                      input_names=in_names, output_names=out_names, dynamic_axes=axes)
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    counts = op_counts(proto)
    print("  %s (%.1f MB), %d nodes: %s" % (path, os.path.getsize(path) / 2**20, sum(counts.values()),
                                           ", ".join("%s %d" % kv for kv in sorted(counts.items()))))


def build_kv_gpt2(name, seed=0):
    """The GPT2Model of KV_ZOO[name] with export_kv's weights (bench/generate.py's torch engine)."""
    torch.manual_seed(seed)
    gpt2 = init_transformer(KV_ZOO[name]())
    # With HF's N(0, 0.02) everywhere and the LM head tied to wte, a random GPT-2 predicts its
    # last token again forever (that token's own embedding dominates the residual stream), and
    # a token check would compare one repeated id. Scaling the blocks' projections by 10 lets
    # them dominate, so the greedy tokens follow the context (e.g. 6 distinct ids in 16 for
    # gpt2_kv_tiny, smallest top-2 gap 0.003: far above float32 rounding).
    with torch.no_grad():
        for block in gpt2.h:
            for conv in (block.attn.c_attn, block.attn.c_proj, block.mlp.c_fc, block.mlp.c_proj):
                conv.weight.mul_(10.0)
    return gpt2.eval()


def export_kv(name, args):
    gpt2 = build_kv_gpt2(name, args.seed)
    layers, heads = len(gpt2.h), gpt2.h[0].attn.num_heads
    vocab = gpt2.wte.num_embeddings
    prompt_len = args.seq if args.seq is not None else 8
    max_len = args.max_len if args.max_len is not None else prompt_len + args.new
    if max_len < prompt_len + args.new - 1:
        sys.exit("--max-len %d holds fewer than the prompt and the new tokens (%d)"
                 % (max_len, prompt_len + args.new - 1))
    rng = np.random.default_rng(args.seed + 1000 * args.set)
    prompt = torch.from_numpy(rng.integers(0, vocab, size=(args.batch, prompt_len), dtype=np.int64))
    prefill, decode = GPT2Prefill(gpt2).eval(), GPT2Decode(gpt2).eval()

    tokens, logits = gpt2_greedy_reference(gpt2, prompt, args.new)
    cached = gpt2_greedy_cached(prefill, decode, prompt, args.new, max_len)
    if not torch.equal(tokens, cached):
        sys.exit("%s: torch's cached generation %s differs from the uncached one %s"
                 % (name, cached.tolist(), tokens.tolist()))
    top2 = torch.topk(logits, 2, dim=-1).values
    margin = float((top2[..., 0] - top2[..., 1]).min())

    outdir = os.path.join(args.out, name)
    os.makedirs(os.path.join(outdir, "reference"), exist_ok=True)
    kv = ["%s_%s_%d" % (io, kv, i) for i in range(layers) for kv in ("key", "value")
          for io in ("present",)]
    past = [n.replace("present", "past") for n in kv]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch"}}
    axes.update({n: {0: "batch", 2: "seq"} for n in kv})
    print("%s: %d layers, %d heads, vocab %d, prompt %d, %d new tokens, cache %d slots"
          % (name, layers, heads, vocab, prompt_len, args.new, max_len))
    if not args.data_only:
        _export_graph(prefill, (prompt,), os.path.join(outdir, "prefill.onnx"),
                      ["input_ids"], ["logits"] + kv, axes)
        cache = [torch.zeros(args.batch, heads, max_len, gpt2.h[0].attn.head_dim) for _ in past]
        step_in = (prompt[:, -1:], torch.full((args.batch, 1), prompt_len, dtype=torch.long))
        axes = {"input_ids": {0: "batch"}, "position_ids": {0: "batch"}, "logits": {0: "batch"}}
        axes.update({n: {0: "batch", 2: "max_len"} for n in past + kv})
        _export_graph(decode, step_in + tuple(cache), os.path.join(outdir, "decode.onnx"),
                      ["input_ids", "position_ids"] + past, ["logits"] + kv, axes)
    ref = os.path.join(outdir, "reference")
    save_tensor(os.path.join(ref, "prompt.pb"), prompt.numpy(), "input_ids")
    save_tensor(os.path.join(ref, "tokens.pb"), tokens.numpy(), "tokens")
    save_tensor(os.path.join(ref, "logits.pb"), logits.numpy().astype(np.float32), "logits")
    print("  torch's greedy tokens %s; smallest top-2 logit gap %.4g"
          % (tokens.tolist(), margin))
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="+", metavar="NAME", help=", ".join(list(ZOO) + list(KV_ZOO)))
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "zoo"),
                   help="output directory (default bench/zoo)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=None,
                   help="sequence length for text models (default 128; 8 for *_tiny)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--set", type=int, default=0,
                   help="test data set number K (test_data_set_K); also varies the inputs")
    p.add_argument("--data-only", action="store_true",
                   help="keep an existing model.onnx, only write another test data set")
    p.add_argument("--layers", type=int, default=None,
                   help="bert_scaled: layer count (default 12)")
    p.add_argument("--hidden", type=int, default=None,
                   help="bert_scaled: hidden size (default 768; heads = hidden/64, FFN = 4*hidden);"
                        " written to DIR/bert_L<layers>_H<hidden>")
    p.add_argument("--new", type=int, default=16,
                   help="gpt2_kv*: new tokens of the reference generation (default 16)")
    p.add_argument("--max-len", type=int, default=None,
                   help="gpt2_kv*: the cache's slots in the example decode inputs (default"
                        " prompt + new); the graph leaves it symbolic (max_len)")
    args = p.parse_args()
    unknown = [n for n in args.names if n not in ZOO and n not in KV_ZOO]
    if unknown:
        p.error("unknown model(s): %s (known: %s)"
                % (", ".join(unknown), ", ".join(list(ZOO) + list(KV_ZOO))))
    torch.set_num_threads(1)
    # The HF-style code reads shapes at run time on purpose; the tracer's
    # warnings about it (and about constant torch.tensor) are expected.
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    args.out = os.path.normpath(args.out)
    for name in args.names:
        if name in KV_ZOO:
            export_kv(name, args)
        else:
            export_one(name, args)


if __name__ == "__main__":
    main()
