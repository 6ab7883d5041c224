/* fp32 GEMM core: C[M,N] = alpha * A[M,K] * B[K,N] + beta * bias, then an optional activation.
 *
 * Structure (Goto/BLIS): a register-blocked micro-kernel computes an MR x NR tile of C from a
 * "sliver" of A (kc x MR, k-major) and a "panel" of B (kc x NR, k-major), both contiguous, so
 * the inner loop is two vector loads of B, MR broadcasts of A and 2*MR FMAs. Where both come
 * packed (MatMul on constant weights) a tile runs over all of K (up to FT_GEMM_FULL_K) and is
 * stored once; otherwise K is cut into blocks of KC so the B micro-panel (KC x NR floats) packed
 * on the fly stays in L1 while it is reused by every A sliver. The A rows of one work item stay
 * in L2 while they are reused by consecutive panels.
 *
 * Both operands come either packed (the layouts below: A in MR-row slivers, B in NR-column
 * panels, each over the full K) or as plain strided matrices, in which case the kc-deep piece
 * the micro-kernel needs is packed on the fly into a small buffer on the stack. Packed B is
 * what ftaxc writes at compile time for constant weights (ft_prepack); a B computed at run time
 * (attention's Q.K^T) is packed a micro-panel at a time, once per row block of C, which for
 * the usual M (one row block) costs what packing it beforehand would. An unpacked A is packed
 * again for every column panel: MatMul packs its A into scratch first, and Conv weights arrive
 * prepacked from ftaxc (given plain, as in constant folding, Conv runs about 40% slower).
 *
 * Work is split into items (a block of rows x one NR-wide column panel, all of K), the unit of
 * the parallel loops (parallel.h); items never share output elements.
 *
 * The vector type uses GCC vector extensions: AVX-512 with -march=native on this machine,
 * correct (and narrower) code anywhere else. Every element of C is computed by the same
 * sequence of operations whatever the tiling of work across threads, so results do not depend
 * on the thread count. */
#ifndef FT_GEMM_H
#define FT_GEMM_H

#include <stdint.h>
#include <string.h>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#include "fastmath.h"
#include "gemm_layout.h"
#include "gemm_params.h"
#include "isa.h"
#include "parallel.h"
#include "scalar_ops.h"
#include "tensor.h"
#include "ukernels/gemm_f32_avx2.h"
#include "ukernels/gemm_f32_avx512.h"
#include "ukernels/gemm_f32_generic.h"
#include "ukernels/gemm_f32_neon.h"
#include "ukernels/vec.h"

#ifndef FT_GEMM_PF /* the direct (conv) kernel's prefetch of its A sliver, 128 k-steps ahead:
                      * conv weights come from DRAM in a whole model */
#define FT_GEMM_PF(a) __builtin_prefetch((a) + FT_GEMM_MR * 128)
#endif
/* One k-step's share of a prefetch into L2 that runs beside a tile's loop: the lines of the
 * bytes bytes at pf (a line or a few), then pf moved past them; pf NULL: nothing. In a whole
 * model the weights come from DRAM once per run and a tile's first pass over a panel waited
 * on them (the hardware prefetch does not run far enough ahead), so the kernels that stream
 * weights (conv.h's transposed tile, the bf16 and int8 GEMMs) fetch a slice of the panel read
 * next while they compute this one. A slice may run past the weights' end: a prefetch is a
 * hint and never faults. */
static inline __attribute__((always_inline)) const char *ft_prefetch_step(const char *pf, int64_t bytes) {
  if (!pf) return NULL;
  for (int64_t q = 0; q < bytes; q += 64) __builtin_prefetch(pf + q, 0, 2);
  return pf + bytes;
}

#ifndef FT_GEMM_KC
#define FT_GEMM_KC 256 /* K block: a B micro-panel of KC*NR floats (32 KiB) stays in L1 */
#endif
#ifndef FT_GEMM_L2
#define FT_GEMM_L2 (512 * 1024) /* bytes of A rows one work item may keep in L2 */
#endif


/* Epilogue activations: a unary or parameter scalar op's id (templates/common/scalar_ops.h),
 * with its parameters in the epilogue's lo and hi; or SiLU, x * sigmoid(x), which the conv pass
 * matches as Sigmoid and Mul and which is no scalar op of its own. Relu, Clip, Sigmoid and SiLU
 * have vector code below; the others run their scalar-op expression per element. */
enum {
  FT_ACT_NONE = FT_SOP_NONE, FT_ACT_RELU = FT_SOP_RELU, FT_ACT_CLIP = FT_SOP_CLIP, FT_ACT_TANH = FT_SOP_TANH,
  FT_ACT_GELU = FT_SOP_GELU, FT_ACT_GELU_TANH = FT_SOP_GELU_TANH, FT_ACT_SIGMOID = FT_SOP_SIGMOID,
  FT_ACT_SILU = 127
};
/* The activations the epilogue computes. */
static inline int ft_act_known(int64_t act) {
  return act == FT_ACT_NONE || act == FT_ACT_SILU || FT_SOP_IS_UNARY(act) || FT_SOP_IS_PARAM(act);
}

/* What happens to a finished tile: C = alpha * acc + beta * bias[m * bias_rs + n * bias_cs]
 * (no bias term when bias is NULL), then an activation (act, with parameters lo and hi: Clip's
 * bounds, LeakyRelu's alpha ...). It runs on each row of the tile right after the last K block, while the row
 * is in L1: a fused activation costs no extra pass over C. With res set, a residual laid out
 * exactly like C (res + i is added to c + i) is added before the activation, or after it when
 * res_after is set (ResNet's Conv -> Add -> Relu, and Conv -> Relu -> Add). */
typedef struct ft_gemm_epi {
  float alpha, beta;
  const float *bias;
  int64_t bias_rs, bias_cs;
  int act;
  float lo, hi;
  const float *res;
  int res_after;
} ft_gemm_epi;

/* One GEMM. A element (m,k) is a[m * a_rs + k * a_cs] unless ap (packed) is given; likewise B
 * element (k,n) is b[k * b_rs + n * b_cs] unless bp is given, or b[b_rowoff[k] + n] when the
 * rows of B are scattered (a convolution's shifted input rows). C is row-major with stride
 * ldc; with c_wrap set, column n of a row is written at (n / c_wrap) * c_keep + n % c_wrap and
 * dropped when n % c_wrap >= c_keep (output rows computed over a padded width). */
typedef struct ft_gemm_op {
  int64_t M, N, K;
  const float *ap;
  const float *a;
  int64_t a_rs, a_cs;
  const float *bp;
  const float *b;
  int64_t b_rs, b_cs;
  const int64_t *b_rowoff;
  int b_direct; /* read unpacked B in place (AVX-512): full-K tiles, no panel copies */
  float *c;
  int64_t ldc;
  int64_t c_wrap, c_keep;
  ft_gemm_epi e;
  /* another GEMM core's work item in place of this one's (gemm_bf16.h: ap and bp in its own
     packed layout); NULL: the fp32 core */
  void (*column)(const struct ft_gemm_op *g, int64_t m0, int64_t m1, int64_t jr);
} ft_gemm_op;

/* ---- vectors of 16 floats, whole or partial (masked) ---------------------------------------- */
typedef int32_t ft_v16i __attribute__((vector_size(64)));

/* m ? a : b per lane (m from a vector comparison). Vectors go by pointer between these
 * helpers: a 64-byte vector by value draws ABI notes on targets without AVX-512. */
#define FT_V16_SELECT(m, a, b) ((ft_v16f)(((m) & (ft_v16i)(a)) | (~(m) & (ft_v16i)(b))))

/* *v = lanes [0, k) of p, zeros after (k <= 16). AVX-512: a masked load (masked-off lanes neither
 * fault nor read); elsewhere through a small buffer. (AVX2's two masked halves joined into the
 * 16-float vector went through the stack in every epilogue that inlines this.) */
static inline __attribute__((always_inline)) void ft_v16_load(ft_v16f *v, const float *p, int64_t k) {
  if (k >= 16) { *v = *(const ft_v16u *)p; return; }
#ifdef __AVX512F__
  *v = (ft_v16f)_mm512_maskz_loadu_ps((__mmask16)((1u << k) - 1), p);
#else
  float b[16] __attribute__((aligned(64))) = {0};
  for (int64_t j = 0; j < k; j++) b[j] = p[j];
  *v = *(const ft_v16f *)b;
#endif
}

static inline __attribute__((always_inline)) void ft_v16_store(float *p, const ft_v16f *v, int64_t k) {
  if (k >= 16) { *(ft_v16u *)p = *v; return; }
#ifdef __AVX512F__
  _mm512_mask_storeu_ps(p, (__mmask16)((1u << k) - 1), (__m512)*v);
#else
  float b[16] __attribute__((aligned(64)));
  *(ft_v16f *)b = *v;
  for (int64_t j = 0; j < k; j++) p[j] = b[j];
#endif
}

#ifdef __AVX512F__
/* Sigmoid of 16 lanes for the epilogues: 1 / (1 + 2^t), t = -x log2(e) clamped to [-120, 120]
 * (the result is 0 or 1 in float well before), 2^t = 2^n * 2^f with a degree-6 polynomial for
 * 2^f on [-1/2, 1/2] (relative error 2e-8) and vscalefps for 2^n, the reciprocal as rcp14 and
 * one Newton step. About a third of the cost of the scalar-formula loop (ft_sigmoidf, whose
 * division and exponent assembly the compiler vectorizes less well); agrees with it to a few
 * float ulps. NaN stays NaN (min/max return their second operand when it is NaN). */
static inline __attribute__((always_inline)) __m512 ft_v16_sigmoid(__m512 x) {
  __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(-1.44269504088896341f));
  t = _mm512_min_ps(_mm512_set1_ps(120.0f), t);
  t = _mm512_max_ps(_mm512_set1_ps(-120.0f), t);
  __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 f = _mm512_sub_ps(t, n);
  __m512 p = _mm512_set1_ps(1.533757750e-04f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.339985989e-03f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618519805e-03f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550329015e-02f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402264625e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931471825e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  __m512 one = _mm512_set1_ps(1.0f), d = _mm512_add_ps(_mm512_scalef_ps(p, n), one);
  __m512 r = _mm512_rcp14_ps(d);
  return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, one), r);
}

/* e^x of 16 lanes: fastmath.h's ft_expf (the same clamp, reduction and polynomial) with the
 * rounding as vroundscaleps and 2^n as vscalefps. The compiler's vectorization of ft_expf keeps
 * its selects as masked moves and builds 2^n from two exponent fields: about twice the
 * instructions. Agrees with ft_expf to a float ulp (where the compiler fuses a multiply-add
 * there and not here, or back). NaN stays NaN. */
