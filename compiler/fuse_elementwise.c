/* Fusion pass elementwise: connected groups of float32 elementwise ops become one
 * ftax.Elementwise (compiler/ops/fused_elementwise.c), whose kernel (templates/c/elementwise.h)
 * evaluates the whole group a chunk at a time, so memory is read and written once instead of
 * once per op.
 *
 * Ops are classified by fusion pattern, as TVM does, instead of writing a pass per combination:
 *   elementwise     one output element from the same element of one input (Relu, Exp, Clip...)
 *   broadcast       the same from several inputs under numpy broadcasting (Add, Mul, PRelu...)
 *   injective       moves elements (Reshape, Transpose, Slice, Concat...)
 *   reduction       combines elements (ReduceMean, Softmax, pools...)
 *   out-fusable     a complex op whose output takes an elementwise epilogue (Conv, MatMul, Gemm)
 * Elementwise and broadcast ops with an opcode in the kernel group; the others bound the groups
 * (an out-fusable producer is named in a near-miss: its own epilogue pass should have taken the
 * op that follows it).
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

enum { PAT_OPAQUE = 0, PAT_ELEMWISE, PAT_BROADCAST, PAT_INJECTIVE, PAT_REDUCTION, PAT_OUT_FUSABLE };

/* kind: how the kernel takes the op. U unary, UI unary with attributes as immediates (from the
 * attributes named, or from Clip's inputs), B binary. */
enum { K_NONE = 0, K_U, K_UI, K_B };

