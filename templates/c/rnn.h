/* Recurrent layers: RNN, GRU, LSTM (float32), one kernel each; the loop over time is inside.
 *
 * Every batch row runs its own recurrence (rows never mix), so each direction walks the rows and,
 * per row, its valid steps (sequence_lens, or all of them): forward from step 0, reverse from
 * the row's last valid step. Outputs past a row's length stay zero; Y_h (and Y_c) hold the state
 * after the row's last valid step.
 *
 * p: [S, B, I, H, D, layout, flag, reverse of direction 0, of direction 1, present,
 *     activation ids: n_act for direction 0, then n_act for direction 1]
 *   S steps, B batch, I input size, H hidden size, D directions (1 or 2); layout 1 puts the
 *   batch first in X, Y, Y_h, Y_c and the initial states; flag is GRU's linear_before_reset or
 *   LSTM's input_forget; present has bit i set for each input i the node gives and bit 8 + j
 *   for each output j (a node may pass fewer than the kernel could read).
 * f: [clip (0: none), then alpha, beta per activation in the same order as the ids]
 * in: X, W, R, B, sequence_lens (int32), initial_h, (LSTM) initial_c, P
 * out: Y, Y_h, (LSTM) Y_c; any may be NULL
 * W is [D, G*H, I], R [D, G*H, H], B [D, 2*G*H] with the gates in ONNX order (GRU z r h,
 * LSTM i o f c). Scratch: ft_rnn_scratch floats. */
#ifndef FT_RNN_H
#define FT_RNN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tensor.h"

/* The recurrent ops' gate activations (ONNX's activations attribute). Not the scalar ops of
 * templates/common/scalar_ops.h: these compute with libm's float functions (not fastmath.h's),
 * take ONNX's RNN-only Affine and ScaledTanh, and their ids are the plan's p values. */
enum {
  FT_RNN_ACT_SIGMOID, FT_RNN_ACT_TANH, FT_RNN_ACT_RELU, FT_RNN_ACT_AFFINE, FT_RNN_ACT_LEAKY_RELU, FT_RNN_ACT_THRESHOLDED_RELU,
  FT_RNN_ACT_SCALED_TANH, FT_RNN_ACT_HARD_SIGMOID, FT_RNN_ACT_ELU, FT_RNN_ACT_SOFTSIGN, FT_RNN_ACT_SOFTPLUS
};

static inline float ft_rnn_act(int id, float x, const double *ab) {
  float a = (float)ab[0], b = (float)ab[1];
  switch (id) {
  case FT_RNN_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
  case FT_RNN_ACT_TANH: return tanhf(x);
  case FT_RNN_ACT_RELU: return x > 0 ? x : 0;
  case FT_RNN_ACT_AFFINE: return a * x + b;
  case FT_RNN_ACT_LEAKY_RELU: return x >= 0 ? x : a * x;
  case FT_RNN_ACT_THRESHOLDED_RELU: return x > a ? x : 0;
  case FT_RNN_ACT_SCALED_TANH: return a * tanhf(b * x);
  case FT_RNN_ACT_HARD_SIGMOID: { float v = a * x + b; return v < 0 ? 0 : v > 1 ? 1 : v; }
  case FT_RNN_ACT_ELU: return x >= 0 ? x : a * (expf(x) - 1);
  case FT_RNN_ACT_SOFTSIGN: return x / (1 + fabsf(x));
  default: return log1pf(expf(x)); /* Softplus */
  }
}

static inline float ft_rnn_clip(float x, float clip) {
  return clip > 0 ? (x < -clip ? -clip : x > clip ? clip : x) : x;
}

/* y[j] = b1[j] + b2[j] + sum_i x[i] * w[j * n + i] for j < m (b1, b2 may be NULL) */
static inline void ft_rnn_matvec(float *y, const float *w, const float *x, int64_t m, int64_t n,
                                 const float *b1, const float *b2) {
  for (int64_t j = 0; j < m; j++) {
    const float *wr = w + j * n;
    float s = (b1 ? b1[j] : 0) + (b2 ? b2[j] : 0);
    for (int64_t i = 0; i < n; i++) s += wr[i] * x[i];
    y[j] = s;
  }
}

