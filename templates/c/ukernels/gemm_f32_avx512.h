/* The fp32 GEMM register tiles for AVX-512: 32 zmm registers of 16 floats.
 *
 * A tile is mr <= 12 rows x 32 columns (gemm.h's packed layouts): 2 mr accumulators and two B
 * vectors a k-step, mr broadcasts of A. The small-M tiles (A's rows where they lie, up to 14
 * rows over the whole panel) and the tiles that read A in place are here too; the direct tile
 * (B in place, results stored from the registers) and the conv tiles with AVX-512 stores stay
 * beside the algorithms they serve (gemm.h, conv.h). */
#ifndef FT_UK_GEMM_F32_AVX512_H
#define FT_UK_GEMM_F32_AVX512_H

#include <stdint.h>

#include "gemm_layout.h"
#include "isa.h"

#if FT_ISA == FT_ISA_AVX512

/* ---- micro-kernel --------------------------------------------------------------------------
 * t (mr x NR, row-major) = A sliver (kc x MR) * B panel (kc x NR). mr is a constant in each
 * instance below, so the accumulators are registers and the row loop is unrolled. Each k-step
 * also prefetches one cache line, at pf, pf + 16, ...: part of the next B panel where the
 * caller asks for it (ft_gemm_column), else the panel being read (a hit). */
static inline __attribute__((always_inline)) void ft_gemm_ukernel(const int mr, int64_t kc,
                                                                   const float *restrict a,
                                                                   const float *restrict b,
                                                                   float *restrict t, const float *pf) {
  ft_v16f c0[FT_GEMM_MR], c1[FT_GEMM_MR];
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) { c0[i] = (ft_v16f){0}; c1[i] = (ft_v16f){0}; }
  for (int64_t k = 0; k < kc; k++) {
    ft_v16f b0 = *(const ft_v16u *)b, b1 = *(const ft_v16u *)(b + 16);
    __builtin_prefetch(pf, 0, 2);
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      c0[i] += a[i] * b0;
      c1[i] += a[i] * b1;
    }
    a += FT_GEMM_MR;
    b += FT_GEMM_NR;
    pf += 16;
  }
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) {
    *(ft_v16u *)(t + i * FT_GEMM_NR) = c0[i];
    *(ft_v16u *)(t + i * FT_GEMM_NR + 16) = c1[i];
  }
}

/* One row (a GEMV, M = 1): two accumulators would leave the FMA units waiting on their own
 * latency, so even and odd k go to separate ones, summed at the end. A's k-th value at
 * a[k * as]: as MR in a packed sliver, 1 for a row read in place (ft_gemm_ukernel_rows_1). */
static inline __attribute__((always_inline)) void ft_gemm_ukernel_1s(int64_t kc, const float *restrict a, const int as,
                                                                     const float *restrict b, float *restrict t) {
  ft_v16f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
  int64_t k = 0;
  for (; k + 1 < kc; k += 2) {
    c0 += a[0] * *(const ft_v16u *)b;
    c1 += a[0] * *(const ft_v16u *)(b + 16);
    c2 += a[as] * *(const ft_v16u *)(b + FT_GEMM_NR);
    c3 += a[as] * *(const ft_v16u *)(b + FT_GEMM_NR + 16);
    a += 2 * as;
    b += 2 * FT_GEMM_NR;
  }
  if (k < kc) {
    c0 += a[0] * *(const ft_v16u *)b;
    c1 += a[0] * *(const ft_v16u *)(b + 16);
  }
  *(ft_v16u *)t = c0 + c2;
  *(ft_v16u *)(t + 16) = c1 + c3;
}
static void ft_gemm_ukernel_1(int64_t kc, const float *restrict a, const float *restrict b, float *restrict t) {
  ft_gemm_ukernel_1s(kc, a, FT_GEMM_MR, b, t);
}

#define FT_GEMM_UK(MR_)                                                                        \
  static void ft_gemm_ukernel_##MR_(int64_t kc, const float *a, const float *b, float *t,      \
                                    const float *pf) {                                         \
    ft_gemm_ukernel(MR_, kc, a, b, t, pf);                                                     \
  }
FT_GEMM_EACH_MR(FT_GEMM_UK)
#undef FT_GEMM_UK


