/* Control flow and sequences. If, Loop, Scan and the sequence ops never reach their infer: the inference sweep replaces each by
 * the nodes it runs (compiler/passes/branch.c, compiler/passes/loop.c). What stays is the merge
 * of an If whose condition is computed at run time: ftax.IfMerge(cond, then_value, else_value)
 * is the value of the branch that ran; and the state of a Loop run at run time:
 * ftax.LoopInit(M, cond, v_initial...) -> (go, iter, carried...) before its body and
 * ftax.LoopNext(M, cond, v..., go, iter, carried...) -> (iterations) at the body's end
 * (templates/c/loop.h). */
#include <stdio.h>
#include <string.h>

#include "op.h"

#include "control.h"
#include "loop.h"

static int expanded_infer(ft_opctx *c) {
  return ft_infer_fail(c, FT_EINVALID, "reached inference unexpanded (internal error)");
}

/* Both branches are planned ahead of time, so the value after the If has one shape and type
 * whichever ran. */
static int same_type_shape(const ft_tensor *a, const ft_tensor *b) {
  int same = a->dtype == b->dtype && a->rank == b->rank;
  for (int d = 0; same && d < a->rank; d++) same = a->dims[d] == b->dims[d];
  return same;
}

/* "1x128" ("" for a scalar). */
static void dims_str(const ft_tensor *t, char *buf, size_t size) {
  size_t m = 0;
  buf[0] = 0;
  for (int d = 0; d < t->rank && m < size - 24; d++) m += snprintf(buf + m, size - m, "%s%lld", d ? "x" : "", (long long)t->dims[d]);
}

static int if_merge_infer(ft_opctx *c) {
  const ft_tensor *t = c->in[1], *f = c->in[2];
  if (!same_type_shape(t, f)) {
    char ts[160], fs[160];
    dims_str(t, ts, sizeof ts);
    dims_str(f, fs, sizeof fs);
    return ft_infer_fail(c, FT_EUNSUPPORTED,
                         "the If's branches give output '%s' as %s[%s] (then_branch) and %s[%s] (else_branch); ftax plans "
                         "both branches ahead of time and needs each output to have one shape and type",
                         c->graph ? c->graph->vals[c->node->out[0]].name : "?", ft_dtype_name(t->dtype), ts,
                         ft_dtype_name(f->dtype), fs);
  }
  c->out[0]->dtype = t->dtype;
  ft_copy_shape(c->out[0], t);
  return 0;
}

static int if_merge_plan(ft_opctx *c, ft_kcall *k) {
  FT_K(k, ft_if_merge);
  k->p[0] = (int64_t)ft_nbytes(c->out[0]);
  k->np = 1;
  return 0;
}

/* ftax.Fail (message): what remains of an If's branch that cannot run at the shapes the program
 * is compiled for (compiler/passes/infer.c). No inputs, no outputs, no kernel: the C emitter
 * writes a return of exit code 2 with the message where its guard holds, ftax-eager fails with
 * it there. FT_OP_EFFECT keeps it alive. */
static int fail_infer(ft_opctx *c) { (void)c; return 0; }
static int fail_plan(ft_opctx *c, ft_kcall *k) { (void)c; (void)k; return 0; }

/* ---- a Loop run at run time ------------------------------------------------------------------ */

/* Input k, when present, is one element of dtype (the trip count, a condition). */
static int check_scalar(ft_opctx *c, int k, int dtype, const char *what) {
  const ft_tensor *t = k < c->n_in ? c->in[k] : NULL;
  if (!t || (t->dtype == dtype && ft_numel(t) == 1)) return 0;
  return ft_infer_fail(c, FT_EINVALID, "the %s '%s' is %s of %lld elements; the Loop takes one %s", what,
                       c->graph ? c->graph->vals[c->node->in[k]].name : "?", ft_dtype_name(t->dtype),
                       (long long)ft_numel(t), ft_dtype_name(dtype));
}

static void set_scalar(ft_tensor *t, int dtype) {
  t->dtype = dtype;
  t->rank = 0;
}

/* in: [M, cond, v_initial_0..n); out: [go, iter, carried_0..n), each carried value as its
 * initial value is. */
static int loop_init_infer(ft_opctx *c) {
  int rc = check_scalar(c, 0, FT_INT64, "trip count");
  if (!rc) rc = check_scalar(c, 1, FT_BOOL, "condition");
  if (rc) return rc;
  set_scalar(c->out[0], FT_BOOL);
  set_scalar(c->out[1], FT_INT64);
  for (int j = 2; j < c->n_out; j++) {
    c->out[j]->dtype = c->in[j]->dtype;
    ft_copy_shape(c->out[j], c->in[j]);
  }
  return 0;
}

