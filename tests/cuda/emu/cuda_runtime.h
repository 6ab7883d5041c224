/* A CPU stand-in for the part of the CUDA runtime ftax's generated programs use, so that tests
 * can run those programs (compiled with g++ -I tests/cuda/emu) on machines without a GPU.
 *
 * Kernels run on the host: the blocks of a launch one after another, the threads of a block
 * first one after another in this thread; a kernel that reaches __syncthreads or a warp
 * shuffle is rerun for that block with one OS thread per CUDA thread and real barriers (ftax's
 * kernels write nothing to global memory before their first barrier, so the rerun is exact).
 * Streams are in order; capture records launches and copies into a graph that a graph launch
 * replays, with each launch's arguments copied at capture time as CUDA does. Device memory is
 * host memory filled with 0xff bytes (NaN for floats), so reads of memory no kernel wrote
 * show up in the outputs. Calls that CUDA refuses while a stream is capturing fail here too.
 *
 * Environment: FTAX_EMU_NO_DEVICE=1 (no device), FTAX_EMU_NO_IMAGE=1 (no code for the device).
 * This checks ftax's own logic (indexing, memory plan, launch configuration, descriptors as the
 * NVIDIA documentation describes them); it says nothing about speed or real-GPU races. */
#ifndef FTAX_EMU_CUDA_RUNTIME_H
#define FTAX_EMU_CUDA_RUNTIME_H
#define FTAX_CUDA_EMULATION 1

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <barrier>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 { unsigned x, y, z; };
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;

enum cudaError_t {
  cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorInvalidConfiguration = 9,
  cudaErrorInsufficientDriver = 35, cudaErrorInvalidDeviceFunction = 98, cudaErrorNoDevice = 100,
  cudaErrorNoKernelImageForDevice = 209, cudaErrorUnsupportedPtxVersion = 222, cudaErrorLaunchFailure = 719,
  cudaErrorStreamCaptureUnsupported = 900, cudaErrorStreamCaptureInvalidated = 901
};
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
#define cudaStreamNonBlocking 0x01

inline cudaError_t ftc_emu_last_error = cudaSuccess;
inline int ftc_emu_capturing = 0;
inline cudaError_t ftc_emu_err(cudaError_t e) {
  if (e != cudaSuccess) ftc_emu_last_error = e;
  return e;
}
inline bool ftc_emu_env(const char *name) {
  const char *s = getenv(name);
  return s && s[0] == '1';
}

inline const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorNoDevice: return "no CUDA-capable device is detected";
  case cudaErrorNoKernelImageForDevice: return "no kernel image is available for execution on the device";
  case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
  default: return "emulated CUDA error";
  }
}
inline const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
  case cudaErrorNoDevice: return "cudaErrorNoDevice";
  case cudaErrorNoKernelImageForDevice: return "cudaErrorNoKernelImageForDevice";
  case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
  default: return "cudaErrorEmulated";
  }
}
inline cudaError_t cudaGetLastError() {
  cudaError_t e = ftc_emu_last_error;
  ftc_emu_last_error = cudaSuccess;
  return e;
}

/* ---- devices ------------------------------------------------------------------------------- */
struct cudaDeviceProp { char name[256]; int major, minor, multiProcessorCount; };
struct cudaFuncAttributes { int maxThreadsPerBlock; };
inline cudaError_t cudaGetDeviceCount(int *n) {
  *n = ftc_emu_env("FTAX_EMU_NO_DEVICE") ? 0 : 1;
  return *n ? cudaSuccess : cudaErrorNoDevice;
}
inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : ftc_emu_err(cudaErrorInvalidValue); }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d) {
  snprintf(p->name, sizeof p->name, "ftax CPU emulation");
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 4;
  return d == 0 ? cudaSuccess : cudaErrorInvalidValue;
}
template <class F> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, F) {
  a->maxThreadsPerBlock = 1024;
  return ftc_emu_env("FTAX_EMU_NO_IMAGE") ? cudaErrorNoKernelImageForDevice : cudaSuccess;
}

