/* The command line every ftax program shares: generated programs (CPU and CUDA) and ftax-eager.
 *
 *   PROG [input_0.pb ...] [--input NAME=FILE.pb] [--output-dir DIR] [--weights FILE]
 *        [--bench] [--warmup N] [--iters N] [--json] [--threads N]
 *
 * Exit codes: 0 ok, 1 usage, 2 a wrong input file (type, shape, not a tensor), 4 I/O. */
#ifndef FT_CLI_H
#define FT_CLI_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "tensorio.h"

typedef struct ft_io_desc {
  const char *name;
  int dtype;
  int rank;
  int64_t dims[FT_MAX_RANK];
} ft_io_desc;

typedef struct ft_program {
  const char *name;
  int n_in, n_out;
  const ft_io_desc *in, *out;
  void *(*init)(const char *weights, char *err, size_t n); /* NULL on failure */
  int (*run)(void *ctx, const void *const *in, void *const *out);
  void (*free)(void *ctx);
  size_t arena_bytes;
  int weights_embedded; /* 0: needs --weights or PROG.weights next to the binary; -1: none */
  void (*timing_start)(void *ctx); /* optional: called after warm-up, before the timed runs */
} ft_program;

static size_t ft_io_bytes(const ft_io_desc *d) {
  size_t n = ft_dtype_size(d->dtype);
  for (int i = 0; i < d->rank; i++) n *= (size_t)d->dims[i];
  return n;
}

static void ft_io_shape(const ft_io_desc *d, char *buf, size_t n) {
  size_t m = 0;
  buf[0] = 0;
  for (int i = 0; i < d->rank && m < n; i++) m += snprintf(buf + m, n - m, "%s%lld", i ? "x" : "", (long long)d->dims[i]);
  if (!d->rank) snprintf(buf, n, "scalar");
}

static double ft_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int ft_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double ft_percentile(const double *sorted, int n, double q) {
  double pos = q * (n - 1);
  int lo = (int)pos;
  double fr = pos - lo;
  return lo + 1 < n ? sorted[lo] * (1 - fr) + sorted[lo + 1] * fr : sorted[lo];
}

/* Synthetic input: floats uniform in [-1, 1); integers and bools 1 (a valid token id, an
 * all-ones attention mask, type id 1 exists in every vocabulary we export). */
static void ft_fill_synthetic(const ft_io_desc *d, void *buf) {
  size_t n = ft_io_bytes(d) / (ft_dtype_size(d->dtype) ? ft_dtype_size(d->dtype) : 1);
  uint32_t s = 12345;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    float r = (float)(s >> 8) / (float)(1 << 24) * 2.0f - 1.0f;
    switch (d->dtype) {
    case FT_FLOAT: ((float *)buf)[i] = r; break;
    case FT_DOUBLE: ((double *)buf)[i] = r; break;
    case FT_FLOAT16: ((uint16_t *)buf)[i] = ft_float_to_half(r); break;
    case FT_INT64: ((int64_t *)buf)[i] = 1; break;
    case FT_INT32: ((int32_t *)buf)[i] = 1; break;
    default: memset((char *)buf + i * ft_dtype_size(d->dtype), 0, ft_dtype_size(d->dtype)); ((uint8_t *)buf)[i * ft_dtype_size(d->dtype)] = 1; break;
    }
  }
}

static void ft_usage(const ft_program *p, FILE *f) {
  fprintf(f,
          "usage: %s [input_0.pb ...] [--input NAME=FILE.pb] [--output-dir DIR]%s\n"
          "          [--bench] [--warmup N] [--iters N] [--json] [--threads N]\n"
          "Runs the model on ONNX TensorProto files (one per input, in order or by name) and writes\n"
          "output_K.pb files to --output-dir; --bench times repeated runs (synthetic inputs when no\n"
          "files are given).\ninputs:\n", p->name, p->weights_embedded < 0 ? "" : " [--weights FILE]");
  char s[128];
  for (int i = 0; i < p->n_in; i++) { ft_io_shape(&p->in[i], s, sizeof s); fprintf(f, "  %d %s %s[%s]\n", i, p->in[i].name, ft_dtype_name(p->in[i].dtype), s); }
  fprintf(f, "outputs:\n");
  for (int i = 0; i < p->n_out; i++) { ft_io_shape(&p->out[i], s, sizeof s); fprintf(f, "  %d %s %s[%s]\n", i, p->out[i].name, ft_dtype_name(p->out[i].dtype), s); }
}

