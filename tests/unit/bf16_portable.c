/* The bf16 kernels compiled without AVX512_BF16 (tests/CMakeLists.txt builds this file with
 * -mno-avx512bf16), for test_bf16.c to run beside its own native build of them. */
#include "conv_bf16.h"

const char *bf16_portable_path(void) { return FT_BF16_PATH; }

void bf16_portable_matmul(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  ft_matmul_bf16(p, f, in, out, scratch);
}

void bf16_portable_conv(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  ft_conv_bf16(p, f, in, out, scratch);
}
