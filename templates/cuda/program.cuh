/* The fixed part of a generated CUDA program: its context, init (device checks, the weights
 * uploaded, the device arena and buffers, every plan, a warm-up run, the CUDA graph's capture),
 * the run around the model's calls (fp16 programs convert float32 inputs and outputs at the
 * edges), the asynchronous API and free. ftaxc pastes it after the model's data, which defines
 *   FTP_API(x)           the API's name for x: OUT_##x (OUT_init, OUT_ctx, ... as OUT.h declares them)
 *   FTP_NAME             OUT, a string
 *   FTP_MODEL_HASH       the model's SHA-256 in hex, a string: the weights must carry the same
 *   FTP_WEIGHT_BYTES     the weights' payload in bytes
 *   FTP_ARENA_BYTES      the device arena in bytes (0 when the model needs none)
 *   FTP_NUM_INPUTS, FTP_NUM_OUTPUTS, FTP_NCALLS (lowered calls, the size of the plans array)
 *   FTP_MATH             ftc_env.math (FTC_MATH_*: the precision GEMMs and convolutions may use)
 *   FTP_ARCH             the architecture the program is built for, a string ("sm_90")
 *   FTP_WORKSPACE_BYTES  the cuBLASLt / cuDNN workspace (0 without GEMMs and convolutions)
 *   FTP_CUDA_GRAPH       1: capture the run at init, replay it
 *   ftp_in_bytes[], ftp_out_bytes[]  the API's buffer sizes
 *   ftp_in_half[], ftp_out_half[]    1 where float32 at the API is half on the device
 * and after it ftp_plan, ftp_calls and ftp_free_plans. program_main.cuh adds the command line. */
#ifndef FTC_PROGRAM_CUH
#define FTC_PROGRAM_CUH

#include <stdlib.h>

#include "elementwise.cuh"
#include "runtime.cuh"
#include "weights.h"

#define FTP_IN_SLOTS (FTP_NUM_INPUTS ? FTP_NUM_INPUTS : 1)
#define FTP_OUT_SLOTS (FTP_NUM_OUTPUTS ? FTP_NUM_OUTPUTS : 1)
/* what cudaMalloc gets: never 0 */
#define FTP_ARENA_ALLOC (FTP_ARENA_BYTES ? FTP_ARENA_BYTES : 64u)
#define FTP_WEIGHT_ALLOC (FTP_WEIGHT_BYTES ? FTP_WEIGHT_BYTES : 64u)

struct FTP_API(ctx) {
  ftc_env env;
  unsigned char *arena, *weights;
  int own_arena, debug_sync, capturing;
  /* device buffers (dev: what the kernels see, half where api is float32) */
  void *in_api[FTP_IN_SLOTS], *in_dev[FTP_IN_SLOTS], *out_api[FTP_OUT_SLOTS], *out_dev[FTP_OUT_SLOTS];
  void *in_host[FTP_IN_SLOTS], *out_host[FTP_OUT_SLOTS]; /* pinned staging for OUT_run */
  void *plans[FTP_NCALLS ? FTP_NCALLS : 1];
  cudaGraph_t graph;
  cudaGraphExec_t exec;
};
typedef FTP_API(ctx) ftp_ctx;

/* Written by ftaxc after this file: every GEMM and convolution planned (descriptors, algorithms),
 * once; every call of the model in order on c->env.stream; the plans freed. */
static int ftp_plan(ftp_ctx *c);
static int ftp_calls(ftp_ctx *c);
static void ftp_free_plans(ftp_ctx *c);

/* Prefix the failing node to the message. */
static int ftp_at(ftp_ctx *c, const char *where) {
  char tmp[sizeof c->env.err];
  snprintf(tmp, sizeof tmp, "%s: %s", where, c->env.err);
  memcpy(c->env.err, tmp, sizeof tmp);
  return 1;
}

/* FTAX_CUDA_SYNC=1: wait after every call, so that a failing kernel names its node. */
static int ftp_check(ftp_ctx *c) {
  if (!c->debug_sync || c->capturing) return 0;
  FTC_CU(&c->env, cudaStreamSynchronize(c->env.stream));
  return 0;
}

/* One inference on the device buffers: every call, in order, on c->env.stream. */
static int ftp_launch(ftp_ctx *c) {
  ftc_env *e = &c->env;
  for (int i = 0; i < FTP_NUM_INPUTS; i++) /* float32 inputs into their half buffers */
    if (ftp_in_half[i]) {
      const int64_t n_[] = {(int64_t)(ftp_in_bytes[i] / 4)};
      const void *in_[] = {c->in_api[i]};
      void *out_[] = {c->in_dev[i]};
      if (ftc_cast<float, __half, 0>(n_, NULL, in_, out_, NULL, e, NULL))
        return ftp_at(c, "converting the inputs to float16");
    }
  if (ftp_calls(c)) return 1;
  for (int i = 0; i < FTP_NUM_OUTPUTS; i++) /* half outputs back to float32 */
    if (ftp_out_half[i]) {
      const int64_t n_[] = {(int64_t)(ftp_out_bytes[i] / 4)};
      const void *in_[] = {c->out_dev[i]};
      void *out_[] = {c->out_api[i]};
      if (ftc_cast<__half, float, 0>(n_, NULL, in_, out_, NULL, e, NULL))
        return ftp_at(c, "converting the outputs to float32");
    }
  return 0;
}

