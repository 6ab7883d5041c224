/* The memory planner (ft_plan_memory), checked by an independent referee: lifetimes are
 * recomputed here from the lowered order, and every arena placement must respect them.
 *
 * Besides the real Add, the graphs use three ops private to this test (domain "test"), so the
 * planner's rules are exercised on any op mix without waiting for op branches:
 *   test.Ew    elementwise, FT_OP_INPLACE: output has input 0's shape
 *   test.View  FT_OP_ALIAS: output is input 0 flattened
 *   test.Make  output float[n] (attribute n), from any inputs
 *   test.Res   FT_OP_INPLACE_ONLY(1): inputs X, R; output has X's shape and may overwrite R
 *              only (like FusedConv, whose kernel reads X after writing output rows)
 * Each takes an optional attribute "scratch" (bytes of kernel working memory). The real Concat
 * (axis 0 of rank-1 values) exercises Concat elision: its inputs written into its output. */
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(memplan, .init = setup, .fini = teardown);

static void test_noop(const int64_t *p, const double *f, const void *const *in, void *const *out, void *scratch) {
  (void)p; (void)f; (void)in; (void)out; (void)scratch;
}

static int ew_infer(ft_opctx *c) {
  ft_copy_shape(c->out[0], c->in[0]);
  c->out[0]->dtype = c->in[0]->dtype;
  return 0;
}

static int view_infer(ft_opctx *c) {
  c->out[0]->dtype = c->in[0]->dtype;
  c->out[0]->rank = 1;
  c->out[0]->dims[0] = ft_numel(c->in[0]);
  return 0;
}

static int make_infer(ft_opctx *c) {
  c->out[0]->dtype = FT_FLOAT;
  c->out[0]->rank = 1;
  c->out[0]->dims[0] = ft_attr_int(c->node, "n", 1);
  return 0;
}

static int any_plan(ft_opctx *c, ft_kcall *k) {
  FT_K(k, test_noop);
  k->scratch = (size_t)ft_attr_int(c->node, "scratch", 0);
  return 0;
}

static const ft_opdesc test_ops[] = {
    {"Ew", "test", ew_infer, any_plan, "", FT_OP_INPLACE},
    {"View", "test", view_infer, NULL, "", FT_OP_ALIAS},
    {"Make", "test", make_infer, any_plan, "", 0},
    {"Res", "test", ew_infer, any_plan, "", FT_OP_INPLACE_ONLY(1)},
    {0}};

static Onnx__NodeProto *test_node(const char *op, const char *name, const char *in, const char *out) {
  Onnx__NodeProto *n = tb_node(op, name, in, out);
  n->domain = strdup("test");
  return n;
}

/* Load, bind ops (the test ops by hand, the rest from the table), and run the pipeline up to
 * and including the memory plan. */
