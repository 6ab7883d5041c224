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
 * writes 16 words at a time). */
static inline int64_t ft_conv_bf16_cols(const int64_t *p) {
  return p[FT_CV_MODE] == FT_CV_POINTWISE_T ? p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2] : p[FT_CV_CHUNK];
}
static inline int64_t ft_conv_bf16_xs(const int64_t *p) { return (ft_conv_bf16_cols(p) + 15) / 16 * 16; }

/* Scratch: in the transposed modes the packed rows, after the fp32 im2col chunk in im2col^T. */
static inline size_t ft_conv_bf16_scratch(const int64_t *p) {
  if (!ft_conv_bf16_transposed(p)) return ft_conv_scratch(p);
  size_t packed = sizeof(uint32_t) * (size_t)((ft_conv_kg(p) + 1) / 2 * ft_conv_bf16_xs(p));
  return packed + (p[FT_CV_MODE] == FT_CV_IM2COL_T ? ft_conv_scratch(p) : 0);
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
  ft_v16f c0[FT_PWT_MR], c1[FT_PWT_MR];
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) { c0[i] = (ft_v16f){0}; c1[i] = (ft_v16f){0}; }
  for (int64_t kp = 0; kp < K2; kp++) {
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

/* Rows of an fp32 matrix (row k at src + k*rs, n columns) in pairs into dst (pair kp at
 * dst + kp*ds), rounded to bf16; an odd K's last pair zero in its high half. */
typedef struct {
  const float *src;
  int64_t K, n, rs, ds;
  uint32_t *dst;
} ft_bf16_rows_ctx;

static void ft_bf16_pack_rows_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_bf16_rows_ctx *c = (const ft_bf16_rows_ctx *)ctx;
  const ft_v16f zero = {0};
  for (int64_t kp = lo; kp < hi; kp++) {
    const float *r0 = c->src + 2 * kp * c->rs, *r1 = r0 + c->rs;
    for (int64_t j = 0; j < c->n; j += 16) {
      int64_t m = c->n - j < 16 ? c->n - j : 16;
      ft_v16f lo16, hi16 = zero;
      ft_v16_load(&lo16, r0 + j, m);
      if (2 * kp + 1 < c->K) ft_v16_load(&hi16, r1 + j, m);
      ft_bf16_pair16(c->dst + kp * c->ds + j, &lo16, &hi16);
    }
  }
}

/* The transposed modes, one (image, group) pair and one column chunk at a time: im2col (in
 * im2col^T), pack, then conv.h's transposed GEMMs with the bf16 tiles. */
static void ft_conv_bf16_t(const int64_t *p, const double *f, const void *const *in, void *const *out,
                           void *scratch) {
  const float *X = (const float *)in[0], *W = (const float *)in[1];
  const float *bias = p[FT_CV_HAS_BIAS] ? (const float *)in[2] : NULL, *R = ft_conv_residual(p, in);
  float *Y = (float *)out[0];
  ft_gemm_epi e = {(float)f[0], (float)f[1], NULL, 1, 0, (int)p[FT_CV_ACT], (float)f[2], (float)f[3], NULL, p[FT_CV_RES] == 2};
  int64_t N = p[FT_CV_N], C = p[FT_CV_C], CO = p[FT_CV_CO], G = p[FT_CV_G], Cg = C / G, Mg = CO / G;
  int64_t Kg = ft_conv_kg(p), K2 = (Kg + 1) / 2, cols = ft_conv_bf16_cols(p), xs = ft_conv_bf16_xs(p);
  int64_t S_in = p[FT_CV_IN] * p[FT_CV_IN + 1] * p[FT_CV_IN + 2];
  int64_t S_out = p[FT_CV_OUT] * p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  int im2col = p[FT_CV_MODE] == FT_CV_IM2COL_T, par = N * CO * S_out * Kg > FT_GEMM_PAR_FLOPS;
  float *col = (float *)scratch;
  uint32_t *xp = im2col ? (uint32_t *)(void *)((char *)scratch + ft_conv_scratch(p)) : (uint32_t *)scratch;
  ft_conv_ctx c = {p, NULL, NULL, col, 0, 0};
  for (int64_t ng = 0; ng < N * G; ng++) {
    int64_t n = ng / G, g = ng % G;
    c.xg = X + (n * C + g * Cg) * S_in;
    for (c.c0 = 0; c.c0 < S_out; c.c0 += cols) {
      c.nc = S_out - c.c0 < cols ? S_out - c.c0 : cols;
      ft_bf16_rows_ctx pk = {c.xg, Kg, c.nc, S_in, xs, xp};
      if (im2col) {
        ft_parallel_for(Kg, par, ft_conv_im2col_run, &c);
        pk.src = col;
        pk.rs = c.nc;
      }
      ft_parallel_for(K2, par, ft_bf16_pack_rows_run, &pk);
      int64_t at = (n * CO + g * Mg) * S_out + c.c0;
      ft_pwt_ctx t = {&e, W, bias, (const float *)(const void *)xp, R ? R + at : NULL, Y + at, G, g, Mg, c.nc, xs,
                      S_out, 0, 0, 0, 0, 0, 0, ft_bf16_pwt_tiles, K2, ft_gemm_packed_b_floats(Kg, Mg)};
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
