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

/* OUT.h: the size macros and the API program.h defines. */
static void write_header(FILE *h, const ft_graph *g, const ft_memplan *mp, const char *P, const char *G) {
  ft_emit_header_top(h, g, mp, P, G, "program", "");
  fprintf(h, "/* Load the weights (a file path; NULL for weights built into the program) and allocate the\n"
             "   arena. Returns 0, or nonzero with a reason in err. */\n");
  fprintf(h, "int %s_init(%s_ctx **ctx, const char *weights_path, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* The same, with an arena of %s_ARENA_BYTES bytes, 64-byte aligned, owned by the caller. */\n", G);
  fprintf(h, "int %s_init_with_arena(%s_ctx **ctx, const char *weights_path, void *arena, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* One inference: inputs[i] and outputs[i] point at dense buffers of the sizes above. */\n");
  fprintf(h, "int %s_run(%s_ctx *ctx, const void *const *inputs, void *const *outputs);\n", P, P);
  fprintf(h, "void %s_free(%s_ctx *ctx);\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n", P, P);
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
static int paste_kernels(FILE *c, const ft_graph *g, const ft_lowered *lw, ft_pasted *done, ft_err *e) {
  fprintf(c, "#ifdef __GNUC__\n#pragma GCC diagnostic ignored \"-Wunused-function\"\n#endif\n\n");
  int rc = paste_list(c, "tensor,copy", done, e);
  for (int s = 0; s < lw->n && !rc; s++) {
    const ft_kcall *k = &lw->calls[s];
    if (k->entry) rc = paste_list(c, g->nodes[lw->order[s]].op->templates, done, e);
    if (k->entry && k->templates && !rc) rc = paste_list(c, k->templates, done, e);
  }
  if (!rc && lw->bf16) /* what the program prints with its timings */
    fprintf(c, "\n/* ---- precision: bf16, %d calls on the bf16 GEMM core (gemm_bf16.h), the rest fp32; the\n"
               " * micro-kernel is the one the C compiler's target allows (FT_BF16_PATH) ---- */\n"
               "#ifndef FT_BF16_PATH\n#define FT_BF16_PATH \"unused\"\n#endif\n"
               "#define FTP_PRECISION \"bf16 (\" FT_BF16_PATH \")\"\n\n", lw->n_bf16);
  return rc;
}

/* What templates/c/program.h needs to know of the model. */
static void write_model_data(FILE *c, const ft_graph *g, const ft_memplan *mp, const ft_emit_opts *o) {
  fprintf(c, "/* ---- the model ---- */\n#define FTP_API(x) %s_##x\n#define FTP_NAME \"%s\"\n", o->name, o->name);
  fprintf(c, "#define FTP_MODEL_HASH \"%s\"\n#define FTP_WEIGHT_BYTES %zuu\n#define FTP_ARENA_BYTES %zuu\n",
          o->model_hash, mp->weight_bytes, mp->arena_bytes);
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

/* ftp_calls: every kernel call in order, then the outputs no kernel wrote (constants, inputs,
 * repeated outputs) copied. */
static void write_calls(FILE *c, const ft_graph *g, const ft_lowered *lw, const ft_memplan *mp) {
  fprintf(c, "static int ftp_calls(unsigned char *arena, const unsigned char *weights, const void *const *inputs,\n"
             "                      void *const *outputs) {\n  (void)arena; (void)weights; (void)inputs;\n");
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

int ft_emit_c(ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const ft_emit_opts *o,
              FILE *c, FILE *h, FILE *w, ft_err *e) {
  int rc = w ? ft_emit_weights(w, g, mp, o->model_hash, e) : 0;
  if (rc) return rc;
  char guard[256];
  ft_emit_upper(guard, sizeof guard, o->name);
  if (o->freestanding) write_header_freestanding(h, g, mp, o->name, guard);
  else write_header(h, g, mp, o->name, guard);

  fprintf(c, "/* Generated by ftaxc %s. Do not edit.\n * command: ", FTAX_VERSION);
  ft_emit_comment(c, o->cmdline);
  fprintf(c, "\n * model sha256: %s\n * nodes: %d, arena: %zu bytes (lower bound %zu), weights: %zu bytes\n */\n",
          o->model_hash, lw->n, mp->arena_bytes, mp->lower_bound, mp->weight_bytes);
  /* freestanding: no POSIX, so no thread pool (parallel.h) whatever the compiler's target */
  fprintf(c, o->freestanding ? "#define FT_NO_THREADS 1\n#include \"%s\"\n\n" : "#define _GNU_SOURCE\n#include \"%s\"\n\n", o->header);
  if (o->freestanding) write_sop_mask(c, g, lw);
  ft_pasted done = {{0}, 0};
  rc = paste_kernels(c, g, lw, &done, e);
  if (rc) return rc;
  write_model_data(c, g, mp, o);
  if (o->freestanding) write_model_data_freestanding(c, mp, guard);
  rc = ft_emit_paste_name(c, o->freestanding ? "program_freestanding" : "program", "h", &done, e);
  if (rc) return rc;
  write_calls(c, g, lw, mp);

  if (o->freestanding) return write_weights_array(c, g, mp, e);
  return ft_emit_main(c, guard, "cli", "h", g, &done, e);
}