/* ---- memory -------------------------------------------------------------------------------- */
inline cudaError_t cudaMalloc(void **p, size_t n) {
  if (ftc_emu_capturing) return ftc_emu_err(cudaErrorStreamCaptureUnsupported);
  *p = aligned_alloc(256, (n + 255) & ~(size_t)255);
  if (!*p) return ftc_emu_err(cudaErrorMemoryAllocation);
  memset(*p, 0xff, n); /* NaN for every float: reads of unwritten memory show */
  return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void **p, size_t n) {
  *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
  return *p ? cudaSuccess : ftc_emu_err(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
inline cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }

/* ---- streams, graphs, events --------------------------------------------------------------- */
struct ftc_emu_graph { std::vector<std::function<void()>> ops; };
struct ftc_emu_stream { bool capturing = false; ftc_emu_graph *graph = nullptr; };
typedef ftc_emu_stream *cudaStream_t;
typedef ftc_emu_graph *cudaGraph_t;
typedef ftc_emu_graph *cudaGraphExec_t;
struct ftc_emu_event { double ms = 0; };
typedef ftc_emu_event *cudaEvent_t;

inline ftc_emu_stream ftc_emu_default_stream;
inline ftc_emu_stream *ftc_emu_s(cudaStream_t s) { return s ? s : &ftc_emu_default_stream; }
/* run now, or record into the graph being captured */
inline void ftc_emu_submit(cudaStream_t s, std::function<void()> f) {
  ftc_emu_stream *st = ftc_emu_s(s);
  if (st->capturing) st->graph->ops.push_back(std::move(f));
  else f();
}

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) {
  *s = new ftc_emu_stream;
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) { delete s; return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (ftc_emu_s(s)->capturing) return ftc_emu_err(cudaErrorStreamCaptureUnsupported);
  return cudaSuccess;
}
inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  ftc_emu_stream *st = ftc_emu_s(s);
  if (!s || st->capturing) return ftc_emu_err(cudaErrorStreamCaptureUnsupported); /* the legacy stream cannot capture */
  st->capturing = true;
  st->graph = new ftc_emu_graph;
  ftc_emu_capturing++;
  return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  ftc_emu_stream *st = ftc_emu_s(s);
  if (!st->capturing) return ftc_emu_err(cudaErrorInvalidValue);
  st->capturing = false;
  ftc_emu_capturing--;
  *g = st->graph;
  st->graph = nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long) {
  *x = new ftc_emu_graph(*g);
  return cudaSuccess;
}
inline cudaError_t cudaGraphUpload(cudaGraphExec_t, cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) {
  if (ftc_emu_s(s)->capturing) return ftc_emu_err(cudaErrorStreamCaptureUnsupported);
  for (auto &f : x->ops) f();
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete g; return cudaSuccess; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) { delete x; return cudaSuccess; }

inline double ftc_emu_now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = new ftc_emu_event; return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  ftc_emu_submit(s, [e] { e->ms = ftc_emu_now_ms(); });
  return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = (float)(b->ms - a->ms);
  return cudaSuccess;
}

/* ---- copies -------------------------------------------------------------------------------- */
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) {
  if (ftc_emu_capturing) return ftc_emu_err(cudaErrorStreamCaptureUnsupported);
  memmove(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t st = 0) {
  ftc_emu_submit(st, [=] { memmove(d, s, n); });
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, cudaMemcpyKind,
                                     cudaStream_t st = 0) {
  if (dp < w || sp < w) return ftc_emu_err(cudaErrorInvalidValue);
  ftc_emu_submit(st, [=] {
    for (size_t r = 0; r < h; r++) memmove((char *)d + r * dp, (const char *)s + r * sp, w);
  });
  return cudaSuccess;
}

/* ---- kernels ------------------------------------------------------------------------------- */
struct ftc_emu_need_threads {};
struct ftc_emu_block {
  bool threaded = false;
  unsigned nt = 0;
  std::unique_ptr<std::barrier<>> bar;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  std::vector<uint64_t> slots;
};
inline thread_local ftc_emu_block *ftc_emu_cur = nullptr;

inline unsigned ftc_emu_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

inline void __syncthreads() {
  if (!ftc_emu_cur->threaded) throw ftc_emu_need_threads();
  ftc_emu_cur->bar->arrive_and_wait();
}

template <class T> T __shfl_down_sync(unsigned, T v, unsigned delta, int = 32) {
  ftc_emu_block *b = ftc_emu_cur;
  if (!b->threaded) throw ftc_emu_need_threads();
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  unsigned t = ftc_emu_tid(), lane = t % 32, w = t / 32;
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof v);
  b->slots[t] = bits;
  b->warps[w]->arrive_and_wait();
  T r = v;
  if (lane + delta < 32 && t + delta < b->nt) memcpy(&r, &b->slots[t + delta], sizeof r);
  b->warps[w]->arrive_and_wait();
  return r;
}

