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

/* The transforms work on 16 channels at once (one vector per tile point), tile-major, so
 * that V and M are read and written along their channel rows. */
#define FT_WINO_L 16

/* B^T on 6 vectors (stride ss) to 6 (stride ds). */
static inline __attribute__((always_inline)) void ft_wino_bt6(const ft_v16f *s, int ss, ft_v16f *d, int ds) {
  ft_v16f a0 = s[0], a1 = s[ss], a2 = s[2 * ss], a3 = s[3 * ss], a4 = s[4 * ss], a5 = s[5 * ss];
  d[0] = 4 * a0 - 5 * a2 + a4;
  d[ds] = -4 * (a1 + a2) + a3 + a4;
  d[2 * ds] = 4 * (a1 - a2) - a3 + a4;
  d[3 * ds] = 2 * (a3 - a1) - a2 + a4;
  d[4 * ds] = 2 * (a1 - a3) - a2 + a4;
  d[5 * ds] = 4 * a1 - 5 * a3 + a5;
}

/* A^T on 6 vectors (stride ss) to 4 (stride ds). */
static inline __attribute__((always_inline)) void ft_wino_at6(const ft_v16f *s, int ss, ft_v16f *d, int ds) {
  ft_v16f a0 = s[0], a1 = s[ss], a2 = s[2 * ss], a3 = s[3 * ss], a4 = s[4 * ss], a5 = s[5 * ss];
  ft_v16f p12 = a1 + a2, m12 = a1 - a2, p34 = a3 + a4, m34 = a3 - a4;
  d[0] = a0 + p12 + p34;
  d[ds] = m12 + 2 * m34;
  d[2 * ds] = p12 + 4 * p34;
  d[3 * ds] = m12 + 8 * m34 + a5;
}

/* Tile t's place: image n, top-left output (oy, ox). */
static inline void ft_wino_tile_at(const ft_wino_geo *g, int64_t t, int64_t *n, int64_t *oy, int64_t *ox) {
  int64_t th = (g->OH + 3) / 4, tw = (g->OW + 3) / 4;
  *n = t / (th * tw);
  *oy = t / tw % th * 4;
  *ox = t % tw * 4;
}

typedef struct {
  const ft_wino_geo *g;
  const float *x;
  float *v;
} ft_wino_in_ctx;

/* The B^T d B of tile t's 6x6 points d (16 channels a vector) into V[xi], row-major [tiles][C]. */
static inline __attribute__((always_inline)) void ft_wino_input_tile(const ft_wino_geo *g, float *v, int64_t t,
                                                                      int64_t c0, int cn, ft_v16f *d) {
  ft_v16f r[36];
  int64_t T = ft_wino_tiles(g);
  for (int j = 0; j < 6; j++) ft_wino_bt6(d + j, 6, r + j, 6);      /* B^T d */
  for (int i = 0; i < 6; i++) ft_wino_bt6(r + i * 6, 1, d + i * 6, 1); /* (B^T d) B */
  for (int xi = 0; xi < FT_WINO_P; xi++) {
    float *dst = v + ((int64_t)xi * T + t) * g->C + c0;
    if (cn == FT_WINO_L) *(ft_v16u *)dst = d[xi];
    else
      for (int l = 0; l < cn; l++) dst[l] = d[xi][l];
  }
}

#ifdef __AVX512F__
/* Input row yy (padded coordinates already removed), columns xs .. xs + 15, of the cn <= 16
 * channel planes at xc: col[j] holds the channels at column xs + j, zeros outside the image and
 * past cn. Inside the image with 16 channels, by 128-bit loads and in-lane transposes
 * (ft_gather16_t); at the edges by masked loads (an expanding load where xs < 0) and
 * ft_transpose16. */
