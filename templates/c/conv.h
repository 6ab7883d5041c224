/* Conv (NCHW, 1-D to 3-D, groups, dilations, strides, pads) and ConvTranspose, fp32.
 *
 * A group's output [C_out/g, spatial] is W_g [C_out/g, C_in/g*kernel] times a B matrix
 * [C_in/g*kernel, spatial] on the GEMM core (gemm.h), so it lands in NCHW directly. Weights
 * are the A operand; ftaxc packs constant weights at compile time (ft_conv_pack_w). B comes
 * one of four ways (FT_CV_MODE, chosen by compiler/ops/conv.c):
 *   pointwise  1x1, stride 1, no pads: B is the group's input as it is.
 *   shifted    1-D and 2-D: computed over the zero-padded input's full width (the extra
 *              columns are dropped when C is stored), tap (kh, kw) of every output column
 *              reads the padded input at one fixed offset, so row (ci, kh, kw) of B is the
 *              padded input shifted (ft_gemm_op.b_rowoff): no im2col. With a stride the padded
 *              input is split into phase planes first (ft_conv_shift), which makes the offsets
 *              fixed again.
 *   im2col     the rest (3-D, strides wider than the window): the im2col matrix is written
 *              a chunk of columns at a time (row-major [Kg, chunk]) so the chunk stays in L2
 *              while every weight row block passes over it.
 *   depthwise  group == C_in == C_out: direct loops (ft_conv_depthwise), 16 channels in the
 *              vector lanes with AVX-512; a GEMM with one input channel per group has nothing
 *              to reuse. Packed weights are 16-channel blocks of tap vectors.
 * With packed weights (every program ftaxc writes) the GEMM reads B where it lies
 * (ft_gemm_op.b_direct): each output tile is accumulated over the whole K in registers, and
 * bias, residual and activation are applied there before one store per vector. Unpacked
 * weights (constant folding, ftax-eager) take the GEMM's packing path: same results to
 * rounding, slower. */
#ifndef FT_CONV_H
#define FT_CONV_H

#include <stdint.h>
#include <string.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "gemm.h"
#include "conv_params.h"
#include "ukernels/vec.h"
#include "ukernels/dwv_f32_vn.h"

/* Weight matrix of one group: rows C_out/g, columns C_in/g * kernel volume. */
static inline int64_t ft_conv_kg(const int64_t *p) {
  return p[FT_CV_C] / p[FT_CV_G] * p[FT_CV_K] * p[FT_CV_K + 1] * p[FT_CV_K + 2];
}

/* Packed depthwise weights: [C, taps] as blocks of 16 channels, each [taps][16] (zeros past C),
 * the tap vectors of the channel-vector path (ft_dwv_item). Tap t of channel c is at
 * ft_dw_packed_at(c, t, taps). */
static inline int64_t ft_dw_packed_at(int64_t c, int64_t t, int64_t T) { return (c / 16 * T + t) * 16 + c % 16; }

/* w [C, taps] in that layout, as floats: w is float (kind 0), int8 (1) or uint8 (2; the QDQ
 * depthwise's integer weights, ft_conv_qdw_pack_w). */
static size_t ft_conv_dw_pack_as(const int64_t *p, const void *w, int kind, float *dst) {
  int64_t C = p[FT_CV_C], T = ft_conv_kg(p), nb = (C + 15) / 16;
  size_t bytes = sizeof(float) * (size_t)(nb * T * 16);
  if (!dst) return bytes;
  memset(dst, 0, bytes);
  for (int64_t c = 0; c < C; c++)
    for (int64_t t = 0; t < T; t++)
      dst[ft_dw_packed_at(c, t, T)] = kind == 0   ? ((const float *)w)[c * T + t]
                                      : kind == 1 ? (float)((const int8_t *)w)[c * T + t]
                                                  : (float)((const uint8_t *)w)[c * T + t];
  return bytes;
}

static size_t ft_conv_dw_pack_w(const int64_t *p, const float *w, float *dst) { return ft_conv_dw_pack_as(p, w, 0, dst); }

/* Prepack hook: every group's weight matrix into A slivers, one group after another; in the
 * transposed modes (FT_CV_POINTWISE_T, FT_CV_IM2COL_T) each group's W^T [C_in/g * kernel,
 * C_out/g] into B panels instead; depthwise weights as ft_conv_dw_pack_w lays them out. */
static size_t ft_conv_pack_w(const int64_t *p, const void *src, void *dst) {
  if (p[FT_CV_MODE] == FT_CV_DEPTHWISE) return ft_conv_dw_pack_w(p, (const float *)src, (float *)dst);
  int64_t G = p[FT_CV_G], Mg = p[FT_CV_CO] / G, Kg = ft_conv_kg(p);
  int t = p[FT_CV_MODE] == FT_CV_POINTWISE_T || p[FT_CV_MODE] == FT_CV_IM2COL_T;
  int64_t per = t ? ft_gemm_packed_b_floats(Kg, Mg) : ft_gemm_packed_a_floats(Mg, Kg);
  size_t bytes = sizeof(float) * (size_t)(per * G);
  if (!dst) return bytes;
  for (int64_t g = 0; g < G; g++) {
    const float *w = (const float *)src + g * Mg * Kg;
    if (t) ft_gemm_pack_b(Kg, Mg, w, 1, Kg, (float *)dst + g * per);
    else ft_gemm_pack_a(Mg, Kg, w, Kg, 1, (float *)dst + g * per);
  }
  return bytes;
}

/* im2col row kr (channel, kd, kh, kw) of one group for output columns [col0, col0+ncols), into
 * row: the chunk's rows one after another make a plain row-major [Kg, ncols], which the GEMM
 * reads in place. */
static void ft_conv_im2col_row(const int64_t *p, const float *x, int64_t kr, int64_t col0,
                               int64_t ncols, float *row) {
  const int64_t *in = p + FT_CV_IN, *out = p + FT_CV_OUT, *k = p + FT_CV_K, *s = p + FT_CV_S;
  const int64_t *d = p + FT_CV_D, *pb = p + FT_CV_P;
  int64_t kw = kr % k[2], t = kr / k[2], kh = t % k[1];
  t /= k[1];
  int64_t kd = t % k[0], c = t / k[0];
  const float *xc = x + c * in[0] * in[1] * in[2];
  int64_t off_w = kw * d[2] - pb[2], sw = s[2];
  /* output columns whose input column ow*sw + off_w is inside [0, in[2]) */
  int64_t ow_lo = off_w >= 0 ? 0 : (-off_w + sw - 1) / sw;
  int64_t ow_hi = in[2] - 1 - off_w < 0 ? 0 : (in[2] - 1 - off_w) / sw + 1;
  if (ow_hi > out[2]) ow_hi = out[2];
  if (ow_lo > ow_hi) ow_lo = ow_hi;
  int64_t plane = out[1] * out[2];
  int64_t od = col0 / plane, oh = col0 % plane / out[2], ow = col0 % out[2];
  for (int64_t j = 0; j < ncols;) {
    int64_t seg = out[2] - ow < ncols - j ? out[2] - ow : ncols - j;
    int64_t id = od * s[0] + kd * d[0] - pb[0], ih = oh * s[1] + kh * d[1] - pb[1];
    int valid = id >= 0 && id < in[0] && ih >= 0 && ih < in[1];
    const float *src = xc + (id * in[1] + ih) * in[2] + off_w;
    float *dd = row + j;
    int64_t a = 0, b = 0; /* [a, b): the part of the segment inside the input */
    if (valid) {
      a = ow_lo - ow < 0 ? 0 : (ow_lo - ow > seg ? seg : ow_lo - ow);
      b = ow_hi - ow < a ? a : (ow_hi - ow > seg ? seg : ow_hi - ow);
    }
    int64_t q = 0;
    for (; q < a; q++) dd[q] = 0;
    if (sw == 1) for (; q < b; q++) dd[q] = src[ow + q];
    else for (; q < b; q++) dd[q] = src[(ow + q) * sw];
    for (; q < seg; q++) dd[q] = 0;
    j += seg;
    ow += seg;
    if (ow == out[2]) {
      ow = 0;
      if (++oh == out[1]) { oh = 0; od++; }
    }
  }
}

/* Depthwise 1-D/2-D conv (group == C_in == C_out). With AVX-512, 16 channels at a time with
 * the channels in the vector lanes (ft_dwv_item, below) whenever its ring of rows can hold the
 * window's rows (residual fused or not). Otherwise one plane (n, c) at a time, as follows.
 *
 * A band of output rows is computed at once over the zero-padded input, copied into a buffer
 * on the stack. With stride s the padded band is stored as s*s phase planes (rows and columns
 * split by their remainder mod s), so that for every stride each kernel tap reads its phase
 * plane at one fixed offset: the outputs are computed over the phase width, flattened, 32 at a
 * time in two vector accumulators, with no bounds checks and no per-row overhead (small planes
 * such as 7x7 run as fast as large ones). The few columns past the output width are dropped
 * when the band is copied out. Rows too wide for the buffer take the plain per-tap loop. */
#define FT_DW_BUF 8192 /* floats in each of the two stack buffers */
#define FT_DW_MAXTAPS 64
/* Threaded above this many multiply-adds: a depthwise conv runs at a fraction of the GEMMs'
 * rate (each input read for few products), so the GEMMs' threshold (FT_GEMM_PAR_FLOPS) left
 * 30-60 us layers on one thread (MobileNetV2's 576 channels at 14x14, 960 at 7x7). */
#define FT_DW_PAR_MACS (1 << 17)

/* The plain loop: each tap is a pass over the output row (any size). */
static void ft_conv_dw_plane_taps(const int64_t *p, const float *x, const float *w, int64_t ws,
                                  float b0, float *y) {
  const int64_t *in = p + FT_CV_IN, *out = p + FT_CV_OUT, *k = p + FT_CV_K, *s = p + FT_CV_S;
  const int64_t *d = p + FT_CV_D, *pb = p + FT_CV_P;
  int64_t IH = in[1], IW = in[2], OH = out[1], OW = out[2], KH = k[1], KW = k[2];
  int64_t sh = s[1], sw = s[2], dh = d[1], dw = d[2], ph = pb[1], pw = pb[2];
  for (int64_t oh = 0; oh < OH; oh++) {
    float *restrict yr = y + oh * OW;
    for (int64_t ow = 0; ow < OW; ow++) yr[ow] = b0;
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t ih = oh * sh + kh * dh - ph;
      if (ih < 0 || ih >= IH) continue;
      const float *restrict xr = x + ih * IW;
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t off = kw * dw - pw;
        int64_t lo_ = off >= 0 ? 0 : (-off + sw - 1) / sw;
        int64_t hi_ = IW - 1 - off < 0 ? 0 : (IW - 1 - off) / sw + 1;
        if (hi_ > OW) hi_ = OW;
        float wv = w[(kh * KW + kw) * ws];
        for (int64_t ow = lo_; ow < hi_; ow++) yr[ow] += wv * xr[ow * sw + off];
      }
    }
  }
}

/* Band geometry, computed once per call (no divisions in the per-plane loops): padded width
 * Wp, phase width Wq, output rows per band (0 when not even one row fits), and per tap its
 * phase plane and row/column offset inside it; per column phase b, the phase columns [j0, j1)
 * that come from the input. */
#define FT_DW_MAXS 4
typedef struct ft_dw_geo {
  int64_t s, Wp, Wq, rows;
  int64_t tap_ph[FT_DW_MAXTAPS], tap_r[FT_DW_MAXTAPS], tap_c[FT_DW_MAXTAPS];
  int64_t j0[FT_DW_MAXS], j1[FT_DW_MAXS];
} ft_dw_geo;

static inline int64_t ft_dw_band_floats(const int64_t *p, const ft_dw_geo *g, int64_t rows) {
  int64_t Hp = (rows - 1) * g->s + (p[FT_CV_K + 1] - 1) * p[FT_CV_D + 1] + 1, Hq = (Hp + g->s - 1) / g->s;
  return g->s * g->s * Hq * g->Wq + g->Wq + 32; /* the tail absorbs the last vector's overrun */
}

static void ft_dw_geometry(const int64_t *p, ft_dw_geo *g) {
  int64_t OH = p[FT_CV_OUT + 1], OW = p[FT_CV_OUT + 2], IW = p[FT_CV_IN + 2], pw = p[FT_CV_P + 2];
  int64_t KH = p[FT_CV_K + 1], KW = p[FT_CV_K + 2], s = p[FT_CV_S + 2];
  memset(g, 0, sizeof *g);
  g->s = s;
  g->Wp = (OW - 1) * s + (KW - 1) * p[FT_CV_D + 2] + 1;
  g->Wq = (g->Wp + s - 1) / s;
  if (p[FT_CV_S + 1] != s || s > FT_DW_MAXS || KH * KW > FT_DW_MAXTAPS) return;
  for (int64_t t = 0; t < KH * KW; t++) {
    int64_t rh = t / KW * p[FT_CV_D + 1], rw = t % KW * p[FT_CV_D + 2];
    g->tap_ph[t] = (rh % s) * s + rw % s;
    g->tap_r[t] = rh / s;
    g->tap_c[t] = rw / s;
  }
  for (int64_t b = 0; b < s; b++) { /* phase column j is input column j*s + b - pw */
    int64_t j0 = pw - b <= 0 ? 0 : (pw - b + s - 1) / s, j1 = (IW + pw - b + s - 1) / s;
    if (j1 > g->Wq) j1 = g->Wq;
    if (j0 > j1) j0 = j1;
    g->j0[b] = j0;
    g->j1[b] = j1;
  }
  for (int64_t r = OH; r >= 1; r = r > 8 ? r * 3 / 4 : r - 1)
    if (ft_dw_band_floats(p, g, r) <= FT_DW_BUF && (r * g->Wq + 31) / 32 * 32 <= FT_DW_BUF) { g->rows = r; break; }
}

/* d0[j] = src[2j], d1[j] = src[2j + 1] for j < n: a stride-2 row into its two phases. */
static inline void ft_dw_deinterleave2(float *restrict d0, float *restrict d1, const float *src, int64_t n) {
#ifdef __AVX512F__
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512 a = _mm512_loadu_ps(src + 2 * j), b = _mm512_loadu_ps(src + 2 * j + 16);
    _mm512_storeu_ps(d0 + j, _mm512_permutex2var_ps(a, even, b));
    _mm512_storeu_ps(d1 + j, _mm512_permutex2var_ps(a, odd, b));
  }
  if (j < n) {
    int64_t rem = n - j, two = 2 * rem;
    __mmask16 ma = (__mmask16)(two >= 16 ? 0xffff : (1u << two) - 1);
    __mmask16 mb = (__mmask16)(two > 16 ? (1u << (two - 16)) - 1 : 0), m = (__mmask16)((1u << rem) - 1);
    __m512 a = _mm512_maskz_loadu_ps(ma, src + 2 * j), b = _mm512_maskz_loadu_ps(mb, src + 2 * j + 16);
    _mm512_mask_storeu_ps(d0 + j, m, _mm512_permutex2var_ps(a, even, b));
    _mm512_mask_storeu_ps(d1 + j, m, _mm512_permutex2var_ps(a, odd, b));
  }
