/* Fused layer normalizations over the last axis (float32), the ops the fusion passes write:
 *
 *   ft_skip_layernorm_f32   y = LN(x [+ bias] [+ skip]) * gamma [+ beta], and the sum itself
 *                           when the graph reads it (ftax.LayerNorm, ftax.SkipLayerNorm)
 *   ft_embed_layernorm_f32  y = LN(table0[ids0] + table1[ids1] + ... [+ dense]) * gamma [+ beta],
 *                           and the sum (ftax.EmbedLayerNorm)
 *
 * One row at a time, two passes over it: the first adds the terms, writes the sum (into the sum
 * output, or into y) and accumulates the moments; the second, on a row that is still in L1,
 * normalizes. The moments are taken about a shift K near the mean (sums of x - K and of
 * (x - K)^2): one pass, and none of the cancellation of a plain sum of squares when the mean is
 * large against the spread. Vector lanes are GCC vector types (AVX-512 with -march=native,
 * narrower registers elsewhere); every row is computed by the same sequence of operations, so
 * results do not depend on the thread count. Each row is read before it is written, so y may be
 * x (in place). */
#ifndef FT_FUSED_NORM_H
#define FT_FUSED_NORM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "parallel.h"
#include "tensor.h"

typedef float ft_fln_v __attribute__((vector_size(64)));
#define FT_FLN_W 16 /* floats per vector */

static inline ft_fln_v ft_fln_load(const float *p) { ft_fln_v v; memcpy(&v, p, sizeof v); return v; }
static inline void ft_fln_store(float *p, ft_fln_v v) { memcpy(p, &v, sizeof v); }

/* Sum the nt term rows t[0..nt) into s (n floats; s NULL: not stored) and return the mean and 1/sqrt(var + eps).
 * nt is a constant where this is inlined, so the adds unroll. */
static inline __attribute__((always_inline)) void ft_fln_sum_row(const int nt, const float *const *t, float *s,
                                                                 int64_t n, float eps, float *mean, float *rstd) {
  /* the shift: the mean of the first (up to) 16 elements, so that one outlier of the row (the
   * large feature dims of trained transformers) does not make the shift far from the mean */
  const int64_t w0 = n < FT_FLN_W ? n : FT_FLN_W;
  float k0 = 0;
  for (int64_t i = 0; i < w0; i++) {
    float v = t[0][i];
    for (int j = 1; j < nt; j++) v += t[j][i];
    k0 += v;
  }
  k0 /= (float)w0;
  const ft_fln_v K = (ft_fln_v){0} + k0;
  ft_fln_v a1 = {0}, a2 = {0}, b1 = {0}, b2 = {0};
  int64_t i = 0;
  for (; i + 2 * FT_FLN_W <= n; i += 2 * FT_FLN_W) { /* two chains: adds wait on their latency */
    ft_fln_v v = ft_fln_load(t[0] + i), w = ft_fln_load(t[0] + i + FT_FLN_W);
    for (int j = 1; j < nt; j++) { v += ft_fln_load(t[j] + i); w += ft_fln_load(t[j] + i + FT_FLN_W); }
    if (s) { ft_fln_store(s + i, v); ft_fln_store(s + i + FT_FLN_W, w); }
    v -= K;
    w -= K;
    a1 += v; a2 += v * v;
    b1 += w; b2 += w * w;
  }
  a1 += b1;
  a2 += b2;
  for (; i + FT_FLN_W <= n; i += FT_FLN_W) {
    ft_fln_v v = ft_fln_load(t[0] + i);
    for (int j = 1; j < nt; j++) v += ft_fln_load(t[j] + i);
    if (s) ft_fln_store(s + i, v);
    v -= K;
    a1 += v; a2 += v * v;
  }
  /* the tail (under 16) into separate lanes; a loop bounded by (int)(n - i) keeps GCC from a
   * bogus undefined-behavior warning when n is a known constant */
  for (int l = 0; l < (int)(n - i); l++) {
    float v = t[0][i + l];
    for (int j = 1; j < nt; j++) v += t[j][i + l];
    if (s) s[i + l] = v;
    v -= k0;
    a1[l] += v;
    a2[l] += v * v;
  }
  for (int w = FT_FLN_W / 2; w > 0; w /= 2) /* lanes combined as a tree */
    for (int l = 0; l < w; l++) { a1[l] += a1[l + w]; a2[l] += a2[l + w]; }
  const float d = a1[0] / (float)n, var = a2[0] / (float)n - d * d;
  *mean = k0 + d;
  *rstd = 1.0f / sqrtf((var > 0 ? var : 0) + eps);
}

