/* The bf16 GEMM core (templates/c/gemm_bf16.h) and the kernels on it, ft_matmul_bf16 and
 * ft_conv_bf16 (conv_bf16.h), against plain loops in double over the same bf16-rounded inputs:
 * the kernels' only approximation is then fp32 accumulation, so the tolerance is fp32's.
 * Sizes around the tiles, odd K (a half-empty last pair), K deeper than one packed B block,
 * transposes, packed and unpacked B, batches, bias, activation, every Conv GEMM mode, and a
 * residual. Each case also runs on the portable path (bf16_portable.c, built
 * without AVX512_BF16), which must give what this build's path gives. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_bf16.h"

const char *bf16_portable_path(void);
void bf16_portable_matmul(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch);
void bf16_portable_conv(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch);

#include "kernel_bufs.h"
static double r16(float x) { return (double)ft_bf16_round(x); }

/* |got - want| <= 1e-5 * (k + |want|): fp32 sums of k products of values in [-1, 1] */
static void expect_close(const float *got, const double *want, int64_t n, int64_t k, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - want[i]);
    if (!(d <= 1e-5 * ((double)(k > 1 ? k : 1) + fabs(want[i]))))
      cr_assert_fail("%s: element %lld: got %.9g, want %.9g", what, (long long)i, got[i], want[i]);
  }
}
/* The two paths: the same products, each exact in fp32, added in the same order. */
static void expect_same_paths(const float *a, const float *b, int64_t n, int64_t k, const char *what) {
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(a[i] - b[i]) <= 1e-6f * (float)(k > 1 ? k : 1)))
      cr_assert_fail("%s: element %lld: %s path %.9g, portable %.9g", what, (long long)i, FT_BF16_PATH, a[i], b[i]);
}

Test(bf16, rounding) {
  cr_assert_eq(ft_bf16_round(1.0f), 1.0f);
  cr_assert_eq(ft_bf16_round(1.0f + 1.0f / 256), 1.0f, "a tie goes to even");
  cr_assert_eq(ft_bf16_round(1.0f + 3.0f / 256), 1.0f + 4.0f / 256, "a tie goes to even");
  cr_assert_eq(ft_bf16_round(1.0f + 1.0f / 256 + 1.0f / 4096), 1.0f + 2.0f / 256);
  cr_assert(isnan(ft_bf16_round(nanf(""))));
  uint32_t u = 0x7f800001u; /* a NaN whose payload rounding would carry into infinity */
  float x;
  memcpy(&x, &u, 4);
  cr_assert(isnan(ft_bf16_round(x)));
  cr_assert(isinf(ft_bf16_round(INFINITY)));
  uint32_t w = ft_bf16_pair(1.0f, -2.0f);
  cr_assert_eq(w, 0xc0003f80u, "k in the low half, k+1 in the high half");
}

Test(bf16, paths) {
#ifdef __AVX512BF16__
  cr_assert_str_eq(FT_BF16_PATH, "avx512_bf16");
#else
  cr_assert_str_eq(FT_BF16_PATH, "portable");
#endif
  cr_assert_str_eq(bf16_portable_path(), "portable");
}

/* ---- MatMul / Gemm ---- */

typedef struct mcase {
  int64_t M, N, K, nb; /* nb matrices in A and B (a batch), else 1 */
  int ta, tb, pack_b, bias, relu;
} mcase;

