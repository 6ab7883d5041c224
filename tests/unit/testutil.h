/* Shared helpers for the Criterion unit tests (included by each tests/unit/test_*.c; not a test
 * itself, so the test glob skips it).
 *
 *   tb_*  build ONNX ModelProtos in C with the protobuf-c bindings and write them to files, so
 *         every model a test uses is spelled out next to the assertions about it;
 *   tu_*  temporary folders, files and running the ftax tools as child processes; tu_one_*
 *         runs one node through its op descriptor (infer, plan, kernel) without a model file.
 *
 * The builders never free: Criterion runs each test in its own process, which exits right
 * after the test. */
#ifndef FTAX_TESTUTIL_H
#define FTAX_TESTUTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load.h"
#include "onnx.pb-c.h"
#include "passes.h"

/* ---- ONNX protos ------------------------------------------------------------------------ */

#define TB_PUSH(arr, n, x)                                   \
  do {                                                       \
    (arr) = realloc((arr), sizeof *(arr) * ((n) + 1));       \
    (arr)[(n)++] = (x);                                      \
  } while (0)

static char *tb_str(const char *s) { return s ? strdup(s) : NULL; }

/* Split "a,b,,c" into names; an empty entry is an omitted optional input (""). */
static size_t tb_names(const char *list, char ***out) {
  size_t n = 0;
  *out = NULL;
  if (!list || !list[0]) return 0;
  char *copy = strdup(list), *s = copy;
  for (;;) {
    char *comma = strchr(s, ',');
    if (comma) *comma = 0;
    TB_PUSH(*out, n, strdup(s));
    if (!comma) break;
    s = comma + 1;
  }
  free(copy);
  return n;
}

static Onnx__TensorProto *tb_tensor(const char *name, int dtype, int rank, const int64_t *dims) {
  Onnx__TensorProto *t = calloc(1, sizeof *t);
  onnx__tensor_proto__init(t);
  t->name = tb_str(name);
  t->has_data_type = 1;
  t->data_type = dtype;
  t->n_dims = (size_t)rank;
  t->dims = calloc((size_t)rank + 1, sizeof(int64_t));
  if (rank) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  return t;
}

static void tb_raw(Onnx__TensorProto *t, const void *data, size_t nbytes) {
  t->has_raw_data = 1;
  t->raw_data.len = nbytes;
  t->raw_data.data = malloc(nbytes ? nbytes : 1);
  memcpy(t->raw_data.data, data, nbytes);
}

static void tb_floats(Onnx__TensorProto *t, const float *v, size_t n) {
  t->n_float_data = n;
  t->float_data = malloc(sizeof(float) * (n ? n : 1));
  memcpy(t->float_data, v, sizeof(float) * n);
}

static void tb_doubles(Onnx__TensorProto *t, const double *v, size_t n) {
  t->n_double_data = n;
  t->double_data = malloc(sizeof(double) * (n ? n : 1));
  memcpy(t->double_data, v, sizeof(double) * n);
}

static void tb_int64s(Onnx__TensorProto *t, const int64_t *v, size_t n) {
  t->n_int64_data = n;
  t->int64_data = malloc(sizeof(int64_t) * (n ? n : 1));
  memcpy(t->int64_data, v, sizeof(int64_t) * n);
}

static void tb_int32s(Onnx__TensorProto *t, const int32_t *v, size_t n) {
  t->n_int32_data = n;
  t->int32_data = malloc(sizeof(int32_t) * (n ? n : 1));
  memcpy(t->int32_data, v, sizeof(int32_t) * n);
}

static void tb_uint64s(Onnx__TensorProto *t, const uint64_t *v, size_t n) {
  t->n_uint64_data = n;
  t->uint64_data = malloc(sizeof(uint64_t) * (n ? n : 1));
  memcpy(t->uint64_data, v, sizeof(uint64_t) * n);
}

/* A float32 tensor with raw_data. */
static Onnx__TensorProto *tb_tensor_f32(const char *name, int rank, const int64_t *dims, const float *v) {
  Onnx__TensorProto *t = tb_tensor(name, FT_FLOAT, rank, dims);
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  tb_raw(t, v, n * sizeof(float));
  return t;
}

