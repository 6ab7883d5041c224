/* The blocked layout between convs (FT_CV_LAYOUT, templates/common/conv_params.h): a
 * pointwise^T conv writing Y as [N][C/16][H*W][16] and a depthwise conv reading X so, each
 * against plain reference loops in double, and the two chained as compiler/passes/blocked.c
 * chains them. Planes 7x7, 14x14, 28x28 and ragged ones (13x11, 5x9: partial tiles, rows that
 * end inside a 16-pixel group), stride 1 and 2, 3x3 and 5x5 windows with pads, 16 to 48
 * channels, no activation, Relu and Clip, bias or none, a residual on the depthwise side,
 * batch 2, 1 and 3 threads; each on this build's kernels and on conv_blocked_portable.c's
 * (no AVX-512: the paths of other targets). The other way round too: a depthwise conv writing Y
 * blocked (from X in NCHW or blocked) and a pointwise^T conv reading X blocked (any number of
 * output channels, a residual or none), and the two chained. Self-contained: includes the
 * kernel templates. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"

#include "kernel_bufs.h"

int conv_portable_has_avx512(void);
void conv_portable_f32(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch);
size_t conv_portable_pack_w(const int64_t *p, const void *src, void *dst);
void conv_portable_set_threads(int n);

typedef struct bcase {
  int64_t N, C, H, W; /* C: the blocked channels (pointwise's C_out, depthwise's C) */
  int64_t K;          /* pointwise's input channels */
  int64_t k, s, pad;  /* depthwise window, stride, pads */
  int bias, act, res; /* res: depthwise residual, 0 none, 1 before the activation, 2 after it */
  int threads;
} bcase;

static double ref_act(double x, int act) {
  if (act == FT_ACT_RELU) return x < 0 ? 0 : x;
  if (act == FT_ACT_CLIP) return x < -0.5 ? -0.5 : (x > 0.75 ? 0.75 : x);
  return x;
}

static void base_params(int64_t *p, int64_t N, int64_t C, int64_t CO, int64_t G, int64_t H, int64_t W, int64_t k,
                        int64_t s, int64_t pad, int bias, int act, int res) {
  memset(p, 0, sizeof(int64_t) * FT_CV_NP);
  p[FT_CV_N] = N; p[FT_CV_C] = C; p[FT_CV_CO] = CO; p[FT_CV_G] = G;
  p[FT_CV_HAS_BIAS] = bias; p[FT_CV_ACT] = act; p[FT_CV_RES] = res;
  int64_t in[3] = {1, H, W};
  for (int i = 0; i < 3; i++) {
    p[FT_CV_IN + i] = in[i];
    p[FT_CV_OUT + i] = i ? (in[i] + 2 * pad - k) / s + 1 : 1;
    p[FT_CV_K + i] = i ? k : 1; p[FT_CV_S + i] = i ? s : 1; p[FT_CV_D + i] = 1; p[FT_CV_P + i] = i ? pad : 0;
  }
  p[FT_CV_CHUNK] = p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2];
}

/* NCHW element (n, c, i) of a blocked tensor of C channels and S pixels */
static int64_t blk_at(int64_t n, int64_t c, int64_t i, int64_t C, int64_t S) {
  return (n * C + c / 16 * 16) * S + i * 16 + c % 16;
}

typedef void (*conv_fn)(const int64_t *, const double *, const void *const *, void *const *, void *);
typedef size_t (*pack_fn)(const int64_t *, const void *, void *);

static void run_packed(int64_t *p, conv_fn conv, pack_fn pack, const float *W, const void **ins, void *Y,
                       int threads, int portable) {
  void *Wp = scratch_buf(pack(p, W, NULL));
  pack(p, W, Wp);
  ins[1] = Wp;
  p[FT_CV_PACKED] = 1;
  double f[4] = {1, 1, -0.5, 0.75};
  void *outs[1] = {Y}, *scratch = scratch_buf(ft_conv_scratch(p));
  if (portable) conv_portable_set_threads(threads);
  else ft_set_threads(threads);
  conv(p, f, ins, outs, scratch);
  if (portable) conv_portable_set_threads(0);
  else ft_set_threads(0);
  free(Wp);
  free(scratch);
}

