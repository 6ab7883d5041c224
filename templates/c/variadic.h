/* Sum, Mean, Max and Min of n inputs with numpy broadcasting.
 *
 * p: [n, then the broadcast layout of binary.h for n inputs: rank, dims[rank], the strides of
 * each input over the output (rank each)], as ft_plan_broadcast writes it. Each innermost row of
 * the output is first a copy of input 0's row, then combined with the other inputs' rows in turn,
 * so every pass is a flat loop that vectorizes. */
#ifndef FT_VARIADIC_H
#define FT_VARIADIC_H

#include "tensor.h"

#define FT_VARIADIC_MAX 32 /* most inputs a kernel takes (the plan checks) */

/* COMBINE makes the new y from the running value x and the input's value z. */
#define FT_VARIADIC_KERNEL(NAME, T, COMBINE)                                                     \
  static void NAME(const int64_t *p, const double *f, const void *const *in, void *const *out,  \
                   void *scratch) {                                                              \
    (void)f; (void)scratch;                                                                      \
    const int nin = (int)p[0], r = (int)p[1];                                                    \
    const int64_t *d = p + 2, *st = p + 2 + r; /* strides of input j: st[j * r + k] */          \
    T *Y = (T *)out[0];                                                                          \
    int64_t inner = d[r - 1], outer = 1, idx[FT_MAX_RANK] = {0}, off[FT_VARIADIC_MAX] = {0};    \
    for (int k = 0; k < r - 1; k++) outer *= d[k];                                               \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      T *y = Y + o * inner;                                                                      \
      for (int j = 0; j < nin; j++) {                                                            \
        const T *a = (const T *)in[j] + off[j];                                                  \
        const int64_t s = st[j * r + r - 1];                                                     \
        if (j == 0) {                                                                            \
          if (s) for (int64_t i = 0; i < inner; i++) y[i] = a[i];                                \
          else { const T z = a[0]; for (int64_t i = 0; i < inner; i++) y[i] = z; }               \
        } else if (s) {                                                                          \
          for (int64_t i = 0; i < inner; i++) { const T x = y[i], z = a[i]; y[i] = (T)(COMBINE); } \
        } else {                                                                                 \
          const T z = a[0];                                                                      \
          for (int64_t i = 0; i < inner; i++) { const T x = y[i]; y[i] = (T)(COMBINE); }         \
        }                                                                                        \
      }                                                                                          \
      for (int k = r - 2; k >= 0; k--) { /* next outer index: odometer over dims 0..r-2 */      \
        idx[k]++;                                                                                \
        for (int j = 0; j < nin; j++) off[j] += st[j * r + k];                                   \
        if (idx[k] < d[k]) break;                                                                \
        for (int j = 0; j < nin; j++) off[j] -= st[j * r + k] * d[k];                            \
        idx[k] = 0;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }

/* NaN wins in Max and Min, as numpy's maximum / minimum. */
#define FT_VARIADIC_FLOAT(sfx, T)                                                                \
  FT_VARIADIC_KERNEL(ft_sum_##sfx, T, x + z)                                                     \
  FT_VARIADIC_KERNEL(ft_max_##sfx, T, (x > z || x != x) ? x : z)                                 \
  FT_VARIADIC_KERNEL(ft_min_##sfx, T, (x < z || x != x) ? x : z)                                 \
  static void ft_mean_##sfx(const int64_t *p, const double *f, const void *const *in,           \
                            void *const *out, void *scratch) {                                   \
    ft_sum_##sfx(p, f, in, out, scratch);                                                        \
    int64_t n = 1;                                                                               \
    for (int k = 0; k < (int)p[1]; k++) n *= p[2 + k];                                           \
    T *Y = (T *)out[0];                                                                          \
    const T count = (T)p[0];                                                                     \
    for (int64_t i = 0; i < n; i++) Y[i] /= count;                                               \
  }
FT_VARIADIC_FLOAT(f32, float)
FT_VARIADIC_FLOAT(f64, double)

#define FT_VARIADIC_INT(sfx, T)                                                                  \
  FT_VARIADIC_KERNEL(ft_max_##sfx, T, x > z ? x : z)                                             \
  FT_VARIADIC_KERNEL(ft_min_##sfx, T, x < z ? x : z)
FT_VARIADIC_INT(i8, int8_t) FT_VARIADIC_INT(i16, int16_t) FT_VARIADIC_INT(i32, int32_t)
FT_VARIADIC_INT(i64, int64_t) FT_VARIADIC_INT(u8, uint8_t) FT_VARIADIC_INT(u16, uint16_t)
FT_VARIADIC_INT(u32, uint32_t) FT_VARIADIC_INT(u64, uint64_t)

/* float16: every step in float, rounded back to half (numpy's float16 arithmetic does the same). */
#define FT_H2F(h) ft_half_to_float(h)
FT_VARIADIC_KERNEL(ft_sum_f16, uint16_t, ft_float_to_half(FT_H2F(x) + FT_H2F(z)))
FT_VARIADIC_KERNEL(ft_max_f16, uint16_t, (FT_H2F(x) > FT_H2F(z) || FT_H2F(x) != FT_H2F(x)) ? x : z)
FT_VARIADIC_KERNEL(ft_min_f16, uint16_t, (FT_H2F(x) < FT_H2F(z) || FT_H2F(x) != FT_H2F(x)) ? x : z)
#undef FT_H2F
static void ft_mean_f16(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch) {
  ft_sum_f16(p, f, in, out, scratch);
  int64_t n = 1;
  for (int k = 0; k < (int)p[1]; k++) n *= p[2 + k];
  uint16_t *Y = (uint16_t *)out[0];
  for (int64_t i = 0; i < n; i++) Y[i] = ft_float_to_half(ft_half_to_float(Y[i]) / (float)p[0]);
}

#endif
