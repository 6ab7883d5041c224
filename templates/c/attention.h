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
 * A work item is a group of query rows of one (b1, b2). Keys go by in blocks of KB: each
 * block's K^T and V are packed once into the GEMM core's panels (gemm.h), then every sliver of
 * MR rows gets its scores from the micro-kernel, its masks and softmax, and P.V from the
 * micro-kernel again, written into the output rows. Only MR x KB scores exist at a time; with
 * several key blocks a running row maximum and sum rescale what earlier blocks wrote (online
 * softmax). When every key fits one block (the common case), P.V divided by the row sums is
 * the output at once.
 *
 * Every element is computed by the same sequence of operations whatever the thread count. */
#ifndef FT_ATTENTION_H
#define FT_ATTENTION_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attention_params.h"
#include "fastmath.h"
#include "gemm.h"
#include "rowreduce.h"
#include "tensor.h"

/* Floats of the per-thread working buffer on the stack (packed K and V blocks, one sliver of
 * scores and probabilities, row statistics): 128 KiB. */
#define FT_ATTN_BUF 32768
#define FT_ATTN_MAX_ROWS 1024 /* query rows of one work item (their statistics sit in the buffer) */

static inline int64_t ft_attention_roundup(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/* Floats of the buffer for kb keys per block and rg rows per item. */
static inline int64_t ft_attention_buf_floats(int64_t kb, int64_t rg, int64_t dk, int64_t dv) {
  int64_t kbp = ft_attention_roundup(kb, FT_GEMM_NR);
  return kbp * dk + ft_attention_roundup(dv, FT_GEMM_NR) * kb + FT_GEMM_MR * (kbp + dk) + FT_GEMM_MR * FT_GEMM_NR +
         2 * rg;
}

/* Query rows per work item: the rows split into groups only as far as needed to give every
 * one of `threads` threads work, since each group packs the keys and values again. */
static inline int64_t ft_attention_rows(int64_t n1, int64_t n2, int64_t sq, int64_t threads) {
  int64_t groups = (threads + n1 * n2 - 1) / (n1 * n2), most = sq / (4 * FT_GEMM_MR);
  if (groups > most) groups = most;
  if (groups < 1) groups = 1;
  if ((sq + groups - 1) / groups > FT_ATTN_MAX_ROWS) groups = (sq + FT_ATTN_MAX_ROWS - 1) / FT_ATTN_MAX_ROWS;
  int64_t rg = ft_attention_roundup((sq + groups - 1) / groups, FT_GEMM_MR);
  return rg > sq ? sq : rg;
}

/* Keys per block and rows per work item, planned for a 16-thread machine (the kernel takes
 * longer row groups at run time where it has fewer threads and they fit). Every key in one
 * block when it fits the buffer (no rescaling at all). Returns 0 when not even one block of NR
 * keys fits (head sizes in the thousands). */
static inline int ft_attention_tiles(int64_t n1, int64_t n2, int64_t sq, int64_t sk, int64_t dk, int64_t dv,
                                     int64_t *rg, int64_t *kb) {
  *rg = ft_attention_rows(n1, n2, sq, 16);
  if (ft_attention_buf_floats(sk, *rg, dk, dv) <= FT_ATTN_BUF) {
    *kb = sk;
    return 1;
  }
  for (int64_t k = 16 * FT_GEMM_NR; k >= FT_GEMM_NR; k -= FT_GEMM_NR)
    if (ft_attention_buf_floats(k, *rg, dk, dv) <= FT_ATTN_BUF) {
      *kb = k;
      return 1;
    }
  return 0;
}

/* x = exp(x - m) over x[0..n); returns the sum (16 lanes). */
static inline float ft_attn_exp_sum(float *restrict x, int64_t n, float m) {
#ifdef __AVX512F__
  const __m512 mv = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512 e = ft_v16_exp(_mm512_sub_ps(_mm512_loadu_ps(x + j), mv));
    _mm512_storeu_ps(x + j, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (j < n) {
    const __mmask16 t = (__mmask16)((1u << (n - j)) - 1);
    __m512 e = ft_v16_exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + j), mv));
    _mm512_mask_storeu_ps(x + j, t, e);
    acc = _mm512_mask_add_ps(acc, t, acc, e);
  }
  return _mm512_reduce_add_ps(acc);
#else /* 16 lanes of sums as the AVX-512 path has them, in the ISA's vectors (fastmath.h) */
  ft_vn lane[16 / FT_VLEN] = {{0}};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
#pragma GCC unroll 4
    for (int v = 0; v < 16 / FT_VLEN; v++) {
      ft_vn e = ft_vn_expf(*(const ft_vnu *)(x + j + FT_VLEN * v) - m);
      *(ft_vnu *)(x + j + FT_VLEN * v) = e;
      lane[v] += e;
    }
  float t0 = 0;
  for (; j < n; j++) {
    x[j] = ft_expf(x[j] - m);
    t0 += x[j];
  }
  float t = 0;
  for (int v = 0; v < 16 / FT_VLEN; v++)
    for (int l = 0; l < FT_VLEN; l++) t += lane[v][l];
  return t + t0;
