/* The command line of a generated CUDA program: templates/c/cli.h's (running on test-data files,
 * --output-dir, ...) plus GPU timing in the manner of trtexec:
 *
 *   PROG --bench [--warmup N] [--iters N] [--json] [--no-data-transfers] [--device N] [inputs]
 *
 * Every timed iteration copies the inputs in (from pinned host memory), enqueues the model and
 * copies the outputs back, then waits. Reported per iteration:
 *   host latency   wall clock of the whole iteration (H2D + compute + D2H + the wait)
 *   GPU compute    CUDA events around the enqueued model on the stream
 *   enqueue        host time to enqueue the model (kernel launches, or one graph launch)
 *   H2D, D2H       CUDA events around the copies
 * --no-data-transfers leaves the copies out (inputs stay on the device from the warm-up). */
#ifndef FTC_CLI_CUDA_CUH
#define FTC_CLI_CUDA_CUH

#include "cli.h"
#include "runtime.cuh"

typedef struct ftc_program {
  int (*upload)(void *ctx, const void *const *in);
  int (*enqueue)(void *ctx);
  int (*download)(void *ctx, void *const *out);
  int (*sync)(void *ctx);
  void *(*stream)(void *ctx);
  const char *(*error)(void *ctx);
  const char *precision;
  int graph;
  const char *arch;
} ftc_program;

typedef struct ftc_stats { double min, mean, median, p90, p99, max; } ftc_stats;

static ftc_stats ftc_stats_of(double *v, int n) {
  ftc_stats s = {0, 0, 0, 0, 0, 0};
  if (n <= 0) return s;
  double sum = 0;
  for (int i = 0; i < n; i++) sum += v[i];
  qsort(v, (size_t)n, sizeof *v, ft_cmp_double);
  s.min = v[0];
  s.max = v[n - 1];
  s.mean = sum / n;
  s.median = ft_percentile(v, n, 0.5);
  s.p90 = ft_percentile(v, n, 0.9);
  s.p99 = ft_percentile(v, n, 0.99);
  return s;
}

static void ftc_stats_json(const char *name, ftc_stats s, int last) {
  printf("\"%s\": {\"min\": %.6f, \"mean\": %.6f, \"median\": %.6f, \"p90\": %.6f, \"p99\": %.6f, \"max\": %.6f}%s", name, s.min,
         s.mean, s.median, s.p90, s.p99, s.max, last ? "" : ", ");
}

static void ftc_stats_text(const char *name, ftc_stats s) {
  printf("  %-13s min %.4f  mean %.4f  median %.4f  p90 %.4f  p99 %.4f  max %.4f ms\n", name, s.min, s.mean, s.median, s.p90,
         s.p99, s.max);
}

#define FTC_CLI_CU(call, what)                                                                   \
  do {                                                                                           \
    cudaError_t r_ = (call);                                                                     \
    if (r_ != cudaSuccess) { fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(r_)); rc = 6; goto done; } \
  } while (0)