static inline __attribute__((always_inline)) __m512 ft_v16_exp(__m512 x) {
  __m512 xc = _mm512_min_ps(_mm512_set1_ps(89.0f), x); /* NaN: 89, replaced at the end */
  xc = _mm512_max_ps(_mm512_set1_ps(-104.0f), xc);
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 q = _mm512_set1_ps(0.0013751407893437366f);
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.008368916341366783f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.041669533109269324f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.1666651845998034f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.49999988595112443f));
  __m512 er = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, _mm512_add_ps(_mm512_set1_ps(1.0f), r));
  __m512 y = _mm512_scalef_ps(er, n);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, x);
}
#endif


#ifdef __AVX512F__
/* r[i] = row i of a 16x16 block in; column i out. */
static inline __attribute__((always_inline)) void ft_transpose16(__m512 *r) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    r[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88);
    t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xDD);
    t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88);
    t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xDD);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
    r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xDD);
    r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
    r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xDD);
  }
}

/* The first half of a 16x16 transpose done by the loads: r[4a + b] holds, in its 128-bit lane
 * k, floats [4a, 4a + 4) of row b + 4k of the 16 rows ld floats apart at x (inserts from memory
 * instead of the two cross-lane shuffle stages of ft_transpose16, which cost more than the loads
 * on this Zen 4). ft_lanes4x4 finishes it: r[j] is then column j, rows 0..15 in order. */
static inline __attribute__((always_inline)) void ft_gather16_t(const float *x, int64_t ld, __m512 *r) {
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) {
    const float *a = x + (i % 4) * ld + (i / 4) * 4;
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(a));
    v = _mm512_insertf32x4(v, _mm_loadu_ps(a + 4 * ld), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps(a + 8 * ld), 2);
    r[i] = _mm512_insertf32x4(v, _mm_loadu_ps(a + 12 * ld), 3);
  }
}

/* 4x4 transposes within each 128-bit lane of each group of four vectors r[4a .. 4a + 3]. */
static inline __attribute__((always_inline)) void ft_lanes4x4(__m512 *r) {
#pragma GCC unroll 4
  for (int a = 0; a < 4; a++) {
    __m512 t0 = _mm512_unpacklo_ps(r[4 * a], r[4 * a + 1]), t1 = _mm512_unpackhi_ps(r[4 * a], r[4 * a + 1]);
    __m512 t2 = _mm512_unpacklo_ps(r[4 * a + 2], r[4 * a + 3]), t3 = _mm512_unpackhi_ps(r[4 * a + 2], r[4 * a + 3]);
    r[4 * a] = _mm512_shuffle_ps(t0, t2, 0x44);
    r[4 * a + 1] = _mm512_shuffle_ps(t0, t2, 0xEE);
    r[4 * a + 2] = _mm512_shuffle_ps(t1, t3, 0x44);
    r[4 * a + 3] = _mm512_shuffle_ps(t1, t3, 0xEE);
  }
}
#endif

/* ---- packed layouts ------------------------------------------------------------------------
 * A: sliver s (rows s*MR .. s*MR+MR-1) at ap + s*K*MR; element (s*MR+r, k) at [k*MR + r].
 * B: panel j (columns j*NR .. j*NR+NR-1) at bp + j*K*NR; element (k, j*NR+c) at [k*NR + c].
 * Rows and columns past M and N are zero. */
static inline int64_t ft_gemm_packed_a_floats(int64_t M, int64_t K) {
  return (M + FT_GEMM_MR - 1) / FT_GEMM_MR * FT_GEMM_MR * K;
}
static inline int64_t ft_gemm_packed_b_floats(int64_t K, int64_t N) {
  return (N + FT_GEMM_NR - 1) / FT_GEMM_NR * FT_GEMM_NR * K;
}

#ifdef __AVX512F__
/* Four rows of A (row-major, rows rs apart), k in [k0, k0 + kc), into four columns of a sliver
 * (row r at dst[k * MR + r]): 16 k at a time as four 4x4 transposes, one per 128-bit lane, each
 * lane's result four stores of 4 floats. About a quarter of the scalar copy's time, which cost 4%
 * of a 128x768x768 GEMM (one scalar store per element). */
static inline void ft_gemm_pack_a_rows4(const float *src, int64_t rs, int64_t k0, int64_t kc, float *restrict dst) {
  int64_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    const float *s0 = src + k0 + k;
    __m512 a0 = _mm512_loadu_ps(s0), a1 = _mm512_loadu_ps(s0 + rs);
    __m512 a2 = _mm512_loadu_ps(s0 + 2 * rs), a3 = _mm512_loadu_ps(s0 + 3 * rs);
    __m512d t0 = _mm512_castps_pd(_mm512_unpacklo_ps(a0, a1)), t1 = _mm512_castps_pd(_mm512_unpackhi_ps(a0, a1));
    __m512d t2 = _mm512_castps_pd(_mm512_unpacklo_ps(a2, a3)), t3 = _mm512_castps_pd(_mm512_unpackhi_ps(a2, a3));
    __m512 o[4] = {_mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2)), _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2)),
                   _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3)), _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3))};
    float *d = dst + k * FT_GEMM_MR; /* lane j of o[m] is k + 4j + m */
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
      _mm_storeu_ps(d + m * FT_GEMM_MR, _mm512_castps512_ps128(o[m]));
      _mm_storeu_ps(d + (4 + m) * FT_GEMM_MR, _mm512_extractf32x4_ps(o[m], 1));
      _mm_storeu_ps(d + (8 + m) * FT_GEMM_MR, _mm512_extractf32x4_ps(o[m], 2));
      _mm_storeu_ps(d + (12 + m) * FT_GEMM_MR, _mm512_extractf32x4_ps(o[m], 3));
    }
  }
  for (; k < kc; k++)
    for (int r = 0; r < 4; r++) dst[k * FT_GEMM_MR + r] = src[r * rs + k0 + k];
}
#endif

/* Rows s*MR.. of A, k in [k0, k0+kc), into dst (kc x MR). */
static void ft_gemm_pack_a_sliver(int64_t M, const float *a, int64_t rs, int64_t cs, int64_t s,
                                  int64_t k0, int64_t kc, float *restrict dst) {
  int64_t m0 = s * FT_GEMM_MR;
  int mr = M - m0 < FT_GEMM_MR ? (int)(M - m0) : FT_GEMM_MR;
  if (mr < FT_GEMM_MR) memset(dst, 0, sizeof(float) * (size_t)(kc * FT_GEMM_MR));
  if (cs == 1) { /* row-major: read each row along k */
    int r = 0;
#if defined(__AVX512F__) && FT_GEMM_MR % 4 == 0
    for (; r + 4 <= mr; r += 4) ft_gemm_pack_a_rows4(a + (m0 + r) * rs, rs, k0, kc, dst + r);
#endif
    for (; r < mr; r++) {
      const float *src = a + (m0 + r) * rs + k0;
      for (int64_t k = 0; k < kc; k++) dst[k * FT_GEMM_MR + r] = src[k];
    }
  } else { /* transposed (rs == 1): read each column of A^T along m */
    for (int64_t k = 0; k < kc; k++) {
      const float *src = a + (k0 + k) * cs + m0 * rs;
      for (int r = 0; r < mr; r++) dst[k * FT_GEMM_MR + r] = src[r * rs];
    }
  }
}

/* One row of a B panel: nr <= NR floats of src, zeros after; two whole or masked vectors. */
static inline __attribute__((always_inline)) void ft_gemm_pack_b_row(float *restrict dst, const float *src, int nr) {
  ft_v16f v0, v1;
  if (nr == FT_GEMM_NR) {
    v0 = *(const ft_v16u *)src;
    v1 = *(const ft_v16u *)(src + 16);
  } else {
    ft_v16_load(&v0, src, nr < 16 ? nr : 16);
    if (nr > 16) ft_v16_load(&v1, src + 16, nr - 16);
    else v1 = (ft_v16f){0};
  }
  *(ft_v16u *)dst = v0;
  *(ft_v16u *)(dst + 16) = v1;
}

#ifdef __AVX512F__
/* A B panel from B^T (row-major, rows cs apart, nr <= NR of them from src, each contiguous
 * along k): per 16 rows and 16 k, 16 masked loads, ft_transpose16, 16 stores; rows past nr come
 * out zero. The scalar copy wrote one float per store, 128 bytes apart: it was most of the
 * packing of K^T in attention (key rows in place, 64 floats each). */
static inline void ft_gemm_pack_bt_panel(const float *src, int64_t cs, int nr, int64_t kc, float *restrict dst) {
  for (int h = 0; h < FT_GEMM_NR / 16; h++) {
    const int nh = nr - 16 * h < 0 ? 0 : nr - 16 * h > 16 ? 16 : nr - 16 * h;
    const float *s = src + 16 * h * cs;
    for (int64_t k = 0; k < kc; k += 16) {
      const int kw = kc - k < 16 ? (int)(kc - k) : 16;
      const __mmask16 km = (__mmask16)((1u << kw) - 1);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; i++) r[i] = i < nh ? _mm512_maskz_loadu_ps(km, s + i * cs + k) : _mm512_setzero_ps();
      ft_transpose16(r);
      float *d = dst + k * FT_GEMM_NR + 16 * h;
      if (kw == 16) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) _mm512_storeu_ps(d + i * FT_GEMM_NR, r[i]);
      } else {
        for (int i = 0; i < kw; i++) _mm512_storeu_ps(d + i * FT_GEMM_NR, r[i]);
      }
    }
  }
}
#endif

/* Columns j*NR.. of B, k in [k0, k0+kc), into dst (kc x NR). */
static void ft_gemm_pack_b_panel(int64_t N, const float *b, int64_t rs, int64_t cs, int64_t j,
                                 int64_t k0, int64_t kc, float *restrict dst) {
  int64_t n0 = j * FT_GEMM_NR;
  int nr = N - n0 < FT_GEMM_NR ? (int)(N - n0) : FT_GEMM_NR;
  if (cs == 1 && nr == FT_GEMM_NR) {
    for (int64_t k = 0; k < kc; k++) ft_gemm_pack_b_row(dst + k * FT_GEMM_NR, b + (k0 + k) * rs + n0, FT_GEMM_NR);
  } else if (cs == 1) {
    for (int64_t k = 0; k < kc; k++) ft_gemm_pack_b_row(dst + k * FT_GEMM_NR, b + (k0 + k) * rs + n0, nr);
  } else { /* transposed B (B^T row-major): read each column of B along k */
#ifdef __AVX512F__
    if (rs == 1) { /* columns contiguous along k: 16x16 blocks through registers */
      ft_gemm_pack_bt_panel(b + n0 * cs + k0, cs, nr, kc, dst);
      return;
    }
#endif
    if (nr < FT_GEMM_NR) memset(dst, 0, sizeof(float) * (size_t)(kc * FT_GEMM_NR));
    for (int c = 0; c < nr; c++) {
      const float *src = b + (n0 + c) * cs + k0 * rs;
      for (int64_t k = 0; k < kc; k++) dst[k * FT_GEMM_NR + c] = src[k * rs];
    }
  }
}

