#include "ir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

size_t ft_max_tensor_bytes = FT_MAX_TENSOR_BYTES_DEFAULT;

int ft_fail(ft_err *e, int code, const char *fmt, ...) {
  if (e && e->code == 0) { /* the first failure is the one worth reporting */
    char raw[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    ft_text_escape(e->msg, sizeof e->msg, raw);
    e->code = code;
  }
  return code;
}

static char *dupstr(const char *s) { return s ? strdup(s) : NULL; }

ft_graph *ft_graph_new(void) {
  ft_graph *g = calloc(1, sizeof *g);
  g->opset = 1;
  return g;
}

void ft_tensor_free_data(ft_tensor *t) {
  free(t->data);
  t->data = NULL;
}

int ft_tensor_clone(ft_tensor *dst, const ft_tensor *src) {
  *dst = *src;
  dst->data = NULL;
  if (src->data) {
    size_t n = ft_nbytes(src);
    dst->data = malloc(n ? n : 1);
    if (!dst->data) return -1;
    memcpy(dst->data, src->data, n);
  }
  return 0;
}

void ft_attr_free(ft_attr *a) {
  free(a->name);
  free(a->s);
  free(a->ints);
  free(a->floats);
  for (int i = 0; i < a->n_strings; i++) free(a->strings[i]);
  free(a->strings);
  if (a->t) { ft_tensor_free_data(a->t); free(a->t); }
  ft_graph_free(a->g);
  memset(a, 0, sizeof *a);
}

void ft_attr_copy(ft_attr *d, const ft_attr *s) {
  *d = *s;
  d->name = dupstr(s->name);
  if (s->s) { d->s = malloc(s->s_len + 1); memcpy(d->s, s->s, s->s_len + 1); }
  if (s->ints) { d->ints = malloc(sizeof(int64_t) * (s->n_ints ? s->n_ints : 1)); memcpy(d->ints, s->ints, sizeof(int64_t) * s->n_ints); }
  if (s->floats) { d->floats = malloc(sizeof(float) * (s->n_floats ? s->n_floats : 1)); memcpy(d->floats, s->floats, sizeof(float) * s->n_floats); }
  if (s->strings) {
    d->strings = malloc(sizeof(char *) * (s->n_strings ? s->n_strings : 1));
    for (int i = 0; i < s->n_strings; i++) d->strings[i] = dupstr(s->strings[i]);
  }
  if (s->t) { d->t = malloc(sizeof *d->t); ft_tensor_clone(d->t, s->t); }
  if (s->g) d->g = ft_graph_clone(s->g);
}

static int *dup_ints(const int *a, int n) {
  int *d = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (n) memcpy(d, a, sizeof(int) * (size_t)n);
  return d;
}

static void clone_node(ft_node *d, const ft_node *s) {
  *d = *s;
  d->name = dupstr(s->name);
  d->op_type = dupstr(s->op_type);
  d->domain = dupstr(s->domain);
  d->in = dup_ints(s->in, s->n_in);
  d->out = dup_ints(s->out, s->n_out);
  d->outer = s->n_outer ? dup_ints(s->outer, s->n_outer) : NULL;
  d->guard = s->n_guard ? dup_ints(s->guard, s->n_guard) : NULL;
  d->attrs = malloc(sizeof(ft_attr) * (size_t)(s->n_attrs ? s->n_attrs : 1));
  for (int k = 0; k < s->n_attrs; k++) ft_attr_copy(&d->attrs[k], &s->attrs[k]);
}

static void name_index_build(ft_graph *g, int n_vals);

ft_graph *ft_graph_clone(const ft_graph *g) {
  ft_graph *c = calloc(1, sizeof *c);
  *c = *g;
  c->path = dupstr(g->path);
  c->name = dupstr(g->name);
  c->vals = malloc(sizeof(ft_value) * (size_t)(g->cap_vals ? g->cap_vals : 1));
  for (int i = 0; i < g->n_vals; i++) {
    ft_value *v = &c->vals[i];
    *v = g->vals[i];
    v->name = dupstr(g->vals[i].name);
    ft_tensor_clone(&v->t, &g->vals[i].t);
    for (int k = 0; k < FT_MAX_RANK; k++) v->sym[k] = dupstr(g->vals[i].sym[k]);
    v->seq = v->n_seq ? dup_ints(g->vals[i].seq, v->n_seq) : NULL;
  }
  c->nodes = malloc(sizeof(ft_node) * (size_t)(g->cap_nodes ? g->cap_nodes : 1));
  for (int i = 0; i < g->n_nodes; i++) clone_node(&c->nodes[i], &g->nodes[i]);
  c->inputs = dup_ints(g->inputs, g->n_inputs);
  c->outputs = dup_ints(g->outputs, g->n_outputs);
  c->defaults = g->defaults ? dup_ints(g->defaults, g->n_defaults) : NULL;
  c->default_at = g->default_at ? dup_ints(g->default_at, g->n_defaults) : NULL;
  c->name_slots = NULL;
  name_index_build(c, c->n_vals);
  return c;
}

int ft_value_is_outer(const ft_graph *sub, int v) {
  return sub->vals[v].kind == FT_V_ACT && sub->vals[v].producer < 0;
}

void ft_graph_free(ft_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_vals; i++) {
    free(g->vals[i].name);
    ft_tensor_free_data(&g->vals[i].t);
    for (int k = 0; k < FT_MAX_RANK; k++) free(g->vals[i].sym[k]);
    free(g->vals[i].seq);
  }
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    free(n->name); free(n->op_type); free(n->domain); free(n->in); free(n->out); free(n->outer); free(n->guard);
    for (int k = 0; k < n->n_attrs; k++) ft_attr_free(&n->attrs[k]);
    free(n->attrs);
  }
  free(g->vals); free(g->nodes); free(g->inputs); free(g->outputs); free(g->path); free(g->name);
  free(g->defaults); free(g->default_at);
  free(g->name_slots);
  free(g);
}

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* Index value v under its name; the first value of a name keeps it, as a scan would find it. */
static void name_put(ft_graph *g, int v) {
  const char *name = g->vals[v].name;
  if (!name) return;
  uint32_t mask = (uint32_t)g->name_cap - 1, at = name_hash(name) & mask;
  for (;; at = (at + 1) & mask) {
    int j = g->name_slots[at] - 1;
    if (j < 0) { g->name_slots[at] = v + 1; return; }
    if (!strcmp(g->vals[j].name, name)) {
      if (v < j) g->name_slots[at] = v + 1;
      return;
    }
  }
}

