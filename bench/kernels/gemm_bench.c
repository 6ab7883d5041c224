/* GFLOP/s of the fp32 GEMM core and the Conv kernel at the shapes that matter for the model zoo
 * (BERT-base projections at sequence 128, a GEMV, a square GEMM, a ResNet-50 3x3 conv).
 * "prepacked" is what a program from ftaxc runs (constant weights packed at compile time);
 * "plain" is the same kernel given unpacked weights, as constant folding (and an eager runtime
 * that does not call the prepack hook) gives them: it packs on the fly.
 * Not a test: prints numbers, asserts nothing. Threads: $FTAX_THREADS (default 1 here).
 *   gemm_bench [seconds per shape] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm.h"
#include "conv.h"
#include "bench_util.h"

/* Run fn until `secs` have passed (at least 3 runs); best time of one run. */
static double best_time(void (*fn)(void *), void *arg, double secs) {
  fn(arg); /* warm-up */
  double best = 1e30, start = now();
  int runs = 0;
  while (runs < 3 || now() - start < secs) {
    double t0 = now();
    fn(arg);
    double t = now() - t0;
    if (t < best) best = t;
    runs++;
  }
  return best;
}

typedef struct mm_case { int64_t p[FT_MM_BDIMS]; double f[4]; const void *in[3]; void *out[1]; void *scratch; } mm_case;

static void run_mm(void *arg) {
  mm_case *c = arg;
  ft_matmul_f32(c->p, c->f, c->in, c->out, c->scratch);
}

static void bench_gemm(int64_t M, int64_t N, int64_t K, double secs) {
  mm_case c;
  memset(&c, 0, sizeof c);
  int64_t *p = c.p;
  p[FT_MM_M] = M; p[FT_MM_N] = N; p[FT_MM_K] = K;
  p[FT_MM_A_RS] = K; p[FT_MM_A_CS] = 1; p[FT_MM_B_RS] = N; p[FT_MM_B_CS] = 1;
  p[FT_MM_A_NMAT] = 1; p[FT_MM_B_NMAT] = 1; p[FT_MM_BRANK] = 0;
  c.f[0] = 1; c.f[1] = 1;
  float *A = alloc(sizeof(float) * M * K), *B = alloc(sizeof(float) * K * N), *Y = alloc(sizeof(float) * M * N);
  fill(A, M * K, 1); fill(B, K * N, 2);
  float *Bp = alloc(ft_mm_pack_b(p, B, NULL));
  ft_mm_pack_b(p, B, Bp);
  c.scratch = alloc(ft_mm_scratch(M, K, 1));
  c.in[0] = A; c.out[0] = Y;
  double flops = 2.0 * M * N * K;
  c.in[1] = Bp; p[FT_MM_PACKED] = 1;
  double tp = best_time(run_mm, &c, secs);
  c.in[1] = B; p[FT_MM_PACKED] = 0;
  double tu = best_time(run_mm, &c, secs);
  printf("gemm M=%-4lld N=%-4lld K=%-4lld  B prepacked %7.1f GFLOP/s (%8.1f us)   B plain %7.1f GFLOP/s\n",
         (long long)M, (long long)N, (long long)K, flops / tp * 1e-9, tp * 1e6, flops / tu * 1e-9);
  free(A); free(B); free(Y); free(Bp); free(c.scratch);
}

typedef struct conv_case { int64_t p[FT_CV_NP]; double f[4]; const void *in[3]; void *out[1]; void *scratch; } conv_case;

static void run_conv(void *arg) {
  conv_case *c = arg;
  ft_conv_f32(c->p, c->f, c->in, c->out, c->scratch);
}

