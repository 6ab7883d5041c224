/* The fp32 FMA peak of this machine, per core and for N threads: each thread runs an unrolled
 * loop of independent vector FMAs (GCC vector extensions: AVX-512 with -march=native) for about
 * a second. The ceiling that "% of peak" in bench/zoo_check.sh divides by.
 *   peak [threads]          prints: peak_gflops <threads> <GFLOP/s>
 * A benchmark: prints, asserts nothing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

#if defined(__AVX512F__)
#define PEAK_LANES 16
#elif defined(__AVX__)
#define PEAK_LANES 8
#else
#define PEAK_LANES 4
#endif
#define PEAK_ACC 12 /* independent accumulators: enough to cover the FMA latency */

typedef float vec __attribute__((vector_size(4 * PEAK_LANES)));

typedef struct {
  double gflops;
  float sink;
} peak_result;

static void *peak_thread(void *arg) {
  peak_result *r = arg;
  vec acc[PEAK_ACC], a, b;
  for (int i = 0; i < PEAK_LANES; i++) { a[i] = 0.999f; b[i] = 1e-7f * (float)i; }
  for (int j = 0; j < PEAK_ACC; j++) acc[j] = b * (float)j;
  long iters = 1 << 20, done = 0;
  double t0 = now(), t;
  do {
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 12
      for (int j = 0; j < PEAK_ACC; j++) acc[j] = acc[j] * a + b;
      __asm__ volatile("" : "+x"(a)); /* keep the loop from being folded */
    }
    done += iters;
    t = now() - t0;
  } while (t < 1.0);
  float s = 0;
  for (int j = 0; j < PEAK_ACC; j++)
    for (int i = 0; i < PEAK_LANES; i++) s += acc[j][i];
  r->sink = s;
  r->gflops = 2.0 * PEAK_LANES * PEAK_ACC * (double)done / t * 1e-9;
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1;
  if (n < 1 || n > 256) { fprintf(stderr, "usage: peak [threads 1..256]\n"); return 1; }
  pthread_t th[256];
  peak_result r[256];
  for (int i = 0; i < n; i++)
    if (pthread_create(&th[i], NULL, peak_thread, &r[i])) { fprintf(stderr, "peak: cannot start a thread\n"); return 1; }
  double total = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(th[i], NULL);
    total += r[i].gflops;
  }
  printf("peak_gflops %d %.1f\n", n, total);
  return 0;
}
