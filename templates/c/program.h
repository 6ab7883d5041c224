/* The fixed part of a generated C program: its context, init (the weights mapped and checked, the
 * arena), free and run. ftaxc pastes it after the model's data, which defines
 *   FTP_API(x)         the API's name for x: OUT_##x (OUT_init, OUT_ctx, ... as OUT.h declares them)
 *   FTP_NAME           OUT, a string (the command-line tool's name for itself)
 *   FTP_MODEL_HASH     the model's SHA-256 in hex, a string: the weights must carry the same
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
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "weights.h"

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

/* Every kernel call of the model, in order (written by ftaxc after this file). */
static void ftp_calls(unsigned char *arena, const unsigned char *weights, const void *const *inputs,
                      void *const *outputs);

/* The model's input (is_output 0) or output i: name, ONNX element type, rank, dims (written by
 * ftaxc after this file); NULL past the last. */
typedef struct ftp_io {
  const char *name;
  int dtype, rank;
  int64_t dims[8];
} ftp_io;
static const ftp_io *ftp_io_of(int is_output, int i);

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
  int rc = ft_weights_open(&m->weights, path, FTP_BUILTIN_WEIGHTS, FTP_MODEL_HASH, FTP_WEIGHT_BYTES, err, n);
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

FTP_EXPORT int FTP_API(run)(ftp_ctx *ctx, const void *const *inputs, void *const *outputs) {
#ifndef FT_NO_THREADS
  int saved = ft_par_local_threads;
  if (ctx->threads) ft_par_local_threads = ctx->threads;
#endif
  ftp_calls(ctx->arena, ctx->model->weights.data, inputs, outputs);
#ifndef FT_NO_THREADS
  ft_par_local_threads = saved;
#endif
  return 0;
}

/* The model's inputs and outputs, for callers that learn them at run time (a language binding
 * over the shared library): counts, then each one's name, ONNX element type code (1 float32,
 * 7 int64, ...), rank and dims. 0, or -1 when i is out of range. */
FTP_EXPORT int FTP_API(num_inputs)(void) { return FTP_NUM_INPUTS; }
FTP_EXPORT int FTP_API(num_outputs)(void) { return FTP_NUM_OUTPUTS; }
FTP_EXPORT int FTP_API(io_info)(int is_output, int i, const char **name, int *dtype, int *rank, const int64_t **dims) {
  const ftp_io *d = i >= 0 && i < (is_output ? FTP_NUM_OUTPUTS : FTP_NUM_INPUTS) ? ftp_io_of(is_output, i) : NULL;
  if (!d) return -1;
  if (name) *name = d->name;
  if (dtype) *dtype = d->dtype;
  if (rank) *rank = d->rank;
  if (dims) *dims = d->dims;
  return 0;
}
FTP_EXPORT size_t FTP_API(arena_bytes)(void) { return FTP_ARENA_BYTES; }

#endif
