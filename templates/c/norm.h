/* Normalizations: LayerNormalization, BatchNormalization (inference), InstanceNormalization,
 * LpNormalization, MeanVarianceNormalization, LRN.
 *
 * Mean and variance are two passes over each row (mean first, then the mean of squared
 * deviations), which loses nothing to cancellation; the rows fold with vector accumulators
 * (rowreduce.h). Each kernel reads a row completely before writing it, so y may be x. */
#ifndef FT_NORM_H
#define FT_NORM_H

#include <math.h>
#include <stdint.h>

#include "reduce.h"
#include "rowreduce.h"
#include "tensor.h"

#define FT_NORM_FAMILY(sfx, T, SQRT)                                                             \
  /* mean and 1 / sqrt(variance + eps) of one contiguous row */                                  \
  static inline void ft_row_moments_##sfx(const T *x, int64_t n, T eps, T *mean, T *inv_std) {  \
    const T m = FT_ROW_FOLD(T, n, (T)0, FT_FOLD_ADD, i, x[i]) / (T)n;                            \
    const T var = FT_ROW_FOLD(T, n, (T)0, FT_FOLD_ADD, i, (x[i] - m) * (x[i] - m)) / (T)n;       \
    *mean = m;                                                                                   \
    *inv_std = 1 / SQRT(var + eps);                                                              \
  }                                                                                              \
  /* LayerNormalization. p: [rows, cols, scale_n, bias_n, has_mean, has_inv_std] (scale_n:     \
   * cols, or 1 for one value broadcast; bias_n: the same, or 0 without a bias); f[0] = epsilon. \
   * in: X, Scale, B; out: Y, then Mean and InvStdDev (one per row) where p says they exist:     \
   * the arrays are only as long as the node's inputs and outputs. */                            \
  static void ft_layernorm_##sfx(const int64_t *p, const double *f, const void *const *in,      \
                                 void *const *out, void *scratch) {                              \
    (void)scratch;                                                                               \
    const int64_t rows = p[0], cols = p[1], scale_n = p[2], bias_n = p[3];                       \
    const T eps = (T)f[0];                                                                       \
    const T *scale = (const T *)in[1], *bias = bias_n ? (const T *)in[2] : NULL;                \
    T *mean_out = p[4] ? (T *)out[1] : NULL, *inv_out = p[5] ? (T *)out[2] : NULL;               \
    for (int64_t r = 0; r < rows; r++) {                                                         \
      const T *x = (const T *)in[0] + r * cols;                                                  \
      T *y = (T *)out[0] + r * cols;                                                             \
      T m, inv;                                                                                  \
      ft_row_moments_##sfx(x, cols, eps, &m, &inv);                                              \
      if (mean_out) mean_out[r] = m;                                                             \
      if (inv_out) inv_out[r] = inv;                                                             \
      if (scale_n == cols && bias_n == cols)                                                     \
        for (int64_t i = 0; i < cols; i++) y[i] = (x[i] - m) * inv * scale[i] + bias[i];         \
      else if (scale_n == cols && bias_n == 0)                                                   \
        for (int64_t i = 0; i < cols; i++) y[i] = (x[i] - m) * inv * scale[i];                   \
      else {                                                                                     \
        const int64_t ss = scale_n == cols, bs = bias_n == cols;                                 \
        for (int64_t i = 0; i < cols; i++)                                                       \
          y[i] = (x[i] - m) * inv * scale[i * ss] + (bias_n ? bias[i * bs] : (T)0);              \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  /* BatchNormalization in inference mode. p: [N, C, S]; f[0] = epsilon. in: X, scale, B,      \
   * mean, var. y = x * a[c] + b[c] with a = scale / sqrt(var + eps), b = B - mean * a, both     \
   * computed into scratch (2 * C elements) first. */                                            \
  static void ft_batchnorm_##sfx(const int64_t *p, const double *f, const void *const *in,      \
                                 void *const *out, void *scratch) {                              \
    const int64_t N = p[0], C = p[1], S = p[2];                                                  \
    const T *scale = (const T *)in[1], *B = (const T *)in[2];                                    \
    const T *mean = (const T *)in[3], *var = (const T *)in[4];                                   \
    T *a = (T *)scratch, *b = a + C;                                                             \
    for (int64_t c = 0; c < C; c++) {                                                            \
      a[c] = scale[c] / SQRT(var[c] + (T)f[0]);                                                  \
      b[c] = B[c] - mean[c] * a[c];                                                              \
    }                                                                                            \
    for (int64_t n = 0; n < N; n++)                                                              \
      for (int64_t c = 0; c < C; c++) {                                                          \
        const T *x = (const T *)in[0] + (n * C + c) * S;                                         \
        T *y = (T *)out[0] + (n * C + c) * S;                                                    \
        const T ac = a[c], bc = b[c];                                                            \
        for (int64_t s = 0; s < S; s++) y[s] = x[s] * ac + bc;                                   \
      }                                                                                          \
  }                                                                                              \
  /* InstanceNormalization. p: [N, C, S]; f[0] = epsilon. in: X, scale, B (C each). */          \
  static void ft_instnorm_##sfx(const int64_t *p, const double *f, const void *const *in,       \
                                void *const *out, void *scratch) {                               \
    (void)scratch;                                                                               \
    const int64_t N = p[0], C = p[1], S = p[2];                                                  \
    const T *scale = (const T *)in[1], *B = (const T *)in[2];                                    \
    for (int64_t n = 0; n < N; n++)                                                              \
      for (int64_t c = 0; c < C; c++) {                                                          \
        const T *x = (const T *)in[0] + (n * C + c) * S;                                         \
        T *y = (T *)out[0] + (n * C + c) * S;                                                    \
        T m, inv;                                                                                \
        ft_row_moments_##sfx(x, S, (T)f[0], &m, &inv);                                           \
        const T a = inv * scale[c], b = B[c] - m * a;                                            \
        for (int64_t s = 0; s < S; s++) y[s] = x[s] * a + b;                                     \
      }                                                                                          \
  }                                                                                              \
  /* LpNormalization. p: [outer, n, inner, order (1 or 2)]: y = x / ||x|| along the n axis.      \
   * scratch: inner elements when inner > 1. A zero norm gives zeros. */                         \
  static void ft_lpnorm_##sfx(const int64_t *p, const double *f, const void *const *in,         \
                              void *const *out, void *scratch) {                                 \
    (void)f;                                                                                     \
    const int64_t outer = p[0], n = p[1], inner = p[2], l1 = p[3] == 1;                          \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      const T *x = (const T *)in[0] + o * n * inner;                                             \
      T *y = (T *)out[0] + o * n * inner;                                                        \
      if (inner == 1) {                                                                          \
        T norm = l1 ? FT_ROW_FOLD(T, n, (T)0, FT_FOLD_ADD, i, x[i] < 0 ? -x[i] : x[i])           \
                    : SQRT(FT_ROW_FOLD(T, n, (T)0, FT_FOLD_ADD, i, x[i] * x[i]));                \
        const T inv = norm == 0 ? 0 : 1 / norm;                                                  \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] * inv;                                       \
        continue;                                                                                \
      }                                                                                          \
      T *acc = (T *)scratch;                                                                     \
      for (int64_t i = 0; i < inner; i++) acc[i] = 0;                                            \
      for (int64_t k = 0; k < n; k++)                                                            \
        for (int64_t i = 0; i < inner; i++) {                                                    \
          const T v = x[k * inner + i];                                                          \
          acc[i] += l1 ? (v < 0 ? -v : v) : v * v;                                               \
        }                                                                                        \
      for (int64_t i = 0; i < inner; i++) {                                                      \
        const T norm = l1 ? acc[i] : SQRT(acc[i]);                                               \
        acc[i] = norm == 0 ? 0 : 1 / norm;                                                       \
      }                                                                                          \
      for (int64_t k = 0; k < n; k++)                                                            \
        for (int64_t i = 0; i < inner; i++) y[k * inner + i] = x[k * inner + i] * acc[i];        \
    }                                                                                            \
  }                                                                                              \
  /* MeanVarianceNormalization over any set of axes: y = (x - mean) / (sqrt(var) + 1e-9), the   \
   * formula of the ONNX function. p: the Reduce* layout of reduce.h for those axes. scratch:    \
   * 2 * n_out elements (means, then mean squares, then the scale). */                           \
  static void ft_mvn_##sfx(const int64_t *p, const double *f, const void *const *in,            \
                           void *const *out, void *scratch) {                                    \
    (void)f;                                                                                     \
    const int r = (int)p[0];                                                                     \
    const int64_t count = p[1 + 2 * r], n_out = p[2 + 2 * r];                                    \
    const T *X = (const T *)in[0];                                                               \
    T *Y = (T *)out[0], *M = (T *)scratch, *Q = M + n_out;                                       \
    for (int64_t i = 0; i < n_out; i++) M[i] = Q[i] = 0;                                         \
    FT_REDUCE_PASS(p, T, X, M, M, (T)0, FT_R_ID, FT_R_ADD);                                      \
    FT_REDUCE_PASS(p, T, X, Q, Q, (T)0, FT_R_SQ, FT_R_ADD);                                      \
    for (int64_t i = 0; i < n_out; i++) {                                                        \
      M[i] /= (T)count;                                                                          \
      T var = Q[i] / (T)count - M[i] * M[i];                                                     \
      Q[i] = 1 / (SQRT(var > 0 ? var : 0) + (T)1e-9);                                            \
    }                                                                                            \
    /* the same walk as the reduction, writing instead of folding */                             \
    const int64_t *d = p + 1, *os = p + 1 + r;                                                   \
    int64_t inner = d[r - 1], outer = 1, idx[FT_MAX_RANK] = {0}, off = 0;                        \
    for (int k = 0; k < r - 1; k++) outer *= d[k];                                               \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      const T *x = X + o * inner;                                                                \
      T *y = Y + o * inner;                                                                      \
      if (os[r - 1] == 0) {                                                                      \
        const T m = M[off], s = Q[off];                                                          \
        for (int64_t i = 0; i < inner; i++) y[i] = (x[i] - m) * s;                               \
      } else                                                                                     \
        for (int64_t i = 0; i < inner; i++) y[i] = (x[i] - M[off + i]) * Q[off + i];             \
      for (int k = r - 2; k >= 0; k--) {                                                         \
        idx[k]++;                                                                                \
        off += os[k];                                                                            \
        if (idx[k] < d[k]) break;                                                                \
        off -= os[k] * d[k];                                                                     \
        idx[k] = 0;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }

/* LRN: y = x / (bias + alpha / size * sum of x^2 over a window of channels)^beta, the window
 * being [c - (size-1)/2 rounded down, c + (size-1)/2 rounded up]. p: [N, C, S, size];
 * f: [alpha, beta, bias]; scratch: S elements (the window's sums for one channel). Not in place:
 * later channels read earlier channels' inputs. */
#define FT_LRN(sfx, T, POW)                                                                      \
  static void ft_lrn_##sfx(const int64_t *p, const double *f, const void *const *in,            \
                           void *const *out, void *scratch) {                                    \
    const int64_t N = p[0], C = p[1], S = p[2], size = p[3];                                     \
    const T alpha = (T)f[0], beta = (T)f[1], bias = (T)f[2], scale = alpha / (T)size;           \
    T *sum = (T *)scratch;                                                                       \
    for (int64_t n = 0; n < N; n++)                                                              \
      for (int64_t c = 0; c < C; c++) {                                                          \
        int64_t lo = c - (size - 1) / 2, hi = c + size / 2;                                      \
        lo = lo < 0 ? 0 : lo;                                                                    \
        hi = hi > C - 1 ? C - 1 : hi;                                                            \
        for (int64_t s = 0; s < S; s++) sum[s] = 0;                                              \
        for (int64_t j = lo; j <= hi; j++) {                                                     \
          const T *xj = (const T *)in[0] + (n * C + j) * S;                                      \
          for (int64_t s = 0; s < S; s++) sum[s] += xj[s] * xj[s];                               \
        }                                                                                        \
        const T *x = (const T *)in[0] + (n * C + c) * S;                                         \
        T *y = (T *)out[0] + (n * C + c) * S;                                                    \
        for (int64_t s = 0; s < S; s++) y[s] = x[s] / POW(bias + scale * sum[s], beta);          \
      }                                                                                          \
  }
FT_LRN(f32, float, powf)
FT_LRN(f64, double, pow)
#undef FT_LRN

FT_NORM_FAMILY(f32, float, sqrtf)
FT_NORM_FAMILY(f64, double, sqrt)

#endif
