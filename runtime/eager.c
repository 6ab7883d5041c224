/* ftax-eager: load a model, then run it node by node like an eager framework (see eager.h).
 *
 * Per node and per run: op->infer on the live tensors (their data present), then op->plan and
 * the kernel, the same sequence ftaxc's constant folding runs (compiler/passes/infer.c fold_node). Ops
 * whose infer produces the data (Shape, Constant, Size: FT_OP_NOEVAL) need no kernel; views
 * (FT_OP_ALIAS) point at their input's storage and hold a reference to it.
 *
 * What an eager framework would not do is left out on purpose: no constant folding, no fusion,
 * no in-place reuse, no memory plan. Constant weights are packed into the kernel's layout once,
 * on first use, as ONNX Runtime and oneDNN-backed frameworks do at session start: the kernels
 * then run exactly as in a compiled program, so the measured difference is framework overhead.
 *
 * On a device (ft_eager_load_on, e.g. --device cuda) the walk is the same; a node whose inputs
 * all live on the host and whose outputs are small integer tensors (shape arithmetic) runs its
 * C kernel on the host, every other node runs the CUDA twin of the kernel its plan picked, on
 * device memory, without waiting for it. Host values a device node reads are copied over (graph
 * constants once, like weights moved to the GPU at load); a device value whose contents an op's
 * shape inference needs is copied back, which waits, as .item() does in PyTorch. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_twins.h"
#include "eager_impl.h"
#include "load.h"

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Prefix a message with the model path, as ft_infer does, unless it already names it. */
static void name_model(ft_err *e, const char *path) {
  if (!e->code || strstr(e->msg, path)) return;
  size_t p = strlen(path) + 2, m = strlen(e->msg);
  if (p >= sizeof e->msg) return;
  if (p + m >= sizeof e->msg) m = sizeof e->msg - 1 - p;
  memmove(e->msg + p, e->msg, m);
  e->msg[p + m] = 0;
  memcpy(e->msg, path, p - 2);
  memcpy(e->msg + p - 2, ": ", 2);
}

/* ---- load ----------------------------------------------------------------------------------- */

/* Graph outputs' dtypes and shapes, from inference in shapes-only mode (the graph that runs
 * keeps every node, but for an If whose condition is known: its branch takes its place). */
static void learn_output_shapes(ft_eager *h) {
  ft_graph *g = h->g;
  for (int i = 0; i < g->n_outputs; i++) {
    h->out_desc[i] = g->vals[g->outputs[i]].t;
    h->out_desc[i].data = NULL;
  }
}

/* The outermost loop entry of node n's guard, or -1. */
static int loop_entry(const ft_node *n) {
  for (int k = 0; k < n->n_guard; k++)
    if (ft_guard_is_loop(n->guard[k])) return n->guard[k];
  return -1;
}

/* loop_first/loop_last of each node: the nodes carrying a loop entry are contiguous. */
static void find_loops(ft_eager *h) {
  const ft_graph *g = h->g;
  for (int i = 0; i < g->n_nodes; i++) {
    int entry = loop_entry(&g->nodes[i]);
    h->loop_first[i] = h->loop_last[i] = -1;
    if (entry < 0) continue;
    int a = i > 0 && loop_entry(&g->nodes[i - 1]) == entry ? h->loop_first[i - 1] : i;
    for (int j = a; j <= i; j++) h->loop_first[j] = a, h->loop_last[j] = i;
  }
}

/* Value v, read by node i, was made before the loop body node i is in. */
static int from_before_loop(const ft_eager *h, int i, int v) {
  return h->loop_first[i] >= 0 && h->g->vals[v].producer < h->loop_first[i];
}

/* Node i reads v (an input or a guard's condition): one use, or one for the whole loop. */
static void count_read(ft_eager *h, int i, int v) {
  if (v < 0) return;
  if (!from_before_loop(h, i, v)) h->uses[v]++;
  else if (h->seen[v] != h->loop_first[i] + 1) h->seen[v] = h->loop_first[i] + 1, h->uses[v]++;
}

