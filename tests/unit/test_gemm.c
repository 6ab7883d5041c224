/* The GEMM core and the kernels built on it (MatMul/Gemm, Conv, ConvTranspose) against plain
 * reference loops in double, at sizes that are not multiples of the tiles (M, N, K around MR,
 * NR and the K block; K = 1, N = 1, K = 0), with every operand layout (packed at "compile
 * time", packed on the fly, transposed), every bias form, and 1 vs several threads.
 * Self-contained: includes the kernel templates directly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "conv.h"

#include "kernel_bufs.h"

/* |got - want| <= atol + rtol * |want|, with the tolerance scaled by the sum length */
static void expect_close(const float *got, const double *want, int64_t n, int64_t k, const char *what) {
  double tol = 1e-5 * (double)(k > 1 ? k : 1);
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - want[i]);
    if (!(d <= tol + 1e-5 * fabs(want[i])))
      cr_assert_fail("%s: element %lld: got %.9g, want %.9g", what, (long long)i, got[i], want[i]);
  }
}

/* ---- the core ---- */

typedef struct gcase {
  int64_t M, N, K;
  int ta, tb;       /* A, B given transposed (strides) */
  int pack_a, pack_b; /* packed ahead of time */
  int bias;         /* 0 none, 1 per column [N], 2 per row [M], 3 scalar, 4 full [M,N] */
  float alpha, beta;
  int act;
} gcase;

static void run_core_case(const gcase *c) {
  int64_t M = c->M, N = c->N, K = c->K;
  float *A = rand_buf(M * K), *B = rand_buf(K * N), *bias = rand_buf(M * N), *C = rand_buf(M * N);
  ft_gemm_op g;
  memset(&g, 0, sizeof g);
  g.M = M; g.N = N; g.K = K; g.c = C; g.ldc = N;
  g.a = A; g.a_rs = c->ta ? 1 : K; g.a_cs = c->ta ? M : 1;
  g.b = B; g.b_rs = c->tb ? 1 : N; g.b_cs = c->tb ? K : 1;
  float *ap = NULL, *bp = NULL;
  if (c->pack_a) {
    ap = scratch_buf(sizeof(float) * (size_t)ft_gemm_packed_a_floats(M, K));
    ft_gemm_pack_a(M, K, A, g.a_rs, g.a_cs, ap);
    g.ap = ap;
  }
  if (c->pack_b) {
    bp = scratch_buf(sizeof(float) * (size_t)ft_gemm_packed_b_floats(K, N));
    ft_gemm_pack_b(K, N, B, g.b_rs, g.b_cs, bp);
    g.bp = bp;
  }
  g.e.alpha = c->alpha;
  g.e.beta = c->beta;
  g.e.act = c->act;
  g.e.lo = -0.5f;
  g.e.hi = 0.75f;
  int64_t brs[] = {0, 0, 1, 0, N}, bcs[] = {0, 1, 0, 0, 1};
  if (c->bias) { g.e.bias = bias; g.e.bias_rs = brs[c->bias]; g.e.bias_cs = bcs[c->bias]; }
  ft_gemm_run(&g);
  double *want = malloc(sizeof(double) * (size_t)(M * N > 0 ? M * N : 1));
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += (double)A[i * g.a_rs + k * g.a_cs] * B[k * g.b_rs + j * g.b_cs];
      s *= c->alpha;
      if (c->bias) s += c->beta * (double)bias[i * brs[c->bias] + j * bcs[c->bias]];
      if (c->act == FT_ACT_RELU) s = s > 0 ? s : 0;
      if (c->act == FT_ACT_CLIP) s = s < -0.5 ? -0.5 : (s > 0.75 ? 0.75 : s);
      want[i * N + j] = s;
    }
  char what[200];
  snprintf(what, sizeof what, "gemm M=%lld N=%lld K=%lld ta=%d tb=%d pa=%d pb=%d bias=%d act=%d", (long long)M,
           (long long)N, (long long)K, c->ta, c->tb, c->pack_a, c->pack_b, c->bias, c->act);
  expect_close(C, want, M * N, K, what);
  free(A); free(B); free(bias); free(C); free(ap); free(bp); free(want);
}

Test(gemm, awkward_sizes_every_layout) {
  static const int64_t Ms[] = {1, 2, 7, 11, 12, 13, 25, 37};
  static const int64_t Ns[] = {1, 3, 17, 31, 32, 33, 70};
  static const int64_t Ks[] = {1, 2, 9, 64, 255, 256, 257, 300};
  int n = 0;
  for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++)
    for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
      for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++, n++) {
        gcase c = {Ms[mi], Ns[ni], Ks[ki], n % 2, n / 2 % 2, n / 4 % 2, n / 8 % 2, n % 5, 1.0f, 1.0f, 0};
        run_core_case(&c);
      }
}

Test(gemm, alpha_beta_bias_activation) {
  static const int acts[] = {FT_ACT_NONE, FT_ACT_RELU, FT_ACT_CLIP};
  for (int bias = 0; bias <= 4; bias++)
    for (int a = 0; a < 3; a++) {
      gcase c = {29, 45, 513, 0, 1, 0, 1, bias, 0.5f, -2.0f, acts[a]};
      run_core_case(&c);
    }
}

Test(gemm, empty_k_gives_the_bias_term) {
  for (int bias = 0; bias <= 4; bias++) {
    gcase c = {5, 40, 0, 0, 0, bias % 2, 1, bias, 1.0f, 3.0f, 0};
    run_core_case(&c);
  }
}

Test(gemm, large_shapes) {
  gcase a = {128, 200, 768, 0, 0, 1, 1, 1, 1.0f, 1.0f, 0};
  run_core_case(&a);
  gcase b = {300, 65, 1100, 1, 0, 0, 0, 2, 1.0f, 1.0f, FT_ACT_RELU};
  run_core_case(&b);
  /* row blocks (ft_gemm_mc): an A a little over the L2 budget stays one block (ViT-B/16's
   * projections); a larger one is split evenly */
  cr_assert_geq(ft_gemm_mc(197, 768), 197);
  cr_assert_eq(ft_gemm_mc(300, 768), 156);
  cr_assert_eq(ft_gemm_mc(197, 3072), 36);
  gcase v = {197, 100, 768, 0, 0, 1, 1, 1, 1.0f, 1.0f, FT_ACT_RELU};
  run_core_case(&v);
}

