/* The command-line tool of a generated CUDA program (cli_cuda.cuh) over its API (program.cuh).
 * ftaxc pastes it last, between #ifndef OUT_NO_MAIN and #endif, after the model's input and
 * output tables ft_prog_inputs and ft_prog_outputs and with FTP_PRECISION ("fp32", "tf32",
 * "fp16") defined. */
#ifndef FTC_PROGRAM_MAIN_CUH
#define FTC_PROGRAM_MAIN_CUH

#include "cli_cuda.cuh"
#include "program.cuh"

static void *ftp_cli_init(const char *weights, char *err, size_t n) {
  ftp_ctx *ctx = NULL;
  return FTP_API(init)(&ctx, weights, err, n) ? NULL : ctx;
}
static int ftp_cli_run(void *ctx, const void *const *in, void *const *out) {
  if (!FTP_API(run)((ftp_ctx *)ctx, in, out)) return 0;
  fprintf(stderr, "error: %s\n", FTP_API(error)((ftp_ctx *)ctx));
  return 6;
}
static void ftp_cli_free(void *ctx) { FTP_API(free)((ftp_ctx *)ctx); }
static int ftp_cli_upload(void *ctx, const void *const *in) { return FTP_API(upload)((ftp_ctx *)ctx, in); }
static int ftp_cli_enqueue(void *ctx) { return FTP_API(enqueue)((ftp_ctx *)ctx); }
static int ftp_cli_download(void *ctx, void *const *out) { return FTP_API(download)((ftp_ctx *)ctx, out); }
static int ftp_cli_sync(void *ctx) { return FTP_API(sync)((ftp_ctx *)ctx); }
static void *ftp_cli_stream(void *ctx) { return FTP_API(stream)((ftp_ctx *)ctx); }
static const char *ftp_cli_error(void *ctx) { return FTP_API(error)((ftp_ctx *)ctx); }

int main(int argc, char **argv) {
  ft_program prog = {FTP_NAME, FTP_NUM_INPUTS, FTP_NUM_OUTPUTS, ft_prog_inputs, ft_prog_outputs,
                     ftp_cli_init, ftp_cli_run, ftp_cli_free, FTP_ARENA_BYTES, 0, NULL};
  ftc_program gpu = {ftp_cli_upload, ftp_cli_enqueue, ftp_cli_download, ftp_cli_sync,
                     ftp_cli_stream, ftp_cli_error, FTP_PRECISION, FTP_CUDA_GRAPH, FTP_ARCH};
  return ftc_cli_main(argc, argv, &prog, &gpu);
}

#endif
