/* Selection and reordering: TopK, Compress, ReverseSequence, EyeLike (kernels:
 * templates/c/select.h), and NonZero and Unique, whose output shapes depend on the input's
 * values: ftax computes those two at compile time from a constant input (--bind a graph input
 * to make it one) and reports them unsupported otherwise. Compress needs only its condition
 * constant: the kernel moves the data at run time. */
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "select.h"

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++) n *= d[i];
  return n;
}

static int is_real(int dt) { return dt == FT_FLOAT || dt == FT_DOUBLE || dt == FT_FLOAT16 || dt == FT_BFLOAT16; }

static int need_input(ft_opctx *c, int i, const char *what) {
  if (i >= c->n_in || !c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d (%s) is missing", i, what);
  return 0;
}

static int alloc_data(ft_opctx *c, ft_tensor *t) {
  size_t nb = ft_nbytes(t);
  t->data = calloc(nb ? nb : 1, 1);
  if (!t->data) return ft_infer_fail(c, FT_EIO, "out of memory");
  return 0;
}

/* ---- TopK --------------------------------------------------------------------------------- */

#define KT(dt, s) {"ft_topk_" #s, ft_topk_##s, dt, 0, NULL, NULL}
static const ft_kentry topk_k[] = {
    KT(FT_FLOAT, f32), KT(FT_DOUBLE, f64), KT(FT_INT8, i8),   KT(FT_INT16, i16),  KT(FT_INT32, i32),
    KT(FT_INT64, i64), KT(FT_UINT8, u8),   KT(FT_UINT16, u16), KT(FT_UINT32, u32), KT(FT_UINT64, u64),
    {0}};
#undef KT

static int topk_geometry(ft_opctx *c, int *axis, int64_t *k) {
  int rc = need_input(c, 0, "X");
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  if (x->rank < 1) return ft_infer_fail(c, FT_EINVALID, "input must have rank 1 or more");
  if ((rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", -1), x->rank, axis))) return rc;
  if (c->opset < 10) {
    *k = ft_attr_int(c->node, "k", -1);
  } else {
    if ((rc = need_input(c, 1, "K")) || (rc = ft_need_const(c, 1, "K"))) return rc;
    if (ft_numel(c->in[1]) != 1) return ft_infer_fail(c, FT_EINVALID, "K must hold one value");
    *k = ft_const_int(c->in[1], 0);
  }
  if (*k < 0 || *k > x->dims[*axis])
    return ft_infer_fail(c, FT_EINVALID, "k=%lld is outside 0..%lld (the size of axis %d)", (long long)*k,
                         (long long)x->dims[*axis], *axis);
  return 0;
}

static int topk_infer(ft_opctx *c) {
  int axis;
  int64_t k = 0;
  int rc = topk_geometry(c, &axis, &k);
  if (rc) return rc;
  for (int j = 0; j < 2 && j < c->n_out; j++) {
    if (!c->out[j]) continue;
    ft_copy_shape(c->out[j], c->in[0]);
    c->out[j]->dims[axis] = k;
    c->out[j]->dtype = j ? FT_INT64 : c->in[0]->dtype;
  }
  return 0;
}

static int topk_plan(ft_opctx *c, ft_kcall *k) {
  int axis;
  int64_t kk = 0;
  int rc = topk_geometry(c, &axis, &kk);
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  k->entry = NULL;
  for (const ft_kentry *e = topk_k; e->name; e++)
    if (e->dtype == x->dtype) k->entry = e;
  if (!k->entry) return ft_infer_fail(c, FT_EUNSUPPORTED, "TopK is not supported for %s", ft_dtype_name(x->dtype));
  k->p[0] = prod(x->dims, 0, axis);
  k->p[1] = x->dims[axis];
  k->p[2] = prod(x->dims, axis + 1, x->rank);
  k->p[3] = kk;
  k->p[4] = ft_attr_int(c->node, "largest", 1) != 0;
  k->np = 5;
  k->scratch = (size_t)(2 * x->dims[axis]) * sizeof(int64_t);
  return 0;
}

/* ---- Compress ----------------------------------------------------------------------------- */

/* outer, n, inner (elements) of the compressed view and the number of kept slices */
static int compress_geometry(ft_opctx *c, int *axis, int64_t *outer, int64_t *n, int64_t *inner, int64_t *kept) {
  int rc = need_input(c, 0, "input");
  if (!rc) rc = need_input(c, 1, "condition");
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *cond = c->in[1];
  if (cond->dtype != FT_BOOL || cond->rank != 1) return ft_infer_fail(c, FT_EINVALID, "condition must be a 1-D bool tensor");
  if ((rc = ft_need_const(c, 1, "condition"))) return rc;
  *axis = -1;
  if (ft_attr_find(c->node, "axis")) {
    if ((rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, axis))) return rc;
    *outer = prod(x->dims, 0, *axis);
    *n = x->dims[*axis];
    *inner = prod(x->dims, *axis + 1, x->rank);
  } else {
    *outer = 1;
    *n = ft_numel(x);
    *inner = 1;
  }
  int64_t nc = cond->dims[0] < *n ? cond->dims[0] : *n;
  *kept = 0;
  for (int64_t i = 0; i < nc; i++) *kept += ((const uint8_t *)cond->data)[i] != 0;
  return 0;
}

static int compress_infer(ft_opctx *c) {
  int axis;
  int64_t outer = 0, n = 0, inner = 0, kept = 0;
  int rc = compress_geometry(c, &axis, &outer, &n, &inner, &kept);
  if (rc) return rc;
  ft_tensor *y = c->out[0];
  y->dtype = c->in[0]->dtype;
  if (axis < 0) {
    y->rank = 1;
    y->dims[0] = kept;
  } else {
    ft_copy_shape(y, c->in[0]);
    y->dims[axis] = kept;
  }
  return 0;
}

static int compress_plan(ft_opctx *c, ft_kcall *k) {
  int axis;
  int64_t outer = 0, n = 0, inner = 0, kept = 0;
  int rc = compress_geometry(c, &axis, &outer, &n, &inner, &kept);
  if (rc) return rc;
  FT_K(k, ft_compress);
  k->p[0] = outer;
  k->p[1] = n;
  k->p[2] = inner * (int64_t)ft_dtype_size(c->in[0]->dtype);
  k->p[3] = c->in[1]->dims[0];
  k->np = 4;
  return 0;
}

/* ---- ReverseSequence ---------------------------------------------------------------------- */

static int reverse_seq_axes(ft_opctx *c, int *ba, int *ta) {
  int rc = need_input(c, 0, "input");
  if (!rc) rc = need_input(c, 1, "sequence_lens");
  if (rc) return rc;
  const ft_tensor *x = c->in[0], *lens = c->in[1];
  if (x->rank < 2) return ft_infer_fail(c, FT_EINVALID, "input must have rank 2 or more");
  if ((rc = ft_norm_axis(c, ft_attr_int(c->node, "batch_axis", 1), x->rank, ba))) return rc;
  if ((rc = ft_norm_axis(c, ft_attr_int(c->node, "time_axis", 0), x->rank, ta))) return rc;
  if (*ba == *ta) return ft_infer_fail(c, FT_EINVALID, "batch_axis and time_axis are the same");
  if (lens->dtype != FT_INT64 || lens->rank != 1 || lens->dims[0] != x->dims[*ba])
    return ft_infer_fail(c, FT_EINVALID, "sequence_lens must be int64 with one length per batch entry (%lld)", (long long)x->dims[*ba]);
  return 0;
}

static int reverse_seq_infer(ft_opctx *c) {
  int ba, ta, rc = reverse_seq_axes(c, &ba, &ta);
  if (rc) return rc;
  c->out[0]->dtype = c->in[0]->dtype;
  ft_copy_shape(c->out[0], c->in[0]);
  return 0;
}

static int reverse_seq_plan(ft_opctx *c, ft_kcall *k) {
  int ba, ta, rc = reverse_seq_axes(c, &ba, &ta);
  static const ft_kentry reverse_seq_k[] = FT_KSIZED(ft_reverse_seq, NULL, NULL);
  if (rc || (rc = ft_kentry_by_size(c, k, reverse_seq_k, c->in[0]->dtype))) return rc;
  const ft_tensor *x = c->in[0];
  k->p[0] = x->rank;
  k->p[1] = ba;
  k->p[2] = ta;
  for (int d = 0; d < x->rank; d++) k->p[3 + d] = x->dims[d];
  k->np = 3 + x->rank;
  return 0;
}

/* ---- EyeLike ------------------------------------------------------------------------------ */

static int eyelike_infer(ft_opctx *c) {
  int rc = need_input(c, 0, "input");
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  if (x->rank != 2) return ft_infer_fail(c, FT_EINVALID, "input must be 2-D, not rank %d", x->rank);
  int dt = (int)ft_attr_int(c->node, "dtype", x->dtype);
  if (!ft_dtype_size(dt) || dt == FT_STRING) return ft_infer_fail(c, FT_EUNSUPPORTED, "dtype %d is not supported", dt);
  c->out[0]->dtype = dt;
  ft_copy_shape(c->out[0], x);
  return 0;
}

static int eyelike_plan(ft_opctx *c, ft_kcall *k) {
  int dt = c->out[0]->dtype;
  static const ft_kentry eyelike_k[] = FT_KSIZED(ft_eyelike, NULL, NULL);
  int rc = ft_kentry_by_size(c, k, eyelike_k, dt);
  if (rc) return rc;
  int64_t one = 1;
  switch (dt) {
  case FT_FLOAT: { float v = 1; memcpy(&one, &v, 4); break; }
  case FT_DOUBLE: { double v = 1; memcpy(&one, &v, 8); break; }
  case FT_FLOAT16: one = ft_float_to_half(1.0f); break;
  case FT_BFLOAT16: one = ft_float_to_bf16(1.0f); break;
  default: break;
  }
  k->p[0] = c->out[0]->dims[0];
  k->p[1] = c->out[0]->dims[1];
  k->p[2] = ft_attr_int(c->node, "k", 0);
  k->p[3] = one;
  k->np = 4;
  return 0;
}

/* ---- NonZero (compile time) --------------------------------------------------------------- */

static int element_nonzero(const ft_tensor *t, int64_t i) {
  return is_real(t->dtype) ? ft_const_real(t, i) != 0 : ft_const_int(t, i) != 0;
}

static int nonzero_infer(ft_opctx *c) {
  int rc = need_input(c, 0, "X");
  if (!rc) rc = ft_need_const(c, 0, "X (NonZero's output shape depends on its values)");
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  if (!ft_dtype_size(x->dtype) || x->dtype == FT_STRING) return ft_infer_fail(c, FT_EUNSUPPORTED, "type %s is not supported", ft_dtype_name(x->dtype));
  int64_t n = ft_numel(x), nnz = 0;
  for (int64_t i = 0; i < n; i++) nnz += element_nonzero(x, i);
  ft_tensor *y = c->out[0];
  y->dtype = FT_INT64;
  y->rank = 2;
  y->dims[0] = x->rank;
  y->dims[1] = nnz;
  if ((rc = alloc_data(c, y))) return rc;
  int64_t *out = (int64_t *)y->data, j = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!element_nonzero(x, i)) continue;
    int64_t rest = i;
    for (int d = x->rank - 1; d >= 0; d--) {
      out[d * nnz + j] = rest % x->dims[d];
      rest /= x->dims[d];
    }
    j++;
  }
  return 0;
}

