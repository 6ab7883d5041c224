/* The command lines: ftaxc's exit codes and messages, and the generated program's. A failed run
 * must leave nothing half-written behind. */
#include "testutil.h"
#include "tensorio.h"

static char *dir, *outdir;
static void setup(void) {
  dir = tu_tmpdir();
  outdir = tu_fmt("%s/out", dir);
  mkdir(outdir, 0777);
}
static void teardown(void) { tu_rmtree(dir); }
TestSuite(cli, .init = setup, .fini = teardown);

static int ftaxc(char **log, const char *a1, const char *a2, const char *a3, const char *a4, const char *a5,
                 const char *a6) {
  char *argv[] = {FTAXC, (char *)a1, (char *)a2, (char *)a3, (char *)a4, (char *)a5, (char *)a6, NULL};
  return tu_run(NULL, log, argv);
}

/* The output folder holds nothing: no OUT.c, OUT.h, OUT.weights, OUT, nor temporaries. */
static void assert_nothing_written(const char *why) {
  char *ls = tu_listdir(outdir);
  cr_assert_str_eq(ls, "", "%s: files left behind: %s", why, ls);
}

static const int64_t d23[2] = {2, 3};
static const float w23[6] = {1, 2, 3, 4, 5, 6};

/* y = x + w with x [batch, 3] float; w [2, 3] so batch must be 2 (or broadcast 1). */
static char *good_model(void) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "batch,3"));
  tb_add_init(gp, tb_tensor_f32("w", 2, d23, w23));
  tb_add_node(gp, tb_node("Add", "add", "x,w", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  char *path = tu_fmt("%s/good.onnx", dir);
  tb_write_model(tb_model(gp, 13), path);
  return path;
}

Test(cli, ftaxc_usage_errors_exit_1) {
  char *log, *model = good_model(), *out = tu_fmt("%s/prog", outdir);
  cr_assert_eq(ftaxc(&log, NULL, NULL, NULL, NULL, NULL, NULL), FT_EUSAGE, "no arguments: %s", log);
  cr_assert(strstr(log, "usage:"), "prints the usage: %s", log);
  cr_assert_eq(ftaxc(&log, model, "--frobnicate", NULL, NULL, NULL, NULL), FT_EUSAGE, "%s", log);
  cr_assert(strstr(log, "--frobnicate"), "%s", log);
  cr_assert_eq(ftaxc(&log, model, "-o", out, "--dim", NULL, NULL), FT_EUSAGE, "--dim without a value: %s", log);
  cr_assert_eq(ftaxc(&log, model, model, "-o", out, NULL, NULL), FT_EUSAGE, "two models: %s", log);
  cr_assert_eq(ftaxc(&log, model, "-o", out, "--dim", "batch", NULL), FT_EUSAGE, "--dim without '=': %s", log);
  assert_nothing_written("usage errors");
  cr_assert_eq(ftaxc(&log, "--help", NULL, NULL, NULL, NULL, NULL), 0);
  cr_assert(strstr(log, "exit codes"), "--help documents the exit codes: %s", log);
}

Test(cli, ftaxc_unpinned_dim_exits_1_and_names_the_flag) {
  char *log, *model = good_model(), *out = tu_fmt("%s/prog", outdir);
  cr_assert_eq(ftaxc(&log, model, "-o", out, "--emit-only", NULL, NULL), FT_EUSAGE, "%s", log);
  cr_assert(strstr(log, "--dim batch="), "names the flag: %s", log);
  cr_assert(strstr(log, "'x'"), "names the input: %s", log);
  assert_nothing_written("unpinned dim");
}

Test(cli, ftaxc_malformed_model_exits_2_and_names_the_file) {
  char *log, *bad = tu_fmt("%s/garbage.onnx", dir), *out = tu_fmt("%s/prog", outdir);
  tb_write_bytes(bad, "\x08\x07\x12\xff\xff", 5);
  cr_assert_eq(ftaxc(&log, bad, "-o", out, NULL, NULL, NULL), FT_EINVALID, "%s", log);
  cr_assert(strstr(log, bad), "names the file: %s", log);
  assert_nothing_written("malformed model");

  /* well-formed protobuf, inconsistent model: shapes that do not broadcast */
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "4,5"));
  tb_add_init(gp, tb_tensor_f32("w", 2, d23, w23));
  tb_add_node(gp, tb_node("Add", "the_add", "x,w", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  char *incons = tu_fmt("%s/incons.onnx", dir);
  tb_write_model(tb_model(gp, 13), incons);
  cr_assert_eq(ftaxc(&log, incons, "-o", out, NULL, NULL, NULL), FT_EINVALID, "%s", log);
  cr_assert(strstr(log, "the_add"), "names the node: %s", log);
  assert_nothing_written("inconsistent model");
}

Test(cli, ftaxc_unsupported_ops_exit_3_and_all_are_named) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "2,3"));
  tb_add_node(gp, tb_node("Hardmax2", "h1", "x", "a"));
  tb_add_node(gp, tb_node("Add", "add", "a,x", "b"));
  tb_add_node(gp, tb_node("Hardmax2", "h2", "b", "c"));
  tb_add_node(gp, tb_node("NotAnOp", "n1", "c", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  char *model = tu_fmt("%s/unsup.onnx", dir), *log, *out = tu_fmt("%s/prog", outdir);
  tb_write_model(tb_model(gp, 13), model);
  cr_assert_eq(ftaxc(&log, model, "-o", out, NULL, NULL, NULL), FT_EUNSUPPORTED, "%s", log);
  cr_assert(strstr(log, "Hardmax2 x2"), "%s", log);
  cr_assert(strstr(log, "NotAnOp x1"), "%s", log);
  assert_nothing_written("unsupported ops");
}

Test(cli, ftaxc_io_failures_exit_4_and_leave_nothing) {
  char *log, *model = good_model(), *out = tu_fmt("%s/prog", outdir);
  char *missing = tu_fmt("%s/missing.onnx", dir);
  cr_assert_eq(ftaxc(&log, missing, "-o", out, "--dim", "batch=2", NULL), FT_EIO, "%s", log);
  cr_assert(strstr(log, missing), "%s", log);
  /* ftaxc makes OUT's folder, but not under a regular file */
  char *blocker = tu_fmt("%s/a_file", dir);
  FILE *bf = fopen(blocker, "w");
  cr_assert_not_null(bf);
  fclose(bf);
  char *nofolder = tu_fmt("%s/a_file/sub/prog", dir);
  cr_assert_eq(ftaxc(&log, model, "-o", nofolder, "--dim", "batch=2", NULL), FT_EIO, "%s", log);
  assert_nothing_written("missing files");
  /* the C compiler fails: no program, no temporaries (the sources stay for a look) */
  char *argv[] = {FTAXC, model, "-o", out, "--dim", "batch=2", "--cc", "/bin/false", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), FT_EIO, "%s", log);
  cr_assert_not(tu_exists(out), "no program after a failed build");
  char *ls = tu_listdir(outdir);
  cr_assert_null(strstr(ls, "tmp"), "temporaries left: %s", ls);
  /* a compiler that does not exist (a cross compiler not installed): said so, by name */
  char *argv2[] = {FTAXC, model, "-o", out, "--dim", "batch=2", "--cc", "no-such-cc-ftax", "--report", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv2), FT_EIO, "%s", log);
  cr_assert(strstr(log, "cannot run the C compiler 'no-such-cc-ftax' (not found"), "%s", log);
  cr_assert_not(tu_exists(out), "no program after a failed build");
}

