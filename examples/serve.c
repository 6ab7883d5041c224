/* Serving requests from several threads with one model handle (docs/api.md).
 *
 * A compiled model's shared library (ftaxc --shared --name model) holds the API model_*; this
 * program opens the weights once, gives each worker thread a context of its own (an arena), and
 * lets the workers take requests from a queue. Here the requests are made up: every input filled
 * with a pattern of the request's number; each answer is checked against the same request run
 * alone first, so the program also shows that concurrent runs compute what a single one does.
 *
 *   ftaxc tests/models/bert_tiny/model.onnx --dim batch=1 --dim seq=8 --shared --name model -o build/examples/model
 *   cc -O2 -pthread -Ibuild/examples examples/serve.c -Lbuild/examples -lmodel -Wl,-rpath,build/examples -o build/examples/serve
 *   build/examples/serve build/examples/model.weights 4 400
 *
 * Exit: 0 every answer right, 1 usage, 2 the weights refused, 3 a wrong answer, 4 out of memory. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

#define DISTINCT 8 /* requests differ in one of this many ways */

typedef struct server {
  model_model *model;
  int n_in, n_out;
  size_t in_bytes[64], out_bytes[64];
  void *inputs[DISTINCT][64]; /* the request kinds' inputs */
  void *expect[DISTINCT][64]; /* and their answers, computed alone */
  pthread_mutex_t mu;
  int next, total, wrong;
} server;

static size_t io_bytes(int is_output, int i, int *dtype) {
  int rank;
  const int64_t *dims;
  model_io_info(is_output, i, NULL, dtype, &rank, &dims);
  size_t n = *dtype == 7 || *dtype == 11 || *dtype == 13 ? 8 : *dtype == 1 || *dtype == 6 || *dtype == 12 ? 4
             : *dtype == 10 || *dtype == 16 || *dtype == 4 || *dtype == 5 ? 2 : 1;
  for (int d = 0; d < rank; d++) n *= (size_t)dims[d];
  return n;
}

/* 64-byte aligned, with room past the end, as the generated program's own buffers are. */
static void *buffer(size_t bytes) { return aligned_alloc(64, (bytes + 127) & ~(size_t)63); }

/* Request kind k's inputs: floats k/8 + i/1000, integers 1 (a token id, a mask of ones) but
 * for the first element, which is k. */
static void fill(void *buf, size_t bytes, int dtype, int k) {
  memset(buf, 0, bytes);
  if (dtype == 1)
    for (size_t i = 0; i < bytes / 4; i++) ((float *)buf)[i] = (float)k / 8 + (float)(i % 1000) / 1000;
  else if (dtype == 7)
    for (size_t i = 0; i < bytes / 8; i++) ((int64_t *)buf)[i] = i ? 1 : k;
  else if (dtype == 6)
    for (size_t i = 0; i < bytes / 4; i++) ((int32_t *)buf)[i] = i ? 1 : k;
}

static void *worker(void *arg) {
  server *s = arg;
  char err[256];
  model_ctx *ctx;
  if (model_ctx_new(&ctx, s->model, NULL, err, sizeof err)) { fprintf(stderr, "context: %s\n", err); exit(4); }
  model_ctx_set_threads(ctx, 1); /* throughput: one thread per request, as many requests as workers */
  void *out[64];
  for (int i = 0; i < s->n_out; i++) out[i] = buffer(s->out_bytes[i]);
  for (;;) {
    pthread_mutex_lock(&s->mu);
    int r = s->next < s->total ? s->next++ : -1;
    pthread_mutex_unlock(&s->mu);
    if (r < 0) break;
    int k = r % DISTINCT;
    model_run(ctx, (const void *const *)s->inputs[k], out);
    int bad = 0;
    for (int i = 0; i < s->n_out; i++) bad |= memcmp(out[i], s->expect[k][i], s->out_bytes[i]) != 0;
    if (bad) {
      pthread_mutex_lock(&s->mu);
      s->wrong++;
      pthread_mutex_unlock(&s->mu);
    }
  }
  for (int i = 0; i < s->n_out; i++) free(out[i]);
  model_ctx_free(ctx);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s MODEL.weights [THREADS] [REQUESTS]\n", argv[0]); return 1; }
  int threads = argc > 2 ? atoi(argv[2]) : 4, total = argc > 3 ? atoi(argv[3]) : 400;
  if (threads < 1 || threads > 256 || total < 0) { fprintf(stderr, "THREADS 1-256, REQUESTS >= 0\n"); return 1; }
  static server s;
  char err[256];
  if (model_model_open(&s.model, argv[1], err, sizeof err)) { fprintf(stderr, "%s\n", err); return 2; }
  s.n_in = model_num_inputs();
  s.n_out = model_num_outputs();
  if (s.n_in > 64 || s.n_out > 64) { fprintf(stderr, "more than 64 inputs or outputs\n"); return 1; }
  /* the expected answers: each request kind run once, alone, on a context of its own */
  model_ctx *solo;
  if (model_ctx_new(&solo, s.model, NULL, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 4; }
  for (int k = 0; k < DISTINCT; k++) {
    int dtype;
    for (int i = 0; i < s.n_in; i++) {
      s.in_bytes[i] = io_bytes(0, i, &dtype);
      s.inputs[k][i] = buffer(s.in_bytes[i]);
      fill(s.inputs[k][i], s.in_bytes[i], dtype, k);
    }
    for (int i = 0; i < s.n_out; i++) s.expect[k][i] = buffer(s.out_bytes[i] = io_bytes(1, i, &dtype));
    model_run(solo, (const void *const *)s.inputs[k], s.expect[k]);
  }
  model_ctx_free(solo);
  pthread_mutex_init(&s.mu, NULL);
  s.total = total;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t t[256];
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, &s);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("%d requests on %d threads (one model handle, %d contexts of %zu bytes): %.1f requests/s, %d wrong\n",
         total, threads, threads, model_arena_bytes(), sec > 0 ? total / sec : 0.0, s.wrong);
  model_model_close(s.model);
  return s.wrong ? 3 : 0;
}