static void check(const char *what, const bcase *c, int portable, const float *got, const double *want, int64_t n,
                  double tol) {
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - want[i]);
    if (!(d <= tol + 1e-5 * fabs(want[i])))
      cr_assert_fail("%s N=%lld C=%lld %lldx%lld K=%lld k%lld s%lld pad%lld bias=%d act=%d res=%d threads=%d portable=%d: "
                     "element %lld: got %.9g, want %.9g",
                     what, (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->K,
                     (long long)c->k, (long long)c->s, (long long)c->pad, c->bias, c->act, c->res, c->threads, portable,
                     (long long)i, got[i], want[i]);
  }
}

/* pointwise^T (K -> C) with Y blocked, depthwise with X blocked (a blocked copy of a random
 * input), and the two chained; portable: the kernels built without AVX-512. */
/* NCHW <-> blocked [N][C/16][S][16], as float or as the references' double */
static void to_blocked(const float *x, float *b, int64_t N, int64_t C, int64_t S) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++)
      for (int64_t i = 0; i < S; i++) b[blk_at(n, ch, i, C, S)] = x[(n * C + ch) * S + i];
}
static void from_blocked(const float *b, float *x, double *xd, int64_t N, int64_t C, int64_t S) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++)
      for (int64_t i = 0; i < S; i++) {
        float v = b[blk_at(n, ch, i, C, S)];
        if (x) x[(n * C + ch) * S + i] = v;
        if (xd) xd[(n * C + ch) * S + i] = v;
      }
}

/* The epilogue in double: residual R (res 1 before the activation, 2 after) */
static double ref_epi(double acc, const float *R, int64_t at, int act, int res) {
  if (res == 1) acc += R[at];
  acc = ref_act(acc, act);
  if (res == 2) acc += R[at];
  return acc;
}

/* Depthwise conv of x (N x C x H x W) with window k, stride s, pads pad, in double */
static void ref_depthwise(const double *x, const float *Wd, const float *Bd, const float *R, int64_t N, int64_t C,
                          int64_t H, int64_t W, int64_t k, int64_t s, int64_t pad, int bias, int act, int res,
                          double *y) {
  int64_t OH = (H + 2 * pad - k) / s + 1, OW = (W + 2 * pad - k) / s + 1, OS = OH * OW, T = k * k;
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++)
      for (int64_t o = 0; o < OS; o++) {
        int64_t at = (n * C + ch) * OS + o;
        double acc = bias ? Bd[ch] : 0;
        for (int64_t t = 0; t < T; t++) {
          int64_t ih = o / OW * s + t / k - pad, iw = o % OW * s + t % k - pad;
          if (ih >= 0 && ih < H && iw >= 0 && iw < W) acc += x[(n * C + ch) * H * W + ih * W + iw] * Wd[ch * T + t];
        }
        y[at] = ref_epi(acc, R, at, act, res);
      }
}

/* Pointwise conv of x (N x K x S) to CO channels, in double */
static void ref_pointwise(const double *x, const float *Wp, const float *Bp, const float *R, int64_t N, int64_t K,
                          int64_t CO, int64_t S, int bias, int act, int res, double *y) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t co = 0; co < CO; co++)
      for (int64_t i = 0; i < S; i++) {
        int64_t at = (n * CO + co) * S + i;
        double acc = bias ? Bp[co] : 0;
        for (int64_t k = 0; k < K; k++) acc += x[(n * K + k) * S + i] * Wp[co * K + k];
        y[at] = ref_epi(acc, R, at, act, res);
      }
}

