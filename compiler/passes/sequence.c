/* Part of the inference sweep (infer.c): sequences are lowered at compile time. A sequence value
 * is the list of its elements, values of the graph (ft_value.seq), so the generated program and
 * the eager runtime see tensors only:
 *
 *   SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase: a new list, no node;
 *   SequenceLength: a constant;  SequenceAt: an Identity of the element;
 *   SplitToSequence: a Slice (or Gather, keepdims 0) per piece of the input, whose shape is known;
 *   ConcatFromSequence: a Concat (new_axis 0) or ftax.Stack (new_axis 1) of the elements.
 *
 * Every position must be known at compile time (a constant, or folded: a Loop's iteration number
 * once the Loop is unrolled), and so is every length. A Loop carries a sequence as any other
 * value while it is unrolled; a sequence whose contents would depend on a condition computed at
 * run time (an If's output, a Loop without a known end) cannot be a list of values and is refused,
 * as is a sequence as one of the model's inputs or outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h" /* ft_node_set_int */
#include "subgraph.h"

#define FT_SEQ_MAX_LEN 4096 /* elements of one sequence: each is a value, a split piece a node */

/* Input k of node i as a sequence (its list in *s). */
static int seq_input(ft_graph *g, int i, int k, const ft_value **s, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  int v = k < n->n_in ? n->in[k] : -1;
  if (v < 0) return ft_fail(e, FT_EINVALID, "%s: %s: input %d (the sequence) is missing", g->path, ft_node_label(g, i), k);
  *s = &g->vals[v];
  if (!(*s)->is_seq)
    return ft_fail(e, FT_EINVALID, "%s: %s: input %d '%s' is a tensor; the op takes a sequence there", g->path,
                   ft_node_label(g, i), k, g->vals[v].name);
  return 0;
}

/* Output 0 of node i becomes the sequence of items[0..n) of element type dtype. */
static int set_seq(ft_graph *g, int i, const int *items, int n, int dtype, ft_err *e) {
  int out = g->nodes[i].n_out > 0 ? g->nodes[i].out[0] : -1;
  if (n > FT_SEQ_MAX_LEN)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s makes a sequence of %d elements; ftax lowers sequences into values and "
                   "takes at most %d", g->path, ft_node_label(g, i), n, FT_SEQ_MAX_LEN);
  if (out < 0) return 0;
  ft_value *v = &g->vals[out];
  if (v->is_output)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s: graph output '%s' is a sequence; ftax lowers sequences into tensors at "
                   "compile time and gives only tensors as the model's outputs (ConcatFromSequence joins one)",
                   g->path, ft_node_label(g, i), v->name);
  int *list = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (n) memcpy(list, items, sizeof(int) * (size_t)n);
  free(v->seq);
  v->seq = list;
  v->n_seq = n;
  v->is_seq = 1;
  v->shape_known = 1; /* as far as a list goes: its length */
  v->t.dtype = dtype;
  v->t.rank = 0;
  return 0;
}

/* The element type of a sequence's items: each must have the sequence's type, and be a tensor. */
static int check_item(ft_graph *g, int i, int item, int dtype, ft_err *e) {
  int dt = g->vals[item].t.dtype;
  if (g->vals[item].is_seq)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s puts the sequence '%s' into a sequence; ftax has no sequences of sequences",
                   g->path, ft_node_label(g, i), g->vals[item].name);
  if (!dtype || dt == dtype) return 0;
  return ft_fail(e, FT_EINVALID, "%s: %s: '%s' is %s, but the sequence holds %s", g->path, ft_node_label(g, i),
                 g->vals[item].name, ft_dtype_name(dt), ft_dtype_name(dtype));
}

/* Input k of node i, a position in a list of n (n + 1 places when inserting): known at compile
 * time, one integer, in range; absent means `dflt`. */
static int position(ft_graph *g, int i, int k, int64_t n, int inserting, int64_t dflt, int64_t *pos, ft_err *e) {
  ft_node *node = &g->nodes[i];
  if (k >= node->n_in || node->in[k] < 0) { *pos = dflt; return 0; }
  const ft_value *v = &g->vals[node->in[k]];
  if (v->t.dtype != FT_INT64 && v->t.dtype != FT_INT32)
    return ft_fail(e, FT_EINVALID, "%s: %s: the position '%s' is %s; it takes int32 or int64", g->path,
                   ft_node_label(g, i), v->name, ft_dtype_name(v->t.dtype));
  if (!v->t.data) {
    ft_opctx c;
    ft_opctx_init(&c, g, i, e);
    return ft_need_const(&c, k, "the position; ftax lowers sequences at compile time");
  }
  if (ft_numel(&v->t) != 1)
    return ft_fail(e, FT_EINVALID, "%s: %s: the position '%s' has %lld elements; it takes one", g->path,
                   ft_node_label(g, i), v->name, (long long)ft_numel(&v->t));
  int64_t p = ft_const_int(&v->t, 0), top = inserting ? n : n - 1;
  if (p < -n || p > top)
    return ft_fail(e, FT_EINVALID, "%s: %s: position %lld is outside the sequence of %lld elements", g->path,
                   ft_node_label(g, i), (long long)p, (long long)n);
  *pos = p < 0 ? p + n : p;
  return 0;
}

