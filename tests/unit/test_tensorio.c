/* Tensor files (templates/c/tensorio.h): the small TensorProto reader and writer that generated
 * programs carry, checked against the protobuf-c bindings on the same bytes. */
#include "testutil.h"
#include "tensorio.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); free(dir); }
TestSuite(tensorio, .init = setup, .fini = teardown);

/* Deterministic bytes for a tensor of any type (values need not be meaningful numbers, except
 * bool which must be 0 or 1). */
static void fill(ft_tensor *t, uint32_t seed) {
  size_t nb = ft_nbytes(t);
  t->data = malloc(nb ? nb : 1);
  for (size_t i = 0; i < nb; i++) {
    seed = seed * 1664525u + 1013904223u;
    ((uint8_t *)t->data)[i] = (uint8_t)(seed >> 24);
  }
  if (t->dtype == FT_BOOL)
    for (size_t i = 0; i < nb; i++) ((uint8_t *)t->data)[i] &= 1;
}

static void assert_same(const ft_tensor *a, const ft_tensor *b, const char *what) {
  cr_assert_eq(a->dtype, b->dtype, "%s: dtype %d vs %d", what, a->dtype, b->dtype);
  cr_assert_eq(a->rank, b->rank, "%s: rank", what);
  for (int i = 0; i < a->rank; i++) cr_assert_eq(a->dims[i], b->dims[i], "%s: dim %d", what, i);
  cr_assert_arr_eq(a->data, b->data, ft_nbytes(a), "%s: data", what);
}

static const int all_dtypes[] = {FT_FLOAT, FT_UINT8, FT_INT8, FT_UINT16, FT_INT16, FT_INT32, FT_INT64,
                                 FT_BOOL, FT_FLOAT16, FT_DOUBLE, FT_UINT32, FT_UINT64, FT_BFLOAT16};
#define N_DTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

Test(tensorio, write_read_round_trip_every_dtype_and_rank) {
  const int64_t shapes[][3] = {{0}, {7}, {2, 3}, {1, 0, 4}, {3, 1, 130}};
  const int ranks[] = {0, 1, 2, 3, 3};
  for (size_t d = 0; d < N_DTYPES; d++)
    for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; s++) {
      ft_tensor t = {all_dtypes[d], ranks[s], {0}, NULL};
      for (int i = 0; i < t.rank; i++) t.dims[i] = shapes[s][i];
      fill(&t, (uint32_t)(d * 31 + s));
      char *path = tu_fmt("%s/t_%zu_%zu.pb", dir, d, s);
      cr_assert_eq(ft_pb_write_tensor(path, "tensor name", &t), 0);
      ft_pb_tensor back;
      const char *why = NULL;
      cr_assert_eq(ft_pb_read_tensor(path, &back, &why), 0, "%s: %s", path, why);
      char what[64];
      snprintf(what, sizeof what, "%s rank %d", ft_dtype_name(t.dtype), t.rank);
      assert_same(&t, &back.t, what);
      cr_assert_str_eq(back.name, "tensor name");
      /* no temporary file is left next to it */
      char *listing = tu_listdir(dir);
      cr_assert_null(strstr(listing, ".tmp"), "left behind: %s", listing);
      free(listing);
      free(path);
      free(back.t.data);
      free(t.data);
    }
}

/* What ft_pb_write_tensor writes is a TensorProto protobuf-c reads the same way. */
Test(tensorio, written_files_parse_with_protobuf_c) {
  for (size_t d = 0; d < N_DTYPES; d++) {
    ft_tensor t = {all_dtypes[d], 2, {3, 5}, NULL};
    fill(&t, (uint32_t)d);
    char *path = tu_fmt("%s/w%zu.pb", dir, d);
    cr_assert_eq(ft_pb_write_tensor(path, "x", &t), 0);
    size_t len;
    char *bytes = tu_read(path, &len);
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)bytes);
    cr_assert_not_null(tp, "protobuf-c cannot parse the file for %s", ft_dtype_name(t.dtype));
    cr_assert_eq(tp->data_type, t.dtype);
    cr_assert_eq(tp->n_dims, 2);
    cr_assert_eq(tp->dims[0], 3);
    cr_assert_eq(tp->dims[1], 5);
    cr_assert_str_eq(tp->name, "x");
    cr_assert(tp->has_raw_data);
    cr_assert_eq(tp->raw_data.len, ft_nbytes(&t));
    cr_assert_arr_eq(tp->raw_data.data, t.data, ft_nbytes(&t));
    onnx__tensor_proto__free_unpacked(tp, NULL);
    free(bytes);
    free(path);
    free(t.data);
  }
}

