/* bf16 GEMM core (ftaxc --precision bf16): the fp32 core's tiling and epilogue (gemm.h) with
 * operands rounded to bfloat16 and products accumulated in fp32.
 *
 * Storage: both operands hold pairs of consecutive k as one 32-bit word, element k (even) in
 * the low half and k+1 in the high half, which is what vdpbf16ps multiplies: one instruction
 * takes 16 such words of A (one broadcast word) and of B and adds both products of each lane
 * into an fp32 accumulator. Packed layouts, K2 = ceil(K/2) pairs, the odd K's last pair zero
 * in its high half:
 *   A: sliver s (rows s*MR ..) at ap + s*K2*MR words; pair kp of row s*MR+r at [kp*MR + r].
 *   B: panel j (columns j*NR ..) at bp + j*K2*NR words; pair kp of column j*NR+c at [kp*NR + c].
 * Rows and columns past M and N are zero. Weights are packed at compile time (ft_bf16_mm_pack_b,
 * conv_bf16.h's ft_conv_bf16_pack_w); activations are rounded in the packing step: MatMul packs
 * A into scratch, and a B that is not packed (a convolution's input, a run-time MatMul operand)
 * is packed one panel at a time like the fp32 core does.
 *
 * Rounding is to nearest even (NaN stays NaN). The micro-kernel is chosen by the target the
 * program is compiled for (-march; --cflags overrides), and FT_BF16_PATH names it:
 *   AVX512_BF16 (__AVX512BF16__)  vdpbf16ps, 16 lanes x 2 products per instruction;
 *   portable                      the same arithmetic in fp32 on the bf16 values: a product of
 *                                 two bf16 is exact in fp32, so each pair adds odd then even
 *                                 product, as vdpbf16ps is specified to.
 * AMX-BF16 tiles are not used (no machine here to run them on).
 *
 * Each tile is accumulated over the whole K before its one store through the fp32 epilogue
 * (ft_gemm_store: alpha, bias, residual, activation). That store writes a row before it adds
 * the residual, so the output may not share storage with the residual (ftaxc gives a bf16
 * FusedConv's output its own: compiler/ops/bf16.c). */
#ifndef FT_GEMM_BF16_H
#define FT_GEMM_BF16_H

#include <stdint.h>
#include <string.h>

#include "gemm.h"

#if defined(__AVX512BF16__) && defined(__AVX512F__)
#define FT_BF16_AVX512 1
#define FT_BF16_PATH "avx512_bf16"
#else
#define FT_BF16_PATH "portable"
#endif

/* k pairs of a B panel packed at once on the stack (256 KiB): a deeper K is done in blocks, each
 * repacked per A sliver. */
#ifndef FT_BF16_KB2
#define FT_BF16_KB2 2048
#endif

typedef uint32_t ft_v16w __attribute__((vector_size(64)));
typedef uint32_t ft_v16wu __attribute__((vector_size(64), aligned(4), may_alias)); /* unaligned */

/* ---- rounding ------------------------------------------------------------------------------ */

/* fp32 bits -> the nearest bf16 (ties to even) in the high half, low half zero. A NaN is made
 * quiet first so that rounding cannot carry it into infinity. */
static inline uint32_t ft_bf16_round_bits(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) u |= 0x00400000u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
}
static inline float ft_bf16_round(float x) { /* x rounded to bf16, as a float */
  uint32_t u;
  memcpy(&u, &x, 4);
  u = ft_bf16_round_bits(u);
  memcpy(&x, &u, 4);
  return x;
}
/* One pair word from its two floats. */
static inline uint32_t ft_bf16_pair(float lo, float hi) {
  uint32_t a, b;
  memcpy(&a, &lo, 4);
  memcpy(&b, &hi, 4);
  return ft_bf16_round_bits(b) | (ft_bf16_round_bits(a) >> 16);
}
/* 16 lanes of the same. */
static inline __attribute__((always_inline)) ft_v16w ft_bf16_round16(ft_v16w u) {
  ft_v16w nan = (ft_v16w)((u & 0x7fffffffu) > 0x7f800000u);
  u |= nan & 0x00400000u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
}
/* With AVX512_BF16 one conversion rounds both rows and a word permute pairs them: the packing
 * of every conv input runs per call, and the integer rounding above took 15% of ResNet-50's
 * time. The instruction reads denormal inputs as zero, as vdpbf16ps itself does. */
