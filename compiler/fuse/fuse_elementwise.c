/* Fusion pass elementwise: connected groups of float32 elementwise ops become one
 * ftax.Elementwise (compiler/ops/fused_elementwise.c), whose kernel (templates/c/elementwise.h)
 * evaluates the whole group a chunk at a time, so memory is read and written once instead of
 * once per op.
 *
 * Ops are classified by fusion pattern, as TVM does, instead of writing a pass per combination:
 * each op table row names its pattern (FT_PAT_* in compiler/op.h: elementwise, broadcast,
 * injective, reduction, out-fusable). Elementwise and broadcast ops that are scalar ops
 * (templates/common/scalar_ops.h, whose id is the kernel's opcode) group; the others bound the
 * groups (an out-fusable producer is named in a near-miss: its own epilogue pass should have
 * taken the op that follows it).
 *
 * A group grows from a root (the op whose result leaves the group), walking the graph backwards
 * in node order: a producer joins when it is fusable, its output has the root's exact shape and
 * every reader of that output is already in the group (so x * sigmoid(x) joins with x read once,
 * and nothing outside sees an intermediate). Inputs may broadcast; constant scalars become
 * immediates in the program. The pass runs last, so it only sees what the pattern passes left;
 * a group of one op is left alone. */
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "fuse.h"
#include "scalar_table.h"

/* An op the kernel can take: its scalar op (templates/common/scalar_ops.h), whose id is the
 * opcode, by the node's op type. Ops of other patterns bound the groups. */
static const ft_sop *classify(const ft_graph *g, int i) {
  if (i < 0 || g->nodes[i].dead || g->nodes[i].domain[0]) return NULL;
  int pat = ft_op_pattern(ft_op_find("", g->nodes[i].op_type));
  if (pat != FT_PAT_ELEMWISE && pat != FT_PAT_BROADCAST) return NULL;
  const ft_sop *s = ft_sop_by_name(g->nodes[i].op_type);
  return s && s->id != FT_SOP_GELU_TANH ? s : NULL; /* GeluTanh is no ONNX op */
}

typedef struct group {
  int nodes[FT_EW_MAXI], n; /* members, in node order */
  int root;
  const ft_tensor *shape;   /* the root's output */
} group;

/* The compiled form: program and the values feeding the inputs. */
typedef struct program {
  int64_t code[5 * FT_EW_MAXI];
  int n_instr, n_temps;
  int ins[FT_EW_MAXIN], n_in;
} program;