/* ---- the generated program ---------------------------------------------------------------- */

static char *build_program(void) {
  char *model = good_model(), *prog = tu_fmt("%s/prog", dir), *log;
  char *argv[] = {FTAXC, model, "-o", prog, "--dim", "batch=2", "--cflags", "-O0 -pthread", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  cr_assert(tu_exists(prog));
  return prog;
}

static char *tensor_file(const char *name, int dtype, int rank, const int64_t *dims) {
  ft_tensor t = {dtype, rank, {0}, NULL};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  size_t nb = ft_nbytes(&t);
  t.data = calloc(1, nb + 1);
  for (size_t i = 0; i < nb / 4; i++) ((float *)t.data)[i] = (float)i - 1.5f; /* floats when float */
  char *path = tu_fmt("%s/%s", dir, name);
  cr_assert_eq(ft_pb_write_tensor(path, "x", &t), 0);
  free(t.data);
  return path;
}

static int run_prog(const char *prog, char **log, const char *a1, const char *a2, const char *a3, const char *a4) {
  char *argv[] = {(char *)prog, (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL};
  return tu_run(NULL, log, argv);
}

Test(cli, program_computes_and_writes_outputs, .timeout = 60) {
  char *prog = build_program(), *log;
  char *x = tensor_file("x.pb", FT_FLOAT, 2, d23);
  char *res = tu_fmt("%s/res", outdir);
  cr_assert_eq(run_prog(prog, &log, x, "--output-dir", res, NULL), 0, "%s", log);
  ft_pb_tensor y;
  const char *why;
  cr_assert_eq(ft_pb_read_tensor(tu_fmt("%s/output_0.pb", res), &y, &why), 0, "%s", why);
  tu_keep(y.t.data);
  cr_assert_eq(y.t.dtype, FT_FLOAT);
  cr_assert_eq(y.t.rank, 2);
  cr_assert_eq(y.t.dims[0], 2);
  cr_assert_eq(y.t.dims[1], 3);
  cr_assert_str_eq(y.name, "y");
  for (int i = 0; i < 6; i++)
    cr_assert_float_eq(((float *)y.t.data)[i], ((float)i - 1.5f) + w23[i], 1e-6, "element %d", i);

  /* by name, too */
  char *res2 = tu_fmt("%s/res2", outdir), *named = tu_fmt("x=%s", x);
  cr_assert_eq(run_prog(prog, &log, "--input", named, "--output-dir", res2), 0, "%s", log);
  size_t n1, n2;
  char *a = tu_read(tu_fmt("%s/output_0.pb", res), &n1), *b = tu_read(tu_fmt("%s/output_0.pb", res2), &n2);
  cr_assert_eq(n1, n2);
  cr_assert_arr_eq(a, b, n1);

  cr_assert_eq(run_prog(prog, &log, "--help", NULL, NULL, NULL), 0);
  cr_assert(strstr(log, "x float32[2x3]"), "--help lists the inputs: %s", log);
}

Test(cli, program_refuses_wrong_inputs_and_writes_nothing, .timeout = 60) {
  char *prog = build_program(), *log;
  const int64_t d33[2] = {3, 3}, d6[1] = {6};
  char *res = tu_fmt("%s/res", outdir);
  struct { char *file; const char *what, *expect; } bad[] = {
      {tensor_file("i64.pb", FT_INT64, 2, d23), "wrong dtype", "float32"},
      {tensor_file("f64.pb", FT_DOUBLE, 2, d23), "wrong dtype", "float64"},
      {tensor_file("u16.pb", FT_UINT16, 2, d23), "wrong dtype", "uint16"},
      {tensor_file("bf16.pb", FT_BFLOAT16, 2, d23), "wrong dtype", "bfloat16"},
      {tensor_file("big.pb", FT_FLOAT, 2, d33), "wrong shape", "[2x3]"},
      {tensor_file("flat.pb", FT_FLOAT, 1, d6), "wrong rank", "[2x3]"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = run_prog(prog, &log, bad[i].file, "--output-dir", res, NULL);
    cr_assert_eq(rc, 2, "%s: exit %d: %s", bad[i].what, rc, log);
    cr_assert(strstr(log, bad[i].file), "%s: names the file: %s", bad[i].what, log);
    cr_assert(strstr(log, bad[i].expect), "%s: says what it wants: %s", bad[i].what, log);
    cr_assert_not(tu_exists(tu_fmt("%s/output_0.pb", res)), "%s: an output was written", bad[i].what);
  }
  /* not a tensor at all */
  char *junk = tu_fmt("%s/junk.pb", dir);
  tb_write_bytes(junk, "\xff\xff\xff", 3);
  cr_assert_eq(run_prog(prog, &log, junk, "--output-dir", res, NULL), 2, "%s", log);
  cr_assert_not(tu_exists(tu_fmt("%s/output_0.pb", res)));
  /* the wrong number of inputs is a usage error */
  char *x = tensor_file("x.pb", FT_FLOAT, 2, d23);
  cr_assert_eq(run_prog(prog, &log, x, x, "--output-dir", res), 1, "%s", log);
  cr_assert_eq(run_prog(prog, &log, "--input", "nosuch=x.pb", NULL, NULL), 1, "%s", log);
  cr_assert_eq(run_prog(prog, &log, NULL, NULL, NULL, NULL), 1, "no inputs and no --bench: %s", log);
  cr_assert_not(tu_exists(tu_fmt("%s/output_0.pb", res)));
}

/* A bfloat16 input takes a UINT16 file of bfloat16 bits (how the ONNX test data stores
 * bfloat16), and nothing else of another dtype; ftax-compare reads such a file as bfloat16 too. */
Test(cli, bfloat16_input_takes_the_onnx_test_data_form, .timeout = 60) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_BFLOAT16, "2,3"));
  Onnx__NodeProto *cast = tb_node("Cast", "cast", "x", "y");
  tb_attr_int(cast, "to", FT_FLOAT);
  tb_add_node(gp, cast);
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  char *model = tu_fmt("%s/bf16.onnx", dir), *prog = tu_fmt("%s/bf16prog", dir), *log;
  tb_write_model(tb_model(gp, 13), model);
  char *argv[] = {FTAXC, model, "-o", prog, "--cflags", "-O0 -pthread", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);

  const uint16_t bits[6] = {0x3f80, 0xc000, 0x3ec0, 0x0000, 0x7f80, 0x4049}; /* 1 -2 0.375 0 inf 3.140625 */
  ft_tensor u = {FT_UINT16, 2, {2, 3}, (void *)bits};
  char *x = tu_fmt("%s/x_u16.pb", dir), *res = tu_fmt("%s/res", outdir);
  cr_assert_eq(ft_pb_write_tensor(x, "x", &u), 0);
  cr_assert_eq(run_prog(prog, &log, x, "--output-dir", res, NULL), 0, "%s", log);
  ft_pb_tensor y;
  const char *why;
  cr_assert_eq(ft_pb_read_tensor(tu_fmt("%s/output_0.pb", res), &y, &why), 0, "%s", why);
  tu_keep(y.t.data);
  for (int i = 0; i < 6; i++)
    cr_assert_eq(((float *)y.t.data)[i], ft_bf16_to_float(bits[i]), "element %d", i);

  /* a float16 or int64 file is still refused */
  char *res2 = tu_fmt("%s/res2", outdir);
  cr_assert_eq(run_prog(prog, &log, tensor_file("f16.pb", FT_FLOAT16, 2, d23), "--output-dir", res2, NULL), 2, "%s", log);
  cr_assert(strstr(log, "must be bfloat16"), "%s", log);
  cr_assert_eq(run_prog(prog, &log, tensor_file("i64.pb", FT_INT64, 2, d23), "--output-dir", res2, NULL), 2, "%s", log);
  cr_assert_not(tu_exists(res2));

  /* ftax-compare: the UINT16 file of bits against the same values written as bfloat16 */
  ft_tensor b = {FT_BFLOAT16, 2, {2, 3}, (void *)bits};
  char *xb = tu_fmt("%s/x_bf16.pb", dir);
  cr_assert_eq(ft_pb_write_tensor(xb, "x", &b), 0);
  char *cmp[] = {FTAX_COMPARE, x, xb, NULL};
  cr_assert_eq(tu_run(NULL, &log, cmp), 0, "%s", log);
  char *cmp2[] = {FTAX_COMPARE, xb, x, NULL};
  cr_assert_eq(tu_run(NULL, &log, cmp2), 0, "%s", log);
  /* but a float16 file of the same bits is another dtype */
  ft_tensor h = {FT_FLOAT16, 2, {2, 3}, (void *)bits};
  char *xh = tu_fmt("%s/x_f16.pb", dir);
  cr_assert_eq(ft_pb_write_tensor(xh, "x", &h), 0);
  char *cmp3[] = {FTAX_COMPARE, xh, xb, NULL};
  cr_assert_eq(tu_run(NULL, &log, cmp3), 5, "%s", log);
}

