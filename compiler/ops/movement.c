/* Data movement: Transpose, Concat, Split, Slice, Gather, GatherElements, Expand, Tile, Pad,
 * DepthToSpace, SpaceToDepth, Trilu, OneHot; conversion and selection: Cast, CastLike, Where,
 * Not. Kernels: templates/c/movement.h, cast.h, where.h.
 *
 * Most of these are one kernel: a strided copy. Transpose, Slice, Expand, Tile and the
 * depth/space shuffles differ only in the dims and strides their plans hand to ft_copy_nd_N,
 * which is chosen by element size, so every dtype (bool and float16 included) works alike. */
#include <string.h>

#include "cast.h"
#include "copy.h"
#include "cuda_twins.h"
#include "dimmath.h"
#include "movement.h"
#include "op.h"
#include "where.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static void dense_strides(const ft_tensor *t, int64_t *s) {
  int64_t acc = 1;
  for (int d = t->rank - 1; d >= 0; d--) { s[d] = acc; acc *= t->dims[d]; }
}

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++) n *= d[i];
  return n;
}

/* ---- kernel entries ------------------------------------------------------------------------
 * With their CUDA twins (templates/cuda/movement.cuh, elementwise.cuh). In fp16 programs the
 * float data these kernels move as bytes or 4-byte elements is half: their calls are rewritten
 * for that (ft_kentry.half). */

static int in_float(const ft_graph *g, const ft_node *n, int i) {
  return i < n->n_in && ft_value_dtype(g, n->in[i]) == FT_FLOAT;
}
static void bytes_half(const ft_graph *g, const ft_node *n, ft_kcall *k) { /* p[0] bytes */
  if (in_float(g, n, 0)) k->p[0] /= 2;
}
static void concat_half(const ft_graph *g, const ft_node *n, ft_kcall *k) { /* p[2...] bytes per input */
  if (ft_value_dtype(g, n->n_out > 0 ? n->out[0] : -1) != FT_FLOAT) return;
  for (int i = 0; i < k->p[0]; i++) k->p[2 + i] /= 2;
}
static void split_half(const ft_graph *g, const ft_node *n, ft_kcall *k) { /* p[2...] bytes per output */
  if (!in_float(g, n, 0)) return;
  for (int i = 0; i < k->p[0]; i++) k->p[2 + i] /= 2;
}
static void gather_half(const ft_graph *g, const ft_node *n, ft_kcall *k) { /* p[3] bytes per row */
  if (in_float(g, n, 0)) k->p[3] /= 2;
}
static void copy_nd_half(const ft_graph *g, const ft_node *n, ft_kcall *k);
static void where_half(const ft_graph *g, const ft_node *n, ft_kcall *k);
static void pad_half(const ft_graph *g, const ft_node *n, ft_kcall *k);

#define TWIN(tw, launcher, file) static const ft_twin tw = {launcher, NULL, NULL, file, 0, NULL, NULL};
TWIN(copy_nd_tw, "ftc_copy_nd<$0>", "movement") TWIN(pad_tw, "ftc_pad<$0>", "movement")
TWIN(where_tw, "ftc_where<$0>", "elementwise") TWIN(concat_tw, "ftc_concat", "movement")
TWIN(split_tw, "ftc_split", "movement") TWIN(copy_bytes_tw, "ftc_copy_bytes", "movement")
TWIN(gather_tw, "ftc_gather<$0>", "movement")
#undef TWIN
/* the last template argument: whether the destination is bool (stores 0 or 1) */
static const ft_twin cast_tw[2] = {{"ftc_cast<$0, $1, 0>", NULL, NULL, "elementwise", 0, NULL, NULL},
                                   {"ftc_cast<$0, $1, 1>", NULL, NULL, "elementwise", 0, NULL, NULL}};

static const ft_kentry copy_nd_k[] = FT_KSIZED(ft_copy_nd, &copy_nd_tw, copy_nd_half);
static const ft_kentry pad_k[] = FT_KSIZED(ft_pad, &pad_tw, pad_half);
static const ft_kentry where_k[] = FT_KSIZED(ft_where, &where_tw, where_half);
static const ft_kentry gather_elements_i32_k[] = FT_KSIZED(ft_gather_elements_i32, NULL, NULL);
static const ft_kentry gather_elements_i64_k[] = FT_KSIZED(ft_gather_elements_i64, NULL, NULL);
static const ft_kentry trilu_k[] = FT_KSIZED(ft_trilu, NULL, NULL);
static const ft_kentry onehot_k[] = FT_KSIZED(ft_onehot, NULL, NULL);
static const ft_kentry concat_k[] = {{"ft_concat", ft_concat, 0, 0, &concat_tw, concat_half}, {0}};
static const ft_kentry split_k[] = {{"ft_split", ft_split, 0, 0, &split_tw, split_half}, {0}};
const ft_kentry ft_copy_bytes_entry[] = {{"ft_copy_bytes", ft_copy_bytes, 0, 0, &copy_bytes_tw, bytes_half}, {0}};
/* by the type of the indices */
static const ft_kentry gather_k[] = {{"ft_gather_i32", ft_gather_i32, FT_INT32, 0, &gather_tw, gather_half},
                                     {"ft_gather_i64", ft_gather_i64, FT_INT64, 0, &gather_tw, gather_half}, {0}};
/* by source and destination type */
static const ft_kentry cast_k[] = {
#define ROW(S, TS, DS, D, TD, DD) {"ft_cast_" #S "_" #D, ft_cast_##S##_##D, DS, DD, &cast_tw[DD == FT_BOOL], NULL},
#define FROM(S, TS, DS) FT_CAST_TYPES_TO(ROW, S, TS, DS)
    FT_CAST_TYPES(FROM)
#undef FROM
#undef ROW
    {0}};
const ft_kentry *const ft_kernels_movement[] = {copy_nd_k, pad_k, where_k, concat_k, split_k, ft_copy_bytes_entry,
                                                gather_k, cast_k, NULL};

