/* Softmax, LogSoftmax and Hardmax along one axis.
 *
 * p: [outer, n, inner]: the input is outer blocks of n rows of inner elements, the axis being the
 * n one (opsets before 13 flatten to 2-D: inner = 1). All three subtract the maximum first, so
 * exp never overflows. With inner = 1 each row is contiguous: fold it with vector accumulators
 * (rowreduce.h). With inner > 1 the per-position maxima and sums live in scratch and every loop
 * runs along contiguous memory. y may be x (in place): each value is read before it is written.
 *
 * scratch: inner > 1: 2 * inner elements; LogSoftmax with inner = 1: n elements; Hardmax:
 * inner int64 indices, then inner elements. */
#ifndef FT_SOFTMAX_H
#define FT_SOFTMAX_H

#include <math.h>
#include <stdint.h>

#include "fastmath.h"
#include "rowreduce.h"
#include "tensor.h"

#define FT_SOFTMAX_FAMILY(sfx, T, EXP, LOG)                                                      \
  /* the per-position maximum over n rows into mx (inner elements) */                            \
  static inline void ft_colmax_##sfx(const T *x, int64_t n, int64_t inner, T *mx) {             \
    for (int64_t i = 0; i < inner; i++) mx[i] = x[i];                                            \
    for (int64_t k = 1; k < n; k++) {                                                            \
      const T *row = x + k * inner;                                                              \
      for (int64_t i = 0; i < inner; i++) mx[i] = row[i] > mx[i] ? row[i] : mx[i];                \
    }                                                                                            \
  }                                                                                              \
  static void ft_softmax_##sfx(const int64_t *p, const double *f, const void *const *in,        \
                               void *const *out, void *scratch) {                                \
    (void)f;                                                                                     \
    const int64_t outer = p[0], n = p[1], inner = p[2];                                          \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      const T *x = (const T *)in[0] + o * n * inner;                                             \
      T *y = (T *)out[0] + o * n * inner;                                                        \
      if (n == 0) break;                                                                         \
      if (inner == 1) {                                                                          \
        const T m = ft_row_max_##sfx(x, n);                                                    \
        for (int64_t i = 0; i < n; i++) y[i] = EXP(x[i] - m);                                    \
        const T inv = 1 / FT_ROW_FOLD(T, n, (T)0, FT_FOLD_ADD, i, y[i]);                         \
        for (int64_t i = 0; i < n; i++) y[i] *= inv;                                             \
        continue;                                                                                \
      }                                                                                          \
      T *mx = (T *)scratch, *sum = mx + inner;                                                   \
      ft_colmax_##sfx(x, n, inner, mx);                                                          \
      for (int64_t i = 0; i < inner; i++) sum[i] = 0;                                            \
      for (int64_t k = 0; k < n; k++) {                                                          \
        const T *xr = x + k * inner;                                                             \
        T *yr = y + k * inner;                                                                   \
        for (int64_t i = 0; i < inner; i++) { yr[i] = EXP(xr[i] - mx[i]); sum[i] += yr[i]; }     \
      }                                                                                          \
      for (int64_t i = 0; i < inner; i++) sum[i] = 1 / sum[i];                                   \
      for (int64_t k = 0; k < n; k++) {                                                          \
        T *yr = y + k * inner;                                                                   \
        for (int64_t i = 0; i < inner; i++) yr[i] *= sum[i];                                     \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  /* log softmax = x - (m + log(sum exp(x - m))) */                                              \
  static void ft_log_softmax_##sfx(const int64_t *p, const double *f, const void *const *in,    \
                                   void *const *out, void *scratch) {                            \
    (void)f;                                                                                     \
    const int64_t outer = p[0], n = p[1], inner = p[2];                                          \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      const T *x = (const T *)in[0] + o * n * inner;                                             \
      T *y = (T *)out[0] + o * n * inner;                                                        \
      if (n == 0) break;                                                                         \
      if (inner == 1) {                                                                          \
        T *e = (T *)scratch;                                                                     \
        const T m = ft_row_max_##sfx(x, n);                                                    \
        for (int64_t i = 0; i < n; i++) e[i] = EXP(x[i] - m);                                    \
        const T shift = m + LOG(FT_ROW_FOLD(T, n, (T)0, FT_FOLD_ADD, i, e[i]));                  \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] - shift;                                     \
        continue;                                                                                \
      }                                                                                          \
      T *mx = (T *)scratch, *sum = mx + inner;                                                   \
      ft_colmax_##sfx(x, n, inner, mx);                                                          \
      for (int64_t i = 0; i < inner; i++) sum[i] = 0;                                            \
      for (int64_t k = 0; k < n; k++) {                                                          \
        const T *xr = x + k * inner;                                                             \
        for (int64_t i = 0; i < inner; i++) sum[i] += EXP(xr[i] - mx[i]);                        \
      }                                                                                          \
      for (int64_t i = 0; i < inner; i++) sum[i] = mx[i] + LOG(sum[i]);                          \
      for (int64_t k = 0; k < n; k++) {                                                          \
        const T *xr = x + k * inner;                                                             \
        T *yr = y + k * inner;                                                                   \
        for (int64_t i = 0; i < inner; i++) yr[i] = xr[i] - sum[i];                              \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  /* hardmax: 1 at the first maximum of each row, 0 elsewhere */                                 \
  static void ft_hardmax_##sfx(const int64_t *p, const double *f, const void *const *in,        \
                               void *const *out, void *scratch) {                                \
    (void)f;                                                                                     \
    const int64_t outer = p[0], n = p[1], inner = p[2];                                          \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      const T *x = (const T *)in[0] + o * n * inner;                                             \
      T *y = (T *)out[0] + o * n * inner;                                                        \
      int64_t *at = (int64_t *)scratch;                                                          \
      T *best = (T *)(at + inner);                                                               \
      for (int64_t i = 0; i < inner; i++) { best[i] = x[i]; at[i] = 0; }                         \
      for (int64_t k = 1; k < n; k++)                                                            \
        for (int64_t i = 0; i < inner; i++)                                                      \
          if (x[k * inner + i] > best[i]) { best[i] = x[k * inner + i]; at[i] = k; }             \
      for (int64_t k = 0; k < n; k++)                                                            \
        for (int64_t i = 0; i < inner; i++) y[k * inner + i] = at[i] == k;                       \
    }                                                                                            \
  }

FT_SOFTMAX_FAMILY(f32, float, ft_expf, ft_logf)
FT_SOFTMAX_FAMILY(f64, double, exp, log)

#endif
