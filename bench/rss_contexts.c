/* Resident memory of K contexts on one model handle, against K one-context OUT_init's (each its
 * own copy of the weights), for a library built with ftaxc --shared --name model.
 *
 *   ftaxc MODEL.onnx --dim ... --shared --name model -o DIR/model
 *   cc -O2 -pthread -IDIR bench/rss_contexts.c -LDIR -lmodel -Wl,-rpath,DIR -o DIR/rss
 *   DIR/rss DIR/model.weights 8 shared     # one handle, 8 contexts
 *   DIR/rss DIR/model.weights 8 separate   # 8 x model_init
 *
 * Every context runs once on zero inputs (so its arena is touched), then the program prints
 * VmRSS and VmHWM from /proc/self/status, in MiB. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static long status_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, key, strlen(key))) v = atol(line + strlen(key) + 1);
  if (f) fclose(f);
  return v;
}

static size_t io_bytes(int is_output, int i) {
  int dtype, rank;
  const int64_t *dims;
  model_io_info(is_output, i, NULL, &dtype, &rank, &dims);
  size_t n = dtype == 7 || dtype == 11 ? 8 : dtype == 1 || dtype == 6 ? 4 : dtype == 10 ? 2 : 1;
  for (int d = 0; d < rank; d++) n *= (size_t)dims[d];
  return n;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s MODEL.weights K shared|separate\n", argv[0]); return 1; }
  int k = atoi(argv[2]), shared = !strcmp(argv[3], "shared");
  if (k < 1 || k > 256) return 1;
  void *in[64], *out[64];
  for (int i = 0; i < model_num_inputs(); i++) in[i] = calloc(1, io_bytes(0, i) + 128);
  for (int i = 0; i < model_num_outputs(); i++) out[i] = calloc(1, io_bytes(1, i) + 128);
  char err[256];
  long base = status_kib("VmRSS:");
  model_model *m = NULL;
  if (shared && model_model_open(&m, argv[1], err, sizeof err)) { fprintf(stderr, "%s\n", err); return 2; }
  model_ctx *ctx[256];
  for (int c = 0; c < k; c++) {
    int rc = shared ? model_ctx_new(&ctx[c], m, NULL, err, sizeof err) : model_init(&ctx[c], argv[1], err, sizeof err);
    if (rc) { fprintf(stderr, "%s\n", err); return rc; }
    model_ctx_set_threads(ctx[c], 1);
    model_run(ctx[c], (const void *const *)in, out);
  }
  printf("%s, %d context%s: VmRSS %.1f MiB (%.1f MiB over the process before), VmHWM %.1f MiB; "
         "weights %.1f MiB, arena %.1f MiB each\n",
         shared ? "one handle" : "separate model_init", k, k == 1 ? "" : "s", status_kib("VmRSS:") / 1024.0,
         (status_kib("VmRSS:") - base) / 1024.0, status_kib("VmHWM:") / 1024.0, MODEL_WEIGHT_BYTES / 1048576.0,
         model_arena_bytes() / 1048576.0);
  for (int c = 0; c < k; c++) model_free(ctx[c]);
  model_model_close(m);
  return 0;
}
