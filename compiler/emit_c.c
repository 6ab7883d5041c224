/* Stage: write the C program: kernels pasted from templates/c (only those used), one call per
 * lowered node with literal parameters and buffer offsets, the API in OUT.h, and the weights. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "templates.h"
#include "version.h"

/* ---- templates ---------------------------------------------------------------------------- */

typedef struct pasted { const char *names[128]; int n; } pasted;

/* Paste one template, its own #include "x.h" dependencies first; system includes pass through. */
static int paste(FILE *f, const char *file, pasted *done, ft_err *e) {
  for (int i = 0; i < done->n; i++) if (!strcmp(done->names[i], file)) return 0;
  const char *text = ft_template_text(file);
  if (!text) return ft_fail(e, FT_EIO, "internal error: template '%s' is not embedded in ftaxc", file);
  done->names[done->n++] = file;
  /* dependencies first */
  for (const char *s = text; (s = strstr(s, "#include \"")) != NULL;) {
    s += 10;
    const char *q = strchr(s, '"');
    char dep[128];
    snprintf(dep, sizeof dep, "%.*s", (int)(q - s), s);
    const char *canon = ft_template_name(dep);
    if (!canon) return ft_fail(e, FT_EIO, "internal error: template '%s' includes unknown '%s'", file, dep);
    int rc = paste(f, canon, done, e);
    if (rc) return rc;
  }
  fprintf(f, "/* ---- templates/c/%s ---- */\n", file);
  for (const char *s = text; *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s + 1) : strlen(s);
    if (strncmp(s, "#include \"", 10) != 0) fwrite(s, 1, len, f);
    s += len;
  }
  fputc('\n', f);
  return 0;
}

static int paste_list(FILE *f, const char *list, pasted *done, ft_err *e) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list ? list : "");
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char file[160];
    snprintf(file, sizeof file, "%s.h", tok);
    const char *canon = ft_template_name(file);
    if (!canon) return ft_fail(e, FT_EIO, "internal error: no template '%s'", file);
    int rc = paste(f, canon, done, e);
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

static void c_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 32) fprintf(f, "\\%03o", (unsigned char)*s);
    else fputc(*s, f);
  }
  fputc('"', f);
}

/* A comment-safe copy (no "*" followed by "/"). */
static void comment_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (s[0] == '*' && s[1] == '/') { fputs("* /", f); s++; }
    else fputc(*s, f);
  }
}

static void io_table(FILE *f, const char *name, const ft_graph *g, const int *vals, int n) {
  fprintf(f, "static const ft_io_desc %s[%d] = {\n", name, n ? n : 1);
  for (int i = 0; i < n; i++) {
    const ft_value *v = &g->vals[vals[i]];
    fprintf(f, "    {");
    c_string(f, v->name);
    fprintf(f, ", %d, %d, {", v->t.dtype, v->t.rank);
    for (int d = 0; d < v->t.rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)v->t.dims[d]);
    fprintf(f, "}},\n");
  }
  if (!n) fprintf(f, "    {\"\", 0, 0, {0}},\n");
  fprintf(f, "};\n");
}