static void count_uses(ft_eager *h) {
  const ft_graph *g = h->g;
  for (int i = 0; i < g->n_nodes; i++) {
    for (int k = 0; k < g->nodes[i].n_in; k++) count_read(h, i, g->nodes[i].in[k]);
    for (int k = 0; k < g->nodes[i].n_guard; k++) /* a guard reads its condition */
      count_read(h, i, ft_guard_value(g->nodes[i].guard[k]));
  }
  for (int i = 0; i < g->n_outputs; i++) h->uses[g->outputs[i]]++; /* held until copied out */
  for (int v = 0; v < g->n_vals; v++) h->seen[v] = 0;
}

/* One profile row per op type, and each node's row. */
static void make_rows(ft_eager *h) {
  const ft_graph *g = h->g;
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *n = &g->nodes[i];
    int r = 0;
    while (r < h->n_rows && (strcmp(h->rows[r].op_type, n->op_type) || strcmp(h->rows[r].domain, n->domain))) r++;
    if (r == h->n_rows) {
      h->rows[r].op_type = n->op_type;
      h->rows[r].domain = n->domain;
      h->n_rows++;
    }
    h->node_row[i] = r;
  }
}

/* The nodes the load-time sweep dropped (the branch of a run-time If that cannot run at these
 * shapes is one ftax.Fail node, compiler/passes/infer.c) leave the list. */
static void drop_dead_nodes(ft_graph *g) {
  int w = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    ft_node *n = &g->nodes[i];
    if (!n->dead) { g->nodes[w++] = *n; continue; }
    free(n->name); free(n->op_type); free(n->domain); free(n->in); free(n->out); free(n->outer); free(n->guard);
    for (int k = 0; k < n->n_attrs; k++) ft_attr_free(&n->attrs[k]);
    free(n->attrs);
  }
  g->n_nodes = w;
  for (int v = 0; v < g->n_vals; v++) g->vals[v].producer = -1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_out; k++)
      if (g->nodes[i].out[k] >= 0) g->vals[g->nodes[i].out[k]].producer = i;
}

/* What ftaxc could not fold: the graph inputs, what a node computes from them, and the state of a
 * Loop run at run time (LoopInit and LoopNext never fold). A value that depends only on constants
 * is one ftaxc folds, and checks as a constant; eager checks it the same way. */
static void mark_live(ft_eager *h) {
  const ft_graph *g = h->g;
  for (int i = 0; i < g->n_inputs; i++) h->live[g->inputs[i]] = 1;
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *n = &g->nodes[i];
    int live = n->op && (n->op->flags & FT_OP_EFFECT);
    for (int k = 0; k < n->n_in; k++) live |= n->in[k] >= 0 && h->live[n->in[k]];
    for (int k = 0; k < n->n_outer; k++) live |= n->outer[k] >= 0 && h->live[n->outer[k]];
    for (int k = 0; k < n->n_out && live; k++) if (n->out[k] >= 0) h->live[n->out[k]] = 1;
  }
}

int ft_eager_load(const char *path, const ft_pins *pins, ft_eager **out, ft_err *e) {
  return ft_eager_load_on(path, pins, NULL, out, e);
}

const char *ft_eager_device_name(const ft_eager *h) { return h->dev ? h->dev->name : "cpu"; }

