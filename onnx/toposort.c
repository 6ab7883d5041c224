/* The loader's link step: who produces each value, and the nodes put in an order where every
 * value is produced before it is read. ONNX requires files to be sorted, but converters do not
 * always keep it (fp16 converters append their Casts at the end, keep_io_types) and ONNX Runtime
 * sorts such files, so ftax sorts too. The sort is stable: a node keeps its place in the file
 * unless a value it reads comes later, so a sorted file stays exactly as it was. A real cycle
 * is an error that names the nodes on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

/* Every value a node reads: its inputs, then what its subgraphs read from this graph. */
static int dep_count(const ft_node *n) { return n->n_in + n->n_outer; }
static int dep_at(const ft_node *n, int k) { return k < n->n_in ? n->in[k] : n->outer[k - n->n_in]; }

/* Producers: each value written once, never a graph input or initializer; a value read but never
 * written must be an input or an initializer (or, in a subgraph, a name of an enclosing graph). */
static int link_producers(ft_graph *g, int subgraph, ft_err *e) {
  for (int v = 0; v < g->n_vals; v++) g->vals[v].producer = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_out; k++) {
      int v = n->out[k];
      if (v < 0) continue;
      if (g->vals[v].producer >= 0 || g->vals[v].kind != FT_V_ACT)
        return ft_fail(e, FT_EINVALID, "%s: %s writes '%s', which already has a value", g->path, ft_node_label(g, i),
                       g->vals[v].name);
      g->vals[v].producer = i;
    }
  }
  for (int i = 0; i < g->n_nodes && !subgraph; i++) {
    const ft_node *n = &g->nodes[i];
    for (int k = 0; k < dep_count(n); k++) {
      int v = dep_at(n, k);
      if (v >= 0 && g->vals[v].kind == FT_V_ACT && g->vals[v].producer < 0)
        return ft_fail(e, FT_EINVALID, "%s: %s reads '%s', which no node produces and which is neither an input nor an initializer",
                       g->path, ft_node_label(g, i), g->vals[v].name);
    }
  }
  return 0;
}

/* A min-heap of node indices: of the nodes ready to go, the one earliest in the file goes first. */
typedef struct heap { int *a, n; } heap;

static void heap_push(heap *h, int x) {
  int i = h->n++;
  for (; i > 0 && h->a[(i - 1) / 2] > x; i = (i - 1) / 2) h->a[i] = h->a[(i - 1) / 2];
  h->a[i] = x;
}

static int heap_pop(heap *h) {
  int top = h->a[0], x = h->a[--h->n], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->a[c + 1] < h->a[c]) c++;
    if (h->a[c] >= x) break;
    h->a[i] = h->a[c];
    i = c;
  }
  if (h->n) h->a[i] = x;
  return top;
}

/* The producer of node i's first dependency that is not yet placed (placed[p] == 0), or -1. */
static int unplaced_dep(const ft_graph *g, int i, const char *placed) {
  const ft_node *n = &g->nodes[i];
  for (int k = 0; k < dep_count(n); k++) {
    int v = dep_at(n, k);
    int p = v >= 0 ? g->vals[v].producer : -1;
    if (p >= 0 && !placed[p]) return p;
  }
  return -1;
}

/* Nodes left over by the sort wait on each other: walk from one to a producer it waits for until
 * a node repeats, and name that loop. */
