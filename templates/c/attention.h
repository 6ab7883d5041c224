/* Fused multi-head attention (ftax.Attention, compiler/ops/fused_attention.c), fp32.
 *
 * For every batch index b1, head b2 and query row i:
 *   s[j] = scale * sum_d q[b1,b2,i,d] * k[b1,b2,j,d]        (j over the keys)
 *   s[j] = masked(s[j]) : additive mask and/or a select (Where) mask, in the graph's order
 *   out[b1,b2,i,:] = softmax(s) . v[b1,b2,:,:]
 * q, k, v and out are strided views of their buffers (the exporter's Reshape/Transpose/Split/
 * Slice chains, resolved by the fusion pass into an offset and a stride per index), so packed
 * QKV projections are read in place and the result lands in [B,S,H*D] order with no transpose.
 *
 * A work item is a block of MB query rows of one (b1, b2). Its scores live only as an MB x KB
 * tile on the stack: keys go by in blocks of KB, with a running row maximum and sum (online
 * softmax), so the full score matrix never exists. When every key fits one block (the common
 * case), P is normalized before P.V and the GEMM writes the output rows directly. Both products
 * run on the GEMM core (gemm.h) with strided operands, packed on the fly.
 *
 * Every element is computed by the same sequence of operations whatever the thread count. */
#ifndef FT_ATTENTION_H
#define FT_ATTENTION_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fastmath.h"
#include "gemm.h"
#include "rowreduce.h"
#include "tensor.h"

/* Floats of the per-item tile buffer on the stack (scores, running output, row statistics). */
#define FT_ATTN_BUF 16384

/* p, laid out by compiler/ops/fused_attention.c. A view is {offset, b1 stride, b2 stride, row
 * stride, column stride} in elements of its buffer. */
enum {
  FT_AT_N1, FT_AT_N2, FT_AT_SQ, FT_AT_SK, FT_AT_DK, FT_AT_DV,
  FT_AT_Q = 6, FT_AT_K = 11, FT_AT_V = 16, /* off, b1, b2, row, col */
  FT_AT_O = 21,                            /* off, b1, b2, row (columns contiguous) */
  FT_AT_ADD = 25,                          /* has, b1, b2, i, j strides of the float mask */
  FT_AT_SEL = 30,                          /* kind (0 none, 1 bool tensor, 2 causal), keep value or causal offset, b1, b2, i, j */
  FT_AT_ADD_FIRST = 36,                    /* 1: the additive mask is applied before the select */
  FT_AT_MB, FT_AT_KB, FT_AT_SKIP,          /* tile rows, tile keys, causal: skip masked key blocks */
  FT_AT_NP
};
enum { FT_AT_SEL_NONE = 0, FT_AT_SEL_TENSOR = 1, FT_AT_SEL_CAUSAL = 2 };
/* f: [0] scale, [1] fill value of the select mask */

/* Tile sizes for the shapes: MB rows (a multiple of the GEMM's MR where possible) by KB keys,
 * within FT_ATTN_BUF. Returns 0 when even one row does not fit (head sizes in the thousands). */
static inline int ft_attention_tiles(int64_t sq, int64_t sk, int64_t dv, int64_t *mb, int64_t *kb) {
  int64_t k = sk <= 512 ? sk : 256;
  if (k < 1) k = 1;
  int multi = k < sk;
  for (int64_t m = 4 * FT_GEMM_MR; m >= 1; m = m > FT_GEMM_MR ? m - FT_GEMM_MR : m - 1) {
    int64_t need = m * k + (multi ? 2 * m * dv : 0) + 2 * m;
    if (need <= FT_ATTN_BUF) {
      *mb = m < sq ? m : (sq > 0 ? sq : 1);
      *kb = k;
      return 1;
    }
  }
  return 0;
}

