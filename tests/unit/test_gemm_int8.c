/* The int8 GEMM core (templates/c/gemm_int8.h) against a plain integer reference, on odd shapes
 * (M, N, K not multiples of the 6 x 64 tile or of 4), every operand pairing (A uint8, int8 or
 * float32 quantized on the way in; B int8 or uint8), zero points absent, scalar and per column,
 * B packed ahead or at run time, and every epilogue: int32, float32 with per-tensor or
 * per-channel scale, bias and Relu, requantized uint8/int8 with an int32 bias. Both builds of the
 * core run: this file's (vpdpbusd where the compiler targets VNNI) and gemm_int8_portable.c
 * (plain C); integer sums are exact, so both must equal the reference bit for bit, and the
 * float epilogues compute the same float expressions as the reference. One convolution case
 * (padding, stride, dilation, float32 image) checks the im2col path and the transposed store,
 * and the same conv as W.X (the im2col rows packed per panel, rows stored directly).
 * 1x1 convs of stride 1 as W.X (FT_I8_WX: weight rows broadcast, the image packed 4 channels per
 * pixel, rows stored without a transpose) run over odd channel and pixel counts, batch 2, 1 and
 * 3 threads, every image kind and every epilogue against an integer reference.
 * The dynamic form (ftax.DynamicQuantizeScale feeding ftax.QDQMatMul with a float32 A) runs
 * against DynamicQuantizeLinear's full kernel, an integer matmul and the float epilogue. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_int8.h"
#include "quant.h"

const char *gemm_int8_portable_path(void);
void gemm_int8_portable(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch);
size_t gemm_int8_portable_pack(const int64_t *p, const void *src, void *dst);
void gemm_int8_portable_set_threads(int n);

static unsigned rng = 4242u;
static int rnd8(void) {
  rng = rng * 1664525u + 1013904223u;
  return (int)((rng >> 8) & 0xff);
}

typedef struct icase {
  int64_t M, N, K;
  int a_kind, b_signed, out, nza, nzb, nsb, bias, relu, packed, az_signed;
  int act; /* float32 out: FT_I8_ACT (gemm.h's FT_ACT_*), with Clip's bounds in clip[] */
} icase;

static const double clip[2] = {-0.5, 1.25};

/* inputs in the roles' order: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, bias */
typedef struct ibufs {
  void *a, *b, *az, *bz, *bias;
  float as, ys, *bs;
  uint8_t yz_u;
  int8_t yz_s;
} ibufs;

static int32_t ld8(const void *p, int64_t i, int s) { return s ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i]; }

static void make(const icase *q, ibufs *b) {
  int64_t M = q->M, N = q->N, K = q->K;
  b->a = malloc((size_t)(M * K * 4));
  for (int64_t i = 0; i < M * K; i++) {
    if (q->a_kind == 2) ((float *)b->a)[i] = (float)(rnd8() - 120) * 0.37f + 0.185f * (float)(i % 3); /* ties too */
    else ((uint8_t *)b->a)[i] = (uint8_t)rnd8();
  }
  b->b = malloc((size_t)(K * N));
  for (int64_t i = 0; i < K * N; i++) ((uint8_t *)b->b)[i] = (uint8_t)rnd8();
  b->az = malloc(1);
  *(uint8_t *)b->az = (uint8_t)(rnd8() % 200);
  b->bz = malloc((size_t)N);
  for (int64_t i = 0; i < N; i++) ((uint8_t *)b->bz)[i] = (uint8_t)(rnd8() % 50 + (q->b_signed ? 0 : 100));
  b->bs = malloc(sizeof(float) * (size_t)N);
  for (int64_t i = 0; i < N; i++) b->bs[i] = 0.001f * (float)(1 + rnd8());
  b->as = 0.37f;
  b->ys = 3.1f;
  b->yz_u = 17;
  b->yz_s = -9;
  b->bias = malloc(sizeof(float) * (size_t)N);
  for (int64_t i = 0; i < N; i++) {
    if (q->bias == 1) ((float *)b->bias)[i] = (float)(rnd8() - 128) * 0.01f;
    else ((int32_t *)b->bias)[i] = (rnd8() - 128) * 7;
  }
}

static void release(ibufs *b) {
  free(b->a); free(b->b); free(b->az); free(b->bz); free(b->bs); free(b->bias);
}

