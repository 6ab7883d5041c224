/* Conv on the bf16 GEMM core (ftaxc --precision bf16): conv.h's kernel with the weights packed
 * as bf16 at compile time. The plain GEMM modes run each work item by ft_bf16_column, which
 * rounds the input (B: the group's input in pointwise mode, the shifted rows or the im2col chunk)
 * to bf16 as it packs it; the transposed modes (pointwise^T, im2col^T: vectors along C_out) pack
 * the input once per call and run conv.h's transposed GEMM with bf16 tiles (below). Depthwise
 * convolutions stay fp32 (direct loops; no GEMM), and so does a Conv whose weights were not
 * packed (not constant): both go to ft_conv_f32's code. The residual of a fused Conv must not
 * share the output's storage in the plain modes (see gemm_bf16.h). */
#ifndef FT_CONV_BF16_H
#define FT_CONV_BF16_H

#include "conv.h"
#include "gemm_bf16.h"

/* The transposed modes (FT_CV_POINTWISE_T, FT_CV_IM2COL_T): conv.h's transposed GEMM, out^T
 * [HW, C_out] = X^T [HW, K] x W^T [K, C_out], with W^T packed as bf16 B panels and X^T's rows
 * pair-packed into scratch once per call (per im2col chunk): word (kp, j) holds X[2kp][j] in its
 * low half and X[2kp+1][j] in its high half, rows xs words apart; a tile broadcasts one word per
 * HW row and k pair. Along HW the tiles split a 7x7 or 14x14 plane evenly (no lanes lost to a
 * 32-column panel), and K is never cut into blocks. */
static inline int ft_conv_bf16_transposed(const int64_t *p) {
  return p[FT_CV_MODE] == FT_CV_POINTWISE_T || p[FT_CV_MODE] == FT_CV_IM2COL_T;
}
/* Columns of X^T's packed rows per pass, and the row stride (whole vectors: the packing
 * writes 16 words at a time, the small-plane im2col one from each output row's start). */
static inline int64_t ft_conv_bf16_cols(const int64_t *p) {
  return p[FT_CV_MODE] == FT_CV_POINTWISE_T ? p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2] : p[FT_CV_CHUNK];
}
static inline int64_t ft_conv_bf16_xs(const int64_t *p) { return (ft_conv_bf16_cols(p) + 15) / 16 * 16 + 16; }

/* Scratch: in the transposed modes the packed rows. */
static inline size_t ft_conv_bf16_scratch(const int64_t *p) {
  if (!ft_conv_bf16_transposed(p)) return ft_conv_scratch(p);
  return sizeof(uint32_t) * (size_t)((ft_conv_kg(p) + 1) / 2 * ft_conv_bf16_xs(p));
}

/* Prepack hook: every group's weight matrix into bf16 A slivers, or in the transposed modes its
 * W^T into bf16 B panels. Group g starts where the fp32 packing puts it (g * the fp32 words:
 * its bf16 words take at most half of that), so conv.h finds it unchanged; only the last group
 * is cut to its size. */
static size_t ft_conv_bf16_pack_w(const int64_t *p, const void *src, void *dst) {
  int64_t G = p[FT_CV_G], Mg = p[FT_CV_CO] / G, Kg = ft_conv_kg(p);
  int t = ft_conv_bf16_transposed(p);
  int64_t per = t ? ft_gemm_packed_b_floats(Kg, Mg) : ft_gemm_packed_a_floats(Mg, Kg);
  int64_t last = t ? ft_bf16_packed_b_words(Kg, Mg) : ft_bf16_packed_a_words(Mg, Kg);
  size_t bytes = 4 * (size_t)((G - 1) * per + last);
  if (!dst) return bytes;
  memset(dst, 0, bytes);
  for (int64_t g = 0; g < G; g++) {
    const float *w = (const float *)src + g * Mg * Kg;
    if (t) ft_bf16_pack_b(Kg, Mg, w, 1, Kg, (uint32_t *)dst + g * per);
    else ft_bf16_pack_a(Mg, Kg, w, Kg, 1, (uint32_t *)dst + g * per);
  }
  return bytes;
}

