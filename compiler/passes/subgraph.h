/* Inlining the subgraphs of control-flow nodes into the graph that holds them (subgraph.c), shared
 * by If (branch.c) and Loop and Scan (loop.c). */
#ifndef FTAX_SUBGRAPH_H
#define FTAX_SUBGRAPH_H

#include "passes.h"

/* Append the nodes of subgraph b of control node i to g. b's inputs read binds[0..b->n_inputs);
 * the names b reads from enclosing graphs resolve as node i sees them; every other value of b is
 * a new value of g, named as in b, else "name@tag" (then "name#k") where g has the name already.
 * The nodes are named "<node i>/<tag>/<name>" and guarded by guard[0..n_guard). outs[k]: the
 * value b's output k became. what names b in messages ("then_branch", "body"). */
int ft_inline_subgraph(ft_graph *g, int i, const ft_graph *b, const char *what, const int *binds, const char *tag,
                       const int *guard, int n_guard, int *outs, ft_err *e);
/* A node appended to g, guarded as node i is, its op resolved. */
ft_node *ft_add_node_like(ft_graph *g, int i, const char *name, const char *op_type, const char *domain, int n_in,
                          int n_out);
/* The nodes appended to g from index `from` on take the place of node i, which goes. */
void ft_replace_node(ft_graph *g, int i, int from);
/* A new value of g named name (made unique as above), for values the expansion adds itself. */
int ft_add_unique_value(ft_graph *g, const char *name, const char *tag);
/* A new constant named after node i ("NODE/what"): a scalar (n 0) or a 1-D tensor of n elements,
 * 8-byte elements or fewer, its data zeroed for the caller to fill. */
int ft_add_node_const(ft_graph *g, int i, const char *what, int dtype, int64_t n);
/* A condition computed at run time (value cond of node i) is one bool, the byte the program tests. */
int ft_check_condition(const ft_graph *g, int i, int cond, ft_err *e);

/* out = pieces[0..n) joined along `axis` by op "Stack" (a new dim) or "Concat" (an existing
 * one): one node, or nodes of groups and a Concat above them (an op takes FT_MAX_IO inputs). */
int ft_join_into(ft_graph *g, int i, const char *op, const int *pieces, int n, int64_t axis, int out, ft_err *e);
/* FT_EINVALID naming node i when axis (from the model) does not fit op ("Stack": a new axis,
 * "Concat": an existing one) over pieces of rank r; r < 0 (not known yet) passes. */
int ft_join_axis_check(const ft_graph *g, int i, const char *op, int r, int64_t axis, ft_err *e);

#endif
