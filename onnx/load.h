/* Loading ONNX files into the IR. */
#ifndef FTAX_LOAD_H
#define FTAX_LOAD_H

#include "ir.h"

/* Parse a ModelProto: inputs, initializers (raw, typed or external data), nodes with every
 * attribute kind, opset imports; model-local functions are inlined. */
int ft_load_model(const char *path, ft_graph **out, ft_err *e);
/* The same from bytes in memory: path names the model in messages, dir resolves external data
 * (NULL: the model may have none). */
int ft_load_model_mem(const void *data, size_t len, const char *path, const char *dir, ft_graph **out,
                      ft_err *e);

/* The newest ONNX IR version and ai.onnx opset ftax accepts; newer models are refused as
 * unsupported (exit 3). */
#define FT_IR_VERSION_MAX 12
#define FT_OPSET_MAX 25

/* The checks ft_load_model ends with (onnx/validate.c): outputs exist; every node's input and
 * output count, required inputs, and attributes (required ones present, each of its declared type,
 * none twice) agree with the operator's ONNX signature at the model's opset. */
int ft_validate_graph(const ft_graph *g, ft_err *e);

/* Link each value to the node that writes it and sort the nodes so that every value is written
 * before it is read (onnx/toposort.c): stable, so a sorted graph keeps its order; a value written
 * twice, a value read that nothing defines (outside a subgraph, whose free names belong to an
 * enclosing graph) and a cycle, named node by node, are FT_EINVALID. */
int ft_sort_graph(ft_graph *g, int subgraph, ft_err *e);

/* Where external data `location` of a model in folder dir lives: relative, without "..", a
 * regular file, and (links followed) inside dir. The resolved path goes to out. */
int ft_external_path(const char *dir, const char *location, char *out, size_t n, ft_err *e);

/* Convert one onnx__TensorProto (void * keeps protobuf-c out of this header); dir resolves
 * external data. */
int ft_tensor_from_proto(const void *proto, const char *dir, ft_tensor *t, ft_err *e);

#endif