/* A table of at least twice the values, filled again from them. */
static void name_index_build(ft_graph *g, int n_vals) {
  int cap = 64;
  while (cap < 2 * n_vals) cap *= 2;
  free(g->name_slots);
  g->name_slots = calloc((size_t)cap, sizeof(int));
  g->name_cap = cap;
  for (int v = 0; v < n_vals; v++) name_put(g, v);
}

int ft_value_find(const ft_graph *g, const char *name) {
  if (!g->name_slots) {
    for (int i = 0; i < g->n_vals; i++)
      if (g->vals[i].name && strcmp(g->vals[i].name, name) == 0) return i;
    return -1;
  }
  uint32_t mask = (uint32_t)g->name_cap - 1, at = name_hash(name) & mask;
  for (;; at = (at + 1) & mask) {
    int j = g->name_slots[at] - 1;
    if (j < 0) return -1;
    if (!strcmp(g->vals[j].name, name)) return j;
  }
}

int ft_value_add(ft_graph *g, const char *name) {
  if (g->n_vals == g->cap_vals) {
    g->cap_vals = g->cap_vals ? g->cap_vals * 2 : 64;
    g->vals = realloc(g->vals, sizeof *g->vals * g->cap_vals);
  }
  ft_value *v = &g->vals[g->n_vals];
  memset(v, 0, sizeof *v);
  v->name = dupstr(name);
  v->producer = -1;
  v->t.rank = -1; /* unknown until inferred */
  v->declared_rank = -1;
  if (2 * (g->n_vals + 1) > g->name_cap) name_index_build(g, g->n_vals + 1);
  else name_put(g, g->n_vals);
  return g->n_vals++;
}

void ft_value_rename(ft_graph *g, int v, const char *name) {
  free(g->vals[v].name);
  g->vals[v].name = dupstr(name);
  name_index_build(g, g->n_vals); /* the old name may now belong to another value: rare, so rebuild */
}

void ft_rename_outer_all(ft_graph *s, int n, const char *const *from, const char *const *to) {
  /* the pairs s does not shadow (f[j] -> t[j]) and the values of s they rename (vals[j]): all
   * looked up before any rename, so no pair's new name is taken for another pair's old one */
  int *vals = malloc(sizeof(int) * (size_t)(n ? n : 1)), m = 0;
  const char **f = malloc(sizeof(char *) * (size_t)(2 * n + 1)), **t = f + n;
  if (!vals || !f) abort(); /* a few words, like the names ft_value_rename copies */
  for (int k = 0; k < n; k++) {
    int v = ft_value_find(s, from[k]);
    if (v >= 0 && !ft_value_is_outer(s, v)) continue; /* s defines from[k] itself: below, that is what it names */
    vals[m] = v;
    f[m] = from[k];
    t[m++] = to[k];
  }
  for (int j = 0; j < m; j++)
    if (vals[j] >= 0) ft_value_rename(s, vals[j], t[j]);
  for (int i = 0; i < s->n_nodes && m; i++)
    for (int a = 0; a < s->nodes[i].n_attrs; a++)
      if (s->nodes[i].attrs[a].g) ft_rename_outer_all(s->nodes[i].attrs[a].g, m, f, t);
  free(vals);
  free(f);
}

