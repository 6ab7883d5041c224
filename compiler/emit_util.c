/* What the C and CUDA emitters share: pasting kernel templates (their own #include "x"
 * dependencies first), C string literals and comments, and the programs' I/O tables. */
#include "emit_util.h"

#include <stdio.h>
#include <string.h>

#include "templates.h"

/* One template, its #include "x" dependencies first (templates/c or templates/cuda). */
int ft_emit_paste(FILE *f, const char *file, ft_pasted *done, ft_err *e) {
  for (int i = 0; i < done->n; i++) if (!strcmp(done->names[i], file)) return 0;
  const char *text = ft_template_text(file);
  if (!text) return ft_fail(e, FT_EIO, "internal error: template '%s' is not embedded in ftaxc", file);
  done->names[done->n++] = file;
  for (const char *s = text; (s = strstr(s, "#include \"")) != NULL;) {
    s += 10;
    const char *q = strchr(s, '"');
    char dep[128];
    snprintf(dep, sizeof dep, "%.*s", (int)(q - s), s);
    const char *canon = ft_template_name(dep);
    if (!canon) return ft_fail(e, FT_EIO, "internal error: template '%s' includes unknown '%s'", file, dep);
    int rc = ft_emit_paste(f, canon, done, e);
    if (rc) return rc;
  }
  const char *ext = strrchr(file, '.');
  fprintf(f, "/* ---- templates/%s/%s ---- */\n", ext && !strcmp(ext, ".cuh") ? "cuda" : "c", file);
  for (const char *s = text; *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s + 1) : strlen(s);
    if (strncmp(s, "#include \"", 10) != 0) fwrite(s, 1, len, f);
    s += len;
  }
  fputc('\n', f);
  return 0;
}

int ft_emit_paste_name(FILE *f, const char *base, const char *ext, ft_pasted *done, ft_err *e) {
  char file[160];
  snprintf(file, sizeof file, "%s.%s", base, ext);
  const char *canon = ft_template_name(file);
  if (!canon) return ft_fail(e, FT_EIO, "internal error: no template '%s'", file);
  return ft_emit_paste(f, canon, done, e);
}

void ft_emit_c_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 32) fprintf(f, "\\%03o", (unsigned char)*s);
    else if (*s == '?') fputs("\\?", f);
    else fputc(*s, f);
  }
  fputc('"', f);
}

void ft_emit_comment(FILE *f, const char *s) {
  for (; *s; s++) {
    if (s[0] == '*' && s[1] == '/') { fputs("* /", f); s++; }
    else fputc(*s, f);
  }
}

void ft_emit_io_table(FILE *f, const char *name, const ft_graph *g, const int *vals, int n) {
  fprintf(f, "static const ft_io_desc %s[%d] = {\n", name, n ? n : 1);
  for (int i = 0; i < n; i++) {
    const ft_value *v = &g->vals[vals[i]];
    fprintf(f, "    {");
    ft_emit_c_string(f, v->name);
    fprintf(f, ", %d, %d, {", v->t.dtype, v->t.rank);
    for (int d = 0; d < v->t.rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)v->t.dims[d]);
    fprintf(f, "}},\n");
  }
  if (!n) fprintf(f, "    {\"\", 0, 0, {0}},\n");
  fprintf(f, "};\n");
}