static void run_matmul_case(const mcase *c) {
  int64_t M = c->M, N = c->N, K = c->K, nb = c->nb;
  float *A = rand_buf(nb * M * K), *B = rand_buf(nb * K * N), *bias = rand_buf(N);
  float *Y = rand_buf(nb * M * N), *Y2 = rand_buf(nb * M * N);
  int64_t p[FT_MM_BDIMS + 3];
  memset(p, 0, sizeof p);
  p[FT_MM_M] = M; p[FT_MM_N] = N; p[FT_MM_K] = K;
  p[FT_MM_A_RS] = c->ta ? 1 : K; p[FT_MM_A_CS] = c->ta ? M : 1;
  p[FT_MM_B_RS] = c->tb ? 1 : N; p[FT_MM_B_CS] = c->tb ? K : 1;
  p[FT_MM_HAS_BIAS] = c->bias; p[FT_MM_BIAS_RS] = 0; p[FT_MM_BIAS_CS] = 1;
  p[FT_MM_ACT] = c->relu ? FT_ACT_RELU : FT_ACT_NONE;
  p[FT_MM_A_NMAT] = nb; p[FT_MM_B_NMAT] = nb;
  if (nb > 1) { p[FT_MM_BRANK] = 1; p[FT_MM_BDIMS] = nb; p[FT_MM_BDIMS + 1] = 1; p[FT_MM_BDIMS + 2] = 1; }
  const void *ins[3] = {A, B, bias};
  void *bp = NULL;
  if (c->pack_b) {
    bp = scratch_buf(ft_bf16_mm_pack_b(p, B, NULL));
    ft_bf16_mm_pack_b(p, B, bp);
    p[FT_MM_PACKED] = 1;
    ins[1] = bp;
  }
  double f[4] = {1, 1, 0, 0};
  void *scratch = scratch_buf(ft_bf16_mm_scratch(M, K, nb)), *outs[1] = {Y}, *outs2[1] = {Y2};
  ft_matmul_bf16(p, f, ins, outs, scratch);
  bf16_portable_matmul(p, f, ins, outs2, scratch);
  double *want = malloc(sizeof(double) * (size_t)(nb * M * N));
  for (int64_t b = 0; b < nb; b++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        const float *a = A + b * M * K, *bm = B + b * K * N;
        double acc = c->bias ? bias[j] : 0;
        for (int64_t k = 0; k < K; k++)
          acc += r16(a[i * p[FT_MM_A_RS] + k * p[FT_MM_A_CS]]) * r16(bm[k * p[FT_MM_B_RS] + j * p[FT_MM_B_CS]]);
        want[(b * M + i) * N + j] = c->relu && acc < 0 ? 0 : acc;
      }
  char what[160];
  snprintf(what, sizeof what, "matmul M=%lld N=%lld K=%lld nb=%lld ta=%d tb=%d packed=%d", (long long)M, (long long)N,
           (long long)K, (long long)nb, c->ta, c->tb, c->pack_b);
  expect_close(Y, want, nb * M * N, K, what);
  expect_same_paths(Y, Y2, nb * M * N, K, what);
  free(A); free(B); free(bias); free(Y); free(Y2); free(bp); free(scratch); free(want);
}

Test(bf16, matmul) {
  const mcase cs[] = {
      {1, 1, 1, 1, 0, 0, 1, 0, 0},       {12, 32, 2, 1, 0, 0, 1, 0, 0},    {13, 33, 7, 1, 0, 0, 1, 1, 1},
      {25, 70, 129, 1, 0, 0, 1, 1, 0},   {5, 17, 64, 1, 1, 1, 1, 0, 0},    {5, 17, 63, 1, 1, 1, 0, 1, 0},
      {40, 45, 300, 1, 0, 0, 0, 1, 1},   {11, 31, 65, 3, 0, 1, 0, 0, 0},   {16, 40, 33, 2, 0, 0, 1, 1, 0},
      {7, 9, 0, 1, 0, 0, 1, 1, 0},       {3, 40, 2 * FT_BF16_KB2 + 3, 1, 0, 0, 0, 0, 0}, /* 3 B blocks */
      {13, 35, 2 * FT_BF16_KB2 + 5, 1, 0, 1, 1, 1, 0},
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) run_matmul_case(&cs[i]);
}

/* The rounding happens: the same product in fp32 throughout is farther off than the tolerance. */
Test(bf16, differs_from_fp32) {
  int64_t M = 8, N = 32, K = 256;
  float *A = rand_buf(M * K), *B = rand_buf(K * N), *Y = rand_buf(M * N);
  int64_t p[FT_MM_BDIMS];
  memset(p, 0, sizeof p);
  p[FT_MM_M] = M; p[FT_MM_N] = N; p[FT_MM_K] = K; p[FT_MM_A_RS] = K; p[FT_MM_A_CS] = 1; p[FT_MM_B_RS] = N;
  p[FT_MM_B_CS] = 1; p[FT_MM_A_NMAT] = 1; p[FT_MM_B_NMAT] = 1;
  const void *ins[2] = {A, B};
  void *outs[1] = {Y}, *scratch = scratch_buf(ft_bf16_mm_scratch(M, K, 1));
  double f[4] = {1, 1, 0, 0}, worst = 0;
  ft_matmul_bf16(p, f, ins, outs, scratch);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += (double)A[i * K + k] * B[k * N + j];
      worst = fmax(worst, fabs(acc - Y[i * N + j]));
    }
  cr_assert_gt(worst, 1e-5 * K, "bf16 rounding should show: max error %g", worst);
  free(A); free(B); free(Y); free(scratch);
}

