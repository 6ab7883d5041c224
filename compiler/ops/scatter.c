/* Indexed reads and writes: GatherND, ScatterND, ScatterElements and Scatter (its opset 9-10
 * name), and MaxUnpool (a scatter of MaxPool's values to its indices). Kernels:
 * templates/c/scatter.h.
 *
 * The scatters write into a copy of data, or into data itself when it dies at the node
 * (FT_OP_INPLACE), which spares the copy. */
#include <string.h>

#include "op.h"
#include "scatter.h"

/* The kernels: typed (searched by dtype) for a reduction, by element size (1, 2, 4, 8 in dtype)
 * without one. No CUDA twins. */
#define KT(dt, op, s) {"ft_" #op "_" #s, ft_##op##_##s, dt, 0, NULL, NULL}
#define TYPED(op)                                                                                \
  static const ft_kentry op##_typed[] = {                                                           \
      KT(FT_FLOAT, op, f32), KT(FT_DOUBLE, op, f64), KT(FT_INT8, op, i8), KT(FT_INT16, op, i16),  \
      KT(FT_INT32, op, i32), KT(FT_INT64, op, i64), KT(FT_UINT8, op, u8), KT(FT_UINT16, op, u16), \
      KT(FT_UINT32, op, u32), KT(FT_UINT64, op, u64), {0}};                                \
  static const ft_kentry op##_sized[] = {                                                           \
      KT(1, op, copy_1), KT(2, op, copy_2), KT(4, op, copy_4), KT(8, op, copy_8), {0}};
TYPED(scatternd)
TYPED(scatter_elements)
#undef TYPED

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++) n *= d[i];
  return n;
}

static int need_inputs(ft_opctx *c, int n) {
  for (int i = 0; i < n; i++)
    if (i >= c->n_in || !c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d is missing", i);
  return 0;
}

/* reduction attribute: none, add, mul (opset 16), max, min (18) */
static int reduction(ft_opctx *c, int *red) {
  const char *s = ft_attr_str(c->node, "reduction", "none");
  *red = 0;
  static const char *const names[] = {"none", "add", "mul", "max", "min"};
  for (int i = 0; i < 5; i++)
    if (!strcmp(s, names[i])) { *red = i; return 0; }
  return ft_infer_fail(c, FT_EINVALID, "reduction='%s' is not none, add, mul, max or min", s);
}

/* The kernel for a scatter: by element size without reduction, typed with one. */
static int pick(ft_opctx *c, ft_kcall *k, int red, const ft_kentry *typed, const ft_kentry *sized) {
  int dt = c->in[0]->dtype, key = red ? dt : (int)ft_dtype_size(dt);
  for (const ft_kentry *e = red ? typed : sized; e->name; e++)
    if (e->dtype == key) { k->entry = e; return 0; }
  return ft_infer_fail(c, FT_EUNSUPPORTED, "%s%s is not supported for %s", red ? "reduction on " : "",
                       c->node->op_type, ft_dtype_name(dt));
}

/* Constant indices are checked when the model is compiled (run-time ones are handled by the
 * kernels: docs/hostile-input.md). ind holds tuples of k indices, component j into a dim of size
 * dims[j]; negative ones count from the end. */
static int const_indices_in_range(ft_opctx *c, const ft_tensor *ind, int k, const int64_t *dims) {
  if (!ft_known_const(c, ind)) return 0;
  int64_t n = ft_numel(ind);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ft_const_int(ind, i), dim = dims[i % k];
    if (v < -dim || v >= dim)
      return ft_infer_fail(c, FT_EINVALID, "index %lld is out of range for a dim of size %lld", (long long)v, (long long)dim);
  }
  return 0;
}

/* ---- GatherND ----------------------------------------------------------------------------- */

static int gathernd_geometry(ft_opctx *c, int *b, int *k) {
  int rc = need_inputs(c, 2);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  if (ft_attr_int_c(c, "batch_dims", 0, 0, FT_MAX_RANK, b)) return c->err->code;
  if (ind->dtype != FT_INT64) return ft_infer_fail(c, FT_EINVALID, "indices must be int64, not %s", ft_dtype_name(ind->dtype));
  if (x->rank < 1 || ind->rank < 1) return ft_infer_fail(c, FT_EINVALID, "data and indices need rank 1 or more");
  if (*b < 0 || *b >= ind->rank || *b >= x->rank)
    return ft_infer_fail(c, FT_EINVALID, "batch_dims=%d must be below the ranks of data (%d) and indices (%d)", *b, x->rank, ind->rank);
  for (int d = 0; d < *b; d++)
    if (x->dims[d] != ind->dims[d]) return ft_infer_fail(c, FT_EINVALID, "data and indices differ on batch dim %d", d);
  *k = (int)ind->dims[ind->rank - 1];
  if (*k < 1 || *k > x->rank - *b)
    return ft_infer_fail(c, FT_EINVALID, "the last dim of indices (%d) must be 1 to %d", *k, x->rank - *b);
  if (ind->rank - 1 + x->rank - *b - *k > FT_MAX_RANK) return ft_infer_fail(c, FT_EUNSUPPORTED, "output rank above %d", FT_MAX_RANK);
  return const_indices_in_range(c, ind, *k, x->dims + *b);
}

