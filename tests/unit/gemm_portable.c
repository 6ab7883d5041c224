/* The fp32 GEMM core compiled without AVX-512 (tests/CMakeLists.txt builds this file with
 * -mno-avx512f where the compiler takes it): the generic vector code that other targets (the
 * cross and bare-metal builds) run, for test_gemm.c to check beside its own native build. */
#include "gemm.h"

int gemm_portable_has_avx512(void) {
#ifdef __AVX512F__
  return 1;
#else
  return 0;
#endif
}

void gemm_portable_matmul(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  ft_matmul_f32(p, f, in, out, scratch);
}

size_t gemm_portable_pack_b(const int64_t *p, const void *src, void *dst) { return ft_mm_pack_b(p, src, dst); }
