/* Inlining a control-flow node's subgraph (subgraph.h): values mapped into the enclosing graph,
 * nodes copied with their guards, and the copies moved to the node's place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h" /* ft_node_set_int */
#include "subgraph.h"

#define FT_JOIN_GROUP 60 /* inputs of one Stack or Concat node (an op context takes FT_MAX_IO) */

/* The value of g, as If node i sees it, that a branch reads by name: what the node recorded at
 * load (its outer list), or else a value of g by that name. */
static int outer_value(const ft_graph *g, int i, const char *name) {
  const ft_node *n = &g->nodes[i];
  for (int k = 0; k < n->n_outer; k++)
    if (!strcmp(g->vals[n->outer[k]].name, name)) return n->outer[k];
  return ft_value_find(g, name);
}

/* A name not yet used in g: the name itself, name@tag, or name#1, name#2, ... (a loop unrolled
 * tags each iteration's values with its number, so the search stays short). */
int ft_add_unique_value(ft_graph *g, const char *name, const char *tag) {
  if (ft_value_find(g, name) < 0) return ft_value_add(g, name);
  char buf[1100];
  if (tag && tag[0]) {
    snprintf(buf, sizeof buf, "%.1000s@%.60s", name, tag);
    if (ft_value_find(g, buf) < 0) return ft_value_add(g, buf);
  }
  for (int k = 1;; k++) {
    snprintf(buf, sizeof buf, "%.1000s#%d", name, k);
    if (ft_value_find(g, buf) < 0) return ft_value_add(g, buf);
  }
}

int ft_add_node_const(ft_graph *g, int i, const char *what, int dtype, int64_t n) {
  char name[1100];
  snprintf(name, sizeof name, "%.900s/%.100s", g->nodes[i].name, what);
  int v = ft_add_unique_value(g, name, NULL);
  ft_value *val = &g->vals[v];
  val->kind = FT_V_CONST;
  val->shape_known = 1;
  val->t.dtype = dtype;
  val->t.rank = n ? 1 : 0;
  val->t.dims[0] = n;
  val->t.data = calloc((size_t)(n ? n : 1), 8);
  return v;
}

/* map[v]: the value of g that value v of subgraph b becomes. */
static int map_values(ft_graph *g, int i, const ft_graph *b, const char *which, const int *binds, const char *tag,
                      int *map, ft_err *e) {
  for (int v = 0; v < b->n_vals; v++) map[v] = -1;
  for (int k = 0; k < b->n_inputs; k++) map[b->inputs[k]] = binds[k];
  for (int v = 0; v < b->n_vals; v++) {
    const ft_value *bv = &b->vals[v];
    if (map[v] >= 0) continue;
    if (bv->kind == FT_V_INPUT)
      return ft_fail(e, FT_EINVALID, "%s: %s: its %s has input '%s', which the node does not bind", g->path,
                     ft_node_label(g, i), which, bv->name);
    if (ft_value_is_outer(b, v)) {
      map[v] = outer_value(g, i, bv->name);
      if (map[v] < 0)
        return ft_fail(e, FT_EINVALID, "%s: %s: its %s reads '%s', which no enclosing graph defines", g->path,
                       ft_node_label(g, i), which, bv->name);
      continue;
    }
    map[v] = ft_add_unique_value(g, bv->name, tag);
    ft_value *nv = &g->vals[map[v]];
    nv->kind = bv->kind;
    nv->declared_dtype = bv->declared_dtype;
    if (bv->kind == FT_V_CONST && ft_tensor_clone(&nv->t, &bv->t))
      return ft_fail(e, FT_EIO, "out of memory copying the %s of %s", which, ft_node_label(g, i));
    nv->shape_known = bv->kind == FT_V_CONST;
  }
  return 0;
}

static int *map_list(const int *list, int n, const int *map) {
  int *d = malloc(sizeof(int) * (size_t)(n ? n : 1));
  for (int k = 0; k < n; k++) d[k] = list[k] >= 0 && map ? map[list[k]] : list[k]; /* no map: a copy */
  return d;
}

/* Append copies of b's nodes to g, reading and writing the mapped values, each guarded by
 * guard[0..n_guard). */