#else
  for (int64_t j = 0; j < n; j++) {
    d0[j] = src[2 * j];
    d1[j] = src[2 * j + 1];
  }
#endif
}

/* Input row ih into its phase rows of the band buffer: phase b's columns [j0[b], j1[b]) (the
 * part that lies inside the input). The padding columns around them are never written, so they
 * stay zero from when the buffer was cleared. */
static inline void ft_dw_load_row(const ft_dw_geo *g, const float *src, float *const *dst) {
  int64_t s = g->s;
  if (s == 1) ft_copy_floats(dst[0] + g->j0[0], src + g->j0[0], g->j1[0] - g->j0[0]);
  else if (s == 2) { /* both phases at once where both are inside, then the edges */
    float *d0 = dst[0], *d1 = dst[1];
    int64_t lo = g->j0[0] > g->j0[1] ? g->j0[0] : g->j0[1], hi = g->j1[0] < g->j1[1] ? g->j1[0] : g->j1[1];
    if (hi < lo) hi = lo;
    for (int64_t j = g->j0[0]; j < lo; j++) d0[j] = src[2 * j];
    for (int64_t j = g->j0[1]; j < lo; j++) d1[j] = src[2 * j + 1];
    ft_dw_deinterleave2(d0 + lo, d1 + lo, src + 2 * lo, hi - lo);
    for (int64_t j = hi; j < g->j1[0]; j++) d0[j] = src[2 * j];
    for (int64_t j = hi; j < g->j1[1]; j++) d1[j] = src[2 * j + 1];
  } else {
    for (int64_t b = 0; b < s; b++)
      for (int64_t j = g->j0[b]; j < g->j1[b]; j++) dst[b][j] = src[j * s + b];
  }
}

/* nv of the band loop's accumulators (the ISA's vectors, isa.h) into ext, through the activation
 * when ea is set: per vector in registers on AVX-512, else over the stored floats (the same
 * operations: ft_gemm_act16 goes through ft_gemm_act there too). Each output is summed over the
 * taps in one order whatever the vector width. */
static inline __attribute__((always_inline)) void ft_dw_band_store(float *ext, const ft_vn *a, int nv,
                                                                  const ft_gemm_epi *ea) {
#if FT_VLEN == 16
#pragma GCC unroll 8
  for (int v = 0; v < 8; v++)
    if (v < nv) {
      ft_v16f y = a[v];
      if (ea) ft_gemm_act16(&y, ea);
      *(ft_v16u *)(ext + 16 * v) = y;
    }
#else
#pragma GCC unroll 8
  for (int v = 0; v < 8; v++)
    if (v < nv) *(ft_vnu *)(ext + FT_VLEN * v) = a[v];
  if (ea) ft_gemm_act(ext, (int64_t)nv * FT_VLEN, ea);
#endif
}

static void ft_conv_dw_plane_bands(const int64_t *p, const ft_dw_geo *g, const float *x,
                                   const float *w, int64_t ws, float b0, float *y, const float *res,
                                   const ft_gemm_epi *e) {
  int64_t IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], OH = p[FT_CV_OUT + 1], OW = p[FT_CV_OUT + 2];
  int64_t KH = p[FT_CV_K + 1], KW = p[FT_CV_K + 2], dh = p[FT_CV_D + 1];
  int64_t ph = p[FT_CV_P + 1], pw = p[FT_CV_P + 2], s = g->s, Wq = g->Wq, T = KH * KW;
  float xp[FT_DW_BUF] __attribute__((aligned(64))), ext[FT_DW_BUF] __attribute__((aligned(64)));
  int64_t off[FT_DW_MAXTAPS], cleared_hq = -1;
  for (int64_t oh0 = 0; oh0 < OH; oh0 += g->rows) {
    int64_t R = OH - oh0 < g->rows ? OH - oh0 : g->rows;
    int64_t Hp = (R - 1) * s + (KH - 1) * dh + 1, Hq = (Hp + s - 1) / s;
    int64_t len = ft_dw_band_floats(p, g, R), next = R * Wq;
    /* padding stays zero across bands of one layout (same Hq); only rows are (re)written */
    if (Hq != cleared_hq) {
      for (int64_t i = 0; i < len; i += 16) *(ft_v16u *)(xp + i) = (ft_v16f){0};
      cleared_hq = Hq;
    }
    for (int64_t h = 0, hq = 0, hr = 0; h < Hq * s; h++) { /* h = hq*s + hr: input row oh0*s + h - ph */
      int64_t ih = oh0 * s + h - ph;
      float *dst[FT_DW_MAXS];
      for (int64_t b = 0; b < s; b++) dst[b] = xp + ((hr * s + b) * Hq + hq) * Wq;
      if (h < Hp && ih >= 0 && ih < IH) ft_dw_load_row(g, x + ih * IW - pw, dst);
      else
        for (int64_t b = 0; b < s; b++) memset(dst[b], 0, sizeof(float) * (size_t)Wq);
      if (++hr == s) { hr = 0; hq++; }
    }
    for (int64_t t = 0; t < T; t++) off[t] = (g->tap_ph[t] * Hq + g->tap_r[t]) * Wq + g->tap_c[t];
    /* without a residual, the activation applies to the accumulators as they are stored */
    const ft_gemm_epi *ea = !res && e->act ? e : NULL;
    int64_t n = 0;
    for (; n + 8 * FT_VLEN <= next; n += 8 * FT_VLEN) { /* eight accumulators hide the FMA latency */
      ft_vn a[8];
#pragma GCC unroll 8
      for (int v = 0; v < 8; v++) a[v] = (ft_vn){0} + b0;
      for (int64_t t = 0; t < T; t++) {
        const float *q = xp + n + off[t];
        float wt = w[t * ws];
#pragma GCC unroll 8
        for (int v = 0; v < 8; v++) a[v] += wt * *(const ft_vnu *)(q + FT_VLEN * v);
      }
      ft_dw_band_store(ext + n, a, 8, ea);
    }
    if (n < next) { /* the rest, up to 8 vectors: still independent accumulators (small planes
                       such as 7x7 are all rest, and one chain per vector would wait on latency) */
      int nv = (int)((next - n + FT_VLEN - 1) / FT_VLEN);
      ft_vn a[8];
#pragma GCC unroll 8
      for (int v = 0; v < 8; v++) a[v] = (ft_vn){0} + b0;
      for (int64_t t = 0; t < T; t++) {
        const float *q = xp + n + off[t];
        float wt = w[t * ws];
#pragma GCC unroll 8
        for (int v = 0; v < 8; v++)
          if (v < nv) a[v] += wt * *(const ft_vnu *)(q + FT_VLEN * v);
      }
      ft_dw_band_store(ext + n, a, nv, ea);
    }
    /* out of the band, through the epilogue */
    float *yb = y + oh0 * OW;
    const float *rb = res ? res + oh0 * OW : NULL;
    if (!res)
      for (int64_t r = 0; r < R; r++) ft_copy_floats(yb + r * OW, ext + r * Wq, OW);
    else
      for (int64_t r = 0; r < R; r++) ft_gemm_finish_to(yb + r * OW, ext + r * Wq, rb ? rb + r * OW : NULL, OW, e);
  }
}

/* The QDQ depthwise (ftax.QDQConv with group == C, ft_conv_qdw_f32 below) on the same path: the
 * input is quantized as it is loaded, each value replaced by xq - zx as a float (xq = x / s
 * rounded half to even, + zx, saturated to [lo, hi]: QuantizeLinear's value, computed as the
 * int8 core's packing step does), the weights are the integer weights as floats, so every sum is
 * an exact integer (|xq - zx| <= 255, |w| <= 255 and at most FT_QDW_MAXTAPS taps keep it below
 * 2^24) whatever the order; scale[c] (x_scale * w_scale[c]) and the bias come after the sum. */
typedef struct ft_dw_quant {
  float s, z, lo, hi; /* x's scale and zero point, the quantized range */
  const float *scale; /* one per channel */
  int x8;             /* x is already quantized: 0 no (float32), 1 uint8, 2 int8 */
} ft_dw_quant;

static inline float ft_dwq_1(float x, const ft_dw_quant *q) {
  float v = rintf(x / q->s) + q->z;
  v = v > q->lo ? v : q->lo; /* NaN: lo, as the vector max below */
  v = v < q->hi ? v : q->hi;
  return v - q->z;
}

/* element i of x as the sums take it: xq - zx as a float */
static inline float ft_dwq_at(const void *x, int64_t i, const ft_dw_quant *q) {
  if (q->x8 == 1) return (float)((const uint8_t *)x)[i] - q->z;
  if (q->x8 == 2) return (float)((const int8_t *)x)[i] - q->z;
  return ft_dwq_1(((const float *)x)[i], q);
}

#ifdef __AVX512F__
static inline __attribute__((always_inline)) __m512 ft_dwq_v16(__m512 x, __m512 s, __m512 z, __m512 lo, __m512 hi) {
  __m512 v = _mm512_roundscale_ps(_mm512_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_sub_ps(_mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, z), lo), hi), z);
}
#endif

/* The channel-vector path's geometry (below): outside the AVX-512 part so that the compiler can
 * tell which convs take the path (compiler/passes/blocked.c) whatever it was built for. */
#define FT_DWV_RING 12288   /* floats in the ring of transposed input rows: 48 KiB of stack */
#define FT_DWV_OUTPIX 256   /* output pixel vectors waiting to be transposed back */
#define FT_DWV_MAXNW 16

typedef struct ft_dwv_geo {
  int64_t nw;     /* chunk: output pixels per set of accumulators */
  int64_t chunks; /* chunks per output row (the last one may run past the row: its extra
                     pixels read zeros and are dropped) */
  int64_t Wr;     /* pixels per ring row: the padded row and the last chunk's reach */
  int64_t RB;     /* ring rows */
  int64_t band;   /* output rows per work item */
} ft_dwv_geo;

/* The geometry, or 0 when the path does not take this conv (3-D, negative pads, a window of
 * more than FT_DW_MAXTAPS taps, rows too wide for the ring or the output buffer). */
static int ft_dwv_geometry(const int64_t *p, ft_dwv_geo *g) {
  int64_t IW = p[FT_CV_IN + 2], OH = p[FT_CV_OUT + 1], OW = p[FT_CV_OUT + 2], KH = p[FT_CV_K + 1], KW = p[FT_CV_K + 2];
  int64_t sh = p[FT_CV_S + 1], sw = p[FT_CV_S + 2], dh = p[FT_CV_D + 1], dw = p[FT_CV_D + 2], pw = p[FT_CV_P + 2];
  memset(g, 0, sizeof *g);
  if (p[FT_CV_IN] != 1 || p[FT_CV_P + 1] < 0 || pw < 0 || KH * KW > FT_DW_MAXTAPS) return 0;
  g->nw = OW % 14 == 0 ? 14 : OW % 8 && OW % 7 == 0 ? 7 : 8; /* the zoo's rows: 7, 14, 28 wide and multiples of 8 */
  g->chunks = (OW + g->nw - 1) / g->nw;
  int64_t reach = (g->chunks * g->nw - 1) * sw + (KW - 1) * dw + 1, win = (KH - 1) * dh + 1;
  g->Wr = reach > pw + IW ? reach : pw + IW;
  g->RB = FT_DWV_RING / (16 * g->Wr);
  if (g->RB < win || 15 + g->chunks * g->nw > FT_DWV_OUTPIX) return 0;
  int64_t blocks = p[FT_CV_N] * ((p[FT_CV_C] + 15) / 16);
  int64_t bands = blocks >= 8 ? 1 : (8 + blocks - 1) / blocks; /* a few items per thread */
  if (bands > OH) bands = OH;
  g->band = (OH + bands - 1) / bands;
  int64_t rows = (g->band - 1) * sh + win; /* padded rows of a band */
  if (g->RB > rows) g->RB = rows;
  return 1;
}

/* A work item's 16 channels from c0 (nl of them): its taps' weight vectors (packed weights:
 * block c0 / 16 of [T][16] where they lie; else gathered into wbuf, zeros past nl) and its 16
 * biases into bv. */
static inline const float *ft_dwv_block_wb(const int64_t *p, const float *W, const float *bias, int64_t c0, int nl,
                                           float *wbuf, float *bv) {
  int64_t T = p[FT_CV_K + 1] * p[FT_CV_K + 2];
  for (int l = 0; l < 16; l++) bv[l] = bias && l < nl ? bias[c0 + l] : 0.0f;
  if (p[FT_CV_PACKED]) return W + c0 * T;
  for (int64_t t = 0; t < T; t++)
    for (int l = 0; l < 16; l++) wbuf[t * 16 + l] = l < nl ? W[(c0 + l) * T + t] : 0.0f;
  return wbuf;
}

/* FT_DWV_PATH: whether this build has a channel-vector path (AVX-512 below; AVX2 and NEON after
 * it); FT_DWV_LAYOUT_OK: whether it takes a conv with these layouts (AVX2 and NEON: NCHW only;
 * a blocked side is planned for AVX-512, and such a program built for another target takes the
 * plain loops of ft_conv_dw_xblk_run). */
#if defined(__AVX512F__)
#define FT_DWV_PATH 1
#define FT_DWV_LAYOUT_OK(p) 1
#elif FT_ISA == FT_ISA_AVX2 || FT_ISA == FT_ISA_NEON
#define FT_DWV_PATH 1
#define FT_DWV_LAYOUT_OK(p) (!((p)[FT_CV_LAYOUT] & (FT_CV_X_BLOCKED | FT_CV_Y_BLOCKED)))
#else
#define FT_DWV_PATH 0
#endif

