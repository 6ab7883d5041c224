/* The fp32 GEMM core on the ISA this file is compiled for (templates/c/isa.h), against a plain
 * double-precision reference, on the shapes where register tiles go wrong: M and N around the
 * tile sizes and their remainders (1 ... 17 rows, 1 ... 100 columns), K of 1, 2, odd, one block
 * and a bit (the ISA tiles' K blocks, gemm.h's KC). Every operand path: A and B plain (packed on
 * the fly), B packed with A read in place, both packed, B transposed, the small-M path.
 * Plain C with no test framework, so that it builds with any cross compiler and runs under
 * qemu-user (tests/CMakeLists.txt, label isa).
 *
 * Also: fastmath.h's vector exp, GELU and sigmoid on the ISA's registers (the epilogues' and
 * attention's) give their scalar functions' values bit for bit, over every 4099th float; off
 * AVX-512, the native-vector helpers (ukernels/vec.h: partial loads and stores, the tile
 * transpose) and the epilogue on them (ft_copy_floats, ft_gemm_finish_to) match plain loops.
 * And the depthwise conv (conv.h: the channel-vector path of the ISA where it has one, the
 * plane loops elsewhere) against a double reference on edge shapes: channel counts around the
 * 16-channel block, planes of 1 to 29 columns, strides 1 and 2, windows 1, 3 and 5, a dilation,
 * residual before and after Relu or Clip, weights packed and not; every path sums each output
 * as its bias then the taps in order, one FMA each, so these bits are in the hash too.
 *
 * Prints "isa NAME", the FNV-1a hash of every result's bits, and "N passed, N failed"; exits 1
 * on any failure. The ISA tiles sum each element over k in one order with one FMA a step, so
 * builds with FMA give the same bits on every ISA: tests/isa/run_gemm_check.sh compares the
 * hashes of the builds it runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __GNUC__
#pragma GCC diagnostic ignored "-Wunused-function" /* conv.h: the ops this check does not call */
#endif
#include "conv.h"
#include "fastmath.h"
#include "gemm.h"

static uint64_t hash = 1469598103934665603ull;
static int passed, failed;

static void hash_floats(const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, x + i, 4);
    for (int b = 0; b < 4; b++) hash = (hash ^ ((u >> (8 * b)) & 0xff)) * 1099511628211ull;
  }
}

static float rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* C (M x N) against sum_k A(m, k) B(k, n) in double, |err| <= 1e-5 (1 + sum |a b|) */
static void check(const char *what, int64_t M, int64_t N, int64_t K, const float *A, const float *B, const float *C) {
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double s = 0, mag = 0;
      for (int64_t k = 0; k < K; k++) {
        s += (double)A[m * K + k] * B[k * N + n];
        mag += fabs((double)A[m * K + k] * B[k * N + n]);
      }
      if (!(fabs(C[m * N + n] - s) <= 1e-5 * (1 + mag))) {
        printf("FAIL %s M=%lld N=%lld K=%lld at (%lld, %lld): %.9g, expected %.9g\n", what, (long long)M,
               (long long)N, (long long)K, (long long)m, (long long)n, C[m * N + n], s);
        failed++;
        return;
      }
    }
  hash_floats(C, M * N);
  passed++;
}

/* ft_vn_expf, ft_vn_geluf, ft_vn_sigmoidf against ft_expf, ft_geluf, ft_sigmoidf */
static void check_vector_math(void) {
  long bad = 0;
  for (uint64_t u = 0; u < 0x100000000ull; u += 4099 * (uint64_t)FT_VLEN) {
    float x[FT_VLEN], r[3][FT_VLEN];
    for (int l = 0; l < FT_VLEN; l++) {
      uint32_t b = (uint32_t)(u + (uint64_t)l * 4099);
      memcpy(x + l, &b, 4);
    }
    ft_vn v;
    memcpy(&v, x, sizeof v);
    ft_vn e = ft_vn_expf(v), g = ft_vn_geluf(v), s = ft_vn_sigmoidf(v);
    memcpy(r[0], &e, sizeof e);
    memcpy(r[1], &g, sizeof g);
    memcpy(r[2], &s, sizeof s);
    for (int l = 0; l < FT_VLEN; l++) {
      float want[3] = {ft_expf(x[l]), ft_geluf(x[l]), ft_sigmoidf(x[l])};
      for (int f = 0; f < 3; f++)
        if (memcmp(&want[f], &r[f][l], 4) && !(want[f] != want[f] && r[f][l] != r[f][l])) {
          if (bad++ < 5)
            printf("FAIL vector %s(%a) = %a, scalar %a\n", f == 0 ? "exp" : f == 1 ? "gelu" : "sigmoid", x[l], r[f][l],
                   want[f]);
        }
    }
  }
  if (bad) failed++;
  else passed++;
}