static int loop_init_plan(ft_opctx *c, ft_kcall *k) {
  FT_K(k, ft_loop_init);
  int n = c->n_out - 2;
  k->p[0] = c->in[0] != NULL;
  k->p[1] = c->in[1] != NULL;
  k->p[2] = ft_attr_int(c->node, "start", 0);
  k->p[3] = n;
  for (int j = 0; j < n; j++) k->p[4 + j] = (int64_t)ft_nbytes(c->out[2 + j]);
  k->np = 4 + n;
  return 0;
}

/* The body gave each carried value with the shape and type it came in with: the program runs the
 * one planned body again and again over the same buffers. */
static int loop_next_infer(ft_opctx *c) {
  int n = (c->n_in - 4) / 2;
  int rc = check_scalar(c, 0, FT_INT64, "trip count");
  if (!rc && c->in[1] && !(c->in[1]->dtype == FT_BOOL && ft_numel(c->in[1]) == 1))
    return ft_infer_fail(c, FT_EINVALID, "the Loop's body gives its condition '%s' as %s of %lld elements; it takes one bool",
                         c->graph ? c->graph->vals[c->node->in[1]].name : "?", ft_dtype_name(c->in[1]->dtype),
                         (long long)ft_numel(c->in[1]));
  for (int j = 0; j < n && !rc; j++) {
    const ft_tensor *got = c->in[2 + j], *state = c->in[4 + n + j];
    if (same_type_shape(got, state)) continue;
    char gs[160], ss[160];
    dims_str(got, gs, sizeof gs);
    dims_str(state, ss, sizeof ss);
    return ft_infer_fail(c, FT_EUNSUPPORTED,
                         "loop-carried value '%s' enters the Loop's body as %s[%s] and leaves it as %s[%s] ('%s'); ftax runs "
                         "this Loop at run time (its trip count or condition is known only then) over one planned body, so "
                         "each carried value must keep its shape and type",
                         c->graph ? c->graph->vals[c->node->in[4 + n + j]].name : "?", ft_dtype_name(state->dtype), ss,
                         ft_dtype_name(got->dtype), gs, c->graph ? c->graph->vals[c->node->in[2 + j]].name : "?");
  }
  if (!rc) set_scalar(c->out[0], FT_INT64);
  return rc;
}

/* The value whose bytes v is (through views), as the memory plan and ftax-eager share them. */
static int storage_of(const ft_graph *g, int v) {
  for (int hops = 0; v >= 0 && hops < g->n_nodes; hops++) {
    int p = g->vals[v].producer;
    if (p < 0 || p >= g->n_nodes || g->nodes[p].dead || !g->nodes[p].op || !(g->nodes[p].op->flags & FT_OP_ALIAS) || g->nodes[p].out[0] != v)
      break;
    v = g->nodes[p].in[0];
  }
  return v;
}

static int loop_next_plan(ft_opctx *c, ft_kcall *k) {
  FT_K(k, ft_loop_next);
  int n = (c->n_in - 4) / 2;
  k->p[0] = c->in[0] != NULL;
  k->p[1] = n;
  k->np = 2 + 2 * n;
  size_t scratch = 0;
  for (int j = 0; j < n; j++) {
    size_t bytes = ft_nbytes(c->in[2 + j]);
    k->p[2 + j] = (int64_t)bytes;
    int src = c->graph ? storage_of(c->graph, c->node->in[2 + j]) : -1, staged = 0;
    for (int m = 0; m < n && src >= 0; m++) /* a view of another carried value: overwritten before it is read */
      staged |= m != j && src == storage_of(c->graph, c->node->in[4 + n + m]);
    k->p[2 + n + j] = staged;
    if (staged && scratch > SIZE_MAX - bytes) return ft_infer_fail(c, FT_EUNSUPPORTED, "the loop-carried values are too large");
    if (staged) scratch += bytes;
  }
  k->scratch = scratch;
  return 0;
}

const ft_opdesc ft_ops_control[] = {
    {"If", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"Loop", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"Scan", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    /* sequences: lowered at compile time into lists of values (compiler/passes/sequence.c) */
    {"SequenceEmpty", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceConstruct", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceInsert", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceErase", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceLength", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SequenceAt", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"SplitToSequence", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"ConcatFromSequence", "", expanded_infer, NULL, "", FT_OP_NOEVAL | FT_OP_CONTROL},
    {"IfMerge", "ftax", if_merge_infer, if_merge_plan, "control", 0},
    {"Fail", "ftax", fail_infer, fail_plan, "", FT_OP_EFFECT},
    {"LoopInit", "ftax", loop_init_infer, loop_init_plan, "loop", FT_OP_EFFECT},
    {"LoopNext", "ftax", loop_next_infer, loop_next_plan, "loop", FT_OP_EFFECT},
    {0}};