static inline __attribute__((always_inline)) void ft_wino_cols(const ft_wino_geo *g, const float *xc, int64_t yy,
                                                                int64_t xs, int cn, __m512 *col) {
  int64_t H = g->H, W = g->W, HW = H * W;
  if (yy < 0 || yy >= H) {
    for (int j = 0; j < 16; j++) col[j] = _mm512_setzero_ps();
    return;
  }
  const float *row = xc + yy * W;
  if (cn == 16 && xs >= 0 && xs + 16 <= W) {
    ft_gather16_t(row + xs, HW, col);
    ft_lanes4x4(col);
    return;
  }
  int64_t a = xs < 0 ? -xs : 0, b = W - xs < 16 ? W - xs : 16; /* lanes [a, b) inside the row */
  __mmask16 m = b > a ? (__mmask16)(((1u << b) - 1) & ~((1u << a) - 1)) : 0;
  for (int l = 0; l < 16; l++)
    col[l] = l >= cn || !m ? _mm512_setzero_ps()
             : xs < 0      ? _mm512_maskz_expandloadu_ps(m, row + l * HW)
                           : _mm512_maskz_loadu_ps(m, row + l * HW + xs);
  ft_transpose16(col);
}

/* Tiles [lo, hi): up to 3 tiles side by side in a row of tiles (6-wide windows 4 apart: 14
 * columns) share each input row's 16 columns, turned from channel rows into channel vectors
 * once (ft_wino_cols). Element by element (16 scalar loads per point and tile) this was most of
 * the transform's time. The points and their transform are the scalar form's: the same V. */
static void ft_wino_input_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_wino_in_ctx *k = (const ft_wino_in_ctx *)ctx;
  const ft_wino_geo *g = k->g;
  int64_t HW = g->H * g->W, tw = (g->OW + 3) / 4;
  for (int64_t t = lo; t < hi;) {
    int64_t n, y0, x0, nt = tw - t % tw; /* the tiles left in t's row */
    nt = nt < 3 ? nt : 3;
    nt = nt < hi - t ? nt : hi - t;
    ft_wino_tile_at(g, t, &n, &y0, &x0);
    y0 -= g->pt;
    x0 -= g->pl;
    for (int64_t c0 = 0; c0 < g->C; c0 += FT_WINO_L) {
      int cn = g->C - c0 < FT_WINO_L ? (int)(g->C - c0) : FT_WINO_L;
      const float *xc = k->x + (n * g->C + c0) * HW;
      __m512 col[6][16];
      for (int i = 0; i < 6; i++) ft_wino_cols(g, xc, y0 + i, x0, cn, col[i]);
      for (int64_t q = 0; q < nt; q++) {
        ft_v16f d[36];
        for (int i = 0; i < 6; i++)
          for (int j = 0; j < 6; j++) d[i * 6 + j] = (ft_v16f)col[i][4 * q + j];
        ft_wino_input_tile(g, k->v, t + q, c0, cn, d);
      }
    }
    t += nt;
  }
}
#else
/* Tiles [lo, hi): each point's 16 channels gathered element by element. */
static void ft_wino_input_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_wino_in_ctx *k = (const ft_wino_in_ctx *)ctx;
  const ft_wino_geo *g = k->g;
  int64_t H = g->H, W = g->W, HW = H * W;
  for (int64_t t = lo; t < hi; t++) {
    int64_t n, y0, x0;
    ft_wino_tile_at(g, t, &n, &y0, &x0);
    y0 -= g->pt;
    x0 -= g->pl;
    int inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= H && x0 + 6 <= W;
    for (int64_t c0 = 0; c0 < g->C; c0 += FT_WINO_L) {
      int cn = g->C - c0 < FT_WINO_L ? (int)(g->C - c0) : FT_WINO_L;
      ft_v16f d[36];
      const float *xc = k->x + (n * g->C + c0) * HW;
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
          int64_t yy = y0 + i, xx = x0 + j;
          ft_v16f e = {0};
          if (inside || (yy >= 0 && yy < H && xx >= 0 && xx < W))
            for (int l = 0; l < cn; l++) e[l] = xc[l * HW + yy * W + xx];
          d[i * 6 + j] = e;
        }
      ft_wino_input_tile(g, k->v, t, c0, cn, d);
    }
  }
}
#endif