static double *to_double(const float *x, int64_t n) {
  double *d = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) d[i] = x[i];
  return d;
}

static void run_bcase(const bcase *c, int portable) {
  conv_fn conv = portable ? conv_portable_f32 : ft_conv_f32;
  pack_fn pack = portable ? conv_portable_pack_w : ft_conv_pack_w;
  int64_t N = c->N, C = c->C, K = c->K, S = c->H * c->W, T = c->k * c->k;
  int64_t OH = (c->H + 2 * c->pad - c->k) / c->s + 1, OW = (c->W + 2 * c->pad - c->k) / c->s + 1, OS = OH * OW;
  float *X = rand_buf(N * K * S), *Wp = rand_buf(C * K), *Bp = rand_buf(C), *Wd = rand_buf(C * T), *Bd = rand_buf(C);
  float *R = rand_buf(N * C * OS), *H = rand_buf(N * C * S), *Hb = rand_buf(N * C * S), *Rb = rand_buf(N * C * S), *Y = rand_buf(N * C * OS);
  double *h = malloc(sizeof(double) * (size_t)(N * C * S)), *hw = malloc(sizeof(double) * (size_t)(N * C * S));
  double *want = malloc(sizeof(double) * (size_t)(N * C * OS)), *Xd = to_double(X, N * K * S);
  ref_pointwise(Xd, Wp, Bp, NULL, N, K, C, S, c->bias, c->act, 0, hw); /* the pointwise conv */
  int64_t p[FT_CV_NP];
  base_params(p, N, K, C, 1, c->H, c->W, 1, 1, 0, c->bias, c->act, 0);
  p[FT_CV_MODE] = FT_CV_POINTWISE_T;
  p[FT_CV_LAYOUT] = FT_CV_Y_BLOCKED;
  const void *ins[4] = {X, Wp, Bp, NULL};
  run_packed(p, conv, pack, Wp, ins, Hb, c->threads, portable);
  float *unb = calloc((size_t)(N * C * S), sizeof(float)); /* calloc: GCC cannot see from_blocked fill it */
  from_blocked(Hb, unb, NULL, N, C, S);
  check("pointwise^T, Y blocked", c, portable, unb, hw, N * C * S, 1e-5 * (double)K);
  /* the depthwise conv on a random blocked input (Rb), then on the pointwise conv's output (Hb) */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0) to_blocked(H, Rb, N, C, S);
    for (int64_t i = 0; i < N * C * S; i++) h[i] = pass ? unb[i] : H[i]; /* Hb holds the pointwise conv's blocked output */
    ref_depthwise(h, Wd, Bd, R, N, C, c->H, c->W, c->k, c->s, c->pad, c->bias, c->act, c->res, want);
    base_params(p, N, C, C, C, c->H, c->W, c->k, c->s, c->pad, c->bias, c->act, c->res);
    p[FT_CV_MODE] = FT_CV_DEPTHWISE;
    p[FT_CV_LAYOUT] = FT_CV_X_BLOCKED;
    ft_dwv_geo g;
    cr_assert(ft_dwv_geometry(p, &g), "the case must take the channel-vector path");
    const void *din[4] = {pass ? Hb : Rb, Wd, Bd, R};
    run_packed(p, conv, pack, Wd, din, Y, c->threads, portable);
    check(pass ? "pointwise^T -> depthwise" : "depthwise, X blocked", c, portable, Y, want, N * C * OS, 1e-5 * (double)T);
  }
  free(X); free(Wp); free(Bp); free(Wd); free(Bd); free(R); free(H); free(Hb); free(Rb); free(Y); free(h); free(hw);
  free(want); free(unb); free(Xd);
}

static void run_both(const bcase *c) {
  run_bcase(c, 0);
  run_bcase(c, 1);
}

Test(conv_blocked, portable_build_has_no_avx512) {
#ifdef __AVX512F__
  cr_expect(!conv_portable_has_avx512(), "conv_blocked_portable.c was built with AVX-512: its generic paths go untested");
#endif
}