#endif
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

/* Query rows [r0, r1) of one (b1, b2). Per key block, K^T and V are packed once into GEMM
 * panels; then for every sliver of MR rows: scores (micro-kernel on the Q rows in place),
 * masks, softmax (online across blocks), P.V (micro-kernel on the scores' rows) into the
 * output rows, divided by the row sums on the way. */
static void ft_attention_item(const int64_t *p, const double *f, const void *const *in,
                              void *const *out, int64_t b1, int64_t b2, int64_t r0, int64_t r1) {
  float buf[FT_ATTN_BUF] __attribute__((aligned(64)));
  const int64_t sk = p[FT_AT_SK], dk = p[FT_AT_DK], dv = p[FT_AT_DV], KB = p[FT_AT_KB];
  const int64_t *Q = p + FT_AT_Q, *K = p + FT_AT_K, *V = p + FT_AT_V, *O = p + FT_AT_O;
  const float *q = (const float *)in[0] + Q[0] + b1 * Q[1] + b2 * Q[2];
  const float *k = (const float *)in[1] + K[0] + b1 * K[1] + b2 * K[2];
  const float *v = (const float *)in[2] + V[0] + b1 * V[1] + b2 * V[2];
  /* the masks are optional inputs: the call has an entry for each only when the plan says the
   * mask is there (a node without masks passes 3 inputs), so in[] is read no further than that */
  const float *addm = p[FT_AT_ADD] ? (const float *)in[3] : NULL;
  const uint8_t *selm = p[FT_AT_SEL] == FT_AT_SEL_TENSOR ? (const uint8_t *)in[4] : NULL;
  float *o = (float *)out[0] + O[0] + b1 * O[1] + b2 * O[2];
  const float scale = (float)f[0], fill = (float)f[1];
  const int skip = p[FT_AT_SEL] == FT_AT_SEL_CAUSAL && p[FT_AT_SKIP];
  const int64_t off = p[FT_AT_SEL + 1];
  /* with a causal mask whose fill underflows exp, keys past the last row's diagonal add exact
   * zeros: leave them out */
  int64_t kend = sk;
  if (skip && r1 + off < sk) kend = r1 + off > 0 ? r1 + off : 1;
  const int single = kend <= KB;
  const int64_t kbp = ft_attention_roundup(KB, FT_GEMM_NR), nvp = (dv + FT_GEMM_NR - 1) / FT_GEMM_NR;
  float *kp = buf, *vp = kp + kbp * dk, *s = vp + nvp * FT_GEMM_NR * KB;
  float *qs = s + FT_GEMM_MR * kbp, *t = qs + FT_GEMM_MR * dk, *mx = t + FT_GEMM_MR * FT_GEMM_NR, *sum = mx + (r1 - r0);

  for (int64_t j0 = 0; j0 < kend; j0 += KB) {
    const int64_t n = kend - j0 < KB ? kend - j0 : KB;
    for (int64_t jr = 0; jr * FT_GEMM_NR < n; jr++) /* K^T block: element (d, j) */
      ft_gemm_pack_b_panel(n, k + j0 * K[3], K[4], K[3], jr, 0, dk, kp + jr * dk * FT_GEMM_NR);
    for (int64_t jr = 0; jr < nvp; jr++)
      ft_gemm_pack_b_panel(dv, v + j0 * V[3], V[3], V[4], jr, 0, n, vp + jr * n * FT_GEMM_NR);
    for (int64_t s0 = r0; s0 < r1; s0 += FT_GEMM_MR) {
      const int mr = r1 - s0 < FT_GEMM_MR ? (int)(r1 - s0) : FT_GEMM_MR;
      int64_t ns = n; /* keys of this block the sliver needs */
      if (skip && s0 + mr + off - j0 < ns) ns = s0 + mr + off - j0;
      if (ns <= 0) continue; /* all hidden: the running sums stay as they are */
      const float *qa = q + s0 * Q[3];
      int64_t lda = Q[3];
      if (Q[4] != 1 && dk > 1) { /* q's columns are strided: gather the sliver's rows */
        for (int r = 0; r < mr; r++)
          for (int64_t d = 0; d < dk; d++) qs[r * dk + d] = qa[r * Q[3] + d * Q[4]];
        qa = qs;
        lda = dk;
      }
      for (int64_t jr = 0; jr * FT_GEMM_NR < ns; jr++) {
        const int64_t c0 = jr * FT_GEMM_NR, nc = ns - c0 < FT_GEMM_NR ? ns - c0 : FT_GEMM_NR;
        ft_gemm_ukernel_rows_mr(mr, dk, qa, lda, kp + jr * dk * FT_GEMM_NR, t, NULL);
        for (int r = 0; r < mr; r++) {
          float *sr = s + r * kbp + c0;
          const float *tr = t + r * FT_GEMM_NR;
          if (nc == FT_GEMM_NR) for (int c = 0; c < FT_GEMM_NR; c++) sr[c] = scale * tr[c];
          else for (int64_t c = 0; c < nc; c++) sr[c] = scale * tr[c];
        }
      }
      float corr[FT_GEMM_MR], inv[FT_GEMM_MR];
      for (int r = 0; r < mr; r++) {
        const int64_t i = s0 + r;
        float *sr = s + r * kbp;
        ft_attention_mask_row(p, fill, addm, selm, b1, b2, i, j0, ns, sr);
        const float m = ft_row_max_f32(sr, ns);
        const float m_new = j0 == 0 || m > mx[i - r0] ? m : mx[i - r0];
        const float tot = ft_attn_exp_sum(sr, ns, m_new);
        if (single) { /* the only block: P.V / sum is the output */
          inv[r] = 1.0f / tot;
        } else if (j0 == 0) {
          sum[i - r0] = tot;
        } else { /* what earlier blocks summed, rescaled to the new maximum */
          corr[r] = ft_expf(mx[i - r0] - m_new);
          sum[i - r0] = sum[i - r0] * corr[r] + tot;
        }
        mx[i - r0] = m_new;
      }
      for (int64_t jr = 0; jr < nvp; jr++) {
        const int64_t c0 = jr * FT_GEMM_NR, nc = dv - c0 < FT_GEMM_NR ? dv - c0 : FT_GEMM_NR;
        ft_gemm_ukernel_rows_mr(mr, ns, s, kbp, vp + jr * n * FT_GEMM_NR, t, NULL);
        for (int r = 0; r < mr; r++) {
          float *orow = o + (s0 + r) * O[3] + c0;
          const float *tr = t + r * FT_GEMM_NR;
          if (single) {
            const float ir = inv[r];
            if (nc == FT_GEMM_NR) for (int c = 0; c < FT_GEMM_NR; c++) orow[c] = tr[c] * ir;
            else for (int64_t c = 0; c < nc; c++) orow[c] = tr[c] * ir;
          } else if (j0 == 0) {
            if (nc == FT_GEMM_NR) for (int c = 0; c < FT_GEMM_NR; c++) orow[c] = tr[c];
            else for (int64_t c = 0; c < nc; c++) orow[c] = tr[c];
          } else {
            const float cr = corr[r];
            if (nc == FT_GEMM_NR) for (int c = 0; c < FT_GEMM_NR; c++) orow[c] = orow[c] * cr + tr[c];
            else for (int64_t c = 0; c < nc; c++) orow[c] = orow[c] * cr + tr[c];
          }
        }
      }
    }
  }
  if (!single)
    for (int64_t i = r0; i < r1; i++) {
      const float inv = 1.0f / sum[i - r0];
      float *orow = o + i * O[3];
      for (int64_t d = 0; d < dv; d++) orow[d] *= inv;
    }
}