/* The masks on one row of scores s[0..n) (keys j0..j0+n) of query row i. */
static inline void ft_attention_mask_row(const int64_t *p, float fill, const float *addm,
                                         const uint8_t *selm, int64_t b1, int64_t b2, int64_t i,
                                         int64_t j0, int64_t n, float *restrict s) {
  const int64_t *A = p + FT_AT_ADD, *S = p + FT_AT_SEL;
  for (int pass = 0; pass < 2; pass++) {
    int add_now = (pass == 0) == (p[FT_AT_ADD_FIRST] != 0);
    if (add_now && A[0]) {
      const float *m = addm + b1 * A[1] + b2 * A[2] + i * A[3] + j0 * A[4];
      if (A[4] == 1) for (int64_t j = 0; j < n; j++) s[j] += m[j];
      else for (int64_t j = 0; j < n; j++) s[j] += m[j * A[4]];
    } else if (!add_now && S[0] == FT_AT_SEL_TENSOR) {
      const uint8_t *m = selm + b1 * S[2] + b2 * S[3] + i * S[4] + j0 * S[5];
      const uint8_t keep = (uint8_t)S[1];
      if (S[5] == 1) for (int64_t j = 0; j < n; j++) s[j] = (m[j] != 0) == keep ? s[j] : fill;
      else for (int64_t j = 0; j < n; j++) s[j] = (m[j * S[5]] != 0) == keep ? s[j] : fill;
    } else if (!add_now && S[0] == FT_AT_SEL_CAUSAL) {
      int64_t first_masked = i + S[1] + 1 - j0; /* keys j <= i + offset are kept */
      for (int64_t j = first_masked < 0 ? 0 : first_masked; j < n; j++) s[j] = fill;
    }
  }
}

