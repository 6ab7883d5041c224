/* The fixed part of generated programs on its own: templates/c/weights.h (the weights file both
 * ftaxc and the programs use) and templates/c/program.h (init, run, free), compiled here with a
 * model of the test's making; and --embed-weights through ftaxc. */
#include "testutil.h"
#include "weights.h"

/* A model of two float inputs' worth of weights: out[0][i] = in[0][i] * w[i] + w[i + 2]. */
#define FTP_API(x) tprog_##x
#define FTP_NAME "tprog"
#define FTP_MODEL_HASH "5eed00000000000000000000000000000000000000000000000000000000cafe"
#define FTP_WEIGHT_BYTES 16u
#define FTP_ARENA_BYTES 0u
#define FTP_NUM_INPUTS 1
#define FTP_NUM_OUTPUTS 1
typedef struct tprog_ctx tprog_ctx; /* what OUT.h declares */
typedef struct tprog_model tprog_model;
int tprog_init(tprog_ctx **ctx, const char *weights_path, char *err, size_t err_len);
int tprog_init_with_arena(tprog_ctx **ctx, const char *weights_path, void *arena, char *err, size_t err_len);
int tprog_run(tprog_ctx *ctx, const void *const *inputs, void *const *outputs);
void tprog_free(tprog_ctx *ctx);
int tprog_model_open(tprog_model **model, const char *weights_path, char *err, size_t err_len);
void tprog_model_close(tprog_model *model);
int tprog_ctx_new(tprog_ctx **ctx, tprog_model *model, void *arena, char *err, size_t err_len);
void tprog_ctx_free(tprog_ctx *ctx);
void tprog_ctx_set_threads(tprog_ctx *ctx, int threads);
int tprog_num_inputs(void);
int tprog_num_outputs(void);
int tprog_io_info(int is_output, int i, const char **name, int *dtype, int *rank, const int64_t **dims);
size_t tprog_arena_bytes(void);
#include "program.h"

static const ftp_io tprog_io[2] = {{"x", 1, 1, {2}}, {"y", 1, 1, {2}}};
static const ftp_io *ftp_io_of(int plan, int is_output, int i) { return plan == 0 && i == 0 ? &tprog_io[is_output] : NULL; }
static const char *ftp_plan_name_of(int plan) { return plan == 0 ? "" : NULL; }

static unsigned char *last_arena;
static int last_threads;
static int ftp_calls(int plan, unsigned char *arena, const unsigned char *weights, const void *const *inputs,
                     void *const *outputs) {
  (void)plan;
  const float *w = (const float *)weights, *x = (const float *)inputs[0];
  float *y = (float *)outputs[0];
  for (int i = 0; i < 2; i++) y[i] = x[i] * w[i] + w[i + 2];
  last_arena = arena;
  last_threads = ft_get_threads();
  return 0;
}

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(program, .init = setup, .fini = teardown);

static const float payload[4] = {2, -3, 0.5f, 10};

