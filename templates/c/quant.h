/* Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
 * matmul and conv (MatMulInteger, ConvInteger) with their requantizing forms (QLinearMatMul,
 * QLinearConv). Plain loops that accumulate in int32; scales and zero points are read from their
 * input tensors at run time: one value (per tensor) or one per channel/row/column.
 *
 * Rounding is to nearest, ties to even (rintf in the default rounding mode), then saturation to
 * the output type, as the ONNX spec says. */
#ifndef FT_QUANT_H
#define FT_QUANT_H

#include <math.h>
#include <stdint.h>

#include "tensor.h"

#define FT_Q_SAT(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))

/* zero point i of a tensor with n of them (absent: 0) */
#define FT_Q_ZP(T, ptr, n, i) ((ptr) ? (int32_t)((const T *)(ptr))[(n) > 1 ? (i) : 0] : 0)

/* QuantizeLinear. p: [total, axis size, inner, per_axis, has zero point]; in: x, scale, zero
 * point. Optional inputs are read only when p says they are there: a node may pass fewer. */
#define FT_QUANTIZE(S, T, LO, HI)                                                                \
  static void ft_quantize_f32_##S(const int64_t *p, const double *f, const void *const *in,     \
                                  void *const *out, void *scratch) {                             \
    (void)f; (void)scratch;                                                                      \
    int64_t total = p[0], n = p[1], inner = p[2], per_axis = p[3];                               \
    const float *X = (const float *)in[0], *sc = (const float *)in[1];                           \
    const T *zp = p[4] ? (const T *)in[2] : NULL;                                                \
    T *Y = (T *)out[0];                                                                          \
    for (int64_t i = 0; i < total; i++) {                                                        \
      int64_t c = per_axis ? (i / inner) % n : 0;                                                \
      float v = rintf(X[i] / sc[c]) + (zp ? (float)zp[c] : 0.0f);                                \
      Y[i] = (T)FT_Q_SAT(v, (float)(LO), (float)(HI));                                           \
    }                                                                                            \
  }
FT_QUANTIZE(u8, uint8_t, 0, 255)
FT_QUANTIZE(i8, int8_t, -128, 127)
FT_QUANTIZE(u16, uint16_t, 0, 65535)
FT_QUANTIZE(i16, int16_t, -32768, 32767)
#undef FT_QUANTIZE

/* DequantizeLinear. p as QuantizeLinear; y = (x - zero point) * scale. */
#define FT_DEQUANTIZE(S, T)                                                                      \
  static void ft_dequantize_##S##_f32(const int64_t *p, const double *f, const void *const *in, \
                                      void *const *out, void *scratch) {                         \
    (void)f; (void)scratch;                                                                      \
    int64_t total = p[0], n = p[1], inner = p[2], per_axis = p[3];                               \
    const T *X = (const T *)in[0], *zp = p[4] ? (const T *)in[2] : NULL;                         \
    const float *sc = (const float *)in[1];                                                      \
    float *Y = (float *)out[0];                                                                  \
    for (int64_t i = 0; i < total; i++) {                                                        \
      int64_t c = per_axis ? (i / inner) % n : 0;                                                \
      Y[i] = (float)((int64_t)X[i] - (zp ? (int64_t)zp[c] : 0)) * sc[c];                         \
    }                                                                                            \
  }
FT_DEQUANTIZE(u8, uint8_t)
FT_DEQUANTIZE(i8, int8_t)
FT_DEQUANTIZE(u16, uint16_t)
FT_DEQUANTIZE(i16, int16_t)
FT_DEQUANTIZE(i32, int32_t)
#undef FT_DEQUANTIZE

/* DynamicQuantizeLinear to uint8. p: [n, outputs given]; out: y, scale (float scalar), zero
 * point (uint8). The
 * range always includes 0; all in float32 like the spec's reference. */
