/* Elementwise binary kernels with broadcasting, for every numeric type.
 *
 * p: [rank, dims[rank], strides of A[rank], strides of B[rank]] with broadcast dims given stride
 * 0 and adjacent dims already merged by the plan, so the common cases (same shape; a bias row;
 * a scalar) run as one or two flat loops that vectorize. */
#ifndef FT_BINARY_H
#define FT_BINARY_H

#include <math.h>

#include "tensor.h"

/* Walks the outer dims of a broadcast iteration; the caller's body handles the innermost dim. */
#define FT_BCAST_LOOP(p, NIN, BODY)                                                              \
  do {                                                                                           \
    int r_ = (int)(p)[0];                                                                        \
    const int64_t *d_ = (p) + 1;                                                                 \
    int64_t inner = d_[r_ - 1], outer = 1, idx_[FT_MAX_RANK] = {0}, off[NIN] = {0};             \
    int64_t st[NIN];                                                                             \
    for (int i_ = 0; i_ < NIN; i_++) st[i_] = (p)[1 + r_ + i_ * r_ + r_ - 1];                    \
    for (int i_ = 0; i_ < r_ - 1; i_++) outer *= d_[i_];                                         \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      BODY;                                                                                      \
      for (int k_ = r_ - 2; k_ >= 0; k_--) {                                                     \
        idx_[k_]++;                                                                              \
        for (int i_ = 0; i_ < NIN; i_++) off[i_] += (p)[1 + r_ + i_ * r_ + k_];                  \
        if (idx_[k_] < d_[k_]) break;                                                            \
        for (int i_ = 0; i_ < NIN; i_++) off[i_] -= (p)[1 + r_ + i_ * r_ + k_] * d_[k_];         \
        idx_[k_] = 0;                                                                            \
      }                                                                                          \
    }                                                                                            \
  } while (0)

#define FT_BINARY_KERNEL2(NAME, T, TB, TO, EXPR)                                                      \
  static void NAME(const int64_t *p, const double *f, const void *const *in, void *const *out,  \
                   void *scratch) {                                                              \
    (void)f; (void)scratch;                                                                      \
    const T *A = (const T *)in[0];                                                           \
    const TB *B = (const TB *)in[1];                                        \
    TO *Y = (TO *)out[0];                                                                        \
    FT_BCAST_LOOP(p, 2, {                                                                        \
      const T *a = A + off[0];                                                                   \
      const TB *b = B + off[1];                                                  \
      TO *y = Y + o * inner;                                                                     \
      if (st[0] && st[1]) for (int64_t i = 0; i < inner; i++) { T x = a[i]; TB z = b[i]; y[i] = (TO)(EXPR); } \
      else if (st[0]) { TB z = b[0]; for (int64_t i = 0; i < inner; i++) { T x = a[i]; y[i] = (TO)(EXPR); } } \
      else if (st[1]) { T x = a[0]; for (int64_t i = 0; i < inner; i++) { TB z = b[i]; y[i] = (TO)(EXPR); } } \
      else { T x = a[0]; TB z = b[0]; TO v = (TO)(EXPR); for (int64_t i = 0; i < inner; i++) y[i] = v; } \
    });                                                                                          \
  }
#define FT_BINARY_KERNEL(NAME, T, TO, EXPR) FT_BINARY_KERNEL2(NAME, T, T, TO, EXPR)

/* Numeric types every arithmetic kernel is instantiated for: (suffix, C type). */
#define FT_NUMERIC_TYPES(X) \
  X(f32, float) X(f64, double) X(i8, int8_t) X(i16, int16_t) X(i32, int32_t) X(i64, int64_t) \
  X(u8, uint8_t) X(u16, uint16_t) X(u32, uint32_t) X(u64, uint64_t)