static inline __attribute__((always_inline)) void ft_bf16_pair16(uint32_t *dst, const ft_v16f *lo, const ft_v16f *hi) {
#ifdef FT_BF16_AVX512
  const __m512i pairs = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21, 5,
                                         20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  __m512bh both = _mm512_cvtne2ps_pbh((__m512)*hi, (__m512)*lo); /* lo's 16 below hi's 16 */
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(pairs, (__m512i)both));
#else
  *(ft_v16wu *)dst = ft_bf16_round16((ft_v16w)*hi) | (ft_bf16_round16((ft_v16w)*lo) >> 16);
#endif
}

/* ---- packing ------------------------------------------------------------------------------- */

static inline int64_t ft_bf16_packed_a_words(int64_t M, int64_t K) {
  return (M + FT_GEMM_MR - 1) / FT_GEMM_MR * FT_GEMM_MR * ((K + 1) / 2);
}
static inline int64_t ft_bf16_packed_b_words(int64_t K, int64_t N) {
  return (N + FT_GEMM_NR - 1) / FT_GEMM_NR * FT_GEMM_NR * ((K + 1) / 2);
}

/* Rows s*MR.. of A (element (m,k) at a[m*rs + k*cs]), all of K, into dst (K2 x MR words). */
static void ft_bf16_pack_a_sliver(int64_t M, int64_t K, const float *a, int64_t rs, int64_t cs, int64_t s,
                                  uint32_t *restrict dst) {
  int64_t m0 = s * FT_GEMM_MR, K2 = (K + 1) / 2;
  int mr = M - m0 < FT_GEMM_MR ? (int)(M - m0) : FT_GEMM_MR;
  if (mr < FT_GEMM_MR) memset(dst, 0, sizeof(uint32_t) * (size_t)(K2 * FT_GEMM_MR));
  for (int r = 0; r < mr; r++) {
    const float *src = a + (m0 + r) * rs;
    int64_t kp = 0;
    for (; 2 * kp + 1 < K; kp++) dst[kp * FT_GEMM_MR + r] = ft_bf16_pair(src[2 * kp * cs], src[(2 * kp + 1) * cs]);
    if (kp < K2) dst[kp * FT_GEMM_MR + r] = ft_bf16_pair(src[2 * kp * cs], 0.0f);
  }
}

/* Pairs [kp0, kp0+kc2) of B's panel j into dst (kc2 x NR words). B row k starts at
 * b + rowoff[k] when rowoff is given (unit column stride), else element (k,n) is b[k*rs + n*cs]. */
