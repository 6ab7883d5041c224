/* Resize and Upsample: every output element is a weighted sum of input elements picked along
 * each resized dim independently (nearest: one, linear: two, cubic: four per dim).
 *
 * The kernels first build, for every resized dim, a table of taps per output index: the input
 * indices (clamped into range, as the ONNX reference pads with edge values) and their weights.
 * The tables depend only on the plan's parameters and are rebuilt per call from p and f, in
 * double, with the formulas of the ONNX reference implementation so rounding ties (nearest
 * modes) come out the same.
 *
 *   p: [rank, interp, coord, nearest, exclude_outside, extrapolation bits,
 *       in_dims[rank], out_dims[rank], resized[rank]]
 *   f: [cubic_a, extrapolation, then per resized dim: scale, roi_start, roi_end]
 * A dim that is not resized maps output index i to input index i with weight 1. */
#ifndef FT_RESIZE_H
#define FT_RESIZE_H

#include <math.h>
#include <stdint.h>

#include "tensor.h"

enum { FT_RZ_NEAREST, FT_RZ_LINEAR, FT_RZ_CUBIC };
enum {
  FT_RZ_HALF_PIXEL, FT_RZ_PYTORCH_HALF_PIXEL, FT_RZ_ALIGN_CORNERS, FT_RZ_ASYMMETRIC,
  FT_RZ_TF_HALF_PIXEL_FOR_NN, FT_RZ_TF_CROP_AND_RESIZE, FT_RZ_HALF_PIXEL_SYMMETRIC
};
/* SIMPLE: Resize-10 and Upsample, whose output index i reads floor(i / scale) when upsampling
 * and ceil(i / scale) when downsampling. */
enum { FT_RZ_ROUND_PREFER_FLOOR, FT_RZ_ROUND_PREFER_CEIL, FT_RZ_FLOOR, FT_RZ_CEIL, FT_RZ_SIMPLE };

#define FT_RZ_MAX_TAPS 4

static inline int ft_resize_ntaps(int interp) {
  return interp == FT_RZ_CUBIC ? 4 : interp == FT_RZ_LINEAR ? 2 : 1;
}

/* The input coordinate of output index x along one dim; returns 1 when tf_crop_and_resize puts it
 * outside the input (the output is the extrapolation value). */
static inline int ft_resize_coord(int coord, double x, double scale, int64_t in, int64_t out_int,
                                  double r0, double r1, double *xo) {
  double out = scale * (double)in; /* the reference's output width: not rounded */
  switch (coord) {
  case FT_RZ_ALIGN_CORNERS: *xo = out == 1 ? 0.0 : x * (double)(in - 1) / (out - 1); break;
  case FT_RZ_ASYMMETRIC: *xo = x / scale; break;
  case FT_RZ_TF_HALF_PIXEL_FOR_NN: *xo = (x + 0.5) / scale; break;
  case FT_RZ_PYTORCH_HALF_PIXEL: *xo = out == 1 ? -0.5 : (x + 0.5) / scale - 0.5; break;
  case FT_RZ_TF_CROP_AND_RESIZE:
    *xo = out == 1 ? (r1 - r0) * (double)(in - 1) / 2 : x * (r1 - r0) * (double)(in - 1) / (out - 1);
    *xo += r0 * (double)(in - 1);
    return *xo < 0 || *xo > (double)(in - 1);
  case FT_RZ_HALF_PIXEL_SYMMETRIC: {
    double adjust = (double)out_int / out, center = (double)in / 2;
    *xo = center * (1 - adjust) + (x + 0.5) / scale - 0.5;
    break;
  }
  default: *xo = (x + 0.5) / scale - 0.5; break;
  }
  return 0;
}

/* Taps of output index o along one dim: n input indices (in range) and weights. Returns 1 when
 * the output takes the extrapolation value. */
