/* int8 GEMM core: Y = epilogue(sum_k (A[m,k] - za) * (B[k,n] - zb[n])), exact in int32.
 *
 * The ops that run on it (compiler/ops/quant.c): MatMulInteger, QLinearMatMul, ConvInteger and
 * QLinearConv with a constant weight, and the QDQ fusions ftax.QDQMatMul / ftax.QDQConv
 * (DequantizeLinear of a constant weight and of QuantizeLinear(x) into MatMul/Gemm/Conv, or
 * DynamicQuantizeLinear(x) -> MatMulInteger -> Cast -> Mul by the scales: x is quantized in the
 * packing step, the output dequantized to float32 in the epilogue).
 *
 * Operands as vpdpbusd multiplies them: B (the weight, in vector lanes) unsigned 8-bit, A (the
 * activation, one 4-byte group broadcast into every lane: the operand that vpdpbusd's
 * embedded broadcast form would read, its signed one) signed 8-bit. A is made signed by -128 (uint8:
 * A'' = A ^ 0x80) and B unsigned by +128 (int8: B'' = B ^ 0x80), zero points with them; with
 * za'' = za - sa, zb'' = zb + sb:
 *     sum (A - za)(B - zb) = sum A''B'' - za'' colsum''(n) - zb''(n) rowsum''(m) + K za'' zb''(n)
 * where colsum'' is the column sum of B'' (computed when B is packed, at compile time for a
 * constant weight) and rowsum'' the row sum of A'' (computed after A is packed, only when some
 * zb'' is not 0: an int8 weight's zb'' is zb + 128, so nearly always).
 *
 * Layouts, K4 = K rounded up to 4, groups g of 4 consecutive k:
 *   B packed: int32 colsum''[N16], then panels of FT_I8_NR = 64 columns (the last one 16, 32 or
 *             48 wide: N16 = N rounded up to 16); panel j of width w at byte 4*N16 + 64*j*K4,
 *             group g of column c at [(g*w + c)*4 .. +4). Columns past N and k past K are 0.
 *   A packed: a chunk of mc rows (a multiple of FT_I8_MR), sliver by sliver (FT_I8_MR rows),
 *             in a sliver group by group: row r's group g of sliver s at
 *             [((s*G + g)*FT_I8_MR + r)*4 .. +4), G = K4 / 4, so that the micro-kernel reads its
 *             sliver front to back. k past K is 0 (it adds nothing to the row sums).
 * A conv's A is its im2col matrix, one row per output position, packed straight from the
 * image (padding holds the zero point: it contributes 0); the output is written transposed (NCHW).
 * A conv with an int8 weight of zero point 0 runs as W.X instead (FT_I8_WX, "convs as W.X" below):
 * the weight packed in the A layout, the image's rows in the B layout, the output rows direct.
 *
 * The micro-kernel (FT_I8_PATH names the one compiled):
 *   avx512_vnni (__AVX512VNNI__)  vpdpbusd: 6 rows x 64 columns in 24 zmm accumulators, each
 *                                 instruction adds 4 products (u8 x s8) into each of 16 lanes,
 *                                 A's group broadcast once per row into a register for its
 *                                 4 vpdpbusd; the epilogue from the sums stored as a tile;
 *   portable                      the same sums in plain C.
 * Both compute the same integers (no saturation: vpdpbusd, not vpdpbusds), so results are bit-equal.
 *
 * Epilogues (FT_I8_OUT): int32 as is; float32: acc * scale (+ bias in one fma, then Relu when
 * asked, then the FT_I8_ACT activation of gemm.h's epilogue: GELU, Tanh ...);
 * 8-bit: rint((acc + bias) * scale) + zy, saturated (ties to even in the default rounding mode).
 * scale is one value or one per output column, computed per call from the scale inputs
 * (a_scale * b_scale[n], over y_scale for the 8-bit outputs) in float32. */
#ifndef FT_GEMM_INT8_H
#define FT_GEMM_INT8_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gemm.h" /* the fp32 core's epilogue activations (ft_gemm_act) */
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
/* A bytes per chunk of rows packed at once (the chunk stays in L2 while every panel passes:
 * BERT-base's 128 x 3072 is one chunk, its B panels not read again for a second one) */
#define FT_I8_A_BYTES ((int64_t)512 << 10)
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
  FT_I8_ACT,      /* float32 output: an activation after bias and Relu (gemm.h's FT_ACT_*, its
                     parameters lo and hi in f[0] and f[1]), 0 none */
  /* input indices, -1 absent */
  FT_I8_IN_A, FT_I8_IN_AS, FT_I8_IN_AZ, FT_I8_IN_B, FT_I8_IN_BS, FT_I8_IN_BZ, FT_I8_IN_YS,
  FT_I8_IN_YZ, FT_I8_IN_BIAS,
  FT_I8_CONV,     /* 1: A is an image, im2col'd; the window follows */
  FT_I8_C, FT_I8_WIN, /* conv: input channels; 18 window entries (quant.h's layout) */
  FT_I8_WX = FT_I8_WIN + 18, /* 1: a conv computed as W.X (see "convs as W.X" below); 2: the
                                implicit W.X of a stride-1 window (K = taps x C rounded to 4) */
  FT_I8_YQ,       /* 8-bit output of a QDQ kernel: the float32 epilogue's value (scale a_scale *
                     b_scale, bias, Relu, Relu or Clip activation), then QuantizeLinear's
                     rint(v / y_scale) + zy saturated: the bits a QuantizeLinear after it gives */
  FT_I8_NP
};
enum { FT_I8_OUT_S32, FT_I8_OUT_F32, FT_I8_OUT_U8, FT_I8_OUT_S8 };

static inline int64_t ft_i8_k4(int64_t k) { return (k + 3) & ~(int64_t)3; }
static inline int64_t ft_i8_n16(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* ---- packing B ------------------------------------------------------------------------------ */

/* bytes of packed B, or pack it: B[k,n] at src[k*rs + n*cs] as uint8 B'' (int8 + 128: B ^ 0x80) */
static size_t ft_i8_pack_b_raw(int64_t K, int64_t N, int64_t rs, int64_t cs, int b_signed, const void *src,
                               void *dst) {
  int64_t K4 = ft_i8_k4(K), N16 = ft_i8_n16(N);
  size_t bytes = (size_t)(4 * N16 + N16 * K4);
  if (!dst) return bytes;
  int32_t *colsum = (int32_t *)dst;
  uint8_t *pk = (uint8_t *)dst + 4 * N16;
  memset(dst, 0, bytes);
  for (int64_t j0 = 0; j0 < N16; j0 += FT_I8_NR) {
    int64_t w = N16 - j0 < FT_I8_NR ? N16 - j0 : FT_I8_NR;
    uint8_t *panel = pk + j0 * K4;
    for (int64_t c = 0; c < w && j0 + c < N; c++) {
      int64_t n = j0 + c;
      int32_t s = 0;
      for (int64_t k = 0; k < K; k++) {
        int64_t at = k * rs + n * cs;
        int v = b_signed ? ((const int8_t *)src)[at] + 128 : ((const uint8_t *)src)[at];
        panel[((k >> 2) * w + c) * 4 + (k & 3)] = (uint8_t)v;
        s += v;
      }
      colsum[n] = s;
    }
  }
  return bytes;
}

static inline int64_t ft_i8_m6(int64_t m) { return (m + FT_I8_MR - 1) / FT_I8_MR * FT_I8_MR; }

/* bytes of a W.X conv's packed weight (int8 W [M, K], row-major), or pack it: int32 wsum[M6]
 * (each row's sum), then the A layout below with M6 = M rounded up to FT_I8_MR rows, the int8
 * bytes as they are (they are vpdpbusd's signed operand); rows past M and k past K are 0.
 * taps > 1 (the implicit W.X form below): W's row is [C][taps] (ONNX's channel-major order),
 * packed tap-major, each tap's C channels padded to a multiple of 4: k' = t * C4 + c, K (the
 * packed length) = taps * C4, C4 = C rounded up to 4, the padding channels 0. */
static size_t ft_i8_pack_w_taps(int64_t M, int64_t C, int64_t taps, const int8_t *src, void *dst) {
  int64_t C4 = taps > 1 ? ft_i8_k4(C) : C, K4 = ft_i8_k4(taps * C4), M6 = ft_i8_m6(M), G = K4 >> 2;
  size_t bytes = (size_t)(4 * M6 + M6 * K4);
  if (!dst) return bytes;
  memset(dst, 0, bytes);
  int32_t *wsum = (int32_t *)dst;
  int8_t *pk = (int8_t *)dst + 4 * M6;
  for (int64_t m = 0; m < M; m++) {
    int32_t s = 0;
    for (int64_t c = 0; c < C; c++)
      for (int64_t t = 0; t < taps; t++) {
        int8_t v = src[(m * C + c) * taps + t];
        int64_t k = t * C4 + c;
        pk[((m / FT_I8_MR * G + (k >> 2)) * FT_I8_MR + m % FT_I8_MR) * 4 + (k & 3)] = v;
        s += v;
      }
    wsum[m] = s;
  }
  return bytes;
}
static inline int64_t ft_i8_taps(const int64_t *p) { return p[FT_I8_WIN + 6] * p[FT_I8_WIN + 7] * p[FT_I8_WIN + 8]; }
/* the weight as p's W.X form packs it */
static size_t ft_i8_pack_w(const int64_t *p, const void *src, void *dst) {
  if (p[FT_I8_WX] == 2) return ft_i8_pack_w_taps(p[FT_I8_M], p[FT_I8_C], ft_i8_taps(p), (const int8_t *)src, dst);
  return ft_i8_pack_w_taps(p[FT_I8_M], p[FT_I8_K], 1, (const int8_t *)src, dst);
}

/* the prepack hook (compiler/ops/quant.c names it): B as p describes it (W.X: the weight) */
static size_t ft_i8_pack_b(const int64_t *p, const void *src, void *dst) {
  if (p[FT_I8_WX]) return ft_i8_pack_w(p, src, dst);
  return ft_i8_pack_b_raw(p[FT_I8_K], p[FT_I8_N], p[FT_I8_B_RS], p[FT_I8_B_CS], (int)p[FT_I8_B_SIGNED], src, dst);
}

/* the activations the epilogue applies to 16 values in registers (ft_i8_act_v), the ones a
 * requantized (FT_I8_YQ) output may take */
static inline int ft_i8_act_vector(int64_t a) {
  return a == FT_ACT_NONE || a == FT_ACT_RELU || a == FT_ACT_CLIP || a == FT_ACT_GELU || a == FT_ACT_SIGMOID ||
         a == FT_ACT_SILU;
}

/* ---- one call's state ---------------------------------------------------------------------- */

typedef struct {
  const int64_t *p;
  int64_t M, N, K, K4, N16, mc, c0, rows; /* chunk: rows [c0, c0 + rows), mc its padded height */
  int32_t ca;                              /* A's zero point as uint8 (za; int8 A: za + 128) */
  float qs;                                /* float A: its scale (quantized with ca as zero point) */
  const void *a;                           /* this batch's A (matrix or image) */
  const uint8_t *bp;                       /* packed B panels */
  const int32_t *colsum, *zbp;             /* zbp: zb'' per column, NULL when all 0 */
  int32_t *comp;                           /* per column (N16, 0 past N): -za'' colsum'' + K za'' zb'' */
  int8_t *ap;                              /* packed A chunk (A'') */
  int32_t *rowsum;                         /* rowsum'' per chunk row, when zbp */
  const float *scale;                      /* per column (N16 entries, the one scale repeated);
                                              rowwise: per row, as comp and the bias */
  int rowwise;                             /* W.X: the corrections, scales and bias are per row */
  int64_t nscale;                          /* scales given: 1 or N */
  const void *bias;
  int32_t zy;
  float ys;                                /* FT_I8_YQ: y's scale */
  ft_gemm_epi act;                         /* FT_I8_ACT: the activation (act, lo, hi) */
  void *y;                                 /* this batch's output */
  /* the implicit W.X form (FT_I8_WX 2): wp the padded image's width (0: another form), ow and
     oh the output's width and height, plane the bytes of one 4-channel plane of the packed
     image, c4g its planes, taps the window's taps and toff each tap's byte offset */
  int64_t wp, ow, oh, plane, c4g, taps;
  const int64_t *toff;
} ft_i8_ctx;

static inline uint8_t ft_i8_quant_u8(float x, float s, int32_t z) {
  float v = rintf(x / s) + (float)z;
  return (uint8_t)(!(v > 0.0f) ? 0.0f : v > 255.0f ? 255.0f : v); /* NaN: 0, as the vector max gives */
}

/* n elements of A from x as uint8 A' into d: float32 quantized with (qs, ca), int8 + 128
 * (x ^ 0x80), uint8 as is. The vector path computes the scalar one's float expressions lane by
 * lane (a division, rint to even, + zero point, saturation), so both give the same bytes. */
#ifdef FT_I8_VNNI
/* The lanes mk of x[0, 16) quantized with scale qs and zero point ca (vs, vz: them broadcast)
 * to uint8, 16 bytes: the scalar expressions (ft_i8_quant_u8) lane by lane */
static inline __attribute__((always_inline)) __m128i ft_i8_q16(const float *x, __mmask16 mk, __m512 vs, __m512 vz) {
  __m512 q = _mm512_roundscale_ps(_mm512_div_ps(_mm512_maskz_loadu_ps(mk, x), vs), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  q = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, vz), _mm512_setzero_ps()), _mm512_set1_ps(255.0f));
  return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(q));
}
#endif

