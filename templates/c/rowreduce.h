/* Folding one contiguous row into a value, vectorized: FT_LANES independent accumulators (the
 * compiler keeps them in vector registers), combined at the end. A plain `s += x[i]` loop stays
 * scalar, because reassociating float additions is not allowed without -ffast-math.
 * Used by softmax.h, norm.h and attention.h. */
#ifndef FT_ROWREDUCE_H
#define FT_ROWREDUCE_H

#include <stdint.h>
#include <string.h>

#define FT_LANES 16

/* A statement expression: the fold of EXPR over I in [0, n) (I names the index variable EXPR
 * uses), starting from INIT, with COMBINE(a, b) a function-like macro. */
#define FT_ROW_FOLD(T, n, INIT, COMBINE, I, EXPR)                                                \
  ({                                                                                             \
    T lane_[FT_LANES];                                                                           \
    for (int j_ = 0; j_ < FT_LANES; j_++) lane_[j_] = (INIT);                                    \
    const int64_t n_ = (n);                                                                      \
    int64_t b_ = 0;                                                                              \
    for (; b_ + FT_LANES <= n_; b_ += FT_LANES) {                                                \
      T v_[FT_LANES];                                                                            \
      for (int64_t I = b_; I < b_ + FT_LANES; I++) v_[I - b_] = (EXPR);                          \
      for (int j_ = 0; j_ < FT_LANES; j_++) lane_[j_] = COMBINE(lane_[j_], v_[j_]);             \
    }                                                                                            \
    /* the tail, at most FT_LANES - 1 values, into separate lanes (a plain tail loop here makes  \
     * GCC warn wrongly about undefined behavior once n is a known multiple of FT_LANES) */      \
    for (int j_ = 0; j_ < (int)(n_ - b_); j_++) {                                                \
      const int64_t I = b_ + j_;                                                                 \
      lane_[j_] = COMBINE(lane_[j_], (EXPR));                                                    \
    }                                                                                            \
    /* combine the lanes as a tree: four dependent steps instead of fifteen */                  \
    for (int w_ = FT_LANES / 2; w_ > 0; w_ /= 2)                                                 \
      for (int j_ = 0; j_ < w_; j_++) lane_[j_] = COMBINE(lane_[j_], lane_[j_ + w_]);            \
    lane_[0];                                                                                    \
  })

/* The maximum of a row (n >= 1), NaN ignored unless first: softmax's shift, where a NaN shows in
 * the sum anyway. GCC's vectorizer turns the fold above into vector adds but not into vector
 * maxima, so this one is written with GNU vector types (lowered to narrower registers, or
 * scalars, where the target has no 64-byte vectors). */
#define FT_ROW_MAX(sfx, T, N, TI)                                                                \
  typedef T ft_vec_##sfx __attribute__((vector_size(64)));                                      \
  typedef TI ft_veci_##sfx __attribute__((vector_size(64)));                                    \
  static inline T ft_row_max_##sfx(const T *x, int64_t n) {                                     \
    ft_vec_##sfx m;                                                                              \
    for (int j = 0; j < N; j++) m[j] = x[0];                                                     \
    int64_t b = 0;                                                                               \
    for (; b + N <= n; b += N) {                                                                 \
      ft_vec_##sfx v;                                                                            \
      memcpy(&v, x + b, sizeof v);                                                               \
      ft_veci_##sfx gt = v > m;                                                                  \
      m = (ft_vec_##sfx)((gt & (ft_veci_##sfx)v) | (~gt & (ft_veci_##sfx)m));                    \
    }                                                                                            \
    T r = x[0];                                                                                  \
    for (int j = 0; j < N; j++) r = m[j] > r ? m[j] : r;                                         \
    for (; b < n; b++) r = x[b] > r ? x[b] : r;                                                  \
    return r;                                                                                    \
  }
#ifdef __AVX512F__
/* float with AVX-512: the same fold as vmaxps (_mm512_max_ps(v, m) is v > m ? v : m lane by
 * lane), the tail as one masked step, and the 16 lanes reduced with vector maxima, not a
 * scalar loop: it runs once per row, and attention takes a row maximum for every query row
 * (ViT-B/16's 12 attention calls: 9.6-9.9 ms with the scalar ends, 8.7-8.9 with these). */
#include <immintrin.h>
static inline float ft_row_max_f32(const float *restrict x, int64_t n) {
  __m512 m = _mm512_set1_ps(x[0]);
  int64_t b = 0;
  for (; b + 16 <= n; b += 16) m = _mm512_max_ps(_mm512_loadu_ps(x + b), m);
  if (b < n) {
    const __mmask16 t = (__mmask16)((1u << (n - b)) - 1);
    m = _mm512_mask_max_ps(m, t, _mm512_maskz_loadu_ps(t, x + b), m);
  }
  return _mm512_reduce_max_ps(m);
}
FT_ROW_MAX(f64, double, 8, int64_t)
#else
FT_ROW_MAX(f32, float, 16, int32_t)
FT_ROW_MAX(f64, double, 8, int64_t)
#endif
#undef FT_ROW_MAX

#define FT_FOLD_ADD(a, b) ((a) + (b))
#define FT_FOLD_MAX(a, b) (((a) > (b) | (a) != (a)) ? (a) : (b)) /* NaN wins; | keeps it branchless */

#endif
