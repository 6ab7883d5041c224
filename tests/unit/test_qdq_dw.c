/* The QDQ depthwise conv (templates/c/conv.h, ft_conv_qdw_f32: QuantizeLinear -> DequantizeLinear
 * -> Conv(group = C) with an int8 per-channel weight as one kernel) against a plain reference in
 * integers: x quantized as QuantizeLinear does (x / scale in float32, round half to even, + zero
 * point, saturated), the sums of (xq - zx) * w in int64, then (float)acc * (x_scale * w_scale[c])
 * (+ bias in one fma) and the activation. The kernel's float sums are exact, so the results must
 * be bit-equal: on the channel-vector path (packed weights, AVX-512), on the plain loops
 * (unpacked weights, as constant folding and ftax-eager call it; and a window too large for the
 * vector path) and for 1 and 3 threads. Channel counts 17, 19, 33 (partial 16-channel blocks),
 * 3x3 and 5x5, stride 1 and 2, dilation, asymmetric pads, row widths that leave partial chunks
 * and transposes, two images, per-channel and per-tensor scales, uint8 and int8 zero points,
 * int8 and uint8 weights, with and without bias, no activation, Relu and Clip; inputs reaching
 * past the quantized range on both ends (saturation). Self-contained: includes the kernel
 * template directly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "parallel.h"

#include "kernel_bufs.h"

typedef struct qdcase {
  int64_t N, C, H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int xz_kind;   /* 0 none, 1 uint8, 2 int8 */
  int xz;        /* its value */
  int w_signed;  /* int8 weights (else uint8) */
  int per_chan;  /* one w_scale per channel (else one) */
  int bias, act; /* act: FT_ACT_NONE, FT_ACT_RELU, FT_ACT_CLIP (lo -0.25, hi 0.5) */
} qdcase;

static void params(const qdcase *q, int64_t *p) {
  memset(p, 0, sizeof(int64_t) * FT_QDW_NP);
  p[FT_CV_MODE] = FT_CV_DEPTHWISE;
  p[FT_CV_N] = q->N;
  p[FT_CV_C] = p[FT_CV_CO] = p[FT_CV_G] = q->C;
  p[FT_CV_HAS_BIAS] = q->bias;
  p[FT_CV_ACT] = q->act;
  int64_t in[3] = {1, q->H, q->W}, k[3] = {1, q->kh, q->kw}, s[3] = {1, q->sh, q->sw}, d[3] = {1, q->dh, q->dw};
  int64_t pb[3] = {0, q->pt, q->pl}, pe[3] = {0, q->pb, q->pr};
  for (int i = 0; i < 3; i++) {
    p[FT_CV_IN + i] = in[i];
    p[FT_CV_OUT + i] = (in[i] + pb[i] + pe[i] - (k[i] - 1) * d[i] - 1) / s[i] + 1;
    p[FT_CV_K + i] = k[i];
    p[FT_CV_S + i] = s[i];
    p[FT_CV_D + i] = d[i];
    p[FT_CV_P + i] = pb[i];
  }
  p[FT_QDW_XZ] = q->xz_kind;
  p[FT_QDW_W_SIGNED] = q->w_signed;
  p[FT_QDW_NWS] = q->per_chan ? q->C : 1;
}

static float quantized(float x, float s, const qdcase *q) {
  float lo = q->xz_kind == 2 ? -128.0f : 0.0f, hi = q->xz_kind == 2 ? 127.0f : 255.0f;
  float v = rintf(x / s) + (float)q->xz;
  return v < lo ? lo : v > hi ? hi : v;
}

