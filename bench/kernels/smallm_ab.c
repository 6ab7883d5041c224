/* Small-M GEMMs (M <= 16, prepacked B, the shapes of transformers at short sequences and of a
 * decode step) in the GEMM core's two paths, A/B: the blocked path (MR-row slivers; K blocks
 * before FT_GEMM_FULL_K, all of K per tile since: bench/kernels/gemm_ab times the two) and the
 * small-M path (every row in registers over all of K), with each of the small-M tile
 * plans that fit. Variants run alternately, round after round, so a busy machine slows them
 * alike; per shape: GFLOP/s and GB/s of weights (N * K * 4 bytes per call) of the best run, and
 * the median over rounds of each variant's time / the blocked path's.
 *   smallm_ab [--threads N] [--rounds R] [--secs S] [--cold] [MxNxK[+bias|+gelu|+tanh]...]
 * --cold cycles through copies of B that together exceed the last-level cache, as a model whose
 * weights come from DRAM does; otherwise one B, hot in the caches, as bench/kernels/kernel_table
 * times it. Default shapes: BERT-base s8 and GPT-2 s16's projections, the 1-row pooler.
 * A benchmark: prints, asserts nothing. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm.h"
#include "bench_util.h"

typedef struct {
  ft_gemm_op g;
  const float *A;
  float *apk;
  float **bcopies;
  int ncopies, next;
  int variant; /* 0 blocked, 1.. small-M plans */
  ft_gemm_small_plan pl;
} ab_call;

static void run(void *arg) {
  ab_call *c = (ab_call *)arg;
  c->g.bp = c->bcopies[c->next];
  c->next = (c->next + 1) % c->ncopies;
  if (c->variant == 0) { /* the blocked path as ft_matmul_f32 ran it before the small-M path */
    ft_gemm_op g = c->g;
    ft_gemm_pack_a(g.M, g.K, c->A, g.K, 1, c->apk);
    g.ap = c->apk;
    ft_gemm_run_par(&g, ft_gemm_mc(g.M, g.K), g.M * g.N * g.K > FT_GEMM_PAR_FLOPS);
  } else {
    ft_gemm_small_run(&c->g, c->pl, c->apk);
  }
}

