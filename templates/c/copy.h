/* Byte copy: views (Reshape, Squeeze...) that must land in their own buffer, e.g. an output. */
#ifndef FT_COPY_H
#define FT_COPY_H

#include "tensor.h"

static void ft_copy_bytes(const int64_t *p, const double *f, const void *const *in, void *const *out,
                          void *scratch) {
  (void)f; (void)scratch;
  if (out[0] != in[0]) memmove(out[0], in[0], (size_t)p[0]);
}

#endif
