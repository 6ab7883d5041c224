/* Data movement kernels: they move elements without looking at their values, so each is written
 * once per element size (1, 2, 4, 8 bytes) or on plain bytes, never per dtype.
 *
 *   ft_copy_nd_N      y = x viewed through strides: Transpose, Slice, Expand, Tile,
 *                     DepthToSpace, SpaceToDepth (the plan turns each into dims + strides)
 *   ft_concat         byte rows of every input, one after the other
 *   ft_split          the inverse
 *   ft_gather_i32/i64 rows picked by index (Gather); an index out of range yields zeros
 *   ft_gather_elements_i32/i64_N
 *   ft_pad_N          constant / edge / reflect / wrap padding
 *   ft_fill_N         every element the same bit pattern (ConstantOfShape)
 *   ft_dropout_copy   inference Dropout: y = x and a mask of ones
 *   ft_trilu_N, ft_onehot_N, ft_range_<type> */
#ifndef FT_MOVEMENT_H
#define FT_MOVEMENT_H

#include <string.h>

#include "parallel.h"
#include "tensor.h"

/* the most dims a strided copy walks: Tile of a rank-8 tensor doubles the rank */
#define FT_ND_MAX 16

#define FT_MOVE_SIZES(X) X(1, uint8_t) X(2, uint16_t) X(4, uint32_t) X(8, uint64_t)

/* Strided copy. p: [rank, base, dims[rank], strides[rank]] in elements; the output is dense in
 * dims order and element i of it is x[base + sum(idx_d * strides_d)]. The plan has dropped size-1
 * dims and merged dims that are contiguous in the input, so the innermost loop is long; an inner
 * stride of 1 is a memcpy of a run, and a pair of swapped inner dims (a 2-D transpose, or the
 * last two dims of a batched one) goes through cache-sized tiles. */
