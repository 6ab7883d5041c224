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

#include "parallel.h"
#include "pool_params.h"
#include "tensor.h"

/* Window taps (outputs x kernel size) worth waking threads for. */
#define FT_POOL_PAR_WORK (1 << 18)
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
  int kind;
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
    for (int64_t pl = lo; pl < hi; pl++) {                                                     \
      const T *x = X + pl * S_in;                                                              \
      for (int64_t od = 0; od < outs[0]; od++)                                                 \
        for (int64_t oh = 0; oh < outs[1]; oh++) {                                             \
          int64_t ro = (od * outs[1] + oh) * OW;                                               \
          T *restrict yr = Y + pl * S_out + ro;                                                \
          for (int64_t ow = 0; ow < OW; ow++) yr[ow] = LOWEST;                                 \
          if (!I && ins[0] == 1 && outs[0] == 1 && p[FT_PL_K] == 1 && p[FT_PL_P] == 0 && ins[2] <= FT_POOL_ROWBUF) { \
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
    ft_pool_ctx c_ = {p, f, in, out, 0};                                                       \
    (void)outs;                                                                                \
    ft_parallel_for(planes, ft_pool_par(p), ft_maxpool_##sfx##_run, &c_);                      \
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
  ft_pool_ctx c = {p, f, in, out, lp};
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

/* Global pools: p = [planes, plane size]; f[0] = p for GlobalLpPool. Sixteen running lanes per
 * plane, so the reductions vectorize in a fixed order. */
#define FT_GPOOL_LANES 16
/* Elements read worth waking threads for: one pass over the input with one add each, so its
 * time is the read (128 KiB: a few us); the windowed pools' FT_POOL_PAR_WORK left EfficientNet's
 * squeeze-excite pools at 14x14 and 7x7 (up to 376 KiB each) on one thread. */
#define FT_GPOOL_PAR_ELEMS (1 << 15)
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
    int64_t i = 0;
    if (kind == 1) {
      r = S ? x[0] : 0.0f;
      for (int j = 0; j < FT_GPOOL_LANES; j++) acc[j] = r;
      for (; i + FT_GPOOL_LANES <= S; i += FT_GPOOL_LANES)
        for (int j = 0; j < FT_GPOOL_LANES; j++) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
      for (int j = 0; j < FT_GPOOL_LANES; j++) r = acc[j] > r ? acc[j] : r;
      for (; i < S; i++) r = x[i] > r ? x[i] : r;
    } else {
      for (int j = 0; j < FT_GPOOL_LANES; j++) acc[j] = 0;
      if (kind == 0 || pw == 1.0f)
        for (; i + FT_GPOOL_LANES <= S; i += FT_GPOOL_LANES)
          for (int j = 0; j < FT_GPOOL_LANES; j++) acc[j] += kind ? fabsf(x[i + j]) : x[i + j];
      else if (pw == 2.0f)
        for (; i + FT_GPOOL_LANES <= S; i += FT_GPOOL_LANES)
          for (int j = 0; j < FT_GPOOL_LANES; j++) acc[j] += x[i + j] * x[i + j];
      r = 0;
      for (int j = 0; j < FT_GPOOL_LANES; j++) r += acc[j];
      for (; i < S; i++) r += kind == 0 ? x[i] : (pw == 2.0f ? x[i] * x[i] : powf(fabsf(x[i]), pw));
      if (kind == 0) r = S ? r / (float)S : 0.0f;
      else r = pw == 2.0f ? sqrtf(r) : powf(r, 1.0f / pw);
    }
    Y[pl] = r;
  }
}

static void ft_global_pool_f32(const int64_t *p, const double *f, const void *const *in,
                               void *const *out, int kind) {
  ft_pool_ctx c = {p, f, in, out, kind};
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