/* Pack tp with protobuf-c; decode it with tensorio and with the loader's protobuf-c path
 * (ft_tensor_from_proto on onnx__tensor_proto__unpack); both must agree with `expect`. */
static void cross_check(Onnx__TensorProto *tp, const ft_tensor *expect, const char *what) {
  size_t n = onnx__tensor_proto__get_packed_size(tp);
  uint8_t *buf = malloc(n + 1);
  cr_assert_eq(onnx__tensor_proto__pack(tp, buf), n);

  ft_pb_tensor mine;
  const char *why = NULL;
  cr_assert_eq(ft_pb_decode_tensor(buf, n, &mine, &why), 0, "%s: tensorio: %s", what, why);
  assert_same(expect, &mine.t, what);
  cr_assert_str_eq(mine.name, tp->name ? tp->name : "");

  Onnx__TensorProto *up = onnx__tensor_proto__unpack(NULL, n, buf);
  cr_assert_not_null(up);
  ft_tensor theirs;
  ft_err e = {0};
  cr_assert_eq(ft_tensor_from_proto(up, ".", &theirs, &e), 0, "%s: loader: %s", what, e.msg);
  assert_same(expect, &theirs, what);
  onnx__tensor_proto__free_unpacked(up, NULL);
  onnx__tensor_proto__free_unpacked(tp, NULL); /* built by tb_*, all of it malloc'ed */
  free(mine.t.data);
  free(theirs.data);
  free(buf);
}

Test(tensorio, decoder_matches_protobuf_c_on_raw_data) {
  for (size_t d = 0; d < N_DTYPES; d++) {
    ft_tensor t = {all_dtypes[d], 3, {2, 1, 33}, NULL};
    fill(&t, (uint32_t)(100 + d));
    Onnx__TensorProto *tp = tb_tensor("raw", t.dtype, t.rank, t.dims);
    tb_raw(tp, t.data, ft_nbytes(&t));
    cross_check(tp, &t, ft_dtype_name(t.dtype));
    free(t.data);
  }
}

/* The typed fields, with values that stress the varint encodings: negatives (10-byte varints
 * in int32_data), extremes, and more than one packed block's worth of elements. */
