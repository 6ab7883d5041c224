/* Overflow-checked arithmetic for output shapes computed from attributes and constant inputs
 * (repeats, block sizes, pads, strides...): a hostile model can make the product of two sane-
 * looking numbers overflow int64 before the size check after inference sees it. Each helper
 * fails the node with FT_EUNSUPPORTED (the same class as a tensor over the size limit) and
 * names what was being computed. Included by the op files that need it, after op.h. */
#ifndef FTAX_OPS_DIMMATH_H
#define FTAX_OPS_DIMMATH_H

#include <stdint.h>

#include "op.h"

static inline int ft_dim_mul(ft_opctx *c, int64_t a, int64_t b, int64_t *out, const char *what) {
  if (__builtin_mul_overflow(a, b, out))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is too large (%lld x %lld does not fit in 64 bits)", what,
                         (long long)a, (long long)b);
  return 0;
}

static inline int ft_dim_add(ft_opctx *c, int64_t a, int64_t b, int64_t *out, const char *what) {
  if (__builtin_add_overflow(a, b, out))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is too large (%lld + %lld does not fit in 64 bits)", what,
                         (long long)a, (long long)b);
  return 0;
}

#endif
