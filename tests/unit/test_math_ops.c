/* The math op families (unary, variadic, reduce, softmax, norm) through their descriptors:
 * infer + plan + kernel on random data, against plain double-precision references written
 * here, over every axis choice of small odd shapes; and the in-place runs the memory planner
 * allows (output buffer = input buffer) against out-of-place ones. */
#include <math.h>

#include "testutil.h"

/* ---- one-node graphs (testutil.h: tu_one) --------------------------------------------------- */

/* Input i: a float tensor of the given shape with random data in [-5, 5]. */
static float *input_f32(tu_one *o, int i, int rank, const int64_t *dims) {
  float *x = tu_one_input(o, i, FT_FLOAT, rank, dims, NULL);
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  for (int64_t k = 0; k < n; k++) x[k] = (float)((rand() % 20001) - 10000) / 2000.0f;
  return x;
}

static void expect_close(const float *got, const double *want, int64_t n, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    double tol = 1e-5 + 1e-4 * fabs(want[i]);
    if (isnan(want[i])) cr_expect(isnan(got[i]), "%s[%lld]: got %g, want NaN", what, (long long)i, got[i]);
    else if (isinf(want[i])) cr_expect(got[i] == want[i], "%s[%lld]: got %g, want %g", what, (long long)i, got[i], want[i]);
    else cr_expect(fabs(got[i] - want[i]) <= tol, "%s[%lld]: got %.9g, want %.9g", what, (long long)i, got[i], want[i]);
  }
}

/* ---- reductions ---------------------------------------------------------------------------- */

/* The reference: fold every input element into its output, in double. */
static void reduce_ref(const char *op, const float *x, int rank, const int64_t *dims, const int *red,
                       double *y, int64_t n_out) {
  int64_t ostride[FT_MAX_RANK], s = 1, count = 1;
  for (int d = rank - 1; d >= 0; d--) {
    ostride[d] = red[d] ? 0 : s;
    if (!red[d]) s *= dims[d];
    else count *= dims[d];
  }
  int lse = !strcmp(op, "ReduceLogSumExp");
  double *mx = calloc((size_t)n_out, sizeof(double));
  for (int64_t i = 0; i < n_out; i++) {
    y[i] = !strcmp(op, "ReduceProd") ? 1 : !strcmp(op, "ReduceMax") ? -INFINITY : !strcmp(op, "ReduceMin") ? INFINITY : 0;
    mx[i] = -INFINITY;
  }
  int64_t total = 1;
  for (int d = 0; d < rank; d++) total *= dims[d];
  for (int pass = lse ? 0 : 1; pass < 2; pass++)
    for (int64_t k = 0; k < total; k++) {
      int64_t rem = k, o = 0;
      for (int d = rank - 1; d >= 0; d--) { o += (rem % dims[d]) * ostride[d]; rem /= dims[d]; }
      double v = x[k];
      if (pass == 0) { mx[o] = fmax(mx[o], v); continue; }
      if (!strcmp(op, "ReduceProd")) y[o] *= v;
      else if (!strcmp(op, "ReduceMax")) y[o] = fmax(y[o], v);
      else if (!strcmp(op, "ReduceMin")) y[o] = fmin(y[o], v);
      else if (!strcmp(op, "ReduceL1")) y[o] += fabs(v);
      else if (!strcmp(op, "ReduceL2") || !strcmp(op, "ReduceSumSquare")) y[o] += v * v;
      else if (lse) y[o] += exp(v - mx[o]);
      else y[o] += v;
    }
  for (int64_t i = 0; i < n_out; i++) {
    if (!strcmp(op, "ReduceMean")) y[i] /= (double)count;
    if (!strcmp(op, "ReduceL2")) y[i] = sqrt(y[i]);
    if (!strcmp(op, "ReduceLogSum")) y[i] = log(y[i]);
    if (lse) y[i] = mx[i] + log(y[i]);
  }
  free(mx);
}