static void ft_bf16_pack_b_panel(int64_t K, int64_t N, const float *b, int64_t rs, int64_t cs,
                                 const int64_t *rowoff, int64_t j, int64_t kp0, int64_t kc2,
                                 uint32_t *restrict dst) {
  int64_t n0 = j * FT_GEMM_NR;
  int nr = N - n0 < FT_GEMM_NR ? (int)(N - n0) : FT_GEMM_NR;
  if (rowoff || cs == 1) {
    const ft_v16f zero = {0};
    for (int64_t q = 0; q < kc2; q++) {
      int64_t k = 2 * (kp0 + q);
      ft_v16f lo[2], hi[2] = {zero, zero};
      const float *r0 = b + (rowoff ? rowoff[k] : k * rs) + n0;
      ft_v16_load(&lo[0], r0, nr < 16 ? nr : 16);
      lo[1] = zero;
      if (nr > 16) ft_v16_load(&lo[1], r0 + 16, nr - 16);
      if (k + 1 < K) {
        const float *r1 = b + (rowoff ? rowoff[k + 1] : (k + 1) * rs) + n0;
        ft_v16_load(&hi[0], r1, nr < 16 ? nr : 16);
        if (nr > 16) ft_v16_load(&hi[1], r1 + 16, nr - 16);
      }
      ft_bf16_pair16(dst + q * FT_GEMM_NR, &lo[0], &hi[0]);
      ft_bf16_pair16(dst + q * FT_GEMM_NR + 16, &lo[1], &hi[1]);
    }
    return;
  }
  /* transposed B (B^T row-major): each column of B along k */
  if (nr < FT_GEMM_NR) memset(dst, 0, sizeof(uint32_t) * (size_t)(kc2 * FT_GEMM_NR));
  for (int c = 0; c < nr; c++) {
    const float *src = b + (n0 + c) * cs;
    for (int64_t q = 0; q < kc2; q++) {
      int64_t k = 2 * (kp0 + q);
      dst[q * FT_GEMM_NR + c] = ft_bf16_pair(src[k * rs], k + 1 < K ? src[(k + 1) * rs] : 0.0f);
    }
  }
}

/* Whole matrices into the packed layouts. */
static void ft_bf16_pack_a(int64_t M, int64_t K, const float *a, int64_t rs, int64_t cs, uint32_t *dst) {
  for (int64_t s = 0; s * FT_GEMM_MR < M; s++)
    ft_bf16_pack_a_sliver(M, K, a, rs, cs, s, dst + s * ((K + 1) / 2) * FT_GEMM_MR);
}
static void ft_bf16_pack_b(int64_t K, int64_t N, const float *b, int64_t rs, int64_t cs, uint32_t *dst) {
  int64_t K2 = (K + 1) / 2;
  for (int64_t j = 0; j * FT_GEMM_NR < N; j++)
    ft_bf16_pack_b_panel(K, N, b, rs, cs, NULL, j, 0, K2, dst + j * K2 * FT_GEMM_NR);
}

/* ---- micro-kernel --------------------------------------------------------------------------
 * t (mr x NR, row-major fp32) = A sliver (kc2 x MR words) * B panel (kc2 x NR words), added to
 * what t holds when acc is set (the K blocks after the first). */
static inline __attribute__((always_inline)) void ft_bf16_ukernel(const int mr, int64_t kc2,
                                                                   const uint32_t *restrict a,
                                                                   const uint32_t *restrict b,
                                                                   float *restrict t, int acc) {
  ft_v16f c0[FT_GEMM_MR], c1[FT_GEMM_MR];
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) {
    if (acc) { c0[i] = *(const ft_v16u *)(t + i * FT_GEMM_NR); c1[i] = *(const ft_v16u *)(t + i * FT_GEMM_NR + 16); }
    else { c0[i] = (ft_v16f){0}; c1[i] = (ft_v16f){0}; }
  }
#ifdef FT_BF16_AVX512
  for (int64_t q = 0; q < kc2; q++) {
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i]);
      c0[i] = (ft_v16f)_mm512_dpbf16_ps((__m512)c0[i], av, b0);
      c1[i] = (ft_v16f)_mm512_dpbf16_ps((__m512)c1[i], av, b1);
    }
    a += FT_GEMM_MR;
    b += FT_GEMM_NR;
  }