Test(tensorio, decoder_matches_protobuf_c_on_typed_fields) {
  enum { N = 300 };
  ft_tensor t;
  Onnx__TensorProto *tp;
  int64_t dims[2] = {3, 100};

  { /* float_data */
    float v[N];
    for (int i = 0; i < N; i++) v[i] = (float)(i - 150) * 0.37f;
    v[0] = -0.0f; v[1] = 3.4e38f; v[2] = 1e-40f; /* signed zero, huge, subnormal */
    t = (ft_tensor){FT_FLOAT, 2, {3, 100}, v};
    tp = tb_tensor("f", FT_FLOAT, 2, dims);
    tb_floats(tp, v, N);
    cross_check(tp, &t, "float_data");
  }
  { /* double_data */
    double v[N];
    for (int i = 0; i < N; i++) v[i] = (i - 150) / 7.0;
    v[0] = 1e-310;
    t = (ft_tensor){FT_DOUBLE, 2, {3, 100}, v};
    tp = tb_tensor("d", FT_DOUBLE, 2, dims);
    tb_doubles(tp, v, N);
    cross_check(tp, &t, "double_data");
  }
  { /* int64_data */
    int64_t v[N];
    for (int i = 0; i < N; i++) v[i] = (int64_t)(i - 150) * 1000003;
    v[0] = INT64_MIN; v[1] = INT64_MAX; v[2] = -1;
    t = (ft_tensor){FT_INT64, 2, {3, 100}, v};
    tp = tb_tensor("i64", FT_INT64, 2, dims);
    tb_int64s(tp, v, N);
    cross_check(tp, &t, "int64_data");
  }
  { /* uint64_data for uint64 and uint32 */
    uint64_t v[N];
    uint32_t v32[N];
    for (int i = 0; i < N; i++) { v[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull; v32[i] = (uint32_t)(i * 2654435761u); }
    v[0] = UINT64_MAX;
    t = (ft_tensor){FT_UINT64, 2, {3, 100}, v};
    tp = tb_tensor("u64", FT_UINT64, 2, dims);
    tb_uint64s(tp, v, N);
    cross_check(tp, &t, "uint64_data");
    uint64_t wide[N];
    for (int i = 0; i < N; i++) wide[i] = v32[i];
    t = (ft_tensor){FT_UINT32, 2, {3, 100}, v32};
    tp = tb_tensor("u32", FT_UINT32, 2, dims);
    tb_uint64s(tp, wide, N);
    cross_check(tp, &t, "uint32 in uint64_data");
  }
  { /* int32_data for int32 and every narrower type */
    int32_t src[N];
    int32_t i32[N];
    int16_t i16[N];
    uint16_t u16[N], f16[N];
    int8_t i8[N];
    uint8_t u8[N], b[N];
    for (int i = 0; i < N; i++) {
      i32[i] = (i - 150) * 7919 * (i % 2 ? -1 : 1);
      i16[i] = (int16_t)((i - 150) * 211);
      u16[i] = (uint16_t)(i * 211);
      f16[i] = ft_float_to_half((float)(i - 150) / 8.0f);
      i8[i] = (int8_t)(i - 150);
      u8[i] = (uint8_t)i;
      b[i] = (uint8_t)(i % 3 == 0);
    }
    i32[0] = INT32_MIN; i32[1] = INT32_MAX;
    struct { int dtype; const void *v; const char *what; } cases[] = {
        {FT_INT32, i32, "int32"}, {FT_INT16, i16, "int16"}, {FT_UINT16, u16, "uint16"},
        {FT_FLOAT16, f16, "float16"}, {FT_BFLOAT16, u16, "bfloat16"}, {FT_INT8, i8, "int8"},
        {FT_UINT8, u8, "uint8"}, {FT_BOOL, b, "bool"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      int dt = cases[c].dtype;
      for (int i = 0; i < N; i++) {
        switch (ft_dtype_size(dt)) {
        case 1: src[i] = dt == FT_INT8 ? ((const int8_t *)cases[c].v)[i] : ((const uint8_t *)cases[c].v)[i]; break;
        case 2: src[i] = dt == FT_INT16 ? ((const int16_t *)cases[c].v)[i] : ((const uint16_t *)cases[c].v)[i]; break;
        default: src[i] = ((const int32_t *)cases[c].v)[i]; break;
        }
      }
      t = (ft_tensor){dt, 2, {3, 100}, (void *)cases[c].v};
      tp = tb_tensor(cases[c].what, dt, 2, dims);
      tb_int32s(tp, src, N);
      cross_check(tp, &t, cases[c].what);
    }
  }
}

Test(tensorio, scalar_and_empty_tensors) {
  float one = 2.5f;
  ft_tensor s = {FT_FLOAT, 0, {0}, &one};
  Onnx__TensorProto *tp = tb_tensor("s", FT_FLOAT, 0, NULL);
  tb_floats(tp, &one, 1);
  cross_check(tp, &s, "scalar in float_data");
  tp = tb_tensor("s", FT_FLOAT, 0, NULL);
  tb_raw(tp, &one, 4);
  cross_check(tp, &s, "scalar in raw_data");
  int64_t zd[2] = {0, 5};
  ft_tensor z = {FT_INT64, 2, {0, 5}, ""};
  tp = tb_tensor("z", FT_INT64, 2, zd);
  cross_check(tp, &z, "empty int64");
}

Test(tensorio, mismatched_counts_are_errors) {
  int64_t d[1] = {4};
  float v[3] = {1, 2, 3};
  const char *why;
  ft_pb_tensor out;
  Onnx__TensorProto *tp = tb_tensor("x", FT_FLOAT, 1, d);
  tb_floats(tp, v, 3);
  size_t n = onnx__tensor_proto__get_packed_size(tp);
  uint8_t *buf = malloc(n);
  onnx__tensor_proto__pack(tp, buf);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  cr_assert_eq(ft_pb_decode_tensor(buf, n, &out, &why), -1);
  cr_assert_not_null(why);
  cr_assert_null(out.t.data, "no data handed out on failure");

  tp = tb_tensor("x", FT_FLOAT, 1, d);
  tb_raw(tp, v, sizeof v);
  n = onnx__tensor_proto__get_packed_size(tp);
  buf = realloc(buf, n);
  onnx__tensor_proto__pack(tp, buf);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  cr_assert_eq(ft_pb_decode_tensor(buf, n, &out, &why), -1);
  cr_assert(strstr(why, "raw_data"), "%s", why);

  float five[5] = {1, 2, 3, 4, 5}; /* too many bytes is as wrong as too few */
  tp = tb_tensor("x", FT_FLOAT, 1, d);
  tb_raw(tp, five, sizeof five);
  n = onnx__tensor_proto__get_packed_size(tp);
  buf = realloc(buf, n);
  onnx__tensor_proto__pack(tp, buf);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  cr_assert_eq(ft_pb_decode_tensor(buf, n, &out, &why), -1);

  /* no data_type */
  tp = tb_tensor("x", 0, 1, d);
  tp->has_data_type = 0;
  n = onnx__tensor_proto__get_packed_size(tp);
  buf = realloc(buf, n);
  onnx__tensor_proto__pack(tp, buf);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  cr_assert_eq(ft_pb_decode_tensor(buf, n, &out, &why), -1);

  /* external data cannot be a tensor file */
  tp = tb_tensor("x", FT_FLOAT, 1, d);
  tb_external(tp, "location", "w.bin");
  n = onnx__tensor_proto__get_packed_size(tp);
  buf = realloc(buf, n);
  onnx__tensor_proto__pack(tp, buf);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  cr_assert_eq(ft_pb_decode_tensor(buf, n, &out, &why), -1);
  cr_assert(strstr(why, "external"), "%s", why);
  free(buf);
}

/* Every strict prefix of a valid file is an error, never a different tensor. */
Test(tensorio, truncated_files_are_errors) {
  ft_tensor t = {FT_FLOAT, 2, {4, 9}, NULL};
  fill(&t, 7);
  char *path = tu_fmt("%s/full.pb", dir);
  cr_assert_eq(ft_pb_write_tensor(path, "input", &t), 0);
  size_t len;
  char *bytes = tu_read(path, &len);
  char *cut = tu_fmt("%s/cut.pb", dir);
  for (size_t k = 0; k < len; k++) {
    ft_pb_tensor out;
    const char *why = NULL;
    cr_assert_eq(ft_pb_decode_tensor((const uint8_t *)bytes, k, &out, &why), -1, "prefix of %zu/%zu bytes decoded", k, len);
    cr_assert_not_null(why);
    if (k == len / 2 || k == len - 1) {
      tb_write_bytes(cut, bytes, k);
      cr_assert_eq(ft_pb_read_tensor(cut, &out, &why), FT_PB_EBAD, "file cut at %zu bytes", k);
    }
  }
  free(t.data);
  free(bytes);
  free(cut);
  free(path);
  ft_pb_tensor out;
  const char *why;
  char *none = tu_fmt("%s/none.pb", dir);
  cr_assert_eq(ft_pb_read_tensor(none, &out, &why), FT_PB_EIO);
  free(none);
  cr_assert(strstr(why, "no such file"), "%s", why);
}

Test(tensorio, half_and_bfloat16_conversions) {
  /* exactly representable values survive both ways */
  const float exact[] = {0.0f, 1.0f, -2.0f, 0.5f, 65504.0f, 6.103515625e-05f /* smallest normal */,
                         5.960464477539063e-08f /* smallest subnormal */};
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
    cr_assert_float_eq(ft_half_to_float(ft_float_to_half(exact[i])), exact[i], 0, "%g", exact[i]);
  cr_assert_eq(ft_float_to_half(1.0f), 0x3c00);
  cr_assert_eq(ft_float_to_half(-2.0f), 0xc000);
  cr_assert_eq(ft_float_to_half(1e6f), 0x7c00, "overflow to infinity");
  /* round to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 */
  cr_assert_eq(ft_float_to_half(1.0f + 0.00048828125f), 0x3c00);
  cr_assert_eq(ft_float_to_half(1.0f + 3 * 0.00048828125f), 0x3c02);
  /* every half converts to a float and back to itself (NaNs stay NaN) */
  for (uint32_t h = 0; h < 65536; h++) {
    float f = ft_half_to_float((uint16_t)h);
    if (f != f) { cr_assert_eq(ft_float_to_half(f) & 0x7c00, 0x7c00); continue; }
    cr_assert_eq(ft_float_to_half(f), h, "half 0x%04x -> %g -> 0x%04x", h, f, ft_float_to_half(f));
  }
  cr_assert_eq(ft_float_to_bf16(1.0f), 0x3f80);
  for (uint32_t h = 0; h < 65536; h += 7) {
    float f = ft_bf16_to_float((uint16_t)h);
    if (f != f) continue;
    cr_assert_eq(ft_float_to_bf16(f), h);
  }
}

/* The ONNX test data writes bfloat16 tensors as UINT16 files of bfloat16 bits: those stand for
 * bfloat16, bit for bit. No other pair of different dtypes is accepted, either way round. */
Test(tensorio, uint16_files_stand_for_bfloat16_and_nothing_else) {
  for (size_t i = 0; i < N_DTYPES; i++)
    for (size_t j = 0; j < N_DTYPES; j++) {
      int want = all_dtypes[i], file = all_dtypes[j];
      ft_tensor t = {file, 1, {3}, NULL};
      int ok = ft_pb_accept_dtype(&t, want);
      int expect = want == file || (want == FT_BFLOAT16 && file == FT_UINT16);
      cr_assert_eq(ok, expect, "%s file where %s is wanted", ft_dtype_name(file), ft_dtype_name(want));
      cr_assert_eq(t.dtype, ok ? want : file, "the dtype changes only when the file is accepted");
    }
}

/* ---- hostile files ------------------------------------------------------------------------ */

#include <sys/resource.h>

static int decode(const void *bytes, size_t n, ft_pb_tensor *out, const char **why) {
  return ft_pb_decode_tensor((const uint8_t *)bytes, n, out, why);
}

/* Keep this process's address space to what it uses now plus 256 MiB, so that a reader that
 * allocates what a file claims fails with "out of memory" instead of quietly succeeding on an
 * overcommitting machine. Not under AddressSanitizer, which reserves terabytes of shadow. */
static void cap_address_space(void) {
#if !defined(__SANITIZE_ADDRESS__)
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (!f) return;
  if (fscanf(f, "%lu", &pages) != 1) pages = 0;
  fclose(f);
  if (!pages) return;
  struct rlimit rl;
  cr_assert_eq(getrlimit(RLIMIT_AS, &rl), 0);
  rlim_t want = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)256 << 20);
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) return; /* already tighter */
  rl.rlim_cur = want;
  cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