/* The same for a B whose row k starts at b + rowoff[k] (unit column stride). */
static void ft_gemm_pack_b_panel_rows(int64_t N, const float *b, const int64_t *rowoff, int64_t j,
                                      int64_t k0, int64_t kc, float *restrict dst) {
  int64_t n0 = j * FT_GEMM_NR;
  int nr = N - n0 < FT_GEMM_NR ? (int)(N - n0) : FT_GEMM_NR;
  const int64_t *ro = rowoff + k0;
  if (nr == FT_GEMM_NR)
    for (int64_t k = 0; k < kc; k++) ft_gemm_pack_b_row(dst + k * FT_GEMM_NR, b + ro[k] + n0, FT_GEMM_NR);
  else
    for (int64_t k = 0; k < kc; k++) ft_gemm_pack_b_row(dst + k * FT_GEMM_NR, b + ro[k] + n0, nr);
}

/* Whole matrices into the packed layouts (ft_gemm_packed_*_floats floats at dst). */
static void ft_gemm_pack_a(int64_t M, int64_t K, const float *a, int64_t rs, int64_t cs, float *dst) {
  for (int64_t s = 0; s * FT_GEMM_MR < M; s++)
    ft_gemm_pack_a_sliver(M, a, rs, cs, s, 0, K, dst + s * K * FT_GEMM_MR);
}
static void ft_gemm_pack_b(int64_t K, int64_t N, const float *b, int64_t rs, int64_t cs, float *dst) {
  for (int64_t j = 0; j * FT_GEMM_NR < N; j++)
    ft_gemm_pack_b_panel(N, b, rs, cs, j, 0, K, dst + j * K * FT_GEMM_NR);
}

/* ---- micro-kernels ------------------------------------------------------------------------
 * One register tile per ISA, in templates/c/ukernels/gemm_f32_<isa>.h. AVX-512's defines
 * ft_gemm_ukernel_mr, ft_gemm_ukernel_rows_mr and the small-M tiles itself; every other ISA's
 * defines one entry, ft_uk_tile, which these call. */
#if FT_ISA != FT_ISA_AVX512
/* t (mr x NR) = A sliver (kc x MR, packed) * B panel (kc x NR, packed); pf: a line a k-step to
 * prefetch (ft_gemm_column: half the next panel), NULL none */
static void ft_gemm_ukernel_mr(int mr, int64_t kc, const float *a, const float *b, float *t, const float *pf) {
  ft_uk_tile(mr, FT_GEMM_NR, kc, a, 1, FT_GEMM_MR, b, t, pf, 64);
}
/* the same with A's mr rows where they lie, lda apart */
static inline void ft_gemm_ukernel_rows_mr(int mr, int64_t kc, const float *a, int64_t lda, const float *b, float *t,
                                           const float *pf) {
  ft_uk_tile(mr, FT_GEMM_NR, kc, a, lda, 1, b, t, pf, 64);
}
#endif
/* ---- tile epilogue ------------------------------------------------------------------------ */

/* The activations without vector code, over one row of a tile: each scalar op's expression
 * with the float32 math of its own kernel (unary.h), so a fused activation computes what the op
 * would. Not inlined: one vectorized loop over a run-time count rather than a copy of each
 * unrolled into every instance of the tile store (an inlined tanh GELU measured slower). */
static __attribute__((noinline)) void ft_gemm_act_row(float *restrict c, int n, int act, float lo, float hi) {
  typedef float T;
  const float a = lo, b = hi;
  (void)a; (void)b;
#define FT_MATH ft_f32
#define FT_GEMM_ACT_(ID, EXPR)                                                                   \
  case FT_SOP_##ID:                                                                              \
    if (FT_SOP_USED(FT_SOP_##ID))                                                                \
      for (int j = 0; j < n; j++) { float x = c[j]; c[j] = (EXPR); }                             \
    break;
#define FT_GEMM_ACT_ROW_(ID, fn, name, kernels, EXPR) FT_GEMM_ACT_(ID, EXPR)
#define FT_GEMM_ACT_PARAM_ROW_(ID, fn, name, kernels, A_, DA, B_, DB, EXPR) FT_GEMM_ACT_(ID, EXPR)
  switch (act) {
    FT_SCALAR_UNARY_OPS(FT_GEMM_ACT_ROW_)
    FT_SCALAR_PARAM_OPS(FT_GEMM_ACT_PARAM_ROW_)
  default: break;
  }
#undef FT_GEMM_ACT_
#undef FT_GEMM_ACT_ROW_
#undef FT_GEMM_ACT_PARAM_ROW_
#undef FT_MATH
}

#ifndef __AVX512F__
/* GELU, Sigmoid and SiLU on n values with the ISA's vectors (fastmath.h: the scalar functions'
 * values), a scalar tail. Not inlined: one loop rather than a copy in every tile's epilogue
 * (inlined, its live values spilled in each). */
static __attribute__((noinline)) void ft_gemm_act_vec(float *restrict c, int64_t n, int act) {
  /* whole vectors, then the tail from its own count (a tail loop that starts where the vector
     loop stopped drew GCC's false -Waggressive-loop-optimizations where n is a constant) */
  int64_t nv = n / FT_VLEN, tail = n % FT_VLEN;
  float *t = c + nv * FT_VLEN;
  if (act == FT_ACT_GELU) {
    if (FT_SOP_USED(FT_SOP_GELU)) { /* compiled out where unused (freestanding: no fabsf) */
      for (int64_t v = 0; v < nv; v++) *(ft_vnu *)(c + FT_VLEN * v) = ft_vn_geluf(*(const ft_vnu *)(c + FT_VLEN * v));
      for (int64_t j = 0; j < tail; j++) t[j] = ft_geluf(t[j]);
    }
  } else if (act == FT_ACT_SIGMOID) {
    for (int64_t v = 0; v < nv; v++) *(ft_vnu *)(c + FT_VLEN * v) = ft_vn_sigmoidf(*(const ft_vnu *)(c + FT_VLEN * v));
    for (int64_t j = 0; j < tail; j++) t[j] = ft_sigmoidf(t[j]);
  } else {
    for (int64_t v = 0; v < nv; v++) {
      ft_vn x = *(const ft_vnu *)(c + FT_VLEN * v);
      *(ft_vnu *)(c + FT_VLEN * v) = x * ft_vn_sigmoidf(x);
    }
    for (int64_t j = 0; j < tail; j++) t[j] = t[j] * ft_sigmoidf(t[j]);
  }
}
#endif

/* The activation on n values. */
static inline __attribute__((always_inline)) void ft_gemm_act(float *restrict c, int64_t n,
                                                              const ft_gemm_epi *e) {
#if FT_ISA != FT_ISA_AVX512 /* the same selects on the ISA's vectors (ukernels/vec.h), then the tail */
  int64_t nv = n / FT_VLEN, tail = n % FT_VLEN;
  float *t = c + nv * FT_VLEN;
#else
  int64_t tail = n;
  float *t = c;
#endif
  if (e->act == FT_ACT_RELU) { /* NaN stays NaN, as in the Relu op */
#if FT_ISA != FT_ISA_AVX512
    for (int64_t v = 0; v < nv; v++) {
      *(ft_vnu *)(c + FT_VLEN * v) = ft_vn_relu(*(const ft_vnu *)(c + FT_VLEN * v));
    }
#endif
    for (int64_t j = 0; j < tail; j++) t[j] = t[j] < 0 ? 0 : t[j];
  } else if (e->act == FT_ACT_CLIP) {
    float lo = e->lo, hi = e->hi;
#if FT_ISA != FT_ISA_AVX512
    const ft_vn vlo = (ft_vn){0} + lo, vhi = (ft_vn){0} + hi;
    for (int64_t v = 0; v < nv; v++)
      *(ft_vnu *)(c + FT_VLEN * v) = ft_vn_clip(*(const ft_vnu *)(c + FT_VLEN * v), vlo, vhi);
#endif
    for (int64_t j = 0; j < tail; j++) t[j] = t[j] < lo ? lo : (t[j] > hi ? hi : t[j]);
  }
#ifdef __AVX512F__
  else if (e->act == FT_ACT_GELU)
    for (int64_t h = 0; h < n; h += 16) {
      __mmask16 m = (__mmask16)(n - h >= 16 ? 0xffff : (1u << (n - h)) - 1);
      _mm512_mask_storeu_ps(c + h, m, ft_v16_gelu(_mm512_maskz_loadu_ps(m, c + h)));
    }
#else
  else if (e->act == FT_ACT_GELU && FT_SOP_USED(FT_SOP_GELU)) /* not pasted where unused (freestanding: no fabsf) */
    ft_gemm_act_vec(c, n, FT_ACT_GELU);
#endif
  else if (e->act == FT_ACT_SIGMOID || e->act == FT_ACT_SILU) {
#ifdef __AVX512F__
    for (int64_t h = 0; h < n; h += 16) {
      __mmask16 m = (__mmask16)(n - h >= 16 ? 0xffff : (1u << (n - h)) - 1);
      __m512 x = _mm512_maskz_loadu_ps(m, c + h), y = ft_v16_sigmoid(x);
      _mm512_mask_storeu_ps(c + h, m, e->act == FT_ACT_SILU ? _mm512_mul_ps(x, y) : y);
    }
#else
    ft_gemm_act_vec(c, n, e->act);
#endif
  }
  else if (e->act)
    ft_gemm_act_row(c, (int)n, e->act, e->lo, e->hi);
}

/* The end of the epilogue on n finished outputs in place: residual (before), activation,
 * residual (after). */
static inline __attribute__((always_inline)) void ft_gemm_finish(float *restrict c,
                                                                 const float *restrict res,
                                                                 int64_t n, const ft_gemm_epi *e) {
  if (res && !e->res_after) for (int64_t j = 0; j < n; j++) c[j] += res[j];
  ft_gemm_act(c, n, e);
  if (res && e->res_after) for (int64_t j = 0; j < n; j++) c[j] += res[j];
}

/* ---- the epilogue a vector at a time -------------------------------------------------------
 * For a fused op's edge pieces (rows of a tile cut at an output row's end, or the last panel)
 * and the depthwise conv's rows: the residual and the activation run on values in registers
 * and each result is stored once, as a whole or partial vector. Finishing such short pieces
 * in memory instead costs scalar tails, whose selects compile to branches that mispredict at
 * every sign change (and reloads of just-stored values, which wait for the stores when they
 * straddle them). Partial vectors are AVX-512 masked loads and stores (masked-off lanes
 * neither fault nor write); other targets go through a small buffer. */
#if FT_ISA != FT_ISA_AVX512
/* The activation on one of the ISA's vectors: the selects of ft_gemm_act, the vector GELU and
 * sigmoid (fastmath.h, as ft_gemm_act_vec), and the rest a lane at a time (ft_gemm_act_row:
 * GELU where the program has no GELU op either, whose scalar GELU is not pasted). */
static inline __attribute__((always_inline)) ft_vn ft_vn_act(ft_vn y, const ft_gemm_epi *e) {
  if (e->act == FT_ACT_RELU) return ft_vn_relu(y);
  if (e->act == FT_ACT_CLIP) return ft_vn_clip(y, (ft_vn){0} + e->lo, (ft_vn){0} + e->hi);
  if (e->act == FT_ACT_GELU && FT_SOP_USED(FT_SOP_GELU)) return ft_vn_geluf(y);
  if (e->act == FT_ACT_SIGMOID) return ft_vn_sigmoidf(y);
  if (e->act == FT_ACT_SILU) return y * ft_vn_sigmoidf(y);
  if (e->act) {
    float b[FT_VLEN] __attribute__((aligned(4 * FT_VLEN)));
    *(ft_vn *)b = y;
    ft_gemm_act_row(b, FT_VLEN, e->act, e->lo, e->hi);
    y = *(const ft_vn *)b;
  }
  return y;
}
#endif

#if FT_ISA != FT_ISA_AVX512
/* Lanes [0, k) of y to c through the epilogue's end: residual (before), activation, residual
 * (after), as ft_gemm_finish. */
static inline __attribute__((always_inline)) void ft_vn_finish_store(float *c, ft_vn y, const float *res, int k,
                                                                     const ft_gemm_epi *e) {
  ft_vn r = res ? ft_vn_loadn(res, k) : (ft_vn){0};
  if (!e->res_after) y += r;
  y = ft_vn_act(y, e);
  if (e->res_after) y += r;
  ft_vn_storen(c, y, k);
}
#endif

/* The activation on one vector: Relu and Clip as selects in registers (the comparisons of
 * ft_gemm_act); Sigmoid and SiLU through ft_gemm_act on an aligned buffer, which the
 * compiler vectorizes. */
static inline __attribute__((always_inline)) void ft_gemm_act16(ft_v16f *y, const ft_gemm_epi *e) {
#ifdef __AVX512F__ /* one masked move per select */
  __m512 v = (__m512)*y;
  if (e->act == FT_ACT_RELU) {
    *y = (ft_v16f)_mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps());
    return;
  }
  if (e->act == FT_ACT_CLIP) {
    __m512 lo = _mm512_set1_ps(e->lo), hi = _mm512_set1_ps(e->hi);
    __mmask16 below = _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), above = _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ);
    *y = (ft_v16f)_mm512_mask_mov_ps(_mm512_mask_mov_ps(v, above, hi), below, lo);
    return;
  }
  if (e->act == FT_ACT_GELU) {
    *y = (ft_v16f)ft_v16_gelu(v);
    return;
  }
  if (e->act == FT_ACT_SIGMOID || e->act == FT_ACT_SILU) {
    __m512 sg = ft_v16_sigmoid(v);
    *y = (ft_v16f)(e->act == FT_ACT_SILU ? _mm512_mul_ps(v, sg) : sg);
    return;
  }