#define FT_COPY_ND(N, T)                                                                         \
  static void ft_copy_nd_##N(const int64_t *p, const double *f, const void *const *in,          \
                             void *const *out, void *scratch) {                                  \
    (void)f; (void)scratch;                                                                      \
    int r = (int)p[0];                                                                           \
    const T *X = (const T *)in[0] + p[1];                                                        \
    T *Y = (T *)out[0];                                                                          \
    const int64_t *d = p + 2, *s = p + 2 + r;                                                    \
    if (r == 0) { Y[0] = X[0]; return; }                                                         \
    int tiled = r >= 2 && s[r - 2] == 1 && s[r - 1] != 1;                                        \
    int nloop = tiled ? r - 2 : r - 1; /* dims walked by the odometer */                         \
    int64_t outer = 1, idx[FT_ND_MAX] = {0}, off = 0;                                            \
    for (int i = 0; i < nloop; i++) outer *= d[i];                                               \
    int64_t inner = d[r - 1], is = s[r - 1];                                                     \
    int64_t rows = tiled ? d[r - 2] : 1, block = rows * inner;                                   \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      const T *x = X + off;                                                                      \
      T *y = Y + o * block;                                                                      \
      if (tiled) { /* y[i][j] = x[i + j * is] */                                                 \
        for (int64_t i0 = 0; i0 < rows; i0 += 32)                                                \
          for (int64_t j0 = 0; j0 < inner; j0 += 32) {                                           \
            int64_t i1 = i0 + 32 < rows ? i0 + 32 : rows, j1 = j0 + 32 < inner ? j0 + 32 : inner; \
            for (int64_t i = i0; i < i1; i++)                                                    \
              for (int64_t j = j0; j < j1; j++) y[i * inner + j] = x[i + j * is];                \
          }                                                                                      \
      } else if (is == 1) memcpy(y, x, (size_t)inner * sizeof(T));                               \
      else if (is == 0) { T v = x[0]; for (int64_t j = 0; j < inner; j++) y[j] = v; }            \
      else for (int64_t j = 0; j < inner; j++) y[j] = x[j * is];                                 \
      for (int k = nloop - 1; k >= 0; k--) {                                                     \
        off += s[k];                                                                             \
        if (++idx[k] < d[k]) break;                                                              \
        off -= s[k] * d[k];                                                                      \
        idx[k] = 0;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }
FT_MOVE_SIZES(FT_COPY_ND)
#undef FT_COPY_ND

/* Concat. p: [n, outer, bytes_0 .. bytes_{n-1}]: each of the outer rows of the output is row o of
 * input 0 (bytes_0 long), then row o of input 1, ... A large concat (a CNN's channel concat:
 * 1.5 MB in SqueezeNet's first fire module) is copied in FT_CONCAT_CHUNK pieces of the output
 * by the pool's threads: one thread does not fill the memory bandwidth. */
#define FT_CONCAT_CHUNK (64 * 1024)

typedef struct {
  const int64_t *p;
  const void *const *in;
  char *y;
  int64_t row, total;
} ft_concat_ctx;

/* Output bytes [lo, hi), each piece copied from the input row it lies in. */
static void ft_concat_bytes(const ft_concat_ctx *c, int64_t lo, int64_t hi) {
  int n = (int)c->p[0];
  int64_t o = lo / c->row, at = lo % c->row;
  int i = 0;
  while (at >= c->p[2 + i]) at -= c->p[2 + i++];
  while (lo < hi) {
    int64_t b = c->p[2 + i], len = b - at < hi - lo ? b - at : hi - lo;
    if (len > 0) memcpy(c->y + lo, (const char *)c->in[i] + (size_t)(o * b + at), (size_t)len);
    lo += len;
    at = 0;
    if (++i == n) { i = 0; o++; }
  }
}

static void ft_concat_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_concat_ctx *c = (const ft_concat_ctx *)ctx;
  int64_t b0 = lo * FT_CONCAT_CHUNK, b1 = hi * FT_CONCAT_CHUNK < c->total ? hi * FT_CONCAT_CHUNK : c->total;
  ft_concat_bytes(c, b0, b1);
}

static void ft_concat(const int64_t *p, const double *f, const void *const *in, void *const *out,
                      void *scratch) {
  (void)f; (void)scratch;
  int n = (int)p[0];
  int64_t row = 0;
  for (int i = 0; i < n; i++) row += p[2 + i];
  ft_concat_ctx c = {p, in, (char *)out[0], row, row * p[1]};
  if (c.total <= 0) return;
  int64_t chunks = (c.total + FT_CONCAT_CHUNK - 1) / FT_CONCAT_CHUNK;
  ft_parallel_for(chunks, chunks >= 4, ft_concat_run, &c);
}

/* Split. p: [n, outer, bytes_0 .. bytes_{n-1}]: the inverse of ft_concat. */
static void ft_split(const int64_t *p, const double *f, const void *const *in, void *const *out,
                     void *scratch) {
  (void)f; (void)scratch;
  int n = (int)p[0];
  int64_t outer = p[1];
  const char *x = (const char *)in[0];
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < n; i++) {
      size_t b = (size_t)p[2 + i];
      if (b && out[i]) memcpy((char *)out[i] + (size_t)o * b, x, b);
      x += b;
    }
}

/* Gather along an axis. p: [outer, axis_dim, n_indices, row_bytes]. Negative indices count from
 * the end; one still out of range gives a row of zeros rather than a read out of bounds (the
 * compiler rejects constant indices that are out of range). */
