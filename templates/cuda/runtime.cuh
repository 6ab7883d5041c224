/* What every CUDA kernel twin shares: the environment a launcher runs in, error reporting, launch
 * geometry, element types.
 *
 * A twin mirrors one C kernel of templates/c: a host launcher with the C kernel's parameters
 * (p, f, in, out, scratch: the same plan, computed once by ftaxc) plus the environment, which
 * launches a __global__ kernel (or calls cuBLASLt / cuDNN) on env->stream:
 *
 *   int twin(const int64_t *p, const double *f, const void *const *in, void *const *out,
 *            void *scratch, ftc_env *env, void *plan);
 *
 * in/out are device pointers; p and f live on the host. A twin returns 0, or nonzero with a
 * message in env->err. Twins that need descriptors (GEMMs, convolutions) also have an init hook
 * called once when the program starts, which makes `plan`; run time does no allocation, no host
 * synchronisation and no shape logic. Every launch is checked with cudaGetLastError.
 *
 * Element types: storage type T (float, __half, int64_t...), computed in ftc_acc<T>::type
 * (float for the half types). A program compiled with --precision fp16 stores every float32
 * tensor as __half, so the same twins run with T = __half. */
#ifndef FTC_RUNTIME_CUH
#define FTC_RUNTIME_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>

#include "scalar_ops.h"

/* a program pastes whole templates and uses part of them */
#pragma nv_diag_suppress 177

enum { FTC_MATH_FP32 = 0, FTC_MATH_TF32 = 1, FTC_MATH_FP16 = 2 };

typedef struct ftc_env {
  cudaStream_t stream;
  void *workspace; /* shared by cuBLASLt and cuDNN calls (they run one after another) */
  size_t workspace_bytes;
  int math;        /* FTC_MATH_*: what GEMMs and convolutions may use */
  int sm_count;
  void *blas;      /* cublasLtHandle_t, made by the first GEMM's init */
  void *dnn;       /* cudnnHandle_t, made by the first convolution's init */
  void (*blas_free)(void *);
  void (*dnn_free)(void *);
  int verbose;     /* FTAX_CUDA_VERBOSE: say which algorithms were picked */
  char err[1536];
} ftc_env;

static int ftc_fail(ftc_env *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ftc_fail(ftc_env *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->err, sizeof e->err, fmt, ap);
  va_end(ap);
  return 1;
}

static const char *ftc_cuda_hint(cudaError_t r) {
  switch (r) {
  case cudaErrorNoKernelImageForDevice:
  case cudaErrorInvalidDeviceFunction:
  case cudaErrorUnsupportedPtxVersion:
    return " (this program has no code for this GPU: rebuild with ftaxc --arch for its architecture)";
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
    return " (no usable CUDA device)";
  default: return "";
  }
}

/* A CUDA runtime call that must succeed. */
#define FTC_CU(e, call)                                                                          \
  do {                                                                                           \
    cudaError_t r_ = (call);                                                                     \
    if (r_ != cudaSuccess)                                                                       \
      return ftc_fail((e), "%s: %s (%s)%s", #call, cudaGetErrorString(r_), cudaGetErrorName(r_), \
                      ftc_cuda_hint(r_));                                                        \
  } while (0)

/* After every kernel launch: a bad configuration or a missing kernel image shows up here. */
static int ftc_launched(ftc_env *e, const char *what) {
  cudaError_t r = cudaGetLastError();
  if (r == cudaSuccess) return 0;
  return ftc_fail(e, "launching %s: %s (%s)%s", what, cudaGetErrorString(r), cudaGetErrorName(r),
                  ftc_cuda_hint(r));
}

/* ---- launch geometry ---------------------------------------------------------------------- */

/* Every launch: FTC_LAUNCH(grid, block, stream, kernel)(args). (tests/cuda/emu defines its own,
 * which runs the kernels on the CPU.) */