#else
  if (e->act == FT_ACT_RELU) {
    *y = FT_V16_SELECT(*y < 0, (ft_v16f){0}, *y);
    return;
  }
  if (e->act == FT_ACT_CLIP) {
    ft_v16f lo = (ft_v16f){0} + e->lo, hi = (ft_v16f){0} + e->hi;
    *y = FT_V16_SELECT(*y < lo, lo, FT_V16_SELECT(*y > hi, hi, *y));
    return;
  }
#endif
  if (e->act) {
    float b[16] __attribute__((aligned(64)));
    *(ft_v16f *)b = *y;
    ft_gemm_act(b, 16, e);
    *y = *(const ft_v16f *)b;
  }
}

/* Residual (k lanes at res, or none), activation, residual, store of k <= 16 values. */
static inline __attribute__((always_inline)) void ft_gemm_epi16(float *c, ft_v16f *y, const float *res,
                                                                int64_t k, const ft_gemm_epi *e) {
  ft_v16f r = {0};
  if (res) ft_v16_load(&r, res, k);
  if (res && !e->res_after) *y += r;
  ft_gemm_act16(y, e);
  if (res && e->res_after) *y += r;
  ft_v16_store(c, y, k);
}


/* c[0, n) = epilogue(x[0, n)): the depthwise conv's way out of its band buffer. */
static inline __attribute__((always_inline)) void ft_gemm_finish_to(float *c, const float *x,
                                                                    const float *res, int64_t n,
                                                                    const ft_gemm_epi *e) {
#if FT_ISA != FT_ISA_AVX512 /* on the ISA's vectors, the last one partial (ukernels/vec.h) */
  for (int64_t h = 0; h < n; h += FT_VLEN) {
    int k = n - h < FT_VLEN ? (int)(n - h) : FT_VLEN;
    ft_vn_finish_store(c + h, ft_vn_loadn(x + h, k), res ? res + h : NULL, k, e);
  }
  return;
#endif
  for (int64_t h = 0; h < n; h += 16) {
    int64_t k = n - h < 16 ? n - h : 16;
    ft_v16f y;
    ft_v16_load(&y, x + h, k);
    ft_gemm_epi16(c + h, &y, res ? res + h : NULL, k, e);
  }
}

/* dst[0, n) = src[0, n) for short rows: whole vectors and one partial one, no scalar tail. */
static inline void ft_copy_floats(float *dst, const float *src, int64_t n) {
#if FT_ISA != FT_ISA_AVX512
  int64_t h = 0;
  for (; h + FT_VLEN <= n; h += FT_VLEN) *(ft_vnu *)(dst + h) = *(const ft_vnu *)(src + h);
  if (h < n) ft_vn_storen(dst + h, ft_vn_loadn(src + h, (int)(n - h)), (int)(n - h));
  return;
#endif
  for (int64_t h = 0; h < n; h += 16) {
    int64_t k = n - h < 16 ? n - h : 16;
    ft_v16f v;
    ft_v16_load(&v, src + h, k);
    ft_v16_store(dst + h, &v, k);
  }
}

/* One row of a tile into C: n is NR (a constant after inlining: vector code) or the edge. */
static inline __attribute__((always_inline)) void ft_gemm_row(float *restrict c,
                                                              const float *restrict t,
                                                              const float *restrict bias,
                                                              int64_t bcs, int n,
                                                              const ft_gemm_epi *e, int first,
                                                              int last, const float *res) {
  float alpha = e->alpha;
  /* a fused op's epilogue on an edge piece, or on a row whose residual is C itself (an in-place
   * FusedConv: each residual element is read before its output is written) */
  if (last && (e->act || res) && (n < FT_GEMM_NR || res == c)) {
    float bv = first && bias && bcs == 0 ? e->beta * bias[0] : 0.0f;
    for (int h = 0; h < n; h += 16) {
      int64_t k = n - h < 16 ? n - h : 16;
      ft_v16f y, z;
      ft_v16_load(&y, t + h, k); /* a piece may start inside t's row */
      y *= alpha;
      if (!first) {
        ft_v16_load(&z, c + h, k);
        y += z;
      } else if (bias && bcs == 0) y += bv;
      else if (bias && bcs == 1) {
        ft_v16_load(&z, bias + h, k);
        y += e->beta * z;
      } else if (bias) {
        float b[16] __attribute__((aligned(64))) = {0};
        for (int64_t j = 0; j < k; j++) b[j] = bias[(h + j) * bcs];
        y += e->beta * *(const ft_v16f *)b;
      }
      ft_gemm_epi16(c + h, &y, res ? res + h : NULL, k, e);
    }
    return;
  }
  if (!first) for (int j = 0; j < n; j++) c[j] += alpha * t[j];
  else if (!bias) for (int j = 0; j < n; j++) c[j] = alpha * t[j];
  else if (bcs == 0) {
    float bv = e->beta * bias[0];
    for (int j = 0; j < n; j++) c[j] = alpha * t[j] + bv;
  } else if (bcs == 1) {
    float beta = e->beta;
    for (int j = 0; j < n; j++) c[j] = alpha * t[j] + beta * bias[j];
  } else {
    float beta = e->beta;
    for (int j = 0; j < n; j++) c[j] = alpha * t[j] + beta * bias[j * bcs];
  }
  if (last && (e->act || res)) ft_gemm_finish(c, res, n, e); /* a whole row (n is NR): vector code */
}

static void ft_gemm_store(const ft_gemm_op *g, const float *t, int64_t m0, int mr, int64_t n0,
                          int nr, int first, int last) {
  const ft_gemm_epi *e = &g->e;
  if (g->c_wrap) { /* columns wrap around output rows: store the kept pieces */
    for (int i = 0; i < mr; i++) {
      const float *bias = e->bias ? e->bias + (m0 + i) * e->bias_rs : NULL;
      for (int j = 0; j < nr;) {
        int64_t n = n0 + j, r = n / g->c_wrap, q = n % g->c_wrap;
        int run = g->c_wrap - q < nr - j ? (int)(g->c_wrap - q) : nr - j;
        if (q < g->c_keep) {
          int len = g->c_keep - q < run ? (int)(g->c_keep - q) : run;
          int64_t at = (m0 + i) * g->ldc + r * g->c_keep + q;
          ft_gemm_row(g->c + at, t + i * FT_GEMM_NR + j, bias ? bias + n * e->bias_cs : NULL, e->bias_cs, len, e, first, last,
                      e->res ? e->res + at : NULL);
        }
        j += run;
      }
    }
    return;
  }
  for (int i = 0; i < mr; i++) {
    int64_t at = (m0 + i) * g->ldc + n0;
    float *c = g->c + at;
    const float *bias = e->bias ? e->bias + (m0 + i) * e->bias_rs + n0 * e->bias_cs : NULL;
    const float *res = e->res ? e->res + at : NULL;
    if (nr == FT_GEMM_NR) ft_gemm_row(c, t + i * FT_GEMM_NR, bias, e->bias_cs, FT_GEMM_NR, e, first, last, res);
    else ft_gemm_row(c, t + i * FT_GEMM_NR, bias, e->bias_cs, nr, e, first, last, res);
  }
}