int ft_eager_load_on(const char *path, const ft_pins *pins, const ft_eager_device *dev, ft_eager **out, ft_err *e) {
  static const ft_pins no_pins;
  if (!pins) pins = &no_pins;
  *out = NULL;
  ft_eager *h = calloc(1, sizeof *h);
  if (!h) return ft_fail(e, FT_EIO, "out of memory");
  int rc = ft_load_model(path, &h->g, e);
  if (!rc) rc = ft_resolve_ops(h->g, e);
  if (!rc) rc = ft_keep_defaults(h->g, pins, e);
  if (!rc) rc = ft_upcast_fp16(h->g, e); /* the program's float16 handling, so both compute alike */
  if (!rc) rc = ft_specialize(h->g, pins, e);
  /* before anything is sized by the node count: a branch taken changes the nodes */
  if (!rc) rc = ft_infer(h->g, FT_INFER_SHAPES, e);
  if (rc) { ft_eager_free(h); return rc; }
  drop_dead_nodes(h->g);
  ft_graph *g = h->g;
  size_t nv = (size_t)g->n_vals + 1, nn = (size_t)g->n_nodes + 1;
  h->uses = calloc(nv, sizeof *h->uses);
  h->uses_left = calloc(nv, sizeof *h->uses_left);
  h->root = calloc(nv, sizeof *h->root);
  h->store = calloc(nv, sizeof *h->store);
  h->out_desc = calloc((size_t)g->n_outputs + 1, sizeof *h->out_desc);
  h->out_slot = calloc(nv, sizeof *h->out_slot);
  h->node_row = calloc(nn, sizeof *h->node_row);
  h->packed = calloc(nn, sizeof *h->packed);
  h->rows = calloc(nn, sizeof *h->rows);
  h->sorted = calloc(nn, sizeof *h->sorted);
  h->loop_first = calloc(nn, sizeof *h->loop_first);
  h->loop_last = calloc(nn, sizeof *h->loop_last);
  h->seen = calloc(nv, sizeof *h->seen);
  if (!h->uses || !h->uses_left || !h->root || !h->store || !h->out_desc || !h->out_slot || !h->node_row || !h->rows ||
      !h->sorted || !h->loop_first || !h->loop_last || !h->seen) {
    ft_eager_free(h);
    return ft_fail(e, FT_EIO, "out of memory");
  }
  for (int v = 0; v < g->n_vals; v++) h->root[v] = v, h->out_slot[v] = -1;
  for (int i = g->n_outputs - 1; i >= 0; i--) h->out_slot[g->outputs[i]] = i;
  h->live = calloc(nv, 1);
  if (!h->live) { ft_eager_free(h); return ft_fail(e, FT_EIO, "out of memory"); }
  mark_live(h);
  find_loops(h);
  count_uses(h);
  make_rows(h);
  learn_output_shapes(h);
  for (int i = 0; dev && !rc && i < g->n_nodes; i++)
    if (g->nodes[i].n_guard)
      rc = ft_fail(e, FT_EUNSUPPORTED, "%s: %s is in %s; ftax-eager runs such models with --device cpu", g->path,
                   ft_node_label(g, i), loop_entry(&g->nodes[i]) >= 0 ? "the body of a Loop run at run time"
                   : "a branch of an If whose condition is computed at run time");
  if (dev && !rc) {
    h->dptr = calloc(nv, sizeof *h->dptr);
    h->cdev = calloc(nv, sizeof *h->cdev);
    h->cdev_cls = calloc(nv, sizeof *h->cdev_cls);
    if (!h->dptr || !h->cdev || !h->cdev_cls) rc = ft_fail(e, FT_EIO, "out of memory");
    else if (!(rc = dev->open(&h->dctx, g->n_nodes, e))) h->dev = dev;
  }
  if (rc) { ft_eager_free(h); return rc; }
  *out = h;
  return 0;
}

void ft_eager_free(ft_eager *h) {
  if (!h) return;
  if (h->g)
    for (int i = 0; i < h->g->n_inputs; i++) h->g->vals[h->g->inputs[i]].t.data = NULL; /* the caller's */
  for (int i = 0; h->g && h->packed && i < h->g->n_nodes; i++) free(h->packed[i]);
  if (h->dev) {
    for (int v = 0; v < h->g->n_vals; v++)
      if (h->cdev[v]) h->dev->put(h->dctx, h->cdev[v], h->cdev_cls[v]);
    h->dev->close(h->dctx);
  }
  free(h->dptr); free(h->cdev); free(h->cdev_cls); free(h->live);
  free(h->packed);
  ft_graph_free(h->g);
  ft_cache_release(&h->cache);
  free(h->uses); free(h->uses_left); free(h->root); free(h->store); free(h->out_desc); free(h->out_slot);
  free(h->node_row); free(h->rows); free(h->sorted);
  free(h->loop_first); free(h->loop_last); free(h->seen);
  free(h);
}

int ft_eager_num_inputs(const ft_eager *h) { return h->g->n_inputs; }
int ft_eager_num_outputs(const ft_eager *h) { return h->g->n_outputs; }

const char *ft_eager_io(const ft_eager *h, int is_output, int i, ft_tensor *desc) {
  const ft_graph *g = h->g;
  if (i < 0 || i >= (is_output ? g->n_outputs : g->n_inputs)) return NULL;
  const ft_value *v = &g->vals[is_output ? g->outputs[i] : g->inputs[i]];
  if (desc) {
    *desc = is_output ? h->out_desc[i] : v->t;
    desc->data = NULL;
  }
  return v->name;
}

