/* ONNX ModelProto (protobuf-c bindings generated from Debian's onnx.proto) → ft_graph. */
#include "load.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "tensorio.h" /* ft_pb_varint: the one wire-format varint reader */
#include "text.h"

/* A model file, whole. Only a regular file is read, its size from fstat: a folder, a FIFO or a
 * device is refused (NULL, an I/O error) instead of being read as a huge or endless file. */
static char *read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not block the open */
  if (fd < 0) return NULL;
  struct stat st;
  FILE *f = NULL;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0 || !(f = fdopen(fd, "rb"))) { close(fd); return NULL; }
  size_t n = (size_t)st.st_size;
  char *buf = malloc(n ? n : 1);
  if (buf && n && fread(buf, 1, n, f) != n) { free(buf); buf = NULL; }
  fclose(f);
  *len = n;
  return buf;
}

/* External data must stay inside the model's folder: no absolute paths, no "..". */
static int safe_relative(const char *p) {
  if (!p[0] || p[0] == '/') return 0;
  for (const char *s = p; *s;) {
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (n == 2 && s[0] == '.' && s[1] == '.') return 0;
    if (!e) break;
    s = e + 1;
  }
  return 1;
}

int ft_external_path(const char *dir, const char *location, char *out, size_t n, ft_err *e) {
  if (!safe_relative(location))
    return ft_fail(e, FT_EINVALID,
                   "external data location '%s' is absolute or leaves the model's folder; keep external "
                   "data files next to the model", location);
  char joined[8192], rdir[PATH_MAX], rfile[PATH_MAX];
  if ((size_t)snprintf(joined, sizeof joined, "%s/%s", dir, location) >= sizeof joined)
    return ft_fail(e, FT_EINVALID, "external data location '%s' is too long", location);
  if (!realpath(dir, rdir)) return ft_fail(e, FT_EIO, "cannot resolve the model's folder '%s'", dir);
  if (!realpath(joined, rfile)) return ft_fail(e, FT_EIO, "cannot open external data file '%s'", joined);
  /* links are followed, and what they lead to must still be inside the model's folder */
  size_t k = strlen(rdir);
  if (strncmp(rfile, rdir, k) || (rfile[k] != '/' && strcmp(rdir, "/")))
    return ft_fail(e, FT_EINVALID,
                   "external data location '%s' is a link that leads out of the model's folder (to '%s'); "
                   "copy the data file next to the model", location, rfile);
  struct stat st;
  if (stat(rfile, &st) || !S_ISREG(st.st_mode))
    return ft_fail(e, FT_EINVALID, "external data location '%s' is not a regular file", location);
  if (strlen(rfile) >= n) return ft_fail(e, FT_EINVALID, "external data location '%s' is too long", location);
  memcpy(out, rfile, strlen(rfile) + 1);
  return 0;
}

/* A non-negative decimal integer, whole string. */
static int parse_size(const char *v, long long *out) {
  if (!v[0]) return -1;
  long long x = 0;
  for (const char *s = v; *s; s++) {
    if (*s < '0' || *s > '9' || x > (LLONG_MAX - 9) / 10) return -1;
    x = x * 10 + (*s - '0');
  }
  *out = x;
  return 0;
}

static int load_external(const Onnx__TensorProto *tp, const char *dir, ft_tensor *t, size_t nbytes,
                         ft_err *e) {
  const char *loc = NULL, *name = tp->name ? tp->name : "";
  long long off = 0, len = -1;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const char *k = tp->external_data[i]->key, *v = tp->external_data[i]->value;
    if (!k || !v) continue;
    if (!strcmp(k, "location")) loc = v;
    else if ((!strcmp(k, "offset") && parse_size(v, &off)) || (!strcmp(k, "length") && parse_size(v, &len)))
      return ft_fail(e, FT_EINVALID, "tensor '%s': external data %s '%s' is not a byte count", name, k, v);
  }
  if (!loc) return ft_fail(e, FT_EINVALID, "tensor '%s': external data without a location", name);
  if (len >= 0 && (unsigned long long)len != nbytes)
    return ft_fail(e, FT_EINVALID, "tensor '%s': external data length %lld, expected %zu bytes", name, len, nbytes);
  char path[PATH_MAX];
  int rc = ft_external_path(dir, loc, path, sizeof path, e);
  if (rc) { /* name the tensor too (e->msg is escaped already, the name not yet) */
    char safe[256], msg[sizeof e->msg];
    int room = (int)(sizeof msg - sizeof safe - 16); /* the end of a long message may be cut */
    snprintf(msg, sizeof msg, "tensor '%s': %.*s", ft_text_escape(safe, sizeof safe, name), room, e->msg);
    memcpy(e->msg, msg, sizeof msg);
    return rc;
  }
  FILE *f = fopen(path, "rb");
  if (!f) return ft_fail(e, FT_EIO, "tensor '%s': cannot open external data file '%s'", name, path);
  struct stat st;
  int ok = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size >= (unsigned long long)off &&
           (unsigned long long)st.st_size - (unsigned long long)off >= nbytes;
  if (ok) ok = fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(t->data, 1, nbytes, f) == nbytes;
  fclose(f);
  if (!ok) return ft_fail(e, FT_EINVALID, "tensor '%s': external data file '%s' is too short", name, path);
  return 0;
}

