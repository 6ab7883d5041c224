/* Part of the inference sweep (infer.c): Loop and Scan are unrolled, their body inlined once per
 * iteration (subgraph.c), so every later stage sees straight-line code with known shapes.
 *
 * Loop goes one iteration at a time: node i becomes the body of iteration k followed by the
 * Loop again for the iterations after it (attribute ftax_iter: iterations done; the scan outputs
 * of the iterations done ride along as extra inputs). The sweep infers and folds iteration k
 * before it comes back to the Loop, so the condition the body computes is known by then when it
 * is a constant. It stops when the trip count is reached or the condition is false; the scan
 * outputs are then the iterations' values stacked (ftax.Stack). A condition computed at run time
 * guards the iterations from there on: iteration k runs when cond_k holds (ft_node.guard, as an
 * If's branch), and IfMerge carries either what it computed or what it received into iteration
 * k+1, cond_{k+1} = cond_k ? body's cond : false included. Such a loop needs a trip count known at
 * compile time (the bound of the unrolling), and no scan outputs (their length would be known only
 * at run time).
 *
 * Scan unrolls at once: its length is the scan inputs' dim along their axis, known from their
 * shapes; iteration t reads element t of each scan input (Gather), or element L-1-t for a
 * reverse direction, and the scan outputs are stacked along their axes, in reverse for a reverse
 * direction.
 *
 * Unrolling has limits (FT_UNROLL_MAX_ITERS, FT_UNROLL_MAX_NODES, FT_GRAPH_MAX_NODES, and
 * FT_UNROLL_MAX_GUARDED iterations under a run-time condition).
 *
 * A Loop that cannot be unrolled (its trip count computed at run time, a run-time condition and no
 * trip count, or past the limits, FT_UNROLL_MAX_GUARDED among them) becomes a loop of the program, if it has no scan outputs (their
 * length would be known only at run time): ftax.LoopInit sets its state (go: run the body again,
 * the iteration number, the carried values) from its inputs; one copy of the body follows, each
 * node guarded by FT_GUARD_LOOP(go) after the Loop's own guard, and ends with ftax.LoopNext, which
 * copies the body's results into the state (templates/c/loop.h). The C program runs the
 * guarded calls in a `while (go)`, ftax-eager jumps back over them. The body is inferred once:
 * LoopNext refuses carried values whose shape or type the body changes. Loops run this way do
 * not nest (an unrolled Loop inside one is fine). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h" /* ft_node_set_int */
#include "subgraph.h"

#define FT_UNROLL_MAX_ITERS 1024
#define FT_UNROLL_MAX_NODES 50000
/* Iterations unrolled under a condition computed at run time. Each one guards all those after it
 * (its condition joins their guards), so the guards grow with the iterations and the stages that
 * read them (fusion's regions, the memory plan) grow with their square: 1000 such iterations of
 * a 5-node body took 2 s to compile and 20 s with the sanitizers. Past this many the program runs
 * the rest as a loop, which costs one body. */
#define FT_UNROLL_MAX_GUARDED 64
/* Loops nest, and each check above sees only its own body: the whole graph stops growing at
 * FT_GRAPH_MAX_NODES (ir.h), or a model of a few nested loops would ask for billions of nodes. */

/* The graph attribute `name` of node i. */
static int body_graph(const ft_graph *g, int i, const char *name, const ft_graph **b, ft_err *e) {
  const ft_attr *a = ft_attr_find(&g->nodes[i], name);
  *b = a ? a->g : NULL;
  return *b ? 0 : ft_fail(e, FT_EINVALID, "%s: %s has no graph attribute '%s'", g->path, ft_node_label(g, i), name);
}

/* A new int64 or bool scalar constant. */
static int add_scalar(ft_graph *g, int i, const char *what, int dtype, int64_t x) {
  int v = ft_add_node_const(g, i, what, dtype, 0);
  if (dtype == FT_BOOL) *(uint8_t *)g->vals[v].t.data = x != 0;
  else *(int64_t *)g->vals[v].t.data = x;
  return v;
}

/* A new activation named after value `like`. */
static int add_value_like(ft_graph *g, int like, const char *tag) {
  char name[1100];
  snprintf(name, sizeof name, "%.1000s", g->vals[like].name);
  return ft_add_unique_value(g, name, tag);
}

