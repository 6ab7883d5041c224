/* Stage: pin the symbolic dimensions of the graph inputs to the sizes given on the command line.
 * The compiled program serves exactly one shape, so nothing may stay symbolic. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tensorio.h"
#include "text.h"

static int parse_int(const char *s, int64_t *v) {
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (end == s || *end || x < 0 || errno == ERANGE) return -1;
  *v = x;
  return 0;
}

/* --bind NAME=FILE.pb: the input takes this fixed value and is no longer an input. */
static int bind_input(ft_graph *g, const char *spec, ft_err *e) {
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec || !eq[1]) return ft_fail(e, FT_EUSAGE, "--bind '%s': expected INPUT=FILE.pb", spec);
  int k = 0;
  while (k < g->n_inputs && (strlen(g->vals[g->inputs[k]].name) != (size_t)(eq - spec) ||
                             strncmp(g->vals[g->inputs[k]].name, spec, (size_t)(eq - spec))))
    k++;
  if (k == g->n_inputs) return ft_fail(e, FT_EUSAGE, "%s: --bind %s: the model has no input named '%.*s'", g->path, spec, (int)(eq - spec), spec);
  ft_value *v = &g->vals[g->inputs[k]];
  ft_pb_tensor t;
  const char *why;
  int rd = ft_pb_read_tensor(eq + 1, &t, &why);
  if (rd) return ft_fail(e, rd == FT_PB_EIO ? FT_EIO : FT_EINVALID, "%s: %s (for --bind)", eq + 1, why);
  if (!ft_pb_accept_dtype(&t.t, v->t.dtype) || (v->t.rank >= 0 && t.t.rank != v->t.rank)) {
    free(t.t.data);
    return ft_fail(e, FT_EINVALID, "%s: input '%s' is %s of rank %d; the file holds %s of rank %d", eq + 1, v->name,
                   ft_dtype_name(v->t.dtype), v->t.rank, ft_dtype_name(t.t.dtype), t.t.rank);
  }
  for (int d = 0; d < t.t.rank; d++) {
    if (v->t.rank >= 0 && v->t.dims[d] >= 0 && v->t.dims[d] != t.t.dims[d]) {
      free(t.t.data);
      return ft_fail(e, FT_EINVALID, "%s: input '%s' dimension %d is %lld; the file holds %lld", eq + 1, v->name, d,
                     (long long)v->t.dims[d], (long long)t.t.dims[d]);
    }
    free(v->sym[d]);
    v->sym[d] = NULL;
  }
  v->t = t.t;
  v->kind = FT_V_CONST;
  v->shape_known = 1;
  memmove(g->inputs + k, g->inputs + k + 1, sizeof(int) * (size_t)(g->n_inputs - k - 1));
  g->n_inputs--;
  return 0;
}

/* --keep-input NAME that names no default: say what NAME is instead. */
static int not_a_default(const ft_graph *g, const char *name, ft_err *e) {
  int v = ft_value_find(g, name);
  for (int k = 0; k < g->n_inputs; k++)
    if (g->inputs[k] == v)
      return ft_fail(e, FT_EUSAGE, "%s: --keep-input %s: input '%s' has no initializer; it is a run-time input already",
                     g->path, name, name);
  if (v >= 0 && g->vals[v].kind == FT_V_CONST)
    return ft_fail(e, FT_EUSAGE, "%s: --keep-input %s: '%s' is an initializer, not a graph input with a default (IR "
                   "version %lld%s)", g->path, name, name, (long long)g->ir_version,
                   g->ir_version < 4 ? ": before IR 4 every initializer is listed as an input, and is a weight" : "");
  return ft_fail(e, FT_EUSAGE, "%s: --keep-input %s: the model has no graph input named '%s'%s", g->path, name, name,
                 g->n_defaults ? "" : " (and no input with an initializer)");
}