/* ---- both operands packed: each tile over all of K (FT_GEMM_FULL_K), as MatMul on constant
 * weights runs for M > 16 ---- */

/* A packed with ft_gemm_pack_a is A in MR-row slivers, k-major, zero rows past M: checked
 * element by element against that definition (the vector copy takes 4 rows and 16 k at a time:
 * M and K around those). */
Test(gemm, pack_a_matches_its_layout) {
  static const int64_t Ms[] = {1, 3, 4, 5, 8, 11, 12, 13, 17, 29};
  static const int64_t Ks[] = {1, 15, 16, 17, 33, 63};
  for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++)
    for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
      int64_t M = Ms[mi], K = Ks[ki], n = ft_gemm_packed_a_floats(M, K);
      float *A = rand_buf(M * K), *ap = scratch_buf(sizeof(float) * (size_t)n);
      ft_gemm_pack_a(M, K, A, K, 1, ap);
      for (int64_t s = 0; s * FT_GEMM_MR < M; s++)
        for (int64_t k = 0; k < K; k++)
          for (int64_t r = 0; r < FT_GEMM_MR; r++) {
            int64_t m = s * FT_GEMM_MR + r;
            float want = m < M ? A[m * K + k] : 0.0f, got = ap[s * K * FT_GEMM_MR + k * FT_GEMM_MR + r];
            cr_assert(got == want, "pack_a M=%lld K=%lld: row %lld k %lld is %g, want %g", (long long)M,
                      (long long)K, (long long)m, (long long)k, got, want);
          }
      free(A); free(ap);
    }
}

/* B packed from B^T (row-major, as K^T is packed in attention): element by element against the
 * layout, with N and K around the vector copy's 16x16 blocks and a panel's two halves. */
Test(gemm, pack_b_from_transposed_matches_its_layout) {
  static const int64_t Ns[] = {1, 7, 15, 16, 17, 31, 32, 33, 50};
  static const int64_t Ks[] = {1, 15, 16, 17, 33, 64};
  for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
    for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
      int64_t N = Ns[ni], K = Ks[ki], n = ft_gemm_packed_b_floats(K, N);
      float *BT = rand_buf(N * K), *bp = scratch_buf(sizeof(float) * (size_t)n);
      memset(bp, 0xff, sizeof(float) * (size_t)n); /* NaNs where nothing was written */
      ft_gemm_pack_b(K, N, BT, 1, K, bp);
      for (int64_t j = 0; j * FT_GEMM_NR < N; j++)
        for (int64_t k = 0; k < K; k++)
          for (int64_t c = 0; c < FT_GEMM_NR; c++) {
            int64_t col = j * FT_GEMM_NR + c;
            float want = col < N ? BT[col * K + k] : 0.0f, got = bp[j * K * FT_GEMM_NR + k * FT_GEMM_NR + c];
            cr_assert(got == want, "pack_b^T N=%lld K=%lld: k %lld column %lld is %g, want %g", (long long)N,
                      (long long)K, (long long)k, (long long)col, got, want);
          }
      free(BT); free(bp);
    }
}

#ifdef __AVX512F__
/* The direct tiles' column maps (which lanes of a 32-column panel are kept, where they go):
 * computed by arithmetic for rows of 16 or more columns, against the lane-by-lane loop, for
 * every panel of every wrap 16..70, kept width 1..wrap and a ragged N; and unwrapped. */
Test(gemm, column_map_arithmetic_matches_lanes) {
  ft_gemm_op g;
  memset(&g, 0, sizeof g);
  for (int64_t wrap = 0; wrap <= 70; wrap += wrap ? 1 : 16)
    for (int64_t keep = wrap ? 1 : 0; keep <= wrap; keep++) {
      g.c_wrap = wrap;
      g.c_keep = keep;
      g.N = wrap ? 5 * wrap - 3 : 77;
      for (int64_t n0 = 0; n0 < g.N; n0 += FT_GEMM_NR) {
        ft_gemm_colmap a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        ft_gemm_colmap_init(&g, n0, &a);
        ft_gemm_colmap_lanes(&g, n0, &b);
        for (int v = 0; v < 2; v++)
          cr_assert(a.keep[v] == b.keep[v] && a.cnt[v] == b.cnt[v] && a.dst[v] == b.dst[v],
                    "wrap %lld keep %lld n0 %lld vector %d: %#x %d %lld, want %#x %d %lld", (long long)wrap,
                    (long long)keep, (long long)n0, v, a.keep[v], a.cnt[v], (long long)a.dst[v], b.keep[v], b.cnt[v],
                    (long long)b.dst[v]);
      }
    }
}

/* ft_v16_exp against ft_expf over the whole float range that matters (underflow to overflow),
 * to a float ulp or two, and the special values exactly. */
Test(gemm, vector_exp_agrees_with_expf) {
  float x[16] __attribute__((aligned(64))), y[16] __attribute__((aligned(64)));
  double worst = 0;
  for (int64_t i = 0; i < 200000; i += 16) {
    for (int l = 0; l < 16; l++) x[l] = -110.0f + 205.0f * (float)(i + l) / 200000.0f;
    _mm512_store_ps(y, ft_v16_exp(_mm512_load_ps(x)));
    for (int l = 0; l < 16; l++) {
      float want = ft_expf(x[l]);
      if (want == 0.0f || isinf(want)) cr_assert(y[l] == want, "exp(%g) = %g, want %g", x[l], y[l], want);
      else if (want >= 1.17549435e-38f) {
        double rel = fabs((double)y[l] - want) / want;
        if (rel > worst) worst = rel;
      } else cr_assert(fabsf(y[l] - want) <= 2.9e-45f, "exp(%g) = %g, want %g", x[l], y[l], want);
    }
  }
  cr_assert(worst < 2.5e-7, "relative difference %g", worst);
  const float sp[4] = {NAN, INFINITY, -INFINITY, 0.0f}, want[4] = {NAN, INFINITY, 0.0f, 1.0f};
  for (int l = 0; l < 16; l++) x[l] = sp[l % 4];
  _mm512_store_ps(y, ft_v16_exp(_mm512_load_ps(x)));
  for (int l = 0; l < 16; l++)
    cr_assert(l % 4 == 0 ? isnan(y[l]) : y[l] == want[l % 4], "exp(%g) = %g", x[l], y[l]);
}
#endif