/* An int64 tensor with int64_data. */
static Onnx__TensorProto *tb_tensor_i64(const char *name, int rank, const int64_t *dims, const int64_t *v) {
  Onnx__TensorProto *t = tb_tensor(name, FT_INT64, rank, dims);
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  tb_int64s(t, v, n);
  return t;
}

static void tb_external(Onnx__TensorProto *t, const char *key, const char *value) {
  Onnx__StringStringEntryProto *e = calloc(1, sizeof *e);
  onnx__string_string_entry_proto__init(e);
  e->key = tb_str(key);
  e->value = tb_str(value);
  TB_PUSH(t->external_data, t->n_external_data, e);
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* A tensor value: shape "batch,4" (a name is a symbolic dim, "?" a dim without name or size),
 * "" for a scalar, NULL for no shape at all. */
static Onnx__ValueInfoProto *tb_value(const char *name, int dtype, const char *shape) {
  Onnx__ValueInfoProto *v = calloc(1, sizeof *v);
  onnx__value_info_proto__init(v);
  v->name = tb_str(name);
  Onnx__TypeProto *tp = calloc(1, sizeof *tp);
  onnx__type_proto__init(tp);
  Onnx__TypeProto__Tensor *tt = calloc(1, sizeof *tt);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = dtype;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  v->type = tp;
  if (!shape) return v;
  Onnx__TensorShapeProto *sp = calloc(1, sizeof *sp);
  onnx__tensor_shape_proto__init(sp);
  tt->shape = sp;
  char **dims;
  size_t n = tb_names(shape, &dims);
  for (size_t i = 0; i < n; i++) {
    Onnx__TensorShapeProto__Dimension *d = calloc(1, sizeof *d);
    onnx__tensor_shape_proto__dimension__init(d);
    char *end;
    long long x = strtoll(dims[i], &end, 10);
    if (end != dims[i] && !*end) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d->dim_value = x;
    } else if (strcmp(dims[i], "?") != 0) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      d->dim_param = dims[i];
    }
    TB_PUSH(sp->dim, sp->n_dim, d);
  }
  return v;
}

/* A node: inputs and outputs as comma-separated names. */
static Onnx__NodeProto *tb_node(const char *op_type, const char *name, const char *inputs, const char *outputs) {
  Onnx__NodeProto *n = calloc(1, sizeof *n);
  onnx__node_proto__init(n);
  n->op_type = tb_str(op_type);
  n->name = tb_str(name);
  n->n_input = tb_names(inputs, &n->input);
  n->n_output = tb_names(outputs, &n->output);
  return n;
}

