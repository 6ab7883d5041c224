/* The fixed part of a generated C program: its context, init (the weights mapped and checked, the
 * arena), free and run. ftaxc pastes it after the model's data, which defines
 *   FTP_API(x)         the API's name for x: OUT_##x (OUT_init, OUT_ctx, ... as OUT.h declares them)
 *   FTP_NAME           OUT, a string (the command-line tool's name for itself)
 *   FTP_MODEL_HASH     the model's SHA-256 in hex, a string: the weights must carry the same
 *   FTP_WEIGHT_BYTES   the weights' payload in bytes
 *   FTP_ARENA_BYTES    the arena in bytes (0 when the model needs none)
 *   FTP_WEIGHTS_FILE   (--embed-weights only) the weights file to build into the program
 * and, after it, the model's calls in ftp_calls. program_main.h adds the command-line tool. */
#ifndef FT_PROGRAM_H
#define FT_PROGRAM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weights.h"

#define FTP_STR_(x) #x
#define FTP_STR(x) FTP_STR_(x)

#ifdef FTP_WEIGHTS_FILE
/* the weights file, header included, 64-byte aligned in the program's read-only data */
__asm__(".section .rodata\n.balign 64\n"
        ".global " FTP_STR(FTP_API(weights_blob)) "\n" FTP_STR(FTP_API(weights_blob)) ":\n"
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

struct FTP_API(ctx) {
  ft_weights weights;
  unsigned char *arena;
  int own_arena;
};
typedef FTP_API(ctx) ftp_ctx;

/* Every kernel call of the model, in order (written by ftaxc after this file): 0, or 2 where the
 * branch of a run-time If that cannot run at the compiled shapes is taken (FTP_RUN_FAIL says why
 * on stderr; no output is complete then). */
static int ftp_calls(unsigned char *arena, const unsigned char *weights, const void *const *inputs,
                     void *const *outputs);
#define FTP_RUN_FAIL(msg) do { fprintf(stderr, "error: %s\n", msg); return 2; } while (0)

void FTP_API(free)(ftp_ctx *ctx) {
  if (!ctx) return;
  if (ctx->own_arena) free(ctx->arena);
  ft_weights_close(&ctx->weights);
  free(ctx);
}

int FTP_API(init_with_arena)(ftp_ctx **out, const char *path, void *arena, char *err, size_t n) {
  ftp_ctx *ctx = (ftp_ctx *)calloc(1, sizeof *ctx);
  if (!ctx) {
    snprintf(err, n, "out of memory");
    return 4;
  }
  int rc = ft_weights_open(&ctx->weights, path, FTP_BUILTIN_WEIGHTS, FTP_MODEL_HASH, FTP_WEIGHT_BYTES, err, n);
  if (rc) {
    free(ctx);
    return rc;
  }
  ctx->arena = (unsigned char *)arena;
  if (!arena) {
    ctx->arena = (unsigned char *)aligned_alloc(64, FTP_ARENA_ALLOC);
    ctx->own_arena = 1;
    if (!ctx->arena) {
      snprintf(err, n, "out of memory for the arena");
      FTP_API(free)(ctx);
      return 4;
    }
  }
  *out = ctx;
  return 0;
}

int FTP_API(init)(ftp_ctx **out, const char *path, char *err, size_t n) {
  return FTP_API(init_with_arena)(out, path, NULL, err, n);
}

int FTP_API(run)(ftp_ctx *ctx, const void *const *inputs, void *const *outputs) {
  return ftp_calls(ctx->arena, ctx->weights.data, inputs, outputs);
}

#endif