static int ft_parse_count(const char *flag, const char *v, int *out) {
  char *end;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || end == v || *end || x < 0 || x > 100000000) { fprintf(stderr, "error: %s needs a non-negative number\n", flag); return 1; }
  *out = (int)x;
  return 0;
}

/* Load one input file and check it against what the program was compiled for. */
static int ft_load_input(const ft_program *p, int k, const char *path, void *dst) {
  ft_pb_tensor t;
  const char *why;
  char want[128], got[128];
  if (ft_pb_read_tensor(path, &t, &why)) {
    fprintf(stderr, "error: %s: %s (expected a TensorProto for input %d '%s')\n", path, why, k, p->in[k].name);
    return errno == ENOENT ? 4 : 2;
  }
  ft_io_desc d = {t.name, t.t.dtype, t.t.rank, {0}};
  for (int i = 0; i < t.t.rank; i++) d.dims[i] = t.t.dims[i];
  ft_io_shape(&p->in[k], want, sizeof want);
  ft_io_shape(&d, got, sizeof got);
  int rc = 0;
  if (!ft_pb_accept_dtype(&t.t, p->in[k].dtype)) {
    fprintf(stderr, "error: %s: input %d '%s' must be %s, the file holds %s\n", path, k, p->in[k].name,
            ft_dtype_name(p->in[k].dtype), ft_dtype_name(t.t.dtype));
    rc = 2;
  } else if (strcmp(want, got) != 0) {
    fprintf(stderr, "error: %s: input %d '%s' must have shape [%s], the file holds [%s]; this program was compiled for one shape (recompile with other --dim values)\n",
            path, k, p->in[k].name, want, got);
    rc = 2;
  } else memcpy(dst, t.t.data, ft_io_bytes(&p->in[k]));
  free(t.t.data);
  return rc;
}