/* C = epilogue(A B) with A and B packed, a bias per column, an activation and optionally a
 * residual (before or after the activation; in place: C holds it), against double loops. */
static void run_full_k_case(int64_t M, int64_t N, int64_t K, int act, int res, int threads) {
  float *A = rand_buf(M * K), *B = rand_buf(K * N), *bias = rand_buf(N), *C = rand_buf(M * N);
  float *R = malloc(sizeof(float) * (size_t)(M * N));
  memcpy(R, C, sizeof(float) * (size_t)(M * N));
  float *ap = scratch_buf(sizeof(float) * (size_t)ft_gemm_packed_a_floats(M, K));
  float *bp = scratch_buf(sizeof(float) * (size_t)ft_gemm_packed_b_floats(K, N));
  ft_gemm_pack_a(M, K, A, K, 1, ap);
  ft_gemm_pack_b(K, N, B, N, 1, bp);
  ft_gemm_op g;
  memset(&g, 0, sizeof g);
  g.M = M; g.N = N; g.K = K; g.c = C; g.ldc = N; g.ap = ap; g.bp = bp;
  g.e.alpha = 1; g.e.beta = 1; g.e.bias = bias; g.e.bias_cs = 1; g.e.act = act;
  if (res) { g.e.res = C; g.e.res_after = res == 2; }
  ft_set_threads(threads);
  ft_gemm_run(&g);
  /* again with A's rows read in place (as MatMul runs on constant B), 3 floats apart past K:
   * the same products in the same order, so the same floats */
  float *As = rand_buf(M * (K + 3)), *C2 = malloc(sizeof(float) * (size_t)(M * N));
  for (int64_t i = 0; i < M; i++) memcpy(As + i * (K + 3), A + i * K, sizeof(float) * (size_t)K);
  memcpy(C2, R, sizeof(float) * (size_t)(M * N));
  ft_gemm_op g2 = g;
  g2.ap = NULL; g2.a = As; g2.a_rs = K + 3; g2.a_cs = 1; g2.c = C2;
  if (res) g2.e.res = C2;
  ft_gemm_run(&g2);
  ft_set_threads(0);
  if (K <= FT_GEMM_FULL_K)
    cr_assert(memcmp(C, C2, sizeof(float) * (size_t)(M * N)) == 0,
              "A in place and A packed differ: M=%lld N=%lld K=%lld", (long long)M, (long long)N, (long long)K);
  free(As); free(C2);
  double *want = malloc(sizeof(double) * (size_t)(M * N));
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = bias[j];
      for (int64_t k = 0; k < K; k++) s += (double)A[i * K + k] * B[k * N + j];
      if (res == 1) s += R[i * N + j];
      if (act == FT_ACT_RELU) s = s > 0 ? s : 0;
      if (act == FT_ACT_GELU) s = 0.5 * s * (1 + erf(s / sqrt(2.0)));
      if (res == 2) s += R[i * N + j];
      want[i * N + j] = s;
    }
  char what[160];
  snprintf(what, sizeof what, "packed A and B, M=%lld N=%lld K=%lld act=%d res=%d threads=%d", (long long)M,
           (long long)N, (long long)K, act, res, threads);
  expect_close(C, want, M * N, K, what);
  free(A); free(B); free(bias); free(C); free(R); free(ap); free(bp); free(want);
}

/* M not a multiple of the sliver (MR), N not a multiple of a vector or a panel, odd K below and
 * above the K block (KC) and past FT_GEMM_FULL_K (the K-blocked loop), in place over a residual
 * with K past KC (a single pass: no partial sums through C), 1 and 2 threads. */
Test(gemm, packed_full_k_edges) {
  static const int64_t Ms[] = {17, 25, 37, 133};
  static const int64_t Ns[] = {7, 33, 70};
  static const int64_t Ks[] = {1, 37, 257, 769};
  static const int acts[] = {FT_ACT_NONE, FT_ACT_GELU, FT_ACT_RELU};
  int n = 0;
  for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++)
    for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
      for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++, n++)
        run_full_k_case(Ms[mi], Ns[ni], Ks[ki], acts[n % 3], n % 4 == 3 ? 1 + n / 4 % 2 : 0, 1 + n % 2);
  run_full_k_case(13, 20, FT_GEMM_FULL_K + 3, FT_ACT_GELU, 1, 1);
}

/* GELU in the epilogue (ft_gemm_act: ft_v16_gelu where the target has AVX-512, ft_geluf
 * otherwise) against double-precision GELU on every 2^-12 step of [-12, 12]: error at most
 * 2.5e-7 |x| + 1e-37 and relative error at most 7e-7 where |GELU| > 1e-30; special values. */
Test(gemm, gelu_epilogue_accuracy) {
  int64_t n = 24 * 4096 + 1;
  float *x = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) x[i] = (float)(-12.0 + i / 4096.0);
  float *y = malloc(sizeof(float) * (size_t)n);
  memcpy(y, x, sizeof(float) * (size_t)n);
  ft_gemm_epi e;
  memset(&e, 0, sizeof e);
  e.act = FT_ACT_GELU;
  ft_gemm_act(y, n, &e);
  for (int64_t i = 0; i < n; i++) {
    double w = 0.5 * x[i] * erfc(-x[i] / sqrt(2.0)), d = fabs(y[i] - w);
    cr_assert(d <= 2.5e-7 * fabs(x[i]) + 1e-37, "GELU(%.9g) = %.9g, want %.9g", x[i], y[i], w);
    cr_assert(fabs(w) <= 1e-30 || d <= 7e-7 * fabs(w), "GELU(%.9g) = %.9g, want %.9g (relative)", x[i], y[i], w);
  }
  float sp[] = {INFINITY, NAN, 0.0f, 20.0f, -20.0f, 1e30f, -1e30f, 1e-30f, -3e38f};
  int nsp = (int)(sizeof sp / sizeof *sp);
  float ys[sizeof sp / sizeof *sp];
  memcpy(ys, sp, sizeof sp);
  ft_gemm_act(ys, nsp, &e);
  float want[] = {INFINITY, NAN, 0.0f, 20.0f, 0.0f, 1e30f, 0.0f, 0.5f * 1e-30f, 0.0f};
  for (int i = 0; i < nsp; i++)
    cr_assert(isnan(want[i]) ? isnan(ys[i]) : ys[i] == want[i] || fabsf(ys[i] - want[i]) <= 6.5e-7f * fabsf(want[i]),
              "GELU(%g) = %g, want %g", sp[i], ys[i], want[i]);
  free(x); free(y);
}

