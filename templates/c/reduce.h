/* Reductions (ReduceSum, ReduceMean, ... ReduceLogSumExp) and ArgMax / ArgMin.
 *
 * Reduce* p: [r, dims[r], out_strides[r], count, n_out]. The plan drops size-1 dims and merges
 * neighbours that are both reduced or both kept, so dims alternate between kept and reduced;
 * out_strides is 0 on reduced dims. count is the number of inputs folded into each output.
 * The input is read once in memory order: where the innermost dim is reduced (LayerNorm's mean
 * over the last axis) each row folds into one output through 16 independent accumulators, which
 * the compiler turns into vector registers; where it is kept, each row folds elementwise into a
 * row of outputs. Either way the inner loop vectorizes. */
#ifndef FT_REDUCE_H
#define FT_REDUCE_H

#include <math.h>
#include <stdint.h>

#include "fastmath.h"
#include "tensor.h"

#define FT_REDUCE_LANES 16

/* One pass over X: Y[o] = COMBINE(Y[o], MAP(x, m)) for every x that reduces into output o, where
 * m is M[o] (LogSumExp's running maximum; other ops ignore it). */
#define FT_REDUCE_PASS(p, T, X, Y, M, INIT, MAP, COMBINE)                                        \
  do {                                                                                           \
    const int r_ = (int)(p)[0];                                                                  \
    const int64_t *d_ = (p) + 1, *os_ = (p) + 1 + r_;                                            \
    int64_t inner_ = d_[r_ - 1], outer_ = 1, idx_[FT_MAX_RANK] = {0}, off_ = 0;                  \
    for (int k_ = 0; k_ < r_ - 1; k_++) outer_ *= d_[k_];                                        \
    for (int64_t o_ = 0; o_ < outer_; o_++) {                                                    \
      const T *x_ = (X) + o_ * inner_;                                                           \
      if (os_[r_ - 1] == 0) {                                                                    \
        const T m = (M)[off_];                                                                   \
        (void)m;                                                                                 \
        T lane_[FT_REDUCE_LANES];                                                                \
        for (int j_ = 0; j_ < FT_REDUCE_LANES; j_++) lane_[j_] = (INIT);                         \
        int64_t i_ = 0;                                                                          \
        for (; i_ + FT_REDUCE_LANES <= inner_; i_ += FT_REDUCE_LANES)                            \
          for (int j_ = 0; j_ < FT_REDUCE_LANES; j_++) {                                         \
            const T x = x_[i_ + j_];                                                             \
            lane_[j_] = COMBINE(lane_[j_], MAP(x, m));                                           \
          }                                                                                      \
        for (int j_ = 0; j_ < (int)(inner_ - i_); j_++) { /* the tail, one value per lane */    \
          const T x = x_[i_ + j_];                                                               \
          lane_[j_] = COMBINE(lane_[j_], MAP(x, m));                                             \
        }                                                                                        \
        for (int w_ = FT_REDUCE_LANES / 2; w_ > 0; w_ /= 2) /* lanes combine as a tree */       \
          for (int j_ = 0; j_ < w_; j_++) lane_[j_] = COMBINE(lane_[j_], lane_[j_ + w_]);        \
        (Y)[off_] = COMBINE((Y)[off_], lane_[0]);                                                \
      } else {                                                                                   \
        T *y_ = (Y) + off_;                                                                      \
        const T *m_ = (M) + off_;                                                                \
        for (int64_t i_ = 0; i_ < inner_; i_++) {                                                \
          const T x = x_[i_], m = m_[i_];                                                        \
          (void)m;                                                                               \
          y_[i_] = COMBINE(y_[i_], MAP(x, m));                                                   \
        }                                                                                        \
      }                                                                                          \
      for (int k_ = r_ - 2; k_ >= 0; k_--) {                                                     \
        idx_[k_]++;                                                                              \
        off_ += os_[k_];                                                                         \
        if (idx_[k_] < d_[k_]) break;                                                            \
        off_ -= os_[k_] * d_[k_];                                                                \
        idx_[k_] = 0;                                                                            \
      }                                                                                          \
    }                                                                                            \
  } while (0)

