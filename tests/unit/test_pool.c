/* The float MaxPool (pool.h: the AVX-512 row path, the plain row path FT_MAXPOOL_ROWS and the
 * tap loop it falls back to) and the global pools against plain reference loops, bit for bit:
 * the reference folds in the kernels' documented order (for each horizontal tap the maximum down
 * the window's rows, then across the taps, always x > y ? x : y from -INFINITY, so NaN inputs are
 * skipped and the first of +0 / -0 stays). Widths 1..40 and wider than the row buffer, strides 1,
 * 2 and 3, kernels 2, 3 and 5, dilation 1 and 2, pads, ceil_mode, NaN, -inf and signed zeros,
 * batch 2, 1 and 3 threads (few planes: the row bands). Every case runs twice: as this build
 * compiles the kernels and from pool_portable.c, compiled without AVX-512. Self-contained:
 * includes the kernel template directly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

#include "kernel_bufs.h"

int pool_portable_has_avx512(void);
void pool_portable_maxpool(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch);
void pool_portable_global(const int64_t *p, const double *f, const void *const *in, void *const *out, int kind);

typedef struct mcase {
  int64_t N, C, H, W, kh, kw, sh, sw, dh, dw, ph, pw;
  int ceil, threads;
  int special; /* 0 plain values, 1 NaN / -inf / signed zeros mixed in, 2 the same without zeros */
} mcase;

/* ONNX output size, pads pb at both ends; 0 where no window fits */
static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int ceil) {
  int64_t span = in + 2 * pb - ((k - 1) * d + 1);
  if (span < 0) return 0;
  int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (o - 1) * s >= in + pb) o--; /* the last window starts inside the input or the left pad */
  return o;
}

static float special_value(int special) {
  float r = frand();
  if (!special) return r;
  unsigned u = rng_state >> 24;
  if (u < 20) return NAN;
  if (u < 34) return -INFINITY;
  if (special == 1 && u < 60) return u & 1 ? 0.0f : -0.0f;
  return r;
}

static float fold(float x, float y) { return x > y ? x : y; }

static void bits_equal(const float *got, const float *want, int64_t n, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t a, b;
    memcpy(&a, got + i, 4);
    memcpy(&b, want + i, 4);
    if (a != b) cr_assert_fail("%s: element %lld: got %.9g (0x%08x), want %.9g (0x%08x)", what, (long long)i, got[i], a, want[i], b);
  }
}

