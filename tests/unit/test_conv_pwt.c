/* The transposed GEMM convs (conv.h, FT_CV_POINTWISE_T and FT_CV_IM2COL_T: vectors along C_out,
 * W^T packed as B panels) against plain reference loops in double: planes that are no multiple of the tile
 * (7x7, 13x13, 14x14, 1x1), C_out with partial panels and a half-empty last panel (16, 24, 40,
 * 48, 1000), short and long K, batch 2 and groups, every epilogue (bias, Relu, Clip, Sigmoid,
 * SiLU, a tanh GELU through the scalar path, the residual before and after, the residual in
 * place over the output), 1 and 3 threads, strided windows with pads through im2col (one
 * chunk or several); and the same calls with unpacked weights, which run as the plain modes.
 * Then the plain modes with packed weights (the direct tiles of gemm.h and their clamp store):
 * pointwise with a short K, shifted 3x3 with stride 1 and 2 and pads, odd C_out and planes,
 * the same epilogues. Self-contained: includes the kernel templates directly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"

#include "kernel_bufs.h"

typedef struct pcase {
  int64_t N, C, CO, G, H, W;
  int bias, act, res; /* res: 0 none, 1 before the activation, 2 after it */
  int in_place;       /* the output written over the residual */
  int threads;
  int64_t k, s, pad, chunk; /* window (square), stride, pads; im2col chunk (0: the whole plane) */
  int plain;                /* the plain GEMM modes instead: pointwise or shifted (direct tiles, clamp store) */
} pcase;

static int64_t pcase_out(const pcase *c, int64_t in) { return (in + 2 * c->pad - c->k) / c->s + 1; }

static double ref_act(double x, int act) {
  switch (act) {
  case FT_ACT_RELU: return x < 0 ? 0 : x;
  case FT_ACT_CLIP: return x < -0.5 ? -0.5 : (x > 0.75 ? 0.75 : x);
  case FT_ACT_SIGMOID: return 1 / (1 + exp(-x));
  case FT_ACT_SILU: return x / (1 + exp(-x));
  case FT_ACT_GELU_TANH: return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  default: return x;
  }
}

static void pcase_params(const pcase *c, int64_t *p) {
  memset(p, 0, sizeof(int64_t) * FT_CV_NP);
  int pw = c->k == 1 && c->s == 1 && !c->pad;
  p[FT_CV_MODE] = c->plain ? (pw ? FT_CV_POINTWISE : FT_CV_SHIFTED) : pw ? FT_CV_POINTWISE_T : FT_CV_IM2COL_T;
  p[FT_CV_N] = c->N; p[FT_CV_C] = c->C; p[FT_CV_CO] = c->CO; p[FT_CV_G] = c->G;
  p[FT_CV_HAS_BIAS] = c->bias;
  p[FT_CV_ACT] = c->act;
  p[FT_CV_RES] = c->res;
  int64_t in[3] = {1, c->H, c->W};
  for (int i = 0; i < 3; i++) {
    p[FT_CV_IN + i] = in[i]; p[FT_CV_OUT + i] = i ? pcase_out(c, in[i]) : 1;
    p[FT_CV_K + i] = i ? c->k : 1; p[FT_CV_S + i] = i ? c->s : 1; p[FT_CV_D + i] = 1; p[FT_CV_P + i] = i ? c->pad : 0;
  }
  int64_t S = p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
  p[FT_CV_CHUNK] = c->chunk && c->chunk < S ? c->chunk : S;
}