typedef struct {
  const int64_t *p;
  const double *f;
  const void *const *in;
  void *const *out;
  int64_t rg;
} ft_attention_ctx;

/* Items [lo, hi): a group of rg query rows of one (batch, head). */
static void ft_attention_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_attention_ctx *c = (const ft_attention_ctx *)ctx;
  const int64_t n2 = c->p[FT_AT_N2], sq = c->p[FT_AT_SQ], RG = c->rg, ng = (sq + RG - 1) / RG;
  for (int64_t it = lo; it < hi; it++) {
    int64_t grp = it % ng, bh = it / ng, r0 = grp * RG, r1 = r0 + RG < sq ? r0 + RG : sq;
    ft_attention_item(c->p, c->f, c->in, c->out, bh / n2, bh % n2, r0, r1);
  }
}

static void ft_attention_f32(const int64_t *p, const double *f, const void *const *in,
                             void *const *out, void *scratch) {
  (void)scratch;
  const int64_t n1 = p[FT_AT_N1], n2 = p[FT_AT_N2], sq = p[FT_AT_SQ];
  if (n1 <= 0 || n2 <= 0 || sq <= 0 || p[FT_AT_DV] <= 0) return;
  const int64_t flops = n1 * n2 * sq * p[FT_AT_SK] * (p[FT_AT_DK] + p[FT_AT_DV]) * 2;
  /* Fewer threads than the plan's 16 need fewer row groups: ViT-B/16's 12 heads of 197 rows
   * were 24 items, each packing its head's keys and values; at 1 or 2 threads one item per head
   * packs them once. The key blocks stay the plan's, so every element is computed the same way
   * whatever the thread count; not under a causal skip, where a group's last row decides which
   * keys it leaves out. */
  int64_t RG = p[FT_AT_RG];
  if (!p[FT_AT_SKIP]) {
    int64_t rg = ft_attention_rows(n1, n2, sq, ft_get_threads());
    if (rg > RG && ft_attention_buf_floats(p[FT_AT_KB], rg, p[FT_AT_DK], p[FT_AT_DV]) <= FT_ATTN_BUF) RG = rg;
  }
  /* items differ in cost under a causal mask: the pool hands them out as threads get free */
  ft_attention_ctx c = {p, f, in, out, RG};
  ft_parallel_for(n1 * n2 * ((sq + RG - 1) / RG), flops > FT_GEMM_PAR_FLOPS, ft_attention_run, &c);
}

#endif