/* ---- small M: every row in registers over all of K (ft_gemm_small_run) ---- */

/* C = epilogue(A B) in double: bias form as in run_core_case, act none, Relu, Clip or GELU. */
static double *small_reference(const float *A, const float *B, const float *bias, int64_t M, int64_t N, int64_t K,
                               int bias_form, int act) {
  static const int64_t brs[] = {0, 0, 1, 0, -1}, bcs[] = {0, 1, 0, 0, 1};
  double *want = malloc(sizeof(double) * (size_t)(M * N));
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += (double)A[i * K + k] * B[k * N + j];
      if (bias_form) s += bias[i * (brs[bias_form] < 0 ? N : brs[bias_form]) + j * bcs[bias_form]];
      if (act == FT_ACT_RELU) s = s > 0 ? s : 0;
      if (act == FT_ACT_CLIP) s = s < -0.5 ? -0.5 : (s > 0.75 ? 0.75 : s);
      if (act == FT_ACT_GELU) s = 0.5 * s * (1 + erf(s / sqrt(2.0)));
      want[i * N + j] = s;
    }
  return want;
}

/* A's layout: 0 rows contiguous (read in place), 1 rows 3 floats apart past K (in place, row
 * stride not K), 2 transposed (a_cs = M: packed first). */
static void run_small_case_a(int64_t M, int64_t N, int64_t K, ft_gemm_small_plan pl, int bias_form, int act,
                             int a_layout) {
  float *A = rand_buf(M * K), *B = rand_buf(K * N), *bias = rand_buf(M * N), *C = rand_buf(M * N);
  float *As = rand_buf(M * (K + 3)); /* A as the GEMM reads it */
  int64_t a_rs = a_layout == 2 ? 1 : (a_layout == 1 ? K + 3 : K), a_cs = a_layout == 2 ? M : 1;
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++) As[i * a_rs + k * a_cs] = A[i * K + k];
  float *bp = scratch_buf(sizeof(float) * (size_t)ft_gemm_packed_b_floats(K, N));
  float *apk = scratch_buf(sizeof(float) * (size_t)(M * K));
  ft_gemm_pack_b(K, N, B, N, 1, bp);
  ft_gemm_op g;
  memset(&g, 0, sizeof g);
  g.M = M; g.N = N; g.K = K; g.c = C; g.ldc = N;
  g.a = As; g.a_rs = a_rs; g.a_cs = a_cs; g.bp = bp;
  g.e.alpha = 1; g.e.beta = 1; g.e.act = act; g.e.lo = -0.5f; g.e.hi = 0.75f;
  int64_t brs[] = {0, 0, 1, 0, N}, bcs[] = {0, 1, 0, 0, 1};
  if (bias_form) { g.e.bias = bias; g.e.bias_rs = brs[bias_form]; g.e.bias_cs = bcs[bias_form]; }
  ft_gemm_small_run(&g, pl, apk);
  double *want = small_reference(A, B, bias, M, N, K, bias_form, act);
  char what[200];
  snprintf(what, sizeof what, "small-M gemm M=%lld N=%lld K=%lld rows/sliver %d vectors %d bias=%d act=%d A layout %d",
           (long long)M, (long long)N, (long long)K, pl.ms, pl.nv, bias_form, act, a_layout);
  expect_close(C, want, M * N, K, what);
  free(A); free(As); free(B); free(bias); free(C); free(bp); free(apk); free(want);
}

static void run_small_case(int64_t M, int64_t N, int64_t K, ft_gemm_small_plan pl, int bias_form, int act) {
  run_small_case_a(M, N, K, pl, bias_form, act, 0);
}

/* A read in place with a row stride other than K, and A transposed (packed before the panels):
 * both must match the reference, and both must give the bits of A contiguous (the same FMAs in
 * the same order, only the loads differ). */
Test(gemm, small_m_a_strides) {
  static const int64_t Ns[] = {17, 64, 70};
  static const int64_t Ks[] = {1, 2, 37};
  int n = 0;
  for (int64_t M = 1; M <= FT_GEMM_SMALL_M; M++)
    for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
      for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++, n++) {
        ft_gemm_small_plan pl = n % 3 ? ft_gemm_small_plan_for(M) : (ft_gemm_small_plan){(int)M, 1};
        for (int lay = 1; lay <= 2; lay++) run_small_case_a(M, Ns[ni], Ks[ki], pl, n % 5, n % 2 ? FT_ACT_GELU : 0, lay);
      }
  int64_t M = 8, N = 96, K = 129;
  float *A = rand_buf(M * K), *At = rand_buf(M * K), *C[2];
  float *bp = scratch_buf(sizeof(float) * (size_t)ft_gemm_packed_b_floats(K, N)), *B = rand_buf(K * N);
  float *apk = scratch_buf(sizeof(float) * (size_t)(M * K));
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++) At[k * M + i] = A[i * K + k];
  ft_gemm_pack_b(K, N, B, N, 1, bp);
  for (int t = 0; t < 2; t++) {
    ft_gemm_op g;
    memset(&g, 0, sizeof g);
    C[t] = rand_buf(M * N);
    g.M = M; g.N = N; g.K = K; g.c = C[t]; g.ldc = N; g.bp = bp; g.e.alpha = 1;
    g.a = t ? At : A; g.a_rs = t ? 1 : K; g.a_cs = t ? M : 1;
    ft_gemm_small_run(&g, ft_gemm_small_plan_for(M), apk);
  }
  cr_assert(memcmp(C[0], C[1], sizeof(float) * (size_t)(M * N)) == 0, "A in place and A packed differ");
  free(A); free(At); free(B); free(bp); free(apk); free(C[0]); free(C[1]);
}

/* Every M from 1 to 16 with odd N and K, in the plan ftaxc's kernel picks and in the others
 * that fit: one or two vectors per tile row, several slivers with a shorter last one. */