int ft_tensor_from_proto(const void *proto, const char *dir, ft_tensor *t, ft_err *e) {
  const Onnx__TensorProto *tp = proto;
  memset(t, 0, sizeof *t);
  t->dtype = tp->data_type;
  const char *name = tp->name ? tp->name : "";
  if (tp->n_dims > FT_MAX_RANK)
    return ft_fail(e, FT_EUNSUPPORTED, "tensor '%s' has rank %zu; ftax supports up to %d", name,
                   tp->n_dims, FT_MAX_RANK);
  t->rank = (int)tp->n_dims;
  for (size_t i = 0; i < tp->n_dims; i++) {
    if (tp->dims[i] < 0) return ft_fail(e, FT_EINVALID, "tensor '%s' has a negative dimension", name);
    t->dims[i] = tp->dims[i];
  }
  size_t es = ft_dtype_size(t->dtype);
  if (t->dtype <= FT_UNDEFINED || t->dtype > FT_DTYPE_LAST)
    return ft_fail(e, FT_EINVALID, "tensor '%s' has data type %d, which is not an ONNX tensor type", name, t->dtype);
  if (!es)
    return ft_fail(e, FT_EUNSUPPORTED, "tensor '%s' has data type %s (%d), which ftax does not support",
                   name, ft_dtype_name(t->dtype), t->dtype);
  size_t nbytes;
  if (ft_size_checked(t->dtype, t->rank, t->dims, ft_max_tensor_bytes, &nbytes))
    return ft_fail(e, FT_EUNSUPPORTED, "tensor '%s' would take more than %zu bytes; ftax does not support tensors that large",
                   name, ft_max_tensor_bytes);
  int64_t n = (int64_t)(nbytes / es);
  /* the data must be there before its size is allocated: a small file can claim a huge shape */
  int external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  size_t typed = tp->n_float_data + tp->n_double_data + tp->n_int64_data + tp->n_uint64_data + tp->n_int32_data;
  if ((tp->has_raw_data || external) + (typed > 0) > 1 || (external && tp->has_raw_data))
    return ft_fail(e, FT_EINVALID, "tensor '%s' holds its data in more than one place (raw_data, typed fields, external)", name);
  if (!external) {
    size_t have = tp->has_raw_data ? tp->raw_data.len
                : t->dtype == FT_FLOAT ? tp->n_float_data * 4 : t->dtype == FT_DOUBLE ? tp->n_double_data * 8
                : t->dtype == FT_INT64 ? tp->n_int64_data * 8
                : t->dtype == FT_UINT32 || t->dtype == FT_UINT64 ? tp->n_uint64_data * es : tp->n_int32_data * es;
    if (have != nbytes)
      return ft_fail(e, FT_EINVALID, "tensor '%s': its data holds %zu bytes, its shape needs %zu", name, have, nbytes);
  }
  t->data = calloc(nbytes ? nbytes : 1, 1);
  if (!t->data) return ft_fail(e, FT_EIO, "out of memory for tensor '%s'", name);
  int rc = 0;
#define COUNT_CHECK(cnt)                                                                        \
  if ((int64_t)(cnt) != n) {                                                                    \
    rc = ft_fail(e, FT_EINVALID, "tensor '%s': %lld values for %lld elements", name,            \
                 (long long)(cnt), (long long)n);                                               \
    goto done;                                                                                  \
  }
  if (external) {
    if (!dir) rc = ft_fail(e, FT_EINVALID, "tensor '%s' has external data, but the model was not read from a folder", name);
    else rc = load_external(tp, dir, t, nbytes, e);
  } else if (tp->has_raw_data) {
    if (tp->raw_data.len != nbytes) {
      rc = ft_fail(e, FT_EINVALID, "tensor '%s': raw_data holds %zu bytes, shape needs %zu", name,
                   tp->raw_data.len, nbytes);
      goto done;
    }
    if (nbytes) memcpy(t->data, tp->raw_data.data, nbytes);
  } else if (t->dtype == FT_FLOAT) {
    COUNT_CHECK(tp->n_float_data);
    if (nbytes) memcpy(t->data, tp->float_data, nbytes);
  } else if (t->dtype == FT_DOUBLE) {
    COUNT_CHECK(tp->n_double_data);
    if (nbytes) memcpy(t->data, tp->double_data, nbytes);
  } else if (t->dtype == FT_INT64) {
    COUNT_CHECK(tp->n_int64_data);
    if (nbytes) memcpy(t->data, tp->int64_data, nbytes);
  } else if (t->dtype == FT_UINT32 || t->dtype == FT_UINT64) {
    COUNT_CHECK(tp->n_uint64_data);
    for (int64_t i = 0; i < n; i++) {
      if (t->dtype == FT_UINT32) ((uint32_t *)t->data)[i] = (uint32_t)tp->uint64_data[i];
      else ((uint64_t *)t->data)[i] = tp->uint64_data[i];
    }
  } else {
    /* int32, int16, int8, uint16, uint8, bool, float16, bfloat16 travel in int32_data */
    COUNT_CHECK(tp->n_int32_data);
    /* each value must fit its type: 70000 in a float16 tensor is not a float16 cut to 16 bits */
    int32_t lo = t->dtype == FT_INT8 ? -128 : t->dtype == FT_INT16 ? -32768 : es == 4 ? INT32_MIN : 0;
    int32_t hi = t->dtype == FT_INT8 ? 127 : t->dtype == FT_UINT8 ? 255 : t->dtype == FT_BOOL ? 1
               : t->dtype == FT_INT16 ? 32767 : es == 2 ? 65535 : INT32_MAX;
    for (int64_t i = 0; i < n; i++) {
      int32_t v = tp->int32_data[i];
      if (v < lo || v > hi) {
        rc = ft_fail(e, FT_EINVALID, "tensor '%s': int32_data[%lld] is %d, which is not a %s value (%d to %d)", name,
                     (long long)i, (int)v, ft_dtype_name(t->dtype), (int)lo, (int)hi);
        goto done;
      }
      switch (es) {
      case 1: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
      case 2: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
      default: ((int32_t *)t->data)[i] = v; break;
      }
    }
  }
done:
  if (rc) ft_tensor_free_data(t);
  return rc;
#undef COUNT_CHECK
}

static int convert_attr(const Onnx__AttributeProto *ap, const char *dir, ft_attr *a, ft_err *e) {
  memset(a, 0, sizeof *a);
  a->name = strdup(ap->name ? ap->name : "");
  a->type = ap->has_type ? (int)ap->type : 0;
  a->i = ap->i;
  a->f = ap->f;
  if (ap->has_s) {
    a->s = malloc(ap->s.len + 1);
    if (ap->s.len) memcpy(a->s, ap->s.data, ap->s.len);
    a->s[ap->s.len] = 0;
    a->s_len = ap->s.len;
  }
  if (ap->n_ints) {
    a->ints = malloc(sizeof(int64_t) * ap->n_ints);
    memcpy(a->ints, ap->ints, sizeof(int64_t) * ap->n_ints);
  }
  a->n_ints = (int)ap->n_ints;
  if (ap->n_floats) {
    a->floats = malloc(sizeof(float) * ap->n_floats);
    memcpy(a->floats, ap->floats, sizeof(float) * ap->n_floats);
  }
  a->n_floats = (int)ap->n_floats;
  if (ap->n_strings) {
    a->strings = malloc(sizeof(char *) * ap->n_strings);
    for (size_t i = 0; i < ap->n_strings; i++) {
      a->strings[i] = malloc(ap->strings[i].len + 1);
      if (ap->strings[i].len) memcpy(a->strings[i], ap->strings[i].data, ap->strings[i].len);
      a->strings[i][ap->strings[i].len] = 0;
    }
  }
  a->n_strings = (int)ap->n_strings;
  if (ap->t) {
    a->t = malloc(sizeof *a->t);
    int rc = ft_tensor_from_proto(ap->t, dir, a->t, e);
    if (rc) { free(a->t); a->t = NULL; return rc; }
  }
  return 0; /* a graph attribute (ap->g) is loaded by load_graph_attr */
}