#ifdef __AVX512F__
/* Depthwise 2-D conv with AVX-512, 16 channels at a time with the channels in the vector lanes
 * (the blocked layout that oneDNN keeps between layers, made here on the fly): each input pixel
 * of 16 planes is one vector, each tap one vector of 16 weights (packed so at compile time:
 * ft_conv_pack_w), and an output row is computed a chunk of nw pixels at a time in nw
 * accumulators, whose taps are aligned loads at fixed offsets (one shared by up to KW taps of
 * neighbouring pixels). A stride only changes which pixel vectors a chunk reads.
 *
 * Padded input rows are transposed into a ring of rows, 16 pixels of 16 channels at a time
 * and flattened over rows (a 7x7 plane takes 4 transposes, not 7); the ring holds a whole
 * band of small planes, or as many rows as fit of wide ones, so each input row is transposed
 * once. Outputs gather in a buffer and go back to the planes 16 pixels at a time, with the
 * residual and the activation applied there. Work items are (image, block of 16 channels,
 * band of output rows); every output is computed the same way whatever the split. Done a plane
 * at a time instead, small planes cost more in per-row overhead than in arithmetic, and each
 * tap is an unaligned load (two cache lines: 1.7x an aligned one on this Zen 4) per 16
 * products. The transposes are what is left against a library that keeps the blocked layout
 * between layers: about a third of the time on 14x14 planes. Where X comes from a pointwise^T
 * conv that reads nowhere else it is blocked too (FT_CV_X_BLOCKED, compiler/passes/blocked.c):
 * then the chunks read its rows where they lie, a chunk that reaches into the pads with masked
 * loads, and no ring is filled; where Y is blocked (and the activation a clamp) the chunks
 * store into it directly. Copying blocked rows into the ring and storing through the buffer
 * cost a quarter to a third of MobileNetV2's depthwise time (1 thread, per call: 123 -> 86 us
 * for the 112 -> 56 stride-2 conv, 45 -> 29 for 56 -> 28, 15.5 -> 12 at 14x14, 14 -> 10 at
 * 7x7; the whole model 3.5% faster). */

/* One output row for the row functions. Chunk c reads padded columns from c * nw * s on, of
 * tap row kh at rp[kh] (its padded column 0, as an address: with X blocked it is the input row
 * itself, and column 0 may lie before it); only columns [lo, hi) are read, the others count
 * as zeros (cm: the load mask of each padded column, 0xffff inside). Its pixel vectors go to
 * out + c * nw * 16, clamped to [clo, chi] (-inf and inf: as they are). */
typedef struct {
  const float *rp[FT_DW_MAXTAPS];
  const float *wt, *bv; /* the taps' weight vectors, the bias vector */
  const uint16_t *cm;
  float *out;
  int64_t chunks, KH, KW, s, d, lo, hi;
  __m512 clo, chi;
} ft_dwv_job;

typedef void (*ft_dwv_rowfn)(const ft_dwv_job *j);

/* Pixel vector col of row r: a plain load, or at an edge (the chunk reaches past [lo, hi)) a
 * load masked by cm[col] that reads nothing outside (AVX-512 masked loads do not fault). The
 * masks come from memory, one load each: computed per pixel they cost more than the FMAs on
 * 7x7 planes, where every chunk is an edge. */
static inline __attribute__((always_inline)) __m512 ft_dwv_px(const float *r, int64_t col, int edge,
                                                              const uint16_t *cm) {
  const float *a = (const float *)((uintptr_t)r + (uintptr_t)col * 64);
  if (!edge) return _mm512_loadu_ps(a);
  return _mm512_maskz_loadu_ps((__mmask16)cm[col], a);
}

/* Whether chunk c of nw pixels, which reads `reach` padded columns, needs ft_dwv_px's edge. */
static inline int ft_dwv_edge(const ft_dwv_job *j, int64_t c, int64_t nw, int64_t reach) {
  int64_t b = c * nw * j->s;
  return b < j->lo || b + reach > j->hi;
}

/* One output row (NW, KW, S, D constants in the instances below; KH the job's). */
static inline __attribute__((always_inline)) void ft_dwv_row_impl(const ft_dwv_job *J, int64_t KW, int64_t S,
                                                                  int64_t D, const int NW) {
  __m512 b0 = _mm512_load_ps(J->bv);
  int64_t reach = (NW - 1) * S + (KW - 1) * D + 1;
  for (int64_t c = 0; c < J->chunks; c++) {
    __m512 acc[FT_DWV_MAXNW];
#pragma GCC unroll 16
    for (int j = 0; j < NW; j++) acc[j] = b0;
    const float *w = J->wt;
    int edge = ft_dwv_edge(J, c, NW, reach);
    int64_t b = c * NW * S;
    for (int64_t kh = 0; kh < J->KH; kh++) {
      for (int64_t kw = 0; kw < KW; kw++, w += 16) {
        __m512 wv = _mm512_loadu_ps(w); /* packed constants need not be 64-byte aligned */
#pragma GCC unroll 16
        for (int j = 0; j < NW; j++)
          acc[j] = _mm512_fmadd_ps(ft_dwv_px(J->rp[kh], b + j * S + kw * D, edge, J->cm), wv, acc[j]);
      }
    }
#pragma GCC unroll 16
    for (int j = 0; j < NW; j++) _mm512_storeu_ps(J->out + (c * NW + j) * 16, _mm512_min_ps(J->chi, _mm512_max_ps(J->clo, acc[j])));
  }
}

/* The same sums for undilated rows with NW, KW and S constants, each input pixel vector loaded
 * once per tap row: pixel i of the chunk's reach serves every tap (j, kw) with j * S + kw == i,
 * the KW weight vectors stay in registers. Each accumulator still takes its taps in (kh, kw)
 * order, so the outputs are those of ft_dwv_row_impl bit for bit; there each of the NW * KW
 * products loaded its input again (24 loads of 16 floats per tap row of a 3-wide stride-2 chunk
 * of 8 pixels, 17 here), and on this Zen 4 a 512-bit load takes as long as a 512-bit FMA. */
static inline __attribute__((always_inline)) void ft_dwv_chunk_reuse(const ft_dwv_job *J, int64_t c, const int KW,
                                                                     const int S, const int NW, const int EDGE) {
  __m512 acc[FT_DWV_MAXNW], wv[5], b0 = _mm512_load_ps(J->bv);
#pragma GCC unroll 16
  for (int j = 0; j < NW; j++) acc[j] = b0;
  const float *w = J->wt;
  int64_t b = c * NW * S;
  const uint16_t *cm = J->cm + b;
  for (int64_t kh = 0; kh < J->KH; kh++, w += KW * 16) {
    const float *q = (const float *)((uintptr_t)J->rp[kh] + (uintptr_t)b * 64);
    __asm__("" : "+r"(q)); /* one base register, the pixels at fixed displacements from it */
#pragma GCC unroll 5
    for (int kw = 0; kw < KW; kw++) wv[kw] = _mm512_loadu_ps(w + kw * 16); /* packed: maybe unaligned */
#pragma GCC unroll 64
    for (int i = 0; i < (NW - 1) * S + KW; i++) {
      __m512 xv = ft_dwv_px(q, i, EDGE, cm);
      __asm__("" : "+v"(xv)); /* kept in a register: else GCC loads it again as each FMA's operand */
#pragma GCC unroll 5
      for (int kw = 0; kw < KW; kw++) {
        int d = i - kw;
        if (d >= 0 && d % S == 0 && d / S < NW) acc[d / S] = _mm512_fmadd_ps(xv, wv[kw], acc[d / S]);
      }
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < NW; j++) _mm512_storeu_ps(J->out + (c * NW + j) * 16, _mm512_min_ps(J->chi, _mm512_max_ps(J->clo, acc[j])));
}

#define FT_DWV_ROW(NW, KW, S)                                                                       \
  static void ft_dwv_row_##NW##_##KW##_##S(const ft_dwv_job *J) {                                   \
    for (int64_t c = 0; c < J->chunks; c++) {                                                       \
      if (ft_dwv_edge(J, c, NW, (NW - 1) * S + KW)) ft_dwv_chunk_reuse(J, c, KW, S, NW, 1);         \
      else ft_dwv_chunk_reuse(J, c, KW, S, NW, 0);                                                  \
    }                                                                                               \
  }
FT_DWV_ROW(8, 3, 1)
FT_DWV_ROW(8, 3, 2)
FT_DWV_ROW(8, 5, 1)
FT_DWV_ROW(8, 5, 2)
FT_DWV_ROW(7, 3, 1)
FT_DWV_ROW(7, 3, 2)
FT_DWV_ROW(7, 5, 1)
FT_DWV_ROW(7, 5, 2)
FT_DWV_ROW(14, 3, 1)
FT_DWV_ROW(14, 3, 2)
FT_DWV_ROW(14, 5, 1)
FT_DWV_ROW(14, 5, 2)
#undef FT_DWV_ROW
/* Any other window, stride or dilation, for each chunk width the geometry picks. */
static void ft_dwv_row_any_7(const ft_dwv_job *J) { ft_dwv_row_impl(J, J->KW, J->s, J->d, 7); }
static void ft_dwv_row_any_8(const ft_dwv_job *J) { ft_dwv_row_impl(J, J->KW, J->s, J->d, 8); }
static void ft_dwv_row_any_14(const ft_dwv_job *J) { ft_dwv_row_impl(J, J->KW, J->s, J->d, 14); }

static ft_dwv_rowfn ft_dwv_row_for(const int64_t *p, const ft_dwv_geo *g) {
  int64_t KW = p[FT_CV_K + 2], s = p[FT_CV_S + 2];
  if (p[FT_CV_D + 2] != 1 || (KW != 3 && KW != 5) || s > 2)
    return g->nw == 14 ? ft_dwv_row_any_14 : g->nw == 8 ? ft_dwv_row_any_8 : ft_dwv_row_any_7;
  static const ft_dwv_rowfn fns[3][2][2] = {{{ft_dwv_row_7_3_1, ft_dwv_row_7_3_2}, {ft_dwv_row_7_5_1, ft_dwv_row_7_5_2}},
                                            {{ft_dwv_row_8_3_1, ft_dwv_row_8_3_2}, {ft_dwv_row_8_5_1, ft_dwv_row_8_5_2}},
                                            {{ft_dwv_row_14_3_1, ft_dwv_row_14_3_2}, {ft_dwv_row_14_5_1, ft_dwv_row_14_5_2}}};
  return fns[g->nw == 14 ? 2 : g->nw == 8][KW == 5][s == 2];
}

/* Padded rows [hp0, hp1) of nl <= 16 planes x into the ring: rows inside the input by 16x16
 * transposes over the flattened rows, the others as zeros (the pad columns stay zero). */
static void ft_dwv_load(const int64_t *p, const ft_dwv_geo *g, const void *xv, int nl, float *ring, int64_t hp0,
                        int64_t hp1, const ft_dw_quant *q) {
  const float *x = (const float *)xv;
  int64_t IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], ph = p[FT_CV_P + 1], pw = p[FT_CV_P + 2], IHW = IH * IW;
  int64_t W16 = g->Wr * 16, RB = g->RB;
  for (int64_t hp = hp0; hp < hp1; hp++)
    if (hp - ph < 0 || hp - ph >= IH) {
      float *d = ring + hp % RB * W16 + pw * 16;
      for (int64_t j = 0; j < IW; j++) _mm512_store_ps(d + 16 * j, _mm512_setzero_ps());
    }
  int64_t ih0 = hp0 - ph < 0 ? 0 : hp0 - ph, ih1 = hp1 - ph > IH ? IH : hp1 - ph;
  if (ih0 >= ih1) return;
  int64_t npix = (ih1 - ih0) * IW, slot = (ih0 + ph) % RB, col = 0;
  const float *src = x + ih0 * IW;
  float *d = ring + slot * W16 + pw * 16;
  int x8 = q ? q->x8 : 0;
  for (int64_t f = 0; f < npix; f += 16) {
    int nc = npix - f < 16 ? (int)(npix - f) : 16;
    __m512 r[16];
    int full = nc == 16 && nl == 16 && !x8;
    if (x8) { /* 8-bit x: xq - zx as floats straight from the bytes (zero as the pad's) */
      __mmask16 cm = (__mmask16)((1u << nc) - 1);
      __m512 z = _mm512_set1_ps(q->z);
      const uint8_t *s8 = (const uint8_t *)xv + ih0 * IW + f;
      for (int l = 0; l < 16; l++) {
        __m128i b = _mm_setzero_si128();
        if (l < nl && nc == 16) b = _mm_loadu_si128((const __m128i *)(s8 + l * IHW));
        else if (l < nl) {
          uint8_t t[16] = {0};
          memcpy(t, s8 + l * IHW, (size_t)nc);
          b = _mm_loadu_si128((const __m128i *)t);
        }
        __m512i v = x8 == 1 ? _mm512_cvtepu8_epi32(b) : _mm512_cvtepi8_epi32(b);
        r[l] = l < nl ? _mm512_maskz_sub_ps(cm, _mm512_cvtepi32_ps(v), z) : _mm512_setzero_ps();
      }
    } else if (full) ft_gather16_t(src + f, IHW, r);
    else {
      __mmask16 cm = (__mmask16)((1u << nc) - 1);
      for (int l = 0; l < 16; l++) r[l] = l < nl ? _mm512_maskz_loadu_ps(cm, src + l * IHW + f) : _mm512_setzero_ps();
    }
    if (q && !x8) { /* xq - zx as floats (zeros stay zeros: 0 quantizes to the zero point); per element,
                       so it may come before or after the transpose */
      __m512 s = _mm512_set1_ps(q->s), z = _mm512_set1_ps(q->z), lo = _mm512_set1_ps(q->lo), hi = _mm512_set1_ps(q->hi);
#pragma GCC unroll 16
      for (int l = 0; l < 16; l++) r[l] = ft_dwq_v16(r[l], s, z, lo, hi);
    }
    if (full) ft_lanes4x4(r);
    else ft_transpose16(r);
    if (nc == 16 && col + 16 < IW) { /* within one row */
#pragma GCC unroll 16
      for (int j = 0; j < 16; j++) _mm512_store_ps(d + 16 * j, r[j]);
      d += 256;
      col += 16;
      continue;
    }
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) { /* pixel f + j: column col of the current ring row */
      if (j >= nc) break;
      _mm512_store_ps(d, r[j]);
      d += 16;
      if (++col == IW) {
        col = 0;
        if (++slot == RB) slot = 0;
        d = ring + slot * W16 + pw * 16;
      }
    }
  }
}

/* The activation on 16 vectors, chosen once for all of them. */
static inline __attribute__((always_inline)) void ft_dwv_act16(__m512 *v, const ft_gemm_epi *e) {
  if (e->act == FT_ACT_CLIP) {
    __m512 lo = _mm512_set1_ps(e->lo), hi = _mm512_set1_ps(e->hi);
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++) { /* as ft_gemm_act16: NaN stays NaN */
      __mmask16 below = _mm512_cmp_ps_mask(v[l], lo, _CMP_LT_OQ), above = _mm512_cmp_ps_mask(v[l], hi, _CMP_GT_OQ);
      v[l] = _mm512_mask_mov_ps(_mm512_mask_mov_ps(v[l], above, hi), below, lo);
    }
  } else if (e->act == FT_ACT_RELU) {
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++)
      v[l] = _mm512_mask_mov_ps(v[l], _mm512_cmp_ps_mask(v[l], _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps());
  } else if (e->act) {
    for (int l = 0; l < 16; l++) {
      ft_v16f a = (ft_v16f)v[l];
      ft_gemm_act16(&a, e);
      v[l] = (__m512)a;
    }
  }
}