#else
  const uint32_t hi_mask = 0xffff0000u;
  for (int64_t q = 0; q < kc2; q++) {
    ft_v16w w0 = *(const ft_v16wu *)b, w1 = *(const ft_v16wu *)(b + 16);
    ft_v16f b0e = (ft_v16f)(w0 << 16), b0o = (ft_v16f)(w0 & hi_mask);
    ft_v16f b1e = (ft_v16f)(w1 << 16), b1o = (ft_v16f)(w1 & hi_mask);
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      uint32_t ue = a[i] << 16, uo = a[i] & hi_mask;
      float ae, ao;
      memcpy(&ae, &ue, 4);
      memcpy(&ao, &uo, 4);
      c0[i] += ao * b0o;
      c0[i] += ae * b0e;
      c1[i] += ao * b1o;
      c1[i] += ae * b1e;
    }
    a += FT_GEMM_MR;
    b += FT_GEMM_NR;
  }
#endif
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) {
    *(ft_v16u *)(t + i * FT_GEMM_NR) = c0[i];
    *(ft_v16u *)(t + i * FT_GEMM_NR + 16) = c1[i];
  }
}

#define FT_BF16_UK(MR_)                                                                              \
  static void ft_bf16_ukernel_##MR_(int64_t kc2, const uint32_t *a, const uint32_t *b, float *t, int acc) { \
    ft_bf16_ukernel(MR_, kc2, a, b, t, acc);                                                         \
  }
FT_BF16_UK(1) FT_GEMM_EACH_MR(FT_BF16_UK)
#undef FT_BF16_UK

typedef void (*ft_bf16_uk_fn)(int64_t, const uint32_t *, const uint32_t *, float *, int);
static const ft_bf16_uk_fn ft_bf16_uk_table[FT_GEMM_MR + 1] = FT_GEMM_MR_TABLE(ft_bf16_ukernel_);

#ifdef FT_BF16_AVX512
/* The same tile over a whole K (one block), stored from the accumulators through the fp32
 * direct tile's store (gemm.h's ft_gemm_dir_store): the epilogue on the registers and the kept
 * lanes of each vector compressed to their outputs, where the store through t split every row
 * at a conv's padded width (ResNet-50's 3x3 convs spent as long in that store as in the tile). */
static inline __attribute__((always_inline)) void ft_bf16_ukernel_dir(const int mr, int64_t kc2,
                                                                       const uint32_t *restrict a,
                                                                       const uint32_t *restrict b, const ft_gemm_op *g,
                                                                       int64_t m0, const ft_gemm_colmap *cm,
                                                                       const char *pf, int64_t pfs) {
  __m512 c0[FT_GEMM_MR], c1[FT_GEMM_MR];
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) { c0[i] = _mm512_setzero_ps(); c1[i] = _mm512_setzero_ps(); }
  for (int64_t q = 0; q < kc2; q++) {
    pf = ft_prefetch_step(pf, pfs); /* this sliver's slice of the next panel (ft_bf16_column) */
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i]);
      c0[i] = _mm512_dpbf16_ps(c0[i], av, b0);
      c1[i] = _mm512_dpbf16_ps(c1[i], av, b1);
    }
    a += FT_GEMM_MR;
    b += FT_GEMM_NR;
  }
  ft_gemm_dir_store(mr, c0, c1, g, m0, cm);
}

#define FT_BF16_UKD(MR_)                                                                              \
  static void ft_bf16_ukernel_dir_##MR_(int64_t kc2, const uint32_t *a, const uint32_t *b,             \
                                        const ft_gemm_op *g, int64_t m0, const ft_gemm_colmap *cm,      \
                                        const char *pf, int64_t pfs) {                                  \
    ft_bf16_ukernel_dir(MR_, kc2, a, b, g, m0, cm, pf, pfs);                                          \
  }
FT_BF16_UKD(1) FT_GEMM_EACH_MR(FT_BF16_UKD)
#undef FT_BF16_UKD

typedef void (*ft_bf16_ukd_fn)(int64_t, const uint32_t *, const uint32_t *, const ft_gemm_op *, int64_t,
                               const ft_gemm_colmap *, const char *, int64_t);
