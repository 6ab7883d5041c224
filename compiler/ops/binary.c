/* Elementwise binary ops with numpy broadcasting: arithmetic, comparison, logic.
 * Kernels: templates/c/binary.h. */
#include <string.h>

#include "binary.h"
#include "cuda_twins.h"
#include "op.h"

/* Kernel entries by dtype, each with its CUDA twin: templates/cuda/elementwise.cuh's ftc_binary
 * with the op's functor (ftc_b_<op>); comparisons store uint8_t. */
#define TWIN(tw, launcher) static const ft_twin tw = {launcher, NULL, NULL, "elementwise", 0, NULL, NULL};
#define K(dt, op, s) {"ft_" #op "_" #s, ft_##op##_##s, dt, 0, &op##_tw, NULL}
#define ALL_TYPES(op)                                                                             \
  K(FT_FLOAT, op, f32), K(FT_DOUBLE, op, f64), K(FT_INT8, op, i8), K(FT_INT16, op, i16),         \
  K(FT_INT32, op, i32), K(FT_INT64, op, i64), K(FT_UINT8, op, u8), K(FT_UINT16, op, u16),        \
  K(FT_UINT32, op, u32), K(FT_UINT64, op, u64)
#define TABLE(op) TWIN(op##_tw, "ftc_binary<$0, $0, $0, ftc_b_" #op ">") static const ft_kentry op##_k[] = {ALL_TYPES(op), {0}};
#define COMPARE(op) TWIN(op##_tw, "ftc_binary<$0, $0, uint8_t, ftc_b_" #op ">") static const ft_kentry op##_k[] = {ALL_TYPES(op), {0}};
TABLE(add) TABLE(sub) TABLE(mul) TABLE(div) TABLE(pow) TABLE(mod) TABLE(fmod)
COMPARE(equal) COMPARE(less) COMPARE(greater) COMPARE(less_equal) COMPARE(greater_equal)
#undef TABLE
#undef COMPARE
#define UNSIGNED(op) K(FT_UINT8, op, u8), K(FT_UINT16, op, u16), K(FT_UINT32, op, u32), K(FT_UINT64, op, u64)
#define SIGNED(op) K(FT_INT8, op, i8), K(FT_INT16, op, i16), K(FT_INT32, op, i32), K(FT_INT64, op, i64)
#define TABLE_INT(op, ...) TWIN(op##_tw, "ftc_binary<$0, $0, $0, ftc_b_" #op ">") static const ft_kentry op##_k[] = {__VA_ARGS__, {0}};
TABLE_INT(shl, UNSIGNED(shl)) TABLE_INT(shr, UNSIGNED(shr))
TABLE_INT(bitwise_and, UNSIGNED(bitwise_and), SIGNED(bitwise_and))
TABLE_INT(bitwise_or, UNSIGNED(bitwise_or), SIGNED(bitwise_or))
TABLE_INT(bitwise_xor, UNSIGNED(bitwise_xor), SIGNED(bitwise_xor))
TABLE_INT(and, K(FT_BOOL, and, bool)) TABLE_INT(or, K(FT_BOOL, or, bool)) TABLE_INT(xor, K(FT_BOOL, xor, bool))
#undef TABLE_INT
#undef SIGNED
#undef UNSIGNED
TWIN(equal_bool_tw, "ftc_binary<$0, $0, uint8_t, ftc_b_equal_bool>")
static const ft_kentry equal_bool_k[] = {{"ft_equal_bool", ft_equal_bool, FT_BOOL, 0, &equal_bool_tw, NULL}, {0}};
static const ft_kentry mod_f16_k[] = {K(FT_FLOAT16, mod, f16), K(FT_FLOAT16, fmod, f16), {0}};
#undef K

/* Pow of a float32 base, by exponent type (dtype2) */
TWIN(powf_tw, "ftc_binary<$0, $1, $0, ftc_b_powf>")
#define PF(e, es) {"ft_pow_f32_" #es, ft_pow_f32_##es, FT_FLOAT, e, &powf_tw, NULL}
static const ft_kentry pow_f32_k[] = {
    PF(FT_FLOAT, f32), PF(FT_DOUBLE, f64), PF(FT_INT32, i32),  PF(FT_INT64, i64),  PF(FT_INT8, i8),
    PF(FT_INT16, i16), PF(FT_UINT8, u8),   PF(FT_UINT16, u16), PF(FT_UINT32, u32), PF(FT_UINT64, u64),
    {0}};
#undef PF
#undef TWIN
/* Pow's other mixed pairs, by base and exponent type (no twins) */
static const ft_kentry pow_mixed_k[] = {
#define PM(b, bs, e, es) {"ft_pow_" #bs "_" #es, ft_pow_##bs##_##es, b, e, NULL, NULL}
    PM(FT_INT32, i32, FT_INT64, i64),  PM(FT_INT32, i32, FT_FLOAT, f32),  PM(FT_INT32, i32, FT_DOUBLE, f64),
    PM(FT_INT64, i64, FT_INT32, i32),  PM(FT_INT64, i64, FT_FLOAT, f32),  PM(FT_INT64, i64, FT_DOUBLE, f64),
    PM(FT_DOUBLE, f64, FT_INT32, i32), PM(FT_DOUBLE, f64, FT_INT64, i64), PM(FT_DOUBLE, f64, FT_FLOAT, f32),
#undef PM
    {0}};