static inline size_t ft_rnn_scratch(int64_t H, int gates) {
  return sizeof(float) * (size_t)(H * (2 * gates + 4));
}

/* The shared frame: walks directions, rows and steps; the step (the variadic part) computes the new h (and c) from x,
 * h, c for one row. Offsets follow the layout. */
#define FT_RNN_FRAME(G, NACT, ...)                                                               \
  int64_t S = p[0], Bn = p[1], I = p[2], H = p[3], D = p[4], layout = p[5], flag = p[6];         \
  const int64_t *rev = p + 7, *acts = p + 10;                                        \
  float clip = (float)f[0];                                                                      \
  const float *X = (const float *)in[0], *Wa = (const float *)in[1], *Ra = (const float *)in[2]; \
  const float *Ba = FT_RNN_IN(3, const float), *H0 = FT_RNN_IN(5, const float);                  \
  const int32_t *lens = FT_RNN_IN(4, const int32_t);                                             \
  float *Y = FT_RNN_OUT(0), *Yh = FT_RNN_OUT(1);                                                 \
  float *gx = (float *)scratch, *gh = gx + G * H, *h = gh + G * H, *hn = h + H, *c = hn + H,     \
        *tmp = c + H;                                                                            \
  (void)flag; (void)tmp; (void)c;                                                                \
  if (Y) memset(Y, 0, sizeof(float) * (size_t)(S * D * Bn * H));                                \
  for (int64_t d = 0; d < D; d++) {                                                              \
    const float *W = Wa + d * G * H * I, *R = Ra + d * G * H * H;                                \
    const float *Wb = Ba ? Ba + d * 2 * G * H : NULL, *Rb = Ba ? Wb + G * H : NULL;              \
    const int64_t *act = acts + d * (NACT);                                                      \
    const double *ab = f + 1 + 2 * d * (NACT);                                                   \
    (void)act; (void)ab;                                                                         \
    for (int64_t b = 0; b < Bn; b++) {                                                           \
      int64_t st = layout ? (b * D + d) * H : (d * Bn + b) * H; /* initial and final states */   \
      int64_t len = lens ? lens[b] : S;                                                          \
      if (len > S) len = S;                                                                      \
      if (H0) memcpy(h, H0 + st, sizeof(float) * (size_t)H); else memset(h, 0, sizeof(float) * (size_t)H); \
      FT_RNN_INIT_C;                                                                             \
      for (int64_t s = 0; s < len; s++) {                                                        \
        int64_t t = rev[d] ? len - 1 - s : s;                                                    \
        const float *x = X + (layout ? b * S + t : t * Bn + b) * I;                              \
        __VA_ARGS__;                                                                             \
        memcpy(h, hn, sizeof(float) * (size_t)H);                                                \
        if (Y) memcpy(Y + (layout ? (b * S + t) * D + d : (t * D + d) * Bn + b) * H, h,           \
                      sizeof(float) * (size_t)H);                                                \
      }                                                                                          \
      if (Yh) memcpy(Yh + st, h, sizeof(float) * (size_t)H);                                     \
      FT_RNN_SAVE_C;                                                                             \
    }                                                                                            \
  }

#define FT_RNN_IN(i, T) ((has >> (i)) & 1 ? (T *)in[i] : NULL)
#define FT_RNN_OUT(j) ((has >> (8 + (j))) & 1 ? (float *)out[j] : NULL)
#define FT_RNN_INIT_C
#define FT_RNN_SAVE_C

/* RNN: h' = f(W x + R h + Wb + Rb) */
static void ft_rnn_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                       void *scratch) {
  const int64_t has = p[9];
  FT_RNN_FRAME(1, 1, {
    ft_rnn_matvec(gx, W, x, H, I, Wb, Rb);
    ft_rnn_matvec(gh, R, h, H, H, NULL, NULL);
    for (int64_t j = 0; j < H; j++) hn[j] = ft_rnn_act((int)act[0], ft_rnn_clip(gx[j] + gh[j], clip), ab);
  })
}