/* A weights file: the header ft_weights_header writes for (size, hash), then n bytes of body. */
static char *weights_file_of(const char *name, uint64_t size, const char *hash, const void *body, size_t n) {
  unsigned char head[FT_WEIGHTS_HEADER_BYTES];
  ft_weights_header(head, size, hash);
  char *path = tu_fmt("%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fwrite(head, 1, sizeof head, f);
  fwrite(body, 1, n, f);
  fclose(f);
  return path;
}

/* The same with n bytes of the test payload. */
static char *weights_file(const char *name, uint64_t size, const char *hash, size_t n) {
  return weights_file_of(name, size, hash, payload, n);
}

Test(program, weights_header_layout) {
  unsigned char head[FT_WEIGHTS_HEADER_BYTES];
  memset(head, 0xaa, sizeof head);
  ft_weights_header(head, 4096, "abc");
  cr_assert_eq(memcmp(head, "FTAXW001", 8), 0);
  uint64_t size;
  memcpy(&size, head + 8, 8);
  cr_assert_eq(size, 4096);
  cr_assert_str_eq((const char *)head + 16, "abc");
  for (int i = 19; i < 64; i++) cr_assert_eq(head[i], 0, "byte %d is padding", i);
}

Test(program, weights_open_maps_and_checks) {
  char err[256] = "";
  ft_weights w;
  char *good = weights_file("good.weights", 16, FTP_MODEL_HASH, 16);
  cr_assert_eq(ft_weights_open(&w, good, NULL, FTP_MODEL_HASH, 16, err, sizeof err), 0, "%s", err);
  cr_assert_eq(memcmp(w.data, payload, 16), 0);
  ft_weights_close(&w);
  cr_assert_null(w.map);

  /* built in: the bytes after the header, nothing mapped */
  unsigned char blob[FT_WEIGHTS_HEADER_BYTES + 16];
  ft_weights_header(blob, 16, FTP_MODEL_HASH);
  memcpy(blob + FT_WEIGHTS_HEADER_BYTES, payload, 16);
  cr_assert_eq(ft_weights_open(&w, NULL, blob, FTP_MODEL_HASH, 16, err, sizeof err), 0, "%s", err);
  cr_assert_eq(w.data, blob + FT_WEIGHTS_HEADER_BYTES);
  cr_assert_null(w.map);
  /* a file given still wins over the built-in copy */
  cr_assert_eq(ft_weights_open(&w, good, blob, FTP_MODEL_HASH, 16, err, sizeof err), 0, "%s", err);
  cr_assert_not_null(w.map);
  ft_weights_close(&w);
}

/* Weights of 2 MiB or more are copied to memory aligned to 2 MiB (for huge pages): the same
 * payload bytes, the header checked, a wrong file refused like any other; built-in ones too. */
Test(program, weights_open_copies_large_weights) {
  char err[256] = "";
  size_t n = FT_WEIGHTS_HUGE_BYTES + 4096 + 20; /* not a whole number of pages */
  unsigned char *big = malloc(n);
  cr_assert_not_null(big);
  for (size_t i = 0; i < n; i++) big[i] = (unsigned char)(i * 2654435761u >> 13);
  char *path = weights_file_of("big.weights", n, FTP_MODEL_HASH, big, n);
  ft_weights w;
  cr_assert_eq(ft_weights_open(&w, path, NULL, FTP_MODEL_HASH, n, err, sizeof err), 0, "%s", err);
  cr_assert_eq((uintptr_t)w.map % ((uintptr_t)2 << 20), 0, "the copy is not 2 MiB aligned");
  cr_assert_geq(w.map_len, n + FT_WEIGHTS_HEADER_BYTES);
  cr_assert_eq(w.data, (const unsigned char *)w.map + FT_WEIGHTS_HEADER_BYTES);
  cr_assert_eq(memcmp(w.data, big, n), 0, "the copy's payload differs from the file's");
  ft_weights_close(&w);
  cr_assert_null(w.map);
  cr_assert_neq(ft_weights_open(&w, path, NULL, FTP_MODEL_HASH, n - 1, err, sizeof err), 0);
  cr_assert(strstr(err, "this program wants"), "%s", err);
  cr_assert_null(w.map);
  /* built in (--embed-weights): copied the same way, the program's bytes left as they are */
  unsigned char *blob = malloc(FT_WEIGHTS_HEADER_BYTES + n);
  cr_assert_not_null(blob);
  ft_weights_header(blob, n, FTP_MODEL_HASH);
  memcpy(blob + FT_WEIGHTS_HEADER_BYTES, big, n);
  cr_assert_eq(ft_weights_open(&w, NULL, blob, FTP_MODEL_HASH, n, err, sizeof err), 0, "%s", err);
  cr_assert_eq((uintptr_t)w.map % ((uintptr_t)2 << 20), 0);
  cr_assert_eq(w.data, (const unsigned char *)w.map + FT_WEIGHTS_HEADER_BYTES);
  cr_assert_eq(memcmp(w.data, big, n), 0);
  ft_weights_close(&w);
  free(blob);
  free(big);
}

/* Every refusal: its exit code, and a message naming the file and the reason. */
Test(program, weights_open_refuses) {
  char err[256];
  ft_weights w;
  struct { const char *path, *says; int rc; } cases[] = {
      {weights_file("other.weights", 16, "0123456789abcdef", 16), "another model", 2},
      {weights_file("size.weights", 32, FTP_MODEL_HASH, 16), "are 32 bytes, this program wants 16", 2},
      {weights_file("short.weights", 16, FTP_MODEL_HASH, 8), "is 72 bytes", 2},    /* cut short */
      {weights_file("empty.weights", 0, FTP_MODEL_HASH, 0), "are 0 bytes", 2},
      {tu_fmt("%s/missing.weights", dir), "cannot open", 4},
      {dir, "cannot map", 4}, /* a folder opens, but does not map */
  };
  FILE *f = fopen(tu_fmt("%s/zero.weights", dir), "wb");
  fclose(f);
  FILE *g = fopen(tu_fmt("%s/junk.weights", dir), "wb");
  fputs("this is not a weights file, but it is long enough to hold a header of sixty-four bytes", g);
  fclose(g);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    strcpy(err, "");
    int rc = ft_weights_open(&w, cases[i].path, NULL, FTP_MODEL_HASH, 16, err, sizeof err);
    cr_assert_eq(rc, cases[i].rc, "%s: exit %d: %s", cases[i].path, rc, err);
    cr_assert(strstr(err, cases[i].says), "%s: %s", cases[i].path, err);
    cr_assert_eq(strncmp(err, cases[i].path, strlen(cases[i].path)), 0, "the message names the file: %s", err);
    cr_assert_null(w.map, "nothing stays mapped");
  }
  /* an empty file is a wrong weights file (2), as a short one is, not an I/O error */
  cr_assert_eq(ft_weights_open(&w, tu_fmt("%s/zero.weights", dir), NULL, FTP_MODEL_HASH, 16, err, sizeof err), 2, "%s", err);
  cr_assert(strstr(err, "not an ftax weights file"), "%s", err);
  cr_assert_eq(ft_weights_open(&w, tu_fmt("%s/junk.weights", dir), NULL, FTP_MODEL_HASH, 16, err, sizeof err), 2);
  cr_assert(strstr(err, "not an ftax weights file"), "%s", err);
  cr_assert_eq(ft_weights_open(&w, NULL, NULL, FTP_MODEL_HASH, 16, err, sizeof err), 1);
  cr_assert(strstr(err, "needs its weights file"), "%s", err);
  /* built-in weights that are not this model's are refused as well, with no file to name */
  unsigned char blob[FT_WEIGHTS_HEADER_BYTES + 16];
  ft_weights_header(blob, 16, "0123");
  cr_assert_eq(ft_weights_open(&w, NULL, blob, FTP_MODEL_HASH, 16, err, sizeof err), 2);
  cr_assert_eq(strncmp(err, "weights belong to another model", 31), 0, "%s", err);
}