static void ft_dynamic_quantize_f32(const int64_t *p, const double *f, const void *const *in,
                                    void *const *out, void *scratch) {
  (void)f; (void)scratch;
  int64_t n = p[0];
  const float *X = (const float *)in[0];
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < n; i++) {
    if (X[i] < lo) lo = X[i];
    if (X[i] > hi) hi = X[i];
  }
  float scale = (hi - lo) / 255.0f, z = scale != 0 ? rintf((0 - lo) / scale) : 0;
  uint8_t zp = (uint8_t)FT_Q_SAT(z, 0.0f, 255.0f);
  uint8_t *Y = (uint8_t *)out[0];
  for (int64_t i = 0; i < n; i++) {
    float v = scale != 0 ? rintf(X[i] / scale) + zp : zp;
    Y[i] = (uint8_t)FT_Q_SAT(v, 0.0f, 255.0f);
  }
  if (p[1] > 1 && out[1]) *(float *)out[1] = scale;
  if (p[1] > 2 && out[2]) *(uint8_t *)out[2] = zp;
}

/* The integer matmul and conv kernels below share their inputs' roles: A (the matmul's A, the
 * conv's x) and B (B, w), each with an optional zero point, B's per output channel (per column
 * n of the matmul, per output channel m of the conv). A loop (FT_QMM_LOOP, FT_QCONV_LOOP) runs
 * STORE(at, acc, oc) on each int32 accumulator: at indexes Y, oc is the output channel. */

/* ---- integer matmul ------------------------------------------------------------------------
 * p: [M, K, N, a_zp count (0: none, 1 or M), b_zp count (0, 1 or N), b_scale count (1 or N), batch rank R,
 *     batch dims[R], A batch strides[R], B batch strides[R]] (strides in elements, 0 where
 *     broadcast). MatMulInteger in: A, B, a_zp, b_zp; QLinearMatMul in: a, a_scale, a_zp, b,
 *     b_scale, b_zp, y_scale, y_zp. */
#define FT_QMM_LOOP(STORE)                                                                       \
  int64_t M = p[0], K = p[1], N = p[2], naz = p[3], nbz = p[4], nbs = p[5];                      \
  int R = (int)p[6];                                                                             \
  const int64_t *bd = p + 7, *as_ = p + 7 + R, *bs_ = p + 7 + 2 * R;                             \
  int64_t nb = 1, idx[FT_MAX_RANK] = {0}, ao = 0, bo = 0;                                        \
  (void)nbs;                                                                                     \
  for (int i = 0; i < R; i++) nb *= bd[i];                                                       \
  for (int64_t b = 0; b < nb; b++) {                                                             \
    for (int64_t m = 0; m < M; m++)                                                              \
      for (int64_t n = 0; n < N; n++) {                                                          \
        int32_t za = FT_Q_ZP(TA, AZ, naz, m), zb = FT_Q_ZP(TB, BZ, nbz, n), acc = 0;             \
        const TA *a = A + ao + m * K;                                                            \
        const TB *bb = B + bo + n;                                                               \
        for (int64_t k = 0; k < K; k++) acc += ((int32_t)a[k] - za) * ((int32_t)bb[k * N] - zb); \
        STORE((b * M + m) * N + n, acc, n);                                                      \
      }                                                                                          \
    for (int i = R - 1; i >= 0; i--) {                                                           \
      ao += as_[i]; bo += bs_[i];                                                                \
      if (++idx[i] < bd[i]) break;                                                               \
      ao -= as_[i] * bd[i]; bo -= bs_[i] * bd[i];                                                \
      idx[i] = 0;                                                                                \
    }                                                                                            \
  }

/* ---- integer conv --------------------------------------------------------------------------
 * p: [N, C, M, group, w_zp count (0: none, 1 or M), w_scale count (1 or M), window (18 entries:
 *     in[3], out[3], k[3], s[3], d[3], pads_begin[3], leading dims of size 1), has x_zp,
 *     has bias].
 * ConvInteger in: x, w, x_zp, w_zp; QLinearConv in: x, x_scale, x_zp, w, w_scale, w_zp,
 * y_scale, y_zp, bias (int32, optional). */
