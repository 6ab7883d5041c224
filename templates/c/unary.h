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
#include "scalar_ops.h"
#include "tensor.h"

/* One kernel: EXPR computes y from x (type T); a and b are f[0] and f[1] when USES_F. The
 * element type is TY, also named T inside (the scalar-op rows write their constants as (T)k). */
#define FT_UNARY_KERNEL(NAME, TY, TO, EXPR)                                                      \
  static void NAME(const int64_t *p, const double *f, const void *const *in, void *const *out,  \
                   void *scratch) {                                                              \
    typedef TY T;                                                                                \
    (void)f; (void)scratch;                                                                      \
    const T *X = (const T *)in[0];                                                               \
    TO *Y = (TO *)out[0];                                                                        \
    const int64_t n = p[0];                                                                      \
    for (int64_t i = 0; i < n; i++) { T x = X[i]; Y[i] = (TO)(EXPR); }                           \
  }
#define FT_UNARY_KERNEL_F(NAME, TY, TO, EXPR)                                                    \
  static void NAME(const int64_t *p, const double *f, const void *const *in, void *const *out,  \
                   void *scratch) {                                                              \
    typedef TY T;                                                                                \
    (void)scratch;                                                                               \
    const T *X = (const T *)in[0];                                                               \
    TO *Y = (TO *)out[0];                                                                        \
    const int64_t n = p[0];                                                                      \
    const T a = (T)f[0], b = (T)f[1];                                                            \
    (void)a; (void)b;                                                                            \
    for (int64_t i = 0; i < n; i++) { T x = X[i]; Y[i] = (TO)(EXPR); }                           \
  }

/* The floating-point ops: one kernel per type for each row of templates/common/scalar_ops.h
 * that has kernels, computed with that type's math (FT_MATH, fastmath.h). */
#define FT_UNARY_ROW_(ID, fn, name, kernels, EXPR)                                               \
  FT_SOP_IF_C_##kernels(FT_UNARY_KERNEL(FT_SOP_CAT(ft_##fn##_, FT_MATH_SFX), FT_MATH_T, FT_MATH_T, EXPR))
#define FT_UNARY_PARAM_ROW_(ID, fn, name, kernels, A, DA, B, DB, EXPR)                           \
  FT_SOP_IF_C_##kernels(FT_UNARY_KERNEL_F(FT_SOP_CAT(ft_##fn##_, FT_MATH_SFX), FT_MATH_T, FT_MATH_T, EXPR))
#define FT_MATH ft_f32
#define FT_MATH_T float
#define FT_MATH_SFX f32
FT_SCALAR_UNARY_OPS(FT_UNARY_ROW_)
FT_SCALAR_PARAM_OPS(FT_UNARY_PARAM_ROW_)
#undef FT_MATH
#undef FT_MATH_T
#undef FT_MATH_SFX
#define FT_MATH ft_f64
#define FT_MATH_T double
#define FT_MATH_SFX f64
FT_SCALAR_UNARY_OPS(FT_UNARY_ROW_)
FT_SCALAR_PARAM_OPS(FT_UNARY_PARAM_ROW_)
#undef FT_MATH
#undef FT_MATH_T
#undef FT_MATH_SFX
#undef FT_UNARY_ROW_
#undef FT_UNARY_PARAM_ROW_
FT_UNARY_KERNEL(ft_isnan_f32, float, uint8_t, x != x)
FT_UNARY_KERNEL(ft_isnan_f64, double, uint8_t, x != x)

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