static int set_value_type(ft_graph *g, int vi, const Onnx__ValueInfoProto *info, ft_err *e) {
  ft_value *v = &g->vals[vi];
  const Onnx__TypeProto *tp = info->type;
  if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
    return ft_fail(e, FT_EINVALID, "%s: input '%s' has no type", g->path, info->name);
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: '%s' is not a tensor (sequences, maps and optionals are not supported)",
                   g->path, info->name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  v->t.dtype = tt->has_elem_type ? tt->elem_type : 0;
  if (v->t.dtype <= FT_UNDEFINED || v->t.dtype > FT_DTYPE_LAST)
    return ft_fail(e, FT_EINVALID, "%s: input '%s' has element type %d, which is not an ONNX data type", g->path,
                   info->name, v->t.dtype);
  if (!ft_dtype_size(v->t.dtype))
    return ft_fail(e, FT_EUNSUPPORTED, "%s: input '%s' is of type %s, which ftax does not support", g->path, info->name,
                   ft_dtype_name(v->t.dtype));
  if (!tt->shape) { v->t.rank = -1; return 0; }
  if (tt->shape->n_dim > FT_MAX_RANK)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: '%s' has rank %zu; ftax supports up to %d", g->path,
                   info->name, tt->shape->n_dim, FT_MAX_RANK);
  v->t.rank = (int)tt->shape->n_dim;
  v->shape_known = 1;
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value < 0)
      return ft_fail(e, FT_EINVALID, "%s: input '%s' has dimension %zu of size %lld; sizes are never negative", g->path,
                     info->name, i, (long long)d->dim_value);
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      v->t.dims[i] = d->dim_value;
    } else {
      v->t.dims[i] = -1;
      v->shape_known = 0;
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param[0])
        v->sym[i] = strdup(d->dim_param);
    }
  }
  return 0;
}

/* Every name the model's graphs and functions use, anywhere: a value private to one call of a
 * function gets a name that is none of them, so no node of any graph can read or write it by
 * name. Pointers into the parsed model (which outlives the load). */
typedef struct name_set {
  const char **slot;
  size_t cap, n;
} name_set;

static uint64_t str_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int names_has(const name_set *ns, const char *s) {
  if (!ns->cap) return 0;
  for (size_t at = str_hash(s) & (ns->cap - 1);; at = (at + 1) & (ns->cap - 1)) {
    if (!ns->slot[at]) return 0;
    if (!strcmp(ns->slot[at], s)) return 1;
  }
}

static int names_put(name_set *ns, const char *s) {
  if (!s || !s[0] || names_has(ns, s)) return 0;
  if (2 * (ns->n + 1) > ns->cap) {
    size_t cap = ns->cap ? 2 * ns->cap : 256;
    const char **slot = calloc(cap, sizeof *slot);
    if (!slot) return -1;
    for (size_t i = 0; i < ns->cap; i++) {
      if (!ns->slot[i]) continue;
      size_t at = str_hash(ns->slot[i]) & (cap - 1);
      while (slot[at]) at = (at + 1) & (cap - 1);
      slot[at] = ns->slot[i];
    }
    free(ns->slot);
    ns->slot = slot;
    ns->cap = cap;
  }
  size_t at = str_hash(s) & (ns->cap - 1);
  while (ns->slot[at]) at = (at + 1) & (ns->cap - 1);
  ns->slot[at] = s;
  ns->n++;
  return 0;
}

static int names_of_nodes(name_set *ns, Onnx__NodeProto *const *nodes, size_t n_nodes);

static int names_of_graph(name_set *ns, const Onnx__GraphProto *gp) {
  int rc = 0;
  for (size_t i = 0; i < gp->n_input && !rc; i++) rc = names_put(ns, gp->input[i]->name);
  for (size_t i = 0; i < gp->n_output && !rc; i++) rc = names_put(ns, gp->output[i]->name);
  for (size_t i = 0; i < gp->n_value_info && !rc; i++) rc = names_put(ns, gp->value_info[i]->name);
  for (size_t i = 0; i < gp->n_initializer && !rc; i++) rc = names_put(ns, gp->initializer[i]->name);
  return rc ? rc : names_of_nodes(ns, gp->node, gp->n_node);
}

static int names_of_nodes(name_set *ns, Onnx__NodeProto *const *nodes, size_t n_nodes) {
  int rc = 0;
  for (size_t i = 0; i < n_nodes && !rc; i++) {
    const Onnx__NodeProto *np = nodes[i];
    for (size_t k = 0; k < np->n_input && !rc; k++) rc = names_put(ns, np->input[k]);
    for (size_t k = 0; k < np->n_output && !rc; k++) rc = names_put(ns, np->output[k]);
    for (size_t a = 0; a < np->n_attribute && !rc; a++) {
      const Onnx__AttributeProto *ap = np->attribute[a];
      if (ap->g) rc = names_of_graph(ns, ap->g);
      for (size_t k = 0; k < ap->n_graphs && !rc; k++) rc = names_of_graph(ns, ap->graphs[k]);
    }
  }
  return rc;
}

/* Nesting of function calls: through bodies and through the subgraphs in them. */
#define FT_FN_MAX_DEPTH 16

/* What one load shares across the graphs it loads (the model's and every subgraph). */
typedef struct load_shared {
  name_set names;
  const Onnx__FunctionProto *stack[FT_FN_MAX_DEPTH + 1]; /* the calls being inlined, outermost first */
  int depth;
  long inlined; /* nodes added inside function bodies so far, in all graphs */
  int calls;    /* calls inlined so far: numbers each call's private values */
} load_shared;

