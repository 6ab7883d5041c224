/* What the kernel benchmarks share: a monotonic clock, 64-byte aligned buffers, and a
 * deterministic fill of floats in [-0.5, 0.5). */
#ifndef FTAX_BENCH_UTIL_H
#define FTAX_BENCH_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rounded up to 64 bytes, with 64 more: a kernel's last vector may reach past the end. */
static inline void *alloc(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 127) & ~(size_t)63);
  if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
  return p;
}

static inline void fill(float *x, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
  }
}
#endif