/* ---- micro-kernel on B in place ------------------------------------------------------------
 * The same tile, with B read where it lies: row k of the panel at b + rowoff[k] (a conv's
 * shifted input rows) or b + k*rs, two vector loads masked to the panel's columns (no reads
 * past them). Every tile runs over all of K in registers: no panel copy, no K blocks whose
 * partial sums go through C (which cost most where output rows are short and the store is
 * split at their ends). The A sliver streams from L2; B's rows stay in L1/L2 while the
 * slivers of a work item pass over them.
 *
 * The epilogue runs on the accumulators too (for a bias per row, as in Conv): alpha, bias,
 * residual, activation, then one masked store per vector. Where output rows were computed
 * over a padded width (c_wrap), the kept lanes of a vector go to consecutive outputs (a row's
 * last kept column is followed by the next row's first), so a vcompressps packs them and one
 * masked store writes them: no split stores through a tile buffer. */
#ifdef __AVX512F__
/* Where the two vectors of one panel's tile row go: lanes kept, their count, and the output
 * offset (from the row's start in C) of the first kept lane. */
typedef struct ft_gemm_colmap { __mmask16 keep[2]; int cnt[2]; int64_t dst[2]; } ft_gemm_colmap;

/* The map of the panel at column n0, lane by lane. */
static inline void ft_gemm_colmap_lanes(const ft_gemm_op *g, int64_t n0, ft_gemm_colmap *cm) {
  int64_t wrap = g->c_wrap ? g->c_wrap : INT64_MAX, keep_w = g->c_wrap ? g->c_keep : INT64_MAX;
  int64_t r = n0 / wrap, q = n0 % wrap; /* column n of the lanes below is row r, column q */
  for (int v = 0; v < 2; v++) {
    unsigned keep = 0;
    int cnt = 0;
    int64_t dst = 0;
    for (int l = 0; l < 16; l++) {
      int64_t n = n0 + 16 * v + l;
      if (n >= g->N) break;
      if (q < keep_w) {
        if (!cnt) dst = g->c_wrap ? r * g->c_keep + q : n;
        keep |= 1u << l;
        cnt++;
      }
      if (++q == wrap) { q = 0; r++; }
    }
    cm->keep[v] = (__mmask16)keep;
    cm->cnt[v] = cnt;
    cm->dst[v] = dst;
  }
}

/* The same where output rows are at least 16 wide (or not wrapped): at most one row end in 16
 * lanes, so the masks follow by arithmetic. Lane by lane, this took 6% of SqueezeNet's stem conv
 * (K = 27: short tiles, a map per 32 columns). */
static inline void ft_gemm_colmap_init(const ft_gemm_op *g, int64_t n0, ft_gemm_colmap *cm) {
  int64_t wrap = g->c_wrap ? g->c_wrap : INT64_MAX, keep_w = g->c_wrap ? g->c_keep : INT64_MAX;
  if (wrap < 16) {
    ft_gemm_colmap_lanes(g, n0, cm);
    return;
  }
  for (int v = 0; v < 2; v++) {
    int64_t nb = n0 + 16 * v, lim = g->N - nb < 16 ? g->N - nb : 16;
    int64_t r = nb / wrap, q = nb % wrap, e1 = wrap - q < 16 ? wrap - q : 16; /* lanes [0, e1): row r */
    int64_t k1 = keep_w - q < e1 ? keep_w - q : e1, k2 = e1 < 16 && keep_w < 16 - e1 ? e1 + keep_w : 16;
    unsigned lanes = lim <= 0 ? 0u : (1u << lim) - 1;
    unsigned keep = ((k1 > 0 ? (1u << k1) - 1 : 0u) | (((1u << k2) - 1) & ~((1u << e1) - 1))) & lanes;
    cm->keep[v] = (__mmask16)keep;
    cm->cnt[v] = __builtin_popcount(keep);
    cm->dst[v] = !keep ? 0 : !g->c_wrap ? nb : k1 > 0 ? r * keep_w + q : (r + 1) * keep_w;
  }
}

/* Whether the activation is a clamp to [lo, hi] (none, Relu, Clip with ordered bounds), which
 * the tile stores below apply as one max and one min per vector: max(lo, y) and min(hi, y)
 * return y when y is NaN (their second operand), and y itself when y equals a bound, as the
 * comparisons of ft_gemm_act16 do (Relu of -0 is -0). */
static inline int ft_gemm_clamp_of(const ft_gemm_epi *e, __m512 *lo, __m512 *hi) {
  float l = -__builtin_inff(), h = __builtin_inff();
  if (e->act == FT_ACT_RELU) l = 0.0f;
  else if (e->act == FT_ACT_CLIP) { l = e->lo; h = e->hi; }
  if (lo) *lo = _mm512_set1_ps(l);
  if (hi) *hi = _mm512_set1_ps(h);
  return (e->act == FT_ACT_NONE || e->act == FT_ACT_RELU || e->act == FT_ACT_CLIP) && l <= h;
}

/* The clamp on one vector: the bounds that can bind (Relu has no upper one). */
static inline __attribute__((always_inline)) __m512 ft_gemm_clamp16(__m512 y, __m512 lo, __m512 hi, int act) {
  if (act != FT_ACT_NONE) y = _mm512_max_ps(lo, y);
  if (act == FT_ACT_CLIP) y = _mm512_min_ps(hi, y);
  return y;
}

/* The direct tile's store when the activation is a clamp: per row, alpha and the row's bias,
 * the residual before or after, the clamp and one store per vector; the choices that do not
 * change from row to row (whole vectors or kept lanes, residual or not) are made once. With a
 * short K the tile is mostly this store (a pointwise conv of 16 input channels: 16 FMAs per
 * output), where the per-vector helpers' tests cost a third of the time. */
static inline __attribute__((always_inline)) void ft_gemm_dir_store_clamp(const int mr, const __m512 *c0,
                                                                          const __m512 *c1, const ft_gemm_op *g,
                                                                          int64_t m0, const ft_gemm_colmap *cm) {
  const ft_gemm_epi *e = &g->e;
  __m512 lo, hi, alpha = _mm512_set1_ps(e->alpha);
  ft_gemm_clamp_of(e, &lo, &hi);
  int whole = cm->cnt[0] == 16 && cm->cnt[1] == 16 && cm->keep[0] == 0xffff && cm->keep[1] == 0xffff &&
              cm->dst[1] == cm->dst[0] + 16;
  int res = e->res != NULL, after = e->res_after, act = e->act;
  int plain = e->alpha == 1.0f && (!e->bias || e->beta == 1.0f); /* Conv's: y = acc + bias */
  __mmask16 sm[2];
  int squeeze[2];
  for (int v = 0; v < 2; v++) {
    sm[v] = (__mmask16)(cm->cnt[v] >= 16 ? 0xffff : (1u << cm->cnt[v]) - 1);
    squeeze[v] = cm->keep[v] != sm[v];
  }
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) {
    int64_t row = (m0 + i) * g->ldc;
    __m512 y0, y1;
    if (plain) {
      __m512 bv = e->bias ? _mm512_set1_ps(e->bias[(m0 + i) * e->bias_rs]) : _mm512_setzero_ps();
      y0 = _mm512_add_ps(c0[i], bv);
      y1 = _mm512_add_ps(c1[i], bv);
    } else {
      __m512 bv = _mm512_set1_ps(e->bias ? e->beta * e->bias[(m0 + i) * e->bias_rs] : 0.0f);
      y0 = _mm512_fmadd_ps(alpha, c0[i], bv);
      y1 = _mm512_fmadd_ps(alpha, c1[i], bv);
    }
    if (whole) {
      float *c = g->c + row + cm->dst[0];
      if (res) {
        const float *r = e->res + row + cm->dst[0];
        __m512 r0 = _mm512_loadu_ps(r), r1 = _mm512_loadu_ps(r + 16);
        if (!after) { y0 = _mm512_add_ps(y0, r0); y1 = _mm512_add_ps(y1, r1); }
        y0 = ft_gemm_clamp16(y0, lo, hi, act);
        y1 = ft_gemm_clamp16(y1, lo, hi, act);
        if (after) { y0 = _mm512_add_ps(y0, r0); y1 = _mm512_add_ps(y1, r1); }
      } else {
        y0 = ft_gemm_clamp16(y0, lo, hi, act);
        y1 = ft_gemm_clamp16(y1, lo, hi, act);
      }
      _mm512_storeu_ps(c, y0);
      _mm512_storeu_ps(c + 16, y1);
      continue;
    }
    __m512 y[2] = {y0, y1};
    for (int v = 0; v < 2; v++) {
      if (!cm->cnt[v]) continue;
      if (squeeze[v]) y[v] = _mm512_maskz_compress_ps(cm->keep[v], y[v]);
      int64_t at = row + cm->dst[v];
      __m512 r = res ? _mm512_maskz_loadu_ps(sm[v], e->res + at) : _mm512_setzero_ps();
      if (res && !after) y[v] = _mm512_add_ps(y[v], r);
      y[v] = ft_gemm_clamp16(y[v], lo, hi, act);
      if (res && after) y[v] = _mm512_add_ps(y[v], r);
      _mm512_mask_storeu_ps(g->c + at, sm[v], y[v]);
    }
  }
}

/* A tile's store from its accumulators (mr rows of two vectors): the epilogue, then the kept
 * lanes of each vector to their outputs (cm). The direct micro-kernels (fp32 here, bf16 in
 * gemm_bf16.h) end with it. */
