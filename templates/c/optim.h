/* Optimizer steps of the ai.onnx.preview.training domain: Adagrad, Momentum, Adam (float32).
 * A node updates n tensors at once: in = R (learning rate), T (step count, int64), X_1..X_n,
 * G_1..G_n, then the state tensors (Adagrad: H; Momentum: V; Adam: V, H), n of each; out = the
 * new X_1..X_n and the new states in the same order. p: [n, numel_1 .. numel_n]. Arithmetic is
 * in double, as the spec's reference does with Python scalars.
 *
 *   ft_adagrad_f32   f: [decay_factor, epsilon, norm_coefficient]
 *   ft_momentum_f32  f: [alpha, beta, norm_coefficient, nesterov]
 *   ft_adam_f32      f: [alpha, beta, epsilon, norm_coefficient, norm_coefficient_post] */
#ifndef FT_OPTIM_H
#define FT_OPTIM_H

#include <math.h>
#include <stdint.h>

#include "tensor.h"

static void ft_adagrad_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                           void *scratch) {
  (void)scratch;
  int n = (int)p[0];
  double r = *(const float *)in[0], t = (double)*(const int64_t *)in[1];
  double rate = r / (1 + t * f[0]);
  for (int i = 0; i < n; i++) {
    const float *X = (const float *)in[2 + i], *G = (const float *)in[2 + n + i], *H = (const float *)in[2 + 2 * n + i];
    float *Xn = (float *)out[i], *Hn = (float *)out[n + i];
    for (int64_t e = 0; e < p[1 + i]; e++) {
      double g = f[2] * X[e] + G[e], h = H[e] + g * g;
      Xn[e] = (float)(X[e] - rate * g / (sqrt(h) + f[1]));
      Hn[e] = (float)h;
    }
  }
}

static void ft_momentum_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                            void *scratch) {
  (void)scratch;
  int n = (int)p[0];
  double r = *(const float *)in[0], beta = *(const int64_t *)in[1] > 0 ? f[1] : 1;
  for (int i = 0; i < n; i++) {
    const float *X = (const float *)in[2 + i], *G = (const float *)in[2 + n + i], *V = (const float *)in[2 + 2 * n + i];
    float *Xn = (float *)out[i], *Vn = (float *)out[n + i];
    for (int64_t e = 0; e < p[1 + i]; e++) {
      double g = f[2] * X[e] + G[e], v = f[0] * V[e] + beta * g;
      Xn[e] = (float)(X[e] - r * (f[3] != 0 ? g + f[0] * v : v));
      Vn[e] = (float)v;
    }
  }
}

static void ft_adam_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch) {
  (void)scratch;
  int n = (int)p[0];
  double r = *(const float *)in[0], t = (double)*(const int64_t *)in[1];
  double alpha = f[0], beta = f[1];
  double rate = t > 0 ? r * sqrt(1 - pow(beta, t)) / (1 - pow(alpha, t)) : r;
  for (int i = 0; i < n; i++) {
    const float *X = (const float *)in[2 + i], *G = (const float *)in[2 + n + i];
    const float *V = (const float *)in[2 + 2 * n + i], *H = (const float *)in[2 + 3 * n + i];
    float *Xn = (float *)out[i], *Vn = (float *)out[n + i], *Hn = (float *)out[2 * n + i];
    for (int64_t e = 0; e < p[1 + i]; e++) {
      double g = f[3] * X[e] + G[e];
      double v = alpha * V[e] + (1 - alpha) * g, h = beta * H[e] + (1 - beta) * g * g;
      double x = X[e] - rate * (v / (sqrt(h) + f[2]));
      Xn[e] = (float)((1 - f[4]) * x);
      Vn[e] = (float)v;
      Hn[e] = (float)h;
    }
  }
}

#endif
