/* The parameter layout (p) of Conv and ConvTranspose: one header for the C kernels
 * (templates/c/conv.h), the cuDNN twin (templates/cuda/conv.cuh) and the plan that fills it
 * (compiler/ops/conv.c), so they cannot disagree. */
#ifndef FT_CONV_PARAMS_H
#define FT_CONV_PARAMS_H

/* p, laid out by compiler/ops/conv.c. Spatial sizes are 3-D (leading dims of size 1). */
enum {
  FT_CV_PACKED = 0, /* 1 when ftaxc packed the weights (input 1): ft_conv_pack_w layout */
  FT_CV_MODE,       /* FT_CV_IM2COL, FT_CV_POINTWISE, FT_CV_DEPTHWISE, FT_CV_SHIFTED, a _T mode, FT_CV_WINOGRAD */
  FT_CV_N, FT_CV_C, FT_CV_CO, FT_CV_G,
  FT_CV_HAS_BIAS, FT_CV_ACT,
  FT_CV_CHUNK,      /* im2col columns per chunk, a multiple of FT_GEMM_NR */
  FT_CV_IN,         /* in[3], out[3], k[3], s[3], d[3], pad_begin[3] */
  FT_CV_OUT = FT_CV_IN + 3,
  FT_CV_K = FT_CV_IN + 6,
  FT_CV_S = FT_CV_IN + 9,
  FT_CV_D = FT_CV_IN + 12,
  FT_CV_P = FT_CV_IN + 15,
  FT_CV_RES = FT_CV_IN + 18, /* residual input 3 added: 0 no, 1 before FT_CV_ACT, 2 after it */
  FT_CV_LAYOUT = FT_CV_IN + 19, /* FT_CV_X_BLOCKED | FT_CV_Y_BLOCKED, or 0: both NCHW */
  FT_CV_NP = FT_CV_IN + 20
};
/* FT_CV_LAYOUT: X or Y in the blocked layout [N][C/16][H*W][16] (C a multiple of 16, 2-D, one
 * group) instead of NCHW, on an edge between two convs that both take it
 * (compiler/passes/blocked.c): X or Y of a pointwise^T conv of one group or of a depthwise conv on
 * the channel-vector path (Y with no residual). Block b of image n starts where channel 16b's plane would in NCHW,
 * and the tensor has NCHW's size. */
enum { FT_CV_X_BLOCKED = 1, FT_CV_Y_BLOCKED = 2 };
/* The _T modes: pointwise and im2col with the GEMM transposed (vectors along C_out, W packed as
 * B panels: templates/c/conv.h); with weights not packed (constant folding, ftax-eager) they
 * run as FT_CV_POINTWISE and FT_CV_IM2COL. FT_CV_WINOGRAD: templates/c/winograd.h, its own
 * kernel entry. */
enum {
  FT_CV_IM2COL = 0, FT_CV_POINTWISE = 1, FT_CV_DEPTHWISE = 2, FT_CV_SHIFTED = 3,
  FT_CV_POINTWISE_T = 4, FT_CV_IM2COL_T = 5, FT_CV_WINOGRAD = 6
};

#endif
