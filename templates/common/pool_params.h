/* The parameter layout (p) of MaxPool, AveragePool and LpPool: one header for the C kernels
 * (templates/c/pool.h), the CUDA twins (templates/cuda/pool.cuh) and the plan that fills it
 * (compiler/ops/pool.c), so they cannot disagree. */
#ifndef FT_POOL_PARAMS_H
#define FT_POOL_PARAMS_H

/* p, laid out by compiler/ops/pool.c; window sizes are 3-D (leading dims of size 1). */
enum {
  FT_PL_PLANES = 0,  /* N * C */
  FT_PL_INCL_PAD,    /* AveragePool count_include_pad */
  FT_PL_ORDER,       /* MaxPool storage_order for Indices: 0 row-major, 1 column-major */
  FT_PL_HAS_IDX,     /* MaxPool has its Indices output */
  FT_PL_PE,          /* pad_end[3] */
  FT_PL_IN = FT_PL_PE + 3, /* in[3], out[3], k[3], s[3], d[3], pad_begin[3] */
  FT_PL_OUT = FT_PL_IN + 3,
  FT_PL_K = FT_PL_IN + 6,
  FT_PL_S = FT_PL_IN + 9,
  FT_PL_D = FT_PL_IN + 12,
  FT_PL_P = FT_PL_IN + 15,
  FT_PL_NP = FT_PL_IN + 18
};

#endif