Test(math_ops, reduce_every_axis_subset) {
  static const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                              "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};
  const int64_t dims[4] = {3, 1, 4, 17}; /* a size-1 dim and a row length that is not a lane multiple */
  srand(1);
  for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
    for (int mask = 0; mask < 16; mask++)
      for (int keep = 0; keep < 2; keep++) {
        tu_one o = tu_one_new(ops[oi], 13, 1, 1);
        float *x = input_f32(&o, 0, 4, dims);
        if (!strcmp(ops[oi], "ReduceLogSum") || !strcmp(ops[oi], "ReduceProd"))
          for (int k = 0; k < 3 * 4 * 17; k++) x[k] = 0.5f + fabsf(x[k]) / 8; /* positive, moderate */
        int red[4], n_axes = 0;
        int64_t axes[4];
        for (int d = 0; d < 4; d++) { red[d] = (mask >> d) & 1; if (red[d]) axes[n_axes++] = d - (d & 1) * 4; }
        if (n_axes == 0) for (int d = 0; d < 4; d++) red[d] = 1; /* no axes: all */
        if (!strcmp(ops[oi], "ReduceSum")) { /* opset 13: axes as a constant input */
          o.n->n_in = 2;
          o.n->in = realloc(o.n->in, sizeof(int) * 2);
          int v = ft_value_add(o.g, NULL);
          ft_value *av = &o.g->vals[v];
          av->t.dtype = FT_INT64; av->t.rank = 1; av->t.dims[0] = n_axes; av->shape_known = 1;
          av->t.data = malloc(sizeof(int64_t) * 4);
          memcpy(av->t.data, axes, sizeof(int64_t) * n_axes);
          o.n->in[1] = v;
        } else if (n_axes) tu_one_attr_ints(&o, "axes", axes, n_axes);
        tu_one_attr_int(&o, "keepdims", keep);
        tu_one_run(&o, 0);
        const ft_tensor *y = tu_one_output(&o, 0);
        int64_t n_out = ft_numel(y);
        int want_rank = 0;
        for (int d = 0; d < 4; d++) want_rank += keep || !red[d];
        cr_expect_eq(y->rank, want_rank, "%s mask %d keep %d: rank %d", ops[oi], mask, keep, y->rank);
        double *want = malloc(sizeof(double) * (size_t)n_out);
        reduce_ref(ops[oi], x, 4, dims, red, want, n_out);
        char what[64];
        snprintf(what, sizeof what, "%s mask %d", ops[oi], mask);
        expect_close(y->data, want, n_out, what);
        free(want);
        ft_graph_free(o.g);
      }
}

Test(math_ops, argmax_argmin_every_axis_with_ties) {
  const int64_t dims[3] = {3, 5, 18};
  for (int op = 0; op < 2; op++)
    for (int axis = -3; axis < 3; axis++)
      for (int last = 0; last < 2; last++) {
        tu_one o = tu_one_new(op ? "ArgMin" : "ArgMax", 13, 1, 1);
        float *x = input_f32(&o, 0, 3, dims);
        for (int k = 0; k < 3 * 5 * 18; k++) x[k] = (float)(rand() % 4); /* many ties */
        tu_one_attr_int(&o, "axis", axis);
        tu_one_attr_int(&o, "select_last_index", last);
        tu_one_attr_int(&o, "keepdims", 0);
        tu_one_run(&o, 0);
        int a = axis < 0 ? axis + 3 : axis;
        int64_t outer = 1, n = dims[a], inner = 1;
        for (int d = 0; d < a; d++) outer *= dims[d];
        for (int d = a + 1; d < 3; d++) inner *= dims[d];
        const int64_t *y = tu_one_output(&o, 0)->data;
        for (int64_t i = 0; i < outer; i++)
          for (int64_t j = 0; j < inner; j++) {
            int64_t best = 0;
            for (int64_t k = 1; k < n; k++) {
              float v = x[(i * n + k) * inner + j], b = x[(i * n + best) * inner + j];
              if (op ? (v < b || (last && v == b)) : (v > b || (last && v == b))) best = k;
            }
            cr_expect_eq(y[i * inner + j], best, "axis %d last %d at (%lld, %lld)", axis, last, (long long)i, (long long)j);
          }
        ft_graph_free(o.g);
      }
}

