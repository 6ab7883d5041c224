/* Signal processing (opset 17): the Hann, Hamming and Blackman windows, DFT and STFT. The
 * transforms are direct O(n^2) sums in double (no FFT): simple, exact enough, and these ops are
 * rare in the models ftax targets. Complex values are pairs (real, imaginary) in a last dim of 2.
 *
 *   ft_window_<t>  p: [N, kind (0 Hann, 1 Hamming, 2 Blackman), periodic]
 *   ft_dft_f32     p: [outer, n_in, n_fft, n_out, inner, complex input, inverse]: the axis has
 *                  n_in input and n_out output entries; the input is zero-padded or cut to n_fft
 *   ft_stft_f32    p: [batch, signal length, complex input, frames, step, frame length, bins,
 *                  has window]; in: signal, frame_step, window (float32, frame length) */
#ifndef FT_SPECTRAL_H
#define FT_SPECTRAL_H

#include <math.h>
#include <stdint.h>

#include "tensor.h"

#define FT_SIGNAL_PI 3.14159265358979323846

static inline double ft_window_at(int kind, int64_t n, int64_t N, int periodic) {
  double den = (double)(periodic ? N : N - 1), x = den > 0 ? 2 * FT_SIGNAL_PI * (double)n / den : 0;
  switch (kind) {
  case 0: return 0.5 - 0.5 * cos(x);
  case 1: return 25.0 / 46.0 - (21.0 / 46.0) * cos(x);
  default: return 0.42 - 0.5 * cos(x) + 0.08 * cos(2 * x);
  }
}

#define FT_WINDOW(S, T)                                                                          \
  static void ft_window_##S(const int64_t *p, const double *f, const void *const *in,           \
                            void *const *out, void *scratch) {                                   \
    (void)f; (void)in; (void)scratch;                                                            \
    T *Y = (T *)out[0];                                                                          \
    for (int64_t n = 0; n < p[0]; n++) Y[n] = (T)ft_window_at((int)p[1], n, p[0], (int)p[2]);    \
  }
FT_WINDOW(f32, float)
FT_WINDOW(f64, double)
#undef FT_WINDOW

/* One transform: y[k] = sum_j x[j] e^(-+2 pi i jk / n) for k < n_out, x read with a stride (in
 * complex pairs or reals); inverse divides by n. */
static inline void ft_dft_line(const float *x, int64_t xs, int64_t n_in, int cplx, int64_t n, float *y,
                               int64_t ys, int64_t n_out, int inverse, const float *win) {
  double sign = inverse ? 1 : -1;
  int64_t m = n_in < n ? n_in : n;
  for (int64_t k = 0; k < n_out; k++) {
    double re = 0, im = 0;
    for (int64_t j = 0; j < m; j++) {
      double a = sign * 2 * FT_SIGNAL_PI * (double)((k * j) % n) / (double)n, c = cos(a), s = sin(a);
      double w = win ? win[j] : 1;
      double xr = x[j * xs] * w, xi = cplx ? x[j * xs + 1] * w : 0;
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) { re /= (double)n; im /= (double)n; }
    y[k * ys] = (float)re;
    y[k * ys + 1] = (float)im;
  }
}

static void ft_dft_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                       void *scratch) {
  (void)f; (void)scratch;
  int64_t outer = p[0], n_in = p[1], n = p[2], n_out = p[3], inner = p[4];
  int cplx = (int)p[5], inverse = (int)p[6], ci = cplx ? 2 : 1;
  const float *X = (const float *)in[0];
  float *Y = (float *)out[0];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      ft_dft_line(X + (o * n_in * inner + i) * ci, inner * ci, n_in, cplx, n,
                  Y + (o * n_out * inner + i) * 2, inner * 2, n_out, inverse, NULL);
}

static void ft_stft_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch) {
  (void)f; (void)scratch;
  int64_t B = p[0], L = p[1], frames = p[3], step = p[4], flen = p[5], bins = p[6];
  int cplx = (int)p[2], ci = cplx ? 2 : 1;
  const float *X = (const float *)in[0], *win = p[7] ? (const float *)in[2] : NULL;
  float *Y = (float *)out[0];
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < frames; t++)
      ft_dft_line(X + (b * L + t * step) * ci, ci, flen, cplx, flen, Y + ((b * frames + t) * bins) * 2, 2, bins, 0, win);
}

#endif
