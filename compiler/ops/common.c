/* Helpers shared by op descriptors: contexts, constant inputs, broadcasting, axes. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

void ft_opctx_init(ft_opctx *c, ft_graph *g, int node, ft_err *err) {
  const ft_node *n = &g->nodes[node];
  memset(c, 0, sizeof *c);
  c->node = n;
  c->opset = (int)g->opset;
  c->n_in = n->n_in;
  c->n_out = n->n_out;
  c->err = err;
  c->where = ft_node_label(g, node);
  c->graph = g;
  for (int i = 0; i < n->n_in && i < FT_MAX_IO; i++) c->in[i] = n->in[i] >= 0 ? &g->vals[n->in[i]].t : NULL;
  for (int i = 0; i < n->n_out && i < FT_MAX_IO; i++) c->out[i] = n->out[i] >= 0 ? &g->vals[n->out[i]].t : NULL;
}

int ft_kcall_run(const ft_kcall *k, const void *const *in, void *const *out, ft_err *err) {
  void *scratch = NULL;
  if (k->scratch) {
    scratch = aligned_alloc(64, (k->scratch + 63) & ~(size_t)63);
    if (!scratch) return ft_fail(err, FT_EIO, "out of memory for %zu bytes of kernel scratch", k->scratch);
  }
  k->entry->fn(k->p, k->f, in, out, scratch);
  free(scratch);
  return 0;
}

int ft_infer_fail(ft_opctx *c, int code, const char *fmt, ...) {
  char buf[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return ft_fail(c->err, code, "%s: %s", c->where ? c->where : c->node->op_type, buf);
}

/* The first graph input (in node order) that value v is computed from, or -1. */
static int input_ancestor(const ft_graph *g, int v, int depth) {
  if (v < 0 || g->vals[v].t.data || depth > 64) return -1;
  if (g->vals[v].kind == FT_V_INPUT) return v;
  int p = g->vals[v].producer;
  if (p < 0) return -1;
  for (int i = 0; i < g->nodes[p].n_in; i++) {
    int a = input_ancestor(g, g->nodes[p].in[i], depth + 1);
    if (a >= 0) return a;
  }
  return -1;
}

int ft_need_const(ft_opctx *c, int input, const char *what) {
  if (input >= c->n_in || !c->in[input])
    return ft_infer_fail(c, FT_EINVALID, "input %d (%s) is missing", input, what);
  if (c->in[input]->data) return 0;
  const ft_graph *g = c->graph;
  int v = c->node->in[input];
  if (g && v >= 0 && g->vals[v].kind == FT_V_INPUT) {
    int k = 0;
    while (k < g->n_inputs && g->inputs[k] != v) k++;
    return ft_infer_fail(c, FT_EUNSUPPORTED,
                         "input %d (%s) is graph input #%d '%s', but ftax needs it constant to know the "
                         "output shape; compile with --bind %s=FILE.pb to fix its value",
                         input, what, k, g->vals[v].name, g->vals[v].name);
  }
  int a = g && v >= 0 ? input_ancestor(g, v, 0) : -1;
  if (a >= 0) { /* say which input to bind (or whose dims to pin) to make it fold */
    int k = 0;
    while (k < g->n_inputs && g->inputs[k] != a) k++;
    return ft_infer_fail(c, FT_EUNSUPPORTED,
                         "input %d (%s) is computed at run time from '%s', which is graph input #%d '%s', but "
                         "ftax needs it constant to know the output shape; pin its symbolic dimensions with --dim, "
                         "or compile with --bind %s=FILE.pb to fix its value",
                         input, what, g->vals[a].name, k, g->vals[a].name, g->vals[a].name);
  }
  return ft_infer_fail(c, FT_EUNSUPPORTED,
                       "input %d (%s) is computed at run time, but ftax needs it constant to "
                       "know the output shape; pin every symbolic dimension with --dim so it folds",
                       input, what);
}

int64_t ft_const_int(const ft_tensor *t, int64_t i) {
  switch (t->dtype) {
  case FT_INT64: return ((const int64_t *)t->data)[i];
  case FT_INT32: return ((const int32_t *)t->data)[i];
  case FT_INT16: return ((const int16_t *)t->data)[i];
  case FT_INT8: return ((const int8_t *)t->data)[i];
  case FT_UINT8: case FT_BOOL: return ((const uint8_t *)t->data)[i];
  case FT_UINT16: return ((const uint16_t *)t->data)[i];
  case FT_UINT32: return ((const uint32_t *)t->data)[i];
  case FT_UINT64: return (int64_t)((const uint64_t *)t->data)[i];
  case FT_FLOAT: return (int64_t)((const float *)t->data)[i];
  case FT_DOUBLE: return (int64_t)((const double *)t->data)[i];
  default: return 0;
  }
}

double ft_const_real(const ft_tensor *t, int64_t i) {
  switch (t->dtype) {
  case FT_FLOAT: return ((const float *)t->data)[i];
  case FT_DOUBLE: return ((const double *)t->data)[i];
  case FT_FLOAT16: return ft_half_to_float(((const uint16_t *)t->data)[i]);
  case FT_BFLOAT16: return ft_bf16_to_float(((const uint16_t *)t->data)[i]);
  default: return (double)ft_const_int(t, i);
  }
}