static void ft_i8_to_u8(int64_t kind, float qs, int32_t ca, const void *x, int64_t n, uint8_t *d) {
  int64_t i = 0;
#ifdef FT_I8_VNNI
  if (kind == 2) {
    const float *xf = (const float *)x;
    __m512 vs = _mm512_set1_ps(qs), vz = _mm512_set1_ps((float)ca);
    for (; i < n; i += 16) {
      __mmask16 mk = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
      _mm_mask_storeu_epi8(d + i, mk, ft_i8_q16(xf + i, mk, vs, vz));
    }
    return;
  }
#endif
  if (kind == 2)
    for (; i < n; i++) d[i] = ft_i8_quant_u8(((const float *)x)[i], qs, ca);
  else if (kind == 1)
    for (; i < n; i++) d[i] = (uint8_t)(((const uint8_t *)x)[i] ^ 0x80);
  else
    memcpy(d, x, (size_t)n);
}

/* rowsum'' of sliver s's rows: the sum of its words' bytes (as int8) by row. VNNI: vpdpbusd of
 * all-ones bytes with 48 words at a time (48 = 3 vectors, a multiple of the 6 rows: lane j of
 * the three accumulators always holds row j % 6), the last words in plain C. */
static void ft_i8_sliver_rowsums(const ft_i8_ctx *c, int64_t s) {
  int64_t words = (c->K4 >> 2) * FT_I8_MR, w = 0;
  const int8_t *d = c->ap + s * words * 4;
  int32_t sum[FT_I8_MR] = {0};
#ifdef FT_I8_VNNI
  __m512i ones = _mm512_set1_epi8(1), acc[3] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
  for (; w + 48 <= words; w += 48)
    for (int j = 0; j < 3; j++) acc[j] = _mm512_dpbusd_epi32(acc[j], ones, _mm512_loadu_si512((const void *)(d + 4 * w + 64 * j)));
  int32_t lanes[48];
  for (int j = 0; j < 3; j++) _mm512_storeu_si512((void *)(lanes + 16 * j), acc[j]);
  for (int j = 0; j < 48; j++) sum[j % FT_I8_MR] += lanes[j];
#endif
  for (; w < words; w++) sum[w % FT_I8_MR] += d[4 * w] + d[4 * w + 1] + d[4 * w + 2] + d[4 * w + 3];
  for (int r = 0; r < FT_I8_MR; r++) c->rowsum[s * FT_I8_MR + r] = sum[r];
}

#if defined(FT_I8_VNNI) && FT_I8_MR == 6
/* 64 k of row m (from k0, kv of them inside K) as A'' bytes in a register: ft_i8_to_u8's values
 * ^ 0x80, 0 past K and for a row past M (what ft_i8_pack_a_rows's tmp holds, interleaved) */
static inline __attribute__((always_inline)) __m512i ft_i8_a64(const ft_i8_ctx *c, int64_t kind, int64_t m, int64_t k0,
                                                              int64_t kv) {
  if (m >= c->M) return _mm512_setzero_si512();
  const __mmask64 km = kv >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << kv) - 1);
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  const char *x = (const char *)c->a + (m * c->p[FT_I8_A_RS] + k0) * (kind == 2 ? 4 : 1);
  if (kind != 2) { /* int8: (x ^ 0x80) ^ 0x80, the byte itself; uint8: x ^ 0x80 */
    __m512i v = _mm512_maskz_loadu_epi8(km, x);
    return kind == 1 ? v : _mm512_maskz_mov_epi8(km, _mm512_xor_si512(v, flip));
  }
  const float *xf = (const float *)(const void *)x;
  __m512 vs = _mm512_set1_ps(c->qs), vz = _mm512_set1_ps((float)c->ca);
  __m128i q[4];
  for (int j = 0; j < 4; j++) q[j] = ft_i8_q16(xf + 16 * j, (__mmask16)(km >> (16 * j)), vs, vz);
  __m512i u = _mm512_inserti32x4(_mm512_castsi128_si512(q[0]), q[1], 1);
  u = _mm512_inserti32x4(_mm512_inserti32x4(u, q[2], 2), q[3], 3);
  return _mm512_maskz_mov_epi8(km, _mm512_xor_si512(u, flip));
}
#endif

/* matrix A: slivers [lo, hi) of the chunk, 64 k at a time: each row's k converted to uint8 in
 * tmp, then interleaved into the sliver as A'' (one 4-byte word per row and group, ^ 0x80 per
 * byte); k past K is 0 (0x80 in tmp). Then the sliver's row sums when they are needed. With
 * VNNI (6-row slivers) each row's 64 k go to a register instead and 6 masked vpermd per 16
 * words of output interleave them: the tmp path's word-by-word copies were about a third of the
 * packing. */
static void ft_i8_pack_a_rows(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  int64_t kind = c->p[FT_I8_A_KIND], G = c->K4 >> 2;
#if defined(FT_I8_VNNI) && FT_I8_MR == 6
  /* output word f = 6 g + r of a 64-k block is word g of row r: vector j holds f in [16 j,
     16 j + 16), lane i row (4 j + i) % 6 (16 = 4 mod 6), word (16 j + i) / 6 */
  __m512i idx[6];
  __mmask16 rm[6][6];
  for (int j = 0; j < 6; j++) {
    int32_t w[16];
    for (int i = 0; i < 16; i++) w[i] = (16 * j + i) / 6;
    idx[j] = _mm512_loadu_si512((const void *)w);
    for (int r = 0; r < 6; r++) {
      unsigned mk = 0;
      for (int i = 0; i < 16; i++) mk |= ((16 * j + i) % 6 == r) << i;
      rm[j][r] = (__mmask16)mk;
    }
  }
  for (int64_t s = lo; s < hi; s++) {
    int8_t *d = c->ap + s * G * FT_I8_MR * 4;
    for (int64_t k0 = 0; k0 < c->K4; k0 += 64) {
      int64_t kb = c->K4 - k0 < 64 ? c->K4 - k0 : 64, kv = c->K - k0 < kb ? c->K - k0 : kb;
      __m512i v[6];
      for (int r = 0; r < 6; r++) v[r] = ft_i8_a64(c, kind, c->c0 + s * FT_I8_MR + r, k0, kv);
      int8_t *dg = d + k0 * FT_I8_MR;
      int64_t words = (kb >> 2) * FT_I8_MR; /* 96 for a whole block */
      for (int j = 0; j < 6 && 16 * j < words; j++) {
        __m512i o = _mm512_setzero_si512();
        for (int r = 0; r < 6; r++) o = _mm512_mask_permutexvar_epi32(o, rm[j][r], idx[j], v[r]);
        int64_t left = words - 16 * j;
        _mm512_mask_storeu_epi32(dg + 64 * j, left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1), o);
      }
    }
    if (c->zbp) ft_i8_sliver_rowsums(c, s);
  }
#else
  int64_t rs = c->p[FT_I8_A_RS], esz = kind == 2 ? 4 : 1;
  uint8_t tmp[FT_I8_MR][64];
  for (int64_t s = lo; s < hi; s++) {
    int8_t *d = c->ap + s * G * FT_I8_MR * 4;
    for (int64_t k0 = 0; k0 < c->K4; k0 += 64) {
      int64_t kb = c->K4 - k0 < 64 ? c->K4 - k0 : 64, kv = c->K - k0 < kb ? c->K - k0 : kb;
      for (int r = 0; r < FT_I8_MR; r++) {
        int64_t m = c->c0 + s * FT_I8_MR + r;
        memset(tmp[r], 0x80, 64);
        if (m < c->M) ft_i8_to_u8(kind, c->qs, c->ca, (const char *)c->a + (m * rs + k0) * esz, kv, tmp[r]);
      }
      int8_t *dg = d + k0 * FT_I8_MR;
      for (int64_t g = 0; g < kb >> 2; g++)
        for (int r = 0; r < FT_I8_MR; r++) {
          uint32_t word;
          memcpy(&word, tmp[r] + 4 * g, 4);
          word ^= 0x80808080u;
          memcpy(dg + (g * FT_I8_MR + r) * 4, &word, 4);
        }
    }
    if (c->zbp) ft_i8_sliver_rowsums(c, s);
  }
#endif
}