static const ft_bf16_ukd_fn ft_bf16_ukd_table[FT_GEMM_MR + 1] = {
    NULL, ft_bf16_ukernel_dir_1, ft_bf16_ukernel_dir_2, ft_bf16_ukernel_dir_3, ft_bf16_ukernel_dir_4,
    ft_bf16_ukernel_dir_5, ft_bf16_ukernel_dir_6, ft_bf16_ukernel_dir_7, ft_bf16_ukernel_dir_8,
#if FT_GEMM_MR > 8
    ft_bf16_ukernel_dir_9, ft_bf16_ukernel_dir_10, ft_bf16_ukernel_dir_11, ft_bf16_ukernel_dir_12,
#endif
#if FT_GEMM_MR > 12
    ft_bf16_ukernel_dir_13, ft_bf16_ukernel_dir_14,
#endif
};
#endif

/* ---- driver --------------------------------------------------------------------------------
 * The work item of ft_gemm_op.column: rows [m0, m1) of column panel jr, with ap the packed bf16
 * A (words, through the float pointer) and bp the packed bf16 B, or b (fp32) packed here. */
static void ft_bf16_column(const ft_gemm_op *g, int64_t m0, int64_t m1, int64_t jr) {
  uint32_t bbuf[FT_BF16_KB2 * FT_GEMM_NR] __attribute__((aligned(64)));
  float t[FT_GEMM_MR * FT_GEMM_NR] __attribute__((aligned(64)));
  int64_t K = g->K, K2 = (K + 1) / 2, n0 = jr * FT_GEMM_NR;
  int nr = g->N - n0 < FT_GEMM_NR ? (int)(g->N - n0) : FT_GEMM_NR;
  const uint32_t *ap = (const uint32_t *)(const void *)g->ap, *bpan = bbuf;
  int64_t kb2 = g->bp ? (K2 > 0 ? K2 : 1) : FT_BF16_KB2, nblk = K2 > kb2 ? (K2 + kb2 - 1) / kb2 : 1;
  if (g->bp) bpan = (const uint32_t *)(const void *)g->bp + jr * K2 * FT_GEMM_NR;
  else if (nblk == 1) ft_bf16_pack_b_panel(K, g->N, g->b, g->b_rs, g->b_cs, g->b_rowoff, jr, 0, K2, bbuf);
#ifdef FT_BF16_AVX512
  if (nblk == 1 && g->e.bias_cs == 0) { /* a bias per row or none (the store's case) */
    ft_gemm_colmap cm;
    ft_gemm_colmap_init(g, n0, &cm);
    /* Packed weights: the same thread usually runs the next panel next (parallel.h's shares);
       each sliver prefetches a slice of it (ft_prefetch_step), pfs bytes a k pair */
    const uint32_t *next = g->bp && n0 + FT_GEMM_NR < g->N ? bpan + K2 * FT_GEMM_NR : NULL;
    int64_t ns = (m1 - m0 + FT_GEMM_MR - 1) / FT_GEMM_MR, pfs = ns ? 4 * ((FT_GEMM_NR + ns - 1) / ns) : 0;
    for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
      int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
      ft_bf16_ukd_table[mr](K2, ap + ir * K2, bpan, g, ir, &cm,
                            next ? (const char *)next + (ir - m0) / FT_GEMM_MR * K2 * pfs : NULL, pfs);
    }
    return;
  }
#endif
  for (int64_t ir = m0; ir < m1; ir += FT_GEMM_MR) {
    int mr = m1 - ir < FT_GEMM_MR ? (int)(m1 - ir) : FT_GEMM_MR;
    const uint32_t *asl = ap + ir * K2; /* sliver ir/MR starts at ir*K2 words */
    for (int64_t blk = 0; blk < nblk; blk++) {
      int64_t kp0 = blk * kb2, kc2 = K2 - kp0 < kb2 ? K2 - kp0 : kb2;
      if (nblk > 1) ft_bf16_pack_b_panel(K, g->N, g->b, g->b_rs, g->b_cs, g->b_rowoff, jr, kp0, kc2, bbuf);
      ft_bf16_uk_table[mr](kc2, asl + kp0 * FT_GEMM_MR, bpan, t, blk > 0);
    }
    ft_gemm_store(g, t, ir, mr, n0, nr, 1, 1);
  }
}