Test(gemm, small_m_every_row_count_and_plan) {
  static const int64_t Ns[] = {1, 17, 31, 32, 33, 70};
  static const int64_t Ks[] = {1, 2, 3, 37, 300};
  static const int acts[] = {FT_ACT_NONE, FT_ACT_RELU, FT_ACT_CLIP, FT_ACT_GELU};
  int n = 0;
  for (int64_t M = 1; M <= FT_GEMM_SMALL_M; M++) {
    ft_gemm_small_plan plans[4] = {ft_gemm_small_plan_for(M), {(int)M, 1}, {M > 8 ? 8 : (int)M, 2}, {3, 1}};
    cr_assert(plans[0].ms >= 1 && plans[0].ms <= M && plans[0].ms * plans[0].nv <= 28, "M=%lld: plan out of the registers", (long long)M);
    for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
      for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++)
        for (int pi = 0; pi < 4; pi++, n++) run_small_case(M, Ns[ni], Ks[ki], plans[pi], n % 5, acts[n / 5 % 4]);
  }
}

/* MatMul with B packed at compile time takes the small-M path for M <= 16; the same call
 * compiled without AVX-512 (gemm_portable.c) must agree with the reference too. */
int gemm_portable_has_avx512(void);
void gemm_portable_matmul(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch);
size_t gemm_portable_pack_b(const int64_t *p, const void *src, void *dst);

static void run_small_matmul(int64_t M, int64_t N, int64_t K, int portable) {
  int64_t p[FT_MM_BDIMS] = {0};
  p[FT_MM_M] = M; p[FT_MM_N] = N; p[FT_MM_K] = K;
  p[FT_MM_A_RS] = K; p[FT_MM_A_CS] = 1; p[FT_MM_B_RS] = N; p[FT_MM_B_CS] = 1;
  p[FT_MM_A_NMAT] = 1; p[FT_MM_B_NMAT] = 1;
  p[FT_MM_HAS_BIAS] = 1; p[FT_MM_BIAS_CS] = 1; p[FT_MM_ACT] = FT_ACT_GELU; /* FusedMatMul's bias and GELU */
  double f[4] = {1, 1, 0, 0};
  float *A = rand_buf(M * K), *B = rand_buf(K * N), *bias = rand_buf(N), *Y = rand_buf(M * N);
  void *Bp = scratch_buf(portable ? gemm_portable_pack_b(p, B, NULL) : ft_mm_pack_b(p, B, NULL));
  if (portable) gemm_portable_pack_b(p, B, Bp);
  else ft_mm_pack_b(p, B, Bp);
  p[FT_MM_PACKED] = 1;
  const void *in[3] = {A, Bp, bias};
  void *out[1] = {Y}, *scratch = scratch_buf(ft_mm_scratch(M, K, 1));
  if (portable) gemm_portable_matmul(p, f, in, out, scratch);
  else ft_matmul_f32(p, f, in, out, scratch);
  double *want = small_reference(A, B, bias, M, N, K, 1, FT_ACT_GELU);
  char what[160];
  snprintf(what, sizeof what, "%s MatMul M=%lld N=%lld K=%lld, B prepacked, bias, GELU", portable ? "portable" : "native",
           (long long)M, (long long)N, (long long)K);
  expect_close(Y, want, M * N, K, what);
  free(A); free(B); free(bias); free(Y); free(Bp); free(scratch); free(want);
}

Test(matmul, small_m_prepacked_native_and_portable) {
  cr_assert(!gemm_portable_has_avx512(), "gemm_portable.c was compiled with AVX-512");
  for (int portable = 0; portable <= 1; portable++)
    for (int64_t M = 1; M <= FT_GEMM_SMALL_M + 1; M++) {
      run_small_matmul(M, 45, 131, portable);
      run_small_matmul(M, 96, 768, portable);
    }
}

Test(gemm, small_m_same_bits_for_any_thread_count) {
  int64_t M = 5, N = 300, K = 700; /* N * K is past FT_GEMM_SMALL_PAR_B: split over threads */
  cr_assert(N * K >= FT_GEMM_SMALL_PAR_B);
  float *A = rand_buf(M * K), *B = rand_buf(K * N), *C1 = rand_buf(M * N), *C3 = rand_buf(M * N);
  float *bp = scratch_buf(sizeof(float) * (size_t)ft_gemm_packed_b_floats(K, N)), *apk = scratch_buf(sizeof(float) * (size_t)(M * K));
  ft_gemm_pack_b(K, N, B, N, 1, bp);
  ft_gemm_op g;
  memset(&g, 0, sizeof g);
  g.M = M; g.N = N; g.K = K; g.ldc = N; g.a = A; g.a_rs = K; g.a_cs = 1; g.bp = bp; g.e.alpha = 1;
  ft_set_threads(1);
  g.c = C1;
  ft_gemm_small_run(&g, ft_gemm_small_plan_for(M), apk);
  ft_set_threads(3);
  g.c = C3;
  ft_gemm_small_run(&g, ft_gemm_small_plan_for(M), apk);
  ft_set_threads(0);
  cr_assert(memcmp(C1, C3, sizeof(float) * (size_t)(M * N)) == 0, "small-M results differ between 1 and 3 threads");
  free(A); free(B); free(C1); free(C3); free(bp); free(apk);
}

/* ---- MatMul / Gemm kernel ---- */