Test(program, init_run_free) {
  char err[256] = "";
  tprog_ctx *ctx = NULL;
  char *good = weights_file("good.weights", 16, FTP_MODEL_HASH, 16);
  cr_assert_eq(tprog_init(&ctx, good, err, sizeof err), 0, "%s", err);
  float x[2] = {1, 4}, y[2] = {0, 0};
  const void *in[1] = {x};
  void *out[1] = {y};
  cr_assert_eq(tprog_run(ctx, in, out), 0);
  cr_assert_float_eq(y[0], 1 * 2 + 0.5f, 0);
  cr_assert_float_eq(y[1], 4 * -3 + 10.0f, 0);
  cr_assert_not_null(last_arena, "an arena even for a model that needs none");
  cr_assert_eq((uintptr_t)last_arena % 64, 0);
  tprog_free(ctx);
  tprog_free(NULL);

  /* the caller's arena is the one the calls get */
  _Alignas(64) unsigned char mine[64];
  cr_assert_eq(tprog_init_with_arena(&ctx, good, mine, err, sizeof err), 0, "%s", err);
  cr_assert_eq(tprog_run(ctx, in, out), 0);
  cr_assert_eq(last_arena, mine);
  tprog_free(ctx);

  /* wrong weights: the reason, and no context */
  ctx = NULL;
  char *other = weights_file("other.weights", 16, "feed", 16);
  cr_assert_eq(tprog_init(&ctx, other, err, sizeof err), 2);
  cr_assert(strstr(err, "another model"), "%s", err);
  cr_assert_null(ctx);
  cr_assert_eq(tprog_init(&ctx, NULL, err, sizeof err), 1, "no built-in weights: %s", err);
}

/* One model handle, several contexts: each its own arena, all the handle's one copy of the
 * weights; the weights outlive the handle while a context holds them; a context's thread count
 * is what its runs see and is put back after. */