static void copy_nd_half(const ft_graph *g, const ft_node *n, ft_kcall *k) {
  if (in_float(g, n, 0)) k->entry = &copy_nd_k[1];
}
static void where_half(const ft_graph *g, const ft_node *n, ft_kcall *k) {
  if (in_float(g, n, 1)) k->entry = &where_k[1];
}
static void pad_half(const ft_graph *g, const ft_node *n, ft_kcall *k) { /* and the fill value */
  if (!in_float(g, n, 0)) return;
  int r = (int)k->p[0];
  float v;
  memcpy(&v, &k->p[2 + 3 * r], 4);
  k->p[2 + 3 * r] = ft_half_saturating(v);
  k->entry = &pad_k[1];
}

/* Plan a strided copy of input 0 into the dense output: dims and strides (in elements) of the
 * input, one per output dim. Size-1 dims are dropped and dims that are contiguous in the input
 * are merged, so most permutations and slices come down to one to three dims. */
static int plan_strided(ft_opctx *c, ft_kcall *k, int r, int64_t base, const int64_t *dims, const int64_t *st) {
  int64_t md[FT_ND_MAX], ms[FT_ND_MAX];
  int m = 0, empty = 0;
  for (int d = 0; d < r; d++) {
    if (dims[d] == 0) empty = 1;
    if (dims[d] == 1) continue;
    if (m > 0 && ms[m - 1] == st[d] * dims[d]) { md[m - 1] *= dims[d]; ms[m - 1] = st[d]; }
    else { md[m] = dims[d]; ms[m] = st[d]; m++; }
  }
  if (empty) { m = 1; md[0] = 0; ms[0] = 1; }
  k->p[0] = m;
  k->p[1] = empty ? 0 : base;
  for (int d = 0; d < m; d++) { k->p[2 + d] = md[d]; k->p[2 + m + d] = ms[d]; }
  k->np = 2 + 2 * m;
  return ft_kentry_by_size(c, k, copy_nd_k, c->in[0]->dtype);
}

static int need_inputs(ft_opctx *c, int n) {
  for (int i = 0; i < n; i++)
    if (i >= c->n_in || !c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d is missing", i);
  return 0;
}

/* A constant integer input read as a list, for counts and shapes: -1 after an error. */
static int const_list(ft_opctx *c, int input, const char *what, int64_t *v, int max) {
  if (ft_need_const(c, input, what)) return -1;
  const ft_tensor *t = c->in[input];
  if (t->dtype != FT_INT64 && t->dtype != FT_INT32)
    return ft_infer_fail(c, FT_EINVALID, "%s must be int64, not %s", what, ft_dtype_name(t->dtype)), -1;
  int64_t n = ft_numel(t);
  if (n > max) return ft_infer_fail(c, FT_EUNSUPPORTED, "%s has %lld entries; ftax supports at most %d", what, (long long)n, max), -1;
  for (int64_t i = 0; i < n; i++) v[i] = ft_const_int(t, i);
  return (int)n;
}

/* The bit pattern of v stored as dtype (padding values, constants). */
static int64_t value_bits(double v, int dt) {
  int64_t b = 0;
  switch (dt) {
  case FT_FLOAT: { float x = (float)v; memcpy(&b, &x, 4); break; }
  case FT_DOUBLE: memcpy(&b, &v, 8); break;
  case FT_FLOAT16: b = ft_float_to_half((float)v); break;
  case FT_BFLOAT16: b = ft_float_to_bf16((float)v); break;
  case FT_BOOL: b = v != 0; break;
  case FT_INT8: { int8_t x = (int8_t)v; memcpy(&b, &x, 1); break; }
  case FT_INT16: { int16_t x = (int16_t)v; memcpy(&b, &x, 2); break; }
  case FT_INT32: { int32_t x = (int32_t)v; memcpy(&b, &x, 4); break; }
  case FT_UINT64: { uint64_t x = (uint64_t)v; memcpy(&b, &x, 8); break; }
  default: b = (int64_t)v; break; /* int64 and the unsigned types: the low bytes are the value */
  }
  return b;
}

/* ---- Transpose ---------------------------------------------------------------------------- */

static int transpose_perm(ft_opctx *c, int *perm) {
  const ft_tensor *x = c->in[0];
  const int64_t *a;
  int n = ft_attr_ints(c->node, "perm", &a);
  if (n < 0) { /* default: reverse the dims */
    for (int i = 0; i < x->rank; i++) perm[i] = x->rank - 1 - i;
    return 0;
  }
  if (n != x->rank) return ft_infer_fail(c, FT_EINVALID, "perm has %d entries for a rank-%d input", n, x->rank);
  int seen[FT_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    int ax;
    if (ft_norm_axis(c, a[i], x->rank, &ax)) return c->err->code;
    if (seen[ax]++) return ft_infer_fail(c, FT_EINVALID, "perm repeats axis %d", ax);
    perm[i] = ax;
  }
  return 0;
}

static int transpose_infer(ft_opctx *c) {
  int perm[FT_MAX_RANK];
  if (transpose_perm(c, perm)) return c->err->code;
  const ft_tensor *x = c->in[0];
  c->out[0]->dtype = x->dtype;
  c->out[0]->rank = x->rank;
  for (int i = 0; i < x->rank; i++) c->out[0]->dims[i] = x->dims[perm[i]];
  return 0;
}

static int transpose_plan(ft_opctx *c, ft_kcall *k) {
  int perm[FT_MAX_RANK];
  if (transpose_perm(c, perm)) return c->err->code;
  const ft_tensor *x = c->in[0];
  int64_t s[FT_MAX_RANK], dims[FT_MAX_RANK], st[FT_MAX_RANK];
  dense_strides(x, s);
  for (int i = 0; i < x->rank; i++) { dims[i] = x->dims[perm[i]]; st[i] = s[perm[i]]; }
  return plan_strided(c, k, x->rank, 0, dims, st);
}

/* ---- Concat, Split ------------------------------------------------------------------------ */

static int concat_infer(ft_opctx *c) {
  if (c->n_in < 1 || need_inputs(c, c->n_in)) return c->err->code ? c->err->code : ft_infer_fail(c, FT_EINVALID, "has no inputs");
  const ft_tensor *x0 = c->in[0];
  int axis = 0;
  if (ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x0->rank, &axis)) return c->err->code;
  ft_tensor *y = c->out[0];
  y->dtype = x0->dtype;
  ft_copy_shape(y, x0);
  y->dims[axis] = 0;
  for (int i = 0; i < c->n_in; i++) {
    const ft_tensor *x = c->in[i];
    if (x->dtype != x0->dtype) return ft_infer_fail(c, FT_EINVALID, "inputs have different types (%s and %s)", ft_dtype_name(x0->dtype), ft_dtype_name(x->dtype));
    if (x->rank != x0->rank) return ft_infer_fail(c, FT_EINVALID, "inputs have different ranks (%d and %d)", x0->rank, x->rank);
    for (int d = 0; d < x->rank; d++)
      if (d != axis && x->dims[d] != x0->dims[d])
        return ft_infer_fail(c, FT_EINVALID, "input %d has size %lld on dim %d, input 0 has %lld", i, (long long)x->dims[d], d, (long long)x0->dims[d]);
    y->dims[axis] += x->dims[axis];
  }
  return 0;
}

