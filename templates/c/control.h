/* Control flow (compiler/passes/branch.c): the merge at the end of an If whose condition is
 * computed at run time. Both branches are planned ahead of time; only the one taken ran.
 *
 *   ft_if_merge  p: [bytes]; in: [cond (bool), then_value, else_value]; out[0] = the value of the
 *                branch that ran (the other input was not written and is not read) */
#ifndef FT_CONTROL_H
#define FT_CONTROL_H

#include "tensor.h"

static void ft_if_merge(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  (void)f; (void)scratch;
  const void *src = *(const unsigned char *)in[0] ? in[1] : in[2];
  if (out[0] != src) memmove(out[0], src, (size_t)p[0]);
}

#endif