#if FT_ISA != FT_ISA_AVX512
static int same_bits(float a, float b) { return !memcmp(&a, &b, 4) || (a != a && b != b); }

/* ukernels/vec.h and the epilogues on the ISA's vectors (gemm.h) against plain loops: partial
 * loads and stores touch only their lanes, the tile transpose, ft_copy_floats, and
 * ft_gemm_finish_to's residual, Relu, Clip (NaN and -0 kept, as the ops keep them) and sigmoid,
 * in place too (the residual is the output). Not part of the hash: AVX-512 has its own code. */
static void check_vec_helpers(void) {
  unsigned s = 777, *seed = &s; /* its own data: the GEMMs' must be the same on every ISA */
  float src[64], dst[64], x[64], r[64], c[64];
  int bad = 0;
  for (int k = 0; k <= FT_VLEN; k++) {
    for (int i = 0; i < 64; i++) { src[i] = rnd(seed); dst[i] = -7.0f; }
    ft_vn v = ft_vn_loadn(src, k);
    for (int l = 0; l < FT_VLEN; l++) bad += v[l] != (l < k ? src[l] : 0.0f);
    ft_vn_storen(dst + 1, v, k);
    for (int i = 0; i < 64; i++) bad += dst[i] != (i >= 1 && i <= k ? src[i - 1] : -7.0f);
  }
  static float t[16 * 32], tt[32 * 16];
  for (int mr = 1; mr <= 16; mr++) {
    for (int i = 0; i < 16 * 32; i++) { t[i] = rnd(seed); tt[i] = -7.0f; }
    ft_uk_transpose_t(t, mr, tt);
    for (int j = 0; j < 32; j++)
      for (int i = 0; i < 16; i++) bad += tt[j * 16 + i] != (i < mr ? t[i * 32 + j] : 0.0f);
  }
  for (int n = 0; n <= 40; n++) {
    for (int i = 0; i < 64; i++) { src[i] = rnd(seed); dst[i] = -7.0f; }
    ft_copy_floats(dst + 1, src, n);
    for (int i = 0; i < 64; i++) bad += dst[i] != (i >= 1 && i <= n ? src[i - 1] : -7.0f);
  }
  static const int acts[] = {0, FT_ACT_RELU, FT_ACT_CLIP, FT_ACT_SIGMOID};
  for (size_t a = 0; a < sizeof acts / sizeof *acts; a++)
    for (int after = 0; after < 2; after++)
      for (int mode = 0; mode < 3; mode++) /* no residual, a residual, the residual in place */
        for (int n = 1; n <= 40; n++) {
          ft_gemm_epi e;
          memset(&e, 0, sizeof e);
          e.alpha = 1.0f;
          e.act = acts[a];
          e.lo = -0.25f;
          e.hi = 0.5f;
          e.res_after = after;
          for (int i = 0; i < 64; i++) { x[i] = rnd(seed); r[i] = rnd(seed); c[i] = mode == 2 ? r[i] : -7.0f; }
          x[0] = -0.0f;
          x[n / 2] = __builtin_nanf("");
          x[n - 1] = e.lo;
          ft_gemm_finish_to(c, x, mode == 1 ? r : mode == 2 ? c : NULL, n, &e);
          for (int i = 0; i < 64; i++) {
            float y = x[i], res = mode ? r[i] : 0.0f;
            if (!after) y += res;
            if (e.act == FT_ACT_RELU) y = y < 0 ? 0 : y;
            else if (e.act == FT_ACT_CLIP) y = y < e.lo ? e.lo : (y > e.hi ? e.hi : y);
            else if (e.act == FT_ACT_SIGMOID) y = ft_sigmoidf(y);
            if (after) y += res;
            if (i >= n) y = mode == 2 ? r[i] : -7.0f;
            if (!same_bits(c[i], y) && bad++ < 5)
              printf("FAIL finish_to act %d after %d mode %d n %d at %d: %a, expected %a\n", e.act, after, mode, n, i, c[i],
                     y);
          }
        }
  if (bad) {
    printf("FAIL vector helpers: %d wrong values\n", bad);
    failed++;
  } else {
    passed++;
  }
}
#endif