typedef struct {
  const ft_wino_geo *g;
  const float *m;
  float *y;
  const ft_gemm_epi *e;
} ft_wino_out_ctx;

/* A^T m A of tile t for the on <= 16 channels from o0: out[4i + j] holds point (i, j), one
 * vector of the channels (zeros past on). */
static inline __attribute__((always_inline)) void ft_wino_output_points(const ft_wino_out_ctx *k, int64_t t,
                                                                         int64_t o0, int on, ft_v16f *out) {
  const ft_wino_geo *g = k->g;
  int64_t T = ft_wino_tiles(g);
  ft_v16f m[36], r[24];
  for (int xi = 0; xi < FT_WINO_P; xi++) {
    const float *src = k->m + ((int64_t)xi * T + t) * g->CO + o0;
    if (on == FT_WINO_L) m[xi] = *(const ft_v16u *)src;
    else {
      ft_v16f v = {0};
      for (int l = 0; l < on; l++) v[l] = src[l];
      m[xi] = v;
    }
  }
  for (int j = 0; j < 6; j++) ft_wino_at6(m + j, 6, r + j, 6);          /* A^T m: 4x6 */
  for (int i = 0; i < 4; i++) ft_wino_at6(r + i * 6, 1, out + i * 4, 1); /* (A^T m) A */
}

/* Output channels [o0, o0 + 16) of tile t: A^T m A, then the epilogue on each row of 4. */
static void ft_wino_output_tile(const ft_wino_out_ctx *k, int64_t t, int64_t o0) {
  const ft_wino_geo *g = k->g;
  const ft_gemm_epi *e = k->e;
  int64_t OHW = g->OH * g->OW, n, oy, ox;
  ft_wino_tile_at(g, t, &n, &oy, &ox);
  int rows = g->OH - oy < 4 ? (int)(g->OH - oy) : 4, cols = g->OW - ox < 4 ? (int)(g->OW - ox) : 4;
  int on = g->CO - o0 < FT_WINO_L ? (int)(g->CO - o0) : FT_WINO_L;
  ft_v16f out[16];
  ft_wino_output_points(k, t, o0, on, out);
  for (int l = 0; l < on; l++) {
    int64_t o = o0 + l, base = (n * g->CO + o) * OHW + oy * g->OW + ox;
    float b = e->bias ? e->bias[o] : 0.0f;
    for (int i = 0; i < rows; i++) {
      float row[4];
      const float *rr = e->res ? e->res + base + i * g->OW : NULL;
      for (int j = 0; j < cols; j++) row[j] = out[i * 4 + j][l] + b;
      if (rr && !e->res_after)
        for (int j = 0; j < cols; j++) row[j] += rr[j];
      if (e->act != FT_ACT_NONE) ft_gemm_act(row, cols, e);
      if (rr && e->res_after)
        for (int j = 0; j < cols; j++) row[j] += rr[j];
      memcpy(k->y + base + i * g->OW, row, sizeof(float) * (size_t)cols);
    }
  }
}

#ifdef __AVX512F__
/* Tiles tx0 .. tx0 + nq - 1 (nq <= 4) of one row of tiles (band) for the on <= 16 channels from
 * o0, when the activation is a clamp (ft_gemm_clamp_of): for each output row i, the 4 tiles' 4
 * points of the row (16 vectors of channels) are transposed at once, so that each channel's 16
 * columns go out as one masked store after bias, residual and clamp. (One masked 4-float store
 * per tile, row and channel, after a transpose per tile, cost about a tenth of SqueezeNet;
 * element by element, a third of a 13x13 layer.) */