/* pf: the lines to prefetch, one a k-step (ft_gemm_ukernel); NULL: none. */
static void ft_gemm_ukernel_mr(int mr, int64_t kc, const float *a, const float *b, float *t, const float *pf) {
  if (!pf) pf = b;
  switch (mr) {
  case 1: ft_gemm_ukernel_1(kc, a, b, t); break;
  case 2: ft_gemm_ukernel_2(kc, a, b, t, pf); break;
  case 3: ft_gemm_ukernel_3(kc, a, b, t, pf); break;
  case 4: ft_gemm_ukernel_4(kc, a, b, t, pf); break;
  case 5: ft_gemm_ukernel_5(kc, a, b, t, pf); break;
  case 6: ft_gemm_ukernel_6(kc, a, b, t, pf); break;
  case 7: ft_gemm_ukernel_7(kc, a, b, t, pf); break;
  case 8: ft_gemm_ukernel_8(kc, a, b, t, pf); break;
#if FT_GEMM_MR > 8
  case 9: ft_gemm_ukernel_9(kc, a, b, t, pf); break;
  case 10: ft_gemm_ukernel_10(kc, a, b, t, pf); break;
  case 11: ft_gemm_ukernel_11(kc, a, b, t, pf); break;
  case 12: ft_gemm_ukernel_12(kc, a, b, t, pf); break;
#endif
#if FT_GEMM_MR > 12
  case 13: ft_gemm_ukernel_13(kc, a, b, t, pf); break;
  case 14: ft_gemm_ukernel_14(kc, a, b, t, pf); break;
#endif
  default: break;
  }
}

/* t (mr x NR, row-major) = A (mr rows at a + i * lda, each contiguous along k) x B (a packed
 * kc x NR panel): ft_gemm_ukernel with A read where it lies instead of from a packed sliver.
 * The same loads a k-step (mr broadcasts, two B vectors), from mr rows instead of one run; the
 * copy it saves cost 2-4% of a GEMM whose A is an activation. Attention's scores (Q rows in
 * place) and probabilities use it too. pf as ft_gemm_ukernel's, but NULL prefetches nothing:
 * instances with and without the prefetch, which costs a load slot a k-step. */
static inline __attribute__((always_inline)) void ft_gemm_ukernel_rows(const int mr, const int pfon, int64_t kc,
                                                                        const float *restrict a, int64_t lda,
                                                                        const float *restrict b, float *restrict t,
                                                                        const float *pf) {
  ft_v16f c0[FT_GEMM_MR], c1[FT_GEMM_MR];
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) { c0[i] = (ft_v16f){0}; c1[i] = (ft_v16f){0}; }
  for (int64_t k = 0; k < kc; k++) {
    ft_v16f b0 = *(const ft_v16u *)b, b1 = *(const ft_v16u *)(b + 16);
    if (pfon) {
      __builtin_prefetch(pf, 0, 2);
      pf += 16;
    }
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      const float ai = a[i * lda + k];
      c0[i] += ai * b0;
      c1[i] += ai * b1;
    }
    b += FT_GEMM_NR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) {
    *(ft_v16u *)(t + i * FT_GEMM_NR) = c0[i];
    *(ft_v16u *)(t + i * FT_GEMM_NR + 16) = c1[i];
  }
}

#define FT_GEMM_UKR(MR_)                                                                                   \
  static void ft_gemm_ukernel_rows_##MR_(int64_t kc, const float *a, int64_t lda, const float *b, float *t, \
                                         const float *pf) {                                                \
    if (pf) ft_gemm_ukernel_rows(MR_, 1, kc, a, lda, b, t, pf);                                            \
    else ft_gemm_ukernel_rows(MR_, 0, kc, a, lda, b, t, pf);                                               \
  }
FT_GEMM_EACH_MR(FT_GEMM_UKR)
#undef FT_GEMM_UKR

/* One row: ft_gemm_ukernel_1's even and odd k accumulators (the same floats as it gives). */
static void ft_gemm_ukernel_rows_1(int64_t kc, const float *restrict a, int64_t lda, const float *restrict b,
                                   float *restrict t, const float *pf) {
  (void)lda; (void)pf;
  ft_gemm_ukernel_1s(kc, a, 1, b, t);
}

typedef void (*ft_gemm_ukr_fn)(int64_t, const float *, int64_t, const float *, float *, const float *);
static const ft_gemm_ukr_fn ft_gemm_ukr_table[FT_GEMM_MR + 1] = FT_GEMM_MR_TABLE(ft_gemm_ukernel_rows_);

static inline void ft_gemm_ukernel_rows_mr(int mr, int64_t kc, const float *a, int64_t lda, const float *b, float *t,
                                           const float *pf) {
  if (mr >= 1 && mr <= FT_GEMM_MR) ft_gemm_ukr_table[mr](kc, a, lda, b, t, pf);
}

/* t (mr rows of stride NR, nv vectors each) = A rows * B panel columns (K rows of stride NR, nv
 * vectors from b), A's element (i, k) at a[i * ars + k]: rows of A where they lie, ars apart.
 * Each FMA takes its A element as a broadcast from memory, which costs the same from mr rows
 * as from a k-major packed copy (measured: the copy, a transpose by scalar stores, took 10% of
 * a 2-layer BERT at sequence 8). One row alone would chain every FMA on the one before: its
 * even and odd k go to separate accumulators, summed at the end. */
