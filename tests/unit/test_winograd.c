/* Winograd F(4x4,3x3) (templates/c/winograd.h) against a direct 3x3 convolution in double, on
 * random data: odd planes (7x7, 13x13, 55x55), padding 1 and 0, batch 2, with every epilogue
 * part (bias, residual before or after the activation, Relu and Clip); and the Conv kernel
 * entry (ft_conv_wino_f32, weights packed by ftaxc's hook or given plain) against conv.h's
 * direct shifted-rows kernel.
 * Tolerance: |got - want| <= 1e-5 * (1 + sum over the window of |x * w|); the F(4,3)
 * transforms scale values by up to ~10, so its error is about ten times the direct sum's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "conv.h"
#include "winograd.h"

#include "kernel_bufs.h"

typedef struct wcase {
  int64_t N, C, CO, H, W, pad;
  int bias, act, res; /* res: 0 none, 1 before the activation, 2 after */
} wcase;

static void run_case(const wcase *c) {
  ft_wino_geo g = {c->N, c->C, c->CO, c->H, c->W, c->H + 2 * c->pad - 2, c->W + 2 * c->pad - 2, c->pad, c->pad};
  int64_t ny = g.N * g.CO * g.OH * g.OW;
  float *x = rand_buf(g.N * g.C * g.H * g.W), *w = rand_buf(g.CO * g.C * 9), *b = rand_buf(g.CO);
  float *r = rand_buf(ny), *y = malloc(sizeof(float) * (size_t)ny);
  float *u = scratch_buf(sizeof(float) * (size_t)ft_wino_packed_floats(g.C, g.CO));
  void *scratch = scratch_buf(ft_wino_scratch(&g));
  ft_wino_pack_weights(g.C, g.CO, w, u);
  ft_gemm_epi e;
  memset(&e, 0, sizeof e);
  e.bias = c->bias ? b : NULL;
  e.act = c->act;
  e.lo = -0.25f;
  e.hi = 0.5f;
  e.res = c->res ? r : NULL;
  e.res_after = c->res == 2;
  ft_wino_conv_f32(&g, x, u, &e, y, scratch);
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t o = 0; o < g.CO; o++)
      for (int64_t i = 0; i < g.OH; i++)
        for (int64_t j = 0; j < g.OW; j++) {
          double s = c->bias ? b[o] : 0, mag = 0;
          for (int64_t ci = 0; ci < g.C; ci++)
            for (int ki = 0; ki < 3; ki++)
              for (int kj = 0; kj < 3; kj++) {
                int64_t yy = i + ki - c->pad, xx = j + kj - c->pad;
                if (yy < 0 || yy >= g.H || xx < 0 || xx >= g.W) continue;
                double t = (double)x[((n * g.C + ci) * g.H + yy) * g.W + xx] * w[((o * g.C + ci) * 3 + ki) * 3 + kj];
                s += t;
                mag += fabs(t);
              }
          int64_t at = ((n * g.CO + o) * g.OH + i) * g.OW + j;
          if (c->res == 1) s += r[at];
          if (c->act == FT_ACT_RELU) s = s < 0 ? 0 : s;
          if (c->act == FT_ACT_CLIP) s = s < -0.25 ? -0.25 : (s > 0.5 ? 0.5 : s);
          if (c->res == 2) s += r[at];
          double d = fabs((double)y[at] - s);
          if (!(d <= 1e-5 * (1 + mag)))
            cr_assert_fail("N%lld C%lld CO%lld %lldx%lld pad %lld: y[%lld,%lld,%lld,%lld] = %.9g, want %.9g",
                           (long long)g.N, (long long)g.C, (long long)g.CO, (long long)g.H, (long long)g.W,
                           (long long)c->pad, (long long)n, (long long)o, (long long)i, (long long)j, y[at], s);
        }
  free(x); free(w); free(b); free(r); free(y); free(u); free(scratch);
}