/* A [ab..., M, K] x B [bb..., K, N] with numpy broadcasting over the batch dims (rank 2 here). */
static void run_matmul(const int64_t *adims, const int64_t *bdims, int64_t M, int64_t N, int64_t K, int prepack) {
  int64_t od[2], as[2], bs[2], na = adims[0] * adims[1], nb = bdims[0] * bdims[1], nbatch = 1;
  for (int d = 0; d < 2; d++) {
    od[d] = adims[d] > bdims[d] ? adims[d] : bdims[d];
    nbatch *= od[d];
  }
  as[1] = adims[1] == 1 ? 0 : 1;
  as[0] = adims[0] == 1 ? 0 : adims[1];
  bs[1] = bdims[1] == 1 ? 0 : 1;
  bs[0] = bdims[0] == 1 ? 0 : bdims[1];
  int64_t p[FT_MM_BDIMS + 6] = {0};
  p[FT_MM_M] = M; p[FT_MM_N] = N; p[FT_MM_K] = K;
  p[FT_MM_A_RS] = K; p[FT_MM_A_CS] = 1; p[FT_MM_B_RS] = N; p[FT_MM_B_CS] = 1;
  p[FT_MM_A_NMAT] = na; p[FT_MM_B_NMAT] = nb; p[FT_MM_BRANK] = 2;
  int64_t *bd = p + FT_MM_BDIMS;
  bd[0] = od[0]; bd[1] = od[1]; bd[2] = as[0]; bd[3] = as[1]; bd[4] = bs[0]; bd[5] = bs[1];
  double f[4] = {1, 0, 0, 0};
  float *A = rand_buf(na * M * K), *B = rand_buf(nb * K * N), *Y = rand_buf(nbatch * M * N), *Bp = NULL;
  const void *in[3] = {A, B, NULL};
  if (prepack) {
    Bp = scratch_buf(ft_mm_pack_b(p, B, NULL));
    ft_mm_pack_b(p, B, Bp);
    in[1] = Bp;
    p[FT_MM_PACKED] = 1;
  }
  void *out[1] = {Y}, *scratch = scratch_buf(ft_mm_scratch(M, K, na));
  ft_matmul_f32(p, f, in, out, scratch);
  double *want = malloc(sizeof(double) * (size_t)(nbatch * M * N));
  for (int64_t b0 = 0; b0 < od[0]; b0++)
    for (int64_t b1 = 0; b1 < od[1]; b1++) {
      const float *a = A + (b0 * as[0] + b1 * as[1]) * M * K, *bm = B + (b0 * bs[0] + b1 * bs[1]) * K * N;
      double *w = want + (b0 * od[1] + b1) * M * N;
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          double s = 0;
          for (int64_t k = 0; k < K; k++) s += (double)a[i * K + k] * bm[k * N + j];
          w[i * N + j] = s;
        }
    }
  expect_close(Y, want, nbatch * M * N, K, prepack ? "batched matmul, B prepacked" : "batched matmul");
  free(A); free(B); free(Y); free(Bp); free(scratch); free(want);
}

Test(matmul, broadcast_batches) {
  const int64_t a1[] = {2, 3}, b1[] = {2, 3}, a2[] = {1, 3}, b2[] = {2, 1}, a3[] = {2, 1}, b3[] = {1, 1};
  for (int pre = 0; pre <= 1; pre++) {
    run_matmul(a1, b1, 13, 33, 20, pre);
    run_matmul(a2, b2, 7, 1, 45, pre);
    run_matmul(a3, b3, 1, 64, 1, pre);
  }
}

/* ---- Conv ---- */

typedef struct ccase {
  int64_t N, C, CO, G, nd;          /* nd: spatial dims 1 or 2 (or 3) */
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
  int mode, bias, prepack;
} ccase;

static void conv_params(const ccase *c, int64_t *p, int64_t *out) {
  memset(p, 0, sizeof(int64_t) * FT_CV_NP);
  p[FT_CV_N] = c->N; p[FT_CV_C] = c->C; p[FT_CV_CO] = c->CO; p[FT_CV_G] = c->G;
  p[FT_CV_HAS_BIAS] = c->bias;
  p[FT_CV_MODE] = c->mode;
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - (int)c->nd);
    int64_t in = j < 0 ? 1 : c->in[j], k = j < 0 ? 1 : c->k[j], s = j < 0 ? 1 : c->s[j];
    int64_t d = j < 0 ? 1 : c->d[j], pb = j < 0 ? 0 : c->pb[j], pe = j < 0 ? 0 : c->pe[j];
    out[i] = (in + pb + pe - (k - 1) * d - 1) / s + 1;
    p[FT_CV_IN + i] = in; p[FT_CV_OUT + i] = out[i]; p[FT_CV_K + i] = k;
    p[FT_CV_S + i] = s; p[FT_CV_D + i] = d; p[FT_CV_P + i] = pb;
  }
  int64_t Kg = ft_conv_kg(p), S = out[0] * out[1] * out[2];
  int64_t chunk = 64 * 1024 / (4 * Kg) / FT_GEMM_NR * FT_GEMM_NR; /* small: several chunks */
  if (chunk < FT_GEMM_NR) chunk = FT_GEMM_NR;
  if (chunk > (S + 31) / 32 * 32) chunk = (S + 31) / 32 * 32;
  p[FT_CV_CHUNK] = chunk;
}

static void run_conv_case(const ccase *c) {
  int64_t p[FT_CV_NP], o[3];
  conv_params(c, p, o);
  const int64_t *in = p + FT_CV_IN, *k = p + FT_CV_K, *s = p + FT_CV_S, *d = p + FT_CV_D, *pb = p + FT_CV_P;
  int64_t Cg = c->C / c->G, Mg = c->CO / c->G, S_in = in[0] * in[1] * in[2], S_out = o[0] * o[1] * o[2];
  int64_t kvol = k[0] * k[1] * k[2];
  float *X = rand_buf(c->N * c->C * S_in), *W = rand_buf(c->CO * Cg * kvol), *B = rand_buf(c->CO);
  float *Y = rand_buf(c->N * c->CO * S_out), *Wp = NULL;
  const void *ins[3] = {X, W, B};
  if (c->prepack) {
    Wp = scratch_buf(ft_conv_pack_w(p, W, NULL));
    ft_conv_pack_w(p, W, Wp);
    ins[1] = Wp;
    p[FT_CV_PACKED] = 1;
  }
  double f[4] = {1, 1, 0, 0};
  void *outs[1] = {Y}, *scratch = scratch_buf(ft_conv_scratch(p) + 64);
  ft_conv_f32(p, f, ins, outs, scratch);
  double *want = malloc(sizeof(double) * (size_t)(c->N * c->CO * S_out));
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t co = 0; co < c->CO; co++) {
      int64_t g = co / Mg;
      for (int64_t z = 0; z < o[0]; z++)
        for (int64_t y = 0; y < o[1]; y++)
          for (int64_t x = 0; x < o[2]; x++) {
            double acc = c->bias ? B[co] : 0;
            for (int64_t ci = 0; ci < Cg; ci++)
              for (int64_t kz = 0; kz < k[0]; kz++)
                for (int64_t ky = 0; ky < k[1]; ky++)
                  for (int64_t kx = 0; kx < k[2]; kx++) {
                    int64_t iz = z * s[0] + kz * d[0] - pb[0], iy = y * s[1] + ky * d[1] - pb[1];
                    int64_t ix = x * s[2] + kx * d[2] - pb[2];
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2]) continue;
                    acc += (double)X[((n * c->C + g * Cg + ci) * in[0] + iz) * in[1] * in[2] + iy * in[2] + ix] *
                           W[((co * Cg + ci) * k[0] + kz) * k[1] * k[2] + ky * k[2] + kx];
                  }
            want[((n * c->CO + co) * o[0] + z) * o[1] * o[2] + y * o[2] + x] = acc;
          }
    }
  char what[120];
  snprintf(what, sizeof what, "conv mode %d C=%lld CO=%lld G=%lld prepack=%d", c->mode, (long long)c->C,
           (long long)c->CO, (long long)c->G, c->prepack);
  expect_close(Y, want, c->N * c->CO * S_out, Cg * kvol, what);
  free(X); free(W); free(B); free(Y); free(Wp); free(scratch); free(want);
}

