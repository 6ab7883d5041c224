/* The parameter layout (p) of ftax.Attention: one header for the C kernel
 * (templates/c/attention.h), the CUDA twin (templates/cuda/attention.cuh) and the plan that fills
 * it (compiler/ops/fused_attention.c), so they cannot disagree. */
#ifndef FT_ATTENTION_PARAMS_H
#define FT_ATTENTION_PARAMS_H

/* p, laid out by compiler/ops/fused_attention.c. A view is {offset, b1 stride, b2 stride, row
 * stride, column stride} in elements of its buffer. */
enum {
  FT_AT_N1, FT_AT_N2, FT_AT_SQ, FT_AT_SK, FT_AT_DK, FT_AT_DV,
  FT_AT_Q = 6, FT_AT_K = 11, FT_AT_V = 16, /* off, b1, b2, row, col */
  FT_AT_O = 21,                            /* off, b1, b2, row (columns contiguous) */
  FT_AT_ADD = 25,                          /* has, b1, b2, i, j strides of the float mask */
  FT_AT_SEL = 30,                          /* kind (0 none, 1 bool tensor, 2 causal), keep value or causal offset, b1, b2, i, j */
  FT_AT_ADD_FIRST = 36,                    /* 1: the additive mask is applied before the select */
  FT_AT_RG, FT_AT_KB, FT_AT_SKIP,          /* query rows per work item, keys per block, causal: skip hidden keys */
  FT_AT_NP
};
enum { FT_AT_SEL_NONE = 0, FT_AT_SEL_TENSOR = 1, FT_AT_SEL_CAUSAL = 2 };
/* f: [0] scale, [1] fill value of the select mask */

#define FT_AT_CUDA_MAXD 256 /* head dims the CUDA twin (templates/cuda/attention.cuh) takes */

#endif
