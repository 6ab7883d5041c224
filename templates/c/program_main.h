/* The command-line tool of a generated C program (cli.h) over its API (program.h). ftaxc pastes
 * it last, between #ifndef OUT_NO_MAIN and #endif, after every plan's input and output tables
 * (ft_prog_inputs_of[plan], ft_prog_outputs_of[plan]) and with FTP_NUM_INPUTS and
 * FTP_NUM_OUTPUTS defined.
 *
 * A program of several plans (ftaxc --dim seq=16,32) takes --dim SYM=N (repeated as needed) to
 * choose one: the plan whose label ("batch=1,seq=32") has every SYM=N given. It is needed there
 * and refused (exit 1, the plans listed) when it matches no plan or more than one; a program of
 * one plan takes none. */
#ifndef FT_PROGRAM_MAIN_H
#define FT_PROGRAM_MAIN_H

#include "cli.h"
#include "program.h"

static int ftp_cli_plan;

static void *ftp_cli_init(const char *weights, char *err, size_t n) {
  ftp_ctx *ctx = NULL;
  return FTP_API(init)(&ctx, weights, err, n) ? NULL : ctx;
}
static int ftp_cli_run(void *ctx, const void *const *in, void *const *out) {
  return FTP_API(run_plan)((ftp_ctx *)ctx, ftp_cli_plan, in, out);
}
static void ftp_cli_free(void *ctx) { FTP_API(free)((ftp_ctx *)ctx); }

/* Does the comma-separated label hold the item want? */
static int ftp_label_has(const char *label, const char *want) {
  size_t n = strlen(want);
  for (const char *s = label; *s;) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (len == n && !strncmp(s, want, n)) return 1;
    if (!comma) break;
    s = comma + 1;
  }
  return 0;
}

static void ftp_list_plans(FILE *f) {
  fprintf(f, "the plans are:");
  for (int p = 0; p < FTP_NUM_PLANS; p++) {
    fputs(p ? ", " : " ", f);
    ft_text_put(f, ftp_plan_name_of(p));
  }
  fputc('\n', f);
}

/* --dim SYM=N arguments taken out of argv (compacted in place), the plan they choose in
 * ftp_cli_plan: 0, or 1 (usage) with the reason on stderr. */
static int ftp_cli_choose_plan(int *argc, char **argv) {
  const char *want[64];
  int n_want = 0, k = 1;
  for (int i = 1; i < *argc; i++) {
    if (!strcmp(argv[i], "--dim")) {
      if (i + 1 >= *argc || n_want == 64) { fprintf(stderr, "error: --dim needs SYM=N\n"); return 1; }
      want[n_want++] = argv[++i];
      continue;
    }
    argv[k++] = argv[i];
  }
  argv[k] = NULL;
  *argc = k;
  if (FTP_NUM_PLANS == 1 && n_want == 0) return 0;
  if (FTP_NUM_PLANS == 1) {
    fprintf(stderr, "error: this program was compiled for one shape; it takes no --dim\n");
    return 1;
  }
  int found = -1, count = 0;
  for (int p = 0; p < FTP_NUM_PLANS; p++) {
    int all = 1;
    for (int j = 0; j < n_want && all; j++) all = ftp_label_has(ftp_plan_name_of(p), want[j]);
    if (all) { found = p; count++; }
  }
  if (n_want == 0 || count != 1) {
    fprintf(stderr, "error: %s", n_want == 0 ? "this program has several plans; choose one with --dim SYM=N" : "--dim");
    for (int j = 0; j < n_want; j++) { fputc(' ', stderr); ft_text_put(stderr, want[j]); }
    fprintf(stderr, "%s; ", n_want == 0 ? "" : count ? " matches several plans" : " matches no plan");
    ftp_list_plans(stderr);
    return 1;
  }
  ftp_cli_plan = found;
  return 0;
}

int main(int argc, char **argv) {
  if (ftp_cli_choose_plan(&argc, argv)) return 1;
  ft_program prog = {FTP_NAME, FTP_NUM_INPUTS, FTP_NUM_OUTPUTS, ft_prog_inputs_of[ftp_cli_plan],
                     ft_prog_outputs_of[ftp_cli_plan], ftp_cli_init, ftp_cli_run, ftp_cli_free, FTP_ARENA_BYTES,
                     FTP_WEIGHTS_EMBEDDED, NULL};
  return ft_cli_main(argc, argv, &prog);
}

#endif
