/* Folding one contiguous row into a value, vectorized: FT_LANES independent accumulators (the
 * compiler keeps them in vector registers), combined at the end. A plain `s += x[i]` loop stays
 * scalar, because reassociating float additions is not allowed without -ffast-math.
 * Used by softmax.h and norm.h. */
#ifndef FT_ROWREDUCE_H
#define FT_ROWREDUCE_H

#include <stdint.h>

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
    for (int64_t I = b_; I < n_; I++) lane_[0] = COMBINE(lane_[0], (EXPR));                      \
    T acc_ = lane_[0];                                                                           \
    for (int j_ = 1; j_ < FT_LANES; j_++) acc_ = COMBINE(acc_, lane_[j_]);                       \
    acc_;                                                                                        \
  })

#define FT_FOLD_ADD(a, b) ((a) + (b))
#define FT_FOLD_MAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b)) /* NaN wins */

#endif