Test(conv_blocked, planes_strides_windows) {
  /* 56x56 and 12x64: rows of several chunks, where X blocked is read in place between the
   * edges (ft_dwv_px); a 7-wide window takes the generic row function */
  const int64_t planes[][2] = {{7, 7}, {14, 14}, {28, 28}, {13, 11}, {5, 9}, {56, 56}, {12, 64}};
  for (size_t i = 0; i < sizeof planes / sizeof *planes; i++)
    for (int64_t s = 1; s <= 2; s++)
      for (int64_t k = 3; k <= 7; k += 2) {
        bcase c = {1, 32, planes[i][0], planes[i][1], 24, k, s, k / 2, 1, FT_ACT_CLIP, 0, 1};
        run_both(&c);
      }
}

Test(conv_blocked, epilogues_batch_threads) {
  const int acts[] = {FT_ACT_NONE, FT_ACT_RELU, FT_ACT_CLIP};
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
    for (int res = 0; res <= 2; res++) {
      bcase a = {2, 48, 14, 14, 40, 3, 1, 1, (int)(i != 1), acts[i], res, 3};
      run_both(&a);
      bcase b = {2, 16, 13, 11, 16, 5, 2, 2, 1, acts[i], res, 1};
      run_both(&b);
      bcase d = {1, 64, 28, 28, 100, 3, 2, 1, 1, acts[i], res, 3}; /* 2 panels, several row blocks */
      run_both(&d);
    }
}

/* Depthwise (C channels, window k, stride s) with Y blocked, from X in NCHW (pass 0) or blocked
 * (pass 1); pointwise^T (C -> CO, residual res) with X blocked, on a random blocked input and on
 * the depthwise conv's output. */
typedef struct ycase {
  int64_t N, C, H, W, CO, k, s, pad;
  int bias, act, res, threads;
} ycase;

static void run_ycase(const ycase *c, int portable) {
  conv_fn conv = portable ? conv_portable_f32 : ft_conv_f32;
  pack_fn pack = portable ? conv_portable_pack_w : ft_conv_pack_w;
  int64_t N = c->N, C = c->C, CO = c->CO, S = c->H * c->W, T = c->k * c->k;
  int64_t OH = (c->H + 2 * c->pad - c->k) / c->s + 1, OW = (c->W + 2 * c->pad - c->k) / c->s + 1, OS = OH * OW;
  bcase b = {N, C, c->H, c->W, CO, c->k, c->s, c->pad, c->bias, c->act, c->res, c->threads}; /* for check's message */
  float *X = rand_buf(N * C * S), *Xb = rand_buf(N * C * S), *Wd = rand_buf(C * T), *Bd = rand_buf(C);
  float *Db = rand_buf(N * C * OS), *Rb = rand_buf(N * C * OS), *Wp = rand_buf(CO * C), *Bp = rand_buf(CO);
  float *R = rand_buf(N * CO * OS), *Y = rand_buf(N * CO * OS), *unb = malloc(sizeof(float) * (size_t)(N * C * OS));
  double *d = malloc(sizeof(double) * (size_t)(N * C * OS)), *h = malloc(sizeof(double) * (size_t)(N * C * OS));
  double *want = malloc(sizeof(double) * (size_t)(N * CO * OS)), *Xd = to_double(X, N * C * S);
  to_blocked(X, Xb, N, C, S);
  ref_depthwise(Xd, Wd, Bd, NULL, N, C, c->H, c->W, c->k, c->s, c->pad, c->bias, c->act, 0, d);
  int64_t p[FT_CV_NP];
  for (int pass = 0; pass < 2; pass++) {
    base_params(p, N, C, C, C, c->H, c->W, c->k, c->s, c->pad, c->bias, c->act, 0);
    p[FT_CV_MODE] = FT_CV_DEPTHWISE;
    p[FT_CV_LAYOUT] = FT_CV_Y_BLOCKED | (pass ? FT_CV_X_BLOCKED : 0);
    ft_dwv_geo g;
    cr_assert(ft_dwv_geometry(p, &g), "the case must take the channel-vector path");
    const void *din[4] = {pass ? Xb : X, Wd, Bd, NULL};
    run_packed(p, conv, pack, Wd, din, Db, c->threads, portable);
    from_blocked(Db, unb, NULL, N, C, OS);
    check(pass ? "depthwise, X and Y blocked" : "depthwise, Y blocked", &b, portable, unb, d, N * C * OS,
          1e-5 * (double)T);
  }
  /* the pointwise conv on a random blocked input (Rb), then on the depthwise conv's output (Db) */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0) from_blocked(Rb, NULL, h, N, C, OS);
    else
      for (int64_t i = 0; i < N * C * OS; i++) h[i] = unb[i];
    ref_pointwise(h, Wp, Bp, R, N, C, CO, OS, c->bias, c->act, c->res, want);
    base_params(p, N, C, CO, 1, OH, OW, 1, 1, 0, c->bias, c->act, c->res);
    p[FT_CV_MODE] = FT_CV_POINTWISE_T;
    p[FT_CV_LAYOUT] = FT_CV_X_BLOCKED;
    const void *ins[4] = {pass ? Db : Rb, Wp, Bp, R};
    run_packed(p, conv, pack, Wp, ins, Y, c->threads, portable);
    check(pass ? "depthwise -> pointwise^T" : "pointwise^T, X blocked", &b, portable, Y, want, N * CO * OS,
          1e-5 * (double)C);
  }
  free(X); free(Xb); free(Wd); free(Bd); free(Db); free(Rb); free(Wp); free(Bp); free(R); free(Y); free(unb);
  free(d); free(h); free(want); free(Xd);
}