static inline int ft_resize_taps(int interp, int coord, int nearest, int exclude, double cubic_a,
                                 double scale, double r0, double r1, int64_t in, int64_t out,
                                 int64_t o, int64_t *idx, double *w) {
  double x;
  if (ft_resize_coord(coord, (double)o, scale, in, out, r0, r1, &x)) {
    idx[0] = 0; w[0] = 0;
    for (int t = 1; t < ft_resize_ntaps(interp); t++) { idx[t] = 0; w[t] = 0; }
    return 1;
  }
  double fl = floor(x), ratio = x - fl;
  int64_t base = (int64_t)fl;
  int n = ft_resize_ntaps(interp);
  int64_t raw[FT_RZ_MAX_TAPS];
  if (interp == FT_RZ_NEAREST) {
    int up;
    if (ratio == 0) up = 0;
    else switch (nearest) {
      case FT_RZ_ROUND_PREFER_CEIL: up = ratio >= 0.5; break;
      case FT_RZ_FLOOR: up = 0; break;
      case FT_RZ_CEIL: up = 1; break;
      case FT_RZ_SIMPLE: up = scale < 1; break;
      default: up = ratio > 0.5; break;
    }
    raw[0] = base + up;
    w[0] = 1;
  } else if (interp == FT_RZ_LINEAR) {
    raw[0] = base; raw[1] = base + 1;
    w[0] = 1 - ratio; w[1] = ratio;
  } else {
    double A = cubic_a, r = ratio, s = 1 - ratio;
    raw[0] = base - 1; raw[1] = base; raw[2] = base + 1; raw[3] = base + 2;
    w[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    w[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    w[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
    w[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
  }
  if (exclude && interp != FT_RZ_NEAREST) { /* taps outside the input weigh nothing */
    double sum = 0;
    for (int t = 0; t < n; t++) {
      if (raw[t] < 0 || raw[t] >= in) w[t] = 0;
      sum += w[t];
    }
    if (sum != 0) for (int t = 0; t < n; t++) w[t] /= sum;
  }
  for (int t = 0; t < n; t++) idx[t] = raw[t] < 0 ? 0 : raw[t] >= in ? in - 1 : raw[t];
  return 0;
}

/* Scratch bytes for the tables: per dim and output index, taps of (offset, weight) and a flag. */
static inline size_t ft_resize_scratch(int rank, const int64_t *out_dims, int interp) {
  size_t n = 0;
  for (int d = 0; d < rank; d++)
    n += (size_t)out_dims[d] * ((size_t)ft_resize_ntaps(interp) * (sizeof(int64_t) + sizeof(double)) + 1) + 8;
  return n + 64;
}

/* Build the tables: per dim d, off[d][o * n + t] are element offsets into the input (index times
 * the dim's stride), wt[d][...] the weights, ext[d][o] the extrapolation flags. */
static inline void ft_resize_tables(const int64_t *p, const double *f, void *scratch, int64_t **off,
                                    double **wt, uint8_t **ext) {
  int r = (int)p[0], interp = (int)p[1], n = ft_resize_ntaps(interp);
  const int64_t *in = p + 6, *out = p + 6 + r, *resized = p + 6 + 2 * r;
  char *s = (char *)scratch;
  int64_t stride[FT_MAX_RANK], acc = 1;
  for (int d = r - 1; d >= 0; d--) { stride[d] = acc; acc *= in[d]; }
  for (int d = 0, j = 0; d < r; d++) {
    off[d] = (int64_t *)s; s += sizeof(int64_t) * (size_t)(out[d] * n);
    wt[d] = (double *)s; s += sizeof(double) * (size_t)(out[d] * n);
    ext[d] = (uint8_t *)s; s += ((size_t)out[d] + 7) & ~(size_t)7; /* the next table stays aligned */
    for (int64_t o = 0; o < out[d]; o++) {
      int64_t *oi = off[d] + o * n;
      double *ow = wt[d] + o * n;
      if (!resized[d]) {
        oi[0] = o; ow[0] = 1;
        for (int t = 1; t < n; t++) { oi[t] = o; ow[t] = 0; }
        ext[d][o] = 0;
      } else {
        const double *g = f + 2 + 3 * j;
        ext[d][o] = (uint8_t)ft_resize_taps(interp, (int)p[2], (int)p[3], (int)p[4], f[0], g[0], g[1], g[2],
                                            in[d], out[d], o, oi, ow);
      }
      for (int t = 0; t < n; t++) oi[t] *= stride[d];
    }
    if (resized[d]) j++;
  }
}

/* Nearest: a gather, by element size. */
#define FT_RESIZE_NEAREST(N, T)                                                                  \
  static void ft_resize_nearest_##N(const int64_t *p, const double *f, const void *const *in,   \
                                    void *const *out, void *scratch) {                           \
    int r = (int)p[0];                                                                           \
    const int64_t *od = p + 6 + r;                                                               \
    const T *X = (const T *)in[0];                                                               \
    T *Y = (T *)out[0], ext_v;                                                                   \
    int64_t bits = p[5];                                                                         \
    memcpy(&ext_v, &bits, sizeof(T));                                                            \
    int64_t *off[FT_MAX_RANK];                                                                   \
    double *wt[FT_MAX_RANK];                                                                     \
    uint8_t *ext[FT_MAX_RANK];                                                                   \
    ft_resize_tables(p, f, scratch, off, wt, ext);                                               \
    int64_t total = 1;                                                                           \
    for (int d = 0; d < r; d++) total *= od[d];                                                  \
    if (total == 0) return;                                                                      \
    int64_t inner = od[r - 1], outer = total / inner, idx[FT_MAX_RANK] = {0};                    \
    const int64_t *lo = off[r - 1];                                                              \
    const uint8_t *le = ext[r - 1];                                                              \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      int64_t base = 0;                                                                          \
      int out_row = 0;                                                                           \
      for (int d = 0; d < r - 1; d++) { base += off[d][idx[d]]; out_row |= ext[d][idx[d]]; }     \
      T *y = Y + o * inner;                                                                      \
      if (out_row) for (int64_t i = 0; i < inner; i++) y[i] = ext_v;                             \
      else for (int64_t i = 0; i < inner; i++) y[i] = le[i] ? ext_v : X[base + lo[i]];           \
      for (int d = r - 2; d >= 0; d--) {                                                         \
        if (++idx[d] < od[d]) break;                                                             \
        idx[d] = 0;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }
FT_RESIZE_NEAREST(1, uint8_t)
FT_RESIZE_NEAREST(2, uint16_t)
FT_RESIZE_NEAREST(4, uint32_t)
FT_RESIZE_NEAREST(8, uint64_t)
#undef FT_RESIZE_NEAREST

/* Linear and cubic: for each row of the output (all dims but the last fixed), the outer dims'
 * taps combine into a list of (offset, weight) pairs, zero weights dropped; each output of the
 * row sums that list against the last dim's taps. */
#define FT_RZ_MAX_COMBOS 512 /* room for 4^4 combinations (at most 4 resized dims) and a step */
#define FT_RESIZE_INTERP(S, T)                                                                   \
  static void ft_resize_interp_##S(const int64_t *p, const double *f, const void *const *in,    \
                                   void *const *out, void *scratch) {                            \
    int r = (int)p[0], n = ft_resize_ntaps((int)p[1]);                                           \
    const int64_t *od = p + 6 + r;                                                               \
    const T *X = (const T *)in[0];                                                               \
    T *Y = (T *)out[0], ext_v = (T)f[1];                                                         \
    int64_t *off[FT_MAX_RANK];                                                                   \
    double *wt[FT_MAX_RANK];                                                                     \
    uint8_t *ext[FT_MAX_RANK];                                                                   \
    ft_resize_tables(p, f, scratch, off, wt, ext);                                               \
    int64_t total = 1;                                                                           \
    for (int d = 0; d < r; d++) total *= od[d];                                                  \
    if (total == 0) return;                                                                      \
    int64_t inner = od[r - 1], outer = total / inner, idx[FT_MAX_RANK] = {0};                    \
    const int64_t *lo = off[r - 1];                                                              \
    const double *lw = wt[r - 1];                                                                \
    const uint8_t *le = ext[r - 1];                                                              \
    int64_t c_off[FT_RZ_MAX_COMBOS];                                                             \
    double c_w[FT_RZ_MAX_COMBOS];                                                                \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      int nc = 1, out_row = 0;                                                                   \
      c_off[0] = 0; c_w[0] = 1;                                                                  \
      for (int d = 0; d < r - 1 && !out_row; d++) {                                              \
        const int64_t *ko = off[d] + idx[d] * n;                                                 \
        const double *kw = wt[d] + idx[d] * n;                                                   \
        out_row |= ext[d][idx[d]];                                                               \
        int m = 0;                                                                               \
        for (int c = 0; c < nc; c++)                                                             \
          for (int t = 0; t < n; t++)                                                            \
            if (kw[t] != 0 && nc + m < FT_RZ_MAX_COMBOS) { /* the plan bounds the count */       \
              c_off[nc + m] = c_off[c] + ko[t]; c_w[nc + m] = c_w[c] * kw[t]; m++;               \
            }                                                                                    \
        for (int c = 0; c < m; c++) { c_off[c] = c_off[nc + c]; c_w[c] = c_w[nc + c]; }          \
        nc = m;                                                                                  \
      }                                                                                          \
      T *y = Y + o * inner;                                                                      \
      for (int64_t i = 0; i < inner; i++) {                                                      \
        if (out_row || le[i]) { y[i] = ext_v; continue; }                                        \
        double acc = 0;                                                                          \
        const int64_t *ko = lo + i * n;                                                          \
        const double *kw = lw + i * n;                                                           \
        for (int c = 0; c < nc; c++) {                                                           \
          const T *x = X + c_off[c];                                                             \
          double s = 0;                                                                          \
          for (int t = 0; t < n; t++) s += kw[t] * (double)x[ko[t]];                             \
          acc += c_w[c] * s;                                                                     \
        }                                                                                        \
        y[i] = (T)acc;                                                                           \
      }                                                                                          \
      for (int d = r - 2; d >= 0; d--) {                                                         \
        if (++idx[d] < od[d]) break;                                                             \
        idx[d] = 0;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }
FT_RESIZE_INTERP(f32, float)
FT_RESIZE_INTERP(f64, double)
#undef FT_RESIZE_INTERP


/* ---- Bilinear in ONNX Runtime's arithmetic ---------------------------------------------------
 * float32 linear resize of the last two dims (NCHW images), as ONNX Runtime's CPU kernel computes
 * it: coordinates in float (not double), x1 = (int)clamp(x), x2 = min(x1 + 1, in - 1),
 * weights dx1 = |x - x1|, dx2 = |x - x2| (both 0.5 at the edge where x1 == x2), and
 *   y = dx2*dy2*X11 + dx1*dy2*X21 + dx2*dy1*X12 + dx1*dy1*X22
 * summed left to right in float with no fused multiply-add. The double-precision kernel above is
 * 1-2 ulp off that, which a DynamicQuantizeLinear after the resize turns into +-1 flips of the
 * quantized values (a U-Net's mask). p and f as for the kernels above; the plan picks this kernel
 * for the coordinate modes half_pixel, pytorch_half_pixel, asymmetric and align_corners when the
 * dims before the last two keep their size. */
#if defined(__clang__)
#define FT_RZ_NO_FMA_ATTR
#define FT_RZ_NO_FMA_BODY _Pragma("clang fp contract(off)")
#elif defined(__GNUC__)
#define FT_RZ_NO_FMA_ATTR __attribute__((optimize("fp-contract=off")))
#define FT_RZ_NO_FMA_BODY
#else
#define FT_RZ_NO_FMA_ATTR
#define FT_RZ_NO_FMA_BODY
#endif

/* One dim's table: for each output index, the two input indices (times stride) and weights. */
FT_RZ_NO_FMA_ATTR static void ft_resize_ort_axis(int coord, int resized, float scale, int64_t in, int64_t out,
                                                 int64_t stride, int64_t *i1, int64_t *i2, float *d1, float *d2) {
  FT_RZ_NO_FMA_BODY
  for (int64_t o = 0; o < out; o++) {
    float xr = (float)o, x;
    if (!resized || scale == 1.0f) x = xr; /* as ONNX Runtime: a scale of 1 maps o to o */
    else switch (coord) {
      case FT_RZ_ASYMMETRIC: x = xr / scale; break;
      case FT_RZ_PYTORCH_HALF_PIXEL: x = (float)out > 1 ? (xr + 0.5f) / scale - 0.5f : 0.0f; break;
      case FT_RZ_ALIGN_CORNERS: x = out == 1 ? 0.0f : xr * (float)(in - 1) / (float)(out - 1); break;
      default: x = (xr + 0.5f) / scale - 0.5f; break;
    }
    float hi = (float)(in - 1);
    x = x < hi ? x : hi;
    x = x > 0.0f ? x : 0.0f;
    int64_t a = (int64_t)x < in - 1 ? (int64_t)x : in - 1, b = a + 1 < in - 1 ? a + 1 : in - 1;
    d1[o] = fabsf(x - (float)a);
    d2[o] = fabsf(x - (float)b);
    if (a == b) d1[o] = d2[o] = 0.5f;
    i1[o] = a * stride;
    i2[o] = b * stride;
  }
}

static inline size_t ft_resize_ort_scratch(int64_t oh, int64_t ow) {
  return (size_t)(oh + ow) * 2 * (sizeof(int64_t) + sizeof(float)) + 64;
}

FT_RZ_NO_FMA_ATTR static void ft_resize_bilinear_ort_f32(const int64_t *p, const double *f, const void *const *in,
                                                         void *const *out, void *scratch) {
  FT_RZ_NO_FMA_BODY
  int r = (int)p[0], coord = (int)p[2];
  const int64_t *id = p + 6, *od = p + 6 + r, *resized = p + 6 + 2 * r;
  int64_t ih = r > 1 ? id[r - 2] : 1, iw = id[r - 1], oh = r > 1 ? od[r - 2] : 1, ow = od[r - 1], planes = 1;
  for (int d = 0; d < r - 2; d++) planes *= od[d];
  int rh = r > 1 && resized[r - 2], rw = (int)resized[r - 1], j = 0;
  for (int d = 0; d < r - 2; d++) j += (int)resized[d]; /* outer dims flagged resized keep their size */
  float sh = rh ? (float)f[2 + 3 * j] : 1.0f, sw = rw ? (float)f[2 + 3 * (j + rh)] : 1.0f;
  int64_t *y1 = (int64_t *)scratch, *y2 = y1 + oh, *x1 = y2 + oh, *x2 = x1 + ow;
  float *dy1 = (float *)(x2 + ow), *dy2 = dy1 + oh, *dx1 = dy2 + oh, *dx2 = dx1 + ow;
  ft_resize_ort_axis(coord, rh, sh, ih, oh, iw, y1, y2, dy1, dy2);
  ft_resize_ort_axis(coord, rw, sw, iw, ow, 1, x1, x2, dx1, dx2);
  const float *X = (const float *)in[0];
  float *Y = (float *)out[0];
  for (int64_t pl = 0; pl < planes; pl++) {
    const float *xp = X + pl * ih * iw;
    for (int64_t y = 0; y < oh; y++) {
      const float *r1 = xp + y1[y], *r2 = xp + y2[y];
      float *yo = Y + (pl * oh + y) * ow;
      for (int64_t x = 0; x < ow; x++)
        yo[x] = dx2[x] * dy2[y] * r1[x1[x]] + dx1[x] * dy2[y] * r1[x2[x]] + dx2[x] * dy1[y] * r2[x1[x]] +
                dx1[x] * dy1[y] * r2[x2[x]];
    }
  }
}

#endif
