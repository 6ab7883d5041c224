/* The command line every ftax program shares: generated programs (CPU and CUDA) and ftax-eager.
 *
 *   PROG [input_0.pb ...] [--input NAME=FILE.pb] [--output-dir DIR] [--weights FILE]
 *        [--bench] [--warmup N] [--iters N] [--json] [--threads N]
 *
 * Exit codes: 0 ok, 1 usage, 2 a wrong input file (type, shape, not a tensor), 4 I/O (a file that
 * cannot be read or written, out of memory).
 *
 * Names of inputs and outputs come from the model, and names in tensor files from the file: both
 * are printed through ft_text_put / ft_text_escape (text.h), never as raw bytes. */
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

#include "parallel.h"
#include "tensorio.h"
#include "text.h"

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

/* ft_io_bytes for a buffer about to be allocated: 0 and *bytes set, or -1 when the shape is
 * negative or its size overflows (ftax-eager's shapes come from the model). */
static int ft_io_bytes_checked(const ft_io_desc *d, size_t *bytes) {
  if (d->rank < 0 || d->rank > FT_MAX_RANK) return -1;
  return ft_size_checked(d->dtype, d->rank, d->dims, (size_t)INT64_MAX / 2, bytes) ? -1 : 0;
}

/* A 64-byte aligned buffer of at least bytes (a multiple of 64, as aligned_alloc wants), with
 * room past the end for kernels that read a vector beyond the last element; NULL when out of
 * memory. */
static void *ft_io_alloc(size_t bytes) {
  if (bytes > SIZE_MAX - 128) return NULL;
  return aligned_alloc(64, (bytes + 64) & ~(size_t)63);
}

/* Print a model's name for input/output k as 'name', escaped. */
static void ft_put_io_name(FILE *f, const char *what, int k, const char *name) {
  fprintf(f, "%s %d '", what, k);
  ft_text_put(f, name);
  fputc('\'', f);
}

/* The weights file next to the binary (PROG.weights) into buf; -1 if the path does not fit. */
static int ft_default_weights(const char *argv0, char *buf, size_t n) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) exe[len] = 0;
  else if ((size_t)snprintf(exe, sizeof exe, "%s", argv0) >= sizeof exe) return -1;
  return (size_t)snprintf(buf, n, "%s.weights", exe) >= n ? -1 : 0;
}

/* Record FILE for input k (from a positional argument or --input NAME=FILE); an input given twice
 * is a usage error. */
static int ft_cli_set_file(const ft_program *p, const char **files, int k, const char *path) {
  if (files[k]) {
    fprintf(stderr, "error: ");
    ft_put_io_name(stderr, "input", k, p->in[k].name);
    fprintf(stderr, " is given twice (%s and %s)\n", files[k], path);
    return 1;
  }
  files[k] = path;
  return 0;
}

/* The value of --input NAME=FILE.pb: finds the input named NAME and records FILE for it. */
static int ft_cli_named_input(const ft_program *p, const char **files, const char *v) {
  const char *eq = v ? strchr(v, '=') : NULL;
  int k = -1;
  for (int j = 0; eq && j < p->n_in; j++)
    if (strlen(p->in[j].name) == (size_t)(eq - v) && !strncmp(p->in[j].name, v, (size_t)(eq - v))) k = j;
  if (k < 0) {
    fprintf(stderr, "error: --input '%s': expected NAME=FILE.pb with NAME one of the inputs (see --help)\n", v ? v : "");
    return 1;
  }
  return ft_cli_set_file(p, files, k, eq + 1);
}

/* A positional input file: the next input in order, while there is one. */
static int ft_cli_positional(const ft_program *p, const char **files, int *n_pos, const char *path) {
  if (*n_pos >= p->n_in) {
    fprintf(stderr, "error: %s: the model has only %d input%s\n", path, p->n_in, p->n_in == 1 ? "" : "s");
    return 1;
  }
  return ft_cli_set_file(p, files, (*n_pos)++, path);
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
          "files are given); --threads N: threads for the kernels (default: every CPU this process\n"
          "may use).\ninputs:\n", p->name, p->weights_embedded < 0 ? "" : " [--weights FILE]");
  char s[256];
  for (int io = 0; io < 2; io++) {
    const ft_io_desc *d = io ? p->out : p->in;
    if (io) fprintf(f, "outputs:\n");
    for (int i = 0; i < (io ? p->n_out : p->n_in); i++) {
      ft_io_shape(&d[i], s, sizeof s);
      fprintf(f, "  %d ", i);
      ft_text_put(f, d[i].name);
      fprintf(f, " %s[%s]\n", ft_dtype_name(d[i].dtype), s);
    }
  }
}

static int ft_parse_count(const char *flag, const char *v, int *out) {
  char *end;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || end == v || *end || x < 0 || x > 100000000) { fprintf(stderr, "error: %s needs a non-negative number\n", flag); return 1; }
  *out = (int)x;
  return 0;
}

