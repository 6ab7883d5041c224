/* Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
 * matmul and conv (MatMulInteger, ConvInteger) with their requantizing forms (QLinearMatMul,
 * QLinearConv). Loops that accumulate in int32 (ConvInteger as im2col + an integer GEMM on the
 * thread pool, the rest plain); scales and zero points are read from their input tensors at run
 * time: one value (per tensor) or one per channel/row/column.
 *
 * Rounding is to nearest, ties to even (rintf in the default rounding mode), then saturation to
 * the output type, as the ONNX spec says. */
#ifndef FT_QUANT_H
#define FT_QUANT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "parallel.h"
#include "tensor.h"

/* Saturation to [lo, hi]; NaN gives lo, as ONNX Runtime's vector quantizer does (and a NaN
 * converted to an integer type would be undefined behaviour). */
#define FT_Q_SAT(v, lo, hi) (!((v) > (lo)) ? (lo) : (v) > (hi) ? (hi) : (v))

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
    if (!per_axis) { /* one scale: a loop the compiler vectorizes */                             \
      const float s = sc[0], z = zp ? (float)zp[0] : 0.0f;                                       \
      for (int64_t i = 0; i < total; i++) {                                                      \
        float v = rintf(X[i] / s) + z;                                                           \
        Y[i] = (T)FT_Q_SAT(v, (float)(LO), (float)(HI));                                         \
      }                                                                                          \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t i = 0; i < total; i++) {                                                        \
      int64_t c = (i / inner) % n;                                                               \
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
    if (!per_axis) { /* one scale: a loop the compiler vectorizes */                             \
      const int64_t z = zp ? (int64_t)zp[0] : 0;                                                 \
      const float s = sc[0];                                                                     \
      for (int64_t i = 0; i < total; i++) Y[i] = (float)((int64_t)X[i] - z) * s;                 \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t i = 0; i < total; i++) {                                                        \
      int64_t c = (i / inner) % n;                                                               \
      Y[i] = (float)((int64_t)X[i] - (zp ? (int64_t)zp[c] : 0)) * sc[c];                        \
    }                                                                                            \
  }
FT_DEQUANTIZE(u8, uint8_t)
FT_DEQUANTIZE(i8, int8_t)
FT_DEQUANTIZE(u16, uint16_t)
FT_DEQUANTIZE(i16, int16_t)
FT_DEQUANTIZE(i32, int32_t)
#undef FT_DEQUANTIZE

/* DynamicQuantizeLinear's scale and zero point for n floats: the range, which always includes 0,
 * over (uint8's) 255, all in float32 like the spec's reference. */
static inline float ft_dynamic_range(const float *X, int64_t n, uint8_t *zp) {
  /* the range in 32 lanes (a loop the compiler vectorizes, two independent vectors), then
     across them; min and max are exact, so the order does not matter */
  float lo32[32] = {0}, hi32[32] = {0}, lo = 0, hi = 0;
  int64_t i, n32 = n / 32 * 32;
  for (i = 0; i < n32; i += 32)
    for (int j = 0; j < 32; j++) {
      lo32[j] = X[i + j] < lo32[j] ? X[i + j] : lo32[j];
      hi32[j] = X[i + j] > hi32[j] ? X[i + j] : hi32[j];
    }
  for (i = n32; i < n; i++) {
    lo = X[i] < lo ? X[i] : lo;
    hi = X[i] > hi ? X[i] : hi;
  }
  for (int j = 0; j < 32; j++) {
    if (lo32[j] < lo) lo = lo32[j];
    if (hi32[j] > hi) hi = hi32[j];
  }
  float scale = (hi - lo) / 255.0f, z = scale != 0 ? rintf((0 - lo) / scale) : 0;
  *zp = (uint8_t)FT_Q_SAT(z, 0.0f, 255.0f);
  return scale;
}

/* DynamicQuantizeLinear to uint8. p: [n, outputs given]; out: y, scale (float scalar), zero
 * point (uint8). */
static void ft_dynamic_quantize_f32(const int64_t *p, const double *f, const void *const *in,
                                    void *const *out, void *scratch) {
  (void)f; (void)scratch;
  int64_t n = p[0], i;
  const float *X = (const float *)in[0];
  uint8_t zp;
  float scale = ft_dynamic_range(X, n, &zp);
  uint8_t *Y = (uint8_t *)out[0];
  if (scale == 0) memset(Y, zp, (size_t)n);
  else
    for (i = 0; i < n; i++) {
      float v = rintf(X[i] / scale) + zp;
      Y[i] = (uint8_t)FT_Q_SAT(v, 0.0f, 255.0f);
    }
  if (p[1] > 1 && out[1]) *(float *)out[1] = scale;
  if (p[1] > 2 && out[2]) *(uint8_t *)out[2] = zp;
}

/* ftax.DynamicQuantizeScale (compiler/fuse/fuse_qdq.c): DynamicQuantizeLinear without its
 * quantized output, which the int8 GEMMs reading it compute while packing. p: [n, has scale,
 * has zero point]; out: scale, zero point. */
