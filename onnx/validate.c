/* The loader's last step: check the graph against the ONNX specification before any stage sees
 * it. Op shape inference may then rely on what the specification promises (input and output
 * counts, required inputs present, attributes of the declared type), and a model that breaks
 * those rules is refused here, once, with the node named, instead of crashing or being half
 * understood later. Checks that need shapes (sizes, broadcasting, index ranges) belong to
 * inference. */
#include <stdio.h>
#include <string.h>

#include "load.h"
#include "schema.h"

/* Operator versions newer than the generated table (it stops at python3-onnx's opset): the ones
 * whose signature changed or that ftax implements. */
static const ft_schema_attr no_attrs[] = {{0, 0, 0}};
static const ft_schema_attr gelu_attrs[] = {{"approximate", 3, 0}, {0, 0, 0}};
static const ft_schema_attr groupnorm_attrs[] = {{"epsilon", 1, 0}, {"num_groups", 2, 1}, {"stash_type", 2, 0}, {0, 0, 0}};
static const ft_schema_attr reduce18_attrs[] = {{"keepdims", 2, 0}, {"noop_with_empty_axes", 2, 0}, {0, 0, 0}};
static const ft_schema_attr pad18_attrs[] = {{"mode", 3, 0}, {0, 0, 0}};
static const ft_schema_attr dft20_attrs[] = {{"inverse", 2, 0}, {"onesided", 2, 0}, {0, 0, 0}};
static const ft_schema_attr col2im_attrs[] = {{"dilations", 7, 0}, {"pads", 7, 0}, {"strides", 7, 0}, {0, 0, 0}};
#define REDUCE18(op) {"", op, 18, 1, 2, 1, 1, 0x1u, 0x1u, reduce18_attrs}
static const ft_schema newer[] = {
    {"", "BitwiseAnd", 18, 2, 2, 1, 1, 0x3u, 0x1u, no_attrs},
    {"", "BitwiseNot", 18, 1, 1, 1, 1, 0x1u, 0x1u, no_attrs},
    {"", "BitwiseOr", 18, 2, 2, 1, 1, 0x3u, 0x1u, no_attrs},
    {"", "BitwiseXor", 18, 2, 2, 1, 1, 0x3u, 0x1u, no_attrs},
    {"", "Col2Im", 18, 3, 3, 1, 1, 0x7u, 0x1u, col2im_attrs},
    {"", "DFT", 20, 1, 3, 1, 1, 0x1u, 0x1u, dft20_attrs},
    {"", "Gelu", 20, 1, 1, 1, 1, 0x1u, 0x1u, gelu_attrs},
    {"", "GroupNormalization", 18, 3, 3, 1, 1, 0x7u, 0x1u, groupnorm_attrs},
    {"", "Pad", 18, 2, 4, 1, 1, 0x3u, 0x1u, pad18_attrs},
    REDUCE18("ReduceL1"), REDUCE18("ReduceL2"), REDUCE18("ReduceLogSum"), REDUCE18("ReduceLogSumExp"),
    REDUCE18("ReduceMax"), REDUCE18("ReduceMean"), REDUCE18("ReduceMin"), REDUCE18("ReduceProd"),
    REDUCE18("ReduceSumSquare"),
};

static const ft_schema *newest(const ft_schema *rows, int n, const char *domain, const char *op, int64_t opset,
                               const ft_schema *best) {
  for (int i = 0; i < n; i++)
    if (rows[i].since <= opset && !strcmp(rows[i].op_type, op) && !strcmp(rows[i].domain, domain) &&
        (!best || rows[i].since > best->since))
      best = &rows[i];
  return best;
}

const ft_schema *ft_schema_find(const char *domain, const char *op_type, int64_t opset) {
  const ft_schema *s = newest(ft_schemas, ft_n_schemas, domain, op_type, opset, NULL);
  return newest(newer, (int)(sizeof newer / sizeof newer[0]), domain, op_type, opset, s);
}

static const char *attr_type_name(int t) {
  static const char *names[] = {"undefined", "float", "int", "string", "tensor", "graph", "floats", "ints", "strings"};
  return t >= 0 && t <= 8 ? names[t] : "another kind";
}

/* Attributes that hold a data type code. */
static int is_dtype_attr(const char *name) {
  return !strcmp(name, "to") || !strcmp(name, "dtype") || !strcmp(name, "output_dtype") || !strcmp(name, "output_datatype") ||
         !strcmp(name, "stash_type");
}