/* the quantized value of A's element i and A's zero point, as the kernel sees them */
static int32_t a_val(const icase *q, const ibufs *b, int64_t i) {
  if (q->a_kind != 2) return ld8(b->a, i, q->a_kind == 1);
  int32_t z = q->nza ? ld8(b->az, 0, q->az_signed) : 0;
  float v = rintf(((const float *)b->a)[i] / b->as) + (float)z;
  float lo = q->az_signed ? -128.0f : 0.0f, hi = q->az_signed ? 127.0f : 255.0f;
  return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

/* the reference output element (m, n) into y (4-byte or 1-byte elements as out says) */
static void reference(const icase *q, const ibufs *b, void *y) {
  for (int64_t m = 0; m < q->M; m++)
    for (int64_t n = 0; n < q->N; n++) {
      int32_t za = q->nza ? ld8(b->az, 0, q->a_kind == 1 || q->az_signed) : 0;
      int32_t zb = q->nzb ? ld8(b->bz, q->nzb > 1 ? n : 0, q->b_signed) : 0;
      int64_t acc = 0;
      for (int64_t k = 0; k < q->K; k++) acc += (int64_t)(a_val(q, b, m * q->K + k) - za) * (ld8(b->b, k * q->N + n, q->b_signed) - zb);
      int32_t a32 = (int32_t)acc;
      int64_t at = m * q->N + n;
      float s = q->out == FT_I8_OUT_S32 ? 1.0f : q->out == FT_I8_OUT_F32 ? b->as * b->bs[q->nsb > 1 ? n : 0] : b->as * b->bs[q->nsb > 1 ? n : 0] / b->ys;
      if (q->out == FT_I8_OUT_S32) ((int32_t *)y)[at] = a32;
      else if (q->out == FT_I8_OUT_F32) {
        float v = q->bias == 1 ? fmaf((float)a32, s, ((const float *)b->bias)[n]) : (float)a32 * s;
        if (q->relu && v < 0) v = 0;
        if (q->act) { /* the epilogue's activation, one element at a time */
          ft_gemm_epi e = {.act = q->act, .lo = (float)clip[0], .hi = (float)clip[1]};
          ft_gemm_act(&v, 1, &e);
        }
        ((float *)y)[at] = v;
      } else {
        if (q->bias == 2) a32 += ((const int32_t *)b->bias)[n];
        float v = rintf((float)a32 * s) + (float)(q->out == FT_I8_OUT_U8 ? b->yz_u : b->yz_s);
        if (q->out == FT_I8_OUT_U8) ((uint8_t *)y)[at] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        else ((int8_t *)y)[at] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
      }
    }
}

static void params(const icase *q, int64_t *p) {
  memset(p, 0, sizeof(int64_t) * FT_I8_NP);
  p[FT_I8_M] = q->M; p[FT_I8_N] = q->N; p[FT_I8_K] = q->K;
  p[FT_I8_A_KIND] = q->a_kind; p[FT_I8_B_SIGNED] = q->b_signed; p[FT_I8_OUT] = q->out;
  p[FT_I8_B_RS] = q->N; p[FT_I8_B_CS] = 1; p[FT_I8_A_RS] = q->K;
  p[FT_I8_Y_RS] = q->N; p[FT_I8_Y_CS] = 1; p[FT_I8_NBATCH] = 1;
  p[FT_I8_NZA] = q->nza; p[FT_I8_NZB] = q->nzb; p[FT_I8_NSB] = q->out == FT_I8_OUT_S32 ? 0 : q->nsb;
  p[FT_I8_BIAS] = q->bias; p[FT_I8_RELU] = q->relu; p[FT_I8_AZ_SIGNED] = q->az_signed; p[FT_I8_ACT] = q->act;
  int64_t roles[9] = {0, 1, q->nza ? 2 : -1, 3, q->out == FT_I8_OUT_S32 ? -1 : 4, q->nzb ? 5 : -1,
                      q->out >= FT_I8_OUT_U8 ? 6 : -1, q->out >= FT_I8_OUT_U8 ? 7 : -1, q->bias ? 8 : -1};
  memcpy(p + FT_I8_IN_A, roles, sizeof roles);
}

typedef void (*kern_fn)(const int64_t *, const double *, const void *const *, void *const *, void *);
typedef size_t (*pack_fn)(const int64_t *, const void *, void *);

static void run_one(const icase *q, kern_fn kern, pack_fn pack, const char *path) {
  ibufs b;
  make(q, &b);
  int64_t p[FT_I8_NP];
  params(q, p);
  size_t esz = q->out <= FT_I8_OUT_F32 ? 4 : 1, ny = (size_t)(q->M * q->N) * esz;
  void *want = calloc(ny + 1, 1), *got = calloc(ny + 1, 1), *packed = NULL;
  reference(q, &b, want);
  const void *in[9] = {b.a, &b.as, b.az, b.b, b.bs, b.bz, &b.ys, q->out == FT_I8_OUT_U8 ? (void *)&b.yz_u : (void *)&b.yz_s, b.bias};
  if (q->packed) {
    packed = aligned_alloc(64, (pack(p, b.b, NULL) + 63) & ~(size_t)63);
    pack(p, b.b, packed);
    in[3] = packed;
    p[FT_I8_PACKED] = 1;
  }
  void *scratch = malloc(ft_i8_scratch(p));
  void *out[1] = {got};
  kern(p, clip, in, out, scratch);
  cr_expect(memcmp(want, got, ny) == 0, "%s: M %lld N %lld K %lld a_kind %d b_signed %d out %d nza %d nzb %d nsb %d bias %d relu %d packed %d act %d: output differs",
            path, (long long)q->M, (long long)q->N, (long long)q->K, q->a_kind, q->b_signed, q->out, q->nza, q->nzb, q->nsb,
            q->bias, q->relu, q->packed, q->act);
  free(want); free(got); free(packed); free(scratch);
  release(&b);
}

/* M % 6 of 1-2 and 3-4 runs the last sliver on the 2- and 4-row kernels: with panels of every
 * width (16 to 64 columns) */
static const int64_t shapes[][3] = {{1, 1, 1}, {7, 17, 5}, {13, 70, 67}, {6, 64, 8}, {29, 130, 33}, {2, 200, 300}, {700, 20, 300}, {4500, 16, 4},
                                    {37, 200, 130}, {128, 96, 97}, {10, 130, 33}, {16, 112, 20}, {8, 96, 9}, {3, 176, 40}, {9, 240, 7}};

static void sweep(kern_fn kern, pack_fn pack, const char *path) {
  int i = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int a_kind = 0; a_kind < 3; a_kind++)
      for (int b_signed = 0; b_signed < 2; b_signed++)
        for (int out = 0; out < 4; out++, i++) {
          icase q = {shapes[s][0], shapes[s][1], shapes[s][2], a_kind, b_signed, out,
                     i % 3 != 0, i % 3, i % 2 ? 2 : 1, 0, 0, i % 2, (i / 2) % 2 && a_kind == 2, 0};
          q.nzb = q.nzb == 2 ? 2 : q.nzb; /* 0 none, 1 scalar, 2 per column */
          if (q.nzb == 2) q.nzb = (int)q.N;
          if (q.nsb == 2) q.nsb = (int)q.N;
          if (out == FT_I8_OUT_F32) {
            q.bias = i % 4 < 2 ? 1 : 0;
            q.relu = i % 5 < 2;
            q.act = (int[]){0, FT_ACT_GELU, 0, FT_ACT_CLIP, FT_ACT_TANH}[i % 5]; /* vector and scalar-op code */
          }
          if (out >= FT_I8_OUT_U8) q.bias = i % 4 < 2 ? 2 : 0;
          run_one(&q, kern, pack, path);
        }
}