/* np output pixel vectors of yt back into nl planes at y (residual r), through the epilogue. */
static void ft_dwv_flush(const float *yt, int64_t np, int nl, float *y, const float *r, int64_t OHW,
                         const ft_gemm_epi *e, const float *qs, const float *qb) {
  for (int64_t i0 = 0; i0 < np; i0 += 16) {
    int k = np - i0 < 16 ? (int)(np - i0) : 16;
    __m512 v[16];
    if (k == 16) {
#pragma GCC unroll 16
      for (int j = 0; j < 16; j++) v[j] = _mm512_load_ps(yt + (i0 + j) * 16);
    } else
      for (int j = 0; j < 16; j++) v[j] = j < k ? _mm512_load_ps(yt + (i0 + j) * 16) : _mm512_setzero_ps();
    if (qs) { /* the QDQ depthwise: exact integer sums times their channel's scale, + bias */
      __m512 sv = _mm512_load_ps(qs);
      if (qb) {
        __m512 bv = _mm512_load_ps(qb);
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) v[j] = _mm512_fmadd_ps(v[j], sv, bv);
      } else {
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) v[j] = _mm512_mul_ps(v[j], sv);
      }
    }
    ft_transpose16(v);
    if (k == 16 && nl == 16 && !r) {
      ft_dwv_act16(v, e);
#pragma GCC unroll 16
      for (int l = 0; l < 16; l++) _mm512_storeu_ps(y + l * OHW + i0, v[l]);
      continue;
    }
    for (int l = 0; l < nl; l++) {
      ft_v16f a = (ft_v16f)v[l];
      ft_gemm_epi16(y + l * OHW + i0, &a, r ? r + l * OHW + i0 : NULL, k, e);
    }
  }
}

/* Channels [c0, c0 + 16) (fewer at the end) of image n, output rows [oh0, oh1). With X blocked
 * (FT_CV_X_BLOCKED: x is block c0 / 16, pixel vectors 16 floats apart) the rows are read where
 * they lie, the pads by masked loads (ft_dwv_px), and the ring is one row of zeros for the
 * padding rows. With Y blocked, whole chunks per row and a clamp for an activation, the row
 * function stores its clamped vectors into Y itself. */
static void ft_dwv_item(const int64_t *p, const ft_dwv_geo *g, ft_dwv_rowfn row, const void *X, const float *W,
                        const float *bias, const float *R, float *Y, const ft_gemm_epi *e, int64_t n, int64_t c0,
                        int64_t oh0, int64_t oh1, const ft_dw_quant *q) {
  int64_t C = p[FT_CV_C], IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], OW = p[FT_CV_OUT + 2], KH = p[FT_CV_K + 1];
  int64_t KW = p[FT_CV_K + 2], sh = p[FT_CV_S + 1], dh = p[FT_CV_D + 1], ph = p[FT_CV_P + 1], pw = p[FT_CV_P + 2];
  int64_t IHW = IH * IW, OHW = p[FT_CV_OUT + 1] * OW, W16 = g->Wr * 16, RB = g->RB;
  int nl = C - c0 < 16 ? (int)(C - c0) : 16, yblk = (p[FT_CV_LAYOUT] & FT_CV_Y_BLOCKED) != 0;
  int xblk = (p[FT_CV_LAYOUT] & FT_CV_X_BLOCKED) != 0;
  float ring[FT_DWV_RING] __attribute__((aligned(64))), yt[FT_DWV_OUTPIX * 16] __attribute__((aligned(64)));
  float wbuf[FT_DW_MAXTAPS * 16] __attribute__((aligned(64))), bv[16] __attribute__((aligned(64)));
  float qs[16] __attribute__((aligned(64))), qb[16] __attribute__((aligned(64)));
  uint16_t cmask[FT_DWV_RING / 16];
  ft_dwv_job J;
  J.wt = ft_dwv_block_wb(p, W, bias, c0, nl, wbuf, bv);
  if (q) { /* the sums start at 0; scale and bias come after them (ft_dwv_flush) */
    for (int l = 0; l < 16; l++) {
      qs[l] = l < nl ? q->scale[c0 + l] : 0.0f;
      qb[l] = bv[l];
      bv[l] = 0.0f;
    }
  }
  J.bv = bv;
  J.chunks = g->chunks;
  J.KH = KH;
  J.KW = KW;
  J.s = p[FT_CV_S + 2];
  J.d = p[FT_CV_D + 2];
  J.lo = xblk ? pw : 0; /* the ring's rows are padded already */
  J.hi = xblk ? pw + IW : g->Wr;
  J.cm = cmask; /* read at edges only, which the ring's padded rows never have */
  __m512 clo, chi;
  int direct = yblk && g->chunks * g->nw == OW && ft_gemm_clamp_of(e, &clo, &chi);
  J.clo = direct ? clo : _mm512_set1_ps(-__builtin_inff());
  J.chi = direct ? chi : _mm512_set1_ps(__builtin_inff());
  if (xblk)
    for (int64_t j = 0; j < g->Wr; j++) {
      _mm512_store_ps(ring + 16 * j, _mm512_setzero_ps());
      cmask[j] = j >= J.lo && j < J.hi ? 0xffff : 0;
    }
  else
    for (int64_t s = 0; s < RB; s++) { /* the pad columns, zero for the whole item */
      float *rr = ring + s * W16;
      for (int64_t j = 0; j < pw; j++) _mm512_store_ps(rr + 16 * j, _mm512_setzero_ps());
      for (int64_t j = pw + IW; j < g->Wr; j++) _mm512_store_ps(rr + 16 * j, _mm512_setzero_ps());
    }
  const void *x = (const char *)X + (n * C + c0) * IHW * (q && q->x8 ? 1 : (int64_t)sizeof(float));
  const float *res = R ? R + (n * C + c0) * OHW + oh0 * OW : NULL;
  float *y = Y + (n * C + c0) * OHW + oh0 * OW;
  int64_t hp_end = (oh1 - 1) * sh + (KH - 1) * dh + 1, loaded = oh0 * sh, pend = 0, done = 0;
  for (int64_t oh = oh0; oh < oh1; oh++) {
    int64_t hp = oh * sh;
    if (xblk) { /* each tap row the input's own row (from its padded column 0), or the zero row */
      for (int64_t kh = 0; kh < KH; kh++) {
        int64_t ih = hp + kh * dh - ph;
        J.rp[kh] = ih >= 0 && ih < IH ? (const float *)((uintptr_t)((const float *)x + ih * IW * 16) - (uintptr_t)pw * 64)
                                      : ring;
      }
    } else {
      if (loaded < hp + (KH - 1) * dh + 1) { /* the rows the ring can take, from this row's first */
        int64_t to = hp + RB < hp_end ? hp + RB : hp_end;
        ft_dwv_load(p, g, x, nl, ring, loaded, to, q);
        loaded = to;
      }
      for (int64_t kh = 0, slot = hp % RB; kh < KH; kh++, slot = slot + dh < RB ? slot + dh : slot + dh - RB)
        J.rp[kh] = ring + slot * W16;
    }
    float *yr = Y + (n * C + c0) * OHW + oh * OW * 16; /* the row in a blocked Y */
    J.out = direct ? yr : yt + pend * 16;
    row(&J);
    if (direct) continue;
    if (yblk) { /* the row's pixel vectors are the block's: the activation and a copy, no transpose */
      int64_t j = 0;
      for (; j + 16 <= OW; j += 16) {
        __m512 v[16];
#pragma GCC unroll 16
        for (int l = 0; l < 16; l++) v[l] = _mm512_load_ps(yt + (j + l) * 16);
        ft_dwv_act16(v, e);
#pragma GCC unroll 16
        for (int l = 0; l < 16; l++) _mm512_storeu_ps(yr + (j + l) * 16, v[l]);
      }
      for (; j < OW; j++) {
        ft_v16f v = (ft_v16f)_mm512_load_ps(yt + j * 16);
        ft_gemm_act16(&v, e);
        _mm512_storeu_ps(yr + j * 16, (__m512)v);
      }
      continue;
    }
    pend += OW;
    int64_t out = oh + 1 == oh1 ? pend : pend / 16 * 16;
    if (out) {
      ft_dwv_flush(yt, out, nl, y + done, res ? res + done : NULL, OHW, e, q ? qs : NULL, q && bias ? qb : NULL);
      done += out;
      pend -= out;
      for (int64_t j = 0; j < pend; j++) _mm512_store_ps(yt + 16 * j, _mm512_load_ps(yt + (out + j) * 16));
    }
  }
}
#endif

#if FT_ISA == FT_ISA_AVX2 || FT_ISA == FT_ISA_NEON
/* The channel-vector path on AVX2 and NEON, in NCHW (the blocked layout is planned for AVX-512
 * only, compiler/pipeline.c) and fp32 (the QDQ depthwise keeps its plain loops here): the ring,
 * the output buffer and the work items of ft_dwv_item above, the rows computed by the kernels
 * of ukernels/dwv_f32_vn.h. The transposes are square blocks of the ISA's vectors
 * (ft_vn_transpose): FT_VLEN pixels of FT_VLEN planes at a time. Done a plane at a time
 * instead (ft_conv_dw_plane_bands), each tap is an unaligned load per FT_VLEN products and small
 * planes pay the band's set-up per plane: 1.8-12x oneDNN's AVX2 time on MobileNetV2's convs. */

/* Padded rows [hp0, hp1) of nl <= 16 planes x into the ring, a row at a time: the rows inside
 * the input transposed, the others zeros (the pad columns stay zero). */
static void ft_dwn_load(const int64_t *p, const ft_dwv_geo *g, const float *x, int nl, float *ring, int64_t hp0,
                        int64_t hp1) {
  int64_t IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], ph = p[FT_CV_P + 1], pw = p[FT_CV_P + 2], IHW = IH * IW;
  int64_t W16 = g->Wr * 16;
  for (int64_t hp = hp0; hp < hp1; hp++) {
    float *d = ring + hp % g->RB * W16 + pw * 16;
    int64_t ih = hp - ph;
    if (ih < 0 || ih >= IH) {
      for (int64_t j = 0; j < IW * 16; j += FT_VLEN) *(ft_vn *)(d + j) = (ft_vn){0};
      continue;
    }
    const float *src = x + ih * IW;
    for (int64_t col = 0; col < IW; col += FT_VLEN) {
      int nc = IW - col < FT_VLEN ? (int)(IW - col) : FT_VLEN;
      for (int h = 0; h < FT_DWN_H; h++) {
        ft_vn r[FT_VLEN];
#pragma GCC unroll 8
        for (int i = 0; i < FT_VLEN; i++) {
          int l = h * FT_VLEN + i;
          r[i] = l < nl ? ft_vn_loadn(src + l * IHW + col, nc) : (ft_vn){0};
        }
        ft_vn_transpose(r);
#pragma GCC unroll 8
        for (int j = 0; j < FT_VLEN; j++)
          if (j < nc) *(ft_vn *)(d + (col + j) * 16 + h * FT_VLEN) = r[j];
      }
    }
  }
}

/* np output pixels of yt (16 channels each) back into nl planes at y (residual r), through the
 * epilogue. */
static void ft_dwn_flush(const float *yt, int64_t np, int nl, float *y, const float *r, int64_t OHW,
                         const ft_gemm_epi *e) {
  for (int64_t i0 = 0; i0 < np; i0 += FT_VLEN) {
    int k = np - i0 < FT_VLEN ? (int)(np - i0) : FT_VLEN;
    for (int h = 0; h < FT_DWN_H && h * FT_VLEN < nl; h++) {
      ft_vn v[FT_VLEN];
#pragma GCC unroll 8
      for (int j = 0; j < FT_VLEN; j++) v[j] = j < k ? *(const ft_vn *)(yt + (i0 + j) * 16 + h * FT_VLEN) : (ft_vn){0};
      ft_vn_transpose(v);
      for (int i = 0; i < FT_VLEN && h * FT_VLEN + i < nl; i++) {
        int64_t o = (h * FT_VLEN + i) * OHW + i0;
        ft_vn_finish_store(y + o, v[i], r ? r + o : NULL, k, e);
      }
    }
  }
}

typedef ft_dwn_rowfn ft_dwv_rowfn;
/* chunks of at most 8 pixels: 14 accumulators do not fit 16 ymm, so a 14-pixel chunk is two of 7 */
static inline int64_t ft_dwn_nw(const ft_dwv_geo *g) { return g->nw == 14 ? 7 : g->nw; }
static ft_dwv_rowfn ft_dwv_row_for(const int64_t *p, const ft_dwv_geo *g) {
  return ft_dwn_row_for(ft_dwn_nw(g), p[FT_CV_K + 2], p[FT_CV_S + 2], p[FT_CV_D + 2]);
}

/* Channels [c0, c0 + 16) (fewer at the end) of image n, output rows [oh0, oh1). */
static void ft_dwn_item(const int64_t *p, const ft_dwv_geo *g, ft_dwn_rowfn row, const float *X, const float *W,
                        const float *bias, const float *R, float *Y, const ft_gemm_epi *e, int64_t n, int64_t c0,
                        int64_t oh0, int64_t oh1) {
  int64_t C = p[FT_CV_C], IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], OW = p[FT_CV_OUT + 2], KH = p[FT_CV_K + 1];
  int64_t KW = p[FT_CV_K + 2], sh = p[FT_CV_S + 1], dh = p[FT_CV_D + 1], pw = p[FT_CV_P + 2];
  int64_t IHW = IH * IW, OHW = p[FT_CV_OUT + 1] * OW, W16 = g->Wr * 16, RB = g->RB;
  int nl = C - c0 < 16 ? (int)(C - c0) : 16;
  float ring[FT_DWV_RING] __attribute__((aligned(64))), yt[FT_DWV_OUTPIX * 16] __attribute__((aligned(64)));
  float wbuf[FT_DW_MAXTAPS * 16] __attribute__((aligned(64))), bv[16] __attribute__((aligned(64)));
  ft_dwn_job J;
  J.wt = ft_dwv_block_wb(p, W, bias, c0, nl, wbuf, bv);
  J.bv = bv;
  J.chunks = g->chunks * (g->nw / ft_dwn_nw(g));
  J.KH = KH;
  J.KW = KW;
  J.s = p[FT_CV_S + 2];
  J.d = p[FT_CV_D + 2];
  for (int64_t s = 0; s < RB; s++) { /* the pad columns, zero for the whole item */
    float *rr = ring + s * W16;
    for (int64_t j = 0; j < pw * 16; j += FT_VLEN) *(ft_vn *)(rr + j) = (ft_vn){0};
    for (int64_t j = (pw + IW) * 16; j < W16; j += FT_VLEN) *(ft_vn *)(rr + j) = (ft_vn){0};
  }
  const float *x = X + (n * C + c0) * IHW;
  const float *res = R ? R + (n * C + c0) * OHW + oh0 * OW : NULL;
  float *y = Y + (n * C + c0) * OHW + oh0 * OW;
  int64_t hp_end = (oh1 - 1) * sh + (KH - 1) * dh + 1, loaded = oh0 * sh, pend = 0, done = 0;
  for (int64_t oh = oh0; oh < oh1; oh++) {
    int64_t hp = oh * sh;
    if (loaded < hp + (KH - 1) * dh + 1) { /* the rows the ring can take, from this row's first */
      int64_t to = hp + RB < hp_end ? hp + RB : hp_end;
      ft_dwn_load(p, g, x, nl, ring, loaded > hp ? loaded : hp, to);
      loaded = to;
    }
    for (int64_t kh = 0, slot = hp % RB; kh < KH; kh++, slot = slot + dh < RB ? slot + dh : slot + dh - RB)
      J.rp[kh] = ring + slot * W16;
    J.out = yt + pend * 16;
    row(&J);
    pend += OW;
    int64_t out = oh + 1 == oh1 ? pend : pend / FT_VLEN * FT_VLEN;
    if (out) {
      ft_dwn_flush(yt, out, nl, y + done, res ? res + done : NULL, OHW, e);
      done += out;
      pend -= out;
      for (int64_t j = 0; j < pend * 16; j += FT_VLEN) *(ft_vn *)(yt + j) = *(const ft_vn *)(yt + out * 16 + j);
    }
  }
}
#endif

