/* GEMMs with B packed (a MatMul on constant weights, M > 16: BERT, ViT at their sequence
 * lengths), A/B in one process, three ways: the K-blocked loop of earlier versions (K blocks of
 * FT_GEMM_KC whose partial sums go through C, A packed), each tile over all of K
 * (FT_GEMM_FULL_K) on a packed copy of A, and the same with A's rows read in place
 * (ft_gemm_ukernel_rows), as ft_matmul_f32 runs it now. Packing A is timed with its variants.
 * Variants alternate round after round, so a busy machine slows them alike; per shape: GFLOP/s
 * of the best run and the median over rounds of time / the blocked loop's time (and, for A in
 * place, / full K's on packed A). Checks that all give the same C (within 1e-4: the sums are
 * associated differently).
 *   gemm_ab [--threads N] [--rounds R] [--secs S] [MxNxK[+bias|+gelu]...]
 * Default shapes: BERT-base s128's and ViT-B/16's projections. A benchmark: prints, asserts
 * nothing. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm.h"
#include "bench_util.h"

/* The loop before FT_GEMM_FULL_K: K blocks outer, row slivers inner, partial sums through C. */
static void blocked_column(const ft_gemm_op *g, int64_t m0, int64_t m1, int64_t jr) {
  float t[FT_GEMM_MR * FT_GEMM_NR] __attribute__((aligned(64)));
  int64_t K = g->K, n0 = jr * FT_GEMM_NR;
  int nr = g->N - n0 < FT_GEMM_NR ? (int)(g->N - n0) : FT_GEMM_NR;
  for (int64_t pc = 0; pc < K; pc += FT_GEMM_KC) {
    int64_t kc = K - pc < FT_GEMM_KC ? K - pc : FT_GEMM_KC;
    const float *bpan = g->bp + jr * K * FT_GEMM_NR + pc * FT_GEMM_NR;
    for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
      int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
      ft_gemm_ukernel_mr(mr, kc, g->ap + ir * K + pc * FT_GEMM_MR, bpan, t, NULL);
      ft_gemm_store(g, t, ir, mr, n0, nr, pc == 0, pc + kc == K);
    }
  }
}

#define NV 3

typedef struct {
  ft_gemm_op g;
  const float *A;
  float *apk;
  int variant; /* 0 blocked, 1 full K on packed A, 2 full K with A's rows in place (MatMul's) */
} ab_call;

static void run(void *arg) {
  ab_call *c = (ab_call *)arg;
  ft_gemm_op g = c->g;
  if (c->variant == 2) {
    g.a = c->A;
    g.a_rs = g.K;
    g.a_cs = 1;
  } else {
    ft_gemm_pack_a(g.M, g.K, c->A, g.K, 1, c->apk);
    g.ap = c->apk;
  }
  if (c->variant == 0) g.column = blocked_column;
  ft_gemm_run(&g);
}

static void bench_shape(const char *spec, int rounds, double secs) {
  long long M, N, K;
  if (sscanf(spec, "%lldx%lldx%lld", &M, &N, &K) != 3 || M < 1 || N < 1 || K < 1) {
    fprintf(stderr, "gemm_ab: bad shape %s (MxNxK)\n", spec);
    exit(2);
  }
  int gelu = strstr(spec, "+gelu") != NULL, bias = gelu || strstr(spec, "+bias") != NULL;
  ab_call c;
  memset(&c, 0, sizeof c);
  float *A = alloc(sizeof(float) * M * K), *B = alloc(sizeof(float) * K * N), *bv = alloc(sizeof(float) * N);
  fill(A, M * K, 1); fill(B, K * N, 2); fill(bv, N, 3);
  float *bp = alloc(sizeof(float) * (size_t)ft_gemm_packed_b_floats(K, N));
  ft_gemm_pack_b(K, N, B, N, 1, bp);
  c.A = A;
  c.apk = alloc(sizeof(float) * (size_t)ft_gemm_packed_a_floats(M, K));
  ft_gemm_op *g = &c.g;
  g->M = M; g->N = N; g->K = K; g->bp = bp; g->ldc = N;
  g->c = alloc(sizeof(float) * M * N);
  g->e.alpha = 1; g->e.beta = 1;
  if (bias) { g->e.bias = bv; g->e.bias_cs = 1; }
  if (gelu) g->e.act = FT_ACT_GELU;
  float *ref = alloc(sizeof(float) * M * N);
  double *t = malloc(sizeof(double) * (size_t)(NV * rounds)), best[NV] = {1e30, 1e30, 1e30};
  for (int r = 0; r < rounds; r++)
    for (int v = 0; v < NV; v++) {
      c.variant = v;
      double x = median_time(run, &c, secs);
      t[v * rounds + r] = x;
      if (x < best[v]) best[v] = x;
      if (r == 0 && v == 0) memcpy(ref, g->c, sizeof(float) * M * N);
      if (r == 0 && v > 0)
        for (long long i = 0; i < M * N; i++)
          if (!(fabsf(ref[i] - g->c[i]) <= 1e-4f * (1 + fabsf(ref[i])))) {
            fprintf(stderr, "gemm_ab: %s: element %lld differs: %g vs %g\n", spec, i, ref[i], g->c[i]);
            exit(1);
          }
    }
  double flops = 2.0 * M * N * K;
  static const char *name[NV] = {"blocked", "full K", "A rows"};
  for (int v = 0; v < NV; v++) {
    double ratio[256], rp[256];
    int nr = rounds < 256 ? rounds : 256;
    for (int r = 0; r < nr; r++) {
      ratio[r] = t[v * rounds + r] / t[r];
      rp[r] = t[v * rounds + r] / t[rounds + r];
    }
    qsort(ratio, (size_t)nr, sizeof(double), cmp_double);
    qsort(rp, (size_t)nr, sizeof(double), cmp_double);
    printf("%-20s %-8s %8.1f us %7.1f GFLOP/s  time/blocked %.3f", v ? "" : spec, name[v], best[v] * 1e6,
           flops / best[v] * 1e-9, ratio[nr / 2]);
    if (v == 2) printf("  time/full K %.3f", rp[nr / 2]);
    printf("\n");
  }
  fflush(stdout);
  free(A); free(B); free(bv); free(bp); free(c.apk); free(g->c); free(ref); free(t);
}

int main(int argc, char **argv) {
  int threads = 1, rounds = 5, i = 1;
  double secs = 0.15;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--secs") && i + 1 < argc) secs = atof(argv[++i]);
    else { fprintf(stderr, "usage: gemm_ab [--threads N] [--rounds R] [--secs S] [MxNxK[+bias|+gelu]...]\n"); return 2; }
  }
  if (rounds < 1) rounds = 1;
  ft_set_threads(threads);
  printf("threads %d, %d rounds, hot B\n", ft_get_threads(), rounds);
  static const char *dflt[] = {"128x2304x768", "128x768x768", "128x3072x768+gelu", "128x768x3072",
                               "197x2304x768+bias", "197x768x768+bias", "197x3072x768+gelu", "197x768x3072"};
  if (i < argc)
    for (; i < argc; i++) bench_shape(argv[i], rounds, secs);
  else
    for (size_t s = 0; s < sizeof dflt / sizeof *dflt; s++) bench_shape(dflt[s], rounds, secs);
  return 0;
}
