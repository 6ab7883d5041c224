/* ftax-eager: run an ONNX model op by op, with the command line every generated program has
 * (templates/c/cli.h), plus the model, its dims and --profile.
 *
 *   ftax-eager MODEL.onnx [--dim SYM=N]... [--shape IN=DxD]... [--device cpu|cuda] [--profile]
 *              [input_0.pb ...] [--output-dir DIR] [--bench --warmup N --iters N --json --threads N]
 *
 * The model is loaded before the shared command line runs, so that its inputs and outputs are
 * known; the program's init just hands over the loaded interpreter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eager.h"
#include "version.h"

typedef struct eager_prog {
  ft_eager *h;
  ft_program *prog;
} eager_prog;

static eager_prog the_prog;

/* The model is already loaded (its inputs and outputs shape the command line). */
static void *init_loaded(const char *weights, char *err, size_t n) {
  (void)weights; (void)err; (void)n;
  return &the_prog;
}

static int prog_run(void *ctx, const void *const *in, void *const *out) {
  eager_prog *ep = ctx;
  ft_err e = {0};
  int rc = ft_eager_run(ep->h, in, out, &e);
  if (rc) fprintf(stderr, "ftax-eager: error: %s\n", e.msg[0] ? e.msg : "run failed");
  ft_eager_profile p;
  ft_eager_profile_get(ep->h, &p);
  ep->prog->arena_bytes = p.cache_reserved; /* what the allocator holds: the eager "arena" */
  return rc;
}

static void prog_free(void *ctx) { (void)ctx; } /* main frees the interpreter after the profile */

static void timing_start(void *ctx) { ft_eager_profile_reset(((eager_prog *)ctx)->h); }

static void usage(FILE *f) {
  fprintf(f,
          "usage: ftax-eager MODEL.onnx [--dim SYM=N]... [--shape INPUT=DxD...]... [--bind IN=FILE.pb]... [--device cpu|cuda]\n"
          "                  [--keep-input NAME|all]... [--profile]\n"
          "                  [input_0.pb ...] [--input NAME=FILE.pb] [--output-dir DIR]\n"
          "                  [--bench] [--warmup N] [--iters N] [--json] [--threads N]\n"
          "Runs the model op by op, as an eager framework does (shape inference, allocation and one\n"
          "dispatch per node on every run), on the kernels ftaxc's programs use.\n"
          "  --dim SYM=N        pin symbolic dimension SYM (e.g. batch=1) in every input\n"
          "  --shape IN=1x128   pin the whole shape of input IN\n"
          "  --bind IN=FILE.pb  fix input IN to the tensor in FILE.pb (it stops being an input), as ftaxc does\n"
          "  --keep-input NAME  graph input NAME has an initializer (IR 4+: a default the caller may override),\n"
          "                     which is run as a constant unless this flag makes NAME an input, as ftaxc does;\n"
          "                     `all`: every such input\n"
          "  --device cuda      run on the GPU: one launch per node of the CUDA kernels ftaxc's .cu programs\n"
          "                     use, a caching device allocator, shape logic on the host (%s)\n"
          "  --profile          time every kernel call; print wall, kernel and overhead time per run\n"
          "                     and kernel time per op type (with --json: one JSON object)\n"
          "  other options as for generated programs; MODEL.onnx --help lists the inputs and outputs\n"
          "exit codes: 0 ok, 1 usage, 2 invalid model or input (or no usable GPU), 3 unsupported model, 4 I/O\n",
#ifdef FTAX_EAGER_CUDA
          "built with CUDA"
#else
          "not in this build: it was made without nvcc"
#endif
  );
}

/* Options of cli.h that take a value, so their values are not mistaken for the model. */
static int takes_value(const char *a) {
  static const char *const v[] = {"--warmup", "--iters", "--threads", "--output-dir", "--input", "--weights"};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (!strcmp(a, v[i])) return 1;
  return 0;
}