/* ---- Conv ---- */

typedef struct ccase {
  int64_t N, C, CO, G;
  int64_t in[2], k[2], s[2], d[2], pb[2], pe[2];
  int mode, bias, res; /* res: a residual added, then Relu */
} ccase;

static void conv_params(const ccase *c, int64_t *p, int64_t *out) {
  memset(p, 0, sizeof(int64_t) * FT_CV_NP);
  p[FT_CV_N] = c->N; p[FT_CV_C] = c->C; p[FT_CV_CO] = c->CO; p[FT_CV_G] = c->G;
  p[FT_CV_HAS_BIAS] = c->bias;
  p[FT_CV_MODE] = c->mode;
  p[FT_CV_RES] = c->res;
  p[FT_CV_ACT] = c->res ? FT_ACT_RELU : FT_ACT_NONE;
  out[0] = 1;
  p[FT_CV_IN] = p[FT_CV_K] = p[FT_CV_S] = p[FT_CV_D] = 1;
  p[FT_CV_OUT] = 1;
  for (int i = 0; i < 2; i++) {
    out[i + 1] = (c->in[i] + c->pb[i] + c->pe[i] - (c->k[i] - 1) * c->d[i] - 1) / c->s[i] + 1;
    p[FT_CV_IN + 1 + i] = c->in[i]; p[FT_CV_OUT + 1 + i] = out[i + 1]; p[FT_CV_K + 1 + i] = c->k[i];
    p[FT_CV_S + 1 + i] = c->s[i]; p[FT_CV_D + 1 + i] = c->d[i]; p[FT_CV_P + 1 + i] = c->pb[i];
  }
  int64_t Kg = ft_conv_kg(p), S = out[1] * out[2];
  int64_t chunk = 64 * 1024 / (4 * Kg) / FT_GEMM_NR * FT_GEMM_NR; /* small: several chunks */
  if (chunk < FT_GEMM_NR) chunk = FT_GEMM_NR;
  if (chunk > (S + 31) / 32 * 32) chunk = (S + 31) / 32 * 32;
  p[FT_CV_CHUNK] = chunk;
  p[FT_CV_PACKED] = 1;
}

