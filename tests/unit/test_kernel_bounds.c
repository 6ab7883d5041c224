/* Kernels on hostile data: what they read and write stays inside the buffers they are given.
 *
 * Buffers sit against a PROT_NONE guard page (after their last byte, or before their first), so
 * a read or write out of bounds crashes the test even without AddressSanitizer.
 *   - ftax.Attention reads the optional mask inputs only when the plan says they are there: the
 *     input array of a call holds no entry for an absent mask.
 *   - Gather, GatherElements, GatherND, ScatterND and ScatterElements with indices known only at
 *     run time, too large or too negative: the documented result (docs/hostile-input.md,
 *     "Indices at run time"), and no access outside data, indices, updates or output. */
#include <math.h>
#include <sys/mman.h>

#include "attention.h"
#include "op.h"
#include "testutil.h"

/* bytes of memory whose end (at_end) or start touches an inaccessible page. Never unmapped: each
 * test runs in its own process (and LeakSanitizer does not track mappings). */
static void *guarded(size_t bytes, int at_end) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), span = (bytes + pg - 1) / pg * pg;
  if (!span) span = pg;
  char *base = mmap(NULL, span + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert(base != MAP_FAILED);
  cr_assert_eq(mprotect(base, pg, PROT_NONE), 0);
  cr_assert_eq(mprotect(base + pg + span, pg, PROT_NONE), 0);
  return at_end ? base + pg + span - bytes : base + pg;
}

static void *guarded_copy(const void *src, size_t bytes, int at_end) {
  void *p = guarded(bytes, at_end);
  memcpy(p, src, bytes);
  return p;
}

/* ---- ftax.Attention: the optional masks ---------------------------------------------------- */

/* One head, 2 queries and 3 keys of size 2, q/k/v rows dense: p as compiler/ops/fused_attention.c
 * lays it out, with or without an additive [2,3] mask. */
static void attention_params(int64_t *p, int with_mask) {
  memset(p, 0, sizeof(int64_t) * FT_AT_NP);
  const int64_t dims[6] = {1, 1, 2, 3, 2, 2};
  memcpy(p, dims, sizeof dims);
  const int64_t view[5] = {0, 0, 0, 2, 1};
  memcpy(p + FT_AT_Q, view, sizeof view);
  memcpy(p + FT_AT_K, view, sizeof view);
  memcpy(p + FT_AT_V, view, sizeof view);
  const int64_t oview[4] = {0, 0, 0, 2};
  memcpy(p + FT_AT_O, oview, sizeof oview);
  if (with_mask) { p[FT_AT_ADD] = 1; p[FT_AT_ADD + 3] = 3; p[FT_AT_ADD + 4] = 1; }
  p[FT_AT_SEL] = FT_AT_SEL_NONE;
  cr_assert(ft_attention_tiles(1, 1, 2, 3, 2, 2, &p[FT_AT_RG], &p[FT_AT_KB]));
}

static const float AQ[4] = {1, 0, 0.5f, -1}, AK[6] = {1, 2, -1, 0, 0.25f, 0.5f}, AV[6] = {1, -1, 2, 3, 0, 0.5f};
static const float AM[6] = {0, -1, 0.5f, -2, 0, 1};

static void attention_expect(const float *o, const float *mask, float scale) {
  for (int i = 0; i < 2; i++) {
    double s[3], mx = -INFINITY, tot = 0;
    for (int j = 0; j < 3; j++) {
      s[j] = scale * (AQ[2 * i] * AK[2 * j] + AQ[2 * i + 1] * AK[2 * j + 1]) + (mask ? mask[3 * i + j] : 0);
      mx = s[j] > mx ? s[j] : mx;
    }
    for (int j = 0; j < 3; j++) tot += (s[j] = exp(s[j] - mx));
    for (int d = 0; d < 2; d++) {
      double want = 0;
      for (int j = 0; j < 3; j++) want += s[j] / tot * AV[2 * j + d];
      cr_expect(fabs(o[2 * i + d] - want) < 1e-5, "out[%d][%d] = %g, expected %g", i, d, o[2 * i + d], want);
    }
  }
}

/* The call's input array has exactly as many entries as the node has inputs (4 with the
 * additive mask, 3 with none) and ends against a guard page. */
Test(kernel_bounds, attention_reads_only_the_inputs_it_is_given) {
  for (int with_mask = 0; with_mask < 2; with_mask++) {
    int64_t p[FT_AT_NP];
    attention_params(p, with_mask);
    const double f[2] = {0.75, -1e30};
    int n_in = with_mask ? 4 : 3;
    const void **in = guarded(sizeof(void *) * (size_t)n_in, 1);
    in[0] = guarded_copy(AQ, sizeof AQ, 1);
    in[1] = guarded_copy(AK, sizeof AK, 1);
    in[2] = guarded_copy(AV, sizeof AV, 1);
    if (with_mask) in[3] = guarded_copy(AM, sizeof AM, 1);
    float *o = guarded(4 * sizeof(float), 1);
    void **out = guarded(sizeof(void *), 1);
    out[0] = o;
    ft_attention_f32(p, f, in, out, NULL);
    attention_expect(o, with_mask ? AM : NULL, 0.75f);
  }
}