Test(gemm_int8, native_matches_reference) { sweep(ft_gemm_int8, ft_i8_pack_b, FT_I8_PATH); }

Test(gemm_int8, portable_matches_reference) {
  cr_assert_str_eq(gemm_int8_portable_path(), "portable");
  sweep(gemm_int8_portable, gemm_int8_portable_pack, "portable");
}

/* a 2-D conv of a float32 image, 2 images, in one of three geometries (wide 0): 5 channels 9 x 7,
 * 11 output channels of 3 x 2 taps, stride (2, 1), dilation (1, 2), padding (1, 0 | 2, 1); or
 * (wide 1, 2) 3 channels 30 x 150, 9 output channels of 3 x 3 taps, padding 1, stride 2 (wide 1)
 * or (2, 1) (wide 2): rows wide enough for the stride-2 gather's 64-byte loads and for runs of
 * more than one 64-byte vector, and 1125 or 2250 positions, more than one span of W.X's im2col
 * (FT_I8_WX_SPAN), the second starting mid-row; or (wide 3) stride 1 and dilation 1, 5 channels
 * 11 x 70, 9 output channels of 3 x 2 taps, padding (1, 0 | 2, 1): W.X there is the implicit
 * form (FT_I8_WX 2: the padded image read at each tap's offset, 71 positions a row of which 70
 * are stored, 5 channels padded to 8). int8 weights per channel, a
 * uint8 zero point; float32 out with bias and Relu (act 0) or the activation act, NCHW. */