static inline __attribute__((always_inline)) void ft_gemm_dir_store(const int mr, const __m512 *c0, const __m512 *c1,
                                                                    const ft_gemm_op *g, int64_t m0,
                                                                    const ft_gemm_colmap *cm) {
  const ft_gemm_epi *e = &g->e;
  __m512 alpha = _mm512_set1_ps(e->alpha);
  if (ft_gemm_clamp_of(e, NULL, NULL)) {
    ft_gemm_dir_store_clamp(mr, c0, c1, g, m0, cm);
    return;
  }
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) {
    int64_t row = (m0 + i) * g->ldc;
    __m512 bv = _mm512_set1_ps(e->bias ? e->beta * e->bias[(m0 + i) * e->bias_rs] : 0.0f);
    __m512 y[2] = {_mm512_fmadd_ps(alpha, c0[i], bv), _mm512_fmadd_ps(alpha, c1[i], bv)};
    for (int v = 0; v < 2; v++) {
      if (!cm->cnt[v]) continue;
      if (cm->keep[v] != (__mmask16)((1u << cm->cnt[v]) - 1)) y[v] = _mm512_maskz_compress_ps(cm->keep[v], y[v]);
      ft_v16f yv = (ft_v16f)y[v];
      int64_t at = row + cm->dst[v];
      ft_gemm_epi16(g->c + at, &yv, e->res ? e->res + at : NULL, cm->cnt[v], e);
    }
  }
}

static inline __attribute__((always_inline)) void ft_gemm_ukernel_dir(const int mr, int64_t K, const float *restrict a,
                                                                      const float *b, int64_t rs,
                                                                      const int64_t *rowoff, const ft_gemm_op *g,
                                                                      int64_t m0, const ft_gemm_colmap *cm) {
  __m512 c0[FT_GEMM_MR], c1[FT_GEMM_MR];
  __mmask16 l0 = cm->keep[0], l1 = cm->keep[1]; /* lanes that are dropped need no data */
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) { c0[i] = _mm512_setzero_ps(); c1[i] = _mm512_setzero_ps(); }
  for (int64_t k = 0; k < K; k++) {
    const float *br = rowoff ? b + rowoff[k] : b + k * rs;
    __m512 b0 = _mm512_maskz_loadu_ps(l0, br), b1 = _mm512_maskz_loadu_ps(l1, br + 16);
    FT_GEMM_PF(a);
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      __m512 av = _mm512_set1_ps(a[i]);
      c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
    }
    a += FT_GEMM_MR;
  }
  ft_gemm_dir_store(mr, c0, c1, g, m0, cm);
}

#define FT_GEMM_UKD(MR_)                                                                                 \
  static void ft_gemm_ukernel_dir_##MR_(int64_t K, const float *a, const float *b, int64_t rs,           \
                                        const int64_t *ro, const ft_gemm_op *g, int64_t m0,              \
                                        const ft_gemm_colmap *cm) {                                      \
    ft_gemm_ukernel_dir(MR_, K, a, b, rs, ro, g, m0, cm);                                                \
  }
FT_GEMM_UKD(1) FT_GEMM_EACH_MR(FT_GEMM_UKD)
#undef FT_GEMM_UKD

typedef void (*ft_gemm_ukd_fn)(int64_t, const float *, const float *, int64_t, const int64_t *, const ft_gemm_op *,
                               int64_t, const ft_gemm_colmap *);
static const ft_gemm_ukd_fn ft_gemm_ukd_table[FT_GEMM_MR + 1] = FT_GEMM_MR_TABLE(ft_gemm_ukernel_dir_);
#endif

/* ---- drivers ------------------------------------------------------------------------------ */

/* B panel rows [pc, pc + kc) of column panel jr: prepacked, or packed into buf. */
static inline const float *ft_gemm_b_panel(const ft_gemm_op *g, int64_t jr, int64_t pc, int64_t kc, float *buf) {
  if (g->bp) return g->bp + jr * g->K * FT_GEMM_NR + pc * FT_GEMM_NR;
  if (g->b_rowoff) ft_gemm_pack_b_panel_rows(g->N, g->b, g->b_rowoff, jr, pc, kc, buf);
  else ft_gemm_pack_b_panel(g->N, g->b, g->b_rs, g->b_cs, jr, pc, kc, buf);
  return buf;
}

/* ft_gemm_column where C is also the residual (an in-place FusedConv) and K takes more than one
 * block: the K blocks' partial sums cannot go through C, which still holds the residual, so
 * each tile is summed over all of K in acc and stored once (the B panel is packed again for
 * every row sliver). The AVX-512 direct path never gets here: it keeps all of K in registers. */
static void ft_gemm_column_in_place(const ft_gemm_op *g, int64_t m0, int64_t m1, int64_t jr, float *bbuf,
                                    float *abuf, float *t) {
  float acc[FT_GEMM_MR * FT_GEMM_NR] __attribute__((aligned(64)));
  int64_t K = g->K, n0 = jr * FT_GEMM_NR;
  int nr = g->N - n0 < FT_GEMM_NR ? (int)(g->N - n0) : FT_GEMM_NR;
  for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
    int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
    for (int64_t pc = 0; pc < K; pc += FT_GEMM_KC) {
      int64_t kc = K - pc < FT_GEMM_KC ? K - pc : FT_GEMM_KC;
      const float *bpan = ft_gemm_b_panel(g, jr, pc, kc, bbuf), *asl = abuf;
      if (g->ap) asl = g->ap + ir * K + pc * FT_GEMM_MR;
      else ft_gemm_pack_a_sliver(g->M, g->a, g->a_rs, g->a_cs, ir / FT_GEMM_MR, pc, kc, abuf);
      ft_gemm_ukernel_mr(mr, kc, asl, bpan, t, NULL);
      for (int i = 0; i < mr * FT_GEMM_NR; i++) acc[i] = pc ? acc[i] + t[i] : t[i];
    }
    ft_gemm_store(g, acc, ir, mr, n0, nr, 1, 1);
  }
}

/* The largest K for which a tile with both operands packed runs over all of K at once: its B
 * panel (K * NR floats, 512 KiB) stays in L2 while the row slivers of a work item pass over it.
 * Such a tile keeps its sums in registers from the first k to the last and is stored once,
 * through the epilogue; in K blocks (KC) it stores partial sums to C after every block and loads
 * them back for the next, and restarts its loop: measured 3-4% slower on BERT's projections
 * (128x768x768, 128x768x3072; bench/kernels/gemm_ab). */
#define FT_GEMM_FULL_K 4096

/* Rows [m0, m1) (m0 a multiple of MR) of the NR-wide column panel jr of C, over all of K. */
static void ft_gemm_column(const ft_gemm_op *g, int64_t m0, int64_t m1, int64_t jr) {
  float bbuf[FT_GEMM_KC * FT_GEMM_NR] __attribute__((aligned(64)));
  float abuf[FT_GEMM_KC * FT_GEMM_MR] __attribute__((aligned(64)));
  float t[FT_GEMM_MR * FT_GEMM_NR] __attribute__((aligned(64)));
  int64_t K = g->K, n0 = jr * FT_GEMM_NR;
  int nr = g->N - n0 < FT_GEMM_NR ? (int)(g->N - n0) : FT_GEMM_NR;
  if (K == 0) { /* no products: C is the bias term alone */
    memset(t, 0, sizeof t);
    for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
      int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
      ft_gemm_store(g, t, ir, mr, n0, nr, 1, 1);
    }
    return;
  }
#ifdef __AVX512F__
  if (g->b_direct && g->ap && !g->bp && (g->b_rowoff || g->b_cs == 1) && g->e.bias_cs == 0) {
    ft_gemm_colmap cm;
    ft_gemm_colmap_init(g, n0, &cm);
    for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
      int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
      ft_gemm_ukd_table[mr](K, g->ap + ir * K, g->b + n0, g->b_rs, g->b_rowoff, g, ir, &cm);
    }
    return;
  }
#endif
  if (g->bp && K <= FT_GEMM_FULL_K && (g->ap || (g->a && g->a_cs == 1))) {
    /* B packed, A packed or its rows read in place: each tile over all of K, see above */
    const float *b = g->bp + jr * K * FT_GEMM_NR;
    /* Row slivers 1 and 2 (0 and 1 when there are fewer than 3) prefetch the next panel, half
     * each, one line a k-step: the same thread usually runs it next (parallel.h's shares), and
     * in a whole model the packed weights come from DRAM, where a panel's first sliver waited
     * on them. Sliver 0 is left alone while it streams its own panel. GEMMs of BERT-base's
     * shapes (M 128) on a different packed B each call, 1 thread, Zen 5: 179-192 GFLOP/s
     * without, 186-203 with (about 4%); with B in cache no change. */
    const float *next = (jr + 1) * FT_GEMM_NR < g->N ? b + K * FT_GEMM_NR : NULL;
    int64_t first = (m1 - m0 + FT_GEMM_MR - 1) / FT_GEMM_MR >= 3;
    for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
      int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
      int64_t s = (ir - m0) / FT_GEMM_MR - first;
      const float *pf = next && s >= 0 && s < 2 ? next + s * K * 16 : NULL;
      if (g->ap) ft_gemm_ukernel_mr(mr, K, g->ap + ir * K, b, t, pf);
      else ft_gemm_ukernel_rows_mr(mr, K, g->a + ir * g->a_rs, g->a_rs, b, t, pf);
      ft_gemm_store(g, t, ir, mr, n0, nr, 1, 1);
    }
    return;
  }
  if (g->e.res == g->c && K > FT_GEMM_KC) { /* in place over the residual: see below */
    ft_gemm_column_in_place(g, m0, m1, jr, bbuf, abuf, t);
    return;
  }
  for (int64_t pc = 0; pc < K; pc += FT_GEMM_KC) {
    int64_t kc = K - pc < FT_GEMM_KC ? K - pc : FT_GEMM_KC;
    const float *bpan = ft_gemm_b_panel(g, jr, pc, kc, bbuf);
    for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
      int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
      const float *asl = abuf;
      if (g->ap) asl = g->ap + ir * K + pc * FT_GEMM_MR; /* sliver ir/MR starts at ir*K */
      else ft_gemm_pack_a_sliver(g->M, g->a, g->a_rs, g->a_cs, ir / FT_GEMM_MR, pc, kc, abuf);
      ft_gemm_ukernel_mr(mr, kc, asl, bpan, t, NULL);
      ft_gemm_store(g, t, ir, mr, n0, nr, pc == 0, pc + kc == K);
    }
  }
}

/* Rows per work item: a multiple of MR whose A rows (all of K) fit the L2 budget; as many row
 * blocks as that takes, evened out (M = 300 at K = 768: blocks of 156 and 144 rows, not 168 and
 * 132), since the items go to the threads' shares row block by row block. An A that passes the
 * budget by at most a quarter stays one block: two would stream every B panel twice and give
 * 2 threads uneven halves by rows (ViT-B/16's M = 197 at K = 768: 108 and 89 rows), where one
 * block gives them even halves by columns. ViT-B/16 on Zen 5 (1 MiB L2), alternating: 2
 * threads 79.2 -> 75.9 ms, 1 thread unchanged. */