typedef struct {
  const int64_t *p;
  const void *geo; /* ft_dw_geo, or ft_dwv_geo on the channel-vector path */
  const ft_dw_quant *q; /* the QDQ depthwise's quantization (channel-vector path), or NULL */
  const void *X;        /* float32; 8-bit where q says so */
  const float *W, *bias, *R;
  float *Y;
  const ft_gemm_epi *e;
#if FT_DWV_PATH
  ft_dwv_rowfn row;
#endif
} ft_dw_ctx;

/* Planes [lo, hi): one channel of one image each. Packed weights (ft_conv_pack_w) hold a
 * channel's taps 16 floats apart. */
static void ft_conv_dw_planes_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_dw_ctx *c = (const ft_dw_ctx *)ctx;
  const ft_dw_geo *geo = (const ft_dw_geo *)c->geo;
  const int64_t *p = c->p, C = p[FT_CV_C], IHW = p[FT_CV_IN + 1] * p[FT_CV_IN + 2];
  const int64_t OHW = p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2], KHW = p[FT_CV_K + 1] * p[FT_CV_K + 2];
  int64_t ws = p[FT_CV_PACKED] ? 16 : 1;
  for (int64_t pl = lo; pl < hi; pl++) {
    int64_t ch = pl % C;
    const float *x = (const float *)c->X + pl * IHW, *w = c->W + (ws == 1 ? ch * KHW : ft_dw_packed_at(ch, 0, KHW));
    float *y = c->Y + pl * OHW, b0 = c->bias ? c->bias[ch] : 0.0f;
    const float *res = c->R ? c->R + pl * OHW : NULL;
    if (geo->rows) ft_conv_dw_plane_bands(p, geo, x, w, ws, b0, y, res, c->e);
    else {
      ft_conv_dw_plane_taps(p, x, w, ws, b0, y);
      ft_gemm_finish(y, res, OHW, c->e);
    }
  }
}

/* Planes [lo, hi) with X or Y blocked (FT_CV_LAYOUT) where the channel-vector path is not
 * compiled in (no AVX-512: the compiler marks only convs that path takes, so this is other
 * targets' build of the same program): the taps' plain loops, reading and writing channel ch 16
 * floats apart on a blocked side. A blocked Y has no residual (ft_conv_blocked_side): each row
 * goes through the activation in a buffer, then into the block. */
static void ft_conv_dw_xblk_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_dw_ctx *c = (const ft_dw_ctx *)ctx;
  const int64_t *p = c->p, C = p[FT_CV_C], IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], OH = p[FT_CV_OUT + 1];
  const int64_t OW = p[FT_CV_OUT + 2], KH = p[FT_CV_K + 1], KW = p[FT_CV_K + 2], sh = p[FT_CV_S + 1];
  const int64_t sw = p[FT_CV_S + 2], dh = p[FT_CV_D + 1], dw = p[FT_CV_D + 2], ph = p[FT_CV_P + 1], pw = p[FT_CV_P + 2];
  int64_t ws = p[FT_CV_PACKED] ? 16 : 1, xs = p[FT_CV_LAYOUT] & FT_CV_X_BLOCKED ? 16 : 1;
  int yblk = (p[FT_CV_LAYOUT] & FT_CV_Y_BLOCKED) != 0;
  float row[FT_DWV_OUTPIX]; /* OW fits: ft_dwv_geometry took this conv */
  for (int64_t pl = lo; pl < hi; pl++) {
    int64_t ch = pl % C;
    const float *x = (const float *)c->X + (xs == 16 ? (pl - ch + ch / 16 * 16) * IH * IW + ch % 16 : pl * IH * IW);
    const float *w = c->W + (ws == 1 ? ch * KH * KW : ch / 16 * 16 * KH * KW + ch % 16);
    float *y = c->Y + (yblk ? (pl - ch + ch / 16 * 16) * OH * OW + ch % 16 : pl * OH * OW), b0 = c->bias ? c->bias[ch] : 0.0f;
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = yblk ? row : y + oh * OW;
      for (int64_t ow = 0; ow < OW; ow++) {
        float acc = b0;
        for (int64_t kh = 0; kh < KH; kh++) {
          int64_t ih = oh * sh + kh * dh - ph;
          for (int64_t kw = 0; kw < KW && ih >= 0 && ih < IH; kw++) {
            int64_t iw = ow * sw + kw * dw - pw;
            if (iw >= 0 && iw < IW) acc += w[(kh * KW + kw) * ws] * x[(ih * IW + iw) * xs];
          }
        }
        yr[ow] = acc;
      }
      if (yblk) {
        ft_gemm_finish(row, NULL, OW, c->e);
        for (int64_t ow = 0; ow < OW; ow++) y[(oh * OW + ow) * 16] = row[ow];
      }
    }
    if (!yblk) ft_gemm_finish(y, c->R ? c->R + pl * OH * OW : NULL, OH * OW, c->e);
  }
}

#if FT_DWV_PATH
/* Items [lo, hi) of the channel-vector path: (image, block of 16 channels, band of output
 * rows), bands fastest. Bands are items too so that a layer of few channels on a large plane
 * (32 channels at 112x112: 2 blocks) splits evenly over the threads. */
static void ft_conv_dwv_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_dw_ctx *c = (const ft_dw_ctx *)ctx;
  const ft_dwv_geo *g = (const ft_dwv_geo *)c->geo;
  int64_t nb = (c->p[FT_CV_C] + 15) / 16, OH = c->p[FT_CV_OUT + 1], bands = (OH + g->band - 1) / g->band;
  for (int64_t it = lo; it < hi; it++) {
    int64_t blk = it / bands, oh0 = it % bands * g->band, oh1 = oh0 + g->band < OH ? oh0 + g->band : OH;
#ifdef __AVX512F__
    ft_dwv_item(c->p, g, c->row, c->X, c->W, c->bias, c->R, c->Y, c->e, blk / nb, blk % nb * 16, oh0, oh1, c->q);
#else
    ft_dwn_item(c->p, g, c->row, (const float *)c->X, c->W, c->bias, c->R, c->Y, c->e, blk / nb, blk % nb * 16, oh0, oh1);
#endif
  }
}
#endif

static void ft_conv_depthwise(const int64_t *p, const float *X, const float *W, const float *bias,
                              const float *R, float *Y, const ft_gemm_epi *e) {
  int64_t planes = p[FT_CV_N] * p[FT_CV_C];
  int64_t OHW = p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2], KHW = p[FT_CV_K + 1] * p[FT_CV_K + 2];
  int par = planes * OHW * KHW > FT_DW_PAR_MACS;
#if FT_DWV_PATH
  ft_dwv_geo gv;
  if (ft_dwv_geometry(p, &gv) && FT_DWV_LAYOUT_OK(p)) {
    ft_dw_ctx c = {p, &gv, NULL, X, W, bias, R, Y, e, ft_dwv_row_for(p, &gv)};
    int64_t bands = (p[FT_CV_OUT + 1] + gv.band - 1) / gv.band;
    ft_parallel_for(p[FT_CV_N] * ((p[FT_CV_C] + 15) / 16) * bands, par, ft_conv_dwv_run, &c);
    return;
  }
  ft_dw_geo geo;
  ft_dw_ctx c = {p, &geo, NULL, X, W, bias, R, Y, e, NULL};
#else
  ft_dw_geo geo;
  ft_dw_ctx c = {p, &geo, NULL, X, W, bias, R, Y, e};
#endif
  if (p[FT_CV_LAYOUT] & (FT_CV_X_BLOCKED | FT_CV_Y_BLOCKED)) {
    ft_parallel_for(planes, par, ft_conv_dw_xblk_run, &c);
    return;
  }
  ft_dw_geometry(p, &geo);
  ft_parallel_for(planes, par, ft_conv_dw_planes_run, &c);
}

/* ---- ftax.QDQConv of a depthwise conv (compiler/fuse/fuse_qdq.c) --------------------------------
 * QuantizeLinear(x) -> DequantizeLinear -> Conv(group = C) with a DequantizeLinear'd constant
 * weight as one kernel: y[c] = (sum over taps of (xq - zx) * wq[c]) * (x_scale * w_scale[c])
 * (+ bias[c] in one fma), then the activation. The sums are exact (ft_dw_quant), so the result is
 * what the int8 core would give, and the same on both paths: the channel-vector path (AVX-512,
 * packed weights, a geometry it takes), the input quantized while its rows are loaded into the
 * ring and no pass over memory beside the conv's own; else plain loops. Where the conv before it
 * quantizes its own output (pass qdq_out), x is that 8-bit xq (FT_QDW_XQ), read as xq - zx: a
 * quarter of the bytes, and the same sums.
 * in: x (float32, or uint8 / int8 by FT_QDW_XQ), x_scale, x_zero_point (uint8 or int8, optional), w (int8 or uint8 [C, 1, kh,
 * kw]; packed: ft_conv_qdw_pack_w), w_scale (1 or C), w_zero_point (0: the pass fuses no other;
 * not read), bias (float32 [C], optional). p: conv's (FT_CV_*, mode depthwise), then FT_QDW_*.
 * f: conv's [alpha, beta, clip lo, clip hi]. Scratch: C floats (the scales). */
enum {
  FT_QDW_XZ = FT_CV_NP, /* x's zero point: 0 none, 1 uint8, 2 int8 (quantized to int8) */
  FT_QDW_W_SIGNED,      /* w is int8 (else uint8) */
  FT_QDW_NWS,           /* w_scale values: 1 or C */
  FT_QDW_XQ,            /* x is already quantized: 0 no (float32), 1 uint8, 2 int8 */
  FT_QDW_NP
};
#define FT_QDW_MAXTAPS 256 /* 256 * 255 * 255 < 2^24: every partial sum is an exact float */

/* w as ft_conv_dw_pack_w lays out floats: its integers as floats */
static size_t ft_conv_qdw_pack_w(const int64_t *p, const void *src, void *dst) {
  return ft_conv_dw_pack_as(p, src, p[FT_QDW_W_SIGNED] ? 1 : 2, (float *)dst);
}

typedef struct {
  const int64_t *p;
  const ft_dw_quant *q;
  const void *X; /* float32, or 8-bit (q->x8) */
  const float *bias;
  const void *W;
  float *Y;
  const ft_gemm_epi *e;
} ft_qdw_ctx;

/* Planes [lo, hi) by plain loops, each input value quantized where a tap reads it. */
static void ft_conv_qdw_planes_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_qdw_ctx *c = (const ft_qdw_ctx *)ctx;
  const int64_t *p = c->p;
  int64_t C = p[FT_CV_C], IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], OH = p[FT_CV_OUT + 1], OW = p[FT_CV_OUT + 2];
  int64_t KH = p[FT_CV_K + 1], KW = p[FT_CV_K + 2], sh = p[FT_CV_S + 1], sw = p[FT_CV_S + 2];
  int64_t dh = p[FT_CV_D + 1], dw = p[FT_CV_D + 2], ph = p[FT_CV_P + 1], pw = p[FT_CV_P + 2], T = KH * KW;
  for (int64_t pl = lo; pl < hi; pl++) {
    int64_t ch = pl % C;
    const void *x = (const char *)c->X + pl * IH * IW * (c->q->x8 ? 1 : (int64_t)sizeof(float));
    float *y = c->Y + pl * OH * OW, sc = c->q->scale[ch];
    float w[FT_QDW_MAXTAPS];
    for (int64_t t = 0; t < T; t++)
      w[t] = p[FT_CV_PACKED] ? ((const float *)c->W)[ft_dw_packed_at(ch, t, T)]
             : p[FT_QDW_W_SIGNED] ? (float)((const int8_t *)c->W)[ch * T + t]
                                  : (float)((const uint8_t *)c->W)[ch * T + t];
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        float acc = 0.0f;
        for (int64_t kh = 0; kh < KH; kh++) {
          int64_t ih = oh * sh - ph + kh * dh;
          if (ih < 0 || ih >= IH) continue;
          for (int64_t kw = 0; kw < KW; kw++) {
            int64_t iw = ow * sw - pw + kw * dw;
            if (iw >= 0 && iw < IW) acc += ft_dwq_at(x, ih * IW + iw, c->q) * w[kh * KW + kw];
          }
        }
        y[oh * OW + ow] = c->bias ? __builtin_fmaf(acc, sc, c->bias[ch]) : acc * sc;
      }
    ft_gemm_act(y, OH * OW, c->e);
  }
}

static void ft_conv_qdw_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                            void *scratch) {
  const void *X = in[0];
  const float xs = *(const float *)in[1], *ws = (const float *)in[4];
  const float *bias = p[FT_CV_HAS_BIAS] ? (const float *)in[6] : NULL;
  float *Y = (float *)out[0], *scale = (float *)scratch;
  int64_t C = p[FT_CV_C], zk = p[FT_QDW_XZ];
  for (int64_t c = 0; c < C; c++) scale[c] = xs * ws[p[FT_QDW_NWS] > 1 ? c : 0]; /* as the int8 core's */
  float z = zk == 1 ? (float)*(const uint8_t *)in[2] : zk == 2 ? (float)*(const int8_t *)in[2] : 0.0f;
  ft_dw_quant q = {xs, z, zk == 2 ? -128.0f : 0.0f, zk == 2 ? 127.0f : 255.0f, scale, (int)p[FT_QDW_XQ]};
  ft_gemm_epi e = {1, 1, NULL, 1, 0, (int)p[FT_CV_ACT], (float)f[2], (float)f[3], NULL, 0};
  int64_t planes = p[FT_CV_N] * C, OHW = p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  int par = planes * OHW * ft_conv_kg(p) > FT_DW_PAR_MACS;
#ifdef __AVX512F__
  ft_dwv_geo gv;
  if (p[FT_CV_PACKED] && ft_dwv_geometry(p, &gv)) {
    ft_dw_ctx c = {p, &gv, &q, X, (const float *)in[3], bias, NULL, Y, &e, ft_dwv_row_for(p, &gv)};
    int64_t bands = (p[FT_CV_OUT + 1] + gv.band - 1) / gv.band;
    ft_parallel_for(p[FT_CV_N] * ((C + 15) / 16) * bands, par, ft_conv_dwv_run, &c);
    return;
  }
#endif
  ft_qdw_ctx c = {p, &q, X, bias, in[3], Y, &e};
  ft_parallel_for(planes, par, ft_conv_qdw_planes_run, &c);
}