/* The scope of one function call being inlined: each name the body may use (its formal inputs
 * and outputs, the values its nodes write) mapped to a value of the graph. A body sees nothing
 * else: a name outside the table is an error, not a value of the caller's. */
typedef struct inline_scope {
  char *prefix; /* for node names and private values: "call#k/" */
  const Onnx__FunctionProto *fn;
  const ft_node *caller;
  const char **names;
  int *vals; /* -1: an optional input the caller omits */
  int n, cap;
} inline_scope;

typedef struct load_ctx {
  ft_graph *g;
  const Onnx__ModelProto *m;
  const char *dir;
  ft_err *e;
  load_shared *sh;
} load_ctx;

static int scope_find(const inline_scope *sc, const char *name) {
  for (int i = 0; i < sc->n; i++)
    if (!strcmp(sc->names[i], name)) return i;
  return -1;
}

static int scope_put(inline_scope *sc, const char *name, int v) {
  if (sc->n == sc->cap) {
    int cap = sc->cap ? 2 * sc->cap : 16;
    const char **nm = realloc(sc->names, sizeof *nm * (size_t)cap);
    if (nm) sc->names = nm;
    int *vs = realloc(sc->vals, sizeof *vs * (size_t)cap);
    if (vs) sc->vals = vs;
    if (!nm || !vs) return -1;
    sc->cap = cap;
  }
  sc->names[sc->n] = name;
  sc->vals[sc->n++] = v;
  return 0;
}

/* a + b, allocated */
static char *str_cat(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *s = malloc(na + nb + 1);
  if (!s) return NULL;
  memcpy(s, a, na);
  memcpy(s + na, b, nb + 1);
  return s;
}

#define FT_NOT_IN_SCOPE (-2)

/* The value a node reads or writes under `name`: in a function body, from the call's scope
 * (FT_NOT_IN_SCOPE if the body does not have it); in a graph, the graph's value of that name. */
static int scoped_value(load_ctx *L, const inline_scope *sc, const char *name) {
  if (!name || !name[0]) return -1;
  if (sc) {
    int k = scope_find(sc, name);
    return k >= 0 ? sc->vals[k] : FT_NOT_IN_SCOPE;
  }
  return ft_value_get(L->g, name);
}

/* A value private to one call: prefix + name, or that with #k, never a name the model uses. */
static int private_value(load_ctx *L, const char *prefix, const char *name) {
  char *s = str_cat(prefix, name);
  if (!s) return -1;
  for (int k = 1; names_has(&L->sh->names, s) || ft_value_find(L->g, s) >= 0; k++) {
    char tail[32];
    snprintf(tail, sizeof tail, "#%d", k);
    char *t = str_cat(prefix, name), *u = t ? str_cat(t, tail) : NULL;
    free(t);
    free(s);
    if (!(s = u)) return -1;
  }
  int v = ft_value_add(L->g, s);
  free(s);
  return v;
}

static const Onnx__FunctionProto *find_function(const Onnx__ModelProto *m, const char *domain, const char *op) {
  for (size_t i = 0; i < m->n_functions; i++) {
    const Onnx__FunctionProto *f = m->functions[i];
    const char *fd = f->domain ? f->domain : "";
    if (f->name && !strcmp(f->name, op) && !strcmp(fd, domain ? domain : "")) return f;
  }
  return NULL;
}

static int add_node(load_ctx *L, const Onnx__NodeProto *np, const inline_scope *sc);
static int load_graph_attr(load_ctx *L, const Onnx__GraphProto *gp, const inline_scope *sc, int ni, ft_attr *a);

static const char *fn_name(const Onnx__FunctionProto *fn) { return fn->name ? fn->name : ""; }

/* Node np, a call of fn, replaced by fn's body: the call gets a scope of its own (formal inputs
 * to the caller's values, formal outputs to the values the call writes, every other value the
 * body writes a new private value), then the body's nodes are added in it. */
static int inline_function(load_ctx *L, const Onnx__NodeProto *np, const Onnx__FunctionProto *fn,
                           const inline_scope *sc, const ft_node *caller) {
  load_shared *sh = L->sh;
  const char *node = np->name && np->name[0] ? np->name : fn_name(fn);
  for (int k = 0; k < sh->depth; k++)
    if (sh->stack[k] == fn)
      return ft_fail(L->e, FT_EINVALID, "%s: node '%s': function '%s' calls itself (%s '%s', or a subgraph in it); "
                     "ONNX functions may not be recursive", L->g->path, node, fn_name(fn),
                     k + 1 == sh->depth ? "in its own body" : "through function", fn_name(sh->stack[sh->depth - 1]));
  if (sh->depth >= FT_FN_MAX_DEPTH)
    return ft_fail(L->e, FT_EUNSUPPORTED, "%s: node '%s': function '%s' is called %d calls deep (function '%s' "
                   "outermost); ftax inlines calls up to %d deep", L->g->path, node, fn_name(fn), sh->depth + 1,
                   fn_name(sh->stack[0]), FT_FN_MAX_DEPTH);
  if (np->n_input > fn->n_input || np->n_output > fn->n_output)
    return ft_fail(L->e, FT_EINVALID, "%s: node '%s' calls function '%s' with %zu inputs and %zu outputs; it has %zu "
                   "inputs and %zu outputs", L->g->path, node, fn_name(fn), np->n_input, np->n_output, fn->n_input,
                   fn->n_output);
  inline_scope s = {0};
  char num[32];
  snprintf(num, sizeof num, "#%d/", sh->calls++);
  char *pre = str_cat(sc ? sc->prefix : "", node);
  s.prefix = pre ? str_cat(pre, num) : NULL;
  free(pre);
  s.fn = fn;
  s.caller = caller;
  int rc = s.prefix ? 0 : ft_fail(L->e, FT_EIO, "out of memory inlining function '%s'", fn_name(fn));
  for (size_t i = 0; i < fn->n_input && !rc; i++) {
    int v = i < np->n_input ? scoped_value(L, sc, np->input[i]) : -1;
    if (v == FT_NOT_IN_SCOPE)
      rc = ft_fail(L->e, FT_EINVALID, "%s: node '%s' (in function '%s') reads '%s', which is neither an input of the "
                   "function nor written in its body", L->g->path, node, fn_name(sc->fn), np->input[i]);
    else if (fn->input[i] && fn->input[i][0]) rc = scope_put(&s, fn->input[i], v);
  }
  for (size_t i = 0; i < fn->n_output && !rc; i++) {
    if (!fn->output[i] || !fn->output[i][0] || scope_find(&s, fn->output[i]) >= 0)
      rc = ft_fail(L->e, FT_EINVALID, "%s: function '%s': output #%zu is %s", L->g->path, fn_name(fn), i,
                   fn->output[i] && fn->output[i][0] ? "also one of its inputs or outputs" : "unnamed");
    else {
      int v = i < np->n_output ? scoped_value(L, sc, np->output[i]) : -1;
      if (v < 0) v = private_value(L, s.prefix, fn->output[i]); /* an output the caller leaves off */
      rc = v < 0 ? ft_fail(L->e, FT_EIO, "out of memory") : scope_put(&s, fn->output[i], v);
    }
  }
  /* the body's own values, private to this call, before any node reads them (a body in any
   * order reads what it writes) */
  for (size_t i = 0; i < fn->n_node && !rc; i++)
    for (size_t k = 0; k < fn->node[i]->n_output && !rc; k++) {
      const char *o = fn->node[i]->output[k];
      if (!o || !o[0] || scope_find(&s, o) >= 0) continue; /* written twice: the validator says so */
      int v = private_value(L, s.prefix, o);
      rc = v < 0 ? ft_fail(L->e, FT_EIO, "out of memory") : scope_put(&s, o, v);
    }
  if (rc == -1) rc = ft_fail(L->e, FT_EIO, "out of memory inlining function '%s'", fn_name(fn));
  sh->stack[sh->depth++] = fn;
  for (size_t i = 0; i < fn->n_node && !rc; i++) rc = add_node(L, fn->node[i], &s);
  sh->depth--;
  free(s.prefix);
  free(s.names);
  free(s.vals);
  return rc;
}