/* Rows [i0, i0+mb) of one (b1, b2). */
static void ft_attention_item(const int64_t *p, const double *f, const void *const *in,
                              void *const *out, int64_t b1, int64_t b2, int64_t i0, int64_t mb) {
  float buf[FT_ATTN_BUF] __attribute__((aligned(64)));
  const int64_t sk = p[FT_AT_SK], dk = p[FT_AT_DK], dv = p[FT_AT_DV], KB = p[FT_AT_KB];
  const int64_t *Q = p + FT_AT_Q, *K = p + FT_AT_K, *V = p + FT_AT_V, *O = p + FT_AT_O;
  const float *q = (const float *)in[0] + Q[0] + b1 * Q[1] + b2 * Q[2] + i0 * Q[3];
  const float *k = (const float *)in[1] + K[0] + b1 * K[1] + b2 * K[2];
  const float *v = (const float *)in[2] + V[0] + b1 * V[1] + b2 * V[2];
  const float *addm = (const float *)in[3];
  const uint8_t *selm = (const uint8_t *)in[4];
  float *o = (float *)out[0] + O[0] + b1 * O[1] + b2 * O[2] + i0 * O[3];
  const float fill = (float)f[1];
  /* keys this block needs: with a causal mask whose fill underflows exp, the masked tail of
   * the key range contributes exact zeros and is skipped */
  int64_t kend = sk;
  if (p[FT_AT_SEL] == FT_AT_SEL_CAUSAL && p[FT_AT_SKIP]) {
    int64_t last = i0 + mb - 1 + p[FT_AT_SEL + 1] + 1;
    kend = last < sk ? (last > 0 ? last : 1) : sk;
  }
  const int single = kend <= KB;
  float *s = buf, *acc = buf + mb * KB, *tmp = acc + mb * dv, *mx = single ? acc : tmp + mb * dv;
  float *sum = mx + mb;

  ft_gemm_op qk;
  memset(&qk, 0, sizeof qk);
  qk.K = dk;
  qk.M = mb;
  qk.a = q; qk.a_rs = Q[3]; qk.a_cs = Q[4];
  qk.b_rs = K[4]; qk.b_cs = K[3]; /* B = K^T: element (d, j) */
  qk.c = s; qk.ldc = KB;
  qk.e.alpha = (float)f[0];
  ft_gemm_op pv;
  memset(&pv, 0, sizeof pv);
  pv.M = mb; pv.N = dv;
  pv.a = s; pv.a_rs = KB; pv.a_cs = 1;
  pv.b_rs = V[3]; pv.b_cs = V[4];
  pv.e.alpha = 1.0f;

  for (int64_t j0 = 0; j0 < kend; j0 += KB) {
    const int64_t n = kend - j0 < KB ? kend - j0 : KB;
    qk.N = n;
    qk.b = k + j0 * K[3];
    for (int64_t jr = 0; jr * FT_GEMM_NR < n; jr++) ft_gemm_column(&qk, 0, mb, jr);
    for (int64_t r = 0; r < mb; r++) {
      float *sr = s + r * KB;
      ft_attention_mask_row(p, fill, addm, selm, b1, b2, i0 + r, j0, n, sr);
      const float m = FT_ROW_FOLD(float, n, sr[0], FT_FOLD_MAX, j, sr[j]);
      const float m_new = j0 == 0 ? m : FT_FOLD_MAX(mx[r], m);
      for (int64_t j = 0; j < n; j++) sr[j] = ft_expf(sr[j] - m_new);
      const float t = FT_ROW_FOLD(float, n, 0.0f, FT_FOLD_ADD, j, sr[j]);
      if (single) { /* the only block: normalize P now, the GEMM then writes the output */
        const float inv = 1.0f / t;
        for (int64_t j = 0; j < n; j++) sr[j] *= inv;
        continue;
      }
      if (j0 == 0) {
        sum[r] = t;
      } else { /* rescale what earlier blocks summed to the new maximum */
        const float corr = ft_expf(mx[r] - m_new);
        sum[r] = sum[r] * corr + t;
        float *ar = acc + r * dv;
        for (int64_t d = 0; d < dv; d++) ar[d] *= corr;
      }
      mx[r] = m_new;
    }
    pv.K = n;
    pv.b = v + j0 * V[3];
    pv.c = single ? o : (j0 == 0 ? acc : tmp);
    pv.ldc = single ? O[3] : dv;
    for (int64_t jr = 0; jr * FT_GEMM_NR < dv; jr++) ft_gemm_column(&pv, 0, mb, jr);
    if (!single && j0 > 0)
      for (int64_t r = 0; r < mb; r++) {
        float *ar = acc + r * dv;
        const float *tr = tmp + r * dv;
        for (int64_t d = 0; d < dv; d++) ar[d] += tr[d];
      }
  }
  if (!single)
    for (int64_t r = 0; r < mb; r++) {
      const float inv = 1.0f / sum[r];
      const float *ar = acc + r * dv;
      float *orow = o + r * O[3];
      for (int64_t d = 0; d < dv; d++) orow[d] = ar[d] * inv;
    }
}

static void ft_attention_f32(const int64_t *p, const double *f, const void *const *in,
                             void *const *out, void *scratch) {
  (void)scratch;
  const int64_t n1 = p[FT_AT_N1], n2 = p[FT_AT_N2], sq = p[FT_AT_SQ], MB = p[FT_AT_MB];
  if (n1 <= 0 || n2 <= 0 || sq <= 0 || p[FT_AT_DV] <= 0) return;
  const int64_t nblk = (sq + MB - 1) / MB, n = n1 * n2 * nblk;
  const int64_t flops = n1 * n2 * sq * p[FT_AT_SK] * (p[FT_AT_DK] + p[FT_AT_DV]) * 2;
  (void)flops;
#pragma omp parallel for schedule(static) if (flops > FT_GEMM_PAR_FLOPS)
  for (int64_t it = 0; it < n; it++) {
    int64_t blk = it % nblk, bh = it / nblk, i0 = blk * MB;
    int64_t mb = sq - i0 < MB ? sq - i0 : MB;
    ft_attention_item(p, f, in, out, bh / n2, bh % n2, i0, mb);
  }
}

#endif