#ifndef FTC_LAUNCH
#define FTC_LAUNCH(G, B, S, ...) __VA_ARGS__<<<G, B, 0, S>>>
#endif

#define FTC_THREADS 256
#define FTC_MAX_BLOCKS (1u << 20) /* grid-stride loops cover the rest */

static inline unsigned ftc_blocks(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  return (unsigned)(b < 1 ? 1 : b > FTC_MAX_BLOCKS ? FTC_MAX_BLOCKS : b);
}

/* Threads for a block that folds rows of n elements: a multiple of 32, at most 256. */
static inline int ftc_row_threads(int64_t n) {
  int t = 32;
  while (t < 256 && t < n) t *= 2;
  return t;
}

#define FTC_GRID_LOOP(i, n)                                                                      \
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (uint32_t)(n); i += gridDim.x * blockDim.x)

/* ---- element types ------------------------------------------------------------------------ */

template <class T> struct ftc_acc { typedef T type; };
template <> struct ftc_acc<__half> { typedef float type; };
template <> struct ftc_acc<__nv_bfloat16> { typedef float type; };
template <> struct ftc_acc<int8_t> { typedef int32_t type; };
template <> struct ftc_acc<int16_t> { typedef int32_t type; };
template <> struct ftc_acc<uint8_t> { typedef uint32_t type; };
template <> struct ftc_acc<uint16_t> { typedef uint32_t type; };