static int add_node(load_ctx *L, const Onnx__NodeProto *np, const inline_scope *sc) {
  const char *domain = np->domain ? np->domain : "";
  if (!strcmp(domain, "ai.onnx")) domain = "";
  if (!np->op_type || !np->op_type[0])
    return ft_fail(L->e, FT_EINVALID, "%s: node '%s' has no op_type", L->g->path, np->name ? np->name : "");
  load_shared *sh = L->sh;
  /* every node made inside a function body counts, in every graph: calls nested in calls
   * multiply, and a 3 KB file can ask for billions */
  if (sh->depth && ++sh->inlined > FT_GRAPH_MAX_NODES)
    return ft_fail(L->e, FT_EUNSUPPORTED, "%s: function '%s' (called by the graph) expands into more than %d nodes "
                   "(through function '%s'); ftax compiles graphs of up to %d nodes", L->g->path,
                   fn_name(sh->stack[0]), FT_GRAPH_MAX_NODES, fn_name(sh->stack[sh->depth - 1]), FT_GRAPH_MAX_NODES);
  const Onnx__FunctionProto *fn = find_function(L->m, domain, np->op_type);
  char *name = str_cat(sc ? sc->prefix : "", np->name ? np->name : "");
  if (!name) return ft_fail(L->e, FT_EIO, "out of memory");
  ft_node *n = ft_node_add(L->g, name, np->op_type, domain, (int)np->n_input, (int)np->n_output);
  free(name);
  int ni = (int)(n - L->g->nodes);
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *ap = np->attribute[i];
    if (ap->ref_attr_name && ap->ref_attr_name[0]) {
      /* an attribute of a function body that refers to the caller's attribute */
      const ft_attr *src = sc && sc->caller ? ft_attr_find(sc->caller, ap->ref_attr_name) : NULL;
      if (!src) continue; /* not given by the caller: the op's default applies */
      n = &L->g->nodes[ni];
      n->attrs = realloc(n->attrs, sizeof(ft_attr) * (n->n_attrs + 1));
      ft_attr_copy(&n->attrs[n->n_attrs], src);
      free(n->attrs[n->n_attrs].name);
      n->attrs[n->n_attrs].name = strdup(ap->name ? ap->name : ""); /* as convert_attr: nameless is "" */
      n->n_attrs++;
      continue;
    }
    n = &L->g->nodes[ni];
    n->attrs = realloc(n->attrs, sizeof(ft_attr) * (n->n_attrs + 1));
    int rc = convert_attr(ap, L->dir, &n->attrs[n->n_attrs], L->e);
    n->n_attrs++;
    if (!rc && ap->g) rc = load_graph_attr(L, ap->g, sc, ni, &L->g->nodes[ni].attrs[n->n_attrs - 1]);
    if (rc) return rc;
  }
  for (size_t i = 0; i < np->n_input + np->n_output; i++) {
    int out = i >= np->n_input;
    const char *nm = out ? np->output[i - np->n_input] : np->input[i];
    int v = scoped_value(L, sc, nm);
    if (v == FT_NOT_IN_SCOPE)
      return ft_fail(L->e, FT_EINVALID, "%s: node '%s' (%s) in function '%s' reads '%s', which is neither an input of "
                     "the function nor written in its body", L->g->path, np->name ? np->name : "", np->op_type,
                     fn_name(sc->fn), nm);
    if (out) L->g->nodes[ni].out[i - np->n_input] = v;
    else L->g->nodes[ni].in[i] = v;
  }
  if (fn) {
    /* a model-local function: replace the call by the body */
    ft_node copy = L->g->nodes[ni];
    L->g->n_nodes--; /* drop the call node, keep its attributes for ref_attr lookups */
    int rc = inline_function(L, np, fn, sc, &copy);
    free(copy.name); free(copy.op_type); free(copy.domain); free(copy.in); free(copy.out); free(copy.outer);
    for (int k = 0; k < copy.n_attrs; k++) ft_attr_free(&copy.attrs[k]);
    free(copy.attrs);
    return rc;
  }
  return 0;
}

