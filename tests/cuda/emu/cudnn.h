/* CPU stand-in for the part of cuDNN's convolution API ftax's conv twin uses (see cuda_runtime.h
 * here): fully packed NCHW / NCDHW tensors and filters, cross-correlation with pads, strides,
 * dilations and groups, y = alpha * conv(x) + beta * y, and the fused
 * y = act(alpha1 * conv(x) + alpha2 * z + bias). Descriptors that do not fit are refused with
 * CUDNN_STATUS_BAD_PARAM. FTAX_EMU_CBA_UNSUPPORTED=1 makes the fused call refuse
 * (CUDNN_STATUS_NOT_SUPPORTED), to exercise the twin's fallback. */
#ifndef FTAX_EMU_CUDNN_H
#define FTAX_EMU_CUDNN_H

#include <stdint.h>

#include "cuda_fp16.h"
#include "cuda_runtime.h"

typedef enum { CUDNN_STATUS_SUCCESS = 0, CUDNN_STATUS_BAD_PARAM = 3, CUDNN_STATUS_NOT_SUPPORTED = 9 } cudnnStatus_t;
typedef enum { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_DOUBLE = 1, CUDNN_DATA_HALF = 2 } cudnnDataType_t;
typedef enum { CUDNN_TENSOR_NCHW = 0 } cudnnTensorFormat_t;
typedef enum { CUDNN_CONVOLUTION = 0, CUDNN_CROSS_CORRELATION = 1 } cudnnConvolutionMode_t;
typedef enum { CUDNN_DEFAULT_MATH = 0, CUDNN_TENSOR_OP_MATH = 1, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2, CUDNN_FMA_MATH = 3 } cudnnMathType_t;
typedef enum { CUDNN_ACTIVATION_RELU = 1, CUDNN_ACTIVATION_IDENTITY = 5 } cudnnActivationMode_t;
typedef enum { CUDNN_NOT_PROPAGATE_NAN = 0, CUDNN_PROPAGATE_NAN = 1 } cudnnNanPropagation_t;
typedef enum { CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM = 0, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM = 1 } cudnnConvolutionFwdAlgo_t;
typedef enum { CUDNN_NON_DETERMINISTIC = 0, CUDNN_DETERMINISTIC = 1 } cudnnDeterminism_t;
typedef struct {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  cudnnDeterminism_t determinism;
  cudnnMathType_t mathType;
  int reserved[3];
} cudnnConvolutionFwdAlgoPerf_t;

struct ftc_emu_dnn { cudaStream_t stream = 0; };
struct ftc_emu_tensor { cudnnDataType_t t = CUDNN_DATA_FLOAT; int nd = 0; int dims[8] = {0}, strides[8] = {0}; };
struct ftc_emu_conv { int ns = 0; int pad[3] = {0}, str[3] = {1, 1, 1}, dil[3] = {1, 1, 1}; int groups = 1; cudnnMathType_t math = CUDNN_DEFAULT_MATH; };
struct ftc_emu_act { cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU; };
typedef ftc_emu_dnn *cudnnHandle_t;
typedef ftc_emu_tensor *cudnnTensorDescriptor_t;
typedef ftc_emu_tensor *cudnnFilterDescriptor_t;
typedef ftc_emu_conv *cudnnConvolutionDescriptor_t;
typedef ftc_emu_act *cudnnActivationDescriptor_t;

inline const char *cudnnGetErrorString(cudnnStatus_t s) {
  return s == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS" : s == CUDNN_STATUS_BAD_PARAM ? "CUDNN_STATUS_BAD_PARAM" : "CUDNN_STATUS_NOT_SUPPORTED";
}
inline cudnnStatus_t cudnnCreate(cudnnHandle_t *h) { *h = new ftc_emu_dnn; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnDestroy(cudnnHandle_t h) { delete h; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) { h->stream = s; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *t) { *t = new ftc_emu_tensor; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t t) { delete t; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t t, cudnnDataType_t dt, int nd, const int *dims, const int *st) {
  if (nd < 3 || nd > 8) return CUDNN_STATUS_BAD_PARAM;
  t->t = dt;
  t->nd = nd;
  int packed = 1;
  for (int i = nd - 1; i >= 0; i--) {
    if (dims[i] <= 0 || st[i] != packed) return CUDNN_STATUS_NOT_SUPPORTED; /* only packed tensors here */
    t->dims[i] = dims[i];
    t->strides[i] = st[i];
    packed *= dims[i];
  }
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *f) { *f = new ftc_emu_tensor; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t f) { delete f; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t f, cudnnDataType_t dt, cudnnTensorFormat_t fmt, int nd, const int *dims) {
  if (fmt != CUDNN_TENSOR_NCHW || nd < 3 || nd > 8) return CUDNN_STATUS_BAD_PARAM;
  f->t = dt;
  f->nd = nd;
  for (int i = 0; i < nd; i++) f->dims[i] = dims[i];
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *c) { *c = new ftc_emu_conv; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t c) { delete c; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t c, int n, const int *pad, const int *str, const int *dil,
                                                     cudnnConvolutionMode_t mode, cudnnDataType_t) {
  if (n < 1 || n > 3 || mode != CUDNN_CROSS_CORRELATION) return CUDNN_STATUS_BAD_PARAM;
  c->ns = n;
  for (int i = 0; i < n; i++) {
    if (pad[i] < 0 || str[i] < 1 || dil[i] < 1) return CUDNN_STATUS_BAD_PARAM;
    c->pad[i] = pad[i]; c->str[i] = str[i]; c->dil[i] = dil[i];
  }
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t c, int g) { c->groups = g; return g > 0 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM; }
inline cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t c, cudnnMathType_t m) { c->math = m; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *a) { *a = new ftc_emu_act; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t a) { delete a; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t a, cudnnActivationMode_t m, cudnnNanPropagation_t, double) {
  a->mode = m;
  return CUDNN_STATUS_SUCCESS;
}

