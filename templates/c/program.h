/* The fixed part of a generated C program: its context, init (the weights mapped and checked, the
 * arena), free and run. ftaxc pastes it after the model's data, which defines
 *   FTP_API(x)         the API's name for x: OUT_##x (OUT_init, OUT_ctx, ... as OUT.h declares them)
 *   FTP_NAME           OUT, a string (the command-line tool's name for itself)
 *   FTP_MODEL_HASH     the model's SHA-256 in hex, a string
 *   FTP_WEIGHTS_ID     what the weights must carry: the hash's first 39 digits and the target the
 *                      plan was made for (ft_weights_id); FTP_MODEL_HASH when not defined
 *   FTP_WEIGHT_BYTES   the weights' payload in bytes
 *   FTP_ARENA_BYTES    the arena in bytes (0 when the model needs none)
 *   FTP_WEIGHTS_FILE   (--embed-weights only) the weights file to build into the program
 * and, after it, the model's calls in ftp_calls and its input/output table in ftp_io_of.
 * program_main.h adds the command-line tool.
 *
 * A model handle (OUT_model_open) owns the weights once; contexts (OUT_ctx_new) each own an arena
 * and share the handle's weights read-only, so any number of threads, each on its own context,
 * run at once. OUT_init is the one-context shortcut: a context holding a model of its own. */
#ifndef FT_PROGRAM_H
#define FT_PROGRAM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "weights.h"

#ifndef FTP_WEIGHTS_ID
#define FTP_WEIGHTS_ID FTP_MODEL_HASH
#endif

#define FTP_STR_(x) #x
#define FTP_STR(x) FTP_STR_(x)

#ifdef FTP_WEIGHTS_FILE
/* the weights file, header included, 64-byte aligned in the program's read-only data */
__asm__(".section .rodata\n.balign 64\n"
        ".global " FTP_STR(FTP_API(weights_blob)) "\n.hidden " FTP_STR(FTP_API(weights_blob)) "\n"
        FTP_STR(FTP_API(weights_blob)) ":\n"
        ".incbin \"" FTP_WEIGHTS_FILE "\"\n.previous\n");
extern const unsigned char FTP_API(weights_blob)[];
#define FTP_BUILTIN_WEIGHTS FTP_API(weights_blob)
#define FTP_WEIGHTS_EMBEDDED 1
#else
#define FTP_BUILTIN_WEIGHTS NULL
#define FTP_WEIGHTS_EMBEDDED 0
#endif

/* the arena aligned_alloc gets: a multiple of 64, never 0 */
#define FTP_ARENA_ALLOC (FTP_ARENA_BYTES ? FTP_ARENA_BYTES : 64u)

/* The API's functions are the only symbols a shared library (ftaxc --shared: -fvisibility=hidden)
 * exports; in a program or an object this changes nothing. */
#ifndef FTP_EXPORT
#if defined(__GNUC__) || defined(__clang__)
#define FTP_EXPORT __attribute__((visibility("default")))
#else
#define FTP_EXPORT
#endif
#endif

/* The weights, once: any number of contexts read them, none writes them (they are mapped or
 * copied read-only). refs counts the handle's owner and every context on it: the weights are
 * unmapped when the last of them lets go, so closing the handle before its contexts is safe. */
struct FTP_API(model) {
  ft_weights weights;
  int refs; /* __atomic builtins */
};
typedef FTP_API(model) ftp_model;

/* What one caller at a time runs on: the arena, and the threads its runs use (0: the process's
 * setting, ft_set_threads). */
struct FTP_API(ctx) {
  ftp_model *model;
  unsigned char *arena;
  int own_arena;
  int threads;
};
typedef FTP_API(ctx) ftp_ctx;

/* Plans: one per shape the model was compiled for (ftaxc --dim SYM=A,B,...), all on the same
 * weights; the arena is the largest plan's. */
#ifndef FTP_NUM_PLANS
#define FTP_NUM_PLANS 1
#endif

/* Every kernel call of plan's model, in order (written by ftaxc after this file): 0, or 2 where
 * the branch of a run-time If that cannot run at the compiled shapes is taken (FTP_RUN_FAIL says
 * why on stderr; no output is complete then). */
static int ftp_calls(int plan, unsigned char *arena, const unsigned char *weights, const void *const *inputs,
                     void *const *outputs);
#define FTP_RUN_FAIL(msg) do { fprintf(stderr, "error: %s\n", msg); return 2; } while (0)