/* ---- tensors of a run ----------------------------------------------------------------------- */

/* Value v gets storage of its own. */
static void own_storage(ft_eager *h, int v, void *ptr, int own, int cls) {
  h->root[v] = v;
  h->store[v] = (ft_storage){ptr, 1, own, cls};
  h->g->vals[v].t.data = ptr;
}

/* v is done with: drop its reference, and give the storage back when no view still uses it. */
static void release(ft_eager *h, int v) {
  ft_tensor *t = &h->g->vals[v].t;
  if (!t->data && !(h->dptr && h->dptr[v])) return;
  t->data = NULL;
  if (h->dptr) h->dptr[v] = NULL;
  ft_storage *s = &h->store[h->root[v]];
  if (s->own == FT_OWN_NONE || --s->refs > 0) return;
  if (s->own == FT_OWN_CACHE) ft_cache_put(&h->cache, s->ptr, s->cls);
  else if (s->own == FT_OWN_DEVICE) h->dev->put(h->dctx, s->ptr, s->cls);
  else free(s->ptr);
  *s = (ft_storage){0};
}

/* The bytes of value v's tensor, from the shape inference just gave it, computed without overflow:
 * the shape comes from the model and its inputs (a Reshape target, an Expand shape, ConstantOfShape
 * ...), so it is checked like any size read from a file before a buffer of that size is asked for.
 * A size above ft_max_tensor_bytes is refused as unsupported, as ftaxc refuses it. */
static int value_bytes(ft_eager *h, int v, size_t *nb, ft_err *e) {
  const ft_value *val = &h->g->vals[v];
  int r = ft_size_checked(val->t.dtype, val->t.rank, val->t.dims, ft_max_tensor_bytes, nb);
  if (r == -1) return ft_fail(e, FT_EINVALID, "%s: '%s' came out with a negative dim", h->g->path, val->name ? val->name : "");
  if (r) return ft_fail(e, FT_EUNSUPPORTED, "%s: '%s' would take more than %zu bytes, the largest tensor ftax makes", h->g->path,
                        val->name ? val->name : "", ft_max_tensor_bytes);
  return 0;
}

/* Outputs of a node get dense storage from the cache (views and NOEVAL ops excepted). A graph
 * output a kernel computes is written straight into the caller's buffer, as the generated
 * program does, so the tax does not include a copy the compiled program avoids. */
static int alloc_output(ft_eager *h, int v, int on_dev, ft_err *e) {
  int cls;
  const ft_tensor *t = &h->g->vals[v].t;
  int slot = h->out_slot[v];
  size_t nb;
  int rc = value_bytes(h, v, &nb, e);
  if (rc) return rc;
  if (on_dev) { /* device memory: a graph output is copied back at the end of the run */
    void *p = h->dev->alloc(h->dctx, nb, &cls);
    if (!p) return ft_fail(e, FT_EIO, "out of device memory for %zu bytes ('%s')", nb, h->g->vals[v].name);
    own_storage(h, v, NULL, FT_OWN_DEVICE, cls);
    h->store[v].ptr = p;
    h->dptr[v] = p;
    return 0;
  }
  if (slot >= 0) {
    const ft_tensor *d = &h->out_desc[slot];
    int same = t->dtype == d->dtype && t->rank == d->rank;
    for (int k = 0; same && k < d->rank; k++) same = t->dims[k] == d->dims[k];
    if (same) {
      own_storage(h, v, h->outputs[slot], FT_OWN_NONE, 0);
      return 0;
    }
  }
  void *p = ft_cache_get(&h->cache, nb, &cls);
  if (!p) return ft_fail(e, FT_EIO, "out of memory for %zu bytes ('%s')", nb, h->g->vals[v].name);
  own_storage(h, v, p, FT_OWN_CACHE, cls);
  return 0;
}

/* ---- one node ------------------------------------------------------------------------------- */

static int on_device(const ft_eager *h, int v) { return h->dptr && v >= 0 && h->dptr[v]; }

/* Small integer tensors: what shape arithmetic computes (Shape -> Gather -> Concat -> Reshape). */
#define FT_HOST_SHAPE_ELEMS 1024
static int shape_like(const ft_tensor *t) {
  return t->dtype != FT_FLOAT && t->dtype != FT_DOUBLE && t->dtype != FT_FLOAT16 && t->dtype != FT_BFLOAT16 &&
         ft_numel(t) <= FT_HOST_SHAPE_ELEMS;
}

