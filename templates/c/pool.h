/* Pooling: MaxPool (with optional Indices), AveragePool, LpPool over 1-D to 3-D windows, and
 * the global forms. NCHW; each (n, c) plane is independent, so planes are the parallel loop.
 *
 * The windowed kernels walk one output row at a time and add each kernel tap as a pass over
 * the row (clipped to where the tap reads inside the input), which the compiler vectorizes;
 * padding never enters the loops. */
#ifndef FT_POOL_H
#define FT_POOL_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "parallel.h"
#include "pool_params.h"
#include "tensor.h"

/* Window taps (outputs x kernel size) worth waking threads for. */
#define FT_POOL_PAR_WORK (1 << 18)
/* Work items a parallel MaxPool hands out at least: with fewer planes, each plane is split into
 * bands of output rows (which thread computes a row never changes it). */
#define FT_POOL_MIN_ITEMS 32
static inline int ft_pool_par(const int64_t *p) {
  const int64_t *o = p + FT_PL_OUT, *k = p + FT_PL_K;
  return p[FT_PL_PLANES] * o[0] * o[1] * o[2] * k[0] * k[1] * k[2] > FT_POOL_PAR_WORK;
}

/* One pooling call as its parallel loop over planes sees it. */
typedef struct {
  const int64_t *p;
  const double *f;
  const void *const *in;
  void *const *out;
  int kind;  /* AveragePool/LpPool/global pools: 0 avg, 1 max, 2 lp */
  int bands; /* MaxPool: row bands per plane, so that a few large planes still give every thread a share */
} ft_pool_ctx;

/* Output positions o in [0, n) whose tap at offset off (input index o*s + off) lies in
 * [lo, hi): returns the range [*a, *b). */
static inline void ft_pool_range(int64_t off, int64_t s, int64_t lo, int64_t hi, int64_t n,
                                 int64_t *a, int64_t *b) {
  int64_t x = lo - off <= 0 ? 0 : (lo - off + s - 1) / s;
  int64_t y = hi - 1 - off < 0 ? 0 : (hi - 1 - off) / s + 1;
  if (y > n) y = n;
  if (x > y) x = y;
  *a = x;
  *b = y;
}

/* Taps of a window starting at start (step d, k taps) that land in [lo, hi). */
static inline int64_t ft_pool_count(int64_t start, int64_t d, int64_t k, int64_t lo, int64_t hi) {
  int64_t a, b;
  ft_pool_range(start, d, lo, hi, k, &a, &b);
  return b - a;
}

/* Visit the taps of output row (od, oh) of one plane: for each tap row inside the input, BODY
 * runs with xr (the input row, shifted so that xr[ow * sw] is the tap of output ow) and the
 * output range [a, b) where that tap is inside the input. */