/* ---- the API (OUT.h) ---- */

const char *FTP_API(error)(const ftp_ctx *c) { return c ? c->env.err : "no context"; }
void *FTP_API(stream)(ftp_ctx *c) { return (void *)c->env.stream; }
void *FTP_API(device_input)(ftp_ctx *c, int i) { return i >= 0 && i < FTP_NUM_INPUTS ? c->in_api[i] : NULL; }
void *FTP_API(device_output)(ftp_ctx *c, int i) {
  return i >= 0 && i < FTP_NUM_OUTPUTS ? c->out_api[i] : NULL;
}

int FTP_API(upload)(ftp_ctx *c, const void *const *inputs) {
  for (int i = 0; i < FTP_NUM_INPUTS; i++)
    FTC_CU(&c->env, cudaMemcpyAsync(c->in_api[i], inputs[i], ftp_in_bytes[i], cudaMemcpyHostToDevice, c->env.stream));
  return 0;
}

int FTP_API(download)(ftp_ctx *c, void *const *outputs) {
  for (int i = 0; i < FTP_NUM_OUTPUTS; i++)
    FTC_CU(&c->env, cudaMemcpyAsync(outputs[i], c->out_api[i], ftp_out_bytes[i], cudaMemcpyDeviceToHost, c->env.stream));
  return 0;
}

int FTP_API(enqueue)(ftp_ctx *c) {
  if (c->exec) {
    FTC_CU(&c->env, cudaGraphLaunch(c->exec, c->env.stream));
    return 0;
  }
  return ftp_launch(c);
}

int FTP_API(sync)(ftp_ctx *c) {
  cudaError_t r = cudaStreamSynchronize(c->env.stream);
  if (r == cudaSuccess) r = cudaGetLastError();
  if (r != cudaSuccess)
    return ftc_fail(&c->env, "the model failed on the GPU: %s (%s)%s; FTAX_CUDA_SYNC=1 names the failing node",
                    cudaGetErrorString(r), cudaGetErrorName(r), ftc_cuda_hint(r));
  return 0;
}

int FTP_API(run)(ftp_ctx *c, const void *const *inputs, void *const *outputs) {
  for (int i = 0; i < FTP_NUM_INPUTS; i++) memcpy(c->in_host[i], inputs[i], ftp_in_bytes[i]);
  if (FTP_API(upload)(c, (const void *const *)c->in_host) || FTP_API(enqueue)(c) || FTP_API(download)(c, c->out_host) ||
      FTP_API(sync)(c))
    return 1;
  for (int i = 0; i < FTP_NUM_OUTPUTS; i++) memcpy(outputs[i], c->out_host[i], ftp_out_bytes[i]);
  return 0;
}

void FTP_API(free)(ftp_ctx *c) {
  if (!c) return;
  if (c->env.stream) cudaStreamSynchronize(c->env.stream);
  if (c->exec) cudaGraphExecDestroy(c->exec);
  if (c->graph) cudaGraphDestroy(c->graph);
  ftp_free_plans(c);
  if (c->env.blas && c->env.blas_free) c->env.blas_free(c->env.blas);
  if (c->env.dnn && c->env.dnn_free) c->env.dnn_free(c->env.dnn);
  for (int i = 0; i < FTP_NUM_INPUTS; i++) {
    if (c->in_dev[i] && c->in_dev[i] != c->in_api[i]) cudaFree(c->in_dev[i]);
    cudaFree(c->in_api[i]);
    cudaFreeHost(c->in_host[i]);
  }
  for (int i = 0; i < FTP_NUM_OUTPUTS; i++) {
    if (c->out_dev[i] && c->out_dev[i] != c->out_api[i]) cudaFree(c->out_dev[i]);
    cudaFree(c->out_api[i]);
    cudaFreeHost(c->out_host[i]);
  }
  if (c->own_arena) cudaFree(c->arena);
  cudaFree(c->weights);
  cudaFree(c->env.workspace);
  if (c->env.stream) cudaStreamDestroy(c->env.stream);
  free(c);
}

/* ---- init ---- */