/* Host copies of device inputs, made for a node's shape inference, given back after the node. */
typedef struct mirrors {
  int n, v[FT_MAX_IO], cls[FT_MAX_IO];
  void *ptr[FT_MAX_IO];
} mirrors;

static void drop_mirrors(ft_eager *h, mirrors *m) {
  for (int i = 0; i < m->n; i++) {
    h->g->vals[m->v[i]].t.data = NULL;
    ft_cache_put(&h->cache, m->ptr[i], m->cls[i]);
  }
  m->n = 0;
}

/* Copy the node's small integer device inputs to the host (waits for the device). */
static int mirror_inputs(ft_eager *h, const ft_node *n, mirrors *m, ft_err *e) {
  for (int j = 0; j < n->n_in; j++) {
    int v = n->in[j], dup = 0;
    if (!on_device(h, v) || !shape_like(&h->g->vals[v].t)) continue;
    for (int i = 0; i < m->n; i++) dup |= m->v[i] == v;
    if (dup) continue;
    ft_tensor *t = &h->g->vals[v].t;
    size_t nb;
    int rc = value_bytes(h, v, &nb, e);
    if (rc) return rc;
    void *p = ft_cache_get(&h->cache, nb, &m->cls[m->n]);
    if (!p) return ft_fail(e, FT_EIO, "out of memory");
    m->v[m->n] = v;
    m->ptr[m->n++] = p;
    rc = h->dev->copy(h->dctx, p, h->dptr[v], nb, 0, e);
    if (rc) return rc;
    t->data = p;
  }
  return 0;
}

/* Shape inference of node i on the tensors as they are. On a device, an op that needs the
 * contents of a device input gets them copied back, and infers again. */
static int infer_node(ft_eager *h, int i, ft_opctx *c, mirrors *m, ft_err *e) {
  const ft_node *n = &h->g->nodes[i];
  for (int pass = 0;; pass++) {
    for (int j = 0; j < n->n_out; j++) {
      if (!c->out[j]) continue;
      c->out[j]->dtype = 0;
      c->out[j]->rank = 0;
      c->out[j]->data = NULL;
    }
    int rc = n->op->infer(c);
    if (!rc || pass || !h->dev) return rc;
    int before = m->n;
    if ((rc = mirror_inputs(h, n, m, e))) return rc;
    if (m->n == before) return rc; /* nothing to copy back: the error stands */
    memset(e, 0, sizeof *e);
  }
}

/* A device node's inputs as device pointers: graph constants get their device copy once, host
 * activations are copied for this call only (ups, given back after the launch). */
static int device_inputs(ft_eager *h, const ft_node *n, const void **in, mirrors *ups, ft_err *e) {
  for (int j = 0; j < n->n_in; j++) {
    int v = n->in[j];
    in[j] = NULL;
    if (v < 0) continue;
    if (on_device(h, v)) { in[j] = h->dptr[v]; continue; }
    ft_tensor *t = &h->g->vals[v].t;
    size_t nb;
    int rc = value_bytes(h, v, &nb, e);
    if (rc) return rc;
    int is_const = h->g->vals[v].kind == FT_V_CONST;
    if (is_const && h->cdev[v]) { in[j] = h->cdev[v]; continue; }
    if (!t->data) return ft_fail(e, FT_EINVALID, "%s: %s: input '%s' has no data", h->g->path, ft_node_label(h->g, (int)(n - h->g->nodes)), h->g->vals[v].name);
    int cls;
    void *p = h->dev->alloc(h->dctx, nb, &cls);
    if (!p) return ft_fail(e, FT_EIO, "out of device memory for %zu bytes ('%s')", nb, h->g->vals[v].name);
    rc = h->dev->copy(h->dctx, p, t->data, nb, 1, e);
    if (is_const) h->cdev[v] = p, h->cdev_cls[v] = cls;
    else ups->v[ups->n] = v, ups->ptr[ups->n] = p, ups->cls[ups->n++] = cls;
    if (rc) return rc;
    in[j] = p;
  }
  return 0;
}

