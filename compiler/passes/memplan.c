/* Stage: the memory plan.
 *
 * Inputs and outputs live in the caller's buffers, constants in the weights blob, and every
 * other value in one activation arena. Views (Reshape...) share their input's storage; an
 * in-place op may write over an input that dies at that node (any input of its size, or only
 * the one its descriptor names: FT_OP_INPLACE_ONLY). Each arena block gets a
 * lifetime [first def, last use] in execution order and is placed largest first at the lowest
 * offset that is free across its lifetime; offsets are 64-byte aligned.
 *
 * The nodes of an If's branches (guarded, compiler/passes/branch.c) are planned like any others,
 * in their one order: then_branch, else_branch, the merge. Only one branch runs, so lifetimes in
 * that order are conservative: a value of one branch may share bytes with the other's, and an
 * in-place write in a branch only reuses a value that no later node reads, whichever ran. A
 * condition lives until the last node it guards.
 *
 * The body of a Loop run at run time (guard entry FT_GUARD_LOOP, compiler/passes/loop.c) runs
 * again after its last call: a value made before the body and read in it lives until the body's
 * end, or the next iteration would read bytes another value took over. Values made in the body
 * are made again in each iteration before they are read, and the state (the flag, the counter,
 * the carried values) is read by LoopNext, the body's last call.
 *
 * Concat elision: when a Concat's output is one contiguous run of its inputs (every dim before
 * the axis is 1), each input's producer can write straight into its slice of the output, and the
 * Concat runs no call. The input's storage group (it, its views, the in-place writes before it)
 * joins the output's group at the slice's byte offset; every member keeps that offset within the
 * root. It is done in execution order with the views and in-place writes, so a later in-place
 * write over a slice or over the output sees the merged group's lifetime and happens only when
 * the whole output and every slice are dead. An input qualifies only if it is an arena
 * activation covering its whole group (not a graph input, output, constant, nor a member of
 * another Concat's output) and appears once; a Concat elides all its inputs or none. Slices
 * start at multiples of 64 bytes, so every pointer stays as aligned as a block. Graphs with
 * run-time If or Loop (guarded nodes) and the CUDA target (lw->no_concat_elision) keep their
 * copies. */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

#define ALIGN(x) (((x) + 63) & ~(int64_t)63)

typedef struct block { int64_t size, start, end, offset; int id; } block;

static int by_size_desc(const void *a, const void *b) {
  const block *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->id - y->id;
}