#define FT_POOL_TAPS(p, x, od, oh, BODY)                                                       \
  do {                                                                                         \
    const int64_t *in_ = (p) + FT_PL_IN, *k_ = (p) + FT_PL_K, *s_ = (p) + FT_PL_S;            \
    const int64_t *d_ = (p) + FT_PL_D, *pb_ = (p) + FT_PL_P, *out_ = (p) + FT_PL_OUT;         \
    for (int64_t kd = 0; kd < k_[0]; kd++) {                                                   \
      int64_t id = (od) * s_[0] + kd * d_[0] - pb_[0];                                         \
      if (id < 0 || id >= in_[0]) continue;                                                    \
      for (int64_t kh = 0; kh < k_[1]; kh++) {                                                 \
        int64_t ih = (oh) * s_[1] + kh * d_[1] - pb_[1];                                       \
        if (ih < 0 || ih >= in_[1]) continue;                                                  \
        for (int64_t kw = 0; kw < k_[2]; kw++) {                                               \
          int64_t off = kw * d_[2] - pb_[2], a, b;                                             \
          ft_pool_range(off, s_[2], 0, in_[2], out_[2], &a, &b);                               \
          const int64_t roff = (id * in_[1] + ih) * in_[2];                                    \
          const int64_t sw = s_[2];                                                            \
          (void)roff; (void)sw;                                                                \
          BODY;                                                                                \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  } while (0)

/* MaxPool of one output row oh of a 1-D/2-D plane, in two steps: the maximum of the window's
 * input rows, column by column (contiguous rows: vectorized), then each horizontal tap as a pass
 * over that one row. k_h + k_w passes where the tap by tap loop makes k_h * k_w passes over the
 * output row (3x3: 6 instead of 9, and the strided reads come from a row in L1). Every value is
 * folded with the same comparison as the tap loop, so NaN inputs are skipped alike. */
#define FT_POOL_ROWBUF 2048
#define FT_MAXPOOL_ROWS(T, LOWEST)                                                             \
  do {                                                                                         \
    const int64_t *k_ = p + FT_PL_K, *s_ = p + FT_PL_S, *d_ = p + FT_PL_D, *pb_ = p + FT_PL_P; \
    T cm_[FT_POOL_ROWBUF];                                                                     \
    int64_t IW_ = ins[2];                                                                      \
    for (int64_t iw = 0; iw < IW_; iw++) cm_[iw] = LOWEST;                                     \
    for (int64_t kh = 0; kh < k_[1]; kh++) {                                                   \
      int64_t ih = oh * s_[1] + kh * d_[1] - pb_[1];                                           \
      if (ih < 0 || ih >= ins[1]) continue;                                                    \
      const T *restrict xr = x + ih * IW_;                                                     \
      for (int64_t iw = 0; iw < IW_; iw++) cm_[iw] = xr[iw] > cm_[iw] ? xr[iw] : cm_[iw];       \
    }                                                                                          \
    for (int64_t kw = 0; kw < k_[2]; kw++) {                                                   \
      int64_t off = kw * d_[2] - pb_[2], a, b, sw = s_[2];                                     \
      ft_pool_range(off, sw, 0, IW_, OW, &a, &b);                                              \
      /* indexed from cm_ itself: cm_ + off may point before the array (off < 0 with padding) */ \
      if (sw == 1) for (int64_t ow = a; ow < b; ow++) yr[ow] = cm_[ow + off] > yr[ow] ? cm_[ow + off] : yr[ow]; \
      else if (sw == 2) for (int64_t ow = a; ow < b; ow++) yr[ow] = cm_[2 * ow + off] > yr[ow] ? cm_[2 * ow + off] : yr[ow]; \
      else for (int64_t ow = a; ow < b; ow++) yr[ow] = cm_[ow * sw + off] > yr[ow] ? cm_[ow * sw + off] : yr[ow]; \
    }                                                                                          \
  } while (0)

#ifdef __AVX512F__
/* The float MaxPool of output rows [r0, r1) of a 2-D plane (y: the plane's output) with
 * horizontal stride 1 or 2, in AVX-512: the same two steps and the same fold order as
 * FT_MAXPOOL_ROWS, so the same bits (_mm512_max_ps(x, y) is x > y ? x : y lane by lane: a NaN x
 * and equal zeros keep y), with full vectors. The column maxima go into cm_ between runs of
 * -INFINITY wide enough that every tap of every output lane reads inside the buffer; a -INFINITY
 * never changes the fold (it is never > y), so the taps need no clipping. Stride 2 takes the even
 * columns of two vectors with one permute per tap. Computing each input row's horizontal maxima
 * once for the two output rows that share it (3x3 stride 2) would fold in the other order, which
 * picks another zero when +0 and -0 tie, so it is not done; the re-read row comes from L1.
 * Returns 0 (nothing written) when the plane does not fit this path. */
#define FT_MAXPOOL_VBUF (FT_POOL_ROWBUF + 64)
/* The taps of one output row from the column maxima cm (cm[sw * o + t * dw] is tap t of output
 * o); inlined with kw and dw constant for the usual windows, so the tap loop unrolls. */
static inline __attribute__((always_inline)) void ft_maxpool_f32_taps_avx512(const float *cm, float *yr, int64_t OW,
                                                                             int64_t sw, int64_t kw, int64_t dw) {
  const __m512 lo = _mm512_set1_ps(-INFINITY);
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  for (int64_t o = 0; o < OW; o += 16) {
    __m512 v = lo;
    const float *c0 = cm + sw * o;
    if (sw == 1)
      for (int64_t t = 0; t < kw; t++) v = _mm512_max_ps(_mm512_loadu_ps(c0 + t * dw), v);
    else
      for (int64_t t = 0; t < kw; t++) {
        const float *ct = c0 + t * dw;
        v = _mm512_max_ps(_mm512_permutex2var_ps(_mm512_loadu_ps(ct), even, _mm512_loadu_ps(ct + 16)), v);
      }
    if (OW - o >= 16) _mm512_storeu_ps(yr + o, v);
    else _mm512_mask_storeu_ps(yr + o, (__mmask16)((1u << (OW - o)) - 1), v);
  }
}

/* The input rows of output row oh's window that lie inside the plane (at most 64), in order. */
static inline int ft_pool_window_rows(const int64_t *p, const float *x, int64_t oh, const float **rows) {
  const int64_t *ins = p + FT_PL_IN, *k_ = p + FT_PL_K, *s_ = p + FT_PL_S, *d_ = p + FT_PL_D, *pb_ = p + FT_PL_P;
  int nr = 0;
  for (int64_t kh = 0; kh < k_[1]; kh++) {
    int64_t ih = oh * s_[1] + kh * d_[1] - pb_[1];
    if (ih >= 0 && ih < ins[1]) rows[nr++] = x + ih * ins[2];
  }
  return nr;
}

/* Lanes j of a vector of columns [c, c + 16) with 0 <= c + j < IW. */
static inline __mmask16 ft_pool_cols(int64_t c, int64_t IW) {
  int64_t a = c < 0 ? -c : 0, b = IW - c < 16 ? IW - c : 16;
  if (b <= a) return 0;
  return (__mmask16)(((1u << b) - 1) & ~((1u << a) - 1));
}

/* 16 outputs from the column maxima a (columns [c, c + 16)), b ([c + 16, c + 32)) and e
 * (column c + 32 in lane 0): even columns, odd ones, even ones one further */
static inline __attribute__((always_inline)) __m512 ft_maxpool_s2_fold(__m512 a, __m512 b, __m512 e, int kw) {
  const __m512 lo = _mm512_set1_ps(-INFINITY);
  const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i od = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  __m512 t0 = _mm512_permutex2var_ps(a, ev, b), v = _mm512_max_ps(t0, lo);
  v = _mm512_max_ps(_mm512_permutex2var_ps(a, od, b), v);
  if (kw == 3) v = _mm512_max_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(e), _mm512_castps_si512(t0), 1)), v);
  return v;
}