/* Shifted mode geometry. The padded input of one group, [C_in/g, Hp, Wp], is stored as
 * sh*sw phase planes per channel (rows and columns split by their remainder mod the stride;
 * one plane when the stride is 1), each Hq x Wq. Output (oh, ow) is column oh*Wq + ow of C,
 * and tap (kh, kw) reads its phase plane at row oh + kh*dh/sh, column ow + kw*dw/sw: one fixed
 * offset per B row. A zero tail absorbs the last taps of the widest rows. */
typedef struct ft_conv_shift { int64_t sh, sw, Hp, Wp, Hq, Wq, plane, chan, floats; } ft_conv_shift;

static inline ft_conv_shift ft_conv_shift_geo(const int64_t *p) {
  ft_conv_shift q;
  q.sh = p[FT_CV_S + 1];
  q.sw = p[FT_CV_S + 2];
  q.Hp = (p[FT_CV_OUT + 1] - 1) * q.sh + (p[FT_CV_K + 1] - 1) * p[FT_CV_D + 1] + 1;
  q.Wp = (p[FT_CV_OUT + 2] - 1) * q.sw + (p[FT_CV_K + 2] - 1) * p[FT_CV_D + 2] + 1;
  q.Hq = (q.Hp + q.sh - 1) / q.sh;
  q.Wq = (q.Wp + q.sw - 1) / q.sw;
  q.plane = q.Hq * q.Wq;
  q.chan = q.sh * q.sw * q.plane;
  q.floats = (p[FT_CV_C] / p[FT_CV_G] * q.chan + q.Wq + (p[FT_CV_K + 2] - 1) * p[FT_CV_D + 2] + 16 + 15) / 16 * 16;
  return q;
}

/* Scratch: one im2col chunk, or the padded input and B's row offsets (shifted mode). */
static inline size_t ft_conv_scratch(const int64_t *p) {
  if (p[FT_CV_MODE] == FT_CV_IM2COL || p[FT_CV_MODE] == FT_CV_IM2COL_T)
    return sizeof(float) * (size_t)(ft_conv_kg(p) * p[FT_CV_CHUNK]);
  if (p[FT_CV_MODE] == FT_CV_SHIFTED)
    return sizeof(float) * (size_t)ft_conv_shift_geo(p).floats + sizeof(int64_t) * (size_t)ft_conv_kg(p);
  return 0;
}

/* Shifted mode, one channel of one group: its zero-padded phase planes. */
static void ft_conv_pad_channel(const int64_t *p, const ft_conv_shift *q, const float *x, int64_t ci,
                                float *xp) {
  int64_t IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], ph = p[FT_CV_P + 1], pw = p[FT_CV_P + 2];
  int64_t sh = q->sh, sw = q->sw, Wq = q->Wq;
  const float *xc = x + ci * IH * IW;
  float *dst = xp + ci * q->chan;
  int64_t j0[FT_DW_MAXS], j1[FT_DW_MAXS]; /* per column phase b (sw <= 4): the columns from the input */
  for (int64_t b = 0; b < sw; b++) { /* padded column j*sw + b is input column j*sw + b - pw */
    j0[b] = pw - b <= 0 ? 0 : (pw - b + sw - 1) / sw;
    j1[b] = (IW + pw - b + sw - 1) / sw;
    if (j1[b] > Wq) j1[b] = Wq;
    if (j0[b] > j1[b]) j0[b] = j1[b];
  }
  for (int64_t a = 0; a < sh; a++)
    for (int64_t i = 0; i < q->Hq; i++) { /* padded row h = i*sh + a is input row h - ph */
      int64_t h = i * sh + a, ih = h - ph;
      int inside = h < q->Hp && ih >= 0 && ih < IH;
      const float *src = xc + ih * IW - pw;
      if (sw == 2 && inside) { /* both column phases of the row at once, vectorized */
        float *d0 = dst + (a * 2) * q->plane + i * Wq, *d1 = d0 + q->plane;
        int64_t lo = j0[0] > j0[1] ? j0[0] : j0[1], hi = j1[0] < j1[1] ? j1[0] : j1[1];
        if (hi < lo) hi = lo;
        memset(d0, 0, sizeof(float) * (size_t)j0[0]);
        memset(d1, 0, sizeof(float) * (size_t)j0[1]);
        for (int64_t j = j0[0]; j < lo; j++) d0[j] = src[2 * j];
        for (int64_t j = j0[1]; j < lo; j++) d1[j] = src[2 * j + 1];
        ft_dw_deinterleave2(d0 + lo, d1 + lo, src + 2 * lo, hi - lo);
        for (int64_t j = hi; j < j1[0]; j++) d0[j] = src[2 * j];
        for (int64_t j = hi; j < j1[1]; j++) d1[j] = src[2 * j + 1];
        memset(d0 + j1[0], 0, sizeof(float) * (size_t)(Wq - j1[0]));
        memset(d1 + j1[1], 0, sizeof(float) * (size_t)(Wq - j1[1]));
        continue;
      }
      for (int64_t b = 0; b < sw; b++) {
        float *row = dst + (a * sw + b) * q->plane + i * Wq;
        int64_t lo = inside ? j0[b] : 0, hi = inside ? j1[b] : 0;
        if (lo) memset(row, 0, sizeof(float) * (size_t)lo);
        if (sw == 1) ft_copy_floats(row + lo, src + lo, hi - lo);
        else if (sw == 2) for (const float *sb = src + b; lo < hi; lo++) row[lo] = sb[2 * lo];
        else for (; lo < hi; lo++) row[lo] = src[lo * sw + b];
        if (hi < Wq) memset(row + hi, 0, sizeof(float) * (size_t)(Wq - hi));
      }
    }
}

/* The residual input, when there is one. Out of line: callers that pass three inputs would
 * otherwise get array-bounds warnings for a read they never reach. */
static __attribute__((noinline)) const float *ft_conv_residual(const int64_t *p, const void *const *in) {
  return p[FT_CV_RES] ? (const float *)in[3] : NULL;
}

/* One Conv call as its parallel loops see it: the current group (xg) and, for the shifted and
 * im2col modes, the buffer col being filled. */
typedef struct {
  const int64_t *p;
  const ft_conv_shift *q;
  const float *xg;
  float *col;
  int64_t c0, nc;
} ft_conv_ctx;

/* Shifted mode: channels [lo, hi) of the group padded into col (index Cg: the zero tail). */
static void ft_conv_pad_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_conv_ctx *c = (const ft_conv_ctx *)ctx;
  const int64_t Cg = c->p[FT_CV_C] / c->p[FT_CV_G];
  for (int64_t ci = lo; ci < hi; ci++) {
    if (ci < Cg) ft_conv_pad_channel(c->p, c->q, c->xg, ci, c->col);
    else for (int64_t i = Cg * c->q->chan; i < c->q->floats; i++) c->col[i] = 0;
  }
}

/* im2col mode: rows [lo, hi) of the column chunk [c0, c0 + nc). */
static void ft_conv_im2col_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_conv_ctx *c = (const ft_conv_ctx *)ctx;
  for (int64_t kr = lo; kr < hi; kr++) ft_conv_im2col_row(c->p, c->xg, kr, c->c0, c->nc, c->col + kr * c->nc);
}

/* Shifted mode: row kr = (ci, kh, kw) of B starts at rowoff[kr], as W is laid out. */
static void ft_conv_shift_rowoff(const int64_t *p, const ft_conv_shift *q, int64_t *rowoff) {
  int64_t KH = p[FT_CV_K + 1], KW = p[FT_CV_K + 2], dh = p[FT_CV_D + 1], dw = p[FT_CV_D + 2];
  int64_t Cg = p[FT_CV_C] / p[FT_CV_G];
  for (int64_t t = 0; t < KH * KW; t++) {
    int64_t rw = t % KW * dw, rh = t / KW * dh;
    int64_t off = ((rh % q->sh) * q->sw + rw % q->sw) * q->plane + rh / q->sh * q->Wq + rw / q->sw;
    for (int64_t ci = 0; ci < Cg; ci++) rowoff[ci * KH * KW + t] = ci * q->chan + off;
  }
}

/* The GEMM of group (n, g) with B given by the caller. */
static inline ft_gemm_op ft_conv_group_gemm(const int64_t *p, const ft_gemm_op *g0, const float *W,
                                            const float *bias, const float *R, float *Y, int64_t n,
                                            int64_t g) {
  int64_t CO = p[FT_CV_CO], Mg = CO / p[FT_CV_G], S_out = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  ft_gemm_op gi = *g0;
  if (p[FT_CV_PACKED]) gi.ap = W + g * ft_gemm_packed_a_floats(Mg, g0->K);
  else gi.a = W + g * Mg * g0->K;
  gi.c = Y + (n * CO + g * Mg) * S_out;
  if (R) gi.e.res = R + (n * CO + g * Mg) * S_out;
  if (bias) gi.e.bias = bias + g * Mg;
  return gi;
}

/* ---- pointwise conv, transposed (FT_CV_POINTWISE_T) ----------------------------------------
 * The pointwise GEMM the other way round: out^T [HW, C_out] = X^T [HW, C_in] x W^T [C_in,
 * C_out], with the vectors along C_out. Along HW, a 7x7 plane (49 outputs) fills 49 of the 64
 * lanes of two vectors and every tile row ends at the plane's end; along C_out (a multiple of
 * 16 in most models) the lanes are full, and the HW rows of a tile are split evenly (49 = 13 +
 * 12 + 12 + 12), each row a broadcast. W^T is packed at compile time as the GEMM's B panels
 * (ft_conv_pack_w); X is read in place: for channel k, the tile's HW rows X[k][hw0, hw0 + mr)
 * are contiguous, so its broadcasts walk X with the plane's stride and need no packing. Each
 * tile is summed over all of C_in in registers (k in order, one FMA per step: the same sum as
 * the direct GEMM path), then transposed 16x16 in registers so that each output channel's mr
 * outputs are one vector: bias (per channel), residual, activation and a masked store into
 * NCHW, as ft_gemm_epi16 does for the other orientation. An in-place residual is read
 * element by element before the same element is written. Without AVX-512 the ISA's register
 * tile (ukernels/) sums into a small buffer, which ft_pwt_store_nchw transposes into NCHW. With Y blocked (FT_CV_Y_BLOCKED: a depthwise
 * conv reads it next, compiler/passes/blocked.c) there is no transpose: each row's accumulator
 * is its pixel's 16 channels, stored whole after bias and activation. */
#define FT_PWT_MR 14 /* HW rows of a tile: 2 * 14 accumulators + 2 B vectors fit 32 zmm */

/* Where a tile's results go: output and residual planes of one (image, group), bias of the
 * group, the plane's length (row stride of X, Y and R). */
typedef struct ft_pwt_out {
  float *y;
  const float *res, *bias, *x;
  int64_t xs, ys;
  const ft_gemm_epi *e;
  int yblk; /* Y blocked (FT_CV_Y_BLOCKED): no residual, output channels a multiple of 16 */
  int xblk; /* X blocked (FT_CV_X_BLOCKED): input channels a multiple of 16, K steps of 16 */
  /* NULL, or this tile's slice of the next W panel, pfs bytes of it prefetched a k step
   * (ft_prefetch_step, ft_pwt_run). A layer on a small plane (ResNet-50's last stage: 4-9 MB
   * of weights per conv) took 1.5x its in-cache time without. */
  const char *pf;
  int64_t pfs;
} ft_pwt_out;

/* Output channels co0 + [0, nc) (nc <= 16) of HW rows [hw0, hw0 + mr) from one accumulator
 * vector per row (lane j: channel co0 + j), through the epilogue. */
static inline __attribute__((always_inline)) void ft_pwt_store(const int mr, ft_v16f *acc, const ft_pwt_out *o,
                                                               int64_t hw0, int64_t co0, int nc) {
  const ft_gemm_epi *e = o->e;
  if (o->yblk) { /* each row's vector is its pixel's 16 channels: no transpose, one store per row */
    float *yb = o->y + co0 * o->ys + hw0 * 16; /* block co0 / 16 (nc is 16) */
    ft_v16f bv = {0};
    if (o->bias) bv = *(const ft_v16u *)(o->bias + co0) * e->beta;
#ifdef __AVX512F__
    __m512 lo, hi;
    if (ft_gemm_clamp_of(e, &lo, &hi)) {
      __m512 alpha = _mm512_set1_ps(e->alpha);
#pragma GCC unroll 16
      for (int i = 0; i < mr; i++)
        _mm512_storeu_ps(yb + 16 * i, ft_gemm_clamp16(_mm512_fmadd_ps(alpha, (__m512)acc[i], (__m512)bv), lo, hi, e->act));
      return;
    }
#endif
    for (int i = 0; i < mr; i++) {
      ft_v16f y = acc[i] * e->alpha + bv;
      ft_gemm_act16(&y, e);
      *(ft_v16u *)(yb + 16 * i) = y;
    }
    return;
  }
#ifdef __AVX512F__
  __m512 r[16], lo, hi;
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) r[i] = i < mr ? (__m512)acc[i] : _mm512_setzero_ps();
  ft_transpose16(r); /* r[j]: channel co0 + j, lanes the mr rows */
  if (ft_gemm_clamp_of(e, &lo, &hi)) { /* straight from the registers: see ft_gemm_dir_store_clamp */
    __m512 alpha = _mm512_set1_ps(e->alpha);
    __mmask16 m = (__mmask16)((1u << mr) - 1);
    int res = o->res != NULL, after = e->res_after;
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) {
      if (j >= nc) break;
      int64_t at = (co0 + j) * o->ys + hw0;
      __m512 y = _mm512_fmadd_ps(alpha, r[j], _mm512_set1_ps(o->bias ? e->beta * o->bias[co0 + j] : 0.0f));
      __m512 rv = res ? _mm512_maskz_loadu_ps(m, o->res + at) : _mm512_setzero_ps();
      if (res && !after) y = _mm512_add_ps(y, rv);
      y = _mm512_min_ps(hi, _mm512_max_ps(lo, y));
      if (res && after) y = _mm512_add_ps(y, rv);
      _mm512_mask_storeu_ps(o->y + at, m, y);
    }
    return;
  }
