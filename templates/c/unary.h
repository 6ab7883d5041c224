/* Elementwise unary kernels: activations, math functions, rounding, tests, Clip.
 *
 * p[0] is the element count; f holds the op's real attributes (alpha, beta, ...) where it has
 * any. Every kernel reads x[i] before writing y[i] at the same index, so y may be x (in place).
 * The float32 transcendental functions come from fastmath.h, so the loops vectorize. */
#ifndef FT_UNARY_H
#define FT_UNARY_H

#include <math.h>
#include <stdint.h>

#include "fastmath.h"
#include "tensor.h"

/* One kernel: EXPR computes y from x (type T); a and b are f[0] and f[1] when USES_F. */
#define FT_UNARY_KERNEL(NAME, T, TO, EXPR)                                                       \
  static void NAME(const int64_t *p, const double *f, const void *const *in, void *const *out,  \
                   void *scratch) {                                                              \
    (void)f; (void)scratch;                                                                      \
    const T *X = (const T *)in[0];                                                               \
    TO *Y = (TO *)out[0];                                                                        \
    const int64_t n = p[0];                                                                      \
    for (int64_t i = 0; i < n; i++) { T x = X[i]; Y[i] = (TO)(EXPR); }                           \
  }
#define FT_UNARY_KERNEL_F(NAME, T, TO, EXPR)                                                     \
  static void NAME(const int64_t *p, const double *f, const void *const *in, void *const *out,  \
                   void *scratch) {                                                              \
    (void)scratch;                                                                               \
    const T *X = (const T *)in[0];                                                               \
    TO *Y = (TO *)out[0];                                                                        \
    const int64_t n = p[0];                                                                      \
    const T a = (T)f[0], b = (T)f[1];                                                            \
    (void)a; (void)b;                                                                            \
    for (int64_t i = 0; i < n; i++) { T x = X[i]; Y[i] = (TO)(EXPR); }                           \
  }

/* Floating-point ops, once per float type with that type's math functions:
 * (suffix, T, exp, log, tanh, erf, softplus, and the libm name suffix). */