/* y = (s - mean) * rstd * gamma [+ beta] over one row. */
static inline void ft_fln_normalize(const float *s, float *y, int64_t n, float mean, float rstd,
                                    const float *gamma, const float *beta) {
  const ft_fln_v m = (ft_fln_v){0} + mean, r = (ft_fln_v){0} + rstd;
  int64_t i = 0;
  if (beta) {
    for (; i + FT_FLN_W <= n; i += FT_FLN_W)
      ft_fln_store(y + i, (ft_fln_load(s + i) - m) * r * ft_fln_load(gamma + i) + ft_fln_load(beta + i));
    for (int l = 0; l < (int)(n - i); l++) y[i + l] = (s[i + l] - mean) * rstd * gamma[i + l] + beta[i + l];
  } else {
    for (; i + FT_FLN_W <= n; i += FT_FLN_W)
      ft_fln_store(y + i, (ft_fln_load(s + i) - m) * r * ft_fln_load(gamma + i));
    for (int l = 0; l < (int)(n - i); l++) y[i + l] = (s[i + l] - mean) * rstd * gamma[i + l];
  }
}

/* Rows worth waking threads for (a row of BERT-base is 768 floats). */
#define FT_FLN_PAR_ELEMS (1 << 16)

/* Rows [0, rows) of x [+ bias] [+ skip] normalized into Y; the sum into Sum when not NULL. The
 * sum is x + bias + skip, added in that order (the order of the graph it replaces: bias first,
 * then the residual). */
typedef struct {
  int64_t cols;
  const float *X, *bias, *S, *gamma, *beta;
  float eps, *Y, *Sum;
} ft_fln_ctx;

static void ft_fln_rows_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_fln_ctx *c = (const ft_fln_ctx *)ctx;
  const int64_t cols = c->cols;
  const float *X = c->X, *bias = c->bias, *S = c->S, *gamma = c->gamma, *beta = c->beta;
  const float eps = c->eps;
  float *Y = c->Y, *Sum = c->Sum;
  for (int64_t r = lo; r < hi; r++) {
    const float *x = X + r * cols;
    float *y = Y + r * cols, *s = Sum ? Sum + r * cols : y, mean, rstd;
    const float *t[3] = {x, bias ? bias : (S ? S + r * cols : NULL), bias && S ? S + r * cols : NULL};
    const int nt = 1 + (bias != NULL) + (S != NULL);
    if (!Sum && nt == 1) { /* a plain layer norm: y is written in the second pass only */
      ft_fln_sum_row(1, t, NULL, cols, eps, &mean, &rstd);
      ft_fln_normalize(x, y, cols, mean, rstd, gamma, beta);
      continue;
    }
    if (nt == 1) ft_fln_sum_row(1, t, s, cols, eps, &mean, &rstd);
    else if (nt == 2) ft_fln_sum_row(2, t, s, cols, eps, &mean, &rstd);
    else ft_fln_sum_row(3, t, s, cols, eps, &mean, &rstd);
    ft_fln_normalize(s, y, cols, mean, rstd, gamma, beta);
  }
}


static void ft_fln_rows(int64_t rows, int64_t cols, const float *X, const float *bias, const float *S,
                        const float *gamma, const float *beta, float eps, float *Y, float *Sum) {
  ft_fln_ctx c = {cols, X, bias, S, gamma, beta, eps, Y, Sum};
  ft_parallel_for(rows, rows * cols >= FT_FLN_PAR_ELEMS, ft_fln_rows_run, &c);
}

/* ftax.LayerNorm. p: [rows, cols, has_beta]; f[0] = epsilon. in: X, Gamma, Beta; out: Y. */
static void ft_fused_layernorm_f32(const int64_t *p, const double *f, const void *const *in,
                                   void *const *out, void *scratch) {
  (void)scratch;
  ft_fln_rows(p[0], p[1], (const float *)in[0], NULL, NULL, (const float *)in[1],
              p[2] ? (const float *)in[2] : NULL, (float)f[0], (float *)out[0], NULL);
}

