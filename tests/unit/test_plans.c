/* Several shapes in one program (ftaxc --dim SYM=A,B,...): one plan per shape in one OUT.c, one
 * weights file holding each distinct constant once, the arena of the largest plan. Each plan's
 * outputs are bit-identical to its own single-shape program's; the program's --dim and the
 * library's OUT_find_plan / OUT_run_dims pick the plan and refuse a shape not compiled, listing
 * the ones that were. */
#include <dlfcn.h>
#include <math.h>

#include "tensorio.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }
TestSuite(plans, .init = setup, .fini = teardown);

#define CFLAGS "-O1 -march=native -pthread"

static void ftaxc(const char *model, const char *out, const char *dim1, const char *dim2, const char *extra) {
  char *log;
  char *argv[] = {FTAXC, (char *)model, "-o", (char *)out, "--cflags", CFLAGS, "--dim", (char *)dim1,
                  dim2 ? "--dim" : (char *)extra, (char *)dim2, (char *)(dim2 ? extra : NULL), NULL};
  int rc = tu_run(dir, &log, argv);
  cr_assert_eq(rc, 0, "ftaxc %s %s %s: exit %d\n%s", model, dim1, dim2 ? dim2 : "", rc, log);
}

static long file_size(const char *path) {
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "%s", path);
  return (long)st.st_size;
}

/* bert_tiny's three int64 inputs at [1, seq]: token ids, a mask with the last two masked, type
 * ids alternating. */
static void write_inputs(const char *folder, int seq) {
  mkdir(folder, 0777);
  int64_t ids[64], mask[64], types[64];
  for (int i = 0; i < seq; i++) {
    ids[i] = (i * 37 + seq) % 1000;
    mask[i] = i < seq - 2;
    types[i] = i & 1;
  }
  const char *names[3] = {"input_ids", "attention_mask", "token_type_ids"};
  int64_t *data[3] = {ids, mask, types};
  for (int k = 0; k < 3; k++) {
    ft_tensor t = {FT_INT64, 2, {1, seq}, data[k]};
    cr_assert_eq(ft_pb_write_tensor(tu_fmt("%s/input_%d.pb", folder, k), names[k], &t), 0);
  }
}

static int same_file(const char *a, const char *b) {
  size_t n1, n2;
  char *x = tu_read(a, &n1), *y = tu_read(b, &n2);
  return x && y && n1 == n2 && !memcmp(x, y, n1);
}