/* Where ft_maxpool_f32_s2_row's vectors of 16 outputs read, the same for every row of a call:
 * the run o0, o0 + 16, ... <= o1 whose 32 (33) columns lie inside the row and whose outputs are
 * all in it (plain loads); tail, where the row's last 16 outputs are such a vector too, its
 * start (OW - 16, overlapping the run: those outputs are computed twice, alike), else -1; and
 * the n vectors outside (at most FT_S2_EDGES: one left of the run where pw > 0, the last one or
 * two where there is no tail) with their column masks. */
#define FT_S2_EDGES 8
typedef struct {
  int64_t o0, o1, tail;
  int n;
  int64_t o[FT_S2_EDGES];
  __mmask16 ma[FT_S2_EDGES], mb[FT_S2_EDGES], me[FT_S2_EDGES];
} ft_s2_plan;

/* 0 where the vectors outside the run are more than FT_S2_EDGES (a row far wider than its
 * input: then the caller takes the column-maxima path) */
static inline int ft_s2_plan_make(ft_s2_plan *g, int64_t IW, int64_t OW, int64_t pw, int kw) {
  const int64_t k3 = kw == 3, num = IW + pw - 32 - k3; /* c + 32 + k3 <= IW, c = 2o - pw */
  g->o0 = pw > 0 ? 16 : 0;
  g->o1 = num < 0 ? -1 : num / 2;
  g->tail = -1;
  if (g->o1 >= OW - 16 && OW - 16 >= g->o0) { /* every vector from o0 on is inside the row */
    g->o1 = OW - 16;
    if ((OW - g->o0) % 16) g->tail = OW - 16;
  }
  if (g->o1 > OW - 16) g->o1 = OW - 16;
  g->n = 0;
  for (int64_t o = 0; o < OW; o += 16) {
    if ((o >= g->o0 && o <= g->o1) || (g->tail >= 0 && o > g->o1)) continue;
    if (g->n == FT_S2_EDGES) return 0;
    const int64_t c = 2 * o - pw;
    g->o[g->n] = o;
    g->ma[g->n] = ft_pool_cols(c, IW);
    g->mb[g->n] = ft_pool_cols(c + 16, IW);
    g->me[g->n] = kw == 3 ? (__mmask16)(ft_pool_cols(c + 32, IW) & 1) : 0;
    g->n++;
  }
  return 1;
}

/* The 16 outputs at o of a vector inside the row (ft_s2_plan's run and tail): plain loads */
static inline __attribute__((always_inline)) void ft_maxpool_f32_s2_in(const float *const *rows, int nr, float *yr,
                                                                       int64_t pw, int kw, int64_t o) {
  const __m512 lo = _mm512_set1_ps(-INFINITY);
  const int64_t c = 2 * o - pw;
  __m512 a, b, e = lo;
  if (nr == 3) {
    const float *x0 = rows[0] + c, *x1 = rows[1] + c, *x2 = rows[2] + c;
    a = _mm512_max_ps(_mm512_loadu_ps(x2), _mm512_max_ps(_mm512_loadu_ps(x1), _mm512_max_ps(_mm512_loadu_ps(x0), lo)));
    b = _mm512_max_ps(_mm512_loadu_ps(x2 + 16), _mm512_max_ps(_mm512_loadu_ps(x1 + 16), _mm512_max_ps(_mm512_loadu_ps(x0 + 16), lo)));
    if (kw == 3)
      e = _mm512_max_ps(_mm512_maskz_loadu_ps(1, x2 + 32),
                        _mm512_max_ps(_mm512_maskz_loadu_ps(1, x1 + 32), _mm512_max_ps(_mm512_maskz_loadu_ps(1, x0 + 32), lo)));
  } else { /* the same from the rows there are */
    a = lo;
    b = lo;
    for (int r = 0; r < nr; r++) {
      a = _mm512_max_ps(_mm512_loadu_ps(rows[r] + c), a);
      b = _mm512_max_ps(_mm512_loadu_ps(rows[r] + c + 16), b);
      if (kw == 3) e = _mm512_max_ps(_mm512_maskz_loadu_ps(1, rows[r] + c + 32), e);
    }
  }
  _mm512_storeu_ps(yr + o, ft_maxpool_s2_fold(a, b, e, kw));
}

