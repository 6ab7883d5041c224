/* Cast between every pair of numeric types (float16 and bfloat16 included), p: [n].
 *
 * ft_cast_<from>_<to> converts with C's own conversions (float to integer truncates toward zero),
 * bool results are x != 0, and half types go through float. */
#ifndef FT_CAST_H
#define FT_CAST_H

#include "tensor.h"

/* (suffix, C storage type, ONNX dtype) of every type Cast handles */
#define FT_CAST_TYPES(X)                                                                         \
  X(f32, float, FT_FLOAT) X(f64, double, FT_DOUBLE) X(f16, uint16_t, FT_FLOAT16)                 \
  X(bf16, uint16_t, FT_BFLOAT16) X(i8, int8_t, FT_INT8) X(i16, int16_t, FT_INT16)                \
  X(i32, int32_t, FT_INT32) X(i64, int64_t, FT_INT64) X(u8, uint8_t, FT_UINT8)                   \
  X(u16, uint16_t, FT_UINT16) X(u32, uint32_t, FT_UINT32) X(u64, uint64_t, FT_UINT64)            \
  X(bool, uint8_t, FT_BOOL)
/* the same list again, for the inner loop of the pair product (a macro cannot nest itself) */
#define FT_CAST_TYPES_TO(X, S, TS, DS)                                                           \
  X(S, TS, DS, f32, float, FT_FLOAT) X(S, TS, DS, f64, double, FT_DOUBLE)                        \
  X(S, TS, DS, f16, uint16_t, FT_FLOAT16) X(S, TS, DS, bf16, uint16_t, FT_BFLOAT16)              \
  X(S, TS, DS, i8, int8_t, FT_INT8) X(S, TS, DS, i16, int16_t, FT_INT16)                         \
  X(S, TS, DS, i32, int32_t, FT_INT32) X(S, TS, DS, i64, int64_t, FT_INT64)                      \
  X(S, TS, DS, u8, uint8_t, FT_UINT8) X(S, TS, DS, u16, uint16_t, FT_UINT16)                     \
  X(S, TS, DS, u32, uint32_t, FT_UINT32) X(S, TS, DS, u64, uint64_t, FT_UINT64)                  \
  X(S, TS, DS, bool, uint8_t, FT_BOOL)

/* reading a stored element as a C value */
#define FT_CAST_RD_f32(x) (x)
#define FT_CAST_RD_f64(x) (x)
#define FT_CAST_RD_f16(x) ft_half_to_float(x)
#define FT_CAST_RD_bf16(x) ft_bf16_to_float(x)
#define FT_CAST_RD_i8(x) (x)
#define FT_CAST_RD_i16(x) (x)
#define FT_CAST_RD_i32(x) (x)
#define FT_CAST_RD_i64(x) (x)
#define FT_CAST_RD_u8(x) (x)
#define FT_CAST_RD_u16(x) (x)
#define FT_CAST_RD_u32(x) (x)
#define FT_CAST_RD_u64(x) (x)
#define FT_CAST_RD_bool(x) (x)
/* storing a C value as an element of type T */
#define FT_CAST_WR_f32(T, v) ((T)(v))
#define FT_CAST_WR_f64(T, v) ((T)(v))
#define FT_CAST_WR_f16(T, v) ft_float_to_half((float)(v))
#define FT_CAST_WR_bf16(T, v) ft_float_to_bf16((float)(v))
#define FT_CAST_WR_i8(T, v) ((T)(v))
#define FT_CAST_WR_i16(T, v) ((T)(v))
#define FT_CAST_WR_i32(T, v) ((T)(v))
#define FT_CAST_WR_i64(T, v) ((T)(v))
#define FT_CAST_WR_u8(T, v) ((T)(v))
#define FT_CAST_WR_u16(T, v) ((T)(v))
#define FT_CAST_WR_u32(T, v) ((T)(v))
#define FT_CAST_WR_u64(T, v) ((T)(v))
#define FT_CAST_WR_bool(T, v) ((T)((v) != 0))

#define FT_CAST_KERNEL(S, TS, DS, D, TD, DD)                                                     \
  static void ft_cast_##S##_##D(const int64_t *p, const double *f, const void *const *in,       \
                                void *const *out, void *scratch) {                               \
    (void)f; (void)scratch;                                                                      \
    const TS *x = (const TS *)in[0];                                                             \
    TD *y = (TD *)out[0];                                                                        \
    for (int64_t i = 0; i < p[0]; i++) y[i] = FT_CAST_WR_##D(TD, FT_CAST_RD_##S(x[i]));          \
  }
#define FT_CAST_FROM(S, TS, DS) FT_CAST_TYPES_TO(FT_CAST_KERNEL, S, TS, DS)
FT_CAST_TYPES(FT_CAST_FROM)
#undef FT_CAST_FROM
#undef FT_CAST_KERNEL

#endif