template <class T> T __shfl_sync(unsigned, T v, int src, int = 32) {
  ftc_emu_block *b = ftc_emu_cur;
  if (!b->threaded) throw ftc_emu_need_threads();
  unsigned t = ftc_emu_tid(), w = t / 32;
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof v);
  b->slots[t] = bits;
  b->warps[w]->arrive_and_wait();
  T r = v;
  unsigned from = w * 32 + (unsigned)(src & 31);
  if (from < b->nt) memcpy(&r, &b->slots[from], sizeof r);
  b->warps[w]->arrive_and_wait();
  return r;
}

inline void __syncwarp(unsigned = 0xffffffffu) {
  ftc_emu_block *b = ftc_emu_cur;
  if (!b->threaded) throw ftc_emu_need_threads();
  b->warps[ftc_emu_tid() / 32]->arrive_and_wait();
}

inline std::mutex ftc_emu_mu;
inline std::set<const void *> ftc_emu_threaded_kernels; /* kernels known to need real threads */

template <class Fn, class Tup> void ftc_emu_run_block(Fn fn, dim3 g, dim3 b, dim3 bi, const Tup &args, bool threaded) {
  ftc_emu_block blk;
  blk.nt = b.x * b.y * b.z;
  blk.threaded = threaded;
  auto one = [&](unsigned t) {
    threadIdx = uint3{t % b.x, t / b.x % b.y, t / (b.x * b.y)};
    blockIdx = uint3{bi.x, bi.y, bi.z};
    blockDim = b;
    gridDim = g;
    ftc_emu_cur = &blk;
    std::apply(fn, args);
  };
  if (!threaded) {
    for (unsigned t = 0; t < blk.nt; t++) one(t);
    return;
  }
  blk.bar = std::make_unique<std::barrier<>>((std::ptrdiff_t)blk.nt);
  for (unsigned w = 0; w * 32 < blk.nt; w++)
    blk.warps.push_back(std::make_unique<std::barrier<>>((std::ptrdiff_t)(blk.nt - w * 32 < 32 ? blk.nt - w * 32 : 32)));
  blk.slots.assign(blk.nt, 0);
  std::vector<std::thread> th;
  th.reserve(blk.nt);
  for (unsigned t = 0; t < blk.nt; t++) th.emplace_back(one, t);
  for (auto &x : th) x.join();
}

template <class Fn, class Tup> void ftc_emu_run(Fn fn, dim3 g, dim3 b, const Tup &args) {
  bool threaded;
  {
    std::lock_guard<std::mutex> l(ftc_emu_mu);
    threaded = ftc_emu_threaded_kernels.count((const void *)fn) != 0;
  }
  for (unsigned z = 0; z < g.z; z++)
    for (unsigned y = 0; y < g.y; y++)
      for (unsigned x = 0; x < g.x; x++) {
        if (!threaded) {
          try {
            ftc_emu_run_block(fn, g, b, dim3(x, y, z), args, false);
            continue;
          } catch (ftc_emu_need_threads &) {
            threaded = true;
            std::lock_guard<std::mutex> l(ftc_emu_mu);
            ftc_emu_threaded_kernels.insert((const void *)fn);
          }
        }
        ftc_emu_run_block(fn, g, b, dim3(x, y, z), args, true);
      }
}

template <class... P> struct ftc_emu_launch {
  void (*fn)(P...);
  dim3 g, b;
  cudaStream_t s;
  template <class... A> void operator()(A &&...a) const {
    unsigned nt = b.x * b.y * b.z;
    if (!nt || nt > 1024 || !g.x || !g.y || !g.z || g.y > 65535 || g.z > 65535 || g.x > 0x7fffffffu) {
      ftc_emu_err(cudaErrorInvalidConfiguration);
      return;
    }
    std::tuple<P...> args(std::forward<A>(a)...); /* the arguments, by value, as a launch takes them */
    auto f = fn;
    dim3 gg = g, bb = b;
    ftc_emu_submit(s, [f, gg, bb, args] { ftc_emu_run(f, gg, bb, args); });
  }
};
template <class... P> ftc_emu_launch<P...> ftc_emu_bind(void (*fn)(P...), dim3 g, dim3 b, cudaStream_t s) { return {fn, g, b, s}; }
#define FTC_LAUNCH(G, B, S, ...) ftc_emu_bind(__VA_ARGS__, dim3(G), dim3(B), S)

#endif
