/* int8 GEMM core: Y = epilogue(sum_k (A[m,k] - za) * (B[k,n] - zb[n])), exact in int32.
 *
 * The ops that run on it (compiler/ops/quant.c): MatMulInteger, QLinearMatMul, ConvInteger and
 * QLinearConv with a constant weight, and the QDQ fusions ftax.QDQMatMul / ftax.QDQConv
 * (DequantizeLinear of a constant weight and of QuantizeLinear(x) into MatMul/Gemm/Conv: x is
 * quantized in the packing step, the output dequantized to float32 in the epilogue).
 *
 * Operands as vpdpbusd multiplies them: A unsigned 8-bit, B signed 8-bit. A signed A is shifted
 * by +128 (its zero point with it); an unsigned B is shifted by -128 (its zero point with it).
 * With A' = A + sa, B' = B - sb and ca = za + sa, zb' = zb - sb:
 *     sum (A - za)(B - zb) = sum A'B' - ca * colsum'(n) - zb'(n) * rowsum'(m) + K ca zb'(n)
 * where colsum' is B's column sum (computed when B is packed, at compile time for a constant
 * weight) and rowsum' A's row sum (only computed when some zb' is not 0).
 *
 * Layouts, K4 = K rounded up to 4, groups g of 4 consecutive k:
 *   B packed: int32 colsum'[N16], then panels of FT_I8_NR = 64 columns (the last one 16, 32 or
 *             48 wide: N16 = N rounded up to 16); panel j of width w at byte 4*N16 + 64*j*K4,
 *             group g of column c at [(g*w + c)*4 .. +4). Columns past N and k past K are 0.
 *   A packed: a chunk of mc rows (a multiple of FT_I8_MR), group by group: row r's group g at
 *             [(g*mc + r)*4 .. +4), so that packing is a 4-way byte interleave of k rows that
 *             are contiguous in r. Rows past M and k past K are 0.
 * A conv's A is its im2col matrix, one row per output position, packed straight from the
 * image (padding holds ca: it contributes 0); the output is written transposed (NCHW).
 *
 * The micro-kernel (FT_I8_PATH names the one compiled):
 *   avx512_vnni (__AVX512VNNI__)  vpdpbusd: 6 rows x 64 columns in 24 zmm accumulators, each
 *                                 instruction adds 4 products (u8 x s8) into each of 16 lanes;
 *   portable                      the same sums in plain C.
 * Both compute the same integers (no saturation: vpdpbusd, not vpdpbusds), so results are bit-equal.
 *
 * Epilogues (FT_I8_OUT): int32 as is; float32: acc * scale (+ bias, then Relu when asked);
 * 8-bit: rint((acc + bias) * scale) + zy, saturated (ties to even in the default rounding mode).
 * scale is one value or one per output column, computed per call from the scale inputs
 * (a_scale * b_scale[n], over y_scale for the 8-bit outputs) in float32. */
#ifndef FT_GEMM_INT8_H
#define FT_GEMM_INT8_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "parallel.h"

#if defined(__AVX512VNNI__) && defined(__AVX512F__) && !defined(FT_I8_FORCE_PORTABLE)
#include <immintrin.h>
#define FT_I8_VNNI 1
#define FT_I8_PATH "avx512_vnni"
#else
#define FT_I8_PATH "portable"
#endif

#define FT_I8_MR 6
#define FT_I8_NR 64
/* A bytes per chunk of rows packed at once (the chunk stays in L2 while every panel passes) */
#define FT_I8_A_BYTES ((int64_t)192 << 10)
/* and at most this many rows (a conv's k rows are built on the stack, 4 at a time) */
#define FT_I8_MAX_ROWS 4096

