/* Einsum (a general contraction) and Det.
 *
 * Einsum p: [n_in, n_out_labels, n_sum_labels, sizes[L], strides of input 0 [L], ... of input
 * n-1 [L]] with L = n_out_labels + n_sum_labels: the output labels first, in output order, then
 * the summed ones. A label an input lacks has stride 0 there; a label an input repeats (a
 * diagonal, "ii") has the sum of its strides. The output is dense over the output labels; each
 * element sums the product of the inputs over every combination of the summed labels.
 *
 * Det p: [batch, n]; LU with partial pivoting in double, scratch n * n doubles. */
#ifndef FT_LINALG_H
#define FT_LINALG_H

#include <math.h>
#include <stdint.h>

#include "tensor.h"

#define FT_EINSUM_MAX_IN 8
#define FT_EINSUM_MAX_LABELS 64

#define FT_EINSUM(S, T, ACC)                                                                     \
  static void ft_einsum_##S(const int64_t *p, const double *f, const void *const *in,           \
                            void *const *out, void *scratch) {                                   \
    (void)f; (void)scratch;                                                                      \
    int n = (int)p[0], no = (int)p[1], ns = (int)p[2], L = no + ns;                              \
    const int64_t *size = p + 3, *st = p + 3 + L;                                                \
    const T *X[FT_EINSUM_MAX_IN];                                                                \
    for (int i = 0; i < n; i++) X[i] = (const T *)in[i];                                         \
    T *Y = (T *)out[0];                                                                          \
    int64_t n_out = 1, n_sum = 1;                                                                \
    for (int l = 0; l < no; l++) n_out *= size[l];                                               \
    for (int l = no; l < L; l++) n_sum *= size[l];                                               \
    int64_t oi[FT_EINSUM_MAX_LABELS] = {0}, ooff[FT_EINSUM_MAX_IN] = {0};                        \
    for (int64_t o = 0; o < n_out; o++) {                                                        \
      ACC acc = 0;                                                                               \
      int64_t si[FT_EINSUM_MAX_LABELS] = {0}, off[FT_EINSUM_MAX_IN];                             \
      for (int i = 0; i < n; i++) off[i] = ooff[i];                                              \
      for (int64_t s = 0; s < n_sum; s++) {                                                      \
        ACC prod = 1;                                                                            \
        for (int i = 0; i < n; i++) prod *= (ACC)X[i][off[i]];                                   \
        acc += prod;                                                                             \
        for (int l = L - 1; l >= no; l--) { /* next combination of the summed labels */          \
          for (int i = 0; i < n; i++) off[i] += st[i * L + l];                                   \
          if (++si[l] < size[l]) break;                                                          \
          for (int i = 0; i < n; i++) off[i] -= st[i * L + l] * size[l];                         \
          si[l] = 0;                                                                             \
        }                                                                                        \
      }                                                                                          \
      Y[o] = (T)acc;                                                                             \
      for (int l = no - 1; l >= 0; l--) { /* next output element */                              \
        for (int i = 0; i < n; i++) ooff[i] += st[i * L + l];                                    \
        if (++oi[l] < size[l]) break;                                                            \
        for (int i = 0; i < n; i++) ooff[i] -= st[i * L + l] * size[l];                          \
        oi[l] = 0;                                                                               \
      }                                                                                          \
    }                                                                                            \
  }
FT_EINSUM(f32, float, double)
FT_EINSUM(f64, double, double)
FT_EINSUM(i32, int32_t, int64_t)
FT_EINSUM(i64, int64_t, int64_t)
#undef FT_EINSUM

#define FT_DET(S, T)                                                                             \
  static void ft_det_##S(const int64_t *p, const double *f, const void *const *in,              \
                         void *const *out, void *scratch) {                                      \
    (void)f;                                                                                     \
    int64_t nb = p[0], n = p[1];                                                                 \
    const T *X = (const T *)in[0];                                                               \
    T *Y = (T *)out[0];                                                                          \
    double *a = (double *)scratch;                                                               \
    for (int64_t b = 0; b < nb; b++) {                                                           \
      for (int64_t i = 0; i < n * n; i++) a[i] = (double)X[b * n * n + i];                       \
      double det = 1;                                                                            \
      for (int64_t c = 0; c < n && det != 0; c++) {                                              \
        int64_t piv = c;                                                                         \
        for (int64_t r = c + 1; r < n; r++)                                                      \
          if (fabs(a[r * n + c]) > fabs(a[piv * n + c])) piv = r;                                \
        if (a[piv * n + c] == 0) { det = 0; break; }                                             \
        if (piv != c) {                                                                          \
          for (int64_t j = 0; j < n; j++) {                                                      \
            double t = a[c * n + j]; a[c * n + j] = a[piv * n + j]; a[piv * n + j] = t;          \
          }                                                                                      \
          det = -det;                                                                            \
        }                                                                                        \
        double d = a[c * n + c];                                                                 \
        det *= d;                                                                                \
        for (int64_t r = c + 1; r < n; r++) {                                                    \
          double m = a[r * n + c] / d;                                                           \
          for (int64_t j = c + 1; j < n; j++) a[r * n + j] -= m * a[c * n + j];                  \
        }                                                                                        \
      }                                                                                          \
      Y[b] = (T)det;                                                                             \
    }                                                                                            \
  }
FT_DET(f32, float)
FT_DET(f64, double)
#undef FT_DET

#endif