/* Node i goes; the nodes appended from `from` on take its place. */
static int replaced(ft_graph *g, int i, int from) {
  ft_replace_node(g, i, from);
  return 0;
}

static int seq_empty(ft_graph *g, int i, ft_err *e) {
  int rc = set_seq(g, i, NULL, 0, (int)ft_attr_int(&g->nodes[i], "dtype", FT_FLOAT), e);
  return rc ? rc : replaced(g, i, g->n_nodes);
}

static int seq_construct(ft_graph *g, int i, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  int dtype = n->n_in > 0 && n->in[0] >= 0 ? g->vals[n->in[0]].t.dtype : 0;
  for (int k = 0; k < n->n_in; k++) {
    if (n->in[k] < 0) return ft_fail(e, FT_EINVALID, "%s: %s: input %d is missing", g->path, ft_node_label(g, i), k);
    int rc = check_item(g, i, n->in[k], dtype, e);
    if (rc) return rc;
  }
  int rc = set_seq(g, i, n->in, n->n_in, dtype, e);
  return rc ? rc : replaced(g, i, g->n_nodes);
}

/* SequenceInsert (tensor at pos, default the end) and SequenceErase (pos, default the last). */
static int seq_edit(ft_graph *g, int i, int inserting, ft_err *e) {
  const ft_value *s = NULL;
  int rc = seq_input(g, i, 0, &s, e);
  if (rc) return rc;
  int n = s->n_seq, dtype = s->t.dtype, item = -1;
  int64_t pos;
  if (inserting) {
    item = g->nodes[i].n_in > 1 ? g->nodes[i].in[1] : -1;
    if (item < 0) return ft_fail(e, FT_EINVALID, "%s: %s: input 1 (the tensor) is missing", g->path, ft_node_label(g, i));
    if (!n) dtype = g->vals[item].t.dtype; /* an empty sequence takes its first element's type */
    if ((rc = check_item(g, i, item, dtype, e))) return rc;
  } else if (!n) {
    return ft_fail(e, FT_EINVALID, "%s: %s erases from an empty sequence", g->path, ft_node_label(g, i));
  }
  if ((rc = position(g, i, inserting ? 2 : 1, n, inserting, inserting ? n : n - 1, &pos, e))) return rc;
  int *list = malloc(sizeof(int) * (size_t)(n + 1)), m = 0;
  for (int k = 0; k <= n; k++) {
    if (inserting && k == pos) list[m++] = item;
    if (k < n && (inserting || k != pos)) list[m++] = s->seq[k];
  }
  rc = set_seq(g, i, list, m, dtype, e);
  free(list);
  return rc ? rc : replaced(g, i, g->n_nodes);
}

static int seq_length(ft_graph *g, int i, ft_err *e) {
  const ft_value *s = NULL;
  int rc = seq_input(g, i, 0, &s, e);
  if (rc) return rc;
  int out = g->nodes[i].out[0], n = s->n_seq;
  if (out < 0) return replaced(g, i, g->n_nodes);
  ft_value *v = &g->vals[out];
  ft_tensor_free_data(&v->t);
  v->t.dtype = FT_INT64;
  v->t.rank = 0;
  v->t.data = calloc(1, sizeof(int64_t));
  if (!v->t.data) return ft_fail(e, FT_EIO, "out of memory lowering %s", ft_node_label(g, i));
  *(int64_t *)v->t.data = n;
  v->kind = FT_V_CONST;
  v->shape_known = 1;
  return replaced(g, i, g->n_nodes);
}

/* A node in place of node i reading ins[0..n_in) into out (or a new value named after node i). */
static ft_node *add_op(ft_graph *g, int i, const char *op, const int *ins, int n_in, int out) {
  char name[1100];
  snprintf(name, sizeof name, "%.900s/%.100s", g->nodes[i].name, op);
  if (out < 0) out = ft_add_unique_value(g, name, NULL);
  ft_node *n = ft_add_node_like(g, i, name, op, "", n_in, 1);
  for (int k = 0; k < n_in; k++) n->in[k] = ins[k];
  n->out[0] = out;
  return n;
}