/* Runs the case with weights packed for the transposed mode (packed) or unpacked. */
static void run_pcase(const pcase *c, int packed) {
  int64_t p[FT_CV_NP], OH = pcase_out(c, c->H), OW = pcase_out(c, c->W), S = OH * OW, S_in = c->H * c->W;
  int64_t Cg = c->C / c->G, Mg = c->CO / c->G, ny = c->N * c->CO * S, kk = c->k * c->k;
  pcase_params(c, p);
  float *X = rand_buf(c->N * c->C * S_in), *W = rand_buf(c->CO * Cg * kk), *B = rand_buf(c->CO);
  float *R = rand_buf(ny), *Y = rand_buf(ny), *Wp = NULL;
  double *want = malloc(sizeof(double) * (size_t)ny);
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t co = 0; co < c->CO; co++)
      for (int64_t s = 0; s < S; s++) {
        int64_t g = co / Mg, at = (n * c->CO + co) * S + s;
        double acc = c->bias ? B[co] : 0;
        for (int64_t ci = 0; ci < Cg; ci++)
          for (int64_t t = 0; t < kk; t++) {
            int64_t ih = s / OW * c->s + t / c->k - c->pad, iw = s % OW * c->s + t % c->k - c->pad;
            if (ih >= 0 && ih < c->H && iw >= 0 && iw < c->W)
              acc += (double)X[(n * c->C + g * Cg + ci) * S_in + ih * c->W + iw] * W[(co * Cg + ci) * kk + t];
          }
        if (c->res == 1) acc += R[at];
        acc = ref_act(acc, c->act);
        if (c->res == 2) acc += R[at];
        want[at] = acc;
      }
  const void *ins[4] = {X, W, B, R};
  if (packed) {
    Wp = scratch_buf(ft_conv_pack_w(p, W, NULL));
    ft_conv_pack_w(p, W, Wp);
    ins[1] = Wp;
    p[FT_CV_PACKED] = 1;
  }
  if (c->in_place) {
    memcpy(Y, R, sizeof(float) * (size_t)ny);
    ins[3] = Y;
  }
  double f[4] = {1, 1, -0.5, 0.75};
  void *outs[1] = {Y}, *scratch = scratch_buf(ft_conv_scratch(p));
  ft_set_threads(c->threads);
  ft_conv_f32(p, f, ins, outs, scratch);
  ft_set_threads(0);
  double tol = 1e-5 * (double)(Cg * kk > 1 ? Cg * kk : 1);
  for (int64_t i = 0; i < ny; i++) {
    double d = fabs((double)Y[i] - want[i]);
    if (!(d <= tol + 1e-5 * fabs(want[i])))
      cr_assert_fail("N=%lld C=%lld CO=%lld G=%lld %lldx%lld k%lld s%lld act=%d res=%d in_place=%d packed=%d: element %lld: got %.9g, want %.9g",
                     (long long)c->N, (long long)c->C, (long long)c->CO, (long long)c->G, (long long)c->H,
                     (long long)c->W, (long long)c->k, (long long)c->s, c->act, c->res, c->in_place, packed,
                     (long long)i, Y[i], want[i]);
  }
  free(X); free(W); free(B); free(R); free(Y); free(Wp); free(want); free(scratch);
}

static void run_both(const pcase *c) {
  run_pcase(c, 1);
  run_pcase(c, 0);
}

Test(conv_pwt, planes_and_channel_tails) {
  const int64_t planes[][2] = {{7, 7}, {13, 13}, {14, 14}, {1, 1}, {3, 5}, {28, 28}};
  const int64_t cos[] = {16, 24, 40, 48, 64, 1000};
  for (size_t i = 0; i < sizeof planes / sizeof *planes; i++)
    for (size_t j = 0; j < sizeof cos / sizeof *cos; j++) {
      pcase c = {1, 37, cos[j], 1, planes[i][0], planes[i][1], 1, FT_ACT_NONE, 0, 0, 1, 1, 1, 0, 0, 0};
      run_both(&c);
    }
}

Test(conv_pwt, short_and_long_k) {
  const int64_t ks[] = {1, 3, 16, 300, 600};
  for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
    pcase c = {1, ks[i], 48, 1, 7, 7, 1, FT_ACT_RELU, 0, 0, 1, 1, 1, 0, 0, 0};
    run_both(&c);
    pcase d = {1, ks[i], 32, 1, 14, 14, 0, FT_ACT_NONE, 0, 0, 1, 1, 1, 0, 0, 0};
    run_both(&d);
  }
}

Test(conv_pwt, batch_groups_threads) {
  pcase a = {2, 64, 96, 1, 7, 7, 1, FT_ACT_RELU, 0, 0, 3, 1, 1, 0, 0, 0};
  run_both(&a);
  pcase b = {2, 24, 40, 2, 13, 13, 1, FT_ACT_CLIP, 1, 0, 3, 1, 1, 0, 0, 0};
  run_both(&b);
  pcase c = {2, 64, 64, 1, 56, 56, 1, FT_ACT_NONE, 0, 0, 3, 1, 1, 0, 0, 0}; /* several row blocks per plane */
  run_both(&c);
  pcase d = {1, 2048, 48, 1, 14, 14, 1, FT_ACT_RELU, 2, 0, 3, 1, 1, 0, 0, 0}; /* blocks of fewer rows than the plane */
  run_both(&d);
}