static Onnx__AttributeProto *tb_attr(Onnx__NodeProto *n, const char *name, int type) {
  Onnx__AttributeProto *a = calloc(1, sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = tb_str(name);
  a->has_type = 1;
  a->type = type;
  TB_PUSH(n->attribute, n->n_attribute, a);
  return a;
}

static void tb_attr_int(Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = tb_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

static void tb_attr_float(Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = tb_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
}

static void tb_attr_string(Onnx__NodeProto *n, const char *name, const char *v) {
  Onnx__AttributeProto *a = tb_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.len = strlen(v);
  a->s.data = (uint8_t *)strdup(v);
}

static void tb_attr_ints(Onnx__NodeProto *n, const char *name, const int64_t *v, size_t k) {
  Onnx__AttributeProto *a = tb_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = k;
  a->ints = malloc(sizeof(int64_t) * (k ? k : 1));
  memcpy(a->ints, v, sizeof(int64_t) * k);
}

static void tb_attr_floats(Onnx__NodeProto *n, const char *name, const float *v, size_t k) {
  Onnx__AttributeProto *a = tb_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  a->n_floats = k;
  a->floats = malloc(sizeof(float) * (k ? k : 1));
  memcpy(a->floats, v, sizeof(float) * k);
}

static void tb_attr_strings(Onnx__NodeProto *n, const char *name, const char *const *v, size_t k) {
  Onnx__AttributeProto *a = tb_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  a->n_strings = k;
  a->strings = calloc(k ? k : 1, sizeof *a->strings);
  for (size_t i = 0; i < k; i++) {
    a->strings[i].len = strlen(v[i]);
    a->strings[i].data = (uint8_t *)strdup(v[i]);
  }
}

static void tb_attr_tensor(Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t) {
  Onnx__AttributeProto *a = tb_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = t;
}

static void tb_attr_graph(Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g) {
  Onnx__AttributeProto *a = tb_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  a->g = g;
}

/* Inside a function body: attribute `name` takes the caller's attribute `ref`. */
static void tb_attr_ref(Onnx__NodeProto *n, const char *name, const char *ref, int type) {
  Onnx__AttributeProto *a = tb_attr(n, name, type);
  a->ref_attr_name = tb_str(ref);
}

static Onnx__GraphProto *tb_graph(const char *name) {
  Onnx__GraphProto *g = calloc(1, sizeof *g);
  onnx__graph_proto__init(g);
  g->name = tb_str(name);
  return g;
}

static void tb_add_node(Onnx__GraphProto *g, Onnx__NodeProto *n) { TB_PUSH(g->node, g->n_node, n); }
static void tb_add_input(Onnx__GraphProto *g, Onnx__ValueInfoProto *v) { TB_PUSH(g->input, g->n_input, v); }
static void tb_add_output(Onnx__GraphProto *g, Onnx__ValueInfoProto *v) { TB_PUSH(g->output, g->n_output, v); }
static void tb_add_init(Onnx__GraphProto *g, Onnx__TensorProto *t) { TB_PUSH(g->initializer, g->n_initializer, t); }

static void tb_opset(Onnx__OperatorSetIdProto ***arr, size_t *n, const char *domain, int64_t version) {
  Onnx__OperatorSetIdProto *o = calloc(1, sizeof *o);
  onnx__operator_set_id_proto__init(o);
  o->domain = tb_str(domain);
  o->has_version = 1;
  o->version = version;
  TB_PUSH(*arr, *n, o);
}

/* A model around g importing ai.onnx at `opset` (0: no opset import at all). */
static Onnx__ModelProto *tb_model(Onnx__GraphProto *g, int64_t opset) {
  Onnx__ModelProto *m = calloc(1, sizeof *m);
  onnx__model_proto__init(m);
  m->has_ir_version = 1;
  m->ir_version = 8;
  m->producer_name = tb_str("ftax-tests");
  m->graph = g;
  if (opset) tb_opset(&m->opset_import, &m->n_opset_import, "", opset);
  return m;
}

static Onnx__FunctionProto *tb_function(const char *domain, const char *name, const char *inputs,
                                        const char *outputs, const char *attrs) {
  Onnx__FunctionProto *f = calloc(1, sizeof *f);
  onnx__function_proto__init(f);
  f->domain = tb_str(domain);
  f->name = tb_str(name);
  f->n_input = tb_names(inputs, &f->input);
  f->n_output = tb_names(outputs, &f->output);
  f->n_attribute = tb_names(attrs, &f->attribute);
  return f;
}

static void tb_add_function(Onnx__ModelProto *m, Onnx__FunctionProto *f) { TB_PUSH(m->functions, m->n_functions, f); }

static void tb_write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  cr_assert(f, "cannot create %s", path);
  cr_assert_eq(fwrite(data, 1, n, f), n);
  cr_assert_eq(fclose(f), 0);
}

static void tb_write_model(const Onnx__ModelProto *m, const char *path) {
  size_t n = onnx__model_proto__get_packed_size(m);
  uint8_t *buf = malloc(n ? n : 1);
  cr_assert_eq(onnx__model_proto__pack(m, buf), n);
  tb_write_bytes(path, buf, n);
  free(buf);
}

/* ---- files and processes ---------------------------------------------------------------- */

static char *tu_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *tu_fmt(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  cr_assert(vasprintf(&s, fmt, ap) >= 0);
  va_end(ap);
  return s;
}

/* A fresh folder under the build tree (build/test-tmp/), not /tmp: runs of several checkouts
 * and helpers on one machine stay apart, and a crashed test's leftovers sit next to its build. */
static char *tu_tmpdir(void) {
  char *base = tu_fmt("%s/test-tmp", FTAX_BUILD_DIR);
  mkdir(base, 0777);
  char *dir = tu_fmt("%s/XXXXXX", base);
  cr_assert(mkdtemp(dir), "mkdtemp under %s", base);
  free(base);
  return dir;
}

static int tu_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st; (void)flag; (void)ftw;
  return remove(path);
}