/* One k row of a conv's im2col over the chunk's positions into row[0, rows): a run of one output
 * row at a time, its input row and bounds found once per run. The output coordinates are
 * divided out once, then stepped run by run. Stride 1: the run is a shifted copy of the input
 * row with the pad value outside it (AVX-512: 64 bytes at a time, a masked load blended with the
 * pad, one masked store, no library call per run: ResNet-50's 14- and 28-wide runs spent more
 * in memset and memcpy calls than in the copy); stride 2: the even bytes of masked 64-byte
 * loads (vpmovwb), 32 outputs at a time. */
static void ft_i8_im2col_row(const ft_i8_ctx *c, int64_t k, uint8_t *row) {
  const int64_t *w = c->p + FT_I8_WIN, *in_ = w, *od = w + 3, *kk = w + 6, *st = w + 9, *dl = w + 12, *pb = w + 15;
  int64_t ksz = kk[0] * kk[1] * kk[2], isz = in_[0] * in_[1] * in_[2];
  int64_t ic = k / ksz, t = k % ksz, ta = t / (kk[1] * kk[2]), tb = t / kk[2] % kk[1], tc = t % kk[2];
  const uint8_t *xc = (const uint8_t *)c->a + ic * isz;
  uint8_t pad = (uint8_t)c->ca;
  int64_t pos = c->c0, o2 = pos % od[2], o1 = pos / od[2] % od[1], o0 = pos / (od[2] * od[1]);
  for (int64_t r = 0; r < c->rows;) {
    int64_t n = od[2] - o2 < c->rows - r ? od[2] - o2 : c->rows - r;
    int64_t i0 = o0 * st[0] - pb[0] + ta * dl[0], i1 = o1 * st[1] - pb[1] + tb * dl[1];
    int64_t i2 = o2 * st[2] - pb[2] + tc * dl[2];
    uint8_t *d = row + r;
    r += n;
    if (++o1 == od[1]) { o1 = 0; o0++; } /* the next run: the next output row, from column 0 */
    o2 = 0;
    if (!(i0 >= 0 && i0 < in_[0] && i1 >= 0 && i1 < in_[1])) {
      memset(d, pad, (size_t)n);
      continue;
    }
    const uint8_t *xr = xc + (i0 * in_[1] + i1) * in_[2];
    if (st[2] == 1) {
      int64_t ja = i2 < 0 ? -i2 : 0, jb = in_[2] - i2 < n ? in_[2] - i2 : n; /* [ja, jb): inside */
      if (ja > n) ja = n;
      if (jb < ja) jb = ja;
#if defined(FT_I8_VNNI) && defined(__AVX512BW__)
      __m512i pv = _mm512_set1_epi8((char)pad);
      for (int64_t j = 0; j < n; j += 64) {
        int64_t e = n - j < 64 ? n - j : 64, lo = ja - j, hi = jb - j; /* this vector's lanes [0, e) */
        lo = lo < 0 ? 0 : lo > e ? e : lo;
        hi = hi < lo ? lo : hi > e ? e : hi;
        __mmask64 in = (hi >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << hi) - 1)) & ~(((__mmask64)1 << lo) - 1);
        __mmask64 all = e >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << e) - 1);
        /* lanes of `in` read xr[i2 + j + lane], all inside the row; the rest hold the pad (the
           address is formed as an integer: i2 + j may be negative, and masked lanes are not read) */
        __m512i v = _mm512_mask_loadu_epi8(pv, in, (const void *)((uintptr_t)xr + (uintptr_t)(i2 + j)));
        _mm512_mask_storeu_epi8((void *)(d + j), all, v);
      }
#else
      memset(d, pad, (size_t)ja);
      if (jb > ja) memcpy(d + ja, xr + i2 + ja, (size_t)(jb - ja));
      memset(d + jb, pad, (size_t)(n - jb));
#endif
      continue;
    }
    int64_t j = 0;
    for (; j < n && i2 < 0; j++, i2 += st[2]) d[j] = pad;
#if defined(FT_I8_VNNI) && defined(__AVX512BW__)
    if (st[2] == 2) /* up to 32 outputs from 64 input bytes, the bytes past the row read as the pad */
      for (__m512i pv = _mm512_set1_epi8((char)pad); j < n; j += 32, i2 += 64) {
        int64_t e = n - j < 32 ? n - j : 32, b = in_[2] - i2 < 2 * e ? in_[2] - i2 : 2 * e;
        __mmask64 in = b >= 64 ? ~(__mmask64)0 : b <= 0 ? 0 : (((__mmask64)1 << b) - 1);
        __m512i v = _mm512_mask_loadu_epi8(pv, in, (const void *)((uintptr_t)xr + (uintptr_t)i2));
        _mm256_mask_storeu_epi8((void *)(d + j), (__mmask32)(e >= 32 ? 0xffffffffu : (1u << e) - 1), _mm512_cvtepi16_epi8(v));
      }
#endif
    for (; j < n; j++, i2 += st[2]) d[j] = i2 < in_[2] ? xr[i2] : pad;
  }
}

/* positions [c0, c0 + rows) of a 1x1 conv of stride 1 without padding: the image row itself */
static inline int ft_i8_conv_direct(const int64_t *p) {
  const int64_t *w = p + FT_I8_WIN;
  for (int i = 0; i < 3; i++)
    if (w[6 + i] != 1 || w[9 + i] != 1 || w[15 + i] != 0 || w[i] != w[3 + i]) return 0;
  return 1;
}

/* conv A: groups [lo, hi) of 4 k rows of A' (uint8), interleaved into the chunk's words as A'' */
static void ft_i8_pack_a_conv(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  uint8_t buf[4][FT_I8_MAX_ROWS];
  int direct = ft_i8_conv_direct(c->p);
  int64_t isz = c->p[FT_I8_WIN] * c->p[FT_I8_WIN + 1] * c->p[FT_I8_WIN + 2], G = c->K4 >> 2;
  for (int64_t g = lo; g < hi; g++) {
    const uint8_t *rows[4];
    for (int j = 0; j < 4; j++) {
      int64_t k = 4 * g + j;
      if (k >= c->K) {
        memset(buf[j], 0x80, (size_t)c->rows); /* A'' 0 */
        rows[j] = buf[j];
      } else if (direct) {
        rows[j] = (const uint8_t *)c->a + k * isz + c->c0;
      } else {
        ft_i8_im2col_row(c, k, buf[j]);
        rows[j] = buf[j];
      }
    }
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
    for (int64_t s = 0; s * FT_I8_MR < c->mc; s++) {
      uint8_t *d = (uint8_t *)c->ap + ((s * G + g) * FT_I8_MR) * 4;
      int64_t rb = s * FT_I8_MR, n = c->rows - rb < FT_I8_MR ? c->rows - rb : FT_I8_MR;
      for (int64_t r = 0; r < n; r++) { /* A'' = A' ^ 0x80 */
        d[4 * r] = r0[rb + r] ^ 0x80;
        d[4 * r + 1] = r1[rb + r] ^ 0x80;
        d[4 * r + 2] = r2[rb + r] ^ 0x80;
        d[4 * r + 3] = r3[rb + r] ^ 0x80;
      }
      if (n < FT_I8_MR) memset(d + 4 * n, 0, (size_t)(4 * (FT_I8_MR - n))); /* rows past the chunk's */
    }
  }
}

/* the image as uint8 A' (ca its zero point): from float32 (quantized), int8 (+128) or as is */
static void ft_i8_image_u8(const ft_i8_ctx *c, const void *x, int64_t n, uint8_t *dst) {
  ft_i8_to_u8(c->p[FT_I8_A_KIND], c->qs, c->ca, x, n, dst);
}

/* a conv's row sums: slivers [lo, hi) */
static void ft_i8_rowsums_run(const void *ctx, int64_t lo, int64_t hi) {
  for (int64_t s = lo; s < hi; s++) ft_i8_sliver_rowsums((const ft_i8_ctx *)ctx, s);
}

/* ---- epilogue ------------------------------------------------------------------------------
 * The sums are corrected first (comp per column, zb' x rowsum per row and column), then turned
 * into the output kind. Plain C: one loop per output kind over a tile of sums, over n within m
 * where Y's columns are contiguous (a matmul) and over m within n where its rows are (a conv's
 * NCHW). The VNNI path does the same per 16 columns in vector registers (ft_i8_epi_v). */

/* one corrected sum to its output element */
#define FT_I8_EPI_LOOP(BODY)                                                                     \
  do {                                                                                           \
    if (cs == 1) {                                                                               \
      for (int64_t r = 0; r < nr; r++)                                                           \
        for (int64_t q = 0; q < nc; q++) {                                                       \
          int64_t n = j0 + q, at = (m0 + r) * rs + n;                                             \
          if (c->wp) { /* the implicit W.X form: position n of the padded grid */                \
            if (n % c->wp >= c->ow || n / c->wp >= c->oh) continue;                              \
            at = (m0 + r) * rs + n / c->wp * c->ow + n % c->wp;                                  \
          }                                                                                      \
          int32_t acc = tile[r * FT_I8_NR + q];                                                  \
          BODY;                                                                                  \
        }                                                                                        \
    } else {                                                                                     \
      for (int64_t q = 0; q < nc; q++)                                                           \
        for (int64_t r = 0; r < nr; r++) { int64_t n = j0 + q, at = (m0 + r) * rs + n * cs; int32_t acc = tile[r * FT_I8_NR + q]; BODY; } \
    }                                                                                            \
  } while (0)