/* ---- MatMul and Gemm kernel ----------------------------------------------------------------
 * ft_matmul_f32's parameters (templates/common/gemm_params.h) and work items; B, when
 * p[FT_MM_PACKED], is in ft_bf16_mm_pack_b's layout. */

/* Prepack hook: every B matrix into bf16 panels, one after another. */
static size_t ft_bf16_mm_pack_b(const int64_t *p, const void *src, void *dst) {
  int64_t K = p[FT_MM_K], N = p[FT_MM_N], per = ft_bf16_packed_b_words(K, N);
  size_t bytes = sizeof(uint32_t) * (size_t)(per * p[FT_MM_B_NMAT]);
  if (!dst) return bytes;
  for (int64_t i = 0; i < p[FT_MM_B_NMAT]; i++)
    ft_bf16_pack_b(K, N, (const float *)src + i * K * N, p[FT_MM_B_RS], p[FT_MM_B_CS], (uint32_t *)dst + i * per);
  return bytes;
}

/* Scratch: every A matrix packed (no more than ft_mm_scratch's fp32 slivers). */
static inline size_t ft_bf16_mm_scratch(int64_t M, int64_t K, int64_t a_nmat) {
  return sizeof(uint32_t) * (size_t)(ft_bf16_packed_a_words(M, K) * a_nmat);
}

/* Slivers [lo, hi) of every A matrix into scratch, rounded to bf16. */
static void ft_bf16_mm_pack_a_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_mm_ctx *c = (const ft_mm_ctx *)ctx;
  const int64_t M = c->g0->M, K = c->g0->K;
  uint32_t *apk = (uint32_t *)(void *)c->apk;
  for (int64_t it = lo; it < hi; it++) {
    int64_t m = it / c->nsl, s = it % c->nsl;
    ft_bf16_pack_a_sliver(M, K, c->A + m * M * K, c->g0->a_rs, c->g0->a_cs, s,
                          apk + m * c->apk_per + s * ((K + 1) / 2) * FT_GEMM_MR);
  }
}

static void ft_matmul_bf16(const int64_t *p, const double *f, const void *const *in, void *const *out,
                           void *scratch) {
  int64_t M = p[FT_MM_M], N = p[FT_MM_N], K = p[FT_MM_K], r = p[FT_MM_BRANK];
  int64_t nbatch = 1;
  for (int64_t d = 0; d < r; d++) nbatch *= p[FT_MM_BDIMS + d];
  ft_gemm_op g0;
  ft_mm_gemm_op(p, f, in, &g0);
  g0.column = ft_bf16_column;
  if (M <= 0 || N <= 0) return;
  /* the fp32 kernel's items (ft_mm_items_run) with per-matrix strides in 4-byte words */
  ft_mm_ctx c = {p, &g0, (const float *)in[0], (const float *)in[1], (float *)out[0], (float *)scratch,
                 ft_gemm_mc(M, K), 0, (M + FT_GEMM_MR - 1) / FT_GEMM_MR,
                 ft_bf16_packed_a_words(M, K), p[FT_MM_PACKED] ? ft_bf16_packed_b_words(K, N) : K * N, 0};
  c.per = ft_gemm_items(&g0, c.mc);
  int par = nbatch * M * N * K > FT_GEMM_PAR_FLOPS;
  ft_parallel_for(p[FT_MM_A_NMAT] * c.nsl, par, ft_bf16_mm_pack_a_run, &c);
  ft_parallel_for(c.per * nbatch, par, ft_mm_items_run, &c);
}

#endif
