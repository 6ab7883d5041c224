/* Twin of templates/c/conv.h's ft_conv_f32: cuDNN's convolution (the v7-style API, kept in
 * cuDNN 9), NCHW, 1-D and 2-D as 4-D tensors, 3-D as 5-D, groups (depthwise included).
 *
 * At init the descriptors are made and the algorithm is chosen by timing the candidates on the
 * program's own buffers (cudnnFindConvolutionForwardAlgorithmEx; FTAX_CUDNN_HEURISTIC=1 takes
 * the heuristic's first instead), within the shared workspace. fp32 asks for FMA math only
 * (no TF32), tf32 allows tensor cores, fp16 stores half and accumulates in fp32.
 *
 * Bias, a residual added before the activation (ResNet's Conv + Add + ReLU, ftax.FusedConv) and
 * ReLU go through cudnnConvolutionBiasActivationForward (z = the residual); where cuDNN refuses
 * it for the chosen algorithm (found out at the warm-up run every program does at init), and
 * for the other activations (clip, sigmoid, SiLU) or a residual after the activation, the
 * convolution is followed by one bias + residual + activation kernel. ftaxc only hands this
 * twin convolutions whose padding cuDNN can express (the same pads at both ends). */
#ifndef FTC_CONV_CUH
#define FTC_CONV_CUH

#include <cudnn.h>
#include <stdlib.h>

#include "conv_params.h"
#include "runtime.cuh"