inline cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                                           int nd, int *out) {
  if (nd != x->nd || nd != w->nd || nd != c->ns + 2) return CUDNN_STATUS_BAD_PARAM;
  if (x->dims[1] != w->dims[1] * c->groups || w->dims[0] % c->groups) return CUDNN_STATUS_BAD_PARAM;
  out[0] = x->dims[0];
  out[1] = w->dims[0];
  for (int i = 0; i < c->ns; i++) {
    int span = (w->dims[2 + i] - 1) * c->dil[i] + 1;
    out[2 + i] = (x->dims[2 + i] + 2 * c->pad[i] - span) / c->str[i] + 1;
    if (out[2 + i] <= 0) return CUDNN_STATUS_BAD_PARAM;
  }
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t ftc_emu_conv_check(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y) {
  int od[8];
  cudnnStatus_t s = cudnnGetConvolutionNdForwardOutputDim(c, x, w, x->nd, od);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  if (y->nd != x->nd || x->t != y->t || w->t != x->t) return CUDNN_STATUS_BAD_PARAM;
  for (int i = 0; i < y->nd; i++) if (y->dims[i] != od[i]) return CUDNN_STATUS_BAD_PARAM;
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                                            cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y, int want, int *found,
                                                            cudnnConvolutionFwdAlgoPerf_t *perf) {
  cudnnStatus_t s = ftc_emu_conv_check(x, w, c, y);
  *found = 0;
  if (s != CUDNN_STATUS_SUCCESS) return s;
  if (want < 1) return CUDNN_STATUS_BAD_PARAM;
  memset(&perf[0], 0, sizeof perf[0]);
  perf[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  perf[0].status = CUDNN_STATUS_SUCCESS;
  perf[0].mathType = c->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  *found = 1;
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t h, cudnnTensorDescriptor_t x, const void *, cudnnFilterDescriptor_t w,
                                                            const void *, cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y, void *,
                                                            int want, int *found, cudnnConvolutionFwdAlgoPerf_t *perf, void *, size_t) {
  if (ftc_emu_capturing) return CUDNN_STATUS_NOT_SUPPORTED;
  return cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, want, found, perf);
}
inline cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                                             cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t,
                                                             size_t *n) {
  *n = 4096;
  return ftc_emu_conv_check(x, w, c, y);
}

inline float ftc_emu_dnn_ld(const void *p, cudnnDataType_t t, size_t i) {
  return t == CUDNN_DATA_FLOAT ? ((const float *)p)[i] : __half2float(((const __half *)p)[i]);
}

