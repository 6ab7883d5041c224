/* Indexed reads and writes: GatherND, ScatterND, ScatterElements (and the older Scatter).
 *
 * Indices may be negative (counted from the end of their dim); an index still out of range after
 * that is skipped (scatter) or reads zeros (gather) instead of touching memory it should not.
 * The scatters copy data to the output first unless they run in place, then write updates in
 * order, so with reduction 'none' a repeated index keeps the last update.
 *
 * Reductions: 0 none, 1 add, 2 mul, 3 max, 4 min. Kernels for 'none' move bytes (any dtype, by
 * element size); the reducing ones are typed. */
#ifndef FT_SCATTER_H
#define FT_SCATTER_H

#include <stdint.h>
#include <string.h>

#include "tensor.h"

static inline int64_t ft_index_at(const void *ind, int wide, int64_t i) {
  return wide ? ((const int64_t *)ind)[i] : (int64_t)((const int32_t *)ind)[i];
}

/* The element offset a row of k indices names in dims/strides; -1 when out of range. */
static inline int64_t ft_nd_offset(const int64_t *ind, int k, const int64_t *dims, const int64_t *strides) {
  int64_t off = 0;
  for (int j = 0; j < k; j++) {
    int64_t v = ind[j];
    if (v < 0) v += dims[j];
    if (v < 0 || v >= dims[j]) return -1;
    off += v * strides[j];
  }
  return off;
}

/* GatherND. p: [batches, rows per batch, k, slice bytes, batch bytes, dims[k], strides[k] (in
 * slices)]; indices are int64, k per row; the output is rows of slice bytes. */
static void ft_gathernd(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch) {
  (void)f; (void)scratch;
  int64_t nb = p[0], nr = p[1], sb = p[3], bb = p[4];
  int k = (int)p[2];
  const int64_t *dims = p + 5, *st = p + 5 + k, *ind = (const int64_t *)in[1];
  const char *X = (const char *)in[0];
  char *Y = (char *)out[0];
  for (int64_t b = 0; b < nb; b++)
    for (int64_t r = 0; r < nr; r++, ind += k, Y += sb) {
      int64_t off = ft_nd_offset(ind, k, dims, st);
      if (off < 0) memset(Y, 0, (size_t)sb);
      else memcpy(Y, X + b * bb + off * sb, (size_t)sb);
    }
}

/* ScatterND. p: [reduction, rows, k, slice elements, dims[k], strides[k] (in slices)]; in: data,
 * indices (int64), updates. */
#define FT_SCATTERND(S, T, APPLY)                                                                \
  static void ft_scatternd_##S(const int64_t *p, const double *f, const void *const *in,        \
                               void *const *out, void *scratch) {                                \
    (void)f; (void)scratch;                                                                      \
    int red = (int)p[0], k = (int)p[2];                                                          \
    int64_t nr = p[1], se = p[3], total = 1;                                                     \
    const int64_t *dims = p + 4, *st = p + 4 + k, *ind = (const int64_t *)in[1];                 \
    for (int j = 0; j < k; j++) total *= dims[j];                                                \
    const T *U = (const T *)in[2];                                                               \
    T *Y = (T *)out[0];                                                                          \
    (void)red;                                                                                   \
    if (in[0] != out[0]) memcpy(Y, in[0], (size_t)(total * se) * sizeof(T));                     \
    for (int64_t r = 0; r < nr; r++, ind += k, U += se) {                                        \
      int64_t off = ft_nd_offset(ind, k, dims, st);                                              \
      if (off < 0) continue;                                                                     \
      T *y = Y + off * se;                                                                       \
      APPLY;                                                                                     \
    }                                                                                            \
  }

/* ScatterElements. p: [reduction, rank, axis, index is int64, dims of indices[rank], output
 * dims[rank]]; in: data, indices, updates (the shape of indices). */
