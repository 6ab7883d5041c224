/* The fixed part of a freestanding generated library (ftaxc --freestanding): the same API as
 * program.h (OUT_init, OUT_init_with_arena, OUT_run, OUT_free), with no libc beyond
 * memcpy/memset (and the libm functions the model's kernels call), no heap, no file, no threads.
 * The weights are a static const array in OUT.c (read-only data: flash on a microcontroller), the
 * arena is the caller's or a static array (RAM), and the contexts come from a static pool.
 *
 * ftaxc pastes it after the model's data, which defines, besides program.h's FTP_API, FTP_NAME,
 * FTP_WEIGHT_BYTES, FTP_ARENA_BYTES:
 *   FTP_NO_STATIC_ARENA   (when the user built with -DOUT_NO_STATIC_ARENA) no static arena:
 *                         OUT_init fails, OUT_init_with_arena takes the caller's
 *   FTP_MAX_CONTEXTS      contexts at once (default 1; -DOUT_MAX_CONTEXTS=N)
 *   FTP_WEIGHTS_ATTR,     attributes of the weights array and of the static arena (default none;
 *   FTP_ARENA_ATTR        -DOUT_WEIGHTS_ATTR='__attribute__((section(".qspi")))' places them)
 * and declares the weights array ftp_weights (defined at the end of OUT.c), then the model's calls
 * in ftp_calls. */
#ifndef FT_PROGRAM_FREESTANDING_H
#define FT_PROGRAM_FREESTANDING_H

#include <stddef.h>
#include <stdint.h>

#ifndef FTP_MAX_CONTEXTS
#define FTP_MAX_CONTEXTS 1
#endif

/* the static arena: a multiple of 64, never 0 */
#define FTP_ARENA_ALLOC (FTP_ARENA_BYTES ? FTP_ARENA_BYTES : 64u)

struct FTP_API(ctx) {
  unsigned char *arena;
  int in_use, static_arena;
};
typedef FTP_API(ctx) ftp_ctx;

static ftp_ctx ftp_contexts[FTP_MAX_CONTEXTS];
#ifndef FTP_NO_STATIC_ARENA
static unsigned char ftp_static_arena[FTP_ARENA_ALLOC] __attribute__((aligned(64))) FTP_ARENA_ATTR;
static int ftp_static_arena_taken;
#endif

/* 0, or 2 where a branch that cannot run at the compiled shapes is taken (no stdio here: the
 * reason is in the generated source, at the FTP_RUN_FAIL). */
static int ftp_calls(int plan, unsigned char *arena, const unsigned char *weights, const void *const *inputs,
                     void *const *outputs);
#define FTP_RUN_FAIL(msg) return 2

/* err gets msg, cut to n bytes (no snprintf here). */
static int ftp_fail(char *err, size_t n, const char *msg, int rc) {
  size_t i = 0;
  for (; err && n && i + 1 < n && msg[i]; i++) err[i] = msg[i];
  if (err && n) err[i] = 0;
  return rc;
}

void FTP_API(free)(ftp_ctx *ctx) {
  if (!ctx) return;
#ifndef FTP_NO_STATIC_ARENA
  if (ctx->static_arena) ftp_static_arena_taken = 0;
#endif
  ctx->arena = NULL;
  ctx->static_arena = 0;
  ctx->in_use = 0;
}

/* A context from the pool with this arena. The weights are built in: path must be NULL. Returns 0,
 * 1 (a weights path, or an arena not 64-byte aligned) or 4 (no context or no arena left). */
int FTP_API(init_with_arena)(ftp_ctx **out, const char *path, void *arena, char *err, size_t n) {
  if (path) return ftp_fail(err, n, "the weights are built into this library (ftaxc --freestanding): pass NULL as the weights path", 1);
  if ((uintptr_t)arena % 64) return ftp_fail(err, n, "the arena must be 64-byte aligned", 1);
  int slot = 0;
  while (slot < FTP_MAX_CONTEXTS && ftp_contexts[slot].in_use) slot++;
  if (slot == FTP_MAX_CONTEXTS)
    return ftp_fail(err, n, "every context is in use (free one, or build with a larger OUT_MAX_CONTEXTS)", 4);
  int own = !arena;
  if (own) {
#ifdef FTP_NO_STATIC_ARENA
    return ftp_fail(err, n, "built without a static arena (OUT_NO_STATIC_ARENA): pass one to OUT_init_with_arena", 4);
#else
    if (ftp_static_arena_taken)
      return ftp_fail(err, n, "the static arena is in use: pass another to OUT_init_with_arena", 4);
    ftp_static_arena_taken = 1;
    arena = ftp_static_arena;
#endif
  }
  ftp_contexts[slot].arena = (unsigned char *)arena;
  ftp_contexts[slot].static_arena = own;
  ftp_contexts[slot].in_use = 1;
  *out = &ftp_contexts[slot];
  return 0;
}

int FTP_API(init)(ftp_ctx **out, const char *path, char *err, size_t n) {
  return FTP_API(init_with_arena)(out, path, NULL, err, n);
}

int FTP_API(run)(ftp_ctx *ctx, const void *const *inputs, void *const *outputs) {
  return ftp_calls(0, ctx->arena, ftp_weights, inputs, outputs);
}

#endif