#define FT_GATHER(IS, TI)                                                                        \
  static void ft_gather_##IS(const int64_t *p, const double *f, const void *const *in,          \
                             void *const *out, void *scratch) {                                  \
    (void)f; (void)scratch;                                                                      \
    int64_t outer = p[0], dim = p[1], n = p[2];                                                  \
    size_t row = (size_t)p[3];                                                                   \
    const char *x = (const char *)in[0];                                                         \
    const TI *ind = (const TI *)in[1];                                                           \
    char *y = (char *)out[0];                                                                    \
    for (int64_t o = 0; o < outer; o++, x += (size_t)dim * row)                                  \
      for (int64_t i = 0; i < n; i++, y += row) {                                                \
        int64_t j = (int64_t)ind[i];                                                             \
        if (j < 0) j += dim;                                                                     \
        if (j < 0 || j >= dim) memset(y, 0, row);                                                \
        else memcpy(y, x + (size_t)j * row, row);                                                \
      }                                                                                          \
  }
FT_GATHER(i32, int32_t)
FT_GATHER(i64, int64_t)
#undef FT_GATHER

/* GatherElements. p: [rank, axis, dims of indices[rank], strides of data[rank], data dim on axis].
 * y[idx] = x[idx with idx[axis] replaced by indices[idx]]; out of range gives 0. */
#define FT_GATHER_ELEMENTS(N, T, IS, TI)                                                         \
  static void ft_gather_elements_##IS##_##N(const int64_t *p, const double *f,                   \
                                            const void *const *in, void *const *out,             \
                                            void *scratch) {                                     \
    (void)f; (void)scratch;                                                                      \
    int r = (int)p[0], axis = (int)p[1];                                                         \
    const int64_t *d = p + 2, *s = p + 2 + r;                                                    \
    int64_t dim = p[2 + 2 * r], n = 1, idx[FT_ND_MAX] = {0}, off = 0;                            \
    for (int k = 0; k < r; k++) n *= d[k];                                                       \
    const T *x = (const T *)in[0];                                                               \
    const TI *ind = (const TI *)in[1];                                                           \
    T *y = (T *)out[0];                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                            \
      int64_t j = (int64_t)ind[i];                                                               \
      if (j < 0) j += dim;                                                                       \
      y[i] = (j < 0 || j >= dim) ? (T)0 : x[off + j * s[axis]];                                  \
      for (int k = r - 1; k >= 0; k--) {                                                         \
        if (k != axis) off += s[k];                                                              \
        if (++idx[k] < d[k]) break;                                                              \
        if (k != axis) off -= s[k] * d[k];                                                       \
        idx[k] = 0;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }
#define FT_GATHER_ELEMENTS_BOTH(N, T) \
  FT_GATHER_ELEMENTS(N, T, i32, int32_t) FT_GATHER_ELEMENTS(N, T, i64, int64_t)
FT_MOVE_SIZES(FT_GATHER_ELEMENTS_BOTH)
#undef FT_GATHER_ELEMENTS_BOTH
#undef FT_GATHER_ELEMENTS

/* Fill. p: [n, bits]: every element is the low N bytes of bits (ConstantOfShape's value). */
#define FT_FILL(N, T)                                                                            \
  static void ft_fill_##N(const int64_t *p, const double *f, const void *const *in,             \
                          void *const *out, void *scratch) {                                     \
    (void)f; (void)in; (void)scratch;                                                            \
    T v, *y = (T *)out[0];                                                                       \
    memcpy(&v, &p[1], sizeof v);                                                                 \
    for (int64_t i = 0; i < p[0]; i++) y[i] = v;                                                 \
  }
FT_MOVE_SIZES(FT_FILL)
#undef FT_FILL

/* Dropout at inference. p: [bytes, mask elements, mask element size, bits of one]: y = x (a no-op
 * when the planner put y over x), and the optional mask is all ones (true). */
static void ft_dropout_copy(const int64_t *p, const double *f, const void *const *in,
                            void *const *out, void *scratch) {
  (void)f; (void)scratch;
  if (out[0] && out[0] != in[0]) memmove(out[0], in[0], (size_t)p[0]);
  if (out[1] && p[1]) {
    char *m = (char *)out[1];
    size_t es = (size_t)p[2];
    for (int64_t i = 0; i < p[1]; i++) memcpy(m + (size_t)i * es, &p[3], es);
  }
}

