/* The conv kernels compiled without AVX-512 (tests/CMakeLists.txt builds this file with
 * -mno-avx512f where the compiler takes it): the blocked layout's generic paths (the pointwise^T
 * tile's blocked store, the depthwise conv's plain loops over a blocked X) that other targets
 * run, for test_conv_blocked.c to check beside its native build. */
#include "conv.h"

int conv_portable_has_avx512(void) {
#ifdef __AVX512F__
  return 1;
#else
  return 0;
#endif
}

void conv_portable_f32(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  ft_conv_f32(p, f, in, out, scratch);
}

size_t conv_portable_pack_w(const int64_t *p, const void *src, void *dst) { return ft_conv_pack_w(p, src, dst); }

void conv_portable_set_threads(int n) { ft_set_threads(n); }