/* Load one input file and check it against what the program was compiled for: 0, or the exit
 * code (4 the file cannot be read, 2 it is not a tensor of the input's type and shape). */
static int ft_load_input(const ft_program *p, int k, const char *path, void *dst) {
  ft_pb_tensor t;
  const char *why;
  char want[256], got[256];
  int r = ft_pb_read_tensor(path, &t, &why);
  if (r) {
    fprintf(stderr, "error: %s: %s (expected a TensorProto for ", path, why);
    ft_put_io_name(stderr, "input", k, p->in[k].name);
    fprintf(stderr, ")\n");
    return r == FT_PB_EIO ? 4 : 2;
  }
  const ft_io_desc *w = &p->in[k];
  ft_io_desc d = {t.name, t.t.dtype, t.t.rank, {0}};
  for (int i = 0; i < t.t.rank; i++) d.dims[i] = t.t.dims[i];
  int same = w->rank == t.t.rank; /* dims compared as numbers: the strings below may be cut */
  for (int i = 0; same && i < w->rank; i++) same = w->dims[i] == t.t.dims[i];
  ft_io_shape(w, want, sizeof want);
  ft_io_shape(&d, got, sizeof got);
  int rc = 0;
  if (!ft_pb_accept_dtype(&t.t, w->dtype)) {
    fprintf(stderr, "error: %s: ", path);
    ft_put_io_name(stderr, "input", k, w->name);
    fprintf(stderr, " must be %s, the file holds %s\n", ft_dtype_name(w->dtype), ft_dtype_name(t.t.dtype));
    rc = 2;
  } else if (!same) {
    fprintf(stderr, "error: %s: ", path);
    ft_put_io_name(stderr, "input", k, w->name);
    fprintf(stderr, " must have shape [%s], the file holds [%s]; this program was compiled for one shape (recompile with other --dim values)\n",
            want, got);
    rc = 2;
  } else memcpy(dst, t.t.data, ft_io_bytes(w));
  free(t.t.data);
  return rc;
}

/* Input and output buffers of the program's shapes (inputs read from files or synthetic), or an
 * exit code with a message. in and out are arrays of n_in / n_out NULLs to fill. */
static int ft_cli_buffers(const ft_program *p, const char *const *files, void **in, void **out) {
  for (int io = 0; io < 2; io++)
    for (int k = 0; k < (io ? p->n_out : p->n_in); k++) {
      const ft_io_desc *d = io ? &p->out[k] : &p->in[k];
      size_t nb;
      void **slot = io ? &out[k] : &in[k];
      if (ft_io_bytes_checked(d, &nb)) {
        fprintf(stderr, "error: ");
        ft_put_io_name(stderr, io ? "output" : "input", k, d->name);
        fprintf(stderr, " has a shape whose size does not fit in memory\n");
        return 2;
      }
      if (!(*slot = ft_io_alloc(nb))) {
        fprintf(stderr, "error: out of memory for %zu bytes of ", nb);
        ft_put_io_name(stderr, io ? "output" : "input", k, d->name);
        fprintf(stderr, "\n");
        return 4;
      }
      if (io) continue;
      if (files[k]) {
        int rc = ft_load_input(p, k, files[k], *slot);
        if (rc) return rc;
      } else ft_fill_synthetic(d, *slot);
    }
  return 0;
}

/* Write output_K.pb into outdir (made if missing). Each file appears whole or not at all
 * (ft_pb_write_tensor writes a temporary and renames it); 0 or exit code 4. */
static int ft_cli_write_outputs(const ft_program *p, const char *outdir, void *const *out) {
  struct stat st;
  if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "error: --output-dir %s: cannot make the folder (%s)\n", outdir, strerror(errno));
    return 4;
  }
  if (stat(outdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "error: --output-dir %s: not a folder\n", outdir);
    return 4;
  }
  for (int k = 0; k < p->n_out; k++) {
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/output_%d.pb", outdir, k) >= sizeof path) {
      fprintf(stderr, "error: --output-dir %.200s...: the path is too long\n", outdir);
      return 4;
    }
    ft_tensor t = {p->out[k].dtype, p->out[k].rank, {0}, out[k]};
    for (int d = 0; d < t.rank; d++) t.dims[d] = p->out[k].dims[d];
    if (ft_pb_write_tensor(path, p->out[k].name, &t)) { fprintf(stderr, "error: %s: cannot write the output\n", path); return 4; }
  }
  return 0;
}