#endif
}

/* A file of a few bytes whose dims claim gigabytes is refused for what it is (its data is not
 * there), before a buffer of the claimed size is made. */
Test(tensorio, claimed_sizes_are_checked_against_the_file_before_allocating) {
  cap_address_space();
  ft_pb_tensor out;
  const char *why;
  /* 27 bytes: dims [2^31, 1] float (8 GiB), raw_data of 4 bytes */
  uint8_t big[] = {0x0a, 0x06, 0x80, 0x80, 0x80, 0x80, 0x08, 0x01, /* dims, packed */
                   0x10, 0x01,                                     /* data_type float */
                   0x42, 0x01, 'x',                                /* name */
                   0x4a, 0x04, 0, 0, 0x80, 0x3f,                   /* raw_data: 1.0f */
                   0x22, 0x00, 0x22, 0x00, 0x22, 0x00, 0x22, 0x00};  /* empty float_data */
  cr_assert_eq(sizeof big, 27);
  cr_assert_eq(decode(big, sizeof big, &out, &why), -1);
  cr_assert(strstr(why, "raw_data size does not match"), "%s", why);
  cr_assert_null(out.t.data);
  /* the same claim with typed values: 3 floats for 2^31 */
  uint8_t typed[] = {0x0a, 0x06, 0x80, 0x80, 0x80, 0x80, 0x08, 0x01, 0x10, 0x01,
                     0x22, 0x0c, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f};
  cr_assert_eq(decode(typed, sizeof typed, &out, &why), -1);
  cr_assert(strstr(why, "element count does not match"), "%s", why);
  /* int64 values for 2^40 x 2^20 elements (the byte size overflows 63 bits) */
  uint8_t over[] = {0x0a, 0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x80, 0x80, 0x40, 0x01,
                    0x10, 0x07, 0x3a, 0x01, 0x05};
  cr_assert_eq(decode(over, sizeof over, &out, &why), -1);
  cr_assert(strstr(why, "overflow"), "%s", why);
  /* a negative dim (a 10-byte varint) */
  uint8_t neg[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x10, 0x01, 0x4a, 0x00};
  cr_assert_eq(decode(neg, sizeof neg, &out, &why), -1);
  cr_assert(strstr(why, "negative"), "%s", why);
  /* a dim of 2^63 - 1 with no data */
  uint8_t huge[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x10, 0x02};
  cr_assert_eq(decode(huge, sizeof huge, &out, &why), -1);
  cr_assert_null(out.t.data);
}