/* y = act(alpha * conv(x) + beta * z + bias), reading z (may be y) and bias only where given */
inline void ftc_emu_conv_run(ftc_emu_tensor X, const void *x, ftc_emu_tensor W, const void *w, ftc_emu_conv C, float alpha, float beta,
                             const void *z, const void *bias, bool relu, ftc_emu_tensor Y, void *y) {
  int ns = C.ns, G = C.groups, N = X.dims[0], Ci = X.dims[1], Co = Y.dims[1], Cg = Ci / G, Mg = Co / G;
  int id[3] = {1, 1, 1}, od[3] = {1, 1, 1}, kd[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
  for (int i = 0; i < ns; i++) {
    id[3 - ns + i] = X.dims[2 + i]; od[3 - ns + i] = Y.dims[2 + i]; kd[3 - ns + i] = W.dims[2 + i];
    pad[3 - ns + i] = C.pad[i]; st[3 - ns + i] = C.str[i]; dl[3 - ns + i] = C.dil[i];
  }
  size_t So = (size_t)od[0] * od[1] * od[2], Si = (size_t)id[0] * id[1] * id[2], Kv = (size_t)kd[0] * kd[1] * kd[2];
  std::vector<float> out((size_t)N * Co * So);
  for (int n = 0; n < N; n++)
    for (int co = 0; co < Co; co++) {
      int g = co / Mg;
      for (int a = 0; a < od[0]; a++)
        for (int b = 0; b < od[1]; b++)
          for (int c = 0; c < od[2]; c++) {
            float acc = 0;
            for (int ci = 0; ci < Cg; ci++)
              for (int p = 0; p < kd[0]; p++)
                for (int q = 0; q < kd[1]; q++)
                  for (int r = 0; r < kd[2]; r++) {
                    int ia = a * st[0] + p * dl[0] - pad[0], ib = b * st[1] + q * dl[1] - pad[1], ic = c * st[2] + r * dl[2] - pad[2];
                    if (ia < 0 || ia >= id[0] || ib < 0 || ib >= id[1] || ic < 0 || ic >= id[2]) continue;
                    size_t xi = ((size_t)n * Ci + (size_t)g * Cg + ci) * Si + ((size_t)ia * id[1] + ib) * id[2] + ic;
                    size_t wi = ((size_t)co * Cg + ci) * Kv + ((size_t)p * kd[1] + q) * kd[2] + r;
                    acc += ftc_emu_dnn_ld(x, X.t, xi) * ftc_emu_dnn_ld(w, W.t, wi);
                  }
            size_t yi = ((size_t)n * Co + co) * So + ((size_t)a * od[1] + b) * od[2] + c;
            float v = alpha * acc;
            if (beta != 0) v += beta * ftc_emu_dnn_ld(z, Y.t, yi);
            if (bias) v += ftc_emu_dnn_ld(bias, Y.t, co);
            if (relu) v = v < 0 ? 0 : v;
            out[yi] = v;
          }
    }
  for (size_t i = 0; i < out.size(); i++) {
    if (Y.t == CUDNN_DATA_FLOAT) ((float *)y)[i] = out[i];
    else ((__half *)y)[i] = __float2half_rn(out[i]);
  }
}

inline cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
                                             const void *w, cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t, void *, size_t ws,
                                             const void *beta, cudnnTensorDescriptor_t yd, void *y) {
  cudnnStatus_t s = ftc_emu_conv_check(xd, wd, cd, yd);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  if (ws < 4096) return CUDNN_STATUS_BAD_PARAM; /* the workspace the size query asked for */
  float a = *(const float *)alpha, b = *(const float *)beta;
  ftc_emu_tensor X = *xd, W = *wd, Y = *yd;
  ftc_emu_conv C = *cd;
  ftc_emu_submit(h->stream, [=] { ftc_emu_conv_run(X, x, W, w, C, a, b, y, nullptr, false, Y, y); });
  return CUDNN_STATUS_SUCCESS;
}

inline cudnnStatus_t cudnnConvolutionBiasActivationForward(cudnnHandle_t h, const void *alpha1, cudnnTensorDescriptor_t xd, const void *x,
                                                           cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t cd,
                                                           cudnnConvolutionFwdAlgo_t, void *, size_t ws, const void *alpha2,
                                                           cudnnTensorDescriptor_t zd, const void *z, cudnnTensorDescriptor_t bd, const void *bias,
                                                           cudnnActivationDescriptor_t ad, cudnnTensorDescriptor_t yd, void *y) {
  if (ftc_emu_env("FTAX_EMU_CBA_UNSUPPORTED")) return CUDNN_STATUS_NOT_SUPPORTED;
  cudnnStatus_t s = ftc_emu_conv_check(xd, wd, cd, yd);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  if (ws < 4096 || zd->nd != yd->nd || bd->nd != yd->nd || bd->dims[1] != yd->dims[1]) return CUDNN_STATUS_BAD_PARAM;
  for (int i = 0; i < bd->nd; i++) if (i != 1 && bd->dims[i] != 1) return CUDNN_STATUS_BAD_PARAM;
  float a = *(const float *)alpha1, b = *(const float *)alpha2;
  ftc_emu_tensor X = *xd, W = *wd, Y = *yd;
  ftc_emu_conv C = *cd;
  bool relu = ad->mode == CUDNN_ACTIVATION_RELU;
  ftc_emu_submit(h->stream, [=] { ftc_emu_conv_run(X, x, W, w, C, a, b, z, bias, relu, Y, y); });
  return CUDNN_STATUS_SUCCESS;
}

#endif