/* One node in place of node i (guarded as it is): op(ins) -> out. */
static ft_node *add_op(ft_graph *g, int i, const char *op, const char *domain, const int *ins, int n_in, int out) {
  char name[1100];
  snprintf(name, sizeof name, "%.900s/%.100s", g->nodes[i].name, op);
  ft_node *n = ft_add_node_like(g, i, name, op, domain, n_in, 1);
  for (int k = 0; k < n_in; k++) n->in[k] = ins[k];
  n->out[0] = out;
  return n;
}

/* iters: the loop's iterations, left: those not unrolled yet. */
static int too_long(const ft_graph *g, int i, int64_t iters, int64_t left, const ft_graph *b, ft_err *e) {
  if (iters > FT_UNROLL_MAX_ITERS || iters * (b->n_nodes + 2) > FT_UNROLL_MAX_NODES)
    return ft_fail(e, FT_EUNSUPPORTED,
                   "%s: %s runs %lld iterations of %d nodes; ftax unrolls loops and stops at %d iterations or %d nodes",
                   g->path, ft_node_label(g, i), (long long)iters, b->n_nodes, FT_UNROLL_MAX_ITERS, FT_UNROLL_MAX_NODES);
  if (g->n_nodes + left * (b->n_nodes + 2) > FT_GRAPH_MAX_NODES)
    return ft_fail(e, FT_EUNSUPPORTED,
                   "%s: %s: unrolling its %lld iterations of %d nodes would grow the graph, %d nodes now, past %d "
                   "nodes (loops nested in loops); ftax unrolls loops and cannot compile this model",
                   g->path, ft_node_label(g, i), (long long)iters, b->n_nodes, g->n_nodes, FT_GRAPH_MAX_NODES);
  return 0;
}

/* ---- Loop ------------------------------------------------------------------------------------ */

typedef struct loop_shape {
  const ft_graph *body;
  int n_v, n_scan; /* loop-carried values, scan outputs */
  int64_t done;    /* iterations unrolled before node i */
} loop_shape;

static int loop_shape_of(const ft_graph *g, int i, loop_shape *s, ft_err *e) {
  int rc = body_graph(g, i, "body", &s->body, e);
  if (rc) return rc;
  const ft_node *n = &g->nodes[i];
  s->n_v = s->body->n_inputs - 2;
  s->n_scan = s->body->n_outputs - 1 - s->n_v;
  s->done = ft_attr_int(n, "ftax_iter", 0);
  if (s->n_v < 0 || s->n_scan < 0 || n->n_out != s->n_v + s->n_scan ||
      n->n_in != 2 + s->n_v + s->done * s->n_scan)
    return ft_fail(e, FT_EINVALID,
                   "%s: %s: its body takes %d inputs and gives %d outputs, which does not fit the node's %d inputs and %d outputs",
                   g->path, ft_node_label(g, i), s->body->n_inputs, s->body->n_outputs, n->n_in, n->n_out);
  return 0;
}

/* The Loop again after iteration done: trip count, cond, v, the scan pieces so far. */
static void add_rest(ft_graph *g, int i, const loop_shape *s, int cond, const int *v, const int *new_pieces) {
  int old = (int)(s->done * s->n_scan);
  int n_in = 2 + s->n_v + old + s->n_scan;
  ft_node *r = ft_add_node_like(g, i, g->nodes[i].name, "Loop", "", n_in, s->n_v + s->n_scan);
  const ft_node *n = &g->nodes[i];
  r->in[0] = n->in[0];
  r->in[1] = cond;
  for (int j = 0; j < s->n_v; j++) r->in[2 + j] = v[j];
  for (int j = 0; j < old; j++) r->in[2 + s->n_v + j] = n->in[2 + s->n_v + j];
  for (int j = 0; j < s->n_scan; j++) r->in[2 + s->n_v + old + j] = new_pieces[j];
  if (n->n_out) memcpy(r->out, n->out, sizeof(int) * (size_t)n->n_out);
  r->attrs = calloc((size_t)n->n_attrs + 1, sizeof(ft_attr));
  for (int a = 0; a < n->n_attrs; a++)
    if (strcmp(n->attrs[a].name, "ftax_iter")) ft_attr_copy(&r->attrs[r->n_attrs++], &n->attrs[a]);
  ft_node_set_int(r, "ftax_iter", s->done + 1);
  r->n_outer = n->n_outer;
  r->outer = malloc(sizeof(int) * (size_t)(n->n_outer + 1));
  if (n->n_outer) memcpy(r->outer, n->outer, sizeof(int) * (size_t)n->n_outer);
}

