/* ftax-eager --device cuda: the GPU side of the eager interpreter (see eager.h, ft_eager_cuda).
 *
 * eager.c walks the graph exactly as on the CPU (shape inference and kernel planning per node on
 * the host, on every run); for a node that runs on the GPU it hands the planned call here. This
 * file does what PyTorch's CUDA backend does per op: look the kernel up (here: the CUDA twin of
 * the call's kernel entry, the same launcher a generated .cu program calls, in a table compiled
 * from every registered entry; tools/cuda_twins.c writes it), get the call's library plan
 * (cuBLASLt descriptors and heuristic, cuDNN descriptors and algorithm search; made on first
 * use and cached per node while the parameters stay the same, as PyTorch caches cuDNN plans by
 * shape), launch on one stream, and serve device memory from a caching allocator. Nothing waits
 * for the GPU inside a run except downloads the host needs (outputs, data-dependent shapes).
 *
 * With timing on, each node's launches are bracketed by CUDA events; after the run has finished,
 * the events give each node's GPU time, so ftax-eager --profile can split wall time into GPU
 * kernel time and framework overhead. When the host is the bottleneck the GPU would reach the
 * start event long before the host has queued the kernel, and the gap would count as kernel
 * time; so a one-thread gate kernel holds the stream until the node's launches are all queued
 * (it spins on a word of pinned host memory the host then sets; not on a node's first launch,
 * when the driver may still load its kernels). The gates cost one small launch per node: a
 * profiled run's wall time is a little above an unprofiled one's.
 *
 * Built by nvcc for the GPU, and by the host C++ compiler against tests/cuda/emu (the CPU stand-in
 * for the CUDA runtime, cuBLASLt and cuDNN) for the tests that run without a GPU. */
#include "runtime.cuh"

#include <stdlib.h>

extern "C" { /* ftax's C headers */
#include "alloc.h"
#include "eager.h"
}

typedef int (*ftc_twin_fn)(const int64_t *, const double *, const void *const *, void *const *, void *, ftc_env *, void *);
typedef int (*ftc_init_fn)(const int64_t *, const double *, const void *const *, void *const *, ftc_env *, void **);
typedef void (*ftc_free_fn)(void *);
/* One row per registered kernel entry (compiler/ops/table.c ft_kentry_each), in that order; a
 * NULL fn for an entry without a twin. */
typedef struct ftc_twin_row {
  const char *call;
  ftc_twin_fn fn;
  ftc_init_fn init;
  ftc_free_fn free;
} ftc_twin_row;

#include "eager_twins.inc"

/* GEMMs and convolutions share one workspace, as in a generated program */
#define FTC_EAGER_WORKSPACE ((size_t)64 << 20)

typedef struct node_plan {
  const ftc_twin_row *row;
  void *plan; /* the init hook's, for the parameters below */
  int np, nf;
  int64_t p[FT_MAX_P];
  double f[FT_MAX_F];
} node_plan;

/* a free list of one size class: device blocks, kept on the host side */
typedef struct block_list {
  void **v;
  int n, cap;
} block_list;

/* which row of the table an entry's is: the entries sorted by address, found by binary search */
typedef struct entry_row {
  const ft_kentry *entry;
  int row;
} entry_row;

typedef struct cuda_dev {
  ftc_env env;
  entry_row *rows; /* FTC_TWIN_ROWS */
  volatile unsigned *gate; /* pinned host word the gate kernel waits on */
  unsigned ticket;
  int n_nodes;
  node_plan *plans;      /* per node */
  cudaEvent_t *ev;       /* per node: start, end */
  unsigned char *timed;  /* per node: its events were recorded in this run */
  unsigned char *warm;   /* per node: launched before (its kernels are loaded) */
  block_list free_list[FT_CACHE_CLASSES];
  size_t reserved, in_use, peak;
  uint64_t hits, misses;
} cuda_dev;

static int err_out(ft_err *e, int code, const char *msg) { return ft_fail(e, code, "%s", msg); }

/* ---- caching device allocator --------------------------------------------------------------- */

static int ftc_zero_async(cuda_dev *d, void *p, size_t n) {
#ifndef FTAX_CUDA_EMULATION
  if (cudaMemsetAsync(p, 0, n, d->env.stream) != cudaSuccess) { cudaGetLastError(); return 0; }
#else
  (void)d; (void)p; (void)n; /* the emulation keeps its NaN fill, to show reads of unwritten memory */
#endif
  return 1;
}