#define FT_R_ADD(a, b) ((a) + (b))
#define FT_R_MUL(a, b) ((a) * (b))
#define FT_R_MAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b)) /* NaN wins, as in numpy */
#define FT_R_MIN(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
#define FT_R_IMAX(a, b) ((a) > (b) ? (a) : (b))
#define FT_R_IMIN(a, b) ((a) < (b) ? (a) : (b))
#define FT_R_ID(x, m) (x)
#define FT_R_SQ(x, m) ((x) * (x))
#define FT_R_ABS(x, m) ((x) < 0 ? -(x) : (x))

/* The kernel: fill Y with INIT, one pass, then POST on every output (y, with count in scope). */
#define FT_REDUCE_KERNEL(NAME, T, INIT, MAP, COMBINE, POST)                                      \
  static void NAME(const int64_t *p, const double *f, const void *const *in, void *const *out,  \
                   void *scratch) {                                                              \
    (void)f; (void)scratch;                                                                      \
    const int r = (int)p[0];                                                                     \
    const int64_t count = p[1 + 2 * r], n_out = p[2 + 2 * r];                                    \
    const T *X = (const T *)in[0];                                                               \
    T *Y = (T *)out[0];                                                                          \
    (void)count;                                                                                 \
    for (int64_t i = 0; i < n_out; i++) Y[i] = (INIT);                                           \
    FT_REDUCE_PASS(p, T, X, Y, Y, (INIT), MAP, COMBINE);                                         \
    for (int64_t i = 0; i < n_out; i++) { T y = Y[i]; Y[i] = (T)(POST); }                        \
  }

/* LogSumExp = m + log(sum exp(x - m)) with m the maximum, so nothing overflows. The sums go to
 * scratch (n_out elements). An infinite m is replaced by 0 in the shift, so all -inf gives -inf
 * and any +inf gives +inf instead of NaN. */