/* The model's IR version and operator set imports: known, positive, and each domain once. */
static int check_header(const Onnx__ModelProto *m, const char *path, ft_err *e) {
  if (m->ir_version < 1)
    return ft_fail(e, FT_EINVALID, "%s: ir_version %lld is not a valid ONNX IR version", path, (long long)m->ir_version);
  if (m->ir_version > FT_IR_VERSION_MAX)
    return ft_fail(e, FT_EUNSUPPORTED, "%s: ir_version %lld is newer than ftax knows (up to %d)", path,
                   (long long)m->ir_version, FT_IR_VERSION_MAX);
  int has_default = 0;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const char *d = m->opset_import[i]->domain ? m->opset_import[i]->domain : "";
    int64_t v = m->opset_import[i]->version;
    for (size_t j = 0; j < i; j++) {
      const char *dj = m->opset_import[j]->domain ? m->opset_import[j]->domain : "";
      if (!strcmp(d, dj)) return ft_fail(e, FT_EINVALID, "%s: the opset of domain '%s' is imported twice", path, d);
    }
    if (v < 1)
      return ft_fail(e, FT_EINVALID, "%s: opset import of domain '%s' has version %lld; versions start at 1", path,
                     d[0] ? d : "ai.onnx", (long long)v);
    if (d[0] && strcmp(d, "ai.onnx")) continue;
    if (has_default++) return ft_fail(e, FT_EINVALID, "%s: the default opset is imported twice", path);
    if (v > FT_OPSET_MAX)
      return ft_fail(e, FT_EUNSUPPORTED, "%s: opset %lld is newer than ftax knows (up to %d); export with an older opset",
                     path, (long long)v, FT_OPSET_MAX);
  }
  int default_nodes = 0;
  for (size_t i = 0; i < m->graph->n_node; i++) {
    const char *d = m->graph->node[i]->domain;
    default_nodes += !d || !d[0] || !strcmp(d, "ai.onnx");
  }
  if (!has_default && m->ir_version >= 3 && default_nodes)
    return ft_fail(e, FT_EINVALID, "%s: the model imports no ai.onnx opset (IR version %lld requires one)", path,
                   (long long)m->ir_version);
  return 0;
}

/* How deeply the model's messages nest, measured on the wire before protobuf-c (whose parser
 * recurses) sees them: subgraphs in attributes and nested sequence types can nest without bound,
 * and a small file could otherwise exhaust the stack. Only the fields that can recurse are
 * followed; field numbers are onnx.proto's. */
enum { PB_MODEL, PB_GRAPH, PB_NODE, PB_ATTR, PB_VALUEINFO, PB_TYPE, PB_TYPE_ELEM, PB_FUNCTION, PB_TRAINING, PB_TENSOR,
       PB_LEAF };
#define FT_MAX_NESTING 64

static int pb_child(int kind, uint64_t field) {
  switch (kind) {
  case PB_MODEL: return field == 7 ? PB_GRAPH : field == 25 ? PB_FUNCTION : field == 20 ? PB_TRAINING : PB_LEAF;
  case PB_GRAPH:
    return field == 1 ? PB_NODE : (field == 11 || field == 12 || field == 13) ? PB_VALUEINFO : field == 5 ? PB_TENSOR : PB_LEAF;
  case PB_NODE: return field == 5 ? PB_ATTR : PB_LEAF;
  case PB_ATTR:
    return (field == 6 || field == 11) ? PB_GRAPH : (field == 14 || field == 15) ? PB_TYPE
         : (field == 5 || field == 10) ? PB_TENSOR : PB_LEAF;
  case PB_VALUEINFO: return field == 2 ? PB_TYPE : PB_LEAF;
  case PB_TYPE: return (field == 4 || field == 5 || field == 9) ? PB_TYPE_ELEM : PB_LEAF;
  case PB_TYPE_ELEM: return (field == 1 || field == 2) ? PB_TYPE : PB_LEAF; /* Sequence/Optional 1, Map 2 */
  case PB_FUNCTION: return field == 7 ? PB_NODE : PB_LEAF;
  case PB_TRAINING: return (field == 1 || field == 2) ? PB_GRAPH : PB_LEAF;
  default: return PB_LEAF;
  }
}

/* The string fields that name something (values, nodes, ops, domains, functions, attributes):
 * protobuf-c ends a string at its first NUL byte, so "x\0a" and "x\0b" would both be read as "x"
 * (two values merged, an undefined name bound to another). Such a name is refused on the wire. */
static int pb_is_name(int kind, uint64_t field) {
  switch (kind) {
  case PB_GRAPH: return field == 2;
  case PB_NODE: return field == 1 || field == 2 || field == 3 || field == 4 || field == 7;
  case PB_ATTR: return field == 1 || field == 21;
  case PB_VALUEINFO: return field == 1;
  case PB_FUNCTION: return field == 1 || field == 4 || field == 5 || field == 6 || field == 10;
  case PB_TENSOR: return field == 8;
  default: return 0;
  }
}

/* 0 when the nesting stays within FT_MAX_NESTING (else -1) and no name holds a NUL byte (else
 * -2, *nul pointing at the name, *nul_len its length); malformed wire data is left to protobuf-c. */
static int pb_nesting_ok(const uint8_t *p, const uint8_t *end, int kind, int depth, const uint8_t **nul, size_t *nul_len) {
  if (depth > FT_MAX_NESTING) return -1;
  while (p < end) {
    uint64_t key, v;
    if (ft_pb_varint(&p, end, &key)) return 0;
    switch (key & 7) {
    case 0: if (ft_pb_varint(&p, end, &v)) return 0; break;
    case 1: if (end - p < 8) return 0; p += 8; break;
    case 5: if (end - p < 4) return 0; p += 4; break;
    case 2: {
      if (ft_pb_varint(&p, end, &v) || v > (uint64_t)(end - p)) return 0;
      if (pb_is_name(kind, key >> 3) && memchr(p, 0, (size_t)v)) {
        *nul = p;
        *nul_len = (size_t)v;
        return -2;
      }
      int child = pb_child(kind, key >> 3);
      int rc = child != PB_LEAF ? pb_nesting_ok(p, p + v, child, depth + 1, nul, nul_len) : 0;
      if (rc) return rc;
      p += v;
      break;
    }
    default: return 0;
    }
  }
  return 0;
}

