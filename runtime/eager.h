/* ftax-eager as a library: an op-by-op interpreter of the unoptimized ONNX graph on the same
 * kernels the generated programs run.
 *
 * It behaves like an eager framework on purpose. Every run walks every node of the graph as
 * loaded (no folding, no fusion: Shape → Gather → Concat chains execute at run time) and, per
 * node, runs the op's shape inference on the actual tensors, plans the kernel call, allocates
 * the outputs (and kernel scratch) from a caching allocator, calls the kernel, and releases each
 * tensor after its last use. Views (Reshape, Squeeze, ...) share their input's buffer. Timing
 * this against the generated program for the same model and shape measures the framework tax.
 *
 *   ft_eager *h;
 *   ft_pins pins = {.dims = {"batch=1"}, .n_dims = 1};
 *   if (ft_eager_load("m.onnx", &pins, &h, &err)) ... err.code is an ftax exit code ...
 *   ft_eager_run(h, inputs, outputs, &err);   // dense buffers, shapes from ft_eager_io
 *   ft_eager_free(h);
 *
 * A handle runs one inference at a time (kernels may use the pool of templates/c/parallel.h inside). */
#ifndef FTAX_EAGER_H
#define FTAX_EAGER_H

#include <stdint.h>
#include <stdio.h>

#include "passes.h" /* ft_pins, ft_err, ft_tensor */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ft_eager ft_eager;

/* ---- devices -------------------------------------------------------------------------------
 * A device runs the nodes that work on its memory (ft_eager_cuda in eager_cuda.h: one CUDA
 * stream, the CUDA twins of the C kernels). Everything else stays on the host: shape inference
 * and planning of every node, and the shape arithmetic of small integer tensors computed from
 * host values (Shape -> Gather -> Concat), as an eager framework's shape logic runs on the CPU.
 * ctx is the device's own state. */
typedef struct ft_eager_device {
  const char *name;
  int (*open)(void **ctx, int n_nodes, ft_err *e);
  void (*close)(void *ctx);
  void *(*alloc)(void *ctx, size_t bytes, int *cls);     /* device memory from the device's cache */
  void (*put)(void *ctx, void *block, int cls);
  /* host to device (queued), or device to host (waits for it) */
  int (*copy)(void *ctx, void *dst, const void *src, size_t n, int to_device, ft_err *e);
  /* run the planned call k of node on device buffers: the device kernel of k's entry (its
   * CUDA twin, compiler/cuda_twins.h); timed: bracket it with events for node_ns */
  int (*launch)(void *ctx, int node, const ft_kcall *k, const void *const *in, void *const *out, int timed, ft_err *e);
  int (*finish)(void *ctx, ft_err *e);    /* wait for everything queued; report device failures */
  int64_t (*node_ns)(void *ctx, int node); /* after finish: device time of node's timed launch, -1 if none */
  void (*stats)(void *ctx, size_t *reserved, size_t *peak, uint64_t *hits, uint64_t *misses);
} ft_eager_device;

/* Load a model and pin its symbolic input dims. Output shapes are learned once here by
 * inferring (and folding) a throw-away copy of the graph; the graph that runs stays as loaded.
 * Returns 0, or an exit code (2 invalid, 3 unsupported, 4 I/O, 1 bad pins) with err set. */
int ft_eager_load(const char *path, const ft_pins *pins, ft_eager **out, ft_err *err);
/* The same, running on a device (NULL: the CPU). Fails with FT_EINVALID (2) when the device
 * cannot be opened (no GPU, no code for it). */
int ft_eager_load_on(const char *path, const ft_pins *pins, const ft_eager_device *dev, ft_eager **out, ft_err *err);
const char *ft_eager_device_name(const ft_eager *h); /* "cpu" or the device's */
/* The CUDA device (runtime/eager_cuda.cu; only in builds made with nvcc). */
const ft_eager_device *ft_eager_cuda(void);
void ft_eager_free(ft_eager *h);

/* Graph inputs and outputs: name, and dtype/rank/dims in desc (desc->data is NULL). */
int ft_eager_num_inputs(const ft_eager *h);
int ft_eager_num_outputs(const ft_eager *h);
const char *ft_eager_io(const ft_eager *h, int is_output, int i, ft_tensor *desc);

/* One inference. inputs[i] and outputs[i] are dense buffers of the shapes ft_eager_io gives;
 * inputs are read in place, outputs are copied out at the end. Returns 0 or an exit code. */
int ft_eager_run(ft_eager *h, const void *const *inputs, void *const *outputs, ft_err *err);

/* ---- profile ------------------------------------------------------------------------------
 * With profiling on, every kernel call is timed (clock_gettime around the kernel function
 * alone; on a device, CUDA events around its launch, read when the run has finished) and every
 * run's wall time is measured around the whole of ft_eager_run. Times are
 * integer nanoseconds summed over the runs since the last reset, so the per-op rows add up to
 * kernel_ns exactly and kernel_ns <= wall_ns. */
typedef struct ft_eager_oprow {
  const char *domain, *op_type;
  int64_t calls;     /* node executions (a view or a Shape counts, with no kernel time) */
  int64_t kernel_ns; /* time inside kernel functions */
  int64_t node_ns;   /* the whole dispatch: infer, plan, allocation, kernel, release */
} ft_eager_oprow;

typedef struct ft_eager_profile {
  int64_t runs;
  int64_t wall_ns;   /* sum over runs of the whole ft_eager_run */
  int64_t kernel_ns; /* sum of the rows' kernel_ns */
  int nodes;         /* nodes executed per run (the graph as loaded) */
  int n_rows;
  const ft_eager_oprow *rows; /* one per op type, most kernel time first; owned by the handle */
  size_t cache_reserved;      /* bytes the caching allocator holds from the system */
  size_t cache_peak;          /* most bytes handed out at once */
  uint64_t cache_hits, cache_misses;
} ft_eager_profile;

void ft_eager_profile_enable(ft_eager *h, int on); /* also resets */
void ft_eager_profile_reset(ft_eager *h);
void ft_eager_profile_get(ft_eager *h, ft_eager_profile *p);
/* A table for people, or (json) one JSON object on one line. */
void ft_eager_profile_print(ft_eager *h, FILE *f, int json);

#ifdef __cplusplus
}
#endif
#endif