/* p layout */
enum {
  FT_I8_M, FT_I8_N, FT_I8_K,
  FT_I8_A_KIND,   /* 0 uint8, 1 int8, 2 float32 (quantized to uint8 in packing with a_scale, a_zp) */
  FT_I8_B_SIGNED, /* B is int8 (else uint8) */
  FT_I8_OUT,      /* FT_I8_OUT_* */
  FT_I8_PACKED,   /* B arrives packed (compile time) */
  FT_I8_B_RS, FT_I8_B_CS, /* unpacked B: strides of k and n */
  FT_I8_A_RS,     /* matrix A: row stride */
  FT_I8_Y_RS, FT_I8_Y_CS, /* output strides of m and n */
  FT_I8_NBATCH, FT_I8_A_BS, FT_I8_Y_BS, /* independent A/Y pairs (images) sharing B */
  FT_I8_NZA, FT_I8_NZB, FT_I8_NSB, /* counts of a_zp (0/1), b_zp (0, 1, N), b_scale (0, 1, N) */
  FT_I8_BIAS,     /* 0 none, 1 float32 [N], 2 int32 [N] */
  FT_I8_RELU,
  FT_I8_AZ_SIGNED, /* a float A's zero point is int8 (quantized as int8, then shifted) */
  /* input indices, -1 absent */
  FT_I8_IN_A, FT_I8_IN_AS, FT_I8_IN_AZ, FT_I8_IN_B, FT_I8_IN_BS, FT_I8_IN_BZ, FT_I8_IN_YS,
  FT_I8_IN_YZ, FT_I8_IN_BIAS,
  FT_I8_CONV,     /* 1: A is an image, im2col'd; the window follows */
  FT_I8_C, FT_I8_WIN, /* conv: input channels; 18 window entries (quant.h's layout) */
  FT_I8_NP = FT_I8_WIN + 18
};
enum { FT_I8_OUT_S32, FT_I8_OUT_F32, FT_I8_OUT_U8, FT_I8_OUT_S8 };

static inline int64_t ft_i8_k4(int64_t k) { return (k + 3) & ~(int64_t)3; }
static inline int64_t ft_i8_n16(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* ---- packing B ------------------------------------------------------------------------------ */

/* bytes of packed B, or pack it: B[k,n] at src[k*rs + n*cs] (int8, or uint8 shifted by -128) */
static size_t ft_i8_pack_b_raw(int64_t K, int64_t N, int64_t rs, int64_t cs, int b_signed, const void *src,
                               void *dst) {
  int64_t K4 = ft_i8_k4(K), N16 = ft_i8_n16(N);
  size_t bytes = (size_t)(4 * N16 + N16 * K4);
  if (!dst) return bytes;
  int32_t *colsum = (int32_t *)dst;
  int8_t *pk = (int8_t *)dst + 4 * N16;
  memset(dst, 0, bytes);
  for (int64_t j0 = 0; j0 < N16; j0 += FT_I8_NR) {
    int64_t w = N16 - j0 < FT_I8_NR ? N16 - j0 : FT_I8_NR;
    int8_t *panel = pk + j0 * K4;
    for (int64_t c = 0; c < w && j0 + c < N; c++) {
      int64_t n = j0 + c;
      int32_t s = 0;
      for (int64_t k = 0; k < K; k++) {
        int64_t at = k * rs + n * cs;
        int v = b_signed ? ((const int8_t *)src)[at] : (int)((const uint8_t *)src)[at] - 128;
        panel[((k >> 2) * w + c) * 4 + (k & 3)] = (int8_t)v;
        s += v;
      }
      colsum[n] = s;
    }
  }
  return bytes;
}

/* the prepack hook (compiler/ops/quant.c names it): B as p describes it */
static size_t ft_i8_pack_b(const int64_t *p, const void *src, void *dst) {
  return ft_i8_pack_b_raw(p[FT_I8_K], p[FT_I8_N], p[FT_I8_B_RS], p[FT_I8_B_CS], (int)p[FT_I8_B_SIGNED], src, dst);
}

/* ---- the micro-kernel: MR rows of packed A x one panel (w columns) over all K --------------- */

#ifdef FT_I8_VNNI
#define FT_I8_KERNEL_NV(NV)                                                                      \
  static void ft_i8_kernel_##NV(const uint8_t *a, int64_t as, const int8_t *b, int64_t G, int32_t *tile) { \
    __m512i acc[FT_I8_MR][NV];                                                                   \
    for (int r = 0; r < FT_I8_MR; r++)                                                           \
      for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_si512();                           \
    for (int64_t g = 0; g < G; g++) {                                                            \
      __m512i bv[NV];                                                                            \
      for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_si512((const void *)(b + (g * NV + v) * 64)); \
      for (int r = 0; r < FT_I8_MR; r++) {                                                       \
        int32_t w4;                                                                              \
        memcpy(&w4, a + g * as + r * 4, 4);                                                      \
        __m512i av = _mm512_set1_epi32(w4);                                                      \
        for (int v = 0; v < NV; v++) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);      \
      }                                                                                          \
    }                                                                                            \
    for (int r = 0; r < FT_I8_MR; r++)                                                           \
      for (int v = 0; v < NV; v++) _mm512_storeu_si512((void *)(tile + r * FT_I8_NR + v * 16), acc[r][v]); \
  }
