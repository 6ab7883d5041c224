/* Buffers for the kernel tests (test_gemm.c, test_bf16.c): deterministic random floats in [-1, 1)
 * and 64-byte aligned scratch with room for a vector read past the end. */
#ifndef FTAX_KERNEL_BUFS_H
#define FTAX_KERNEL_BUFS_H

#include <stdint.h>
#include <stdlib.h>

static unsigned rng_state = 12345u;
static inline float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static inline float *rand_buf(int64_t n) {
  float *x = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; i++) x[i] = frand();
  return x;
}
static inline void *scratch_buf(size_t bytes) { return aligned_alloc(64, (bytes + 64 + 63) & ~(size_t)63); }

#endif