static void ft_dynamic_quantize_scale_f32(const int64_t *p, const double *f, const void *const *in,
                                          void *const *out, void *scratch) {
  (void)f; (void)scratch;
  uint8_t zp;
  float scale = ft_dynamic_range((const float *)in[0], p[0], &zp);
  if (p[1]) *(float *)out[0] = scale;
  if (p[2]) *(uint8_t *)out[1] = zp;
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

/* ---- ConvInteger: im2col + integer GEMM ------------------------------------------------------
 * The plain loop above (QLinearConv still uses it) is seven deep, scalar and serial: a dynamic-
 * quantized U-Net spent minutes in it. ConvInteger instead, per image and group and per chunk of
 * output positions (the column buffer bounded by FT_QCONV_COL_BYTES):
 *   1. im2col: column row kr = (input channel, kernel tap) holds x - x_zp at the chunk's output
 *      positions, 0 where the tap falls into padding (padding is x's zero point), as int16;
 *      rows in parallel;
 *   2. GEMM: w - w_zp (int16, converted once per call into the scratch) times the columns, four
 *      output channels by FT_QCONV_TILE positions at a time with int32 accumulators; the
 *      innermost loop runs over contiguous positions, which the compiler vectorizes; tiles in
 *      parallel.
 * Every accumulator sums the same products in the same order (k ascending) whatever the tiling
 * and threads; integer sums are exact, so the result equals the plain loop's bit for bit.
 * Scratch: the int16 weights, then one column chunk. */
#define FT_QCONV_COL_BYTES ((int64_t)2 << 20)
#define FT_QCONV_TILE 128
#define FT_QCONV_MB 4

/* p as FT_QCONV_LOOP's: the length of each dot product, input channels per group x kernel taps */
static inline int64_t ft_qconv_k(const int64_t *p) { return p[1] / p[3] * p[12] * p[13] * p[14]; }
/* output positions per column chunk: the buffer's budget, whole tiles, at least one tile */
static inline int64_t ft_qconv_chunk(const int64_t *p) {
  int64_t osz = p[9] * p[10] * p[11], k = ft_qconv_k(p);
  int64_t c = FT_QCONV_COL_BYTES / (2 * (k ? k : 1)) / FT_QCONV_TILE * FT_QCONV_TILE;
  if (c < FT_QCONV_TILE) c = FT_QCONV_TILE;
  return c < osz ? c : osz;
}
static inline size_t ft_qconv_scratch(const int64_t *p) {
  return (size_t)(p[2] * ft_qconv_k(p) + ft_qconv_k(p) * ft_qconv_chunk(p)) * sizeof(int16_t) + 64;
}

typedef struct {
  const int64_t *p;
  const void *x; /* this image and group's first channel */
  int x_signed;
  int32_t zx;
  const int16_t *w; /* this group's rows of w - w_zp: [mpg][K] */
  int16_t *col;     /* [K][nc] */
  int32_t *y;       /* this image and group's first output channel */
  int64_t c0, nc, K, mpg, osz;
} ft_qconv_ctx;

/* im2col rows [lo, hi) of the chunk [c0, c0 + nc) */
static void ft_qconv_im2col_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_qconv_ctx *c = (const ft_qconv_ctx *)ctx;
  const int64_t *p = c->p, *in_ = p + 6, *od = p + 9, *kk = p + 12, *st = p + 15, *dl = p + 18, *pb = p + 21;
  int64_t ksz = kk[0] * kk[1] * kk[2], isz = in_[0] * in_[1] * in_[2];
  for (int64_t kr = lo; kr < hi; kr++) {
    int64_t ic = kr / ksz, t = kr % ksz, ta = t / (kk[1] * kk[2]), tb = t / kk[2] % kk[1], tc = t % kk[2];
    const uint8_t *xu = (const uint8_t *)c->x + ic * isz;
    const int8_t *xs = (const int8_t *)c->x + ic * isz;
    int16_t *row = c->col + kr * c->nc;
    int64_t o2 = c->c0 % od[2], o1 = c->c0 / od[2] % od[1], o0 = c->c0 / (od[2] * od[1]);
    for (int64_t j = 0; j < c->nc; j++) {
      int64_t i0 = o0 * st[0] - pb[0] + ta * dl[0], i1 = o1 * st[1] - pb[1] + tb * dl[1];
      int64_t i2 = o2 * st[2] - pb[2] + tc * dl[2];
      int16_t v = 0;
      if (i0 >= 0 && i0 < in_[0] && i1 >= 0 && i1 < in_[1] && i2 >= 0 && i2 < in_[2]) {
        int64_t at = (i0 * in_[1] + i1) * in_[2] + i2;
        v = (int16_t)((c->x_signed ? (int32_t)xs[at] : (int32_t)xu[at]) - c->zx);
      }
      row[j] = v;
      if (++o2 == od[2]) { o2 = 0; if (++o1 == od[1]) { o1 = 0; o0++; } }
    }
  }
}