static void copy_nodes(ft_graph *g, const char *prefix, const ft_graph *b, const int *map, const int *guard,
                       int n_guard) {
  /* b's own values that took a new name: nested subgraphs read them by it, all renamed at once
   * (a loop's carried t bound to the last iteration's t2 while t2 becomes t2@tag) */
  const char **from = malloc(sizeof(char *) * (size_t)(2 * b->n_vals + 1)), **to = from + b->n_vals;
  int n_renamed = 0;
  for (int v = 0; v < b->n_vals; v++)
    if (map[v] >= 0 && !ft_value_is_outer(b, v) && strcmp(b->vals[v].name, g->vals[map[v]].name)) {
      from[n_renamed] = b->vals[v].name;
      to[n_renamed++] = g->vals[map[v]].name;
    }
  for (int j = 0; j < b->n_nodes; j++) {
    const ft_node *bn = &b->nodes[j];
    char name[1100];
    snprintf(name, sizeof name, "%.500s/%.500s", prefix, bn->name);
    ft_node *n = ft_node_add(g, name, bn->op_type, bn->domain, bn->n_in, bn->n_out);
    free(n->in); free(n->out);
    n->in = map_list(bn->in, bn->n_in, map);
    n->out = map_list(bn->out, bn->n_out, map);
    n->outer = bn->n_outer ? map_list(bn->outer, bn->n_outer, map) : NULL;
    n->n_outer = bn->n_outer;
    n->op = bn->op;
    n->n_guard = n_guard;
    n->guard = n_guard ? map_list(guard, n_guard, NULL) : NULL;
    n->n_attrs = bn->n_attrs;
    n->attrs = malloc(sizeof(ft_attr) * (size_t)(bn->n_attrs ? bn->n_attrs : 1));
    for (int a = 0; a < bn->n_attrs; a++) {
      ft_attr_copy(&n->attrs[a], &bn->attrs[a]);
      if (n->attrs[a].g) ft_rename_outer_all(n->attrs[a].g, n_renamed, from, to);
    }
  }
  free(from);
}

void ft_replace_node(ft_graph *g, int i, int from) {
  int added = g->n_nodes - from;
  ft_node gone = g->nodes[i];
  ft_node *tmp = malloc(sizeof(ft_node) * (size_t)(added ? added : 1));
  memcpy(tmp, g->nodes + from, sizeof(ft_node) * (size_t)added);
  memmove(g->nodes + i + added, g->nodes + i + 1, sizeof(ft_node) * (size_t)(from - i - 1));
  memcpy(g->nodes + i, tmp, sizeof(ft_node) * (size_t)added);
  free(tmp);
  g->n_nodes--;
  free(gone.name); free(gone.op_type); free(gone.domain); free(gone.in); free(gone.out); free(gone.outer);
  free(gone.guard);
  for (int k = 0; k < gone.n_attrs; k++) ft_attr_free(&gone.attrs[k]);
  free(gone.attrs);
  for (int j = 0; j < g->n_nodes; j++)
    for (int k = 0; k < g->nodes[j].n_out; k++)
      if (g->nodes[j].out[k] >= 0) g->vals[g->nodes[j].out[k]].producer = j;
}


int ft_inline_subgraph(ft_graph *g, int i, const ft_graph *b, const char *what, const int *binds, const char *tag,
                       const int *guard, int n_guard, int *outs, ft_err *e) {
  /* Nodes and values are named after node i and the tag: loops nested in loops give every copy
   * a name of its own, so that making names unique never has to count through earlier copies. */
  char prefix[1100];
  if (tag && tag[0]) snprintf(prefix, sizeof prefix, "%.500s/%.500s", g->nodes[i].name, tag);
  else snprintf(prefix, sizeof prefix, "%.1000s", g->nodes[i].name);
  int *map = malloc(sizeof(int) * (size_t)(b->n_vals + 1));
  int rc = map_values(g, i, b, what, binds, prefix, map, e);
  if (!rc) {
    copy_nodes(g, prefix, b, map, guard, n_guard);
    for (int k = 0; k < b->n_outputs; k++) outs[k] = map[b->outputs[k]];
  }
  free(map);
  return rc;
}

