/* Elementwise binary ops with numpy broadcasting: arithmetic, comparison, logic.
 * Kernels: templates/c/binary.h. */
#include <string.h>

#include "binary.h"
#include "op.h"

typedef struct kentry { int dtype; const char *name; ft_kernel_fn fn; } kentry;

#define TABLE(op)                                                                              \
  static const kentry op##_k[] = {                                                             \
      {FT_FLOAT, "ft_" #op "_f32", ft_##op##_f32},  {FT_DOUBLE, "ft_" #op "_f64", ft_##op##_f64}, \
      {FT_INT8, "ft_" #op "_i8", ft_##op##_i8},     {FT_INT16, "ft_" #op "_i16", ft_##op##_i16},  \
      {FT_INT32, "ft_" #op "_i32", ft_##op##_i32},  {FT_INT64, "ft_" #op "_i64", ft_##op##_i64},  \
      {FT_UINT8, "ft_" #op "_u8", ft_##op##_u8},    {FT_UINT16, "ft_" #op "_u16", ft_##op##_u16}, \
      {FT_UINT32, "ft_" #op "_u32", ft_##op##_u32}, {FT_UINT64, "ft_" #op "_u64", ft_##op##_u64}, \
      {0, 0, 0}};
TABLE(add) TABLE(sub) TABLE(mul) TABLE(div) TABLE(pow) TABLE(mod)
TABLE(equal) TABLE(less) TABLE(greater) TABLE(less_equal) TABLE(greater_equal) TABLE(fmod)
#undef TABLE
#define TABLE_INT(op, signed_too)                                                                \
  static const kentry op##_k[] = {                                                             \
      {FT_UINT8, "ft_" #op "_u8", ft_##op##_u8},    {FT_UINT16, "ft_" #op "_u16", ft_##op##_u16}, \
      {FT_UINT32, "ft_" #op "_u32", ft_##op##_u32}, {FT_UINT64, "ft_" #op "_u64", ft_##op##_u64}, \
      signed_too(op) {0, 0, 0}};
#define SIGNED(op)                                                                             \
  {FT_INT8, "ft_" #op "_i8", ft_##op##_i8},     {FT_INT16, "ft_" #op "_i16", ft_##op##_i16},       \
  {FT_INT32, "ft_" #op "_i32", ft_##op##_i32},  {FT_INT64, "ft_" #op "_i64", ft_##op##_i64},
#define UNSIGNED_ONLY(op)
TABLE_INT(shl, UNSIGNED_ONLY) TABLE_INT(shr, UNSIGNED_ONLY)
TABLE_INT(bitwise_and, SIGNED) TABLE_INT(bitwise_or, SIGNED) TABLE_INT(bitwise_xor, SIGNED)
#undef TABLE_INT
#undef SIGNED
#undef UNSIGNED_ONLY

static const kentry pow_f32_k[] = {
    {FT_FLOAT, "ft_pow_f32_f32", ft_pow_f32_f32}, {FT_DOUBLE, "ft_pow_f32_f64", ft_pow_f32_f64},
    {FT_INT32, "ft_pow_f32_i32", ft_pow_f32_i32}, {FT_INT64, "ft_pow_f32_i64", ft_pow_f32_i64},
    {FT_INT8, "ft_pow_f32_i8", ft_pow_f32_i8},    {FT_INT16, "ft_pow_f32_i16", ft_pow_f32_i16},
    {FT_UINT8, "ft_pow_f32_u8", ft_pow_f32_u8},   {FT_UINT16, "ft_pow_f32_u16", ft_pow_f32_u16},
    {FT_UINT32, "ft_pow_f32_u32", ft_pow_f32_u32}, {FT_UINT64, "ft_pow_f32_u64", ft_pow_f32_u64},
    {0, 0, 0}};
/* Pow's other mixed pairs, by base and exponent type */
static const struct { int base, exp; const char *name; ft_kernel_fn fn; } pow_mixed_k[] = {
#define PM(b, bs, e, es) {b, e, "ft_pow_" #bs "_" #es, ft_pow_##bs##_##es}
    PM(FT_INT32, i32, FT_INT64, i64),  PM(FT_INT32, i32, FT_FLOAT, f32),  PM(FT_INT32, i32, FT_DOUBLE, f64),
    PM(FT_INT64, i64, FT_INT32, i32),  PM(FT_INT64, i64, FT_FLOAT, f32),  PM(FT_INT64, i64, FT_DOUBLE, f64),
    PM(FT_DOUBLE, f64, FT_INT32, i32), PM(FT_DOUBLE, f64, FT_INT64, i64), PM(FT_DOUBLE, f64, FT_FLOAT, f32),
#undef PM
};

static int find_pow_mixed(int base, int exp) {
  for (size_t i = 0; i < sizeof pow_mixed_k / sizeof pow_mixed_k[0]; i++)
    if (pow_mixed_k[i].base == base && pow_mixed_k[i].exp == exp) return (int)i;
  return -1;
}

static const kentry and_k[] = {{FT_BOOL, "ft_and_bool", ft_and_bool}, {0, 0, 0}};
static const kentry or_k[] = {{FT_BOOL, "ft_or_bool", ft_or_bool}, {0, 0, 0}};
static const kentry xor_k[] = {{FT_BOOL, "ft_xor_bool", ft_xor_bool}, {0, 0, 0}};

/* Which kernel table serves which op; comparisons produce bool. */
static const struct binop {
  const char *op;
  const kentry *k;
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
                  (c->in[0]->dtype == FT_FLOAT || find_pow_mixed(c->in[0]->dtype, c->in[1]->dtype) >= 0);
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
  const kentry *table = b->k;
  int dt = c->in[0]->dtype;
  if (!strcmp(b->op, "Pow") && dt == FT_FLOAT) { table = pow_f32_k; dt = c->in[1]->dtype; }
  int pm = !strcmp(b->op, "Pow") && dt != c->in[1]->dtype ? find_pow_mixed(dt, c->in[1]->dtype) : -1;
  if (!strcmp(b->op, "Mod") && ft_attr_int(c->node, "fmod", 0)) table = fmod_k;
  if (!strcmp(b->op, "BitShift")) {
    const char *dir = ft_attr_str(c->node, "direction", "");
    if (!strcmp(dir, "RIGHT")) table = shr_k;
    else if (strcmp(dir, "LEFT"))
      return ft_infer_fail(c, FT_EINVALID, "direction='%s' is not 'LEFT' or 'RIGHT'", dir);
  }
  if (pm >= 0) { k->kernel = pow_mixed_k[pm].name; k->fn = pow_mixed_k[pm].fn; }
  else if (!strcmp(b->op, "Mod") && dt == FT_FLOAT16) {
    if (table == fmod_k) FT_K(k, ft_fmod_f16);
    else FT_K(k, ft_mod_f16);
  } else if (!strcmp(b->op, "Equal") && dt == FT_BOOL) { k->kernel = "ft_equal_bool"; k->fn = ft_equal_bool; }
  else {
    k->fn = NULL;
    for (const kentry *e = table; e->name; e++)
      if (e->dtype == dt) { k->kernel = e->name; k->fn = e->fn; }
    if (!k->fn)
      return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is not supported for %s", b->op, ft_dtype_name(dt));
  }
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