static void *dev_alloc(void *ctx, size_t bytes, int *cls) {
  cuda_dev *d = (cuda_dev *)ctx;
  size_t cb;
  int c = ft_cache_class(bytes ? bytes : 1, &cb);
  *cls = c;
  block_list *l = &d->free_list[c];
  void *p = NULL;
  if (l->n) {
    p = l->v[--l->n];
    d->hits++;
  } else {
    if (cudaMalloc(&p, cb) != cudaSuccess) { cudaGetLastError(); return NULL; }
    /* new blocks start zeroed, as a program's arena does: cuDNN's fused convolution may read its
       output scaled by 0 (recycled blocks hold earlier, finite activations) */
    if (!ftc_zero_async(d, p, cb)) { cudaFree(p); return NULL; }
    d->reserved += cb;
    d->misses++;
  }
  d->in_use += cb;
  if (d->in_use > d->peak) d->peak = d->in_use;
  return p;
}

/* Back on the free list at once: every use of the block is already queued on the one stream, so
 * the next user's kernels run after them (stream order), as in PyTorch's allocator. */
static void dev_put(void *ctx, void *block, int cls) {
  cuda_dev *d = (cuda_dev *)ctx;
  block_list *l = &d->free_list[cls];
  size_t cb = ft_cache_class_size(cls);
  d->in_use -= cb <= d->in_use ? cb : d->in_use;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    void **v = (void **)realloc(l->v, sizeof(void *) * (size_t)cap);
    if (!v) { /* cannot cache it: give it back */
      cudaFree(block);
      d->reserved -= cb;
      return;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = block;
}

/* ---- timing gate ------------------------------------------------------------------------------ */

#ifndef FTAX_CUDA_EMULATION /* the emulation runs kernels as they are launched: nothing to hold */
/* Wait until the host has set *gate to ticket (or about two seconds have passed). */
static __global__ void ftc_gate_kernel(const volatile unsigned *gate, unsigned ticket) {
  long long t0 = clock64();
  while (*gate < ticket && clock64() - t0 < (1LL << 32)) {
  }
}
#endif

static void gate_hold(cuda_dev *d) {
#ifndef FTAX_CUDA_EMULATION
  if (!d->gate) return;
  FTC_LAUNCH(1, 1, d->env.stream, ftc_gate_kernel)(d->gate, d->ticket + 1);
#else
  (void)d;
#endif
}

static void gate_release(cuda_dev *d) {
  if (!d->gate) return;
  __atomic_store_n((unsigned *)d->gate, ++d->ticket, __ATOMIC_RELEASE);
}

/* ---- the twins table, by entry -------------------------------------------------------------- */

typedef struct row_walk {
  entry_row *rows;
  int n;
} row_walk;

static void add_row(const ft_kentry *e, void *ctx) {
  row_walk *w = (row_walk *)ctx;
  if (w->n < FTC_TWIN_ROWS) w->rows[w->n] = {e, w->n};
  w->n++;
}

static int by_entry(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const entry_row *)a)->entry, y = (uintptr_t)((const entry_row *)b)->entry;
  return x < y ? -1 : x > y;
}

static int index_rows(cuda_dev *d, ft_err *e) {
  row_walk w = {(entry_row *)calloc(FTC_TWIN_ROWS, sizeof(entry_row)), 0};
  if (!w.rows) return ft_fail(e, FT_EIO, "out of memory");
  ft_kentry_each(add_row, &w);
  d->rows = w.rows;
  if (w.n != FTC_TWIN_ROWS) /* the table was written from another libftax */
    return ft_fail(e, FT_EINVALID, "ftax-eager's CUDA twins table has %d rows for %d kernel entries: rebuild it", FTC_TWIN_ROWS, w.n);
  qsort(d->rows, FTC_TWIN_ROWS, sizeof(entry_row), by_entry);
  return 0;
}