/* c += the two products of each lane of the pair word a (broadcast) and the pair words b: one
 * vdpbf16ps, or the same arithmetic in fp32 (odd product first, as the instruction adds). */
static inline __attribute__((always_inline)) void ft_bf16_dot(ft_v16f *c, uint32_t a, ft_v16w b) {
#ifdef FT_BF16_AVX512
  *c = (ft_v16f)_mm512_dpbf16_ps((__m512)*c, (__m512bh)_mm512_set1_epi32((int)a), (__m512bh)b);
#else
  uint32_t ue = a << 16, uo = a & 0xffff0000u;
  float ae, ao;
  memcpy(&ae, &ue, 4);
  memcpy(&ao, &uo, 4);
  *c += ao * (ft_v16f)(b & 0xffff0000u);
  *c += ae * (ft_v16f)(b << 16);
#endif
}

/* One transposed tile on bf16 (conv.h's ft_pwt_tile): HW rows [hw0, hw0 + mr) of the packed
 * X^T (o->x, words) x the W^T panel bp (K2 pairs x 32 channels from co0), through the same
 * store. */
static inline __attribute__((always_inline)) void ft_bf16_pwt_tile(const int mr, const int nv, int64_t K2,
                                                                   const float *bpf, const ft_pwt_out *o,
                                                                   int64_t hw0, int64_t co0, int nc) {
  const uint32_t *bp = (const uint32_t *)(const void *)bpf, *x = (const uint32_t *)(const void *)o->x + hw0;
  const char *pf = o->pf; /* the next panel's slice: its words are 4 bytes, as fp32's */
  ft_v16f c0[FT_PWT_MR], c1[FT_PWT_MR];
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) { c0[i] = (ft_v16f){0}; c1[i] = (ft_v16f){0}; }
  for (int64_t kp = 0; kp < K2; kp++) {
    pf = ft_prefetch_step(pf, o->pfs);
    ft_v16w b0 = *(const ft_v16wu *)bp, b1 = {0};
    if (nv == 2) b1 = *(const ft_v16wu *)(bp + 16);
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      ft_bf16_dot(&c0[i], x[i], b0);
      if (nv == 2) ft_bf16_dot(&c1[i], x[i], b1);
    }
    x += o->xs;
    bp += FT_GEMM_NR;
  }
  ft_pwt_store(mr, c0, o, hw0, co0, nc < 16 ? nc : 16);
  if (nv == 2) ft_pwt_store(mr, c1, o, hw0, co0 + 16, nc - 16);
}

#define FT_BF16_PWT_TILE(MR_, NV_)                                                                    \
  static void ft_bf16_pwt_tile_##MR_##_##NV_(int64_t K2, const float *bp, const ft_pwt_out *o, int64_t hw0, \
                                             int64_t co0, int nc) {                                  \
    ft_bf16_pwt_tile(MR_, NV_, K2, bp, o, hw0, co0, nc);                                             \
  }
