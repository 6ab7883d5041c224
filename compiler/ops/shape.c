/* Ops about shapes rather than values: Shape, Size and Constant are known at compile time (infer
 * writes their data and the compiler folds them); ConstantOfShape and Range have kernels but
 * their sizes come from constant inputs; Reshape, Flatten, Squeeze, Unsqueeze and Identity are
 * views of their input's bytes; Dropout at inference passes its input through.
 * Kernels: templates/c/movement.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_twins.h"
#include "movement.h"
#include "op.h"

/* ---- kernel entries ------------------------------------------------------------------------
 * With their CUDA twins (templates/cuda/elementwise.cuh, movement.cuh). In fp16 programs the
 * float data these kernels move as bytes or 4-byte elements is half: their calls are rewritten
 * for that (ft_kentry.half). */

static void fill_half(const ft_graph *g, const ft_node *n, ft_kcall *k);
static void dropout_half(const ft_graph *g, const ft_node *n, ft_kcall *k) {
  if (ft_value_dtype(g, n->n_in > 0 ? n->in[0] : -1) == FT_FLOAT) k->p[0] /= 2;
  if (n->n_out > 1 && ft_value_dtype(g, n->out[1]) == FT_FLOAT) { k->p[2] = 2; k->p[3] = 0x3c00; }
}
static const ft_twin fill_tw = {"ftc_fill<$0>", NULL, NULL, "elementwise", 0, NULL, NULL};
static const ft_twin range_tw = {"ftc_range<$0>", NULL, NULL, "elementwise", 0, NULL, NULL};
static const ft_twin dropout_tw = {"ftc_dropout_copy", NULL, NULL, "movement", 0, NULL, NULL};
static const ft_kentry fill_k[] = FT_KSIZED(ft_fill, &fill_tw, fill_half);
#define K(dt, s) {"ft_range_" #s, ft_range_##s, dt, 0, &range_tw, NULL}
static const ft_kentry range_k[] = {K(FT_FLOAT, f32), K(FT_DOUBLE, f64), K(FT_INT16, i16), K(FT_INT32, i32),
                                    K(FT_INT64, i64), {0}};
#undef K
static const ft_kentry dropout_k[] = {{"ft_dropout_copy", ft_dropout_copy, 0, 0, &dropout_tw, dropout_half}, {0}};
const ft_kentry *const ft_kernels_shape[] = {fill_k, range_k, dropout_k, NULL};