static float *conv_case(kern_fn kern, pack_fn pack, const char *path, int act, int wx, int wide) {
  const int64_t NB = 2, C = wide && wide < 3 ? 3 : 5, H = wide == 3 ? 11 : wide ? 30 : 9, W = wide == 3 ? 70 : wide ? 150 : 7;
  const int64_t MO = wide ? 9 : 11, KH = 3, KW = wide && wide < 3 ? 3 : 2;
  const int64_t SH = wide == 3 ? 1 : 2, SW = wide == 1 ? 2 : 1, DH = 1, DW = wide ? 1 : 2, PT = 1, PL = wide && wide < 3 ? 1 : 0;
  const int64_t PB = wide && wide < 3 ? 1 : 2, PR = 1;
  const int64_t OH = (H + PT + PB - DH * (KH - 1) - 1) / SH + 1, OW = (W + PL + PR - DW * (KW - 1) - 1) / SW + 1, K = C * KH * KW;
  float *x = malloc(sizeof(float) * (size_t)(NB * C * H * W)), *bs = malloc(sizeof(float) * MO), *bias = malloc(sizeof(float) * MO);
  int8_t *w = malloc((size_t)(MO * K));
  for (int64_t i = 0; i < NB * C * H * W; i++) x[i] = (float)(rnd8() - 100) * 0.05f;
  for (int64_t i = 0; i < MO * K; i++) w[i] = (int8_t)(rnd8() - 128);
  for (int64_t i = 0; i < MO; i++) { bs[i] = 0.002f * (float)(1 + i); bias[i] = (float)(rnd8() - 128) * 0.01f; }
  float as = 0.05f;
  uint8_t az = 100;
  float *want = calloc((size_t)(NB * MO * OH * OW), sizeof(float)), *got = calloc((size_t)(NB * MO * OH * OW), sizeof(float));
  for (int64_t n = 0; n < NB; n++)
    for (int64_t m = 0; m < MO; m++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          int32_t acc = 0;
          for (int64_t c = 0; c < C; c++)
            for (int64_t a = 0; a < KH; a++)
              for (int64_t bb = 0; bb < KW; bb++) {
                int64_t ih = oh * SH - PT + a * DH, iw = ow * SW - PL + bb * DW;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                float v = rintf(x[((n * C + c) * H + ih) * W + iw] / as) + (float)az;
                int32_t xq = (int32_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                acc += (xq - az) * w[((m * C + c) * KH + a) * KW + bb];
              }
          float y = (float)acc * (as * bs[m]) + bias[m];
          ft_gemm_epi e = {.act = act, .lo = (float)clip[0], .hi = (float)clip[1]};
          if (act) ft_gemm_act(&y, 1, &e);
          want[((n * MO + m) * OH + oh) * OW + ow] = act || y > 0 ? y : 0;
        }
  int64_t p[FT_I8_NP];
  memset(p, 0, sizeof p);
  p[FT_I8_M] = OH * OW; p[FT_I8_N] = MO; p[FT_I8_K] = K;
  p[FT_I8_A_KIND] = 2; p[FT_I8_B_SIGNED] = 1; p[FT_I8_OUT] = FT_I8_OUT_F32;
  p[FT_I8_B_RS] = 1; p[FT_I8_B_CS] = K; p[FT_I8_Y_RS] = 1; p[FT_I8_Y_CS] = OH * OW;
  p[FT_I8_NBATCH] = NB; p[FT_I8_A_BS] = C * H * W; p[FT_I8_Y_BS] = MO * OH * OW;
  p[FT_I8_NZA] = 1; p[FT_I8_NSB] = MO; p[FT_I8_BIAS] = 1; p[FT_I8_RELU] = !act; p[FT_I8_ACT] = act;
  int64_t roles[9] = {0, 1, 2, 3, 4, -1, -1, -1, 5};
  memcpy(p + FT_I8_IN_A, roles, sizeof roles);
  p[FT_I8_CONV] = 1; p[FT_I8_C] = C;
  int64_t win[18] = {1, H, W, 1, OH, OW, 1, KH, KW, 1, SH, SW, 1, DH, DW, 0, PT, PL};
  memcpy(p + FT_I8_WIN, win, sizeof win);
  if (wx) { /* W.X: output channels as rows, the im2col rows packed 4 per position */
    p[FT_I8_WX] = 1; p[FT_I8_M] = MO; p[FT_I8_N] = OH * OW; p[FT_I8_Y_RS] = OH * OW; p[FT_I8_Y_CS] = 1;
    if (wide == 3) { p[FT_I8_WX] = 2; p[FT_I8_K] = KH * KW * 8; } /* the implicit form, as compiler/ops/quant.c plans it */
  }
  void *packed = aligned_alloc(64, (pack(p, w, NULL) + 63) & ~(size_t)63);
  pack(p, w, packed);
  p[FT_I8_PACKED] = 1;
  const void *in[6] = {x, &as, &az, packed, bs, bias};
  void *out[1] = {got}, *scratch = malloc(ft_i8_scratch(p));
  kern(p, clip, in, out, scratch);
  int64_t bad = -1;
  /* the compiler may contract acc * scale + bias into one fma in either: within an ulp or two */
  for (int64_t i = 0; i < NB * MO * OH * OW && bad < 0; i++)
    if (fabsf(want[i] - got[i]) > 2e-7f * fabsf(want[i]) + 1e-7f) bad = i;
  cr_expect(bad < 0, "%s: conv output differs at %lld: %g, want %g", path, (long long)bad, bad < 0 ? 0.0 : got[bad], bad < 0 ? 0.0 : want[bad]);
  free(x); free(bs); free(bias); free(w); free(want); free(packed); free(scratch);
  return got;
}

Test(gemm_int8, conv_native_and_portable) {
  for (int v = 0; v < 24; v++) {
    int act = v % 3 == 0 ? 0 : v % 3 == 1 ? FT_ACT_GELU : FT_ACT_CLIP, wx = v % 6 >= 3, wide = v / 6;
    unsigned seed = rng;
    ft_set_threads(1 + 2 * (v & 1));
    gemm_int8_portable_set_threads(1 + 2 * (v & 1));
    float *a = conv_case(ft_gemm_int8, ft_i8_pack_b, FT_I8_PATH, act, wx, wide);
    rng = seed; /* the same data for the portable build: the two outputs must be equal */
    float *b = conv_case(gemm_int8_portable, gemm_int8_portable_pack, "portable", act, wx, wide);
    size_t ny = wide == 3 ? 2 * 9 * 12 * 70 : wide ? 2 * 9 * 15 * (wide == 1 ? 75 : 150) : 2 * 11 * 5 * 6;
    cr_expect(memcmp(a, b, sizeof(float) * ny) == 0, "act %d: the native and portable convs differ", act);
    free(a);
    free(b);
  }
}

/* The dynamic form: x float32 [M, K] -> DynamicQuantizeLinear -> MatMulInteger with a constant B
 * (int8 or uint8, zero point none, scalar or per column) -> Cast -> Mul(x_scale * b_scale, one
 * or per column) [+ bias] [-> act]. The reference quantizes x with DynamicQuantizeLinear's own
 * kernel (its range checked against the spec's formula here), sums in int64 and applies the
 * epilogue's float expressions; the fused path gets the scale and zero point from
 * ft_dynamic_quantize_scale_f32 and quantizes x while packing. Both must agree bit for bit.
 * fill: 0 random signs, 1 all zeros (scale 0), 2 all positive (zero point 0), 3 all negative
 * (zero point 255). */
static void dynamic_case(kern_fn kern, pack_fn pack, const char *path, int64_t M, int64_t N, int64_t K, int b_signed,
                         int nzb, int nsb, int bias, int act, int fill, int threads) {
  float *x = malloc(sizeof(float) * (size_t)(M * K)), *bs = malloc(sizeof(float) * (size_t)N);
  float *fb = malloc(sizeof(float) * (size_t)N), *want = malloc(sizeof(float) * (size_t)(M * N));
  float *got = malloc(sizeof(float) * (size_t)(M * N));
  uint8_t *b = malloc((size_t)(K * N)), *bz = malloc((size_t)N), *xq = malloc((size_t)(M * K));
  for (int64_t i = 0; i < M * K; i++) {
    float v = (float)(rnd8() - 128) * 0.0173f + 0.0041f * (float)(i % 5);
    x[i] = fill == 1 ? 0.0f : fill == 2 ? fabsf(v) + 0.01f : fill == 3 ? -fabsf(v) - 0.01f : v;
  }
  for (int64_t i = 0; i < K * N; i++) b[i] = (uint8_t)rnd8();
  for (int64_t i = 0; i < N; i++) {
    bz[i] = (uint8_t)(rnd8() % 40 + (b_signed ? 0 : 110));
    bs[i] = 0.0005f * (float)(1 + rnd8());
    fb[i] = (float)(rnd8() - 128) * 0.013f;
  }
  /* DynamicQuantizeLinear: the spec's scale and zero point, then its kernel's quantized x */
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < M * K; i++) { lo = x[i] < lo ? x[i] : lo; hi = x[i] > hi ? x[i] : hi; }
  float xs = (hi - lo) / 255.0f, zf = xs != 0 ? rintf(-lo / xs) : 0;
  uint8_t xz = (uint8_t)(zf < 0 ? 0 : zf > 255 ? 255 : zf), dz = 0, fz = 0;
  float ds = 0, fs = -1;
  int64_t dp[2] = {M * K, 3}, sp[3] = {M * K, 1, 1};
  const void *din[1] = {x};
  void *dout[3] = {xq, &ds, &dz}, *sout[2] = {&fs, &fz};
  ft_dynamic_quantize_f32(dp, NULL, din, dout, NULL);
  ft_dynamic_quantize_scale_f32(sp, NULL, din, sout, NULL);
  cr_expect(ds == xs && dz == xz && fs == xs && fz == xz, "%s: M %lld K %lld fill %d: scale %g/%g/%g zero point %d/%d/%d",
            path, (long long)M, (long long)K, fill, (double)ds, (double)fs, (double)xs, dz, fz, xz);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      int64_t acc = 0;
      int32_t zb = nzb ? ld8(bz, nzb > 1 ? n : 0, b_signed) : 0;
      for (int64_t k = 0; k < K; k++) acc += (int64_t)(xq[m * K + k] - xz) * (ld8(b, k * N + n, b_signed) - zb);
      float s = xs * bs[nsb > 1 ? n : 0], v = bias ? fmaf((float)(int32_t)acc, s, fb[n]) : (float)(int32_t)acc * s;
      if (act) {
        ft_gemm_epi e = {.act = act};
        ft_gemm_act(&v, 1, &e);
      }
      want[m * N + n] = v;
    }
  int64_t p[FT_I8_NP];
  memset(p, 0, sizeof p);
  p[FT_I8_M] = M; p[FT_I8_N] = N; p[FT_I8_K] = K;
  p[FT_I8_A_KIND] = 2; p[FT_I8_B_SIGNED] = b_signed; p[FT_I8_OUT] = FT_I8_OUT_F32;
  p[FT_I8_B_RS] = N; p[FT_I8_B_CS] = 1; p[FT_I8_A_RS] = K; p[FT_I8_Y_RS] = N; p[FT_I8_Y_CS] = 1; p[FT_I8_NBATCH] = 1;
  p[FT_I8_NZA] = 1; p[FT_I8_NZB] = nzb; p[FT_I8_NSB] = nsb; p[FT_I8_BIAS] = bias ? 1 : 0; p[FT_I8_ACT] = act;
  int64_t roles[9] = {0, 1, 2, 3, 4, nzb ? 5 : -1, -1, -1, bias ? 6 : -1};
  memcpy(p + FT_I8_IN_A, roles, sizeof roles);
  void *packed = aligned_alloc(64, (pack(p, b, NULL) + 63) & ~(size_t)63);
  pack(p, b, packed);
  p[FT_I8_PACKED] = 1;
  const void *in[7] = {x, &fs, &fz, packed, bs, bz, fb};
  void *out[1] = {got}, *scratch = malloc(ft_i8_scratch(p));
  ft_set_threads(threads);
  kern(p, NULL, in, out, scratch);
  ft_set_threads(0);
  int64_t bad = -1;
  for (int64_t i = 0; i < M * N && bad < 0; i++)
    if (memcmp(&want[i], &got[i], sizeof(float))) bad = i;
  cr_expect(bad < 0, "%s: M %lld N %lld K %lld b_signed %d nzb %d nsb %d bias %d act %d fill %d threads %d: differs at %lld: %g, want %g",
            path, (long long)M, (long long)N, (long long)K, b_signed, nzb, nsb, bias, act, fill, threads, (long long)bad,
            bad < 0 ? 0.0 : (double)got[bad], bad < 0 ? 0.0 : (double)want[bad]);
  free(x); free(bs); free(fb); free(want); free(got); free(b); free(bz); free(xq); free(packed); free(scratch);
}

