/* Winograd F(4x4, 3x3) convolution (fp32, NCHW, 3x3 kernel, stride 1, dilation 1, group 1).
 *
 * Each 6x6 input tile d (stride 4) gives a 4x4 output tile Y = A^T [ (G g G^T) .* (B^T d B) ] A.
 * The elementwise product summed over input channels is, per transform point xi (36 of them),
 * a plain GEMM: M_xi[tiles][Co] = V_xi[tiles][Ci] x U_xi[Ci][Co], run on the GEMM core of
 * gemm.h with U_xi in its packed-B layout (ft_wino_pack_weights, done once for constant
 * weights). 2.25x fewer multiplies than the direct kernel for the products; the transforms
 * cost O(tiles * channels) besides. Rounding differs from the direct sum: the transformed
 * values are larger than the inputs (B^T has 5s, A^T 8s), so the error grows to a few 1e-6
 * relative to the output's scale, against about 1e-7 for the direct kernel.
 *
 * The tiles of every image are batched into the GEMMs' M. The fused epilogue (bias, a residual
 * before or after the activation, the activation) is applied while the output transform
 * writes the NCHW rows. */
#ifndef FT_WINOGRAD_H
#define FT_WINOGRAD_H

#include <stdint.h>
#include <string.h>

#include "conv_params.h"
#include "gemm.h"
#include "parallel.h"

#define FT_WINO_T 6  /* input tile side */
#define FT_WINO_M 4  /* output tile side */
#define FT_WINO_P 36 /* transform points */

/* One convolution's geometry and epilogue. */
typedef struct ft_wino_geo {
  int64_t N, C, CO, H, W, OH, OW;
  int64_t pt, pl; /* pads at the top and left (the bottom and right ones follow from OH, OW) */
} ft_wino_geo;

static inline int64_t ft_wino_tiles(const ft_wino_geo *g) {
  return g->N * ((g->OH + 3) / 4) * ((g->OW + 3) / 4);
}

/* Packed floats of the transformed weights: 36 packed-B matrices of K = C, N = CO. */
static inline int64_t ft_wino_packed_floats(int64_t C, int64_t CO) {
  return FT_WINO_P * ft_gemm_packed_b_floats(C, CO);
}

/* Scratch bytes: V [36][tiles][C] and M [36][tiles][CO]. */
static inline size_t ft_wino_scratch(const ft_wino_geo *g) {
  return sizeof(float) * (size_t)(FT_WINO_P * ft_wino_tiles(g) * (g->C + g->CO));
}

/* U = G g G^T for every (co, c), in double, written straight into 36 packed-B matrices
 * U_xi[c][co] (gemm.h's layout: panel j of NR columns at j*C*NR, element (c, j*NR+r) at
 * [c*NR + r], zeros past CO). w is the model's [CO, C, 3, 3]. */