int main(int argc, char **argv) {
  ft_pins pins;
  memset(&pins, 0, sizeof pins);
  pins.notes = stderr;
  pins.tool = "ftax-eager";
  const char *model = NULL;
  int profile = 0, json = 0, help = 0;
  const ft_eager_device *dev = NULL;
  char **pass = calloc((size_t)argc + 1, sizeof *pass); /* argv for ft_cli_main */
  int np = 0, rc = 0;
  ft_eager *h = NULL;
  ft_io_desc *in = NULL, *out = NULL;
  if (!pass) { fprintf(stderr, "ftax-eager: out of memory\n"); return FT_EIO; }
  pass[np++] = argv[0];
  for (int i = 1; i < argc && !rc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--bind")) {
      if (i + 1 >= argc) { fprintf(stderr, "ftax-eager: --bind needs a value\n"); rc = FT_EUSAGE; break; }
      if (pins.n_binds == 64) { fprintf(stderr, "ftax-eager: too many --bind options (64 at most)\n"); rc = FT_EUSAGE; break; }
      pins.binds[pins.n_binds++] = argv[++i];
    } else if (!strcmp(a, "--keep-input")) {
      if (i + 1 >= argc) { fprintf(stderr, "ftax-eager: --keep-input needs a value\n"); rc = FT_EUSAGE; break; }
      if (pins.n_keep == 64) { fprintf(stderr, "ftax-eager: too many --keep-input options (64 at most)\n"); rc = FT_EUSAGE; break; }
      pins.keep[pins.n_keep++] = argv[++i];
    } else if (!strcmp(a, "--dim") || !strcmp(a, "--shape")) {
      int is_dim = a[2] == 'd';
      if (i + 1 >= argc) { fprintf(stderr, "ftax-eager: %s needs a value\n", a); rc = FT_EUSAGE; break; }
      if ((is_dim ? pins.n_dims : pins.n_shapes) == 64) { fprintf(stderr, "ftax-eager: too many %s options (64 at most)\n", a); rc = FT_EUSAGE; break; }
      if (is_dim) pins.dims[pins.n_dims++] = argv[++i];
      else pins.shapes[pins.n_shapes++] = argv[++i];
    } else if (!strcmp(a, "--device")) {
      const char *d = i + 1 < argc ? argv[++i] : "";
      if (!strcmp(d, "cuda")) {
#ifdef FTAX_EAGER_CUDA
        dev = ft_eager_cuda();
#else
        fprintf(stderr, "ftax-eager: --device cuda: this ftax-eager was built without CUDA (no nvcc when it was configured)\n");
        rc = FT_EUSAGE;
#endif
      } else if (strcmp(d, "cpu")) {
        fprintf(stderr, "ftax-eager: --device wants cpu or cuda, not '%s'\n", d);
        rc = FT_EUSAGE;
      }
    } else if (!strcmp(a, "--profile")) profile = 1;
    else if (!strcmp(a, "--version")) { printf("ftax-eager %s\n", FTAX_VERSION); goto done; }
    else if (!strcmp(a, "--weights")) {
      fprintf(stderr, "ftax-eager: --weights is for generated programs; ftax-eager reads the weights from the model\n");
      rc = FT_EUSAGE;
    } else {
      if (!strcmp(a, "--help") || !strcmp(a, "-h")) help = 1;
      if (!strcmp(a, "--json")) json = 1;
      if (a[0] != '-' && !model) { model = a; continue; }
      pass[np++] = argv[i];
      if (takes_value(a) && i + 1 < argc) pass[np++] = argv[++i];
    }
  }
  if (rc) goto done;
  if (!model) {
    usage(help ? stdout : stderr);
    rc = help ? 0 : FT_EUSAGE;
    goto done;
  }
  if (help) usage(stdout);

  ft_err e = {0};
  rc = ft_eager_load_on(model, &pins, dev, &h, &e);
  if (rc) {
    fprintf(stderr, "ftax-eager: error: %s\n", e.msg[0] ? e.msg : "cannot load the model");
    goto done;
  }
  int n_in = ft_eager_num_inputs(h), n_out = ft_eager_num_outputs(h);
  in = calloc((size_t)n_in + 1, sizeof *in);
  out = calloc((size_t)n_out + 1, sizeof *out);
  if (!in || !out) { fprintf(stderr, "ftax-eager: out of memory\n"); rc = FT_EIO; goto done; }
  for (int k = 0; k < n_in + n_out; k++) {
    int is_out = k >= n_in;
    ft_io_desc *d = is_out ? &out[k - n_in] : &in[k];
    ft_tensor t;
    d->name = ft_eager_io(h, is_out, is_out ? k - n_in : k, &t);
    d->dtype = t.dtype;
    d->rank = t.rank;
    memcpy(d->dims, t.dims, sizeof d->dims);
  }
  const char *base = strrchr(model, '/');
  char name[512];
  snprintf(name, sizeof name, "ftax-eager %s", base ? base + 1 : model);
  ft_program prog = {name, n_in, n_out, in, out, init_loaded, prog_run, prog_free, 0, -1, timing_start};
  the_prog = (eager_prog){h, &prog};
  if (profile) ft_eager_profile_enable(h, 1);
  rc = ft_cli_main(np, pass, &prog);
  if (!rc && profile && !help) ft_eager_profile_print(h, stdout, json);
done:
  ft_eager_free(h);
  free(in);
  free(out);
  free(pass);
  return rc;
}