static void reference(const qdcase *q, const int64_t *p, const float *x, float xs, const void *w, const float *ws,
                      const float *b, float *y) {
  int64_t OH = p[FT_CV_OUT + 1], OW = p[FT_CV_OUT + 2], T = q->kh * q->kw;
  for (int64_t n = 0; n < q->N; n++)
    for (int64_t c = 0; c < q->C; c++) {
      float sc = xs * ws[q->per_chan ? c : 0];
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          int64_t acc = 0;
          for (int64_t a = 0; a < q->kh; a++)
            for (int64_t e = 0; e < q->kw; e++) {
              int64_t ih = oh * q->sh - q->pt + a * q->dh, iw = ow * q->sw - q->pl + e * q->dw;
              if (ih < 0 || ih >= q->H || iw < 0 || iw >= q->W) continue;
              int64_t xq = (int64_t)quantized(x[((n * q->C + c) * q->H + ih) * q->W + iw], xs, q) - q->xz;
              int64_t wv = q->w_signed ? ((const int8_t *)w)[c * T + a * q->kw + e] : ((const uint8_t *)w)[c * T + a * q->kw + e];
              acc += xq * wv;
            }
          float v = b ? fmaf((float)acc, sc, b[c]) : (float)acc * sc;
          if (q->act == FT_ACT_RELU) v = v < 0 ? 0 : v;
          if (q->act == FT_ACT_CLIP) v = v < -0.25f ? -0.25f : v > 0.5f ? 0.5f : v;
          y[((n * q->C + c) * OH + oh) * OW + ow] = v;
        }
    }
}

/* packed: weights as ftaxc packs them (the vector path where it takes the geometry); x8: x
 * given already quantized (FT_QDW_XQ: its 8-bit values, of the zero point's type), as the conv
 * before it writes them when it requantizes its output */
static void run_case_x(const qdcase *q, int packed, int threads, int x8) {
  int64_t p[FT_QDW_NP];
  params(q, p);
  p[FT_QDW_XQ] = !x8 ? 0 : q->xz_kind == 2 ? 2 : 1;
  int64_t T = q->kh * q->kw, OHW = p[FT_CV_OUT + 1] * p[FT_CV_OUT + 2], nx = q->N * q->C * q->H * q->W;
  int64_t ny = q->N * q->C * OHW;
  float xs = 0.02f, *x = rand_buf(nx), *ws = rand_buf(q->C), *b = rand_buf(q->C);
  for (int64_t i = 0; i < nx; i++) x[i] *= 3.0f; /* [-3, 3): past the range of 255 steps of 0.02 from the zero point */
  for (int64_t c = 0; c < q->C; c++) ws[c] = 0.001f + fabsf(ws[c]) * 0.01f;
  for (int64_t c = 0; c < q->C; c++) b[c] *= 0.5f;
  uint8_t *w = malloc((size_t)(q->C * T));
  for (int64_t i = 0; i < q->C * T; i++) w[i] = (uint8_t)(frand() * 128.0f + 128.0f); /* int8: -128..127 as bytes */
  int8_t zx8 = (int8_t)q->xz;
  uint8_t zxu = (uint8_t)q->xz;
  const void *zx = q->xz_kind == 2 ? (const void *)&zx8 : (const void *)&zxu;
  void *wp = NULL;
  if (packed) {
    wp = scratch_buf(ft_conv_qdw_pack_w(p, w, NULL));
    ft_conv_qdw_pack_w(p, w, wp);
    p[FT_CV_PACKED] = 1;
  }
  uint8_t *xq = malloc((size_t)nx);
  for (int64_t i = 0; i < nx; i++) xq[i] = (uint8_t)(int)quantized(x[i], xs, q); /* int8: its two's complement */
  const void *ins[7] = {x8 ? (const void *)xq : x, &xs, q->xz_kind ? zx : NULL, packed ? wp : w, ws, NULL, q->bias ? b : NULL};
  float *y = rand_buf(ny), *want = malloc(sizeof(float) * (size_t)ny);
  void *outs[1] = {y}, *scratch = scratch_buf(sizeof(float) * (size_t)q->C);
  double f[4] = {1, 1, -0.25, 0.5};
  ft_set_threads(threads);
  ft_conv_qdw_f32(p, f, ins, outs, scratch);
  ft_set_threads(0);
  reference(q, p, x, xs, w, ws, q->bias ? b : NULL, want);
  for (int64_t i = 0; i < ny; i++)
    if (memcmp(&y[i], &want[i], sizeof(float))) {
      cr_assert_fail("C=%lld %lldx%lld s%lld x%lld pads %lld,%lld,%lld,%lld N=%lld packed=%d threads=%d x8=%d xz=%d/%d w_signed=%d "
                     "per_chan=%d bias=%d act=%d: output %lld is %.9g, want %.9g",
                     (long long)q->C, (long long)q->kh, (long long)q->kw, (long long)q->sh, (long long)q->W,
                     (long long)q->pt, (long long)q->pl, (long long)q->pb, (long long)q->pr, (long long)q->N, packed,
                     threads, x8, q->xz_kind, q->xz, q->w_signed, q->per_chan, q->bias, q->act, (long long)i, y[i],
                     want[i]);
    }
  free(x); free(xq); free(ws); free(b); free(w); free(wp); free(y); free(want); free(scratch);
}