static int run_node(ft_eager *h, int i, ft_err *e) {
  ft_graph *g = h->g;
  const ft_node *n = &g->nodes[i];
  if (!strcmp(n->op_type, "Fail") && !strcmp(n->domain, "ftax")) /* a branch that cannot run here was taken */
    return ft_fail(e, FT_EINVALID, "%s: %s", g->path, ft_attr_str(n, "message", "a branch that cannot run was taken"));
  ft_opctx c;
  ft_opctx_init(&c, g, i, e);
  for (int k = 0; k < n->n_in && k < 64; k++) /* run-time data: not checked as a constant would be */
    if (n->in[k] >= 0 && h->live[n->in[k]]) c.live |= (uint64_t)1 << k;
  mirrors m = {0}, ups = {0};
  int rc = infer_node(h, i, &c, &m, e);
  if (rc) { drop_mirrors(h, &m); name_model(e, g->path); return rc; }

  /* infer produced the data itself (Shape, Constant, Size): nothing to run */
  int produced = 1, any = 0;
  for (int j = 0; j < n->n_out; j++)
    if (c.out[j]) { if (c.out[j]->data) any = 1; else produced = 0; }
  if (produced) {
    drop_mirrors(h, &m);
    for (int j = 0; j < n->n_out; j++)
      if (c.out[j]) own_storage(h, n->out[j], c.out[j]->data, FT_OWN_MALLOC, 0);
    return 0;
  }
  if (any)
    for (int j = 0; j < n->n_out; j++)
      if (c.out[j]) ft_tensor_free_data(c.out[j]);
  if (n->op->flags & FT_OP_NOEVAL) {
    drop_mirrors(h, &m);
    return ft_fail(e, FT_EUNSUPPORTED, "%s: %s computed no data for its outputs", g->path, ft_node_label(g, i));
  }

  if (n->op->flags & FT_OP_ALIAS) { /* a view: output 0 is input 0's bytes */
    drop_mirrors(h, &m);
    if (!c.out[0] || !c.in[0]) return ft_fail(e, FT_EINVALID, "%s: %s: a view needs input 0 and output 0", g->path, ft_node_label(g, i));
    int r = h->root[n->in[0]];
    h->root[n->out[0]] = r;
    if (on_device(h, n->in[0])) h->dptr[n->out[0]] = h->dptr[n->in[0]];
    else c.out[0]->data = c.in[0]->data;
    if (h->store[r].own != FT_OWN_NONE) h->store[r].refs++;
    for (int j = 1; j < n->n_out; j++) { /* Dropout's mask in inference: all zero as in folding */
      if (!c.out[j]) continue;
      if ((rc = alloc_output(h, n->out[j], 0, e))) return rc;
      memset(c.out[j]->data, 0, ft_nbytes(c.out[j]));
    }
    return 0;
  }

  /* where it runs: on a device, everything but shape arithmetic on host values */
  int dev = 0;
  if (h->dev) {
    for (int j = 0; j < n->n_in; j++) dev |= on_device(h, n->in[j]);
    for (int j = 0; j < n->n_out; j++) dev |= c.out[j] && !shape_like(c.out[j]);
  }
  ft_kcall k;
  memset(&k, 0, sizeof k);
  k.prepack.input = -1;
  rc = n->op->plan(&c, &k);
  drop_mirrors(h, &m);
  if (rc) { name_model(e, g->path); return rc; }
  const void *in[FT_MAX_IO];
  void *out[FT_MAX_IO];
  for (int j = 0; j < n->n_in; j++) in[j] = c.in[j] ? c.in[j]->data : NULL;
  if (dev) {
    char why[128];
    if (ft_cuda_twin_fits(&k, why, sizeof why))
      return ft_fail(e, FT_EUNSUPPORTED, "%s: %s: kernel %s has no %s twin (%s); run it with --device cpu", g->path,
                     ft_node_label(g, i), k.entry ? k.entry->name : "(none)", h->dev->name, why);
    if ((rc = device_inputs(h, n, in, &ups, e))) goto give_back;
    for (int j = 0; j < n->n_out; j++) {
      out[j] = NULL;
      if (!c.out[j]) continue;
      if ((rc = alloc_output(h, n->out[j], 1, e))) goto give_back;
      out[j] = h->dptr[n->out[j]];
    }
    rc = h->dev->launch(h->dctx, i, &k, in, out, h->profiling, e);
    if (rc) {
      char msg[sizeof e->msg];
      snprintf(msg, sizeof msg, "%s", e->msg);
      ft_fail(e, rc, "%s: %s: %s", g->path, ft_node_label(g, i), msg);
    }
  give_back:
    for (int j = 0; j < ups.n; j++) h->dev->put(h->dctx, ups.ptr[j], ups.cls[j]); /* stream order keeps them until read */
    return rc;
  }
  int pi = k.prepack.input;
  if (pi >= 0 && n->in[pi] >= 0 && g->vals[n->in[pi]].kind == FT_V_CONST) {
    if (!h->packed[i]) {
      size_t nb = k.prepack.pack(k.p, in[pi], NULL);
      h->packed[i] = nb <= SIZE_MAX - 64 ? aligned_alloc(64, (nb + 63) & ~(size_t)63) : NULL;
      if (!h->packed[i]) return ft_fail(e, FT_EIO, "out of memory packing the weights of %s", ft_node_label(g, i));
      k.prepack.pack(k.p, in[pi], h->packed[i]);
    }
    in[pi] = h->packed[i];
    k.p[k.prepack.flag_p] = 1;
  }
  for (int j = 0; j < n->n_out; j++) {
    out[j] = NULL;
    if (!c.out[j]) continue;
    if ((rc = alloc_output(h, n->out[j], 0, e))) return rc;
    out[j] = c.out[j]->data;
  }
  void *scratch = NULL;
  int scls = 0;
  if (k.scratch && !(scratch = ft_cache_get(&h->cache, k.scratch, &scls)))
    return ft_fail(e, FT_EIO, "out of memory for %zu bytes of scratch (%s)", k.scratch, ft_node_label(g, i));
  if (h->profiling) {
    int64_t t0 = now_ns();
    k.entry->fn(k.p, k.f, in, out, scratch);
    int64_t dt = now_ns() - t0;
    h->rows[h->node_row[i]].kernel_ns += dt;
    h->kernel_ns += dt;
  } else {
    k.entry->fn(k.p, k.f, in, out, scratch);
  }
  if (scratch) ft_cache_put(&h->cache, scratch, scls);
  return 0;
}

