/* The parameter layout (p) of MatMul and Gemm: one header for the C kernel (templates/c/gemm.h),
 * the cuBLASLt twin (templates/cuda/gemm.cuh) and the plan that fills it (compiler/ops/matmul.c),
 * so they cannot disagree. */
#ifndef FT_GEMM_PARAMS_H
#define FT_GEMM_PARAMS_H

enum {
  FT_MM_PACKED = 0, /* 1 when ftaxc packed B (input 1) at compile time: ft_mm_pack_b layout */
  FT_MM_M, FT_MM_N, FT_MM_K,
  FT_MM_A_RS, FT_MM_A_CS, FT_MM_B_RS, FT_MM_B_CS, /* element strides inside one matrix */
  FT_MM_HAS_BIAS, FT_MM_BIAS_RS, FT_MM_BIAS_CS,   /* input 2 broadcast over [M,N] */
  FT_MM_ACT,
  FT_MM_A_NMAT, FT_MM_B_NMAT, /* matrices in A and B (their batch dims' product) */
  FT_MM_BRANK,                /* batch dims of the output, then dims, A and B matrix strides */
  FT_MM_BDIMS
};

#endif
