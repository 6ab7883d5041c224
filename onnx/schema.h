/* What the ONNX operator specification says of each operator version's signature (generated into
 * onnx/schema.c by tools/gen_schema.py from python3-onnx): the loader's validation checks nodes
 * against it, so that no op's shape inference ever sees a node the specification forbids. */
#ifndef FTAX_SCHEMA_H
#define FTAX_SCHEMA_H

#include <stdint.h>

typedef struct ft_schema_attr {
  const char *name;
  int type;     /* ONNX AttributeProto.AttributeType */
  int required;
} ft_schema_attr;

typedef struct ft_schema {
  const char *domain; /* "" or "ai.onnx.preview.training" */
  const char *op_type;
  int since;          /* the opset version this signature starts at */
  int min_in, max_in, min_out, max_out; /* 255: unbounded */
  uint32_t required_in, required_out;   /* bit i: formal parameter i may not be omitted */
  const ft_schema_attr *attrs;          /* terminated by a NULL name */
} ft_schema;

extern const ft_schema ft_schemas[];
extern const int ft_n_schemas;
extern const int ft_schema_opset; /* the newest opset the table knows */

/* The signature of op_type in domain at opset version `opset` (the newest version not after it),
 * or NULL when the table does not know the operator. */
const ft_schema *ft_schema_find(const char *domain, const char *op_type, int64_t opset);

#endif