/* ---- a run ---------------------------------------------------------------------------------- */

/* Node n is in no If branch, or in the branches taken (their conditions were computed on the
 * host: a device run refuses guarded nodes at load). */
static int guard_holds(const ft_eager *h, const ft_node *n) {
  for (int k = 0; k < n->n_guard; k++) {
    const ft_tensor *t = &h->g->vals[ft_guard_value(n->guard[k])].t;
    int truth = t->data && *(const unsigned char *)t->data;
    if (truth == ft_guard_negated(n->guard[k])) return 0;
  }
  return 1;
}

/* Node i read v: one use less, and v's storage goes back after its last (a read of a value made
 * before a loop counts at the loop's end, loop_exit). */
static void read_done(ft_eager *h, int i, int v) {
  if (v < 0 || h->g->vals[v].kind != FT_V_ACT || from_before_loop(h, i, v)) return;
  if (--h->uses_left[v] == 0) release(h, v);
}

/* Node i ends a loop body (first..i): 1 when the body runs again (its flag holds), and then the
 * values it makes count their uses afresh; 0 when the loop is over, and then the values it read
 * from before it are done with once. */
static int loop_again(ft_eager *h, int i) {
  const ft_graph *g = h->g;
  int first = h->loop_first[i];
  const ft_tensor *go = &g->vals[ft_guard_value(loop_entry(&g->nodes[i]))].t;
  if (go->data && *(const unsigned char *)go->data) {
    for (int j = first; j <= i; j++)
      for (int k = 0; k < g->nodes[j].n_out; k++)
        if (g->nodes[j].out[k] >= 0) h->uses_left[g->nodes[j].out[k]] = h->uses[g->nodes[j].out[k]];
    return 1;
  }
  if (h->stamp == INT32_MAX) { /* stamps start over */
    for (int v = 0; v < g->n_vals; v++) h->seen[v] = 0;
    h->stamp = 0;
  }
  h->stamp++;
  for (int j = first; j <= i; j++) {
    const ft_node *n = &g->nodes[j];
    for (int k = 0; k < n->n_in + n->n_guard; k++) {
      int v = k < n->n_in ? n->in[k] : ft_guard_value(n->guard[k - n->n_in]);
      if (v < 0 || !from_before_loop(h, j, v) || h->seen[v] == h->stamp) continue;
      h->seen[v] = h->stamp;
      if (g->vals[v].kind == FT_V_ACT && --h->uses_left[v] == 0) release(h, v);
    }
  }
  return 0;
}