/* Read a stored element as its compute type. */
__device__ __forceinline__ float ftc_widen(__half x) { return __half2float(x); }
__device__ __forceinline__ float ftc_widen(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ __forceinline__ T ftc_widen(T x) { return x; }

/* Convert a computed value to a storage type (half types round to nearest even). */
template <class To> struct ftc_to {
  template <class F> __device__ __forceinline__ static To cv(F x) { return (To)x; }
};
template <> struct ftc_to<__half> {
  template <class F> __device__ __forceinline__ static __half cv(F x) { return __float2half_rn((float)x); }
};
template <> struct ftc_to<__nv_bfloat16> {
  template <class F> __device__ __forceinline__ static __nv_bfloat16 cv(F x) { return __float2bfloat16_rn((float)x); }
};
template <class To, class F> __device__ __forceinline__ To ftc_cv(F x) { return ftc_to<To>::cv(ftc_widen(x)); }

template <class T> struct ftc_is_float {
  static const bool value = std::is_floating_point<T>::value || std::is_same<T, __half>::value ||
                            std::is_same<T, __nv_bfloat16>::value;
};

/* Smallest and largest values of a compute type (the neutral elements of max and min). */
template <class C> __device__ __forceinline__ C ftc_lowest() {
  if constexpr (std::is_floating_point<C>::value) return (C)-INFINITY;
  else if constexpr (std::is_signed<C>::value) return (C)((typename std::make_unsigned<C>::type)1 << (sizeof(C) * 8 - 1));
  else return (C)0;
}
template <class C> __device__ __forceinline__ C ftc_highest() {
  if constexpr (std::is_floating_point<C>::value) return (C)INFINITY;
  else if constexpr (std::is_signed<C>::value) return (C)(~(typename std::make_unsigned<C>::type)0 >> 1);
  else return (C)~(C)0;
}

/* ---- block-wide folds --------------------------------------------------------------------- */

/* Fold v across the block with COMBINE (a functor with a static combine(a, b)); every thread
 * gets the result. blockDim.x is a multiple of 32, at most 1024; sh holds 32 values. */
template <class OP, class C> __device__ __forceinline__ C ftc_block_fold(C v, C *sh) {
  for (int o = 16; o > 0; o >>= 1) v = OP::combine(v, __shfl_down_sync(0xffffffffu, v, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  __syncthreads(); /* sh may still be read from a previous fold */
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  v = sh[0];
  for (int w = 1; w < nw; w++) v = OP::combine(v, sh[w]);
  return v;
}

struct ftc_fold_add { template <class C> __device__ __forceinline__ static C combine(C a, C b) { return a + b; } };
struct ftc_fold_max {
  template <class C> __device__ __forceinline__ static C combine(C a, C b) { return (a > b || a != a) ? a : b; }
};

/* ---- the scalar ops' math on the GPU (templates/common/scalar_ops.h: FT_MATH ftc) ----------- */
template <class C> __device__ __forceinline__ C ftc_unit_clamp(C v) { v = v > (C)1 ? (C)1 : v; return v < (C)0 ? (C)0 : v; }
template <class C> __device__ __forceinline__ C ftc_softplus(C x) {
  C y = (x > (C)0 ? x : (C)0) + log1p(exp(-fabs(x)));
  return x != x ? x : y;
}
/* GELU as 0.5 x erfc(-x / sqrt 2), which keeps its relative accuracy for negative x */
template <class C> __device__ __forceinline__ C ftc_gelu(C x) { return (C)0.5 * x * erfc(-x * (C)0.70710678118654752440); }
/* ftc_softplus and ftc_gelu are the functions above */
#define ftc_exp exp
#define ftc_log log
#define ftc_tanh tanh
#define ftc_erf erf
#define ftc_clamp01 ftc_unit_clamp
#define ftc_libm(fn) fn

/* ---- GEMM and convolution epilogue activations (templates/c/gemm.h's FT_ACT_*) --------------
 * A unary or parameter scalar op's id, its parameters in lo and hi; or SiLU. */
enum { FTC_ACT_NONE = FT_SOP_NONE, FTC_ACT_RELU = FT_SOP_RELU, FTC_ACT_CLIP = FT_SOP_CLIP, FTC_ACT_TANH = FT_SOP_TANH,
       FTC_ACT_GELU = FT_SOP_GELU, FTC_ACT_GELU_TANH = FT_SOP_GELU_TANH, FTC_ACT_SIGMOID = FT_SOP_SIGMOID,
       FTC_ACT_SILU = 127 };
static inline bool ftc_act_known(int a) {
  return a == FTC_ACT_NONE || a == FTC_ACT_SILU || FT_SOP_IS_UNARY(a) || FT_SOP_IS_PARAM(a);
}
__device__ __forceinline__ float ftc_act(float x, int act, float a, float b) {
  typedef float T;
#define FT_MATH ftc
#define FTC_ACT_ROW_(ID, fn, name, kernels, EXPR) case FT_SOP_##ID: return (EXPR);
#define FTC_ACT_PARAM_ROW_(ID, fn, name, kernels, A_, DA, B_, DB, EXPR) case FT_SOP_##ID: return (EXPR);
  switch (act) {
  FT_SCALAR_UNARY_OPS(FTC_ACT_ROW_)
  FT_SCALAR_PARAM_OPS(FTC_ACT_PARAM_ROW_)
  case FTC_ACT_SILU: return x / (1.0f + expf(-x));
  default: return x;
  }
#undef FTC_ACT_ROW_
#undef FTC_ACT_PARAM_ROW_
#undef FT_MATH
}

/* ---- warp folds (every lane of the warp takes part; all get the result) -------------------- */
__device__ __forceinline__ float ftc_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return __shfl_sync(0xffffffffu, v, 0);
}
__device__ __forceinline__ float ftc_warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) { float w = __shfl_down_sync(0xffffffffu, v, o); v = w > v ? w : v; }
  return __shfl_sync(0xffffffffu, v, 0);
}

/* ---- parameters passed by value ----------------------------------------------------------- */

#define FTC_MAXR 8

/* Broadcast iteration over N inputs (templates/c/binary.h's p: rank, dims, strides per input).
 * Offsets stay 32-bit: ftaxc refuses tensors of 2^31 elements or more for this target. */
template <int N> struct ftc_bcast {
  int r;
  int32_t d[FTC_MAXR];
  int32_t s[N][FTC_MAXR];
};