static int concat_plan(ft_opctx *c, ft_kcall *k) {
  int axis = 0;
  ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), c->in[0]->rank, &axis);
  size_t es = ft_dtype_size(c->in[0]->dtype);
  k->entry = concat_k;
  k->p[0] = c->n_in;
  k->p[1] = prod(c->out[0]->dims, 0, axis);
  for (int i = 0; i < c->n_in; i++) k->p[2 + i] = prod(c->in[i]->dims, axis, c->in[i]->rank) * (int64_t)es;
  k->np = 2 + c->n_in;
  return 0;
}

/* ftax.Stack (axis): equal-shaped inputs stacked along a new dim `axis` (0..rank), what Loop's and
 * Scan's scan outputs are once unrolled (compiler/passes/loop.c); Concat's kernel, each input one
 * block of the new dim. */
static int stack_infer(ft_opctx *c) {
  if (c->n_in < 1 || need_inputs(c, c->n_in)) return c->err->code ? c->err->code : ft_infer_fail(c, FT_EINVALID, "has no inputs");
  const ft_tensor *x0 = c->in[0];
  int64_t axis = ft_attr_int(c->node, "axis", 0);
  if (axis < 0) axis += x0->rank + 1; /* counted from the end of the stacked shape, as Concat's */
  if (axis < 0 || axis > x0->rank || x0->rank >= FT_MAX_RANK)
    return ft_infer_fail(c, x0->rank >= FT_MAX_RANK ? FT_EUNSUPPORTED : FT_EINVALID, "axis %lld for inputs of rank %d (from "
                         "the axis of the node this Stack was made for)", (long long)ft_attr_int(c->node, "axis", 0), x0->rank);
  for (int i = 1; i < c->n_in; i++) {
    int same = c->in[i]->dtype == x0->dtype && c->in[i]->rank == x0->rank;
    for (int d = 0; same && d < x0->rank; d++) same = c->in[i]->dims[d] == x0->dims[d];
    if (!same) return ft_infer_fail(c, FT_EUNSUPPORTED, "input %d differs from input 0 in shape or type (a scan output whose shape changes from one iteration to the next)", i);
  }
  ft_tensor *y = c->out[0];
  y->dtype = x0->dtype;
  y->rank = x0->rank + 1;
  for (int d = 0, s = 0; d < y->rank; d++) y->dims[d] = d == axis ? c->n_in : x0->dims[s++];
  return 0;
}

static int stack_plan(ft_opctx *c, ft_kcall *k) {
  int axis;
  if (ft_attr_int_c(c, "axis", 0, -c->in[0]->rank - 1, c->in[0]->rank, &axis)) return c->err->code;
  if (axis < 0) axis += c->in[0]->rank + 1;
  size_t es = ft_dtype_size(c->in[0]->dtype);
  k->entry = concat_k;
  k->p[0] = c->n_in;
  k->p[1] = prod(c->in[0]->dims, 0, axis);
  for (int i = 0; i < c->n_in; i++) k->p[2 + i] = prod(c->in[0]->dims, axis, c->in[0]->rank) * (int64_t)es;
  k->np = 2 + c->n_in;
  return 0;
}

/* Split sizes along the axis: from the attribute (before opset 13), input 1 (13+), or equal
 * parts (num_outputs at opset 18, else one per output; the last part may be smaller). */