/* ---- softmax family -------------------------------------------------------------------------- */

static void softmax_ref(const char *op, const float *x, int64_t outer, int64_t n, int64_t inner, double *y) {
  for (int64_t i = 0; i < outer; i++)
    for (int64_t j = 0; j < inner; j++) {
      double m = -INFINITY, s = 0;
      int64_t at = 0;
      for (int64_t k = 0; k < n; k++) {
        double v = x[(i * n + k) * inner + j];
        if (v > m) { m = v; at = k; }
      }
      for (int64_t k = 0; k < n; k++) s += exp(x[(i * n + k) * inner + j] - m);
      for (int64_t k = 0; k < n; k++) {
        double v = x[(i * n + k) * inner + j];
        double r = !strcmp(op, "Softmax") ? exp(v - m) / s : !strcmp(op, "LogSoftmax") ? v - m - log(s) : (double)(k == at);
        y[(i * n + k) * inner + j] = r;
      }
    }
}

Test(math_ops, softmax_family_both_axis_semantics_and_in_place) {
  static const char *ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
  const int64_t dims[3] = {2, 7, 37};
  for (int oi = 0; oi < 3; oi++)
    for (int opset = 11; opset <= 13; opset += 2)
      for (int axis = -3; axis < 3; axis++)
        for (int in_place = 0; in_place < 2; in_place++) {
          tu_one o = tu_one_new(ops[oi], opset, 1, 1);
          float *x = input_f32(&o, 0, 3, dims);
          for (int k = 0; k < 2 * 7 * 37; k++) x[k] *= 20; /* large values: the max shift matters */
          tu_one_attr_int(&o, "axis", axis);
          tu_one_run(&o, in_place);
          int a = axis < 0 ? axis + 3 : axis;
          int64_t outer = 1, n = 1, inner = 1;
          for (int d = 0; d < 3; d++) {
            if (d < a) outer *= dims[d];
            else if (d == a || opset < 13) n *= dims[d]; /* before 13: flattened from axis on */
            else inner *= dims[d];
          }
          double want[2 * 7 * 37];
          softmax_ref(ops[oi], x, outer, n, inner, want);
          char what[64];
          snprintf(what, sizeof what, "%s opset %d axis %d%s", ops[oi], opset, axis, in_place ? " in place" : "");
          expect_close(tu_one_output(&o, 0)->data, want, 2 * 7 * 37, what);
          ft_graph_free(o.g);
        }
}

/* ---- normalization ------------------------------------------------------------------------- */

Test(math_ops, layernorm_every_axis_with_stats_and_in_place) {
  const int64_t dims[3] = {3, 5, 19};
  for (int axis = -3; axis < 3; axis++)
    for (int in_place = 0; in_place < 2; in_place++) {
      int a = axis < 0 ? axis + 3 : axis;
      int64_t rows = 1, cols = 1;
      for (int d = 0; d < 3; d++) *(d < a ? &rows : &cols) *= dims[d];
      tu_one o = tu_one_new("LayerNormalization", 17, 3, 3);
      float *x = input_f32(&o, 0, 3, dims);
      float *scale = input_f32(&o, 1, 3 - a, dims + a), *bias = input_f32(&o, 2, 3 - a, dims + a);
      for (int64_t k = 0; k < rows * cols; k++) x[k] = x[k] * 3 + 100; /* an offset: two-pass variance */
      tu_one_attr_int(&o, "axis", axis);
      tu_one_run(&o, in_place);
      double *want = malloc(sizeof(double) * rows * cols), mean[64], inv[64];
      for (int64_t r = 0; r < rows; r++) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < cols; i++) m += x[r * cols + i];
        m /= cols;
        for (int64_t i = 0; i < cols; i++) v += (x[r * cols + i] - m) * (x[r * cols + i] - m);
        v /= cols;
        mean[r] = m;
        inv[r] = 1 / sqrt(v + 1e-5);
        for (int64_t i = 0; i < cols; i++) want[r * cols + i] = (x[r * cols + i] - m) * inv[r] * scale[i] + bias[i];
      }
      expect_close(tu_one_output(&o, 0)->data, want, rows * cols, "Y");
      expect_close(tu_one_output(&o, 1)->data, mean, rows, "Mean");
      expect_close(tu_one_output(&o, 2)->data, inv, rows, "InvStdDev");
      cr_expect_eq(tu_one_output(&o, 1)->rank, 3);
      cr_expect_eq(ft_numel(tu_one_output(&o, 1)), rows);
      free(want);
      ft_graph_free(o.g);
    }
}