/* GEMM items [lo, hi): item = (block of FT_QCONV_MB output channels, tile of positions) */
static void ft_qconv_gemm_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_qconv_ctx *c = (const ft_qconv_ctx *)ctx;
  int64_t tiles = (c->nc + FT_QCONV_TILE - 1) / FT_QCONV_TILE;
  for (int64_t it = lo; it < hi; it++) {
    int64_t m0 = it / tiles * FT_QCONV_MB, t0 = it % tiles * FT_QCONV_TILE;
    int64_t mb = c->mpg - m0 < FT_QCONV_MB ? c->mpg - m0 : FT_QCONV_MB;
    int64_t nt = c->nc - t0 < FT_QCONV_TILE ? c->nc - t0 : FT_QCONV_TILE;
    int32_t acc[FT_QCONV_MB][FT_QCONV_TILE];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < c->K; k++) {
      const int16_t *cr = c->col + k * c->nc + t0;
      int32_t w0 = c->w[m0 * c->K + k];
      int32_t w1 = mb > 1 ? c->w[(m0 + 1) * c->K + k] : 0, w2 = mb > 2 ? c->w[(m0 + 2) * c->K + k] : 0;
      int32_t w3 = mb > 3 ? c->w[(m0 + 3) * c->K + k] : 0;
      for (int64_t j = 0; j < nt; j++) {
        int32_t v = cr[j];
        acc[0][j] += w0 * v;
        acc[1][j] += w1 * v;
        acc[2][j] += w2 * v;
        acc[3][j] += w3 * v;
      }
    }
    for (int64_t m = 0; m < mb; m++)
      memcpy(c->y + (m0 + m) * c->osz + c->c0 + t0, acc[m], sizeof(int32_t) * (size_t)nt);
  }
}

/* w - w_zp as int16 for every output channel: [M][K] */
static void ft_qconv_weights(const int64_t *p, const void *w, int w_signed, const void *wz, int16_t *w16) {
  int64_t M = p[2], K = ft_qconv_k(p), nbz = p[4];
  for (int64_t m = 0; m < M; m++) {
    int32_t z = !wz ? 0 : w_signed ? FT_Q_ZP(int8_t, wz, nbz, m) : FT_Q_ZP(uint8_t, wz, nbz, m);
    for (int64_t k = 0; k < K; k++) {
      int64_t at = m * K + k;
      w16[at] = (int16_t)((w_signed ? (int32_t)((const int8_t *)w)[at] : (int32_t)((const uint8_t *)w)[at]) - z);
    }
  }
}

static void ft_qconv_integer(const int64_t *p, const void *const *in, void *const *out, void *scratch, int x_signed,
                             int w_signed) {
  int64_t NB = p[0], C = p[1], MO = p[2], G = p[3], K = ft_qconv_k(p), chunk = ft_qconv_chunk(p);
  int64_t isz = p[6] * p[7] * p[8], osz = p[9] * p[10] * p[11];
  int16_t *w16 = (int16_t *)scratch;
  ft_qconv_ctx c;
  c.p = p;
  c.x_signed = x_signed;
  c.zx = !p[24] ? 0 : x_signed ? FT_Q_ZP(int8_t, in[2], 1, 0) : FT_Q_ZP(uint8_t, in[2], 1, 0);
  c.col = w16 + MO * K;
  c.K = K;
  c.mpg = MO / G;
  c.osz = osz;
  ft_qconv_weights(p, in[1], w_signed, p[4] ? in[3] : NULL, w16);
  for (int64_t nn = 0; nn < NB; nn++)
    for (int64_t g = 0; g < G; g++) {
      c.x = (const uint8_t *)in[0] + (nn * C + g * (C / G)) * isz;
      c.w = w16 + g * c.mpg * K;
      c.y = (int32_t *)out[0] + (nn * MO + g * c.mpg) * osz;
      for (c.c0 = 0; c.c0 < osz; c.c0 += chunk) {
        c.nc = osz - c.c0 < chunk ? osz - c.c0 : chunk;
        int64_t tiles = (c.nc + FT_QCONV_TILE - 1) / FT_QCONV_TILE, mblocks = (c.mpg + FT_QCONV_MB - 1) / FT_QCONV_MB;
        ft_parallel_for(K, K * c.nc >= 16384, ft_qconv_im2col_run, &c);
        ft_parallel_for(mblocks * tiles, c.mpg * K * c.nc >= 65536, ft_qconv_gemm_run, &c);
      }
    }
}

#define FT_QCONV_INTEGER(SA, SX, SB, SW)                                                         \
  static void ft_conv_integer_##SA##_##SB(const int64_t *p, const double *f, const void *const *in, \
                                          void *const *out, void *scratch) {                     \
    (void)f;                                                                                     \
    ft_qconv_integer(p, in, out, scratch, SX, SW);                                               \
  }
FT_QCONV_INTEGER(u8, 0, u8, 0)
FT_QCONV_INTEGER(u8, 0, i8, 1)
FT_QCONV_INTEGER(i8, 1, u8, 0)
FT_QCONV_INTEGER(i8, 1, i8, 1)
#undef FT_QCONV_INTEGER

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
  FT_Q_INTEGER(matmul, FT_QMM_LOOP, 3, SA, TA, SB, TB)
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