int ft_eager_run(ft_eager *h, const void *const *inputs, void *const *outputs, ft_err *e) {
  int64_t t_run = h->profiling ? now_ns() : 0;
  ft_graph *g = h->g;
  memcpy(h->uses_left, h->uses, sizeof(int) * (size_t)g->n_vals);
  h->outputs = outputs;
  int rc = 0;
  for (int i = 0; i < g->n_inputs; i++) {
    int v = g->inputs[i];
    if (!h->dev) {
      own_storage(h, v, (void *)inputs[i], FT_OWN_NONE, 0);
      continue;
    }
    /* on a device the inputs are copied over first, as a framework's model(x.cuda()) does */
    if (rc || (rc = alloc_output(h, v, 1, e))) continue;
    rc = h->dev->copy(h->dctx, h->dptr[v], inputs[i], ft_nbytes(&g->vals[v].t), 1, e);
  }
  for (int i = 0; i < g->n_nodes && !rc; i++) {
    const ft_node *n = &g->nodes[i];
    int64_t t_node = h->profiling ? now_ns() : 0;
    if (guard_holds(h, n)) rc = run_node(h, i, e); /* else a branch not taken: nothing to run */
    if (rc) break;
    for (int k = 0; k < n->n_guard; k++) read_done(h, i, ft_guard_value(n->guard[k]));
    /* each input read for the last time, and each output nobody reads, is released now */
    for (int k = 0; k < n->n_in; k++) read_done(h, i, n->in[k]);
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] >= 0 && h->uses[n->out[k]] == 0) release(h, n->out[k]);
    if (h->profiling) {
      ft_eager_oprow *r = &h->rows[h->node_row[i]];
      r->calls++;
      r->node_ns += now_ns() - t_node;
    }
    if (h->loop_last[i] == i && loop_again(h, i)) i = h->loop_first[i] - 1; /* back to the body's first node */
  }
  for (int i = 0; i < g->n_outputs && !rc; i++) {
    const ft_value *v = &g->vals[g->outputs[i]];
    const ft_tensor *d = &h->out_desc[i];
    int dev = on_device(h, g->outputs[i]);
    int same = v->t.dtype == d->dtype && v->t.rank == d->rank && (v->t.data || dev);
    for (int k = 0; same && k < d->rank; k++) same = v->t.dims[k] == d->dims[k];
    if (!same)
      rc = ft_fail(e, FT_EINVALID, "%s: output '%s' came out with another type or shape than inference at load time gave",
                   g->path, v->name);
    else if (dev) rc = h->dev->copy(h->dctx, outputs[i], h->dptr[g->outputs[i]], ft_nbytes(d), 0, e);
    else if (v->t.data != outputs[i]) memcpy(outputs[i], v->t.data, ft_nbytes(d)); /* views, constants, inputs */
  }
  if (h->dev) { /* everything queued has run (or failed); the device's kernel times are known */
    int frc = h->dev->finish(h->dctx, e);
    if (!rc) rc = frc;
    for (int i = 0; h->profiling && i < g->n_nodes; i++) {
      int64_t ns = h->dev->node_ns(h->dctx, i);
      if (ns < 0) continue;
      h->rows[h->node_row[i]].kernel_ns += ns;
      h->kernel_ns += ns;
    }
  }
  /* whatever is still live (the outputs; everything after an error) goes back */
  for (int v = 0; v < g->n_vals; v++)
    if (g->vals[v].kind == FT_V_ACT) release(h, v);
  for (int i = 0; i < g->n_inputs; i++) {
    if (h->dev) release(h, g->inputs[i]);
    g->vals[g->inputs[i]].t.data = NULL;
  }
  h->outputs = NULL;
  if (h->profiling) { /* failed runs count too: their kernel time is in the rows */
    h->runs++;
    h->wall_ns += now_ns() - t_run;
  }
  return rc;
}