static void run_case(const qdcase *q, int packed, int threads) { run_case_x(q, packed, threads, 0); }

static const qdcase cases[] = {
    /* N   C   H   W  kh kw sh sw dh dw pt pl pb pr xzk xz  ws pc bias act */
    {1, 17, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 128, 1, 1, 1, FT_ACT_CLIP},
    {2, 19, 13, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, FT_ACT_RELU},
    {1, 33, 28, 28, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, 0, 1, 0, 0, FT_ACT_NONE},
    {1, 33, 29, 27, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 2, -5, 1, 1, 1, FT_ACT_CLIP},
    {2, 17, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, FT_ACT_RELU},
    {1, 19, 56, 56, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 1, 200, 0, 1, 1, FT_ACT_NONE},
    {1, 17, 11, 23, 3, 5, 1, 2, 2, 1, 0, 2, 2, 1, 1, 17, 1, 1, 1, FT_ACT_CLIP},
    {1, 16, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 128, 1, 1, 1, FT_ACT_NONE},
    {1, 19, 112, 112, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 60, 1, 1, 1, FT_ACT_CLIP},
    /* 81 taps: more than the vector path takes, plain loops with packed weights too */
    {2, 17, 12, 12, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4, 1, 128, 1, 1, 1, FT_ACT_RELU},
};

Test(qdq_dw, matches_the_integer_reference_packed_and_unpacked) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (int packed = 0; packed <= 1; packed++) run_case(&cases[i], packed, 1);
}

Test(qdq_dw, same_bits_on_three_threads) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (int packed = 0; packed <= 1; packed++) run_case(&cases[i], packed, 3);
}

/* x already 8-bit (uint8, or int8 with an int8 zero point): the same bits as quantizing it */
Test(qdq_dw, eight_bit_x_read_as_it_is) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (int packed = 0; packed <= 1; packed++) run_case_x(&cases[i], packed, i % 2 ? 3 : 1, 1);
}

/* 1-D: [N, C, W] as conv.h takes it (leading spatial sizes 1) */
Test(qdq_dw, one_dimensional) {
  qdcase q = {2, 33, 1, 50, 1, 5, 1, 2, 1, 1, 0, 2, 0, 2, 1, 128, 1, 1, 1, FT_ACT_CLIP};
  run_case(&q, 1, 1);
  run_case(&q, 0, 3);
}

/* The fused pattern end to end: tests/models/qdq_dw (tests/e2e/make_qdq_dw.py; its outputs are
 * compared by e2e_qdq_dw_0) compiles with both depthwise convs as ftax.QDQConv, their Clip and
 * Relu in the epilogue, and no Conv, Clip, Relu or DequantizeLinear before a conv left. */
Test(qdq_dw, the_model_fuses_its_depthwise_convs) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' '%s/tests/models/qdq_dw/model.onnx' -o '%s/qdq_dw_fused' --dump 2>&1", FTAXC,
           FTAX_SOURCE_DIR, FTAX_BUILD_DIR);
  FILE *f = popen(cmd, "r");
  cr_assert(f, "cannot run %s", cmd);
  char line[1024];
  int qdq = 0, depthwise = 0, other = 0, dq = 0;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, " QDQConv ")) {
      qdq++;
      /* the model's depthwise convs write r2 and r4 */
      depthwise += strstr(line, " r2:float32") != NULL || strstr(line, " r4:float32") != NULL;
    }
    if (strstr(line, " Conv ") || strstr(line, " Clip ") || strstr(line, " Relu ")) other++;
    if (strstr(line, " DequantizeLinear ")) dq++;
  }
  cr_assert_eq(pclose(f), 0, "ftaxc failed");
  cr_expect_eq(qdq, 4, "QDQConv nodes: %d", qdq);
  cr_expect_eq(depthwise, 2, "depthwise QDQConv nodes: %d", depthwise);
  cr_expect_eq(other, 0, "Conv, Clip or Relu left: %d", other);
  cr_expect_eq(dq, 1, "DequantizeLinear left: %d (only the one before GlobalAveragePool)", dq);
}