static ft_graph *plan(Onnx__ModelProto *m, ft_lowered *lw, ft_memplan *mp) {
  ft_graph *g = tu_roundtrip(m, dir, "m.onnx");
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    n->op = ft_op_find(n->domain, n->op_type);
    for (const ft_opdesc *d = test_ops; d->op_type; d++)
      if (!strcmp(n->domain, "test") && !strcmp(n->op_type, d->op_type)) n->op = d;
    cr_assert_not_null(n->op, "no op for %s", n->op_type);
  }
  ft_pins none = {0};
  ft_err e = {0};
  cr_assert_eq(ft_specialize(g, &none, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_infer(g, 1, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_simplify(g, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_lower(g, lw, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_plan_memory(g, lw, mp, &e), 0, "%s", e.msg);
  return g;
}

/* ---- the referee ------------------------------------------------------------------------- */

typedef struct life { int64_t def, last; } life;

/* Check every rule a plan must follow; returns the number of in-place and alias shares seen. */
static void referee(const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const char *what) {
  int nv = g->n_vals, ns = lw->n;
  life *lv = malloc(sizeof(life) * (size_t)nv);  /* each value's own lifetime */
  life *grp = malloc(sizeof(life) * (size_t)nv); /* per root: the union over its members */
  for (int v = 0; v < nv; v++) lv[v] = grp[v] = (life){INT64_MAX, -1};
  for (int s = 0; s < ns; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    cr_assert_not(n->dead, "%s: a dead node is scheduled", what);
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] >= 0) lv[n->out[k]].def = s;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0 && s > lv[n->in[k]].last) lv[n->in[k]].last = s;
  }
  for (int v = 0; v < nv; v++) {
    if (lv[v].def == INT64_MAX) continue;
    if (lv[v].last < lv[v].def) lv[v].last = lv[v].def;
    if (g->vals[v].is_output) lv[v].last = ns; /* read by the caller after the last step */
  }

  for (int v = 0; v < nv; v++) {
    int r = mp->root[v];
    cr_assert(r >= 0 && r < nv, "%s: root of %d", what, v);
    cr_assert_eq(mp->root[r], r, "%s: roots are their own root", what);
    cr_assert_eq(mp->storage[v], mp->storage[r], "%s: '%s' and its root differ in storage", what, g->vals[v].name);
    if (mp->storage[v] == FT_S_ARENA) {
      /* a member lies within its root: at its start, or in its slice of an elided Concat */
      cr_assert(mp->offset[v] >= mp->offset[r] &&
                    mp->offset[v] + (int64_t)ft_nbytes(&g->vals[v].t) <= mp->offset[r] + (int64_t)ft_nbytes(&g->vals[r].t),
                "%s: '%s' lies outside its root", what, g->vals[v].name);
      cr_assert_eq(mp->offset[v] % 64, 0, "%s: '%s' at offset %lld is not 64-byte aligned", what, g->vals[v].name,
                   (long long)mp->offset[v]);
      cr_assert_leq(mp->offset[v] + (int64_t)ft_nbytes(&g->vals[v].t), (int64_t)mp->arena_bytes,
                    "%s: '%s' runs past the arena", what, g->vals[v].name);
      cr_assert_leq(ft_nbytes(&g->vals[v].t), ft_nbytes(&g->vals[r].t), "%s: '%s' is larger than its root", what,
                    g->vals[v].name);
      cr_assert_eq(g->vals[v].kind, FT_V_ACT, "%s: only activations live in the arena", what);
      cr_assert_not(g->vals[v].is_output, "%s: output '%s' lives in the arena", what, g->vals[v].name);
      cr_assert_neq(lv[v].def, INT64_MAX, "%s: '%s' is in the arena but never written", what, g->vals[v].name);
      if (lv[v].def < grp[r].def) grp[r].def = lv[v].def;
      if (lv[v].last > grp[r].last) grp[r].last = lv[v].last;
    }
  }
  for (int i = 0; i < g->n_inputs; i++) {
    cr_assert_eq(mp->storage[g->inputs[i]], FT_S_INPUT, "%s: input %d", what, i);
    cr_assert_eq(mp->offset[g->inputs[i]], i);
  }

  /* different storage groups whose bytes overlap must never be alive at the same step */
  for (int u = 0; u < nv; u++) {
    if (mp->storage[u] != FT_S_ARENA) continue;
    for (int v = u + 1; v < nv; v++) {
      if (mp->storage[v] != FT_S_ARENA || mp->root[u] == mp->root[v]) continue;
      int64_t a0 = mp->offset[u], a1 = a0 + (int64_t)ft_nbytes(&g->vals[u].t);
      int64_t b0 = mp->offset[v], b1 = b0 + (int64_t)ft_nbytes(&g->vals[v].t);
      if (a1 <= b0 || b1 <= a0 || a0 == a1 || b0 == b1) continue;
      life x = grp[mp->root[u]], y = grp[mp->root[v]];
      cr_assert(x.last < y.def || y.last < x.def,
                "%s: '%s' [%lld,%lld) live %lld..%lld and '%s' [%lld,%lld) live %lld..%lld share bytes", what,
                g->vals[u].name, (long long)a0, (long long)a1, (long long)x.def, (long long)x.last, g->vals[v].name,
                (long long)b0, (long long)b1, (long long)y.def, (long long)y.last);
    }
  }

  /* within a group: a view reads a member; an in-place write destroys the group's old contents,
   * so every member written before it must be dead by then */
  for (int s = 0; s < ns; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    int o = n->out[0];
    if (o < 0 || mp->storage[o] != FT_S_ARENA || mp->root[o] == o) continue;
    int r = mp->root[o], src = 0, into_concat = 0;
    for (int t = s + 1; t < ns; t++) /* written into a slice of an elided Concat's output (or one nested in it) */
      into_concat |= mp->elided[t] && mp->root[g->nodes[lw->order[t]].out[0]] == r;
    for (int k = 0; k < n->n_in; k++) /* an input whose bytes o takes (not one in another slice) */
      src |= n->in[k] >= 0 && mp->root[n->in[k]] == r && mp->offset[n->in[k]] == mp->offset[o];
    if (mp->elided[s] || (!src && into_concat)) continue; /* the replay below checks these */
    cr_assert(src, "%s: '%s' shares storage with none of its node's inputs", what, g->vals[o].name);
    if (n->op->flags & FT_OP_ALIAS) {
      cr_assert_null(lw->calls[s].entry, "%s: a shared view runs no kernel", what);
      continue;
    }
    cr_assert(n->op->flags & FT_OP_INPLACE, "%s: '%s' (%s) shares storage but is neither a view nor in-place", what,
              g->vals[o].name, n->op_type);
    int only = FT_OP_INPLACE_INPUT(n->op->flags);
    int64_t o0 = mp->offset[o], o1 = o0 + (int64_t)ft_nbytes(&g->vals[o].t);
    for (int k = 0; k < n->n_in; k++)
      cr_assert(only < 0 || k == only || n->in[k] < 0 || mp->root[n->in[k]] != r || mp->offset[n->in[k]] >= o1 ||
                    o0 >= mp->offset[n->in[k]] + (int64_t)ft_nbytes(&g->vals[n->in[k]].t),
                "%s: '%s' (%s) is written over its input %d, but the op allows only input %d", what, g->vals[o].name,
                n->op_type, k, only);
    for (int v = 0; v < nv; v++) /* (other slices of an elided Concat's output are other bytes) */
      if (v != o && mp->storage[v] == FT_S_ARENA && mp->root[v] == r && lv[v].def < s && mp->offset[v] < o1 &&
          o0 < mp->offset[v] + (int64_t)ft_nbytes(&g->vals[v].t))
        cr_assert_leq(lv[v].last, s, "%s: '%s' is overwritten in place at step %d but read at step %lld", what,
                      g->vals[v].name, s, (long long)lv[v].last);
    /* the written value is not also read through another input of the same node */
    int reads = 0;
    for (int k = 0; k < n->n_in; k++)
      reads += n->in[k] >= 0 && mp->root[n->in[k]] == r && mp->offset[n->in[k]] < o1 &&
               o0 < mp->offset[n->in[k]] + (int64_t)ft_nbytes(&g->vals[n->in[k]].t);
    cr_assert_eq(reads, 1, "%s: in-place over a buffer the node reads twice", what);
  }

  /* replay: every arena byte is tagged with what was last written there (a value and the byte's
   * index in it); each read must find its value's bytes. A view's bytes are its input's, an
   * elided Concat's are its inputs' one after the other, anything else writes its own. */
  int64_t **want = calloc((size_t)nv, sizeof *want); /* the tags a value's bytes must hold */
  int64_t *tags = malloc(sizeof(int64_t) * (mp->arena_bytes + 1));
  for (size_t b = 0; b < mp->arena_bytes; b++) tags[b] = -1;
  for (int s = 0; s < ns; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    for (int k = 0; k < n->n_in; k++) {
      int v = n->in[k];
      if (v < 0 || mp->storage[v] != FT_S_ARENA) continue;
      cr_assert_not_null(want[v], "%s: '%s' is read before it is written", what, g->vals[v].name);
      for (size_t b = 0; b < ft_nbytes(&g->vals[v].t); b++)
        cr_assert_eq(tags[mp->offset[v] + (int64_t)b], want[v][b], "%s: step %d reads '%s', byte %zu was overwritten",
                     what, s, g->vals[v].name, b);
    }
    if (mp->scratch[s] >= 0)
      for (size_t b = 0; b < lw->calls[s].scratch; b++) tags[mp->scratch[s] + (int64_t)b] = -2;
    for (int k = 0; k < n->n_out; k++) {
      int o = n->out[k];
      if (o < 0) continue;
      size_t nb = ft_nbytes(&g->vals[o].t);
      want[o] = malloc(sizeof(int64_t) * (nb + 1));
      int shared = (n->op->flags & FT_OP_ALIAS) && !lw->calls[s].entry;
      if (shared && !want[n->in[0]]) shared = 0; /* a view of a graph input or a constant: not in the arena */
      if (shared) memcpy(want[o], want[n->in[0]], sizeof(int64_t) * nb);
      if (mp->elided[s]) {
        cr_assert(!strcmp(n->op_type, "Concat"), "%s: only a Concat is elided", what);
        size_t at = 0;
        for (int j = 0; j < n->n_in; j++) {
          size_t m = ft_nbytes(&g->vals[n->in[j]].t);
          cr_assert_leq(at + m, nb);
          cr_assert_eq(mp->offset[n->in[j]], mp->offset[o] + (int64_t)at, "%s: input %d of '%s' is not in its slice", what, j,
                       g->vals[o].name);
          memcpy(want[o] + at, want[n->in[j]], sizeof(int64_t) * m);
          at += m;
        }
        cr_assert_eq(at, nb);
      } else if (!shared)
        for (size_t b = 0; b < nb; b++) want[o][b] = (int64_t)o << 32 | (int64_t)b;
      if (mp->storage[o] == FT_S_ARENA && !shared && !mp->elided[s])
        for (size_t b = 0; b < nb; b++) tags[mp->offset[o] + (int64_t)b] = want[o][b];
      if (mp->storage[o] == FT_S_ARENA && (shared || mp->elided[s]))
        for (size_t b = 0; b < nb; b++)
          cr_assert_eq(tags[mp->offset[o] + (int64_t)b], want[o][b], "%s: '%s' shares bytes that do not hold it", what,
                       g->vals[o].name);
    }
    if (mp->elided[s]) cr_assert_eq(mp->root[n->out[0]], mp->root[n->in[0]], "%s: an elided Concat shares its inputs' storage", what);
  }
  for (int v = 0; v < nv; v++) free(want[v]);
  free(want);
  free(tags);

  /* scratch: aligned, inside the arena, clear of everything alive at its step */
  for (int s = 0; s < ns; s++) {
    size_t sz = lw->calls[s].scratch;
    if (!sz) continue;
    int64_t a0 = mp->scratch[s], a1 = a0 + (int64_t)sz;
    cr_assert_geq(a0, 0, "%s: step %d has no scratch", what, s);
    cr_assert_eq(a0 % 64, 0, "%s: scratch misaligned", what);
    cr_assert_leq(a1, (int64_t)mp->arena_bytes);
    for (int v = 0; v < nv; v++) {
      if (mp->storage[v] != FT_S_ARENA) continue;
      life x = grp[mp->root[v]];
      if (x.last < s || s < x.def) continue;
      int64_t b0 = mp->offset[v], b1 = b0 + (int64_t)ft_nbytes(&g->vals[v].t);
      cr_assert(a1 <= b0 || b1 <= a0, "%s: scratch of step %d overlaps live '%s'", what, s, g->vals[v].name);
    }
  }

  /* the arena holds at least what is alive at the busiest step */
  size_t need = 0;
  for (int s = 0; s < ns; s++) {
    size_t sum = lw->calls[s].scratch;
    for (int r = 0; r < nv; r++)
      if (mp->storage[r] == FT_S_ARENA && mp->root[r] == r && grp[r].def <= s && s <= grp[r].last)
        sum += ft_nbytes(&g->vals[r].t);
    if (sum > need) need = sum;
  }
  cr_assert_geq(mp->lower_bound, need, "%s: reported lower bound %zu below the live bytes %zu", what, mp->lower_bound, need);
  cr_assert_geq(mp->arena_bytes, mp->lower_bound, "%s: arena %zu below its lower bound %zu", what, mp->arena_bytes,
                mp->lower_bound);

  /* weights: each constant the program reads has its own aligned range */
  for (int u = 0; u < nv; u++) {
    if (mp->storage[u] != FT_S_WEIGHT || mp->root[u] != u) continue;
    cr_assert_eq(mp->offset[u] % 64, 0);
    cr_assert_leq(mp->offset[u] + (int64_t)ft_nbytes(&g->vals[u].t), (int64_t)mp->weight_bytes);
    for (int v = u + 1; v < nv; v++) {
      if (mp->storage[v] != FT_S_WEIGHT || mp->root[v] != v) continue;
      int64_t a0 = mp->offset[u], a1 = a0 + (int64_t)ft_nbytes(&g->vals[u].t);
      int64_t b0 = mp->offset[v], b1 = b0 + (int64_t)ft_nbytes(&g->vals[v].t);
      cr_assert(a1 <= b0 || b1 <= a0 || a0 == a1 || b0 == b1, "%s: weights '%s' and '%s' overlap", what,
                g->vals[u].name, g->vals[v].name);
    }
  }
  free(lv);
  free(grp);
}

