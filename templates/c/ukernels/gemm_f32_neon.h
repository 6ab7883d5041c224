/* The fp32 GEMM register tile for AArch64 NEON: 32 registers of 4 floats, FMA by lane.
 *
 * The packed layouts are gemm.h's on every ISA (A slivers of 12 rows, B panels of 32 columns);
 * this file only cuts a tile into register passes (ukernels/gemm_f32_tile.h): at most 24
 * accumulators a pass, the rest for B and A. Up to 3 rows: 16 columns (2, 3 rows x 4 vectors;
 * one row: 32 columns, even and odd k apart); 4 to 6 rows (and 13 to 16 as groups of 5 or 6): 16
 * columns (16-24 accumulators); 7 to 12 rows: 8 columns (14-24 accumulators, 12 A values and 2 B vectors a k-step, the sliver's
 * 12 rows read as 3 vectors). Each A value is one fmla by element (vfmaq_n_f32 of the value in
 * a scalar register). Every element is summed over k in order, one FMA a step: the same floats
 * as the other ISAs' tiles. */
#ifndef FT_UK_GEMM_F32_NEON_H
#define FT_UK_GEMM_F32_NEON_H

#include <stdint.h>

#include "isa.h"
#include "gemm_f32_tile.h"

#if FT_ISA == FT_ISA_NEON
#include <arm_neon.h>

#define FT_UK_KB 128 /* k-steps a block */

/* ft_uk_pass_fn for R rows x 4 NV floats. */
static inline __attribute__((always_inline)) void ft_uk_pass(const int R, const int NV, int64_t K,
                                                             const float *restrict a, int64_t ars, int64_t aks,
                                                             const float *restrict b, float *restrict t, int load) {
  float32x4_t c[12][4];
#pragma GCC unroll 12
  for (int i = 0; i < R; i++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) c[i][v] = load ? vld1q_f32(t + i * 32 + 4 * v) : vdupq_n_f32(0.0f);
  const float *ar[12];
#pragma GCC unroll 12
  for (int i = 0; i < R; i++) ar[i] = a + i * ars;
  for (int64_t k = 0, ka = 0; k < K; k++, ka += aks) {
    float32x4_t bv[4];
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) bv[v] = vld1q_f32(b + 4 * v);
#pragma GCC unroll 12
    for (int i = 0; i < R; i++) {
      const float ai = ar[i][ka];
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++) c[i][v] = vfmaq_n_f32(c[i][v], bv[v], ai);
    }
    b += 32;
  }
#pragma GCC unroll 12
  for (int i = 0; i < R; i++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) vst1q_f32(t + i * 32 + 4 * v, c[i][v]);
}

/* One row, 4 NV columns: even k into c, odd k into d, t = c + d (gemm.h's GEMV order). */
static inline __attribute__((always_inline)) void ft_uk_row(const int NV, int64_t K, const float *restrict a,
                                                            int64_t aks, const float *restrict b, float *restrict t) {
  float32x4_t c[8], d[8];
#pragma GCC unroll 8
  for (int v = 0; v < NV; v++) { c[v] = vdupq_n_f32(0.0f); d[v] = vdupq_n_f32(0.0f); }
  int64_t k = 0;
  for (; k + 1 < K; k += 2) {
    const float a0 = a[0], a1 = a[aks];
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) {
      c[v] = vfmaq_n_f32(c[v], vld1q_f32(b + 4 * v), a0);
      d[v] = vfmaq_n_f32(d[v], vld1q_f32(b + 32 + 4 * v), a1);
    }
    a += 2 * aks;
    b += 64;
  }
  if (k < K)
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) c[v] = vfmaq_n_f32(c[v], vld1q_f32(b + 4 * v), a[0]);
#pragma GCC unroll 8
  for (int v = 0; v < NV; v++) vst1q_f32(t + 4 * v, vaddq_f32(c[v], d[v]));
}

/* up to 6 rows: 16 columns a pass (ft_uk_passes); 7 to 12: 8 columns */
FT_UK_PASSES_1_TO_6(4)
FT_UK_PASS_FN(7, 2) FT_UK_PASS_FN(8, 2) FT_UK_PASS_FN(9, 2) FT_UK_PASS_FN(10, 2) FT_UK_PASS_FN(11, 2) FT_UK_PASS_FN(12, 2)
static const ft_uk_pass_fn ft_uk_passes8[13] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, ft_uk_pass_7,
                                                ft_uk_pass_8, ft_uk_pass_9, ft_uk_pass_10, ft_uk_pass_11,
                                                ft_uk_pass_12};

/* The ISA's tile entry (see gemm_f32_avx2.h's): mr <= 16 rows, cols 16 or 32. */
static void ft_uk_tile(int mr, int cols, int64_t K, const float *a, int64_t ars, int64_t aks, const float *b,
                       float *t, const float *pf, int64_t pfk) {
  if (mr == 1) {
    if (cols == 32) ft_uk_row(8, K, a, aks, b, t);
    else ft_uk_row(4, K, a, aks, b, t);
  } else if (mr >= 7 && mr <= 12) {
    ft_uk_drive(mr, cols, K, a, ars, aks, b, t, 12, 8, ft_uk_passes8, FT_UK_KB, (const char *)pf, pfk);
  } else { /* up to 6 rows, or groups of 5 or 6 of 13 to 16 */
    ft_uk_drive(mr, cols, K, a, ars, aks, b, t, 6, 16, ft_uk_passes, FT_UK_KB, (const char *)pf, pfk);
  }
}

#undef FT_UK_KB
#endif
#endif