static void run_conv_case(const ccase *c) {
  int64_t p[FT_CV_NP], o[3];
  conv_params(c, p, o);
  int64_t Cg = c->C / c->G, Mg = c->CO / c->G, S_in = c->in[0] * c->in[1], S_out = o[1] * o[2];
  int64_t kvol = c->k[0] * c->k[1], ny = c->N * c->CO * S_out;
  float *X = rand_buf(c->N * c->C * S_in), *W = rand_buf(c->CO * Cg * kvol), *B = rand_buf(c->CO);
  float *R = rand_buf(ny), *Y = rand_buf(ny), *Y2 = malloc(sizeof(float) * (size_t)ny);
  void *Wp = scratch_buf(ft_conv_bf16_pack_w(p, W, NULL));
  ft_conv_bf16_pack_w(p, W, Wp);
  const void *ins[4] = {X, Wp, B, R};
  double f[4] = {1, 1, 0, 0};
  void *outs[1] = {Y}, *outs2[1] = {Y2}, *scratch = scratch_buf(ft_conv_bf16_scratch(p) + 64);
  ft_conv_bf16(p, f, ins, outs, scratch);
  bf16_portable_conv(p, f, ins, outs2, scratch);
  double *want = malloc(sizeof(double) * (size_t)ny);
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t co = 0; co < c->CO; co++)
      for (int64_t y = 0; y < o[1]; y++)
        for (int64_t x = 0; x < o[2]; x++) {
          int64_t g = co / Mg, at = ((n * c->CO + co) * o[1] + y) * o[2] + x;
          double acc = c->bias ? B[co] : 0;
          for (int64_t ci = 0; ci < Cg; ci++)
            for (int64_t ky = 0; ky < c->k[0]; ky++)
              for (int64_t kx = 0; kx < c->k[1]; kx++) {
                int64_t iy = y * c->s[0] + ky * c->d[0] - c->pb[0], ix = x * c->s[1] + kx * c->d[1] - c->pb[1];
                if (iy < 0 || iy >= c->in[0] || ix < 0 || ix >= c->in[1]) continue;
                acc += r16(X[((n * c->C + g * Cg + ci) * c->in[0] + iy) * c->in[1] + ix]) *
                       r16(W[((co * Cg + ci) * c->k[0] + ky) * c->k[1] + kx]);
              }
          if (c->res) acc = fmax(acc + R[at], 0);
          want[at] = acc;
        }
  char what[120];
  snprintf(what, sizeof what, "conv mode %d C=%lld CO=%lld G=%lld res=%d", c->mode, (long long)c->C, (long long)c->CO,
           (long long)c->G, c->res);
  expect_close(Y, want, ny, Cg * kvol, what);
  expect_same_paths(Y, Y2, ny, Cg * kvol, what);
  free(X); free(W); free(B); free(R); free(Y); free(Y2); free(Wp); free(scratch); free(want);
}

Test(bf16, conv_modes) {
  const ccase cs[] = {
      {2, 6, 10, 2, {17, 19}, {3, 5}, {2, 3}, {2, 1}, {1, 2}, {0, 1}, FT_CV_IM2COL, 1, 0},
      {1, 5, 13, 1, {20, 23}, {3, 3}, {1, 1}, {2, 3}, {2, 0}, {1, 3}, FT_CV_SHIFTED, 1, 0},
      {2, 9, 6, 3, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_SHIFTED, 0, 0},
      {1, 3, 16, 1, {37, 35}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 2}, FT_CV_SHIFTED, 1, 0},
      {2, 8, 12, 2, {21, 18}, {3, 3}, {2, 1}, {1, 2}, {1, 0}, {0, 2}, FT_CV_SHIFTED, 1, 1},
      {2, 20, 30, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, FT_CV_POINTWISE, 1, 0},
      {1, 33, 40, 1, {7, 9}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, FT_CV_POINTWISE, 1, 1},
      {1, 64, 64, 1, {30, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_SHIFTED, 1, 1},
      /* K = 9 * 500 > 2 * FT_BF16_KB2: the input packed in blocks */
      {1, 500, 14, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_SHIFTED, 1, 1},
      /* the transposed modes: W^T as B panels, the input pair-packed; an odd K, a C_out that
         leaves a part-empty vector (40 = 32 + 8), groups, several im2col chunks */
      {2, 21, 40, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, FT_CV_POINTWISE_T, 1, 1},
      {1, 16, 12, 2, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, FT_CV_POINTWISE_T, 1, 0},
      {2, 10, 36, 1, {13, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, FT_CV_IM2COL_T, 1, 1},
      {1, 64, 48, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_IM2COL_T, 1, 1},
      {1, 30, 20, 2, {9, 9}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, FT_CV_IM2COL_T, 0, 0},
      /* im2col^T by whole output rows (conv_bf16.h's vector im2col with AVX-512): the whole
         plane with dilation, uneven pads, stride 1 and 2; chunks of whole rows, rows of 8 and
         of 32 (two vectors) */
      {1, 7, 20, 1, {12, 15}, {3, 3}, {1, 1}, {2, 2}, {2, 1}, {1, 2}, FT_CV_IM2COL_T, 1, 0},
      {1, 5, 17, 1, {16, 16}, {3, 3}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, FT_CV_IM2COL_T, 0, 1},
      {1, 70, 24, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_IM2COL_T, 1, 1},
      {1, 4, 16, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, FT_CV_IM2COL_T, 0, 0},
      {1, 3, 16, 1, {64, 64}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, FT_CV_IM2COL_T, 1, 1},
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) run_conv_case(&cs[i]);
}