/* Iteration `done` of Loop node i, then the Loop for the rest; guarded: cond is computed at run
 * time and guards the iteration. */
static int unroll_one(ft_graph *g, int i, const loop_shape *s, int guarded, ft_err *e) {
  int from = g->n_nodes, cond = g->nodes[i].n_in > 1 ? g->nodes[i].in[1] : -1;
  char tag[32], what[48];
  snprintf(tag, sizeof tag, "iter%lld", (long long)s->done);
  snprintf(what, sizeof what, "iter%lld_number", (long long)s->done);
  int nb = s->body->n_inputs, no = s->body->n_outputs;
  int *binds = malloc(sizeof(int) * (size_t)(nb + 2 * no + 1)), *outs = binds + nb, *v = outs + no;
  binds[0] = add_scalar(g, i, what, FT_INT64, s->done);
  binds[1] = cond >= 0 ? cond : add_scalar(g, i, "true", FT_BOOL, 1);
  for (int j = 0; j < s->n_v; j++) binds[2 + j] = g->nodes[i].in[2 + j];
  int n_guard = g->nodes[i].n_guard;
  int *guard = malloc(sizeof(int) * (size_t)(n_guard + 1));
  if (n_guard) memcpy(guard, g->nodes[i].guard, sizeof(int) * (size_t)n_guard);
  if (guarded) guard[n_guard++] = FT_GUARD(cond, 0);
  int rc = ft_inline_subgraph(g, i, s->body, "body", binds, tag, guard, n_guard, outs, e);
  free(guard);
  if (!rc) {
    int next = outs[0];
    for (int j = 0; j < s->n_v; j++) v[j] = outs[1 + j];
    if (guarded) { /* what the next iteration gets: this one's results if it ran, else what it got */
      for (int j = 0; j < s->n_v; j++) {
        int m = add_value_like(g, binds[2 + j], tag), ins[3] = {cond, outs[1 + j], binds[2 + j]};
        add_op(g, i, "IfMerge", "ftax", ins, 3, m);
        v[j] = m;
      }
      int ins[3] = {cond, outs[0], cond};
      next = add_value_like(g, cond, tag);
      add_op(g, i, "IfMerge", "ftax", ins, 3, next);
    }
    add_rest(g, i, s, next, v, outs + 1 + s->n_v);
    ft_replace_node(g, i, from);
  }
  free(binds);
  return rc;
}

/* The loop is over: the carried values are its outputs, the scan pieces stacked. */
static int finish_loop(ft_graph *g, int i, const loop_shape *s, ft_err *e) {
  int from = g->n_nodes, rc = 0;
  for (int j = 0; j < s->n_v; j++) {
    int out = g->nodes[i].out[j], in = g->nodes[i].in[2 + j];
    if (out >= 0) add_op(g, i, "Identity", "", &in, 1, out);
  }
  int *pieces = malloc(sizeof(int) * (size_t)(s->done + 1));
  for (int k = 0; k < s->n_scan && !rc; k++) {
    int out = g->nodes[i].out[s->n_v + k];
    if (out < 0) continue;
    if (!s->done) {
      rc = ft_fail(e, FT_EUNSUPPORTED, "%s: %s runs no iteration, so its scan output '%s' has no element to take a shape from",
                   g->path, ft_node_label(g, i), g->vals[out].name);
      break;
    }
    for (int64_t t = 0; t < s->done; t++) pieces[t] = g->nodes[i].in[2 + s->n_v + t * s->n_scan + k];
    rc = ft_join_into(g, i, "Stack", pieces, (int)s->done, 0, out, e);
  }
  free(pieces);
  if (!rc) ft_replace_node(g, i, from);
  return rc;
}