static inline int64_t ft_gemm_mc(int64_t M, int64_t K) {
  int64_t mc = FT_GEMM_L2 / (4 * (K > 0 ? K : 1)) / FT_GEMM_MR * FT_GEMM_MR;
  if (mc < FT_GEMM_MR) mc = FT_GEMM_MR;
  if (mc >= M || M * K <= (FT_GEMM_L2 + FT_GEMM_L2 / 4) / 4) return (M + FT_GEMM_MR - 1) / FT_GEMM_MR * FT_GEMM_MR;
  int64_t nb = (M + mc - 1) / mc, even = ((M + nb - 1) / nb + FT_GEMM_MR - 1) / FT_GEMM_MR * FT_GEMM_MR;
  return even < mc ? even : mc;
}

/* Column panels per work item. One, except where B is read in place with a short K (a
 * pointwise conv with few input channels): there a tile is mostly its epilogue and stores, and
 * an item of one panel writes every output row 128 bytes at a time, more row streams than the
 * hardware prefetchers follow. An item of several panels runs them in turn for each row sliver
 * (their B rows, up to 16 KiB, stay in L1), so each output row is written in longer runs. */
static inline int64_t ft_gemm_group(const ft_gemm_op *g) {
  if (!g->b_direct || g->K <= 0 || g->K > 64) return 1;
  int64_t G = 128 / g->K;
  return G > 8 ? 8 : G;
}

/* Work items of one GEMM: (row block, group of column panels), row block major. */
static inline int64_t ft_gemm_items(const ft_gemm_op *g, int64_t mc) {
  int64_t np = (g->N + FT_GEMM_NR - 1) / FT_GEMM_NR, G = ft_gemm_group(g);
  return (g->M + mc - 1) / mc * ((np + G - 1) / G);
}

/* Rows [m0, m1) of column panels [j0, j1): row slivers outer where B is read in place. */
static void ft_gemm_columns(const ft_gemm_op *g, int64_t m0, int64_t m1, int64_t j0, int64_t j1) {
#ifdef __AVX512F__
  if (g->b_direct && g->ap && !g->bp && (g->b_rowoff || g->b_cs == 1) && g->e.bias_cs == 0 && g->K > 0) {
    ft_gemm_colmap cm[8];
    for (int64_t jr = j0; jr < j1; jr++) ft_gemm_colmap_init(g, jr * FT_GEMM_NR, &cm[jr - j0]);
    for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
      int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
      for (int64_t jr = j0; jr < j1; jr++)
        ft_gemm_ukd_table[mr](g->K, g->ap + ir * g->K, g->b + jr * FT_GEMM_NR, g->b_rs, g->b_rowoff, g, ir,
                              &cm[jr - j0]);
    }
    return;
  }
#endif
  for (int64_t jr = j0; jr < j1; jr++) ft_gemm_column(g, m0, m1, jr);
}

static inline void ft_gemm_item(const ft_gemm_op *g, int64_t mc, int64_t it) {
  int64_t np = (g->N + FT_GEMM_NR - 1) / FT_GEMM_NR, G = ft_gemm_group(g), ng = (np + G - 1) / G;
  int64_t ic = it / ng, j0 = it % ng * G, j1 = j0 + G < np ? j0 + G : np;
  int64_t m1 = (ic + 1) * mc < g->M ? (ic + 1) * mc : g->M;
  if (g->column)
    for (int64_t jr = j0; jr < j1; jr++) g->column(g, ic * mc, m1, jr);
  else if (G == 1) ft_gemm_column(g, ic * mc, m1, j0);
  else ft_gemm_columns(g, ic * mc, m1, j0, j1);
}

/* Big enough to be worth waking threads for. */
#define FT_GEMM_PAR_FLOPS (1 << 20)

/* Items [lo, hi) of one GEMM (a parallel loop's chunk). */
typedef struct {
  const ft_gemm_op *g;
  int64_t mc;
} ft_gemm_items_ctx;

static void ft_gemm_items_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_gemm_items_ctx *c = (const ft_gemm_items_ctx *)ctx;
  for (int64_t it = lo; it < hi; it++) ft_gemm_item(c->g, c->mc, it);
}

/* One whole GEMM in row blocks of mc, its items spread over the threads when par. */
static void ft_gemm_run_par(const ft_gemm_op *g, int64_t mc, int par) {
  if (g->M <= 0 || g->N <= 0) return;
  ft_gemm_items_ctx c = {g, mc};
  ft_parallel_for(ft_gemm_items(g, mc), par, ft_gemm_items_run, &c);
}

static void ft_gemm_run(const ft_gemm_op *g) {
  ft_gemm_run_par(g, ft_gemm_mc(g->M, g->K), g->M * g->N * g->K > FT_GEMM_PAR_FLOPS);
}

/* ---- small M: every row of C in registers over all of K ------------------------------------
 * With few rows (a decode step, a short sequence, a pooler's one row) each weight takes part in
 * M multiplies only, so the GEMM streams B and is bound by how fast B arrives more than by the
 * FMAs. The blocked path above cuts such an M into MR-row slivers (16 = 12 + 4: the second
 * sliver reads the B panel again for a third of the FMAs) and K into blocks whose partial sums
 * go through C. Here a work item is one NR-wide column panel of C: the tile holds the panel's
 * rows for all of K, so B is read once per sliver, the few rows of A (read in place, or copied
 * row by row into the call's scratch when transposed) stay in L1/L2 across panels, and the
 * epilogue runs once per element.
 *
 * The tile plan (ft_gemm_small_plan) picks the rows per sliver (ms) and the vectors per tile
 * row (nv): up to 14 rows, all of them over the whole panel (2 * rows accumulators, registers
 * left for B); 15 and 16 rows, two slivers of 8, the second reading the panel from L2. (All 16
 * rows over each half of the panel in turn, 16 accumulators, measured 2-8% slower: 16
 * broadcasts of A per B vector.) Each element is summed over k in one order whatever the thread
 * count, as elsewhere. */
/* B elements (N * K) from which a small-M GEMM is split over threads: a B this big (512 KiB)
 * takes longer to stream than waking a worker; the FLOP rule (FT_GEMM_PAR_FLOPS) would keep
 * a 1x768x768 GEMV (a pooler) on one thread. */
#define FT_GEMM_SMALL_PAR_B (1 << 17)


typedef struct ft_gemm_small_plan { int ms, nv; } ft_gemm_small_plan;

/* Rows of A a small-M tile takes (ms) and B vectors of 16 floats it covers (nv: 2, the whole
 * panel). AVX-512: up to 14 rows at once, 15 and 16 as two tiles of 8; elsewhere every row at
 * once: the ISA's tile (ukernels/) cuts them into register passes itself. */
static inline ft_gemm_small_plan ft_gemm_small_plan_for(int64_t M) {
#if FT_ISA == FT_ISA_AVX512
  ft_gemm_small_plan pl = {M <= 14 ? (int)M : 8, 2};
#else
  ft_gemm_small_plan pl = {(int)M, 2};
#endif
  return pl;
}

/* t (mr rows, NR apart; 16 nv columns) = mr rows of A (ars apart, contiguous along k) x a packed
 * B panel from b: the ISA's small-M tile. */
static inline void ft_gemm_small_tile_mr(int mr, int nv, int64_t K, const float *a, int64_t ars, const float *b,
                                         float *t) {
#if FT_ISA == FT_ISA_AVX512
  ft_gemm_small_tiles[mr][nv - 1](K, a, ars, b, t);
#else
  ft_uk_tile(mr, 16 * nv, K, a, ars, 1, b, t, b + FT_GEMM_SMALL_PFD, 4 * FT_GEMM_NR); /* B ahead, a row a k-step */
#endif
}


/* Rows [m0, m0 + mr) of t (stride NR) into C's columns [n0, n0 + w) through the epilogue; w of
 * a whole panel or half one is a constant to ft_gemm_row (vector code). */
static void ft_gemm_small_store(const ft_gemm_op *g, const float *t, int64_t m0, int mr, int64_t n0, int w) {
  const ft_gemm_epi *e = &g->e;
  for (int i = 0; i < mr; i++) {
    int64_t at = (m0 + i) * g->ldc + n0;
    const float *bias = e->bias ? e->bias + (m0 + i) * e->bias_rs + n0 * e->bias_cs : NULL;
    const float *res = e->res ? e->res + at : NULL, *ti = t + i * FT_GEMM_NR;
    if (w == FT_GEMM_NR) ft_gemm_row(g->c + at, ti, bias, e->bias_cs, FT_GEMM_NR, e, 1, 1, res);
    else if (w == 16) ft_gemm_row(g->c + at, ti, bias, e->bias_cs, 16, e, 1, 1, res);
    else ft_gemm_row(g->c + at, ti, bias, e->bias_cs, w, e, 1, 1, res);
  }
}

/* Column panel jr of C, every row, all of K: A's rows from g->ap (a copy of them, K apart), or
 * where they lie when it is NULL (g->a, rows a_rs apart, a_cs 1); g->bp B packed
 * (ft_gemm_pack_b). */
static void ft_gemm_small_panel(const ft_gemm_op *g, ft_gemm_small_plan pl, int64_t jr) {
  float t[FT_GEMM_SMALL_M * FT_GEMM_NR] __attribute__((aligned(64)));
  int64_t K = g->K, n0 = jr * FT_GEMM_NR;
  int nr = g->N - n0 < FT_GEMM_NR ? (int)(g->N - n0) : FT_GEMM_NR;
  const float *b = g->bp + jr * K * FT_GEMM_NR, *a = g->ap ? g->ap : g->a;
  int64_t ars = g->ap ? K : g->a_rs;
  for (int64_t m0 = 0; m0 < g->M; m0 += pl.ms) {
    int mr = g->M - m0 < pl.ms ? (int)(g->M - m0) : pl.ms;
    for (int h = 0; h < 2; h += pl.nv) { /* one pass of the whole panel, or its two halves */
      int w = pl.nv == 2 ? nr : (h ? nr - 16 : (nr < 16 ? nr : 16));
      if (w <= 0) break;
      ft_gemm_small_tile_mr(mr, pl.nv, K, a + m0 * ars, ars, b + 16 * h, t + 16 * h);
      ft_gemm_small_store(g, t + 16 * h, m0, mr, n0 + 16 * h, w);
    }
  }
}

typedef struct {
  const ft_gemm_op *g;
  ft_gemm_small_plan pl;
} ft_gemm_small_ctx;