#define FT_BF16_PWT_TILES(MR_) FT_BF16_PWT_TILE(MR_, 1) FT_BF16_PWT_TILE(MR_, 2)
FT_BF16_PWT_TILES(1) FT_BF16_PWT_TILES(2) FT_BF16_PWT_TILES(3) FT_BF16_PWT_TILES(4) FT_BF16_PWT_TILES(5)
FT_BF16_PWT_TILES(6) FT_BF16_PWT_TILES(7) FT_BF16_PWT_TILES(8) FT_BF16_PWT_TILES(9) FT_BF16_PWT_TILES(10)
FT_BF16_PWT_TILES(11) FT_BF16_PWT_TILES(12) FT_BF16_PWT_TILES(13) FT_BF16_PWT_TILES(14)
#undef FT_BF16_PWT_TILES
#undef FT_BF16_PWT_TILE
#define FT_BF16_PWT_ROW_(MR_) {ft_bf16_pwt_tile_##MR_##_1, ft_bf16_pwt_tile_##MR_##_2},
static const ft_pwt_fn ft_bf16_pwt_tiles[FT_PWT_MR + 1][2] = {
    {NULL, NULL}, FT_BF16_PWT_ROW_(1) FT_BF16_PWT_ROW_(2) FT_BF16_PWT_ROW_(3) FT_BF16_PWT_ROW_(4)
    FT_BF16_PWT_ROW_(5) FT_BF16_PWT_ROW_(6) FT_BF16_PWT_ROW_(7) FT_BF16_PWT_ROW_(8) FT_BF16_PWT_ROW_(9)
    FT_BF16_PWT_ROW_(10) FT_BF16_PWT_ROW_(11) FT_BF16_PWT_ROW_(12) FT_BF16_PWT_ROW_(13) FT_BF16_PWT_ROW_(14)};
#undef FT_BF16_PWT_ROW_

/* Two fp32 rows of n columns as n pair words (r1 NULL: zero high halves), rounded to bf16;
 * the last vector writes whole: dst has room up to n rounded up to 16. */
static inline void ft_bf16_pair_rows(uint32_t *dst, const float *r0, const float *r1, int64_t n) {
  for (int64_t j = 0; j < n; j += 16) {
    int64_t m = n - j < 16 ? n - j : 16;
    ft_v16f lo = {0}, hi = {0};
    ft_v16_load(&lo, r0 + j, m);
    if (r1) ft_v16_load(&hi, r1 + j, m);
    ft_bf16_pair16(dst + j, &lo, &hi);
  }
}

#ifdef FT_BF16_AVX512
/* im2col^T by whole output rows on AVX-512: 2-D, column stride 1 or 2, a pass of whole output
 * rows. Row k = (c, kh, kw) of the im2col over 16 output columns of one output row is one
 * masked load of an input row (two and an even-lane permute at stride 2), lanes outside the
 * input zero; a pair of rows goes out one vector at a time. Element by element (the general
 * path below) the im2col took a sixth of a 3x3 conv's time on a 14x14 plane. */
static inline int ft_conv_bf16_i2c_fast(const int64_t *p, int64_t c0, int64_t nc) {
  int64_t OW = p[FT_CV_OUT + 2];
  return p[FT_CV_IN] == 1 && p[FT_CV_S + 2] <= 2 && c0 % OW == 0 && nc % OW == 0;
}

/* Where row k reads: its channel plane, its row and column offsets (input row and column of
 * output (0, 0)), and the output columns [lo, hi) whose input column is inside the input. */
typedef struct { const float *plane; int64_t dh, cofs, lo, hi; } ft_i2c_row;

static inline ft_i2c_row ft_i2c_row_at(const int64_t *p, const float *x, int64_t k) {
  int64_t IH = p[FT_CV_IN + 1], IW = p[FT_CV_IN + 2], OW = p[FT_CV_OUT + 2], KH = p[FT_CV_K + 1], KW = p[FT_CV_K + 2];
  int64_t sw = p[FT_CV_S + 2], c = k / (KH * KW), t = k % (KH * KW);
  ft_i2c_row r;
  r.plane = x + c * IH * IW;
  r.dh = t / KW * p[FT_CV_D + 1] - p[FT_CV_P + 1];
  r.cofs = t % KW * p[FT_CV_D + 2] - p[FT_CV_P + 2];
  int64_t lo = r.cofs >= 0 ? 0 : (-r.cofs + sw - 1) / sw, hi = IW - 1 - r.cofs < 0 ? 0 : (IW - 1 - r.cofs) / sw + 1;
  if (hi > OW) hi = OW;
  if (lo > hi) lo = hi;
  r.lo = lo;
  r.hi = hi;
  return r;
}

