/* ftaxc --shared: libOUT.so exports the OUT_* API and nothing else; two models' libraries load
 * into one process and each computes its model's reference outputs; one model handle shared by
 * several contexts that threads run at once gives every run the single-threaded run's bits. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>

#include "tensorio.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(shared, .init = setup, .fini = teardown);

/* The API of one library, looked up by name with its prefix. */
typedef struct api {
  void *lib;
  int (*model_open)(void **m, const char *path, char *err, size_t n);
  void (*model_close)(void *m);
  int (*ctx_new)(void **ctx, void *m, void *arena, char *err, size_t n);
  void (*ctx_free)(void *ctx);
  void (*ctx_set_threads)(void *ctx, int threads);
  int (*run)(void *ctx, const void *const *in, void *const *out);
  int (*num_inputs)(void);
  int (*num_outputs)(void);
  int (*io_info)(int is_output, int i, const char **name, int *dtype, int *rank, const int64_t **dims);
} api;

static void *sym(void *lib, const char *prefix, const char *name) {
  char *full = tu_fmt("%s_%s", prefix, name);
  void *p = dlsym(lib, full);
  cr_assert_not_null(p, "%s is not exported: %s", full, dlerror());
  return p;
}

static api load_api(const char *path, const char *prefix) {
  api a;
  a.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(a.lib, "dlopen %s: %s", path, dlerror());
  *(void **)&a.model_open = sym(a.lib, prefix, "model_open");
  *(void **)&a.model_close = sym(a.lib, prefix, "model_close");
  *(void **)&a.ctx_new = sym(a.lib, prefix, "ctx_new");
  *(void **)&a.ctx_free = sym(a.lib, prefix, "ctx_free");
  *(void **)&a.ctx_set_threads = sym(a.lib, prefix, "ctx_set_threads");
  *(void **)&a.run = sym(a.lib, prefix, "run");
  *(void **)&a.num_inputs = sym(a.lib, prefix, "num_inputs");
  *(void **)&a.num_outputs = sym(a.lib, prefix, "num_outputs");
  *(void **)&a.io_info = sym(a.lib, prefix, "io_info");
  return a;
}

/* ftaxc MODEL --shared -o DIR/NAME with flags; the library's path. */
static char *build_shared(const char *model, const char *name, const char *dim1, const char *dim2) {
  char *log;
  char *out = tu_fmt("%s/%s", dir, name);
  char *argv[] = {FTAXC, tu_fmt("%s/tests/models/%s/model.onnx", FTAX_SOURCE_DIR, model), "-o", out, "--shared",
                  "--cflags", "-O1 -march=native -pthread", "--dim", (char *)dim1, dim2 ? "--dim" : NULL,
                  (char *)dim2, NULL};
  int rc = tu_run(dir, &log, argv);
  cr_assert_eq(rc, 0, "ftaxc --shared %s: exit %d\n%s", model, rc, log);
  char *lib = tu_fmt("%s/lib%s.so", dir, name);
  cr_assert(tu_exists(lib), "no %s", lib);
  cr_assert(tu_exists(tu_fmt("%s.h", out)) && tu_exists(tu_fmt("%s.weights", out)), "no header or weights beside it");
  cr_assert(!tu_exists(out), "--shared builds the library, not the program");
  return lib;
}

/* Every dynamic symbol the library defines starts with prefix_. */
static void only_api_exported(const char *lib, const char *prefix) {
  char *log;
  char *argv[] = {"/bin/sh", "-c", tu_fmt("nm -D --defined-only '%s'", lib), NULL};
  cr_assert_eq(tu_run(dir, &log, argv), 0, "nm: %s", log);
  int n = 0;
  char *save = NULL;
  for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *name = strrchr(line, ' ');
    name = name ? name + 1 : line;
    cr_assert_eq(strncmp(name, prefix, strlen(prefix)), 0, "%s exports %s", lib, name);
    cr_assert_eq(name[strlen(prefix)], '_', "%s exports %s", lib, name);
    n++;
  }
  cr_assert_geq(n, 10, "the API's functions are exported (%d symbols)", n);
}

/* The data set's inputs, in order, as the library's buffers. */
static void **read_inputs(const char *set, int n) {
  void **in = calloc((size_t)n, sizeof *in);
  for (int k = 0; k < n; k++) {
    ft_pb_tensor t;
    const char *why = "";
    cr_assert_eq(ft_pb_read_tensor(tu_fmt("%s/input_%d.pb", set, k), &t, &why), 0, "input %d: %s", k, why);
    in[k] = t.t.data;
  }
  return in;
}

/* Output buffers the size io_info gives; *bytes their sizes. */
static void **alloc_outputs(const api *a, size_t *bytes) {
  int n = a->num_outputs();
  void **out = calloc((size_t)n, sizeof *out);
  for (int k = 0; k < n; k++) {
    int dtype, rank;
    const int64_t *dims;
    cr_assert_eq(a->io_info(1, k, NULL, &dtype, &rank, &dims), 0);
    bytes[k] = ft_dtype_size(dtype);
    for (int d = 0; d < rank; d++) bytes[k] *= (size_t)dims[d];
    out[k] = aligned_alloc(64, (bytes[k] + 127) & ~(size_t)63);
    memset(out[k], 0xff, bytes[k]);
  }
  return out;
}