#else
#define FT_I8_KERNEL_NV(NV)                                                                      \
  static void ft_i8_kernel_##NV(const uint8_t *a, int64_t as, const int8_t *b, int64_t G, int32_t *tile) { \
    int32_t acc[FT_I8_MR][NV * 16];                                                              \
    memset(acc, 0, sizeof acc);                                                                  \
    for (int64_t g = 0; g < G; g++)                                                              \
      for (int r = 0; r < FT_I8_MR; r++) {                                                       \
        const uint8_t *ar = a + g * as + r * 4;                                                  \
        const int8_t *bg = b + g * NV * 64;                                                      \
        for (int c = 0; c < NV * 16; c++)                                                        \
          acc[r][c] += ar[0] * bg[c * 4] + ar[1] * bg[c * 4 + 1] + ar[2] * bg[c * 4 + 2] + ar[3] * bg[c * 4 + 3]; \
      }                                                                                          \
    for (int r = 0; r < FT_I8_MR; r++) memcpy(tile + r * FT_I8_NR, acc[r], sizeof acc[r]);     \
  }
#endif
FT_I8_KERNEL_NV(1)
FT_I8_KERNEL_NV(2)
FT_I8_KERNEL_NV(3)
FT_I8_KERNEL_NV(4)
#undef FT_I8_KERNEL_NV

/* ---- one call's state ---------------------------------------------------------------------- */

typedef struct {
  const int64_t *p;
  int64_t M, N, K, K4, N16, mc, c0, rows; /* chunk: rows [c0, c0 + rows), mc its padded height */
  int32_t ca;                              /* A's offset after the shift: za + sa */
  float qs;                                /* float A: its scale (quantized with ca as zero point) */
  const void *a;                           /* this batch's A (matrix or image) */
  const int8_t *bp;                        /* packed B panels */
  const int32_t *colsum, *zbp;             /* zbp: zb' per column, NULL when all 0 */
  int32_t *comp;                           /* per column: -ca colsum + K ca zb' */
  uint8_t *ap;                             /* packed A chunk */
  int32_t *rowsum;                         /* per chunk row, when zbp */
  const float *scale;                      /* per column (nscale N) or one */
  int64_t nscale;
  const void *bias;
  int32_t zy;
  void *y;                                 /* this batch's output */
} ft_i8_ctx;

/* packed A position of (row r of the chunk, k) */
static inline int64_t ft_i8_apos(const ft_i8_ctx *c, int64_t r, int64_t k) { return ((k >> 2) * c->mc + r) * 4 + (k & 3); }