static void dynamic_sweep(kern_fn kern, pack_fn pack, const char *path) {
  static const int64_t dshapes[][3] = {{1, 1, 1}, {7, 17, 5}, {13, 70, 67}, {29, 130, 33}, {128, 96, 97}, {37, 200, 130}, {61, 768, 64}, {16, 112, 20}, {3, 176, 40}};
  int i = 0;
  for (size_t s = 0; s < sizeof dshapes / sizeof dshapes[0]; s++)
    for (int b_signed = 0; b_signed < 2; b_signed++)
      for (int v = 0; v < 4; v++, i++) {
        int64_t N = dshapes[s][1];
        int nzb = v == 0 ? 0 : v == 1 ? 1 : (int)N, nsb = i % 2 ? (int)N : 1;
        dynamic_case(kern, pack, path, dshapes[s][0], N, dshapes[s][2], b_signed, nzb, nsb, i % 3 != 0,
                     (int[]){0, 0, FT_ACT_GELU}[i % 3], (i / 3) % 4, i % 2 ? 3 : 1);
      }
}

Test(gemm_int8, dynamic_native_matches_reference) { dynamic_sweep(ft_gemm_int8, ft_i8_pack_b, FT_I8_PATH); }
Test(gemm_int8, dynamic_portable_matches_reference) { dynamic_sweep(gemm_int8_portable, gemm_int8_portable_pack, "portable"); }

#ifdef __AVX512VNNI__
Test(gemm_int8, vnni_compiled_where_targeted) { cr_assert_str_eq(FT_I8_PATH, "avx512_vnni"); }
#endif