/* Frees n buffers and their array (every test frees what it allocates: the sanitizer build's
 * leak check runs the unit tests). */
static void free_all(void **bufs, int n) {
  for (int k = 0; k < n; k++) free(bufs[k]);
  free(bufs);
}

/* The outputs against the data set's, as the e2e tests compare them (float32 outputs). */
static void check_outputs(const api *a, const char *set, void **out, const char *what) {
  for (int k = 0; k < a->num_outputs(); k++) {
    ft_pb_tensor t;
    const char *why = "", *name;
    cr_assert_eq(ft_pb_read_tensor(tu_fmt("%s/output_%d.pb", set, k), &t, &why), 0, "%s", why);
    int dtype, rank;
    const int64_t *dims;
    cr_assert_eq(a->io_info(1, k, &name, &dtype, &rank, &dims), 0);
    cr_assert_eq(dtype, FT_FLOAT);
    cr_assert_eq(rank, t.t.rank, "%s output %d: rank", what, k);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) { cr_assert_eq(dims[d], t.t.dims[d]); n *= dims[d]; }
    const float *want = t.t.data, *got = out[k];
    for (int64_t i = 0; i < n; i++)
      cr_assert(fabsf(got[i] - want[i]) <= 1e-4f + 1e-3f * fabsf(want[i]), "%s output %d ('%s') [%lld]: %g, expected %g",
                what, k, name, (long long)i, got[i], want[i]);
    free(t.t.data);
  }
}

static void run_one(const api *a, const char *weights, const char *set, const char *what) {
  char err[256] = "";
  void *m = NULL, *ctx = NULL;
  cr_assert_eq(a->model_open(&m, weights, err, sizeof err), 0, "%s: %s", what, err);
  cr_assert_eq(a->ctx_new(&ctx, m, NULL, err, sizeof err), 0, "%s: %s", what, err);
  void **in = read_inputs(set, a->num_inputs());
  size_t bytes[16];
  void **out = alloc_outputs(a, bytes);
  cr_assert_eq(a->run(ctx, (const void *const *)in, out), 0);
  check_outputs(a, set, out, what);
  a->ctx_free(ctx);
  a->model_close(m);
  free_all(in, a->num_inputs());
  free_all(out, a->num_outputs());
}

Test(shared, two_models_in_one_process, .timeout = 600) {
  char *la = build_shared("arith_tiny", "arith", "batch=1", NULL);
  char *lc = build_shared("cnn_small", "cnn", "batch=1", NULL);
  only_api_exported(la, "arith");
  only_api_exported(lc, "cnn");
  api a = load_api(la, "arith"), c = load_api(lc, "cnn");
  cr_assert_eq(a.num_inputs(), 2);
  cr_assert_eq(c.num_inputs(), 1);
  const char *name;
  cr_assert_eq(c.io_info(0, 0, &name, NULL, NULL, NULL), 0);
  cr_assert_str_eq(name, "input");
  /* each library's weights belong to it alone */
  char err[256] = "";
  void *m = NULL;
  cr_assert_eq(a.model_open(&m, tu_fmt("%s/cnn.weights", dir), err, sizeof err), 2, "%s", err);
  cr_assert(strstr(err, "another model"), "%s", err);
  cr_assert_null(m);
  run_one(&a, tu_fmt("%s/arith.weights", dir), tu_fmt("%s/tests/models/arith_tiny/test_data_set_0", FTAX_SOURCE_DIR), "arith_tiny");
  run_one(&c, tu_fmt("%s/cnn.weights", dir), tu_fmt("%s/tests/models/cnn_small/test_data_set_0", FTAX_SOURCE_DIR), "cnn_small");
  /* and again interleaved, after both are loaded and have run */
  run_one(&a, tu_fmt("%s/arith.weights", dir), tu_fmt("%s/tests/models/arith_tiny/test_data_set_0", FTAX_SOURCE_DIR), "arith_tiny");
  dlclose(a.lib);
  dlclose(c.lib);
}

/* ---- threads on contexts of one model handle ---- */

#define N_THREADS 8
#define N_RUNS 200
#define N_CTX 3

typedef struct pool {
  const api *a;
  void *ctx[N_CTX];
  int busy[N_CTX];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  void **in;
  size_t bytes[16];
  void **want; /* the single-threaded run's outputs */
  int n_out;
  int mismatches, runs;
} pool;