Test(conv_pwt, every_epilogue) {
  const int acts[] = {FT_ACT_NONE, FT_ACT_RELU, FT_ACT_CLIP, FT_ACT_SIGMOID, FT_ACT_SILU, FT_ACT_GELU_TANH};
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
    for (int res = 0; res <= 2; res++)
      for (int in_place = 0; in_place <= (res > 0); in_place++) {
        pcase c = {2, 40, 48, 1, 7, 7, 1, acts[i], res, in_place, 1, 1, 1, 0, 0, 0};
        run_both(&c);
        pcase d = {1, 300, 24, 1, 13, 13, 0, acts[i], res, in_place, 3, 1, 1, 0, 0, 0};
        run_both(&d);
      }
}

Test(conv_pwt, strided_im2col) {
  const pcase cs[] = {
      {1, 16, 48, 1, 15, 15, 1, FT_ACT_RELU, 0, 0, 1, 3, 2, 1, 0, 0},    /* 3x3/2 -> 8x8 */
      {2, 12, 40, 2, 14, 13, 1, FT_ACT_CLIP, 1, 0, 3, 3, 2, 1, 0, 0},    /* groups, a non-square plane */
      {1, 3, 64, 1, 29, 29, 1, FT_ACT_RELU, 0, 0, 3, 7, 2, 3, 0, 0},     /* the 7x7/2 stem, small */
      {1, 3, 64, 1, 29, 29, 1, FT_ACT_RELU, 0, 0, 1, 7, 2, 3, 64, 0},    /* in chunks of 64 columns */
      {1, 64, 96, 1, 14, 14, 1, FT_ACT_NONE, 2, 1, 1, 1, 2, 0, 0, 0},    /* 1x1/2, residual in place */
      {2, 20, 24, 1, 13, 13, 0, FT_ACT_SILU, 1, 1, 3, 3, 2, 1, 32, 0},   /* chunks, residual in place */
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) run_both(&cs[i]);
}

/* The plain pointwise GEMM with a short K (its tile mostly the store), every epilogue, odd
 * C_out (a partial row sliver) and planes (a partial last panel), 1 and 3 threads. */
Test(conv_plain, short_k_pointwise_every_epilogue) {
  const int acts[] = {FT_ACT_NONE, FT_ACT_RELU, FT_ACT_CLIP, FT_ACT_SIGMOID};
  const int64_t ks[] = {3, 16, 32, 64};
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
    for (int res = 0; res <= 2; res++)
      for (int in_place = 0; in_place <= (res > 0); in_place++) {
        pcase c = {1, ks[(size_t)res + i % 2], 64, 1, 27, 27, 1, acts[i], res, in_place, 1, 1, 1, 0, 0, 1};
        run_both(&c);
        pcase d = {2, 16, 20, 1, 13, 11, (int)(i % 2), acts[i], res, in_place, 3, 1, 1, 0, 0, 1};
        run_both(&d);
      }
  pcase big = {1, 16, 64, 1, 55, 55, 1, FT_ACT_RELU, 0, 0, 3, 1, 1, 0, 0, 1}; /* SqueezeNet's expand1x1 */
  run_both(&big);
  pcase grp = {1, 32, 96, 2, 28, 28, 1, FT_ACT_CLIP, 2, 0, 1, 1, 1, 0, 0, 1};
  run_both(&grp);
}

/* The shifted-rows GEMM (output rows over a padded width: kept lanes compressed in the store):
 * the 3x3/2 stem with 3 input channels, 3x3/1 with pads, odd planes and C_out, every epilogue. */
Test(conv_plain, shifted_strides_pads_every_epilogue) {
  const int acts[] = {FT_ACT_NONE, FT_ACT_RELU, FT_ACT_CLIP, FT_ACT_SILU};
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
    for (int res = 0; res <= 2; res++) {
      pcase stem = {1, 3, 64, 1, 45, 45, 1, acts[i], res, 0, 1, 3, 2, 0, 0, 1};
      run_both(&stem);
      pcase p1 = {2, 16, 20, 1, 15, 13, 1, acts[i], res, res == 1, 3, 3, 1, 1, 0, 1};
      run_both(&p1);
      pcase s2 = {1, 8, 33, 1, 17, 17, (int)(i % 2), acts[i], res, 0, 1, 3, 2, 1, 0, 1};
      run_both(&s2);
    }
}