static int seq_at(ft_graph *g, int i, ft_err *e) {
  const ft_value *s = NULL;
  int rc = seq_input(g, i, 0, &s, e);
  if (rc) return rc;
  int64_t pos;
  if (g->nodes[i].n_in < 2 || g->nodes[i].in[1] < 0)
    return ft_fail(e, FT_EINVALID, "%s: %s: input 1 (the position) is missing", g->path, ft_node_label(g, i));
  if (!s->n_seq) return ft_fail(e, FT_EINVALID, "%s: %s reads from an empty sequence", g->path, ft_node_label(g, i));
  if ((rc = position(g, i, 1, s->n_seq, 0, 0, &pos, e))) return rc;
  int item = s->seq[pos], from = g->n_nodes;
  add_op(g, i, "Identity", &item, 1, g->nodes[i].out[0]);
  return replaced(g, i, from);
}

static int seq_concat(ft_graph *g, int i, ft_err *e) {
  const ft_value *s = NULL;
  int rc = seq_input(g, i, 0, &s, e);
  if (rc) return rc;
  const ft_node *n = &g->nodes[i];
  if (!s->n_seq)
    return ft_fail(e, FT_EINVALID, "%s: %s joins an empty sequence; its output would have no shape", g->path,
                   ft_node_label(g, i));
  if (!ft_attr_find(n, "axis"))
    return ft_fail(e, FT_EINVALID, "%s: %s has no attribute 'axis'", g->path, ft_node_label(g, i));
  int64_t axis = ft_attr_int(n, "axis", 0);
  int stack = ft_attr_int(n, "new_axis", 0) != 0, out = n->out[0], from = g->n_nodes;
  int *items = malloc(sizeof(int) * (size_t)s->n_seq), count = s->n_seq;
  memcpy(items, s->seq, sizeof(int) * (size_t)count);
  rc = ft_join_into(g, i, stack ? "Stack" : "Concat", items, count, axis, out, e);
  free(items);
  return rc ? rc : replaced(g, i, from);
}

/* A 1-D int64 constant of n elements, or a scalar (n 0), named after node i. */
static int add_ints(ft_graph *g, int i, const char *what, const int64_t *x, int n) {
  int v = ft_add_node_const(g, i, what, FT_INT64, n);
  memcpy(g->vals[v].t.data, x, sizeof(int64_t) * (size_t)(n ? n : 1));
  return v;
}

/* The sizes of SplitToSequence's pieces along a dim of `len`: split's (a scalar: that size, the
 * last piece the rest), or 1 each. */
static int split_sizes(ft_graph *g, int i, int64_t len, int64_t **sizes, int *n, ft_err *e) {
  const ft_node *node = &g->nodes[i];
  int sv = node->n_in > 1 ? node->in[1] : -1;
  const ft_tensor *t = sv >= 0 ? &g->vals[sv].t : NULL;
  if (t && !t->data) {
    ft_opctx c;
    ft_opctx_init(&c, g, i, e);
    return ft_need_const(&c, 1, "split, which decides the sequence's length; ftax lowers sequences at compile time");
  }
  if (t && ((t->dtype != FT_INT64 && t->dtype != FT_INT32) || t->rank > 1))
    return ft_fail(e, FT_EINVALID, "%s: %s: split is %s of rank %d; it takes an integer scalar or 1-D tensor", g->path,
                   ft_node_label(g, i), ft_dtype_name(t->dtype), t->rank);
  /* pieces of `chunk`, the last the rest: len / chunk rounded up, without len + chunk - 1 (which
   * overflows for a chunk near INT64_MAX) */
  int64_t chunk = !t ? 1 : t->rank == 0 ? ft_const_int(t, 0) : 0;
  int64_t m = chunk > 0 ? len / chunk + (len % chunk != 0) : ft_numel(t);
  if (t && t->rank == 0 && chunk < 1)
    return ft_fail(e, FT_EINVALID, "%s: %s: split %lld; a piece takes at least one element", g->path, ft_node_label(g, i),
                   (long long)chunk);
  if (m > FT_SEQ_MAX_LEN)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s splits into %lld pieces; ftax lowers sequences into values and takes at "
                   "most %d", g->path, ft_node_label(g, i), (long long)m, FT_SEQ_MAX_LEN);
  *sizes = malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
  if (!*sizes) return ft_fail(e, FT_EIO, "out of memory");
  int64_t sum = 0;
  for (int64_t k = 0; k < m; k++) {
    (*sizes)[k] = chunk > 0 ? (len - k * chunk < chunk ? len - k * chunk : chunk) : ft_const_int(t, k);
    if ((*sizes)[k] < 0 || __builtin_add_overflow(sum, (*sizes)[k], &sum) || sum > len) break;
  }
  *n = (int)m;
  if (chunk > 0 || sum == len) return 0;
  free(*sizes);
  return ft_fail(e, FT_EINVALID, "%s: %s: the split sizes do not add up to the dim's %lld elements", g->path,
                 ft_node_label(g, i), (long long)len);
}