#endif
  for (int j = 0; j < nc; j++) {
    ft_v16f y;
#ifdef __AVX512F__
    y = (ft_v16f)r[j];
#else
    float b[16] __attribute__((aligned(64))) = {0};
    for (int i = 0; i < mr; i++) b[i] = acc[i][j];
    y = *(const ft_v16f *)b;
#endif
    int64_t co = co0 + j, at = co * o->ys + hw0;
    y = y * e->alpha + (o->bias ? e->beta * o->bias[co] : 0.0f);
    ft_gemm_epi16(o->y + at, &y, o->res ? o->res + at : NULL, mr, e);
  }
}

#if FT_ISA != FT_ISA_AVX512
/* Off AVX-512: the tile t (mr <= 16 pixels x 32 channels, NR apart) into NCHW. The tile is
 * transposed (ukernels/vec.h: 8x8 blocks on AVX2, 4x4 on NEON) so that each channel's mr
 * outputs are a row of native vectors; then alpha and bias, the residual (read before the output
 * is written: an in-place residual), the activation on the row (ft_gemm_act: the ISA's vectors),
 * and a store of exactly mr floats. Gathered a float at a time, with a memcpy per channel, this
 * took a third of the conv's time on AVX2 (128 -> 512 channels at 28x28, with a residual). */
static void ft_pwt_store_nchw(int mr, const float *t, const ft_pwt_out *o, int64_t hw0, int64_t co0, int nc) {
  const ft_gemm_epi *e = o->e;
  float tt[32 * 16] __attribute__((aligned(64)));
  ft_uk_transpose_t(t, mr, tt);
  const int nv = (mr + FT_VLEN - 1) / FT_VLEN, after = e->res_after;
  const float alpha = e->alpha;
  for (int j = 0; j < nc; j++) {
    int64_t co = co0 + j, at = co * o->ys + hw0;
    float *row = tt + 16 * j;
    const ft_vn bv = (ft_vn){0} + (o->bias ? e->beta * o->bias[co] : 0.0f);
    const float *r = o->res ? o->res + at : NULL;
    for (int v = 0; v < nv; v++) {
      ft_vn y = *(const ft_vn *)(row + FT_VLEN * v) * alpha + bv;
      if (r && !after) y += ft_vn_loadn(r + FT_VLEN * v, mr - FT_VLEN * v);
      *(ft_vn *)(row + FT_VLEN * v) = y;
    }
    if (e->act) ft_gemm_act(row, (int64_t)nv * FT_VLEN, e);
    for (int v = 0; v < nv; v++) {
      ft_vn y = *(const ft_vn *)(row + FT_VLEN * v);
      if (r && after) y += ft_vn_loadn(r + FT_VLEN * v, mr - FT_VLEN * v);
      ft_vn_storen(o->y + at + FT_VLEN * v, y, mr - FT_VLEN * v);
    }
  }
}
#endif

#if FT_ISA != FT_ISA_AVX512
/* Off AVX-512, X blocked (only a program planned for AVX-512 and built for this ISA has it):
 * t (mr rows, NR apart; 16 nv columns) summed as the AVX-512 tile does (k in order, one
 * multiply-add a step), a row at a time on the ISA's vectors. Slow and out of the tiles' way. */
static __attribute__((noinline)) void ft_pwt_sums_xblk(int mr, int nv, int64_t K, const float *bp, const ft_pwt_out *o,
                                                       int64_t hw0, float *t) {
  const int nvec = 16 * nv / FT_VLEN;
  for (int i = 0; i < mr; i++) {
    ft_vn acc[32 / FT_VLEN];
    for (int v = 0; v < nvec; v++) acc[v] = (ft_vn){0};
    const float *x = o->x + hw0 * 16 + 16 * i, *b = bp;
    for (int64_t k0 = 0; k0 < K; k0 += 16, x += 16 * o->xs)
      for (int kk = 0; kk < 16; kk++, b += FT_GEMM_NR)
        for (int v = 0; v < nvec; v++) acc[v] += x[kk] * *(const ft_vnu *)(b + FT_VLEN * v);
    for (int v = 0; v < nvec; v++) *(ft_vnu *)(t + i * FT_GEMM_NR + FT_VLEN * v) = acc[v];
  }
}
#endif

/* One tile: HW rows [hw0, hw0 + mr) x the B panel bp (32 channels from co0, nc of them real;
 * nv = 1 when nc <= 16: the second vector would only hold zeros). */
static inline __attribute__((always_inline)) void ft_pwt_tile(const int mr, const int nv, int64_t K, const float *bp,
                                                              const ft_pwt_out *o, int64_t hw0, int64_t co0, int nc) {
#if FT_ISA != FT_ISA_AVX512
  /* the ISA's register tile (ukernels/): pixel i's channel k at x[i + k xs] */
  float t[FT_PWT_MR * FT_GEMM_NR] __attribute__((aligned(64)));
  if (!o->xblk) ft_uk_tile(mr, 16 * nv, K, o->x + hw0, 1, o->xs, bp, t, (const float *)o->pf, o->pfs);
  else ft_pwt_sums_xblk(mr, nv, K, bp, o, hw0, t);
  if (o->yblk) {
    ft_v16f acc[FT_PWT_MR];
    for (int h = 0; h < nv; h++) {
      for (int i = 0; i < mr; i++) acc[i] = *(const ft_v16u *)(t + i * FT_GEMM_NR + 16 * h);
      ft_pwt_store(mr, acc, o, hw0, co0 + 16 * h, 16);
    }
  } else {
    ft_pwt_store_nchw(mr, t, o, hw0, co0, nc);
  }
#else
  ft_v16f c0[FT_PWT_MR], c1[FT_PWT_MR];
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) { c0[i] = (ft_v16f){0}; c1[i] = (ft_v16f){0}; }
  int64_t xs = o->xs;
  if (o->xblk) { /* channel k of row i at x[k / 16 * 16 xs + 16 i + k % 16]: same products, same order */
    const float *x = o->x + hw0 * 16;
    const char *pf = o->pf;
    for (int64_t k0 = 0; k0 < K; k0 += 16, x += 16 * xs)
      for (int kk = 0; kk < 16; kk++) {
        pf = ft_prefetch_step(pf, o->pfs);
        ft_v16f b0 = *(const ft_v16u *)bp, b1 = {0};
        if (nv == 2) b1 = *(const ft_v16u *)(bp + 16);
#pragma GCC unroll 16
        for (int i = 0; i < mr; i++) {
          c0[i] += x[16 * i + kk] * b0;
          if (nv == 2) c1[i] += x[16 * i + kk] * b1;
        }
        bp += FT_GEMM_NR;
      }
    ft_pwt_store(mr, c0, o, hw0, co0, nc < 16 ? nc : 16);
    if (nv == 2) ft_pwt_store(mr, c1, o, hw0, co0 + 16, nc - 16);
    return;
  }
  const float *x = o->x + hw0;
  const char *pf = o->pf;
  for (int64_t k = 0; k < K; k++) {
    pf = ft_prefetch_step(pf, o->pfs);
    ft_v16f b0 = *(const ft_v16u *)bp, b1 = {0};
    if (nv == 2) b1 = *(const ft_v16u *)(bp + 16);
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      c0[i] += x[i] * b0;
      if (nv == 2) c1[i] += x[i] * b1;
    }
    x += xs;
    bp += FT_GEMM_NR;
  }
  ft_pwt_store(mr, c0, o, hw0, co0, nc < 16 ? nc : 16);
  if (nv == 2) ft_pwt_store(mr, c1, o, hw0, co0 + 16, nc - 16);
#endif
}

typedef void (*ft_pwt_fn)(int64_t, const float *, const ft_pwt_out *, int64_t, int64_t, int);
#define FT_PWT_TILE(MR_, NV_)                                                                        \
  static void ft_pwt_tile_##MR_##_##NV_(int64_t K, const float *bp, const ft_pwt_out *o, int64_t hw0, \
                                        int64_t co0, int nc) {                                       \
    ft_pwt_tile(MR_, NV_, K, bp, o, hw0, co0, nc);                                                   \
  }
#define FT_PWT_TILES(MR_) FT_PWT_TILE(MR_, 1) FT_PWT_TILE(MR_, 2)
FT_PWT_TILES(1) FT_PWT_TILES(2) FT_PWT_TILES(3) FT_PWT_TILES(4) FT_PWT_TILES(5) FT_PWT_TILES(6) FT_PWT_TILES(7)
FT_PWT_TILES(8) FT_PWT_TILES(9) FT_PWT_TILES(10) FT_PWT_TILES(11) FT_PWT_TILES(12) FT_PWT_TILES(13) FT_PWT_TILES(14)
#undef FT_PWT_TILES
#undef FT_PWT_TILE
#define FT_PWT_ROW_(MR_) {ft_pwt_tile_##MR_##_1, ft_pwt_tile_##MR_##_2},
static const ft_pwt_fn ft_pwt_tiles[FT_PWT_MR + 1][2] = {
    {NULL, NULL}, FT_PWT_ROW_(1) FT_PWT_ROW_(2) FT_PWT_ROW_(3) FT_PWT_ROW_(4) FT_PWT_ROW_(5) FT_PWT_ROW_(6)
    FT_PWT_ROW_(7) FT_PWT_ROW_(8) FT_PWT_ROW_(9) FT_PWT_ROW_(10) FT_PWT_ROW_(11) FT_PWT_ROW_(12) FT_PWT_ROW_(13)
    FT_PWT_ROW_(14)};
#undef FT_PWT_ROW_

/* The transposed GEMMs of one call: ng (image, group) pairs, group g0 + i for pair i (mod G),
 * each with rows HW rows of X (row stride xs; pair i's X at x + i * x_ng) and output and
 * residual rows of stride ys (pair i's at y + i * y_ng). Work items are (pair, block of mc
 * rows, panel): each item sums its block's tiles of one panel over all of K in registers. */
typedef struct {
  const ft_gemm_epi *e;
  const float *W, *bias, *x, *res;
  float *y;
  int64_t G, g0, Mg, rows, xs, ys, x_ng, y_ng;
  int64_t mc, nb, np, panel_fast;
  const ft_pwt_fn (*tiles)[2]; /* the core's tiles: ft_pwt_tiles, or conv_bf16.h's on bf16 */
  int64_t ksteps, wper;        /* k steps of a W^T panel (bf16: pairs of k), 4-byte words per group's W^T */
  int yblk, xblk;              /* ft_pwt_out.yblk, .xblk */
} ft_pwt_ctx;

/* Block order: with several blocks, panel fastest re-reads W once per block and block fastest
 * re-reads X once per panel; take the order that reads less. Within a block the X rows (all
 * of K) stay in L2 while panels pass, or a panel stays while the blocks pass.
 * Threaded (items >= 1 wanted), the rows are cut into more blocks until there are that many
 * items: with few output channels (C_out 16: one panel) and a short K, the L2 rule gives the
 * whole plane one block, so one item, and a second thread had nothing to do. A block is at
 * least two tiles; only the W panel (K x 32 floats) is re-read per extra block. */
static inline void ft_pwt_blocking(ft_pwt_ctx *c, int64_t items) {
  int64_t K = c->ksteps > 0 ? c->ksteps : 1, mc = FT_GEMM_L2 / 2 / (4 * K) / FT_PWT_MR * FT_PWT_MR;
  if (mc < FT_PWT_MR) mc = FT_PWT_MR;
  c->np = (c->Mg + FT_GEMM_NR - 1) / FT_GEMM_NR;
  int64_t nb_min = (items + c->np - 1) / c->np;
  if (nb_min > 1) {
    int64_t cap = (c->rows + nb_min - 1) / nb_min;
    cap = (cap + FT_PWT_MR - 1) / FT_PWT_MR * FT_PWT_MR;
    if (cap < 2 * FT_PWT_MR) cap = 2 * FT_PWT_MR;
    if (cap < mc) mc = cap;
  }
  c->mc = mc < c->rows ? mc : c->rows;
  c->nb = (c->rows + c->mc - 1) / c->mc;
  c->panel_fast = c->nb == 1 || c->nb * c->Mg <= c->np * c->rows;
}

static void ft_pwt_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_pwt_ctx *c = (const ft_pwt_ctx *)ctx;
  const int64_t Mg = c->Mg;
  for (int64_t it = lo; it < hi; it++) {
    int64_t t = it % (c->nb * c->np), i = it / (c->nb * c->np), g = (c->g0 + i) % c->G;
    int64_t jr = c->panel_fast ? t % c->np : t / c->nb, blk = c->panel_fast ? t / c->np : t % c->nb;
    int64_t h0 = blk * c->mc, h1 = h0 + c->mc < c->rows ? h0 + c->mc : c->rows;
    ft_pwt_out o = {c->y + i * c->y_ng, c->res ? c->res + i * c->y_ng : NULL, c->bias ? c->bias + g * Mg : NULL,
                    c->x + i * c->x_ng, c->xs, c->ys, c->e, c->yblk, c->xblk, NULL, 0};
    const float *bp = c->W + g * c->wper + jr * c->ksteps * FT_GEMM_NR;
    int nc = Mg - jr * FT_GEMM_NR < FT_GEMM_NR ? (int)(Mg - jr * FT_GEMM_NR) : FT_GEMM_NR;
    /* the block's rows in ns tiles of nearly equal size (49 = 13 + 12 + 12 + 12) */
    int64_t rows = h1 - h0, ns = (rows + FT_PWT_MR - 1) / FT_PWT_MR, hw = h0;
    /* The next panel is read next: by the same block's next item in panel order, after the
       panel's last block in block order. It is cut into one slice per tile that runs before
       it (this item's tiles, or every block's tiles in block order); tile s takes its own. */
    const float *next = jr + 1 < c->np ? bp + c->ksteps * FT_GEMM_NR : NULL;
    int64_t slices = c->panel_fast ? ns : ns * c->nb, slice0 = c->panel_fast ? 0 : blk * ns;
    o.pfs = 4 * ((FT_GEMM_NR + slices - 1) / slices);
    for (int64_t s = 0; s < ns; s++) {
      int mr = (int)(rows / ns + (s < rows % ns));
      o.pf = next ? (const char *)next + (slice0 + s) * c->ksteps * o.pfs : NULL;
      c->tiles[mr][nc > 16](c->ksteps, bp, &o, hw, jr * FT_GEMM_NR, nc);
      hw += mr;
    }
  }
}

static void ft_pwt_gemms(ft_pwt_ctx *c, int64_t ng, int par) {
  if (c->rows <= 0 || c->Mg <= 0 || ng <= 0) return;
  /* 4 items per thread, for an even split by the pool's dynamic hand-out */
  ft_pwt_blocking(c, par ? (4 * (int64_t)ft_get_threads() + ng - 1) / ng : 0);
  ft_parallel_for(ng * c->nb * c->np, par, ft_pwt_run, c);
}

