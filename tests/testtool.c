/* ftax-testtool: small queries the shell-driven tests need, answered with ftax's own loader.
 *
 *   ftax-testtool ops MODEL.onnx
 *       the op types of the nodes of the model's graph, one per line, sorted, "domain.Op"
 *       outside ai.onnx (read with protobuf-c alone, so it answers for models ftax refuses)
 *   ftax-testtool shape-flags MODEL.onnx DATA_SET_DIR
 *       the ftaxc flags that pin every input whose shape the model leaves open to the shape of
 *       DATA_SET_DIR/input_K.pb, one argument per line ("--shape" then "NAME=2x8"); where a file
 *       `dims` sits beside MODEL.onnx (one SYM=N per line, # comments), "--dim" and each of its
 *       lines instead; where a file `bind` sits beside MODEL.onnx (one INPUT=FILE.pb per line,
 *       FILE relative to the model's folder), "--bind" and INPUT=MODEL_DIR/FILE for each line,
 *       and the data set's input_K.pb count only the inputs left
 *
 * Exit: 0 ok, 1 usage, 2 unreadable model or tensor file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "onnx.pb-c.h"
#include "tensorio.h"

static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int list_ops(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "ftax-testtool: %s: cannot open\n", path); return 2; }
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
  size_t got = fread(buf, 1, len > 0 ? (size_t)len : 0, f);
  fclose(f);
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, got, buf);
  free(buf);
  if (!m || !m->graph) { fprintf(stderr, "ftax-testtool: %s: not an ONNX model\n", path); return 2; }
  const Onnx__GraphProto *g = m->graph;
  char **names = malloc(sizeof(char *) * (g->n_node + 1));
  size_t n = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const char *dom = g->node[i]->domain ? g->node[i]->domain : "";
    if (!strcmp(dom, "ai.onnx")) dom = "";
    char name[512];
    snprintf(name, sizeof name, "%s%s%s", dom, dom[0] ? "." : "", g->node[i]->op_type ? g->node[i]->op_type : "?");
    int seen = 0;
    for (size_t k = 0; k < n && !seen; k++) seen = !strcmp(names[k], name);
    if (!seen) names[n++] = strdup(name);
  }
  qsort(names, n, sizeof *names, by_str);
  for (size_t k = 0; k < n; k++) { printf("%s\n", names[k]); free(names[k]); }
  free(names);
  onnx__model_proto__free_unpacked(m, NULL);
  return 0;
}

/* The model's bound inputs: MODEL_DIR/bind, printed as --bind flags; names[] gets the inputs. */
static int bind_flags(const char *model, char names[][256], int max) {
  char path[4096];
  const char *slash = strrchr(model, '/');
  int dir = slash ? (int)(slash - model + 1) : 0, n = 0;
  snprintf(path, sizeof path, "%.*sbind", dir, model);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[512];
  while (fgets(line, sizeof line, f) && n < max) {
    char spec[512];
    if (sscanf(line, " %511s", spec) != 1 || spec[0] == '#' || !strchr(spec, '=')) continue;
    char *eq = strchr(spec, '=');
    printf("--bind\n%.*s=%.*s%s\n", (int)(eq - spec), spec, dir, model, eq + 1);
    snprintf(names[n++], 256, "%.*s", (int)(eq - spec), spec);
  }
  fclose(f);
  return n;
}

static int shape_flags(const ft_graph *g, const char *model, const char *set) {
  char bound[64][256];
  int n_bound = bind_flags(model, bound, 64), k = 0;
  for (int i = 0; i < g->n_inputs; i++) {
    const ft_value *v = &g->vals[g->inputs[i]];
    int is_bound = 0;
    for (int b = 0; b < n_bound; b++) is_bound |= !strcmp(bound[b], v->name);
    if (is_bound) continue;
    int file = k++; /* the data set holds the inputs left after binding */
    int open = v->t.rank < 0;
    for (int d = 0; d < v->t.rank; d++) open |= v->t.dims[d] < 0;
    if (!open) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/input_%d.pb", set, file);
    ft_pb_tensor t;
    const char *why;
    if (ft_pb_read_tensor(path, &t, &why)) {
      fprintf(stderr, "ftax-testtool: %s: %s (input %d '%s' has an open shape)\n", path, why, i, v->name);
      return 2;
    }
    printf("--shape\n%s=", v->name);
    for (int d = 0; d < t.t.rank; d++) printf("%s%lld", d ? "x" : "", (long long)t.t.dims[d]);
    printf("\n");
    free(t.t.data);
  }
  return 0;
}

/* The model's own pins: MODEL_DIR/dims as --dim flags. 1 when there is no such file. */
static int dims_flags(const char *model) {
  char path[4096];
  const char *slash = strrchr(model, '/');
  snprintf(path, sizeof path, "%.*sdims", slash ? (int)(slash - model + 1) : 0, model);
  FILE *f = fopen(path, "r");
  if (!f) return 1;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char sym[512];
    if (sscanf(line, " %511s", sym) == 1 && sym[0] != '#') printf("--dim\n%s\n", sym);
  }
  fclose(f);
  return 0;
}

int main(int argc, char **argv) {
  int ops = argc == 3 && !strcmp(argv[1], "ops");
  int shapes = argc == 4 && !strcmp(argv[1], "shape-flags");
  if (!ops && !shapes) {
    fprintf(stderr, "usage: ftax-testtool ops MODEL.onnx | shape-flags MODEL.onnx DATA_SET_DIR\n");
    return 1;
  }
  if (ops) return list_ops(argv[2]);
  if (!dims_flags(argv[2])) return 0;
  ft_graph *g = NULL;
  ft_err e = {0};
  if (ft_load_model(argv[2], &g, &e)) {
    fprintf(stderr, "ftax-testtool: %s\n", e.msg);
    return 2;
  }
  int rc = shape_flags(g, argv[2], argv[3]);
  ft_graph_free(g);
  return rc;
}