static int split_sizes(ft_opctx *c, int *axis, int64_t *sizes) {
  const ft_tensor *x = c->in[0];
  if (ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, axis)) return -1;
  int64_t dim = x->dims[*axis];
  int n = -1;
  if (c->opset >= 13 && c->n_in > 1 && c->in[1]) {
    n = const_list(c, 1, "split", sizes, FT_MAX_IO);
    if (n < 0) return -1;
  } else if (c->opset < 13) {
    const int64_t *a;
    n = ft_attr_ints(c->node, "split", &a);
    if (n > FT_MAX_IO) return ft_infer_fail(c, FT_EUNSUPPORTED, "more than %d parts", FT_MAX_IO), -1;
    for (int i = 0; i < n; i++) sizes[i] = a[i];
  }
  if (n < 0) { /* equal parts */
    n = c->n_out;
    if (c->opset >= 18 && ft_attr_find(c->node, "num_outputs") && ft_attr_int_c(c, "num_outputs", n, 1, FT_MAX_IO, &n))
      return -1;
    if (n != c->n_out || n < 1) return ft_infer_fail(c, FT_EINVALID, "num_outputs is %d but the node has %d outputs", n, c->n_out), -1;
    /* before num_outputs (opset 18) the parts are equal; since, the last may be smaller, not empty */
    int64_t part = (dim + n - 1) / n;
    for (int i = 0; i < n; i++) sizes[i] = i < n - 1 ? part : dim - part * (n - 1);
    if ((c->opset < 18 && dim % n) || (dim > 0 && sizes[n - 1] <= 0))
      return ft_infer_fail(c, FT_EINVALID, "cannot split a dimension of %lld into %d %sparts", (long long)dim, n,
                           c->opset < 18 ? "equal " : ""), -1;
    return n;
  }
  if (n != c->n_out) return ft_infer_fail(c, FT_EINVALID, "split has %d sizes for %d outputs", n, c->n_out), -1;
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    if (sizes[i] < 0) return ft_infer_fail(c, FT_EINVALID, "split size %lld is negative", (long long)sizes[i]), -1;
    if (__builtin_add_overflow(sum, sizes[i], &sum)) return ft_infer_fail(c, FT_EINVALID, "split sizes overflow"), -1;
  }
  if (sum != dim) return ft_infer_fail(c, FT_EINVALID, "split sizes add up to %lld, the dim is %lld", (long long)sum, (long long)dim), -1;
  return n;
}

static int split_infer(ft_opctx *c) {
  int axis = 0;
  int64_t sizes[FT_MAX_IO];
  int n = split_sizes(c, &axis, sizes);
  if (n < 0) return c->err->code;
  for (int i = 0; i < n; i++) {
    if (!c->out[i]) continue;
    c->out[i]->dtype = c->in[0]->dtype;
    ft_copy_shape(c->out[i], c->in[0]);
    c->out[i]->dims[axis] = sizes[i];
  }
  return 0;
}

static int split_plan(ft_opctx *c, ft_kcall *k) {
  int axis = 0;
  int64_t sizes[FT_MAX_IO];
  int n = split_sizes(c, &axis, sizes);
  if (n < 0) return c->err->code;
  const ft_tensor *x = c->in[0];
  int64_t inner = prod(x->dims, axis + 1, x->rank) * (int64_t)ft_dtype_size(x->dtype);
  k->entry = split_k;
  k->p[0] = n;
  k->p[1] = prod(x->dims, 0, axis);
  for (int i = 0; i < n; i++) k->p[2 + i] = sizes[i] * inner;
  k->np = 2 + n;
  return 0;
}

/* ---- Slice -------------------------------------------------------------------------------- */

/* Per input dim: first element, step and count of the slice. */
static int slice_params(ft_opctx *c, int64_t *first, int64_t *step, int64_t *len) {
  const ft_tensor *x = c->in[0];
  int r = x->rank;
  int64_t starts[FT_MAX_RANK], ends[FT_MAX_RANK], axes[FT_MAX_RANK], steps[FT_MAX_RANK];
  int n, na = -1, ns = -1;
  if (c->opset >= 10) {
    if ((n = const_list(c, 1, "starts", starts, FT_MAX_RANK)) < 0) return -1;
    if (const_list(c, 2, "ends", ends, FT_MAX_RANK) != n) return c->err->code ? -1 : (ft_infer_fail(c, FT_EINVALID, "starts and ends differ in length"), -1);
    if (c->n_in > 3 && c->in[3] && (na = const_list(c, 3, "axes", axes, FT_MAX_RANK)) < 0) return -1;
    if (c->n_in > 4 && c->in[4] && (ns = const_list(c, 4, "steps", steps, FT_MAX_RANK)) < 0) return -1;
  } else {
    const int64_t *a, *b, *ax;
    n = ft_attr_ints(c->node, "starts", &a);
    if (n < 0 || n > FT_MAX_RANK || ft_attr_ints(c->node, "ends", &b) != n)
      return ft_infer_fail(c, FT_EINVALID, "starts and ends must be given with the same length"), -1;
    memcpy(starts, a, sizeof(int64_t) * (size_t)n);
    memcpy(ends, b, sizeof(int64_t) * (size_t)n);
    na = ft_attr_ints(c->node, "axes", &ax);
    if (na > FT_MAX_RANK) return ft_infer_fail(c, FT_EINVALID, "too many axes"), -1;
    if (na > 0) memcpy(axes, ax, sizeof(int64_t) * (size_t)na);
  }
  if ((na >= 0 && na != n) || (ns >= 0 && ns != n))
    return ft_infer_fail(c, FT_EINVALID, "starts, ends, axes and steps differ in length"), -1;
  for (int d = 0; d < r; d++) { first[d] = 0; step[d] = 1; len[d] = x->dims[d]; }
  int seen[FT_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    int ax = i;
    if (na >= 0 && ft_norm_axis(c, axes[i], r, &ax)) return -1;
    if (ax >= r) return ft_infer_fail(c, FT_EINVALID, "more starts than input dims"), -1;
    if (seen[ax]++) return ft_infer_fail(c, FT_EINVALID, "axis %d is sliced twice", ax), -1;
    int64_t dim = x->dims[ax], s = ns >= 0 ? steps[i] : 1, b = starts[i], e = ends[i];
    if (s == 0) return ft_infer_fail(c, FT_EINVALID, "step is 0 on axis %d", ax), -1;
    if (s == INT64_MIN) s = -INT64_MAX; /* same slice; -s must not overflow */
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    if (s > 0) {
      b = b < 0 ? 0 : b > dim ? dim : b;
      e = e < 0 ? 0 : e > dim ? dim : e;
      len[ax] = e > b ? 1 + (e - b - 1) / s : 0; /* ceil((e - b) / s) without overflow for a huge s */
    } else {
      b = b < 0 ? -1 : b > dim - 1 ? dim - 1 : b;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      len[ax] = b > e ? 1 + (b - e - 1) / (-s) : 0;
    }
    first[ax] = len[ax] ? b : 0;
    /* a step that takes one element (or none) never moves: keep the plan's strides small */
    step[ax] = len[ax] > 1 ? s : 1;
  }
  return 0;
}

