/* The C kernel -> CUDA twin mapping (cuda_twins.h). The twin follows from the kernel's name
 * (op and element type); a few calls' parameters are beyond the twin (checked where p is given). */
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "conv.h"
#include "cuda_twins.h"
#include "gemm.h"

static const struct { const char *sfx, *type; } type_names[] = {
    {"f32", "float"}, {"f64", "double"}, {"f16", "__half"}, {"bf16", "__nv_bfloat16"},
    {"i8", "int8_t"}, {"i16", "int16_t"}, {"i32", "int32_t"}, {"i64", "int64_t"},
    {"u8", "uint8_t"}, {"u16", "uint16_t"}, {"u32", "uint32_t"}, {"u64", "uint64_t"},
    {"bool", "uint8_t"}, {NULL, NULL}};

/* the storage type of a kernel type suffix; f32 is half in fp16 programs */
static const char *ctype(const char *sfx, int fp16) {
  if (fp16 && !strcmp(sfx, "f32")) return "__half";
  for (int i = 0; type_names[i].sfx; i++)
    if (!strcmp(type_names[i].sfx, sfx)) return type_names[i].type;
  return NULL;
}
static int is_float_sfx(const char *s) { return !strcmp(s, "f32") || !strcmp(s, "f64") || !strcmp(s, "f16") || !strcmp(s, "bf16"); }
static int is_signed_sfx(const char *s) { return s[0] == 'i'; }

/* the scalar ops' kernels (templates/common/scalar_ops.h), then the others of unary.h */
#define UNARY_ROW(ID, fn, name, kernels, ...) FT_SOP_IF_C_##kernels(#fn, )
#define PARAM_ROW(ID, fn, name, kernels, A, DA, B, DB, ...) FT_SOP_IF_C_##kernels(#fn, )
static const char *const unary_ops[] = {
    FT_SCALAR_UNARY_OPS(UNARY_ROW) FT_SCALAR_PARAM_OPS(PARAM_ROW) "isnan", "bitwise_not", "not", NULL};
#undef UNARY_ROW
#undef PARAM_ROW
static const char *const binary_ops[] = {
    "add", "sub", "mul", "div", "max2", "min2", "pow", "mod", "fmod", "shl", "shr", "bitwise_and",
    "bitwise_or", "bitwise_xor", "and", "or", "xor", "prelu", NULL};
static const char *const compare_ops[] = {"equal", "less", "greater", "less_equal", "greater_equal", NULL};
static const char *const reduce_ops[] = {"sum", "mean", "prod", "max", "min", "l1", "l2", "sum_square", "log_sum", NULL};

static int in_list(const char *const *l, const char *s) {
  for (int i = 0; l[i]; i++) if (!strcmp(l[i], s)) return 1;
  return 0;
}

static const char *size_type(const char *n) {
  return !strcmp(n, "1") ? "uint8_t" : !strcmp(n, "2") ? "uint16_t" : !strcmp(n, "4") ? "uint32_t" : !strcmp(n, "8") ? "uint64_t" : NULL;
}

#define SET(t, ...) snprintf((t)->call, sizeof (t)->call, __VA_ARGS__)

/* cuDNN pads both ends alike: the model's output size must be what that gives */
static int conv_pads_symmetric(const int64_t *p) {
  for (int i = 0; i < 3; i++) {
    int64_t in = p[FT_CV_IN + i], k = p[FT_CV_K + i], s = p[FT_CV_S + i], d = p[FT_CV_D + i], pb = p[FT_CV_P + i];
    int64_t span = (k - 1) * d + 1, got = (in + 2 * pb - span) / s + 1;
    if (got != p[FT_CV_OUT + i]) return 0;
  }
  return 1;
}

/* the epilogue activations templates/cuda/runtime.cuh's ftc_act knows: gemm.h's, from the same
 * scalar-op list */
static int act_known(int a) { return ft_act_known(a); }