/* Plan's input (is_output 0) or output i: name, ONNX element type, rank, dims (written by ftaxc
 * after this file); NULL past the last. ftp_plan_name_of: the plan's label ("seq=16"). */
typedef struct ftp_io {
  const char *name;
  int dtype, rank;
  int64_t dims[8];
} ftp_io;
static const ftp_io *ftp_io_of(int plan, int is_output, int i);
static const char *ftp_plan_name_of(int plan);

static void ftp_model_unref(ftp_model *m) {
  if (m && __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    ft_weights_close(&m->weights);
    free(m);
  }
}

FTP_EXPORT int FTP_API(model_open)(ftp_model **out, const char *path, char *err, size_t n) {
  *out = NULL;
  ftp_model *m = (ftp_model *)calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, n, "out of memory");
    return 4;
  }
  int rc = ft_weights_open(&m->weights, path, FTP_BUILTIN_WEIGHTS, FTP_WEIGHTS_ID, FTP_WEIGHT_BYTES, err, n);
  if (rc) {
    free(m);
    return rc;
  }
  m->refs = 1;
  *out = m;
  return 0;
}

FTP_EXPORT void FTP_API(model_close)(ftp_model *m) { ftp_model_unref(m); }

FTP_EXPORT void FTP_API(ctx_free)(ftp_ctx *ctx) {
  if (!ctx) return;
  if (ctx->own_arena) free(ctx->arena);
  ftp_model_unref(ctx->model);
  free(ctx);
}

FTP_EXPORT int FTP_API(ctx_new)(ftp_ctx **out, ftp_model *m, void *arena, char *err, size_t n) {
  *out = NULL;
  if (!m) {
    snprintf(err, n, "no model (open one with " FTP_NAME "_model_open)");
    return 1;
  }
  if (arena && ((uintptr_t)arena & 63)) {
    snprintf(err, n, "the arena must be 64-byte aligned");
    return 1;
  }
  ftp_ctx *ctx = (ftp_ctx *)calloc(1, sizeof *ctx);
  if (!ctx) {
    snprintf(err, n, "out of memory");
    return 4;
  }
  ctx->arena = (unsigned char *)arena;
  if (!arena) {
    ctx->arena = (unsigned char *)aligned_alloc(64, FTP_ARENA_ALLOC);
    ctx->own_arena = 1;
    if (!ctx->arena) {
      free(ctx);
      snprintf(err, n, "out of memory for the arena");
      return 4;
    }
  }
  __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
  ctx->model = m;
  *out = ctx;
  return 0;
}

FTP_EXPORT void FTP_API(free)(ftp_ctx *ctx) { FTP_API(ctx_free)(ctx); }

/* One context on a model of its own: the context holds the model's last reference, so freeing
 * it closes the model too. */
FTP_EXPORT int FTP_API(init_with_arena)(ftp_ctx **out, const char *path, void *arena, char *err, size_t n) {
  ftp_model *m = NULL;
  *out = NULL;
  int rc = FTP_API(model_open)(&m, path, err, n);
  if (!rc) rc = FTP_API(ctx_new)(out, m, arena, err, n);
  FTP_API(model_close)(m);
  return rc;
}

FTP_EXPORT int FTP_API(init)(ftp_ctx **out, const char *path, char *err, size_t n) {
  return FTP_API(init_with_arena)(out, path, NULL, err, n);
}

FTP_EXPORT void FTP_API(ctx_set_threads)(ftp_ctx *ctx, int threads) { ctx->threads = threads > 0 ? threads : 0; }

/* 0, or 2 where the run took a branch of a run-time If that cannot run at the compiled shapes
 * (FTP_RUN_FAIL said why on stderr; the outputs are not complete) */
FTP_EXPORT int FTP_API(run_plan)(ftp_ctx *ctx, int plan, const void *const *inputs, void *const *outputs) {
  if (plan < 0 || plan >= FTP_NUM_PLANS) return 1;
#ifndef FT_NO_THREADS
  int saved = ft_par_local_threads;
  if (ctx->threads) ft_par_local_threads = ctx->threads;
#endif
  int rc = ftp_calls(plan, ctx->arena, ctx->model->weights.data, inputs, outputs);
#ifndef FT_NO_THREADS
  ft_par_local_threads = saved;
#endif
  return rc;
}