static const struct opclass {
  const char *op;
  int pattern, kind, code;
  const char *attr[2];
  float dflt[2];
} classes[] = {
    {"Relu", PAT_ELEMWISE, K_U, FT_EW_RELU, {0}, {0}},
    {"Sigmoid", PAT_ELEMWISE, K_U, FT_EW_SIGMOID, {0}, {0}},
    {"Tanh", PAT_ELEMWISE, K_U, FT_EW_TANH, {0}, {0}},
    {"Exp", PAT_ELEMWISE, K_U, FT_EW_EXP, {0}, {0}},
    {"Log", PAT_ELEMWISE, K_U, FT_EW_LOG, {0}, {0}},
    {"Sqrt", PAT_ELEMWISE, K_U, FT_EW_SQRT, {0}, {0}},
    {"Reciprocal", PAT_ELEMWISE, K_U, FT_EW_RECIP, {0}, {0}},
    {"Neg", PAT_ELEMWISE, K_U, FT_EW_NEG, {0}, {0}},
    {"Abs", PAT_ELEMWISE, K_U, FT_EW_ABS, {0}, {0}},
    {"Erf", PAT_ELEMWISE, K_U, FT_EW_ERF, {0}, {0}},
    {"Floor", PAT_ELEMWISE, K_U, FT_EW_FLOOR, {0}, {0}},
    {"Ceil", PAT_ELEMWISE, K_U, FT_EW_CEIL, {0}, {0}},
    {"Round", PAT_ELEMWISE, K_U, FT_EW_ROUND, {0}, {0}},
    {"Softplus", PAT_ELEMWISE, K_U, FT_EW_SOFTPLUS, {0}, {0}},
    {"Softsign", PAT_ELEMWISE, K_U, FT_EW_SOFTSIGN, {0}, {0}},
    {"Mish", PAT_ELEMWISE, K_U, FT_EW_MISH, {0}, {0}},
    {"Gelu", PAT_ELEMWISE, K_U, FT_EW_GELU, {0}, {0}}, /* approximate="tanh": FT_EW_GELU_TANH */
    {"HardSwish", PAT_ELEMWISE, K_U, FT_EW_HARDSWISH, {0}, {0}},
    {"Sin", PAT_ELEMWISE, K_U, FT_EW_SIN, {0}, {0}},
    {"Cos", PAT_ELEMWISE, K_U, FT_EW_COS, {0}, {0}},
    {"Sign", PAT_ELEMWISE, K_U, FT_EW_SIGN, {0}, {0}},
    {"Identity", PAT_ELEMWISE, K_U, FT_EW_COPY, {0}, {0}},
    {"Clip", PAT_ELEMWISE, K_UI, FT_EW_CLIP, {0}, {0}},
    {"LeakyRelu", PAT_ELEMWISE, K_UI, FT_EW_LEAKY, {"alpha"}, {0.01f}},
    {"Elu", PAT_ELEMWISE, K_UI, FT_EW_ELU, {"alpha"}, {1.0f}},
    {"HardSigmoid", PAT_ELEMWISE, K_UI, FT_EW_HARDSIGMOID, {"alpha", "beta"}, {0.2f, 0.5f}},
    {"Swish", PAT_ELEMWISE, K_UI, FT_EW_SWISH, {"alpha"}, {1.0f}},
    {"ThresholdedRelu", PAT_ELEMWISE, K_UI, FT_EW_THRELU, {"alpha"}, {1.0f}},
    {"Celu", PAT_ELEMWISE, K_UI, FT_EW_CELU, {"alpha"}, {1.0f}},
    {"Selu", PAT_ELEMWISE, K_UI, FT_EW_SELU, {"alpha", "gamma"}, {1.67326319217681884765625f, 1.05070102214813232421875f}},
    {"Shrink", PAT_ELEMWISE, K_UI, FT_EW_SHRINK, {"lambd", "bias"}, {0.5f, 0.0f}},
    {"Add", PAT_BROADCAST, K_B, FT_EW_ADD, {0}, {0}},
    {"Sub", PAT_BROADCAST, K_B, FT_EW_SUB, {0}, {0}},
    {"Mul", PAT_BROADCAST, K_B, FT_EW_MUL, {0}, {0}},
    {"Div", PAT_BROADCAST, K_B, FT_EW_DIV, {0}, {0}},
    {"Pow", PAT_BROADCAST, K_B, FT_EW_POW, {0}, {0}},
    {"Max", PAT_BROADCAST, K_B, FT_EW_MAX, {0}, {0}}, /* with two inputs */
    {"Min", PAT_BROADCAST, K_B, FT_EW_MIN, {0}, {0}},
    {"PRelu", PAT_BROADCAST, K_B, FT_EW_PRELU, {0}, {0}},
    /* the rest bound groups */
    {"Where", PAT_BROADCAST, K_NONE, 0, {0}, {0}},
    {"Cast", PAT_ELEMWISE, K_NONE, 0, {0}, {0}},
    {"Reshape", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Flatten", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Squeeze", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Unsqueeze", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Transpose", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Slice", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Gather", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Concat", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Split", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"Expand", PAT_INJECTIVE, K_NONE, 0, {0}, {0}},
    {"ReduceMean", PAT_REDUCTION, K_NONE, 0, {0}, {0}},
    {"ReduceSum", PAT_REDUCTION, K_NONE, 0, {0}, {0}},
    {"Softmax", PAT_REDUCTION, K_NONE, 0, {0}, {0}},
    {"GlobalAveragePool", PAT_REDUCTION, K_NONE, 0, {0}, {0}},
    {"MaxPool", PAT_REDUCTION, K_NONE, 0, {0}, {0}},
    {"AveragePool", PAT_REDUCTION, K_NONE, 0, {0}, {0}},
    {"Conv", PAT_OUT_FUSABLE, K_NONE, 0, {0}, {0}},
    {"MatMul", PAT_OUT_FUSABLE, K_NONE, 0, {0}, {0}},
    {"Gemm", PAT_OUT_FUSABLE, K_NONE, 0, {0}, {0}},
};