Test(conv, im2col_shifted_pointwise) {
  for (int pre = 0; pre <= 1; pre++) {
    ccase a = {2, 6, 10, 2, 2, {17, 19}, {3, 5}, {2, 3}, {2, 1}, {1, 2}, {0, 1}, FT_CV_IM2COL, 1, pre};
    run_conv_case(&a);
    ccase b = {1, 5, 13, 1, 2, {20, 23}, {3, 3}, {1, 1}, {2, 3}, {2, 0}, {1, 3}, FT_CV_SHIFTED, 1, pre};
    run_conv_case(&b);
    ccase b2 = {2, 9, 6, 3, 2, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_SHIFTED, 0, pre};
    run_conv_case(&b2);
    ccase b3 = {1, 7, 9, 1, 1, {40}, {5}, {1}, {1}, {0}, {4}, FT_CV_SHIFTED, 1, pre};
    run_conv_case(&b3);
    ccase b4 = {1, 3, 16, 1, 2, {37, 35}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 2}, FT_CV_SHIFTED, 1, pre};
    run_conv_case(&b4);
    ccase b5 = {2, 8, 12, 2, 2, {21, 18}, {3, 3}, {2, 1}, {1, 2}, {1, 0}, {0, 2}, FT_CV_SHIFTED, 1, pre};
    run_conv_case(&b5);
    ccase b6 = {1, 5, 7, 1, 2, {19, 20}, {3, 4}, {3, 2}, {2, 1}, {2, 1}, {1, 1}, FT_CV_SHIFTED, 0, pre};
    run_conv_case(&b6);
    ccase c = {2, 20, 30, 1, 2, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, FT_CV_POINTWISE, 1, pre};
    run_conv_case(&c);
    ccase e = {1, 3, 4, 1, 3, {6, 7, 8}, {3, 2, 3}, {1, 2, 1}, {1, 1, 1}, {1, 0, 1}, {1, 1, 0}, FT_CV_IM2COL, 1, pre};
    run_conv_case(&e);
    /* a short K: items of several column panels (8 here, the last group partial) */
    ccase pw16 = {1, 16, 20, 1, 2, {41, 39}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, FT_CV_POINTWISE, 1, pre};
    run_conv_case(&pw16);
    ccase big = {1, 64, 64, 1, 2, {30, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_SHIFTED, 1, pre};
    run_conv_case(&big);
  }
}

Test(conv, depthwise) {
  ccase cs[] = {
      {2, 12, 12, 12, 2, {15, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 5, 5, 5, 2, {33, 31}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 5, 5, 5, 2, {33, 31}, {3, 3}, {2, 2}, {2, 2}, {2, 1}, {2, 1}, FT_CV_DEPTHWISE, 0, 0},
      {1, 5, 5, 5, 2, {33, 31}, {5, 5}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, FT_CV_DEPTHWISE, 1, 0},
      {1, 3, 3, 3, 2, {33, 31}, {5, 5}, {5, 5}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 4, 4, 4, 2, {7, 7}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}, FT_CV_DEPTHWISE, 1, 0},
      {1, 2, 2, 2, 2, {120, 113}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 2, 2, 2, 2, {5, 3000}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {2, 6, 6, 6, 1, {50}, {5}, {1}, {1}, {2}, {2}, FT_CV_DEPTHWISE, 1, 0},
      {2, 6, 6, 6, 1, {50}, {3}, {2}, {1}, {1}, {0}, FT_CV_DEPTHWISE, 1, 0},
      /* channel-vector path in several row bands, 16 channels and a partial block */
      {1, 20, 20, 20, 2, {120, 113}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 33, 33, 33, 2, {61, 58}, {5, 5}, {2, 2}, {2, 1}, {3, 2}, {1, 2}, FT_CV_DEPTHWISE, 1, 0},
  };
  for (int pre = 0; pre <= 1; pre++) /* packed weights: 16-channel blocks of tap vectors */
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
      ccase c = cs[i];
      c.prepack = pre;
      run_conv_case(&c);
    }
}

/* The channel-vector path's geometries: row chunks of 7, 8 and 14 pixels and the last chunk
 * past the row, planes smaller than a vector, 16-pixel transposes across rows, a ring of rows
 * that wraps (wide rows) or holds the whole band, stride 2, 5x5, dilation, asymmetric pads,
 * channels not a multiple of 16, two images; packed and unpacked weights. */
Test(conv, depthwise_channel_vectors) {
  ccase cs[] = {
      {1, 96, 96, 96, 2, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 40, 40, 40, 2, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {2, 17, 17, 17, 2, {14, 14}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}, FT_CV_DEPTHWISE, 0, 0},
      {1, 24, 24, 24, 2, {28, 28}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, FT_CV_DEPTHWISE, 1, 0},
      {1, 16, 16, 16, 2, {3, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 5, 5, 5, 2, {1, 1}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 19, 19, 19, 2, {11, 23}, {3, 5}, {1, 2}, {1, 1}, {0, 2}, {2, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 18, 18, 18, 2, {13, 17}, {3, 3}, {1, 1}, {2, 3}, {2, 3}, {2, 3}, FT_CV_DEPTHWISE, 1, 0},
      {1, 3, 3, 3, 2, {40, 112}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 3, 3, 3, 2, {41, 225}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0},
      {1, 9, 9, 9, 2, {9, 9}, {7, 7}, {3, 3}, {1, 1}, {3, 3}, {3, 3}, FT_CV_DEPTHWISE, 1, 0},
      {2, 33, 33, 33, 2, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, FT_CV_DEPTHWISE, 1, 0},
      /* the generic row function (a 7-wide window, a dilation, stride 3) with chunks of 14 and 7 */
      {1, 32, 32, 32, 2, {14, 14}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}, FT_CV_DEPTHWISE, 1, 0},
      {1, 16, 16, 16, 2, {28, 28}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, FT_CV_DEPTHWISE, 1, 0},
      {1, 16, 16, 16, 2, {42, 42}, {3, 3}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, FT_CV_DEPTHWISE, 1, 0},
      {1, 17, 17, 17, 2, {21, 21}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}, FT_CV_DEPTHWISE, 1, 0},
  };
  for (int pre = 0; pre <= 1; pre++)
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
      ccase c = cs[i];
      c.prepack = pre;
      run_conv_case(&c);
    }
}