/* Is there a device, and code for it in this binary? 0, or 2 with the reason in err. */
static int ftp_find_device(ftc_env *e, char *err, size_t n) {
  int count = 0, dev = 0;
  struct cudaDeviceProp prop;
  struct cudaFuncAttributes fa;
  cudaError_t r = cudaGetDeviceCount(&count);
  if (r != cudaSuccess || count == 0) {
    snprintf(err, n, "no CUDA device (cudaGetDeviceCount: %s)", r != cudaSuccess ? cudaGetErrorString(r) : "0 devices");
    return 2;
  }
  cudaGetDevice(&dev);
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    snprintf(err, n, "cannot query CUDA device %d", dev);
    return 2;
  }
  e->sm_count = prop.multiProcessorCount;
  r = cudaFuncGetAttributes(&fa, ftc_probe_kernel);
  if (r != cudaSuccess) {
    snprintf(err, n, "this program has no code for %s (sm_%d%d): it was built for %s (ftaxc --arch); %s", prop.name,
             prop.major, prop.minor, FTP_ARCH, cudaGetErrorString(r));
    return 2;
  }
  return 0;
}

/* The stream, and the weights' payload uploaded once (the file can be unmapped after). */
static int ftp_upload_weights(ftp_ctx *c, const unsigned char *payload) {
  ftc_env *e = &c->env;
  if (ftc_init_stream(e) || ftc_alloc(e, (void **)&c->weights, FTP_WEIGHT_ALLOC)) return 1;
  return FTP_WEIGHT_BYTES ? ftc_upload_now(e, c->weights, payload, FTP_WEIGHT_BYTES) : 0;
}

/* The run captured once as a CUDA graph; OUT_enqueue replays it. */
static int ftp_capture(ftp_ctx *c) {
  c->capturing = 1;
  if (ftc_capture_begin(&c->env)) return 1;
  int lrc = ftp_launch(c);
  int crc = ftc_capture_end(&c->env, lrc, &c->graph, &c->exec);
  c->capturing = 0;
  return lrc || crc || FTP_API(sync)(c);
}

/* The device arena (the caller's when arena is not NULL), the input and output buffers, the
 * workspace, every plan; a warm-up run, which loads every kernel, settles algorithm fallbacks and
 * reports any failure now; the capture. 0, or nonzero with the reason in c->env.err. */
static int ftp_prepare(ftp_ctx *c, void *arena) {
  ftc_env *e = &c->env;
  c->arena = (unsigned char *)arena;
  if (!arena) {
    c->own_arena = 1;
    if (ftc_alloc(e, (void **)&c->arena, FTP_ARENA_ALLOC)) return 1;
  }
  if (ftc_zero(e, c->arena, FTP_ARENA_ALLOC)) return 1;
  for (int i = 0; i < FTP_NUM_INPUTS; i++) {
    if (ftc_alloc(e, &c->in_api[i], ftp_in_bytes[i])) return 1;
    c->in_dev[i] = c->in_api[i];
    if (ftp_in_half[i] && ftc_alloc(e, &c->in_dev[i], ftp_in_bytes[i] / 2)) return 1;
    if (ftc_alloc_host(e, &c->in_host[i], ftp_in_bytes[i])) return 1;
  }
  for (int i = 0; i < FTP_NUM_OUTPUTS; i++) {
    if (ftc_alloc(e, &c->out_api[i], ftp_out_bytes[i])) return 1;
    c->out_dev[i] = c->out_api[i];
    if (ftp_out_half[i] && ftc_alloc(e, &c->out_dev[i], ftp_out_bytes[i] / 2)) return 1;
    if (ftc_alloc_host(e, &c->out_host[i], ftp_out_bytes[i])) return 1;
  }
  e->workspace_bytes = FTP_WORKSPACE_BYTES;
  if (e->workspace_bytes && ftc_alloc(e, &e->workspace, e->workspace_bytes)) return 1;
  if (ftp_plan(c) || ftp_launch(c) || FTP_API(sync)(c)) return 1;
  return FTP_CUDA_GRAPH ? ftp_capture(c) : 0;
}

int FTP_API(init_with_arena)(ftp_ctx **out, const char *path, void *arena, char *err, size_t n) {
  ftp_ctx *c = (ftp_ctx *)calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, n, "out of memory");
    return 4;
  }
  const char *s = getenv("FTAX_CUDA_SYNC");
  c->debug_sync = s && s[0] == '1';
  s = getenv("FTAX_CUDA_VERBOSE");
  c->env.verbose = s && s[0] == '1';
  c->env.math = FTP_MATH;
  ft_weights w;
  int rc = ftp_find_device(&c->env, err, n);
  if (!rc) rc = ft_weights_open(&w, path, NULL, FTP_MODEL_HASH, FTP_WEIGHT_BYTES, err, n);
  if (rc) {
    free(c);
    return rc;
  }
  rc = ftp_upload_weights(c, w.data);
  ft_weights_close(&w);
  if (rc || ftp_prepare(c, arena)) {
    snprintf(err, n, "%s", c->env.err);
    FTP_API(free)(c);
    return strstr(err, "out of memory") ? 4 : 2;
  }
  *out = c;
  return 0;
}

int FTP_API(init)(ftp_ctx **out, const char *path, char *err, size_t n) {
  return FTP_API(init_with_arena)(out, path, NULL, err, n);
}

#endif
