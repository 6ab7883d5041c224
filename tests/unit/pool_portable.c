/* The pooling kernels compiled without AVX-512 (tests/CMakeLists.txt builds this file with
 * -mno-avx512f where the compiler takes it): the plain paths that other targets (the cross and
 * bare-metal builds) run, for test_pool.c to check beside its own native build. */
#include "pool.h"

int pool_portable_has_avx512(void) {
#ifdef __AVX512F__
  return 1;
#else
  return 0;
#endif
}

void pool_portable_maxpool(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  ft_maxpool_f32(p, f, in, out, scratch);
}

void pool_portable_global(const int64_t *p, const double *f, const void *const *in, void *const *out, int kind) {
  ft_global_pool_f32(p, f, in, out, kind);
}
