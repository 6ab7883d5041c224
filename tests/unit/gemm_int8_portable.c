/* The int8 GEMM core compiled without its VNNI micro-kernel (FT_I8_FORCE_PORTABLE), for
 * test_gemm_int8.c to run beside its own native build of it: the two must agree exactly. */
#define FT_I8_FORCE_PORTABLE 1
#include "gemm_int8.h"

const char *gemm_int8_portable_path(void) { return FT_I8_PATH; }

void gemm_int8_portable(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  ft_gemm_int8(p, f, in, out, scratch);
}

size_t gemm_int8_portable_pack(const int64_t *p, const void *src, void *dst) { return ft_i8_pack_b(p, src, dst); }

void gemm_int8_portable_set_threads(int n) { ft_set_threads(n); }