#define FT_QCONV_LOOP(STORE)                                                                     \
  int64_t NB = p[0], C = p[1], MO = p[2], G = p[3], nbz = p[4], nbs = p[5];                      \
  const int64_t *in_ = p + 6, *od = p + 9, *kk = p + 12, *st = p + 15, *dl = p + 18, *pb = p + 21; \
  int64_t cpg = C / G, mpg = MO / G, isz = in_[0] * in_[1] * in_[2], ksz = kk[0] * kk[1] * kk[2]; \
  int64_t osz = od[0] * od[1] * od[2];                                                           \
  int32_t zx = FT_Q_ZP(TA, AZ, 1, 0);                                                            \
  (void)nbs;                                                                                     \
  for (int64_t nn = 0; nn < NB; nn++)                                                            \
    for (int64_t m = 0; m < MO; m++) {                                                           \
      int64_t g = m / mpg;                                                                       \
      int32_t zw = FT_Q_ZP(TB, BZ, nbz, m);                                                      \
      const TA *x = A + (nn * C + g * cpg) * isz;                                                \
      const TB *w = B + m * cpg * ksz;                                                           \
      for (int64_t o0 = 0; o0 < od[0]; o0++)                                                     \
        for (int64_t o1 = 0; o1 < od[1]; o1++)                                                   \
          for (int64_t o2 = 0; o2 < od[2]; o2++) {                                               \
            int32_t acc = 0;                                                                     \
            for (int64_t ic = 0; ic < cpg; ic++)                                                 \
              for (int64_t a = 0; a < kk[0]; a++) {                                              \
                int64_t i0 = o0 * st[0] - pb[0] + a * dl[0];                                     \
                if (i0 < 0 || i0 >= in_[0]) continue;                                            \
                for (int64_t b = 0; b < kk[1]; b++) {                                            \
                  int64_t i1 = o1 * st[1] - pb[1] + b * dl[1];                                   \
                  if (i1 < 0 || i1 >= in_[1]) continue;                                          \
                  const TA *xr = x + ic * isz + (i0 * in_[1] + i1) * in_[2];                     \
                  const TB *wr = w + ic * ksz + (a * kk[1] + b) * kk[2];                         \
                  for (int64_t c = 0; c < kk[2]; c++) {                                          \
                    int64_t i2 = o2 * st[2] - pb[2] + c * dl[2];                                 \
                    if (i2 < 0 || i2 >= in_[2]) continue; /* padding: x equal to its zero point */ \
                    acc += ((int32_t)xr[i2] - zx) * ((int32_t)wr[c] - zw);                       \
                  }                                                                              \
                }                                                                                \
              }                                                                                  \
            STORE((nn * MO + m) * osz + (o0 * od[1] + o1) * od[2] + o2, acc, m);                 \
          }                                                                                      \
    }

/* MatMulInteger, ConvInteger: the int32 accumulators as they are. AZ_P: the p entry that says
 * whether A's zero point is given (B's is p[4] in both). */
#define FT_Q_STORE_INT(at, acc, oc) (Y[at] = (acc))
#define FT_Q_INTEGER(OP, LOOP, AZ_P, SA, TA_, SB, TB_)                                           \
  static void ft_##OP##_integer_##SA##_##SB(const int64_t *p, const double *f,                  \
                                            const void *const *in, void *const *out,             \
                                            void *scratch) {                                     \
    (void)f; (void)scratch;                                                                      \
    typedef TA_ TA;                                                                              \
    typedef TB_ TB;                                                                              \
    const TA *A = (const TA *)in[0];                                                             \
    const TB *B = (const TB *)in[1];                                                             \
    const void *AZ = p[AZ_P] ? in[2] : NULL, *BZ = p[4] ? in[3] : NULL;                          \
    int32_t *Y = (int32_t *)out[0];                                                              \
    LOOP(FT_Q_STORE_INT)                                                                         \
  }