#define FTC_DNN(e, call)                                                                         \
  do {                                                                                           \
    cudnnStatus_t s_ = (call);                                                                   \
    if (s_ != CUDNN_STATUS_SUCCESS) return ftc_fail((e), "%s: %s", #call, cudnnGetErrorString(s_)); \
  } while (0)

typedef struct ftc_conv_plan {
  cudnnTensorDescriptor_t x, y, b;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnActivationDescriptor_t relu;
  cudnnConvolutionFwdAlgo_t algo;
  size_t ws;
  int fused;     /* bias (+ residual) + relu through cudnnConvolutionBiasActivationForward */
  int epi;       /* bias, residual and activation by ftc_conv_epi_k */
  int act, res;
  float alpha, beta, lo, hi;
  int64_t C_out, S_out, n;
} ftc_conv_plan;

static void ftc_conv_free(void *pl) {
  ftc_conv_plan *q = (ftc_conv_plan *)pl;
  if (!q) return;
  if (q->x) cudnnDestroyTensorDescriptor(q->x);
  if (q->y) cudnnDestroyTensorDescriptor(q->y);
  if (q->b) cudnnDestroyTensorDescriptor(q->b);
  if (q->w) cudnnDestroyFilterDescriptor(q->w);
  if (q->conv) cudnnDestroyConvolutionDescriptor(q->conv);
  if (q->relu) cudnnDestroyActivationDescriptor(q->relu);
  free(q);
}

static void ftc_dnn_destroy(void *h) { cudnnDestroy((cudnnHandle_t)h); }

template <class T> struct ftc_dnn_type;
template <> struct ftc_dnn_type<float> { static const cudnnDataType_t v = CUDNN_DATA_FLOAT; };
template <> struct ftc_dnn_type<__half> { static const cudnnDataType_t v = CUDNN_DATA_HALF; };

static int ftc_dnn_tensor(ftc_env *e, cudnnTensorDescriptor_t *t, cudnnDataType_t dt, int nd, const int *dims) {
  int st[5];
  st[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) st[i] = st[i + 1] * dims[i + 1];
  FTC_DNN(e, cudnnCreateTensorDescriptor(t));
  FTC_DNN(e, cudnnSetTensorNdDescriptor(*t, dt, nd, dims, st));
  return 0;
}

template <class T>
static int ftc_conv_init(const int64_t *p, const double *f, const void *const *in, void *const *out, ftc_env *e, void **plan) {
  ftc_conv_plan *q = (ftc_conv_plan *)calloc(1, sizeof *q);
  if (!q) return ftc_fail(e, "out of memory");
  *plan = q;
  if (!e->dnn) {
    cudnnHandle_t h;
    FTC_DNN(e, cudnnCreate(&h));
    e->dnn = h;
    e->dnn_free = ftc_dnn_destroy;
  }
  cudnnHandle_t h = (cudnnHandle_t)e->dnn;
  FTC_DNN(e, cudnnSetStream(h, e->stream));
  const cudnnDataType_t dt = ftc_dnn_type<T>::v;
  const int64_t *pi = p + FT_CV_IN, *po = p + FT_CV_OUT, *pk = p + FT_CV_K, *ps = p + FT_CV_S, *pd = p + FT_CV_D, *pp = p + FT_CV_P;
  /* spatial dims: 2 (the leading one of size 1 dropped) unless the conv is 3-D */
  int three = !(pi[0] == 1 && po[0] == 1 && pk[0] == 1 && pp[0] == 0);
  int ns = three ? 3 : 2, s0 = three ? 0 : 1, nd = ns + 2;
  int xd[5], yd[5], wd[5], bd[5], pad[3], str[3], dil[3];
  int G = (int)p[FT_CV_G];
  xd[0] = yd[0] = (int)p[FT_CV_N];
  xd[1] = (int)p[FT_CV_C];
  yd[1] = (int)p[FT_CV_CO];
  wd[0] = (int)p[FT_CV_CO];
  wd[1] = (int)(p[FT_CV_C] / G);
  for (int i = 0; i < ns; i++) {
    xd[2 + i] = (int)pi[s0 + i];
    yd[2 + i] = (int)po[s0 + i];
    wd[2 + i] = (int)pk[s0 + i];
    pad[i] = (int)pp[s0 + i];
    str[i] = (int)ps[s0 + i];
    dil[i] = (int)pd[s0 + i];
  }
  for (int i = 0; i < nd; i++) bd[i] = i == 1 ? yd[1] : 1;
  if (ftc_dnn_tensor(e, &q->x, dt, nd, xd) || ftc_dnn_tensor(e, &q->y, dt, nd, yd) || ftc_dnn_tensor(e, &q->b, dt, nd, bd)) return 1;
  FTC_DNN(e, cudnnCreateFilterDescriptor(&q->w));
  FTC_DNN(e, cudnnSetFilterNdDescriptor(q->w, dt, CUDNN_TENSOR_NCHW, nd, wd));
  FTC_DNN(e, cudnnCreateConvolutionDescriptor(&q->conv));
  FTC_DNN(e, cudnnSetConvolutionNdDescriptor(q->conv, ns, pad, str, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  FTC_DNN(e, cudnnSetConvolutionGroupCount(q->conv, G));
  cudnnMathType_t math = e->math == FTC_MATH_FP32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
  FTC_DNN(e, cudnnSetConvolutionMathType(q->conv, math));
  int od[5];
  FTC_DNN(e, cudnnGetConvolutionNdForwardOutputDim(q->conv, q->x, q->w, nd, od));
  for (int i = 0; i < nd; i++)
    if (od[i] != yd[i]) return ftc_fail(e, "cuDNN computes output dim %d = %d, the model wants %d (asymmetric padding?)", i, od[i], yd[i]);

  /* algorithm: timed on the real buffers, or the heuristic's first choice */
  cudnnConvolutionFwdAlgoPerf_t perf[16];
  int found = 0;
  const char *heur = getenv("FTAX_CUDNN_HEURISTIC");
  if (heur && heur[0] == '1')
    FTC_DNN(e, cudnnGetConvolutionForwardAlgorithm_v7(h, q->x, q->w, q->conv, q->y, 16, &found, perf));
  else
    FTC_DNN(e, cudnnFindConvolutionForwardAlgorithmEx(h, q->x, in[0], q->w, in[1], q->conv, q->y, out[0], 16, &found, perf,
                                                      e->workspace, e->workspace_bytes));
  int pick = -1;
  for (int i = 0; i < found && pick < 0; i++)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= e->workspace_bytes &&
        (e->math != FTC_MATH_FP32 || perf[i].mathType == CUDNN_FMA_MATH || perf[i].mathType == CUDNN_DEFAULT_MATH))
      pick = i;
  if (pick < 0) return ftc_fail(e, "cuDNN has no algorithm for this convolution within %zu bytes of workspace", e->workspace_bytes);
  q->algo = perf[pick].algo;
  if (e->math != FTC_MATH_FP32) FTC_DNN(e, cudnnSetConvolutionMathType(q->conv, perf[pick].mathType));
  FTC_DNN(e, cudnnGetConvolutionForwardWorkspaceSize(h, q->x, q->w, q->conv, q->y, q->algo, &q->ws));
  if (q->ws > e->workspace_bytes) return ftc_fail(e, "cuDNN wants %zu bytes of workspace, %zu are there", q->ws, e->workspace_bytes);

  q->act = (int)p[FT_CV_ACT];
  q->res = (int)p[FT_CV_RES];
  if (!ftc_act_known(q->act)) return ftc_fail(e, "unknown convolution activation %d", q->act);
  q->alpha = (float)f[0];
  q->beta = (float)f[1];
  q->lo = (float)f[2];
  q->hi = (float)f[3];
  q->C_out = p[FT_CV_CO];
  q->S_out = po[0] * po[1] * po[2];
  q->n = p[FT_CV_N] * q->C_out * q->S_out;
  int has_bias = p[FT_CV_HAS_BIAS] != 0;
  q->fused = has_bias && q->act == FTC_ACT_RELU && q->beta == 1.0f && q->res != 2;
  q->epi = !q->fused && (has_bias || q->act != FTC_ACT_NONE || q->res);
  if (q->fused) {
    FTC_DNN(e, cudnnCreateActivationDescriptor(&q->relu));
    FTC_DNN(e, cudnnSetActivationDescriptor(q->relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  }
  if (e->verbose)
    fprintf(stderr, "ftax-cuda: conv %dx%d -> %d, kernel %d, group %d: algo %d (math %d), workspace %zu%s\n", xd[1], xd[nd - 1],
            yd[1], wd[nd - 1], G, (int)q->algo, (int)perf[pick].mathType, q->ws, q->fused ? ", fused bias+relu" : "");
  return 0;
}

/* y = the alpha-scaled conv already in y + beta * bias[c], the residual before (res 1) or after
 * (res 2) the activation */
template <class T>
__global__ void ftc_conv_epi_k(T *y, const T *bias, const T *r, int res, uint32_t n, uint32_t C, uint32_t S, float beta,
                               int act, float lo, float hi) {
  FTC_GRID_LOOP(i, n) {
    float v = ftc_widen(y[i]);
    if (bias) v += beta * (float)ftc_widen(bias[(i / S) % C]);
    if (res == 1) v += (float)ftc_widen(r[i]);
    v = ftc_act(v, act, lo, hi);
    if (res == 2) v += (float)ftc_widen(r[i]);
    y[i] = ftc_cv<T>(v);
  }
}

template <class T>
static int ftc_conv(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch, ftc_env *e, void *plan) {
  ftc_conv_plan *q = (ftc_conv_plan *)plan;
  if (!q) return ftc_fail(e, "internal error: convolution without a plan");
  if (q->n <= 0) return 0;
  cudnnHandle_t h = (cudnnHandle_t)e->dnn;
  float zero = 0.0f, one = 1.0f;
  if (q->fused) { /* z: the residual (alpha2 1), or y itself with alpha2 0 */
    const void *z = q->res == 1 ? in[3] : (const void *)out[0];
    cudnnStatus_t s = cudnnConvolutionBiasActivationForward(h, &q->alpha, q->x, in[0], q->w, in[1], q->conv, q->algo, e->workspace,
                                                            q->ws, q->res == 1 ? &one : &zero, q->y, z, q->b, in[2], q->relu, q->y, out[0]);
    if (s == CUDNN_STATUS_SUCCESS) return 0;
    /* not for this algorithm or type: from now on the convolution and a kernel (the warm-up
       run at init gets here first, before any graph capture) */
    if (e->verbose) fprintf(stderr, "ftax-cuda: fused conv+bias+relu refused (%s); using conv + kernel\n", cudnnGetErrorString(s));
    q->fused = 0;
    q->epi = 1;
  }
  FTC_DNN(e, cudnnConvolutionForward(h, &q->alpha, q->x, in[0], q->w, in[1], q->conv, q->algo, e->workspace, q->ws, &zero, q->y, out[0]));
  if (q->epi) {
    FTC_LAUNCH(ftc_blocks(q->n, FTC_THREADS), FTC_THREADS, e->stream, ftc_conv_epi_k<T>)(
        (T *)out[0], p[FT_CV_HAS_BIAS] ? (const T *)in[2] : (const T *)NULL, q->res ? (const T *)in[3] : (const T *)NULL, q->res,
        (uint32_t)q->n, (uint32_t)q->C_out, (uint32_t)q->S_out, q->beta, q->act, q->lo, q->hi);
    return ftc_launched(e, "conv epilogue");
  }
  return 0;
}

#endif