static void fill_half(const ft_graph *g, const ft_node *n, ft_kcall *k) {
  if (ft_value_dtype(g, n->n_out > 0 ? n->out[0] : -1) != FT_FLOAT) return;
  float v;
  memcpy(&v, &k->p[1], 4);
  k->p[1] = ft_half_saturating(v);
  k->entry = &fill_k[1];
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* Give out fresh data of its own size; infer of a NOEVAL op fills it. */
static int alloc_data(ft_opctx *c, ft_tensor *out) {
  size_t nb = ft_nbytes(out);
  out->data = calloc(nb ? nb : 1, 1);
  if (!out->data) return ft_infer_fail(c, FT_EIO, "out of memory");
  return 0;
}

/* A constant 1-D integer input read as a list (shape, axes): returns the count, or -1 after
 * reporting an error. */
static int const_list(ft_opctx *c, int input, const char *what, int64_t *v, int max) {
  if (ft_need_const(c, input, what)) return -1;
  const ft_tensor *t = c->in[input];
  if (t->dtype != FT_INT64 && t->dtype != FT_INT32)
    return ft_infer_fail(c, FT_EINVALID, "%s must be int64, not %s", what, ft_dtype_name(t->dtype)), -1;
  if (t->rank > 1) return ft_infer_fail(c, FT_EINVALID, "%s must be a 1-D tensor, not rank %d", what, t->rank), -1;
  int64_t n = ft_numel(t);
  if (n > max) return ft_infer_fail(c, FT_EUNSUPPORTED, "%s has %lld entries; ftax supports at most %d", what, (long long)n, max), -1;
  for (int64_t i = 0; i < n; i++) v[i] = ft_const_int(t, i);
  return (int)n;
}

/* Axes from the attribute (before opset 13 / 'since') or from input 1: count, or -1 on error,
 * or -2 when there are none. */
static int axes_of(ft_opctx *c, int input_since, int64_t *axes) {
  if (c->opset >= input_since) {
    if (c->n_in < 2 || !c->in[1]) return -2;
    return const_list(c, 1, "axes", axes, FT_MAX_RANK);
  }
  const int64_t *a;
  int n = ft_attr_ints(c->node, "axes", &a);
  if (n < 0) return -2;
  if (n > FT_MAX_RANK) return ft_infer_fail(c, FT_EINVALID, "too many axes (%d)", n), -1;
  for (int i = 0; i < n; i++) axes[i] = a[i];
  return n;
}

static int same_numel_check(ft_opctx *c, const ft_tensor *in, const ft_tensor *out) {
  if (ft_numel(in) != ft_numel(out))
    return ft_infer_fail(c, FT_EINVALID, "the output has %lld elements but the input %lld", (long long)ft_numel(out),
                         (long long)ft_numel(in));
  return 0;
}

/* ---- Shape, Size, Constant ---------------------------------------------------------------- */

static int shape_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  ft_tensor *y = c->out[0];
  int64_t r = x->rank, start = 0, end = r;
  if (c->opset >= 15) {
    start = ft_attr_int(c->node, "start", 0);
    end = ft_attr_int(c->node, "end", r);
  }
  /* negative counts from the back; both clamp to [0, rank] */
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  y->dtype = FT_INT64;
  y->rank = 1;
  y->dims[0] = end > start ? end - start : 0;
  if (alloc_data(c, y)) return FT_EIO;
  for (int64_t i = 0; i < y->dims[0]; i++) ((int64_t *)y->data)[i] = x->dims[start + i];
  return 0;
}

static int size_infer(ft_opctx *c) {
  ft_tensor *y = c->out[0];
  y->dtype = FT_INT64;
  y->rank = 0;
  if (alloc_data(c, y)) return FT_EIO;
  *(int64_t *)y->data = ft_numel(c->in[0]);
  return 0;
}

static int constant_infer(ft_opctx *c) {
  ft_tensor *y = c->out[0];
  const ft_attr *a;
  static const char *const kinds[] = {"value", "value_float", "value_floats", "value_int", "value_ints",
                                      "value_string", "value_strings", "sparse_value"};
  int given = 0;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) given += ft_attr_find(c->node, kinds[i]) != NULL;
  if (given > 1) return ft_infer_fail(c, FT_EINVALID, "has %d value attributes; a Constant has exactly one", given);
  if ((a = ft_attr_find(c->node, "value")) && a->t) {
    if (!ft_dtype_size(a->t->dtype))
      return ft_infer_fail(c, FT_EUNSUPPORTED, "a constant of type %s is not supported", ft_dtype_name(a->t->dtype));
    if (ft_tensor_clone(y, a->t)) return ft_infer_fail(c, FT_EIO, "out of memory");
    return 0;
  }
  if ((a = ft_attr_find(c->node, "value_float")) || (a = ft_attr_find(c->node, "value_int"))) {
    int is_float = !strcmp(a->name, "value_float");
    y->dtype = is_float ? FT_FLOAT : FT_INT64;
    y->rank = 0;
    if (alloc_data(c, y)) return FT_EIO;
    if (is_float) *(float *)y->data = a->f; else *(int64_t *)y->data = a->i;
    return 0;
  }
  if ((a = ft_attr_find(c->node, "value_floats")) || (a = ft_attr_find(c->node, "value_ints"))) {
    int is_float = !strcmp(a->name, "value_floats");
    y->dtype = is_float ? FT_FLOAT : FT_INT64;
    y->rank = 1;
    y->dims[0] = is_float ? a->n_floats : a->n_ints;
    if (alloc_data(c, y)) return FT_EIO;
    if (y->dims[0]) memcpy(y->data, is_float ? (void *)a->floats : (void *)a->ints, ft_nbytes(y));
    return 0;
  }
  if (ft_attr_find(c->node, "sparse_value") || ft_attr_find(c->node, "value_string") ||
      ft_attr_find(c->node, "value_strings"))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "sparse and string constants are not supported");
  return ft_infer_fail(c, FT_EINVALID, "has no value attribute");
}