/* Pointwise: every (image, group) pair's input plane is its X. */
static void ft_conv_pointwise_t(const int64_t *p, const float *X, const float *W, const float *bias, const float *R,
                                float *Y, const ft_gemm_epi *e, int par) {
  int64_t G = p[FT_CV_G], Mg = p[FT_CV_CO] / G, Kg = p[FT_CV_C] / G;
  int64_t S = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  ft_pwt_ctx c = {e, W, bias, X, R, Y, G, 0, Mg, S, S, S, Kg * S, Mg * S, 0, 0, 0, 0,
                  ft_pwt_tiles, Kg, ft_gemm_packed_b_floats(Kg, Mg), (p[FT_CV_LAYOUT] & FT_CV_Y_BLOCKED) != 0,
                  (p[FT_CV_LAYOUT] & FT_CV_X_BLOCKED) != 0};
  ft_pwt_gemms(&c, p[FT_CV_N] * G, par);
}

/* Pointwise mode: items [lo, hi) over every (image, group) pair; B is the group's input. */
typedef struct {
  const int64_t *p;
  const ft_gemm_op *g0;
  const float *X, *W, *bias, *R;
  float *Y;
  int64_t mc, per;
} ft_conv_pw_ctx;

static void ft_conv_pw_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_conv_pw_ctx *c = (const ft_conv_pw_ctx *)ctx;
  const int64_t *p = c->p, G = p[FT_CV_G], C = p[FT_CV_C], Cg = C / G;
  for (int64_t it = lo; it < hi; it++) {
    int64_t ng = it / c->per, n = ng / G, g = ng % G;
    ft_gemm_op gi = ft_conv_group_gemm(p, c->g0, c->W, c->bias, c->R, c->Y, n, g);
    gi.b = c->X + (n * C + g * Cg) * c->g0->b_rs;
    ft_gemm_item(&gi, c->mc, it % c->per);
  }
}

/* The Conv kernel with another GEMM core's work item (ft_gemm_op.column) for the GEMM modes:
 * column NULL is the fp32 core; conv_bf16.h passes its own, with W packed for it. */
static void ft_conv_run(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch, void (*column)(const ft_gemm_op *, int64_t, int64_t, int64_t)) {
  const float *X = (const float *)in[0], *W = (const float *)in[1];
  const float *bias = p[FT_CV_HAS_BIAS] ? (const float *)in[2] : NULL;
  const float *R = ft_conv_residual(p, in);
  float *Y = (float *)out[0], *col = (float *)scratch;
  ft_gemm_epi e = {(float)f[0], (float)f[1], NULL, 1, 0, (int)p[FT_CV_ACT], (float)f[2], (float)f[3], NULL, p[FT_CV_RES] == 2};
  if (p[FT_CV_MODE] == FT_CV_DEPTHWISE) {
    ft_conv_depthwise(p, X, W, bias, R, Y, &e);
    return;
  }
  int64_t N = p[FT_CV_N], C = p[FT_CV_C], CO = p[FT_CV_CO], G = p[FT_CV_G];
  int64_t Cg = C / G, Kg = ft_conv_kg(p), chunk = p[FT_CV_CHUNK];
  int64_t S_in = p[FT_CV_IN] * p[FT_CV_IN + 1] * p[FT_CV_IN + 2];
  int64_t S_out = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  int par = N * CO * S_out * Kg > FT_GEMM_PAR_FLOPS;
  /* the transposed modes: W^T in B panels; with W not packed, the plain modes */
  int64_t mode = p[FT_CV_MODE] == FT_CV_POINTWISE_T ? FT_CV_POINTWISE
                 : p[FT_CV_MODE] == FT_CV_IM2COL_T  ? FT_CV_IM2COL : p[FT_CV_MODE];
  int tr = mode != p[FT_CV_MODE] && p[FT_CV_PACKED] && !column;
  if (tr && mode == FT_CV_POINTWISE) {
    ft_conv_pointwise_t(p, X, W, bias, R, Y, &e, par);
    return;
  }
  ft_gemm_op g0;
  memset(&g0, 0, sizeof g0);
  g0.M = CO / G; g0.K = Kg; g0.ldc = S_out;
  g0.a_rs = Kg; g0.a_cs = 1;
  g0.b_rs = S_in; g0.b_cs = 1;
  g0.b_direct = 1;
  g0.e = e;
  g0.column = column;
  /* rows per work item: A rows that fit L2 (the bf16 core's rows take half the bytes, and
     each item packs its input panel once, so the more rows the fewer repacks) */
  int64_t mc = ft_gemm_mc(g0.M, column ? (Kg + 1) / 2 : Kg);
  if (mode == FT_CV_POINTWISE) {
    g0.N = S_out;
    ft_conv_pw_ctx c = {p, &g0, X, W, bias, R, Y, mc, ft_gemm_items(&g0, mc)};
    ft_parallel_for(N * G * c.per, par, ft_conv_pw_run, &c);
    return;
  }
  ft_conv_shift q;
  memset(&q, 0, sizeof q);
  ft_conv_ctx c = {p, &q, NULL, col, 0, 0};
  int64_t *rowoff = NULL;
  if (mode == FT_CV_SHIFTED) {
    q = ft_conv_shift_geo(p);
    rowoff = (int64_t *)(col + q.floats);
    ft_conv_shift_rowoff(p, &q, rowoff);
  }
  for (int64_t ng = 0; ng < N * G; ng++) {
    int64_t n = ng / G, g = ng % G;
    c.xg = X + (n * C + g * Cg) * S_in;
    ft_gemm_op gi = ft_conv_group_gemm(p, &g0, W, bias, R, Y, n, g);
    gi.b = col;
    if (mode == FT_CV_SHIFTED) { /* one GEMM over the padded width, extra columns dropped */
      ft_parallel_for(Cg + 1, par, ft_conv_pad_run, &c);
      gi.N = p[FT_CV_OUT + 1] * q.Wq;
      gi.c_wrap = q.Wq;
      gi.c_keep = p[FT_CV_OUT + 2];
      gi.b_rowoff = rowoff;
      ft_gemm_run_par(&gi, mc, par);
      continue;
    }
    for (c.c0 = 0; c.c0 < S_out; c.c0 += chunk) { /* im2col, a chunk of output columns at a time */
      c.nc = S_out - c.c0 < chunk ? S_out - c.c0 : chunk;
      ft_parallel_for(Kg, par, ft_conv_im2col_run, &c);
      if (tr) { /* the chunk [Kg, nc] is X^T's rows */
        int64_t at = (n * CO + g * (CO / G)) * S_out + c.c0;
        ft_pwt_ctx t = {&e, W, bias, col, R ? R + at : NULL, Y + at, G, g, CO / G, c.nc, c.nc, S_out, 0, 0,
                        0, 0, 0, 0, ft_pwt_tiles, Kg, ft_gemm_packed_b_floats(Kg, CO / G), 0, 0};
        ft_pwt_gemms(&t, 1, par);
        continue;
      }
      ft_gemm_op gc = gi;
      gc.N = c.nc;
      gc.b_rs = c.nc;
      gc.c += c.c0;
      if (R) gc.e.res += c.c0;
      ft_gemm_run_par(&gc, mc, par);
    }
  }
}

/* in: X, W, optional B, the residual when p[FT_CV_RES]; f: [alpha, beta, clip lo, clip hi]
 * (alpha = beta = 1 for Conv). */
static void ft_conv_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch) {
  ft_conv_run(p, f, in, out, scratch, NULL);
}

/* ---- ConvTranspose ---------------------------------------------------------------------------
 * Same p layout, with in/out the input and output spatial sizes, C the input channels and CO
 * the output channels. Per group: cols [C_out/g * kernel, spatial_in] = W_g^T * X_g by the GEMM
 * core (W [C_in, C_out/g, kernel] read transposed, packed at compile time when constant), then
 * cols is added into Y at o = i*stride + k*dilation - pad (col2im), a chunk of columns at a
 * time. Each output channel is accumulated by one thread in a fixed order. */

static size_t ft_convt_pack_w(const int64_t *p, const void *src, void *dst) {
  int64_t G = p[FT_CV_G], Cg = p[FT_CV_C] / G;
  int64_t Mk = p[FT_CV_CO] / G * p[FT_CV_K] * p[FT_CV_K + 1] * p[FT_CV_K + 2];
  int64_t per = ft_gemm_packed_a_floats(Mk, Cg);
  size_t bytes = sizeof(float) * (size_t)(per * G);
  if (!dst) return bytes;
  for (int64_t g = 0; g < G; g++)
    ft_gemm_pack_a(Mk, Cg, (const float *)src + g * Cg * Mk, 1, Mk, (float *)dst + g * per);
  return bytes;
}

static inline size_t ft_convt_scratch(const int64_t *p) {
  int64_t Mk = p[FT_CV_CO] / p[FT_CV_G] * p[FT_CV_K] * p[FT_CV_K + 1] * p[FT_CV_K + 2];
  return sizeof(float) * (size_t)(Mk * p[FT_CV_CHUNK]);
}

/* Add cols rows of output channel plane y (one channel of one group) for input columns
 * [col0, col0+nc). */
static void ft_convt_col2im(const int64_t *p, const float *cols, int64_t m, int64_t col0,
                            int64_t nc, float *y) {
  const int64_t *in = p + FT_CV_IN, *out = p + FT_CV_OUT, *k = p + FT_CV_K, *s = p + FT_CV_S;
  const int64_t *d = p + FT_CV_D, *pb = p + FT_CV_P;
  int64_t kvol = k[0] * k[1] * k[2];
  for (int64_t t = 0; t < kvol; t++) {
    int64_t kx = t % k[2], ky = t / k[2] % k[1], kz = t / k[2] / k[1];
    const float *r = cols + (m * kvol + t) * nc;
    int64_t offx = kx * d[2] - pb[2], sx = s[2];
    int64_t ix_lo = offx >= 0 ? 0 : (-offx + sx - 1) / sx;
    int64_t ix_hi = out[2] - 1 - offx < 0 ? 0 : (out[2] - 1 - offx) / sx + 1;
    if (ix_hi > in[2]) ix_hi = in[2];
    int64_t plane = in[1] * in[2];
    int64_t iz = col0 / plane, iy = col0 % plane / in[2], ix = col0 % in[2];
    for (int64_t j = 0; j < nc;) {
      int64_t seg = in[2] - ix < nc - j ? in[2] - ix : nc - j;
      int64_t oz = iz * s[0] + kz * d[0] - pb[0], oy = iy * s[1] + ky * d[1] - pb[1];
      if (oz >= 0 && oz < out[0] && oy >= 0 && oy < out[1]) {
        float *yr = y + (oz * out[1] + oy) * out[2] + offx;
        const float *rr = r + j - ix;
        int64_t a = ix_lo > ix ? ix_lo : ix, b = ix_hi < ix + seg ? ix_hi : ix + seg;
        if (sx == 1) for (int64_t q = a; q < b; q++) yr[q] += rr[q];
        else for (int64_t q = a; q < b; q++) yr[q * sx] += rr[q];
      }
      j += seg;
      ix += seg;
      if (ix == in[2]) {
        ix = 0;
        if (++iy == in[1]) { iy = 0; iz++; }
      }
    }
  }
}

typedef struct {
  const int64_t *p;
  const float *bias, *cols;
  float *Y;
  int64_t S_out, n, g, c0, nc;
} ft_convt_ctx;

/* Planes [lo, hi) of Y set to their bias. */
static void ft_convt_bias_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_convt_ctx *c = (const ft_convt_ctx *)ctx;
  for (int64_t pl = lo; pl < hi; pl++) {
    float b0 = c->bias ? c->bias[pl % c->p[FT_CV_CO]] : 0.0f;
    for (int64_t i = 0; i < c->S_out; i++) c->Y[pl * c->S_out + i] = b0;
  }
}

/* Output channels [lo, hi) of group (n, g): the column chunk added in. */
static void ft_convt_col2im_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_convt_ctx *c = (const ft_convt_ctx *)ctx;
  int64_t CO = c->p[FT_CV_CO], Mg = CO / c->p[FT_CV_G];
  for (int64_t m = lo; m < hi; m++)
    ft_convt_col2im(c->p, c->cols, m, c->c0, c->nc, c->Y + (c->n * CO + c->g * Mg + m) * c->S_out);
}

static void ft_convtranspose_f32(const int64_t *p, const double *f, const void *const *in,
                                 void *const *out, void *scratch) {
  (void)f;
  const float *X = (const float *)in[0], *W = (const float *)in[1];
  float *cols = (float *)scratch;
  int64_t N = p[FT_CV_N], C = p[FT_CV_C], CO = p[FT_CV_CO], G = p[FT_CV_G];
  int64_t Mg = CO / G, Cg = C / G, kvol = p[FT_CV_K] * p[FT_CV_K + 1] * p[FT_CV_K + 2], Mk = Mg * kvol;
  int64_t S_in = p[FT_CV_IN] * p[FT_CV_IN + 1] * p[FT_CV_IN + 2];
  int64_t wper = ft_gemm_packed_a_floats(Mk, Cg), chunk = p[FT_CV_CHUNK];
  ft_convt_ctx c = {p, p[FT_CV_HAS_BIAS] ? (const float *)in[2] : NULL, cols, (float *)out[0],
                    p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2], 0, 0, 0, 0};
  ft_gemm_op g0;
  memset(&g0, 0, sizeof g0);
  g0.M = Mk; g0.K = Cg;
  g0.a_rs = 1; g0.a_cs = Mk;
  g0.b_rs = S_in; g0.b_cs = 1;
  g0.e.alpha = 1;
  int64_t mc = ft_gemm_mc(Mk, Cg);
  int par = N * Mk * S_in * Cg > FT_GEMM_PAR_FLOPS;
  ft_parallel_for(N * CO, par, ft_convt_bias_run, &c);
  for (int64_t ng = 0; ng < N * G; ng++) {
    c.n = ng / G;
    c.g = ng % G;
    for (c.c0 = 0; c.c0 < S_in; c.c0 += chunk) {
      c.nc = S_in - c.c0 < chunk ? S_in - c.c0 : chunk;
      ft_gemm_op gi = g0;
      gi.N = c.nc;
      gi.ldc = c.nc;
      if (p[FT_CV_PACKED]) gi.ap = W + c.g * wper;
      else gi.a = W + c.g * Cg * Mk;
      gi.b = X + (c.n * C + c.g * Cg) * S_in + c.c0;
      gi.c = cols;
      ft_gemm_run_par(&gi, mc, par);
      ft_parallel_for(Mg, par, ft_convt_col2im_run, &c);
    }
  }
}

#endif
