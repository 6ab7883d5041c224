/* Read bandwidth of this machine, the ceiling of a small-M GEMM (which streams its weights):
 * each thread sums its own part of a buffer with vector loads, over and over, for about a
 * second. A buffer bigger than the last-level cache gives the DRAM bandwidth; one the size of a
 * weight matrix gives the bandwidth a kernel benchmark that calls the same GEMM again and
 * again sees (the matrix stays in L2/L3).
 *   bandwidth [threads] [KiB]       prints: read_gbs <threads> <KiB> <GB/s>
 * A benchmark: prints, asserts nothing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

typedef float vec __attribute__((vector_size(64)));

typedef struct {
  const vec *buf;
  size_t nvec;
  double bytes, secs;
  float sink;
} bw_job;

static void *bw_thread(void *arg) {
  bw_job *j = arg;
  vec acc[8];
  memset(acc, 0, sizeof acc);
  double t0 = now(), t;
  long passes = 0;
  do {
    for (size_t i = 0; i + 8 <= j->nvec; i += 8)
#pragma GCC unroll 8
      for (int u = 0; u < 8; u++) acc[u] += j->buf[i + u];
    passes++;
    t = now() - t0;
  } while (t < 1.0);
  float s = 0;
  for (int u = 0; u < 8; u++)
    for (int l = 0; l < 16; l++) s += acc[u][l];
  j->sink = s;
  j->bytes = (double)passes * (double)(j->nvec / 8 * 8) * sizeof(vec);
  j->secs = t;
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1;
  long kib = argc > 2 ? atol(argv[2]) : 512 * 1024;
  if (n < 1 || n > 256 || kib < 1) { fprintf(stderr, "usage: bandwidth [threads 1..256] [KiB >= 1]\n"); return 1; }
  size_t per = ((size_t)kib * 1024 / (size_t)n + 511) / 512 * 512; /* bytes per thread, whole 8-vector runs */
  pthread_t th[256];
  bw_job jobs[256];
  for (int i = 0; i < n; i++) {
    vec *b = aligned_alloc(64, per);
    if (!b) { fprintf(stderr, "bandwidth: out of memory\n"); return 1; }
    memset(b, 1, per);
    jobs[i] = (bw_job){b, per / sizeof(vec), 0, 0, 0};
  }
  for (int i = 0; i < n; i++)
    if (pthread_create(&th[i], NULL, bw_thread, &jobs[i])) { fprintf(stderr, "bandwidth: cannot start a thread\n"); return 1; }
  double gbs = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(th[i], NULL);
    gbs += jobs[i].bytes / jobs[i].secs * 1e-9;
  }
  printf("read_gbs %d %ld %.1f\n", n, kib, gbs);
  return 0;
}