/* Where an input tensor's contents are read as an index or count, whatever its integer or
 * floating type. */
static inline int64_t ft_load_index(const void *x, int dtype, int64_t i) {
  switch (dtype) {
  case FT_INT64: return ((const int64_t *)x)[i];
  case FT_INT32: return ((const int32_t *)x)[i];
  case FT_INT16: return ((const int16_t *)x)[i];
  case FT_INT8: return ((const int8_t *)x)[i];
  case FT_UINT8: return ((const uint8_t *)x)[i];
  case FT_UINT16: return ((const uint16_t *)x)[i];
  case FT_UINT32: return ((const uint32_t *)x)[i];
  case FT_UINT64: return (int64_t)((const uint64_t *)x)[i];
  case FT_FLOAT: return (int64_t)((const float *)x)[i];
  case FT_DOUBLE: return (int64_t)((const double *)x)[i];
  default: return 0;
  }
}

/* Pad. p: [rank, mode, in dims[rank], out dims[rank], pads before[rank], value bits, value from
 * input 2]. mode: 0 constant, 1 reflect, 2 edge, 3 wrap. Pads may be negative (crop). Each output
 * row maps its outer coordinates to an input row once; the inner run is copied with memcpy. */
static inline int64_t ft_pad_map(int64_t c, int64_t n, int mode) {
  if (c >= 0 && c < n) return c;
  switch (mode) {
  case 1: {
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1);
    c %= period;
    if (c < 0) c += period;
    return c < n ? c : period - c;
  }
  case 2: return c < 0 ? 0 : n - 1;
  case 3: c %= n; return c < 0 ? c + n : c;
  default: return -1;
  }
}

#define FT_PAD(N, T)                                                                             \
  static void ft_pad_##N(const int64_t *p, const double *f, const void *const *in,              \
                         void *const *out, void *scratch) {                                      \
    (void)f; (void)scratch;                                                                      \
    int r = (int)p[0], mode = (int)p[1];                                                         \
    const int64_t *di = p + 2, *dout = p + 2 + r, *beg = p + 2 + 2 * r;                          \
    T v;                                                                                         \
    memcpy(&v, &p[2 + 3 * r], sizeof v);                                                         \
    if (p[3 + 3 * r] && in[2]) v = *(const T *)in[2];                                            \
    const T *x = (const T *)in[0];                                                               \
    T *y = (T *)out[0];                                                                          \
    if (r == 0) { y[0] = x[0]; return; }                                                         \
    int64_t st[FT_MAX_RANK], idx[FT_MAX_RANK] = {0}, outer = 1;                                  \
    st[r - 1] = 1;                                                                               \
    for (int k = r - 2; k >= 0; k--) st[k] = st[k + 1] * di[k + 1];                              \
    for (int k = 0; k < r - 1; k++) outer *= dout[k];                                            \
    int64_t ni = di[r - 1], no = dout[r - 1], b = beg[r - 1];                                    \
    int64_t lo = b > 0 ? b : 0, hi = b + ni < no ? b + ni : no; /* output span copied as is */   \
    for (int64_t o = 0; o < outer; o++, y += no) {                                               \
      int64_t row = 0;                                                                           \
      int blank = 0;                                                                             \
      for (int k = 0; k < r - 1; k++) {                                                          \
        int64_t c = ft_pad_map(idx[k] - beg[k], di[k], mode);                                    \
        if (c < 0) blank = 1; else row += c * st[k];                                             \
      }                                                                                          \
      for (int k = r - 2; k >= 0; k--) { if (++idx[k] < dout[k]) break; idx[k] = 0; }            \
      if (blank || ni == 0) { for (int64_t j = 0; j < no; j++) y[j] = v; continue; }             \
      const T *xr = x + row;                                                                     \
      for (int64_t j = 0; j < lo && j < no; j++) {                                               \
        int64_t c = ft_pad_map(j - b, ni, mode);                                                 \
        y[j] = c < 0 ? v : xr[c];                                                                \
      }                                                                                          \
      if (hi > lo) memcpy(y + lo, xr + (lo - b), (size_t)(hi - lo) * sizeof(T));                 \
      for (int64_t j = hi > lo ? hi : lo; j < no; j++) {                                         \
        int64_t c = ft_pad_map(j - b, ni, mode);                                                 \
        y[j] = c < 0 ? v : xr[c];                                                                \
      }                                                                                          \
    }                                                                                            \
  }