static int gathernd_infer(ft_opctx *c) {
  int b, k, rc = gathernd_geometry(c, &b, &k);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = 0;
  for (int d = 0; d < ind->rank - 1; d++) y->dims[y->rank++] = ind->dims[d];
  for (int d = b + k; d < x->rank; d++) y->dims[y->rank++] = x->dims[d];
  return 0;
}

static int gathernd_plan(ft_opctx *c, ft_kcall *k) {
  int b, n;
  int rc = gathernd_geometry(c, &b, &n);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  int64_t es = (int64_t)ft_dtype_size(x->dtype);
  FT_K(k, ft_gathernd);
  k->p[0] = prod(x->dims, 0, b);
  k->p[1] = prod(ind->dims, b, ind->rank - 1);
  k->p[2] = n;
  k->p[3] = prod(x->dims, b + n, x->rank) * es;
  k->p[4] = prod(x->dims, b, x->rank) * es;
  for (int j = 0; j < n; j++) {
    k->p[5 + j] = x->dims[b + j];
    k->p[5 + n + j] = prod(x->dims, b + j + 1, b + n);
  }
  k->np = 5 + 2 * n;
  return 0;
}

/* ---- ScatterND ---------------------------------------------------------------------------- */

static int scatternd_check(ft_opctx *c, int *k) {
  int rc = need_inputs(c, 3);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *ind = c->in[1], *u = c->in[2];
  if (ind->dtype != FT_INT64) return ft_infer_fail(c, FT_EINVALID, "indices must be int64, not %s", ft_dtype_name(ind->dtype));
  if (u->dtype != x->dtype) return ft_infer_fail(c, FT_EINVALID, "updates are %s but data is %s", ft_dtype_name(u->dtype), ft_dtype_name(x->dtype));
  if (ind->rank < 1) return ft_infer_fail(c, FT_EINVALID, "indices need rank 1 or more");
  *k = (int)ind->dims[ind->rank - 1];
  if (*k < 1 || *k > x->rank) return ft_infer_fail(c, FT_EINVALID, "the last dim of indices (%d) must be 1 to %d", *k, x->rank);
  int ok = u->rank == ind->rank - 1 + x->rank - *k;
  for (int d = 0; ok && d < ind->rank - 1; d++) ok = u->dims[d] == ind->dims[d];
  for (int d = *k; ok && d < x->rank; d++) ok = u->dims[ind->rank - 1 + d - *k] == x->dims[d];
  if (!ok) return ft_infer_fail(c, FT_EINVALID, "updates must have the shape indices.shape[:-1] + data.shape[%d:]", *k);
  return const_indices_in_range(c, ind, *k, x->dims);
}

static int scatternd_infer(ft_opctx *c) {
  int k, rc = scatternd_check(c, &k);
  if (rc) return rc;
  int red;
  if ((rc = reduction(c, &red))) return rc;
  c->out[0]->dtype = c->in[0]->dtype;
  ft_copy_shape(c->out[0], c->in[0]);
  return 0;
}

static int scatternd_plan(ft_opctx *c, ft_kcall *k) {
  int n, red, rc = scatternd_check(c, &n);
  if (rc || (rc = reduction(c, &red))) return rc;
  if ((rc = pick(c, k, red, scatternd_typed, scatternd_sized))) return rc;
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  k->p[0] = red;
  k->p[1] = prod(ind->dims, 0, ind->rank - 1);
  k->p[2] = n;
  k->p[3] = prod(x->dims, n, x->rank);
  for (int j = 0; j < n; j++) {
    k->p[4 + j] = x->dims[j];
    k->p[4 + n + j] = prod(x->dims, j + 1, n);
  }
  k->np = 4 + 2 * n;
  return 0;
}

/* ---- ScatterElements, Scatter ------------------------------------------------------------- */

static int scatter_elements_check(ft_opctx *c, int *axis) {
  int rc = need_inputs(c, 3);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *ind = c->in[1], *u = c->in[2];
  if (ind->dtype != FT_INT64 && ind->dtype != FT_INT32)
    return ft_infer_fail(c, FT_EINVALID, "indices must be int32 or int64, not %s", ft_dtype_name(ind->dtype));
  if (u->dtype != x->dtype) return ft_infer_fail(c, FT_EINVALID, "updates are %s but data is %s", ft_dtype_name(u->dtype), ft_dtype_name(x->dtype));
  if (x->rank < 1 || ind->rank != x->rank || u->rank != x->rank)
    return ft_infer_fail(c, FT_EINVALID, "data, indices and updates need the same rank, 1 or more");
  for (int d = 0; d < x->rank; d++)
    if (u->dims[d] != ind->dims[d]) return ft_infer_fail(c, FT_EINVALID, "updates and indices differ on dim %d", d);
  rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, axis);
  return rc ? rc : const_indices_in_range(c, ind, 1, &x->dims[*axis]);
}