#define FT_REDUCE_LOG_SUM_EXP(sfx, T, EXP, LOG)                                                  \
  static inline T ft_lse_shift_##sfx(T m) { return m - m == 0 ? m : 0; }                         \
  static void ft_reduce_log_sum_exp_##sfx(const int64_t *p, const double *f,                    \
                                          const void *const *in, void *const *out,               \
                                          void *scratch) {                                       \
    (void)f;                                                                                     \
    const int r = (int)p[0];                                                                     \
    const int64_t n_out = p[2 + 2 * r];                                                          \
    const T *X = (const T *)in[0];                                                               \
    T *Y = (T *)out[0], *S = (T *)scratch;                                                       \
    for (int64_t i = 0; i < n_out; i++) Y[i] = -(T)INFINITY;                                     \
    FT_REDUCE_PASS(p, T, X, Y, Y, -(T)INFINITY, FT_R_ID, FT_R_MAX);                              \
    for (int64_t i = 0; i < n_out; i++) S[i] = 0;                                                \
    FT_REDUCE_PASS(p, T, X, S, Y, (T)0, FT_LSE_MAP_##sfx, FT_R_ADD);                             \
    for (int64_t i = 0; i < n_out; i++) Y[i] = ft_lse_shift_##sfx(Y[i]) + LOG(S[i]);            \
  }

#define FT_REDUCE_FLOAT(sfx, T, SQRT, LOG)                                                       \
  FT_REDUCE_KERNEL(ft_reduce_sum_##sfx, T, 0, FT_R_ID, FT_R_ADD, y)                              \
  FT_REDUCE_KERNEL(ft_reduce_mean_##sfx, T, 0, FT_R_ID, FT_R_ADD, y / (T)count)                  \
  FT_REDUCE_KERNEL(ft_reduce_prod_##sfx, T, 1, FT_R_ID, FT_R_MUL, y)                             \
  FT_REDUCE_KERNEL(ft_reduce_max_##sfx, T, -(T)INFINITY, FT_R_ID, FT_R_MAX, y)                   \
  FT_REDUCE_KERNEL(ft_reduce_min_##sfx, T, (T)INFINITY, FT_R_ID, FT_R_MIN, y)                    \
  FT_REDUCE_KERNEL(ft_reduce_l1_##sfx, T, 0, FT_R_ABS, FT_R_ADD, y)                              \
  FT_REDUCE_KERNEL(ft_reduce_l2_##sfx, T, 0, FT_R_SQ, FT_R_ADD, SQRT(y))                         \
  FT_REDUCE_KERNEL(ft_reduce_sum_square_##sfx, T, 0, FT_R_SQ, FT_R_ADD, y)                       \
  FT_REDUCE_KERNEL(ft_reduce_log_sum_##sfx, T, 0, FT_R_ID, FT_R_ADD, LOG(y))
#define FT_LSE_MAP_f32(x, m) ft_expf((x) - ft_lse_shift_f32(m))
#define FT_LSE_MAP_f64(x, m) exp((x) - ft_lse_shift_f64(m))
FT_REDUCE_FLOAT(f32, float, sqrtf, logf)
FT_REDUCE_FLOAT(f64, double, sqrt, log)
FT_REDUCE_LOG_SUM_EXP(f32, float, ft_expf, logf)
FT_REDUCE_LOG_SUM_EXP(f64, double, exp, log)

/* Integers: sums wrap as the type does; Mean truncates like a cast of numpy's mean would. */
#define FT_REDUCE_INT(sfx, T, LOWEST, HIGHEST)                                                   \
  FT_REDUCE_KERNEL(ft_reduce_sum_##sfx, T, 0, FT_R_ID, FT_R_ADD, y)                              \
  FT_REDUCE_KERNEL(ft_reduce_mean_##sfx, T, 0, FT_R_ID, FT_R_ADD, count ? y / (T)count : 0)      \
  FT_REDUCE_KERNEL(ft_reduce_prod_##sfx, T, 1, FT_R_ID, FT_R_MUL, y)                             \
  FT_REDUCE_KERNEL(ft_reduce_max_##sfx, T, LOWEST, FT_R_ID, FT_R_IMAX, y)                        \
  FT_REDUCE_KERNEL(ft_reduce_min_##sfx, T, HIGHEST, FT_R_ID, FT_R_IMIN, y)                       \
  FT_REDUCE_KERNEL(ft_reduce_sum_square_##sfx, T, 0, FT_R_SQ, FT_R_ADD, y)
#define FT_REDUCE_SIGNED(sfx, T, LOWEST, HIGHEST)                                                \
  FT_REDUCE_INT(sfx, T, LOWEST, HIGHEST)                                                         \
  FT_REDUCE_KERNEL(ft_reduce_l1_##sfx, T, 0, FT_R_ABS, FT_R_ADD, y)
FT_REDUCE_SIGNED(i32, int32_t, INT32_MIN, INT32_MAX)
FT_REDUCE_SIGNED(i64, int64_t, INT64_MIN, INT64_MAX)
FT_REDUCE_SIGNED(i8, int8_t, INT8_MIN, INT8_MAX)
FT_REDUCE_INT(u8, uint8_t, 0, UINT8_MAX)
FT_REDUCE_KERNEL(ft_reduce_l1_u8, uint8_t, 0, FT_R_ID, FT_R_ADD, y)
FT_REDUCE_INT(u32, uint32_t, 0, UINT32_MAX)
FT_REDUCE_KERNEL(ft_reduce_l1_u32, uint32_t, 0, FT_R_ID, FT_R_ADD, y)
FT_REDUCE_INT(u64, uint64_t, 0, UINT64_MAX)
FT_REDUCE_KERNEL(ft_reduce_l1_u64, uint64_t, 0, FT_R_ID, FT_R_ADD, y)

/* ArgMax / ArgMin: p = [outer, n, inner, select_last_index]; the output is int64, one index per
 * (outer, inner). Rows of the reduced axis are strided by inner; for inner > 1 the running best
 * values live in scratch (inner elements) so the loop runs along contiguous memory. Ties go to
 * the first index, or the last with select_last_index. */
#define FT_ARG_KERNEL(NAME, T, BETTER)                                                           \
  static void NAME(const int64_t *p, const double *f, const void *const *in, void *const *out,  \
                   void *scratch) {                                                              \
    (void)f;                                                                                     \
    const int64_t outer = p[0], n = p[1], inner = p[2];                                          \
    const int last = p[3] != 0;                                                                  \
    const T *X = (const T *)in[0];                                                               \
    int64_t *Y = (int64_t *)out[0];                                                              \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      const T *x = X + o * n * inner;                                                            \
      int64_t *y = Y + o * inner;                                                                \
      if (inner == 1) {                                                                          \
        T best = x[0];                                                                           \
        int64_t at = 0;                                                                          \
        for (int64_t k = 1; k < n; k++) {                                                        \
          T v = x[k];                                                                            \
          if (BETTER(v, best) || (last && v == best)) { best = v; at = k; }                      \
        }                                                                                        \
        y[0] = n ? at : 0;                                                                       \
        continue;                                                                                \
      }                                                                                          \
      T *best = (T *)scratch;                                                                    \
      for (int64_t i = 0; i < inner; i++) { best[i] = x[i]; y[i] = 0; }                          \
      for (int64_t k = 1; k < n; k++) {                                                          \
        const T *row = x + k * inner;                                                            \
        for (int64_t i = 0; i < inner; i++) {                                                    \
          T v = row[i];                                                                          \
          int take = BETTER(v, best[i]) || (last && v == best[i]);                               \
          best[i] = take ? v : best[i];                                                          \
          y[i] = take ? k : y[i];                                                                \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
  }
#define FT_ARG_GT(a, b) ((a) > (b))
#define FT_ARG_LT(a, b) ((a) < (b))
#define FT_ARG(sfx, T) FT_ARG_KERNEL(ft_argmax_##sfx, T, FT_ARG_GT) FT_ARG_KERNEL(ft_argmin_##sfx, T, FT_ARG_LT)
FT_ARG(f32, float) FT_ARG(f64, double) FT_ARG(i8, int8_t) FT_ARG(i16, int16_t) FT_ARG(i32, int32_t)
FT_ARG(i64, int64_t) FT_ARG(u8, uint8_t) FT_ARG(u16, uint16_t) FT_ARG(u32, uint32_t)
FT_ARG(u64, uint64_t)
#undef FT_ARG

/* CumSum: p = [outer, n, inner, exclusive, reverse]; running sums along the n axis, kept per
 * inner position in scratch (inner elements) so that y may be x. */
#define FT_CUMSUM(sfx, T)                                                                        \
  static void ft_cumsum_##sfx(const int64_t *p, const double *f, const void *const *in,         \
                              void *const *out, void *scratch) {                                 \
    (void)f;                                                                                     \
    const int64_t outer = p[0], n = p[1], inner = p[2], exclusive = p[3], reverse = p[4];       \
    T *acc = (T *)scratch;                                                                       \
    for (int64_t o = 0; o < outer; o++) {                                                        \
      for (int64_t i = 0; i < inner; i++) acc[i] = 0;                                            \
      for (int64_t j = 0; j < n; j++) {                                                          \
        const int64_t k = reverse ? n - 1 - j : j;                                               \
        const T *x = (const T *)in[0] + (o * n + k) * inner;                                     \
        T *y = (T *)out[0] + (o * n + k) * inner;                                                \
        if (exclusive)                                                                           \
          for (int64_t i = 0; i < inner; i++) { const T v = x[i]; y[i] = acc[i]; acc[i] += v; }  \
        else                                                                                     \
          for (int64_t i = 0; i < inner; i++) { acc[i] += x[i]; y[i] = acc[i]; }                 \
      }                                                                                          \
    }                                                                                            \
  }
FT_CUMSUM(f32, float) FT_CUMSUM(f64, double) FT_CUMSUM(i32, int32_t) FT_CUMSUM(i64, int64_t)
FT_CUMSUM(u32, uint32_t) FT_CUMSUM(u64, uint64_t)
#undef FT_CUMSUM

#endif