#define FT_SCATTER_ELEMENTS(S, T, APPLY1)                                                        \
  static void ft_scatter_elements_##S(const int64_t *p, const double *f, const void *const *in, \
                                      void *const *out, void *scratch) {                         \
    (void)f; (void)scratch;                                                                      \
    int red = (int)p[0], r = (int)p[1], axis = (int)p[2], wide = (int)p[3];                      \
    const int64_t *id = p + 4, *od = p + 4 + r;                                                  \
    int64_t ost[FT_MAX_RANK], acc = 1, n = 1, idx[FT_MAX_RANK] = {0};                            \
    for (int d = r - 1; d >= 0; d--) { ost[d] = acc; acc *= od[d]; n *= id[d]; }                 \
    const T *U = (const T *)in[2];                                                               \
    T *Y = (T *)out[0];                                                                          \
    (void)red;                                                                                   \
    if (in[0] != out[0]) memcpy(Y, in[0], (size_t)acc * sizeof(T));                              \
    for (int64_t e = 0; e < n; e++) {                                                            \
      int64_t v = ft_index_at(in[1], wide, e), off = 0;                                          \
      if (v < 0) v += od[axis];                                                                  \
      if (v >= 0 && v < od[axis]) {                                                              \
        for (int d = 0; d < r; d++) off += (d == axis ? v : idx[d]) * ost[d];                    \
        T *y = Y + off;                                                                          \
        const T u = U[e];                                                                        \
        APPLY1;                                                                                  \
      }                                                                                          \
      for (int d = r - 1; d >= 0; d--) {                                                         \
        if (++idx[d] < id[d]) break;                                                             \
        idx[d] = 0;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }

#define FT_SCATTER_COPY_SLICE memcpy(y, U, (size_t)se * sizeof(*y))
#define FT_SCATTER_REDUCE_SLICE                                                                  \
  for (int64_t i = 0; i < se; i++) {                                                             \
    __typeof__(*y) *y1 = y + i; /* the macro is expanded outside the kernel's T */               \
    const __typeof__(*y) u = U[i];                                                               \
    FT_SCATTER_REDUCE_ONE;                                                                       \
  }
#define FT_SCATTER_REDUCE_ONE                                                                    \
  switch (red) {                                                                                 \
  case 1: *y1 = (__typeof__(*y1))(*y1 + u); break;                                              \
  case 2: *y1 = (__typeof__(*y1))(*y1 * u); break;                                              \
  case 3: if (u > *y1) *y1 = u; break;                                                           \
  case 4: if (u < *y1) *y1 = u; break;                                                           \
  default: *y1 = u; break;                                                                       \
  }

#define FT_SCATTER_SIZES(X) X(1, uint8_t) X(2, uint16_t) X(4, uint32_t) X(8, uint64_t)
#define FT_SCATTER_TYPES(X)                                                                      \
  X(f32, float) X(f64, double) X(i8, int8_t) X(i16, int16_t) X(i32, int32_t) X(i64, int64_t)    \
  X(u8, uint8_t) X(u16, uint16_t) X(u32, uint32_t) X(u64, uint64_t)

#define FT_SCATTER_BY_SIZE(N, T)                                                                 \
  FT_SCATTERND(copy_##N, T, FT_SCATTER_COPY_SLICE)                                               \
  FT_SCATTER_ELEMENTS(copy_##N, T, *y = u)
FT_SCATTER_SIZES(FT_SCATTER_BY_SIZE)
#undef FT_SCATTER_BY_SIZE

#define FT_SCATTER_BY_TYPE(S, T)                                                                 \
  FT_SCATTERND(S, T, FT_SCATTER_REDUCE_SLICE)                                                    \
  FT_SCATTER_ELEMENTS(S, T, { T *y1 = y; FT_SCATTER_REDUCE_ONE; })
FT_SCATTER_TYPES(FT_SCATTER_BY_TYPE)
#undef FT_SCATTER_BY_TYPE

/* MaxUnpool. p: [rank, input elements, dims the indices refer to[rank], output dims[rank]]; in:
 * X, indices (int64, flat over the shape MaxPool's input had). The output is zeros but where an
 * index puts an input element; an output_shape larger than that shape keeps the coordinates. */
#define FT_MAXUNPOOL(N, T)                                                                       \
  static void ft_maxunpool_##N(const int64_t *p, const double *f, const void *const *in,        \
                               void *const *out, void *scratch) {                                \
    (void)f; (void)scratch;                                                                      \
    int r = (int)p[0];                                                                           \
    int64_t n = p[1], m = 1, lim = 1;                                                            \
    const int64_t *dd = p + 2, *od = p + 2 + r;                                                  \
    for (int d = 0; d < r; d++) { m *= od[d]; lim *= dd[d]; }                                    \
    const T *X = (const T *)in[0];                                                               \
    const int64_t *I = (const int64_t *)in[1];                                                   \
    T *Y = (T *)out[0];                                                                          \
    memset(Y, 0, (size_t)m * sizeof(T));                                                         \
    for (int64_t e = 0; e < n; e++) {                                                            \
      int64_t v = I[e], at = 0, mul = 1, ok = v >= 0 && v < lim;                                 \
      for (int d = r - 1; d >= 0 && ok; d--) {                                                   \
        int64_t q = v % dd[d];                                                                   \
        v /= dd[d];                                                                              \
        ok = q < od[d];                                                                          \
        at += q * mul;                                                                           \
        mul *= od[d];                                                                            \
      }                                                                                          \
      if (ok) Y[at] = X[e];                                                                      \
    }                                                                                            \
  }
FT_SCATTER_SIZES(FT_MAXUNPOOL)
#undef FT_MAXUNPOOL

#endif