static void tu_rmtree(const char *dir) { nftw(dir, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static int tu_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static char *tu_read(const char *path, size_t *len) {
  if (len) *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  buf[got] = 0;
  if (len) *len = got;
  return buf;
}

/* Names in dir (not . and ..), joined by spaces: for messages about stray files. */
static char *tu_listdir(const char *dir) {
  char *cmd = tu_fmt("ls -A '%s' 2>/dev/null | tr '\\n' ' '", dir);
  FILE *p = popen(cmd, "r");
  char buf[4096] = "";
  size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
  buf[n] = 0;
  if (p) pclose(p);
  free(cmd);
  return strdup(buf);
}

/* Run argv (NULL-terminated) in folder cwd (NULL: this one); stdout and stderr together go to
 * *output when given. Returns the exit status, or 128 + signal. */
static int tu_run(const char *cwd, char **output, char *const argv[]) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    if (cwd && chdir(cwd)) _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  ssize_t r;
  while ((r = read(fds[0], buf + len, cap - len - 1)) > 0) {
    len += (size_t)r;
    if (cap - len < 2) buf = realloc(buf, cap *= 2);
  }
  buf[len] = 0;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (output) *output = buf; else free(buf);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- the compiler's pipeline, in process ------------------------------------------------ */

static ft_graph *tu_load(const char *path) {
  ft_graph *g = NULL;
  ft_err e = {0};
  int rc = ft_load_model(path, &g, &e);
  cr_assert_eq(rc, 0, "loading %s failed (%d): %s", path, rc, e.msg);
  return g;
}

/* Write m to a file in dir and load it back. */
static ft_graph *tu_roundtrip(const Onnx__ModelProto *m, const char *dir, const char *file) {
  char *path = tu_fmt("%s/%s", dir, file);
  tb_write_model(m, path);
  ft_graph *g = tu_load(path);
  free(path);
  return g;
}

/* Every live node of g, by op type, as "Add,Reshape" (for messages and checks). */
static char *tu_live_ops(const ft_graph *g) {
  char *s = strdup("");
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].dead) continue;
    char *t = tu_fmt("%s%s%s", s, s[0] ? "," : "", g->nodes[i].op_type);
    free(s);
    s = t;
  }
  return s;
}

/* ---- one node through its descriptor: infer, plan, kernel ----------------------------------
 * A graph of a single node whose inputs carry data, for testing an op family's descriptor and
 * kernels directly (no model file, no compiler passes). */

typedef struct tu_one {
  ft_graph *g;
  ft_node *n;
} tu_one;

/* What a test keeps until its end (graphs it compares, reports, buffers) is handed to tu_keep /
 * tu_keep_graph and freed when the test process exits, so leak detection in the sanitizer build
 * reports only what ftax itself loses. */
static void **tu_kept;
static ft_graph **tu_kept_graphs;
static int tu_n_kept, tu_n_kept_graphs, tu_keep_registered;
static void tu_free_kept(void) {
  for (int i = 0; i < tu_n_kept; i++) free(tu_kept[i]);
  for (int i = 0; i < tu_n_kept_graphs; i++) ft_graph_free(tu_kept_graphs[i]);
  free(tu_kept);
  free(tu_kept_graphs);
  tu_kept = NULL; tu_kept_graphs = NULL;
  tu_n_kept = tu_n_kept_graphs = 0;
}
static void *tu_keep(void *p) {
  if (!tu_keep_registered++) atexit(tu_free_kept);
  tu_kept = realloc(tu_kept, sizeof *tu_kept * (size_t)(tu_n_kept + 1));
  tu_kept[tu_n_kept++] = p;
  return p;
}
static ft_graph *tu_keep_graph(ft_graph *g) {
  if (!tu_keep_registered++) atexit(tu_free_kept);
  tu_kept_graphs = realloc(tu_kept_graphs, sizeof *tu_kept_graphs * (size_t)(tu_n_kept_graphs + 1));
  tu_kept_graphs[tu_n_kept_graphs++] = g;
  return g;
}