/* Output columns [j0, j0 + 16) of output row oh (those past the row are don't-cares). */
static inline __attribute__((always_inline)) ft_v16f ft_i2c_row_vec(const int64_t *p, const ft_i2c_row *r, int64_t oh,
                                                                    int64_t j0) {
  int64_t ih = oh * p[FT_CV_S + 1] + r->dh, IW = p[FT_CV_IN + 2], a = r->lo - j0, b = r->hi - j0;
  if (a < 0) a = 0;
  if (b > 16) b = 16;
  if (ih < 0 || ih >= p[FT_CV_IN + 1] || b <= a) return (ft_v16f){0};
  __mmask16 keep = (__mmask16)(((1u << b) - 1) & ~((1u << a) - 1));
  const float *src = r->plane + ih * IW + r->cofs; /* output column 0's input column: lanes outside are masked */
  if (p[FT_CV_S + 2] == 1) return (ft_v16f)_mm512_maskz_loadu_ps(keep, src + j0);
  /* stride 2: the input elements from lane a's to lane b-1's, over both loads */
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  uint32_t elems = (uint32_t)((((uint64_t)1 << (2 * b - 1)) - 1) & ~(((uint64_t)1 << (2 * a)) - 1));
  __m512 va = _mm512_maskz_loadu_ps((__mmask16)elems, src + 2 * j0);
  __m512 vb = _mm512_maskz_loadu_ps((__mmask16)(elems >> 16), src + 2 * j0 + 16);
  return (ft_v16f)_mm512_maskz_mov_ps(keep, _mm512_permutex2var_ps(va, even, vb));
}

/* Pair kp of the im2col for output rows [oh0, oh0 + nrows) into dst, a vector at a time. */
static void ft_conv_bf16_i2c_pair(const int64_t *p, const float *x, int64_t Kg, int64_t kp, int64_t oh0,
                                  int64_t nrows, uint32_t *dst) {
  int64_t OW = p[FT_CV_OUT + 2];
  int odd = 2 * kp + 1 < Kg;
  ft_i2c_row r0 = ft_i2c_row_at(p, x, 2 * kp), r1 = odd ? ft_i2c_row_at(p, x, 2 * kp + 1) : r0;
  for (int64_t oh = oh0; oh < oh0 + nrows; oh++) /* a vector past a row's end is overwritten by the next row */
    for (int64_t j0 = 0; j0 < OW; j0 += 16) {
      ft_v16f lo = ft_i2c_row_vec(p, &r0, oh, j0), hi = {0};
      if (odd) hi = ft_i2c_row_vec(p, &r1, oh, j0);
      ft_bf16_pair16(dst + (oh - oh0) * OW + j0, &lo, &hi);
    }
}
#endif

/* The input of one pass into X^T's packed rows: pairs [lo, hi) of k. Pointwise^T reads the
 * group's input rows in place; im2col^T makes each pair of im2col rows in a stack buffer,
 * FT_BF16_SEG columns at a time, so the fp32 im2col never leaves L1 (or straight from the
 * input, above, for a small plane). */
#define FT_BF16_SEG 256
typedef struct {
  const int64_t *p;
  const float *xg;        /* the group's input */
  int64_t Kg, c0, nc, xs; /* K, the pass's output columns [c0, c0 + nc), the packed row stride */
  uint32_t *xp;
} ft_conv_bf16_pass;

