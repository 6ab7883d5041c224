/* ftax-eager as a library: load, run against hand-computed results, profile bookkeeping, errors,
 * and the caching allocator. Models: tests/data (made by tests/data/make_models.py).
 * FTAX_TEST_DATA is the folder of the models (default: FTAX_SOURCE_DIR/tests/data, else tests/data
 * relative to the working directory). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "eager.h"

#ifndef FTAX_TEST_DATA
#ifdef FTAX_SOURCE_DIR
#define FTAX_TEST_DATA FTAX_SOURCE_DIR "/tests/data"
#else
#define FTAX_TEST_DATA "tests/data"
#endif
#endif

static ft_eager *load(const char *file, const char *dim0, const char *dim1, ft_err *e) {
  ft_pins pins;
  memset(&pins, 0, sizeof pins);
  if (dim0) pins.dims[pins.n_dims++] = dim0;
  if (dim1) pins.dims[pins.n_dims++] = dim1;
  ft_eager *h = NULL;
  memset(e, 0, sizeof *e);
  int rc = ft_eager_load(file, &pins, &h, e);
  cr_assert_eq(rc, 0, "loading %s failed: %s", file, e->msg);
  return h;
}

/* eager_arith.onnx at batch 2:
 *   out0 = ((x + [1,2,3,4]) * y - 0.5) / 2 + x^2,  out1 = x < y,  out2 = x + [1,2,3,4] */
static const float X[8] = {0, 1, -2, 3, 0.5f, -1, 2, -3};
static const float Y[8] = {1, 1, 1, 1, 2, -2, 0.25f, 4};

static void expect_arith(const float *out0, const uint8_t *out1, const float *out2) {
  static const float c1[4] = {1, 2, 3, 4};
  for (int i = 0; i < 8; i++) {
    float a = X[i] + c1[i % 4];
    float want0 = (a * Y[i] - 0.5f) / 2.0f + X[i] * X[i];
    cr_expect(fabsf(out0[i] - want0) <= 1e-6f * (1 + fabsf(want0)), "out0[%d] = %g, expected %g", i, out0[i], want0);
    cr_expect_eq(out1[i], X[i] < Y[i], "out1[%d] = %d", i, out1[i]);
    cr_expect_eq(out2[i], a, "out2[%d] = %g, expected %g", i, out2[i], a);
  }
}

Test(eager, io_descriptors) {
  ft_err e;
  ft_eager *h = load(FTAX_TEST_DATA "/eager_arith.onnx", "batch=2", NULL, &e);
  cr_assert_eq(ft_eager_num_inputs(h), 2);
  cr_assert_eq(ft_eager_num_outputs(h), 3);
  ft_tensor d;
  cr_assert_str_eq(ft_eager_io(h, 0, 1, &d), "y");
  cr_expect(d.dtype == FT_FLOAT && d.rank == 2 && d.dims[0] == 2 && d.dims[1] == 4);
  cr_assert_str_eq(ft_eager_io(h, 1, 1, &d), "out1");
  cr_expect(d.dtype == FT_BOOL && d.rank == 2 && d.dims[0] == 2 && d.dims[1] == 4);
  cr_expect_null(ft_eager_io(h, 1, 3, &d));
  ft_eager_free(h);
}

Test(eager, runs_match_hand_computed) {
  ft_err e;
  ft_eager *h = load(FTAX_TEST_DATA "/eager_arith.onnx", "batch=2", NULL, &e);
  float out0[8], out2[8];
  uint8_t out1[8];
  const void *in[2] = {X, Y};
  void *out[3] = {out0, out1, out2};
  for (int run = 0; run < 3; run++) { /* later runs reuse cached blocks: same results */
    memset(out0, 0, sizeof out0);
    memset(out1, 7, sizeof out1);
    memset(out2, 0, sizeof out2);
    cr_assert_eq(ft_eager_run(h, in, out, &e), 0, "run %d: %s", run, e.msg);
    expect_arith(out0, out1, out2);
  }
  ft_eager_free(h);
}