static int ftc_bench(int argc, char **argv, const ft_program *p, const ftc_program *g, int transfers) {
  const char **files = NULL, *weights = NULL;
  int n_pos = 0, warmup = 10, iters = 100, json = 0, threads = 1, rc = 0, have = 0;
  void **hin = NULL, **hout = NULL, *ctx = NULL;
  double *lat = NULL, *gpu = NULL, *enq = NULL, *h2d = NULL, *d2h = NULL;
  cudaEvent_t ev[4] = {0, 0, 0, 0};
  char err[1024] = "", wpath[4096];
  double t_all = 0;
  cudaStream_t st = 0;
  struct cudaDeviceProp prop;
  int dev = 0;
  if (!(files = (const char **)calloc((size_t)p->n_in + 1, sizeof *files))) { fprintf(stderr, "error: out of memory\n"); return 4; }
  for (int i = 1; i < argc && !rc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--bench")) continue;
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--warmup")) rc = ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &warmup);
    else if (!strcmp(a, "--iters")) { rc = ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &iters); if (!iters) iters = 1; }
    else if (!strcmp(a, "--threads")) rc = ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &threads);
    else if (!strcmp(a, "--weights")) { if (i + 1 >= argc) { fprintf(stderr, "error: --weights needs a file\n"); rc = 1; } else weights = argv[++i]; }
    else if (!strcmp(a, "--input")) rc = ft_cli_named_input(p, files, i + 1 < argc ? argv[++i] : NULL);
    else if (!strcmp(a, "--output-dir")) { fprintf(stderr, "error: --output-dir does not go with --bench\n"); rc = 1; }
    else if (a[0] == '-' && a[1]) { fprintf(stderr, "error: unknown option '%s' (see --help)\n", a); rc = 1; }
    else rc = ft_cli_positional(p, files, &n_pos, a);
  }
  if (rc) goto done;
  for (int k = 0; k < p->n_in; k++) have += files[k] != NULL;
  if (have && have != p->n_in) {
    for (int k = 0; k < p->n_in; k++)
      if (!files[k]) { fprintf(stderr, "error: no file for "); ft_put_io_name(stderr, "input", k, p->in[k].name); fprintf(stderr, "\n"); }
    rc = 1;
    goto done;
  }
  if (!weights && p->weights_embedded == 0) {
    if (ft_default_weights(argv[0], wpath, sizeof wpath)) { fprintf(stderr, "error: the program's path is too long to find its weights; use --weights FILE\n"); rc = 4; goto done; }
    weights = wpath;
  }
  hin = (void **)calloc((size_t)p->n_in + 1, sizeof(void *));
  hout = (void **)calloc((size_t)p->n_out + 1, sizeof(void *));
  lat = (double *)calloc((size_t)iters, sizeof(double));
  gpu = (double *)calloc((size_t)iters, sizeof(double));
  enq = (double *)calloc((size_t)iters, sizeof(double));
  h2d = (double *)calloc((size_t)iters, sizeof(double));
  d2h = (double *)calloc((size_t)iters, sizeof(double));
  if (!hin || !hout || !lat || !gpu || !enq || !h2d || !d2h) { fprintf(stderr, "error: out of memory\n"); rc = 4; goto done; }
  ctx = p->init(weights, err, sizeof err);
  if (!ctx) { fprintf(stderr, "error: %s\n", err); rc = strstr(err, "cannot") ? 4 : 2; goto done; }
  for (int k = 0; k < p->n_in + p->n_out && !rc; k++) {
    int is_out = k >= p->n_in, j = is_out ? k - p->n_in : k;
    const ft_io_desc *d = is_out ? &p->out[j] : &p->in[j];
    size_t nb;
    if (ft_io_bytes_checked(d, &nb)) {
      fprintf(stderr, "error: ");
      ft_put_io_name(stderr, is_out ? "output" : "input", j, d->name);
      fprintf(stderr, " has a shape whose size does not fit in memory\n");
      rc = 2;
      goto done;
    }
    FTC_CLI_CU(cudaMallocHost(is_out ? &hout[j] : &hin[j], nb + 64), is_out ? "pinned output buffer" : "pinned input buffer");
    if (is_out) continue;
    if (files[j]) rc = ft_load_input(p, j, files[j], hin[j]);
    else ft_fill_synthetic(d, hin[j]);
  }
  if (rc) goto done;
  for (int i = 0; i < 4; i++) FTC_CLI_CU(cudaEventCreate(&ev[i]), "cudaEventCreate");
  st = (cudaStream_t)g->stream(ctx);
  /* the inputs go in once, so that --no-data-transfers computes on real data */
  if (g->upload(ctx, (const void *const *)hin) || g->sync(ctx)) { fprintf(stderr, "error: %s\n", g->error(ctx)); rc = 6; goto done; }
  for (int it = -warmup; it < iters; it++) {
    double t0 = ft_now_ms(), tq0, tq1;
    if (it == 0) t_all = t0;
    if (transfers) {
      FTC_CLI_CU(cudaEventRecord(ev[0], st), "cudaEventRecord");
      if (g->upload(ctx, (const void *const *)hin)) { rc = 6; break; }
    }
    FTC_CLI_CU(cudaEventRecord(ev[1], st), "cudaEventRecord");
    tq0 = ft_now_ms();
    if (g->enqueue(ctx)) { rc = 6; break; }
    tq1 = ft_now_ms();
    FTC_CLI_CU(cudaEventRecord(ev[2], st), "cudaEventRecord");
    if (transfers) {
      if (g->download(ctx, hout)) { rc = 6; break; }
      FTC_CLI_CU(cudaEventRecord(ev[3], st), "cudaEventRecord");
    }
    if (g->sync(ctx)) { rc = 6; break; }
    double t1 = ft_now_ms();
    if (it < 0) continue;
    float ms = 0;
    lat[it] = t1 - t0;
    enq[it] = tq1 - tq0;
    FTC_CLI_CU(cudaEventElapsedTime(&ms, ev[1], ev[2]), "cudaEventElapsedTime");
    gpu[it] = ms;
    if (transfers) {
      FTC_CLI_CU(cudaEventElapsedTime(&ms, ev[0], ev[1]), "cudaEventElapsedTime");
      h2d[it] = ms;
      FTC_CLI_CU(cudaEventElapsedTime(&ms, ev[2], ev[3]), "cudaEventElapsedTime");
      d2h[it] = ms;
    }
  }
  if (rc) { fprintf(stderr, "error: %s\n", g->error(ctx)); goto done; }
  t_all = ft_now_ms() - t_all;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  {
    ftc_stats sl = ftc_stats_of(lat, iters), sg = ftc_stats_of(gpu, iters), se = ftc_stats_of(enq, iters);
    ftc_stats sh = ftc_stats_of(h2d, iters), sd = ftc_stats_of(d2h, iters);
    double tput = iters * 1000.0 / t_all;
    if (json) {
      printf("{\"program\": ");
      ft_text_put_json(stdout, p->name);
      printf(", \"device\": ");
      ft_text_put_json(stdout, prop.name);
      printf(", \"precision\": \"%s\", \"cuda_graph\": %s, \"arch\": \"%s\", \"data_transfers\": %s, \"warmup\": %d, \"iters\": %d, ",
             g->precision, g->graph ? "true" : "false", g->arch, transfers ? "true" : "false", warmup, iters);
      ftc_stats_json("host_latency_ms", sl, 0);
      ftc_stats_json("gpu_compute_ms", sg, 0);
      ftc_stats_json("enqueue_ms", se, 0);
      if (transfers) { ftc_stats_json("h2d_ms", sh, 0); ftc_stats_json("d2h_ms", sd, 0); }
      /* the keys cli.h's --json has, for scripts that read either */
      printf("\"min_ms\": %.6f, \"mean_ms\": %.6f, \"median_ms\": %.6f, \"p90_ms\": %.6f, \"p99_ms\": %.6f, \"max_ms\": %.6f, "
             "\"throughput_per_s\": %.3f, \"arena_bytes\": %zu}\n",
             sl.min, sl.mean, sl.median, sl.p90, sl.p99, sl.max, tput, p->arena_bytes);
    } else {
      ft_text_put(stdout, p->name);
      printf(" on ");
      ft_text_put(stdout, prop.name);
      printf(" (%s%s, %s): %d iterations after %d warm-up%s\n", g->precision,
             g->graph ? ", CUDA graph" : "", g->arch, iters, warmup, transfers ? "" : ", no data transfers");
      ftc_stats_text("host latency", sl);
      ftc_stats_text("GPU compute", sg);
      ftc_stats_text("enqueue", se);
      if (transfers) { ftc_stats_text("H2D", sh); ftc_stats_text("D2H", sd); }
      printf("  throughput: %.2f inferences/s\n", tput);
    }
  }