/* ---- Unique (compile time) ---------------------------------------------------------------- */

/* The input seen as n slices along the axis (n elements when flattened): slice i is the
 * elements (o * n + i) * inner + j for o < outer, j < inner. */
typedef struct slices { const ft_tensor *x; int64_t outer, n, inner; } slices;

static int compare_slices(const slices *s, int64_t a, int64_t b) {
  int real = is_real(s->x->dtype);
  for (int64_t o = 0; o < s->outer; o++)
    for (int64_t j = 0; j < s->inner; j++) {
      int64_t ia = (o * s->n + a) * s->inner + j, ib = (o * s->n + b) * s->inner + j;
      if (real) {
        double va = ft_const_real(s->x, ia), vb = ft_const_real(s->x, ib);
        if (va != vb) return va < vb ? -1 : 1;
      } else {
        int64_t va = ft_const_int(s->x, ia), vb = ft_const_int(s->x, ib);
        if (va != vb) return va < vb ? -1 : 1;
      }
    }
  return 0;
}

/* stable merge sort of idx[0..n) by slice contents */
static void sort_slices(const slices *s, int64_t *idx, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  sort_slices(s, idx, tmp, h);
  sort_slices(s, idx + h, tmp, n - h);
  int64_t l = 0, r = h, d = 0;
  while (l < h && r < n) tmp[d++] = compare_slices(s, idx[r], idx[l]) < 0 ? idx[r++] : idx[l++];
  while (l < h) tmp[d++] = idx[l++];
  while (r < n) tmp[d++] = idx[r++];
  memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
}