FT_MOVE_SIZES(FT_PAD)
#undef FT_PAD

/* Trilu. p: [batch, rows, cols, k, upper, k from input 1]: keep the upper (j - i >= k) or lower
 * (j - i <= k) triangle of each matrix, zero the rest. */
#define FT_TRILU(N, T)                                                                           \
  static void ft_trilu_##N(const int64_t *p, const double *f, const void *const *in,            \
                           void *const *out, void *scratch) {                                    \
    (void)f; (void)scratch;                                                                      \
    int64_t batch = p[0], rows = p[1], cols = p[2], k = p[3];                                    \
    if (p[5] && in[1]) k = *(const int64_t *)in[1];                                              \
    const T *x = (const T *)in[0];                                                               \
    T *y = (T *)out[0];                                                                          \
    for (int64_t b = 0; b < batch; b++)                                                          \
      for (int64_t i = 0; i < rows; i++, x += cols, y += cols)                                   \
        for (int64_t j = 0; j < cols; j++)                                                       \
          y[j] = (p[4] ? j - i >= k : j - i <= k) ? x[j] : (T)0;                                 \
  }
FT_MOVE_SIZES(FT_TRILU)
#undef FT_TRILU

/* OneHot. p: [outer, depth, inner, dtype of indices]: y[o][d][i] = values[d == indices[o][i]]
 * (values = [off, on] from input 2); negative indices count from depth. */
#define FT_ONEHOT(N, T)                                                                          \
  static void ft_onehot_##N(const int64_t *p, const double *f, const void *const *in,           \
                            void *const *out, void *scratch) {                                   \
    (void)f; (void)scratch;                                                                      \
    int64_t outer = p[0], depth = p[1], inner = p[2];                                            \
    const T *val = (const T *)in[2];                                                             \
    T off = val[0], on = val[1], *y = (T *)out[0];                                               \
    for (int64_t i = 0; i < outer * depth * inner; i++) y[i] = off;                              \
    for (int64_t o = 0; o < outer; o++)                                                          \
      for (int64_t i = 0; i < inner; i++) {                                                      \
        int64_t j = ft_load_index(in[0], (int)p[3], o * inner + i);                              \
        if (j < 0) j += depth;                                                                   \
        if (j >= 0 && j < depth) y[(o * depth + j) * inner + i] = on;                            \
      }                                                                                          \
  }
FT_MOVE_SIZES(FT_ONEHOT)
#undef FT_ONEHOT

/* Range. p: [n]: y[i] = start + i * delta, start and delta read from inputs 0 and 2. */
#define FT_RANGE(S, T)                                                                           \
  static void ft_range_##S(const int64_t *p, const double *f, const void *const *in,            \
                           void *const *out, void *scratch) {                                    \
    (void)f; (void)scratch;                                                                      \
    T start = *(const T *)in[0], delta = *(const T *)in[2], *y = (T *)out[0];                    \
    for (int64_t i = 0; i < p[0]; i++) y[i] = (T)(start + (T)i * delta);                         \
  }
FT_RANGE(f32, float)
FT_RANGE(f64, double)
FT_RANGE(i16, int16_t)
FT_RANGE(i32, int32_t)
FT_RANGE(i64, int64_t)
#undef FT_RANGE

#endif