/* ---- 1x1 convs as W.X ---- */

typedef struct wxcase {
  int64_t NB, C, P, MO; /* images, input channels, pixels, output channels */
  int a_kind, out, nsb, bias, relu, act, packed, nza, threads;
} wxcase;

/* the kernel's output for one case; *want the reference's (4-byte or 1-byte elements) */
static void *wx_case(const wxcase *q, kern_fn kern, pack_fn pack, void **want_out) {
  int64_t NB = q->NB, C = q->C, P = q->P, MO = q->MO, nx = NB * C * P, ny = NB * MO * P;
  void *x = malloc((size_t)(nx * 4));
  for (int64_t i = 0; i < nx; i++) {
    if (q->a_kind == 2) ((float *)x)[i] = (float)(rnd8() - 100) * 0.05f + 0.025f * (float)(i % 3); /* ties too */
    else ((uint8_t *)x)[i] = (uint8_t)rnd8();
  }
  int8_t *w = malloc((size_t)(MO * C));
  for (int64_t i = 0; i < MO * C; i++) w[i] = (int8_t)(rnd8() - 128);
  float *bs = malloc(sizeof(float) * (size_t)MO), as = 0.05f, ys = 2.7f;
  void *bias = malloc(4 * (size_t)MO);
  for (int64_t i = 0; i < MO; i++) {
    bs[i] = 0.0005f * (float)(1 + rnd8());
    if (q->bias == 1) ((float *)bias)[i] = (float)(rnd8() - 128) * 0.01f;
    else ((int32_t *)bias)[i] = (rnd8() - 128) * 7;
  }
  uint8_t az[1] = {(uint8_t)(q->a_kind == 1 ? 0xf6 : 93)}; /* int8 x: -10 */
  uint8_t yz = q->out == FT_I8_OUT_S8 ? (uint8_t)0xfb : 21;
  int8_t wz[64] = {0}; /* per-channel weight zero points, all 0 */
  int asg = q->a_kind == 1;
  int32_t za = q->nza ? (asg ? (int8_t)az[0] : az[0]) : 0;
  int esz = q->out <= FT_I8_OUT_F32 ? 4 : 1;
  void *want = calloc((size_t)ny, 4), *got = calloc((size_t)ny, 4);
  for (int64_t b = 0; b < NB; b++)
    for (int64_t m = 0; m < MO; m++)
      for (int64_t n = 0; n < P; n++) {
        int64_t acc = 0;
        for (int64_t c = 0; c < C; c++) {
          int64_t i = (b * C + c) * P + n;
          int32_t xq;
          if (q->a_kind == 2) {
            float v = rintf(((float *)x)[i] / as) + (float)za;
            xq = (int32_t)(v < 0 ? 0 : v > 255 ? 255 : v);
          } else xq = asg ? ((int8_t *)x)[i] : ((uint8_t *)x)[i];
          acc += (int64_t)(xq - za) * w[m * C + c];
        }
        int32_t a32 = (int32_t)acc;
        int64_t at = (b * MO + m) * P + n;
        float bsm = bs[q->nsb > 1 ? m : 0];
        if (q->out == FT_I8_OUT_S32) ((int32_t *)want)[at] = a32;
        else if (q->out == FT_I8_OUT_F32) {
          float s = as * bsm, v = q->bias == 1 ? fmaf((float)a32, s, ((float *)bias)[m]) : (float)a32 * s;
          if (q->relu && v < 0) v = 0;
          if (q->act) {
            ft_gemm_epi e = {.act = q->act, .lo = (float)clip[0], .hi = (float)clip[1]};
            ft_gemm_act(&v, 1, &e);
          }
          ((float *)want)[at] = v;
        } else {
          if (q->bias == 2) a32 += ((int32_t *)bias)[m];
          float v = rintf((float)a32 * (as * bsm / ys));
          if (q->out == FT_I8_OUT_U8) { v += (float)yz; ((uint8_t *)want)[at] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }
          else { v += (float)(int8_t)yz; ((int8_t *)want)[at] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }
        }
      }
  int64_t p[FT_I8_NP];
  memset(p, 0, sizeof p);
  p[FT_I8_WX] = 1;
  p[FT_I8_M] = MO; p[FT_I8_N] = P; p[FT_I8_K] = C; p[FT_I8_C] = C;
  p[FT_I8_A_KIND] = q->a_kind; p[FT_I8_B_SIGNED] = 1; p[FT_I8_OUT] = q->out;
  p[FT_I8_Y_RS] = P; p[FT_I8_Y_CS] = 1;
  p[FT_I8_NBATCH] = NB; p[FT_I8_A_BS] = C * P; p[FT_I8_Y_BS] = MO * P;
  p[FT_I8_NZA] = q->nza; p[FT_I8_NZB] = MO; p[FT_I8_NSB] = q->out == FT_I8_OUT_S32 ? 0 : q->nsb;
  p[FT_I8_BIAS] = q->bias; p[FT_I8_RELU] = q->relu; p[FT_I8_ACT] = q->act; p[FT_I8_AZ_SIGNED] = asg;
  int64_t roles[9] = {0, 1, q->nza ? 2 : -1, 3, q->out == FT_I8_OUT_S32 ? -1 : 4, 5,
                      q->out >= FT_I8_OUT_U8 ? 6 : -1, q->out >= FT_I8_OUT_U8 ? 7 : -1, q->bias ? 8 : -1};
  memcpy(p + FT_I8_IN_A, roles, sizeof roles);
  void *packed = NULL;
  if (q->packed) {
    packed = aligned_alloc(64, (pack(p, w, NULL) + 63) & ~(size_t)63);
    pack(p, w, packed);
    p[FT_I8_PACKED] = 1;
  }
  const void *in[9] = {x, &as, az, q->packed ? packed : w, bs, wz, &ys, &yz, bias};
  void *out[1] = {got}, *scratch = malloc(ft_i8_scratch(p));
  const double f[2] = {clip[0], clip[1]};
  kern(p, f, in, out, scratch);
  free(x); free(w); free(bs); free(bias); free(packed); free(scratch);
  (void)esz;
  *want_out = want;
  return got;
}