/* QLinearMatMul, QLinearConv: requantize each accumulator (plus QLinearConv's bias): scale by
 * sa * sb / sy, round to nearest even, add y's zero point, saturate. BIAS: the int32 bias
 * pointer, or NULL. */
#define FT_Q_STORE_LINEAR(at, acc, oc)                                                           \
  do {                                                                                           \
    float v = rintf((float)((acc) + (bias ? bias[oc] : 0)) * (sa * sb[nbs > 1 ? (oc) : 0] / sy)) + (float)zy; \
    Y[at] = (TY)FT_Q_SAT(v, lo, hi);                                                             \
  } while (0)
#define FT_Q_LINEAR(OP, LOOP, BIAS, SA, TA_, SB, TB_, SY, TY_, LO, HI)                           \
  static void ft_qlinear_##OP##_##SA##_##SB##_##SY(const int64_t *p, const double *f,           \
                                                   const void *const *in, void *const *out,      \
                                                   void *scratch) {                              \
    (void)f; (void)scratch;                                                                      \
    typedef TA_ TA;                                                                              \
    typedef TB_ TB;                                                                              \
    typedef TY_ TY;                                                                              \
    const TA *A = (const TA *)in[0];                                                             \
    const TB *B = (const TB *)in[3];                                                             \
    const void *AZ = in[2], *BZ = in[5];                                                         \
    const float sa = *(const float *)in[1], sy = *(const float *)in[6], lo = LO, hi = HI;        \
    const float *sb = (const float *)in[4];                                                      \
    const int32_t *bias = BIAS;                                                                  \
    const int32_t zy = FT_Q_ZP(TY, in[7], 1, 0);                                                 \
    TY *Y = (TY *)out[0];                                                                        \
    LOOP(FT_Q_STORE_LINEAR)                                                                      \
  }

#define FT_QUANT_PAIRS(X, ...)                                                                   \
  X(u8, uint8_t, u8, uint8_t, __VA_ARGS__) X(u8, uint8_t, i8, int8_t, __VA_ARGS__)               \
  X(i8, int8_t, u8, uint8_t, __VA_ARGS__) X(i8, int8_t, i8, int8_t, __VA_ARGS__)
#define FT_QUANT_INT(SA, TA, SB, TB, _)                                                          \
  FT_Q_INTEGER(matmul, FT_QMM_LOOP, 3, SA, TA, SB, TB)                                           \
  FT_Q_INTEGER(conv, FT_QCONV_LOOP, 24, SA, TA, SB, TB)
#define FT_QLINEAR_MATMUL(SA, TA, SB, TB, SY, TY, LO, HI)                                        \
  FT_Q_LINEAR(matmul, FT_QMM_LOOP, NULL, SA, TA, SB, TB, SY, TY, LO, HI)
#define FT_QLINEAR_CONV(SA, TA, SB, TB, SY, TY, LO, HI)                                          \
  FT_Q_LINEAR(conv, FT_QCONV_LOOP, p[25] ? (const int32_t *)in[8] : NULL, SA, TA, SB, TB, SY, TY, LO, HI)
#define FT_QUANT_LINEAR(SA, TA, SB, TB, _)                                                       \
  FT_QLINEAR_MATMUL(SA, TA, SB, TB, u8, uint8_t, 0, 255)                                         \
  FT_QLINEAR_MATMUL(SA, TA, SB, TB, i8, int8_t, -128, 127)                                       \
  FT_QLINEAR_CONV(SA, TA, SB, TB, u8, uint8_t, 0, 255)                                           \
  FT_QLINEAR_CONV(SA, TA, SB, TB, i8, int8_t, -128, 127)
FT_QUANT_PAIRS(FT_QUANT_INT, 0)
FT_QUANT_PAIRS(FT_QUANT_LINEAR, 0)
#undef FT_QUANT_INT
#undef FT_QUANT_LINEAR
#undef FT_QLINEAR_MATMUL
#undef FT_QLINEAR_CONV
#undef FT_QUANT_PAIRS

#endif