static void ft_i8_epilogue(const ft_i8_ctx *c, int32_t *tile, int64_t m0, int64_t r0, int64_t nr, int64_t j0, int64_t nc) {
  const int64_t *p = c->p;
  int64_t rs = p[FT_I8_Y_RS], cs = p[FT_I8_Y_CS];
  int rw = c->rowwise; /* W.X: comp, scale and bias by row (E: the entry of row r, column n) */
#define E (rw ? r0 + r : n)
  for (int64_t r = 0; r < nr; r++)
    for (int64_t q = 0; q < nc; q++)
      tile[r * FT_I8_NR + q] += (rw ? c->comp[r0 + r] : c->comp[j0 + q]) - (c->zbp ? c->zbp[j0 + q] * c->rowsum[r0 + r] : 0);
  const float *sc = c->scale;
  switch (p[FT_I8_OUT]) {
  case FT_I8_OUT_S32: {
    int32_t *y = (int32_t *)c->y;
    FT_I8_EPI_LOOP(y[at] = acc);
    break;
  }
  case FT_I8_OUT_F32: {
    float *y = (float *)c->y, ft[FT_I8_MR * FT_I8_NR];
    const float *fb = p[FT_I8_BIAS] == 1 ? (const float *)c->bias : NULL;
    int relu = (int)p[FT_I8_RELU];
    for (int64_t r = 0; r < nr; r++) {
      for (int64_t q = 0; q < nc; q++) {
        int64_t n = j0 + q;
        int32_t acc = tile[r * FT_I8_NR + q];
        float v = fb ? fmaf((float)acc, sc[E], fb[E]) : (float)acc * sc[E];
        ft[r * FT_I8_NR + q] = relu && v < 0 ? 0 : v;
      }
      if (c->act.act) ft_gemm_act(ft + r * FT_I8_NR, nc, &c->act);
    }
    FT_I8_EPI_LOOP((void)acc; y[at] = ft[r * FT_I8_NR + q]);
    break;
  }
  default: {
    const int32_t *ib = p[FT_I8_BIAS] == 2 ? (const int32_t *)c->bias : NULL;
    float zy = (float)c->zy;
    if (p[FT_I8_YQ]) { /* the float32 epilogue, then QuantizeLinear (ft_i8_quant_u8's expressions) */
      const float *fb = p[FT_I8_BIAS] == 1 ? (const float *)c->bias : NULL;
      int relu = (int)p[FT_I8_RELU], u8 = p[FT_I8_OUT] == FT_I8_OUT_U8;
      float lo = u8 ? 0.0f : -128.0f, hi = u8 ? 255.0f : 127.0f;
      FT_I8_EPI_LOOP({
        float v = fb ? fmaf((float)acc, sc[E], fb[E]) : (float)acc * sc[E];
        if (relu && v < 0) v = 0;
        if (c->act.act) ft_gemm_act(&v, 1, &c->act);
        v = rintf(v / c->ys) + zy;
        v = !(v > lo) ? lo : v > hi ? hi : v;
        if (u8) ((uint8_t *)c->y)[at] = (uint8_t)v;
        else ((int8_t *)c->y)[at] = (int8_t)v;
      });
      break;
    }
    if (p[FT_I8_OUT] == FT_I8_OUT_U8) {
      uint8_t *y = (uint8_t *)c->y;
      FT_I8_EPI_LOOP({
        float v = rintf((float)(acc + (ib ? ib[E] : 0)) * sc[E]) + zy;
        y[at] = (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
      });
    } else {
      int8_t *y = (int8_t *)c->y;
      FT_I8_EPI_LOOP({
        float v = rintf((float)(acc + (ib ? ib[E] : 0)) * sc[E]) + zy;
        y[at] = (int8_t)(v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v);
      });
    }
  }
  }
#undef E
}
#undef FT_I8_EPI_LOOP

/* ---- the micro-kernel: FT_I8_MR rows of packed A x one panel (w columns) over all K ---------- */

#ifdef FT_I8_VNNI
/* The activation (FT_I8_ACT) on 16 float32 values in registers, where it has a vector form:
 * Relu and Clip as ft_gemm_act's v < lo ? lo : v > hi ? hi : v, NaN kept (max and min return
 * their second operand on NaN); GELU, Sigmoid and SiLU by the vector functions ft_gemm_act
 * itself runs on 16 lanes, so the bits are the same. Done here, not in a pass over the stored
 * row: that pass reloaded values just written by masked stores, which AMD cores do not
 * forward (BERT-base int8 spent about a tenth of its time in the GELU pass). */
static inline int ft_i8_act_in_regs(const ft_i8_ctx *c) { return ft_i8_act_vector(c->act.act); }
static inline __attribute__((always_inline)) __m512 ft_i8_act_v(const ft_i8_ctx *c, __m512 v) {
  switch (c->act.act) {
  case FT_ACT_RELU: return _mm512_max_ps(_mm512_setzero_ps(), v);
  case FT_ACT_CLIP: return _mm512_min_ps(_mm512_set1_ps(c->act.hi), _mm512_max_ps(_mm512_set1_ps(c->act.lo), v));
  case FT_ACT_GELU: return ft_v16_gelu(v);
  case FT_ACT_SIGMOID: return ft_v16_sigmoid(v);
  case FT_ACT_SILU: return _mm512_mul_ps(v, ft_v16_sigmoid(v));
  default: return v;
  }
}

/* The constants of ft_i8_fin, in registers (ft_i8_epi_fast: for the whole tile) */
typedef struct {
  __m512 lo, hi, ys, zy, qlo, qhi; /* Clip's range; y's scale, zero point and 8-bit range */
} ft_i8_fin_k;

/* The float32 and the requantized (FT_I8_YQ) outputs' values of 16 sums x: x corrected by comp
 * and, with b zero points, zbr (zbp * rowsum; 0 without), then scale and bias of the 16 lanes
 * (hb: a bias; one fma), relu (max(0, v) keeps -0 as v < 0 does), ac the activation's class (0
 * none, 1 Clip, 2 another: ft_i8_act_v), and for yq QuantizeLinear: a division, round to even,
 * + zy, saturation (NaN: the low end, as max returns its second operand), the saturated value
 * in an int32 lane. ft_i8_epi_v and ft_i8_epi_fast both compute them here. */
static inline __attribute__((always_inline)) __m512i ft_i8_fin(const ft_i8_ctx *c, const ft_i8_fin_k *k, __m512i x,
                                                              __m512i comp, __m512i zbr, __m512 sc, __m512 bias, int hb,
                                                              int relu, int ac, int yq) {
  __m512 v = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_add_epi32(x, comp), zbr));
  v = hb ? _mm512_fmadd_ps(v, sc, bias) : _mm512_mul_ps(v, sc);
  if (relu) v = _mm512_max_ps(_mm512_setzero_ps(), v);
  if (ac == 1) v = _mm512_min_ps(k->hi, _mm512_max_ps(k->lo, v));
  else if (ac == 2) v = ft_i8_act_v(c, v);
  if (!yq) return _mm512_castps_si512(v);
  v = _mm512_roundscale_ps(_mm512_div_ps(v, k->ys), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, k->zy), k->qlo), k->qhi);
  return _mm512_cvttps_epi32(v);
}

static inline ft_i8_fin_k ft_i8_fin_consts(const ft_i8_ctx *c) {
  int u8 = c->p[FT_I8_OUT] == FT_I8_OUT_U8;
  ft_i8_fin_k k = {_mm512_set1_ps(c->act.lo), _mm512_set1_ps(c->act.hi), _mm512_set1_ps(c->ys),
                   _mm512_set1_ps((float)c->zy), _mm512_set1_ps(u8 ? 0.0f : -128.0f), _mm512_set1_ps(u8 ? 255.0f : 127.0f)};
  return k;
}

/* the activation's class for ft_i8_fin */
static inline int ft_i8_fin_class(const ft_i8_ctx *c) {
  return c->act.act == FT_ACT_NONE ? 0 : c->act.act == FT_ACT_CLIP ? 1 : 2;
}

/* 16 sums of row r (of the chunk) and columns [n, n + 16), corrected, as the output kind's
 * value: float32 bits, int32, or the saturated 8-bit value in an int32 lane. The scalar
 * epilogue's expressions, lane by lane. */
static inline __attribute__((always_inline)) __m512i ft_i8_epi_v(const ft_i8_ctx *c, __m512i x, int64_t r, int64_t n, __mmask16 mk) {
  const int64_t *p = c->p;
  int rw = c->rowwise; /* W.X: comp, scale and bias of row r in every lane */
  __m512i comp = rw ? _mm512_set1_epi32(c->comp[r]) : _mm512_loadu_si512((const void *)(c->comp + n));
  __m512i zbr = c->zbp ? _mm512_mullo_epi32(_mm512_loadu_si512((const void *)(c->zbp + n)), _mm512_set1_epi32(c->rowsum[r]))
                       : _mm512_setzero_si512();
  __m512 sc = rw ? _mm512_set1_ps(c->scale[r]) : _mm512_loadu_ps(c->scale + n);
  ft_i8_fin_k k = ft_i8_fin_consts(c);
  if (p[FT_I8_OUT] == FT_I8_OUT_F32 || p[FT_I8_YQ]) {
    int hb = p[FT_I8_BIAS] == 1;
    __m512 bias = !hb ? _mm512_setzero_ps()
                  : rw ? _mm512_set1_ps(((const float *)c->bias)[r]) : _mm512_maskz_loadu_ps(mk, (const float *)c->bias + n);
    return ft_i8_fin(c, &k, x, comp, zbr, sc, bias, hb, p[FT_I8_RELU] != 0, ft_i8_fin_class(c), p[FT_I8_YQ] != 0);
  }
  x = _mm512_sub_epi32(_mm512_add_epi32(x, comp), zbr);
  if (p[FT_I8_OUT] == FT_I8_OUT_S32) return x;
  if (p[FT_I8_BIAS] == 2)
    x = _mm512_add_epi32(x, rw ? _mm512_set1_epi32(((const int32_t *)c->bias)[r]) : _mm512_maskz_loadu_epi32(mk, (const int32_t *)c->bias + n));
  __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(x), sc), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, k.zy), k.qlo), k.qhi);
  return _mm512_cvttps_epi32(v);
}

/* the finished values into Y where its columns are contiguous (else into the tile, for
 * ft_i8_store_t): 4-byte or 1-byte elements */
static inline __attribute__((always_inline)) void ft_i8_store_v(const ft_i8_ctx *c, __m512i v, int64_t m, int64_t n, __mmask16 mk) {
  const int64_t *p = c->p;
  int64_t at = m * p[FT_I8_Y_RS] + n;
  if (p[FT_I8_OUT] <= FT_I8_OUT_F32) {
    if (mk == 0xffff) _mm512_storeu_si512((void *)((int32_t *)c->y + at), v);
    else _mm512_mask_storeu_epi32((int32_t *)c->y + at, mk, v);
  }
  else _mm_mask_storeu_epi8((uint8_t *)c->y + at, mk, _mm512_cvtepi32_epi8(v));
}

/* finished values (4-byte lanes: float32 bits or int32) from the tile into Y with columns
 * strided (a conv's NCHW); the activation first. Where Y's rows are contiguous (rs 1), 16
 * columns at a time are transposed in registers and each column's nr values go out as one
 * masked store: one scalar store per value cost a quarter of MobileNetV2 QDQ's time. */
static void ft_i8_store_t(const ft_i8_ctx *c, float *tile, int64_t m0, int64_t nr, int64_t j0, int64_t nc) {
  const int64_t *p = c->p;
  int64_t rs = p[FT_I8_Y_RS], cs = p[FT_I8_Y_CS];
  int wide = p[FT_I8_OUT] <= FT_I8_OUT_F32;
  if (c->act.act && !ft_i8_act_in_regs(c))
    for (int64_t r = 0; r < nr; r++) ft_gemm_act(tile + r * FT_I8_NR, nc, &c->act);
  if (rs == 1) {
    __mmask16 rm = (__mmask16)((1u << nr) - 1);
    for (int64_t q0 = 0; q0 < nc; q0 += 16) {
      __m512 v[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; i++) v[i] = i < nr ? _mm512_loadu_ps(tile + i * FT_I8_NR + q0) : _mm512_setzero_ps();
      ft_transpose16(v); /* v[j]: column q0 + j, its rows in the lanes */
      int64_t nq = nc - q0 < 16 ? nc - q0 : 16;
      for (int64_t j = 0; j < nq; j++) {
        int64_t at = m0 + (j0 + q0 + j) * cs;
        if (wide) _mm512_mask_storeu_ps((float *)c->y + at, rm, v[j]);
        else _mm_mask_storeu_epi8((uint8_t *)c->y + at, rm, _mm512_cvtepi32_epi8(_mm512_castps_si512(v[j])));
      }
    }
    return;
  }
  for (int64_t q = 0; q < nc; q++) {
    int64_t at = m0 * rs + (j0 + q) * cs;
    for (int64_t r = 0; r < nr; r++) {
      int32_t v;
      memcpy(&v, tile + r * FT_I8_NR + q, 4);
      if (wide) memcpy((char *)c->y + 4 * (at + r * rs), &v, 4);
      else ((uint8_t *)c->y)[at + r * rs] = (uint8_t)v;
    }
  }
}