static void wx_sweep(int portable) {
  static const int64_t shapes[][4] = {{1, 7, 35, 11}, {2, 13, 135, 19}, {1, 4, 64, 6}, {2, 33, 17, 5}, {1, 1, 3, 1}, {1, 96, 49, 40}};
  static const int outs[4] = {FT_I8_OUT_F32, FT_I8_OUT_U8, FT_I8_OUT_S8, FT_I8_OUT_S32};
  int cases = 0;
  for (int si = 0; si < 6; si++)
    for (int ak = 0; ak < 3; ak++)
      for (int oi = 0; oi < 4; oi++)
        for (int v = 0; v < 4; v++) {
          wxcase q = {shapes[si][0], shapes[si][1], shapes[si][2], shapes[si][3], ak, outs[oi], v & 1 ? (int)shapes[si][3] : 1,
                      0, 0, 0, v >> 1, (v + si) & 1, 1 + 2 * ((v + ak + si) & 1)};
          if (q.out == FT_I8_OUT_F32) {
            q.bias = v & 1 ? 1 : 0;
            q.relu = v == 1 || v == 2;
            q.act = v == 3 ? FT_ACT_CLIP : v == 2 ? FT_ACT_GELU : 0;
          } else if (q.out != FT_I8_OUT_S32) q.bias = v & 1 ? 2 : 0;
          if (ak == 1 && v == 3) q.nza = 0;
          if (portable) gemm_int8_portable_set_threads(q.threads);
          else ft_set_threads(q.threads);
          unsigned seed = rng;
          void *want, *got = wx_case(&q, portable ? gemm_int8_portable : ft_gemm_int8, portable ? gemm_int8_portable_pack : ft_i8_pack_b, &want);
          int64_t n = q.NB * q.MO * q.P, bad = -1;
          for (int64_t i = 0; i < n && bad < 0; i++) {
            if (q.out == FT_I8_OUT_F32) {
              float a = ((float *)got)[i], b = ((float *)want)[i];
              if (!(fabsf(a - b) <= 2e-7f * fabsf(b) + 1e-7f)) bad = i;
            } else if (q.out == FT_I8_OUT_S32) {
              if (((int32_t *)got)[i] != ((int32_t *)want)[i]) bad = i;
            } else if (((uint8_t *)got)[i] != ((uint8_t *)want)[i]) bad = i;
          }
          cr_expect(bad < 0, "%s W.X %lldx%lldx%lld->%lld a_kind %d out %d v %d threads %d: differs at %lld", portable ? "portable" : FT_I8_PATH,
                    (long long)q.NB, (long long)q.C, (long long)q.P, (long long)q.MO, ak, q.out, v, q.threads, (long long)bad);
          if (q.out == FT_I8_OUT_F32 && !portable) { /* the portable build gives the same bits */
            rng = seed;
            gemm_int8_portable_set_threads(q.threads);
            void *want2, *got2 = wx_case(&q, gemm_int8_portable, gemm_int8_portable_pack, &want2);
            cr_expect(memcmp(got, got2, 4 * (size_t)n) == 0, "W.X native and portable differ (a_kind %d v %d)", ak, v);
            free(want2); free(got2);
          }
          free(want); free(got);
          cases++;
        }
  ft_set_threads(1);
  gemm_int8_portable_set_threads(1);
  cr_expect(cases == 288);
}

Test(gemm_int8, wx_native_matches_reference) { wx_sweep(0); }
Test(gemm_int8, wx_portable_matches_reference) { wx_sweep(1); }

/* ---- QDQ convs with a requantized output (FT_I8_YQ) ----
 * The bytes must be QuantizeLinear (division, round half to even, + zy, saturation) of the float32
 * output the same conv gives without FT_I8_YQ: W.X and the row form (wx), a 3x2 window with
 * stride, dilation and padding or a 1x1 one read directly, uint8 and int8 outputs, bias or not,
 * Relu, Clip or nothing, float32 or uint8 input, 1 and 3 threads, native and portable. */
