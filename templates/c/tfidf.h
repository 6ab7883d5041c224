/* TfIdfVectorizer over integer tokens: counts, per row of X, the n-grams (with skips) found in a
 * pool, then scales the counts by mode.
 *
 * p: [rows, row length, X is int64, min n, max n, max skip, mode (0 TF, 1 IDF, 2 TFIDF), output
 *     size, levels L, pool start of each level[L], pool length P, pool[P], n-gram count K,
 *     output index of each n-gram[K], has weights, weights[K] (bit patterns of doubles)]
 * Level l holds the n-grams of length l + 1, one after the other, from its pool start to the
 * next level's. A unigram is counted once per position; longer n-grams once per position and
 * skip (tokens 1 + skip apart). */
#ifndef FT_TFIDF_H
#define FT_TFIDF_H

#include <stdint.h>
#include <string.h>

#include "tensor.h"

static void ft_tfidf_f32(const int64_t *p, const double *f, const void *const *in, void *const *out,
                         void *scratch) {
  (void)f; (void)scratch;
  int64_t rows = p[0], len = p[1], wide = p[2], nmin = p[3], nmax = p[4], max_skip = p[5], mode = p[6];
  int64_t osz = p[7], L = p[8];
  const int64_t *start = p + 9, *pool = p + 10 + L;
  int64_t P = p[9 + L], K = p[10 + L + P];
  const int64_t *oidx = p + 11 + L + P, has_w = p[11 + L + P + K], *wbits = p + 12 + L + P + K;
  float *Y = (float *)out[0];
  for (int64_t r = 0; r < rows; r++) {
    float *y = Y + r * osz;
    for (int64_t j = 0; j < osz; j++) y[j] = 0;
    int64_t base = 0; /* ordinal of the level's first n-gram */
    for (int64_t l = 0; l < L; l++) {
      int64_t n = l + 1, from = start[l], to = l + 1 < L ? start[l + 1] : P, count = (to - from) / n;
      if (n >= nmin && n <= nmax)
        for (int64_t i = 0; i < len; i++)
          for (int64_t s = 0; s <= (n == 1 ? 0 : max_skip); s++) {
            if (i + (n - 1) * (s + 1) >= len) break;
            for (int64_t g = 0; g < count; g++) {
              const int64_t *gram = pool + from + g * n;
              int match = 1;
              for (int64_t t = 0; t < n && match; t++) {
                int64_t at = r * len + i + t * (s + 1);
                int64_t tok = wide ? ((const int64_t *)in[0])[at] : ((const int32_t *)in[0])[at];
                match = tok == gram[t];
              }
              if (match && base + g < K && oidx[base + g] < osz) y[oidx[base + g]] += 1;
            }
          }
      base += count;
    }
    for (int64_t k = 0; k < K && mode; k++) {
      int64_t j = oidx[k];
      if (j < 0 || j >= osz) continue;
      double w = 1;
      if (has_w) memcpy(&w, &wbits[k], sizeof w);
      y[j] = mode == 1 ? (y[j] > 0 ? (float)w : 0) : (float)(y[j] * w);
    }
  }
}

#endif