/* One output row of a 2- or 3-wide window with horizontal stride 2 and dilation 1 (the CNN
 * pools: 3x3/2, 2x2/2) from its nr input rows, in registers: per 16 outputs the column maxima of
 * input columns [c, c + 48) (the third vector for its first column only), then the taps as the
 * even columns, the odd ones and the even ones one further (a lane shift). The same folds in
 * the same order as ft_maxpool_f32_taps_avx512 over a column-maxima buffer, without the buffer:
 * its stores and the unaligned loads right after them (which wait until the stores reach the
 * cache) made that path 2-4x slower than this on SqueezeNet's and ResNet-50's pools. Columns
 * outside the row load as -INFINITY (masked: nothing is read there); where they lie is planned
 * once per call (ft_s2_plan): worked out per vector, with the shapes not constants, the row took
 * twice the time. */
static inline void ft_maxpool_f32_s2_row(const float *const *rows, int nr, float *yr, int64_t OW, int64_t pw,
                                         int kw, const ft_s2_plan *g) {
  const __m512 lo = _mm512_set1_ps(-INFINITY);
  for (int64_t o = g->o0; o <= g->o1; o += 16) ft_maxpool_f32_s2_in(rows, nr, yr, pw, kw, o);
  if (g->tail >= 0) ft_maxpool_f32_s2_in(rows, nr, yr, pw, kw, g->tail);
  for (int i = 0; i < g->n; i++) {
    const int64_t o = g->o[i], c = 2 * o - pw;
    const __mmask16 ma = g->ma[i], mb = g->mb[i], me = g->me[i];
    __m512 a = lo, b = lo, e = lo;
#define FT_S2_EDGE_ROW_(r)                                                                          \
  {                                                                                                 \
    const float *xr = (const float *)((uintptr_t)rows[r] + (uintptr_t)(c * (int64_t)sizeof(float))); \
    a = _mm512_max_ps(_mm512_mask_loadu_ps(lo, ma, xr), a);                                         \
    b = _mm512_max_ps(_mm512_mask_loadu_ps(lo, mb, xr + 16), b);                                    \
    if (kw == 3) e = _mm512_max_ps(_mm512_mask_loadu_ps(lo, me, xr + 32), e);                       \
  }
    if (nr == 3) { FT_S2_EDGE_ROW_(0) FT_S2_EDGE_ROW_(1) FT_S2_EDGE_ROW_(2) }
    else
      for (int r = 0; r < nr; r++) FT_S2_EDGE_ROW_(r)
#undef FT_S2_EDGE_ROW_
    __m512 v = ft_maxpool_s2_fold(a, b, e, kw);
    if (OW - o >= 16) _mm512_storeu_ps(yr + o, v);
    else _mm512_mask_storeu_ps(yr + o, (__mmask16)((1u << (OW - o)) - 1), v);
  }
}