Test(program, model_handle_shared_by_contexts) {
  char err[256] = "";
  char *good = weights_file("good.weights", 16, FTP_MODEL_HASH, 16);
  tprog_model *m = NULL;
  cr_assert_eq(tprog_model_open(&m, good, err, sizeof err), 0, "%s", err);
  tprog_ctx *a = NULL, *b = NULL;
  cr_assert_eq(tprog_ctx_new(&a, m, NULL, err, sizeof err), 0, "%s", err);
  _Alignas(64) unsigned char mine[64];
  cr_assert_eq(tprog_ctx_new(&b, m, mine, err, sizeof err), 0, "%s", err);
  cr_assert_eq(a->model->weights.data, b->model->weights.data, "one copy of the weights");
  cr_assert_neq(a->arena, b->arena);
  tprog_model_close(m); /* the contexts keep the weights */
  float x[2] = {1, 4}, y[2] = {0, 0};
  const void *in[1] = {x};
  void *out[1] = {y};
  int before = ft_get_threads();
  tprog_ctx_set_threads(a, 7);
  cr_assert_eq(tprog_run(a, in, out), 0);
  cr_assert_eq(last_threads, 7);
  cr_assert_eq(ft_get_threads(), before, "the context's setting is for its runs only");
  cr_assert_float_eq(y[1], 4 * -3 + 10.0f, 0);
  y[1] = 0;
  cr_assert_eq(tprog_run(b, in, out), 0);
  cr_assert_eq(last_arena, mine);
  cr_assert_eq(last_threads, before);
  cr_assert_float_eq(y[1], 4 * -3 + 10.0f, 0);
  tprog_ctx_free(a);
  cr_assert_eq(tprog_run(b, in, out), 0, "the other context still runs");
  tprog_ctx_free(b);

  /* refusals: no model, a misaligned arena; nothing made */
  tprog_ctx *c = (tprog_ctx *)1;
  cr_assert_eq(tprog_ctx_new(&c, NULL, NULL, err, sizeof err), 1);
  cr_assert_null(c);
  cr_assert(strstr(err, "tprog_model_open"), "%s", err);
  cr_assert_eq(tprog_model_open(&m, good, err, sizeof err), 0, "%s", err);
  cr_assert_eq(tprog_ctx_new(&c, m, mine + 8, err, sizeof err), 1);
  cr_assert(strstr(err, "64-byte aligned"), "%s", err);
  tprog_model_close(m);
  tprog_model *bad = (tprog_model *)1;
  cr_assert_eq(tprog_model_open(&bad, tu_fmt("%s/missing.weights", dir), err, sizeof err), 4);
  cr_assert_null(bad);

  /* the I/O table */
  const char *name;
  int dtype, rank;
  const int64_t *dims;
  cr_assert_eq(tprog_num_inputs(), 1);
  cr_assert_eq(tprog_io_info(1, 0, &name, &dtype, &rank, &dims), 0);
  cr_assert_str_eq(name, "y");
  cr_assert(dtype == 1 && rank == 1 && dims[0] == 2);
  cr_assert_eq(tprog_io_info(0, 1, &name, NULL, NULL, NULL), -1);
  cr_assert_eq(tprog_io_info(0, -1, &name, NULL, NULL, NULL), -1);
}

/* --embed-weights: the program runs without its weights file, and computes what the program
 * reading the file computes. */
Test(program, embedded_weights_run_without_the_file, .timeout = 120) {
  char *model = tu_fmt("%s/tests/models/arith_tiny/model.onnx", FTAX_SOURCE_DIR);
  char *set = tu_fmt("%s/tests/models/arith_tiny/test_data_set_0", FTAX_SOURCE_DIR);
  char *plain = tu_fmt("%s/plain", dir), *emb = tu_fmt("%s/emb", dir), *log;
  char *a1[] = {FTAXC, model, "-o", plain, "--dim", "batch=1", "--cflags", "-O0 -pthread", NULL};
  char *a2[] = {FTAXC, model, "-o", emb, "--dim", "batch=1", "--cflags", "-O0 -pthread", "--embed-weights", NULL};
  cr_assert_eq(tu_run(dir, &log, a1), 0, "%s", log);
  cr_assert_eq(tu_run(dir, &log, a2), 0, "%s", log);
  cr_assert_eq(unlink(tu_fmt("%s.weights", emb)), 0, "the embedded program's weights file is there to remove");
  char *in0 = tu_fmt("%s/input_0.pb", set), *in1 = tu_fmt("%s/input_1.pb", set);
  char *r1[] = {plain, in0, in1, "--output-dir", tu_fmt("%s/o_plain", dir), NULL};
  char *r2[] = {emb, in0, in1, "--output-dir", tu_fmt("%s/o_emb", dir), NULL};
  cr_assert_eq(tu_run(dir, &log, r1), 0, "%s", log);
  cr_assert_eq(tu_run(dir, &log, r2), 0, "the program with its weights built in: %s", log);
  for (int k = 0; k < 2; k++) {
    size_t n1, n2;
    char *a = tu_read(tu_fmt("%s/o_plain/output_%d.pb", dir, k), &n1), *b = tu_read(tu_fmt("%s/o_emb/output_%d.pb", dir, k), &n2);
    cr_assert(a && b && n1 == n2 && !memcmp(a, b, n1), "output %d differs", k);
    char *cmp[] = {FTAX_COMPARE, tu_fmt("%s/output_%d.pb", set, k), tu_fmt("%s/o_emb/output_%d.pb", dir, k), NULL};
    cr_assert_eq(tu_run(NULL, &log, cmp), 0, "%s", log);
  }
  /* a weights file given still replaces the built-in copy, and is checked */
  char *r3[] = {emb, in0, in1, "--weights", tu_fmt("%s/tprog.weights", dir), "--output-dir", tu_fmt("%s/o3", dir), NULL};
  weights_file("tprog.weights", 16, FTP_MODEL_HASH, 16);
  cr_assert_eq(tu_run(dir, &log, r3), 2, "%s", log);
  cr_assert(strstr(log, "another model"), "%s", log);
}