static void run_mcase(const mcase *c) {
  int64_t OH = out_size(c->H, c->kh, c->sh, c->dh, c->ph, c->ceil), OW = out_size(c->W, c->kw, c->sw, c->dw, c->pw, c->ceil);
  if (OH <= 0 || OW <= 0) return;
  int64_t P = c->N * c->C, S_in = c->H * c->W, S = OH * OW;
  int64_t p[FT_PL_NP];
  memset(p, 0, sizeof p);
  p[FT_PL_PLANES] = P;
  int64_t in[3] = {1, c->H, c->W}, out[3] = {1, OH, OW}, k[3] = {1, c->kh, c->kw}, s[3] = {1, c->sh, c->sw};
  int64_t d[3] = {1, c->dh, c->dw}, pb[3] = {0, c->ph, c->pw};
  for (int i = 0; i < 3; i++) {
    p[FT_PL_IN + i] = in[i]; p[FT_PL_OUT + i] = out[i]; p[FT_PL_K + i] = k[i]; p[FT_PL_S + i] = s[i];
    p[FT_PL_D + i] = d[i]; p[FT_PL_P + i] = pb[i]; p[FT_PL_PE + i] = pb[i];
  }
  float *X = malloc(sizeof(float) * (size_t)(P * S_in)), *want = malloc(sizeof(float) * (size_t)(P * S));
  float *Y = malloc(sizeof(float) * (size_t)(P * S));
  for (int64_t i = 0; i < P * S_in; i++) X[i] = special_value(c->special);
  if (c->special && P > 1) /* one plane with nothing but NaN and -inf: every output -inf */
    for (int64_t i = 0; i < S_in; i++) X[S_in + i] = i & 1 ? NAN : -INFINITY;
  for (int64_t pl = 0; pl < P; pl++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        float y = -INFINITY;
        for (int64_t tw = 0; tw < c->kw; tw++) {
          float cm = -INFINITY;
          int64_t iw = ow * c->sw + tw * c->dw - c->pw;
          for (int64_t th = 0; th < c->kh; th++) {
            int64_t ih = oh * c->sh + th * c->dh - c->ph;
            if (ih >= 0 && ih < c->H && iw >= 0 && iw < c->W) cm = fold(X[pl * S_in + ih * c->W + iw], cm);
          }
          y = fold(cm, y);
        }
        want[(pl * OH + oh) * OW + ow] = y;
      }
  char what[256];
  const void *ins[1] = {X};
  void *outs[1] = {Y};
  for (int portable = 0; portable < 2; portable++) {
    for (int64_t i = 0; i < P * S; i++) Y[i] = 12345.0f;
    ft_set_threads(c->threads);
    if (portable) pool_portable_maxpool(p, NULL, ins, outs, NULL);
    else ft_maxpool_f32(p, NULL, ins, outs, NULL);
    ft_set_threads(0);
    snprintf(what, sizeof what, "%s MaxPool N=%lld C=%lld %lldx%lld k%lldx%lld s%lldx%lld d%lldx%lld pads %lld,%lld ceil=%d threads=%d special=%d",
             portable ? "portable" : "native", (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W,
             (long long)c->kh, (long long)c->kw, (long long)c->sh, (long long)c->sw, (long long)c->dh, (long long)c->dw,
             (long long)c->ph, (long long)c->pw, c->ceil, c->threads, c->special);
    bits_equal(Y, want, P * S, what);
  }
  free(X); free(want); free(Y);
}

Test(pool, maxpool_widths_strides_kernels) {
  const int64_t ks[] = {2, 3, 5};
  for (int64_t W = 1; W <= 40; W++)
    for (size_t ki = 0; ki < 3; ki++)
      for (int64_t s = 1; s <= 3; s++)
        for (int64_t pad = 0; pad < ks[ki]; pad += ks[ki] / 2 > 0 ? ks[ki] / 2 : 1)
          for (int ceil = 0; ceil < 2; ceil++) {
            mcase c = {1, 2, 7, W, ks[ki], ks[ki], s, s, 1, 1, pad, pad, ceil, 1, (int)((W + ki + s) % 3)};
            run_mcase(&c);
          }
}

/* The stride-2 row kernel (pool.h ft_maxpool_f32_s2_row) on rows wide enough for a run of
 * vectors read without masks, with a masked vector left of it (a pad) and one or two right of it
 * (ceil or not), three-row windows inside the plane and fewer at its padded edges. */
Test(pool, maxpool_stride2_wide_rows) {
  for (int64_t W = 33; W <= 150; W += 13)
    for (int64_t k = 2; k <= 3; k++)
      for (int64_t pad = 0; pad < k; pad++)
        for (int ceil = 0; ceil < 2; ceil++) {
          mcase c = {1, 3, 9, W, k, k, 2, 2, 1, 1, pad, pad, ceil, 1, (int)(W % 3)};
          run_mcase(&c);
        }
}

Test(pool, maxpool_dilation_and_uneven_windows) {
  for (int64_t W = 1; W <= 40; W += 3)
    for (int64_t s = 1; s <= 3; s++)
      for (int ceil = 0; ceil < 2; ceil++) {
        mcase c = {1, 3, 9, W, 3, 3, s, s, 2, 2, 2, 1, ceil, 1, 1};
        run_mcase(&c);
        mcase d = {1, 3, 6, W, 2, 5, 1, s, 1, 2, 1, 3, ceil, 1, 1};
        run_mcase(&d);
        mcase e = {2, 2, 5, W, 1, 3, 3, s, 1, 1, 0, 1, ceil, 1, 1};
        run_mcase(&e);
      }
}

/* The zoo's shapes: SqueezeNet's 3x3 stride 2 ceil_mode pools and ResNet-50's padded one, batch 2. */
Test(pool, maxpool_cnn_shapes_batch_threads) {
  for (int t = 1; t <= 3; t += 2) {
    mcase a = {2, 8, 111, 111, 3, 3, 2, 2, 1, 1, 0, 0, 1, t, 1};
    run_mcase(&a);
    mcase b = {2, 5, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 0, t, 1};
    run_mcase(&b);
    mcase c = {1, 3, 27, 27, 3, 3, 2, 2, 1, 1, 0, 0, 1, t, 0};
    run_mcase(&c);
  }
}

/* Few large planes (row bands across the threads), and rows wider than the row buffer (the tap
 * loop, which folds in another order: no signed zeros there), and widths near the buffer's end. */
Test(pool, maxpool_few_planes_and_wide_rows) {
  for (int t = 1; t <= 3; t += 2) {
    mcase a = {1, 1, 600, 600, 3, 3, 1, 1, 1, 1, 1, 1, 0, t, 1};
    run_mcase(&a);
    mcase b = {2, 1, 301, 517, 5, 5, 2, 2, 1, 1, 2, 2, 1, t, 1};
    run_mcase(&b);
    mcase c = {1, 2, 5, 2100, 3, 3, 2, 2, 1, 1, 1, 1, 1, t, 2};
    run_mcase(&c);
  }
  const int64_t ws[] = {2031, 2047, 2048, 2049};
  for (size_t i = 0; i < 4; i++)
    for (int64_t s = 1; s <= 2; s++) {
      mcase c = {1, 1, 4, ws[i], 3, 3, s, s, 1, 1, 1, 1, 1, 1, i < 2 ? 1 : 2};
      run_mcase(&c);
    }
}

/* The global pools: the sums in the documented lane order (element i into lane i % 64, then the
 * lane tree) bit for bit, and near the sum in double; GlobalMaxPool's fold; GlobalLpPool near
 * its double value. */
static void run_global(int64_t P, int64_t S, int threads) {
  int64_t p[2] = {P, S};
  float *X = malloc(sizeof(float) * (size_t)(P * S + 1)), *Y = malloc(sizeof(float) * (size_t)P);
  float *want = malloc(sizeof(float) * (size_t)P), *wmax = malloc(sizeof(float) * (size_t)P);
  double *dsum = malloc(sizeof(double) * (size_t)P), *dsq = malloc(sizeof(double) * (size_t)P);
  for (int64_t i = 0; i < P * S; i++) X[i] = frand() + 0.25f;
  if (P > 2 && S > 0) {
    for (int64_t i = 0; i < S; i += 7) X[S + i] = NAN; /* plane 1: NaN at its first element */
    for (int64_t i = 1; i < S; i += 5) X[2 * S + i] = NAN; /* plane 2: NaNs after it */
  }
  for (int64_t pl = 0; pl < P; pl++) {
    const float *x = X + pl * S;
    float acc[64] = {0};
    for (int64_t i = 0; i < S; i++) acc[i % 64] += x[i];
    for (int h = 32; h >= 1; h /= 2)
      for (int j = 0; j < h; j++) acc[j] += acc[j + h];
    want[pl] = S ? acc[0] / (float)S : 0.0f;
    float m[16], r = S ? x[0] : 0.0f;
    int64_t i = 0;
    for (int j = 0; j < 16; j++) m[j] = r;
    for (; i + 16 <= S; i += 16)
      for (int j = 0; j < 16; j++) m[j] = fold(x[i + j], m[j]);
    for (int j = 0; j < 16; j++) r = fold(m[j], r);
    for (; i < S; i++) r = fold(x[i], r);
    wmax[pl] = r;
    dsum[pl] = dsq[pl] = 0;
    for (i = 0; i < S; i++) { dsum[pl] += x[i]; dsq[pl] += (double)x[i] * x[i]; }
  }
  const void *ins[1] = {X};
  void *outs[1] = {Y};
  double f[1] = {2.0};
  char what[160];
  for (int portable = 0; portable < 2; portable++) {
    for (int kind = 0; kind < 3; kind++) {
      ft_set_threads(threads);
      if (portable) pool_portable_global(p, f, ins, outs, kind);
      else ft_global_pool_f32(p, f, ins, outs, kind);
      ft_set_threads(0);
      snprintf(what, sizeof what, "%s global pool kind %d planes=%lld S=%lld threads=%d", portable ? "portable" : "native",
               kind, (long long)P, (long long)S, threads);
      if (kind == 1) { bits_equal(Y, wmax, P, what); continue; }
      if (kind == 0) bits_equal(Y, want, P, what);
      for (int64_t pl = 0; pl < P; pl++) {
        if (P > 2 && (pl == 1 ? S > 0 : pl == 2 && S > 1)) {
          cr_assert(isnan(Y[pl]), "%s: plane %lld: got %g, want NaN", what, (long long)pl, Y[pl]);
          continue;
        }
        double w = kind == 0 ? (S ? dsum[pl] / (double)S : 0) : sqrt(dsq[pl]);
        cr_assert(fabs(Y[pl] - w) <= 1e-5 * (fabs(w) + 1), "%s: plane %lld: got %.9g, want %.9g", what, (long long)pl, Y[pl], w);
      }
    }
  }
  free(X); free(Y); free(want); free(wmax); free(dsum); free(dsq);
}

Test(pool, global_pools) {
  for (int64_t S = 0; S <= 200; S++) run_global(3, S, 1);
  const int64_t big[] = {49, 196, 784, 3136, 12544, 12545};
  for (size_t i = 0; i < sizeof big / sizeof *big; i++)
    for (int t = 1; t <= 3; t += 2) run_global(2 * 48, big[i], t);
}

Test(pool, portable_build_has_no_avx512) {
#ifdef __AVX512F__
  cr_expect(!pool_portable_has_avx512(), "pool_portable.c was compiled with AVX-512: the plain paths go untested");
#endif
}