static int ft_maxpool_f32_rows_avx512(const int64_t *p, const float *x, float *y, int64_t r0, int64_t r1) {
  const int64_t *ins = p + FT_PL_IN, *k_ = p + FT_PL_K, *s_ = p + FT_PL_S, *d_ = p + FT_PL_D, *pb_ = p + FT_PL_P;
  const int64_t IW = ins[2], OW = p[FT_PL_OUT + 2], sw = s_[2], kw = k_[2], dw = d_[2], pw = pb_[2];
  ft_s2_plan g;
  if (sw == 2 && dw == 1 && (kw == 2 || kw == 3) && pw >= 0 && pw < kw && k_[1] <= 64 && ft_s2_plan_make(&g, IW, OW, pw, (int)kw)) {
    const int64_t IH = ins[1], KH = k_[1], sh = s_[1], ph = pb_[1];
    for (int64_t oh = r0; oh < r1; oh++) {
      const float *rows[64];
      const int64_t ih = oh * sh - ph;
      int nr = 3;
      if (KH == 3 && d_[1] == 1 && ih >= 0 && ih + 3 <= IH) { /* the window inside the plane */
        rows[0] = x + ih * IW;
        rows[1] = rows[0] + IW;
        rows[2] = rows[1] + IW;
        if (oh + 1 < r1 && ih + 5 <= IH) /* the next row's two new input rows: ahead of the loads */
          for (int64_t b = 0; b < 2 * IW * (int64_t)sizeof(float); b += 64) _mm_prefetch((const char *)(rows[2] + IW) + b, _MM_HINT_T0);
      } else nr = ft_pool_window_rows(p, x, oh, rows);
      if (kw == 3) ft_maxpool_f32_s2_row(rows, nr, y + oh * OW, OW, pw, 3, &g);
      else ft_maxpool_f32_s2_row(rows, nr, y + oh * OW, OW, pw, 2, &g);
    }
    return 1;
  }
  if ((sw != 1 && sw != 2) || kw < 1 || kw > 64 || dw < 1 || dw > 64 || pw < 0 || pw > 64 || IW > FT_POOL_ROWBUF ||
      OW < 1 || OW > FT_POOL_ROWBUF || k_[1] > 64)
    return 0;
  const int64_t B = (pw + 15) & ~(int64_t)15, OWr = (OW + 15) & ~(int64_t)15, omax = (kw - 1) * dw - pw;
  const int64_t L = B + sw * OWr + (omax > 0 ? omax : 0); /* one past the last float a tap reads */
  const int64_t ncol = IW < L - B ? IW : L - B;        /* columns that some tap reads */
  if (L > FT_MAXPOOL_VBUF || B + ((ncol + 15) & ~(int64_t)15) > FT_MAXPOOL_VBUF) return 0;
  float cm_[FT_MAXPOOL_VBUF + 16] __attribute__((aligned(64)));
  float *cm = cm_ + B;
  const __m512 lo = _mm512_set1_ps(-INFINITY);
  const __mmask16 mt = (__mmask16)((1u << (ncol & 15)) - 1);
  const int64_t nfull = ncol & ~(int64_t)15;
  /* -INFINITY before and after the columns, once: the rows below write only the columns */
  for (int64_t i = 0; i < B; i += 16) _mm512_store_ps(cm_ + i, lo);
  for (int64_t i = B + nfull; i < L; i += 16) _mm512_storeu_ps(cm_ + i, lo); /* may pass L: the slack */
  for (int64_t oh = r0; oh < r1; oh++) {
    const float *rows[64];
    const int nr = ft_pool_window_rows(p, x, oh, rows);
    int64_t c = 0;
    if (nr == 3) { /* the usual 3-row window inside the plane */
      const float *x0 = rows[0], *x1 = rows[1], *x2 = rows[2];
      for (; c < nfull; c += 16) {
        __m512 v = _mm512_max_ps(_mm512_loadu_ps(x0 + c), lo);
        v = _mm512_max_ps(_mm512_loadu_ps(x1 + c), v);
        _mm512_store_ps(cm + c, _mm512_max_ps(_mm512_loadu_ps(x2 + c), v));
      }
    } else {
      for (; c < nfull; c += 16) {
        __m512 v = lo;
        for (int r = 0; r < nr; r++) v = _mm512_max_ps(_mm512_loadu_ps(rows[r] + c), v);
        _mm512_store_ps(cm + c, v);
      }
    }
    if (mt) {
      __m512 v = lo;
      for (int r = 0; r < nr; r++) v = _mm512_max_ps(_mm512_mask_loadu_ps(lo, mt, rows[r] + c), v);
      _mm512_store_ps(cm + c, v);
    }
    if (kw == 3 && dw == 1 && sw == 2) ft_maxpool_f32_taps_avx512(cm - pw, y + oh * OW, OW, 2, 3, 1);
    else if (kw == 3 && dw == 1) ft_maxpool_f32_taps_avx512(cm - pw, y + oh * OW, OW, 1, 3, 1);
    else ft_maxpool_f32_taps_avx512(cm - pw, y + oh * OW, OW, sw, kw, dw);
  }
  return 1;
}
#define FT_MAXPOOL_FAST_f32(p, x, y, r0, r1) ft_maxpool_f32_rows_avx512(p, x, y, r0, r1)
#else
#define FT_MAXPOOL_FAST_f32(p, x, y, r0, r1) 0
#endif
#define FT_MAXPOOL_FAST_f64(p, x, y, r0, r1) 0
#define FT_MAXPOOL_FAST_i8(p, x, y, r0, r1) 0
#define FT_MAXPOOL_FAST_u8(p, x, y, r0, r1) 0
#define FT_MAXPOOL_FAST_i32(p, x, y, r0, r1) 0
#define FT_MAXPOOL_FAST_i64(p, x, y, r0, r1) 0