/* ---- Loop at run time ------------------------------------------------------------------------ */

/* Node n is in the body of a Loop the program runs at run time. */
static int in_run_time_loop(const ft_node *n) {
  for (int k = 0; k < n->n_guard; k++)
    if (ft_guard_is_loop(n->guard[k])) return 1;
  return 0;
}

/* Why Loop node i cannot be a loop of the program, or 0. */
static int check_run_time(ft_graph *g, int i, const loop_shape *s, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  int m = n->in[0], cond = n->n_in > 1 ? n->in[1] : -1;
  ft_opctx c;
  ft_opctx_init(&c, g, i, e);
  if (s->n_scan && m >= 0 && !g->vals[m].t.data)
    return ft_need_const(&c, 0, "the trip count, which decides how long the scan outputs are; ftax plans their size "
                                "at compile time");
  if (s->n_scan)
    return ft_need_const(&c, 1, "the condition, which decides how long the scan outputs are; ftax plans their size "
                                "at compile time");
  if (m < 0 && cond < 0)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s has neither a trip count nor a condition: it would never end", g->path,
                   ft_node_label(g, i));
  if (in_run_time_loop(n))
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s would run at run time inside the body of a Loop that runs at run time; "
                   "ftax does not nest such loops (bind the inputs the inner trip count depends on with --bind)",
                   g->path, ft_node_label(g, i));
  if (4 + 2 * s->n_v > FT_MAX_IO)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s carries %d values; ftax runs a Loop at run time with at most %d", g->path,
                   ft_node_label(g, i), s->n_v, (FT_MAX_IO - 4) / 2);
  for (int j = 0; j < s->n_v; j++)
    if (n->in[2 + j] < 0)
      return ft_fail(e, FT_EINVALID, "%s: %s: loop-carried input %d is empty", g->path, ft_node_label(g, i), j);
  return 0;
}

/* ftax.LoopInit(M, cond, v_initial...) -> st = (go, iter, carried...), named after node i. */
static void add_loop_init(ft_graph *g, int i, const loop_shape *s, int *st) {
  char name[1100];
  snprintf(name, sizeof name, "%.900s/loop_go", g->nodes[i].name);
  st[0] = ft_add_unique_value(g, name, NULL);
  snprintf(name, sizeof name, "%.900s/loop_iter", g->nodes[i].name);
  st[1] = ft_add_unique_value(g, name, NULL);
  for (int j = 0; j < s->n_v; j++) st[2 + j] = add_value_like(g, g->nodes[i].in[2 + j], "carried");
  snprintf(name, sizeof name, "%.900s/LoopInit", g->nodes[i].name);
  ft_node *n = ft_add_node_like(g, i, name, "LoopInit", "ftax", 2 + s->n_v, 2 + s->n_v);
  const ft_node *l = &g->nodes[i];
  n->in[0] = l->in[0];
  n->in[1] = l->n_in > 1 ? l->in[1] : -1;
  for (int j = 0; j < s->n_v; j++) n->in[2 + j] = l->in[2 + j];
  memcpy(n->out, st, sizeof(int) * (size_t)(2 + s->n_v));
  ft_node_set_int(n, "start", s->done);
}

/* ftax.LoopNext(M, cond, v..., go, iter, carried...) at the end of the body (outs: the body's
 * outputs), in the loop: named as node i is, for its messages. */
static void add_loop_next(ft_graph *g, int i, const loop_shape *s, const int *st, const int *outs) {
  char *name = strdup(g->nodes[i].name), count[1100];
  snprintf(count, sizeof count, "%.900s/loop_iterations", name);
  int counted = ft_add_unique_value(g, count, NULL), n_v = s->n_v;
  ft_node *n = ft_add_node_like(g, i, name, "LoopNext", "ftax", 4 + 2 * n_v, 1);
  free(name);
  n->guard = realloc(n->guard, sizeof(int) * (size_t)(n->n_guard + 1));
  n->guard[n->n_guard++] = FT_GUARD_LOOP(st[0]);
  n->in[0] = g->nodes[i].in[0];
  for (int j = 0; j <= n_v; j++) n->in[1 + j] = outs[j];
  memcpy(n->in + 2 + n_v, st, sizeof(int) * (size_t)(2 + n_v));
  n->out[0] = counted;
}