/* Piece k of x along axis: rows [at, at + size) by Slice, or row `at` by Gather (one-row pieces
 * without their dim). */
static int split_piece(ft_graph *g, int i, int x, int64_t axis, int64_t at, int64_t size, int squeeze) {
  if (squeeze) {
    int ins[2] = {x, add_ints(g, i, "index", &at, 0)};
    ft_node *n = add_op(g, i, "Gather", ins, 2, -1);
    ft_node_set_int(n, "axis", axis);
    return n->out[0];
  }
  int64_t end = at + size;
  int ins[4] = {x, add_ints(g, i, "starts", &at, 1), add_ints(g, i, "ends", &end, 1), add_ints(g, i, "axes", &axis, 1)};
  return add_op(g, i, "Slice", ins, 4, -1)->out[0];
}

static int seq_split(ft_graph *g, int i, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  int x = n->n_in > 0 ? n->in[0] : -1;
  if (x < 0 || g->vals[x].is_seq)
    return ft_fail(e, FT_EINVALID, "%s: %s: input 0 must be a tensor", g->path, ft_node_label(g, i));
  const ft_tensor *t = &g->vals[x].t;
  int64_t axis = ft_attr_int(n, "axis", 0);
  if (axis < 0) axis += t->rank;
  if (axis < 0 || axis >= t->rank)
    return ft_fail(e, FT_EINVALID, "%s: %s: axis %lld for an input of rank %d", g->path, ft_node_label(g, i),
                   (long long)ft_attr_int(n, "axis", 0), t->rank);
  int64_t *sizes = NULL;
  int m = 0, rc = split_sizes(g, i, t->dims[axis], &sizes, &m, e);
  if (rc) return rc;
  int squeeze = (n->n_in < 2 || n->in[1] < 0) && ft_attr_int(n, "keepdims", 1) == 0, from = g->n_nodes, dtype = t->dtype;
  int *items = malloc(sizeof(int) * (size_t)(m ? m : 1));
  int64_t at = 0;
  for (int k = 0; k < m; k++) {
    items[k] = split_piece(g, i, x, axis, at, sizes[k], squeeze);
    at += sizes[k];
  }
  rc = set_seq(g, i, items, m, dtype, e);
  free(items);
  free(sizes);
  return rc ? rc : replaced(g, i, from);
}

int ft_expand_sequence(ft_graph *g, int i, ft_err *e) {
  const char *op = g->nodes[i].op_type;
  if (g->nodes[i].n_out != 1)
    return ft_fail(e, FT_EINVALID, "%s: %s has %d outputs; it gives one", g->path, ft_node_label(g, i), g->nodes[i].n_out);
  if (!strcmp(op, "SequenceEmpty")) return seq_empty(g, i, e);
  if (!strcmp(op, "SequenceConstruct")) return seq_construct(g, i, e);
  if (!strcmp(op, "SequenceInsert")) return seq_edit(g, i, 1, e);
  if (!strcmp(op, "SequenceErase")) return seq_edit(g, i, 0, e);
  if (!strcmp(op, "SequenceLength")) return seq_length(g, i, e);
  if (!strcmp(op, "SequenceAt")) return seq_at(g, i, e);
  if (!strcmp(op, "SplitToSequence")) return seq_split(g, i, e);
  return seq_concat(g, i, e);
}

int ft_sequence_consumer(ft_graph *g, int i, ft_err *e) {
  ft_node *n = &g->nodes[i];
  int s = -1;
  for (int k = 0; k < n->n_in && s < 0; k++)
    if (n->in[k] >= 0 && g->vals[n->in[k]].is_seq) s = n->in[k];
  if (s < 0) return -1; /* reads no sequence */
  if (!strcmp(n->op_type, "Identity") && !n->domain[0] && n->n_out == 1) {
    int rc = set_seq(g, i, g->vals[s].seq, g->vals[s].n_seq, g->vals[s].t.dtype, e);
    return rc ? rc : replaced(g, i, g->n_nodes);
  }
  if (!strcmp(n->op_type, "IfMerge"))
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s: the sequence '%s' depends on a condition computed at run time (an If's "
                   "output or a Loop's carried value); ftax lowers sequences into tensors at compile time: bind the "
                   "inputs the condition depends on (--bind)", g->path, ft_node_label(g, i), g->vals[s].name);
  return ft_fail(e, FT_EUNSUPPORTED, "%s: %s reads the sequence '%s'; ftax lowers sequences at compile time and reads "
                 "them only with Sequence* ops, ConcatFromSequence, Identity and control flow", g->path,
                 ft_node_label(g, i), g->vals[s].name);
}