static int check_attrs(const ft_graph *g, int i, const ft_schema *s, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  for (int a = 0; a < n->n_attrs; a++) {
    const ft_attr *at = &n->attrs[a];
    for (int b = 0; b < a; b++)
      if (!strcmp(n->attrs[b].name, at->name))
        return ft_fail(e, FT_EINVALID, "%s: %s has attribute '%s' twice", g->path, ft_node_label(g, i), at->name);
    const ft_schema_attr *sa = NULL;
    for (const ft_schema_attr *x = s ? s->attrs : NULL; x && x->name; x++)
      if (!strcmp(x->name, at->name)) sa = x;
    /* the generated table knows every attribute up to its opset; later versions added some */
    if (!sa && s && g->opset <= ft_schema_opset && at->name[0])
      return ft_fail(e, FT_EINVALID, "%s: %s has attribute '%s', which %s (opset %d) does not define", g->path,
                     ft_node_label(g, i), at->name, n->op_type, s->since);
    if (sa && sa->type != at->type)
      return ft_fail(e, FT_EINVALID, "%s: %s: attribute '%s' is given as %s; %s takes %s", g->path,
                     ft_node_label(g, i), at->name, attr_type_name(at->type), n->op_type, attr_type_name(sa->type));
    if (sa && sa->type == FT_ATTR_INT && is_dtype_attr(at->name)) {
      if (at->i <= FT_UNDEFINED || at->i > FT_DTYPE_LAST)
        return ft_fail(e, FT_EINVALID, "%s: %s: attribute '%s' is %lld, which is not an ONNX data type", g->path,
                       ft_node_label(g, i), at->name, (long long)at->i);
      if (!ft_dtype_size((int)at->i))
        return ft_fail(e, FT_EUNSUPPORTED, "%s: %s: attribute '%s' asks for data type %s, which ftax does not support",
                       g->path, ft_node_label(g, i), at->name, ft_dtype_name((int)at->i));
    }
  }
  for (const ft_schema_attr *x = s ? s->attrs : NULL; x && x->name; x++)
    if (x->required && !ft_attr_find(n, x->name))
      return ft_fail(e, FT_EINVALID, "%s: %s lacks attribute '%s', which %s requires", g->path, ft_node_label(g, i),
                     x->name, n->op_type);
  return 0;
}

/* Count and presence of inputs and outputs against the signature. */
static int check_arity(const ft_graph *g, int i, const ft_schema *s, ft_err *e) {
  const ft_node *n = &g->nodes[i];
  const char *what[2] = {"input", "output"};
  const int count[2] = {n->n_in, n->n_out}, lo[2] = {s->min_in, s->min_out}, hi[2] = {s->max_in, s->max_out};
  const uint32_t req[2] = {s->required_in, s->required_out};
  const int *vals[2] = {n->in, n->out};
  for (int k = 0; k < 2; k++) {
    if (hi[k] < 255 && count[k] > hi[k])
      return ft_fail(e, FT_EINVALID, "%s: %s has %d %ss; %s (opset %d) takes at most %d", g->path, ft_node_label(g, i),
                     count[k], what[k], n->op_type, s->since, hi[k]);
    if (count[k] < lo[k])
      return ft_fail(e, FT_EINVALID, "%s: %s has %d %ss; %s (opset %d) needs at least %d", g->path, ft_node_label(g, i),
                     count[k], what[k], n->op_type, s->since, lo[k]);
    for (int j = 0; j < 32; j++)
      if ((req[k] >> j & 1) && (j >= count[k] || vals[k][j] < 0))
        return ft_fail(e, FT_EINVALID, "%s: %s: %s %d is required by %s but is missing (an empty name omits it)",
                       g->path, ft_node_label(g, i), what[k], j, n->op_type);
  }
  return 0;
}

int ft_validate_graph(const ft_graph *g, ft_err *e) {
  if (!g->n_outputs) return ft_fail(e, FT_EINVALID, "%s: the graph has no outputs", g->path);
  for (int i = 0; i < g->n_nodes; i++) {
    const ft_node *n = &g->nodes[i];
    if (!strcmp(n->domain, "ftax"))
      return ft_fail(e, FT_EINVALID, "%s: %s is in the domain 'ftax', which belongs to ftax's own fused ops; a model cannot use it",
                     g->path, ft_node_label(g, i));
    int produced = 0;
    for (int k = 0; k < n->n_out; k++) produced |= n->out[k] >= 0;
    if (!produced) return ft_fail(e, FT_EINVALID, "%s: %s has no outputs", g->path, ft_node_label(g, i));
    /* the training domain has had one version */
    const ft_schema *s = ft_schema_find(n->domain, n->op_type, n->domain[0] ? 1 : g->opset);
    int rc = s ? check_arity(g, i, s, e) : 0;
    if (!rc) rc = check_attrs(g, i, s, e);
    if (rc) return rc;
  }
  return 0;
}