/* ---- small graphs with a known answer ---------------------------------------------------- */

static int val(const ft_graph *g, const char *name) {
  int v = ft_value_find(g, name);
  cr_assert(v >= 0, "no value '%s'", name);
  return v;
}

/* A graph with float inputs x and y of one shape, for the nodes a test adds. */
static Onnx__GraphProto *graph_xy(const char *shape) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, shape));
  tb_add_input(gp, tb_value("y", FT_FLOAT, shape));
  return gp;
}

/* Plan gp (as an opset-13 model) and have the referee check the plan. */
static ft_graph *plan_checked(Onnx__GraphProto *gp, ft_lowered *lw, ft_memplan *mp, const char *what) {
  ft_graph *g = plan(tb_model(gp, 13), lw, mp);
  referee(g, lw, mp, what);
  /* the caller reads the plan until the test ends */
  tu_keep(lw->order); tu_keep(lw->calls);
  tu_keep(mp->root); tu_keep(mp->storage); tu_keep(mp->offset); tu_keep(mp->scratch); tu_keep(mp->elided);
  return tu_keep_graph(g);
}

Test(memplan, elementwise_op_reuses_a_dying_input) {
  /* a = x + y; b = a + y (a dies here: b may take its place); c = b + y (output) */
  Onnx__GraphProto *gp = graph_xy("256");
  tb_add_node(gp, tb_node("Add", "n1", "x,y", "a"));
  tb_add_node(gp, tb_node("Add", "n2", "a,y", "b"));
  tb_add_node(gp, tb_node("Add", "n3", "b,y", "c"));
  tb_add_output(gp, tb_value("c", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = plan_checked(gp, &lw, &mp, "chain");
  int a = val(g, "a"), b = val(g, "b");
  cr_assert_eq(mp.storage[a], FT_S_ARENA);
  cr_assert_eq(mp.root[b], mp.root[a], "b is written over a, which dies at that node");
  cr_assert_eq(mp.offset[b], mp.offset[a]);
  cr_assert_geq(mp.n_inplace, 1);
  cr_assert_eq(mp.arena_bytes, 256 * 4, "one buffer serves both");
  cr_assert_eq(mp.storage[val(g, "c")], FT_S_OUTPUT);
  cr_assert_eq(mp.storage[val(g, "x")], FT_S_INPUT);
}

/* a = x + x, r = x + y: both die at Res(a, r) (unless `after` reads r again) and both have the
 * output's size. The planner's first choice would be input 0; Res names input 1 (the residual)
 * as the only one it may overwrite. */
static ft_graph *residual_graph(const char *after, ft_lowered *lw, ft_memplan *mp, const char *what) {
  Onnx__GraphProto *gp = graph_xy("256");
  tb_add_node(gp, tb_node("Add", "n1", "x,x", "a"));
  tb_add_node(gp, tb_node("Add", "n2", "x,y", "r"));
  tb_add_node(gp, test_node("Res", "conv", "a,r", "b"));
  tb_add_node(gp, tb_node("Add", "n3", after, "c"));
  tb_add_output(gp, tb_value("c", FT_FLOAT, NULL));
  return plan_checked(gp, lw, mp, what);
}

Test(memplan, residual_op_overwrites_only_the_input_it_names) {
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = residual_graph("b,y", &lw, &mp, "residual");
  int a = val(g, "a"), r = val(g, "r"), b = val(g, "b");
  cr_assert_eq(mp.root[b], mp.root[r], "b is written over the residual r, which dies at that node");
  cr_assert_neq(mp.root[b], mp.root[a], "b must never be written over X");
  cr_assert_eq(mp.arena_bytes, 2 * 256 * 4, "a and r are alive together; b needs no third buffer");
}

Test(memplan, residual_still_needed_is_not_overwritten) {
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = residual_graph("b,r", &lw, &mp, "residual still needed");
  int a = val(g, "a"), r = val(g, "r"), b = val(g, "b");
  cr_assert_neq(mp.root[b], mp.root[r]);
  cr_assert_neq(mp.root[b], mp.root[a]);
}

Test(memplan, no_in_place_over_a_value_still_needed) {
  /* a = x + y; b = a + y; c = b + a: a is still read after b is written */
  Onnx__GraphProto *gp = graph_xy("256");
  tb_add_node(gp, tb_node("Add", "n1", "x,y", "a"));
  tb_add_node(gp, tb_node("Add", "n2", "a,y", "b"));
  tb_add_node(gp, tb_node("Add", "n3", "b,a", "c"));
  tb_add_output(gp, tb_value("c", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = plan_checked(gp, &lw, &mp, "still needed");
  int a = val(g, "a"), b = val(g, "b");
  cr_assert_neq(mp.root[b], mp.root[a]);
  cr_assert_eq(mp.arena_bytes, 2 * 256 * 4);
  cr_assert_eq(mp.lower_bound, 2 * 256 * 4);
}

Test(memplan, no_in_place_across_a_broadcast) {
  /* b = a + x where a is [1] broadcast to [64]: b is larger, so it cannot overwrite a */
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "64"));
  tb_add_input(gp, tb_value("s", FT_FLOAT, "1"));
  tb_add_node(gp, tb_node("Add", "n1", "s,s", "a"));
  tb_add_node(gp, tb_node("Add", "n2", "a,x", "b"));
  tb_add_node(gp, tb_node("Add", "n3", "b,x", "c"));
  tb_add_output(gp, tb_value("c", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = plan_checked(gp, &lw, &mp, "broadcast");
  cr_assert_neq(mp.root[val(g, "b")], mp.root[val(g, "a")]);
}

Test(memplan, a_view_shares_storage) {
  /* a = x + y; v = View(a); c = v + v (output); a's storage lives as long as v is read */
  Onnx__GraphProto *gp = graph_xy("4,32");
  tb_add_node(gp, tb_node("Add", "n1", "x,y", "a"));
  tb_add_node(gp, test_node("View", "view", "a", "v"));
  tb_add_node(gp, tb_node("Add", "n2", "x,y", "d"));
  tb_add_node(gp, test_node("Ew", "n3", "v,d", "c"));
  tb_add_output(gp, tb_value("c", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = plan_checked(gp, &lw, &mp, "view");
  int a = val(g, "a"), v = val(g, "v"), d = val(g, "d");
  cr_assert_eq(mp.root[v], mp.root[a]);
  cr_assert_eq(mp.offset[v], mp.offset[a]);
  cr_assert_eq(mp.n_alias, 1);
  /* a is alive (through v) when d is written: they may not share */
  cr_assert_neq(mp.root[d], mp.root[a]);
  int64_t a0 = mp.offset[a], d0 = mp.offset[d], n = 4 * 32 * 4;
  cr_assert(a0 + n <= d0 || d0 + n <= a0, "a and d overlap");
  /* the view runs no kernel */
  for (int s = 0; s < lw.n; s++)
    if (!strcmp(g->nodes[lw.order[s]].op_type, "View")) cr_assert_null(lw.calls[s].entry);
}

Test(memplan, a_view_output_gets_its_own_buffer) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2,8"));
  tb_add_node(gp, tb_node("Add", "n1", "x,x", "a"));
  tb_add_node(gp, test_node("View", "view", "a", "v"));
  tb_add_output(gp, tb_value("v", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = plan_checked(gp, &lw, &mp, "view output");
  cr_assert_eq(mp.storage[val(g, "v")], FT_S_OUTPUT);
  int copies = 0;
  for (int s = 0; s < lw.n; s++) copies += lw.calls[s].entry == ft_copy_bytes_entry;
  cr_assert_eq(copies, 1, "the view becomes a copy into the output");
}

Test(memplan, scratch_is_planned) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "16"));
  Onnx__NodeProto *m1 = test_node("Make", "m1", "x", "a");
  tb_attr_int(m1, "n", 100);
  tb_attr_int(m1, "scratch", 1000);
  Onnx__NodeProto *m2 = test_node("Make", "m2", "a", "b");
  tb_attr_int(m2, "n", 10);
  tb_attr_int(m2, "scratch", 5);
  tb_add_node(gp, m1);
  tb_add_node(gp, m2);
  tb_add_output(gp, tb_value("b", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  plan_checked(gp, &lw, &mp, "scratch");
  cr_assert_geq(mp.scratch[0], 0);
  cr_assert_geq(mp.scratch[1], 0);
}

Test(memplan, constants_go_to_the_weights) {
  const int64_t d[1] = {10};
  float w1[10] = {0}, w2[10] = {0};
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "10"));
  tb_add_init(gp, tb_tensor_f32("w1", 1, d, w1));
  tb_add_init(gp, tb_tensor_f32("w2", 1, d, w2));
  tb_add_init(gp, tb_tensor_f32("unused", 1, d, w2));
  tb_add_node(gp, tb_node("Add", "n1", "x,w1", "a"));
  tb_add_node(gp, tb_node("Add", "n2", "a,w2", "b"));
  tb_add_output(gp, tb_value("b", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = plan_checked(gp, &lw, &mp, "weights");
  cr_assert_eq(mp.storage[val(g, "w1")], FT_S_WEIGHT);
  cr_assert_eq(mp.storage[val(g, "w2")], FT_S_WEIGHT);
  cr_assert_neq(mp.storage[val(g, "unused")], FT_S_WEIGHT, "an unread initializer is not shipped");
  cr_assert_eq(mp.weight_bytes, 128, "two 40-byte tensors at 64-byte alignment");
}

/* ---- Concat elision ---------------------------------------------------------------------- */

/* a = x + y, b = x * y (shape `shape`), c = Concat(`ins`, axis), then `tail` nodes; output z. */
static ft_graph *concat_graph(const char *shape, const char *ins, int axis, const char *const *tail, ft_lowered *lw,
                              ft_memplan *mp, const char *what) {
  Onnx__GraphProto *gp = graph_xy(shape);
  tb_add_node(gp, tb_node("Add", "n1", "x,y", "a"));
  tb_add_node(gp, tb_node("Mul", "n2", "x,y", "b"));
  Onnx__NodeProto *n = tb_node("Concat", "cat", ins, "c");
  tb_attr_int(n, "axis", axis);
  tb_add_node(gp, n);
  for (int i = 0; tail[i]; i += 3) {
    Onnx__NodeProto *t = tb_node(tail[i], tail[i + 1], tail[i + 2], tail[i + 1]);
    if (!strcmp(tail[i], "Concat")) tb_attr_int(t, "axis", axis);
    tb_add_node(gp, t);
  }
  tb_add_output(gp, tb_value("z", FT_FLOAT, NULL));
  return plan_checked(gp, lw, mp, what);
}

Test(memplan, concat_inputs_are_written_into_its_output) {
  static const char *const tail[] = {"Relu", "z", "c", NULL};
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = concat_graph("1,16,3", "a,b", 1, tail, &lw, &mp, "concat");
  int a = val(g, "a"), b = val(g, "b"), c = val(g, "c");
  cr_assert_eq(mp.n_concat, 1);
  cr_assert_eq(mp.root[a], c);
  cr_assert_eq(mp.root[b], c);
  cr_assert_eq(mp.offset[a], mp.offset[c]);
  cr_assert_eq(mp.offset[b], mp.offset[c] + 16 * 3 * 4);
  cr_assert_eq(mp.arena_bytes, 2 * 16 * 3 * 4, "a and b need no buffers of their own");
}

Test(memplan, concat_copies_where_its_output_is_not_one_run_of_its_inputs) {
  static const char *const tail[] = {"Relu", "z", "c", NULL};
  ft_lowered lw;
  ft_memplan mp;
  concat_graph("2,16,3", "a,b", 1, tail, &lw, &mp, "batch 2");
  cr_assert_eq(mp.n_concat, 0, "two runs per input at batch 2");
  concat_graph("1,16,3", "a,b", 2, tail, &lw, &mp, "axis 2");
  cr_assert_eq(mp.n_concat, 0, "axis 2 of [1,16,3]: 16 runs per input");
  concat_graph("1,16,3", "a,a", 1, tail, &lw, &mp, "twice");
  cr_assert_eq(mp.n_concat, 0, "one value cannot lie in two slices");
  concat_graph("1,16,3", "a,x", 1, tail, &lw, &mp, "graph input");
  cr_assert_eq(mp.n_concat, 0, "a graph input lives in the caller's buffer");
  concat_graph("1,5,3", "a,b", 1, tail, &lw, &mp, "misaligned");
  cr_assert_eq(mp.n_concat, 0, "the second slice would start 60 bytes in");
}

Test(memplan, concat_input_that_is_a_graph_output_keeps_the_copy) {
  Onnx__GraphProto *gp = graph_xy("1,16");
  tb_add_node(gp, tb_node("Add", "n1", "x,y", "a"));
  tb_add_node(gp, tb_node("Mul", "n2", "x,y", "b"));
  Onnx__NodeProto *n = tb_node("Concat", "cat", "a,b", "c");
  tb_attr_int(n, "axis", 1);
  tb_add_node(gp, n);
  tb_add_node(gp, tb_node("Relu", "r", "c", "z"));
  tb_add_output(gp, tb_value("z", FT_FLOAT, NULL));
  tb_add_output(gp, tb_value("b", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  plan_checked(gp, &lw, &mp, "input is an output");
  cr_assert_eq(mp.n_concat, 0);
}

Test(memplan, no_in_place_write_over_a_slice_while_the_concat_is_alive) {
  /* after the Concat, a dies at the Relu (an in-place candidate), but c is read later */
  static const char *const t2[] = {"Relu", "r", "a", "Concat", "d", "c,r", "Relu", "z", "d", NULL};
  ft_lowered lw;
  ft_memplan mp;
  /* d = Concat(c, r) is elided too, nested over c */
  ft_graph *g = concat_graph("1,16", "a,b", 1, t2, &lw, &mp, "in place after");
  int a = val(g, "a"), r = val(g, "r"), c = val(g, "c"), d = val(g, "d");
  cr_assert_neq(mp.offset[r], mp.offset[a], "r must not overwrite a's slice while c is alive");
  cr_assert_eq(mp.root[c], d, "c lies in d's first slice");
  cr_assert_eq(mp.root[a], d);
  cr_assert_eq(mp.n_concat, 2);
}

Test(memplan, in_place_over_the_concat_output_once_its_inputs_are_dead) {
  /* r = Relu(a) after the Concat, with c still read later, must not overwrite a's slice; w =
   * Relu(c) may overwrite c, since nothing reads a, b or c after it */
  static const char *const tail[] = {"Relu", "r", "a", "Relu", "w", "c", "Concat", "rr", "r,r", "Add", "z", "w,rr", NULL};
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = concat_graph("16", "a,b", 0, tail, &lw, &mp, "in place on the output");
  cr_assert_eq(mp.n_concat, 1);
  int a = val(g, "a"), r = val(g, "r"), c = val(g, "c"), w = val(g, "w");
  cr_assert_neq(mp.root[r], mp.root[a]);
  cr_assert_eq(mp.root[w], mp.root[c], "w is written over c");
}

/* ---- random graphs ----------------------------------------------------------------------- */

static uint32_t rng;
static uint32_t rnd(uint32_t n) {
  rng = rng * 1664525u + 1013904223u;
  return (rng >> 8) % n;
}

/* A random DAG of test ops (and Add) over two inputs: sizes from a small set so that in-place
 * candidates are common, some values read many steps later, some graph outputs in the middle. */
static Onnx__ModelProto *random_model(int n_nodes) {
  static const int sizes[] = {1, 16, 16, 100, 100, 1000, 4096};
  Onnx__GraphProto *gp = tb_graph("random");
  tb_add_input(gp, tb_value("x0", FT_FLOAT, "100"));
  tb_add_input(gp, tb_value("x1", FT_FLOAT, "16"));
  char names[256][16];
  int nvals = 2;
  snprintf(names[0], 16, "x0");
  snprintf(names[1], 16, "x1");
  for (int i = 0; i < n_nodes; i++) {
    char out[16], nm[16], ins[64] = "";
    snprintf(out, sizeof out, "v%d", i);
    snprintf(nm, sizeof nm, "n%d", i);
    int k = 1 + (int)rnd(3);
    for (int j = 0; j < k; j++) {
      /* favour recent values, but sometimes reach far back */
      int pick = rnd(4) ? nvals - 1 - (int)rnd(nvals < 4 ? nvals : 4) : (int)rnd(nvals);
      size_t m = strlen(ins);
      snprintf(ins + m, sizeof ins - m, "%s%s", j ? "," : "", names[pick]);
    }
    Onnx__NodeProto *n;
    switch (rnd(6)) {
    case 0: n = test_node("Ew", nm, ins, out); break;
    case 5: /* Concat of recent values (all rank 1): elided when every slice starts 64-byte aligned */
      n = tb_node("Concat", nm, ins, out);
      tb_attr_int(n, "axis", 0);
      break;
    case 4: { /* Res over two recent values: X and the residual it may overwrite */
      char two[40];
      const char *x = names[nvals - 1 - (int)rnd(nvals < 3 ? nvals : 3)];
      const char *r = names[nvals - 1 - (int)rnd(nvals < 3 ? nvals : 3)];
      snprintf(two, sizeof two, "%s,%s", x, r);
      n = test_node("Res", nm, two, out);
      break;
    }
    case 1: {
      char first[16];
      snprintf(first, sizeof first, "%s", names[nvals - 1 - (int)rnd(nvals < 3 ? nvals : 3)]);
      n = test_node("View", nm, first, out);
      break;
    }
    case 2: {
      /* Add of a value with itself: same shape, a valid in-place candidate that is read twice */
      char two[40];
      const char *a = names[nvals - 1 - (int)rnd(nvals < 3 ? nvals : 3)];
      snprintf(two, sizeof two, "%s,%s", a, a);
      n = tb_node("Add", nm, two, out);
      break;
    }
    default:
      n = test_node("Make", nm, ins, out);
      tb_attr_int(n, "n", sizes[rnd(sizeof sizes / sizeof sizes[0])]);
      break;
    }
    /* the test ops read "scratch"; the real Add has no such attribute */
    if (rnd(5) == 0 && n->domain && !strcmp(n->domain, "test") && strcmp(n->op_type, "View") != 0)
      tb_attr_int(n, "scratch", 1 + rnd(3000));
    tb_add_node(gp, n);
    snprintf(names[nvals++], 16, "%s", out);
    if (rnd(8) == 0) tb_add_output(gp, tb_value(out, FT_FLOAT, NULL));
  }
  tb_add_output(gp, tb_value(names[nvals - 1], FT_FLOAT, NULL));
  return tb_model(gp, 13);
}

Test(memplan, random_graphs_respect_lifetimes, .timeout = 120) {
  int inplace = 0, alias = 0, concat = 0;
  for (uint32_t seed = 1; seed <= 300; seed++) {
    rng = seed;
    int n = 3 + (int)rnd(40);
    ft_lowered lw;
    ft_memplan mp;
    ft_graph *g = plan(random_model(n), &lw, &mp);
    char what[64];
    snprintf(what, sizeof what, "seed %u (%d nodes)", seed, n);
    referee(g, &lw, &mp, what);
    inplace += mp.n_inplace;
    alias += mp.n_alias;
    concat += mp.n_concat;
    ft_memplan_free(&mp);
    ft_lowered_free(&lw);
    ft_graph_free(g);
  }
  /* the generator must actually exercise both kinds of sharing */
  cr_assert_gt(inplace, 50, "only %d in-place writes in all graphs", inplace);
  cr_assert_gt(alias, 50, "only %d views in all graphs", alias);
  cr_assert_gt(concat, 20, "only %d elided Concats in all graphs", concat);
}

/* ---- a Loop run at run time -------------------------------------------------------------- */

/* The steps [*first, *end] of the body of the Loop run at run time, or -1. */
static void loop_body_steps(const ft_graph *g, const ft_lowered *lw, int *first, int *end) {
  *first = *end = -1;
  for (int s = 0; s < lw->n; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    for (int k = 0; k < n->n_guard; k++)
      if (ft_guard_is_loop(n->guard[k])) {
        if (*first < 0) *first = s;
        *end = s;
      }
  }
}

/* tests/models/loop_count: its body runs again after its last call, so what it reads from before
 * it (x * 3 in its first node only, x * 2, the carried values, the flag) must keep its bytes
 * through every step of the body: no value the body writes may share them (in place or not). */
Test(memplan, values_a_loop_body_reads_from_before_it_outlive_the_body) {
  ft_graph *g;
  ft_err e = {0};
  cr_assert_eq(ft_load_model(tu_fmt("%s/tests/models/loop_count/model.onnx", FTAX_SOURCE_DIR), &g, &e), 0, "%s", e.msg);
  ft_pins none = {0};
  ft_lowered lw;
  ft_memplan mp;
  cr_assert_eq(ft_resolve_ops(g, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_specialize(g, &none, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_infer(g, FT_INFER_FOLD, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_simplify(g, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_lower(g, &lw, &e), 0, "%s", e.msg);
  cr_assert_eq(ft_plan_memory(g, &lw, &mp, &e), 0, "%s", e.msg);
  int first, end;
  loop_body_steps(g, &lw, &first, &end);
  cr_assert(first > 0 && end > first, "the Loop became no loop body (steps %d..%d)", first, end);
  cr_assert_str_eq(g->nodes[lw.order[end]].op_type, "LoopNext", "the body ends with LoopNext");
  int64_t *def = malloc(sizeof(int64_t) * (size_t)g->n_vals);
  for (int v = 0; v < g->n_vals; v++) def[v] = -1;
  for (int s = 0; s < lw.n; s++)
    for (int k = 0; k < g->nodes[lw.order[s]].n_out; k++)
      if (g->nodes[lw.order[s]].out[k] >= 0) def[g->nodes[lw.order[s]].out[k]] = s;
  int outer_reads = 0;
  for (int s = first; s <= end; s++) {
    const ft_node *n = &g->nodes[lw.order[s]];
    for (int k = 0; k < n->n_in + n->n_guard; k++) {
      int u = k < n->n_in ? n->in[k] : ft_guard_value(n->guard[k - n->n_in]);
      if (u < 0 || mp.storage[u] != FT_S_ARENA || def[u] >= first) continue;
      outer_reads++;
      int64_t a0 = mp.offset[u], a1 = a0 + (int64_t)ft_nbytes(&g->vals[u].t);
      for (int v = 0; v < g->n_vals; v++) {
        if (mp.storage[v] != FT_S_ARENA || def[v] < first || def[v] > end) continue;
        if (g->nodes[lw.order[def[v]]].op->flags & FT_OP_ALIAS) continue; /* a view writes nothing */
        int64_t b0 = mp.offset[v], b1 = b0 + (int64_t)ft_nbytes(&g->vals[v].t);
        cr_assert(a1 <= b0 || b1 <= a0, "'%s', made before the loop and read in it, shares bytes with '%s', made in it",
                  g->vals[u].name, g->vals[v].name);
      }
    }
  }
  cr_assert_geq(outer_reads, 4, "the body reads x * 3, x * 2, h, p, q and the flag from before it (%d reads)", outer_reads);
  free(def);
  ft_lowered_free(&lw);
  ft_memplan_free(&mp);
  ft_graph_free(g);
}

/* ft_check_plan, between planning and emission: a value a call reads, writes or is guarded by
 * without a place in the plan is an internal error naming the value and the node (a program
 * would get a NULL pointer there and crash on every run). */
Test(memplan, check_plan_finds_values_without_a_place) {
  Onnx__GraphProto *gp = graph_xy("16");
  tb_add_node(gp, tb_node("Add", "n1", "x,y", "a"));
  tb_add_node(gp, tb_node("Mul", "n2", "a,y", "c"));
  tb_add_output(gp, tb_value("c", FT_FLOAT, NULL));
  ft_lowered lw;
  ft_memplan mp;
  ft_graph *g = plan_checked(gp, &lw, &mp, "check");
  ft_err e = {0};
  cr_assert_eq(ft_check_plan(g, &lw, &mp, &e), 0, "a whole plan passes: %s", e.msg);
  int a = val(g, "a");
  int saved = mp.storage[a];
  mp.storage[a] = FT_S_NONE; /* what the elided no-op Cast before a run-time If left */
  cr_assert_eq(ft_check_plan(g, &lw, &mp, &e), FT_EUNSUPPORTED);
  cr_assert(strstr(e.msg, "'a'") && strstr(e.msg, "n1") && strstr(e.msg, "internal error"), "%s", e.msg);
  mp.storage[a] = saved;
  /* a guard's condition is checked as well: n1 guarded by c, planned as though it had no place */
  int c = val(g, "c"), add = -1;
  for (int s = 0; s < lw.n; s++) if (!strcmp(g->nodes[lw.order[s]].name, "n1")) add = lw.order[s];
  cr_assert_geq(add, 0);
  saved = mp.storage[c];
  mp.storage[c] = FT_S_NONE;
  ft_node *n = &g->nodes[add];
  int entry = FT_GUARD(c, 0);
  n->guard = &entry;
  n->n_guard = 1;
  memset(&e, 0, sizeof e);
  cr_assert_eq(ft_check_plan(g, &lw, &mp, &e), FT_EUNSUPPORTED);
  n->guard = NULL;
  n->n_guard = 0;
  mp.storage[c] = saved;
  cr_assert(strstr(e.msg, "'c'") && strstr(e.msg, "n1") && strstr(e.msg, "condition"), "%s", e.msg);
}