int ft_broadcast_shape(ft_opctx *c, int n, const ft_tensor *const *ts, ft_tensor *out) {
  int rank = 0;
  for (int i = 0; i < n; i++) if (ts[i]->rank > rank) rank = ts[i]->rank;
  out->rank = rank;
  for (int d = 0; d < rank; d++) {
    int64_t dim = 1;
    for (int i = 0; i < n; i++) {
      int off = rank - ts[i]->rank;
      if (d < off) continue;
      int64_t x = ts[i]->dims[d - off];
      if (x == 1) continue;
      if (dim != 1 && x != dim) {
        char a[128] = "", b[128] = "";
        for (int k = 0, m = 0; k < ts[0]->rank; k++) m += snprintf(a + m, sizeof a - m, "%s%lld", k ? "x" : "", (long long)ts[0]->dims[k]);
        for (int k = 0, m = 0; k < ts[i]->rank; k++) m += snprintf(b + m, sizeof b - m, "%s%lld", k ? "x" : "", (long long)ts[i]->dims[k]);
        return ft_infer_fail(c, FT_EINVALID, "shapes [%s] and [%s] do not broadcast", a, b);
      }
      dim = x;
    }
    out->dims[d] = dim;
  }
  return 0;
}

void ft_broadcast_strides(const ft_tensor *t, const ft_tensor *out, int64_t *p) {
  int off = out->rank - t->rank;
  int64_t s = 1;
  for (int d = out->rank - 1; d >= 0; d--) {
    if (d < off) { p[d] = 0; continue; }
    int64_t x = t->dims[d - off];
    p[d] = x == 1 ? 0 : s;
    s *= x;
  }
}

int ft_norm_axis(ft_opctx *c, int64_t axis, int rank, int *out) {
  if (axis < -rank || axis >= (rank ? rank : 1))
    return ft_infer_fail(c, FT_EINVALID, "axis %lld is out of range for rank %d", (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return 0;
}

int ft_attr_int_c(ft_opctx *c, const char *name, int64_t dflt, int64_t lo, int64_t hi, int *out) {
  int64_t v;
  if (lo < INT_MIN) lo = INT_MIN;
  if (hi > INT_MAX) hi = INT_MAX;
  if (ft_attr_int_in(c->node, name, dflt, lo, hi, &v))
    return ft_infer_fail(c, FT_EINVALID, "attribute '%s' is %lld; it must be between %lld and %lld", name, (long long)v,
                         (long long)lo, (long long)hi);
  *out = (int)v;
  return 0;
}

void ft_copy_shape(ft_tensor *dst, const ft_tensor *src) {
  dst->rank = src->rank;
  for (int i = 0; i < src->rank; i++) dst->dims[i] = src->dims[i];
}

void ft_plan_axis(const ft_tensor *x, int axis, int64_t *p) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= x->dims[d];
  for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
  p[0] = outer;
  p[1] = x->rank ? x->dims[axis] : 1;
  p[2] = inner;
}

int ft_plan_broadcast(const ft_tensor *const *ins, int n, const ft_tensor *out, int64_t *p) {
  /* strides of every input over the output shape, then merge neighbouring dims that are
   * contiguous for every input and drop size-1 dims: the kernels' inner loops get long. */
  int r = out->rank;
  int64_t dims[FT_MAX_RANK], st[FT_MAX_IO][FT_MAX_RANK];
  for (int d = 0; d < r; d++) dims[d] = out->dims[d];
  for (int i = 0; i < n; i++) ft_broadcast_strides(ins[i], out, st[i]);
  int64_t md[FT_MAX_RANK], ms[FT_MAX_IO][FT_MAX_RANK];
  int m = 0;
  for (int d = 0; d < r; d++) {
    if (dims[d] == 1) continue;
    int merge = m > 0;
    for (int i = 0; i < n && merge; i++) merge = ms[i][m - 1] == st[i][d] * dims[d];
    if (merge) {
      md[m - 1] *= dims[d];
      for (int i = 0; i < n; i++) ms[i][m - 1] = st[i][d];
    } else {
      md[m] = dims[d];
      for (int i = 0; i < n; i++) ms[i][m] = st[i][d];
      m++;
    }
  }
  if (m == 0) { /* a scalar or all-ones shape: one element */
    md[0] = 1;
    for (int i = 0; i < n; i++) ms[i][0] = 1;
    m = 1;
  }
  p[0] = m;
  for (int d = 0; d < m; d++) p[1 + d] = md[d];
  for (int i = 0; i < n; i++)
    for (int d = 0; d < m; d++) p[1 + m + i * m + d] = ms[i][d];
  return 1 + m + n * m;
}

int ft_kentry_by_size(ft_opctx *c, ft_kcall *k, const ft_kentry *sized, int dtype) {
  switch (ft_dtype_size(dtype)) {
  case 1: k->entry = &sized[0]; return 0;
  case 2: k->entry = &sized[1]; return 0;
  case 4: k->entry = &sized[2]; return 0;
  case 8: k->entry = &sized[3]; return 0;
  default: return ft_infer_fail(c, FT_EUNSUPPORTED, "type %s is not supported", ft_dtype_name(dtype));
  }
}
