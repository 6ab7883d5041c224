/* The fp32 GEMM register tile where the ISA is none of the tuned ones (the x86-64 baseline with
 * SSE2, 32-bit Arm, RISC-V ...): GCC vectors of 4 floats, sized for 16 registers.
 *
 * The packed layouts are gemm.h's on every ISA; this file only cuts a tile into register passes
 * (ukernels/gemm_f32_tile.h) of at most 6 rows x 8 columns: 12 accumulators, 2 B vectors and
 * the A value. One row: 16 columns a pass, even and odd k apart. Where the target has no vector
 * unit the compiler makes scalar code of the same loops. Every element is summed over k in
 * order: the same floats as the other ISAs' tiles where the compiler contracts a * b + c into
 * an FMA as they do (-ffp-contract=fast, GCC's default, on a target with FMA). */
#ifndef FT_UK_GEMM_F32_GENERIC_H
#define FT_UK_GEMM_F32_GENERIC_H

#include <stdint.h>
#include <string.h>

#include "isa.h"
#include "gemm_f32_tile.h"

#if FT_ISA == FT_ISA_GENERIC

#define FT_UK_KB 128 /* k-steps a block */

typedef float ft_uk_v4 __attribute__((vector_size(16)));
typedef float ft_uk_v4u __attribute__((vector_size(16), aligned(4), may_alias));

/* ft_uk_pass_fn for R rows x 4 NV floats. */
static inline __attribute__((always_inline)) void ft_uk_pass(const int R, const int NV, int64_t K,
                                                             const float *restrict a, int64_t ars, int64_t aks,
                                                             const float *restrict b, float *restrict t, int load) {
  ft_uk_v4 c[6][4];
#pragma GCC unroll 6
  for (int i = 0; i < R; i++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) c[i][v] = load ? (ft_uk_v4) * (const ft_uk_v4u *)(t + i * 32 + 4 * v) : (ft_uk_v4){0};
  const float *ar[6];
#pragma GCC unroll 6
  for (int i = 0; i < R; i++) ar[i] = a + i * ars;
  for (int64_t k = 0, ka = 0; k < K; k++, ka += aks) {
    ft_uk_v4 bv[4];
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) bv[v] = *(const ft_uk_v4u *)(b + 4 * v);
#pragma GCC unroll 6
    for (int i = 0; i < R; i++) {
      const float ai = ar[i][ka];
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++) c[i][v] += ai * bv[v];
    }
    b += 32;
  }
#pragma GCC unroll 6
  for (int i = 0; i < R; i++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) *(ft_uk_v4u *)(t + i * 32 + 4 * v) = c[i][v];
}

/* One row, 16 columns: even k into c, odd k into d, t = c + d (gemm.h's GEMV order). */
static void ft_uk_row16(int64_t K, const float *restrict a, int64_t aks, const float *restrict b, float *restrict t) {
  ft_uk_v4 c[4] = {{0}}, d[4] = {{0}};
  int64_t k = 0;
  for (; k + 1 < K; k += 2) {
    const float a0 = a[0], a1 = a[aks];
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) {
      c[v] += a0 * *(const ft_uk_v4u *)(b + 4 * v);
      d[v] += a1 * *(const ft_uk_v4u *)(b + 32 + 4 * v);
    }
    a += 2 * aks;
    b += 64;
  }
  if (k < K)
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) c[v] += a[0] * *(const ft_uk_v4u *)(b + 4 * v);
#pragma GCC unroll 4
  for (int v = 0; v < 4; v++) *(ft_uk_v4u *)(t + 4 * v) = c[v] + d[v];
}

FT_UK_PASSES_1_TO_6(2)

/* The ISA's tile entry (see gemm_f32_avx2.h's): mr <= 16 rows, cols 16 or 32. */
static void ft_uk_tile(int mr, int cols, int64_t K, const float *a, int64_t ars, int64_t aks, const float *b,
                       float *t, const float *pf, int64_t pfk) {
  if (mr == 1) {
    for (int h = 0; h < cols; h += 16) ft_uk_row16(K, a, aks, b + h, t + h);
    return;
  }
  ft_uk_drive(mr, cols, K, a, ars, aks, b, t, 6, 8, ft_uk_passes, FT_UK_KB, (const char *)pf, pfk);
}

#undef FT_UK_KB
#endif
#endif
