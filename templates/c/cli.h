/* The command line every ftax program shares: generated programs (CPU and CUDA) and ftax-eager.
 *
 *   PROG [input_0.pb ...] [--input NAME=FILE.pb] [--output-dir DIR] [--weights FILE]
 *        [--bench] [--warmup N] [--iters N] [--json] [--threads N] [--generate N --prompt FILE.pb]
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

#define FT_MAX_IO_GEN 1024 /* inputs a --generate model may have */

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
          "          [--generate N --prompt FILE.pb]\n"
          "Runs the model on ONNX TensorProto files (one per input, in order or by name) and writes\n"
          "output_K.pb files to --output-dir; --bench times repeated runs (synthetic inputs when no\n"
          "files are given); --threads N: threads for the kernels (default: every CPU this process\n"
          "may use); --generate N: greedy decoding of N tokens after the prompt (int64 [batch, P])\n"
          "with a decode-step model (input_ids, position_ids, past_X -> logits, present_X).\ninputs:\n", p->name, p->weights_embedded < 0 ? "" : " [--weights FILE]");
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

/* ---- --generate: greedy decoding with a KV cache, in the program ------------------------------
 * For a decode-step graph as bench/models/export.py (gpt2_kv) and Hugging Face's exporters write
 * it: an int64 input input_ids [B, 1], optionally position_ids [B, 1], cache inputs past_X each
 * paired with an output present_X of the same type and shape, and the logits as output 0, [B, V]
 * or [B, 1, V]. The prompt ([B, P] int64) goes in one token per step from an empty (zero) cache,
 * at positions 0, 1, ...; each step's present_X become the next step's past_X (the buffers swap,
 * nothing is copied); from the prompt's last token on, the argmax of each row's logits is the
 * next token. P + N - 1 steps make N new tokens. With a cache of rank 4 ([B, H, T, D]) the last
 * position, P + N - 2, must be below T. */
typedef struct ft_gen {
  int tok, pos, n_pairs, *past, *present;
  int64_t B, V, T;
} ft_gen;

static int ft_find_io(const ft_io_desc *d, int n, const char *name) {
  for (int k = 0; k < n; k++)
    if (!strcmp(d[k].name, name)) return k;
  return -1;
}

static int ft_gen_token_input(const ft_io_desc *d) {
  return d->dtype == FT_INT64 && d->rank == 2 && d->dims[1] == 1;
}

/* The decode-step interface of the program, or exit code 1 with a message saying what is missing. */
static int ft_gen_plan(const ft_program *p, ft_gen *g) {
  const char *need = "--generate needs a decode-step model (int64 input_ids [batch, 1], past_X inputs paired with present_X outputs, logits as output 0)";
  g->tok = ft_find_io(p->in, p->n_in, "input_ids");
  g->pos = ft_find_io(p->in, p->n_in, "position_ids");
  if (g->tok < 0 || !ft_gen_token_input(&p->in[g->tok])) { fprintf(stderr, "error: %s: no input_ids of that type\n", need); return 1; }
  g->B = p->in[g->tok].dims[0];
  if (g->B < 1) { /* a program compiled with --dim batch=0 runs, but has no row to decode */
    fprintf(stderr, "error: --generate: input_ids is [%lld, 1]; decoding needs a batch of at least 1 (compile with a batch of 1 or more)\n", (long long)g->B);
    return 1;
  }
  if (g->pos >= 0 && (!ft_gen_token_input(&p->in[g->pos]) || p->in[g->pos].dims[0] != g->B)) {
    fprintf(stderr, "error: %s: position_ids must be int64 [%lld, 1] like input_ids\n", need, (long long)g->B);
    return 1;
  }
  const ft_io_desc *lg = &p->out[0];
  size_t nl = ft_io_bytes(lg) / sizeof(float);
  if (p->n_out < 1 || lg->dtype != FT_FLOAT || lg->rank < 2 || lg->dims[0] != g->B || nl % (size_t)g->B || nl / (size_t)g->B != (size_t)lg->dims[lg->rank - 1]) {
    fprintf(stderr, "error: %s: output 0 is not float logits [%lld, vocab]\n", need, (long long)g->B);
    return 1;
  }
  g->V = lg->dims[lg->rank - 1];
  if (g->V < 1) { fprintf(stderr, "error: %s: the logits have a vocabulary of 0\n", need); return 1; }
  g->T = INT64_MAX;
  g->n_pairs = 0;
  for (int k = 0; k < p->n_in; k++) {
    if (strncmp(p->in[k].name, "past_", 5)) {
      if (k != g->tok && k != g->pos) { fprintf(stderr, "error: %s: input '", need); ft_text_put(stderr, p->in[k].name); fprintf(stderr, "' is none of those\n"); return 1; }
      continue;
    }
    char want[512];
    int o = (size_t)snprintf(want, sizeof want, "present_%s", p->in[k].name + 5) < sizeof want ? ft_find_io(p->out, p->n_out, want) : -1;
    if (o < 0 || p->out[o].dtype != p->in[k].dtype || ft_io_bytes(&p->out[o]) != ft_io_bytes(&p->in[k])) {
      fprintf(stderr, "error: %s: ", need);
      ft_put_io_name(stderr, "input", k, p->in[k].name);
      fprintf(stderr, " has no present_ output of its type and size\n");
      return 1;
    }
    g->past[g->n_pairs] = k;
    g->present[g->n_pairs++] = o;
    if (p->in[k].rank == 4 && p->in[k].dims[2] < g->T) g->T = p->in[k].dims[2];
  }
  return 0;
}

