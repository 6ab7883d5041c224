/* One conv shape in two kernel modes, A/B: the plain GEMM mode and the transposed one (conv.h's
 * _T modes), run alternately and timed as the best of many runs each, so that a busy machine
 * slows both alike. The measurement behind compiler/ops/conv.c's transposed_mode rule.
 * Not a test: prints numbers, asserts nothing.
 *   conv_ab C H C_out k s [act [res [threads]]]
 * N = 1, an H x H input, a k x k window with stride s and pads k/2, bias; act an epilogue
 * activation code (FT_ACT_*, scalar_ops.h ids: 0 none, 4 Relu; default Relu); res 1 = a
 * residual added. The plain mode is the one ftaxc's rule had before the transposed modes
 * (pointwise, shifted or im2col); the transposed one is pointwise^T or im2col^T. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conv.h"
#include "bench_util.h"

typedef struct conv_call { int64_t p[FT_CV_NP]; double f[4]; const void *in[4]; void *out[1]; void *scratch; } conv_call;

/* The call in one mode, its weights packed for it; chunk sizes as compiler/ops/conv.c sets them. */
static void setup(conv_call *c, const int64_t *shape, int mode, int act, int res, const float *const *bufs) {
  int64_t C = shape[0], H = shape[1], CO = shape[2], k = shape[3], s = shape[4], pad = k / 2;
  int64_t OH = (H + 2 * pad - k) / s + 1, S = OH * OH;
  memset(c, 0, sizeof *c);
  int64_t *p = c->p, geo[18] = {1, H, H, 1, OH, OH, 1, k, k, 1, s, s, 1, 1, 1, 0, pad, pad};
  p[FT_CV_N] = 1; p[FT_CV_C] = C; p[FT_CV_CO] = CO; p[FT_CV_G] = 1; p[FT_CV_HAS_BIAS] = 1;
  p[FT_CV_ACT] = act; p[FT_CV_RES] = res; p[FT_CV_MODE] = mode;
  memcpy(p + FT_CV_IN, geo, sizeof geo);
  int64_t cols = (mode == FT_CV_IM2COL_T ? 4096 : 256) * 1024 / (4 * ft_conv_kg(p)) / FT_GEMM_NR * FT_GEMM_NR;
  if (cols < FT_GEMM_NR) cols = FT_GEMM_NR;
  if (cols > (S + FT_GEMM_NR - 1) / FT_GEMM_NR * FT_GEMM_NR) cols = mode == FT_CV_IM2COL_T ? S : (S + FT_GEMM_NR - 1) / FT_GEMM_NR * FT_GEMM_NR;
  p[FT_CV_CHUNK] = cols;
  c->f[0] = 1; c->f[1] = 1;
  float *Wp = alloc(ft_conv_pack_w(p, bufs[1], NULL));
  ft_conv_pack_w(p, bufs[1], Wp);
  p[FT_CV_PACKED] = 1;
  c->in[0] = bufs[0]; c->in[1] = Wp; c->in[2] = bufs[2]; c->in[3] = bufs[3]; c->out[0] = (void *)bufs[4];
  c->scratch = alloc(ft_conv_scratch(p));
}

static float *filled(int64_t n, unsigned seed) {
  float *x = alloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
  }
  return x;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: conv_ab C H C_out k s [act [res [threads]]]\n");
    return 1;
  }
  int64_t shape[5];
  for (int i = 0; i < 5; i++) shape[i] = atoll(argv[i + 1]);
  int act = argc > 6 ? atoi(argv[6]) : FT_ACT_RELU, res = argc > 7 ? atoi(argv[7]) : 0;
  ft_set_threads(argc > 8 ? atoi(argv[8]) : 1);
  int64_t C = shape[0], H = shape[1], CO = shape[2], k = shape[3], s = shape[4], OH = (H + 2 * (k / 2) - k) / s + 1;
  if (C < 1 || H < 1 || CO < 1 || k < 1 || s < 1 || OH < 1) {
    fprintf(stderr, "conv_ab: sizes must be positive\n");
    return 1;
  }
  const float *bufs[5] = {filled(C * H * H, 1), filled(CO * C * k * k, 2), filled(CO, 3), filled(CO * OH * OH, 4),
                          filled(CO * OH * OH, 5)};
  int plain = k == 1 && s == 1 ? FT_CV_POINTWISE : k >= s ? FT_CV_SHIFTED : FT_CV_IM2COL;
  int tr = plain == FT_CV_POINTWISE ? FT_CV_POINTWISE_T : FT_CV_IM2COL_T;
  conv_call a, b;
  setup(&a, shape, plain, act, res, bufs);
  setup(&b, shape, tr, act, res, bufs);
  double flops = 2.0 * CO * OH * OH * C * k * k, ta = 1e30, tb = 1e30, start = now();
  while (now() - start < 1.5) {
    double t0 = now();
    ft_conv_f32(a.p, a.f, a.in, a.out, a.scratch);
    double t1 = now();
    ft_conv_f32(b.p, b.f, b.in, b.out, b.scratch);
    double t2 = now();
    if (t1 - t0 < ta) ta = t1 - t0;
    if (t2 - t1 < tb) tb = t2 - t1;
  }
  static const char *const modes[] = {"im2col", "pointwise", "depthwise", "shifted", "pointwise^T", "im2col^T"};
  printf("| conv %lldx%lldx%lld k%lldx%lld s%lld -> %lld%s%s | %s %.1f | %s %.1f | %.2f |\n", (long long)C, (long long)H,
         (long long)H, (long long)k, (long long)k, (long long)s, (long long)CO, act ? " +act" : "", res ? " +residual" : "",
         modes[plain], flops / ta * 1e-9, modes[tr], flops / tb * 1e-9, tb / ta);
  return 0;
}
