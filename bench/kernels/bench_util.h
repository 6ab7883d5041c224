/* What the kernel benchmarks share: a monotonic clock, 64-byte aligned buffers, a
 * deterministic fill of floats in [-0.5, 0.5), and the median time of a run. */
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

/* Set (bench_cold_bytes > 0): before each timed run, this many bytes of another buffer are
 * written, so that the run finds its operands in DRAM, as a call does in a whole model whose
 * weights are larger than the caches (the writes are not timed). */
static size_t bench_cold_bytes;
static inline void bench_evict(void) {
  static unsigned char *buf;
  if (!bench_cold_bytes) return;
  if (!buf && !(buf = (unsigned char *)malloc(bench_cold_bytes))) { fprintf(stderr, "out of memory\n"); exit(1); }
  for (size_t i = 0; i < bench_cold_bytes; i += 64) buf[i] = (unsigned char)(buf[i] + 1);
}

/* Median time of one run of fn over at least 5 runs and `secs` seconds (cold: see above). */
typedef void (*run_fn)(void *);
static inline double median_time(run_fn fn, void *arg, double secs) {
  double t[4096];
  int n = 0;
  fn(arg);
  for (double start = now(); n < 4096 && (n < 5 || now() - start < secs);) {
    bench_evict();
    double t0 = now();
    fn(arg);
    t[n++] = now() - t0;
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
  return t[n / 2];
}

static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
#endif