/* ftax.SkipLayerNorm. p: [rows, cols, has_beta, has_bias, has_sum]; f[0] = epsilon. in: X, Skip,
 * Gamma, Beta, Bias (absent ones NULL or missing at the end); out: Y, then Sum when has_sum. */
static void ft_skip_layernorm_f32(const int64_t *p, const double *f, const void *const *in,
                                  void *const *out, void *scratch) {
  (void)scratch;
  ft_fln_rows(p[0], p[1], (const float *)in[0], p[3] ? (const float *)in[4] : NULL, (const float *)in[1],
              (const float *)in[2], p[2] ? (const float *)in[3] : NULL, (float)f[0], (float *)out[0],
              p[4] ? (float *)out[1] : NULL);
}

/* Embedding lookups, their sum and its layer normalization. p: [rows, cols, n_gather,
 * dense_rows (0: no dense term), has_beta, has_sum, then per gather: vocabulary size, ids are
 * int64 (1) or int32 (0)]; f[0] = epsilon. in: Gamma, Beta, Dense, then (ids, table) per gather.
 * Row r of the output sums table_k[ids_k[r]] over the gathers and row r % dense_rows of Dense
 * (a constant such as position embeddings, broadcast over the batch). A negative id counts
 * from the end of the table; one still out of range adds a row of zeros, as Gather gives. */
#define FT_ELN_MAX_GATHER 4
typedef struct {
  const int64_t *p;
  const void *const *in;
  void *const *out;
  float eps;
} ft_eln_ctx;

static void ft_embed_layernorm_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_eln_ctx *c = (const ft_eln_ctx *)ctx;
  const int64_t *p = c->p;
  const void *const *in = c->in;
  const int64_t cols = p[1], ng = p[2], dense_rows = p[3];
  const int has_beta = p[4] != 0, has_sum = p[5] != 0;
  const float eps = c->eps;
  const float *gamma = (const float *)in[0], *beta = has_beta ? (const float *)in[1] : NULL;
  const float *dense = dense_rows ? (const float *)in[2] : NULL;
  float *Y = (float *)c->out[0], *Sum = has_sum ? (float *)c->out[1] : NULL;
  for (int64_t r = lo; r < hi; r++) {
    const float *t[FT_ELN_MAX_GATHER + 1];
    int nt = 0, missing = 0;
    for (int64_t k = 0; k < ng; k++) {
      const int64_t vocab = p[6 + 2 * k], is64 = p[7 + 2 * k];
      const void *ids = in[3 + 2 * k];
      int64_t id = is64 ? ((const int64_t *)ids)[r] : (int64_t)((const int32_t *)ids)[r];
      if (id < 0) id += vocab;
      if (id < 0 || id >= vocab) { missing = 1; continue; }
      t[nt++] = (const float *)in[4 + 2 * k] + id * cols;
    }
    if (dense) t[nt++] = dense + (r % dense_rows) * cols;
    float *y = Y + r * cols, *s = Sum ? Sum + r * cols : y, mean, rstd;
    if (nt == 0 || missing) { /* an id out of range: a row of zeros stands for its term */
      memset(s, 0, sizeof(float) * (size_t)cols);
      for (int j = 0; j < nt; j++)
        for (int64_t i = 0; i < cols; i++) s[i] += t[j][i];
      const float *one[1] = {s};
      ft_fln_sum_row(1, one, s, cols, eps, &mean, &rstd);
    } else if (nt == 1) ft_fln_sum_row(1, t, s, cols, eps, &mean, &rstd);
    else if (nt == 2) ft_fln_sum_row(2, t, s, cols, eps, &mean, &rstd);
    else if (nt == 3) ft_fln_sum_row(3, t, s, cols, eps, &mean, &rstd);
    else if (nt == 4) ft_fln_sum_row(4, t, s, cols, eps, &mean, &rstd);
    else ft_fln_sum_row(5, t, s, cols, eps, &mean, &rstd);
    ft_fln_normalize(s, y, cols, mean, rstd, gamma, beta);
  }
}


static void ft_embed_layernorm_f32(const int64_t *p, const double *f, const void *const *in,
                                   void *const *out, void *scratch) {
  (void)scratch;
  ft_eln_ctx c = {p, in, out, (float)f[0]};
  ft_parallel_for(p[0], p[0] * p[1] >= FT_FLN_PAR_ELEMS, ft_embed_layernorm_run, &c);
}

#endif