static void yq_case(kern_fn kern, pack_fn pack, const char *path, int wx, int k1, int s8, int v, int threads) {
  const int64_t NB = 2, C = 5, H = 9, W = 7, MO = 11;
  int impl = wx == 2 && !k1; /* the implicit W.X form: stride 1, dilation 1 */
  int64_t KH = k1 ? 1 : 3, KW = k1 ? 1 : 2, SH = k1 || impl ? 1 : 2, DW = k1 || impl ? 1 : 2, PT = k1 ? 0 : 1, PB = k1 ? 0 : 2, PR = k1 ? 0 : 1;
  int64_t OH = (H + PT + PB - (KH - 1) - 1) / SH + 1, OW = (W + PR - DW * (KW - 1) - 1) + 1, K = C * KH * KW, NY = NB * MO * OH * OW;
  int a_kind = v & 1 ? 0 : 2, bias_on = (v >> 1) & 1, act = v % 3 == 0 ? 0 : v % 3 == 1 ? FT_ACT_CLIP : FT_ACT_RELU;
  void *x = malloc(sizeof(float) * (size_t)(NB * C * H * W));
  for (int64_t i = 0; i < NB * C * H * W; i++) {
    if (a_kind == 2) ((float *)x)[i] = (float)(rnd8() - 100) * 0.05f + 0.025f * (float)(i % 3);
    else ((uint8_t *)x)[i] = (uint8_t)rnd8();
  }
  int8_t *w = malloc((size_t)(MO * K));
  float *bs = malloc(sizeof(float) * MO), *bias = malloc(sizeof(float) * MO), as = 0.05f, ys = 0.0375f;
  for (int64_t i = 0; i < MO * K; i++) w[i] = (int8_t)(rnd8() - 128);
  for (int64_t i = 0; i < MO; i++) { bs[i] = 0.0004f * (float)(1 + i); bias[i] = (float)(rnd8() - 128) * 0.01f; }
  uint8_t az = 100, yz = s8 ? (uint8_t)0xfb : 21;
  int64_t p[FT_I8_NP];
  memset(p, 0, sizeof p);
  p[FT_I8_M] = OH * OW; p[FT_I8_N] = MO; p[FT_I8_K] = K;
  p[FT_I8_A_KIND] = a_kind; p[FT_I8_B_SIGNED] = 1; p[FT_I8_OUT] = FT_I8_OUT_F32;
  p[FT_I8_B_RS] = 1; p[FT_I8_B_CS] = K; p[FT_I8_Y_RS] = 1; p[FT_I8_Y_CS] = OH * OW;
  p[FT_I8_NBATCH] = NB; p[FT_I8_A_BS] = C * H * W; p[FT_I8_Y_BS] = MO * OH * OW;
  p[FT_I8_NZA] = 1; p[FT_I8_NSB] = MO; p[FT_I8_BIAS] = bias_on; p[FT_I8_RELU] = v == 4; p[FT_I8_ACT] = act;
  int64_t roles[9] = {0, 1, 2, 3, 4, -1, 6, 7, bias_on ? 5 : -1};
  memcpy(p + FT_I8_IN_A, roles, sizeof roles);
  p[FT_I8_CONV] = 1; p[FT_I8_C] = C;
  int64_t win[18] = {1, H, W, 1, OH, OW, 1, KH, KW, 1, SH, 1, 1, 1, DW, 0, PT, 0};
  memcpy(p + FT_I8_WIN, win, sizeof win);
  if (wx) { p[FT_I8_WX] = 1; p[FT_I8_M] = MO; p[FT_I8_N] = OH * OW; p[FT_I8_Y_RS] = OH * OW; p[FT_I8_Y_CS] = 1; }
  if (impl) { p[FT_I8_WX] = 2; p[FT_I8_K] = KH * KW * 8; }
  void *packed = aligned_alloc(64, (pack(p, w, NULL) + 63) & ~(size_t)63);
  pack(p, w, packed);
  p[FT_I8_PACKED] = 1;
  const void *in[8] = {x, &as, &az, packed, bs, bias, &ys, &yz};
  float *yf = calloc((size_t)NY, sizeof(float));
  uint8_t *yq = calloc((size_t)NY, 1);
  void *out[1] = {yf}, *scratch = malloc(ft_i8_scratch(p));
  const double f[2] = {-0.5, 0.75};
  if (!strcmp(path, "portable")) gemm_int8_portable_set_threads(threads);
  else ft_set_threads(threads);
  p[FT_I8_IN_YS] = p[FT_I8_IN_YZ] = -1; /* the float32 output: scales a_scale * w_scale */
  kern(p, f, in, out, scratch);
  p[FT_I8_IN_YS] = 6;
  p[FT_I8_IN_YZ] = 7;
  p[FT_I8_OUT] = s8 ? FT_I8_OUT_S8 : FT_I8_OUT_U8;
  p[FT_I8_YQ] = 1;
  out[0] = yq;
  kern(p, f, in, out, scratch);
  int64_t bad = -1, sat = 0;
  float lo = s8 ? -128.0f : 0.0f, hi = s8 ? 127.0f : 255.0f, zf = s8 ? (float)(int8_t)yz : (float)yz;
  for (int64_t i = 0; i < NY && bad < 0; i++) {
    float q = rintf(yf[i] / ys) + zf;
    q = !(q > lo) ? lo : q > hi ? hi : q;
    sat += q == lo || q == hi;
    int32_t got = s8 ? (int32_t)(int8_t)yq[i] : (int32_t)yq[i];
    if (got != (int32_t)q) bad = i;
  }
  cr_expect(bad < 0, "%s YQ wx %d k1 %d s8 %d v %d threads %d: byte %lld is %d, QuantizeLinear gives %g", path, wx, k1, s8, v, threads,
            (long long)bad, bad < 0 ? 0 : yq[bad], bad < 0 ? 0.0 : (double)rintf(yf[bad] / ys) + zf);
  cr_expect(sat < NY, "every output saturated: the case tests nothing");
  free(x); free(w); free(bs); free(bias); free(packed); free(scratch); free(yf); free(yq);
}

Test(gemm_int8, yq_is_quantize_of_f32) {
  for (int wx = 0; wx < 3; wx++) /* positions as rows, W.X, the implicit W.X form (k1 0) */
    for (int k1 = 0; k1 < 2; k1++)
      for (int s8 = 0; s8 < 2; s8++)
        for (int v = 0; v < 6; v++) {
          int t = 1 + 2 * ((v + wx) & 1);
          yq_case(ft_gemm_int8, ft_i8_pack_b, FT_I8_PATH, wx, k1, s8, v, t);
          yq_case(gemm_int8_portable, gemm_int8_portable_pack, "portable", wx, k1, s8, v, t);
        }
  ft_set_threads(1);
  gemm_int8_portable_set_threads(1);
}