done:
  for (int i = 0; i < 4; i++) if (ev[i]) cudaEventDestroy(ev[i]);
  if (ctx) p->free(ctx);
  for (int k = 0; hin && k < p->n_in; k++) if (hin[k]) cudaFreeHost(hin[k]);
  for (int k = 0; hout && k < p->n_out; k++) if (hout[k]) cudaFreeHost(hout[k]);
  free(hin); free(hout); free(lat); free(gpu); free(enq); free(h2d); free(d2h); free((void *)files);
  return rc;
}

static int ftc_cli_main(int argc, char **argv, const ft_program *p, const ftc_program *g) {
  int bench = 0, transfers = 1, m = 0;
  char **args = (char **)calloc((size_t)argc + 1, sizeof(char *));
  if (!args) { fprintf(stderr, "error: out of memory\n"); return 4; }
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (i && !strcmp(a, "--no-data-transfers")) { transfers = 0; continue; }
    if (i && !strcmp(a, "--device")) {
      char *end;
      long d = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
      if (d < 0 || *end) { fprintf(stderr, "error: --device needs a GPU number\n"); free(args); return 1; }
      cudaError_t r = cudaSetDevice((int)d);
      if (r != cudaSuccess) { fprintf(stderr, "error: --device %ld: %s\n", d, cudaGetErrorString(r)); free(args); return 6; }
      i++;
      continue;
    }
    if (i && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
      ft_usage(p, stdout);
      printf("GPU options (built for %s, %s%s):\n"
             "  --bench prints host latency, GPU compute (CUDA events), enqueue, H2D and D2H times\n"
             "  --no-data-transfers  time the model alone (inputs uploaded once)\n"
             "  --device N           run on GPU N\n"
             "exit 6: a CUDA error (no device, no code for this GPU, a failed kernel)\n",
             g->arch, g->precision, g->graph ? ", CUDA graph" : "");
      free(args);
      return 0;
    }
    if (i && !strcmp(a, "--bench")) bench = 1;
    args[m++] = argv[i];
  }
  int rc;
  if (bench) rc = ftc_bench(m, args, p, g, transfers);
  else if (!transfers) { fprintf(stderr, "error: --no-data-transfers goes with --bench\n"); rc = 1; }
  else rc = ft_cli_main(m, args, p);
  free(args);
  return rc;
}

#endif