/* ---- ConstantOfShape, Range --------------------------------------------------------------- */

static int constant_of_shape_infer(ft_opctx *c) {
  ft_tensor *y = c->out[0];
  int64_t dims[FT_MAX_RANK + 1];
  int n = const_list(c, 0, "shape", dims, FT_MAX_RANK);
  if (n < 0) return c->err->code;
  const ft_attr *a = ft_attr_find(c->node, "value");
  y->dtype = a && a->t ? a->t->dtype : FT_FLOAT;
  if (a && a->t && (ft_numel(a->t) != 1 || !ft_dtype_size(y->dtype)))
    return ft_infer_fail(c, FT_EINVALID, "value must be one numeric element");
  y->rank = n;
  for (int i = 0; i < n; i++) {
    if (dims[i] < 0) return ft_infer_fail(c, FT_EINVALID, "shape has a negative dimension %lld", (long long)dims[i]);
    y->dims[i] = dims[i];
  }
  return 0;
}

static int fill_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *y = c->out[0];
  const ft_attr *a = ft_attr_find(c->node, "value");
  k->p[0] = ft_numel(y);
  k->p[1] = 0;
  if (a && a->t) memcpy(&k->p[1], a->t->data, ft_dtype_size(y->dtype));
  k->np = 2;
  size_t es = ft_dtype_size(y->dtype);
  k->entry = &fill_k[es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3];
  return 0;
}

static int range_infer(ft_opctx *c) {
  for (int i = 0; i < 3; i++) {
    if (ft_need_const(c, i, i == 0 ? "start" : i == 1 ? "limit" : "delta")) return c->err->code;
    if (ft_numel(c->in[i]) != 1) return ft_infer_fail(c, FT_EINVALID, "input %d must be a scalar", i);
    if (c->in[i]->dtype != c->in[0]->dtype) return ft_infer_fail(c, FT_EINVALID, "inputs have different types");
  }
  int dt = c->in[0]->dtype;
  int64_t n;
  if (dt == FT_FLOAT || dt == FT_DOUBLE) {
    double s = ft_const_real(c->in[0], 0), l = ft_const_real(c->in[1], 0), d = ft_const_real(c->in[2], 0);
    if (dt == FT_FLOAT) { s = (float)s; l = (float)l; d = (float)d; }
    if (d == 0) return ft_infer_fail(c, FT_EINVALID, "delta is zero");
    double m = ceil((l - s) / d);
    if (isnan(m)) return ft_infer_fail(c, FT_EINVALID, "start, limit and delta give no element count (NaN)");
    n = m > 0x1p62 ? INT64_MAX : m > 0 ? (int64_t)m : 0; /* past 2^62: too large, said by the size check */
  } else if (dt == FT_INT16 || dt == FT_INT32 || dt == FT_INT64) {
    int64_t s = ft_const_int(c->in[0], 0), l = ft_const_int(c->in[1], 0), d = ft_const_int(c->in[2], 0);
    if (d == 0) return ft_infer_fail(c, FT_EINVALID, "delta is zero");
    __int128 span = (__int128)l - s; /* ceil(span / d) with C's truncating division, in 128 bits */
    __int128 m = span / d + ((span % d) != 0 && ((span < 0) == (d < 0)));
    n = m > INT64_MAX ? INT64_MAX : m < 0 ? 0 : (int64_t)m;
  } else
    return ft_infer_fail(c, FT_EUNSUPPORTED, "Range of %s is not supported", ft_dtype_name(dt));
  ft_tensor *y = c->out[0];
  y->dtype = dt;
  y->rank = 1;
  y->dims[0] = n;
  return 0;
}

static int range_plan(ft_opctx *c, ft_kcall *k) {
  k->entry = &range_k[4]; /* int64 */
  for (const ft_kentry *e = range_k; e->name; e++)
    if (e->dtype == c->in[0]->dtype) k->entry = e;
  k->p[0] = c->out[0]->dims[0];
  k->np = 1;
  return 0;
}