/* Depthwise 2-D convs (group == C) of one image through ft_conv_depthwise. */
static void check_depthwise(void) {
  static const int64_t shapes[][7] = {/* C, H, W, K, stride, dilation, pad */
                                      {1, 7, 7, 3, 1, 1, 1},    {15, 9, 13, 3, 2, 1, 1},  {17, 14, 14, 3, 1, 1, 1},
                                      {33, 8, 8, 5, 2, 1, 2},   {16, 7, 29, 3, 1, 2, 2},  {20, 5, 1, 3, 1, 1, 1},
                                      {16, 12, 16, 5, 1, 1, 2}, {24, 11, 11, 1, 1, 1, 0}, {18, 28, 28, 3, 2, 1, 1},
                                      {32, 56, 56, 3, 1, 1, 1}, {3, 6, 9, 3, 2, 1, 0}};
  unsigned seed = 777;
  int bad = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
    for (int v = 0; v < 6; v++) {
      const int64_t *sh = shapes[si];
      int64_t C = sh[0], H = sh[1], W = sh[2], K = sh[3], S = sh[4], D = sh[5], P = sh[6];
      int64_t OH = (H + 2 * P - D * (K - 1) - 1) / S + 1, OW = (W + 2 * P - D * (K - 1) - 1) / S + 1, T = K * K;
      int act = v % 3 == 0 ? 0 : v % 3 == 1 ? FT_ACT_RELU : FT_ACT_CLIP, res = v / 2 % 3, packed = v & 1;
      int64_t p[FT_CV_NP] = {0};
      p[FT_CV_PACKED] = packed;
      p[FT_CV_MODE] = FT_CV_DEPTHWISE;
      p[FT_CV_N] = 1; p[FT_CV_C] = C; p[FT_CV_CO] = C; p[FT_CV_G] = C;
      p[FT_CV_HAS_BIAS] = 1; p[FT_CV_ACT] = act;
      p[FT_CV_IN] = 1; p[FT_CV_IN + 1] = H; p[FT_CV_IN + 2] = W;
      p[FT_CV_OUT] = 1; p[FT_CV_OUT + 1] = OH; p[FT_CV_OUT + 2] = OW;
      p[FT_CV_K] = 1; p[FT_CV_K + 1] = K; p[FT_CV_K + 2] = K;
      p[FT_CV_S] = 1; p[FT_CV_S + 1] = S; p[FT_CV_S + 2] = S;
      p[FT_CV_D] = 1; p[FT_CV_D + 1] = D; p[FT_CV_D + 2] = D;
      p[FT_CV_P + 1] = P; p[FT_CV_P + 2] = P;
      p[FT_CV_RES] = res;
      float *X = malloc(sizeof(float) * C * H * W), *Wt = malloc(sizeof(float) * C * T), *B = malloc(sizeof(float) * C);
      float *R = malloc(sizeof(float) * C * OH * OW), *Y = malloc(sizeof(float) * C * OH * OW);
      float *Wp = malloc(ft_conv_dw_pack_as(p, Wt, 0, NULL) + 64);
      for (int64_t i = 0; i < C * H * W; i++) X[i] = rnd(&seed);
      for (int64_t i = 0; i < C * T; i++) Wt[i] = rnd(&seed);
      for (int64_t i = 0; i < C; i++) B[i] = rnd(&seed);
      for (int64_t i = 0; i < C * OH * OW; i++) R[i] = rnd(&seed);
      ft_conv_dw_pack_as(p, Wt, 0, Wp);
      ft_gemm_epi e = {1, 1, NULL, 1, 0, act, -0.25f, 0.5f, NULL, res == 2};
      memset(Y, 0xff, sizeof(float) * C * OH * OW); /* NaN: an output not written fails */
      ft_conv_depthwise(p, X, packed ? Wp : Wt, B, res ? R : NULL, Y, &e);
      for (int64_t c = 0; c < C; c++)
        for (int64_t oh = 0; oh < OH; oh++)
          for (int64_t ow = 0; ow < OW; ow++) {
            double ref = B[c];
            for (int64_t kh = 0; kh < K; kh++)
              for (int64_t kw = 0; kw < K; kw++) {
                int64_t ih = oh * S + kh * D - P, iw = ow * S + kw * D - P;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W) ref += (double)Wt[c * T + kh * K + kw] * X[(c * H + ih) * W + iw];
              }
            int64_t o = (c * OH + oh) * OW + ow;
            if (res == 1) ref += R[o];
            if (act == FT_ACT_RELU) ref = ref < 0 ? 0 : ref;
            if (act == FT_ACT_CLIP) ref = ref < -0.25 ? -0.25 : ref > 0.5 ? 0.5 : ref;
            if (res == 2) ref += R[o];
            if (!(fabs(Y[o] - ref) <= 1e-5 * (1 + fabs(ref)))) {
              if (bad < 5)
                printf("FAIL depthwise C %lld %lldx%lld k%lld s%lld d%lld p%lld act %d res %d packed %d: y[%lld][%lld][%lld] %g, want %g\n",
                       (long long)C, (long long)H, (long long)W, (long long)K, (long long)S, (long long)D, (long long)P, act,
                       res, packed, (long long)c, (long long)oh, (long long)ow, Y[o], ref);
              bad++;
            }
          }
      hash_floats(Y, C * OH * OW);
      free(X); free(Wt); free(B); free(R); free(Y); free(Wp);
    }
  if (bad) {
    printf("FAIL depthwise: %d wrong values\n", bad);
    failed++;
  } else {
    passed++;
  }
}