static inline __attribute__((always_inline)) void ft_gemm_small_tile(const int mr, const int nv, int64_t K,
                                                                     const float *restrict a, int64_t ars,
                                                                     const float *restrict b, float *restrict t) {
  ft_v16f c0[FT_GEMM_SMALL_M], c1[FT_GEMM_SMALL_M];
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) { c0[i] = (ft_v16f){0}; c1[i] = (ft_v16f){0}; }
  int64_t k = 0;
  if (mr == 1) {
    ft_v16f d0 = {0}, d1 = {0};
    for (; k + 1 < K; k += 2) {
      c0[0] += a[0] * *(const ft_v16u *)b;
      d0 += a[1] * *(const ft_v16u *)(b + FT_GEMM_NR);
      if (nv == 2) {
        c1[0] += a[0] * *(const ft_v16u *)(b + 16);
        d1 += a[1] * *(const ft_v16u *)(b + FT_GEMM_NR + 16);
      }
      a += 2;
      b += 2 * FT_GEMM_NR;
    }
    if (k < K) {
      c0[0] += a[0] * *(const ft_v16u *)b;
      if (nv == 2) c1[0] += a[0] * *(const ft_v16u *)(b + 16);
    }
    c0[0] += d0;
    c1[0] += d1;
    k = K;
  }
  for (; k < K; k++) {
    if (FT_GEMM_SMALL_PFD) {
      __builtin_prefetch(b + FT_GEMM_SMALL_PFD, 0, 2);
      __builtin_prefetch(b + FT_GEMM_SMALL_PFD + 16, 0, 2);
    }
    ft_v16f b0 = *(const ft_v16u *)b, b1 = {0};
    if (nv == 2) b1 = *(const ft_v16u *)(b + 16);
#pragma GCC unroll 16
    for (int i = 0; i < mr; i++) {
      c0[i] += a[i * ars] * b0;
      if (nv == 2) c1[i] += a[i * ars] * b1;
    }
    a++;
    b += FT_GEMM_NR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < mr; i++) {
    *(ft_v16u *)(t + i * FT_GEMM_NR) = c0[i];
    if (nv == 2) *(ft_v16u *)(t + i * FT_GEMM_NR + 16) = c1[i];
  }
}

#define FT_GEMM_SMALL_TILE(NV_, MR_)                                                                        \
  static void ft_gemm_small_tile##NV_##_##MR_(int64_t K, const float *a, int64_t ars, const float *b,       \
                                              float *t) {                                                   \
    ft_gemm_small_tile(MR_, NV_, K, a, ars, b, t);                                                          \
  }
#define FT_GEMM_SMALL_TILES(MR_) FT_GEMM_SMALL_TILE(1, MR_) FT_GEMM_SMALL_TILE(2, MR_)
FT_GEMM_SMALL_TILES(1) FT_GEMM_SMALL_TILES(2) FT_GEMM_SMALL_TILES(3) FT_GEMM_SMALL_TILES(4)
FT_GEMM_SMALL_TILES(5) FT_GEMM_SMALL_TILES(6) FT_GEMM_SMALL_TILES(7) FT_GEMM_SMALL_TILES(8)
FT_GEMM_SMALL_TILES(9) FT_GEMM_SMALL_TILES(10) FT_GEMM_SMALL_TILES(11) FT_GEMM_SMALL_TILES(12)
FT_GEMM_SMALL_TILES(13) FT_GEMM_SMALL_TILES(14) FT_GEMM_SMALL_TILE(1, 15) FT_GEMM_SMALL_TILE(1, 16)
#undef FT_GEMM_SMALL_TILES
#undef FT_GEMM_SMALL_TILE

/* [rows][vectors - 1]; no two-vector tile past 14 rows (its accumulators alone would fill the
 * registers) */
typedef void (*ft_gemm_small_fn)(int64_t, const float *, int64_t, const float *, float *);
#define FT_GEMM_SMALL_ROW(MR_) {ft_gemm_small_tile1_##MR_, ft_gemm_small_tile2_##MR_},
static const ft_gemm_small_fn ft_gemm_small_tiles[FT_GEMM_SMALL_M + 1][2] = {
    {NULL, NULL},
    FT_GEMM_SMALL_ROW(1) FT_GEMM_SMALL_ROW(2) FT_GEMM_SMALL_ROW(3) FT_GEMM_SMALL_ROW(4)
    FT_GEMM_SMALL_ROW(5) FT_GEMM_SMALL_ROW(6) FT_GEMM_SMALL_ROW(7) FT_GEMM_SMALL_ROW(8)
    FT_GEMM_SMALL_ROW(9) FT_GEMM_SMALL_ROW(10) FT_GEMM_SMALL_ROW(11) FT_GEMM_SMALL_ROW(12)
    FT_GEMM_SMALL_ROW(13) FT_GEMM_SMALL_ROW(14) {ft_gemm_small_tile1_15, NULL}, {ft_gemm_small_tile1_16, NULL}};
#undef FT_GEMM_SMALL_ROW

#endif
#endif