static void run_yboth(const ycase *c) {
  run_ycase(c, 0);
  run_ycase(c, 1);
}

Test(conv_blocked, dw_to_pointwise_planes_strides_windows) {
  const int64_t planes[][2] = {{7, 7}, {14, 14}, {15, 15}, {13, 13}, {28, 28}, {13, 11}, {5, 9}};
  for (size_t i = 0; i < sizeof planes / sizeof *planes; i++)
    for (int64_t s = 1; s <= 2; s++)
      for (int64_t k = 3; k <= 5; k += 2) {
        ycase c = {1, 32, planes[i][0], planes[i][1], 24, k, s, k / 2, 1, FT_ACT_CLIP, 0, 1};
        run_yboth(&c);
      }
  ycase v = {1, 16, 14, 14, 16, 3, 1, 0, 1, FT_ACT_RELU, 0, 1}; /* no padding */
  run_yboth(&v);
  ycase u = {1, 16, 14, 13, 40, 3, 2, 0, 1, FT_ACT_NONE, 1, 1}; /* no padding, odd width, stride 2 */
  run_yboth(&u);
}

Test(conv_blocked, dw_to_pointwise_epilogues_batch_threads) {
  const int acts[] = {FT_ACT_NONE, FT_ACT_RELU, FT_ACT_CLIP};
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
    for (int res = 0; res <= 2; res++) {
      ycase a = {2, 48, 14, 14, 40, 3, 1, 1, (int)(i != 1), acts[i], res, 3};
      run_yboth(&a);
      ycase b = {2, 16, 13, 11, 16, 5, 2, 2, 1, acts[i], res, 1};
      run_yboth(&b);
      ycase d = {1, 96, 28, 28, 100, 3, 2, 1, 1, acts[i], res, 3}; /* 4 panels, several row blocks */
      run_yboth(&d);
      ycase e = {2, 64, 7, 7, 33, 3, 1, 1, 1, acts[i], res, 3};
      run_yboth(&e);
    }
}