static int same_shape(const ft_tensor *a, const ft_tensor *b) {
  if (a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return 1;
}

static int in_group(const group *gr, int i) {
  for (int k = 0; k < gr->n; k++)
    if (gr->nodes[k] == i) return 1;
  return 0;
}

static int64_t imm(float x) { return FT_EW_IMM | (int64_t)ft_f32_bits(x); }

/* Can node i be an instruction at all (dtypes, input counts, constant bounds)? When it cannot
 * though its op has an opcode, *why says why (for the report). */
static int evaluable(const ft_graph *g, int i, const char **why) {
  const ft_sop *k = classify(g, i);
  const ft_node *n = &g->nodes[i];
  *why = NULL;
  if (!k) return 0;
  if (n->n_out < 1 || n->out[0] < 0 || g->vals[n->out[0]].t.dtype != FT_FLOAT) return 0;
  for (int j = 1; j < n->n_out; j++)
    if (n->out[j] >= 0) return 0;
  int binary = FT_SOP_IS_BINARY(k->id), is_clip = k->id == FT_SOP_CLIP;
  int max_in = binary ? 2 : is_clip ? 3 : 1, min_in = binary ? 2 : 1;
  if (n->n_in < min_in || n->n_in > max_in || n->in[0] < 0 || (binary && n->in[1] < 0)) {
    if (binary) *why = "not exactly two inputs";
    return 0;
  }
  for (int j = 0; j < n->n_in; j++) {
    if (n->in[j] < 0) continue;
    const ft_value *v = &g->vals[n->in[j]];
    int exponent = k->id == FT_SOP_POW && j == 1;
    if (v->t.dtype != FT_FLOAT && !(exponent && v->t.data && ft_numel(&v->t) == 1)) {
      *why = "an input is not float32";
      return 0;
    }
    if (is_clip && j > 0 && (!v->t.data || ft_numel(&v->t) != 1)) {
      *why = "Clip bounds are not constants";
      return 0;
    }
  }
  if (k->id == FT_SOP_PRELU && g->opset < 7) return 0; /* a per-channel slope, not numpy broadcasting */
  float params[2];
  return binary || ft_sop_of_node(g, n, params) != NULL; /* Gelu's approximate is known */
}

/* Compile the group into a program; 0 when it does not fit the kernel's limits. */
static int compile(const ft_graph *g, const group *gr, program *pr) {
  memset(pr, 0, sizeof *pr);
  /* value -> register, and each member value's last reader (instruction index) */
  int nv = g->n_vals;
  int *reg = malloc(sizeof(int) * (size_t)nv), *last = malloc(sizeof(int) * (size_t)nv);
  for (int v = 0; v < nv; v++) { reg[v] = -1; last[v] = -1; }
  int ok = 1;
  /* inputs first: every non-member value that is not a constant scalar */
  for (int s = 0; s < gr->n && ok; s++) {
    const ft_node *n = &g->nodes[gr->nodes[s]];
    for (int j = 0; j < n->n_in; j++) {
      int v = n->in[j];
      if (v < 0) continue;
      last[v] = s;
      int p = ft_producer(g, v);
      if ((p >= 0 && in_group(gr, p)) || reg[v] >= 0) continue;
      double x;
      if (ft_const_scalar(g, v, &x)) continue;
      if (pr->n_in == FT_EW_MAXIN) { ok = 0; break; }
      reg[v] = pr->n_in;
      pr->ins[pr->n_in++] = v;
    }
  }
  int free_t[FT_EW_MAXT], n_free = 0, used_t = 0;
  for (int s = 0; s < gr->n && ok; s++) {
    const ft_node *n = &g->nodes[gr->nodes[s]];
    const ft_sop *k = classify(g, gr->nodes[s]);
    int binary = FT_SOP_IS_BINARY(k->id);
    float params[2] = {0, 0};
    if (!binary) k = ft_sop_of_node(g, n, params); /* Gelu approximate="tanh" is GeluTanh */
    if (!k) { ok = 0; break; }
    int64_t *ins = pr->code + 5 * s;
    ins[0] = k->id;
    /* operands: a register, or a constant scalar as an immediate */
    for (int j = 0; j < (binary ? 2 : 1); j++) {
      int v = n->in[j];
      double x;
      if (reg[v] >= 0) ins[2 + j] = reg[v];
      else if (ft_const_scalar(g, v, &x)) ins[2 + j] = imm((float)x);
      else { ok = 0; break; }
    }
    if (FT_SOP_IS_PARAM(k->id)) { /* the parameters (attributes, Clip's bounds) as immediates */
      ins[3] = imm(params[0]);
      ins[4] = imm(params[1]);
    }
    if (!ok) break;
    /* temporaries whose last reader is this instruction are free again (the destination may
     * reuse one: every element is read before it is written) */
    for (int j = 0; j < n->n_in; j++) {
      int v = n->in[j];
      if (v < 0 || reg[v] < pr->n_in || last[v] != s) continue;
      int t = reg[v], dup = 0;
      for (int q = 0; q < n_free; q++) dup |= free_t[q] == t;
      if (!dup) free_t[n_free++] = t;
    }
    int out = n->out[0];
    if (gr->nodes[s] == gr->root) ins[1] = FT_EW_OUT;
    else {
      int t;
      if (n_free) t = free_t[--n_free];
      else if (used_t < FT_EW_MAXT) t = pr->n_in + used_t++;
      else { ok = 0; break; }
      reg[out] = t;
      ins[1] = t;
    }
  }
  pr->n_instr = gr->n;
  pr->n_temps = used_t;
  free(reg);
  free(last);
  return ok;
}

/* A producer that may join: fusable, shaped like the root, every reader already inside. */
static int may_join(ft_fuse_ctx *c, const group *gr, int v, int p) {
  const ft_graph *g = c->g;
  const char *why;
  if (!evaluable(g, p, &why)) return 0;
  if (!same_shape(&g->vals[v].t, gr->shape)) return 0;
  int readers = 0;
  for (int k = 0; k < gr->n; k++) {
    const ft_node *n = &g->nodes[gr->nodes[k]];
    for (int j = 0; j < n->n_in; j++) readers += n->in[j] == v;
  }
  return readers == c->n_uses[v];
}

static void add_sorted(group *gr, int i) {
  int k = gr->n++;
  while (k > 0 && gr->nodes[k - 1] > i) { gr->nodes[k] = gr->nodes[k - 1]; k--; }
  gr->nodes[k] = i;
}

static void remove_node(group *gr, int i) {
  int k = 0;
  while (gr->nodes[k] != i) k++;
  for (; k + 1 < gr->n; k++) gr->nodes[k] = gr->nodes[k + 1];
  gr->n--;
}

static void grow(ft_fuse_ctx *c, group *gr, const char *assigned) {
  const ft_graph *g = c->g;
  program pr;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int k = 0; k < gr->n && !changed; k++) {
      const ft_node *n = &g->nodes[gr->nodes[k]];
      for (int j = 0; j < n->n_in && !changed; j++) {
        int v = n->in[j], p = ft_producer(g, v);
        if (p < 0 || assigned[p] || in_group(gr, p) || !may_join(c, gr, v, p)) continue;
        if (gr->n == FT_EW_MAXI) {
          ft_fuse_note(c, gr->root, "elementwise group stops at %d ops", FT_EW_MAXI);
          return;
        }
        add_sorted(gr, p);
        if (!compile(g, gr, &pr)) { /* too many inputs or live temporaries */
          remove_node(gr, p);
          ft_fuse_note(c, p, "left out of the elementwise group at %s: the kernel's limits (%d inputs, %d temporaries)",
                       ft_node_label(g, gr->root), FT_EW_MAXIN, FT_EW_MAXT);
          continue;
        }
        changed = 1;
      }
    }
  }
}