int ft_keep_defaults(ft_graph *g, const ft_pins *pins, ft_err *e) {
  char *keep = calloc((size_t)g->n_defaults + 1, 1);
  if (!keep) return ft_fail(e, FT_EIO, "out of memory");
  for (int k = 0; k < pins->n_keep; k++) {
    int found = 0;
    for (int d = 0; d < g->n_defaults; d++)
      if (!strcmp(pins->keep[k], "all") || !strcmp(pins->keep[k], g->vals[g->defaults[d]].name)) keep[d] = found = 1;
    if (found) continue;
    free(keep);
    if (!strcmp(pins->keep[k], "all"))
      return ft_fail(e, FT_EUSAGE, "%s: --keep-input all: the model has no graph input with an initializer", g->path);
    return not_a_default(g, pins->keep[k], e);
  }
  for (int k = 0; k < pins->n_binds; k++) { /* --bind NAME=FILE.pb on a default: another constant for it */
    const char *eq = strchr(pins->binds[k], '=');
    size_t len = eq ? (size_t)(eq - pins->binds[k]) : 0;
    for (int d = 0; d < g->n_defaults && len; d++) {
      const char *nm = g->vals[g->defaults[d]].name;
      if (strlen(nm) == len && !strncmp(nm, pins->binds[k], len)) keep[d] = 1;
    }
  }
  /* kept: an input again, at its place among the inputs, of the initializer's type and shape */
  int left = 0, added = 0;
  for (int d = 0; d < g->n_defaults; d++) {
    if (!keep[d]) {
      g->defaults[left] = g->defaults[d];
      g->default_at[left++] = g->default_at[d] + added;
      continue;
    }
    ft_value *v = &g->vals[g->defaults[d]];
    ft_tensor_free_data(&v->t);
    v->kind = FT_V_INPUT;
    int at = g->default_at[d] + added++;
    memmove(g->inputs + at + 1, g->inputs + at, sizeof(int) * (size_t)(g->n_inputs - at));
    g->inputs[at] = g->defaults[d];
    g->n_inputs++;
  }
  free(keep);
  g->n_defaults = left;
  if (!left || !pins->notes) return 0;
  char names[400] = "";
  size_t m = 0;
  for (int d = 0; d < left && d < 4; d++) {
    char shown[64];
    ft_text_escape(shown, sizeof shown, g->vals[g->defaults[d]].name);
    m += (size_t)snprintf(names + m, sizeof names - m, "%s'%s'", d ? ", " : "", shown);
  }
  if (left > 4) snprintf(names + m, sizeof names - m, " and %d more", left - 4);
  int many = left > 1;
  fprintf(pins->notes, "%s: note: %d graph input%s %s an initializer, a default the caller may override (IR version "
          "%lld): %s; %s taken as %s. To feed %s at run time: --keep-input NAME (or --keep-input all)\n",
          pins->tool ? pins->tool : "ftax", left, many ? "s" : "", many ? "have" : "has", (long long)g->ir_version, names,
          many ? "they are" : "it is", many ? "constants, their initializers" : "a constant, its initializer",
          many ? "one" : "it");
  return 0;
}

