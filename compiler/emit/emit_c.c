/* Stage: write the C program: kernels pasted from templates/c (only those used), the model's
 * data (sizes, hash), the fixed program around them (templates/c/program.h: init, weights, free,
 * run; program_main.h: the command-line tool), one call per lowered node with literal parameters
 * and buffer offsets, the API in OUT.h, and the weights. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_util.h"
#include "passes.h"
#include "scalar_table.h"
#include "templates.h"
#include "version.h"
#include "weights.h"

/* ---- templates ---------------------------------------------------------------------------- */

static int paste_list(FILE *f, const char *list, ft_pasted *done, ft_err *e) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list ? list : "");
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    int rc = ft_emit_paste_name(f, tok, "h", done, e);
    if (rc) return rc;
  }
  return 0;
}

/* ---- pointers --------------------------------------------------------------------------- */

static void ptr_expr(char *buf, size_t n, const ft_memplan *mp, int v, int is_const) {
  const char *q = is_const ? "(const void *)" : "(void *)";
  switch (mp->storage[v]) {
  case FT_S_ARENA: snprintf(buf, n, "%s(arena + %lld)", q, (long long)mp->offset[v]); break;
  case FT_S_WEIGHT: snprintf(buf, n, "(const void *)(weights + %lld)", (long long)mp->offset[v]); break;
  case FT_S_INPUT: snprintf(buf, n, "inputs[%lld]", (long long)mp->offset[v]); break;
  case FT_S_OUTPUT: snprintf(buf, n, "outputs[%lld]", (long long)mp->offset[v]); break;
  default: snprintf(buf, n, "NULL"); break;
  }
}

static void write_header_plans(FILE *h, ft_graph *const *g, int n_plans, const char *const *labels, const char *G);