static void ft_wino_output_band4(const ft_wino_out_ctx *k, int64_t band, int64_t tx0, int nq, int64_t o0) {
  const ft_wino_geo *g = k->g;
  const ft_gemm_epi *e = k->e;
  int64_t tw = (g->OW + 3) / 4, OHW = g->OH * g->OW, OW = g->OW, n, oy, ox;
  ft_wino_tile_at(g, band * tw + tx0, &n, &oy, &ox);
  int rows = g->OH - oy < 4 ? (int)(g->OH - oy) : 4, cols = OW - ox < 16 ? (int)(OW - ox) : 16;
  int on = g->CO - o0 < FT_WINO_L ? (int)(g->CO - o0) : FT_WINO_L;
  ft_v16f out[4][16];
  for (int q = 0; q < 4; q++)
    if (q < nq) ft_wino_output_points(k, band * tw + tx0 + q, o0, on, out[q]);
    else
      for (int p = 0; p < 16; p++) out[q][p] = (ft_v16f){0};
  __m512 lo, hi;
  ft_gemm_clamp_of(e, &lo, &hi);
  __mmask16 cm = (__mmask16)((1u << cols) - 1);
  const float *res = e->res;
  int after = e->res_after, act = e->act;
  for (int i = 0; i < rows; i++) {
    __m512 v[16];
    for (int q = 0; q < 4; q++)
      for (int j = 0; j < 4; j++) v[4 * q + j] = (__m512)out[q][4 * i + j];
    ft_transpose16(v); /* v[l]: channel o0 + l, lane 4q + j: column ox + 4q + j */
    for (int l = 0; l < on; l++) {
      int64_t at = (n * g->CO + o0 + l) * OHW + (oy + i) * OW + ox;
      __m512 x = _mm512_add_ps(v[l], _mm512_set1_ps(e->bias ? e->bias[o0 + l] : 0.0f));
      __m512 rv = res ? _mm512_maskz_loadu_ps(cm, res + at) : _mm512_setzero_ps();
      if (res && !after) x = _mm512_add_ps(x, rv);
      x = ft_gemm_clamp16(x, lo, hi, act);
      if (res && after) x = _mm512_add_ps(x, rv);
      _mm512_mask_storeu_ps(k->y + at, cm, x);
    }
  }
}
#endif

/* Items [lo, hi) of the output transform: (block of 16 output channels, image, row of tiles),
 * the channel block slowest. Tiles side by side write the same cache lines of each output
 * plane (a 4-wide piece of a 13-wide row), so a row of tiles is one item: work items of one
 * tile each, handed out to 2 threads in turn, had both threads writing the same lines of every
 * plane, and a 13x13 layer ran slower on 2 threads than on one. */
static inline void ft_wino_output_item(const ft_wino_out_ctx *k, int64_t o0, int64_t band) {
  int64_t tw = (k->g->OW + 3) / 4; /* band = n * th + tile row */
#ifdef __AVX512F__
  if (ft_gemm_clamp_of(k->e, NULL, NULL)) {
    for (int64_t tx = 0; tx < tw; tx += 4) ft_wino_output_band4(k, band, tx, tw - tx < 4 ? (int)(tw - tx) : 4, o0);
    return;
  }
#endif
  for (int64_t tx = 0; tx < tw; tx++) ft_wino_output_tile(k, band * tw + tx, o0);
}

static void ft_wino_output_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_wino_out_ctx *k = (const ft_wino_out_ctx *)ctx;
  const ft_wino_geo *g = k->g;
  int64_t bands = g->N * ((g->OH + 3) / 4);
  for (int64_t it = lo; it < hi; it++) ft_wino_output_item(k, it / bands * FT_WINO_L, it % bands);
}

/* Output transform items: channel blocks times rows of tiles. */
static inline int64_t ft_wino_output_items(const ft_wino_geo *g) {
  return (g->CO + FT_WINO_L - 1) / FT_WINO_L * g->N * ((g->OH + 3) / 4);
}

/* The 36 per-point GEMMs as one parallel loop: item it is work item it % per of GEMM it / per.
 * One loop rather than one per GEMM: each GEMM alone has few items (a row block times CO/32
 * panels: 2 at 64 output channels), too few to keep 2 threads even, and 36 loops would wake
 * the workers 36 times. */
typedef struct {
  const ft_gemm_op *ops;
  int64_t mc, per;
} ft_wino_gemms_ctx;