int ft_load_model(const char *path, ft_graph **out, ft_err *e) {
  *out = NULL;
  size_t len;
  char *buf = read_file(path, &len);
  if (!buf) return ft_fail(e, FT_EIO, "%s: cannot read the model file (missing, unreadable, or not a regular file)", path);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
  int rc = ft_load_model_mem(buf, len, path, dir, out, e);
  free(buf);
  return rc;
}

/* Initializers: named, unique, their data read (external data from the model's folder). */
static int load_initializers(load_ctx *L, const Onnx__GraphProto *gp) {
  ft_graph *g = L->g;
  if (gp->n_sparse_initializer) { /* valid ONNX; read as missing, its readers were called invalid */
    const Onnx__SparseTensorProto *sp = gp->sparse_initializer[0];
    return ft_fail(L->e, FT_EUNSUPPORTED, "%s: the graph has %zu sparse initializers (the first '%s'); ftax does not "
                   "support sparse tensors: store them dense", g->path, gp->n_sparse_initializer,
                   sp->values && sp->values->name ? sp->values->name : "");
  }
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *tp = gp->initializer[i];
    if (!tp->name || !tp->name[0]) return ft_fail(L->e, FT_EINVALID, "%s: initializer #%zu has no name", g->path, i);
    if (ft_value_find(g, tp->name) >= 0) return ft_fail(L->e, FT_EINVALID, "%s: two initializers are named '%s'", g->path, tp->name);
    int vi = ft_value_get(g, tp->name);
    ft_value *v = &g->vals[vi];
    int rc = ft_tensor_from_proto(tp, L->dir, &v->t, L->e);
    if (!rc) { v->kind = FT_V_CONST; v->shape_known = 1; continue; }
    if (L->e->code && !strstr(L->e->msg, g->path)) {
      char tmp[sizeof L->e->msg];
      snprintf(tmp, sizeof tmp, "%.500s: %.1500s", g->path, L->e->msg);
      memcpy(L->e->msg, tmp, sizeof tmp);
    }
    return rc;
  }
  return 0;
}

static int is_sequence(const Onnx__ValueInfoProto *vi) {
  return vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
}

/* A sequence input: in a Loop body it is bound to the sequence the Loop carries, which the
 * compiler lowers into a list of tensors (compiler/passes/sequence.c); the model's own inputs are
 * tensors the program reads, so a sequence there is refused. */
static int sequence_input(ft_graph *g, int v, const Onnx__ValueInfoProto *vi, int subgraph, ft_err *e) {
  if (!subgraph)
    return ft_fail(e, FT_EUNSUPPORTED,
                   "%s: graph input '%s' is a sequence; ftax lowers sequences into tensors at compile time and takes "
                   "only tensors as the model's inputs and outputs (pass the elements as separate inputs)",
                   g->path, vi->name);
  g->vals[v].is_seq = 1;
  return 0;
}

static int load_inputs(load_ctx *L, const Onnx__GraphProto *gp, int subgraph) {
  ft_graph *g = L->g;
  g->inputs = malloc(sizeof(int) * (gp->n_input + 1));
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    if (!vi->name || !vi->name[0]) return ft_fail(L->e, FT_EINVALID, "%s: graph input #%zu has no name", g->path, i);
    for (size_t j = 0; j < i; j++)
      if (gp->input[j]->name && !strcmp(gp->input[j]->name, vi->name))
        return ft_fail(L->e, FT_EINVALID, "%s: two graph inputs are named '%s'", g->path, vi->name);
    int v = ft_value_get(g, vi->name);
    if (g->vals[v].kind == FT_V_CONST) { /* an initializer listed as input: a weight (IR < 4), or a default */
      if (!subgraph && L->m->ir_version >= 4) {
        int *d = realloc(g->defaults, sizeof(int) * (size_t)(g->n_defaults + 1));
        if (d) g->defaults = d;
        int *at = d ? realloc(g->default_at, sizeof(int) * (size_t)(g->n_defaults + 1)) : NULL;
        if (at) g->default_at = at;
        if (!d || !at) return ft_fail(L->e, FT_EIO, "out of memory");
        g->defaults[g->n_defaults] = v;
        g->default_at[g->n_defaults++] = g->n_inputs;
      }
      continue;
    }
    /* a subgraph's inputs (Loop and Scan bodies) may leave their type to the op */
    int untyped = subgraph && (!vi->type || vi->type->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET);
    int rc = untyped ? 0 : is_sequence(vi) ? sequence_input(g, v, vi, subgraph, L->e) : set_value_type(g, v, vi, L->e);
    g->vals[v].kind = FT_V_INPUT;
    g->inputs[g->n_inputs++] = v;
    if (rc) return rc;
  }
  return 0;
}

/* Graph outputs, with the element type and sizes they declare (checked against inference). In a
 * subgraph an output may be a name of an enclosing graph. */
static int load_outputs(load_ctx *L, const Onnx__GraphProto *gp, int subgraph) {
  ft_graph *g = L->g;
  g->outputs = malloc(sizeof(int) * (gp->n_output + 1));
  for (size_t i = 0; i < gp->n_output; i++) {
    const Onnx__ValueInfoProto *vo = gp->output[i];
    if (!vo->name || !vo->name[0]) return ft_fail(L->e, FT_EINVALID, "%s: graph output #%zu has no name", g->path, i);
    int v = subgraph ? ft_value_get(g, vo->name) : ft_value_find(g, vo->name);
    if (v < 0) return ft_fail(L->e, FT_EINVALID, "%s: graph output '%s' is produced by no node", g->path, vo->name);
    g->vals[v].is_output = 1;
    g->outputs[g->n_outputs++] = v;
    const Onnx__TypeProto *tp = vo->type;
    const Onnx__TypeProto__Tensor *tt = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type : NULL;
    if (tt && tt->has_elem_type) g->vals[v].declared_dtype = tt->elem_type;
    g->vals[v].declared_rank = tt && tt->shape && tt->shape->n_dim <= FT_MAX_RANK ? (int)tt->shape->n_dim : -1;
    for (int d = 0; d < g->vals[v].declared_rank; d++) {
      const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
      g->vals[v].declared_dims[d] = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? dim->dim_value : -1;
    }
  }
  return 0;
}