const ft_kentry *const ft_kernels_binary[] = {
    add_k, sub_k, mul_k, div_k, pow_k, mod_k, fmod_k, equal_k, less_k, greater_k, less_equal_k, greater_equal_k,
    shl_k, shr_k, bitwise_and_k, bitwise_or_k, bitwise_xor_k, and_k, or_k, xor_k, equal_bool_k, mod_f16_k,
    pow_f32_k, NULL};

/* the entry of table for the pair of types, or NULL */
static const ft_kentry *find_pair(const ft_kentry *table, int base, int exp) {
  for (const ft_kentry *e = table; e->name; e++)
    if (e->dtype == base && e->dtype2 == exp) return e;
  return NULL;
}

/* Which kernel table serves which op; comparisons produce bool. */
static const struct binop {
  const char *op;
  const ft_kentry *k;
  int out_bool;
} binops[] = {
    {"Add", add_k, 0},   {"Sub", sub_k, 0},          {"Mul", mul_k, 0},
    {"Div", div_k, 0},   {"Pow", pow_k, 0},          {"Mod", mod_k, 0},
    {"Equal", equal_k, 1}, {"Less", less_k, 1},      {"Greater", greater_k, 1},
    {"LessOrEqual", less_equal_k, 1}, {"GreaterOrEqual", greater_equal_k, 1},
    {"And", and_k, 1},   {"Or", or_k, 1},            {"Xor", xor_k, 1},
    {"BitShift", shl_k, 0}, {"BitwiseAnd", bitwise_and_k, 0}, {"BitwiseOr", bitwise_or_k, 0},
    {"BitwiseXor", bitwise_xor_k, 0},
};

static const struct binop *find_binop(const char *op) {
  for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
    if (!strcmp(binops[i].op, op)) return &binops[i];
  return NULL;
}

static int binary_infer(ft_opctx *c) {
  const struct binop *b = find_binop(c->node->op_type);
  if (c->n_in != 2 || !c->in[0] || !c->in[1]) return ft_infer_fail(c, FT_EINVALID, "needs two inputs");
  int pow_mixed = !strcmp(b->op, "Pow") &&
                  (c->in[0]->dtype == FT_FLOAT || find_pair(pow_mixed_k, c->in[0]->dtype, c->in[1]->dtype));
  if (c->in[0]->dtype != c->in[1]->dtype && !pow_mixed)
    return ft_infer_fail(c, FT_EINVALID, "inputs have different types (%s and %s)",
                         ft_dtype_name(c->in[0]->dtype), ft_dtype_name(c->in[1]->dtype));
  const ft_tensor *ts[2] = {c->in[0], c->in[1]};
  int rc = ft_broadcast_shape(c, 2, ts, c->out[0]);
  if (rc) return rc;
  c->out[0]->dtype = b->out_bool ? FT_BOOL : c->in[0]->dtype;
  return 0;
}

static int binary_plan(ft_opctx *c, ft_kcall *k) {
  const struct binop *b = find_binop(c->node->op_type);
  const ft_kentry *table = b->k;
  int dt = c->in[0]->dtype, is_pow = !strcmp(b->op, "Pow");
  if (!strcmp(b->op, "Mod") && ft_attr_int(c->node, "fmod", 0)) table = fmod_k;
  if (!strcmp(b->op, "BitShift")) {
    const char *dir = ft_attr_str(c->node, "direction", "");
    if (!strcmp(dir, "RIGHT")) table = shr_k;
    else if (strcmp(dir, "LEFT"))
      return ft_infer_fail(c, FT_EINVALID, "direction='%s' is not 'LEFT' or 'RIGHT'", dir);
  }
  k->entry = NULL;
  if (is_pow && dt == FT_FLOAT) { /* by the exponent's type */
    dt = c->in[1]->dtype;
    k->entry = find_pair(pow_f32_k, FT_FLOAT, dt);
  }
  else if (is_pow && dt != c->in[1]->dtype) k->entry = find_pair(pow_mixed_k, dt, c->in[1]->dtype);
  else if (!strcmp(b->op, "Mod") && dt == FT_FLOAT16) k->entry = &mod_f16_k[table == fmod_k];
  else if (!strcmp(b->op, "Equal") && dt == FT_BOOL) k->entry = equal_bool_k;
  else
    for (const ft_kentry *e = table; e->name; e++)
      if (e->dtype == dt) k->entry = e;
  if (!k->entry) return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s", b->op, ft_dtype_name(dt));
  const ft_tensor *ts[2] = {c->in[0], c->in[1]};
  k->np = ft_plan_broadcast(ts, 2, c->out[0], k->p);
  return 0;
}

#define BIN(name) {name, "", binary_infer, binary_plan, "binary", FT_OP_INPLACE | FT_OP_PAT(FT_PAT_BROADCAST)}
const ft_opdesc ft_ops_binary[] = {
    BIN("Add"), BIN("Sub"), BIN("Mul"), BIN("Div"), BIN("Pow"), BIN("Mod"),
    BIN("Equal"), BIN("Less"), BIN("Greater"), BIN("LessOrEqual"), BIN("GreaterOrEqual"),
    BIN("And"), BIN("Or"), BIN("Xor"), BIN("BitShift"), BIN("BitwiseAnd"), BIN("BitwiseOr"),
    BIN("BitwiseXor"), {0}};