/* Loop node i becomes a loop of the program (its trip count or condition is known only at run
 * time, or it is too long to unroll): LoopInit, then one copy of the body and LoopNext, each
 * guarded by FT_GUARD_LOOP(go) (the program repeats them while go holds), then an Identity per
 * output of the carried value. The body's condition input is true: it runs only while go is. */
static int loop_at_run_time(ft_graph *g, int i, const loop_shape *s, ft_err *e) {
  int rc = check_run_time(g, i, s, e);
  if (rc) return rc;
  int from = g->n_nodes, nb = s->body->n_inputs, n_guard = g->nodes[i].n_guard;
  int *st = malloc(sizeof(int) * (size_t)(2 + s->n_v + nb + s->body->n_outputs + n_guard + 1));
  int *binds = st + 2 + s->n_v, *outs = binds + nb, *guard = outs + s->body->n_outputs;
  add_loop_init(g, i, s, st);
  binds[0] = st[1];
  binds[1] = add_scalar(g, i, "loop_true", FT_BOOL, 1);
  for (int j = 0; j < s->n_v; j++) binds[2 + j] = st[2 + j];
  if (n_guard) memcpy(guard, g->nodes[i].guard, sizeof(int) * (size_t)n_guard);
  guard[n_guard] = FT_GUARD_LOOP(st[0]);
  rc = ft_inline_subgraph(g, i, s->body, "body", binds, "loop", guard, n_guard + 1, outs, e);
  if (!rc) {
    add_loop_next(g, i, s, st, outs);
    for (int j = 0; j < s->n_v; j++) {
      int out = g->nodes[i].out[j];
      if (out >= 0) add_op(g, i, "Identity", "", &st[2 + j], 1, out);
    }
    ft_replace_node(g, i, from);
  }
  free(st);
  return rc;
}

int ft_expand_loop(ft_graph *g, int i, ft_err *e) {
  loop_shape s = {0};
  int rc = loop_shape_of(g, i, &s, e);
  if (rc) return rc;
  const ft_node *n = &g->nodes[i];
  int64_t trips = -1;
  /* M is an int64 and cond a bool, one element each (a float or 2-element M was read as a count) */
  for (int k = 0; k < 2 && k < n->n_in; k++) {
    const ft_tensor *t = n->in[k] >= 0 ? &g->vals[n->in[k]].t : NULL;
    if (t && t->rank >= 0 && (t->dtype != (k ? FT_BOOL : FT_INT64) || ft_numel(t) != 1))
      return ft_fail(e, FT_EINVALID, "%s: %s: its %s is %s with %lld elements; it must be one %s", g->path,
                     ft_node_label(g, i), k ? "condition" : "trip count M", ft_dtype_name(t->dtype),
                     (long long)ft_numel(t), k ? "bool" : "int64");
  }
  ft_opctx c; /* for ft_need_const's message: which graph input to bind */
  ft_opctx_init(&c, g, i, e);
  if (n->in[0] >= 0) {
    const ft_tensor *t = &g->vals[n->in[0]].t;
    if (!t->data) return loop_at_run_time(g, i, &s, e);
    trips = ft_numel(t) == 1 ? ft_const_int(t, 0) : -1;
    if (trips < 0) trips = 0; /* a negative count runs nothing, as in ONNX Runtime */
  }
  int cond = n->n_in > 1 ? n->in[1] : -1, truth = 1;
  if (cond >= 0) truth = g->vals[cond].t.data ? ft_const_int(&g->vals[cond].t, 0) != 0 : -1;
  if ((trips >= 0 && s.done >= trips) || truth == 0) return finish_loop(g, i, &s, e);
  if (truth < 0 && trips < 0) return loop_at_run_time(g, i, &s, e); /* a while loop */
  if (truth < 0 && s.n_scan)
    return ft_need_const(&c, 1, "the condition, which decides how long the scan outputs are; ftax plans their size "
                                "at compile time");
  if (truth < 0 && (rc = ft_check_condition(g, i, cond, e))) return rc;
  int64_t iters = trips >= 0 ? trips : s.done + 1;
  if (truth < 0 && iters - s.done > FT_UNROLL_MAX_GUARDED) {
    ft_err why = {0};
    if (!check_run_time(g, i, &s, &why)) return loop_at_run_time(g, i, &s, e);
  }
  if ((rc = too_long(g, i, iters, iters - s.done, s.body, e))) {
    if (s.n_scan) return rc;
    /* no scan output to stack: the program runs it as a loop, unless it cannot (nested in such a
     * loop...): then it is the unrolling limit that the message names */
    ft_err why = {0};
    if (check_run_time(g, i, &s, &why)) return rc;
    memset(e, 0, sizeof *e);
    return loop_at_run_time(g, i, &s, e);
  }
  return unroll_one(g, i, &s, truth < 0, e);
}

