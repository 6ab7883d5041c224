/* The intermediate representation every stage of ftax works on.
 *
 * A graph is a flat list of values (tensors, referred to by index) and a list of nodes in
 * topological order. A value whose tensor has data is a constant: an initializer, a Constant
 * node's output, or something constant folding computed. Stages take the graph and change it in
 * place; none keeps pointers into the value array across calls that may grow it. */
#ifndef FTAX_IR_H
#define FTAX_IR_H

#include <stddef.h>
#include <stdint.h>

#include "tensor.h" /* ft_tensor, dtypes (templates/c/tensor.h: shared with generated code) */

/* Exit codes of every ftax tool (documented in the README). */
enum {
  FT_OK = 0,
  FT_EUSAGE = 1,       /* bad command line */
  FT_EINVALID = 2,     /* malformed or inconsistent model, or a wrong input file */
  FT_EUNSUPPORTED = 3, /* a valid model that uses something ftax does not support */
  FT_EIO = 4,          /* cannot read or write a file, or the C compiler failed */
};

/* An error: a code from the enum above and a message meant for a person. */
typedef struct ft_err {
  int code;
  char msg[2048];
} ft_err;

/* Records the first failure; the message is escaped (ft_text_escape), since names in it come from
 * the model. */
int ft_fail(ft_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The largest tensor (constant or activation) ftax accepts, in bytes; a larger one is refused as
 * unsupported (exit 3) before anything of that size is allocated. Default FT_MAX_TENSOR_BYTES_DEFAULT;
 * the fuzz targets lower it. */
#define FT_MAX_TENSOR_BYTES_DEFAULT ((size_t)1 << 32)
extern size_t ft_max_tensor_bytes;

/* The most nodes a graph may grow to: by unrolling loops (compiler/passes/loop.c) and by
 * inlining model-local functions (onnx/load.c), where nesting multiplies. */
#define FT_GRAPH_MAX_NODES 100000

/* ONNX AttributeProto.AttributeType values. */
enum { FT_ATTR_FLOAT = 1, FT_ATTR_INT = 2, FT_ATTR_STRING = 3, FT_ATTR_TENSOR = 4,
       FT_ATTR_GRAPH = 5, FT_ATTR_FLOATS = 6, FT_ATTR_INTS = 7, FT_ATTR_STRINGS = 8 };

typedef struct ft_attr {
  char *name;
  int type;
  int64_t i;
  float f;
  char *s; /* NUL-terminated copy; s_len holds the byte length */
  size_t s_len;
  int64_t *ints;
  int n_ints;
  float *floats;
  int n_floats;
  char **strings;
  int n_strings;
  ft_tensor *t; /* owned, with data */
  struct ft_graph *g; /* FT_ATTR_GRAPH: the subgraph (If's branches), owned */
} ft_attr;

enum { FT_V_ACT = 0, FT_V_INPUT = 1, FT_V_CONST = 2 };

typedef struct ft_value {
  char *name;
  ft_tensor t;                 /* dtype, shape and (for constants) data, owned */
  char *sym[FT_MAX_RANK];      /* symbolic name of dim i while t.dims[i] < 0, else NULL */
  int shape_known;             /* rank and every dim known */
  int kind;                    /* FT_V_ACT, FT_V_INPUT or FT_V_CONST */
  int is_output;
  int declared_dtype;          /* graph outputs and value_info: the element type the model declares, 0 if none */
  int declared_rank;           /* graph outputs: the declared rank, -1 if no shape is declared */
  int64_t declared_dims[FT_MAX_RANK]; /* its sizes, -1 where symbolic */
  int producer;                /* node index, -1 for inputs and initializers */
  /* A sequence (SequenceConstruct, SplitToSequence, ...): lowered at compile time into the list
   * of its elements, values of this graph (compiler/passes/sequence.c); t.dtype is the element
   * type. No sequence survives the inference sweep. */
  int is_seq;
  int *seq;
  int n_seq;
} ft_value;

struct ft_opdesc;

typedef struct ft_node {
  char *name;
  char *op_type;
  char *domain;
  int n_in, n_out;
  int *in;  /* value indices; -1 for an omitted optional input */
  int *out; /* value indices; -1 for an omitted optional output */
  ft_attr *attrs;
  int n_attrs;
  int *outer;  /* values of this graph that the node's subgraphs (If branches) read by name */
  int n_outer;
  /* The node runs only when each entry holds: entry FT_GUARD(v, negated) is bool scalar v true
   * (negated 0) or false (negated 1), outermost first. Set on the nodes of If branches whose
   * condition is computed at run time (compiler/passes/branch.c); empty for every other node.
   * Entry FT_GUARD_LOOP(v) marks the body of a Loop run at run time (compiler/passes/loop.c): the
   * nodes that carry it run again and again while bool scalar v holds. */
  int *guard;
  int n_guard;
  const struct ft_opdesc *op; /* resolved by ft_resolve_ops */
  int dead;
} ft_node;

typedef struct ft_graph {
  ft_value *vals;
  int n_vals, cap_vals;
  ft_node *nodes;
  int n_nodes, cap_nodes;
  int *inputs;  /* graph inputs that are not initializers */
  int n_inputs;
  int *outputs;
  int n_outputs;
  int64_t opset;       /* ai.onnx opset version */
  int64_t ir_version;  /* the model's IR version (the main graph's; 0 in subgraphs) */
  /* Graph inputs that also have an initializer in a model of IR version 4 or later: the
   * initializer is a default the caller may override. Loaded as constants (the initializer);
   * ft_keep_defaults makes the ones asked for inputs again, at position at[k] of inputs. */
  int *defaults;       /* value indices, in the model's input order */
  int *default_at;     /* how many of inputs come before defaults[k] in the model's input list */
  int n_defaults;
  char *path;          /* the model file, for messages */
  char *name;
  /* Value names -> index (open addressing, slot = index + 1, 0 empty), kept by ft_value_add and
   * ft_value_rename: a model of many values would otherwise make every lookup a scan of them all. */
  int *name_slots;
  int name_cap;
} ft_graph;

#define FT_GUARD(v, negated) ((v) * 4 + ((negated) ? 1 : 0))
#define FT_GUARD_LOOP(v) ((v) * 4 + 2)
static inline int ft_guard_value(int entry) { return entry / 4; }
static inline int ft_guard_negated(int entry) { return entry & 1; }
static inline int ft_guard_is_loop(int entry) { return (entry & 3) == 2; }

/* Construction. */
ft_graph *ft_graph_new(void);
void ft_graph_free(ft_graph *g);
int ft_value_find(const ft_graph *g, const char *name);
int ft_value_add(ft_graph *g, const char *name);     /* returns index; name may be NULL */
int ft_value_get(ft_graph *g, const char *name);     /* find or add */
void ft_value_rename(ft_graph *g, int v, const char *name);
ft_node *ft_node_add(ft_graph *g, const char *name, const char *op_type, const char *domain,
                     int n_in, int n_out);
void ft_attr_free(ft_attr *a);
void ft_attr_copy(ft_attr *dst, const ft_attr *src); /* deep: a subgraph is cloned */
/* A deep copy: values (with data), nodes, attributes, subgraphs. */
ft_graph *ft_graph_clone(const ft_graph *g);
/* In a subgraph: value v is read but not defined there, a name of an enclosing graph. */
int ft_value_is_outer(const ft_graph *sub, int v);

/* In subgraph s and the subgraphs nested in it: the value that s reads from outside under the name
 * `from` is now called `to`. A subgraph that defines `from` itself (an input, an initializer, a
 * node's output) shadows the outer value, for itself and all nested in it: renaming stops there. */
void ft_rename_outer(ft_graph *s, const char *from, const char *to);
/* The same for n names at once: from[k] becomes to[k], each looked up by its old name, so a new
 * name that is another pair's old one (t -> t2 and t2 -> t2@x) renames nothing twice. */
void ft_rename_outer_all(ft_graph *s, int n, const char *const *from, const char *const *to);

/* Attribute lookup with defaults. */
const ft_attr *ft_attr_find(const ft_node *n, const char *name);
int64_t ft_attr_int(const ft_node *n, const char *name, int64_t dflt);
/* The integer attribute (dflt if absent) in *out; -1 when it lies outside [lo, hi]. Every integer
 * attribute narrowed to int, or with a range the op gives it, is read through this (ft_attr_int_c
 * in op.h says why the model is wrong), so 2^32 + k is never read as k. */
int ft_attr_int_in(const ft_node *n, const char *name, int64_t dflt, int64_t lo, int64_t hi, int64_t *out);
float ft_attr_float(const ft_node *n, const char *name, float dflt);
const char *ft_attr_str(const ft_node *n, const char *name, const char *dflt);
int ft_attr_ints(const ft_node *n, const char *name, const int64_t **v); /* count, -1 absent */

/* Tensor helpers. */
void ft_tensor_free_data(ft_tensor *t);
int ft_tensor_clone(ft_tensor *dst, const ft_tensor *src); /* deep copy of data */
void ft_shape_str(const ft_value *v, char *buf, size_t n);   /* "1x128", "batchx128" */
const char *ft_node_label(const ft_graph *g, int node);     /* "'name' (OpType)", static buffer */

/* Walk the live nodes and mark values used; returns the count of live nodes. */
int ft_graph_count_live(const ft_graph *g);
void ft_graph_dump(const ft_graph *g, void *file);

#endif