static const ftc_twin_row *find_row(const cuda_dev *d, const ft_kentry *entry) {
  int lo = 0, hi = FTC_TWIN_ROWS - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (d->rows[mid].entry == entry) return ftc_twin_table[d->rows[mid].row].fn ? &ftc_twin_table[d->rows[mid].row] : NULL;
    if ((uintptr_t)d->rows[mid].entry < (uintptr_t)entry) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* ---- open, close ------------------------------------------------------------------------------ */

static void dev_close(void *ctx) {
  cuda_dev *d = (cuda_dev *)ctx;
  if (!d) return;
  if (d->env.stream) cudaStreamSynchronize(d->env.stream);
  for (int i = 0; d->plans && i < d->n_nodes; i++)
    if (d->plans[i].plan && d->plans[i].row->free) d->plans[i].row->free(d->plans[i].plan);
  for (int i = 0; d->ev && i < 2 * d->n_nodes; i++)
    if (d->ev[i]) cudaEventDestroy(d->ev[i]);
  for (int c = 0; c < FT_CACHE_CLASSES; c++) {
    for (int j = 0; j < d->free_list[c].n; j++) cudaFree(d->free_list[c].v[j]);
    free(d->free_list[c].v);
  }
  if (d->env.blas && d->env.blas_free) d->env.blas_free(d->env.blas);
  if (d->env.dnn && d->env.dnn_free) d->env.dnn_free(d->env.dnn);
  if (d->env.workspace) cudaFree(d->env.workspace);
  if (d->gate) cudaFreeHost((void *)d->gate);
  if (d->env.stream) cudaStreamDestroy(d->env.stream);
  free(d->rows);
  free(d->plans);
  free(d->ev);
  free(d->timed);
  free(d->warm);
  free(d);
}

static int dev_open(void **out, int n_nodes, ft_err *e) {
  *out = NULL;
  int count = 0;
  cudaError_t r = cudaGetDeviceCount(&count);
  if (r != cudaSuccess || count == 0)
    return ft_fail(e, FT_EINVALID, "no CUDA device (cudaGetDeviceCount: %s); --device cpu runs on the CPU",
                   r != cudaSuccess ? cudaGetErrorString(r) : "0 devices");
  int dev = 0;
  struct cudaDeviceProp prop;
  cudaGetDevice(&dev);
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return ft_fail(e, FT_EINVALID, "cannot query CUDA device %d", dev);
  struct cudaFuncAttributes fa;
  r = cudaFuncGetAttributes(&fa, ftc_probe_kernel);
  if (r != cudaSuccess)
    return ft_fail(e, FT_EINVALID, "this ftax-eager has no GPU code for %s (sm_%d%d): rebuild it with CMAKE_CUDA_ARCHITECTURES=%d%d; %s",
                   prop.name, prop.major, prop.minor, prop.major, prop.minor, cudaGetErrorString(r));
  cuda_dev *d = (cuda_dev *)calloc(1, sizeof *d);
  if (!d) return ft_fail(e, FT_EIO, "out of memory");
  d->n_nodes = n_nodes;
  d->plans = (node_plan *)calloc((size_t)n_nodes + 1, sizeof *d->plans);
  d->ev = (cudaEvent_t *)calloc(2 * (size_t)n_nodes + 2, sizeof *d->ev);
  d->timed = (unsigned char *)calloc((size_t)n_nodes + 1, 1);
  d->warm = (unsigned char *)calloc((size_t)n_nodes + 1, 1);
  d->env.sm_count = prop.multiProcessorCount;
  d->env.math = FTC_MATH_FP32;
  const char *s = getenv("FTAX_CUDA_VERBOSE");
  d->env.verbose = s && s[0] == '1';
  if (!d->plans || !d->ev || !d->timed || !d->warm) { dev_close(d); return ft_fail(e, FT_EIO, "out of memory"); }
  if (index_rows(d, e)) { dev_close(d); return e->code; }
  d->env.workspace_bytes = FTC_EAGER_WORKSPACE;
  void *gate = NULL;
  if (ftc_init_stream(&d->env) || ftc_alloc(&d->env, &d->env.workspace, d->env.workspace_bytes) || ftc_alloc_host(&d->env, &gate, 64)) {
    int rc = err_out(e, strstr(d->env.err, "out of memory") ? FT_EIO : FT_EINVALID, d->env.err);
    dev_close(d);
    return rc;
  }
  d->gate = (volatile unsigned *)gate;
  *d->gate = 0;
  *out = d;
  return 0;
}

/* ---- copies ----------------------------------------------------------------------------------- */

static int dev_copy(void *ctx, void *dst, const void *src, size_t n, int to_device, ft_err *e) {
  cuda_dev *d = (cuda_dev *)ctx;
  if (!n) return 0;
  cudaError_t r = cudaMemcpyAsync(dst, src, n, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, d->env.stream);
  if (r == cudaSuccess && !to_device) r = cudaStreamSynchronize(d->env.stream);
  if (r != cudaSuccess)
    return ft_fail(e, FT_EINVALID, "copying %zu bytes %s the GPU: %s (%s)%s", n, to_device ? "to" : "from", cudaGetErrorString(r),
                   cudaGetErrorName(r), ftc_cuda_hint(r));
  return 0;
}

/* ---- one call --------------------------------------------------------------------------------- */

static int dev_launch(void *ctx, int node, const ft_kcall *k, const void *const *in, void *const *out, int timed, ft_err *e) {
  cuda_dev *d = (cuda_dev *)ctx;
  const ftc_twin_row *row = find_row(d, k->entry);
  if (!row) /* an entry with a twin whose table is not registered in compiler/ops/table.c */
    return ft_fail(e, FT_EUNSUPPORTED, "%s has a CUDA twin this ftax-eager was not built with", k->entry->name);
  node_plan *np = &d->plans[node];
  if (row->init) { /* the library plan: reused while this node's parameters stay the same */
    int same = np->plan && np->row == row && np->np == k->np && np->nf == k->nf &&
               !memcmp(np->p, k->p, sizeof(int64_t) * (size_t)k->np) && !memcmp(np->f, k->f, sizeof(double) * (size_t)k->nf);
    if (!same) {
      if (np->plan && np->row->free) np->row->free(np->plan);
      np->plan = NULL;
      if (row->init(k->p, k->f, in, out, &d->env, &np->plan)) {
        if (np->plan && row->free) row->free(np->plan);
        np->plan = NULL;
        return err_out(e, FT_EUNSUPPORTED, d->env.err);
      }
      np->row = row;
      np->np = k->np;
      np->nf = k->nf;
      memcpy(np->p, k->p, sizeof(int64_t) * (size_t)k->np);
      memcpy(np->f, k->f, sizeof(double) * (size_t)k->nf);
    }
  }
  cudaEvent_t *ev = &d->ev[2 * node];
  if (timed) {
    if (!ev[0] && (cudaEventCreate(&ev[0]) != cudaSuccess || cudaEventCreate(&ev[1]) != cudaSuccess))
      return ft_fail(e, FT_EINVALID, "cannot create CUDA events");
    /* not on a node's first launch: loading its kernels then could have to wait for the gate */
    if (d->warm[node]) gate_hold(d);
    cudaEventRecord(ev[0], d->env.stream);
  }
  int rc = row->fn(k->p, k->f, in, out, NULL, &d->env, row->init ? np->plan : NULL);
  if (timed) {
    cudaEventRecord(ev[1], d->env.stream);
    if (d->warm[node]) gate_release(d); /* always: a held stream would stall the next wait */
    d->timed[node] = 1;
  }
  d->warm[node] = 1;
  return rc ? err_out(e, FT_EINVALID, d->env.err) : 0;
}

/* Wait for the run's work; a kernel's failure shows up here. */
static int dev_finish(void *ctx, ft_err *e) {
  cuda_dev *d = (cuda_dev *)ctx;
  cudaError_t r = cudaStreamSynchronize(d->env.stream);
  if (r == cudaSuccess) r = cudaGetLastError();
  if (r != cudaSuccess)
    return ft_fail(e, FT_EINVALID, "the model failed on the GPU: %s (%s)%s", cudaGetErrorString(r), cudaGetErrorName(r), ftc_cuda_hint(r));
  return 0;
}

/* After dev_finish: the GPU time of the node's timed launch in this run, or -1 (none). */
static int64_t dev_node_ns(void *ctx, int node) {
  cuda_dev *d = (cuda_dev *)ctx;
  if (!d->timed[node]) return -1;
  d->timed[node] = 0;
  float ms = 0;
  if (cudaEventElapsedTime(&ms, d->ev[2 * node], d->ev[2 * node + 1]) != cudaSuccess) return -1;
  return (int64_t)((double)ms * 1e6 + 0.5);
}

static void dev_stats(void *ctx, size_t *reserved, size_t *peak, uint64_t *hits, uint64_t *misses) {
  cuda_dev *d = (cuda_dev *)ctx;
  *reserved = d->reserved;
  *peak = d->peak;
  *hits = d->hits;
  *misses = d->misses;
}

static const ft_eager_device cuda_device = {"cuda", dev_open, dev_close, dev_alloc, dev_put, dev_copy, dev_launch, dev_finish, dev_node_ns, dev_stats};

extern "C" const ft_eager_device *ft_eager_cuda(void) { return &cuda_device; }