static void ft_wino_gemms_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_wino_gemms_ctx *c = (const ft_wino_gemms_ctx *)ctx;
  for (int64_t it = lo; it < hi; it++) ft_gemm_item(&c->ops[it / c->per], c->mc, it % c->per);
}

/* The same with few tiles (M <= FT_GEMM_SMALL_M: a 13x13 or 7x7 plane): item it is column panel
 * it % per of GEMM it / per on the small-M GEMM, which reads A's rows in place. The
 * blocked path cut 16 rows into 12 + 4 and packed its A sliver again for every panel: the GEMMs
 * ran at 2/3 of the small-M rate. */
typedef struct {
  const ft_gemm_op *ops;
  ft_gemm_small_plan pl;
  int64_t per;
} ft_wino_small_ctx;

static void ft_wino_small_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_wino_small_ctx *c = (const ft_wino_small_ctx *)ctx;
  for (int64_t it = lo; it < hi; it++) ft_gemm_small_panel(&c->ops[it / c->per], c->pl, it % c->per);
}

/* ---- one row of tiles at a time ------------------------------------------------------------
 * On a large plane V and M ([36][tiles][C] and [36][tiles][CO]) are megabytes (SqueezeNet's
 * 16 -> 64 channels at 55x55: 2.2 MB, ResNet-50's 64 -> 64 at 56x56: 3.6 MB): the GEMMs read V
 * and the output transform M back from L3, each phase behind a barrier. Where the plane has at
 * least FT_WINO_ROWS_MIN rows of tiles and V and M pass FT_WINO_ROWS_BYTES, a work item is one
 * row of tiles of one image, taken through all three phases while its slice of V and M (36 x
 * the row's tiles x (C + CO) floats) stays in L2: its input transform, its 36 GEMMs (the
 * row's tiles as M: the small-M path for up to 16 tiles, the blocked one above), and its
 * output transform. Every row reads all of U (36 x C x CO floats) again, so U must stay in L2
 * as well (at most FT_WINO_ROWS_BYTES: ResNet-50's 128 -> 128 at 28x28, U 2.3 MB, ran 6%
 * slower by rows). Fewer than FT_WINO_ROWS_MIN rows split unevenly over 2 threads. The choice
 * follows the geometry alone, never the thread count, so the sums are the same on any number
 * of threads. A conv alone, 1 / 2 threads: 16 -> 64 at 55x55 177 -> 153 / 96 -> 83 us, 64 -> 64
 * at 56x56 415 -> 394 / 224 -> 201 us. */
#define FT_WINO_ROWS_MIN 8
#define FT_WINO_ROWS_BYTES ((int64_t)1 << 20)

static inline int ft_wino_by_rows(const ft_wino_geo *g) {
  int64_t th = (g->OH + 3) / 4, f = (int64_t)sizeof(float) * FT_WINO_P;
  return th >= FT_WINO_ROWS_MIN && f * ft_wino_tiles(g) * (g->C + g->CO) > FT_WINO_ROWS_BYTES &&
         f * g->C * g->CO <= FT_WINO_ROWS_BYTES;
}

typedef struct {
  const ft_wino_geo *g;
  const float *x, *u;
  float *v, *m, *y;
  const ft_gemm_epi *e;
} ft_wino_rows_ctx;