static int by_offset(const void *a, const void *b) {
  const block *x = *(const block *const *)a, *y = *(const block *const *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Place blocks greedily; returns the arena size. */
static int64_t place(block *bl, int n) {
  qsort(bl, (size_t)n, sizeof *bl, by_size_desc);
  block **live = malloc(sizeof(block *) * (n + 1));
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    int m = 0;
    for (int j = 0; j < i; j++)
      if (bl[j].start <= bl[i].end && bl[i].start <= bl[j].end) live[m++] = &bl[j];
    qsort(live, (size_t)m, sizeof *live, by_offset);
    int64_t off = 0;
    for (int j = 0; j < m; j++) {
      if (live[j]->offset - off >= bl[i].size) break;
      int64_t end = live[j]->offset + live[j]->size;
      if (end > off) off = end;
    }
    bl[i].offset = off;
    if (off + bl[i].size > total) total = off + bl[i].size;
  }
  free(live);
  return total;
}

/* The steps [first, end] of the loop body whose guard entry is `entry`. */
static void loop_steps(const ft_graph *g, const ft_lowered *lw, int entry, int *first, int *end) {
  *first = *end = -1;
  for (int s = 0; s < lw->n; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    for (int k = 0; k < n->n_guard; k++)
      if (n->guard[k] == entry) {
        if (*first < 0) *first = s;
        *end = s;
      }
  }
}

/* Values read in a loop body but made before it live until the body's end (see the top). */
static void stretch_into_loops(const ft_graph *g, const ft_lowered *lw, const int64_t *def, int64_t *last) {
  for (int s = 0; s < lw->n; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    for (int k = 0; k < n->n_guard; k++) {
      int first = -1, end = -1;
      if (!ft_guard_is_loop(n->guard[k])) continue;
      loop_steps(g, lw, n->guard[k], &first, &end);
      if (first != s) continue; /* each loop once, at its first step */
      for (int t = first; t <= end; t++) {
        const ft_node *m = &g->nodes[lw->order[t]];
        for (int j = 0; j < m->n_in; j++)
          if (m->in[j] >= 0 && def[m->in[j]] < first && last[m->in[j]] < end) last[m->in[j]] = end;
        for (int j = 0; j < m->n_guard; j++) {
          int v = ft_guard_value(m->guard[j]);
          if (def[v] < first && last[v] < end) last[v] = end;
        }
      }
    }
  }
}

/* Whether the Concat at step s can be elided (see the top): its output y is a fresh arena
 * activation, the dims before the axis are all 1, and each input is the whole of a distinct arena
 * group that ends 64-byte aligned within y. */
static int concat_elidable(const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const int64_t *def,
                           const int64_t *sub, int s) {
  const ft_node *n = &g->nodes[lw->order[s]];
  if (strcmp(n->op_type, "Concat") || (n->domain[0] && strcmp(n->domain, "ai.onnx")) || !lw->calls[s].entry) return 0;
  int y = n->out[0];
  if (n->n_out != 1 || y < 0 || n->n_in < 1 || mp->root[y] != y || mp->storage[y] != FT_S_NONE ||
      g->vals[y].kind != FT_V_ACT)
    return 0;
  const ft_tensor *t = &g->vals[y].t;
  int64_t axis = ft_attr_int(n, "axis", 0);
  if (axis < 0) axis += t->rank;
  if (axis < 0 || axis >= t->rank) return 0;
  for (int d = 0; d < axis; d++) if (t->dims[d] != 1) return 0;
  int64_t off = 0;
  for (int k = 0; k < n->n_in; k++) {
    int x = n->in[k];
    if (x < 0) return 0;
    int rx = mp->root[x];
    if (off % 64 || rx == y || g->vals[x].kind != FT_V_ACT || g->vals[rx].kind != FT_V_ACT ||
        mp->storage[rx] != FT_S_NONE || def[rx] < 0 || def[rx] >= s || sub[x] != 0 ||
        ft_nbytes(&g->vals[x].t) != ft_nbytes(&g->vals[rx].t) || g->vals[x].t.dtype != t->dtype)
      return 0;
    for (int j = 0; j < k; j++) if (mp->root[n->in[j]] == rx) return 0; /* one place per group */
    off += (int64_t)ft_nbytes(&g->vals[x].t);
  }
  return off == (int64_t)ft_nbytes(t);
}

/* Graphs with run-time control flow keep their Concats: LoopNext and the If merges reason about
 * which values share bytes through views only (compiler/ops/control.c). */
static int has_control_flow(const ft_graph *g, const ft_lowered *lw) {
  for (int s = 0; s < lw->n; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    if (n->n_guard || (!strcmp(n->domain, "ftax") &&
                       (!strcmp(n->op_type, "IfMerge") || !strcmp(n->op_type, "LoopInit") || !strcmp(n->op_type, "LoopNext"))))
      return 1;
  }
  return 0;
}

/* def[v], last[v]: the steps that write value v and read it last, in execution order. */
static void lifetimes(const ft_graph *g, const ft_lowered *lw, int64_t *def, int64_t *last) {
  for (int s = 0; s < lw->n; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0) def[n->out[k]] = s;
    for (int k = 0; k < n->n_in; k++) if (n->in[k] >= 0) last[n->in[k]] = s;
    for (int k = 0; k < n->n_guard; k++) last[ft_guard_value(n->guard[k])] = s; /* the `if` reads it */
  }
  stretch_into_loops(g, lw, def, last);
  for (int v = 0; v < g->n_vals; v++) if (last[v] < def[v]) last[v] = def[v];
}