/* The twin of call k, or -1 with the reason in why. */
static int twin_of(const char *name, const int64_t *p, int fp16, ft_twin *t, char *why, size_t wn) {
  memset(t, 0, sizeof *t);
  why[0] = 0;
  if (strncmp(name, "ft_", 3)) { snprintf(why, wn, "not a kernel name"); return -1; }
  name += 3;
  t->file = "elementwise";
  /* kernels without a type suffix */
  if (!strcmp(name, "copy_bytes") || !strcmp(name, "concat") || !strcmp(name, "split") || !strcmp(name, "dropout_copy")) {
    SET(t, "ftc_%s", name);
    t->file = "movement";
    return 0;
  }
  char op[128], sfx[32], a[32];
  const char *us = strrchr(name, '_');
  if (!us) { snprintf(why, wn, "no twin"); return -1; }
  snprintf(op, sizeof op, "%.*s", (int)(us - name), name);
  snprintf(sfx, sizeof sfx, "%s", us + 1);
  /* two-type kernels: ft_cast_<from>_<to>, ft_pow_f32_<exponent type> */
  if (!strncmp(name, "cast_", 5) || !strncmp(name, "pow_f32_", 8)) {
    const char *from = name + (name[0] == 'c' ? 5 : 4), *u2 = strchr(from, '_');
    if (u2) {
      snprintf(a, sizeof a, "%.*s", (int)(u2 - from), from);
      const char *S = ctype(a, fp16), *D = ctype(u2 + 1, fp16);
      if (S && D && name[0] == 'c') { SET(t, "ftc_cast<%s, %s, %d>", S, D, !strcmp(u2 + 1, "bool")); return 0; }
      if (S && D) { SET(t, "ftc_binary<%s, %s, %s, ftc_b_powf>", S, D, S); return 0; }
    }
  }
  /* element-size kernels */
  const char *E = size_type(sfx);
  if (E && (!strcmp(op, "copy_nd") || !strcmp(op, "where") || !strcmp(op, "fill") || !strcmp(op, "pad"))) {
    SET(t, "ftc_%s<%s>", op, E);
    t->file = strcmp(op, "copy_nd") && strcmp(op, "pad") ? "elementwise" : "movement";
    return 0;
  }
  const char *T = ctype(sfx, fp16);
  if (!T) { snprintf(why, wn, "no twin"); return -1; }
  if (!strcmp(op, "gather") && (!strcmp(sfx, "i32") || !strcmp(sfx, "i64"))) { SET(t, "ftc_gather<%s>", T); t->file = "movement"; return 0; }
  if (!strcmp(op, "attention") && !strcmp(sfx, "f32")) {
    if (p && (p[FT_AT_DK] > 256 || p[FT_AT_DV] > 256)) { snprintf(why, wn, "heads of more than 256 dims"); return -1; }
    SET(t, "ftc_attention<%s>", T);
    t->file = "attention";
    return 0;
  }
  if ((!strcmp(op, "skip_layernorm") || !strcmp(op, "fused_layernorm") || !strcmp(op, "embed_layernorm")) && !strcmp(sfx, "f32")) {
    if (p && op[0] == 'e' && p[2] > 4) { snprintf(why, wn, "more than 4 embedding tables"); return -1; }
    SET(t, "ftc_%s<%s>", op, T);
    t->file = "fused_norm";
    return 0;
  }
  if (!strcmp(op, "elementwise") && !strcmp(sfx, "f32")) { SET(t, "ftc_elementwise<%s>", T); return 0; }
  if (!strcmp(op, "matmul")) {
    t->file = "gemm";
    if (p && p[FT_MM_PACKED]) { snprintf(why, wn, "weights were pre-packed for the CPU"); return -1; }
    if (!strcmp(sfx, "f32") || !strcmp(sfx, "f16")) {
      if (p && !act_known((int)p[FT_MM_ACT])) { snprintf(why, wn, "activation %d", (int)p[FT_MM_ACT]); return -1; }
      SET(t, "ftc_matmul_lt<%s>", T);
      snprintf(t->init, sizeof t->init, "ftc_matmul_lt_init<%s>", T);
      t->free_fn = "ftc_matmul_lt_free";
      t->lib = FT_TW_BLASLT;
      return 0;
    }
    SET(t, "ftc_matmul_naive<%s>", T);
    return 0;
  }
  if (!strcmp(op, "conv") && !strcmp(sfx, "f32")) {
    t->file = "conv";
    if (p && p[FT_CV_PACKED]) { snprintf(why, wn, "weights were pre-packed for the CPU"); return -1; }
    if (p && !conv_pads_symmetric(p)) { snprintf(why, wn, "different pads at the two ends of a dim"); return -1; }
    if (p && !act_known((int)p[FT_CV_ACT])) { snprintf(why, wn, "activation %d", (int)p[FT_CV_ACT]); return -1; }
    SET(t, "ftc_conv<%s>", T);
    snprintf(t->init, sizeof t->init, "ftc_conv_init<%s>", T);
    t->free_fn = "ftc_conv_free";
    t->lib = FT_TW_DNN;
    return 0;
  }
  if (!strcmp(op, "maxpool")) { SET(t, "ftc_maxpool<%s>", T); t->file = "pool"; return 0; }
  if (!strcmp(op, "avgpool") || !strcmp(op, "lppool")) { SET(t, "ftc_avgpool<%s, %d>", T, op[0] == 'l'); t->file = "pool"; return 0; }
  t->file = "reduce";
  if (!strcmp(op, "global_avgpool")) { SET(t, "ftc_gpool<%s, FTC_GAVG>", T); return 0; }
  if (!strcmp(op, "global_maxpool")) { SET(t, "ftc_gpool<%s, FTC_GMAX>", T); return 0; }
  if (!strcmp(op, "global_lppool")) { SET(t, "ftc_gpool<%s, FTC_GLP>", T); return 0; }
  if (!strcmp(op, "softmax")) { SET(t, "ftc_softmax<%s, FTC_SOFTMAX>", T); return 0; }
  if (!strcmp(op, "log_softmax")) { SET(t, "ftc_softmax<%s, FTC_LOG_SOFTMAX>", T); return 0; }
  if (!strcmp(op, "hardmax")) { SET(t, "ftc_softmax<%s, FTC_HARDMAX>", T); return 0; }
  if (!strcmp(op, "layernorm") || !strcmp(op, "batchnorm") || !strcmp(op, "instnorm")) { SET(t, "ftc_%s<%s>", op, T); return 0; }
  if (!strcmp(op, "argmax") || !strcmp(op, "argmin")) { SET(t, "ftc_arg<%s, %d>", T, op[4] == 'a'); return 0; }
  if (!strncmp(op, "reduce_", 7)) {
    if (!strcmp(op + 7, "log_sum_exp")) { SET(t, "ftc_reduce_lse<%s>", T); return 0; }
    if (in_list(reduce_ops, op + 7)) { SET(t, "ftc_reduce<%s, ftc_r_%s>", T, op + 7); return 0; }
  }
  t->file = "elementwise";
  if (!strcmp(op, "range")) { SET(t, "ftc_range<%s>", T); return 0; }
  if (!strcmp(op, "isinf")) { SET(t, "ftc_isinf<%s>", T); return 0; }
  if (!strcmp(op, "clip")) { SET(t, "ftc_clip<%s>", T); return 0; }
  if (!strcmp(op, "sum") || !strcmp(op, "mean") || !strcmp(op, "max") || !strcmp(op, "min")) {
    if (p && p[0] > 8) { snprintf(why, wn, "more than 8 inputs"); return -1; }
    SET(t, "ftc_variadic<%s, ftc_v_%s, %d>", T, !strcmp(op, "mean") ? "sum" : op, !strcmp(op, "mean"));
    return 0;
  }
  if (in_list(unary_ops, op)) {
    const char *u = op;
    if (!strcmp(op, "abs")) u = is_float_sfx(sfx) ? "abs_f" : is_signed_sfx(sfx) ? "abs_i" : "abs_u";
    if (!strcmp(op, "sign") && !is_float_sfx(sfx) && !is_signed_sfx(sfx)) u = "sign_u";
    SET(t, "ftc_unary<%s, %s, ftc_u_%s>", T, !strcmp(op, "isnan") ? "uint8_t" : T, u);
    return 0;
  }
  if (in_list(binary_ops, op) || in_list(compare_ops, op)) {
    const char *b = !strcmp(op, "equal") && !strcmp(sfx, "bool") ? "equal_bool" : op;
    SET(t, "ftc_binary<%s, %s, %s, ftc_b_%s>", T, T, in_list(compare_ops, op) ? "uint8_t" : T, b);
    return 0;
  }
  snprintf(why, wn, "no twin");
  return -1;
}

int ft_cuda_twin(const ft_kcall *k, int fp16, ft_twin *t, char *why, size_t wn) {
  return twin_of(k->kernel, k->p, fp16, t, why, wn);
}

int ft_cuda_twin_of_kernel(const char *kernel, int fp16, ft_twin *t) {
  char why[128];
  return twin_of(kernel, NULL, fp16, t, why, sizeof why);
}