/* The channel-vector path splits a layer into (channel block, band of rows) items; which
 * thread runs an item must not change a bit. 40 channels at 120x113: 3 blocks x several bands. */
Test(conv, depthwise_same_bits_for_any_thread_count) {
  ccase c = {1, 40, 40, 40, 2, {120, 113}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_DEPTHWISE, 1, 0};
  int64_t p[FT_CV_NP], o[3];
  conv_params(&c, p, o);
  int64_t S_out = o[0] * o[1] * o[2];
  float *X = rand_buf(40 * 120 * 113), *W = rand_buf(40 * 9), *B = rand_buf(40);
  float *Y1 = rand_buf(40 * S_out), *Y3 = rand_buf(40 * S_out);
  const void *ins[3] = {X, W, B};
  double f[4] = {1, 1, 0, 0};
  void *scratch = scratch_buf(ft_conv_scratch(p) + 64), *o1[1] = {Y1}, *o3[1] = {Y3};
  ft_set_threads(1);
  ft_conv_f32(p, f, ins, o1, scratch);
  ft_set_threads(3);
  ft_conv_f32(p, f, ins, o3, scratch);
  ft_set_threads(0);
  cr_assert(memcmp(Y1, Y3, sizeof(float) * (size_t)(40 * S_out)) == 0, "depthwise results differ between 1 and 3 threads");
  free(X); free(W); free(B); free(Y1); free(Y3); free(scratch);
}

Test(convtranspose, groups_strides_pads) {
  for (int pre = 0; pre <= 1; pre++) {
    /* in = X spatial; out follows s*(in-1) + (k-1)*d + 1 - pb - pe */
    int64_t N = 2, C = 4, G = 2, Mg = 3, IH = 7, IW = 6, K = 3, S = 2, P = 1;
    int64_t OH = S * (IH - 1) + K - 2 * P + 1, OW = S * (IW - 1) + K - 2 * P + 1; /* output_padding 1 */
    int64_t p[FT_CV_NP] = {0};
    p[FT_CV_N] = N; p[FT_CV_C] = C; p[FT_CV_CO] = Mg * G; p[FT_CV_G] = G; p[FT_CV_HAS_BIAS] = 1;
    int64_t geo[18] = {1, IH, IW, 1, OH, OW, 1, K, K, 1, S, S, 1, 1, 1, 0, P, P};
    memcpy(p + FT_CV_IN, geo, sizeof geo);
    p[FT_CV_CHUNK] = 32;
    float *X = rand_buf(N * C * IH * IW), *W = rand_buf(C * Mg * K * K), *B = rand_buf(Mg * G);
    float *Y = rand_buf(N * Mg * G * OH * OW), *Wp = NULL;
    const void *ins[3] = {X, W, B};
    if (pre) {
      Wp = scratch_buf(ft_convt_pack_w(p, W, NULL));
      ft_convt_pack_w(p, W, Wp);
      ins[1] = Wp;
      p[FT_CV_PACKED] = 1;
    }
    void *outs[1] = {Y}, *scratch = scratch_buf(ft_convt_scratch(p));
    ft_convtranspose_f32(p, NULL, ins, outs, scratch);
    int64_t CO = Mg * G, Cg = C / G;
    double *want = calloc((size_t)(N * CO * OH * OW), sizeof(double));
    for (int64_t n = 0; n < N; n++)
      for (int64_t co = 0; co < CO; co++)
        for (int64_t i = 0; i < OH * OW; i++) want[(n * CO + co) * OH * OW + i] = B[co];
    for (int64_t n = 0; n < N; n++)
      for (int64_t ci = 0; ci < C; ci++) {
        int64_t g = ci / Cg;
        for (int64_t m = 0; m < Mg; m++)
          for (int64_t iy = 0; iy < IH; iy++)
            for (int64_t ix = 0; ix < IW; ix++)
              for (int64_t ky = 0; ky < K; ky++)
                for (int64_t kx = 0; kx < K; kx++) {
                  int64_t oy = iy * S + ky - P, ox = ix * S + kx - P;
                  if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                  want[((n * CO + g * Mg + m) * OH + oy) * OW + ox] +=
                      (double)X[((n * C + ci) * IH + iy) * IW + ix] * W[((ci * Mg + m) * K + ky) * K + kx];
                }
      }
    expect_close(Y, want, N * CO * OH * OW, Cg * K * K, "convtranspose");
    free(X); free(W); free(B); free(Y); free(Wp); free(scratch); free(want);
  }
}

/* ---- determinism across thread counts ---- */

Test(gemm, same_bits_for_any_thread_count) {
  int64_t M = 100, N = 300, K = 700;
  float *A = rand_buf(M * K), *B = rand_buf(K * N), *C1 = rand_buf(M * N), *C3 = rand_buf(M * N);
  ft_gemm_op g;
  memset(&g, 0, sizeof g);
  g.M = M; g.N = N; g.K = K; g.ldc = N;
  g.a = A; g.a_rs = K; g.a_cs = 1; g.b = B; g.b_rs = N; g.b_cs = 1;
  g.e.alpha = 1;
  ft_set_threads(1);
  g.c = C1;
  ft_gemm_run(&g);
  ft_set_threads(3);
  g.c = C3;
  ft_gemm_run(&g);
  ft_set_threads(0);
  cr_assert(memcmp(C1, C3, sizeof(float) * (size_t)(M * N)) == 0, "results differ between 1 and 3 threads");
  free(A); free(B); free(C1); free(C3);
}