static void ft_wino_pack_weights(int64_t C, int64_t CO, const float *w, float *dst) {
  static const double G[6][3] = {{1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                 {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                 {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  int64_t per = ft_gemm_packed_b_floats(C, CO);
  memset(dst, 0, sizeof(float) * (size_t)(FT_WINO_P * per));
  for (int64_t o = 0; o < CO; o++)
    for (int64_t c = 0; c < C; c++) {
      const float *g = w + (o * C + c) * 9;
      double t[6][3];
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 3; j++) t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
      float *at = dst + o / FT_GEMM_NR * C * FT_GEMM_NR + c * FT_GEMM_NR + o % FT_GEMM_NR;
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
          at[(i * 6 + j) * per] = (float)(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
    }
}

/* B^T d B on a 6x6 tile, in place order: rows then columns. */
static inline void ft_wino_bt6(const float *s, int64_t ss, float *d, int64_t ds) {
  float a0 = s[0], a1 = s[ss], a2 = s[2 * ss], a3 = s[3 * ss], a4 = s[4 * ss], a5 = s[5 * ss];
  d[0] = 4 * a0 - 5 * a2 + a4;
  d[ds] = -4 * a1 - 4 * a2 + a3 + a4;
  d[2 * ds] = 4 * a1 - 4 * a2 - a3 + a4;
  d[3 * ds] = -2 * a1 - a2 + 2 * a3 + a4;
  d[4 * ds] = 2 * a1 - a2 - 2 * a3 + a4;
  d[5 * ds] = 4 * a1 - 5 * a3 + a5;
}

typedef struct {
  const ft_wino_geo *g;
  const float *x;
  float *v;
} ft_wino_in_ctx;

/* Input planes [lo, hi) (image n, channel c) into V[xi][tile][c]. */
static void ft_wino_input_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_wino_in_ctx *k = (const ft_wino_in_ctx *)ctx;
  const ft_wino_geo *g = k->g;
  int64_t th = (g->OH + 3) / 4, tw = (g->OW + 3) / 4, T = ft_wino_tiles(g);
  for (int64_t pl = lo; pl < hi; pl++) {
    int64_t n = pl / g->C, c = pl % g->C;
    const float *x = k->x + pl * g->H * g->W;
    for (int64_t ty = 0; ty < th; ty++)
      for (int64_t tx = 0; tx < tw; tx++) {
        float d[36], r[36];
        int64_t y0 = ty * 4 - g->pt, x0 = tx * 4 - g->pl;
        for (int i = 0; i < 6; i++)
          for (int j = 0; j < 6; j++) {
            int64_t yy = y0 + i, xx = x0 + j;
            d[i * 6 + j] = yy >= 0 && yy < g->H && xx >= 0 && xx < g->W ? x[yy * g->W + xx] : 0.0f;
          }
        for (int j = 0; j < 6; j++) ft_wino_bt6(d + j, 6, r + j, 6);      /* B^T d */
        for (int i = 0; i < 6; i++) ft_wino_bt6(r + i * 6, 1, d + i * 6, 1); /* (B^T d) B */
        int64_t t = (n * th + ty) * tw + tx;
        for (int xi = 0; xi < FT_WINO_P; xi++) k->v[((int64_t)xi * T + t) * g->C + c] = d[xi];
      }
  }
}

/* A^T on 6 values (stride ss) to 4 (stride ds). */
static inline void ft_wino_at6(const float *s, int64_t ss, float *d, int64_t ds) {
  float a0 = s[0], a1 = s[ss], a2 = s[2 * ss], a3 = s[3 * ss], a4 = s[4 * ss], a5 = s[5 * ss];
  float p12 = a1 + a2, m12 = a1 - a2, p34 = a3 + a4, m34 = a3 - a4;
  d[0] = a0 + p12 + p34;
  d[ds] = m12 + 2 * m34;
  d[2 * ds] = p12 + 4 * p34;
  d[3 * ds] = m12 + 8 * m34 + a5;
}

typedef struct {
  const ft_wino_geo *g;
  const float *m;
  float *y;
  const ft_gemm_epi *e;
} ft_wino_out_ctx;

/* Output planes [lo, hi) (image n, channel o): A^T m A per tile, then the epilogue per row. */
static void ft_wino_output_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_wino_out_ctx *k = (const ft_wino_out_ctx *)ctx;
  const ft_wino_geo *g = k->g;
  const ft_gemm_epi *e = k->e;
  int64_t th = (g->OH + 3) / 4, tw = (g->OW + 3) / 4, T = ft_wino_tiles(g);
  for (int64_t pl = lo; pl < hi; pl++) {
    int64_t n = pl / g->CO, o = pl % g->CO;
    float *y = k->y + pl * g->OH * g->OW;
    const float *res = e->res ? e->res + pl * g->OH * g->OW : NULL;
    float b = e->bias ? e->bias[o] : 0.0f;
    for (int64_t ty = 0; ty < th; ty++) {
      for (int64_t tx = 0; tx < tw; tx++) {
        float m[36], r[24], out[16];
        int64_t t = (n * th + ty) * tw + tx;
        for (int xi = 0; xi < FT_WINO_P; xi++) m[xi] = k->m[((int64_t)xi * T + t) * g->CO + o];
        for (int j = 0; j < 6; j++) ft_wino_at6(m + j, 6, r + j, 6);     /* A^T m: 4x6 */
        for (int i = 0; i < 4; i++) ft_wino_at6(r + i * 6, 1, out + i * 4, 1); /* (A^T m) A */
        for (int i = 0; i < 4 && ty * 4 + i < g->OH; i++)
          for (int j = 0; j < 4 && tx * 4 + j < g->OW; j++) y[(ty * 4 + i) * g->OW + tx * 4 + j] = out[i * 4 + j] + b;
      }
      for (int64_t i = ty * 4; i < ty * 4 + 4 && i < g->OH; i++) { /* the epilogue, a row at a time */
        float *row = y + i * g->OW;
        const float *rr = res ? res + i * g->OW : NULL;
        if (rr && !e->res_after)
          for (int64_t j = 0; j < g->OW; j++) row[j] += rr[j];
        if (e->act != FT_ACT_NONE) ft_gemm_act(row, g->OW, e);
        if (rr && e->res_after)
          for (int64_t j = 0; j < g->OW; j++) row[j] += rr[j];
      }
    }
  }
}

/* The convolution: x [N, C, H, W] and the packed transformed weights u to y [N, CO, OH, OW].
 * e: bias (per output channel), activation and residual (shaped like y); alpha, beta and the
 * bias strides are not read. The residual must not share y's storage (the rows are written
 * before the epilogue reads it). scratch: ft_wino_scratch. */
static void ft_wino_conv_f32(const ft_wino_geo *g, const float *x, const float *u, const ft_gemm_epi *e,
                             float *y, void *scratch) {
  int64_t T = ft_wino_tiles(g);
  if (T <= 0 || g->CO <= 0) return;
  float *v = (float *)scratch, *m = v + FT_WINO_P * T * g->C;
  int64_t flops = T * g->C * g->CO * 2 * FT_WINO_P;
  int par = flops > FT_GEMM_PAR_FLOPS;
  ft_wino_in_ctx ic = {g, x, v};
  ft_parallel_for(g->N * g->C, par, ft_wino_input_run, &ic);
  int64_t per = ft_gemm_packed_b_floats(g->C, g->CO);
  for (int xi = 0; xi < FT_WINO_P; xi++) {
    ft_gemm_op op;
    memset(&op, 0, sizeof op);
    op.M = T; op.N = g->CO; op.K = g->C;
    op.a = v + (int64_t)xi * T * g->C; op.a_rs = g->C; op.a_cs = 1;
    op.bp = u + xi * per;
    op.c = m + (int64_t)xi * T * g->CO; op.ldc = g->CO;
    op.e.alpha = 1.0f;
    ft_gemm_run(&op);
  }
  ft_wino_out_ctx oc = {g, m, y, e};
  ft_parallel_for(g->N * g->CO, par, ft_wino_output_run, &oc);
}

/* ---- as a Conv kernel (p: templates/common/conv_params.h, mode FT_CV_WINOGRAD) ---------------
 * compiler/ops/conv.c picks it for 2-D 3x3 convs of stride 1, dilation 1 and one group with
 * constant weights; ftaxc packs them with ft_conv_wino_pack_w. Given plain weights (constant
 * folding), each transform point's U is computed into scratch and read unpacked. */

static inline void ft_conv_wino_geo(const int64_t *p, ft_wino_geo *g) {
  g->N = p[FT_CV_N]; g->C = p[FT_CV_C]; g->CO = p[FT_CV_CO];
  g->H = p[FT_CV_IN + 1]; g->W = p[FT_CV_IN + 2];
  g->OH = p[FT_CV_OUT + 1]; g->OW = p[FT_CV_OUT + 2];
  g->pt = p[FT_CV_P + 1]; g->pl = p[FT_CV_P + 2];
}

/* Prepack hook: the 36 transformed weight matrices, packed. */
static size_t ft_conv_wino_pack_w(const int64_t *p, const void *src, void *dst) {
  int64_t C = p[FT_CV_C], CO = p[FT_CV_CO];
  size_t bytes = sizeof(float) * (size_t)ft_wino_packed_floats(C, CO);
  if (dst) ft_wino_pack_weights(C, CO, (const float *)src, (float *)dst);
  return bytes;
}

/* Scratch: V and M, and one transform point's plain U for unpacked weights. */
static inline size_t ft_conv_wino_scratch(const int64_t *p) {
  ft_wino_geo g;
  ft_conv_wino_geo(p, &g);
  return ft_wino_scratch(&g) + sizeof(float) * (size_t)(g.C * g.CO);
}

/* Unpacked weights: U_xi[c][co] for one transform point. */
static void ft_wino_u_point(int64_t C, int64_t CO, const float *w, int xi, float *u) {
  static const float G[6][3] = {{1.0f / 4, 0, 0},           {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                {-1.0f / 6, 1.0f / 6, -1.0f / 6}, {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                {1.0f / 24, -1.0f / 12, 1.0f / 6}, {0, 0, 1}};
  int i = xi / 6, j = xi % 6;
  for (int64_t o = 0; o < CO; o++)
    for (int64_t c = 0; c < C; c++) {
      const float *g = w + (o * C + c) * 9;
      float s = 0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) s += G[i][a] * g[a * 3 + b] * G[j][b];
      u[c * CO + o] = s;
    }
}

/* in: X, W (packed when p[FT_CV_PACKED]), optional B, the residual when p[FT_CV_RES];
 * f: [alpha, beta, clip lo, clip hi] as for ft_conv_f32 (alpha = beta = 1). */
static void ft_conv_wino_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                             void *scratch) {
  ft_wino_geo g;
  ft_conv_wino_geo(p, &g);
  ft_gemm_epi e;
  memset(&e, 0, sizeof e);
  e.bias = p[FT_CV_HAS_BIAS] ? (const float *)in[2] : NULL;
  e.act = (int)p[FT_CV_ACT];
  e.lo = (float)f[2];
  e.hi = (float)f[3];
  e.res = p[FT_CV_RES] ? (const float *)in[3] : NULL;
  e.res_after = p[FT_CV_RES] == 2;
  const float *w = (const float *)in[1];
  if (p[FT_CV_PACKED]) {
    ft_wino_conv_f32(&g, (const float *)in[0], w, &e, (float *)out[0], scratch);
    return;
  }
  int64_t T = ft_wino_tiles(&g);
  if (T <= 0 || g.CO <= 0) return;
  float *v = (float *)scratch, *m = v + FT_WINO_P * T * g.C, *u = m + FT_WINO_P * T * g.CO;
  ft_wino_in_ctx ic = {&g, (const float *)in[0], v};
  ft_parallel_for(g.N * g.C, 0, ft_wino_input_run, &ic);
  for (int xi = 0; xi < FT_WINO_P; xi++) {
    ft_wino_u_point(g.C, g.CO, w, xi, u);
    ft_gemm_op op;
    memset(&op, 0, sizeof op);
    op.M = T; op.N = g.CO; op.K = g.C;
    op.a = v + (int64_t)xi * T * g.C; op.a_rs = g.C; op.a_cs = 1;
    op.b = u; op.b_rs = g.CO; op.b_cs = 1;
    op.c = m + (int64_t)xi * T * g.CO; op.ldc = g.CO;
    op.e.alpha = 1.0f;
    ft_gemm_run(&op);
  }
  ft_wino_out_ctx oc = {&g, m, (float *)out[0], &e};
  ft_parallel_for(g.N * g.CO, 0, ft_wino_output_run, &oc);
}

#endif