static int slice_infer(ft_opctx *c) {
  int64_t first[FT_MAX_RANK], step[FT_MAX_RANK], len[FT_MAX_RANK];
  if (slice_params(c, first, step, len)) return c->err->code;
  ft_tensor *y = c->out[0];
  y->dtype = c->in[0]->dtype;
  y->rank = c->in[0]->rank;
  for (int d = 0; d < y->rank; d++) y->dims[d] = len[d];
  return 0;
}

static int slice_plan(ft_opctx *c, ft_kcall *k) {
  int64_t first[FT_MAX_RANK], step[FT_MAX_RANK], len[FT_MAX_RANK], s[FT_MAX_RANK], st[FT_MAX_RANK];
  if (slice_params(c, first, step, len)) return c->err->code;
  const ft_tensor *x = c->in[0];
  dense_strides(x, s);
  int64_t base = 0;
  for (int d = 0; d < x->rank; d++) { base += first[d] * s[d]; st[d] = step[d] * s[d]; }
  return plan_strided(c, k, x->rank, base, len, st);
}

/* ---- Gather, GatherElements --------------------------------------------------------------- */

static int check_indices(ft_opctx *c, const ft_tensor *ind, int64_t dim) {
  if (ind->dtype != FT_INT64 && ind->dtype != FT_INT32)
    return ft_infer_fail(c, FT_EINVALID, "indices must be int32 or int64, not %s", ft_dtype_name(ind->dtype));
  if (!ft_known_const(c, ind)) return 0; /* run-time indices: out of range gives zeros */
  for (int64_t i = 0; i < ft_numel(ind); i++) {
    int64_t j = ft_const_int(ind, i);
    if (j < -dim || j >= dim)
      return ft_infer_fail(c, FT_EINVALID, "index %lld is out of range for a dim of size %lld", (long long)j, (long long)dim);
  }
  return 0;
}

static int gather_infer(ft_opctx *c) {
  if (need_inputs(c, 2)) return c->err->code;
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  int axis = 0;
  if (ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, &axis)) return c->err->code;
  if (x->rank == 0) return ft_infer_fail(c, FT_EINVALID, "cannot gather from a scalar");
  if (check_indices(c, ind, x->dims[axis])) return c->err->code;
  int r = x->rank - 1 + ind->rank;
  if (r > FT_MAX_RANK) return ft_infer_fail(c, FT_EUNSUPPORTED, "output rank %d is more than ftax supports", r);
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = 0;
  for (int d = 0; d < axis; d++) y->dims[y->rank++] = x->dims[d];
  for (int d = 0; d < ind->rank; d++) y->dims[y->rank++] = ind->dims[d];
  for (int d = axis + 1; d < x->rank; d++) y->dims[y->rank++] = x->dims[d];
  return 0;
}

static int gather_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  int axis = 0;
  ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, &axis);
  k->entry = &gather_k[ind->dtype == FT_INT32 ? 0 : 1];
  k->p[0] = prod(x->dims, 0, axis);
  k->p[1] = x->dims[axis];
  k->p[2] = ft_numel(ind);
  k->p[3] = prod(x->dims, axis + 1, x->rank) * (int64_t)ft_dtype_size(x->dtype);
  k->np = 4;
  if (!ft_dtype_size(x->dtype)) return ft_infer_fail(c, FT_EUNSUPPORTED, "type %s is not supported", ft_dtype_name(x->dtype));
  return 0;
}

static int gather_elements_infer(ft_opctx *c) {
  if (need_inputs(c, 2)) return c->err->code;
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  int axis = 0;
  if (ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), x->rank, &axis)) return c->err->code;
  if (ind->rank != x->rank) return ft_infer_fail(c, FT_EINVALID, "indices have rank %d, data rank %d", ind->rank, x->rank);
  for (int d = 0; d < x->rank; d++)
    if (d != axis && ind->dims[d] > x->dims[d])
      return ft_infer_fail(c, FT_EINVALID, "indices dim %d (%lld) exceeds the data's (%lld)", d, (long long)ind->dims[d], (long long)x->dims[d]);
  if (check_indices(c, ind, x->dims[axis])) return c->err->code;
  c->out[0]->dtype = x->dtype;
  ft_copy_shape(c->out[0], ind);
  return 0;
}

static int gather_elements_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0], *ind = c->in[1];
  int axis = 0, r = x->rank;
  ft_norm_axis(c, ft_attr_int(c->node, "axis", 0), r, &axis);
  int rc = ind->dtype == FT_INT32 ? ft_kentry_by_size(c, k, gather_elements_i32_k, x->dtype) : ft_kentry_by_size(c, k, gather_elements_i64_k, x->dtype);
  if (rc) return rc;
  k->p[0] = r;
  k->p[1] = axis;
  for (int d = 0; d < r; d++) k->p[2 + d] = ind->dims[d];
  dense_strides(x, k->p + 2 + r);
  k->p[2 + 2 * r] = x->dims[axis];
  k->np = 3 + 2 * r;
  return 0;
}

/* ---- Expand, Tile ------------------------------------------------------------------------- */