static int ft_cli_main(int argc, char **argv, const ft_program *p) {
  const char *outdir = NULL, *weights = NULL;
  int n_pos = 0, bench = 0, warmup = 10, iters = 100, json = 0, threads = 0, named = 0, rc = 0, have = 0;
  const char **files = (const char **)calloc((size_t)p->n_in + 1, sizeof *files);
  void **in = (void **)calloc((size_t)p->n_in + 1, sizeof(void *));
  void **out = (void **)calloc((size_t)p->n_out + 1, sizeof(void *));
  double *ms = NULL;
  void *ctx = NULL;
  char wpath[4096], err[1024] = ""; /* declared before the first goto: C++ (CUDA programs) wants that */
  if (!files || !in || !out) { fprintf(stderr, "error: out of memory\n"); rc = 4; goto done; }
  for (int i = 1; i < argc && !rc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { ft_usage(p, stdout); goto done; }
    else if (!strcmp(a, "--bench")) bench = 1;
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--warmup")) rc = ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &warmup);
    else if (!strcmp(a, "--iters")) { rc = ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &iters); if (!iters) iters = 1; }
    else if (!strcmp(a, "--threads")) { rc = ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &threads); }
    else if (!strcmp(a, "--output-dir")) { if (i + 1 >= argc) { fprintf(stderr, "error: --output-dir needs a folder\n"); rc = 1; } else outdir = argv[++i]; }
    else if (!strcmp(a, "--weights")) { if (i + 1 >= argc) { fprintf(stderr, "error: --weights needs a file\n"); rc = 1; } else weights = argv[++i]; }
    else if (!strcmp(a, "--input")) { rc = ft_cli_named_input(p, files, i + 1 < argc ? argv[++i] : NULL); named = 1; }
    else if (a[0] == '-' && a[1]) { fprintf(stderr, "error: unknown option '%s' (see --help)\n", a); rc = 1; }
    else rc = ft_cli_positional(p, files, &n_pos, a);
  }
  if (rc) goto done;
  for (int k = 0; k < p->n_in; k++) have += files[k] != NULL;
  if ((n_pos || named) && have != p->n_in) {
    for (int k = 0; k < p->n_in; k++)
      if (!files[k]) { fprintf(stderr, "error: no file for "); ft_put_io_name(stderr, "input", k, p->in[k].name); fprintf(stderr, "\n"); }
    rc = 1;
    goto done;
  }
  if (!have && !bench && p->n_in) { ft_usage(p, stderr); rc = 1; goto done; }
  if (outdir && !have && p->n_in) { fprintf(stderr, "error: --output-dir needs input files\n"); rc = 1; goto done; }
  ft_set_threads(threads); /* 0: the CPUs this process may use */
  threads = ft_get_threads();
  if (!weights && p->weights_embedded == 0) {
    if (ft_default_weights(argv[0], wpath, sizeof wpath)) { fprintf(stderr, "error: the program's path is too long to find its weights; use --weights FILE\n"); rc = 4; goto done; }
    weights = wpath;
  }
  if ((rc = ft_cli_buffers(p, files, in, out))) goto done;
  ctx = p->init(weights, err, sizeof err);
  if (!ctx) { fprintf(stderr, "error: %s\n", err); rc = strstr(err, "cannot") ? 4 : 2; goto done; }
  if (have || !bench) rc = p->run(ctx, (const void *const *)in, out);
  if (!rc && outdir) rc = ft_cli_write_outputs(p, outdir, out);
  if (!rc && bench) {
    if (!(ms = (double *)malloc(sizeof(double) * (size_t)iters))) { fprintf(stderr, "error: out of memory for %d timings\n", iters); rc = 4; goto done; }
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
      if (json) {
        printf("{\"program\": ");
        ft_text_put_json(stdout, p->name);
        printf(", \"warmup\": %d, \"iters\": %d, \"threads\": %d, \"min_ms\": %.6f, \"mean_ms\": %.6f, "
               "\"median_ms\": %.6f, \"p90_ms\": %.6f, \"p99_ms\": %.6f, \"max_ms\": %.6f, \"throughput_per_s\": %.3f, \"arena_bytes\": %zu}\n",
               warmup, iters, threads, ms[0], mean, med, p90, p99, ms[iters - 1], iters * 1000.0 / t_all, p->arena_bytes);
      } else {
        ft_text_put(stdout, p->name);
        printf(": %d iterations after %d warm-up, %d thread%s\n"
               "  latency ms: min %.4f  mean %.4f  median %.4f  p90 %.4f  p99 %.4f  max %.4f\n"
               "  throughput: %.2f inferences/s\n",
               iters, warmup, threads, threads == 1 ? "" : "s", ms[0], mean, med, p90, p99, ms[iters - 1],
               iters * 1000.0 / t_all);
#ifdef FTP_PRECISION /* ftaxc --precision bf16: which micro-kernel this build runs */
        printf("  precision: %s\n", FTP_PRECISION);
#endif
      }
    }
  }
done:
  free(ms);
  if (ctx) p->free(ctx);
  for (int k = 0; in && k < p->n_in; k++) free(in[k]);
  for (int k = 0; out && k < p->n_out; k++) free(out[k]);
  free(in);
  free(out);
  free((void *)files);
  return rc;
}

#endif
