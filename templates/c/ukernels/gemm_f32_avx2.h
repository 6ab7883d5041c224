/* The fp32 GEMM register tile for AVX2 + FMA3: 16 ymm registers of 8 floats.
 *
 * The packed layouts are gemm.h's on every ISA (A slivers of FT_GEMM_MR = 12 rows, B panels of
 * FT_GEMM_NR = 32 columns): they are the cache blocking, and a weights file packed once is the
 * same for every target. What differs is how a 12 x 32 tile is cut into register tiles. Here a
 * pass is at most 6 rows x 16 columns: 12 accumulators, 2 B vectors and the A broadcast, 15 of
 * the 16 registers, 8 loads for 12 FMAs a k-step. A tile of mr rows is split into groups of at
 * most 6 rows (7 = 4 + 3 ...) and each group makes one pass per half panel. K goes in blocks
 * of FT_UK_KB: the partial sums go through t between blocks, so the half panel and the A
 * sliver a block reads stay in L1 (16 KiB + 12 KiB) while the passes reuse them. One and two
 * rows (a GEMV, the tail of a tile) take the whole 32 columns in one pass instead, the single
 * row with even and odd k in separate accumulators, as every ISA's does.
 *
 * Every element is summed over k in order, one FMA a step (the partial sums go through memory
 * exactly): the same floats as the AVX-512 tile and the generic one. */
#ifndef FT_UK_GEMM_F32_AVX2_H
#define FT_UK_GEMM_F32_AVX2_H

#include <stdint.h>

#include "isa.h"
#include "gemm_f32_tile.h"

#if FT_ISA == FT_ISA_AVX2
#include <immintrin.h>

#define FT_UK_KB 128 /* k-steps a block: a half panel (8 KiB) and the sliver (6 KiB) per block */

/* t[i * 32 + 8 v + j] (i < R, v < NV) = (load ? t : 0) + sum over k < K of A(i, k) *
 * b[k * 32 + 8 v + j], A(i, k) at a[i * ars + k * aks]. */
static inline __attribute__((always_inline)) void ft_uk_pass(const int R, const int NV, int64_t K,
                                                             const float *restrict a, int64_t ars, int64_t aks,
                                                             const float *restrict b, float *restrict t, int load) {
  __m256 c[6][4];
#pragma GCC unroll 6
  for (int i = 0; i < R; i++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) c[i][v] = load ? _mm256_loadu_ps(t + i * 32 + 8 * v) : _mm256_setzero_ps();
  const float *ar[6];
#pragma GCC unroll 6
  for (int i = 0; i < R; i++) ar[i] = a + i * ars;
  for (int64_t k = 0, ka = 0; k < K; k++, ka += aks) {
    __m256 bv[4];
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) bv[v] = _mm256_loadu_ps(b + 8 * v);
#pragma GCC unroll 6
    for (int i = 0; i < R; i++) {
      __m256 ai = _mm256_broadcast_ss(ar[i] + ka);
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++) c[i][v] = _mm256_fmadd_ps(ai, bv[v], c[i][v]);
    }
    b += 32;
  }
#pragma GCC unroll 6
  for (int i = 0; i < R; i++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) _mm256_storeu_ps(t + i * 32 + 8 * v, c[i][v]);
}

/* One row, NV vectors: even k into c, odd k into d, t = c + d (gemm.h's GEMV order). */
static inline __attribute__((always_inline)) void ft_uk_row(const int NV, int64_t K, const float *restrict a,
                                                            int64_t aks, const float *restrict b, float *restrict t) {
  __m256 c[4], d[4];
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++) { c[v] = _mm256_setzero_ps(); d[v] = _mm256_setzero_ps(); }
  int64_t k = 0;
  for (; k + 1 < K; k += 2) {
    __m256 a0 = _mm256_broadcast_ss(a), a1 = _mm256_broadcast_ss(a + aks);
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) {
      c[v] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b + 8 * v), c[v]);
      d[v] = _mm256_fmadd_ps(a1, _mm256_loadu_ps(b + 32 + 8 * v), d[v]);
    }
    a += 2 * aks;
    b += 64;
  }
  if (k < K) {
    __m256 a0 = _mm256_broadcast_ss(a);
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) c[v] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b + 8 * v), c[v]);
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++) _mm256_storeu_ps(t + 8 * v, _mm256_add_ps(c[v], d[v]));
}

FT_UK_PASSES_1_TO_6(2)

/* t (mr rows, 32 apart) columns [0, cols) (cols 16 or 32) = A (mr x K, element (i, k) at
 * a[i * ars + k * aks]) * B (K rows of a packed panel, 32 apart, from b): the ISA's tile entry
 * that gemm.h's micro-kernels, small-M tiles and the transposed conv tile call. mr <= 16. pf:
 * pfk bytes a k-step to prefetch from there (NULL: none; one and two rows, a single B stream,
 * leave it to the hardware). */
static void ft_uk_tile(int mr, int cols, int64_t K, const float *a, int64_t ars, int64_t aks, const float *b,
                       float *t, const float *pf, int64_t pfk) {
  if (mr == 1) { /* a GEMV: the whole width in one pass, even and odd k apart */
    if (cols == 32) ft_uk_row(4, K, a, aks, b, t);
    else ft_uk_row(2, K, a, aks, b, t);
  } else if (mr == 2 && cols == 32) { /* 8 accumulators over the whole width */
    ft_uk_pass(2, 4, K, a, ars, aks, b, t, 0);
  } else {
    ft_uk_drive(mr, cols, K, a, ars, aks, b, t, 6, 16, ft_uk_passes, FT_UK_KB, (const char *)pf, pfk);
  }
}

#undef FT_UK_KB
#endif
#endif