/* ---- Scan ------------------------------------------------------------------------------------ */

typedef struct scan_shape {
  const ft_graph *body;
  int n_state, n_in, n_out; /* states, scan inputs, scan outputs */
  int64_t len;
} scan_shape;

/* Attribute `name`[k], 0 when absent. */
static int64_t attr_at(const ft_node *n, const char *name, int k) {
  const int64_t *a;
  int m = ft_attr_ints(n, name, &a);
  return k < m ? a[k] : 0;
}

static int scan_shape_of(const ft_graph *g, int i, scan_shape *s, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  if (g->opset < 9)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s: Scan before opset 9 (batched, with sequence_lens) is not supported",
                   g->path, ft_node_label(g, i));
  int rc = body_graph(g, i, "body", &s->body, e);
  if (rc) return rc;
  int64_t n_in;
  if (ft_attr_int_in(n, "num_scan_inputs", 0, 1, FT_MAX_IO, &n_in))
    return ft_fail(e, FT_EINVALID, "%s: %s: num_scan_inputs is %lld; it must be between 1 and the node's inputs",
                   g->path, ft_node_label(g, i), (long long)n_in);
  s->n_in = (int)n_in;
  s->n_state = n->n_in - s->n_in;
  s->n_out = s->body->n_outputs - s->n_state;
  if (s->n_in < 1 || s->n_state < 0 || s->n_out < 0 || s->body->n_inputs != n->n_in || n->n_out != s->body->n_outputs)
    return ft_fail(e, FT_EINVALID, "%s: %s: num_scan_inputs %d and its body's %d inputs and %d outputs do not fit the node",
                   g->path, ft_node_label(g, i), s->n_in, s->body->n_inputs, s->body->n_outputs);
  /* one entry per scan input or output, and a direction is 0 (forward) or 1 (reverse) */
  static const char *lists[4] = {"scan_input_axes", "scan_input_directions", "scan_output_axes", "scan_output_directions"};
  for (int l = 0; l < 4; l++) {
    const int64_t *a;
    int m = ft_attr_ints(n, lists[l], &a), want = l < 2 ? s->n_in : s->n_out;
    if (m > want)
      return ft_fail(e, FT_EINVALID, "%s: %s: %s has %d entries for %d scan %s", g->path, ft_node_label(g, i), lists[l], m,
                     want, l < 2 ? "inputs" : "outputs");
    for (int k = 0; k < m && (l & 1); k++)
      if (a[k] != 0 && a[k] != 1)
        return ft_fail(e, FT_EINVALID, "%s: %s: %s[%d] is %lld; a direction is 0 (forward) or 1 (reverse)", g->path,
                       ft_node_label(g, i), lists[l], k, (long long)a[k]);
  }
  s->len = -1;
  for (int j = 0; j < s->n_in; j++) {
    const ft_tensor *x = &g->vals[n->in[s->n_state + j]].t;
    int64_t axis = attr_at(n, "scan_input_axes", j);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank)
      return ft_fail(e, FT_EINVALID, "%s: %s: scan input %d has rank %d, no axis %lld", g->path, ft_node_label(g, i), j,
                     x->rank, (long long)attr_at(n, "scan_input_axes", j));
    if (s->len >= 0 && x->dims[axis] != s->len)
      return ft_fail(e, FT_EINVALID, "%s: %s: scan inputs of lengths %lld and %lld", g->path, ft_node_label(g, i),
                     (long long)s->len, (long long)x->dims[axis]);
    s->len = x->dims[axis];
  }
  if (s->len < 1 && s->n_out)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s scans no element, so its scan outputs have no element to take a shape from",
                   g->path, ft_node_label(g, i));
  return too_long(g, i, s->len, s->len, s->body, e);
}

