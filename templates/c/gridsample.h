/* GridSample: output point (n, o) reads X[n, :] at the location grid[n, o] gives, coordinates in
 * [-1, 1] (x first, so the last spatial dim), with nearest, linear or cubic interpolation and
 * zeros, border or reflection padding. The rules follow PyTorch's grid_sample, which the ONNX
 * spec and its test data mirror: nearest and linear move the coordinate into range (border,
 * reflection) before picking taps; cubic moves each of its four taps.
 *
 * p: [r, N, C, in[r], out[r], mode (0 nearest, 1 linear, 2 cubic), padding (0 zeros, 1 border,
 *     2 reflection), align_corners]; in: X (float32), grid (float32, [N, out..., r]). */
#ifndef FT_GRIDSAMPLE_H
#define FT_GRIDSAMPLE_H

#include <math.h>
#include <stdint.h>

#include "tensor.h"

#define FT_GS_MAXD 3

static inline double ft_gs_reflect(double x, double twice_lo, double twice_hi) {
  if (twice_lo == twice_hi) return 0;
  double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
  x = fabs(x - lo);
  double extra = fmod(x, span);
  double flips = floor(x / span); /* parity in double: x may be too large for an integer */
  return fmod(flips, 2.0) == 0 ? extra + lo : span - extra + lo;
}

/* border and reflection pull a coordinate into [0, L-1]; zeros leaves it */
static inline double ft_gs_fix(double x, int64_t L, int pad, int align) {
  if (pad == 2) x = align ? ft_gs_reflect(x, 0, 2.0 * (double)(L - 1)) : ft_gs_reflect(x, -1, 2.0 * (double)L - 1);
  if (pad >= 1) x = x < 0 ? 0 : x > (double)(L - 1) ? (double)(L - 1) : x;
  return x;
}

/* A tap's index from a real coordinate: NaN, infinities and huge values (data the model is given)
 * become an index outside every tensor, so the tap gets weight 0 instead of an undefined cast. */
static inline int64_t ft_gs_index(double v) {
  if (!(v > -2147483648.0)) return -2147483648LL;
  if (v > 2147483647.0) return 2147483647LL;
  return (int64_t)v;
}

/* Taps along one dim for normalized coordinate g: up to 4 indices and weights; out-of-range taps
 * get weight 0 (zeros padding). Returns the count. */
static inline int ft_gs_taps(double g, int64_t L, int mode, int pad, int align, int64_t *idx, double *w) {
  double u = align ? (g + 1) / 2 * (double)(L - 1) : ((g + 1) * (double)L - 1) / 2;
  int n;
  if (mode == 0) {
    idx[0] = ft_gs_index(nearbyint(ft_gs_fix(u, L, pad, align)));
    w[0] = 1;
    n = 1;
  } else if (mode == 1) {
    u = ft_gs_fix(u, L, pad, align);
    double f = floor(u), t = u - f;
    idx[0] = ft_gs_index(f); idx[1] = idx[0] + 1;
    w[0] = 1 - t; w[1] = t;
    n = 2;
  } else {
    const double A = -0.75;
    double f = floor(u), t = u - f, s = 1 - t;
    w[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
    w[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
    for (int k = 0; k < 4; k++) idx[k] = ft_gs_index(ft_gs_fix(f - 1 + k, L, pad, align));
    n = 4;
  }
  for (int k = 0; k < n; k++)
    if (idx[k] < 0 || idx[k] >= L) { idx[k] = 0; w[k] = 0; }
  return n;
}

static void ft_gridsample_f32(const int64_t *p, const double *f, const void *const *in,
                              void *const *out, void *scratch) {
  (void)f; (void)scratch;
  int r = (int)p[0], mode = (int)p[3 + 2 * r], pad = (int)p[4 + 2 * r], align = (int)p[5 + 2 * r];
  int64_t N = p[1], C = p[2];
  const int64_t *id = p + 3, *od = p + 3 + r;
  const float *X = (const float *)in[0], *G = (const float *)in[1];
  float *Y = (float *)out[0];
  int64_t isz = 1, osz = 1, ist[FT_GS_MAXD];
  for (int d = r - 1; d >= 0; d--) { ist[d] = isz; isz *= id[d]; osz *= od[d]; }
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < osz; o++) {
      const float *g = G + (n * osz + o) * r;
      /* combine the dims' taps into (offset, weight) pairs */
      int64_t off[64] = {0}, ti[4];
      double wt[64] = {1}, tw[4];
      int nc = 1;
      for (int d = 0; d < r; d++) {
        int nt = ft_gs_taps(g[r - 1 - d], id[d], mode, pad, align, ti, tw);
        int m = 0;
        int64_t noff[64];
        double nw[64];
        for (int c = 0; c < nc; c++)
          for (int t = 0; t < nt; t++)
            if (tw[t] != 0) { noff[m] = off[c] + ti[t] * ist[d]; nw[m] = wt[c] * tw[t]; m++; }
        for (int c = 0; c < m; c++) { off[c] = noff[c]; wt[c] = nw[c]; }
        nc = m;
      }
      for (int64_t ch = 0; ch < C; ch++) {
        const float *x = X + (n * C + ch) * isz;
        double acc = 0;
        for (int c = 0; c < nc; c++) acc += wt[c] * x[off[c]];
        Y[(n * C + ch) * osz + o] = (float)acc;
      }
    }
}

#endif
