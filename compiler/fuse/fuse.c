/* Stage: fusion. Runs each pattern pass in the order of the table below (larger patterns that
 * contain smaller ones go first), then reports matches and near-misses. */
#include "fuse.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Patterns, in order. Each lives in its own file, compiler/fuse/fuse_<name>.c. */
int ft_fuse_qdq(ft_fuse_ctx *c);
int ft_fuse_attention(ft_fuse_ctx *c);
int ft_fuse_embed_layernorm(ft_fuse_ctx *c);
int ft_fuse_layernorm(ft_fuse_ctx *c);
int ft_fuse_skip_layernorm(ft_fuse_ctx *c);
int ft_fuse_gelu(ft_fuse_ctx *c);
int ft_fuse_gemm_epilogue(ft_fuse_ctx *c);
int ft_fuse_qdq_out(ft_fuse_ctx *c);
int ft_fuse_conv_bn(ft_fuse_ctx *c);
int ft_fuse_conv_epilogue(ft_fuse_ctx *c);
int ft_fuse_elementwise(ft_fuse_ctx *c);

static const ft_fuse_pass passes[] = {
    {"qdq", ft_fuse_qdq}, /* first: the float passes would take its Conv and Relu */
    {"attention", ft_fuse_attention},
    {"embed_layernorm", ft_fuse_embed_layernorm},
    {"layernorm", ft_fuse_layernorm},
    {"skip_layernorm", ft_fuse_skip_layernorm},
    {"gelu", ft_fuse_gelu},
    {"gemm_epilogue", ft_fuse_gemm_epilogue},
    {"qdq_out", ft_fuse_qdq_out}, /* after gemm_epilogue: the QDQ convs have their activation */
    {"conv_bn", ft_fuse_conv_bn},
    {"conv_epilogue", ft_fuse_conv_epilogue},
    {"elementwise", ft_fuse_elementwise}, /* last: it takes whatever elementwise chains are left */
    {0, 0},
};

const char *ft_fuse_pass_names(void) {
  static char buf[512];
  size_t m = 0;
  buf[0] = 0;
  for (const ft_fuse_pass *p = passes; p->name; p++) m += snprintf(buf + m, sizeof buf - m, "%s%s", m ? "," : "", p->name);
  return buf;
}

static int disabled(const ft_fuse_opts *o, const char *name) {
  if (o->all_off) return 1;
  if (!o->disabled) return 0;
  size_t n = strlen(name);
  for (const char *s = o->disabled; *s;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == n && !strncmp(s, name, n)) return 1;
    if (!e) break;
    s = e + 1;
  }
  return 0;
}

/* Per value: read by a live node input or a graph output, plus one if any guard tests it
 * (`tested`, of guard_reads below). A pattern only asks whether a value has exactly the uses it
 * sees, so one count for all the guards that test a condition keeps it from being fused away as
 * well as one a guard would; counting each guard entry made every region's count cost the sum of
 * the guards' lengths (a Loop unrolled with a run-time condition: guards as long as its
 * iterations, and as many regions). */
static void count_uses(ft_graph *g, int *n_uses, const unsigned char *tested, int n_tested) {
  memset(n_uses, 0, sizeof(int) * (size_t)g->n_vals);
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->n_in; k++) if (n->in[k] >= 0) n_uses[n->in[k]]++;
  }
  for (int v = 0; v < n_tested && v < g->n_vals; v++) n_uses[v] += tested[v];
  for (int i = 0; i < g->n_outputs; i++) n_uses[g->outputs[i]]++;
}

/* The values some live node's guard tests (1 each), over the first n_vals values. NULL: out of
 * memory. The passes add nodes only with guards copied from the nodes they replace. */
static unsigned char *guard_reads(const ft_graph *g) {
  unsigned char *t = calloc((size_t)g->n_vals + 1, 1);
  for (int i = 0; t && i < g->n_nodes; i++)
    if (!g->nodes[i].dead)
      for (int k = 0; k < g->nodes[i].n_guard; k++) t[ft_guard_value(g->nodes[i].guard[k])] = 1;
  return t;
}

static int same_guard(const ft_node *a, const ft_node *b) {
  return a->n_guard == b->n_guard && (!a->n_guard || !memcmp(a->guard, b->guard, sizeof(int) * (size_t)a->n_guard));
}

static uint64_t guard_hash(const ft_node *n) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)n->n_guard;
  for (int k = 0; k < n->n_guard; k++) h = (h ^ (uint32_t)n->guard[k]) * 1099511628211ull;
  return h;
}