static tu_one tu_one_new(const char *op, int opset, int n_in, int n_out) {
  tu_one o;
  o.g = ft_graph_new(); /* the test frees it */
  o.g->opset = opset;
  o.g->path = strdup("test");
  o.n = ft_node_add(o.g, "n", op, "", n_in, n_out);
  for (int i = 0; i < n_out; i++) o.n->out[i] = ft_value_add(o.g, NULL);
  return o;
}

/* Input i with the given dtype, shape and contents (copied; NULL: zeros). Returns its data. */
static void *tu_one_input(tu_one *o, int i, int dtype, int rank, const int64_t *dims, const void *data) {
  int v = ft_value_add(o->g, NULL);
  ft_value *val = &o->g->vals[v];
  val->t.dtype = dtype;
  val->t.rank = rank;
  for (int d = 0; d < rank; d++) val->t.dims[d] = dims[d];
  size_t nb = ft_nbytes(&val->t);
  val->t.data = calloc(nb + 8, 1);
  if (data) memcpy(val->t.data, data, nb);
  val->shape_known = 1;
  o->n->in[i] = v;
  return val->t.data;
}

static ft_attr *tu_one_attr(tu_one *o, const char *name, int type) {
  o->n->attrs = realloc(o->n->attrs, sizeof(ft_attr) * (o->n->n_attrs + 1));
  ft_attr *a = &o->n->attrs[o->n->n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = strdup(name);
  a->type = type;
  return a;
}
static void tu_one_attr_int(tu_one *o, const char *name, int64_t v) { tu_one_attr(o, name, FT_ATTR_INT)->i = v; }
static void tu_one_attr_ints(tu_one *o, const char *name, const int64_t *v, int n) {
  ft_attr *a = tu_one_attr(o, name, FT_ATTR_INTS);
  a->ints = malloc(sizeof(int64_t) * (n ? n : 1));
  memcpy(a->ints, v, sizeof(int64_t) * n);
  a->n_ints = n;
}
static void tu_one_attr_str(tu_one *o, const char *name, const char *s) {
  ft_attr *a = tu_one_attr(o, name, FT_ATTR_STRING);
  a->s = strdup(s);
  a->s_len = strlen(s);
}

/* Infer, plan and run into freshly allocated outputs. Slots past the node's inputs and outputs
 * hold a pointer no kernel may follow. With in_place, output 0 overwrites a copy of input 0 (the
 * buffer sharing the memory planner sets up), so the two must be the same size. */
static void tu_one_run(tu_one *o, int in_place) {
  ft_err e = {0};
  o->n->op = ft_op_find("", o->n->op_type);
  cr_assert(o->n->op, "%s is not in the op table", o->n->op_type);
  ft_opctx c;
  ft_opctx_init(&c, o->g, 0, &e);
  cr_assert_eq(o->n->op->infer(&c), 0, "infer: %s", e.msg);
  ft_kcall k;
  memset(&k, 0, sizeof k);
  k.prepack.input = -1;
  cr_assert_eq(o->n->op->plan(&c, &k), 0, "plan: %s", e.msg);
  const void *in[FT_MAX_IO];
  void *out[FT_MAX_IO];
  for (int i = 0; i < FT_MAX_IO; i++) { in[i] = (const void *)8; out[i] = (void *)8; }
  for (int i = 0; i < o->n->n_in; i++) in[i] = c.in[i] ? c.in[i]->data : NULL;
  for (int i = 0; i < o->n->n_out; i++) {
    c.out[i]->data = calloc(ft_nbytes(c.out[i]) + 8, 1);
    out[i] = c.out[i]->data;
  }
  if (in_place) {
    cr_assert_eq(ft_nbytes(c.in[0]), ft_nbytes(c.out[0]), "in place: input 0 and output 0 differ in size");
    memcpy(out[0], in[0], ft_nbytes(c.in[0]));
    in[0] = out[0];
  }
  cr_assert_eq(ft_kcall_run(&k, in, out, &e), 0, "run: %s", e.msg);
}

static const ft_tensor *tu_one_output(tu_one *o, int i) { return &o->g->vals[o->n->out[i]].t; }

#endif