/* ---- views -------------------------------------------------------------------------------- */

static int reshape_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  ft_tensor *y = c->out[0];
  int64_t shape[FT_MAX_RANK];
  int n;
  if (c->opset >= 5) {
    n = const_list(c, 1, "shape", shape, FT_MAX_RANK);
    if (n < 0) return c->err->code;
  } else {
    const int64_t *a;
    n = ft_attr_ints(c->node, "shape", &a);
    if (n < 0) return ft_infer_fail(c, FT_EINVALID, "has no shape attribute");
    if (n > FT_MAX_RANK) return ft_infer_fail(c, FT_EUNSUPPORTED, "rank %d is more than ftax supports", n);
    memcpy(shape, a, sizeof(int64_t) * (size_t)n);
  }
  int allowzero = 0;
  if (c->opset >= 14 && ft_attr_int_c(c, "allowzero", 0, 0, 1, &allowzero)) return c->err->code;
  int infer_at = -1;
  int64_t known = 1;
  y->dtype = x->dtype;
  y->rank = n;
  for (int i = 0; i < n; i++) {
    int64_t v = shape[i];
    if (v == 0 && !allowzero) {
      if (i >= x->rank) return ft_infer_fail(c, FT_EINVALID, "shape[%d] is 0 (copy the input dim) but the input has rank %d", i, x->rank);
      v = x->dims[i];
    } else if (v == -1) {
      if (infer_at >= 0) return ft_infer_fail(c, FT_EINVALID, "shape has more than one -1");
      infer_at = i;
      continue;
    } else if (v < 0)
      return ft_infer_fail(c, FT_EINVALID, "shape[%d] is %lld", i, (long long)v);
    y->dims[i] = v;
    if (__builtin_mul_overflow(known, v, &known))
      return ft_infer_fail(c, FT_EINVALID, "the target shape's size overflows; it cannot hold the input's %lld elements",
                           (long long)ft_numel(x));
  }
  if (infer_at >= 0) {
    int64_t total = ft_numel(x);
    if (known == 0 ? total != 0 : total % known)
      return ft_infer_fail(c, FT_EINVALID, "cannot reshape %lld elements into a shape with -1", (long long)total);
    y->dims[infer_at] = known ? total / known : 0;
  }
  return same_numel_check(c, x, y);
}

static int flatten_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  ft_tensor *y = c->out[0];
  int64_t axis = ft_attr_int(c->node, "axis", 1);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis > x->rank)
    return ft_infer_fail(c, FT_EINVALID, "axis %lld is out of range for rank %d", (long long)ft_attr_int(c->node, "axis", 1), x->rank);
  y->dtype = x->dtype;
  y->rank = 2;
  y->dims[0] = y->dims[1] = 1;
  for (int i = 0; i < x->rank; i++) y->dims[i < axis ? 0 : 1] *= x->dims[i];
  return 0;
}

static int squeeze_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  ft_tensor *y = c->out[0];
  int64_t axes[FT_MAX_RANK];
  int n = axes_of(c, 13, axes);
  if (n == -1) return c->err->code;
  int drop[FT_MAX_RANK] = {0};
  if (n == -2) { /* no axes: every dim of size 1 */
    for (int i = 0; i < x->rank; i++) drop[i] = x->dims[i] == 1;
  } else {
    for (int i = 0; i < n; i++) {
      int a;
      if (ft_norm_axis(c, axes[i], x->rank, &a)) return c->err->code;
      if (x->dims[a] != 1) return ft_infer_fail(c, FT_EINVALID, "cannot squeeze axis %d of size %lld", a, (long long)x->dims[a]);
      drop[a] = 1;
    }
  }
  y->dtype = x->dtype;
  y->rank = 0;
  for (int i = 0; i < x->rank; i++) if (!drop[i]) y->dims[y->rank++] = x->dims[i];
  return 0;
}

