/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (= NLL of LogSoftmax over axis 1).
 *
 * p: [N, C, D, reduction (0 none, 1 sum, 2 mean), has_weight, has_ignore, ignore_index] with the
 * input read as [N, C, D] (D: the product of the trailing dims) and the target as [N, D].
 * in: input (log-probabilities, or scores for SCE), target (int64 or int32: the _i32 kernels),
 * weight (C values) where has_weight. out: the loss ([N, D] for none, else one value), and for
 * SCE the log-probabilities where p[7] says they are wanted.
 * A target equal to ignore_index contributes 0 and no weight; "mean" divides by the summed
 * weights of the counted targets. A target outside [0, C) that is not ignored counts as 0. */
#ifndef FT_LOSS_H
#define FT_LOSS_H

#include <stdint.h>

#include "softmax.h"
#include "tensor.h"

#define FT_NLL(sfx, T, isfx, TI)                                                                 \
  static void ft_nll_core_##sfx##_##isfx(const int64_t *p, const T *x, const TI *target,        \
                                         const T *weight, T *loss) {                             \
    const int64_t N = p[0], C = p[1], D = p[2], reduction = p[3], ignore = p[6];                \
    const int has_ignore = p[5] != 0;                                                            \
    double sum = 0, wsum = 0;                                                                    \
    for (int64_t n = 0; n < N; n++)                                                              \
      for (int64_t d = 0; d < D; d++) {                                                          \
        const int64_t t = (int64_t)target[n * D + d];                                            \
        T l = 0, w = 0;                                                                          \
        if (!(has_ignore && t == ignore) && t >= 0 && t < C) {                                   \
          w = weight ? weight[t] : (T)1;                                                         \
          l = -x[(n * C + t) * D + d] * w;                                                       \
        }                                                                                        \
        if (reduction == 0) loss[n * D + d] = l;                                                 \
        sum += l;                                                                                \
        wsum += w;                                                                               \
      }                                                                                          \
    if (reduction == 1) loss[0] = (T)sum;                                                        \
    if (reduction == 2) loss[0] = (T)(sum / wsum);                                               \
  }                                                                                              \
  static void ft_nll_##sfx##_##isfx(const int64_t *p, const double *f, const void *const *in,   \
                                    void *const *out, void *scratch) {                           \
    (void)f; (void)scratch;                                                                      \
    ft_nll_core_##sfx##_##isfx(p, (const T *)in[0], (const TI *)in[1],                          \
                               p[4] ? (const T *)in[2] : NULL, (T *)out[0]);                     \
  }                                                                                              \
  /* scratch: N*C*D elements for the log-probabilities when they are not an output, then what   \
   * ft_log_softmax needs (max(2 * D, C) elements) */                                            \
  static void ft_sce_##sfx##_##isfx(const int64_t *p, const double *f, const void *const *in,   \
                                    void *const *out, void *scratch) {                           \
    const int64_t N = p[0], C = p[1], D = p[2];                                                  \
    T *logp = p[7] ? (T *)out[1] : (T *)scratch;                                                 \
    T *rest = (T *)scratch + (p[7] ? 0 : N * C * D);                                             \
    const int64_t lp[3] = {N, C, D};                                                             \
    ft_log_softmax_##sfx(lp, f, in, (void *const[]){logp}, rest);                                \
    ft_nll_core_##sfx##_##isfx(p, logp, (const TI *)in[1], p[4] ? (const T *)in[2] : NULL,      \
                               (T *)out[0]);                                                     \
  }

FT_NLL(f32, float, i64, int64_t)
FT_NLL(f32, float, i32, int32_t)
FT_NLL(f64, double, i64, int64_t)
FT_NLL(f64, double, i32, int32_t)
#undef FT_NLL

#endif