static int unique_infer(ft_opctx *c) {
  int rc = need_input(c, 0, "X");
  if (!rc) rc = ft_need_const(c, 0, "X (Unique's output shape depends on its values)");
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  if (!ft_dtype_size(x->dtype) || x->dtype == FT_STRING) return ft_infer_fail(c, FT_EUNSUPPORTED, "type %s is not supported", ft_dtype_name(x->dtype));
  slices s = {x, 1, ft_numel(x), 1};
  int axis = -1;
  if (ft_attr_find(c->node, "axis")) {
    if ((rc = ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, &axis))) return rc;
    s.outer = prod(x->dims, 0, axis);
    s.n = x->dims[axis];
    s.inner = prod(x->dims, axis + 1, x->rank);
  }
  int64_t n = s.n;
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(4 * n + 1)), *tmp = order + n, *group = tmp + n, *first = group + n;
  if (!order) return ft_infer_fail(c, FT_EIO, "out of memory");
  for (int64_t i = 0; i < n; i++) order[i] = i;
  sort_slices(&s, order, tmp, n);
  /* groups of equal slices in sorted order; first[g] is the lowest index of group g */
  int64_t u = 0;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || compare_slices(&s, order[i - 1], order[i])) first[u++] = order[i];
    group[order[i]] = u - 1;
  }
  /* rank[g]: the output position of group g (sorted, or by first occurrence) */
  int64_t *rank = tmp;
  for (int64_t g = 0; g < u; g++) rank[g] = g;
  if (!ft_attr_int(c->node, "sorted", 1)) {
    int64_t pos = 0;
    for (int64_t g = 0; g < u; g++) rank[g] = -1;
    for (int64_t i = 0; i < n; i++)
      if (rank[group[i]] < 0) rank[group[i]] = pos++;
  }
  int64_t es = (int64_t)ft_dtype_size(x->dtype);
  for (int j = 0; j < c->n_out && j < 4; j++) {
    ft_tensor *y = c->out[j];
    if (!y) continue;
    if (j == 0) {
      y->dtype = x->dtype;
      if (axis < 0) { y->rank = 1; y->dims[0] = u; }
      else { ft_copy_shape(y, x); y->dims[axis] = u; }
    } else {
      y->dtype = FT_INT64;
      y->rank = 1;
      y->dims[0] = j == 2 ? n : u;
    }
    if ((rc = alloc_data(c, y))) { free(order); return rc; }
  }
  for (int64_t g = 0; g < u; g++) {
    int64_t at = rank[g];
    if (c->out[0])
      for (int64_t o = 0; o < s.outer; o++)
        memcpy((char *)c->out[0]->data + ((o * u + at) * s.inner) * es,
               (const char *)x->data + ((o * n + first[g]) * s.inner) * es, (size_t)(s.inner * es));
    if (c->n_out > 1 && c->out[1]) ((int64_t *)c->out[1]->data)[at] = first[g];
  }
  for (int64_t i = 0; i < n; i++) {
    if (c->n_out > 2 && c->out[2]) ((int64_t *)c->out[2]->data)[i] = rank[group[i]];
    if (c->n_out > 3 && c->out[3]) ((int64_t *)c->out[3]->data)[rank[group[i]]]++;
  }
  free(order);
  return 0;
}

const ft_opdesc ft_ops_select[] = {
    {"TopK", "", topk_infer, topk_plan, "select", 0},
    {"Compress", "", compress_infer, compress_plan, "select", 0},
    {"ReverseSequence", "", reverse_seq_infer, reverse_seq_plan, "select", 0},
    {"EyeLike", "", eyelike_infer, eyelike_plan, "select", 0},
    {"NonZero", "", nonzero_infer, NULL, "", FT_OP_NOEVAL},
    {"Unique", "", unique_infer, NULL, "", FT_OP_NOEVAL},
    {0}};