/* A'' group (the 4 bytes at p) in every lane: one vpbroadcastd per row and k group, which its 4
 * vpdpbusd read from a register. The loop is then 4 loads of B, 6 broadcast loads and 24
 * vpdpbusd per group of 4 k. Each vpdpbusd broadcasting from memory itself (its {1to16} form,
 * what this kernel used before) makes 28 loads per 24 vpdpbusd; on Zen 5, which runs two 512-bit
 * vpdpbusd and two 512-bit loads a cycle, a loop of that form ran at 5.6 G vpdpbusd/s against
 * 6.75 G/s for this one (B in L1 or L2, one core), and BERT-base int8 (dynamic, seq 128, 1
 * thread) took 49-54 ms against 55-60. */
static inline __m512i ft_i8_bcast(const int8_t *p) {
  int32_t w;
  memcpy(&w, p, 4);
  return _mm512_set1_epi32(w);
}

/* The epilogue of one micro-kernel call, from its sums stored as an int32 tile (FT_I8_NR per
 * row): rows [r0, r0 + nr) of the chunk, columns [j0, j0 + nc). One function for every kernel
 * shape, called, not inlined: with the epilogue inlined into each of the 12 kernels after its
 * loop, each was 10-46 KB of code, and BERT-base int8 spent a fifth of ft_i8_kernel_4's time
 * outside its vpdpbusd loop. Values go straight to Y where its columns are contiguous, else
 * back into the tile (4-byte lanes) for ft_i8_store_t. */
/* the implicit W.X form's finished values (4-byte lanes) from the tile into Y: each run of
 * columns on one row of the padded grid, the part left of ow, as one copy per row */
static void ft_i8_store_virt(const ft_i8_ctx *c, int32_t *tile, int64_t r0, int64_t nr, int64_t j0, int64_t nc) {
  const int64_t *p = c->p;
  int wide = p[FT_I8_OUT] <= FT_I8_OUT_F32;
  if (c->act.act && !ft_i8_act_in_regs(c))
    for (int64_t r = 0; r < nr; r++) ft_gemm_act((float *)(void *)(tile + r * FT_I8_NR), nc, &c->act);
  for (int64_t q = 0; q < nc;) {
    int64_t pos = j0 + q, oy = pos / c->wp, ox = pos % c->wp;
    int64_t n = c->wp - ox < nc - q ? c->wp - ox : nc - q, m = ox < c->ow ? (c->ow - ox < n ? c->ow - ox : n) : 0;
    for (int64_t r = 0; r < nr && m > 0 && oy < c->oh; r++) {
      int64_t at = (c->c0 + r0 + r) * p[FT_I8_Y_RS] + oy * c->ow + ox;
      const int32_t *t = tile + r * FT_I8_NR + q;
      if (wide) {
        memcpy((int32_t *)c->y + at, t, 4 * (size_t)m);
        continue;
      }
      for (int64_t i = 0; i < m; i += 16) {
        __mmask16 mk = m - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (m - i)) - 1);
        _mm_mask_storeu_epi8((uint8_t *)c->y + at + i, mk, _mm512_cvtepi32_epi8(_mm512_maskz_loadu_epi32(mk, t + i)));
      }
    }
    q += n;
  }
}

/* 16 finished values to y: floats, or the 8-bit values of int32 lanes */
static inline __attribute__((always_inline)) void ft_i8_fin_store(void *y, int64_t at, __m512i v, int yq,
                                                                   __mmask16 mk) {
  if (!yq && mk == 0xffff) _mm512_storeu_si512((void *)((int32_t *)y + at), v);
  else if (!yq) _mm512_mask_storeu_epi32((int32_t *)y + at, mk, v);
  else if (mk == 0xffff) _mm_storeu_si128((__m128i *)((uint8_t *)y + at), _mm512_cvtepi32_epi8(v));
  else _mm_mask_storeu_epi8((uint8_t *)y + at, mk, _mm512_cvtepi32_epi8(v));
}

/* ft_i8_epi_fast for one activation class and output kind (constants where it is called) */
static inline __attribute__((always_inline)) void ft_i8_epi_fast_k(const ft_i8_ctx *c, const int32_t *tile, int64_t r0,
                                                                    int64_t nr, int64_t j0, int64_t nc, int ac, int yq) {
  const int64_t *p = c->p;
  int hb = p[FT_I8_BIAS] == 1, relu = p[FT_I8_RELU] != 0;
  ft_i8_fin_k k = ft_i8_fin_consts(c);
  const float *bias = (const float *)c->bias, *scale = c->scale;
  const int32_t *comp = c->comp, *zbp = c->zbp;
  int64_t rs = p[FT_I8_Y_RS], nf = nc & ~(int64_t)15, y0 = c->c0 + r0;
  __m512i zero = _mm512_setzero_si512();
  __mmask16 tail = (__mmask16)((1u << (nc - nf)) - 1);
  void *y = c->y;
  if (c->rowwise)
    for (int64_t r = 0; r < nr; r++) {
      const int32_t *t = tile + r * FT_I8_NR;
      int64_t at = (y0 + r) * rs + j0;
      __m512i cv = _mm512_set1_epi32(comp[r0 + r]);
      __m512 sv = _mm512_set1_ps(scale[r0 + r]), bv = hb ? _mm512_set1_ps(bias[r0 + r]) : _mm512_setzero_ps();
      __m512i rsum = zbp ? _mm512_set1_epi32(c->rowsum[r0 + r]) : zero;
#define FT_I8_ZBR(n) (zbp ? _mm512_mullo_epi32(_mm512_loadu_si512((const void *)(zbp + (n))), rsum) : zero)
      for (int64_t q = 0; q < nf; q += 16)
        ft_i8_fin_store(y, at + q, ft_i8_fin(c, &k, _mm512_load_si512((const void *)(t + q)), cv, FT_I8_ZBR(j0 + q), sv, bv, hb, relu, ac, yq), yq, 0xffff);
      if (tail)
        ft_i8_fin_store(y, at + nf, ft_i8_fin(c, &k, _mm512_load_si512((const void *)(t + nf)), cv, FT_I8_ZBR(j0 + nf), sv, bv, hb, relu, ac, yq), yq, tail);
#undef FT_I8_ZBR
    }
  else
    for (int64_t q = 0; q < nc; q += 16) {
      int64_t n = j0 + q;
      __mmask16 mk = q < nf ? (__mmask16)0xffff : tail;
      __m512i cv = _mm512_loadu_si512((const void *)(comp + n));
      __m512 sv = _mm512_loadu_ps(scale + n), bv = hb ? _mm512_maskz_loadu_ps(mk, bias + n) : _mm512_setzero_ps();
      __m512i zv = zbp ? _mm512_loadu_si512((const void *)(zbp + n)) : zero;
      for (int64_t r = 0; r < nr; r++) {
        __m512i zbr = zbp ? _mm512_mullo_epi32(zv, _mm512_set1_epi32(c->rowsum[r0 + r])) : zero;
        ft_i8_fin_store(y, (y0 + r) * rs + n,
                        ft_i8_fin(c, &k, _mm512_load_si512((const void *)(tile + r * FT_I8_NR + q)), cv, zbr, sv, bv, hb, relu, ac, yq),
                        yq, mk);
      }
    }
}

/* The epilogue where it goes straight to Y's contiguous rows with a float32 or requantized
 * output and the activation in registers (every conv and matmul of the
 * quantized zoo): ft_i8_epi_v's values, with the corrections, scales and bias loaded once per
 * row (the W.X form: per row) or once per 16 columns (else), the constants broadcast and the
 * output kind and activation decided once per tile. ft_i8_epi_v looked all of them up again
 * for every 16 values: MobileNetV2 QDQ spent a third of its time there. */
static void ft_i8_epi_fast(const ft_i8_ctx *c, const int32_t *tile, int64_t r0, int64_t nr, int64_t j0, int64_t nc) {
  int ac = ft_i8_fin_class(c), yq = c->p[FT_I8_YQ] != 0;
  switch (ac * 2 + yq) {
  case 0: ft_i8_epi_fast_k(c, tile, r0, nr, j0, nc, 0, 0); break;
  case 1: ft_i8_epi_fast_k(c, tile, r0, nr, j0, nc, 0, 1); break;
  case 2: ft_i8_epi_fast_k(c, tile, r0, nr, j0, nc, 1, 0); break;
  case 3: ft_i8_epi_fast_k(c, tile, r0, nr, j0, nc, 1, 1); break;
  case 4: ft_i8_epi_fast_k(c, tile, r0, nr, j0, nc, 2, 0); break;
  default: ft_i8_epi_fast_k(c, tile, r0, nr, j0, nc, 2, 1); break;
  }
}

static __attribute__((noinline)) void ft_i8_epi_tile(const ft_i8_ctx *c, int32_t *tile, int64_t r0, int64_t nr,
                                                      int64_t j0, int64_t nc) {
  int direct = c->p[FT_I8_Y_CS] == 1 && !c->wp, post = c->act.act && !ft_i8_act_in_regs(c);
  if (direct && !post && (c->p[FT_I8_OUT] == FT_I8_OUT_F32 || c->p[FT_I8_YQ])) {
    ft_i8_epi_fast(c, tile, r0, nr, j0, nc);
    return;
  }
  for (int64_t r = 0; r < nr; r++) {
    for (int64_t q = 0; q < nc; q += 16) {
      int64_t left = nc - q;
      __mmask16 mk = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
      __m512i y = ft_i8_epi_v(c, _mm512_load_si512((const void *)(tile + r * FT_I8_NR + q)), r0 + r, j0 + q, mk);
      if (direct) ft_i8_store_v(c, y, c->c0 + r0 + r, j0 + q, mk);
      else _mm512_store_si512((void *)(tile + r * FT_I8_NR + q), y);
    }
    if (direct && post) /* the row just stored, in L1 */
      ft_gemm_act((float *)c->y + (c->c0 + r0 + r) * c->p[FT_I8_Y_RS] + j0, nc, &c->act);
  }
  if (c->wp) ft_i8_store_virt(c, tile, r0, nr, j0, nc);
  else if (!direct) ft_i8_store_t(c, (float *)(void *)tile, c->c0 + r0, nr, j0, nc);
}