static int expand_infer(ft_opctx *c) {
  int64_t shape[FT_MAX_RANK];
  int n = const_list(c, 1, "shape", shape, FT_MAX_RANK);
  if (n < 0) return c->err->code;
  ft_tensor target = {c->in[0]->dtype, n, {0}, NULL};
  for (int i = 0; i < n; i++) {
    if (shape[i] < 0) return ft_infer_fail(c, FT_EINVALID, "shape[%d] is %lld", i, (long long)shape[i]);
    target.dims[i] = shape[i];
  }
  const ft_tensor *ts[2] = {c->in[0], &target};
  if (ft_broadcast_shape(c, 2, ts, c->out[0])) return c->err->code;
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

static int expand_plan(ft_opctx *c, ft_kcall *k) {
  int64_t st[FT_MAX_RANK];
  ft_broadcast_strides(c->in[0], c->out[0], st);
  return plan_strided(c, k, c->out[0]->rank, 0, c->out[0]->dims, st);
}

static int tile_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  int64_t rep[FT_MAX_RANK];
  int n = const_list(c, 1, "repeats", rep, FT_MAX_RANK);
  if (n < 0) return c->err->code;
  if (n != x->rank) return ft_infer_fail(c, FT_EINVALID, "repeats has %d entries for a rank-%d input", n, x->rank);
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = x->rank;
  for (int d = 0; d < n; d++) {
    if (rep[d] < 0) return ft_infer_fail(c, FT_EINVALID, "repeats[%d] is negative", d);
    if (ft_dim_mul(c, x->dims[d], rep[d], &y->dims[d], "the output of Tile")) return c->err->code;
  }
  return 0;
}

static int tile_plan(ft_opctx *c, ft_kcall *k) {
  /* output dim d is (repeat, x dim): the repeat walks with stride 0 */
  const ft_tensor *x = c->in[0];
  int64_t s[FT_MAX_RANK], dims[2 * FT_MAX_RANK], st[2 * FT_MAX_RANK];
  dense_strides(x, s);
  for (int d = 0; d < x->rank; d++) {
    dims[2 * d] = x->dims[d] ? c->out[0]->dims[d] / x->dims[d] : 0;
    st[2 * d] = 0;
    dims[2 * d + 1] = x->dims[d];
    st[2 * d + 1] = s[d];
  }
  return plan_strided(c, k, 2 * x->rank, 0, dims, st);
}

/* ---- DepthToSpace, SpaceToDepth ----------------------------------------------------------- */

static int d2s_check(ft_opctx *c, int64_t *bs) {
  const ft_tensor *x = c->in[0];
  *bs = ft_attr_int(c->node, "blocksize", 0);
  if (x->rank != 4) return ft_infer_fail(c, FT_EINVALID, "needs a 4-D input, not rank %d", x->rank);
  if (*bs < 1) return ft_infer_fail(c, FT_EINVALID, "blocksize must be positive");
  /* blocksize^2 divides (DepthToSpace) or multiplies (SpaceToDepth) the channels: keep it and
   * its products with the input's dims inside int64 */
  int64_t bs2, t;
  if (ft_dim_mul(c, *bs, *bs, &bs2, "blocksize^2") || ft_dim_mul(c, bs2, x->dims[1], &t, "blocksize^2 x channels") ||
      ft_dim_mul(c, *bs, x->dims[2], &t, "blocksize x height") || ft_dim_mul(c, *bs, x->dims[3], &t, "blocksize x width") ||
      ft_dim_mul(c, bs2, ft_numel(x), &t, "blocksize^2 x the input's elements"))
    return c->err->code;
  return 0;
}

static int depth_to_space_infer(ft_opctx *c) {
  int64_t bs;
  if (d2s_check(c, &bs)) return c->err->code;
  const ft_tensor *x = c->in[0];
  if (x->dims[1] % (bs * bs)) return ft_infer_fail(c, FT_EINVALID, "channels %lld are not a multiple of blocksize^2", (long long)x->dims[1]);
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = 4;
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1] / (bs * bs);
  y->dims[2] = x->dims[2] * bs;
  y->dims[3] = x->dims[3] * bs;
  return 0;
}

static int depth_to_space_plan(ft_opctx *c, ft_kcall *k) {
  int64_t bs;
  d2s_check(c, &bs);
  const ft_tensor *x = c->in[0];
  int64_t N = x->dims[0], C = x->dims[1] / (bs * bs), H = x->dims[2], W = x->dims[3];
  int64_t sn = x->dims[1] * H * W, sb1, sb2, sc;
  if (!strcmp(ft_attr_str(c->node, "mode", "DCR"), "CRD")) { /* channels as (C, b1, b2) */
    sc = bs * bs * H * W; sb1 = bs * H * W; sb2 = H * W;
  } else { /* DCR: channels as (b1, b2, C) */
    sb1 = bs * C * H * W; sb2 = C * H * W; sc = H * W;
  }
  /* output (N, C, H, b1, W, b2) */
  int64_t dims[6] = {N, C, H, bs, W, bs}, st[6] = {sn, sc, W, sb1, 1, sb2};
  return plan_strided(c, k, 6, 0, dims, st);
}

static int space_to_depth_infer(ft_opctx *c) {
  int64_t bs;
  if (d2s_check(c, &bs)) return c->err->code;
  const ft_tensor *x = c->in[0];
  if (x->dims[2] % bs || x->dims[3] % bs) return ft_infer_fail(c, FT_EINVALID, "height and width must be multiples of blocksize");
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = 4;
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1] * bs * bs;
  y->dims[2] = x->dims[2] / bs;
  y->dims[3] = x->dims[3] / bs;
  return 0;
}

static int space_to_depth_plan(ft_opctx *c, ft_kcall *k) {
  int64_t bs;
  d2s_check(c, &bs);
  const ft_tensor *x = c->in[0];
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  /* input as (N, C, H/bs, b1, W/bs, b2); output (N, b1, b2, C, H/bs, W/bs) */
  int64_t dims[6] = {N, bs, bs, C, H / bs, W / bs}, st[6] = {C * H * W, W, 1, H * W, bs * W, bs};
  return plan_strided(c, k, 6, 0, dims, st);
}

/* ---- Pad ---------------------------------------------------------------------------------- */