/* ---- indices at run time ------------------------------------------------------------------- */

/* One node of op with inputs of the given shapes, planned with the indices (input ind) unknown,
 * as in a compiled program where they come from the input: the kernel call is in k. */
typedef struct idx_node {
  tu_one o;
  ft_kcall k;
} idx_node;

static void plan_runtime(idx_node *x, int ind) {
  ft_err e = {0};
  x->o.n->op = ft_op_find("", x->o.n->op_type);
  cr_assert(x->o.n->op, "%s is not in the op table", x->o.n->op_type);
  ft_tensor *t = &x->o.g->vals[x->o.n->in[ind]].t;
  free(t->data);
  t->data = NULL;
  ft_opctx c;
  ft_opctx_init(&c, x->o.g, 0, &e);
  cr_assert_eq(x->o.n->op->infer(&c), 0, "infer: %s", e.msg);
  memset(&x->k, 0, sizeof x->k);
  x->k.prepack.input = -1;
  cr_assert_eq(x->o.n->op->plan(&c, &x->k), 0, "plan: %s", e.msg);
  cr_assert_eq(x->k.scratch, 0);
}

static void idx_free(idx_node *x) { ft_graph_free(x->o.g); }

/* Run the planned call with data, indices (and updates) against guard pages, the guards after
 * the buffers when at_end, else before them. Returns the output (guarded too). */
static void *run_guarded(idx_node *x, int n_in, const void *const *src, const size_t *bytes, size_t out_bytes, int at_end) {
  const void *in[4];
  for (int i = 0; i < n_in; i++) in[i] = guarded_copy(src[i], bytes[i], at_end);
  void *y = guarded(out_bytes, at_end);
  memset(y, 0x5a, out_bytes);
  void *out[1] = {y};
  x->k.entry->fn(x->k.p, x->k.f, in, out, NULL);
  return y;
}

static const float D32[6] = {1, 2, 3, 4, 5, 6}; /* data [3, 2] */
static const int64_t d32[2] = {3, 2};

/* Gather (axis 0): an index in [-3, 3) picks a row (negative ones from the end); any other gives
 * a row of zeros. int64 and int32 indices. */
Test(kernel_bounds, gather_out_of_range_gives_zero_rows) {
  const int64_t ind64[8] = {0, 2, 3, -1, -3, -4, INT64_MAX, INT64_MIN};
  const int32_t ind32[8] = {0, 2, 3, -1, -3, -4, INT32_MAX, INT32_MIN};
  const float want[16] = {1, 2, 5, 6, 0, 0, 5, 6, 1, 2, 0, 0, 0, 0, 0, 0};
  const int64_t d8[1] = {8};
  for (int wide = 0; wide < 2; wide++)
    for (int at_end = 0; at_end < 2; at_end++) {
      idx_node x = {.o = tu_one_new("Gather", 13, 2, 1)};
      tu_one_input(&x.o, 0, FT_FLOAT, 2, d32, D32);
      tu_one_input(&x.o, 1, wide ? FT_INT64 : FT_INT32, 1, d8, wide ? (const void *)ind64 : (const void *)ind32);
      plan_runtime(&x, 1);
      const void *src[2] = {D32, wide ? (const void *)ind64 : (const void *)ind32};
      const size_t nb[2] = {sizeof D32, wide ? sizeof ind64 : sizeof ind32};
      const float *y = run_guarded(&x, 2, src, nb, sizeof want, at_end);
      for (int i = 0; i < 16; i++) cr_expect_eq(y[i], want[i], "int%d, y[%d] = %g, expected %g", wide ? 64 : 32, i, y[i], want[i]);
      idx_free(&x);
    }
}

/* GatherElements (axis 0): y[i][j] = data[ind[i][j]][j], 0 where the index is out of range. */
Test(kernel_bounds, gather_elements_out_of_range_gives_zeros) {
  const int64_t ind[6] = {2, -1, 3, -4, INT64_MIN, INT64_MAX};
  const float want[6] = {5, 6, 0, 0, 0, 0};
  for (int at_end = 0; at_end < 2; at_end++) {
    idx_node x = {.o = tu_one_new("GatherElements", 13, 2, 1)};
    tu_one_input(&x.o, 0, FT_FLOAT, 2, d32, D32);
    tu_one_input(&x.o, 1, FT_INT64, 2, d32, ind);
    plan_runtime(&x, 1);
    const void *src[2] = {D32, ind};
    const size_t nb[2] = {sizeof D32, sizeof ind};
    const float *y = run_guarded(&x, 2, src, nb, sizeof want, at_end);
    for (int i = 0; i < 6; i++) cr_expect_eq(y[i], want[i], "y[%d] = %g, expected %g", i, y[i], want[i]);
    idx_free(&x);
  }
}