/* rows [m0, m0 + nr) x columns [j0, j0 + nc) of one panel of NV vectors: vpdpbusd over all K
 * in R x NV accumulators (nr <= R), then the epilogue (ft_i8_epi_tile) from them stored as a
 * tile. a: the sliver (G groups of FT_I8_MR words, of which the first R are read), b: the panel
 * (G groups of NV x 16 words). R is FT_I8_MR but for a chunk's last sliver of 1 to 4 rows (BERT's M = 128 ends in
 * 2): a 2- or 4-row kernel skips the padding rows' vpdpbusd (two thirds of that sliver's). */
#define FT_I8_KERNEL_RNV(NAME, R, NV)                                                            \
  static void NAME(const ft_i8_ctx *c, const int8_t *a, const uint8_t *b, int64_t G, int64_t bstride, \
                   int64_t taps, const int64_t *toff, int64_t r0, int64_t nr, int64_t j0, int64_t nc, \
                   const char *pf, int64_t pfs) {                                                \
    __m512i acc[R][NV];                                                                          \
    _Pragma("GCC unroll 8") for (int r = 0; r < R; r++)                                          \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_si512();   \
    for (int64_t t = 0; t < taps; t++) {                                                         \
      const uint8_t *bg = b + toff[t];                                                           \
      for (int64_t g = 0; g < G; g++, a += 4 * FT_I8_MR, bg += bstride) {                        \
        pf = ft_prefetch_step(pf, pfs); /* this sliver's slice of the next panel: ft_i8_gemm_run */ \
        __m512i bv[NV];                                                                          \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_si512((const void *)(bg + v * 64)); \
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {                                    \
          __m512i av = ft_i8_bcast(a + 4 * r);                                                   \
          _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], bv[v], av); \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
    int32_t tile[FT_I8_MR * FT_I8_NR] __attribute__((aligned(64)));                              \
    _Pragma("GCC unroll 8") for (int r = 0; r < R; r++)                                          \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                                       \
        _mm512_store_si512((void *)(tile + r * FT_I8_NR + 16 * v), acc[r][v]);                   \
    ft_i8_epi_tile(c, tile, r0, nr, j0, nc);                                                     \
  }
#define FT_I8_KERNEL_NV(NV)                                                                      \
  FT_I8_KERNEL_RNV(ft_i8_kernel_##NV, FT_I8_MR, NV)                                              \
  FT_I8_KERNEL_RNV(ft_i8_kernel_2r_##NV, 2, NV)                                                  \
  FT_I8_KERNEL_RNV(ft_i8_kernel_4r_##NV, 4, NV)
#else
#define FT_I8_KERNEL_NV(NV)                                                                      \
  static void ft_i8_kernel_##NV(const ft_i8_ctx *c, const int8_t *a, const uint8_t *b, int64_t G, int64_t bstride, \
                                int64_t taps, const int64_t *toff, int64_t r0, int64_t nr, int64_t j0, int64_t nc, \
                                const char *pf, int64_t pfs) {                                   \
    (void)pf; (void)pfs;                                                                         \
    int32_t acc[FT_I8_MR][NV * 16];                                                              \
    memset(acc, 0, sizeof acc);                                                                  \
    for (int64_t t = 0; t < taps; t++)                                                           \
      for (int64_t g = 0; g < G; g++, a += 4 * FT_I8_MR)                                         \
        for (int r = 0; r < FT_I8_MR; r++) {                                                     \
          const int8_t *ar = a + r * 4;                                                          \
          const uint8_t *bg = b + toff[t] + g * bstride;                                         \
          for (int q = 0; q < NV * 16; q++)                                                      \
            acc[r][q] += ar[0] * bg[q * 4] + ar[1] * bg[q * 4 + 1] + ar[2] * bg[q * 4 + 2] + ar[3] * bg[q * 4 + 3]; \
        }                                                                                        \
    int32_t tile[FT_I8_MR * FT_I8_NR];                                                           \
    for (int r = 0; r < FT_I8_MR; r++) memcpy(tile + r * FT_I8_NR, acc[r], sizeof acc[r]);     \
    ft_i8_epilogue(c, tile, c->c0 + r0, r0, nr, j0, nc);                                         \
  }
#endif
FT_I8_KERNEL_NV(1)
FT_I8_KERNEL_NV(2)
FT_I8_KERNEL_NV(3)
FT_I8_KERNEL_NV(4)
#undef FT_I8_KERNEL_NV
#undef FT_I8_KERNEL_RNV

/* one micro-kernel call: rows [r0, r0 + nr) of the sliver at a, the panel of w columns at b
 * (G groups of 4 k per tap, bstride bytes apart; each tap's groups from b + toff[t]); pf, when
 * not NULL, what to prefetch, pfs bytes a group */
static void ft_i8_micro(const ft_i8_ctx *c, const int8_t *a, const uint8_t *b, int64_t G, int64_t bstride, int64_t taps,
                        const int64_t *toff, int64_t r0, int64_t nr, int64_t j0, int64_t nc, int64_t w,
                        const char *pf, int64_t pfs) {
#define FT_I8_K_ARGS c, a, b, G, bstride, taps, toff, r0, nr, j0, nc, pf, pfs
#ifdef FT_I8_VNNI
  if (nr <= 4) {
    switch ((nr <= 2 ? 0 : 4) + w / 16) {
    case 1: ft_i8_kernel_2r_1(FT_I8_K_ARGS); break;
    case 2: ft_i8_kernel_2r_2(FT_I8_K_ARGS); break;
    case 3: ft_i8_kernel_2r_3(FT_I8_K_ARGS); break;
    case 4: ft_i8_kernel_2r_4(FT_I8_K_ARGS); break;
    case 5: ft_i8_kernel_4r_1(FT_I8_K_ARGS); break;
    case 6: ft_i8_kernel_4r_2(FT_I8_K_ARGS); break;
    case 7: ft_i8_kernel_4r_3(FT_I8_K_ARGS); break;
    default: ft_i8_kernel_4r_4(FT_I8_K_ARGS); break;
    }
    return;
  }
#endif
  switch (w / 16) {
  case 1: ft_i8_kernel_1(FT_I8_K_ARGS); break;
  case 2: ft_i8_kernel_2(FT_I8_K_ARGS); break;
  case 3: ft_i8_kernel_3(FT_I8_K_ARGS); break;
  default: ft_i8_kernel_4(FT_I8_K_ARGS); break;
  }
#undef FT_I8_K_ARGS
}

/* items [lo, hi): (panel, sliver) of the chunk, each one micro-kernel call */
static void ft_i8_gemm_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  int64_t slivers = c->mc / FT_I8_MR, G = c->K4 >> 2;
  static const int64_t tap0 = 0;
  for (int64_t it = lo; it < hi; it++) {
    int64_t j0 = it / slivers * FT_I8_NR, s = it % slivers;
    int64_t w = c->N16 - j0 < FT_I8_NR ? c->N16 - j0 : FT_I8_NR;
    const uint8_t *b = c->bp + j0 * c->K4;
    const int8_t *a = c->ap + s * G * FT_I8_MR * 4;
    int64_t r0 = s * FT_I8_MR, nr = c->rows - r0 < FT_I8_MR ? c->rows - r0 : FT_I8_MR;
    int64_t nc = c->N - j0 < w ? c->N - j0 : w;
    /* The next panel is read next, by sliver 0 after this panel's last: each sliver prefetches
       a slice of it (ft_prefetch_step) while it computes */
    const char *next = j0 + FT_I8_NR < c->N16 ? (const char *)b + FT_I8_NR * c->K4 : NULL;
    int64_t pfs = G ? (FT_I8_NR * c->K4 / slivers + G - 1) / G : 0;
    ft_i8_micro(c, a, b, G, 4 * w, 1, &tap0, r0, nr, j0, nc, w, next ? next + s * G * pfs : NULL, pfs);
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
  if (c > FT_I8_MAX_ROWS) c = FT_I8_MAX_ROWS / FT_I8_MR * FT_I8_MR;
  return c < m ? c : m;
}
/* scratch: [comp, zbp, rowsum, scale] int32/float, packed A chunk, the uint8 image, B unpacked */
static inline size_t ft_i8_wx_scratch(const int64_t *p);
static inline size_t ft_i8_scratch(const int64_t *p) {
  if (p[FT_I8_WX]) return ft_i8_wx_scratch(p);
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
/* A's quantization (both forms): the scale a float A is quantized with and A's zero point as
 * the uint8 A' holds it */
static void ft_i8_setup_a(ft_i8_ctx *c, const void *const *in) {
  const int64_t *p = c->p;
  int64_t kind = p[FT_I8_A_KIND];
  int az_signed = kind == 1 || p[FT_I8_AZ_SIGNED];
  c->qs = kind == 2 ? *(const float *)in[p[FT_I8_IN_AS]] : 1.0f;
  /* a scale computed at run time (DynamicQuantizeLinear's) is 0 when A is all zeros: A then
     quantizes to its zero point, as x / 1 does, and the output scale is 0 anyway */
  if (c->qs == 0.0f) c->qs = 1.0f;
  /* a float A is quantized straight to A' (uint8) with ca as its zero point: an int8 zero point
     + 128 gives the int8 quantization shifted by 128, saturation included */
  c->ca = ft_i8_zp(in, p[FT_I8_IN_AZ], az_signed, p[FT_I8_NZA], 0) + (az_signed ? 128 : 0);
}

/* The epilogue's parameters (both forms): n output scales (a_scale * b_scale[i], over y_scale
 * where the kernel requantizes with one multiply; zeros where the output is int32, and up to
 * n_all), the bias, the activation and y's scale and zero point */
static void ft_i8_setup_out(ft_i8_ctx *c, const double *f, const void *const *in, float *scale, int64_t n_all,
                            int64_t n) {
  const int64_t *p = c->p;
  memset(scale, 0, 4 * (size_t)n_all);
  if (p[FT_I8_OUT] != FT_I8_OUT_S32) {
    float as = *(const float *)in[p[FT_I8_IN_AS]], ys = p[FT_I8_IN_YS] >= 0 ? *(const float *)in[p[FT_I8_IN_YS]] : 1.0f;
    const float *bsc = (const float *)in[p[FT_I8_IN_BS]];
    for (int64_t i = 0; i < n; i++) {
      float b = bsc[p[FT_I8_NSB] > 1 ? i : 0];
      scale[i] = p[FT_I8_IN_YS] >= 0 && !p[FT_I8_YQ] ? as * b / ys : as * b;
    }
    c->ys = ys;
  }
  c->scale = scale;
  c->bias = p[FT_I8_BIAS] ? in[p[FT_I8_IN_BIAS]] : NULL;
  c->act.act = p[FT_I8_OUT] == FT_I8_OUT_F32 || p[FT_I8_YQ] ? (int)p[FT_I8_ACT] : 0;
  c->act.lo = f ? (float)f[0] : 0.0f;
  c->act.hi = f ? (float)f[1] : 0.0f;
  c->zy = p[FT_I8_IN_YZ] >= 0 ? ft_i8_zp(in, p[FT_I8_IN_YZ], p[FT_I8_OUT] == FT_I8_OUT_S8, 1, 0) : 0;
}

static void ft_i8_setup(ft_i8_ctx *c, const double *f, const void *const *in, char **sc) {
  const int64_t *p = c->p;
  int64_t bs = p[FT_I8_B_SIGNED], N = c->N;
  ft_i8_setup_a(c, in);
  int32_t za2 = c->ca - 128; /* za'': A'' = A' - 128 */
  c->comp = (int32_t *)ft_i8_carve(sc, 4 * (size_t)c->N16);
  int32_t *zbp = (int32_t *)ft_i8_carve(sc, 4 * (size_t)c->N16);
  float *scale = (float *)ft_i8_carve(sc, 4 * (size_t)c->N16);
  c->rowsum = (int32_t *)ft_i8_carve(sc, 4 * (size_t)c->mc);
  c->ap = (int8_t *)ft_i8_carve(sc, (size_t)(c->mc * c->K4));
  const void *b = in[p[FT_I8_IN_B]];
  if (!p[FT_I8_PACKED]) {
    void *dst = ft_i8_carve(sc, ft_i8_pack_b_raw(c->K, N, 0, 0, 1, NULL, NULL));
    ft_i8_pack_b(p, b, dst);
    b = dst;
  }
  c->colsum = (const int32_t *)b;
  c->bp = (const uint8_t *)b + 4 * c->N16;
  int any = 0;
  memset(c->comp, 0, 4 * (size_t)c->N16); /* the columns past N of the last panel: 0 */
  memset(zbp, 0, 4 * (size_t)c->N16);
  for (int64_t n = 0; n < N; n++) {
    zbp[n] = ft_i8_zp(in, p[FT_I8_IN_BZ], (int)bs, p[FT_I8_NZB], n) + (bs ? 128 : 0);
    any |= zbp[n] != 0;
    c->comp[n] = -za2 * c->colsum[n] + (int32_t)c->K * za2 * zbp[n];
  }
  c->zbp = any ? zbp : NULL;
  c->nscale = p[FT_I8_OUT] != FT_I8_OUT_S32 && p[FT_I8_NSB] > 1 ? N : 1;
  ft_i8_setup_out(c, f, in, scale, c->N16, N); /* one scale: the same in every column */
}

/* ---- convs as W.X ---------------------------------------------------------------------------
 * A conv (group 1) whose weight is int8 of zero point 0 (FT_I8_WX): the
 * weight is the row operand (M = output channels, packed at compile time in the A layout, its
 * int8 bytes as they are: vpdpbusd's signed operand, the broadcast one) and the image the
 * column operand (N = pixels of one image, K = input channels): each group of 4 channel rows is
 * converted to uint8 (quantized, for a float32 image) and interleaved 4 channels per pixel into
 * the B panel layout, vpdpbusd's unsigned operand as it is (a conv with a window that is not
 * 1x1 of stride 1 unpadded: its im2col rows, built per panel from the uint8 image; padding is
 * zx, which contributes 0). No shift on either side, so the only
 * correction is per row: sum (x - zx) w = sum x w - zx wsum(m). The output rows are Y's channel
 * rows, stored from the registers as a matmul's (no transpose), and the scales and bias are per
 * row. The micro-kernels and epilogues are the GEMM's (ctx.rowwise). */

#ifdef FT_I8_VNNI
/* 16 elements of an image row from x[i, i + 16) as uint8 (zeros past n): ft_i8_to_u8's values */
static inline __m128i ft_i8_wx_u8x16(int64_t kind, float qs, int32_t ca, const void *x, int64_t i, int64_t n) {
  __mmask16 mk = n - i >= 16 ? (__mmask16)0xffff : n > i ? (__mmask16)((1u << (n - i)) - 1) : 0;
  if (kind == 2) return _mm_maskz_mov_epi8(mk, ft_i8_q16((const float *)x + i, mk, _mm512_set1_ps(qs), _mm512_set1_ps((float)ca)));
  __m128i v = _mm_maskz_loadu_epi8(mk, (const uint8_t *)x + i);
  return kind == 1 ? _mm_maskz_mov_epi8(mk, _mm_xor_si128(v, _mm_set1_epi8((char)0x80))) : v;
}
#endif

/* W.X with a window that is not 1x1 stride 1 unpadded: the image rows are im2col rows, built
 * per panel from the uint8 image (FT_I8_CONV without ft_i8_conv_direct) */
static inline int ft_i8_wx_im2col(const int64_t *p) { return p[FT_I8_CONV] && !ft_i8_conv_direct(p) && p[FT_I8_WX] != 2; }

/* positions of im2col rows built at once (a multiple of FT_I8_NR): 4 rows of them on the stack */
#define FT_I8_WX_SPAN 1024

/* 4 k rows, src[j][off + q] for q < lim (zero past lim, and all zero where src[j] is NULL),
 * converted to uint8 (kind: FT_I8_A_KIND's) and interleaved 4 bytes per pixel into the panel
 * at d, w pixels wide */
static inline void ft_i8_wx_interleave(int64_t kind, const ft_i8_ctx *c, const char *const *src, int64_t off,
                                       int64_t lim, int64_t w, uint8_t *d) {
#ifdef FT_I8_VNNI
  for (int64_t q0 = 0; q0 < w; q0 += 16) {
    __m128i v[4];
    for (int j = 0; j < 4; j++) v[j] = src[j] ? ft_i8_wx_u8x16(kind, c->qs, c->ca, src[j], off + q0, lim) : _mm_setzero_si128();
    __m128i t0 = _mm_unpacklo_epi8(v[0], v[1]), t1 = _mm_unpackhi_epi8(v[0], v[1]);
    __m128i t2 = _mm_unpacklo_epi8(v[2], v[3]), t3 = _mm_unpackhi_epi8(v[2], v[3]);
    _mm_storeu_si128((__m128i *)(void *)(d + 4 * q0), _mm_unpacklo_epi16(t0, t2));
    _mm_storeu_si128((__m128i *)(void *)(d + 4 * q0 + 16), _mm_unpackhi_epi16(t0, t2));
    _mm_storeu_si128((__m128i *)(void *)(d + 4 * q0 + 32), _mm_unpacklo_epi16(t1, t3));
    _mm_storeu_si128((__m128i *)(void *)(d + 4 * q0 + 48), _mm_unpackhi_epi16(t1, t3));
  }
#else
  int64_t se = kind == 2 ? 4 : 1;
  for (int64_t q = 0; q < w; q++)
    for (int j = 0; j < 4; j++) {
      uint8_t u = 0;
      if (src[j] && off + q < lim) ft_i8_to_u8(kind, c->qs, c->ca, src[j] + (off + q) * se, 1, &u);
      d[4 * q + j] = u;
    }
#endif
}

/* groups [lo, hi) of 4 k rows (channels, or im2col rows) of this image into every panel: 16
 * pixels of the 4 rows converted to uint8, then interleaved 4 bytes per pixel. im2col rows are
 * built FT_I8_WX_SPAN positions at a time, one ft_i8_im2col_row call per row and span (one per
 * row and panel, which finds every run's bounds again for 64 positions, took a third of
 * ResNet-50 QDQ's time, more than its 3x3 convs' vpdpbusd). */
static void ft_i8_wx_pack_x(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  int64_t kind = c->p[FT_I8_A_KIND], esz = kind == 2 ? 4 : 1, N = c->N, K = c->K;
  uint8_t *bp = (uint8_t *)(uintptr_t)c->bp;
  if (ft_i8_wx_im2col(c->p)) {
    uint8_t buf[4][FT_I8_WX_SPAN];
    ft_i8_ctx cc = *c; /* the span's positions: c0, rows */
    for (int64_t g = lo; g < hi; g++)
      for (int64_t p0 = 0; p0 < c->N16; p0 += FT_I8_WX_SPAN) {
        cc.c0 = p0;
        cc.rows = N - p0 < FT_I8_WX_SPAN ? N - p0 : FT_I8_WX_SPAN;
        const char *src[4];
        for (int j = 0; j < 4; j++) {
          src[j] = 4 * g + j < K ? (const char *)buf[j] : NULL;
          if (src[j]) ft_i8_im2col_row(&cc, 4 * g + j, buf[j]);
        }
        int64_t pe = p0 + FT_I8_WX_SPAN < c->N16 ? p0 + FT_I8_WX_SPAN : c->N16;
        for (int64_t j0 = p0; j0 < pe; j0 += FT_I8_NR) {
          int64_t w = c->N16 - j0 < FT_I8_NR ? c->N16 - j0 : FT_I8_NR;
          ft_i8_wx_interleave(0, c, src, j0 - p0, cc.rows, w, bp + j0 * c->K4 + g * w * 4);
        }
      }
    return;
  }
  for (int64_t g = lo; g < hi; g++) {
    const char *xr[4];
    for (int j = 0; j < 4; j++) xr[j] = 4 * g + j < K ? (const char *)c->a + (4 * g + j) * N * esz : NULL;
    for (int64_t j0 = 0; j0 < c->N16; j0 += FT_I8_NR) {
      int64_t w = c->N16 - j0 < FT_I8_NR ? c->N16 - j0 : FT_I8_NR;
      ft_i8_wx_interleave(kind, c, xr, j0, N, w, bp + j0 * c->K4 + g * w * 4);
    }
  }
}

/* ---- implicit W.X (FT_I8_WX 2) ---------------------------------------------------------------
 * A conv of stride 1 and dilation 1 with more than one tap, 2-D (or 1-D) in the window's last two
 * dims, computed as W.X without im2col rows. The image is packed once, padded: per group of 4
 * channels a plane of hp x wp pixels (the pads hold x's zero point, which contributes 0), 4
 * channels interleaved per pixel, the B panel layout. Output positions are counted on the padded
 * grid, q = oy * wp + ox (ox < wp; the columns past ow are computed and not stored), so tap (ky,
 * kx) of position q reads pixel q + ky * wp + kx: a panel of 64 positions is, for every tap and
 * channel group, 256 contiguous bytes of a plane, read in place at the tap's offset. The weight
 * is packed tap-major (ft_i8_pack_w_taps) to match: the micro-kernel runs over taps, then
 * channel groups. No im2col rows are built (ResNet-50's 3x3 convs spent as long building them
 * as in vpdpbusd); what is paid instead is the (wp - ow) / wp of the positions that are not
 * stored (2 of 58 at 56 x 56, 2 of 16 at 14 x 14). */
typedef struct {
  int64_t oh, ow, hp, wp, nv, plane, c4g, taps; /* nv: positions on the padded grid; plane: bytes */
} ft_i8_impl_geo;
static inline void ft_i8_impl_geometry(const int64_t *p, ft_i8_impl_geo *g) {
  const int64_t *w = p + FT_I8_WIN; /* in[3], out[3], k[3], s[3], d[3], pads_begin[3] */
  g->oh = w[4];
  g->ow = w[5];
  g->hp = g->oh + w[7] - 1;
  g->wp = g->ow + w[8] - 1;
  g->taps = w[7] * w[8];
  g->nv = g->oh * g->wp;
  /* every tap's reach from the last panel's last position, and the padded image itself */
  int64_t reach = ft_i8_n16(g->nv) + (w[7] - 1) * g->wp + w[8] - 1, img = g->hp * g->wp;
  g->plane = 4 * ft_i8_n16(reach > img ? reach : img);
  g->c4g = ft_i8_k4(p[FT_I8_C]) >> 2;
}

/* planes [lo, hi) of the packed image: the pad value everywhere, then each image row's 4
 * channel rows converted to uint8 and interleaved, 256 pixels at a time */
static void ft_i8_impl_pack(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  const int64_t *w = c->p + FT_I8_WIN;
  int64_t H = w[1], W = w[2], pt = w[16], pl = w[17], C = c->p[FT_I8_C], kind = c->p[FT_I8_A_KIND];
  int64_t esz = kind == 2 ? 4 : 1;
  uint8_t tmp[4 * 256];
  for (int64_t g = lo; g < hi; g++) {
    uint8_t *d0 = (uint8_t *)(uintptr_t)c->bp + g * c->plane;
    memset(d0, (int)(uint8_t)c->ca, (size_t)c->plane);
    for (int64_t iy = 0; iy < H; iy++) {
      const char *src[4];
      for (int j = 0; j < 4; j++) src[j] = 4 * g + j < C ? (const char *)c->a + ((4 * g + j) * H + iy) * W * esz : NULL;
      uint8_t *d = d0 + ((iy + pt) * c->wp + pl) * 4;
      for (int64_t x0 = 0; x0 < W; x0 += 256) {
        int64_t n = W - x0 < 256 ? W - x0 : 256;
        ft_i8_wx_interleave(kind, c, src, x0, W, ft_i8_n16(n), tmp);
        memcpy(d + 4 * x0, tmp, (size_t)(4 * n));
      }
    }
  }
}

/* items [lo, hi): (panel, sliver) on the padded grid, each one micro-kernel call over every tap */
static void ft_i8_impl_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_i8_ctx *c = (const ft_i8_ctx *)ctx;
  int64_t slivers = c->mc / FT_I8_MR, G = c->K4 >> 2;
  for (int64_t it = lo; it < hi; it++) {
    int64_t j0 = it / slivers * FT_I8_NR, s = it % slivers;
    int64_t w = c->N16 - j0 < FT_I8_NR ? c->N16 - j0 : FT_I8_NR;
    int64_t r0 = s * FT_I8_MR, nr = c->rows - r0 < FT_I8_MR ? c->rows - r0 : FT_I8_MR;
    int64_t nc = c->N - j0 < w ? c->N - j0 : w;
    ft_i8_micro(c, c->ap + s * G * FT_I8_MR * 4, c->bp + 4 * j0, c->c4g, c->plane, c->taps, c->toff, r0, nr, j0, nc, w,
                NULL, 0);
  }
}

static inline size_t ft_i8_wx_scratch(const int64_t *p) {
  int64_t M6 = ft_i8_m6(p[FT_I8_M]);
  if (p[FT_I8_WX] == 2) {
    ft_i8_impl_geo g;
    ft_i8_impl_geometry(p, &g);
    /* comp, scale, tap offsets, the packed image, the weight packed at run time; carves */
    return (size_t)(8 * M6 + 8 * g.taps + g.c4g * g.plane) + ft_i8_pack_w(p, NULL, NULL) + 6 * 64;
  }
  /* five carves of at most 63 bytes of padding each, and the alignment of the scratch */
  return (size_t)(8 * M6) + (size_t)(ft_i8_n16(p[FT_I8_N]) * ft_i8_k4(p[FT_I8_K])) +
         ft_i8_pack_w(p, NULL, NULL) + (size_t)(ft_i8_wx_im2col(p) ? ft_i8_image_bytes(p) : 0) + 6 * 64;
}

/* Batch image bi (both forms): its A and Y, and an image to be im2col'd converted to uint8 into
 * img first (a uint8 image is read as it is: img NULL) */
static void ft_i8_batch(ft_i8_ctx *c, const void *const *in, void *const *out, int64_t bi, uint8_t *img) {
  const int64_t *p = c->p;
  int64_t esz = p[FT_I8_A_KIND] == 2 ? 4 : 1;
  int64_t ysz = p[FT_I8_OUT] == FT_I8_OUT_S32 || p[FT_I8_OUT] == FT_I8_OUT_F32 ? 4 : 1;
  c->a = (const char *)in[p[FT_I8_IN_A]] + bi * p[FT_I8_A_BS] * esz;
  c->y = (char *)out[0] + bi * p[FT_I8_Y_BS] * ysz;
  if (img) {
    ft_i8_image_u8(c, c->a, ft_i8_image_bytes(p), img);
    c->a = img;
  }
}

static void ft_i8_wx(const int64_t *p, const double *f, const void *const *in, void *const *out, char *sc) {
  ft_i8_ctx c;
  memset(&c, 0, sizeof c);
  c.p = p;
  c.M = p[FT_I8_M]; c.N = p[FT_I8_N]; c.K = p[FT_I8_K];
  c.K4 = ft_i8_k4(c.K); c.N16 = ft_i8_n16(c.N);
  c.mc = ft_i8_m6(c.M); c.rows = c.M; c.c0 = 0;
  c.rowwise = 1;
  int64_t kind = p[FT_I8_A_KIND];
  ft_i8_setup_a(&c, in);
  c.comp = (int32_t *)ft_i8_carve(&sc, 4 * (size_t)c.mc);
  float *scale = (float *)ft_i8_carve(&sc, 4 * (size_t)c.mc);
  int implicit = p[FT_I8_WX] == 2;
  if (implicit) { /* B is the padded image, read on the padded grid of c.N positions */
    ft_i8_impl_geo g;
    ft_i8_impl_geometry(p, &g);
    c.wp = g.wp; c.ow = g.ow; c.oh = g.oh; c.plane = g.plane; c.c4g = g.c4g; c.taps = g.taps;
    c.N = g.nv; c.N16 = ft_i8_n16(g.nv);
    int64_t *toff = (int64_t *)ft_i8_carve(&sc, 8 * (size_t)g.taps), kw = p[FT_I8_WIN + 8];
    for (int64_t t = 0; t < g.taps; t++) toff[t] = 4 * (t / kw * g.wp + t % kw);
    c.toff = toff;
    c.bp = (const uint8_t *)ft_i8_carve(&sc, (size_t)(g.c4g * g.plane));
  } else {
    c.bp = (const uint8_t *)ft_i8_carve(&sc, (size_t)(c.N16 * c.K4));
  }
  const void *w = in[p[FT_I8_IN_B]];
  if (!p[FT_I8_PACKED]) {
    void *dst = ft_i8_carve(&sc, ft_i8_pack_w(p, NULL, NULL));
    ft_i8_pack_w(p, w, dst);
    w = dst;
  }
  const int32_t *wsum = (const int32_t *)w;
  c.ap = (int8_t *)(uintptr_t)((const char *)w + 4 * c.mc);
  for (int64_t m = 0; m < c.mc; m++) c.comp[m] = m < c.M ? -c.ca * wsum[m] : 0;
  ft_i8_setup_out(&c, f, in, scale, c.mc, c.M);
  c.nscale = c.M;
  int64_t panels = (c.N16 + FT_I8_NR - 1) / FT_I8_NR;
  /* im2col: the image as uint8 first (a uint8 image is read as it is) */
  uint8_t *img = ft_i8_wx_im2col(p) && kind ? (uint8_t *)ft_i8_carve(&sc, (size_t)ft_i8_image_bytes(p)) : NULL;
  for (int64_t bi = 0; bi < p[FT_I8_NBATCH]; bi++) {
    ft_i8_batch(&c, in, out, bi, img);
    if (implicit) {
      ft_parallel_for(c.c4g, c.c4g * c.plane >= 16384, ft_i8_impl_pack, &c);
      ft_parallel_for(panels * (c.mc / FT_I8_MR), c.mc * c.K4 * c.N >= 65536, ft_i8_impl_run, &c);
      continue;
    }
    ft_parallel_for(c.K4 / 4, c.K4 * c.N16 >= 16384, ft_i8_wx_pack_x, &c);
    ft_parallel_for(panels * (c.mc / FT_I8_MR), c.mc * c.K4 * c.N >= 65536, ft_i8_gemm_run, &c);
  }
}

static void ft_gemm_int8(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  if (p[FT_I8_WX]) {
    ft_i8_wx(p, f, in, out, (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63));
    return;
  }
  ft_i8_ctx c;
  memset(&c, 0, sizeof c);
  c.p = p;
  c.M = p[FT_I8_M]; c.N = p[FT_I8_N]; c.K = p[FT_I8_K];
  c.K4 = ft_i8_k4(c.K); c.N16 = ft_i8_n16(c.N);
  c.mc = ft_i8_chunk(p);
  char *sc = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
  ft_i8_setup(&c, f, in, &sc);
  uint8_t *img = p[FT_I8_CONV] && p[FT_I8_A_KIND] ? (uint8_t *)ft_i8_carve(&sc, (size_t)ft_i8_image_bytes(p)) : NULL;
  int64_t panels = (c.N16 + FT_I8_NR - 1) / FT_I8_NR;
  for (int64_t bi = 0; bi < p[FT_I8_NBATCH]; bi++) {
    ft_i8_batch(&c, in, out, bi, img);
    for (c.c0 = 0; c.c0 < c.M; c.c0 += c.mc) {
      c.rows = c.M - c.c0 < c.mc ? c.M - c.c0 : c.mc;
      int64_t mcu = c.mc;
      c.mc = (c.rows + FT_I8_MR - 1) / FT_I8_MR * FT_I8_MR; /* the last chunk: only its slivers */
      if (p[FT_I8_CONV]) ft_parallel_for(c.K4 / 4, c.K4 * c.mc >= 16384, ft_i8_pack_a_conv, &c);
      else ft_parallel_for(c.mc / FT_I8_MR, c.K4 * c.mc >= 16384, ft_i8_pack_a_rows, &c);
      if (p[FT_I8_CONV] && c.zbp) ft_parallel_for(c.mc / FT_I8_MR, c.K4 * c.mc >= 16384, ft_i8_rowsums_run, &c);
      int64_t items = panels * (c.mc / FT_I8_MR);
      ft_parallel_for(items, c.mc * c.K4 * c.N >= 65536, ft_i8_gemm_run, &c);
      c.mc = mcu;
    }
  }
}

#endif