/* Near-misses worth reporting: an activation right after an op whose own pass should fuse it. */
static void note_epilogue_miss(ft_fuse_ctx *c, int i) {
  const ft_graph *g = c->g;
  const ft_node *n = &g->nodes[i];
  if (n->n_in < 1 || n->in[0] < 0) return;
  int p = ft_producer(g, n->in[0]);
  if (p >= 0 && ft_op_pattern(ft_op_find(g->nodes[p].domain, g->nodes[p].op_type)) == FT_PAT_OUT_FUSABLE)
    ft_fuse_note(c, i, "alone after %s (%d readers of its output); its epilogue pass did not take it",
                 ft_node_label(g, p), c->n_uses[n->in[0]]);
}

int ft_fuse_elementwise(ft_fuse_ctx *c) {
  ft_graph *g = c->g;
  char *assigned = calloc((size_t)g->n_nodes + 1, 1);
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    const char *why;
    if (assigned[i] || g->nodes[i].dead) continue;
    if (!evaluable(g, i, &why)) {
      if (why) ft_fuse_note(c, i, "not fused: %s", why);
      continue;
    }
    group gr = {{0}, 0, i, &g->vals[g->nodes[i].out[0]].t};
    gr.nodes[gr.n++] = i;
    assigned[i] = 1;
    grow(c, &gr, assigned);
    for (int k = 0; k < gr.n; k++) assigned[gr.nodes[k]] = 1;
    if (gr.n < 2) {
      note_epilogue_miss(c, i);
      continue;
    }
    program pr;
    if (!compile(g, &gr, &pr)) continue;
    int64_t shape[FT_MAX_RANK];
    for (int d = 0; d < gr.shape->rank; d++) shape[d] = gr.shape->dims[d];
    int rank = gr.shape->rank;
    ft_node *n = ft_fuse_rewrite(c, i, "Elementwise", pr.ins, pr.n_in, gr.nodes, gr.n);
    ft_node_set_ints(n, "program", pr.code, 5 * pr.n_instr);
    ft_node_set_int(n, "temps", pr.n_temps);
    ft_node_set_ints(n, "shape", shape, rank);
  }
  free(assigned);
  return 0;
}
