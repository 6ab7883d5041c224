/* The scalar ops (templates/common/scalar_ops.h) as a table the compiler looks ops up in: the
 * op table's unary family takes their attributes and defaults from here, the fusion passes
 * their ids (ftax.Elementwise's opcodes, the epilogues' activation codes) and parameters. */
#ifndef FTAX_SCALAR_TABLE_H
#define FTAX_SCALAR_TABLE_H

#include "ir.h"
#include "scalar_ops.h"

enum { FT_SOP_K_NONE = 0, FT_SOP_K_KERNEL, FT_SOP_K_KERNEL_C }; /* the rows' kernels */

typedef struct ft_sop {
  int id;            /* FT_SOP_<ID> */
  const char *fn;    /* kernel name stem: ft_<fn>_f32 */
  const char *name;  /* the ONNX op, and the activation name of the fused ops */
  int kernels;       /* FT_SOP_K_*: standalone float kernels or not */
  int n_params;      /* a and b: 0 for unary and binary ops, 2 for parameter ops */
  const char *attr[2];
  float dflt[2];
} ft_sop;

/* The row of id, or NULL. */
const ft_sop *ft_sop_by_id(int64_t id);
/* The row named name ("Mish", "GeluTanh"), or NULL. */
const ft_sop *ft_sop_by_name(const char *name);

/* The unary or parameter scalar op node n computes on its first input, with its parameters
 * (attributes, their defaults, or Clip's bounds: constant inputs from opset 11, attributes before,
 * an absent bound infinite). Node n is a default-domain op or ftax.Gelu. Returns the row, or NULL
 * (not such an op, Gelu's approximate unknown, Clip's bounds not constants). */
const ft_sop *ft_sop_of_node(const ft_graph *g, const ft_node *n, float params[2]);

/* The epilogue activation (templates/c/gemm.h's FT_ACT_*) that a fused op's string attribute
 * names: "" none, "Silu", or a unary or parameter scalar op. 0, or the error of infer. */
struct ft_opctx;
int ft_epilogue_activation(struct ft_opctx *c, const char *attr, int64_t *act);
/* The name a fused op's activation attribute gives epilogue activation act. */
const char *ft_epilogue_activation_name(int64_t act);

#endif