void ft_rename_outer(ft_graph *s, const char *from, const char *to) { ft_rename_outer_all(s, 1, &from, &to); }

int ft_value_get(ft_graph *g, const char *name) {
  int i = ft_value_find(g, name);
  return i >= 0 ? i : ft_value_add(g, name);
}

ft_node *ft_node_add(ft_graph *g, const char *name, const char *op_type, const char *domain,
                     int n_in, int n_out) {
  if (g->n_nodes == g->cap_nodes) {
    g->cap_nodes = g->cap_nodes ? g->cap_nodes * 2 : 64;
    g->nodes = realloc(g->nodes, sizeof *g->nodes * g->cap_nodes);
  }
  ft_node *n = &g->nodes[g->n_nodes++];
  memset(n, 0, sizeof *n);
  n->name = dupstr(name ? name : "");
  n->op_type = dupstr(op_type);
  n->domain = dupstr(domain ? domain : "");
  n->n_in = n_in;
  n->n_out = n_out;
  n->in = malloc(sizeof(int) * (n_in ? n_in : 1));
  n->out = malloc(sizeof(int) * (n_out ? n_out : 1));
  for (int i = 0; i < n_in; i++) n->in[i] = -1;
  for (int i = 0; i < n_out; i++) n->out[i] = -1;
  return n;
}

const ft_attr *ft_attr_find(const ft_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

int64_t ft_attr_int(const ft_node *n, const char *name, int64_t dflt) {
  const ft_attr *a = ft_attr_find(n, name);
  return a ? a->i : dflt;
}

int ft_attr_int_in(const ft_node *n, const char *name, int64_t dflt, int64_t lo, int64_t hi, int64_t *out) {
  *out = ft_attr_int(n, name, dflt);
  return *out < lo || *out > hi ? -1 : 0;
}

float ft_attr_float(const ft_node *n, const char *name, float dflt) {
  const ft_attr *a = ft_attr_find(n, name);
  return a ? (a->type == FT_ATTR_INT ? (float)a->i : a->f) : dflt;
}

const char *ft_attr_str(const ft_node *n, const char *name, const char *dflt) {
  const ft_attr *a = ft_attr_find(n, name);
  return a && a->s ? a->s : dflt;
}

int ft_attr_ints(const ft_node *n, const char *name, const int64_t **v) {
  const ft_attr *a = ft_attr_find(n, name);
  if (!a) return -1;
  *v = a->ints;
  return a->n_ints;
}

void ft_shape_str(const ft_value *v, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  if (v->t.rank < 0) { snprintf(buf, n, "?"); return; }
  if (v->t.rank == 0) { snprintf(buf, n, "scalar"); return; }
  for (int i = 0; i < v->t.rank && k < n; i++) {
    if (v->t.dims[i] >= 0) k += snprintf(buf + k, n - k, "%s%lld", i ? "x" : "", (long long)v->t.dims[i]);
    else k += snprintf(buf + k, n - k, "%s%s", i ? "x" : "", v->sym[i] ? v->sym[i] : "?");
  }
}

const char *ft_node_label(const ft_graph *g, int node) {
  static char buf[512];
  const ft_node *n = &g->nodes[node];
  if (n->name && n->name[0]) snprintf(buf, sizeof buf, "node '%s' (%s)", n->name, n->op_type);
  else snprintf(buf, sizeof buf, "node #%d (%s)", node, n->op_type);
  return buf;
}

int ft_graph_count_live(const ft_graph *g) {
  int c = 0;
  for (int i = 0; i < g->n_nodes; i++) c += !g->nodes[i].dead;
  return c;
}

/* Names and op types come from the model: escaped like every other path that prints them. */
void ft_graph_dump(const ft_graph *g, void *file) {
  FILE *f = file;
  char s[256], esc[1024], esc_s[1024];
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *n = &g->nodes[i];
    if (n->dead) continue;
    fprintf(f, "%4d %-20s", i, ft_text_escape(esc, sizeof esc, n->op_type));
    for (int k = 0; k < n->n_out; k++) {
      if (n->out[k] < 0) continue;
      ft_shape_str(&g->vals[n->out[k]], s, sizeof s);
      fprintf(f, " %s:%s[%s]", ft_text_escape(esc, sizeof esc, g->vals[n->out[k]].name),
              ft_dtype_name(g->vals[n->out[k]].t.dtype), ft_text_escape(esc_s, sizeof esc_s, s)); /* symbols too */
    }
    fprintf(f, " <-");
    for (int k = 0; k < n->n_in; k++)
      fprintf(f, " %s", n->in[k] >= 0 ? ft_text_escape(esc, sizeof esc, g->vals[n->in[k]].name) : "-");
    fprintf(f, "\n");
  }
}