static inline uint8_t ft_i8_quant_u8(float x, float s, int32_t z) {
  float v = rintf(x / s) + (float)z;
  return (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
}

/* matrix A: chunk rows [lo, hi). Four consecutive k of a row are one word of the packed chunk:
 * 8-bit A is moved a word at a time (int8 flipped to uint8 by its top bits: x + 128 = x ^ 0x80). */
static void ft_i8_pack_a_rows(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  int64_t kind = c->p[FT_I8_A_KIND], rs = c->p[FT_I8_A_RS], G = c->K4 >> 2, Gf = c->K >> 2;
  uint32_t flip = kind == 1 ? 0x80808080u : 0;
  uint32_t *d32 = (uint32_t *)(void *)c->ap;
  for (int64_t r = lo; r < hi; r++) {
    int64_t m = c->c0 + r;
    if (m >= c->M) {
      for (int64_t g = 0; g < G; g++) d32[g * c->mc + r] = 0;
      continue;
    }
    if (kind == 2) {
      const float *x = (const float *)c->a + m * rs;
      for (int64_t g = 0; g < G; g++) {
        uint8_t b[4];
        for (int j = 0; j < 4; j++) b[j] = 4 * g + j < c->K ? ft_i8_quant_u8(x[4 * g + j], c->qs, c->ca) : 0;
        memcpy(&d32[g * c->mc + r], b, 4);
      }
      continue;
    }
    const uint8_t *x = (const uint8_t *)c->a + m * rs;
    for (int64_t g = 0; g < Gf; g++) {
      uint32_t w;
      memcpy(&w, x + 4 * g, 4);
      d32[g * c->mc + r] = w ^ flip;
    }
    if (Gf < G) { /* the last k, past K zero */
      uint8_t b[4] = {0, 0, 0, 0};
      for (int64_t k = 4 * Gf; k < c->K; k++) b[k - 4 * Gf] = (uint8_t)(x[k] ^ (flip & 0xff));
      memcpy(&d32[Gf * c->mc + r], b, 4);
    }
  }
}

/* One k row of a conv's im2col over the chunk's positions into row[0, rows): a run of one output
 * row at a time, its input row and bounds found once per run (stride 1: a copy between pads). */
static void ft_i8_im2col_row(const ft_i8_ctx *c, int64_t k, uint8_t *row) {
  const int64_t *w = c->p + FT_I8_WIN, *in_ = w, *od = w + 3, *kk = w + 6, *st = w + 9, *dl = w + 12, *pb = w + 15;
  int64_t ksz = kk[0] * kk[1] * kk[2], isz = in_[0] * in_[1] * in_[2];
  int64_t ic = k / ksz, t = k % ksz, ta = t / (kk[1] * kk[2]), tb = t / kk[2] % kk[1], tc = t % kk[2];
  const uint8_t *xc = (const uint8_t *)c->a + ic * isz;
  uint8_t pad = (uint8_t)c->ca;
  for (int64_t r = 0; r < c->rows;) {
    int64_t pos = c->c0 + r, o2 = pos % od[2], o1 = pos / od[2] % od[1], o0 = pos / (od[2] * od[1]);
    int64_t n = od[2] - o2 < c->rows - r ? od[2] - o2 : c->rows - r;
    int64_t i0 = o0 * st[0] - pb[0] + ta * dl[0], i1 = o1 * st[1] - pb[1] + tb * dl[1];
    int64_t i2 = o2 * st[2] - pb[2] + tc * dl[2];
    uint8_t *d = row + r;
    r += n;
    if (!(i0 >= 0 && i0 < in_[0] && i1 >= 0 && i1 < in_[1])) {
      memset(d, pad, (size_t)n);
      continue;
    }
    const uint8_t *xr = xc + (i0 * in_[1] + i1) * in_[2];
    if (st[2] == 1) {
      int64_t ja = i2 < 0 ? -i2 : 0, jb = in_[2] - i2 < n ? in_[2] - i2 : n;
      if (ja > n) ja = n;
      if (jb < ja) jb = ja;
      memset(d, pad, (size_t)ja);
      if (jb > ja) memcpy(d + ja, xr + i2 + ja, (size_t)(jb - ja));
      memset(d + jb, pad, (size_t)(n - jb));
    } else {
      for (int64_t j = 0; j < n; j++, i2 += st[2]) d[j] = i2 >= 0 && i2 < in_[2] ? xr[i2] : pad;
    }
  }
}

/* positions [c0, c0 + rows) of a 1x1 conv of stride 1 without padding: the image row itself */
static inline int ft_i8_conv_direct(const int64_t *p) {
  const int64_t *w = p + FT_I8_WIN;
  for (int i = 0; i < 3; i++)
    if (w[6 + i] != 1 || w[9 + i] != 1 || w[15 + i] != 0 || w[i] != w[3 + i]) return 0;
  return 1;
}

/* conv A: groups [lo, hi) of 4 k rows, each interleaved into the chunk's words */
static void ft_i8_pack_a_conv(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  uint8_t buf[4][FT_I8_MAX_ROWS];
  int direct = ft_i8_conv_direct(c->p);
  int64_t isz = c->p[FT_I8_WIN] * c->p[FT_I8_WIN + 1] * c->p[FT_I8_WIN + 2];
  for (int64_t g = lo; g < hi; g++) {
    const uint8_t *rows[4];
    for (int j = 0; j < 4; j++) {
      int64_t k = 4 * g + j;
      if (k >= c->K) {
        memset(buf[j], 0, (size_t)c->rows);
        rows[j] = buf[j];
      } else if (direct) {
        rows[j] = (const uint8_t *)c->a + k * isz + c->c0;
      } else {
        ft_i8_im2col_row(c, k, buf[j]);
        rows[j] = buf[j];
      }
    }
    uint8_t *d = c->ap + g * c->mc * 4;
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
    for (int64_t r = 0; r < c->rows; r++) {
      d[4 * r] = r0[r];
      d[4 * r + 1] = r1[r];
      d[4 * r + 2] = r2[r];
      d[4 * r + 3] = r3[r];
    }
    memset(d + 4 * c->rows, 0, (size_t)(4 * (c->mc - c->rows)));
  }
}

/* the image as uint8 A' (ca its zero point): from float32 (quantized), int8 (+128) or as is */
static void ft_i8_image_u8(const ft_i8_ctx *c, const void *x, int64_t n, uint8_t *dst) {
  int64_t kind = c->p[FT_I8_A_KIND];
  if (kind == 2)
    for (int64_t i = 0; i < n; i++) dst[i] = ft_i8_quant_u8(((const float *)x)[i], c->qs, c->ca);
  else if (kind == 1)
    for (int64_t i = 0; i < n; i++) dst[i] = (uint8_t)(((const int8_t *)x)[i] + 128);
  else
    memcpy(dst, x, (size_t)n);
}

static void ft_i8_rowsums(ft_i8_ctx *c) {
  for (int64_t r = 0; r < c->rows; r++) {
    int32_t s = 0;
    for (int64_t k = 0; k < c->K; k++) s += c->ap[ft_i8_apos(c, r, k)];
    c->rowsum[r] = s;
  }
}

/* ---- epilogue ------------------------------------------------------------------------------
 * The tile's sums are corrected first (comp per column, zb' x rowsum per row and column), then
 * stored by one loop per output kind, over n within m where Y's columns are contiguous (a
 * matmul) and over m within n where its rows are (a conv's NCHW). */

/* one corrected sum to its output element */
#define FT_I8_EPI_LOOP(BODY)                                                                     \
  do {                                                                                           \
    if (cs == 1) {                                                                               \
      for (int64_t r = 0; r < nr; r++)                                                           \
        for (int64_t q = 0; q < nc; q++) { int64_t n = j0 + q, at = (m0 + r) * rs + n; int32_t acc = tile[r * FT_I8_NR + q]; BODY; } \
    } else {                                                                                     \
      for (int64_t q = 0; q < nc; q++)                                                           \
        for (int64_t r = 0; r < nr; r++) { int64_t n = j0 + q, at = (m0 + r) * rs + n * cs; int32_t acc = tile[r * FT_I8_NR + q]; BODY; } \
    }                                                                                            \
  } while (0)

static void ft_i8_epilogue(const ft_i8_ctx *c, int32_t *tile, int64_t m0, int64_t r0, int64_t nr, int64_t j0, int64_t nc) {
  const int64_t *p = c->p;
  int64_t rs = p[FT_I8_Y_RS], cs = p[FT_I8_Y_CS];
  for (int64_t r = 0; r < nr; r++)
    for (int64_t q = 0; q < nc; q++)
      tile[r * FT_I8_NR + q] += c->comp[j0 + q] - (c->zbp ? c->zbp[j0 + q] * c->rowsum[r0 + r] : 0);
  const float *sc = c->scale;
  int per_n = c->nscale > 1;
  switch (p[FT_I8_OUT]) {
  case FT_I8_OUT_S32: {
    int32_t *y = (int32_t *)c->y;
    FT_I8_EPI_LOOP(y[at] = acc);
    break;
  }
  case FT_I8_OUT_F32: {
    float *y = (float *)c->y;
    const float *fb = p[FT_I8_BIAS] == 1 ? (const float *)c->bias : NULL;
    int relu = (int)p[FT_I8_RELU];
    FT_I8_EPI_LOOP({
      float v = (float)acc * sc[per_n ? n : 0];
      if (fb) v += fb[n];
      if (relu && v < 0) v = 0;
      y[at] = v;
    });
    break;
  }
  default: {
    const int32_t *ib = p[FT_I8_BIAS] == 2 ? (const int32_t *)c->bias : NULL;
    float zy = (float)c->zy;
    if (p[FT_I8_OUT] == FT_I8_OUT_U8) {
      uint8_t *y = (uint8_t *)c->y;
      FT_I8_EPI_LOOP({
        float v = rintf((float)(acc + (ib ? ib[n] : 0)) * sc[per_n ? n : 0]) + zy;
        y[at] = (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
      });
    } else {
      int8_t *y = (int8_t *)c->y;
      FT_I8_EPI_LOOP({
        float v = rintf((float)(acc + (ib ? ib[n] : 0)) * sc[per_n ? n : 0]) + zy;
        y[at] = (int8_t)(v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v);
      });
    }
  }
  }
}
#undef FT_I8_EPI_LOOP

/* items [lo, hi): (panel, sliver) of the chunk; the tile of sums through the epilogue */
static void ft_i8_gemm_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  int64_t slivers = c->mc / FT_I8_MR, G = c->K4 >> 2;
  int32_t tile[FT_I8_MR * FT_I8_NR];
  for (int64_t it = lo; it < hi; it++) {
    int64_t j0 = it / slivers * FT_I8_NR, s = it % slivers;
    int64_t w = c->N16 - j0 < FT_I8_NR ? c->N16 - j0 : FT_I8_NR;
    const int8_t *b = c->bp + j0 * c->K4;
    const uint8_t *a = c->ap + s * FT_I8_MR * 4;
    int64_t as = c->mc * 4;
    switch (w / 16) {
    case 1: ft_i8_kernel_1(a, as, b, G, tile); break;
    case 2: ft_i8_kernel_2(a, as, b, G, tile); break;
    case 3: ft_i8_kernel_3(a, as, b, G, tile); break;
    default: ft_i8_kernel_4(a, as, b, G, tile); break;
    }
    int64_t r0 = s * FT_I8_MR, nr = c->rows - r0 < FT_I8_MR ? c->rows - r0 : FT_I8_MR;
    int64_t nc = c->N - j0 < w ? c->N - j0 : w;
    ft_i8_epilogue(c, tile, c->c0 + r0, r0, nr, j0, nc);
  }
}

/* ---- the kernel ---------------------------------------------------------------------------- */

static inline int64_t ft_i8_image_bytes(const int64_t *p) {
  return p[FT_I8_CONV] && p[FT_I8_A_KIND] ? p[FT_I8_C] * p[FT_I8_WIN] * p[FT_I8_WIN + 1] * p[FT_I8_WIN + 2] : 0;
}
/* rows per chunk: whole slivers, as many as FT_I8_A_BYTES holds, at least one */
static inline int64_t ft_i8_chunk(const int64_t *p) {
  int64_t K4 = ft_i8_k4(p[FT_I8_K]), c = FT_I8_A_BYTES / K4 / FT_I8_MR * FT_I8_MR;
  int64_t m = (p[FT_I8_M] + FT_I8_MR - 1) / FT_I8_MR * FT_I8_MR;
  if (c < FT_I8_MR) c = FT_I8_MR;
  if (c > FT_I8_MAX_ROWS) c = FT_I8_MAX_ROWS;
  return c < m ? c : m;
}
/* scratch: [comp, zbp, rowsum, scale] int32/float, packed A chunk, the uint8 image, B unpacked */
static inline size_t ft_i8_scratch(const int64_t *p) {
  int64_t N16 = ft_i8_n16(p[FT_I8_N]), mc = ft_i8_chunk(p);
  size_t s = (size_t)(4 * (3 * N16 + mc)) + 64;
  s += (size_t)(mc * ft_i8_k4(p[FT_I8_K])) + 64;
  s += (size_t)ft_i8_image_bytes(p) + 64;
  s += ft_i8_pack_b_raw(p[FT_I8_K], p[FT_I8_N], 0, 0, 1, NULL, NULL) + 64;
  return s;
}

static inline void *ft_i8_carve(char **at, size_t n) {
  void *r = *at;
  *at += (n + 63) & ~(size_t)63;
  return r;
}

/* zero point of an 8-bit tensor given as input index i (count n), entry e; absent 0 */
static inline int32_t ft_i8_zp(const void *const *in, int64_t i, int is_signed, int64_t n, int64_t e) {
  if (i < 0 || !in[i] || !n) return 0;
  int64_t at = n > 1 ? e : 0;
  return is_signed ? ((const int8_t *)in[i])[at] : ((const uint8_t *)in[i])[at];
}

/* the per-call constants: comp, zb', scales; the packed B */
static void ft_i8_setup(ft_i8_ctx *c, const void *const *in, char **sc) {
  const int64_t *p = c->p;
  int64_t kind = p[FT_I8_A_KIND], bs = p[FT_I8_B_SIGNED], N = c->N;
  int az_signed = kind == 1 || p[FT_I8_AZ_SIGNED];
  c->qs = kind == 2 ? *(const float *)in[p[FT_I8_IN_AS]] : 1.0f;
  /* a float A is quantized straight to A' (uint8) with ca as its zero point: an int8 zero point
     + 128 gives the int8 quantization shifted by 128, saturation included */
  c->ca = ft_i8_zp(in, p[FT_I8_IN_AZ], az_signed, p[FT_I8_NZA], 0) + (az_signed ? 128 : 0);
  c->comp = (int32_t *)ft_i8_carve(sc, 4 * (size_t)c->N16);
  int32_t *zbp = (int32_t *)ft_i8_carve(sc, 4 * (size_t)c->N16);
  float *scale = (float *)ft_i8_carve(sc, 4 * (size_t)c->N16);
  c->rowsum = (int32_t *)ft_i8_carve(sc, 4 * (size_t)c->mc);
  c->ap = (uint8_t *)ft_i8_carve(sc, (size_t)(c->mc * c->K4));
  const void *b = in[p[FT_I8_IN_B]];
  if (!p[FT_I8_PACKED]) {
    void *dst = ft_i8_carve(sc, ft_i8_pack_b_raw(c->K, N, 0, 0, 1, NULL, NULL));
    ft_i8_pack_b(p, b, dst);
    b = dst;
  }
  c->colsum = (const int32_t *)b;
  c->bp = (const int8_t *)b + 4 * c->N16;
  int any = 0;
  for (int64_t n = 0; n < N; n++) {
    zbp[n] = ft_i8_zp(in, p[FT_I8_IN_BZ], (int)bs, p[FT_I8_NZB], n) - (bs ? 0 : 128);
    any |= zbp[n] != 0;
    c->comp[n] = -c->ca * c->colsum[n] + (int32_t)c->K * c->ca * zbp[n];
  }
  c->zbp = any ? zbp : NULL;
  c->scale = NULL;
  c->nscale = 1;
  if (p[FT_I8_OUT] != FT_I8_OUT_S32) {
    float as = *(const float *)in[p[FT_I8_IN_AS]], ys = p[FT_I8_IN_YS] >= 0 ? *(const float *)in[p[FT_I8_IN_YS]] : 1.0f;
    const float *bsc = (const float *)in[p[FT_I8_IN_BS]];
    c->nscale = p[FT_I8_NSB] > 1 ? N : 1;
    for (int64_t n = 0; n < c->nscale; n++) scale[n] = p[FT_I8_IN_YS] >= 0 ? as * bsc[n] / ys : as * bsc[n];
    c->scale = scale;
  }
  c->bias = p[FT_I8_BIAS] ? in[p[FT_I8_IN_BIAS]] : NULL;
  int yz_signed = p[FT_I8_OUT] == FT_I8_OUT_S8;
  c->zy = p[FT_I8_IN_YZ] >= 0 ? ft_i8_zp(in, p[FT_I8_IN_YZ], yz_signed, 1, 0) : 0;
}

static void ft_gemm_int8(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  (void)f;
  ft_i8_ctx c;
  memset(&c, 0, sizeof c);
  c.p = p;
  c.M = p[FT_I8_M]; c.N = p[FT_I8_N]; c.K = p[FT_I8_K];
  c.K4 = ft_i8_k4(c.K); c.N16 = ft_i8_n16(c.N);
  c.mc = ft_i8_chunk(p);
  char *sc = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
  ft_i8_setup(&c, in, &sc);
  uint8_t *img = p[FT_I8_CONV] && p[FT_I8_A_KIND] ? (uint8_t *)ft_i8_carve(&sc, (size_t)ft_i8_image_bytes(p)) : NULL;
  int64_t esz = p[FT_I8_A_KIND] == 2 ? 4 : 1;
  int64_t ysz = p[FT_I8_OUT] == FT_I8_OUT_S32 || p[FT_I8_OUT] == FT_I8_OUT_F32 ? 4 : 1;
  int64_t panels = (c.N16 + FT_I8_NR - 1) / FT_I8_NR;
  for (int64_t bi = 0; bi < p[FT_I8_NBATCH]; bi++) {
    c.a = (const char *)in[p[FT_I8_IN_A]] + bi * p[FT_I8_A_BS] * esz;
    c.y = (char *)out[0] + bi * p[FT_I8_Y_BS] * ysz;
    if (img) {
      ft_i8_image_u8(&c, c.a, ft_i8_image_bytes(p), img);
      c.a = img;
    }
    for (c.c0 = 0; c.c0 < c.M; c.c0 += c.mc) {
      c.rows = c.M - c.c0 < c.mc ? c.M - c.c0 : c.mc;
      int64_t mcu = c.mc;
      c.mc = (c.rows + FT_I8_MR - 1) / FT_I8_MR * FT_I8_MR; /* the last chunk: only its slivers */
      if (p[FT_I8_CONV]) ft_parallel_for(c.K4 / 4, c.K4 * c.mc >= 16384, ft_i8_pack_a_conv, &c);
      else ft_parallel_for(c.mc, c.K4 * c.mc >= 16384, ft_i8_pack_a_rows, &c);
      if (c.zbp) ft_i8_rowsums(&c);
      int64_t items = panels * (c.mc / FT_I8_MR);
      ft_parallel_for(items, c.mc * c.K4 * c.N >= 65536, ft_i8_gemm_run, &c);
      c.mc = mcu;
    }
  }
}

#endif