#define FT_UNARY_FLOAT_OPS(sfx, T, EXP, TANH, ERF, SOFTPLUS, M)                                  \
  FT_UNARY_KERNEL(ft_relu_##sfx, T, T, x < 0 ? (T)0 : x)                                         \
  FT_UNARY_KERNEL_F(ft_leaky_relu_##sfx, T, T, x < 0 ? a * x : x)                                \
  FT_UNARY_KERNEL_F(ft_elu_##sfx, T, T, x < 0 ? a * (EXP(x) - 1) : x)                            \
  FT_UNARY_KERNEL_F(ft_selu_##sfx, T, T, x <= 0 ? b * (a * EXP(x) - a) : b * x)                  \
  FT_UNARY_KERNEL_F(ft_celu_##sfx, T, T, x < 0 ? a * (EXP(x / a) - 1) : x)                       \
  FT_UNARY_KERNEL_F(ft_thresholded_relu_##sfx, T, T, x > a ? x : (T)0)                           \
  FT_UNARY_KERNEL(ft_sigmoid_##sfx, T, T, 1 / (1 + EXP(-x)))                                     \
  FT_UNARY_KERNEL_F(ft_hard_sigmoid_##sfx, T, T, ft_unit_clamp_##sfx(a * x + b))                   \
  FT_UNARY_KERNEL(ft_hard_swish_##sfx, T, T, x * ft_unit_clamp_##sfx(x / 6 + (T)0.5))              \
  FT_UNARY_KERNEL(ft_softplus_##sfx, T, T, SOFTPLUS(x))                                          \
  FT_UNARY_KERNEL(ft_softsign_##sfx, T, T, x / (1 + fabs##M(x)))                                 \
  FT_UNARY_KERNEL(ft_mish_##sfx, T, T, x * TANH(SOFTPLUS(x)))                                    \
  FT_UNARY_KERNEL(ft_gelu_##sfx, T, T, (T)0.5 * x * (1 + ERF(x * (T)0.70710678118654752440)))   \
  FT_UNARY_KERNEL(ft_gelu_tanh_##sfx, T, T,                                                      \
                  (T)0.5 * x * (1 + TANH((T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x)))) \
  FT_UNARY_KERNEL_F(ft_swish_##sfx, T, T, x / (1 + EXP(-a * x)))                                 \
  FT_UNARY_KERNEL_F(ft_shrink_##sfx, T, T, x < -a ? x + b : (x > a ? x - b : (T)0))              \
  FT_UNARY_KERNEL(ft_tanh_##sfx, T, T, TANH(x))                                                  \
  FT_UNARY_KERNEL(ft_erf_##sfx, T, T, ERF(x))                                                    \
  FT_UNARY_KERNEL(ft_exp_##sfx, T, T, EXP(x))                                                    \
  FT_UNARY_KERNEL(ft_sqrt_##sfx, T, T, sqrt##M(x))                                               \
  FT_UNARY_KERNEL(ft_reciprocal_##sfx, T, T, 1 / x)                                              \
  FT_UNARY_KERNEL(ft_floor_##sfx, T, T, floor##M(x))                                             \
  FT_UNARY_KERNEL(ft_ceil_##sfx, T, T, ceil##M(x))                                               \
  FT_UNARY_KERNEL(ft_round_##sfx, T, T, rint##M(x)) /* halves to even, the default mode */       \
  FT_UNARY_KERNEL(ft_sin_##sfx, T, T, sin##M(x))                                                 \
  FT_UNARY_KERNEL(ft_cos_##sfx, T, T, cos##M(x))                                                 \
  FT_UNARY_KERNEL(ft_tan_##sfx, T, T, tan##M(x))                                                 \
  FT_UNARY_KERNEL(ft_asin_##sfx, T, T, asin##M(x))                                               \
  FT_UNARY_KERNEL(ft_acos_##sfx, T, T, acos##M(x))                                               \
  FT_UNARY_KERNEL(ft_atan_##sfx, T, T, atan##M(x))                                               \
  FT_UNARY_KERNEL(ft_sinh_##sfx, T, T, sinh##M(x))                                               \
  FT_UNARY_KERNEL(ft_cosh_##sfx, T, T, cosh##M(x))                                               \
  FT_UNARY_KERNEL(ft_asinh_##sfx, T, T, asinh##M(x))                                             \
  FT_UNARY_KERNEL(ft_acosh_##sfx, T, T, acosh##M(x))                                             \
  FT_UNARY_KERNEL(ft_atanh_##sfx, T, T, atanh##M(x))                                             \
  FT_UNARY_KERNEL(ft_isnan_##sfx, T, uint8_t, x != x)                                            \
  FT_UNARY_KERNEL(ft_neg_##sfx, T, T, -x)                                                        \
  FT_UNARY_KERNEL(ft_abs_##sfx, T, T, fabs##M(x))                                                \
  FT_UNARY_KERNEL(ft_sign_##sfx, T, T, x > 0 ? (T)1 : (x < 0 ? (T)-1 : x))

/* max(0, min(1, v)) with selects (fmaxf keeps the loop scalar); NaN stays NaN */
static inline float ft_unit_clamp_f32(float v) { v = v > 1 ? 1 : v; return v < 0 ? 0 : v; }
static inline double ft_unit_clamp_f64(double v) { v = v > 1 ? 1 : v; return v < 0 ? 0 : v; }
FT_UNARY_FLOAT_OPS(f32, float, ft_expf, ft_tanhf, ft_erff, ft_softplusf, f)
FT_UNARY_FLOAT_OPS(f64, double, exp, tanh, erf, ft_softplus, )
/* Log is separate: float32 gets the fast one. */
FT_UNARY_KERNEL(ft_log_f32, float, float, ft_logf(x))
FT_UNARY_KERNEL(ft_log_f64, double, double, log(x))

/* IsInf: p[1] detects -inf, p[2] detects +inf. */
#define FT_ISINF(sfx, T)                                                                         \
  static void ft_isinf_##sfx(const int64_t *p, const double *f, const void *const *in,          \
                             void *const *out, void *scratch) {                                  \
    (void)f; (void)scratch;                                                                      \
    const T *X = (const T *)in[0];                                                               \
    uint8_t *Y = (uint8_t *)out[0];                                                              \
    const int neg = p[1] != 0, pos = p[2] != 0;                                                  \
    for (int64_t i = 0; i < p[0]; i++) Y[i] = (X[i] == (T)INFINITY && pos) || (X[i] == (T)-INFINITY && neg); \
  }
FT_ISINF(f32, float)
FT_ISINF(f64, double)

/* Integer ops. Abs and Neg of the most negative value wrap, as two's complement does. */
#define FT_UNARY_SIGNED_OPS(sfx, T, UT)                                                          \
  FT_UNARY_KERNEL(ft_relu_##sfx, T, T, x < 0 ? 0 : x)                                            \
  FT_UNARY_KERNEL(ft_neg_##sfx, T, T, (T)(0 - (UT)x))                                            \
  FT_UNARY_KERNEL(ft_abs_##sfx, T, T, x < 0 ? (T)(0 - (UT)x) : x)                                \
  FT_UNARY_KERNEL(ft_sign_##sfx, T, T, (x > 0) - (x < 0))                                        \
  FT_UNARY_KERNEL(ft_bitwise_not_##sfx, T, T, ~x)
FT_UNARY_SIGNED_OPS(i8, int8_t, uint8_t)
FT_UNARY_SIGNED_OPS(i16, int16_t, uint16_t)
FT_UNARY_SIGNED_OPS(i32, int32_t, uint32_t)
FT_UNARY_SIGNED_OPS(i64, int64_t, uint64_t)
#define FT_UNARY_UNSIGNED_OPS(sfx, T)                                                            \
  FT_UNARY_KERNEL(ft_abs_##sfx, T, T, x)                                                         \
  FT_UNARY_KERNEL(ft_sign_##sfx, T, T, x != 0)                                                   \
  FT_UNARY_KERNEL(ft_bitwise_not_##sfx, T, T, ~x)
FT_UNARY_UNSIGNED_OPS(u8, uint8_t)
FT_UNARY_UNSIGNED_OPS(u16, uint16_t)
FT_UNARY_UNSIGNED_OPS(u32, uint32_t)
FT_UNARY_UNSIGNED_OPS(u64, uint64_t)
FT_UNARY_KERNEL(ft_not_bool, uint8_t, uint8_t, !x)

/* Clip. p[1] / p[2] say where the lower / upper bound comes from: 0 none, 1 the scalar input
 * in[1] / in[2] (opset 11 on), 2 f[0] / f[1] (the attributes of earlier opsets). The bounds are
 * read before the loop, so y may alias any input. min > max gives max everywhere, as
 * min(max(x, lo), hi) does; NaN stays NaN. */
#define FT_CLIP(sfx, T, LOWEST, HIGHEST)                                                         \
  static void ft_clip_##sfx(const int64_t *p, const double *f, const void *const *in,           \
                            void *const *out, void *scratch) {                                   \
    (void)scratch;                                                                               \
    const T *X = (const T *)in[0];                                                               \
    T *Y = (T *)out[0];                                                                          \
    T lo = LOWEST, hi = HIGHEST;                                                                 \
    if (p[1] == 1) lo = ((const T *)in[1])[0];                                                   \
    else if (p[1] == 2) lo = (T)f[0];                                                            \
    if (p[2] == 1) hi = ((const T *)in[2])[0];                                                   \
    else if (p[2] == 2) hi = (T)f[1];                                                            \
    for (int64_t i = 0; i < p[0]; i++) {                                                         \
      T x = X[i];                                                                                \
      x = x < lo ? lo : x;                                                                       \
      Y[i] = x > hi ? hi : x;                                                                    \
    }                                                                                            \
  }
FT_CLIP(f32, float, -INFINITY, INFINITY)
FT_CLIP(f64, double, -INFINITY, INFINITY)
FT_CLIP(i8, int8_t, INT8_MIN, INT8_MAX)
FT_CLIP(i16, int16_t, INT16_MIN, INT16_MAX)
FT_CLIP(i32, int32_t, INT32_MIN, INT32_MAX)
FT_CLIP(i64, int64_t, INT64_MIN, INT64_MAX)
FT_CLIP(u8, uint8_t, 0, UINT8_MAX)
FT_CLIP(u16, uint16_t, 0, UINT16_MAX)
FT_CLIP(u32, uint32_t, 0, UINT32_MAX)
FT_CLIP(u64, uint64_t, 0, UINT64_MAX)

#endif