/* region[i] = the first live node with node i's guard (-1: dead), through a hash table: linear
 * in the nodes and their guards, where comparing each node with those before it was quadratic.
 * 0, or -1 out of memory. */
static int find_regions(const ft_graph *g, int *region) {
  size_t cap = 16;
  while (cap < 2 * (size_t)g->n_nodes) cap *= 2;
  int *slot = malloc(sizeof(int) * cap);
  uint64_t *hash = malloc(sizeof(uint64_t) * ((size_t)g->n_nodes + 1));
  if (!slot || !hash) { free(slot); free(hash); return -1; }
  for (size_t k = 0; k < cap; k++) slot[k] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    region[i] = -1;
    if (g->nodes[i].dead) continue;
    hash[i] = guard_hash(&g->nodes[i]);
    for (size_t k = hash[i] & (cap - 1);; k = (k + 1) & (cap - 1)) {
      int f = slot[k];
      if (f < 0) { slot[k] = region[i] = i; break; }
      if (hash[f] == hash[i] && same_guard(&g->nodes[f], &g->nodes[i])) { region[i] = f; break; }
    }
  }
  free(slot);
  free(hash);
  return 0;
}

/* Run pass p on each region of the graph by itself: the nodes outside an If's branches, then
 * each branch's (ft_node.guard). The nodes of other regions are hidden (dead = 2) while it runs,
 * so no pattern takes nodes from both sides of an `if`; uses are counted over all of them. Nodes
 * a pass adds carry the guard of the nodes they replace. */
static int run_by_region(ft_fuse_ctx *c, const ft_fuse_pass *p) {
  ft_graph *g = c->g;
  const int n0 = g->n_nodes;
  int *region = malloc(sizeof(int) * ((size_t)n0 + 1));
  unsigned char *tested = guard_reads(g);
  int n_tested = g->n_vals, rc = 0;
  if (!region || !tested || find_regions(g, region)) {
    free(region);
    free(tested);
    return ft_fail(c->err, FT_EIO, "out of memory");
  }
  for (int r = 0; r < n0 && !rc; r++) {
    if (region[r] != r) continue; /* dead, or its region was done with its first node */
    c->n_uses = realloc(c->n_uses, sizeof(int) * (size_t)(g->n_vals + 1));
    if (!c->n_uses) { rc = ft_fail(c->err, FT_EIO, "out of memory"); break; }
    count_uses(g, c->n_uses, tested, n_tested);
    int hidden = 0;
    for (int j = 0; j < g->n_nodes; j++) {
      ft_node *x = &g->nodes[j];
      if (x->dead) continue;
      if (j < n0 ? region[j] != r : !same_guard(x, &g->nodes[r])) x->dead = 2, hidden++;
    }
    rc = p->run(c);
    for (int j = 0; j < g->n_nodes && hidden; j++)
      if (g->nodes[j].dead == 2) g->nodes[j].dead = 0;
    if (!hidden) break; /* one region: the whole graph */
  }
  free(region);
  free(tested);
  return rc;
}

int ft_fuse(ft_graph *g, const ft_fuse_opts *o, ft_err *e) {
  /* every --no-fuse name must be a pass: a typo must not silently leave a pass on */
  if (o->disabled) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", o->disabled);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
      int known = 0;
      for (const ft_fuse_pass *p = passes; p->name; p++) known |= !strcmp(p->name, t);
      if (!known) return ft_fail(e, FT_EUSAGE, "--no-fuse=%s: no fusion named '%s' (passes: %s)", o->disabled, t, ft_fuse_pass_names());
    }
  }
  ft_fuse_ctx c = {0};
  c.g = g;
  c.err = e;
  for (const ft_fuse_pass *p = passes; p->name; p++) {
    if (disabled(o, p->name)) {
      if (o->report) fprintf(o->report, "  fuse %-14s off\n", p->name);
      continue;
    }
    c.matches = 0;
    c.n_notes = 0;
    int rc = run_by_region(&c, p);
    if (rc) { free(c.n_uses); return rc; }
    if (o->report) {
      fprintf(o->report, "  fuse %-14s %4d match%s\n", p->name, c.matches, c.matches == 1 ? "" : "es");
      for (int i = 0; i < c.n_notes; i++) fprintf(o->report, "       near-miss: %s\n", c.notes[i]);
    }
  }
  free(c.n_uses);
  return 0;
}

/* ---- helpers ------------------------------------------------------------------------------ */

int ft_producer(const ft_graph *g, int v) {
  if (v < 0) return -1;
  int p = g->vals[v].producer;
  return p >= 0 && !g->nodes[p].dead ? p : -1;
}