static inline int64_t ft_floor_div_i64(int64_t a, int64_t b) { return b ? a / b : 0; }
/* Mod with fmod=0: the remainder takes the divisor's sign, as Python's % does. */
static inline double ft_fmod_sign(double a, double b) {
  double m = fmod(a, b);
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

/* Integer +, -, * wrap around in two's complement, as numpy and ONNX Runtime do; in C they
 * would be undefined on overflow (and the data comes from the model or its inputs). Integer
 * division by 0 gives 0, and MIN / -1 wraps instead of trapping. Floats are left alone. */
#define FT_WRAP(x, op, z) \
  _Generic((x), float: (x) op (z), double: (x) op (z), \
           default: (__typeof__(x))((uint64_t)(x) op (uint64_t)(z)))
#define FT_IS_SIGNED(x) _Generic((x), int8_t: 1, int16_t: 1, int32_t: 1, int64_t: 1, default: 0)
#define FT_DIV(x, z) \
  _Generic((x), float: (x) / (z), double: (x) / (z), \
           default: ((z) == 0 ? (__typeof__(x))0 \
                     : (FT_IS_SIGNED(x) && (z) == (__typeof__(x))-1) ? (__typeof__(x))(0 - (uint64_t)(x)) \
                     : (__typeof__(x))((x) / (z))))

#define FT_ARITH(sfx, T)                                                                         \
  FT_BINARY_KERNEL(ft_add_##sfx, T, T, FT_WRAP(x, +, z))                                         \
  FT_BINARY_KERNEL(ft_sub_##sfx, T, T, FT_WRAP(x, -, z))                                         \
  FT_BINARY_KERNEL(ft_mul_##sfx, T, T, FT_WRAP(x, *, z))                                         \
  FT_BINARY_KERNEL(ft_div_##sfx, T, T, FT_DIV(x, z))                                             \
  FT_BINARY_KERNEL(ft_max2_##sfx, T, T, x > z || x != x ? x : z)                                 \
  FT_BINARY_KERNEL(ft_min2_##sfx, T, T, x < z || x != x ? x : z)                                 \
  FT_BINARY_KERNEL(ft_pow_##sfx, T, T, pow((double)x, (double)z))                                \
  FT_BINARY_KERNEL(ft_equal_##sfx, T, uint8_t, x == z)                                           \
  FT_BINARY_KERNEL(ft_less_##sfx, T, uint8_t, x < z)                                             \
  FT_BINARY_KERNEL(ft_greater_##sfx, T, uint8_t, x > z)                                          \
  FT_BINARY_KERNEL(ft_less_equal_##sfx, T, uint8_t, x <= z)                                      \
  FT_BINARY_KERNEL(ft_greater_equal_##sfx, T, uint8_t, x >= z)
FT_NUMERIC_TYPES(FT_ARITH)
#undef FT_ARITH

/* Pow with an exponent of another type than the base (not float32, above): in double, converted
 * to the base's type. */
#define FT_POW_MIXED(bs, TB, es, TE) FT_BINARY_KERNEL2(ft_pow_##bs##_##es, TB, TE, TB, pow((double)x, (double)z))
FT_POW_MIXED(i32, int32_t, i64, int64_t) FT_POW_MIXED(i32, int32_t, f32, float) FT_POW_MIXED(i32, int32_t, f64, double)
FT_POW_MIXED(i64, int64_t, i32, int32_t) FT_POW_MIXED(i64, int64_t, f32, float) FT_POW_MIXED(i64, int64_t, f64, double)
FT_POW_MIXED(f64, double, i32, int32_t) FT_POW_MIXED(f64, double, i64, int64_t) FT_POW_MIXED(f64, double, f32, float)
#undef FT_POW_MIXED

/* Mod. ft_mod_*: fmod=0, the remainder has the divisor's sign; ft_fmod_*: fmod=1, the dividend's
 * sign (C's % and fmod). Integer division by zero gives 0 instead of trapping, and so does
 * x % -1 (whose quotient can overflow). */
static inline int64_t ft_imod_trunc(int64_t x, int64_t z) { return (z == 0 || z == -1) ? 0 : x % z; }
static inline int64_t ft_imod_floor(int64_t x, int64_t z) {
  int64_t r = ft_imod_trunc(x, z);
  return (r != 0 && ((r < 0) != (z < 0))) ? r + z : r;
}
static inline uint64_t ft_umod(uint64_t x, uint64_t z) { return z ? x % z : 0; }
#define FT_MOD(sfx, T, FMOD, MOD)                                                                \
  FT_BINARY_KERNEL(ft_fmod_##sfx, T, T, FMOD(x, z))                                              \
  FT_BINARY_KERNEL(ft_mod_##sfx, T, T, MOD(x, z))
FT_MOD(f32, float, fmod, ft_fmod_sign)
FT_MOD(f64, double, fmod, ft_fmod_sign)
FT_MOD(i8, int8_t, ft_imod_trunc, ft_imod_floor)
FT_MOD(i16, int16_t, ft_imod_trunc, ft_imod_floor)
FT_MOD(i32, int32_t, ft_imod_trunc, ft_imod_floor)
FT_MOD(i64, int64_t, ft_imod_trunc, ft_imod_floor)
FT_MOD(u8, uint8_t, ft_umod, ft_umod)
FT_MOD(u16, uint16_t, ft_umod, ft_umod)
FT_MOD(u32, uint32_t, ft_umod, ft_umod)
FT_MOD(u64, uint64_t, ft_umod, ft_umod)
#undef FT_MOD
/* float16 through float: the remainder is exact, so rounding back loses nothing */
static inline uint16_t ft_fmod_f16_1(uint16_t x, uint16_t z) {
  return ft_float_to_half(fmodf(ft_half_to_float(x), ft_half_to_float(z)));
}
static inline uint16_t ft_mod_f16_1(uint16_t x, uint16_t z) {
  return ft_float_to_half((float)ft_fmod_sign(ft_half_to_float(x), ft_half_to_float(z)));
}
FT_BINARY_KERNEL(ft_fmod_f16, uint16_t, uint16_t, ft_fmod_f16_1(x, z))
FT_BINARY_KERNEL(ft_mod_f16, uint16_t, uint16_t, ft_mod_f16_1(x, z))

/* BitShift (unsigned types) and the bitwise ops. A shift by the type's width or more gives 0,
 * where C would be undefined. */
#define FT_BITS(sfx, T)                                                                          \
  FT_BINARY_KERNEL(ft_shl_##sfx, T, T, z >= (T)(8 * sizeof(T)) ? 0 : x << z)                     \
  FT_BINARY_KERNEL(ft_shr_##sfx, T, T, z >= (T)(8 * sizeof(T)) ? 0 : x >> z)                     \
  FT_BINARY_KERNEL(ft_bitwise_and_##sfx, T, T, x & z)                                            \
  FT_BINARY_KERNEL(ft_bitwise_or_##sfx, T, T, x | z)                                             \
  FT_BINARY_KERNEL(ft_bitwise_xor_##sfx, T, T, x ^ z)
FT_BITS(u8, uint8_t) FT_BITS(u16, uint16_t) FT_BITS(u32, uint32_t) FT_BITS(u64, uint64_t)
#undef FT_BITS
#define FT_BITWISE(sfx, T)                                                                       \
  FT_BINARY_KERNEL(ft_bitwise_and_##sfx, T, T, x & z)                                            \
  FT_BINARY_KERNEL(ft_bitwise_or_##sfx, T, T, x | z)                                             \
  FT_BINARY_KERNEL(ft_bitwise_xor_##sfx, T, T, x ^ z)
FT_BITWISE(i8, int8_t) FT_BITWISE(i16, int16_t) FT_BITWISE(i32, int32_t) FT_BITWISE(i64, int64_t)
#undef FT_BITWISE

/* PRelu: x where x >= 0, slope * x below; the slope (z) broadcasts. */
FT_BINARY_KERNEL(ft_prelu_f32, float, float, x < 0 ? z * x : x)
FT_BINARY_KERNEL(ft_prelu_f64, double, double, x < 0 ? z * x : x)
FT_BINARY_KERNEL(ft_prelu_i32, int32_t, int32_t, x < 0 ? z * x : x)
FT_BINARY_KERNEL(ft_prelu_i64, int64_t, int64_t, x < 0 ? z * x : x)

/* Pow with a float base and an exponent of another type is common in exports (x ** 2). */
#define FT_POW_FLOAT(sfx, TB) \
  FT_BINARY_KERNEL2(ft_pow_f32_##sfx, float, TB, float, (float)z == 2.0f ? x * x : ((float)z == 3.0f ? x * x * x : ((float)z == 0.5f ? sqrtf(x) : powf(x, (float)z))))
FT_NUMERIC_TYPES(FT_POW_FLOAT)
#undef FT_POW_FLOAT

FT_BINARY_KERNEL(ft_and_bool, uint8_t, uint8_t, x && z)
FT_BINARY_KERNEL(ft_or_bool, uint8_t, uint8_t, x || z)
FT_BINARY_KERNEL(ft_xor_bool, uint8_t, uint8_t, (!x) != (!z))
FT_BINARY_KERNEL(ft_equal_bool, uint8_t, uint8_t, (!x) == (!z))

#endif