static void ft_conv_bf16_pack_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_conv_bf16_pass *c = (const ft_conv_bf16_pass *)ctx;
  const int64_t *p = c->p, S_in = p[FT_CV_IN] * p[FT_CV_IN + 1] * p[FT_CV_IN + 2];
  float r[2][FT_BF16_SEG] __attribute__((aligned(64)));
  for (int64_t kp = lo; kp < hi; kp++) {
    int odd = 2 * kp + 1 < c->Kg;
    uint32_t *dst = c->xp + kp * c->xs;
    if (p[FT_CV_MODE] == FT_CV_POINTWISE_T) {
      const float *r0 = c->xg + 2 * kp * S_in;
      ft_bf16_pair_rows(dst, r0, odd ? r0 + S_in : NULL, c->nc);
      continue;
    }
#ifdef FT_BF16_AVX512
    if (ft_conv_bf16_i2c_fast(p, c->c0, c->nc)) {
      int64_t OW = p[FT_CV_OUT + 2];
      ft_conv_bf16_i2c_pair(p, c->xg, c->Kg, kp, c->c0 / OW, c->nc / OW, dst);
      continue;
    }
#endif
    for (int64_t s0 = 0; s0 < c->nc; s0 += FT_BF16_SEG) {
      int64_t m = c->nc - s0 < FT_BF16_SEG ? c->nc - s0 : FT_BF16_SEG;
      ft_conv_im2col_row(p, c->xg, 2 * kp, c->c0 + s0, m, r[0]);
      if (odd) ft_conv_im2col_row(p, c->xg, 2 * kp + 1, c->c0 + s0, m, r[1]);
      ft_bf16_pair_rows(dst + s0, r[0], odd ? r[1] : NULL, m);
    }
  }
}

/* The transposed modes, one (image, group) pair and one column chunk at a time: the input
 * packed (through im2col in im2col^T), then conv.h's transposed GEMMs with the bf16 tiles. */
static void ft_conv_bf16_t(const int64_t *p, const double *f, const void *const *in, void *const *out,
                           void *scratch) {
  const float *X = (const float *)in[0], *W = (const float *)in[1];
  const float *bias = p[FT_CV_HAS_BIAS] ? (const float *)in[2] : NULL, *R = ft_conv_residual(p, in);
  float *Y = (float *)out[0];
  ft_gemm_epi e = {(float)f[0], (float)f[1], NULL, 1, 0, (int)p[FT_CV_ACT], (float)f[2], (float)f[3], NULL, p[FT_CV_RES] == 2};
  int64_t N = p[FT_CV_N], C = p[FT_CV_C], CO = p[FT_CV_CO], G = p[FT_CV_G], Cg = C / G, Mg = CO / G;
  int64_t Kg = ft_conv_kg(p), K2 = (Kg + 1) / 2, cols = ft_conv_bf16_cols(p);
  int64_t S_in = p[FT_CV_IN] * p[FT_CV_IN + 1] * p[FT_CV_IN + 2];
  int64_t S_out = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  int par = N * CO * S_out * Kg > FT_GEMM_PAR_FLOPS;
  ft_conv_bf16_pass c = {p, NULL, Kg, 0, 0, ft_conv_bf16_xs(p), (uint32_t *)scratch};
  for (int64_t ng = 0; ng < N * G; ng++) {
    int64_t n = ng / G, g = ng % G;
    c.xg = X + (n * C + g * Cg) * S_in;
    for (c.c0 = 0; c.c0 < S_out; c.c0 += cols) {
      c.nc = S_out - c.c0 < cols ? S_out - c.c0 : cols;
      ft_parallel_for(K2, par, ft_conv_bf16_pack_run, &c);
      int64_t at = (n * CO + g * Mg) * S_out + c.c0;
      ft_pwt_ctx t = {&e, W, bias, (const float *)scratch, R ? R + at : NULL, Y + at, G, g, Mg, c.nc, c.xs,
                      S_out, 0, 0, 0, 0, 0, 0, ft_bf16_pwt_tiles, K2, ft_gemm_packed_b_floats(Kg, Mg), 0, 0};
      ft_pwt_gemms(&t, 1, par);
    }
  }
}

static void ft_conv_bf16(const int64_t *p, const double *f, const void *const *in, void *const *out,
                         void *scratch) {
  if (p[FT_CV_PACKED] && ft_conv_bf16_transposed(p)) ft_conv_bf16_t(p, f, in, out, scratch);
  else ft_conv_run(p, f, in, out, scratch, p[FT_CV_PACKED] ? ft_bf16_column : NULL);
}

#endif