/* MaxPool: out[0] the values, out[1] (optional) int64 indices into the flattened input. */
#define FT_MAXPOOL(sfx, T, LOWEST)                                                             \
  static void ft_maxpool_##sfx##_run(const void *ctx, int64_t lo, int64_t hi) {                \
    const ft_pool_ctx *c_ = (const ft_pool_ctx *)ctx;                                          \
    const int64_t *p = c_->p;                                                                  \
    const void *const *in = c_->in;                                                            \
    void *const *out = c_->out;                                                                \
    const int64_t *ins = p + FT_PL_IN, *outs = p + FT_PL_OUT;                                  \
    int64_t S_in = ins[0] * ins[1] * ins[2], S_out = outs[0] * outs[1] * outs[2];              \
    int64_t planes = p[FT_PL_PLANES], OW = outs[2];                                            \
    const T *X = (const T *)in[0];                                                             \
    T *Y = (T *)out[0];                                                                        \
    int64_t *I = p[FT_PL_HAS_IDX] ? (int64_t *)out[1] : NULL;                                                            \
    (void)planes;                                                                              \
    const int64_t R = outs[0] * outs[1], nb = c_->bands, rb = (R + nb - 1) / nb;              \
    for (int64_t it = lo; it < hi; it++) { /* item: plane it / nb, rows band it % nb */       \
      const int64_t pl = it / nb, r0 = it % nb * rb, r1 = r0 + rb < R ? r0 + rb : R;          \
      const T *x = X + pl * S_in;                                                              \
      const int rows2d = !I && ins[0] == 1 && outs[0] == 1 && p[FT_PL_K] == 1 && p[FT_PL_P] == 0; \
      if (rows2d && FT_MAXPOOL_FAST_##sfx(p, x, Y + pl * S_out, r0, r1)) continue;            \
      for (int64_t r = r0; r < r1; r++) {                                                      \
          const int64_t od = r / outs[1], oh = r % outs[1];                                    \
          int64_t ro = r * OW;                                                                 \
          T *restrict yr = Y + pl * S_out + ro;                                                \
          for (int64_t ow = 0; ow < OW; ow++) yr[ow] = LOWEST;                                 \
          if (rows2d && ins[2] <= FT_POOL_ROWBUF) {                                            \
            FT_MAXPOOL_ROWS(T, LOWEST);                                                        \
          } else if (!I) {                                                                     \
            FT_POOL_TAPS(p, x, od, oh, {                                                       \
              const T *restrict xr = x + roff + off;                                           \
              if (sw == 1) for (int64_t ow = a; ow < b; ow++) yr[ow] = xr[ow] > yr[ow] ? xr[ow] : yr[ow]; \
              else if (sw == 2) for (int64_t ow = a; ow < b; ow++) yr[ow] = xr[2 * ow] > yr[ow] ? xr[2 * ow] : yr[ow]; \
              else for (int64_t ow = a; ow < b; ow++) yr[ow] = xr[ow * sw] > yr[ow] ? xr[ow * sw] : yr[ow]; \
            });                                                                                \
          } else {                                                                             \
            int64_t *ir = I + pl * S_out + ro;                                                 \
            for (int64_t ow = 0; ow < OW; ow++) ir[ow] = -1;                                   \
            FT_POOL_TAPS(p, x, od, oh, {                                                       \
              for (int64_t ow = a; ow < b; ow++) {                                             \
                int64_t at = roff + off + ow * sw;                                             \
                if (ir[ow] < 0 || x[at] > yr[ow]) { yr[ow] = x[at]; ir[ow] = at; }             \
              }                                                                                \
            });                                                                                \
            for (int64_t ow = 0; ow < OW; ow++) { /* index over the whole input tensor */      \
              int64_t at = ir[ow] < 0 ? 0 : ir[ow];                                            \
              if (p[FT_PL_ORDER]) { /* column-major: reverse the order of the spatial dims */  \
                int64_t w_ = at % ins[2], h_ = at / ins[2] % ins[1], d_ = at / ins[2] / ins[1]; \
                at = (w_ * ins[1] + h_) * ins[0] + d_;                                         \
              }                                                                                \
              ir[ow] = pl * S_in + at;                                                         \
            }                                                                                  \
          }                                                                                    \
        }                                                                                      \
    }                                                                                          \
  }                                                                                            \
  static void ft_maxpool_##sfx(const int64_t *p, const double *f, const void *const *in,       \
                               void *const *out, void *scratch) {                              \
    (void)scratch;                                                                             \
    const int64_t *outs = p + FT_PL_OUT, planes = p[FT_PL_PLANES];                             \
    ft_pool_ctx c_ = {p, f, in, out, 1, 1};                                                    \
    if (ft_pool_par(p) && planes < FT_POOL_MIN_ITEMS) {                                        \
      int64_t R = outs[0] * outs[1];                                                           \
      c_.bands = (int)((FT_POOL_MIN_ITEMS + planes - 1) / planes < R ? (FT_POOL_MIN_ITEMS + planes - 1) / planes : R); \
    }                                                                                          \
    ft_parallel_for(planes * c_.bands, ft_pool_par(p), ft_maxpool_##sfx##_run, &c_);            \
  }
FT_MAXPOOL(f32, float, -INFINITY)
FT_MAXPOOL(f64, double, -INFINITY)
FT_MAXPOOL(i8, int8_t, INT8_MIN)
FT_MAXPOOL(u8, uint8_t, 0)
FT_MAXPOOL(i32, int32_t, INT32_MIN)
FT_MAXPOOL(i64, int64_t, INT64_MIN)
#undef FT_MAXPOOL

/* AveragePool (f[0] unused) and LpPool (f[0] = p): window sums, then the divisor or the root. */
static void ft_avgpool_lppool_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_pool_ctx *c = (const ft_pool_ctx *)ctx;
  const int64_t *p = c->p;
  const double *f = c->f;
  const void *const *in = c->in;
  void *const *out = c->out;
  const int lp = c->kind;
  const int64_t *ins = p + FT_PL_IN, *outs = p + FT_PL_OUT, *k = p + FT_PL_K, *s = p + FT_PL_S;
  const int64_t *d = p + FT_PL_D, *pb = p + FT_PL_P, *pe = p + FT_PL_PE;
  int64_t S_in = ins[0] * ins[1] * ins[2], S_out = outs[0] * outs[1] * outs[2];
  int64_t planes = p[FT_PL_PLANES], OW = outs[2], incl = p[FT_PL_INCL_PAD];
  const float *X = (const float *)in[0];
  float *Y = (float *)out[0];
  float pw = lp ? (float)f[0] : 1.0f;
  (void)planes;
  for (int64_t pl = lo; pl < hi; pl++) {
    const float *x = X + pl * S_in;
    for (int64_t od = 0; od < outs[0]; od++)
      for (int64_t oh = 0; oh < outs[1]; oh++) {
        float *restrict yr = Y + pl * S_out + (od * outs[1] + oh) * OW;
        for (int64_t ow = 0; ow < OW; ow++) yr[ow] = 0;
        FT_POOL_TAPS(p, x, od, oh, {
          const float *restrict xr = x + roff + off;
          if (!lp) {
            if (sw == 1) for (int64_t ow = a; ow < b; ow++) yr[ow] += xr[ow];
            else if (sw == 2) for (int64_t ow = a; ow < b; ow++) yr[ow] += xr[2 * ow];
            else for (int64_t ow = a; ow < b; ow++) yr[ow] += xr[ow * sw];
          } else if (pw == 2.0f) {
            for (int64_t ow = a; ow < b; ow++) yr[ow] += xr[ow * sw] * xr[ow * sw];
          } else if (pw == 1.0f) {
            for (int64_t ow = a; ow < b; ow++) yr[ow] += fabsf(xr[ow * sw]);
          } else {
            for (int64_t ow = a; ow < b; ow++) yr[ow] += powf(fabsf(xr[ow * sw]), pw);
          }
        });
        if (lp) {
          if (pw == 2.0f) for (int64_t ow = 0; ow < OW; ow++) yr[ow] = sqrtf(yr[ow]);
          else if (pw != 1.0f) for (int64_t ow = 0; ow < OW; ow++) yr[ow] = powf(yr[ow], 1.0f / pw);
          continue;
        }
        /* divisor: taps inside the input, or inside the padded input with count_include_pad */
        int64_t cd = incl ? ft_pool_count(od * s[0] - pb[0], d[0], k[0], -pb[0], ins[0] + pe[0])
                          : ft_pool_count(od * s[0] - pb[0], d[0], k[0], 0, ins[0]);
        int64_t ch = incl ? ft_pool_count(oh * s[1] - pb[1], d[1], k[1], -pb[1], ins[1] + pe[1])
                          : ft_pool_count(oh * s[1] - pb[1], d[1], k[1], 0, ins[1]);
        for (int64_t ow = 0; ow < OW; ow++) {
          int64_t cw = incl ? ft_pool_count(ow * s[2] - pb[2], d[2], k[2], -pb[2], ins[2] + pe[2])
                            : ft_pool_count(ow * s[2] - pb[2], d[2], k[2], 0, ins[2]);
          int64_t n = cd * ch * cw;
          yr[ow] = n ? yr[ow] / (float)n : 0.0f;
        }
      }
  }
}

