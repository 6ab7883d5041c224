/* ConvInteger's im2col + integer GEMM kernel (templates/c/quant.h) against a plain seven-deep
 * reference loop in int64, on odd shapes: groups and depthwise, asymmetric padding, strides,
 * dilations, 1-D, 2-D and 3-D windows, output channels not a multiple of the GEMM's block,
 * positions over several tiles and several column chunks, zero points absent, scalar and per
 * channel, every uint8/int8 pairing, and 1 vs several threads. Integer sums are exact: the
 * results must be equal. Self-contained: includes the kernel template directly. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

static unsigned rng_state = 777u;
static int rnd(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (int)((rng_state >> 8) & 0xff);
}

typedef struct qcase {
  int64_t N, C, M, G;
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
  int x_signed, w_signed, has_xz, nwz; /* nwz: 0 none, 1 scalar, M per channel */
} qcase;

static int64_t out_dim(const qcase *q, int i) {
  return (q->in[i] + q->pb[i] + q->pe[i] - q->d[i] * (q->k[i] - 1) - 1) / q->s[i] + 1;
}

static void fill(void *buf, int64_t n, int is_signed) {
  for (int64_t i = 0; i < n; i++) {
    int v = rnd();
    if (is_signed) ((int8_t *)buf)[i] = (int8_t)(v - 128);
    else ((uint8_t *)buf)[i] = (uint8_t)v;
  }
}
static int32_t at8(const void *b, int64_t i, int is_signed) {
  return is_signed ? ((const int8_t *)b)[i] : ((const uint8_t *)b)[i];
}

static void reference(const qcase *q, const void *x, const void *w, const void *xz, const void *wz, int32_t *y) {
  int64_t od[3] = {out_dim(q, 0), out_dim(q, 1), out_dim(q, 2)}, cpg = q->C / q->G, mpg = q->M / q->G;
  int64_t isz = q->in[0] * q->in[1] * q->in[2], osz = od[0] * od[1] * od[2];
  int64_t zx = xz ? at8(xz, 0, q->x_signed) : 0;
  for (int64_t n = 0; n < q->N; n++)
    for (int64_t m = 0; m < q->M; m++) {
      int64_t g = m / mpg, zw = q->nwz ? at8(wz, q->nwz > 1 ? m : 0, q->w_signed) : 0;
      for (int64_t o = 0; o < osz; o++) {
        int64_t o0 = o / (od[1] * od[2]), o1 = o / od[2] % od[1], o2 = o % od[2], acc = 0;
        for (int64_t ic = 0; ic < cpg; ic++)
          for (int64_t a = 0; a < q->k[0]; a++)
            for (int64_t b = 0; b < q->k[1]; b++)
              for (int64_t c = 0; c < q->k[2]; c++) {
                int64_t i0 = o0 * q->s[0] - q->pb[0] + a * q->d[0], i1 = o1 * q->s[1] - q->pb[1] + b * q->d[1];
                int64_t i2 = o2 * q->s[2] - q->pb[2] + c * q->d[2];
                if (i0 < 0 || i0 >= q->in[0] || i1 < 0 || i1 >= q->in[1] || i2 < 0 || i2 >= q->in[2]) continue;
                int64_t xv = at8(x, (n * q->C + g * cpg + ic) * isz + (i0 * q->in[1] + i1) * q->in[2] + i2, q->x_signed);
                int64_t wv = at8(w, ((m * cpg + ic) * q->k[0] + a) * q->k[1] * q->k[2] + b * q->k[2] + c, q->w_signed);
                acc += (xv - zx) * (wv - zw);
              }
        y[(n * q->M + m) * osz + o] = (int32_t)acc;
      }
    }
}

/* the plain loop the kernel replaced (QLinearConv still runs it), as a second reference */
FT_Q_INTEGER(convloop, FT_QCONV_LOOP, 24, u8, uint8_t, u8, uint8_t)
FT_Q_INTEGER(convloop, FT_QCONV_LOOP, 24, u8, uint8_t, i8, int8_t)
FT_Q_INTEGER(convloop, FT_QCONV_LOOP, 24, i8, int8_t, u8, uint8_t)
FT_Q_INTEGER(convloop, FT_QCONV_LOOP, 24, i8, int8_t, i8, int8_t)

typedef void (*qkernel)(const int64_t *, const double *, const void *const *, void *const *, void *);

