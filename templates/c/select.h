/* Selection and reordering: TopK, Compress, ReverseSequence, EyeLike.
 *
 *   ft_topk_<type>      p: [outer, n, inner, k, largest]; sorts the indices of each line along the
 *                       axis (stable merge sort in scratch, 2 n int64), so equal values keep
 *                       their index order as ONNX asks; NaN ranks above every number
 *   ft_compress         p: [outer, n, inner bytes, condition length]; keeps the slices whose
 *                       condition (input 1, bool) is set
 *   ft_reverse_seq_N    p: [rank, batch_axis, time_axis, dims[rank]]; lengths are input 1, int64
 *   ft_eyelike_N        p: [rows, cols, k, bits of one]; ones on diagonal k, zeros elsewhere */
#ifndef FT_SELECT_H
#define FT_SELECT_H

#include <stdint.h>
#include <string.h>

#include "tensor.h"

/* TopK: "a ranks before b" for the largest (or, with LESS, the smallest) first. */
#define FT_TOPK(S, T)                                                                            \
  static inline int ft_topk_before_##S(T a, T b, int largest) {                                  \
    if (a != a) return b == b && largest; /* NaN: first when largest, last when smallest */      \
    if (b != b) return !largest;                                                                 \
    return largest ? a > b : a < b;                                                              \
  }                                                                                              \
  static void ft_topk_##S(const int64_t *p, const double *f, const void *const *in,             \
                          void *const *out, void *scratch) {                                     \
    (void)f;                                                                                     \
    int64_t outer = p[0], n = p[1], inner = p[2], k = p[3];                                      \
    int largest = (int)p[4];                                                                     \
    const T *X = (const T *)in[0];                                                               \
    T *V = (T *)out[0];                                                                          \
    int64_t *I = (int64_t *)out[1], *a = (int64_t *)scratch, *b = a + n;                         \
    for (int64_t o = 0; o < outer; o++)                                                          \
      for (int64_t j = 0; j < inner; j++) {                                                      \
        const T *x = X + o * n * inner + j;                                                      \
        for (int64_t i = 0; i < n; i++) a[i] = i;                                                \
        /* bottom-up merge sort of a by x[i * inner]; ties keep the lower index first */         \
        int64_t *src = a, *dst = b;                                                              \
        for (int64_t w = 1; w < n; w *= 2) {                                                     \
          for (int64_t lo = 0; lo < n; lo += 2 * w) {                                            \
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;         \
            int64_t l = lo, r = mid, d = lo;                                                     \
            while (l < mid && r < hi)                                                            \
              dst[d++] = ft_topk_before_##S(x[src[r] * inner], x[src[l] * inner], largest)       \
                             ? src[r++] : src[l++];                                              \
            while (l < mid) dst[d++] = src[l++];                                                 \
            while (r < hi) dst[d++] = src[r++];                                                  \
          }                                                                                      \
          int64_t *t = src; src = dst; dst = t;                                                  \
        }                                                                                        \
        for (int64_t i = 0; i < k; i++) {                                                        \
          int64_t at = (o * k + i) * inner + j;                                                  \
          if (V) V[at] = x[src[i] * inner];                                                      \
          if (I) I[at] = src[i];                                                                 \
        }                                                                                        \
      }                                                                                          \
  }
FT_TOPK(f32, float)
FT_TOPK(f64, double)
FT_TOPK(i8, int8_t)
FT_TOPK(i16, int16_t)
FT_TOPK(i32, int32_t)
FT_TOPK(i64, int64_t)
FT_TOPK(u8, uint8_t)
FT_TOPK(u16, uint16_t)
FT_TOPK(u32, uint32_t)
FT_TOPK(u64, uint64_t)
#undef FT_TOPK

static void ft_compress(const int64_t *p, const double *f, const void *const *in, void *const *out,
                        void *scratch) {
  (void)f; (void)scratch;
  int64_t outer = p[0], n = p[1], ib = p[2], nc = p[3] < p[1] ? p[3] : p[1];
  const char *X = (const char *)in[0];
  const uint8_t *cond = (const uint8_t *)in[1];
  char *Y = (char *)out[0];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < nc; i++)
      if (cond[i]) {
        memcpy(Y, X + (o * n + i) * ib, (size_t)ib);
        Y += ib;
      }
}

#define FT_SELECT_SIZES(X) X(1, uint8_t) X(2, uint16_t) X(4, uint32_t) X(8, uint64_t)

#define FT_REVERSE_SEQ(N, T)                                                                     \
  static void ft_reverse_seq_##N(const int64_t *p, const double *f, const void *const *in,      \
                                 void *const *out, void *scratch) {                              \
    (void)f; (void)scratch;                                                                      \
    int r = (int)p[0], ba = (int)p[1], ta = (int)p[2];                                           \
    const int64_t *dims = p + 3, *lens = (const int64_t *)in[1];                                 \
    const T *X = (const T *)in[0];                                                               \
    T *Y = (T *)out[0];                                                                          \
    int64_t st[FT_MAX_RANK], acc = 1, idx[FT_MAX_RANK] = {0};                                    \
    for (int d = r - 1; d >= 0; d--) { st[d] = acc; acc *= dims[d]; }                            \
    for (int64_t e = 0; e < acc; e++) {                                                          \
      int64_t len = lens[idx[ba]], t = idx[ta];                                                  \
      if (len > dims[ta]) len = dims[ta];                                                        \
      int64_t src = e + (t < len ? (len - 1 - 2 * t) * st[ta] : 0);                              \
      Y[e] = X[src];                                                                             \
      for (int d = r - 1; d >= 0; d--) {                                                         \
        if (++idx[d] < dims[d]) break;                                                           \
        idx[d] = 0;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }
FT_SELECT_SIZES(FT_REVERSE_SEQ)
#undef FT_REVERSE_SEQ

#define FT_EYELIKE(N, T)                                                                         \
  static void ft_eyelike_##N(const int64_t *p, const double *f, const void *const *in,          \
                             void *const *out, void *scratch) {                                  \
    (void)f; (void)scratch; (void)in;                                                            \
    int64_t rows = p[0], cols = p[1], k = p[2], bits = p[3];                                     \
    T one, *Y = (T *)out[0];                                                                     \
    memcpy(&one, &bits, sizeof(T));                                                              \
    memset(Y, 0, (size_t)(rows * cols) * sizeof(T));                                             \
    for (int64_t i = 0; i < rows; i++)                                                           \
      if (i + k >= 0 && i + k < cols) Y[i * cols + i + k] = one;                                 \
  }
FT_SELECT_SIZES(FT_EYELIKE)
#undef FT_EYELIKE

#endif