int ft_emit_c(ft_graph *g, const ft_lowered *lw, const ft_memplan *mp, const ft_emit_opts *o,
              FILE *c, FILE *h, FILE *w, ft_err *e) {
  const char *P = o->name;
  /* ---- weights: a header (magic, version, model hash, size) then the blob ---- */
  {
    char head[64] = {0};
    memcpy(head, "FTAXW001", 8);
    uint64_t size = mp->weight_bytes;
    memcpy(head + 8, &size, 8);
    snprintf(head + 16, 48, "%.47s", o->model_hash);
    fwrite(head, 1, 64, w);
    int64_t pos = 0;
    static const char zeros[64];
    /* write in offset order */
    int64_t next = 0;
    while (next < (int64_t)mp->weight_bytes) {
      int best = -1;
      for (int v = 0; v < g->n_vals; v++)
        if (mp->storage[v] == FT_S_WEIGHT && mp->root[v] == v && mp->offset[v] == next) { best = v; break; }
      if (best < 0) return ft_fail(e, FT_EIO, "internal error: weights layout has a hole at %lld", (long long)next);
      size_t nb = ft_nbytes(&g->vals[best].t);
      fwrite(g->vals[best].t.data, 1, nb, w);
      pos = next + (int64_t)nb;
      next = (pos + 63) & ~(int64_t)63;
      fwrite(zeros, 1, (size_t)(next - pos), w);
    }
  }

  /* ---- header ---- */
  char guard[256];
  snprintf(guard, sizeof guard, "%s", P);
  for (char *s = guard; *s; s++) if (*s >= 'a' && *s <= 'z') *s -= 32;
  fprintf(h, "/* %s.h: API of a program generated by ftaxc %s. */\n", P, FTAX_VERSION);
  fprintf(h, "#ifndef %s_H\n#define %s_H\n\n#include <stddef.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", guard, guard);
  fprintf(h, "#define %s_ARENA_BYTES %zuu\n#define %s_WEIGHT_BYTES %zuu\n", guard, mp->arena_bytes, guard, mp->weight_bytes);
  fprintf(h, "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", guard, g->n_inputs, guard, g->n_outputs);
  for (int i = 0; i < g->n_inputs; i++) {
    const ft_value *v = &g->vals[g->inputs[i]];
    fprintf(h, "#define %s_INPUT_%d_BYTES %zuu /* %s, %s */\n", guard, i, ft_nbytes(&v->t), v->name, ft_dtype_name(v->t.dtype));
  }
  for (int i = 0; i < g->n_outputs; i++) {
    const ft_value *v = &g->vals[g->outputs[i]];
    fprintf(h, "#define %s_OUTPUT_%d_BYTES %zuu /* %s, %s */\n", guard, i, ft_nbytes(&v->t), v->name, ft_dtype_name(v->t.dtype));
  }
  fprintf(h, "\ntypedef struct %s_ctx %s_ctx;\n\n", P, P);
  fprintf(h, "/* Load the weights (a file path; NULL for weights built into the program) and allocate the\n"
             "   arena. Returns 0, or nonzero with a reason in err. */\n");
  fprintf(h, "int %s_init(%s_ctx **ctx, const char *weights_path, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* The same, with an arena of %s_ARENA_BYTES bytes, 64-byte aligned, owned by the caller. */\n", guard);
  fprintf(h, "int %s_init_with_arena(%s_ctx **ctx, const char *weights_path, void *arena, char *err, size_t err_len);\n", P, P);
  fprintf(h, "/* One inference: inputs[i] and outputs[i] point at dense buffers of the sizes above. */\n");
  fprintf(h, "int %s_run(%s_ctx *ctx, const void *const *inputs, void *const *outputs);\n", P, P);
  fprintf(h, "void %s_free(%s_ctx *ctx);\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n", P, P);

  /* ---- program ---- */
  fprintf(c, "/* Generated by ftaxc %s. Do not edit.\n * command: ", FTAX_VERSION);
  comment_text(c, o->cmdline);
  fprintf(c, "\n * model sha256: %s\n * nodes: %d, arena: %zu bytes (lower bound %zu), weights: %zu bytes\n */\n",
          o->model_hash, lw->n, mp->arena_bytes, mp->lower_bound, mp->weight_bytes);
  fprintf(c, "#define _GNU_SOURCE\n#include \"%s\"\n\n", o->header);
  pasted done = {{0}, 0};
  int rc = paste_list(c, "tensor,copy", &done, e);
  for (int s = 0; s < lw->n && !rc; s++) {
    const ft_node *n = &g->nodes[lw->order[s]];
    if (lw->calls[s].kernel) rc = paste_list(c, n->op->templates, &done, e);
  }
  if (rc) return rc;

  fprintf(c, "/* ---- the model ---- */\n");
  fprintf(c, "#include <stdlib.h>\n#include <stdio.h>\n#include <string.h>\n#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n\n");
  if (o->embed_weights) {
    fprintf(c, "__asm__(\".section .rodata\\n.balign 64\\n.global %s_weights_blob\\n%s_weights_blob:\\n.incbin \\\"%s\\\"\\n.previous\\n\");\n",
            P, P, o->weights_file);
    fprintf(c, "extern const unsigned char %s_weights_blob[];\n\n", P);
  }
  fprintf(c, "struct %s_ctx {\n  const unsigned char *weights; /* the blob after the 64-byte header */\n"
             "  void *map; size_t map_len;\n  unsigned char *arena; int own_arena;\n};\n\n", P);
  fprintf(c, "static const char %s_model_hash[] = \"%s\";\n\n", P, o->model_hash);
  fprintf(c,
          "static int %s_check_weights(const unsigned char *h, size_t len, char *err, size_t n) {\n"
          "  unsigned long long size;\n"
          "  if (len < 64 || memcmp(h, \"FTAXW001\", 8)) { snprintf(err, n, \"not an ftax weights file\"); return 2; }\n"
          "  memcpy(&size, h + 8, 8);\n"
          "  if (strncmp((const char *)h + 16, %s_model_hash, 47)) { snprintf(err, n, \"weights belong to another model (hash %%.16s..., this program wants %%.16s...)\", (const char *)h + 16, %s_model_hash); return 2; }\n"
          "  if (size != %zuu || len < 64 + size) { snprintf(err, n, \"weights file is %%zu bytes, expected %zu\", len); return 2; }\n"
          "  return 0;\n}\n\n",
          P, P, P, mp->weight_bytes, mp->weight_bytes + 64);
  fprintf(c,
          "int %s_init_with_arena(%s_ctx **out, const char *path, void *arena, char *err, size_t n) {\n"
          "  %s_ctx *ctx = (%s_ctx *)calloc(1, sizeof *ctx);\n"
          "  if (!ctx) { snprintf(err, n, \"out of memory\"); return 4; }\n"
          "  const unsigned char *h = NULL; size_t len = 0;\n",
          P, P, P, P);
  if (o->embed_weights)
    fprintf(c, "  if (!path) { h = %s_weights_blob; len = %zuu; }\n  else {\n", P, mp->weight_bytes + 64);
  else
    fprintf(c, "  if (!path) { snprintf(err, n, \"this program needs its weights file\"); free(ctx); return 1; }\n  {\n");
  fprintf(c,
          "    int fd = open(path, O_RDONLY);\n"
          "    struct stat st;\n"
          "    if (fd < 0 || fstat(fd, &st)) { snprintf(err, n, \"%%s: cannot open the weights file\", path); if (fd >= 0) close(fd); free(ctx); return 4; }\n"
          "    len = (size_t)st.st_size;\n"
          "    ctx->map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;\n"
          "    close(fd);\n"
          "    if (ctx->map == MAP_FAILED || !ctx->map) { snprintf(err, n, \"%%s: cannot map the weights file\", path); free(ctx); return 4; }\n"
          "    ctx->map_len = len; h = (const unsigned char *)ctx->map;\n"
          "  }\n"
          "  int rc = %s_check_weights(h, len, err, n);\n"
          "  if (rc) { size_t m = strlen(err); if (path) snprintf(err + m, n - m, \" (%%s)\", path); if (ctx->map) munmap(ctx->map, ctx->map_len); free(ctx); return rc; }\n"
          "  ctx->weights = h + 64;\n"
          "  ctx->arena = (unsigned char *)arena;\n"
          "  if (!arena) {\n"
          "    ctx->arena = (unsigned char *)aligned_alloc(64, %zuu);\n"
          "    ctx->own_arena = 1;\n"
          "    if (!ctx->arena) { snprintf(err, n, \"out of memory for the arena\"); %s_free(ctx); return 4; }\n"
          "  }\n"
          "  *out = ctx;\n  return 0;\n}\n\n",
          P, mp->arena_bytes ? mp->arena_bytes : 64, P);
  fprintf(c, "int %s_init(%s_ctx **out, const char *path, char *err, size_t n) {\n  return %s_init_with_arena(out, path, NULL, err, n);\n}\n\n", P, P, P);
  fprintf(c, "void %s_free(%s_ctx *ctx) {\n  if (!ctx) return;\n  if (ctx->own_arena) free(ctx->arena);\n  if (ctx->map) munmap(ctx->map, ctx->map_len);\n  free(ctx);\n}\n\n", P, P);

  fprintf(c, "int %s_run(%s_ctx *ctx, const void *const *inputs, void *const *outputs) {\n", P, P);
  fprintf(c, "  unsigned char *arena = ctx->arena;\n  const unsigned char *weights = ctx->weights;\n  (void)arena; (void)weights; (void)inputs;\n");
  char buf[256];
  for (int s = 0; s < lw->n; s++) {
    const ft_kcall *k = &lw->calls[s];
    const ft_node *n = &g->nodes[lw->order[s]];
    if (!k->kernel) continue;
    fprintf(c, "  /* ");
    comment_text(c, ft_node_label(g, lw->order[s]));
    char shp[128];
    if (n->out[0] >= 0) { ft_shape_str(&g->vals[n->out[0]], shp, sizeof shp); fprintf(c, " -> %s[%s]", ft_dtype_name(g->vals[n->out[0]].t.dtype), shp); }
    fprintf(c, " */\n  %s(", k->kernel);
    if (k->np) {
      fprintf(c, "(const int64_t[]){");
      for (int i = 0; i < k->np; i++) fprintf(c, "%s%lld", i ? ", " : "", (long long)k->p[i]);
      fprintf(c, "}, ");
    } else fprintf(c, "NULL, ");
    if (k->nf) {
      fprintf(c, "(const double[]){");
      for (int i = 0; i < k->nf; i++) fprintf(c, "%s%.17g", i ? ", " : "", k->f[i]);
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
  /* outputs that no kernel wrote: constants, inputs, and repeated outputs */
  for (int i = 0; i < g->n_outputs; i++) {
    int v = g->outputs[i];
    int first = 1;
    for (int j = 0; j < i; j++) if (g->outputs[j] == v) first = 0;
    if (mp->storage[v] == FT_S_OUTPUT && mp->offset[v] == i && first) continue;
    ptr_expr(buf, sizeof buf, mp, v, 1);
    fprintf(c, "  memcpy(outputs[%d], %s, %zu); /* %s */\n", i, buf, ft_nbytes(&g->vals[v].t), g->vals[v].name);
  }
  fprintf(c, "  return 0;\n}\n\n");

  /* ---- command-line tool over the API ---- */
  fprintf(c, "#ifndef %s_NO_MAIN\n", guard);
  rc = paste_list(c, "cli", &done, e);
  if (rc) return rc;
  io_table(c, "ft_prog_inputs", g, g->inputs, g->n_inputs);
  io_table(c, "ft_prog_outputs", g, g->outputs, g->n_outputs);
  fprintf(c,
          "static void *ft_prog_init(const char *weights, char *err, size_t n) {\n"
          "  %s_ctx *ctx = NULL;\n  return %s_init(&ctx, weights, err, n) ? NULL : ctx;\n}\n"
          "static int ft_prog_run(void *ctx, const void *const *in, void *const *out) { return %s_run((%s_ctx *)ctx, in, out); }\n"
          "static void ft_prog_free(void *ctx) { %s_free((%s_ctx *)ctx); }\n\n"
          "int main(int argc, char **argv) {\n"
          "  ft_program prog = {\"%s\", %d, %d, ft_prog_inputs, ft_prog_outputs, ft_prog_init, ft_prog_run, ft_prog_free, %zuu, %d, NULL};\n"
          "  return ft_cli_main(argc, argv, &prog);\n}\n#endif\n",
          P, P, P, P, P, P, P, g->n_inputs, g->n_outputs, mp->arena_bytes, o->embed_weights);
  return 0;
}
