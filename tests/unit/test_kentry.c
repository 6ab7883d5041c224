/* Kernel entries and their CUDA twins (compiler/op.h ft_kentry, compiler/cuda_twins.h):
 *   registry:  every registered entry has a twin whose launcher expands for fp32 and fp16, and
 *              ftax-eager's table (written from the registry) can hold it;
 *   models:    every call of every committed model, lowered for the CUDA target, whose entry has a
 *              twin is in the registry (a table left out of compiler/ops/table.c would leave
 *              ftax-eager --device cuda without it), and the target stage accepts the model;
 *   fp16:      the entries' half hooks rewrite the calls that move float data as bytes. */
#include <dirent.h>

#include "cuda_twins.h"
#include "pipeline.h"
#include "testutil.h"

typedef struct seen { const ft_kentry *e[2048]; int n; } seen;

static void collect(const ft_kentry *e, void *ctx) {
  seen *s = ctx;
  cr_assert_lt(s->n, 2048);
  s->e[s->n++] = e;
}

static int registered(const seen *s, const ft_kentry *e) {
  for (int i = 0; i < s->n; i++)
    if (s->e[i] == e) return 1;
  return 0;
}

Test(kentry, every_registered_entry_has_a_twin) {
  static seen s;
  s.n = 0;
  ft_kentry_each(collect, &s);
  cr_assert_gt(s.n, 500, "the registry has %d entries", s.n);
  for (int i = 0; i < s.n; i++) {
    ft_twin_call t32, t16;
    cr_assert_eq(ft_cuda_twin_of_entry(s.e[i], 0, &t32), 0, "%s has no twin", s.e[i]->name);
    cr_assert_eq(ft_cuda_twin_of_entry(s.e[i], 1, &t16), 0, "%s has no fp16 twin", s.e[i]->name);
    cr_assert_null(strchr(t32.call, '$'), "%s: %s", s.e[i]->name, t32.call);
    cr_assert_not_null(t32.file);
    for (int j = 0; j < i; j++) cr_assert_neq(s.e[i], s.e[j], "%s is registered twice", s.e[i]->name);
  }
}

/* Every input dim left open pinned to 2, as the model fuzzer does. */
static void pin_inputs(ft_graph *g) {
  for (int i = 0; i < g->n_inputs; i++) {
    ft_value *v = &g->vals[g->inputs[i]];
    for (int d = 0; d < v->t.rank; d++) {
      if (v->t.dims[d] < 0) v->t.dims[d] = 2;
      free(v->sym[d]);
      v->sym[d] = NULL;
    }
    v->shape_known = 1;
  }
}

static void check_model(const char *path, int precision, const seen *s) {
  ft_graph *g = tu_load(path);
  pin_inputs(g);
  ft_pins pins = {0};
  ft_cuda_opts cu = {.precision = precision, .arch = "sm_90"};
  ft_compile_opts co = {.pins = &pins, .cuda = &cu};
  ft_lowered lw = {0};
  ft_memplan mp = {0};
  ft_cuda_libs libs = {0};
  ft_err e = {0};
  cr_assert_eq(ft_compile_graph(g, &co, &lw, &mp, &libs, &e), 0, "%s: %s", path, e.msg);
  for (int i = 0; i < lw.n; i++) {
    const ft_kentry *k = lw.calls[i].entry;
    if (k && k->twin) cr_assert(registered(s, k), "%s: %s has a twin but no registered table", path, k->name);
  }
  ft_memplan_free(&mp);
  ft_lowered_free(&lw);
  ft_graph_free(g);
}

Test(kentry, committed_models_use_registered_entries, .timeout = 120) {
  static seen s;
  s.n = 0;
  ft_kentry_each(collect, &s);
  char *models = tu_fmt("%s/tests/models", FTAX_SOURCE_DIR);
  DIR *d = opendir(models);
  cr_assert_not_null(d, "%s", models);
  int n = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    char *path = tu_fmt("%s/%s/model.onnx", models, de->d_name);
    if (de->d_name[0] == '.' || !tu_exists(path)) continue;
    /* kernels without twins yet: tests/cuda/missing_twins_test.sh holds it to its list */
    if (tu_exists(tu_fmt("%s/%s/cuda_missing_twins", models, de->d_name))) continue;
    check_model(path, FT_PREC_FP32, &s);
    check_model(path, FT_PREC_FP16, &s);
    n++;
  }
  closedir(d);
  cr_assert_gt(n, 0);
}

/* Concat of two float32 [2,3] tensors along axis 1: 12 bytes per row of each input, 6 in half. */
Test(kentry, fp16_halves_the_byte_counts_of_concat) {
  char *dir = tu_tmpdir();
  Onnx__GraphProto *gp = tb_graph("concat");
  tb_add_input(gp, tb_value("a", FT_FLOAT, "2,3"));
  tb_add_input(gp, tb_value("b", FT_FLOAT, "2,3"));
  Onnx__NodeProto *n = tb_node("Concat", "cat", "a,b", "y");
  tb_attr_int(n, "axis", 1);
  tb_add_node(gp, n);
  tb_add_node(gp, tb_node("Relu", "relu", "y", "z"));
  tb_add_output(gp, tb_value("z", FT_FLOAT, NULL));
  char *path = tu_fmt("%s/m.onnx", dir);
  tb_write_model(tb_model(gp, 13), path);
  for (int fp16 = 0; fp16 < 2; fp16++) {
    ft_graph *g = tu_load(path);
    ft_pins pins = {0};
    ft_cuda_opts cu = {.precision = fp16 ? FT_PREC_FP16 : FT_PREC_FP32, .arch = "sm_90"};
    ft_compile_opts co = {.pins = &pins, .cuda = &cu};
    ft_lowered lw = {0};
    ft_memplan mp = {0};
    ft_cuda_libs libs = {0};
    ft_err e = {0};
    cr_assert_eq(ft_compile_graph(g, &co, &lw, &mp, &libs, &e), 0, "%s", e.msg);
    cr_assert_str_eq(lw.calls[0].entry->name, "ft_concat");
    cr_assert_eq(lw.calls[0].p[2], fp16 ? 6 : 12);
    cr_assert_eq(lw.calls[0].p[3], fp16 ? 6 : 12);
    ft_twin_call t;
    char why[128];
    cr_assert_eq(ft_cuda_twin(&lw.calls[1], fp16, &t, why, sizeof why), 0, "%s", why);
    cr_assert_str_eq(t.call, fp16 ? "ftc_unary<__half, __half, ftc_u_relu>" : "ftc_unary<float, float, ftc_u_relu>");
    cr_assert(!libs.blaslt && !libs.dnn);
    ft_memplan_free(&mp);
    ft_lowered_free(&lw);
    ft_graph_free(g);
  }
  tu_rmtree(dir);
}