int ft_is_op(const ft_graph *g, int i, const char *op_type) {
  return i >= 0 && !g->nodes[i].dead && !g->nodes[i].domain[0] && !strcmp(g->nodes[i].op_type, op_type);
}

int ft_consumers(const ft_graph *g, int v, int *out, int max) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *nd = &g->nodes[i];
    if (nd->dead) continue;
    for (int k = 0; k < nd->n_in; k++)
      if (nd->in[k] == v) {
        if (n < max) out[n] = i;
        n++;
        break;
      }
  }
  return n;
}

int ft_const_scalar(const ft_graph *g, int v, double *x) {
  if (v < 0) return 0;
  const ft_value *val = &g->vals[v];
  if (!val->t.data || ft_numel(&val->t) != 1) return 0;
  *x = ft_const_real(&val->t, 0);
  return 1;
}

int ft_const_is(const ft_graph *g, int v, double want, double tol) {
  double x;
  return ft_const_scalar(g, v, &x) && x - want <= tol && want - x <= tol;
}

void ft_fuse_note(ft_fuse_ctx *c, int node, const char *fmt, ...) {
  if (c->n_notes >= FT_FUSE_MAX_NOTES) return;
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(c->notes[c->n_notes++], sizeof c->notes[0], "%s: %s", ft_node_label(c->g, node), msg);
}

ft_node *ft_fuse_rewrite(ft_fuse_ctx *c, int last, const char *op_type, const int *ins, int n_in,
                         const int *dead, int n_dead) {
  ft_graph *g = c->g;
  for (int k = 0; k < n_dead; k++) {
    ft_node *d = &g->nodes[dead[k]];
    if (dead[k] == last || d->dead) continue;
    for (int j = 0; j < d->n_in; j++) if (d->in[j] >= 0) c->n_uses[d->in[j]]--;
    d->dead = 1;
  }
  ft_node *n = &g->nodes[last];
  for (int j = 0; j < n->n_in; j++) if (n->in[j] >= 0) c->n_uses[n->in[j]]--;
  for (int k = 0; k < n->n_attrs; k++) ft_attr_free(&n->attrs[k]);
  n->n_attrs = 0;
  free(n->op_type);
  free(n->domain);
  n->op_type = strdup(op_type);
  n->domain = strdup("ftax");
  free(n->in);
  n->in = malloc(sizeof(int) * (size_t)(n_in ? n_in : 1));
  n->n_in = n_in;
  for (int j = 0; j < n_in; j++) {
    n->in[j] = ins[j];
    if (ins[j] >= 0) c->n_uses[ins[j]]++;
  }
  n->op = ft_op_find("ftax", op_type);
  c->matches++;
  return n;
}

static ft_attr *new_attr(ft_node *n, const char *name, int type) {
  n->attrs = realloc(n->attrs, sizeof(ft_attr) * (size_t)(n->n_attrs + 1));
  ft_attr *a = &n->attrs[n->n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = strdup(name);
  a->type = type;
  return a;
}

void ft_node_set_int(ft_node *n, const char *name, int64_t v) { new_attr(n, name, FT_ATTR_INT)->i = v; }
void ft_node_set_float(ft_node *n, const char *name, float v) { new_attr(n, name, FT_ATTR_FLOAT)->f = v; }

void ft_node_set_ints(ft_node *n, const char *name, const int64_t *v, int count) {
  ft_attr *a = new_attr(n, name, FT_ATTR_INTS);
  a->ints = malloc(sizeof(int64_t) * (size_t)(count ? count : 1));
  memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
  a->n_ints = count;
}

void ft_node_set_floats(ft_node *n, const char *name, const float *v, int count) {
  ft_attr *a = new_attr(n, name, FT_ATTR_FLOATS);
  a->floats = malloc(sizeof(float) * (size_t)(count ? count : 1));
  memcpy(a->floats, v, sizeof(float) * (size_t)count);
  a->n_floats = count;
}

void ft_node_set_string(ft_node *n, const char *name, const char *s) {
  ft_attr *a = new_attr(n, name, FT_ATTR_STRING);
  a->s = strdup(s);
  a->s_len = strlen(s);
}

int ft_add_const(ft_graph *g, const char *name, const ft_tensor *t) {
  int v = ft_value_add(g, name);
  ft_value *val = &g->vals[v];
  ft_tensor_clone(&val->t, t);
  val->kind = FT_V_CONST;
  val->shape_known = 1;
  return v;
}
