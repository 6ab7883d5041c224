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
  /* Softmax (log_ 0) and LogSoftmax (log_ 1) share their passes: the maximum m, the sum s of   \
   * exp(x - m), then y = exp(x - m) / s, or y = x - (m + log s). Softmax keeps exp(x - m) in y; \
   * LogSoftmax reads x again at the end (y may be x), so it sums them in scratch (inner = 1)   \
   * or on the fly. Inlined into each kernel with log_ a constant: no branch is left inside. */   \
  static inline __attribute__((always_inline)) void ft_softmax_rows_##sfx(                      \
      const int64_t *p, const void *const *in, void *const *out, void *scratch, const int log_) { \
    const int64_t outer = p[0], n = p[1], inner = p[2];                                          \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      const T *x = (const T *)in[0] + o * n * inner;                                             \
      T *y = (T *)out[0] + o * n * inner;                                                        \
      if (n == 0) break;                                                                         \
      if (inner == 1) {                                                                          \
        T *e = log_ ? (T *)scratch : y;                                                          \
        const T m = ft_row_max_##sfx(x, n);                                                    \
        for (int64_t i = 0; i < n; i++) e[i] = EXP(x[i] - m);                                    \
        const T s = FT_ROW_FOLD(T, n, (T)0, FT_FOLD_ADD, i, e[i]);                               \
        if (log_) {                                                                              \
          const T shift = m + LOG(s);                                                            \
          for (int64_t i = 0; i < n; i++) y[i] = x[i] - shift;                                   \
        } else {                                                                                 \
          const T inv = 1 / s;                                                                   \
          for (int64_t i = 0; i < n; i++) y[i] *= inv;                                           \
        }                                                                                        \
        continue;                                                                                \
      }                                                                                          \
      T *mx = (T *)scratch, *sum = mx + inner;                                                   \
      ft_colmax_##sfx(x, n, inner, mx);                                                          \
      for (int64_t i = 0; i < inner; i++) sum[i] = 0;                                            \
      for (int64_t k = 0; k < n; k++) {                                                          \
        const T *xr = x + k * inner;                                                             \
        T *yr = y + k * inner;                                                                   \
        if (log_) for (int64_t i = 0; i < inner; i++) sum[i] += EXP(xr[i] - mx[i]);              \
        else for (int64_t i = 0; i < inner; i++) { yr[i] = EXP(xr[i] - mx[i]); sum[i] += yr[i]; } \
      }                                                                                          \
      for (int64_t i = 0; i < inner; i++) sum[i] = log_ ? mx[i] + LOG(sum[i]) : 1 / sum[i];      \
      for (int64_t k = 0; k < n; k++) {                                                          \
        const T *xr = x + k * inner;                                                             \
        T *yr = y + k * inner;                                                                   \
        if (log_) for (int64_t i = 0; i < inner; i++) yr[i] = xr[i] - sum[i];                    \
        else for (int64_t i = 0; i < inner; i++) yr[i] *= sum[i];                                \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  static void ft_softmax_##sfx(const int64_t *p, const double *f, const void *const *in,        \
                               void *const *out, void *scratch) {                                \
    (void)f;                                                                                     \
    ft_softmax_rows_##sfx(p, in, out, scratch, 0);                                               \
  }                                                                                              \
  static void ft_log_softmax_##sfx(const int64_t *p, const double *f, const void *const *in,    \
                                   void *const *out, void *scratch) {                            \
    (void)f;                                                                                     \
    ft_softmax_rows_##sfx(p, in, out, scratch, 1);                                               \
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