static int pad_mode(ft_opctx *c) {
  const char *m = ft_attr_str(c->node, "mode", "constant");
  if (!strcmp(m, "constant")) return 0;
  if (!strcmp(m, "reflect")) return 1;
  if (!strcmp(m, "edge")) return 2;
  if (!strcmp(m, "wrap")) return 3;
  return ft_infer_fail(c, FT_EUNSUPPORTED, "pad mode '%s' is not supported", m), -1;
}

/* Pads before and after per input dim. */
static int pad_amounts(ft_opctx *c, int64_t *before, int64_t *after) {
  const ft_tensor *x = c->in[0];
  int r = x->rank;
  int64_t pads[2 * FT_MAX_RANK], axes[FT_MAX_RANK];
  int n, na = -1;
  if (c->opset >= 11) {
    if ((n = const_list(c, 1, "pads", pads, 2 * FT_MAX_RANK)) < 0) return -1;
    if (c->n_in > 3 && c->in[3] && (na = const_list(c, 3, "axes", axes, FT_MAX_RANK)) < 0) return -1;
  } else {
    const int64_t *a;
    n = ft_attr_ints(c->node, "pads", &a);
    if (n < 0) n = ft_attr_ints(c->node, "paddings", &a);
    if (n < 0 || n > 2 * FT_MAX_RANK) return ft_infer_fail(c, FT_EINVALID, "has no pads"), -1;
    memcpy(pads, a, sizeof(int64_t) * (size_t)n);
  }
  if (na < 0) { na = r; for (int i = 0; i < r; i++) axes[i] = i; }
  if (n != 2 * na) return ft_infer_fail(c, FT_EINVALID, "pads has %d entries for %d axes", n, na), -1;
  for (int d = 0; d < r; d++) before[d] = after[d] = 0;
  for (int i = 0; i < na; i++) {
    int ax;
    if (ft_norm_axis(c, axes[i], r, &ax)) return -1;
    before[ax] = pads[i];
    after[ax] = pads[na + i];
  }
  return 0;
}

static int pad_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  int64_t before[FT_MAX_RANK], after[FT_MAX_RANK];
  int mode = pad_mode(c);
  if (mode < 0 || pad_amounts(c, before, after)) return c->err->code;
  ft_tensor *y = c->out[0];
  y->dtype = x->dtype;
  y->rank = x->rank;
  for (int d = 0; d < x->rank; d++) {
    if (__builtin_add_overflow(x->dims[d], before[d], &y->dims[d]) || __builtin_add_overflow(y->dims[d], after[d], &y->dims[d]))
      return ft_infer_fail(c, FT_EUNSUPPORTED, "pads of dim %d (%lld and %lld) are too large", d, (long long)before[d], (long long)after[d]);
    if (y->dims[d] < 0) return ft_infer_fail(c, FT_EINVALID, "pads crop dim %d below zero", d);
    if (mode && x->dims[d] == 0 && y->dims[d] > 0)
      return ft_infer_fail(c, FT_EINVALID, "cannot pad an empty dim %d in mode '%s'", d, ft_attr_str(c->node, "mode", ""));
  }
  if (c->opset >= 11 && c->n_in > 2 && c->in[2] && c->in[2]->dtype != x->dtype)
    return ft_infer_fail(c, FT_EINVALID, "constant_value is %s, the data %s", ft_dtype_name(c->in[2]->dtype), ft_dtype_name(x->dtype));
  return 0;
}

static int pad_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0];
  int64_t before[FT_MAX_RANK], after[FT_MAX_RANK];
  int mode = pad_mode(c), r = x->rank;
  if (mode < 0 || pad_amounts(c, before, after)) return c->err->code;
  if (ft_kentry_by_size(c, k, pad_k, x->dtype)) return c->err->code;
  k->p[0] = r;
  k->p[1] = mode;
  for (int d = 0; d < r; d++) {
    k->p[2 + d] = x->dims[d];
    k->p[2 + r + d] = c->out[0]->dims[d];
    k->p[2 + 2 * r + d] = before[d];
  }
  int from_input = c->opset >= 11 && c->n_in > 2 && c->in[2];
  k->p[2 + 3 * r] = from_input ? 0 : value_bits(c->opset >= 11 ? 0.0 : ft_attr_float(c->node, "value", 0), x->dtype);
  k->p[3 + 3 * r] = from_input;
  k->np = 4 + 3 * r;
  return 0;
}

/* ---- Trilu, OneHot ------------------------------------------------------------------------ */

static int trilu_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  if (x->rank < 2) return ft_infer_fail(c, FT_EINVALID, "needs rank 2 or more, not %d", x->rank);
  if (c->n_in > 1 && c->in[1] && (c->in[1]->dtype != FT_INT64 || ft_numel(c->in[1]) != 1))
    return ft_infer_fail(c, FT_EINVALID, "k must be one int64");
  c->out[0]->dtype = x->dtype;
  ft_copy_shape(c->out[0], x);
  return 0;
}

static int trilu_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0];
  int r = x->rank;
  if (ft_kentry_by_size(c, k, trilu_k, x->dtype)) return c->err->code;
  const ft_tensor *kt = c->n_in > 1 ? c->in[1] : NULL;
  k->p[0] = prod(x->dims, 0, r - 2);
  k->p[1] = x->dims[r - 2];
  k->p[2] = x->dims[r - 1];
  k->p[3] = kt && kt->data ? ft_const_int(kt, 0) : 0;
  k->p[4] = ft_attr_int(c->node, "upper", 1) != 0;
  k->p[5] = kt && !kt->data; /* k is read at run time */
  k->np = 6;
  return 0;
}

static int onehot_axis(ft_opctx *c, int *axis) {
  int r = c->in[0]->rank + 1;
  int64_t a = ft_attr_int(c->node, "axis", -1);
  if (a < -r || a >= r) return ft_infer_fail(c, FT_EINVALID, "axis %lld is out of range for rank %d", (long long)a, r);
  *axis = (int)(a < 0 ? a + r : a);
  return 0;
}