static void ft_wino_rows_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_wino_rows_ctx *k = (const ft_wino_rows_ctx *)ctx;
  const ft_wino_geo *g = k->g;
  int64_t T = ft_wino_tiles(g), tw = (g->OW + 3) / 4, per = ft_gemm_packed_b_floats(g->C, g->CO);
  ft_wino_in_ctx ic = {g, k->x, k->v};
  ft_wino_out_ctx oc = {g, k->m, k->y, k->e};
  for (int64_t band = lo; band < hi; band++) { /* band = n * th + tile row */
    int64_t t0 = band * tw;
    ft_wino_input_run(&ic, t0, t0 + tw);
    for (int xi = 0; xi < FT_WINO_P; xi++) {
      ft_gemm_op op;
      memset(&op, 0, sizeof op);
      op.M = tw; op.N = g->CO; op.K = g->C;
      op.a = k->v + ((int64_t)xi * T + t0) * g->C; op.a_rs = g->C; op.a_cs = 1;
      op.bp = k->u + xi * per;
      op.c = k->m + ((int64_t)xi * T + t0) * g->CO; op.ldc = g->CO;
      op.e.alpha = 1.0f;
      if (tw <= FT_GEMM_SMALL_M) {
        ft_gemm_small_plan pl = ft_gemm_small_plan_for(tw);
        for (int64_t jr = 0; jr < (g->CO + FT_GEMM_NR - 1) / FT_GEMM_NR; jr++) ft_gemm_small_panel(&op, pl, jr);
      } else ft_gemm_run_par(&op, ft_gemm_mc(tw, g->C), 0);
    }
    for (int64_t o0 = 0; o0 < g->CO; o0 += FT_WINO_L) ft_wino_output_item(&oc, o0, band);
  }
}

/* The convolution: x [N, C, H, W] and the packed transformed weights u to y [N, CO, OH, OW].
 * e: bias (per output channel), activation and residual (shaped like y); alpha, beta and the
 * bias strides are not read. The residual may share y's storage: each output element is
 * written right after its residual element is read. scratch: ft_wino_scratch. */
static void ft_wino_conv_f32(const ft_wino_geo *g, const float *x, const float *u, const ft_gemm_epi *e,
                             float *y, void *scratch) {
  int64_t T = ft_wino_tiles(g);
  if (T <= 0 || g->CO <= 0) return;
  float *v = (float *)scratch, *m = v + FT_WINO_P * T * g->C;
  int64_t flops = T * g->C * g->CO * 2 * FT_WINO_P;
  int par = flops > FT_GEMM_PAR_FLOPS;
  if (ft_wino_by_rows(g) && g->C > 0) {
    ft_wino_rows_ctx rc = {g, x, u, v, m, y, e};
    ft_parallel_for(g->N * ((g->OH + 3) / 4), par, ft_wino_rows_run, &rc);
    return;
  }
  ft_gemm_small_plan pl = ft_gemm_small_plan_for(T);
  int small = T <= FT_GEMM_SMALL_M && g->C > 0;
  ft_wino_in_ctx ic = {g, x, v};
  ft_parallel_for(T, par, ft_wino_input_run, &ic);
  int64_t per = ft_gemm_packed_b_floats(g->C, g->CO);
  ft_gemm_op ops[FT_WINO_P];
  memset(ops, 0, sizeof ops);
  for (int xi = 0; xi < FT_WINO_P; xi++) {
    ft_gemm_op *op = &ops[xi];
    op->M = T; op->N = g->CO; op->K = g->C;
    op->a = v + (int64_t)xi * T * g->C; op->a_rs = g->C; op->a_cs = 1;
    op->bp = u + xi * per;
    op->c = m + (int64_t)xi * T * g->CO; op->ldc = g->CO;
    op->e.alpha = 1.0f;
  }
  if (small) {
    ft_wino_small_ctx sc = {ops, pl, (g->CO + FT_GEMM_NR - 1) / FT_GEMM_NR};
    ft_parallel_for(FT_WINO_P * sc.per, par, ft_wino_small_run, &sc);
  } else {
    int64_t mc = ft_gemm_mc(T, g->C);
    ft_wino_gemms_ctx gc = {ops, mc, ft_gemm_items(&ops[0], mc)};
    ft_parallel_for(FT_WINO_P * gc.per, par, ft_wino_gemms_run, &gc);
  }
  ft_wino_out_ctx oc = {g, m, y, e};
  ft_parallel_for(ft_wino_output_items(g), par, ft_wino_output_run, &oc);
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
  ft_parallel_for(T, 0, ft_wino_input_run, &ic);
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
  ft_parallel_for(ft_wino_output_items(&g), 0, ft_wino_output_run, &oc);
}

#endif