/* GatherND (k = 1): each index picks a row of data; out of range gives a row of zeros. */
Test(kernel_bounds, gathernd_out_of_range_gives_zero_rows) {
  const int64_t ind[5] = {1, 3, -3, -4, INT64_MIN};
  const int64_t d51[2] = {5, 1};
  const float want[10] = {3, 4, 0, 0, 1, 2, 0, 0, 0, 0};
  for (int at_end = 0; at_end < 2; at_end++) {
    idx_node x = {.o = tu_one_new("GatherND", 13, 2, 1)};
    tu_one_input(&x.o, 0, FT_FLOAT, 2, d32, D32);
    tu_one_input(&x.o, 1, FT_INT64, 2, d51, ind);
    plan_runtime(&x, 1);
    const void *src[2] = {D32, ind};
    const size_t nb[2] = {sizeof D32, sizeof ind};
    const float *y = run_guarded(&x, 2, src, nb, sizeof want, at_end);
    for (int i = 0; i < 10; i++) cr_expect_eq(y[i], want[i], "y[%d] = %g, expected %g", i, y[i], want[i]);
    idx_free(&x);
  }
}

/* ScatterND (k = 1), reduction none and add: an out-of-range index's update is skipped; the
 * output is data with the in-range updates applied. */
Test(kernel_bounds, scatternd_out_of_range_updates_are_skipped) {
  const int64_t ind[4] = {3, -1, -4, INT64_MAX};
  const int64_t d41[2] = {4, 1}, d42[2] = {4, 2};
  const float upd[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  const float want_none[6] = {1, 2, 3, 4, 30, 40}, want_add[6] = {1, 2, 3, 4, 35, 46};
  for (int red = 0; red < 2; red++)
    for (int at_end = 0; at_end < 2; at_end++) {
      idx_node x = {.o = tu_one_new("ScatterND", 16, 3, 1)};
      tu_one_input(&x.o, 0, FT_FLOAT, 2, d32, D32);
      tu_one_input(&x.o, 1, FT_INT64, 2, d41, ind);
      tu_one_input(&x.o, 2, FT_FLOAT, 2, d42, upd);
      if (red) tu_one_attr_str(&x.o, "reduction", "add");
      plan_runtime(&x, 1);
      const void *src[3] = {D32, ind, upd};
      const size_t nb[3] = {sizeof D32, sizeof ind, sizeof upd};
      const float *y = run_guarded(&x, 3, src, nb, sizeof D32, at_end);
      const float *want = red ? want_add : want_none;
      for (int i = 0; i < 6; i++) cr_expect_eq(y[i], want[i], "%s: y[%d] = %g, expected %g", red ? "add" : "none", i, y[i], want[i]);
      idx_free(&x);
    }
}

/* ScatterElements (axis 0), int64 and int32 indices, reduction none and add: an out-of-range
 * index's update is skipped. */
Test(kernel_bounds, scatter_elements_out_of_range_updates_are_skipped) {
  const int64_t ind64[4] = {2, -3, 3, INT64_MIN};
  const int32_t ind32[4] = {2, -3, 3, INT32_MIN};
  const int64_t d22[2] = {2, 2};
  const float upd[4] = {10, 20, 30, 40};
  const float want_none[6] = {1, 20, 3, 4, 10, 6}, want_add[6] = {1, 22, 3, 4, 15, 6};
  for (int wide = 0; wide < 2; wide++)
    for (int red = 0; red < 2; red++)
      for (int at_end = 0; at_end < 2; at_end++) {
        idx_node x = {.o = tu_one_new("ScatterElements", 16, 3, 1)};
        const void *ind = wide ? (const void *)ind64 : (const void *)ind32;
        tu_one_input(&x.o, 0, FT_FLOAT, 2, d32, D32);
        tu_one_input(&x.o, 1, wide ? FT_INT64 : FT_INT32, 2, d22, ind);
        tu_one_input(&x.o, 2, FT_FLOAT, 2, d22, upd);
        if (red) tu_one_attr_str(&x.o, "reduction", "add");
        plan_runtime(&x, 1);
        const void *src[3] = {D32, ind, upd};
        const size_t nb[3] = {sizeof D32, wide ? sizeof ind64 : sizeof ind32, sizeof upd};
        const float *y = run_guarded(&x, 3, src, nb, sizeof D32, at_end);
        const float *want = red ? want_add : want_none;
        for (int i = 0; i < 6; i++)
          cr_expect_eq(y[i], want[i], "int%d %s: y[%d] = %g, expected %g", wide ? 64 : 32, red ? "add" : "none", i, y[i], want[i]);
        idx_free(&x);
      }
}