static int onehot_infer(ft_opctx *c) {
  if (need_inputs(c, 3)) return c->err->code;
  const ft_tensor *ind = c->in[0], *val = c->in[2];
  int axis = 0;
  if (onehot_axis(c, &axis) || ft_need_const(c, 1, "depth")) return c->err->code;
  if (ft_numel(c->in[1]) != 1) return ft_infer_fail(c, FT_EINVALID, "depth must be one value");
  int64_t depth = (int64_t)ft_const_real(c->in[1], 0);
  if (depth < 1) return ft_infer_fail(c, FT_EINVALID, "depth %lld is not positive", (long long)depth);
  if (ft_numel(val) != 2) return ft_infer_fail(c, FT_EINVALID, "values must hold [off, on]");
  if (ind->rank + 1 > FT_MAX_RANK) return ft_infer_fail(c, FT_EUNSUPPORTED, "rank %d is more than ftax supports", ind->rank + 1);
  switch (ind->dtype) {
  case FT_FLOAT16: case FT_BFLOAT16: case FT_BOOL: case FT_STRING: case FT_UNDEFINED:
    return ft_infer_fail(c, FT_EUNSUPPORTED, "indices of type %s are not supported", ft_dtype_name(ind->dtype));
  default: break;
  }
  ft_tensor *y = c->out[0];
  y->dtype = val->dtype;
  y->rank = ind->rank + 1;
  for (int d = 0, j = 0; d < y->rank; d++) y->dims[d] = d == axis ? depth : ind->dims[j++];
  return 0;
}

static int onehot_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *ind = c->in[0];
  int axis = 0;
  onehot_axis(c, &axis);
  if (ft_kentry_by_size(c, k, onehot_k, c->in[2]->dtype)) return c->err->code;
  k->p[0] = prod(ind->dims, 0, axis);
  k->p[1] = c->out[0]->dims[axis];
  k->p[2] = prod(ind->dims, axis, ind->rank);
  k->p[3] = ind->dtype;
  k->np = 4;
  return 0;
}

/* ---- Cast, CastLike ----------------------------------------------------------------------- */

static const ft_kentry *find_cast(int from, int to) {
  for (const ft_kentry *e = cast_k; e->name; e++)
    if (e->dtype == from && e->dtype2 == to) return e;
  return NULL;
}

static int cast_infer(ft_opctx *c) {
  int is_like = !strcmp(c->node->op_type, "CastLike");
  if (need_inputs(c, is_like ? 2 : 1)) return c->err->code;
  int from = c->in[0]->dtype;
  int to = is_like ? c->in[1]->dtype : (int)ft_attr_int(c->node, "to", 0);
  if (!find_cast(from, to))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "casting %s to %s is not supported", ft_dtype_name(from), ft_dtype_name(to));
  c->out[0]->dtype = to;
  ft_copy_shape(c->out[0], c->in[0]);
  return 0;
}

static int cast_plan(ft_opctx *c, ft_kcall *k) {
  k->entry = find_cast(c->in[0]->dtype, c->out[0]->dtype);
  if (!k->entry) return ft_infer_fail(c, FT_EUNSUPPORTED, "this cast is not supported");
  k->p[0] = ft_numel(c->in[0]);
  k->np = 1;
  return 0;
}

/* ---- Where, Not --------------------------------------------------------------------------- */

static int where_infer(ft_opctx *c) {
  if (need_inputs(c, 3)) return c->err->code;
  if (c->in[0]->dtype != FT_BOOL) return ft_infer_fail(c, FT_EINVALID, "condition must be bool, not %s", ft_dtype_name(c->in[0]->dtype));
  if (c->in[1]->dtype != c->in[2]->dtype)
    return ft_infer_fail(c, FT_EINVALID, "X and Y have different types (%s and %s)", ft_dtype_name(c->in[1]->dtype), ft_dtype_name(c->in[2]->dtype));
  const ft_tensor *ts[3] = {c->in[0], c->in[1], c->in[2]};
  if (ft_broadcast_shape(c, 3, ts, c->out[0])) return c->err->code;
  c->out[0]->dtype = c->in[1]->dtype;
  return 0;
}

static int where_plan(ft_opctx *c, ft_kcall *k) {
  if (ft_kentry_by_size(c, k, where_k, c->in[1]->dtype)) return c->err->code;
  const ft_tensor *ts[3] = {c->in[0], c->in[1], c->in[2]};
  k->np = ft_plan_broadcast(ts, 3, c->out[0], k->p);
  return 0;
}

const ft_opdesc ft_ops_movement[] = {
    {"Transpose", "", transpose_infer, transpose_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"Concat", "", concat_infer, concat_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"Split", "", split_infer, split_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"Slice", "", slice_infer, slice_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"Gather", "", gather_infer, gather_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"GatherElements", "", gather_elements_infer, gather_elements_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"Expand", "", expand_infer, expand_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"Tile", "", tile_infer, tile_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"DepthToSpace", "", depth_to_space_infer, depth_to_space_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"SpaceToDepth", "", space_to_depth_infer, space_to_depth_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"Pad", "", pad_infer, pad_plan, "movement", FT_OP_PAT(FT_PAT_INJECTIVE)},
    {"Trilu", "", trilu_infer, trilu_plan, "movement", 0},
    {"OneHot", "", onehot_infer, onehot_plan, "movement", 0},
    {"Cast", "", cast_infer, cast_plan, "cast", FT_OP_INPLACE | FT_OP_PAT(FT_PAT_ELEMWISE)},
    {"CastLike", "", cast_infer, cast_plan, "cast", FT_OP_INPLACE | FT_OP_PAT(FT_PAT_ELEMWISE)},
    {"Where", "", where_infer, where_plan, "where", FT_OP_INPLACE | FT_OP_PAT(FT_PAT_BROADCAST)},
    {"Stack", "ftax", stack_infer, stack_plan, "movement", 0},
    {0}};