int ft_specialize(ft_graph *g, const ft_pins *pins, ft_err *e) {
  for (int k = 0; k < pins->n_binds; k++) {
    int rc = bind_input(g, pins->binds[k], e);
    if (rc) return rc;
  }
  for (int k = 0; k < pins->n_dims; k++) {
    const char *eq = strchr(pins->dims[k], '=');
    int64_t v;
    if (!eq || eq == pins->dims[k] || parse_int(eq + 1, &v))
      return ft_fail(e, FT_EUSAGE, "--dim '%s': expected SYMBOL=N, e.g. --dim batch=1", pins->dims[k]);
    size_t len = (size_t)(eq - pins->dims[k]);
    int used = 0;
    for (int i = 0; i < g->n_inputs; i++) {
      ft_value *val = &g->vals[g->inputs[i]];
      for (int d = 0; d < val->t.rank; d++)
        if (val->sym[d] && strlen(val->sym[d]) == len && !strncmp(val->sym[d], pins->dims[k], len)) {
          val->t.dims[d] = v;
          used = 1;
        }
    }
    if (!used) {
      char syms[1024] = "";
      size_t m = 0;
      for (int i = 0; i < g->n_inputs; i++)
        for (int d = 0; d < g->vals[g->inputs[i]].t.rank; d++)
          if (g->vals[g->inputs[i]].sym[d] && !strstr(syms, g->vals[g->inputs[i]].sym[d]))
            m += snprintf(syms + m, sizeof syms - m, "%s'%s'", m ? ", " : "", g->vals[g->inputs[i]].sym[d]);
      return ft_fail(e, FT_EUSAGE, "%s: --dim %s: no input has a dimension named '%.*s' (symbols in this model: %s)",
                     g->path, pins->dims[k], (int)len, pins->dims[k], m ? syms : "none");
    }
  }
  for (int k = 0; k < pins->n_shapes; k++) {
    const char *eq = strchr(pins->shapes[k], '=');
    if (!eq || eq == pins->shapes[k])
      return ft_fail(e, FT_EUSAGE, "--shape '%s': expected INPUT=DxDx..., e.g. --shape input_ids=1x128", pins->shapes[k]);
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)(eq - pins->shapes[k]), pins->shapes[k]);
    int vi = -1;
    for (int i = 0; i < g->n_inputs; i++)
      if (!strcmp(g->vals[g->inputs[i]].name, name)) vi = g->inputs[i];
    if (vi < 0) return ft_fail(e, FT_EUSAGE, "%s: --shape %s: the model has no input named '%s'", g->path, pins->shapes[k], name);
    int64_t dims[FT_MAX_RANK];
    int rank = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    for (char *tok = strtok(buf, "x,"); tok; tok = strtok(NULL, "x,")) {
      if (rank == FT_MAX_RANK || parse_int(tok, &dims[rank]))
        return ft_fail(e, FT_EUSAGE, "--shape %s: dims must be non-negative integers joined by 'x'", pins->shapes[k]);
      rank++;
    }
    ft_value *val = &g->vals[vi];
    if (val->t.rank >= 0 && val->t.rank != rank)
      return ft_fail(e, FT_EUSAGE, "%s: --shape %s: input '%s' has rank %d, not %d", g->path, pins->shapes[k], name, val->t.rank, rank);
    for (int d = 0; d < rank; d++) {
      if (val->t.rank >= 0 && val->t.dims[d] >= 0 && val->t.dims[d] != dims[d] && !val->sym[d])
        return ft_fail(e, FT_EUSAGE, "%s: --shape %s: dimension %d of '%s' is fixed at %lld by the model", g->path,
                       pins->shapes[k], d, name, (long long)val->t.dims[d]);
      val->t.dims[d] = dims[d];
    }
    val->t.rank = rank;
  }
  for (int i = 0; i < g->n_inputs; i++) {
    ft_value *val = &g->vals[g->inputs[i]];
    if (val->t.rank < 0)
      return ft_fail(e, FT_EUSAGE, "%s: input '%s' has no declared shape; give it with --shape %s=DxD...", g->path, val->name, val->name);
    for (int d = 0; d < val->t.rank; d++) {
      if (val->t.dims[d] >= 0) continue;
      if (val->sym[d])
        return ft_fail(e, FT_EUSAGE,
                       "%s: input '%s' dimension %d is the symbol '%s', which was not pinned; add --dim %s=N "
                       "(or --shape %s=...)", g->path, val->name, d, val->sym[d], val->sym[d], val->name);
      return ft_fail(e, FT_EUSAGE, "%s: input '%s' dimension %d has no size; add --shape %s=DxD...", g->path,
                     val->name, d, val->name);
    }
    size_t bytes;
    if (ft_size_checked(val->t.dtype, val->t.rank, val->t.dims, ft_max_tensor_bytes, &bytes))
      return ft_fail(e, FT_EUNSUPPORTED, "%s: input '%s' at the pinned shape would take more than %zu bytes; ftax does not "
                     "support tensors that large", g->path, val->name, ft_max_tensor_bytes);
    val->shape_known = 1;
  }
  return 0;
}