static void ft_avgpool_lppool_f32(const int64_t *p, const double *f, const void *const *in,
                                  void *const *out, int lp) {
  const int64_t *outs = p + FT_PL_OUT, planes = p[FT_PL_PLANES];
  ft_pool_ctx c = {p, f, in, out, lp, 1};
  (void)outs;
  ft_parallel_for(planes, ft_pool_par(p), ft_avgpool_lppool_run, &c);
}

static void ft_avgpool_f32(const int64_t *p, const double *f, const void *const *in,
                           void *const *out, void *scratch) {
  (void)scratch;
  ft_avgpool_lppool_f32(p, f, in, out, 0);
}

static void ft_lppool_f32(const int64_t *p, const double *f, const void *const *in,
                          void *const *out, void *scratch) {
  (void)scratch;
  ft_avgpool_lppool_f32(p, f, in, out, 1);
}

/* Global pools: p = [planes, plane size]; f[0] = p for GlobalLpPool.
 *
 * Sums (GlobalAveragePool, GlobalLpPool) run in FT_GPOOL_LANES running lanes: element i of the
 * plane goes to lane i % FT_GPOOL_LANES, in order, then the lanes are added as a tree (lane j
 * takes lane j + h for h = 32, 16, 8, 4, 2, 1). Four independent 16-float vectors on AVX-512,
 * so the adds of a large plane are not one chain of dependent adds, and a plane's tail is one
 * masked load instead of a scalar loop; the plain loop keeps the same order and so the same
 * bits (for the average, and for GlobalLpPool where it computes the same terms).
 * GlobalMaxPool folds 16 lanes (x > y ? x : y, from the plane's first element), then the
 * lanes in order, then the tail: a NaN first element stays, later NaNs are skipped. */
#define FT_GPOOL_LANES 64
/* Elements read worth waking threads for: one pass over the input with one add each, so its
 * time is the read (128 KiB: a few us); the windowed pools' FT_POOL_PAR_WORK left EfficientNet's
 * squeeze-excite pools at 14x14 and 7x7 (up to 376 KiB each) on one thread. */
#define FT_GPOOL_PAR_ELEMS (1 << 15)