Test(plans, bert_four_lengths_match_their_single_programs, .timeout = 900) {
  const char *model = tu_fmt("%s/tests/models/bert_tiny/model.onnx", FTAX_SOURCE_DIR);
  static const int seqs[4] = {8, 16, 32, 64};
  ftaxc(model, "multi", "batch=1", "seq=8,16,32,64", NULL);
  long multi_w = file_size(tu_fmt("%s/multi.weights", dir)), single_w = 0;
  for (int s = 0; s < 4; s++) {
    char *out = tu_fmt("single%d", seqs[s]);
    ftaxc(model, out, "batch=1", tu_fmt("seq=%d", seqs[s]), NULL);
    long w = file_size(tu_fmt("%s/%s.weights", dir, out));
    if (w > single_w) single_w = w;
    char *in = tu_fmt("%s/in%d", dir, seqs[s]), *log;
    write_inputs(in, seqs[s]);
    char *i0 = tu_fmt("%s/input_0.pb", in), *i1 = tu_fmt("%s/input_1.pb", in), *i2 = tu_fmt("%s/input_2.pb", in);
    char *r1[] = {tu_fmt("%s/multi", dir), "--dim", tu_fmt("seq=%d", seqs[s]), i0, i1, i2, "--output-dir",
                  tu_fmt("%s/om%d", dir, seqs[s]), NULL};
    char *r2[] = {tu_fmt("%s/%s", dir, out), i0, i1, i2, "--output-dir", tu_fmt("%s/os%d", dir, seqs[s]), NULL};
    cr_assert_eq(tu_run(dir, &log, r1), 0, "multi --dim seq=%d: %s", seqs[s], log);
    cr_assert_eq(tu_run(dir, &log, r2), 0, "single seq=%d: %s", seqs[s], log);
    for (int k = 0; k < 2; k++)
      cr_assert(same_file(tu_fmt("%s/om%d/output_%d.pb", dir, seqs[s], k), tu_fmt("%s/os%d/output_%d.pb", dir, seqs[s], k)),
                "seq %d output %d: the multi-shape program's differs from the single-shape one's", seqs[s], k);
  }
  /* the weights once: within 5% of one shape's (what differs by shape is small, folded tables) */
  cr_assert_leq(multi_w, single_w * 105 / 100, "weights %ld bytes, one shape's %ld", multi_w, single_w);
  cr_assert_geq(multi_w, single_w);
  /* the seq 8 plan against the model's reference outputs */
  const char *set = tu_fmt("%s/tests/models/bert_tiny/test_data_set_0", FTAX_SOURCE_DIR);
  char *log;
  char *r[] = {tu_fmt("%s/multi", dir), "--dim", "seq=8", tu_fmt("%s/input_0.pb", set), tu_fmt("%s/input_1.pb", set),
               tu_fmt("%s/input_2.pb", set), "--output-dir", tu_fmt("%s/ref", dir), NULL};
  cr_assert_eq(tu_run(dir, &log, r), 0, "%s", log);
  for (int k = 0; k < 2; k++) {
    char *cmp[] = {FTAX_COMPARE, tu_fmt("%s/output_%d.pb", set, k), tu_fmt("%s/ref/output_%d.pb", dir, k), NULL};
    cr_assert_eq(tu_run(NULL, &log, cmp), 0, "%s", log);
  }
  /* choosing: none, an unknown length, an input of another plan's shape; nothing written */
  char *in8 = tu_fmt("%s/in8/input_0.pb", dir);
  char *c1[] = {tu_fmt("%s/multi", dir), "--output-dir", tu_fmt("%s/x1", dir), in8, NULL};
  cr_assert_eq(tu_run(dir, &log, c1), 1, "%s", log);
  cr_assert(strstr(log, "choose one with --dim") && strstr(log, "seq=8, seq=16, seq=32, seq=64"), "%s", log);
  char *c2[] = {tu_fmt("%s/multi", dir), "--dim", "seq=12", "--bench", NULL};
  cr_assert_eq(tu_run(dir, &log, c2), 1, "%s", log);
  cr_assert(strstr(log, "seq=12 matches no plan") && strstr(log, "seq=64"), "%s", log);
  char *c3[] = {tu_fmt("%s/multi", dir), "--dim", "seq=16", tu_fmt("%s/in8/input_0.pb", dir), tu_fmt("%s/in8/input_1.pb", dir),
                tu_fmt("%s/in8/input_2.pb", dir), "--output-dir", tu_fmt("%s/x3", dir), NULL};
  cr_assert_eq(tu_run(dir, &log, c3), 2, "seq 8 inputs to the seq 16 plan: %s", log);
  cr_assert(!tu_exists(tu_fmt("%s/x1", dir)) && !tu_exists(tu_fmt("%s/x3/output_0.pb", dir)), "outputs were written");
  char *c4[] = {tu_fmt("%s/single8", dir), "--dim", "seq=8", "--bench", NULL};
  cr_assert_eq(tu_run(dir, &log, c4), 1, "%s", log);
  cr_assert(strstr(log, "compiled for one shape"), "%s", log);
  char *b[] = {tu_fmt("%s/multi", dir), "--dim", "seq=64", "--bench", "--iters", "3", "--warmup", "1", NULL};
  cr_assert_eq(tu_run(dir, &log, b), 0, "%s", log);
}