/* GRU: z = f(.), r = f(.), candidate n = g(W_h x + R_h (r * h) + Wb_h + Rb_h), or with
 * linear_before_reset g(W_h x + Wb_h + r * (R_h h + Rb_h)); h' = (1 - z) * n + z * h. */
static void ft_gru_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                       void *scratch) {
  const int64_t has = p[9];
  FT_RNN_FRAME(3, 2, {
    ft_rnn_matvec(gx, W, x, 3 * H, I, Wb, NULL);
    ft_rnn_matvec(gh, R, h, 2 * H, H, Rb, NULL); /* z and r */
    for (int64_t j = 0; j < 2 * H; j++) gh[j] = ft_rnn_act((int)act[0], ft_rnn_clip(gx[j] + gh[j], clip), ab);
    const float *z = gh, *r = gh + H;
    if (flag) {
      ft_rnn_matvec(tmp, R + 2 * H * H, h, H, H, Rb ? Rb + 2 * H : NULL, NULL);
      for (int64_t j = 0; j < H; j++) tmp[j] = gx[2 * H + j] + r[j] * tmp[j];
    } else {
      for (int64_t j = 0; j < H; j++) hn[j] = r[j] * h[j];
      ft_rnn_matvec(tmp, R + 2 * H * H, hn, H, H, Rb ? Rb + 2 * H : NULL, NULL);
      for (int64_t j = 0; j < H; j++) tmp[j] += gx[2 * H + j];
    }
    for (int64_t j = 0; j < H; j++) {
      float n = ft_rnn_act((int)act[1], ft_rnn_clip(tmp[j], clip), ab + 2);
      hn[j] = (1 - z[j]) * n + z[j] * h[j];
    }
  })
}

/* LSTM: i, o, f gates (f activation, peepholes P = [Pi, Po, Pf] on the cell state), cell
 * candidate g(.), C' = f * C + i * cand, h' = o * h(C'); input_forget couples f = 1 - i. */
#undef FT_RNN_INIT_C
#undef FT_RNN_SAVE_C
#define FT_RNN_INIT_C                                                                            \
  if (C0) memcpy(c, C0 + st, sizeof(float) * (size_t)H); else memset(c, 0, sizeof(float) * (size_t)H)
#define FT_RNN_SAVE_C if (Yc) memcpy(Yc + st, c, sizeof(float) * (size_t)H)
static void ft_lstm_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch) {
  const int64_t has = p[9];
  const float *C0 = FT_RNN_IN(6, const float), *Pa = FT_RNN_IN(7, const float);
  float *Yc = FT_RNN_OUT(2);
  FT_RNN_FRAME(4, 3, {
    const float *P = Pa ? Pa + d * 3 * H : NULL;
    ft_rnn_matvec(gx, W, x, 4 * H, I, Wb, Rb);
    ft_rnn_matvec(gh, R, h, 4 * H, H, NULL, NULL);
    for (int64_t j = 0; j < H; j++) {
      float gi = gx[j] + gh[j], go = gx[H + j] + gh[H + j], gf = gx[2 * H + j] + gh[2 * H + j];
      float gc = gx[3 * H + j] + gh[3 * H + j];
      if (P) { gi += P[j] * c[j]; gf += P[2 * H + j] * c[j]; }
      float ig = ft_rnn_act((int)act[0], ft_rnn_clip(gi, clip), ab);
      float fg = flag ? 1 - ig : ft_rnn_act((int)act[0], ft_rnn_clip(gf, clip), ab);
      float cand = ft_rnn_act((int)act[1], ft_rnn_clip(gc, clip), ab + 2);
      float cn = fg * c[j] + ig * cand;
      if (P) go += P[H + j] * cn;
      float og = ft_rnn_act((int)act[0], ft_rnn_clip(go, clip), ab);
      c[j] = cn;
      hn[j] = og * ft_rnn_act((int)act[2], cn, ab + 4);
    }
  })
}
#undef FT_RNN_INIT_C
#undef FT_RNN_SAVE_C
#undef FT_RNN_IN
#undef FT_RNN_OUT

#endif
