/* Helpers the transformer fusions share (fuse_layernorm.c, fuse_skip_layernorm.c,
 * fuse_embed_layernorm.c, fuse_gelu.c, fuse_gemm_epilogue.c): looking at operands, checking that
 * intermediates are private to a match, rewriting a match into one node that may sit earlier
 * than the last node it replaces, and the layer-norm matcher the three layer-norm passes use.
 * Implemented in fuse_tf.c. */
#ifndef FTAX_FUSE_TF_H
#define FTAX_FUSE_TF_H

#include "fuse.h"

#define TF_MAX_NODES 24

/* Node i is live and op_type `op` of domain `dom` ("" for ONNX's, "ftax"). */
int tf_is(const ft_graph *g, int i, const char *dom, const char *op);
/* The producer of v when it is a live ONNX `op` node, else -1. */
int tf_prod(const ft_graph *g, int v, const char *op);
/* Node i has two inputs and v is one of them: the other one; else -1. */
int tf_other(const ft_graph *g, int i, int v);
/* The one live node reading v (once), or -1 when v has other readers or is a graph output. */
int tf_sole_reader(ft_fuse_ctx *c, int v);
/* How often v is read by nodes outside nodes[0..n) (a graph output counts as a read). */
int tf_outside_uses(ft_fuse_ctx *c, int v, const int *nodes, int n);
/* Every value the nodes produce, except `keep`, is read only by these nodes. */
int tf_private(ft_fuse_ctx *c, const int *nodes, int n, int keep);
/* Two values of the same known shape. */
int tf_same_shape(const ft_graph *g, int a, int b);
/* v is float32 with one value per element of a last axis of size n: shape [n] or [1,...,1,n],
 * of rank at most max_rank (so that it broadcasts along rows and nothing else). */
int tf_row(const ft_graph *g, int v, int64_t n, int max_rank);
/* v exists before node `at` runs: a constant, a graph input, or made by an earlier node. */
int tf_ready(const ft_graph *g, int v, int at);
/* A scalar constant within tol of want. */
int tf_const_near(const ft_graph *g, int v, double want, double tol);

/* Rewrite a match into one "ftax" node at position `at` (one of the matched nodes): inputs ins,
 * outputs outs, the other matched nodes (dead[]) removed. The fused node may take the place of
 * the first node of a match rather than the last when it also outputs an intermediate others
 * read (a residual sum): every input must then be ready at `at` (tf_ready), and every reader of
 * every output comes later anyway. Values `at` produced and no longer does lose their producer. */
ft_node *tf_rewrite(ft_fuse_ctx *c, int at, const char *op_type, const int *ins, int n_in, const int *outs,
                    int n_out, const int *dead, int n_dead);

/* A layer normalization over the last axis ending at node i, in any of the forms the passes
 * know: the exporters' chain ReduceMean -> Sub -> Pow(2) -> ReduceMean -> Add(eps) -> Sqrt ->
 * Div (or Mul by Reciprocal) -> Mul(gamma) [-> Add(beta)], with x - mean computed once or twice;
 * ONNX LayerNormalization (opset 17) with axis -1 and only Y used; ftax.LayerNorm. */
typedef struct tf_ln {
  int x, gamma, beta; /* values; beta -1 when absent */
  float eps;
  int y;              /* the normalized output */
  int nodes[TF_MAX_NODES], n; /* the nodes of the match (node i among them) */
} tf_ln;
/* 1 on a match. With notes set, a chain that is a layer norm in structure but fails a check
 * (axes, constants, shapes, a private intermediate read elsewhere) gets a near-miss note; m->n
 * then still lists its nodes (0 when the structure did not match). */
int tf_match_ln(ft_fuse_ctx *c, int i, tf_ln *m, int notes);

#endif