/* value_info: the element type a model declares for a value in the middle is checked too. */
static void load_value_info(ft_graph *g, const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_value_info; i++) {
    const Onnx__ValueInfoProto *vi = gp->value_info[i];
    const Onnx__TypeProto *tp = vi->type;
    int v = vi->name ? ft_value_find(g, vi->name) : -1;
    if (v >= 0 && !g->vals[v].declared_dtype && tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
        tp->tensor_type && tp->tensor_type->has_elem_type)
      g->vals[v].declared_dtype = tp->tensor_type->elem_type;
  }
}

/* The whole of one graph (the model's, or a subgraph) into L->g: values, nodes in an order where
 * each value is written before it is read, outputs; checked against the ONNX rules. */
static int load_graph(load_ctx *L, const Onnx__GraphProto *gp, int subgraph) {
  ft_graph *g = L->g;
  g->name = strdup(gp->name ? gp->name : "");
  int rc = load_initializers(L, gp);
  if (!rc) rc = load_inputs(L, gp, subgraph);
  for (size_t i = 0; i < gp->n_node && !rc; i++) rc = add_node(L, gp->node[i], NULL);
  if (!rc) rc = load_outputs(L, gp, subgraph);
  if (!rc) rc = ft_sort_graph(g, subgraph, L->e);
  if (!rc) load_value_info(g, gp);
  for (int i = 0; i < g->n_outputs && !rc && !subgraph; i++) {
    const ft_value *v = &g->vals[g->outputs[i]];
    if (v->kind == FT_V_ACT && v->producer < 0)
      rc = ft_fail(L->e, FT_EINVALID, "%s: graph output '%s' is produced by no node and is neither an input nor an initializer",
                   g->path, v->name);
  }
  if (!rc) rc = ft_validate_graph(g, L->e);
  return rc;
}

/* A graph attribute (If's branches, Loop and Scan bodies): loaded whole as a graph of its own.
 * The names it reads from enclosing graphs become values of the graph being loaded, recorded in
 * the node's outer list, so the sort and the checks see them as the node's inputs. */
static int load_graph_attr(load_ctx *L, const Onnx__GraphProto *gp, const inline_scope *sc, int ni, ft_attr *a) {
  ft_graph *s = ft_graph_new();
  s->path = strdup(L->g->path);
  s->opset = L->g->opset;
  a->g = s;
  load_ctx sub = {s, L->m, L->dir, L->e, L->sh};
  int rc = load_graph(&sub, gp, 1);
  for (int v = 0; v < s->n_vals && !rc; v++) {
    if (!ft_value_is_outer(s, v)) continue;
    int ov = scoped_value(L, sc, s->vals[v].name);
    if (ov == FT_NOT_IN_SCOPE)
      return ft_fail(L->e, FT_EINVALID, "%s: a subgraph of node '%s' in function '%s' reads '%s', which is neither an "
                     "input of the function nor written in its body", L->g->path, L->g->nodes[ni].name, fn_name(sc->fn),
                     s->vals[v].name);
    if (ov < 0) continue;
    if (strcmp(L->g->vals[ov].name, s->vals[v].name)) {
      char *to = strdup(L->g->vals[ov].name), *from = strdup(s->vals[v].name);
      if (to && from) ft_rename_outer(s, from, to);
      free(to);
      free(from);
      if (!to || !from) return ft_fail(L->e, FT_EIO, "out of memory");
    }
    ft_node *n = &L->g->nodes[ni];
    int seen = 0;
    for (int k = 0; k < n->n_outer; k++) seen |= n->outer[k] == ov;
    if (seen) continue;
    n->outer = realloc(n->outer, sizeof(int) * (size_t)(n->n_outer + 1));
    n->outer[n->n_outer++] = ov;
  }
  return rc;
}

int ft_load_model_mem(const void *data, size_t len, const char *path, const char *dir, ft_graph **out,
                      ft_err *e) {
  *out = NULL;
  const uint8_t *nul = NULL;
  size_t nul_len = 0;
  int wire = pb_nesting_ok(data, (const uint8_t *)data + len, PB_MODEL, 0, &nul, &nul_len);
  if (wire == -1)
    return ft_fail(e, FT_EINVALID, "%s: subgraphs or types nest more than %d deep; not a model ftax reads", path, FT_MAX_NESTING);
  if (wire == -2) {
    char shown[512];
    ft_text_escape_n(shown, sizeof shown, (const char *)nul, nul_len < 120 ? nul_len : 120);
    return ft_fail(e, FT_EINVALID, "%s: the name '%s%s' holds a NUL byte; names in ONNX are text without NUL bytes", path,
                   shown, nul_len > 120 ? "..." : "");
  }
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, (const uint8_t *)data);
  if (!m || !m->graph) {
    if (m) onnx__model_proto__free_unpacked(m, NULL);
    return ft_fail(e, FT_EINVALID, "%s: not a valid ONNX model (the file does not parse as a ModelProto with a graph)", path);
  }
  int rc = check_header(m, path, e);
  if (rc) { onnx__model_proto__free_unpacked(m, NULL); return rc; }
  ft_graph *g = ft_graph_new();
  g->path = strdup(path);
  g->ir_version = m->ir_version;
  g->opset = 0;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const char *d = m->opset_import[i]->domain;
    if (!d || !d[0] || !strcmp(d, "ai.onnx")) g->opset = m->opset_import[i]->version;
  }
  if (!g->opset) g->opset = 1; /* IR versions 1 and 2 had no opset imports */
  load_shared sh = {0};
  rc = names_of_graph(&sh.names, m->graph);
  for (size_t i = 0; i < m->n_functions && !rc; i++) {
    const Onnx__FunctionProto *f = m->functions[i];
    for (size_t k = 0; k < f->n_input && !rc; k++) rc = names_put(&sh.names, f->input[k]);
    for (size_t k = 0; k < f->n_output && !rc; k++) rc = names_put(&sh.names, f->output[k]);
    if (!rc) rc = names_of_nodes(&sh.names, f->node, f->n_node);
  }
  load_ctx L = {g, m, dir, e, &sh};
  rc = rc ? ft_fail(e, FT_EIO, "%s: out of memory", path) : load_graph(&L, m->graph, 0);
  free(sh.names.slot);
  onnx__model_proto__free_unpacked(m, NULL);
  if (rc) { ft_graph_free(g); return rc; }
  *out = g;
  return 0;
}