/* OUT.h: the size macros and the API program.h defines. */
static void write_header(FILE *h, const ft_graph *g, const ft_memplan *mp, const char *P, const char *G,
                         ft_graph *const *gs, int n_plans, const char *const *labels) {
  ft_emit_header_top(h, g, mp, P, G, "program", "");
  fprintf(h, "#include <stdint.h>\n\n");
  fprintf(h, "/* The weights, loaded once (a file path; NULL for weights built into the program) and shared\n"
             "   read-only by every context made on them. Returns 0, or nonzero with a reason in err:\n"
             "   1 no weights, 2 not this program's weights, 4 the file cannot be read, out of memory. */\n");
  fprintf(h, "typedef struct %s_model %s_model;\n", P, P);
  fprintf(h, "int %s_model_open(%s_model **model, const char *weights_path, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* Lets go of the handle; the weights stay until the last context made on them is freed. */\n");
  fprintf(h, "void %s_model_close(%s_model *model);\n", P, P);
  fprintf(h, "/* A context: the arena one run at a time works in. arena: NULL to allocate one, or %s_ARENA_BYTES\n"
             "   bytes, 64-byte aligned, owned by the caller. Contexts run at the same time from different\n"
             "   threads; one context is used by one thread at a time. 0, or 1/4 with a reason in err. */\n", G);
  fprintf(h, "int %s_ctx_new(%s_ctx **ctx, %s_model *model, void *arena, char *err, size_t err_len);\n", P, P, P);
  fprintf(h, "void %s_ctx_free(%s_ctx *ctx);\n", P, P);
  fprintf(h, "/* Threads this context's runs use for their kernels (0: the process's default, every CPU). */\n");
  fprintf(h, "void %s_ctx_set_threads(%s_ctx *ctx, int threads);\n", P, P);
  fprintf(h, "/* One context on weights of its own: %s_model_open and %s_ctx_new in one call. */\n", P, P);
  fprintf(h, "int %s_init(%s_ctx **ctx, const char *weights_path, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* The same, with an arena of %s_ARENA_BYTES bytes, 64-byte aligned, owned by the caller. */\n", G);
  fprintf(h, "int %s_init_with_arena(%s_ctx **ctx, const char *weights_path, void *arena, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* One inference: inputs[i] and outputs[i] point at dense buffers of the sizes above. */\n");
  fprintf(h, "int %s_run(%s_ctx *ctx, const void *const *inputs, void *const *outputs);\n", P, P);
  fprintf(h, "/* Frees a context (%s_ctx_free), and the weights when it held the last reference. */\n", P);
  fprintf(h, "void %s_free(%s_ctx *ctx);\n", P, P);
  fprintf(h, "/* The inputs (is_output 0) and outputs at run time: name, ONNX element type (1 float32,\n"
             "   7 int64, ...), rank, dims. 0, or -1 when i is out of range. */\n");
  fprintf(h, "int %s_num_inputs(void);\nint %s_num_outputs(void);\n", P, P);
  fprintf(h, "int %s_io_info(int is_output, int i, const char **name, int *dtype, int *rank, const int64_t **dims);\n", P);
  fprintf(h, "size_t %s_arena_bytes(void);\n", P);
  fprintf(h, "/* Plans: one per shape the program was compiled for (ftaxc --dim SYM=A,B,...); plan 0 is the one\n"
             "   %s_run, %s_io_info and the sizes above describe. %s_plan_name: \"seq=16\" and the like.\n"
             "   %s_find_plan: the plan whose inputs have these dims (input_dims[i]: input i's rank dims), or\n"
             "   -1 with the compiled shapes listed in err. %s_run_plan: 0, or 1 for a plan out of range.\n"
             "   %s_run_dims: the two in one (1 and err for a shape not compiled). */\n", P, P, P, P, P, P);
  fprintf(h, "int %s_num_plans(void);\nconst char *%s_plan_name(int plan);\n", P, P);
  fprintf(h, "int %s_plan_io_info(int plan, int is_output, int i, const char **name, int *dtype, int *rank,\n"
             "                   const int64_t **dims);\n", P);
  fprintf(h, "int %s_find_plan(const int64_t *const *input_dims, char *err, size_t err_len);\n", P);
  fprintf(h, "int %s_run_plan(%s_ctx *ctx, int plan, const void *const *inputs, void *const *outputs);\n", P, P);
  fprintf(h, "int %s_run_dims(%s_ctx *ctx, const int64_t *const *input_dims, const void *const *inputs,\n"
             "                 void *const *outputs, char *err, size_t err_len);\n", P, P);
  if (n_plans > 1) write_header_plans(h, gs, n_plans, labels, G);
  fprintf(h, "\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

/* OUT.h of several plans: plan 0's sizes above (write_header), then every plan's. */
static void write_header_plans(FILE *h, ft_graph *const *g, int n_plans, const char *const *labels, const char *G) {
  fprintf(h, "\n/* ---- %d plans ---- */\n#define %s_NUM_PLANS %d\n", n_plans, G, n_plans);
  fprintf(h, "/* buffers of these sizes fit input/output i of every plan */\n");
  for (int io = 0; io < 2; io++)
    for (int i = 0; i < (io ? g[0]->n_outputs : g[0]->n_inputs); i++) {
      size_t most = 0;
      for (int p = 0; p < n_plans; p++) {
        size_t b = ft_nbytes(&g[p]->vals[(io ? g[p]->outputs : g[p]->inputs)[i]].t);
        most = b > most ? b : most;
      }
      fprintf(h, "#define %s_MAX_%s_%d_BYTES %zuu\n", G, io ? "OUTPUT" : "INPUT", i, most);
    }
  for (int p = 0; p < n_plans; p++) {
    fprintf(h, "/* plan %d: ", p);
    ft_emit_comment(h, labels[p]);
    fprintf(h, " */\n");
    for (int io = 0; io < 2; io++)
      for (int i = 0; i < (io ? g[p]->n_outputs : g[p]->n_inputs); i++)
        fprintf(h, "#define %s_PLAN_%d_%s_%d_BYTES %zuu\n", G, p, io ? "OUTPUT" : "INPUT", i,
                ft_nbytes(&g[p]->vals[(io ? g[p]->outputs : g[p]->inputs)[i]].t));
  }
}

/* OUT.h of a freestanding library (program_freestanding.h): the same API, its own terms. */
static void write_header_freestanding(FILE *h, const ft_graph *g, const ft_memplan *mp, const char *P, const char *G) {
  ft_emit_header_top(h, g, mp, P, G, "freestanding library", "");
  fprintf(h, "/* The weights are built in (weights_path must be NULL); the arena is a static array of\n"
             "   %s_ARENA_BYTES (none when built with -D%s_NO_STATIC_ARENA); contexts come from a static pool\n"
             "   of %s_MAX_CONTEXTS (default 1). No heap, no files, no threads. Returns 0, or nonzero with a\n"
             "   reason in err: 1 a weights path or a misaligned arena, 4 no context or arena left. */\n", G, G, G);
  fprintf(h, "int %s_init(%s_ctx **ctx, const char *weights_path, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* The same, with an arena of %s_ARENA_BYTES bytes, 64-byte aligned, owned by the caller. */\n", G);
  fprintf(h, "int %s_init_with_arena(%s_ctx **ctx, const char *weights_path, void *arena, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* One inference: inputs[i] and outputs[i] point at dense buffers of the sizes above. */\n");
  fprintf(h, "int %s_run(%s_ctx *ctx, const void *const *inputs, void *const *outputs);\n", P, P);
  fprintf(h, "/* Gives the context (and the static arena, if it had it) back to the pool. */\n");
  fprintf(h, "void %s_free(%s_ctx *ctx);\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n", P, P);
}

/* The kernel templates the calls use, whole: most programs use some of their kernels only. */
static int paste_kernels(FILE *c, const ft_graph *g, const ft_lowered *lw, ft_pasted *done, int first, ft_err *e) {
  if (first) fprintf(c, "#ifdef __GNUC__\n#pragma GCC diagnostic ignored \"-Wunused-function\"\n#endif\n\n");
  int rc = first ? paste_list(c, "tensor,copy", done, e) : 0;
  for (int s = 0; s < lw->n && !rc; s++) {
    const ft_kcall *k = &lw->calls[s];
    if (k->entry) rc = paste_list(c, g->nodes[lw->order[s]].op->templates, done, e);
    if (k->entry && k->templates && !rc) rc = paste_list(c, k->templates, done, e);
  }
  if (!rc && lw->bf16 && first) /* what the program prints with its timings */
    fprintf(c, "\n/* ---- precision: bf16, %d calls on the bf16 GEMM core (gemm_bf16.h), the rest fp32; the\n"
               " * micro-kernel is the one the C compiler's target allows (FT_BF16_PATH) ---- */\n"
               "#ifndef FT_BF16_PATH\n#define FT_BF16_PATH \"unused\"\n#endif\n"
               "#define FTP_PRECISION \"bf16 (\" FT_BF16_PATH \")\"\n\n", lw->n_bf16);
  return rc;
}

/* What templates/c/program.h needs to know of the model. */
static void write_model_data(FILE *c, const ft_graph *g, const ft_memplan *mp, const ft_emit_opts *o, size_t arena_bytes,
                             int n_plans) {
  fprintf(c, "/* ---- the model ---- */\n#define FTP_API(x) %s_##x\n#define FTP_NAME \"%s\"\n", o->name, o->name);
  fprintf(c, "#define FTP_MODEL_HASH \"%s\"\n#define FTP_WEIGHT_BYTES %zuu\n#define FTP_ARENA_BYTES %zuu\n",
          o->model_hash, mp->weight_bytes, arena_bytes);
  char wid[48];
  ft_weights_id(wid, o->model_hash, o->isa);
  fprintf(c, "#define FTP_ISA \"%s\"\n#define FTP_WEIGHTS_ID \"%s\"\n", o->isa ? o->isa : "generic", wid);
  fprintf(c, "#define FTP_NUM_PLANS %d\n", n_plans);
  fprintf(c, "#define FTP_NUM_INPUTS %d\n#define FTP_NUM_OUTPUTS %d\n", g->n_inputs, g->n_outputs);
  if (o->embed_weights) {
    fprintf(c, "#define FTP_WEIGHTS_FILE ");
    ft_emit_c_string(c, o->weights_file);
    fputc('\n', c);
  }
  fputc('\n', c);
}

/* FT_SOP_USED (templates/common/scalar_ops.h) for a freestanding library: the scalar ops that
 * the model's fused activations and ftax.Elementwise programs compute, as two 64-bit masks, so
 * the kernels' switches over every op leave out the others' libm calls. */
static void write_sop_mask(FILE *c, const ft_graph *g, const ft_lowered *lw) {
  unsigned long long m[2] = {0, 0};
  for (int s = 0; s < lw->n; s++) {
    if (!lw->calls[s].entry) continue;
    const ft_node *n = &g->nodes[lw->order[s]];
    const ft_sop *act = ft_sop_by_name(ft_attr_str(n, "activation", ""));
    if (act) m[act->id / 64 & 1] |= 1ull << (act->id % 64);
    const int64_t *prog = NULL;
    int n5 = strcmp(n->op->op_type, "Elementwise") ? -1 : ft_attr_ints(n, "program", &prog);
    for (int i = 0; i + 4 < n5; i += 5)
      if (prog[i] > 0 && prog[i] < 128) m[prog[i] / 64] |= 1ull << (prog[i] % 64);
  }
  fprintf(c, "#define FT_SOP_USED(id) ((id) < 64 ? (0x%llxull >> ((id) & 63)) & 1 : (0x%llxull >> ((id) & 63)) & 1)\n\n",
          m[0], m[1]);
}

/* What program_freestanding.h needs besides: the user's build-time choices, and the weights
 * array it reads (defined at the end of OUT.c). */
static void write_model_data_freestanding(FILE *c, const ft_memplan *mp, const char *G) {
  fprintf(c, "#ifdef %s_NO_STATIC_ARENA\n#define FTP_NO_STATIC_ARENA 1\n#endif\n", G);
  fprintf(c, "#ifdef %s_MAX_CONTEXTS\n#define FTP_MAX_CONTEXTS %s_MAX_CONTEXTS\n#endif\n", G, G);
  fprintf(c, "#ifdef %s_WEIGHTS_ATTR\n#define FTP_WEIGHTS_ATTR %s_WEIGHTS_ATTR\n#else\n#define FTP_WEIGHTS_ATTR\n#endif\n", G, G);
  fprintf(c, "#ifdef %s_ARENA_ATTR\n#define FTP_ARENA_ATTR %s_ARENA_ATTR\n#else\n#define FTP_ARENA_ATTR\n#endif\n", G, G);
  fprintf(c, "static const unsigned char ftp_weights[%zu] __attribute__((aligned(64))) FTP_WEIGHTS_ATTR;\n\n",
          mp->weight_bytes ? mp->weight_bytes : 1);
}

/* The weights as decimal bytes, 32 to a line. */
typedef struct byte_lines { FILE *f; size_t col; } byte_lines;
static void put_c_bytes(void *ctx, const void *p, size_t n) {
  byte_lines *b = (byte_lines *)ctx;
  for (size_t i = 0; i < n; i++, b->col++)
    fprintf(b->f, "%s%u,", b->col % 32 ? "" : "\n", ((const unsigned char *)p)[i]);
}

/* The weights array program_freestanding.h declared: static const, so read-only data (flash). */
static int write_weights_array(FILE *c, const ft_graph *g, const ft_memplan *mp, ft_err *e) {
  fprintf(c, "/* ---- the weights: %zu bytes of read-only data ---- */\n", mp->weight_bytes);
  fprintf(c, "static const unsigned char ftp_weights[%zu] __attribute__((aligned(64))) FTP_WEIGHTS_ATTR = {",
          mp->weight_bytes ? mp->weight_bytes : 1);
  byte_lines b = {c, 0};
  int rc = ft_emit_weights_payload(g, mp, put_c_bytes, &b, e);
  if (!mp->weight_bytes) fputc('0', c);
  fprintf(c, "\n};\n");
  return rc;
}

/* One kernel call with its literal parameters and buffers. */
static void write_call(FILE *c, const ft_graph *g, const ft_memplan *mp, const ft_lowered *lw, int s) {
  const ft_kcall *k = &lw->calls[s];
  const ft_node *n = &g->nodes[lw->order[s]];
  char buf[256], shp[128];
  fprintf(c, "  /* ");
  ft_emit_comment(c, ft_node_label(g, lw->order[s]));
  if (n->out[0] >= 0) {
    ft_shape_str(&g->vals[n->out[0]], shp, sizeof shp);
    fprintf(c, " -> %s[", ft_dtype_name(g->vals[n->out[0]].t.dtype));
    ft_emit_comment(c, shp);
    fputc(']', c);
  }
  fprintf(c, " */\n  %s(", k->entry->name);
  if (k->np) {
    fprintf(c, "(const int64_t[]){");
    for (int i = 0; i < k->np; i++) fprintf(c, "%s%lld", i ? ", " : "", (long long)k->p[i]);
    fprintf(c, "}, ");
  } else fprintf(c, "NULL, ");
  if (k->nf) {
    fprintf(c, "(const double[]){");
    for (int i = 0; i < k->nf; i++) { fputs(i ? ", " : "", c); ft_emit_double(c, k->f[i]); }
    fprintf(c, "}, ");
  } else fprintf(c, "NULL, ");
  fprintf(c, "(const void *const[]){");
  for (int i = 0; i < n->n_in; i++) {
    if (n->in[i] < 0) snprintf(buf, sizeof buf, "NULL");
    else ptr_expr(buf, sizeof buf, mp, n->in[i], 1);
    fprintf(c, "%s%s", i ? ", " : "", buf);
  }
  if (!n->n_in) fprintf(c, "NULL");
  fprintf(c, "}, (void *const[]){");
  for (int i = 0; i < n->n_out; i++) {
    if (n->out[i] < 0) snprintf(buf, sizeof buf, "NULL");
    else ptr_expr(buf, sizeof buf, mp, n->out[i], 0);
    fprintf(c, "%s%s", i ? ", " : "", buf);
  }
  fprintf(c, "}, ");
  if (mp->scratch[s] >= 0) fprintf(c, "arena + %lld);\n", (long long)mp->scratch[s]);
  else fprintf(c, "NULL);\n");
}

/* The `if` blocks around the calls of If branches whose condition is computed at run time, and
 * the `while` blocks around the bodies of Loops run at run time (their flag is set by LoopInit
 * before the block and by LoopNext at the body's end): the blocks open[0..*n_open) are open;
 * close those node n's guard does not share, open the rest of it. A condition is a bool scalar
 * the program computed (or an input). */
static void write_guards(FILE *c, const ft_graph *g, const ft_memplan *mp, const ft_node *n, int *open, int *n_open) {
  int common = 0;
  while (common < *n_open && common < n->n_guard && open[common] == n->guard[common]) common++;
  for (; *n_open > common; (*n_open)--) fprintf(c, "%*s}\n", 2 * *n_open, "");
  for (; *n_open < n->n_guard; (*n_open)++) {
    int entry = n->guard[*n_open], v = ft_guard_value(entry);
    char buf[256];
    ptr_expr(buf, sizeof buf, mp, v, 1);
    fprintf(c, "%*s%s (%s*(const unsigned char *)%s) { /* ", 2 * *n_open + 2, "", ft_guard_is_loop(entry) ? "while" : "if",
            ft_guard_negated(entry) ? "!" : "", buf);
    ft_emit_comment(c, g->vals[v].name);
    fprintf(c, " */\n");
    open[*n_open] = entry;
  }
}

static void write_io_tables(FILE *c, const ft_graph *g, int plan);

/* ftp_io_of and ftp_plan_name (program.h): every plan's inputs' and outputs' names (escaped C
 * strings), types and shapes, and its label. */
static void write_io_of(FILE *c, ft_graph *const *gs, int n_plans, const char *const *labels) {
  for (int p = 0; p < n_plans; p++) write_io_tables(c, gs[p], p);
  fprintf(c, "static const ftp_io *ftp_io_of(int plan, int is_output, int i) {\n  switch (plan) {\n");
  for (int p = 0; p < n_plans; p++)
    fprintf(c, "  case %d: return is_output ? (i < %d ? &ftp_io_outputs_%d[i] : NULL) : (i < %d ? &ftp_io_inputs_%d[i] : NULL);\n",
            p, gs[p]->n_outputs, p, gs[p]->n_inputs, p);
  fprintf(c, "  default: return NULL;\n  }\n}\nstatic const char *const ftp_plan_names[%d] = {", n_plans);
  for (int p = 0; p < n_plans; p++) {
    fputs(p ? ", " : "", c);
    ft_emit_c_string(c, labels[p]);
  }
  fprintf(c, "};\nstatic const char *ftp_plan_name_of(int plan) { return plan >= 0 && plan < %d ? ftp_plan_names[plan] : NULL; }\n\n",
          n_plans);
}

static void write_io_tables(FILE *c, const ft_graph *g, int plan) {
  for (int io = 0; io < 2; io++) {
    int n = io ? g->n_outputs : g->n_inputs;
    const int *vals = io ? g->outputs : g->inputs;
    fprintf(c, "static const ftp_io ftp_io_%s_%d[%d] = {\n", io ? "outputs" : "inputs", plan, n ? n : 1);
    for (int i = 0; i < n; i++) {
      const ft_value *v = &g->vals[vals[i]];
      fprintf(c, "    {");
      ft_emit_c_string(c, v->name);
      fprintf(c, ", %d, %d, {", v->t.dtype, v->t.rank);
      for (int d = 0; d < v->t.rank; d++) fprintf(c, "%s%lld", d ? ", " : "", (long long)v->t.dims[d]);
      fprintf(c, "%s}},\n", v->t.rank ? "" : "0");
    }
    if (!n) fprintf(c, "    {\"\", 0, 0, {0}},\n");
    fprintf(c, "};\n");
  }
}

/* ftp_calls: every kernel call in order, then the outputs no kernel wrote (constants, inputs,
 * repeated outputs) copied. */
static void write_calls(FILE *c, const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, int plan) {
  fprintf(c, "static int ftp_calls_%d(unsigned char *arena, const unsigned char *weights, const void *const *inputs,\n"
             "                       void *const *outputs) {\n  (void)arena; (void)weights; (void)inputs;\n", plan);
  int *open = malloc(sizeof(int) * (size_t)(g->n_vals + 1)), n_open = 0;
  static const ft_node unguarded;
  for (int s = 0; s < lw->n; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    if (!strcmp(n->op_type, "Fail") && !strcmp(n->domain, "ftax")) {
      /* the branch of a run-time If that cannot run at these shapes was taken: exit code 2 */
      write_guards(c, g, mp, n, open, &n_open);
      fprintf(c, "  FTP_RUN_FAIL(");
      ft_emit_c_string(c, ft_attr_str(n, "message", "a branch that cannot run was taken"));
      fprintf(c, ");\n");
      continue;
    }
    if (!lw->calls[s].entry || mp->elided[s]) continue; /* a view, or a Concat its producers wrote */
    write_guards(c, g, mp, &g->nodes[lw->order[s]], open, &n_open);
    write_call(c, g, mp, lw, s);
  }
  write_guards(c, g, mp, &unguarded, open, &n_open);
  free(open);
  char buf[256];
  for (int i = 0; i < g->n_outputs; i++) {
    int v = g->outputs[i];
    int first = 1;
    for (int j = 0; j < i; j++) if (g->outputs[j] == v) first = 0;
    if (mp->storage[v] == FT_S_OUTPUT && mp->offset[v] == i && first) continue;
    ptr_expr(buf, sizeof buf, mp, v, 1);
    fprintf(c, "  memcpy(outputs[%d], %s, %zu); /* ", i, buf, ft_nbytes(&g->vals[v].t));
    ft_emit_comment(c, g->vals[v].name);
    fprintf(c, " */\n");
  }
  fprintf(c, "  return 0;\n}\n\n");
}

/* ---- several plans ------------------------------------------------------------------------ */

/* One constant of the merged weights: its bytes (in a plan's graph) and its merged offset. */
typedef struct wblob { const unsigned char *data; size_t n; int64_t off; uint64_t hash; } wblob;

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* One weights payload for every plan: each plan's constants in its offset order, a constant
 * with the same bytes as one placed already (by any plan) stored once, and every plan's weight
 * offsets rewritten to the merged layout (views keep their distance from their root). Weights
 * whose packing does not depend on the shape are so stored once; those folded from the shape
 * (a position table cut to the sequence length) once per distinct content. */
static int merge_weights(ft_graph *const *g, ft_memplan *mp, int n_plans, wblob **blobs, int *n_blobs, size_t *total,
                         ft_err *e) {
  int cap = 0;
  *blobs = NULL;
  *n_blobs = 0;
  size_t end = 0;
  for (int p = 0; p < n_plans; p++) {
    int nv = g[p]->n_vals;
    int64_t *roff = malloc(sizeof(int64_t) * (size_t)(nv + 1)), *old = malloc(sizeof(int64_t) * (size_t)(nv + 1));
    if (!roff || !old) { free(roff); free(old); return ft_fail(e, FT_EIO, "out of memory merging the weights"); }
    memcpy(old, mp[p].offset, sizeof(int64_t) * (size_t)nv);
    for (int v = 0; v < nv; v++) {
      roff[v] = 0;
      if (mp[p].storage[v] != FT_S_WEIGHT || mp[p].root[v] != v) continue;
      size_t nb = ft_nbytes(&g[p]->vals[v].t);
      if (!nb) continue; /* an empty constant is never read */
      const unsigned char *d = (const unsigned char *)g[p]->vals[v].t.data;
      uint64_t h = fnv1a(d, nb);
      int found = -1;
      for (int b = 0; b < *n_blobs && found < 0; b++)
        if ((*blobs)[b].hash == h && (*blobs)[b].n == nb && !memcmp((*blobs)[b].data, d, nb)) found = b;
      if (found < 0) {
        if (*n_blobs == cap) {
          cap = cap ? cap * 2 : 256;
          wblob *nbl = realloc(*blobs, sizeof(wblob) * (size_t)cap);
          if (!nbl) { free(roff); free(old); return ft_fail(e, FT_EIO, "out of memory merging the weights"); }
          *blobs = nbl;
        }
        end = (end + 63) & ~(size_t)63;
        (*blobs)[*n_blobs] = (wblob){d, nb, (int64_t)end, h};
        found = (*n_blobs)++;
        end += nb;
      }
      roff[v] = (*blobs)[found].off;
    }
    for (int v = 0; v < nv; v++)
      if (mp[p].storage[v] == FT_S_WEIGHT) {
        int r = mp[p].root[v];
        mp[p].offset[v] = roff[r] + (old[v] - old[r]);
      }
    free(roff);
    free(old);
  }
  *total = (end + 63) & ~(size_t)63;
  for (int p = 0; p < n_plans; p++) mp[p].weight_bytes = *total;
  return 0;
}

static int write_merged_weights(FILE *w, const wblob *b, int n, size_t total, const char *hash) {
  static const unsigned char zeros[64];
  unsigned char head[FT_WEIGHTS_HEADER_BYTES];
  ft_weights_header(head, total, hash);
  fwrite(head, 1, sizeof head, w);
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    fwrite(zeros, 1, (size_t)b[i].off - at, w);
    fwrite(b[i].data, 1, b[i].n, w);
    at = (size_t)b[i].off + b[i].n;
  }
  fwrite(zeros, 1, total - at, w);
  return 0;
}

/* The command-line tool: cli.h, every plan's input and output tables, program_main.h. */
static int write_main(FILE *c, const char *guard, ft_graph *const *g, int n_plans, ft_pasted *done, ft_err *e) {
  fprintf(c, "#ifndef %s_NO_MAIN\n", guard);
  int rc = ft_emit_paste_name(c, "cli", "h", done, e);
  if (rc) return rc;
  char name[64];
  for (int p = 0; p < n_plans; p++) {
    snprintf(name, sizeof name, "ft_prog_inputs_%d", p);
    ft_emit_io_table(c, name, g[p], g[p]->inputs, g[p]->n_inputs);
    snprintf(name, sizeof name, "ft_prog_outputs_%d", p);
    ft_emit_io_table(c, name, g[p], g[p]->outputs, g[p]->n_outputs);
  }
  for (int io = 0; io < 2; io++) {
    fprintf(c, "static const ft_io_desc *const ft_prog_%s_of[%d] = {", io ? "outputs" : "inputs", n_plans);
    for (int p = 0; p < n_plans; p++) fprintf(c, "%sft_prog_%s_%d", p ? ", " : "", io ? "outputs" : "inputs", p);
    fprintf(c, "};\n");
  }
  rc = ft_emit_paste_name(c, "program_main", "h", done, e);
  fprintf(c, "#endif\n");
  return rc;
}

/* isa.h's macro suffix for a target name */
static const char *isa_macro(const char *isa) {
  if (isa && !strcmp(isa, "avx512")) return "AVX512";
  if (isa && !strcmp(isa, "avx2")) return "AVX2";
  if (isa && !strcmp(isa, "neon")) return "NEON";
  return "GENERIC";
}

int ft_emit_c_plans(ft_graph *const *gs, const ft_lowered *lws, ft_memplan *mps, int n_plans, const char *const *labels,
                    const ft_emit_opts *o, FILE *c, FILE *h, FILE *w, ft_err *e) {
  ft_graph *g = gs[0];
  const ft_lowered *lw = &lws[0];
  const ft_memplan *mp = &mps[0];
  static const char *const one_label[1] = {""};
  if (n_plans < 1) return ft_fail(e, FT_EUSAGE, "no plan to write");
  if (!labels) labels = one_label;
  if (n_plans > 1 && o->freestanding) return ft_fail(e, FT_EUSAGE, "several shapes need the hosted program (not --freestanding)");
  for (int p = 1; p < n_plans; p++) /* one API: the same inputs and outputs, of the same types */
    if (gs[p]->n_inputs != g->n_inputs || gs[p]->n_outputs != g->n_outputs)
      return ft_fail(e, FT_EUSAGE, "plan '%s' has other inputs or outputs than plan '%s'", labels[p], labels[0]);
  int rc = 0;
  char wid[48]; /* what the weights carry: the model's hash and the plan's target */
  ft_weights_id(wid, o->model_hash, o->isa);
  if (n_plans == 1) rc = w ? ft_emit_weights(w, g, mp, wid, e) : 0;
  else {
    wblob *blobs = NULL;
    int nb = 0;
    size_t total = 0;
    rc = merge_weights(gs, mps, n_plans, &blobs, &nb, &total, e);
    if (!rc && w) rc = write_merged_weights(w, blobs, nb, total, wid);
    free(blobs);
  }
  if (rc) return rc;
  size_t arena = 0;
  for (int p = 0; p < n_plans; p++) arena = mps[p].arena_bytes > arena ? mps[p].arena_bytes : arena;
  char guard[256];
  ft_emit_upper(guard, sizeof guard, o->name);
  ft_memplan mp_h = *mp;
  mp_h.arena_bytes = arena; /* OUT_ARENA_BYTES: the largest plan's */
  if (o->freestanding) write_header_freestanding(h, g, mp, o->name, guard);
  else {
    write_header(h, g, &mp_h, o->name, guard, gs, n_plans, labels);
  }

  fprintf(c, "/* Generated by ftaxc %s. Do not edit.\n * command: ", FTAX_VERSION);
  ft_emit_comment(c, o->cmdline);
  fprintf(c, "\n * model sha256: %s\n * nodes: %d, arena: %zu bytes (lower bound %zu), weights: %zu bytes\n",
          o->model_hash, lw->n, arena, mp->lower_bound, mp->weight_bytes);
  for (int p = 0; p < n_plans && n_plans > 1; p++) {
    fprintf(c, " * plan %d: ", p);
    ft_emit_comment(c, labels[p]);
    fprintf(c, ", nodes %d, arena %zu bytes\n", lws[p].n, mps[p].arena_bytes);
  }
  fprintf(c, " */\n");
  /* freestanding: no POSIX, so no thread pool (parallel.h) whatever the compiler's target */
  fprintf(c, o->freestanding ? "#define FT_NO_THREADS 1\n#include \"%s\"\n\n" : "#define _GNU_SOURCE\n#include \"%s\"\n\n", o->header);
  if (o->freestanding) write_sop_mask(c, g, lw);
  ft_pasted done = {{0}, 0};
  rc = ft_emit_paste_name(c, "isa", "h", &done, e);
  if (rc) return rc;
  /* the plan's ISA against the one these flags compile for: each kernel is complete on every ISA,
   * so another one computes the same, only not at the speed the plan was made for */
  fprintf(c, "#if FT_ISA != FT_ISA_%s\n#warning \"this program was planned for %s (ftaxc asked the C compiler with "
             "its flags); these flags compile it for another instruction set: it computes the same, more slowly. "
             "Build it with the flags ftaxc used, or run ftaxc again with --cc/--cflags for this target\"\n#endif\n\n",
          isa_macro(o->isa), o->isa ? o->isa : "generic");
  for (int p = 0; p < n_plans && !rc; p++) rc = paste_kernels(c, gs[p], &lws[p], &done, p == 0, e);
  if (rc) return rc;
  write_model_data(c, g, mp, o, arena, n_plans);
  if (o->freestanding) write_model_data_freestanding(c, mp, guard);
  rc = ft_emit_paste_name(c, o->freestanding ? "program_freestanding" : "program", "h", &done, e);
  if (rc) return rc;
  if (!o->freestanding) write_io_of(c, gs, n_plans, labels);
  for (int p = 0; p < n_plans; p++) write_calls(c, gs[p], &lws[p], &mps[p], p);
  fprintf(c, "static int ftp_calls(int plan, unsigned char *arena, const unsigned char *weights, const void *const *inputs,\n"
             "                     void *const *outputs) {\n  switch (plan) {\n");
  for (int p = 0; p < n_plans; p++) fprintf(c, "  case %d: return ftp_calls_%d(arena, weights, inputs, outputs);\n", p, p);
  fprintf(c, "  default: return 1;\n  }\n}\n\n");

  if (o->freestanding) return write_weights_array(c, g, mp, e);
  return write_main(c, guard, gs, n_plans, &done, e);
}

int ft_emit_c(ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const ft_emit_opts *o,
              FILE *c, FILE *h, FILE *w, ft_err *e) {
  ft_graph *gs[1] = {g};
  ft_memplan m = *mp; /* one plan: nothing is merged, the plan is not changed */
  return ft_emit_c_plans(gs, lw, &m, 1, NULL, o, c, h, w, e);
}