static int ft_cli_main(int argc, char **argv, const ft_program *p) {
  const char *files[256] = {0}, *outdir = NULL, *weights = NULL;
  int n_pos = 0, bench = 0, warmup = 10, iters = 100, json = 0, threads = 1, named = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { ft_usage(p, stdout); return 0; }
    else if (!strcmp(a, "--bench")) bench = 1;
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--warmup")) { if (ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &warmup)) return 1; }
    else if (!strcmp(a, "--iters")) { if (ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &iters)) return 1; if (!iters) iters = 1; }
    else if (!strcmp(a, "--threads")) { if (ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &threads)) return 1; if (!threads) threads = 1; }
    else if (!strcmp(a, "--output-dir")) { if (i + 1 >= argc) { fprintf(stderr, "error: --output-dir needs a folder\n"); return 1; } outdir = argv[++i]; }
    else if (!strcmp(a, "--weights")) { if (i + 1 >= argc) { fprintf(stderr, "error: --weights needs a file\n"); return 1; } weights = argv[++i]; }
    else if (!strcmp(a, "--input")) {
      const char *v = i + 1 < argc ? argv[++i] : "", *eq = strchr(v, '=');
      int k = -1;
      for (int j = 0; eq && j < p->n_in; j++)
        if (strlen(p->in[j].name) == (size_t)(eq - v) && !strncmp(p->in[j].name, v, (size_t)(eq - v))) k = j;
      if (k < 0) { fprintf(stderr, "error: --input '%s': expected NAME=FILE.pb with NAME one of the inputs (see --help)\n", v); return 1; }
      files[k] = eq + 1;
      named = 1;
    } else if (a[0] == '-' && a[1]) { fprintf(stderr, "error: unknown option '%s' (see --help)\n", a); return 1; }
    else {
      if (n_pos >= p->n_in) { fprintf(stderr, "error: %s: the model has only %d input%s\n", a, p->n_in, p->n_in == 1 ? "" : "s"); return 1; }
      files[n_pos++] = a;
    }
  }
  int have = 0;
  for (int k = 0; k < p->n_in; k++) have += files[k] != NULL;
  if ((n_pos || named) && have != p->n_in) {
    for (int k = 0; k < p->n_in; k++)
      if (!files[k]) fprintf(stderr, "error: no file for input %d '%s'\n", k, p->in[k].name);
    return 1;
  }
  if (!have && !bench && p->n_in) { ft_usage(p, stderr); return 1; }
  if (outdir && !have && p->n_in) { fprintf(stderr, "error: --output-dir needs input files\n"); return 1; }
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  char wpath[4096];
  if (!weights && p->weights_embedded == 0) {
    ssize_t n = readlink("/proc/self/exe", wpath, sizeof wpath - 16);
    if (n <= 0) snprintf(wpath, sizeof wpath, "%s", argv[0]); else wpath[n] = 0;
    strcat(wpath, ".weights");
    weights = wpath;
  }
  void **in = (void **)calloc((size_t)p->n_in + 1, sizeof(void *));
  void **out = (void **)calloc((size_t)p->n_out + 1, sizeof(void *));
  int rc = 0;
  for (int k = 0; k < p->n_in && !rc; k++) {
    in[k] = aligned_alloc(64, (ft_io_bytes(&p->in[k]) + 64) & ~(size_t)63);
    if (files[k]) rc = ft_load_input(p, k, files[k], in[k]);
    else ft_fill_synthetic(&p->in[k], in[k]);
  }
  for (int k = 0; k < p->n_out; k++) out[k] = aligned_alloc(64, (ft_io_bytes(&p->out[k]) + 64) & ~(size_t)63);
  char err[1024] = "";
  void *ctx = NULL;
  if (!rc) {
    ctx = p->init(weights, err, sizeof err);
    if (!ctx) { fprintf(stderr, "error: %s\n", err); rc = strstr(err, "cannot") ? 4 : 2; }
  }
  if (!rc && (have || !bench)) rc = p->run(ctx, (const void *const *)in, out);
  if (!rc && outdir) {
    mkdir(outdir, 0777);
    for (int k = 0; k < p->n_out && !rc; k++) {
      char path[4096];
      if ((size_t)snprintf(path, sizeof path, "%s/output_%d.pb", outdir, k) >= sizeof path) {
        fprintf(stderr, "error: --output-dir %.200s...: the path is too long\n", outdir);
        rc = 4;
        break;
      }
      ft_tensor t = {p->out[k].dtype, p->out[k].rank, {0}, out[k]};
      for (int d = 0; d < t.rank; d++) t.dims[d] = p->out[k].dims[d];
      if (ft_pb_write_tensor(path, p->out[k].name, &t)) { fprintf(stderr, "error: %s: cannot write the output\n", path); rc = 4; }
    }
  }
  if (!rc && bench) {
    double *ms = (double *)malloc(sizeof(double) * (size_t)iters);
    for (int i = 0; i < warmup && !rc; i++) rc = p->run(ctx, (const void *const *)in, out);
    if (p->timing_start) p->timing_start(ctx);
    double t_all = ft_now_ms();
    for (int i = 0; i < iters && !rc; i++) {
      double t0 = ft_now_ms();
      rc = p->run(ctx, (const void *const *)in, out);
      ms[i] = ft_now_ms() - t0;
    }
    t_all = ft_now_ms() - t_all;
    if (!rc) {
      double sum = 0;
      for (int i = 0; i < iters; i++) sum += ms[i];
      qsort(ms, (size_t)iters, sizeof *ms, ft_cmp_double);
      double mean = sum / iters, med = ft_percentile(ms, iters, 0.5);
      double p90 = ft_percentile(ms, iters, 0.9), p99 = ft_percentile(ms, iters, 0.99);
      if (json)
        printf("{\"program\": \"%s\", \"warmup\": %d, \"iters\": %d, \"threads\": %d, \"min_ms\": %.6f, \"mean_ms\": %.6f, "
               "\"median_ms\": %.6f, \"p90_ms\": %.6f, \"p99_ms\": %.6f, \"max_ms\": %.6f, \"throughput_per_s\": %.3f, \"arena_bytes\": %zu}\n",
               p->name, warmup, iters, threads, ms[0], mean, med, p90, p99, ms[iters - 1], iters * 1000.0 / t_all, p->arena_bytes);
      else
        printf("%s: %d iterations after %d warm-up, %d thread%s\n"
               "  latency ms: min %.4f  mean %.4f  median %.4f  p90 %.4f  p99 %.4f  max %.4f\n"
               "  throughput: %.2f inferences/s\n",
               p->name, iters, warmup, threads, threads == 1 ? "" : "s", ms[0], mean, med, p90, p99, ms[iters - 1],
               iters * 1000.0 / t_all);
    }
    free(ms);
  }
  if (ctx) p->free(ctx);
  for (int k = 0; k < p->n_in; k++) free(in[k]);
  for (int k = 0; k < p->n_out; k++) free(out[k]);
  free(in);
  free(out);
  return rc;
}

#endif