/* A file with no data_type (an empty file, or another message) says so. */
Test(tensorio, no_data_type_is_named_as_such) {
  ft_pb_tensor out;
  const char *why;
  cr_assert_eq(decode("", 0, &out, &why), -1);
  cr_assert(strstr(why, "no data_type"), "%s", why);
  char *empty = tu_fmt("%s/empty.pb", dir);
  tb_write_bytes(empty, "", 0);
  cr_assert_eq(ft_pb_read_tensor(empty, &out, &why), FT_PB_EBAD);
  cr_assert(strstr(why, "no data_type"), "%s", why);
  free(empty);
  uint8_t dims_only[] = {0x08, 0x03};
  cr_assert_eq(decode(dims_only, sizeof dims_only, &out, &why), -1);
  cr_assert(strstr(why, "no data_type"), "%s", why);
  uint8_t strings[] = {0x10, 0x08}; /* data_type STRING */
  cr_assert_eq(decode(strings, sizeof strings, &out, &why), -1);
  cr_assert(strstr(why, "unsupported data_type"), "%s", why);
}

/* What is not a regular file is an I/O error (FT_PB_EIO), told apart from a file that holds no
 * valid tensor (FT_PB_EBAD), and a FIFO is not waited on. */
Test(tensorio, only_regular_files_are_read, .timeout = 10) {
  ft_pb_tensor out;
  const char *why;
  cr_assert_eq(ft_pb_read_tensor(dir, &out, &why), FT_PB_EIO);
  cr_assert(strstr(why, "folder"), "%s", why);
  char *fifo = tu_fmt("%s/fifo.pb", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  cr_assert_eq(ft_pb_read_tensor(fifo, &out, &why), FT_PB_EIO, "a FIFO: %s", why);
  cr_assert(strstr(why, "regular"), "%s", why);
  cr_assert_eq(ft_pb_read_tensor("/dev/null", &out, &why), FT_PB_EIO);
  char *junk = tu_fmt("%s/junk.pb", dir);
  tb_write_bytes(junk, "\xff\xff\xff", 3);
  cr_assert_eq(ft_pb_read_tensor(junk, &out, &why), FT_PB_EBAD);
  free(junk);
  free(fifo);
  if (geteuid() != 0) { /* root reads anything */
    char *locked = tu_fmt("%s/locked.pb", dir);
    tb_write_bytes(locked, "\x10\x01", 2);
    chmod(locked, 0);
    cr_assert_eq(ft_pb_read_tensor(locked, &out, &why), FT_PB_EIO);
    cr_assert(strstr(why, "permission"), "%s", why);
    free(locked);
  }
}
