/* Stage: compute float16 models in float32 (docs/fp16.md). Run after resolve, before
 * specialize and the infer/fold sweep:
 *
 *   - float16 initializers, Constant/ConstantOfShape tensors and subgraph constants are widened
 *     to float32 (exactly: every float16 is a float32);
 *   - every other float16 value becomes float32 (value_info's declared type with it);
 *   - Cast to float16 (and the dtype attribute of the generator ops) becomes float32: a Cast
 *     float32 -> float32 is then a no-op that ft_simplify removes;
 *   - graph inputs and outputs keep float16, so the program's I/O is what the model declares:
 *     an input is widened by a Cast at the top, an output is narrowed by a Cast after its
 *     producer (nodes are appended; the graph is sorted again).
 *
 * Why not float16 kernels: the CPU has no float16 arithmetic worth the name (F16C converts
 * only); a float16 kernel would widen, compute in float32 and round back after every op. Doing
 * the widening once at compile time reuses every float32 kernel, fusion and the weight
 * prepacking, at twice the weight bytes. The numerical consequence: activations are not rounded
 * to float16 between ops, so results are closer to the float32 network (with the float16
 * weights) than ONNX Runtime's float16 run is. */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

int ft_sort_graph(ft_graph *g, int subgraph, ft_err *e); /* onnx/toposort.c */

static int widen_tensor(ft_tensor *t, const char *path, const char *what, ft_err *e) {
  if (t->dtype != FT_FLOAT16) return 0;
  int64_t n = ft_numel(t);
  float *w = malloc(sizeof(float) * (size_t)(n ? n : 1));
  if (!w) return ft_fail(e, FT_EIO, "%s: out of memory widening float16 %s to float32", path, what);
  const uint16_t *h = t->data;
  for (int64_t i = 0; h && i < n; i++) w[i] = ft_half_to_float(h[i]);
  if (h) { ft_tensor_free_data(t); t->data = w; } else free(w);
  t->dtype = FT_FLOAT;
  return 0;
}

/* The attributes that name an element type: Cast's "to", the generators' "dtype". */
static int is_dtype_attr(const ft_node *n, const ft_attr *a) {
  if (a->type != FT_ATTR_INT || n->domain[0]) return 0;
  return (!strcmp(a->name, "to") && !strcmp(n->op_type, "Cast")) || !strcmp(a->name, "dtype");
}

static int is_io(const ft_graph *g, int v, int top) {
  return top && (g->vals[v].kind == FT_V_INPUT || g->vals[v].is_output);
}

static int widen_graph(ft_graph *g, int top, ft_err *e);

static int widen_nodes(ft_graph *g, ft_err *e) {
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    for (int a = 0; a < n->n_attrs; a++) {
      ft_attr *at = &n->attrs[a];
      if (at->g) {
        int rc = widen_graph(at->g, 0, e);
        if (rc) return rc;
      }
      if (at->t) {
        int rc = widen_tensor(at->t, g->path, "attribute tensor", e);
        if (rc) return rc;
      }
      if (is_dtype_attr(n, at) && at->i == FT_FLOAT16) at->i = FT_FLOAT;
    }
  }
  return 0;
}

/* Values first (graph I/O excepted at the top level), then nodes and their subgraphs. */
static int widen_graph(ft_graph *g, int top, ft_err *e) {
  for (int v = 0; v < g->n_vals; v++) {
    ft_value *val = &g->vals[v];
    if (is_io(g, v, top) && val->kind != FT_V_CONST) continue;
    if (val->t.dtype == FT_FLOAT16) {
      int rc = widen_tensor(&val->t, g->path, val->name ? val->name : "constant", e);
      if (rc) return rc;
    }
    if (val->declared_dtype == FT_FLOAT16 && !(top && val->is_output)) val->declared_dtype = FT_FLOAT;
  }
  return widen_nodes(g, e);
}

static ft_node *add_cast(ft_graph *g, int from, int to, int dtype) {
  ft_node *n = ft_node_add(g, "", "Cast", "", 1, 1);
  n->in[0] = from;
  n->out[0] = to;
  n->attrs = calloc(1, sizeof(ft_attr));
  n->n_attrs = 1;
  n->attrs[0].name = strdup("to");
  n->attrs[0].type = FT_ATTR_INT;
  n->attrs[0].i = dtype;
  n->op = ft_op_find("", "Cast");
  return n;
}

/* A new float32 value named after v ("x" -> "x:float32"; ':' cannot clash with an ONNX name the
 * exporters write, and names reach generated code only escaped). */
static int add_wide_value(ft_graph *g, int v) {
  const char *base = g->vals[v].name ? g->vals[v].name : "";
  char *name = malloc(strlen(base) + 16);
  strcpy(name, base);
  strcat(name, ":float32");
  int w = ft_value_add(g, name);
  free(name);
  g->vals[w].t.dtype = FT_FLOAT;
  g->vals[w].t.rank = g->vals[v].t.rank;
  memcpy(g->vals[w].t.dims, g->vals[v].t.dims, sizeof g->vals[w].t.dims);
  return w;
}

static void replace_reads(ft_graph *g, int from, int to, int skip_node) {
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    if (i == skip_node) continue;
    for (int k = 0; k < n->n_in; k++) if (n->in[k] == from) n->in[k] = to;
    for (int k = 0; k < n->n_outer; k++) if (n->outer[k] == from) n->outer[k] = to;
  }
}

/* float16 graph input x: Cast(x) -> x:float32, which every node reads instead. */
static void widen_input(ft_graph *g, int v) {
  int w = add_wide_value(g, v);
  replace_reads(g, v, w, -1);
  add_cast(g, v, w, FT_FLOAT);
}

/* float16 graph output y: its producer writes y:float32, a Cast narrows it into y. */
static void narrow_output(ft_graph *g, int v) {
  int w = add_wide_value(g, v);
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_out; k++)
      if (g->nodes[i].out[k] == v) g->nodes[i].out[k] = w;
  replace_reads(g, v, w, -1);
  add_cast(g, w, v, FT_FLOAT16);
}

static int has_producer(const ft_graph *g, int v) {
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_out; k++)
      if (g->nodes[i].out[k] == v) return 1;
  return 0;
}

int ft_upcast_fp16(ft_graph *g, ft_err *e) {
  int rc = widen_graph(g, 1, e);
  if (rc) return rc;
  int added = 0, n_vals = g->n_vals;
  for (int v = 0; v < n_vals; v++) {
    const ft_value *val = &g->vals[v];
    int half = val->t.dtype == FT_FLOAT16 || (val->is_output && val->declared_dtype == FT_FLOAT16);
    if (!half || val->kind == FT_V_CONST) continue;
    if (val->kind == FT_V_INPUT) { widen_input(g, v); added = 1; }
    else if (val->is_output && has_producer(g, v)) { narrow_output(g, v); added = 1; }
  }
  return added ? ft_sort_graph(g, 0, e) : 0;
}