static void bench_shape(const char *spec, int rounds, double secs, int cold) {
  long long M, N, K;
  if (sscanf(spec, "%lldx%lldx%lld", &M, &N, &K) != 3 || M < 1 || M > FT_GEMM_SMALL_M || N < 1 || K < 1) {
    fprintf(stderr, "smallm_ab: bad shape %s (MxNxK, M 1..%d)\n", spec, FT_GEMM_SMALL_M);
    exit(2);
  }
  int gelu = strstr(spec, "+gelu") != NULL, tanh_ = strstr(spec, "+tanh") != NULL;
  int bias = gelu || tanh_ || strstr(spec, "+bias") != NULL;
  ab_call c;
  memset(&c, 0, sizeof c);
  float *A = alloc(sizeof(float) * M * K), *B = alloc(sizeof(float) * K * N), *bv = alloc(sizeof(float) * N);
  fill(A, M * K, 1); fill(B, K * N, 2); fill(bv, N, 3);
  size_t bbytes = sizeof(float) * (size_t)ft_gemm_packed_b_floats(K, N);
  c.ncopies = cold ? (int)((size_t)96 * 1024 * 1024 / bbytes + 1) : 1;
  c.bcopies = malloc(sizeof(float *) * (size_t)c.ncopies);
  for (int i = 0; i < c.ncopies; i++) {
    c.bcopies[i] = alloc(bbytes);
    ft_gemm_pack_b(K, N, B, N, 1, c.bcopies[i]);
  }
  c.A = A;
  c.apk = alloc(sizeof(float) * (size_t)ft_gemm_packed_a_floats(M, K));
  ft_gemm_op *g = &c.g;
  g->M = M; g->N = N; g->K = K; g->a = A; g->a_rs = K; g->a_cs = 1; g->ldc = N;
  g->c = alloc(sizeof(float) * M * N);
  g->e.alpha = 1; g->e.beta = 1;
  if (bias) { g->e.bias = bv; g->e.bias_cs = 1; }
  if (gelu) g->e.act = FT_ACT_GELU;
  if (tanh_) g->e.act = FT_ACT_TANH;
  /* the plans: the default first, then the other fits (whole panel up to 14 rows, halves, slivers of 8) */
  ft_gemm_small_plan plans[4];
  int np = 0;
  plans[np++] = ft_gemm_small_plan_for(M);
  ft_gemm_small_plan alt[3] = {{(int)M, 1}, {M <= 14 ? (int)M : 8, 2}, {8, 2}};
  for (int i = 0; i < 3; i++) {
    int dup = alt[i].ms > 14 && alt[i].nv == 2;
    for (int j = 0; j < np; j++) dup |= plans[j].ms == alt[i].ms && plans[j].nv == alt[i].nv;
    if (alt[i].ms > M) dup = 1;
    if (!dup) plans[np++] = alt[i];
  }
  int nv = 1 + np;
  double *t = malloc(sizeof(double) * (size_t)(nv * rounds)), best[8];
  for (int v = 0; v < nv; v++) best[v] = 1e30;
  for (int r = 0; r < rounds; r++)
    for (int v = 0; v < nv; v++) {
      c.variant = v;
      if (v) c.pl = plans[v - 1];
      double x = median_time(run, &c, secs);
      t[v * rounds + r] = x;
      if (x < best[v]) best[v] = x;
    }
  double flops = 2.0 * M * N * K, bytes = 4.0 * N * K;
  for (int v = 0; v < nv; v++) {
    double ratio[256];
    int nr = rounds < 256 ? rounds : 256;
    for (int r = 0; r < nr; r++) ratio[r] = t[v * rounds + r] / t[r];
    qsort(ratio, (size_t)nr, sizeof(double), cmp_double);
    char name[32];
    if (v == 0) snprintf(name, sizeof name, "blocked");
    else snprintf(name, sizeof name, "small ms%d nv%d%s", plans[v - 1].ms, plans[v - 1].nv, v == 1 ? " *" : "");
    printf("%-18s %-16s %7.1f us %7.1f GFLOP/s %6.1f GB/s  time/blocked %.3f\n", v ? "" : spec, name,
           best[v] * 1e6, flops / best[v] * 1e-9, bytes / best[v] * 1e-9, ratio[nr / 2]);
  }
  fflush(stdout);
  for (int i = 0; i < c.ncopies; i++) free(c.bcopies[i]);
  free(c.bcopies); free(A); free(B); free(bv); free(c.apk); free(g->c); free(t);
}

int main(int argc, char **argv) {
  int threads = 1, rounds = 5, cold = 0, i = 1;
  double secs = 0.1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--secs") && i + 1 < argc) secs = atof(argv[++i]);
    else if (!strcmp(argv[i], "--cold")) cold = 1;
    else { fprintf(stderr, "usage: smallm_ab [--threads N] [--rounds R] [--secs S] [--cold] [MxNxK[+bias|+gelu|+tanh]...]\n"); return 2; }
  }
  if (rounds < 1) rounds = 1;
  ft_set_threads(threads);
  printf("threads %d, %s B, %d rounds; * = the plan ftaxc's kernel picks\n", ft_get_threads(), cold ? "cold" : "hot", rounds);
  static const char *dflt[] = {"1x768x768+tanh", "8x768x768", "8x2304x768", "8x3072x768+gelu", "8x768x3072",
                               "16x768x768+bias", "16x2304x768+bias", "16x3072x768+gelu", "16x768x3072+bias"};
  if (i < argc)
    for (; i < argc; i++) bench_shape(argv[i], rounds, secs, cold);
  else
    for (size_t s = 0; s < sizeof dflt / sizeof *dflt; s++) bench_shape(dflt[s], rounds, secs, cold);
  return 0;
}