static void ft_gemm_small_run_panels(const void *ctx, int64_t lo, int64_t hi) {
  const ft_gemm_small_ctx *c = (const ft_gemm_small_ctx *)ctx;
  for (int64_t jr = lo; jr < hi; jr++) ft_gemm_small_panel(c->g, c->pl, jr);
}

/* C = epilogue(A * B) for M <= FT_GEMM_SMALL_M with B prepacked (g->bp): A (g->a, strides
 * a_rs and a_cs) is read in place when its rows are contiguous (a_cs 1), else its rows are
 * copied into apk (M * K floats, the caller's), then the panels run, over the threads when
 * the call is big enough. */
static void ft_gemm_small_run(const ft_gemm_op *g0, ft_gemm_small_plan pl, float *apk) {
  if (g0->M <= 0 || g0->N <= 0) return;
  ft_gemm_op g = *g0;
  g.ap = NULL;
  if (g.a_cs != 1) {
    for (int64_t k = 0; k < g.K; k++)
      for (int64_t r = 0; r < g.M; r++) apk[r * g.K + k] = g.a[r * g.a_rs + k * g.a_cs];
    g.ap = apk;
  }
  ft_gemm_small_ctx c = {&g, pl};
  int64_t np = (g.N + FT_GEMM_NR - 1) / FT_GEMM_NR;
  int par = g.N * g.K >= FT_GEMM_SMALL_PAR_B || g.M * g.N * g.K > FT_GEMM_PAR_FLOPS;
  ft_parallel_for(np, par, ft_gemm_small_run_panels, &c);
}

/* ---- MatMul and Gemm kernel ----------------------------------------------------------------
 * One kernel serves MatMul (numpy batching with broadcast batch dims) and Gemm (transposes,
 * alpha, beta, C broadcast to [M,N]). p: templates/common/gemm_params.h, laid out by
 * compiler/ops/matmul.c. */

/* Prepack hook: every B matrix into panels, one after another. */
static size_t ft_mm_pack_b(const int64_t *p, const void *src, void *dst) {
  int64_t K = p[FT_MM_K], N = p[FT_MM_N], per = ft_gemm_packed_b_floats(K, N);
  size_t bytes = sizeof(float) * (size_t)(per * p[FT_MM_B_NMAT]);
  if (!dst) return bytes;
  for (int64_t i = 0; i < p[FT_MM_B_NMAT]; i++)
    ft_gemm_pack_b(K, N, (const float *)src + i * K * N, p[FT_MM_B_RS], p[FT_MM_B_CS],
                   (float *)dst + i * per);
  return bytes;
}

/* Scratch: every A matrix packed. */
static inline size_t ft_mm_scratch(int64_t M, int64_t K, int64_t a_nmat) {
  return sizeof(float) * (size_t)(ft_gemm_packed_a_floats(M, K) * a_nmat);
}

/* One MatMul call as the parallel loops see it. */
typedef struct {
  const int64_t *p;
  const ft_gemm_op *g0;
  const float *A, *B;
  float *Y, *apk;
  int64_t mc, per, nsl, apk_per, bpk_per;
  int a_in_place; /* A's rows read where they lie (ft_gemm_ukernel_rows), apk unused */
} ft_mm_ctx;

/* Slivers [lo, hi) of every A matrix into scratch. */
static void ft_mm_pack_a_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_mm_ctx *c = (const ft_mm_ctx *)ctx;
  const int64_t M = c->g0->M, K = c->g0->K;
  for (int64_t it = lo; it < hi; it++) {
    int64_t m = it / c->nsl, s = it % c->nsl;
    ft_gemm_pack_a_sliver(M, c->A + m * M * K, c->g0->a_rs, c->g0->a_cs, s, 0, K,
                          c->apk + m * c->apk_per + s * K * FT_GEMM_MR);
  }
}

/* Items [lo, hi) over all batch matrices. */
static void ft_mm_items_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_mm_ctx *c = (const ft_mm_ctx *)ctx;
  const int64_t *p = c->p, r = p[FT_MM_BRANK], *bd = p + FT_MM_BDIMS, *as = bd + r, *bs = as + r;
  const int64_t M = c->g0->M, N = c->g0->N, K = c->g0->K;
  for (int64_t it = lo; it < hi; it++) {
    int64_t b = it / c->per, ai = 0, bi = 0, rem = b;
    for (int64_t d = r - 1; d >= 0; d--) { /* batch index -> A and B matrices */
      int64_t x = rem % bd[d];
      rem /= bd[d];
      ai += x * as[d];
      bi += x * bs[d];
    }
    ft_gemm_op g = *c->g0;
    if (c->a_in_place) g.a = c->A + ai * M * K;
    else g.ap = c->apk + ai * c->apk_per;
    if (p[FT_MM_PACKED]) g.bp = c->B + bi * c->bpk_per;
    else g.b = c->B + bi * K * N;
    g.c = c->Y + b * M * N;
    ft_gemm_item(&g, c->mc, it % c->per);
  }
}

/* The GEMM of one MatMul/Gemm call (every matrix of a batch alike): shapes, strides, epilogue. */
static void ft_mm_gemm_op(const int64_t *p, const double *f, const void *const *in, ft_gemm_op *g0) {
  memset(g0, 0, sizeof *g0);
  g0->M = p[FT_MM_M]; g0->N = p[FT_MM_N]; g0->K = p[FT_MM_K]; g0->ldc = p[FT_MM_N];
  g0->a_rs = p[FT_MM_A_RS]; g0->a_cs = p[FT_MM_A_CS];
  g0->b_rs = p[FT_MM_B_RS]; g0->b_cs = p[FT_MM_B_CS];
  g0->e.alpha = (float)f[0];
  g0->e.beta = (float)f[1];
  if (p[FT_MM_HAS_BIAS]) {
    g0->e.bias = (const float *)in[2];
    g0->e.bias_rs = p[FT_MM_BIAS_RS];
    g0->e.bias_cs = p[FT_MM_BIAS_CS];
  }
  g0->e.act = (int)p[FT_MM_ACT];
  g0->e.lo = (float)f[2];
  g0->e.hi = (float)f[3];
}

static void ft_matmul_f32(const int64_t *p, const double *f, const void *const *in,
                          void *const *out, void *scratch) {
  int64_t M = p[FT_MM_M], N = p[FT_MM_N], K = p[FT_MM_K], r = p[FT_MM_BRANK];
  int64_t nbatch = 1;
  for (int64_t d = 0; d < r; d++) nbatch *= p[FT_MM_BDIMS + d];
  ft_gemm_op g0;
  ft_mm_gemm_op(p, f, in, &g0);
  if (M <= 0 || N <= 0) return;
  if (M <= FT_GEMM_SMALL_M && K > 0 && nbatch == 1 && p[FT_MM_A_NMAT] == 1 && p[FT_MM_PACKED]) {
    g0.a = (const float *)in[0];
    g0.bp = (const float *)in[1];
    g0.c = (float *)out[0];
    ft_gemm_small_run(&g0, ft_gemm_small_plan_for(M), (float *)scratch);
    return;
  }
  ft_mm_ctx c = {p, &g0, (const float *)in[0], (const float *)in[1], (float *)out[0], (float *)scratch,
                 ft_gemm_mc(M, K), 0, (M + FT_GEMM_MR - 1) / FT_GEMM_MR,
                 ft_gemm_packed_a_floats(M, K), ft_gemm_packed_b_floats(K, N), 0};
  c.per = ft_gemm_items(&g0, c.mc);
  int par = nbatch * M * N * K > FT_GEMM_PAR_FLOPS;
  /* With B prepacked (constant weights) each tile runs over all of K (ft_gemm_column): there A's
   * rows, contiguous along k, are read in place. BERT-base's and ViT-B/16's projections (M 128
   * and 197, K 768 and 3072), the micro-kernel alone over A and B as MatMul has them, 1 thread,
   * Zen 5: 2% (K 768) and 6% (K 3072) faster than packing A and running on the packed copy. */
  c.a_in_place = p[FT_MM_PACKED] && g0.a_cs == 1 && K <= FT_GEMM_FULL_K;
  if (!c.a_in_place) ft_parallel_for(p[FT_MM_A_NMAT] * c.nsl, par, ft_mm_pack_a_run, &c);
  ft_parallel_for(c.per * nbatch, par, ft_mm_items_run, &c);
}

/* Integer MatMul: plain loops (exact; integer MatMul is never the hot path). p as above, no
 * bias, no transposes beyond the strides. */
#define FT_MATMUL_INT(sfx, T)                                                                  \
  static void ft_matmul_##sfx(const int64_t *p, const double *f, const void *const *in,        \
                              void *const *out, void *scratch) {                               \
    (void)f; (void)scratch;                                                                    \
    int64_t M = p[FT_MM_M], N = p[FT_MM_N], K = p[FT_MM_K], r = p[FT_MM_BRANK], nb = 1;        \
    const int64_t *bd = p + FT_MM_BDIMS, *as = bd + r, *bs = as + r;                           \
    for (int64_t d = 0; d < r; d++) nb *= bd[d];                                               \
    const T *A = (const T *)in[0], *B = (const T *)in[1];                                      \
    T *Y = (T *)out[0];                                                                        \
    for (int64_t b = 0; b < nb; b++) {                                                         \
      int64_t ai = 0, bi = 0, rem = b;                                                         \
      for (int64_t d = r - 1; d >= 0; d--) {                                                   \
        int64_t x = rem % bd[d];                                                               \
        rem /= bd[d];                                                                          \
        ai += x * as[d];                                                                       \
        bi += x * bs[d];                                                                       \
      }                                                                                        \
      const T *a = A + ai * M * K, *bm = B + bi * K * N;                                       \
      T *y = Y + b * M * N;                                                                    \
      for (int64_t i = 0; i < M; i++) {                                                        \
        for (int64_t j = 0; j < N; j++) y[i * N + j] = 0;                                      \
        for (int64_t k = 0; k < K; k++) {                                                      \
          T x = a[i * p[FT_MM_A_RS] + k * p[FT_MM_A_CS]];                                      \
          for (int64_t j = 0; j < N; j++)                                                      \
            y[i * N + j] += (T)(x * bm[k * p[FT_MM_B_RS] + j * p[FT_MM_B_CS]]);                \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }
FT_MATMUL_INT(i32, int32_t)
FT_MATMUL_INT(i64, int64_t)
FT_MATMUL_INT(u32, uint32_t)
FT_MATMUL_INT(u64, uint64_t)
FT_MATMUL_INT(f64, double)
#undef FT_MATMUL_INT

#endif