static int unsqueeze_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  ft_tensor *y = c->out[0];
  int64_t axes[FT_MAX_RANK];
  int n = axes_of(c, 13, axes);
  if (n == -1) return c->err->code;
  if (n == -2) return ft_infer_fail(c, FT_EINVALID, "has no axes");
  int r = x->rank + n;
  if (r > FT_MAX_RANK) return ft_infer_fail(c, FT_EUNSUPPORTED, "rank %d is more than ftax supports", r);
  int ins[FT_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    int a;
    if (ft_norm_axis(c, axes[i], r, &a)) return c->err->code;
    if (ins[a]) return ft_infer_fail(c, FT_EINVALID, "axis %d is given twice", a);
    ins[a] = 1;
  }
  y->dtype = x->dtype;
  y->rank = r;
  for (int i = 0, j = 0; i < r; i++) y->dims[i] = ins[i] ? 1 : x->dims[j++];
  return 0;
}

static int identity_infer(ft_opctx *c) {
  if (!c->in[0]) return ft_infer_fail(c, FT_EINVALID, "has no input");
  c->out[0]->dtype = c->in[0]->dtype;
  ft_copy_shape(c->out[0], c->in[0]);
  return 0;
}

/* ---- Dropout (inference) ------------------------------------------------------------------ */

static int dropout_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  /* training_mode (opset 12+) must be known false, or true with ratio 0: anything else draws
   * random numbers that no test output could match */
  if (c->n_in > 2 && c->in[2]) {
    if (ft_need_const(c, 2, "training_mode")) return c->err->code;
    if (ft_const_int(c->in[2], 0)) {
      double ratio = 0.5;
      if (c->n_in > 1 && c->in[1]) {
        if (ft_need_const(c, 1, "ratio")) return c->err->code;
        ratio = ft_const_real(c->in[1], 0);
      }
      if (ratio != 0)
        return ft_infer_fail(c, FT_EUNSUPPORTED, "training-mode dropout (random) is not supported; export the model in eval mode");
    }
  }
  c->out[0]->dtype = x->dtype;
  ft_copy_shape(c->out[0], x);
  if (c->n_out > 1 && c->out[1]) {
    c->out[1]->dtype = c->opset >= 10 ? FT_BOOL : x->dtype; /* mask: bool since opset 10 */
    ft_copy_shape(c->out[1], x);
  }
  return 0;
}

static int dropout_plan(ft_opctx *c, ft_kcall *k) {
  k->entry = dropout_k;
  k->p[0] = (int64_t)ft_nbytes(c->in[0]);
  k->p[1] = k->p[2] = k->p[3] = 0;
  if (c->n_out > 1 && c->out[1]) {
    const ft_tensor *m = c->out[1];
    k->p[1] = ft_numel(m);
    k->p[2] = (int64_t)ft_dtype_size(m->dtype);
    switch (m->dtype) { /* the bit pattern of 1 */
    case FT_FLOAT: { float one = 1; memcpy(&k->p[3], &one, 4); break; }
    case FT_DOUBLE: { double one = 1; memcpy(&k->p[3], &one, 8); break; }
    case FT_FLOAT16: k->p[3] = 0x3c00; break;
    case FT_BFLOAT16: k->p[3] = 0x3f80; break;
    default: k->p[3] = 1; break;
    }
  }
  k->np = 4;
  return 0;
}

#define VIEW(name, infer) {name, "", infer, NULL, "", FT_OP_ALIAS | FT_OP_PAT(FT_PAT_INJECTIVE)}
const ft_opdesc ft_ops_shape[] = {
    {"Shape", "", shape_infer, NULL, "", FT_OP_NOEVAL},
    {"Size", "", size_infer, NULL, "", FT_OP_NOEVAL},
    {"Constant", "", constant_infer, NULL, "", FT_OP_NOEVAL},
    {"ConstantOfShape", "", constant_of_shape_infer, fill_plan, "movement", 0},
    {"Range", "", range_infer, range_plan, "movement", 0},
    VIEW("Reshape", reshape_infer),
    VIEW("Flatten", flatten_infer),
    VIEW("Squeeze", squeeze_infer),
    VIEW("Unsqueeze", unsqueeze_infer),
    {"Identity", "", identity_infer, NULL, "", FT_OP_ALIAS | FT_OP_PAT(FT_PAT_ELEMWISE)},
    {"Dropout", "", dropout_infer, dropout_plan, "movement", FT_OP_INPLACE},
    {0}};