/* The lane tree of the sums, in place: acc[0] ends as the total. */
static inline float ft_gpool_tree(float *acc) {
  for (int h = FT_GPOOL_LANES / 2; h >= 1; h /= 2)
    for (int j = 0; j < h; j++) acc[j] += acc[j + h];
  return acc[0];
}

#ifdef __AVX512F__
/* The sum of a plane in the lane order above (ft_gpool_tree's tree over the four vectors'
 * lanes: 0..15, 16..31, 32..47, 48..63). */
static inline float ft_gpool_sum_avx512(const float *x, int64_t S) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 64 <= S; i += 64) {
    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + 16));
    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 32));
    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 48));
  }
  /* the tail: lanes past S add nothing (a masked-off lane keeps the accumulator as it is) */
  __m512 *acc[4] = {&a0, &a1, &a2, &a3};
  for (int v = 0; v < 4 && i < S; v++, i += 16) {
    __mmask16 m = S - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (S - i)) - 1);
    *acc[v] = _mm512_mask_add_ps(*acc[v], m, *acc[v], _mm512_maskz_loadu_ps(m, x + i));
  }
  a0 = _mm512_add_ps(a0, a2); /* h = 32 */
  a1 = _mm512_add_ps(a1, a3);
  a0 = _mm512_add_ps(a0, a1); /* h = 16 */
  __m256 b = _mm256_add_ps(_mm512_castps512_ps256(a0), _mm512_extractf32x8_ps(a0, 1)); /* 8 */
  __m128 c = _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));        /* 4 */
  c = _mm_add_ps(c, _mm_movehl_ps(c, c));                                                  /* 2 */
  c = _mm_add_ss(c, _mm_shuffle_ps(c, c, 1));                                              /* 1 */
  return _mm_cvtss_f32(c);
}
#endif

static void ft_global_pool_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_pool_ctx *c = (const ft_pool_ctx *)ctx;
  const int64_t *p = c->p;
  const double *f = c->f;
  const void *const *in = c->in;
  void *const *out = c->out;
  const int kind = c->kind; /* 0 avg, 1 max, 2 lp */
  int64_t planes = p[0], S = p[1];
  const float *X = (const float *)in[0];
  float *Y = (float *)out[0];
  float pw = kind == 2 ? (float)f[0] : 1.0f;
  (void)planes;
  for (int64_t pl = lo; pl < hi; pl++) {
    const float *x = X + pl * S;
    float acc[FT_GPOOL_LANES], r;
    if (kind == 1) {
      int64_t i = 0;
      r = S ? x[0] : 0.0f;
      for (int j = 0; j < 16; j++) acc[j] = r;
      for (; i + 16 <= S; i += 16)
        for (int j = 0; j < 16; j++) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
      for (int j = 0; j < 16; j++) r = acc[j] > r ? acc[j] : r;
      for (; i < S; i++) r = x[i] > r ? x[i] : r;
    } else {
#ifdef __AVX512F__
      if (kind == 0) {
        r = ft_gpool_sum_avx512(x, S);
      } else
#endif
      {
        for (int j = 0; j < FT_GPOOL_LANES; j++) acc[j] = 0;
#define FT_GPOOL_SUM(TERM)                                                                     \
  for (int64_t i = 0; i < S; i += FT_GPOOL_LANES) {                                            \
    const float *xi = x + i;                                                                   \
    int n = S - i < FT_GPOOL_LANES ? (int)(S - i) : FT_GPOOL_LANES;                            \
    for (int j = 0; j < n; j++) acc[j] += TERM;                                                \
  }
        if (kind == 0) FT_GPOOL_SUM(xi[j])
        else if (pw == 1.0f) FT_GPOOL_SUM(fabsf(xi[j]))
        else if (pw == 2.0f) FT_GPOOL_SUM(xi[j] * xi[j])
        else FT_GPOOL_SUM(powf(fabsf(xi[j]), pw))
#undef FT_GPOOL_SUM
        r = ft_gpool_tree(acc);
      }
      if (kind == 0) r = S ? r / (float)S : 0.0f;
      else r = pw == 2.0f ? sqrtf(r) : powf(r, 1.0f / pw);
    }
    Y[pl] = r;
  }
}

static void ft_global_pool_f32(const int64_t *p, const double *f, const void *const *in,
                               void *const *out, int kind) {
  ft_pool_ctx c = {p, f, in, out, kind, 1};
  ft_parallel_for(p[0], p[0] * p[1] > FT_GPOOL_PAR_ELEMS, ft_global_pool_run, &c);
}

static void ft_global_avgpool_f32(const int64_t *p, const double *f, const void *const *in,
                                  void *const *out, void *scratch) {
  (void)scratch;
  ft_global_pool_f32(p, f, in, out, 0);
}
static void ft_global_maxpool_f32(const int64_t *p, const double *f, const void *const *in,
                                  void *const *out, void *scratch) {
  (void)scratch;
  ft_global_pool_f32(p, f, in, out, 1);
}
static void ft_global_lppool_f32(const int64_t *p, const double *f, const void *const *in,
                                 void *const *out, void *scratch) {
  (void)scratch;
  ft_global_pool_f32(p, f, in, out, 2);
}

#endif