/* 2-D conv, N=1, square kernel k, stride s, pad k/2, group g; mode as ftaxc would pick it. */
static void bench_conv(const char *what, int64_t C, int64_t H, int64_t CO, int64_t k, int64_t s,
                       int64_t g, double secs) {
  conv_case c;
  memset(&c, 0, sizeof c);
  int64_t *p = c.p, pad = k / 2, OH = (H + 2 * pad - k) / s + 1;
  p[FT_CV_N] = 1; p[FT_CV_C] = C; p[FT_CV_CO] = CO; p[FT_CV_G] = g; p[FT_CV_HAS_BIAS] = 1;
  int64_t geo[18] = {1, H, H, 1, OH, OH, 1, k, k, 1, s, s, 1, 1, 1, 0, pad, pad};
  memcpy(p + FT_CV_IN, geo, sizeof geo);
  p[FT_CV_MODE] = g == C && CO == C ? FT_CV_DEPTHWISE
                 : k == 1 && s == 1 ? FT_CV_POINTWISE : k >= s ? FT_CV_SHIFTED : FT_CV_IM2COL;
  int64_t Kg = ft_conv_kg(p), cols = 256 * 1024 / (4 * Kg) / FT_GEMM_NR * FT_GEMM_NR; /* as compiler/ops/conv.c */
  if (cols < FT_GEMM_NR) cols = FT_GEMM_NR;
  if (cols > (OH * OH + FT_GEMM_NR - 1) / FT_GEMM_NR * FT_GEMM_NR) cols = (OH * OH + FT_GEMM_NR - 1) / FT_GEMM_NR * FT_GEMM_NR;
  p[FT_CV_CHUNK] = cols;
  c.f[0] = 1; c.f[1] = 1;
  float *X = alloc(sizeof(float) * C * H * H), *W = alloc(sizeof(float) * CO * Kg), *B = alloc(sizeof(float) * CO);
  float *Y = alloc(sizeof(float) * CO * OH * OH), *Wp = NULL;
  fill(X, C * H * H, 3); fill(W, CO * Kg, 4); fill(B, CO, 5);
  c.in[0] = X; c.in[1] = W; c.in[2] = B; c.out[0] = Y;
  if (p[FT_CV_MODE] != FT_CV_DEPTHWISE) {
    Wp = alloc(ft_conv_pack_w(p, W, NULL));
    ft_conv_pack_w(p, W, Wp);
    c.in[1] = Wp;
    p[FT_CV_PACKED] = 1;
  }
  size_t sb = ft_conv_scratch(p);
  c.scratch = sb ? alloc(sb) : NULL;
  double t = best_time(run_conv, &c, secs), flops = 2.0 * CO * OH * OH * Kg, tu = t;
  if (Wp) { /* the weights as ftax-eager or folding pass them: not packed */
    c.in[1] = W;
    p[FT_CV_PACKED] = 0;
    tu = best_time(run_conv, &c, secs);
  }
  static const char *modes[] = {"im2col", "pointwise", "depthwise", "shifted"};
  printf("conv %-28s 1x%lldx%lldx%lld k%lld s%lld g%lld -> %-4lld %-9s %7.1f GFLOP/s (%8.1f us)   W plain %7.1f GFLOP/s\n",
         what, (long long)C, (long long)H, (long long)H, (long long)k, (long long)s, (long long)g, (long long)CO,
         modes[p[FT_CV_MODE]], flops / t * 1e-9, t * 1e6, flops / tu * 1e-9);
  free(X); free(W); free(B); free(Y); free(Wp); free(c.scratch);
}

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 0.5;
  ft_set_threads(getenv("FTAX_THREADS") ? atoi(getenv("FTAX_THREADS")) : 1);
  printf("threads: %d\n", ft_get_threads());
  static const int64_t shapes[][3] = {{128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}, {1, 768, 768}, {512, 512, 512}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) bench_gemm(shapes[i][0], shapes[i][1], shapes[i][2], secs);
  bench_conv("ResNet-50 3x3", 64, 56, 64, 3, 1, 1, secs);
  bench_conv("ResNet-50 3x3/2", 128, 56, 128, 3, 2, 1, secs);
  bench_conv("ResNet-50 1x1", 256, 56, 64, 1, 1, 1, secs);
  bench_conv("ResNet-50 1x1/2 (downsample)", 256, 56, 512, 1, 2, 1, secs);
  bench_conv("ResNet-50 stem 7x7/2", 3, 224, 64, 7, 2, 1, secs);
  bench_conv("MobileNetV2 dw 3x3", 96, 112, 96, 3, 1, 96, secs);
  bench_conv("MobileNetV2 dw 3x3/2", 144, 56, 144, 3, 2, 144, secs);
  bench_conv("EfficientNet dw 5x5", 240, 28, 240, 5, 1, 240, secs);
  return 0;
}