static void *worker(void *arg) {
  pool *p = arg;
  void **out = alloc_outputs(p->a, p->bytes);
  for (int r = 0; r < N_RUNS; r++) {
    pthread_mutex_lock(&p->mu);
    int c = -1;
    while (c < 0) {
      for (int i = 0; i < N_CTX && c < 0; i++) if (!p->busy[i]) c = i;
      if (c < 0) pthread_cond_wait(&p->cv, &p->mu);
    }
    p->busy[c] = 1;
    pthread_mutex_unlock(&p->mu);
    for (int k = 0; k < p->n_out; k++) memset(out[k], 0xa5, p->bytes[k]);
    int rc = p->a->run(p->ctx[c], (const void *const *)p->in, out);
    pthread_mutex_lock(&p->mu);
    p->busy[c] = 0;
    pthread_cond_signal(&p->cv);
    p->runs++;
    for (int k = 0; k < p->n_out; k++) p->mismatches += rc != 0 || memcmp(out[k], p->want[k], p->bytes[k]) != 0;
    pthread_mutex_unlock(&p->mu);
  }
  free_all(out, p->n_out);
  return NULL;
}

Test(shared, threads_on_contexts_of_one_model_are_bit_identical, .timeout = 600) {
  char *lib = build_shared("bert_tiny", "bert", "batch=1", "seq=8");
  api a = load_api(lib, "bert");
  const char *set = tu_fmt("%s/tests/models/bert_tiny/test_data_set_0", FTAX_SOURCE_DIR);
  char err[256] = "";
  void *m = NULL;
  cr_assert_eq(a.model_open(&m, tu_fmt("%s/bert.weights", dir), err, sizeof err), 0, "%s", err);
  pool p = {.a = &a, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  p.n_out = a.num_outputs();
  p.in = read_inputs(set, a.num_inputs());
  /* the reference: one context, one thread, alone */
  void *solo = NULL;
  cr_assert_eq(a.ctx_new(&solo, m, NULL, err, sizeof err), 0, "%s", err);
  a.ctx_set_threads(solo, 1);
  p.want = alloc_outputs(&a, p.bytes);
  cr_assert_eq(a.run(solo, (const void *const *)p.in, p.want), 0);
  check_outputs(&a, set, p.want, "bert_tiny, one thread");
  a.ctx_free(solo);
  /* contexts of every thread setting: the process default (the pool, shared), 2, 1 */
  for (int i = 0; i < N_CTX; i++) {
    cr_assert_eq(a.ctx_new(&p.ctx[i], m, NULL, err, sizeof err), 0, "%s", err);
    a.ctx_set_threads(p.ctx[i], i == 0 ? 0 : i == 1 ? 2 : 1);
  }
  a.model_close(m); /* the contexts hold the weights */
  pthread_t t[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) cr_assert_eq(pthread_create(&t[i], NULL, worker, &p), 0);
  for (int i = 0; i < N_THREADS; i++) pthread_join(t[i], NULL);
  cr_assert_eq(p.runs, N_THREADS * N_RUNS);
  cr_assert_eq(p.mismatches, 0, "%d of %d outputs differ from the single-threaded run", p.mismatches, p.runs * p.n_out);
  for (int i = 0; i < N_CTX; i++) a.ctx_free(p.ctx[i]);
  free_all(p.in, a.num_inputs());
  free_all(p.want, p.n_out);
}

/* --shared is for the hosted C program: with --freestanding or --target cuda, a usage error and
 * nothing written. */
Test(shared, refused_with_freestanding_or_cuda) {
  char *model = tu_fmt("%s/tests/models/arith_tiny/model.onnx", FTAX_SOURCE_DIR), *log;
  char *a1[] = {FTAXC, model, "-o", "x", "--dim", "batch=1", "--shared", "--freestanding", NULL};
  char *a2[] = {FTAXC, model, "-o", "x", "--dim", "batch=1", "--shared", "--target", "cuda", NULL};
  cr_assert_eq(tu_run(dir, &log, a1), 1, "%s", log);
  cr_assert(strstr(log, "--shared") && strstr(log, "--freestanding"), "%s", log);
  cr_assert_eq(tu_run(dir, &log, a2), 1, "%s", log);
  cr_assert(strstr(log, "--target cuda"), "%s", log);
  cr_assert_str_eq(tu_listdir(dir), "", "files were written: %s", tu_listdir(dir));
}

/* --shared --embed-weights: the library carries its weights (model_open with no path), and its
 * built-in weights symbol is not exported. */
Test(shared, embedded_weights_in_the_library, .timeout = 300) {
  char *log;
  char *argv[] = {FTAXC, tu_fmt("%s/tests/models/arith_tiny/model.onnx", FTAX_SOURCE_DIR), "-o", tu_fmt("%s/emb", dir),
                  "--shared", "--embed-weights", "--cflags", "-O1 -march=native -pthread", "--dim", "batch=1", NULL};
  cr_assert_eq(tu_run(dir, &log, argv), 0, "%s", log);
  cr_assert_eq(unlink(tu_fmt("%s/emb.weights", dir)), 0);
  char *lib = tu_fmt("%s/libemb.so", dir);
  only_api_exported(lib, "emb");
  api a = load_api(lib, "emb");
  run_one(&a, NULL, tu_fmt("%s/tests/models/arith_tiny/test_data_set_0", FTAX_SOURCE_DIR), "arith_tiny, embedded");
}