Test(winograd, plain_planes_and_pads) {
  static const wcase cs[] = {
      {1, 3, 5, 7, 7, 1, 0, 0, 0},      {2, 16, 33, 7, 7, 1, 1, 0, 0}, {1, 8, 40, 13, 13, 1, 1, 0, 0},
      {2, 5, 7, 13, 13, 0, 1, 0, 0},    {1, 4, 6, 55, 55, 1, 1, 0, 0}, {1, 70, 64, 14, 14, 1, 1, 0, 0},
      {2, 2, 3, 6, 9, 0, 0, 0, 0},      {1, 1, 1, 3, 3, 0, 0, 0, 0},   {1, 300, 20, 5, 5, 1, 1, 0, 0},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

/* Threaded: the output transform's items (16 output channels x a row of tiles) over 3 threads,
 * batches and partial last channel blocks and tile rows, with the clamp store's epilogues. */
Test(winograd, threads_batches_channel_blocks) {
  static const wcase cs[] = {
      {2, 48, 40, 13, 13, 1, 1, FT_ACT_RELU, 1}, {3, 20, 24, 9, 11, 1, 1, FT_ACT_CLIP, 2},
      {1, 64, 33, 27, 27, 1, 0, FT_ACT_NONE, 0}, {2, 8, 17, 6, 6, 0, 1, FT_ACT_RELU, 2},
      /* the AVX-512 transforms: input rows read 16 channels x 16 columns at once (inside the
         image, at pads of 1 and 2, and past a partial channel block), output rows written 4
         tiles at a time (rows of 5, 7, 8 and 13 tiles) */
      {1, 20, 18, 30, 37, 2, 1, FT_ACT_CLIP, 1}, {2, 32, 17, 21, 50, 0, 1, FT_ACT_RELU, 2},
      {1, 48, 40, 29, 29, 1, 1, FT_ACT_RELU, 0},
      /* a row of tiles at a time through all three phases (ft_wino_by_rows: 9 and 10 rows of
         tiles, V and M over 1 MB), batch 2 with an in-place-style residual and Clip */
      {2, 16, 40, 33, 37, 1, 1, FT_ACT_CLIP, 1}, {1, 16, 64, 40, 40, 1, 0, FT_ACT_NONE, 0},
  };
  ft_set_threads(3);
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
  ft_set_threads(0);
}

Test(winograd, epilogue) {
  static const wcase cs[] = {
      {2, 9, 17, 7, 7, 1, 1, FT_ACT_RELU, 0},   {2, 9, 17, 13, 13, 1, 1, FT_ACT_RELU, 1},
      {1, 9, 17, 13, 13, 0, 1, FT_ACT_CLIP, 2}, {2, 6, 35, 55, 55, 1, 0, FT_ACT_NONE, 1},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

/* The Conv entry, packed and plain weights, against ft_conv_f32 in shifted mode, through the
 * conv parameter layout; with a residual, also with the output written over it (in place). |x|, |w| < 1, so |got - want| <= 1e-5 * 9 * C bounds both errors. */
static void run_entry(int64_t N, int64_t C, int64_t CO, int64_t H, int64_t W, int64_t pad, int res) {
  int64_t p[FT_CV_NP] = {0};
  p[FT_CV_N] = N; p[FT_CV_C] = C; p[FT_CV_CO] = CO; p[FT_CV_G] = 1;
  p[FT_CV_HAS_BIAS] = 1; p[FT_CV_ACT] = FT_ACT_RELU; p[FT_CV_RES] = res;
  int64_t OH = H + 2 * pad - 2, OW = W + 2 * pad - 2, ny = N * CO * OH * OW;
  for (int i = 0; i < 3; i++) {
    p[FT_CV_K + i] = i ? 3 : 1;
    p[FT_CV_S + i] = p[FT_CV_D + i] = 1;
    p[FT_CV_P + i] = i ? pad : 0;
  }
  p[FT_CV_IN] = p[FT_CV_OUT] = 1;
  p[FT_CV_IN + 1] = H; p[FT_CV_IN + 2] = W; p[FT_CV_OUT + 1] = OH; p[FT_CV_OUT + 2] = OW;
  float *x = rand_buf(N * C * H * W), *w = rand_buf(CO * C * 9), *b = rand_buf(CO), *r = rand_buf(ny);
  float *want = malloc(sizeof(float) * (size_t)ny), *got = malloc(sizeof(float) * (size_t)ny);
  double f[4] = {1, 1, 0, 0};
  const void *in[4] = {x, w, b, r};
  p[FT_CV_MODE] = FT_CV_SHIFTED;
  void *s0 = scratch_buf(ft_conv_scratch(p));
  void *o0[1] = {want};
  ft_conv_f32(p, f, in, o0, s0);
  p[FT_CV_MODE] = FT_CV_WINOGRAD;
  void *s1 = scratch_buf(ft_conv_wino_scratch(p));
  float *u = scratch_buf(ft_conv_wino_pack_w(p, w, NULL));
  ft_conv_wino_pack_w(p, w, u);
  void *o1[1] = {got};
  for (int run = 0; run < 3; run++) { /* plain weights, packed, packed with Y in R's storage */
    int packed = run > 0;
    p[FT_CV_PACKED] = packed;
    in[1] = packed ? (const float *)u : w;
    if (run == 2 && res) {
      memcpy(got, r, sizeof(float) * (size_t)ny);
      in[3] = got;
    }
    ft_conv_wino_f32(p, f, in, o1, s1);
    for (int64_t i = 0; i < ny; i++)
      if (!(fabs((double)got[i] - want[i]) <= 1e-5 * 9 * C))
        cr_assert_fail("entry, %s weights, N%lld C%lld CO%lld %lldx%lld pad %lld: y[%lld] = %.9g, direct %.9g",
                       packed ? "packed" : "plain", (long long)N, (long long)C, (long long)CO, (long long)H,
                       (long long)W, (long long)pad, (long long)i, got[i], want[i]);
  }
  free(x); free(w); free(b); free(r); free(want); free(got); free(s0); free(s1); free(u);
}

Test(winograd, conv_entry_vs_direct) {
  run_entry(2, 16, 24, 7, 7, 1, 0);
  run_entry(1, 32, 16, 13, 13, 1, 1);
  run_entry(2, 17, 33, 12, 9, 0, 2);
  run_entry(1, 16, 16, 55, 55, 1, 1);
  run_entry(1, 16, 64, 55, 55, 1, 1); /* by rows of tiles */
}

/* The 36 per-point GEMMs run as one parallel loop of their work items, or each row of tiles
 * through all phases (the second geometry): the same bits at 1 and 3 threads (each item's sums
 * do not depend on who runs it). */
Test(winograd, same_bits_for_any_thread_count) {
  static const ft_wino_geo gs[] = {{1, 64, 96, 20, 22, 20, 22, 1, 1}, {1, 16, 64, 42, 45, 42, 45, 1, 1}};
  for (int gi = 0; gi < 2; gi++) {
  ft_wino_geo g = gs[gi];
  cr_assert(ft_wino_by_rows(&g) == gi, "geometry %d: by rows %d", gi, ft_wino_by_rows(&g));
  int64_t ny = g.CO * g.OH * g.OW;
  float *x = rand_buf(g.C * g.H * g.W), *w = rand_buf(g.CO * g.C * 9), *b = rand_buf(g.CO);
  float *y1 = rand_buf(ny), *y3 = rand_buf(ny);
  float *u = scratch_buf(sizeof(float) * (size_t)ft_wino_packed_floats(g.C, g.CO));
  void *scratch = scratch_buf(ft_wino_scratch(&g));
  ft_wino_pack_weights(g.C, g.CO, w, u);
  ft_gemm_epi e;
  memset(&e, 0, sizeof e);
  e.bias = b;
  e.act = FT_ACT_RELU;
  ft_set_threads(1);
  ft_wino_conv_f32(&g, x, u, &e, y1, scratch);
  ft_set_threads(3);
  ft_wino_conv_f32(&g, x, u, &e, y3, scratch);
  ft_set_threads(0);
  cr_assert(memcmp(y1, y3, sizeof(float) * (size_t)ny) == 0, "Winograd results differ between 1 and 3 threads");
  free(x); free(w); free(b); free(y1); free(y3); free(u); free(scratch);
  }
}