static const struct opclass *classify(const ft_graph *g, int i) {
  if (i < 0 || g->nodes[i].dead || g->nodes[i].domain[0]) return NULL;
  for (size_t k = 0; k < sizeof classes / sizeof classes[0]; k++)
    if (!strcmp(classes[k].op, g->nodes[i].op_type)) return &classes[k];
  return NULL;
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
  const struct opclass *k = classify(g, i);
  const ft_node *n = &g->nodes[i];
  *why = NULL;
  if (!k || !k->kind) return 0;
  if (n->n_out < 1 || n->out[0] < 0 || g->vals[n->out[0]].t.dtype != FT_FLOAT) return 0;
  for (int j = 1; j < n->n_out; j++)
    if (n->out[j] >= 0) return 0;
  int is_clip = !strcmp(k->op, "Clip");
  int max_in = k->kind == K_B ? 2 : is_clip ? 3 : 1, min_in = k->kind == K_B ? 2 : 1;
  if (n->n_in < min_in || n->n_in > max_in || n->in[0] < 0 || (k->kind == K_B && n->in[1] < 0)) {
    if (k->kind == K_B) *why = "not exactly two inputs";
    return 0;
  }
  for (int j = 0; j < n->n_in; j++) {
    if (n->in[j] < 0) continue;
    const ft_value *v = &g->vals[n->in[j]];
    int exponent = !strcmp(k->op, "Pow") && j == 1;
    if (v->t.dtype != FT_FLOAT && !(exponent && v->t.data && ft_numel(&v->t) == 1)) {
      *why = "an input is not float32";
      return 0;
    }
    if (is_clip && j > 0 && (!v->t.data || ft_numel(&v->t) != 1)) {
      *why = "Clip bounds are not constants";
      return 0;
    }
  }
  if (!strcmp(k->op, "PRelu") && g->opset < 7) return 0; /* a per-channel slope, not numpy broadcasting */
  if (!strcmp(k->op, "Gelu")) {
    const char *a = ft_attr_str(n, "approximate", "none");
    if (strcmp(a, "none") && strcmp(a, "tanh")) return 0;
  }
  return 1;
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
    const struct opclass *k = classify(g, gr->nodes[s]);
    int64_t *ins = pr->code + 5 * s;
    int64_t op = k->code;
    if (!strcmp(k->op, "Gelu") && !strcmp(ft_attr_str(n, "approximate", "none"), "tanh")) op = FT_EW_GELU_TANH;
    ins[0] = op;
    /* operands: a register, or a constant scalar as an immediate */
    for (int j = 0; j < (k->kind == K_B ? 2 : 1); j++) {
      int v = n->in[j];
      double x;
      if (reg[v] >= 0) ins[2 + j] = reg[v];
      else if (ft_const_scalar(g, v, &x)) ins[2 + j] = imm((float)x);
      else { ok = 0; break; }
    }
    if (k->kind == K_UI) {
      float b = k->attr[0] ? ft_attr_float(n, k->attr[0], k->dflt[0]) : 0;
      float c = k->attr[1] ? ft_attr_float(n, k->attr[1], k->dflt[1]) : 0;
      if (!strcmp(k->op, "Clip")) { /* missing bounds are infinite */
        double lo = -INFINITY, hi = INFINITY, x;
        if (g->opset < 11) {
          if (ft_attr_find(n, "min")) lo = ft_attr_float(n, "min", 0);
          if (ft_attr_find(n, "max")) hi = ft_attr_float(n, "max", 0);
        } else {
          if (n->n_in > 1 && n->in[1] >= 0) { if (!ft_const_scalar(g, n->in[1], &x)) ok = 0; lo = x; }
          if (n->n_in > 2 && n->in[2] >= 0) { if (!ft_const_scalar(g, n->in[2], &x)) ok = 0; hi = x; }
        }
        b = (float)lo;
        c = (float)hi;
      }
      ins[3] = imm(b);
      ins[4] = imm(c);
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
  const struct opclass *k = classify(g, p);
  if (k && k->pattern == PAT_OUT_FUSABLE)
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
      if (why && classify(g, i)) ft_fuse_note(c, i, "not fused: %s", why);
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