template <int N> static inline int64_t ftc_bcast_load(const int64_t *p, ftc_bcast<N> *b) {
  int r = (int)p[0];
  int64_t n = 1;
  memset(b, 0, sizeof *b);
  b->r = r;
  for (int d = 0; d < r; d++) {
    b->d[d] = (int32_t)p[1 + d];
    n *= p[1 + d];
    for (int i = 0; i < N; i++) b->s[i][d] = (int32_t)p[1 + r + i * r + d];
  }
  return n;
}

template <int N> __device__ __forceinline__ void ftc_bcast_offsets(const ftc_bcast<N> &b, uint32_t i, int32_t *off) {
  if (b.r == 1) {
    for (int k = 0; k < N; k++) off[k] = (int32_t)i * b.s[k][0];
    return;
  }
  for (int k = 0; k < N; k++) off[k] = 0;
  for (int d = b.r - 1; d >= 0; d--) {
    uint32_t c = i % (uint32_t)b.d[d];
    i /= (uint32_t)b.d[d];
    for (int k = 0; k < N; k++) off[k] += (int32_t)c * b.s[k][d];
  }
}

/* ---- what a program does at init ---------------------------------------------------------- */

static int ftc_init_stream(ftc_env *e) {
  FTC_CU(e, cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
  return 0;
}

static int ftc_alloc(ftc_env *e, void **p, size_t n) {
  cudaError_t r = cudaMalloc(p, n ? n : 1);
  if (r != cudaSuccess) {
    *p = NULL;
    return ftc_fail(e, "cudaMalloc of %zu bytes: %s%s", n, cudaGetErrorString(r), r == cudaErrorMemoryAllocation ? " (out of memory)" : "");
  }
  return 0;
}

static int ftc_alloc_host(ftc_env *e, void **p, size_t n) {
  cudaError_t r = cudaMallocHost(p, n ? n : 1);
  if (r != cudaSuccess) {
    *p = NULL;
    return ftc_fail(e, "cudaMallocHost of %zu bytes: %s", n, cudaGetErrorString(r));
  }
  return 0;
}

/* The arena starts zeroed: cuDNN's fused convolution may read its output scaled by 0, which
 * must not meet NaN garbage. (The CPU emulation of tests/cuda/emu leaves its NaN fill there, to
 * show reads of memory no kernel wrote.) */
static int ftc_zero(ftc_env *e, void *p, size_t n) {
#ifndef FTAX_CUDA_EMULATION
  FTC_CU(e, cudaMemset(p, 0, n));
#else
  (void)e; (void)p; (void)n;
#endif
  return 0;
}

static int ftc_upload_now(ftc_env *e, void *dst, const void *src, size_t n) {
  FTC_CU(e, cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
  return 0;
}

static int ftc_capture_begin(ftc_env *e) {
  FTC_CU(e, cudaStreamBeginCapture(e->stream, cudaStreamCaptureModeThreadLocal));
  return 0;
}

/* End the capture and instantiate it; with failed set, only end it (the first error stays). */
static int ftc_capture_end(ftc_env *e, int failed, cudaGraph_t *graph, cudaGraphExec_t *exec) {
  cudaError_t r = cudaStreamEndCapture(e->stream, graph);
  if (failed) {
    if (r == cudaSuccess && *graph) { cudaGraphDestroy(*graph); *graph = NULL; }
    cudaGetLastError();
    return 1;
  }
  if (r != cudaSuccess) return ftc_fail(e, "cudaStreamEndCapture: %s (a call of the model cannot be captured)", cudaGetErrorString(r));
  FTC_CU(e, cudaGraphInstantiate(exec, *graph, 0));
  FTC_CU(e, cudaGraphUpload(*exec, e->stream));
  return 0;
}

/* A tiny kernel whose attributes tell at start whether this binary has code for the device. */
static __global__ void ftc_probe_kernel(int *x) {
  if (x) *x = 1;
}

#endif