Test(cli, program_checks_its_weights, .timeout = 60) {
  char *prog = build_program(), *log;
  char *x = tensor_file("x.pb", FT_FLOAT, 2, d23);
  char *res = tu_fmt("%s/res", outdir);
  /* weights of another model */
  const float other[6] = {9, 9, 9, 9, 9, 9};
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "batch,3"));
  tb_add_init(gp, tb_tensor_f32("w", 2, d23, other));
  tb_add_node(gp, tb_node("Add", "add", "x,w", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  char *model2 = tu_fmt("%s/other.onnx", dir), *prog2 = tu_fmt("%s/other", dir);
  tb_write_model(tb_model(gp, 13), model2);
  char *argv[] = {FTAXC, model2, "-o", prog2, "--dim", "batch=2", "--emit-only", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  char *wrong = tu_fmt("%s.weights", prog2);
  int rc = run_prog(prog, &log, x, "--weights", wrong, NULL);
  cr_assert_eq(rc, 2, "%s", log);
  cr_assert(strstr(log, "another model"), "%s", log);
  /* no weights at all */
  char *none = tu_fmt("%s/none.weights", dir);
  char *argv2[] = {prog, x, "--weights", none, "--output-dir", res, NULL};
  rc = tu_run(NULL, &log, argv2);
  cr_assert_eq(rc, 4, "%s", log);
  cr_assert_not(tu_exists(tu_fmt("%s/output_0.pb", res)));
}

/* ---- hostile inputs to the generated program ---------------------------------------------- */

/* A folder, a FIFO or a missing file where an input file goes cannot be read: exit 4, and the
 * message names it; a file of garbage or cut short is not a tensor: exit 2. Nothing is written. */
Test(cli, program_tells_unreadable_inputs_from_bad_ones, .timeout = 60) {
  char *prog = build_program(), *log, *res = tu_fmt("%s/res", outdir);
  int rc = run_prog(prog, &log, dir, "--output-dir", res, NULL);
  cr_assert_eq(rc, 4, "a folder: exit %d: %s", rc, log);
  cr_assert(strstr(log, dir) && strstr(log, "folder"), "%s", log);
  char *fifo = tu_fmt("%s/fifo.pb", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  rc = run_prog(prog, &log, fifo, "--output-dir", res, NULL);
  cr_assert_eq(rc, 4, "a FIFO: exit %d: %s", rc, log);
  rc = run_prog(prog, &log, tu_fmt("%s/missing.pb", dir), "--output-dir", res, NULL);
  cr_assert_eq(rc, 4, "a missing file: exit %d: %s", rc, log);
  /* a valid file cut short */
  char *x = tensor_file("x.pb", FT_FLOAT, 2, d23), *cut = tu_fmt("%s/cut.pb", dir);
  size_t len;
  char *bytes = tu_read(x, &len);
  tb_write_bytes(cut, bytes, len - 3);
  free(bytes);
  rc = run_prog(prog, &log, cut, "--output-dir", res, NULL);
  cr_assert_eq(rc, 2, "a truncated file: exit %d: %s", rc, log);
  char *empty = tu_fmt("%s/empty.pb", dir);
  tb_write_bytes(empty, "", 0);
  rc = run_prog(prog, &log, empty, "--output-dir", res, NULL);
  cr_assert_eq(rc, 2, "an empty file: exit %d: %s", rc, log);
  cr_assert(strstr(log, "no data_type"), "%s", log);
  cr_assert_not(tu_exists(res), "nothing written");
  /* an output folder that is a file: exit 4, and the file is left as it was */
  char *blocker = tu_fmt("%s/blocker", dir);
  tb_write_bytes(blocker, "keep", 4);
  rc = run_prog(prog, &log, x, "--output-dir", blocker, NULL);
  cr_assert_eq(rc, 4, "%s", log);
  bytes = tu_read(blocker, &len);
  cr_assert(len == 4 && !memcmp(bytes, "keep", 4));
  free(bytes);
}

/* An input given twice (by position and by name, or by name twice) is a usage error. */
Test(cli, program_refuses_an_input_given_twice, .timeout = 60) {
  char *prog = build_program(), *log;
  char *x = tensor_file("x.pb", FT_FLOAT, 2, d23), *named = tu_fmt("x=%s", x);
  int rc = run_prog(prog, &log, x, "--input", named, NULL);
  cr_assert_eq(rc, 1, "exit %d: %s", rc, log);
  cr_assert(strstr(log, "twice"), "%s", log);
  rc = run_prog(prog, &log, "--input", named, "--input", named);
  cr_assert_eq(rc, 1, "exit %d: %s", rc, log);
}

/* Names from the model reach the terminal escaped: --help, and an error about the input. */
Test(cli, model_names_are_printed_escaped, .timeout = 60) {
  const char *evil = "x\x1b[2J\nrm -rf";
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value(evil, FT_FLOAT, "2,3"));
  tb_add_node(gp, tb_node("Relu", "relu", evil, "y\x07"));
  tb_add_output(gp, tb_value("y\x07", FT_FLOAT, NULL));
  char *model = tu_fmt("%s/evil.onnx", dir), *prog = tu_fmt("%s/evilprog", dir), *log;
  tb_write_model(tb_model(gp, 13), model);
  char *argv[] = {FTAXC, model, "-o", prog, "--cflags", "-O0 -pthread", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  cr_assert_eq(run_prog(prog, &log, "--help", NULL, NULL, NULL), 0, "%s", log);
  cr_assert(strstr(log, "x\\x1b[2J\\x0arm -rf"), "the input's name, escaped: %s", log);
  cr_assert(strstr(log, "y\\x07"), "the output's name, escaped: %s", log);
  cr_assert_null(strchr(log, '\x1b'), "a raw escape byte reached the terminal");
  cr_assert_null(strchr(log, '\x07'), "a raw bell byte reached the terminal");
  const int64_t d33[2] = {3, 3};
  cr_assert_eq(run_prog(prog, &log, tensor_file("big.pb", FT_FLOAT, 2, d33), NULL, NULL, NULL), 2, "%s", log);
  cr_assert(strstr(log, "x\\x1b[2J"), "%s", log);
  cr_assert_null(strchr(log, '\x1b'), "%s", log);
}

/* A buffer that cannot be allocated is an error with exit 4, not a crash. The program's input is
 * 1 GiB; its address space is capped at 512 MiB. */
Test(cli, program_out_of_memory_exits_4, .timeout = 120) {
  Onnx__GraphProto *gp = tb_graph("g");
  tb_add_input(gp, tb_value("x", FT_FLOAT, "268435456"));
  tb_add_node(gp, tb_node("Relu", "relu", "x", "y"));
  tb_add_output(gp, tb_value("y", FT_FLOAT, NULL));
  char *model = tu_fmt("%s/big.onnx", dir), *prog = tu_fmt("%s/bigprog", dir), *log;
  tb_write_model(tb_model(gp, 13), model);
  char *argv[] = {FTAXC, model, "-o", prog, "--cflags", "-O0 -pthread", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  char *cmd = tu_fmt("ulimit -v 524288 && exec '%s' --bench --iters 1 --warmup 0", prog);
  char *sh[] = {"/bin/sh", "-c", cmd, NULL};
  int rc = tu_run(NULL, &log, sh);
  cr_assert_eq(rc, 4, "exit %d: %s", rc, log);
  cr_assert(strstr(log, "out of memory"), "%s", log);
}

/* ftax-eager shares the command line; a model of more inputs than any fixed table held (256)
 * takes them all by position. */
Test(cli, eager_takes_hundreds_of_inputs, .timeout = 60) {
  enum { N = 300 };
  Onnx__GraphProto *gp = tb_graph("g");
  for (int i = 0; i < N; i++) {
    char *in = tu_fmt("x%d", i), *out = tu_fmt("y%d", i);
    tb_add_input(gp, tb_value(in, FT_FLOAT, "2,3"));
    tb_add_node(gp, tb_node("Relu", tu_fmt("r%d", i), in, out));
    tb_add_output(gp, tb_value(out, FT_FLOAT, NULL));
  }
  char *model = tu_fmt("%s/many.onnx", dir), *log, *x = tensor_file("x.pb", FT_FLOAT, 2, d23);
  tb_write_model(tb_model(gp, 13), model);
  char *argv[N + 4] = {FTAX_BUILD_DIR "/ftax-eager", model};
  for (int i = 0; i < N; i++) argv[2 + i] = x;
  int rc = tu_run(NULL, &log, argv);
  cr_assert_eq(rc, 0, "exit %d: %s", rc, log);
  argv[2 + N] = x; /* one too many */
  rc = tu_run(NULL, &log, argv);
  cr_assert_eq(rc, 1, "exit %d: %s", rc, log);
  cr_assert(strstr(log, "only 300 inputs"), "%s", log);
}

/* ftax-eager reads its input files with the same reader and exit codes, and what it prints of
 * the model (its path in --profile, as text and JSON) is escaped. */
Test(cli, eager_inputs_and_profile_are_hostile_safe, .timeout = 60) {
  char *sub = tu_fmt("%s/m\x1b[31m", dir), *log;
  mkdir(sub, 0777);
  char *model = tu_fmt("%s/good\x07.onnx", sub), *x = tensor_file("x.pb", FT_FLOAT, 2, d23);
  size_t len;
  char *bytes = tu_read(good_model(), &len);
  tb_write_bytes(model, bytes, len);
  free(bytes);
  char *eager = FTAX_BUILD_DIR "/ftax-eager";
  char *a1[] = {eager, model, "--dim", "batch=2", x, "--profile", NULL};
  int rc = tu_run(NULL, &log, a1);
  cr_assert_eq(rc, 0, "exit %d: %s", rc, log);
  cr_assert(strstr(log, "ftax-eager profile"), "%s", log);
  cr_assert(strstr(log, "m\\x1b[31m/good\\x07.onnx"), "the path, escaped: %s", log);
  cr_assert_null(strchr(log, '\x1b'), "a raw escape byte reached the terminal");
  cr_assert_null(strchr(log, '\x07'), "a raw bell byte reached the terminal");
  char *a2[] = {eager, model, "--dim", "batch=2", x, "--profile", "--json", NULL};
  rc = tu_run(NULL, &log, a2);
  cr_assert_eq(rc, 0, "exit %d: %s", rc, log);
  cr_assert(strstr(log, "m\\\\x1b[31m/good\\\\x07.onnx"), "the path in JSON: %s", log);
  cr_assert_null(strchr(log, '\x1b'));
  /* input files: a folder is I/O (4), garbage is a wrong input (2) */
  char *a3[] = {eager, model, "--dim", "batch=2", dir, NULL};
  rc = tu_run(NULL, &log, a3);
  cr_assert_eq(rc, 4, "a folder: exit %d: %s", rc, log);
  char *junk = tu_fmt("%s/junk.pb", dir);
  tb_write_bytes(junk, "\x0a\x05\x01", 3);
  char *a4[] = {eager, model, "--dim", "batch=2", junk, NULL};
  rc = tu_run(NULL, &log, a4);
  cr_assert_eq(rc, 2, "garbage: exit %d: %s", rc, log);
}

/* ftax-compare on matching, mismatching and unreadable files (under LeakSanitizer a leak of the
 * tensors it read is an error too). */
Test(cli, compare_exit_codes, .timeout = 60) {
  char *x = tensor_file("x.pb", FT_FLOAT, 2, d23), *log;
  const int64_t d33[2] = {3, 3};
  char *y = tensor_file("y.pb", FT_FLOAT, 2, d33);
  char *same[] = {FTAX_COMPARE, x, x, NULL};
  cr_assert_eq(tu_run(NULL, &log, same), 0, "%s", log);
  char *other[] = {FTAX_COMPARE, x, y, NULL};
  cr_assert_eq(tu_run(NULL, &log, other), 5, "%s", log);
  char *folder[] = {FTAX_COMPARE, x, dir, NULL};
  cr_assert_eq(tu_run(NULL, &log, folder), 2, "%s", log);
}

/* --generate: the decode program of tests/models/gpt2_kv_tiny generates from a prompt (rows of
 * one batch generate independently: two different prompts give what each gives alone); what is
 * not a decode-step model, a prompt with a token outside the vocabulary, and more tokens than
 * the cache holds are refused with a message, and write nothing. */
static char *prompt_file(const char *name, int64_t rows, int64_t len, int64_t first) {
  int64_t ids[16];
  for (int64_t i = 0; i < rows * len; i++) ids[i] = (first + 37 * i) % 256;
  ft_tensor t = {FT_INT64, 2, {rows, len}, ids};
  char *path = tu_fmt("%s/%s", dir, name);
  cr_assert_eq(ft_pb_write_tensor(path, "prompt", &t), 0);
  return path;
}

static int64_t *generated(const char *res, int64_t rows, int64_t n) {
  ft_pb_tensor t;
  const char *why;
  cr_assert_eq(ft_pb_read_tensor(tu_fmt("%s/tokens.pb", res), &t, &why), 0, "%s", why);
  tu_keep(t.t.data);
  cr_assert(t.t.dtype == FT_INT64 && t.t.rank == 2 && t.t.dims[0] == rows && t.t.dims[1] == n);
  return (int64_t *)t.t.data;
}

Test(cli, program_generates_with_a_kv_cache, .timeout = 120) {
  char *model = tu_fmt("%s/tests/models/gpt2_kv_tiny/decode.onnx", FTAX_SOURCE_DIR), *log;
  char *p1 = tu_fmt("%s/dec1", dir), *p2 = tu_fmt("%s/dec2", dir);
  char *a1[] = {FTAXC, model, "-o", p1, "--dim", "batch=1", "--dim", "max_len=8", "--cflags", "-O1 -pthread", NULL};
  char *a2[] = {FTAXC, model, "-o", p2, "--dim", "batch=2", "--dim", "max_len=8", "--cflags", "-O1 -pthread", NULL};
  cr_assert_eq(tu_run(NULL, &log, a1), 0, "%s", log);
  cr_assert_eq(tu_run(NULL, &log, a2), 0, "%s", log);
  char *both = prompt_file("both.pb", 2, 3, 5), *r0 = tu_fmt("%s/r0", outdir), *r1 = tu_fmt("%s/r1", outdir);
  char *rb = tu_fmt("%s/rb", outdir);
  char *argv_b[] = {p2, "--generate", "6", "--prompt", both, "--output-dir", rb, NULL};
  cr_assert_eq(tu_run(NULL, &log, argv_b), 0, "%s", log);
  cr_assert(strstr(log, "tokens:"), "%s", log);
  int64_t *tb = generated(rb, 2, 6);
  for (int row = 0; row < 2; row++) {
    char *one = prompt_file(row ? "one1.pb" : "one0.pb", 1, 3, 5 + 3 * 37 * row), *res = row ? r1 : r0;
    char *argv_1[] = {p1, "--generate", "6", "--prompt", one, "--output-dir", res, NULL};
    cr_assert_eq(tu_run(NULL, &log, argv_1), 0, "%s", log);
    int64_t *t1 = generated(res, 1, 6);
    for (int i = 0; i < 6; i++) cr_assert_eq(t1[i], tb[row * 6 + i], "row %d token %d", row, i);
  }
  /* refusals */
  char *res = tu_fmt("%s/bad", outdir), *big = tu_fmt("%s/big.pb", dir);
  int64_t ids[3] = {1, 256, 2};
  ft_tensor t = {FT_INT64, 2, {1, 3}, ids};
  cr_assert_eq(ft_pb_write_tensor(big, "prompt", &t), 0);
  char *one = prompt_file("one.pb", 1, 3, 5);
  struct { char *file, *n; int rc; const char *expect; } bad[] = {
      {big, "2", 2, "vocabulary"},         /* token 256 of 256 */
      {one, "7", 1, "at most 6 new tokens"}, /* positions 0..8 in 8 slots */
      {both, "2", 2, "int64 [1, P]"},      /* two rows for a batch-1 program */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *argv[] = {p1, "--generate", bad[i].n, "--prompt", bad[i].file, "--output-dir", res, NULL};
    int rc = tu_run(NULL, &log, argv);
    cr_assert_eq(rc, bad[i].rc, "case %zu: exit %d: %s", i, rc, log);
    cr_assert(strstr(log, bad[i].expect), "case %zu: %s", i, log);
    cr_assert_not(tu_exists(tu_fmt("%s/tokens.pb", res)), "case %zu wrote tokens", i);
  }
  char *argv_np[] = {p1, "--generate", "2", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv_np), 1, "--generate without --prompt: %s", log);
  char *prog = build_program();
  char *argv_nd[] = {prog, "--generate", "2", "--prompt", one, NULL};
  cr_assert_eq(tu_run(NULL, &log, argv_nd), 1, "not a decode model: %s", log);
  cr_assert(strstr(log, "decode-step model"), "%s", log);
}

/* ---- the freestanding library (ftaxc --freestanding) ---------------------------------------- */

/* A host program over the library's API: the init rules (no weights path, aligned arenas, one
 * context), then y = x + w computed twice, through the static arena and through the caller's. */
static const char *freestanding_user =
    "#include <stdio.h>\n#include \"lib.h\"\n"
    "static _Alignas(64) unsigned char mine[LIB_ARENA_BYTES + 128];\n"
    "static int run(lib_ctx *c) {\n"
    "  float x[6], y[6]; for (int i = 0; i < 6; i++) x[i] = (float)i - 1.5f;\n"
    "  const void *in[1] = {x}; void *out[1] = {y};\n"
    "  if (lib_run(c, in, out)) return 1;\n"
    "  for (int i = 0; i < 6; i++) if (y[i] != x[i] + (float)(i + 1)) return 1;\n"
    "  return 0;\n}\n"
    "int main(void) {\n"
    "  lib_ctx *c = NULL, *d = NULL; char err[128];\n"
    "  if (lib_init(&c, \"lib.weights\", err, sizeof err) != 1) return 10;\n"
    "  if (lib_init_with_arena(&c, NULL, mine + 1, err, sizeof err) != 1) return 11;\n"
    "  if (lib_init(&c, NULL, err, sizeof err)) return 12;\n"
    "  if (lib_init(&d, NULL, err, sizeof err) != 4) return 13; /* one context */\n"
    "  if (run(c)) return 14;\n"
    "  lib_free(c);\n"
    "  if (lib_init_with_arena(&d, NULL, mine, err, sizeof err)) return 15;\n"
    "  if (run(d)) return 16;\n"
    "  lib_free(d);\n"
    "  puts(\"ok\");\n  return 0;\n}\n";

Test(cli, freestanding_library, .timeout = 120) {
  char *log, *model = good_model(), *lib = tu_fmt("%s/lib", outdir);
  cr_assert_eq(ftaxc(&log, model, "-o", lib, "--freestanding", "--target", "cuda"), FT_EUSAGE, "%s", log);
  cr_assert(strstr(log, "--freestanding"), "names the flag: %s", log);
  assert_nothing_written("--freestanding --target cuda");

  char *argv[] = {FTAXC, model, "-o", lib, "--dim", "batch=2", "--freestanding", "--cflags", "-O1 -Wall -Werror", NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  cr_assert(tu_exists(tu_fmt("%s.o", lib)), "builds the object OUT.o");
  cr_assert_not(tu_exists(tu_fmt("%s.weights", lib)), "no weights file: they are in OUT.c");
  size_t n;
  char *src = tu_read(tu_fmt("%s.c", lib), &n);
  const char *hosted[] = {"<stdio.h>", "<stdlib.h>", "<pthread.h>", "<sys/mman.h>", "<fcntl.h>", "malloc(", "int main("};
  for (size_t i = 0; i < sizeof hosted / sizeof *hosted; i++)
    cr_assert_null(strstr(src, hosted[i]), "OUT.c holds %s", hosted[i]);
  cr_assert(strstr(src, "static const unsigned char ftp_weights["), "the weights are a static const array");

  char *user = tu_fmt("%s/user.c", outdir), *exe = tu_fmt("%s/user", outdir);
  FILE *f = fopen(user, "w");
  cr_assert_not_null(f);
  fputs(freestanding_user, f);
  fclose(f);
  char *cc[] = {"/bin/sh", "-c", "exec \"${CC:-cc}\" \"$@\"", "sh", "-O1", "-I", outdir, "-o", exe, user,
                tu_fmt("%s.o", lib), "-lm", NULL};
  cr_assert_eq(tu_run(NULL, &log, cc), 0, "%s", log);
  char *run[] = {exe, NULL};
  cr_assert_eq(tu_run(NULL, &log, run), 0, "the API's rules or the result: %s", log);
  cr_assert(strstr(log, "ok"), "%s", log);
}