/* The prompt file: int64 [B, P] with token ids below the vocabulary size; 0 or an exit code. */
static int ft_gen_prompt(const char *path, const ft_gen *g, ft_pb_tensor *t) {
  const char *why;
  int r = ft_pb_read_tensor(path, t, &why);
  if (r) { fprintf(stderr, "error: %s: %s (expected the prompt, int64 [%lld, P])\n", path, why, (long long)g->B); return r == FT_PB_EIO ? 4 : 2; }
  if (t->t.dtype != FT_INT64 || t->t.rank != 2 || t->t.dims[0] != g->B || t->t.dims[1] < 1) {
    fprintf(stderr, "error: %s: the prompt must be int64 [%lld, P] with P >= 1\n", path, (long long)g->B);
    return 2;
  }
  const int64_t *ids = (const int64_t *)t->t.data;
  for (int64_t i = 0; i < t->t.dims[0] * t->t.dims[1]; i++)
    if (ids[i] < 0 || ids[i] >= g->V) { fprintf(stderr, "error: %s: token %lld is not below the vocabulary size %lld\n", path, (long long)ids[i], (long long)g->V); return 2; }
  return 0;
}

static int64_t ft_argmax_row(const float *x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; i++)
    if (x[i] > x[best]) best = i;
  return best;
}

/* Steps of the generation: tokens [B, n_new] filled, per-step times in ms (P + n_new - 1). */
static int ft_gen_steps(const ft_program *p, void *ctx, const ft_gen *g, const ft_pb_tensor *prompt, int n_new,
                        void **in, void **out, int64_t *tokens, double *ms) {
  int64_t P = prompt->t.dims[1], steps = P + n_new - 1;
  const int64_t *ids = (const int64_t *)prompt->t.data;
  for (int k = 0; k < g->n_pairs; k++) memset(in[g->past[k]], 0, ft_io_bytes(&p->in[g->past[k]]));
  for (int64_t s = 0; s < steps; s++) {
    for (int64_t b = 0; b < g->B; b++) {
      ((int64_t *)in[g->tok])[b] = s < P ? ids[b * P + s] : tokens[b * n_new + s - P];
      if (g->pos >= 0) ((int64_t *)in[g->pos])[b] = s;
    }
    double t0 = ft_now_ms();
    int rc = p->run(ctx, (const void *const *)in, out);
    ms[s] = ft_now_ms() - t0;
    if (rc) return rc;
    if (s >= P - 1)
      for (int64_t b = 0; b < g->B; b++) tokens[b * n_new + s - P + 1] = ft_argmax_row((const float *)out[0] + b * g->V, g->V);
    for (int k = 0; k < g->n_pairs; k++) { /* present -> past */
      void *t = in[g->past[k]];
      in[g->past[k]] = out[g->present[k]];
      out[g->present[k]] = t;
    }
  }
  return 0;
}

/* Tokens to stdout (one line per batch row, or JSON with the step times) and to
 * OUTDIR/tokens.pb; 0 or exit code 4. */
static int ft_gen_report(const ft_program *p, const ft_gen *g, const int64_t *tokens, int n_new, double *ms,
                         int64_t P, int json, const char *outdir, int threads) {
  double prompt_ms = 0, sum = 0;
  for (int64_t s = 0; s < P - 1; s++) prompt_ms += ms[s];
  int nd = n_new - 1; /* steps after the prompt: one per new token but the first */
  for (int i = 0; i < nd; i++) sum += ms[P + i];
  if (nd > 0) qsort(ms + P, (size_t)nd, sizeof *ms, ft_cmp_double);
  double med = nd > 0 ? ft_percentile(ms + P, nd, 0.5) : 0;
  if (json) {
    printf("{\"program\": ");
    ft_text_put_json(stdout, p->name);
    printf(", \"threads\": %d, \"prompt_len\": %lld, \"new_tokens\": %d, \"prompt_ms\": %.6f, \"first_token_ms\": %.6f, "
           "\"decode_median_ms\": %.6f, \"decode_mean_ms\": %.6f, \"tokens\": [",
           threads, (long long)P, n_new, prompt_ms, ms[P - 1], med, nd > 0 ? sum / nd : 0.0);
  }
  for (int64_t b = 0; b < g->B; b++) {
    printf(json ? "%s[" : "tokens:", b ? ", " : "");
    for (int i = 0; i < n_new; i++) printf(json ? "%s%lld" : "%s%lld", json && !i ? "" : json ? ", " : " ", (long long)tokens[b * n_new + i]);
    printf(json ? "]" : "\n");
  }
  if (json) printf("]}\n");
  else printf("decode step: median %.4f ms, %.1f tokens/s per row (%d steps after the prompt's %lld)\n", med,
              med > 0 ? 1e3 / med : 0.0, nd, (long long)P);
  if (!outdir) return 0;
  char path[4096];
  if (mkdir(outdir, 0777) != 0 && errno != EEXIST) { fprintf(stderr, "error: --output-dir %s: cannot make the folder (%s)\n", outdir, strerror(errno)); return 4; }
  if ((size_t)snprintf(path, sizeof path, "%s/tokens.pb", outdir) >= sizeof path) { fprintf(stderr, "error: --output-dir: the path is too long\n"); return 4; }
  ft_tensor t = {FT_INT64, 2, {g->B, n_new}, (void *)tokens};
  if (ft_pb_write_tensor(path, "tokens", &t)) { fprintf(stderr, "error: %s: cannot write the tokens\n", path); return 4; }
  return 0;
}

