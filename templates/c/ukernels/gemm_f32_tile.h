/* What the fp32 register tiles of every ISA but AVX-512 share (ukernels/gemm_f32_<isa>.h):
 * the driver that cuts a tile of up to 16 rows x 32 columns (one packed B panel, gemm.h) into
 * register passes of at most maxr rows x w columns, in blocks of kb k-steps so that the part of
 * the panel and of A that a block reads stays in L1 while its passes reuse it.
 *
 * A pass (ft_uk_pass_fn) of r rows: t[i * 32 + j] (i < r, j < w) = (load ? t : 0) + sum over k
 * of A(i, k) * b[k * 32 + j], A(i, k) at a[i * ars + k * aks]. The partial sums go through t
 * between blocks, exactly, so each element is still summed over k in order, one FMA a step. */
#ifndef FT_UK_GEMM_F32_TILE_H
#define FT_UK_GEMM_F32_TILE_H

#include <stdint.h>

#include "gemm_layout.h"

#if FT_GEMM_NR != 32
#error "the register passes are written for B panels of 32 columns"
#endif

typedef void (*ft_uk_pass_fn)(int64_t, const float *, int64_t, int64_t, const float *, float *, int);

/* ft_uk_pass_R: an instance of the ISA's always-inline ft_uk_pass (defined before this is used)
 * at R rows and NV vectors a row. */
#define FT_UK_PASS_FN(R_, NV_)                                                                     \
  static void ft_uk_pass_##R_(int64_t K, const float *a, int64_t ars, int64_t aks, const float *b, \
                              float *t, int load) {                                                \
    ft_uk_pass(R_, NV_, K, a, ars, aks, b, t, load);                                               \
  }
/* The passes of 1 to 6 rows at NV vectors a row, and ft_uk_passes, their table by rows. */
#define FT_UK_PASSES_1_TO_6(NV_)                                                                          \
  FT_UK_PASS_FN(1, NV_) FT_UK_PASS_FN(2, NV_) FT_UK_PASS_FN(3, NV_) FT_UK_PASS_FN(4, NV_)                 \
  FT_UK_PASS_FN(5, NV_) FT_UK_PASS_FN(6, NV_)                                                             \
  static const ft_uk_pass_fn ft_uk_passes[7] = {NULL, ft_uk_pass_1, ft_uk_pass_2, ft_uk_pass_3, ft_uk_pass_4, \
                                                ft_uk_pass_5, ft_uk_pass_6};

/* Rows [0, mr) of t, columns [0, cols): passes[r] for r in [1, maxr] computes r rows x w
 * columns; rows are cut into groups of even size (7 = 4 + 3, 11 = 6 + 5). pf (NULL: none): pfk
 * bytes a k-step to prefetch from there, each block's share before its passes (gemm.h's
 * ft_gemm_column hands a tile half of the next B panel, which comes from DRAM in a model). */
static void ft_uk_drive(int mr, int cols, int64_t K, const float *a, int64_t ars, int64_t aks, const float *b,
                        float *t, int maxr, int w, const ft_uk_pass_fn *passes, int64_t kb, const char *pf,
                        int64_t pfk) {
  if (K <= 0) {
    for (int i = 0; i < mr; i++)
      for (int j = 0; j < cols; j++) t[i * 32 + j] = 0.0f;
    return;
  }
  int ng = (mr + maxr - 1) / maxr;
  for (int64_t k0 = 0; k0 < K; k0 += kb) {
    int64_t kn = K - k0 < kb ? K - k0 : kb;
    if (pf) /* the block's share of what the caller reads next (the next panel), into L2 */
      for (int64_t q = k0 * pfk; q < (k0 + kn) * pfk; q += 64) __builtin_prefetch(pf + q, 0, 2);
    for (int h = 0; h < cols; h += w)
      for (int g = 0, r0 = 0; g < ng; g++) {
        int r = (mr - r0 + (ng - g) - 1) / (ng - g);
        passes[r](kn, a + r0 * ars + k0 * aks, ars, aks, b + k0 * 32 + h, t + r0 * 32 + h, k0 > 0);
        r0 += r;
      }
  }
}

#endif