Test(eager, profile_adds_up) {
  ft_err e;
  ft_eager *h = load(FTAX_TEST_DATA "/eager_arith.onnx", "batch=2", NULL, &e);
  float out0[8], out2[8];
  uint8_t out1[8];
  const void *in[2] = {X, Y};
  void *out[3] = {out0, out1, out2};
  cr_assert_eq(ft_eager_run(h, in, out, &e), 0, "%s", e.msg); /* warm the cache, unprofiled */
  ft_eager_profile p;
  ft_eager_profile_get(h, &p);
  uint64_t misses = p.cache_misses, hits = p.cache_hits;
  ft_eager_profile_enable(h, 1);
  for (int run = 0; run < 5; run++) cr_assert_eq(ft_eager_run(h, in, out, &e), 0, "%s", e.msg);
  ft_eager_profile_get(h, &p);
  cr_expect_eq(p.runs, 5);
  cr_expect_eq(p.nodes, 9);
  cr_expect_eq(p.n_rows, 6, "op types: Add Mul Sub Div Pow Less");
  cr_expect(p.kernel_ns > 0);
  cr_expect(p.kernel_ns <= p.wall_ns, "kernel %lld ns > wall %lld ns", (long long)p.kernel_ns, (long long)p.wall_ns);
  int64_t sum = 0, calls = 0, node = 0;
  for (int r = 0; r < p.n_rows; r++) {
    sum += p.rows[r].kernel_ns;
    calls += p.rows[r].calls;
    node += p.rows[r].node_ns;
    cr_expect(p.rows[r].kernel_ns <= p.rows[r].node_ns, "%s: kernel time beyond its dispatch time", p.rows[r].op_type);
    if (r) cr_expect(p.rows[r - 1].kernel_ns >= p.rows[r].kernel_ns, "rows not sorted by kernel time");
    if (!strcmp(p.rows[r].op_type, "Add")) cr_expect_eq(p.rows[r].calls, 4 * 5);
  }
  cr_expect_eq(sum, p.kernel_ns, "rows sum to %lld ns, total says %lld", (long long)sum, (long long)p.kernel_ns);
  cr_expect_eq(calls, 9 * 5);
  cr_expect(node <= p.wall_ns);
  cr_expect_eq(p.cache_misses, misses, "steady-state runs must be served from the cache");
  /* 9 nodes, of which 3 write their graph outputs straight into the caller's buffers */
  cr_expect_eq(p.cache_hits - hits, 5 * 6, "cache requests: %llu", (unsigned long long)(p.cache_hits - hits));
  ft_eager_profile_reset(h);
  ft_eager_profile_get(h, &p);
  cr_expect(p.runs == 0 && p.wall_ns == 0 && p.kernel_ns == 0);
  ft_eager_free(h);
}

Test(eager, shape_chain_runs_at_run_time) {
  ft_pins pins;
  memset(&pins, 0, sizeof pins);
  pins.dims[0] = "batch=2";
  pins.dims[1] = "seq=3";
  pins.n_dims = 2;
  ft_eager *h = NULL;
  ft_err e = {0};
  int rc = ft_eager_load(FTAX_TEST_DATA "/eager_shape_chain.onnx", &pins, &h, &e);
  cr_assert_eq(rc, 0, "%s", e.msg);
  ft_tensor d;
  ft_eager_io(h, 1, 0, &d);
  cr_assert(d.rank == 2 && d.dims[0] == 2 && d.dims[1] == 12, "output shape");
  float x[24], y[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i - 7.5f;
  const void *in[1] = {x};
  void *out[1] = {y};
  ft_eager_profile_enable(h, 1);
  for (int run = 0; run < 2; run++) {
    cr_assert_eq(ft_eager_run(h, in, out, &e), 0, "%s", e.msg);
    for (int i = 0; i < 24; i++) cr_expect_eq(y[i], x[i] * 2 + 1, "y[%d] = %g", i, y[i]);
  }
  ft_eager_profile p;
  ft_eager_profile_get(h, &p);
  cr_expect_eq(p.nodes, 8, "every node of the chain runs, none folded");
  int64_t calls = 0;
  for (int r = 0; r < p.n_rows; r++) calls += p.rows[r].calls;
  cr_expect_eq(calls, 8 * 2);
  ft_eager_free(h);
}

Test(eager, errors_carry_exit_codes) {
  ft_pins none;
  memset(&none, 0, sizeof none);
  ft_eager *h = NULL;
  ft_err e = {0};
  cr_expect_eq(ft_eager_load(FTAX_TEST_DATA "/eager_arith.onnx", &none, &h, &e), 1, "unpinned dim: usage");
  cr_expect(strstr(e.msg, "batch") != NULL, "%s", e.msg);
  cr_expect_null(h);
  memset(&e, 0, sizeof e);
  cr_expect_eq(ft_eager_load(FTAX_TEST_DATA "/no_such_model.onnx", &none, &h, &e), 4);
  cr_expect(strstr(e.msg, "no_such_model.onnx") != NULL, "%s", e.msg);
}

Test(eager_cache, reuses_blocks_by_size_class) {
  ft_cache c;
  memset(&c, 0, sizeof c);
  int k1, k2, k3;
  void *a = ft_cache_get(&c, 1000, &k1);
  cr_assert_not_null(a);
  cr_expect_eq((uintptr_t)a % 64, 0, "64-byte aligned");
  cr_expect_eq(ft_cache_class_bytes(1000), 1024);
  cr_expect_eq(ft_cache_class_bytes(1025), 1280);
  cr_expect_eq(ft_cache_class_bytes(1), 64);
  cr_expect_eq(ft_cache_class_bytes(65), 80);
  ft_cache_put(&c, a, k1);
  cr_expect_eq(c.in_use, 0);
  void *b = ft_cache_get(&c, 900, &k2); /* same class (897..1024) */
  cr_expect_eq(b, a, "a freed block of the class is reused");
  cr_expect_eq(k2, k1);
  void *d = ft_cache_get(&c, 2000, &k3);
  cr_expect_neq(k3, k1);
  cr_expect_eq(c.hits, 1);
  cr_expect_eq(c.misses, 2);
  cr_expect_eq(c.peak_in_use, 1024 + 2048);
  ft_cache_put(&c, b, k2);
  ft_cache_put(&c, d, k3);
  ft_cache_release(&c);
  cr_expect_eq(c.reserved, 0);
}