int ft_plan_memory(ft_graph *g, const ft_lowered *lw, ft_memplan *mp, ft_err *e) {
  (void)e;
  int nv = g->n_vals;
  memset(mp, 0, sizeof *mp);
  mp->root = malloc(sizeof(int) * nv);
  mp->storage = calloc((size_t)nv, sizeof(int));
  mp->offset = malloc(sizeof(int64_t) * nv);
  mp->scratch = malloc(sizeof(int64_t) * (lw->n + 1));
  mp->elided = calloc((size_t)lw->n + 1, 1);
  int64_t *def = malloc(sizeof(int64_t) * nv), *last = malloc(sizeof(int64_t) * nv);
  int64_t *sub = calloc((size_t)nv + 1, sizeof(int64_t)); /* byte offset of a member within its root */
  for (int v = 0; v < nv; v++) { mp->root[v] = v; mp->offset[v] = -1; def[v] = -1; last[v] = -1; }

  /* storage classes that do not come from the arena */
  for (int i = 0; i < g->n_inputs; i++) { mp->storage[g->inputs[i]] = FT_S_INPUT; mp->offset[g->inputs[i]] = i; }
  for (int i = 0; i < g->n_outputs; i++) {
    int v = g->outputs[i];
    if (mp->storage[v] == FT_S_NONE && g->vals[v].kind == FT_V_ACT) { mp->storage[v] = FT_S_OUTPUT; mp->offset[v] = i; }
  }

  lifetimes(g, lw, def, last);

  /* views, in-place writes and elided Concats: share the root's storage, extend its lifetime */
  int elide = !lw->no_concat_elision && !has_control_flow(g, lw);
  for (int s = 0; s < lw->n; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    int o = n->out[0];
    if (o < 0 || mp->storage[o] == FT_S_OUTPUT) continue;
    if (elide && concat_elidable(g, lw, mp, def, sub, s)) {
      /* each input's group moves into its slice of o; o's block starts with the first producer */
      int64_t off = 0;
      for (int k = 0; k < n->n_in; k++) {
        int rx = mp->root[n->in[k]];
        for (int v = 0; v < nv; v++)
          if (mp->root[v] == rx) { mp->root[v] = o; sub[v] += off; }
        if (def[rx] < def[o]) def[o] = def[rx];
        if (last[rx] > last[o]) last[o] = last[rx];
        off += (int64_t)ft_nbytes(&g->vals[n->in[k]].t);
      }
      mp->elided[s] = 1;
      mp->n_concat++;
      continue;
    }
    int r = -1, src = -1; /* src: the value whose bytes o takes */
    if ((n->op->flags & FT_OP_ALIAS) && !lw->calls[s].entry) {
      src = n->in[0];
      r = mp->root[src];
      mp->n_alias++;
    } else if ((n->op->flags & FT_OP_INPLACE) && !lw->calls[s].no_inplace) {
      int only = FT_OP_INPLACE_INPUT(n->op->flags); /* -1: any input will do */
      for (int k = 0; k < n->n_in && r < 0; k++) {
        int in = n->in[k];
        if (in < 0 || (only >= 0 && k != only)) continue;
        int rt = mp->root[in];
        const ft_value *iv = &g->vals[in], *ov = &g->vals[o];
        if (g->vals[rt].kind != FT_V_ACT || mp->storage[rt] != FT_S_NONE) continue;
        if (ft_nbytes(&iv->t) != ft_nbytes(&ov->t) || ft_dtype_size(iv->t.dtype) != ft_dtype_size(ov->t.dtype) ||
            ft_numel(&iv->t) != ft_numel(&ov->t))
          continue;
        if (last[rt] != s) continue; /* still read later */
        int other_use = 0;           /* the same buffer must not feed another input of this node */
        for (int j = 0; j < n->n_in; j++) if (j != k && n->in[j] >= 0 && mp->root[n->in[j]] == rt) other_use = 1;
        if (other_use) continue;
        r = rt;
        src = in;
        mp->n_inplace++;
      }
    }
    if (r < 0) continue;
    sub[o] = sub[src];
    mp->root[o] = r;
    if (last[o] > last[r]) last[r] = last[o];
    if (def[r] < 0) def[r] = s;
  }
  /* propagate lifetimes of members to roots (views of views) */
  for (int v = 0; v < nv; v++) {
    int r = mp->root[v];
    if (last[v] > last[r]) last[r] = last[v];
  }

  block *bl = malloc(sizeof(block) * (nv + lw->n + 1));
  int nb = 0;
  for (int v = 0; v < nv; v++) {
    if (mp->root[v] != v || mp->storage[v] != FT_S_NONE || g->vals[v].kind != FT_V_ACT || def[v] < 0) continue;
    bl[nb] = (block){ALIGN((int64_t)ft_nbytes(&g->vals[v].t)), def[v], last[v], 0, v};
    if (bl[nb].size == 0) bl[nb].size = 64;
    nb++;
  }
  for (int s = 0; s < lw->n; s++) {
    mp->scratch[s] = -1;
    if (lw->calls[s].scratch) bl[nb++] = (block){ALIGN((int64_t)lw->calls[s].scratch), s, s, 0, nv + s};
  }
  /* the lower bound: the most bytes alive at one step */
  for (int s = 0; s < lw->n; s++) {
    size_t sum = 0;
    for (int b = 0; b < nb; b++) if (bl[b].start <= s && s <= bl[b].end) sum += (size_t)bl[b].size;
    if (sum > mp->lower_bound) mp->lower_bound = sum;
  }
  mp->arena_bytes = (size_t)place(bl, nb);
  for (int b = 0; b < nb; b++) {
    if (bl[b].id < nv) { mp->storage[bl[b].id] = FT_S_ARENA; mp->offset[bl[b].id] = bl[b].offset; }
    else mp->scratch[bl[b].id - nv] = bl[b].offset;
  }
  /* constants used by the program go to the weights blob */
  int64_t woff = 0;
  for (int s = 0; s < lw->n; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    for (int k = 0; k < n->n_in; k++) {
      int v = n->in[k];
      if (v < 0 || g->vals[v].kind != FT_V_CONST || mp->storage[v] == FT_S_WEIGHT) continue;
      mp->storage[v] = FT_S_WEIGHT;
      mp->offset[v] = woff;
      woff += ALIGN((int64_t)ft_nbytes(&g->vals[v].t));
    }
  }
  for (int i = 0; i < g->n_outputs; i++) { /* constant outputs are copied from the weights */
    int v = g->outputs[i];
    if (g->vals[v].kind == FT_V_CONST && mp->storage[v] != FT_S_WEIGHT) {
      mp->storage[v] = FT_S_WEIGHT;
      mp->offset[v] = woff;
      woff += ALIGN((int64_t)ft_nbytes(&g->vals[v].t));
    }
  }
  mp->weight_bytes = (size_t)woff;
  /* members take their root's storage, at their place in it (only arena roots have slices) */
  for (int v = 0; v < nv; v++) {
    int r = mp->root[v];
    if (r != v) { mp->storage[v] = mp->storage[r]; mp->offset[v] = mp->offset[r] + sub[v]; }
  }
  free(sub);
  free(bl);
  free(def);
  free(last);
  return 0;
}