int main(void) {
  static const int64_t Ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 17, 25, 40};
  static const int64_t Ns[] = {1, 7, 16, 17, 32, 33, 100};
  static const int64_t Ks[] = {1, 2, 3, 17, 128, 129, 300};
  unsigned seed = 12345;
  printf("isa %s\n", FT_ISA_NAME);
  check_vector_math();
#if FT_ISA != FT_ISA_AVX512
  check_vec_helpers();
#endif
  check_depthwise();
  for (size_t im = 0; im < sizeof Ms / sizeof *Ms; im++)
    for (size_t in = 0; in < sizeof Ns / sizeof *Ns; in++)
      for (size_t ik = 0; ik < sizeof Ks / sizeof *Ks; ik++) {
        int64_t M = Ms[im], N = Ns[in], K = Ks[ik];
        float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N), *BT = malloc(sizeof(float) * K * N);
        float *C = malloc(sizeof(float) * M * N), *apk = malloc(sizeof(float) * ft_gemm_packed_a_floats(M, K) + 64);
        float *bpk = malloc(sizeof(float) * ft_gemm_packed_b_floats(K, N) + 64), *scr = malloc(sizeof(float) * M * K + 64);
        for (int64_t i = 0; i < M * K; i++) A[i] = rnd(&seed);
        for (int64_t i = 0; i < K * N; i++) B[i] = rnd(&seed);
        for (int64_t k = 0; k < K; k++)
          for (int64_t n = 0; n < N; n++) BT[n * K + k] = B[k * N + n];
        ft_gemm_pack_a(M, K, A, K, 1, apk);
        ft_gemm_pack_b(K, N, B, N, 1, bpk);
        ft_gemm_op g;
        for (int mode = 0; mode < 5; mode++) {
          memset(&g, 0, sizeof g);
          g.M = M; g.N = N; g.K = K;
          g.a = A; g.a_rs = K; g.a_cs = 1;
          g.b = B; g.b_rs = N; g.b_cs = 1;
          g.c = C; g.ldc = N;
          g.e.alpha = 1.0f;
          memset(C, 0xff, sizeof(float) * M * N); /* NaN: an element not written fails */
          const char *what = "plain";
          if (mode == 1) { what = "B packed, A in place"; g.bp = bpk; }
          if (mode == 2) { what = "both packed"; g.ap = apk; g.bp = bpk; }
          if (mode == 3) { what = "B transposed"; g.b = BT; g.b_rs = 1; g.b_cs = K; }
          if (mode == 4) {
            if (M > FT_GEMM_SMALL_M) continue;
            what = "small M";
            g.bp = bpk;
            ft_gemm_small_run(&g, ft_gemm_small_plan_for(M), scr);
          } else {
            ft_gemm_run(&g);
          }
          check(what, M, N, K, A, B, C);
        }
        free(A); free(B); free(BT); free(C); free(apk); free(bpk); free(scr);
      }
  printf("hash %016llx\n", (unsigned long long)hash);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