/* The library picks the plan from the inputs' dims and refuses others, listing the plans. */
Test(plans, library_finds_and_refuses_plans, .timeout = 300) {
  const char *model = tu_fmt("%s/tests/models/arith_tiny/model.onnx", FTAX_SOURCE_DIR);
  ftaxc(model, "ar", "batch=1,3", NULL, "--shared");
  ftaxc(model, "one", "batch=3", NULL, "--shared");
  void *lib = dlopen(tu_fmt("%s/libar.so", dir), RTLD_NOW | RTLD_LOCAL);
  void *one = dlopen(tu_fmt("%s/libone.so", dir), RTLD_NOW | RTLD_LOCAL);
  cr_assert(lib && one, "%s", dlerror());
  int (*num_plans)(void) = (int (*)(void))dlsym(lib, "ar_num_plans");
  const char *(*plan_name)(int) = (const char *(*)(int))dlsym(lib, "ar_plan_name");
  int (*find_plan)(const int64_t *const *, char *, size_t) = (int (*)(const int64_t *const *, char *, size_t))dlsym(lib, "ar_find_plan");
  int (*init)(void **, const char *, char *, size_t) = (int (*)(void **, const char *, char *, size_t))dlsym(lib, "ar_init");
  int (*run_dims)(void *, const int64_t *const *, const void *const *, void *const *, char *, size_t) =
      (int (*)(void *, const int64_t *const *, const void *const *, void *const *, char *, size_t))dlsym(lib, "ar_run_dims");
  size_t (*arena)(void) = (size_t (*)(void))dlsym(lib, "ar_arena_bytes");
  size_t (*arena_one)(void) = (size_t (*)(void))dlsym(one, "one_arena_bytes");
  int (*init_one)(void **, const char *, char *, size_t) = (int (*)(void **, const char *, char *, size_t))dlsym(one, "one_init");
  int (*run_one)(void *, const void *const *, void *const *) = (int (*)(void *, const void *const *, void *const *))dlsym(one, "one_run");
  cr_assert(num_plans && plan_name && find_plan && init && run_dims && arena && arena_one && init_one && run_one);
  cr_assert_eq(num_plans(), 2);
  cr_assert_str_eq(plan_name(0), "batch=1");
  cr_assert_str_eq(plan_name(1), "batch=3");
  cr_assert_null(plan_name(2));
  cr_assert_geq(arena(), arena_one(), "the arena is the largest plan's");
  size_t hlen;
  char *h = tu_read(tu_fmt("%s/ar.h", dir), &hlen);
  cr_assert(h && strstr(h, "#define AR_NUM_PLANS 2\n") && strstr(h, "#define AR_MAX_INPUT_0_BYTES 384u\n") &&
                strstr(h, "#define AR_PLAN_0_INPUT_0_BYTES 128u\n") && strstr(h, "#define AR_PLAN_1_OUTPUT_1_BYTES 384u\n"),
            "ar.h: %s", h);
  char err[512] = "";
  const int64_t x3[3] = {3, 4, 8}, y3[3] = {3, 1, 8}, x2[3] = {2, 4, 8}, y2[3] = {2, 1, 8};
  const int64_t *d3[2] = {x3, y3}, *d2[2] = {x2, y2};
  cr_assert_eq(find_plan(d3, err, sizeof err), 1);
  cr_assert_eq(find_plan(d2, err, sizeof err), -1);
  cr_assert(strstr(err, "2x4x8, 2x1x8") && strstr(err, "batch=1 (1x4x8, 1x1x8)") && strstr(err, "batch=3 (3x4x8, 3x1x8)"), "%s", err);
  /* batch 3 through run_dims, bit-identical to the single-shape library's run */
  void *ctx, *ctx1;
  cr_assert_eq(init(&ctx, tu_fmt("%s/ar.weights", dir), err, sizeof err), 0, "%s", err);
  cr_assert_eq(init_one(&ctx1, tu_fmt("%s/one.weights", dir), err, sizeof err), 0, "%s", err);
  _Alignas(64) float x[3 * 32 + 16], y[3 * 8 + 16], a[2][3 * 32 + 16], b[2][3 * 32 + 16];
  for (int i = 0; i < 96; i++) x[i] = (float)i * 0.37f - 11;
  for (int i = 0; i < 24; i++) y[i] = (float)i * -0.5f + 2;
  const void *in[2] = {x, y};
  void *oa[2] = {a[0], a[1]}, *ob[2] = {b[0], b[1]};
  cr_assert_eq(run_dims(ctx, d3, in, oa, err, sizeof err), 0, "%s", err);
  cr_assert_eq(run_one(ctx1, in, ob), 0);
  cr_assert_eq(memcmp(a[0], b[0], sizeof(float) * 96), 0, "output 0 differs from the single-shape library's");
  cr_assert_eq(memcmp(a[1], b[1], sizeof(float) * 96), 0, "output 1 differs from the single-shape library's");
  err[0] = 0;
  cr_assert_eq(run_dims(ctx, d2, in, oa, err, sizeof err), 1);
  cr_assert(strstr(err, "no plan for input shapes"), "%s", err);
  /* a short err buffer is cut, still a string */
  char small[16];
  cr_assert_eq(find_plan(d2, small, sizeof small), -1);
  cr_assert_eq(strlen(small), sizeof small - 1);
  void (*free_ar)(void *) = (void (*)(void *))dlsym(lib, "ar_free"), (*free_one)(void *) = (void (*)(void *))dlsym(one, "one_free");
  cr_assert(free_ar && free_one);
  free_ar(ctx);
  free_one(ctx1);
}

/* ftaxc's refusals for lists: lengths that differ, the CUDA and freestanding targets; nothing
 * written. */
Test(plans, list_flag_errors) {
  const char *model = tu_fmt("%s/tests/models/arith_tiny/model.onnx", FTAX_SOURCE_DIR);
  char *log;
  char *a1[] = {FTAXC, (char *)model, "-o", "x", "--dim", "batch=1,3", "--shape", "y=1x1x8,3x1x8,5x1x8", NULL};
  cr_assert_eq(tu_run(dir, &log, a1), 1, "%s", log);
  cr_assert(strstr(log, "as long"), "%s", log);
  char *a2[] = {FTAXC, (char *)model, "-o", "x", "--dim", "batch=1,3", "--target", "cuda", "--emit-only", NULL};
  cr_assert_eq(tu_run(dir, &log, a2), 1, "%s", log);
  cr_assert(strstr(log, "--target cuda"), "%s", log);
  char *a3[] = {FTAXC, (char *)model, "-o", "x", "--dim", "batch=1,3", "--freestanding", NULL};
  cr_assert_eq(tu_run(dir, &log, a3), 1, "%s", log);
  cr_assert(strstr(log, "--freestanding"), "%s", log);
  cr_assert_str_eq(tu_listdir(dir), "", "files were written: %s", tu_listdir(dir));
}