Test(math_ops, batchnorm_training_mode_is_refused) {
  tu_one o = tu_one_new("BatchNormalization", 15, 5, 1);
  const int64_t xd[4] = {1, 2, 3, 3}, cd[1] = {2};
  input_f32(&o, 0, 4, xd);
  for (int i = 1; i < 5; i++) input_f32(&o, i, 1, cd);
  tu_one_attr_int(&o, "training_mode", 1);
  ft_err e = {0};
  o.n->op = ft_op_find("", "BatchNormalization");
  ft_opctx c;
  ft_opctx_init(&c, o.g, 0, &e);
  cr_expect_eq(o.n->op->infer(&c), FT_EUNSUPPORTED);
  cr_expect(strstr(e.msg, "training_mode"), "message: %s", e.msg);
  ft_graph_free(o.g);
}

/* ---- variadic and unary ---------------------------------------------------------------------- */

Test(math_ops, variadic_broadcasts_three_inputs) {
  static const char *ops[] = {"Sum", "Mean", "Max", "Min"};
  const int64_t da[3] = {3, 1, 17}, db[2] = {4, 1}, dc[1] = {17};
  for (int oi = 0; oi < 4; oi++) {
    tu_one o = tu_one_new(ops[oi], 13, 3, 1);
    float *a = input_f32(&o, 0, 3, da), *b = input_f32(&o, 1, 2, db), *c = input_f32(&o, 2, 1, dc);
    tu_one_run(&o, 0);
    cr_assert_eq(tu_one_output(&o, 0)->rank, 3);
    double want[3 * 4 * 17];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 17; k++) {
          double va = a[i * 17 + k], vb = b[j], vc = c[k], r;
          if (oi <= 1) r = (va + vb + vc) / (oi ? 3 : 1);
          else if (oi == 2) r = fmax(fmax(va, vb), vc);
          else r = fmin(fmin(va, vb), vc);
          want[(i * 4 + j) * 17 + k] = r;
        }
    expect_close(tu_one_output(&o, 0)->data, want, 3 * 4 * 17, ops[oi]);
    ft_graph_free(o.g);
  }
}

Test(math_ops, unary_in_place_matches_out_of_place) {
  static const char *ops[] = {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Gelu", "Softplus", "Mish", "HardSwish", "Neg"};
  const int64_t dims[2] = {5, 33};
  for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
    srand(7);
    tu_one o1 = tu_one_new(ops[oi], 20, 1, 1), o2 = tu_one_new(ops[oi], 20, 1, 1);
    input_f32(&o1, 0, 2, dims);
    srand(7);
    input_f32(&o2, 0, 2, dims);
    tu_one_run(&o1, 0);
    tu_one_run(&o2, 1);
    cr_expect_arr_eq(tu_one_output(&o1, 0)->data, tu_one_output(&o2, 0)->data, 5 * 33 * sizeof(float), "%s", ops[oi]);
    ft_graph_free(o1.g);
    ft_graph_free(o2.g);
  }
}