ft_node *ft_add_node_like(ft_graph *g, int i, const char *name, const char *op_type, const char *domain, int n_in,
                          int n_out) {
  ft_node *n = ft_node_add(g, name, op_type, domain, n_in, n_out);
  const ft_node *at = &g->nodes[i]; /* after the add: the array may have moved */
  n->op = ft_op_find(domain, op_type);
  n->n_guard = at->n_guard;
  n->guard = at->n_guard ? map_list(at->guard, at->n_guard, NULL) : NULL;
  return n;
}

int ft_check_condition(const ft_graph *g, int i, int cond, ft_err *e) {
  if (cond < 0) return ft_fail(e, FT_EINVALID, "%s: %s has no condition", g->path, ft_node_label(g, i));
  const ft_tensor *t = &g->vals[cond].t;
  if (t->dtype != FT_BOOL || ft_numel(t) != 1)
    return ft_fail(e, FT_EINVALID, "%s: %s: the condition '%s' is %s of %lld elements; it takes one bool", g->path,
                   ft_node_label(g, i), g->vals[cond].name, ft_dtype_name(t->dtype), (long long)ft_numel(t));
  return 0;
}

/* One node joining pieces[0..n) into out, named after node i and guarded as it is. */
static void join_node(ft_graph *g, int i, const char *op, const int *pieces, int n, int64_t axis, int out) {
  char name[1100];
  snprintf(name, sizeof name, "%.900s/%.100s", g->nodes[i].name, op);
  ft_node *j = ft_add_node_like(g, i, name, op, strcmp(op, "Stack") ? "" : "ftax", n, 1);
  for (int k = 0; k < n; k++) j->in[k] = pieces[k];
  j->out[0] = out;
  ft_node_set_int(j, "axis", axis);
}

/* The axis comes from the model (ConcatFromSequence's axis, a Scan's scan_output_axes): out of
 * range for pieces of rank r, the model's node is invalid; checked here, where its name is known,
 * rather than by the Stack or Concat made from it. r < 0: not known yet (the Stack checks it). */
int ft_join_axis_check(const ft_graph *g, int i, const char *op, int r, int64_t axis, ft_err *e) {
  int stack = !strcmp(op, "Stack");
  if (r < 0 || (axis >= -(int64_t)r - stack && axis < (int64_t)r + stack)) return 0;
  return ft_fail(e, FT_EINVALID, "%s: %s: axis %lld is out of range for %s pieces of rank %d (%s: from %d to %d)", g->path,
                 ft_node_label(g, i), (long long)axis, stack ? "stacking" : "joining", r, stack ? "a new axis" : "an axis",
                 -r - stack, r - 1 + stack);
}

int ft_join_into(ft_graph *g, int i, const char *op, const int *pieces, int n, int64_t axis, int out, ft_err *e) {
  int rc = n > 0 ? ft_join_axis_check(g, i, op, g->vals[pieces[0]].t.rank, axis, e) : 0;
  if (rc) return rc;
  if (n <= FT_JOIN_GROUP) {
    join_node(g, i, op, pieces, n, axis, out);
    return 0;
  }
  int groups = (n + FT_JOIN_GROUP - 1) / FT_JOIN_GROUP, parts[FT_JOIN_GROUP];
  if (groups > FT_JOIN_GROUP)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s: joins %d pieces into '%s'; ftax joins at most %d", g->path,
                   ft_node_label(g, i), n, g->vals[out].name, FT_JOIN_GROUP * FT_JOIN_GROUP);
  for (int k = 0; k < groups; k++) {
    char tag[32], name[1100];
    snprintf(tag, sizeof tag, "part%d", k);
    snprintf(name, sizeof name, "%.1000s", g->vals[out].name);
    parts[k] = ft_add_unique_value(g, name, tag);
    int m = n - k * FT_JOIN_GROUP < FT_JOIN_GROUP ? n - k * FT_JOIN_GROUP : FT_JOIN_GROUP;
    join_node(g, i, op, pieces + k * FT_JOIN_GROUP, m, axis, parts[k]);
  }
  join_node(g, i, "Concat", parts, groups, axis, out);
  return 0;
}