static int scatter_elements_infer(ft_opctx *c) {
  int axis, red, rc = scatter_elements_check(c, &axis);
  if (rc || (rc = reduction(c, &red))) return rc;
  c->out[0]->dtype = c->in[0]->dtype;
  ft_copy_shape(c->out[0], c->in[0]);
  return 0;
}

static int scatter_elements_plan(ft_opctx *c, ft_kcall *k) {
  int axis, red, rc = scatter_elements_check(c, &axis);
  if (rc || (rc = reduction(c, &red))) return rc;
  if ((rc = pick(c, k, red, scatter_elements_typed, scatter_elements_sized))) return rc;
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  int r = x->rank;
  k->p[0] = red;
  k->p[1] = r;
  k->p[2] = axis;
  k->p[3] = ind->dtype == FT_INT64;
  for (int d = 0; d < r; d++) { k->p[4 + d] = ind->dims[d]; k->p[4 + r + d] = x->dims[d]; }
  k->np = 4 + 2 * r;
  return 0;
}

/* ---- MaxUnpool ---------------------------------------------------------------------------- */

/* The shape MaxPool's input had (what the indices count in), from the attributes. */
static int maxunpool_default(ft_opctx *c, int64_t *dims) {
  const ft_tensor *x = c->in[0];
  int n = x->rank - 2;
  const int64_t *ks, *st, *pads;
  int nk = ft_attr_ints(c->node, "kernel_shape", &ks), ns = ft_attr_ints(c->node, "strides", &st);
  int np = ft_attr_ints(c->node, "pads", &pads);
  if (n < 1 || nk != n || (ns >= 0 && ns != n) || (np >= 0 && np != 2 * n))
    return ft_infer_fail(c, FT_EINVALID, "kernel_shape, strides and pads must match the %d spatial dims", n);
  dims[0] = x->dims[0];
  dims[1] = x->dims[1];
  for (int i = 0; i < n; i++)
    dims[2 + i] = (x->dims[2 + i] - 1) * (ns > 0 ? st[i] : 1) - (np > 0 ? pads[i] + pads[n + i] : 0) + ks[i];
  return 0;
}

static int maxunpool_infer(ft_opctx *c) {
  int rc = need_inputs(c, 2);
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  if (ind->dtype != FT_INT64 || ind->rank != x->rank) return ft_infer_fail(c, FT_EINVALID, "I must be int64 with X's shape");
  for (int d = 0; d < x->rank; d++)
    if (ind->dims[d] != x->dims[d]) return ft_infer_fail(c, FT_EINVALID, "I must have X's shape");
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = x->rank;
  if ((rc = maxunpool_default(c, y->dims))) return rc;
  if (c->n_in > 2 && c->in[2]) { /* output_shape */
    if ((rc = ft_need_const(c, 2, "output_shape"))) return rc;
    if (ft_numel(c->in[2]) != x->rank) return ft_infer_fail(c, FT_EINVALID, "output_shape needs %d values", x->rank);
    for (int d = 0; d < x->rank; d++) y->dims[d] = ft_const_int(c->in[2], d);
  }
  return 0;
}

static int maxunpool_plan(ft_opctx *c, ft_kcall *k) {
  static const ft_kentry maxunpool_k[] = FT_KSIZED(ft_maxunpool, NULL, NULL);
  int r = c->in[0]->rank, rc = ft_kentry_by_size(c, k, maxunpool_k, c->in[0]->dtype);
  if (rc || (rc = maxunpool_default(c, k->p + 2))) return rc;
  k->p[0] = r;
  k->p[1] = ft_numel(c->in[0]);
  for (int d = 0; d < r; d++) k->p[2 + r + d] = c->out[0]->dims[d];
  k->np = 2 + 2 * r;
  return 0;
}

const ft_opdesc ft_ops_scatter[] = {
    {"GatherND", "", gathernd_infer, gathernd_plan, "scatter", 0},
    {"ScatterND", "", scatternd_infer, scatternd_plan, "scatter", FT_OP_INPLACE},
    {"ScatterElements", "", scatter_elements_infer, scatter_elements_plan, "scatter", FT_OP_INPLACE},
    {"Scatter", "", scatter_elements_infer, scatter_elements_plan, "scatter", FT_OP_INPLACE},
    {"MaxUnpool", "", maxunpool_infer, maxunpool_plan, "scatter", 0},
    {0}};
