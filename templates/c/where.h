/* Where (select with three-way broadcasting) per element size.
 *
 * ft_where_N: p from ft_plan_broadcast over (condition, x, y); y[i] = cond ? x : y.
 */
#ifndef FT_WHERE_H
#define FT_WHERE_H

#include "binary.h"
#include "tensor.h"

#define FT_WHERE(N, T)                                                                           \
  static void ft_where_##N(const int64_t *p, const double *f, const void *const *in,            \
                           void *const *out, void *scratch) {                                    \
    (void)f; (void)scratch;                                                                      \
    const uint8_t *C = (const uint8_t *)in[0];                                                   \
    const T *A = (const T *)in[1], *B = (const T *)in[2];                                        \
    T *Y = (T *)out[0];                                                                          \
    FT_BCAST_LOOP(p, 3, {                                                                        \
      const uint8_t *c = C + off[0];                                                             \
      const T *a = A + off[1];                                                                   \
      const T *b = B + off[2];                                                                   \
      T *y = Y + o * inner;                                                                      \
      if (st[0] && st[1] && st[2])                                                               \
        for (int64_t i = 0; i < inner; i++) y[i] = c[i] ? a[i] : b[i];                           \
      else                                                                                       \
        for (int64_t i = 0; i < inner; i++)                                                      \
          y[i] = c[i * st[0]] ? a[i * st[1]] : b[i * st[2]];                                     \
    });                                                                                          \
  }
FT_WHERE(1, uint8_t)
FT_WHERE(2, uint16_t)
FT_WHERE(4, uint32_t)
FT_WHERE(8, uint64_t)
#undef FT_WHERE

#endif
