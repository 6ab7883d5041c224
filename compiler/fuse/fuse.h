/* Graph fusion: rewrite subgraphs that exporters write as chains of primitive ops (LayerNorm,
 * GELU, attention, GEMM + bias + activation, Conv + activation ...) into single ops of the
 * private "ftax" domain. Fused ops are ordinary table ops: they infer, plan and run like any
 * other, so the emitter and ftax-eager need nothing special.
 *
 * Each pattern is a pass (compiler/fuse/fuse_*.c) listed in fuse.c's table; `--no-fuse` turns all of
 * them off and `--no-fuse=a,b` the named ones. A pass rewrites a match in place: the last node
 * of the matched chain becomes the fused node (so node order stays topological), the others are
 * marked dead. A pass must check everything a rewrite relies on (single use of intermediates,
 * constant operands, shapes) and, when a candidate almost matches, say why with ft_fuse_note. */
#ifndef FTAX_FUSE_H
#define FTAX_FUSE_H

#include <stdio.h>

#include "op.h"

#define FT_FUSE_MAX_NOTES 64

typedef struct ft_fuse_ctx {
  ft_graph *g;
  int *n_uses;  /* per value: how many live node inputs (and graph outputs) read it */
  int matches;  /* of the running pass */
  char notes[FT_FUSE_MAX_NOTES][256];
  int n_notes;
  ft_err *err;
} ft_fuse_ctx;

typedef struct ft_fuse_pass {
  const char *name;                /* as in --no-fuse=NAME */
  int (*run)(ft_fuse_ctx *c);      /* 0, or an exit code with err set */
} ft_fuse_pass;

typedef struct ft_fuse_opts {
  int all_off;           /* --no-fuse */
  const char *disabled;  /* --no-fuse=a,b */
  FILE *report;          /* --report: per pass, matches and near-misses */
} ft_fuse_opts;

int ft_fuse(ft_graph *g, const ft_fuse_opts *o, ft_err *e);
/* The names of every pass, comma-separated (for messages and --help). */
const char *ft_fuse_pass_names(void);

/* ---- helpers for patterns (compiler/fuse/fuse.c) ---------------------------------------------- */

/* The live node producing value v, or -1 (inputs, constants). */
int ft_producer(const ft_graph *g, int v);
/* Is node i live and of this (default-domain) op type? */
int ft_is_op(const ft_graph *g, int i, const char *op_type);
/* The live nodes reading v; returns the count (at most max written). */
int ft_consumers(const ft_graph *g, int v, int *out, int max);
/* v is a constant holding a single element (any shape of numel 1); its value in *x. */
int ft_const_scalar(const ft_graph *g, int v, double *x);
/* Within tolerance: a scalar constant equal to want. */
int ft_const_is(const ft_graph *g, int v, double want, double tol);
/* Record why a candidate at node i did not fuse ("mask shape not constant"). */
void ft_fuse_note(ft_fuse_ctx *c, int node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Turn node `last` into domain "ftax" op `op_type` with these inputs (value indices, -1 for
 * none) and no attributes, and mark the nodes in `dead` dead. Use counts are updated. Returns
 * the node. Attributes can then be added with ft_node_set_*. */
ft_node *ft_fuse_rewrite(ft_fuse_ctx *c, int last, const char *op_type, const int *ins, int n_in,
                         const int *dead, int n_dead);
void ft_node_set_int(ft_node *n, const char *name, int64_t v);
void ft_node_set_float(ft_node *n, const char *name, float v);
void ft_node_set_ints(ft_node *n, const char *name, const int64_t *v, int count);
void ft_node_set_floats(ft_node *n, const char *name, const float *v, int count);
void ft_node_set_string(ft_node *n, const char *name, const char *s);
/* Add a new constant value (data copied) and return its index. */
int ft_add_const(ft_graph *g, const char *name, const ft_tensor *t);

#endif