/* --generate N --prompt FILE: plan, run, report; 0 or an exit code. */
static int ft_cli_generate(const ft_program *p, void *ctx, void **in, void **out, const char *prompt_path,
                           int n_new, int json, const char *outdir, int threads) {
  int past[FT_MAX_IO_GEN], present[FT_MAX_IO_GEN], rc;
  ft_gen g = {0, 0, 0, past, present, 0, 0, 0};
  ft_pb_tensor prompt = {{0}, {0}};
  int64_t *tokens = NULL, P = 0; /* declared before the first goto: C++ (CUDA programs) wants that */
  double *ms = NULL;
  if (p->n_in > FT_MAX_IO_GEN) { fprintf(stderr, "error: --generate: more than %d inputs\n", FT_MAX_IO_GEN); return 1; }
  if ((rc = ft_gen_plan(p, &g)) || (rc = ft_gen_prompt(prompt_path, &g, &prompt))) goto done;
  P = prompt.t.dims[1];
  if (n_new < 1 || (g.T != INT64_MAX && P + n_new - 2 >= g.T)) {
    fprintf(stderr, "error: --generate %d after a prompt of %lld: the cache holds %lld positions, so at most %lld new tokens (and at least 1)\n",
            n_new, (long long)P, (long long)(g.T == INT64_MAX ? 0 : g.T), (long long)(g.T == INT64_MAX ? 0 : g.T - P + 1));
    rc = 1;
    goto done;
  }
  tokens = (int64_t *)calloc((size_t)(g.B * n_new), sizeof *tokens);
  ms = (double *)calloc((size_t)(P + n_new), sizeof *ms);
  if (!tokens || !ms) { fprintf(stderr, "error: out of memory\n"); rc = 4; goto done; }
  if (!(rc = ft_gen_steps(p, ctx, &g, &prompt, n_new, in, out, tokens, ms)))
    rc = ft_gen_report(p, &g, tokens, n_new, ms, P, json, outdir, threads);
done:
  free(prompt.t.data);
  free(tokens);
  free(ms);
  return rc;
}

static int ft_cli_main(int argc, char **argv, const ft_program *p) {
  const char *outdir = NULL, *weights = NULL;
  const char *prompt = NULL;
  int n_pos = 0, bench = 0, warmup = 10, iters = 100, json = 0, threads = 0, named = 0, rc = 0, have = 0, gen = -1;
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
    else if (!strcmp(a, "--generate")) rc = ft_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &gen);
    else if (!strcmp(a, "--prompt")) { if (i + 1 >= argc) { fprintf(stderr, "error: --prompt needs a file\n"); rc = 1; } else prompt = argv[++i]; }
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
  if ((gen >= 0) != (prompt != NULL) || (gen >= 0 && (have || bench))) {
    fprintf(stderr, "error: --generate N and --prompt FILE go together, without input files or --bench\n");
    rc = 1;
    goto done;
  }
  if (!have && !bench && gen < 0 && p->n_in) { ft_usage(p, stderr); rc = 1; goto done; }
  if (outdir && !have && gen < 0 && p->n_in) { fprintf(stderr, "error: --output-dir needs input files\n"); rc = 1; goto done; }
  ft_set_threads(threads); /* 0: the CPUs this process may use */
  threads = ft_get_threads();
  if (!weights && p->weights_embedded == 0) {
    if (ft_default_weights(argv[0], wpath, sizeof wpath)) { fprintf(stderr, "error: the program's path is too long to find its weights; use --weights FILE\n"); rc = 4; goto done; }
    weights = wpath;
  }
  if ((rc = ft_cli_buffers(p, files, in, out))) goto done;
  ctx = p->init(weights, err, sizeof err);
  if (!ctx) { fprintf(stderr, "error: %s\n", err); rc = strstr(err, "cannot") ? 4 : 2; goto done; }
  if (gen >= 0) {
    rc = ft_cli_generate(p, ctx, in, out, prompt, gen, json, outdir, threads);
    goto done;
  }
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