/* binds[n_state + j] = element t of scan input j (from the end for a reverse direction). */
static void scan_elements(ft_graph *g, int i, const scan_shape *s, int64_t t, int *binds) {
  for (int j = 0; j < s->n_in; j++) {
    int x = g->nodes[i].in[s->n_state + j];
    int64_t at = attr_at(&g->nodes[i], "scan_input_directions", j) ? s->len - 1 - t : t;
    char what[48];
    snprintf(what, sizeof what, "element%lld", (long long)at);
    int ins[2] = {x, add_scalar(g, i, what, FT_INT64, at)};
    binds[s->n_state + j] = add_value_like(g, x, what);
    ft_node_set_int(add_op(g, i, "Gather", "", ins, 2, binds[s->n_state + j]), "axis",
                    attr_at(&g->nodes[i], "scan_input_axes", j));
  }
}

/* Scan output k of the iterations' pieces (piece t of iteration t), stacked. */
static int scan_output(ft_graph *g, int i, const scan_shape *s, const int *pieces, int k, ft_err *e) {
  int out = g->nodes[i].out[s->n_state + k];
  if (out < 0) return 0;
  int *order = malloc(sizeof(int) * (size_t)(s->len + 1));
  int reverse = attr_at(&g->nodes[i], "scan_output_directions", k) != 0;
  /* the pieces are not inferred yet: the rank the body declares for its output, if it does */
  int rc = ft_join_axis_check(g, i, "Stack", s->body->vals[s->body->outputs[s->n_state + k]].declared_rank,
                              attr_at(&g->nodes[i], "scan_output_axes", k), e);
  if (rc) { free(order); return rc; }
  for (int64_t t = 0; t < s->len; t++) order[t] = pieces[(reverse ? s->len - 1 - t : t) * s->n_out + k];
  rc = ft_join_into(g, i, "Stack", order, (int)s->len, attr_at(&g->nodes[i], "scan_output_axes", k), out, e);
  free(order);
  return rc;
}

int ft_expand_scan(ft_graph *g, int i, ft_err *e) {
  scan_shape s = {0};
  int rc = scan_shape_of(g, i, &s, e);
  if (rc) return rc;
  int from = g->n_nodes, nb = s.body->n_inputs;
  int *binds = malloc(sizeof(int) * (size_t)(nb + s.body->n_outputs + s.len * s.n_out + 1));
  int *outs = binds + nb, *pieces = outs + s.body->n_outputs;
  for (int j = 0; j < s.n_state; j++) binds[j] = g->nodes[i].in[j];
  const int *guard = NULL; /* the body runs whenever the Scan does: node i's guard */
  for (int64_t t = 0; t < s.len && !rc; t++) {
    char tag[32];
    snprintf(tag, sizeof tag, "iter%lld", (long long)t);
    scan_elements(g, i, &s, t, binds);
    int n_guard = g->nodes[i].n_guard;
    int *gcopy = malloc(sizeof(int) * (size_t)(n_guard + 1));
    if (n_guard) memcpy(gcopy, g->nodes[i].guard, sizeof(int) * (size_t)n_guard);
    guard = gcopy;
    rc = ft_inline_subgraph(g, i, s.body, "body", binds, tag, guard, n_guard, outs, e);
    free(gcopy);
    for (int j = 0; j < s.n_state; j++) binds[j] = outs[j];
    for (int k = 0; k < s.n_out; k++) pieces[t * s.n_out + k] = outs[s.n_state + k];
  }
  for (int j = 0; j < s.n_state && !rc; j++) {
    int out = g->nodes[i].out[j];
    if (out >= 0) add_op(g, i, "Identity", "", &binds[j], 1, out);
  }
  for (int k = 0; k < s.n_out && !rc; k++) rc = scan_output(g, i, &s, pieces, k, e);
  free(binds);
  if (!rc) ft_replace_node(g, i, from);
  return rc;
}
