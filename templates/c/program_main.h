/* The command-line tool of a generated C program (cli.h) over its API (program.h). ftaxc pastes
 * it last, between #ifndef OUT_NO_MAIN and #endif, after the model's input and output tables
 * ft_prog_inputs and ft_prog_outputs and with FTP_NUM_INPUTS and FTP_NUM_OUTPUTS defined. */
#ifndef FT_PROGRAM_MAIN_H
#define FT_PROGRAM_MAIN_H

#include "cli.h"
#include "program.h"

static void *ftp_cli_init(const char *weights, char *err, size_t n) {
  ftp_ctx *ctx = NULL;
  return FTP_API(init)(&ctx, weights, err, n) ? NULL : ctx;
}
static int ftp_cli_run(void *ctx, const void *const *in, void *const *out) {
  return FTP_API(run)((ftp_ctx *)ctx, in, out);
}
static void ftp_cli_free(void *ctx) { FTP_API(free)((ftp_ctx *)ctx); }

int main(int argc, char **argv) {
  ft_program prog = {FTP_NAME, FTP_NUM_INPUTS, FTP_NUM_OUTPUTS, ft_prog_inputs, ft_prog_outputs,
                     ftp_cli_init, ftp_cli_run, ftp_cli_free, FTP_ARENA_BYTES, FTP_WEIGHTS_EMBEDDED, NULL};
  return ft_cli_main(argc, argv, &prog);
}

#endif