static void run_case(const qcase *q, int threads) {
  int64_t p[32] = {q->N, q->C, q->M, q->G, q->nwz, 1};
  for (int i = 0; i < 3; i++) {
    p[6 + i] = q->in[i];
    p[9 + i] = out_dim(q, i);
    p[12 + i] = q->k[i];
    p[15 + i] = q->s[i];
    p[18 + i] = q->d[i];
    p[21 + i] = q->pb[i];
  }
  p[24] = q->has_xz;
  p[25] = 0;
  int64_t osz = p[9] * p[10] * p[11], nx = q->N * q->C * q->in[0] * q->in[1] * q->in[2];
  int64_t nw = q->M * (q->C / q->G) * q->k[0] * q->k[1] * q->k[2], ny = q->N * q->M * osz;
  void *x = malloc((size_t)nx), *w = malloc((size_t)nw), *xz = malloc(1), *wz = malloc((size_t)q->M);
  fill(x, nx, q->x_signed);
  fill(w, nw, q->w_signed);
  fill(xz, 1, q->x_signed);
  fill(wz, q->M, q->w_signed);
  int32_t *want = malloc(sizeof(int32_t) * (size_t)ny), *got = malloc(sizeof(int32_t) * (size_t)ny);
  reference(q, x, w, q->has_xz ? xz : NULL, q->nwz ? wz : NULL, want);
  memset(got, 0x5a, sizeof(int32_t) * (size_t)ny);
  void *scratch = aligned_alloc(64, (ft_qconv_scratch(p) + 63) & ~(size_t)63);
  static const qkernel kernels[2][2] = {{ft_conv_integer_u8_u8, ft_conv_integer_u8_i8},
                                        {ft_conv_integer_i8_u8, ft_conv_integer_i8_i8}};
  static const qkernel loops[2][2] = {{ft_convloop_integer_u8_u8, ft_convloop_integer_u8_i8},
                                      {ft_convloop_integer_i8_u8, ft_convloop_integer_i8_i8}};
  const void *in[4] = {x, w, q->has_xz ? xz : NULL, q->nwz ? wz : NULL};
  void *out[1] = {got};
  loops[q->x_signed][q->w_signed](p, NULL, in, out, NULL);
  cr_assert_eq(memcmp(got, want, sizeof(int32_t) * (size_t)ny), 0, "the plain loop agrees with the reference");
  memset(got, 0x5a, sizeof(int32_t) * (size_t)ny);
  ft_set_threads(threads);
  kernels[q->x_signed][q->w_signed](p, NULL, in, out, scratch);
  ft_set_threads(0);
  for (int64_t i = 0; i < ny; i++)
    if (got[i] != want[i])
      cr_assert_fail("N%lld C%lld M%lld G%lld k%lldx%lldx%lld, %d threads: element %lld: got %d, want %d", (long long)q->N,
                     (long long)q->C, (long long)q->M, (long long)q->G, (long long)q->k[0], (long long)q->k[1],
                     (long long)q->k[2], threads, (long long)i, got[i], want[i]);
  free(x); free(w); free(xz); free(wz); free(want); free(got); free(scratch);
}

static const qcase cases[] = {
    /* 2-D 3x3, pad 1, x zero point, per-channel w zero points */
    {1, 3, 5, 1, {1, 7, 9}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}, 0, 0, 1, 5},
    /* groups, stride 2, dilation 2, asymmetric padding, two images, int8 x */
    {2, 4, 6, 2, {1, 11, 8}, {1, 3, 2}, {1, 2, 2}, {1, 2, 2}, {0, 2, 1}, {0, 0, 1}, 1, 0, 1, 1},
    /* depthwise 5x5 stride 3, no x zero point, int8 weights */
    {1, 5, 5, 5, {1, 13, 12}, {1, 5, 5}, {1, 3, 3}, {1, 1, 1}, {0, 2, 2}, {0, 2, 2}, 0, 1, 0, 1},
    /* 1-D, 9 output channels (not a multiple of 4), 300 positions (several tiles) */
    {1, 3, 9, 1, {1, 1, 303}, {1, 1, 4}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 1, 1, 1, 9},
    /* 3-D window */
    {1, 2, 3, 1, {3, 4, 5}, {2, 2, 2}, {1, 1, 2}, {1, 1, 1}, {1, 0, 1}, {0, 1, 0}, 0, 1, 1, 0},
    /* K = 576: 2500 positions take two column chunks */
    {1, 64, 10, 1, {1, 50, 50}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}, 0, 0, 1, 10},
    /* grouped with several output channels per group, uint8 x, int8 w, 1x1 */
    {1, 6, 12, 3, {1, 9, 7}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, 1, 1, 12},
};

Test(quant_conv, conv_integer_matches_the_plain_loop_on_one_thread) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], 1);
}

Test(quant_conv, conv_integer_matches_the_plain_loop_on_several_threads) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], 3);
}