/* Every value a call reads or writes, every condition a guard tests and every graph output has a
 * place (arena, weights, an input or output buffer): a value without one would be emitted as a
 * NULL pointer, which the program dereferences. Checked between planning and emission, so a pass
 * that forgets a value fails here, naming it, instead of writing a program that crashes. */
static int no_place(const ft_graph *g, const ft_memplan *mp, int v, const char *node, const char *what, ft_err *e) {
  return ft_fail(e, FT_EUNSUPPORTED, "%s: internal error: value '%s' (%s %s) has no place in the memory plan; ftax "
                 "cannot compile this model (please report it)", g->path, g->vals[v].name, what, node);
}

int ft_check_plan(const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, ft_err *e) {
  for (int s = 0; s < lw->n; s++) {
    if (!lw->calls[s].entry || mp->elided[s]) continue;
    const ft_node *n = &g->nodes[lw->order[s]];
    const char *label = ft_node_label(g, lw->order[s]);
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0 && mp->storage[n->in[k]] == FT_S_NONE) return no_place(g, mp, n->in[k], label, "read by", e);
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] >= 0 && mp->storage[n->out[k]] == FT_S_NONE) return no_place(g, mp, n->out[k], label, "written by", e);
    for (int k = 0; k < n->n_guard; k++) {
      int v = ft_guard_value(n->guard[k]);
      if (mp->storage[v] == FT_S_NONE) return no_place(g, mp, v, label, "the condition guarding", e);
    }
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (mp->storage[g->outputs[i]] == FT_S_NONE) return no_place(g, mp, g->outputs[i], "the graph", "an output of", e);
  return 0;
}

void ft_memplan_free(ft_memplan *mp) {
  free(mp->root);
  free(mp->storage);
  free(mp->offset);
  free(mp->scratch);
  free(mp->elided);
  memset(mp, 0, sizeof *mp);
}
