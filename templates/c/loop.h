/* Control flow: the state of a Loop that runs at run time.
 *
 * A Loop whose trip count or condition is known only at run time (compiler/passes/loop.c) is a
 * `while` over its body's calls; its state (the flag the `while` tests, the iteration number, the
 * loop-carried values) lives in buffers ft_loop_init fills and ft_loop_next writes at the end of
 * each iteration. M absent or the condition absent: p says so and the input is NULL.
 *
 *   ft_loop_init  p: [has_M, has_cond, start, n, bytes_0..n); in: [M (int64), cond (bool),
 *                 v_0..n); out: [go (bool), iter (int64), carried_0..n): iter = start, the
 *                 carried values copied, go = start < M && cond
 *   ft_loop_next  p: [has_M, n, bytes_0..n, staged_0..n); in: [M, cond (the body's), v_0..n (the
 *                 body's), go, iter, carried_0..n); out: [iterations run]. Writes the state it
 *                 reads (go, iter, carried: the back edge): carried_j = v_j, iter + 1, go = iter <
 *                 M && cond. A v_j that shares bytes with another carried value (staged_j, a view
 *                 of it) goes through scratch first. The count stops at INT64_MAX. */
#ifndef FT_LOOP_H
#define FT_LOOP_H

#include "tensor.h"

static void ft_loop_init(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  (void)f; (void)scratch;
  int64_t start = p[2], n = p[3];
  int go = (!p[1] || *(const unsigned char *)in[1]) && (!p[0] || start < *(const int64_t *)in[0]);
  *(unsigned char *)out[0] = (unsigned char)go;
  *(int64_t *)out[1] = start;
  for (int64_t j = 0; j < n; j++)
    if (p[4 + j] && out[2 + j] != in[2 + j]) memmove(out[2 + j], in[2 + j], (size_t)p[4 + j]);
}

static void ft_loop_next(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  (void)f;
  int64_t n = p[1];
  unsigned char *go = (unsigned char *)(uintptr_t)in[2 + n];
  int64_t *iter = (int64_t *)(uintptr_t)in[3 + n];
  int64_t next = *iter < INT64_MAX ? *iter + 1 : *iter;
  int more = *(const unsigned char *)in[1] && next > *iter && (!p[0] || next < *(const int64_t *)in[0]);
  unsigned char *st = (unsigned char *)scratch;
  for (int64_t j = 0; j < n; j++) /* first every value that another carried value's copy would overwrite */
    if (p[2 + n + j] && p[2 + j]) { memcpy(st, in[2 + j], (size_t)p[2 + j]); st += p[2 + j]; }
  st = (unsigned char *)scratch;
  for (int64_t j = 0; j < n; j++) {
    void *dst = (void *)(uintptr_t)in[4 + n + j];
    const void *src = in[2 + j];
    if (p[2 + n + j]) { src = st; st += p[2 + j]; }
    if (p[2 + j] && dst != src) memmove(dst, src, (size_t)p[2 + j]);
  }
  *iter = next;
  *go = (unsigned char)more;
  *(int64_t *)out[0] = next;
}

#endif