static int report_cycle(const ft_graph *g, const char *placed, ft_err *e) {
  int start = 0;
  while (placed[start]) start++;
  int *step = malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  int *seen_at = malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  for (int i = 0; i < g->n_nodes; i++) seen_at[i] = -1;
  int len = 0, i = start;
  while (seen_at[i] < 0) {
    seen_at[i] = len;
    step[len++] = i;
    i = unplaced_dep(g, i, placed); /* a waiting node always waits on another waiting one */
  }
  int first = seen_at[i];
  /* the loop in data-flow order (a producer before its reader), from its node earliest in the file */
  int L = len - first, low = 0;
  int *cyc = step + first;
  for (int a = 0, b = L - 1; a < b; a++, b--) { int t = cyc[a]; cyc[a] = cyc[b]; cyc[b] = t; }
  for (int k = 1; k < L; k++) if (cyc[k] < cyc[low]) low = k;
  char list[1200];
  size_t m = 0;
  for (int t = 0; t <= L && m < sizeof list; t++) {
    if (t == 8 && t < L - 1) { m += snprintf(list + m, sizeof list - m, " -> ... (%d more)", L - 1 - t); t = L - 1; }
    const ft_node *n = &g->nodes[cyc[(low + t) % L]];
    m += snprintf(list + m, sizeof list - m, "%s'%.100s' (%.60s)", t ? " -> " : "", n->name, n->op_type);
  }
  free(step);
  free(seen_at);
  return ft_fail(e, FT_EINVALID, "%s: the graph has a cycle (%d node%s): %s; a value cannot depend on itself", g->path,
                 L, L == 1 ? "" : "s", list);
}

/* Kahn's algorithm, the ready node earliest in the file first. order gets the new order. */
static int sort_order(const ft_graph *g, int *order, ft_err *e) {
  int nn = g->n_nodes, placed_n = 0;
  int *waiting = calloc((size_t)nn + 1, sizeof(int));
  char *placed = calloc((size_t)nn + 1, 1);
  heap h = {malloc(sizeof(int) * ((size_t)nn + 1)), 0};
  /* readers[v]: nodes that read value v, as a list per value in one array */
  int *first = malloc(sizeof(int) * ((size_t)g->n_vals + 1)), *next_dep = NULL, *dep_node = NULL, n_deps = 0;
  for (int i = 0; i < nn; i++) n_deps += dep_count(&g->nodes[i]);
  next_dep = malloc(sizeof(int) * ((size_t)n_deps + 1));
  dep_node = malloc(sizeof(int) * ((size_t)n_deps + 1));
  for (int v = 0; v < g->n_vals; v++) first[v] = -1;
  for (int i = 0, d = 0; i < nn; i++)
    for (int k = 0; k < dep_count(&g->nodes[i]); k++) {
      int v = dep_at(&g->nodes[i], k);
      if (v < 0 || g->vals[v].producer < 0) continue;
      waiting[i]++;
      dep_node[d] = i, next_dep[d] = first[v], first[v] = d++;
    }
  for (int i = 0; i < nn; i++)
    if (!waiting[i]) heap_push(&h, i);
  while (h.n) {
    int i = heap_pop(&h);
    order[placed_n++] = i;
    placed[i] = 1;
    const ft_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_out; k++)
      for (int d = n->out[k] >= 0 ? first[n->out[k]] : -1; d >= 0; d = next_dep[d])
        if (--waiting[dep_node[d]] == 0) heap_push(&h, dep_node[d]);
  }
  int rc = placed_n == nn ? 0 : report_cycle(g, placed, e);
  free(waiting); free(placed); free(h.a); free(first); free(next_dep); free(dep_node);
  return rc;
}

int ft_sort_graph(ft_graph *g, int subgraph, ft_err *e) {
  int rc = link_producers(g, subgraph, e);
  if (rc || !g->n_nodes) return rc;
  int *order = malloc(sizeof(int) * (size_t)g->n_nodes);
  rc = sort_order(g, order, e);
  int moved = 0;
  for (int i = 0; !rc && i < g->n_nodes; i++) moved |= order[i] != i;
  if (moved) {
    ft_node *sorted = malloc(sizeof(ft_node) * (size_t)g->cap_nodes);
    for (int i = 0; i < g->n_nodes; i++) sorted[i] = g->nodes[order[i]];
    free(g->nodes);
    g->nodes = sorted;
    rc = link_producers(g, subgraph, e);
  }
  free(order);
  return rc;
}