FTP_EXPORT int FTP_API(run)(ftp_ctx *ctx, const void *const *inputs, void *const *outputs) {
  return FTP_API(run_plan)(ctx, 0, inputs, outputs);
}

FTP_EXPORT int FTP_API(num_plans)(void) { return FTP_NUM_PLANS; }
FTP_EXPORT const char *FTP_API(plan_name)(int plan) { return ftp_plan_name_of(plan); }

/* "1x16" into buf at *m (of n), cut at n. */
static void ftp_put_dims(char *buf, size_t n, size_t *m, int rank, const int64_t *dims) {
  for (int d = 0; d < rank && *m < n; d++)
    *m += (size_t)snprintf(buf + *m, n - *m, "%s%lld", d ? "x" : "", (long long)dims[d]);
  if (!rank && *m < n) *m += (size_t)snprintf(buf + *m, n - *m, "scalar");
}

FTP_EXPORT int FTP_API(find_plan)(const int64_t *const *input_dims, char *err, size_t n) {
  for (int p = 0; p < FTP_NUM_PLANS; p++) {
    int ok = 1;
    for (int i = 0; i < FTP_NUM_INPUTS && ok; i++) {
      const ftp_io *d = ftp_io_of(p, 0, i);
      for (int k = 0; k < d->rank && ok; k++) ok = input_dims[i][k] == d->dims[k];
    }
    if (ok) return p;
  }
  size_t m = 0; /* the shapes asked for, then every plan's */
  if (n) err[0] = 0;
  if (m < n) m += (size_t)snprintf(err + m, n - m, "no plan for input shapes ");
  for (int i = 0; i < FTP_NUM_INPUTS && m < n; i++) {
    if (i && m < n) m += (size_t)snprintf(err + m, n - m, ", ");
    ftp_put_dims(err, n, &m, ftp_io_of(0, 0, i)->rank, input_dims[i]);
  }
  if (m < n) m += (size_t)snprintf(err + m, n - m, "; compiled:");
  for (int p = 0; p < FTP_NUM_PLANS && m < n; p++) {
    m += (size_t)snprintf(err + m, n - m, "%s %s (", p ? ";" : "", ftp_plan_name_of(p));
    for (int i = 0; i < FTP_NUM_INPUTS && m < n; i++) {
      if (i && m < n) m += (size_t)snprintf(err + m, n - m, ", ");
      ftp_put_dims(err, n, &m, ftp_io_of(p, 0, i)->rank, ftp_io_of(p, 0, i)->dims);
    }
    if (m < n) m += (size_t)snprintf(err + m, n - m, ")");
  }
  return -1;
}

FTP_EXPORT int FTP_API(run_dims)(ftp_ctx *ctx, const int64_t *const *input_dims, const void *const *inputs,
                                 void *const *outputs, char *err, size_t n) {
  int plan = FTP_API(find_plan)(input_dims, err, n);
  return plan < 0 ? 1 : FTP_API(run_plan)(ctx, plan, inputs, outputs);
}

/* The model's inputs and outputs, for callers that learn them at run time (a language binding
 * over the shared library): counts, then each one's name, ONNX element type code (1 float32,
 * 7 int64, ...), rank and dims. 0, or -1 when i is out of range. */
FTP_EXPORT int FTP_API(num_inputs)(void) { return FTP_NUM_INPUTS; }
FTP_EXPORT int FTP_API(num_outputs)(void) { return FTP_NUM_OUTPUTS; }
FTP_EXPORT int FTP_API(plan_io_info)(int plan, int is_output, int i, const char **name, int *dtype, int *rank,
                                     const int64_t **dims) {
  const ftp_io *d = plan >= 0 && plan < FTP_NUM_PLANS && i >= 0 && i < (is_output ? FTP_NUM_OUTPUTS : FTP_NUM_INPUTS)
                        ? ftp_io_of(plan, is_output, i)
                        : NULL;
  if (!d) return -1;
  if (name) *name = d->name;
  if (dtype) *dtype = d->dtype;
  if (rank) *rank = d->rank;
  if (dims) *dims = d->dims;
  return 0;
}
FTP_EXPORT int FTP_API(io_info)(int is_output, int i, const char **name, int *dtype, int *rank, const int64_t **dims) {
  return FTP_API(plan_io_info)(0, is_output, i, name, dtype, rank, dims);
}
FTP_EXPORT size_t FTP_API(arena_bytes)(void) { return FTP_ARENA_BYTES; }

#endif
