/* ftax.Elementwise: a chain (or tree) of float32 elementwise ops evaluated in one pass.
 *
 * The op carries a small program (compiler/fuse/fuse_elementwise.c writes it): instructions over
 * registers, each register a chunk of FT_EW_CHUNK consecutive output elements. The output is
 * walked a chunk at a time; per chunk every instruction is one loop over the chunk (which the
 * compiler vectorizes), reading and writing registers that stay in L1. A chain of k ops thus
 * reads its inputs and writes its output once, instead of k round trips through memory.
 *
 * Registers 0 .. n_in-1 are the inputs: they point straight into the input tensors (no copy) or,
 * for an input broadcast along the innermost axis, hold one value for the chunk (a "scalar").
 * Registers n_in .. n_in+T-1 are temporaries in a stack buffer; FT_EW_OUT is the output chunk,
 * written by the last instruction only. An operand can also be an immediate float (bit pattern
 * in the low 32 bits, FT_EW_IMM set). Results of scalar-only operands stay scalars, so a value
 * computed from broadcast inputs costs one evaluation per chunk, not per element.
 *
 * p: [n_in, n_instr, T, B, program (n_instr x 5: op, dst, a, b, c), broadcast plan at p + B
 * (ft_plan_broadcast of the inputs over the output)]. Every element reads its inputs at its own
 * index before the output is written there, so the output may overwrite a same-size input. */
#ifndef FT_ELEMENTWISE_H
#define FT_ELEMENTWISE_H

#include <math.h>
#include <stdint.h>

#include "fastmath.h"
#include "parallel.h"
#include "scalar_ops.h"
#include "tensor.h"

#define FT_EW_CHUNK 256
#define FT_EW_MAXIN 8   /* inputs */
#define FT_EW_MAXT 8    /* temporaries: 8 KiB of stack */
#define FT_EW_MAXI 32   /* instructions */
#define FT_EW_OUT 1000  /* the output register */
#define FT_EW_IMM ((int64_t)1 << 32)
#define FT_EW_PAR_WORK (1 << 18) /* elements x instructions worth waking threads for */

/* Opcodes: the scalar ops' ids (templates/common/scalar_ops.h), FT_EW_<ID>. Unary ops read a;
 * parameter ops also take immediates b and c (the op's a and b); binary ops a and b. */
#define FT_EW_ENUM_(ID, ...) FT_EW_##ID = FT_SOP_##ID,
enum {
  FT_EW_NOP = FT_SOP_NONE,
  FT_SCALAR_UNARY_OPS(FT_EW_ENUM_)
  FT_SCALAR_PARAM_OPS(FT_EW_ENUM_)
  FT_SCALAR_BINARY_OPS(FT_EW_ENUM_)
  FT_EW_LAST = FT_SOP_LAST
};
#undef FT_EW_ENUM_

static inline int ft_ew_is_unary(int64_t op) { return FT_SOP_IS_UNARY(op); }
static inline int ft_ew_is_unary_imm(int64_t op) { return FT_SOP_IS_PARAM(op); }
static inline int ft_ew_is_binary(int64_t op) { return FT_SOP_IS_BINARY(op); }

/* A register during one chunk: a pointer to n floats, or one value. */
typedef struct ft_ew_reg { const float *v; float s; int scalar; } ft_ew_reg;

/* One instruction over a chunk of n elements; d points at the destination's storage. pa, pb: a
 * parameter op's a and b. The expressions are the scalar-op rows' with the float32 math of the
 * op's own kernel (unary.h), so fusing changes no result. */
static void ft_ew_step(int64_t op, ft_ew_reg A, ft_ew_reg B, float pa, float pb, float *d, int n,
                       ft_ew_reg *D) {
  typedef float T;
  const float a = pa, b = pb;
  D->v = d;
  D->scalar = 0;
  (void)a; (void)b;
#define FT_MATH ft_f32
  switch (op) {
#define UN(OP, EXPR)                                                                           \
  case OP:                                                                                     \
    if (!FT_SOP_USED(OP)) break;                                                               \
    if (A.scalar) { float x = A.s; D->s = (EXPR); D->scalar = 1; }                             \
    else {                                                                                     \
      const float *a_ = A.v;                                                                   \
      _Pragma("GCC ivdep") for (int j = 0; j < n; j++) { float x = a_[j]; d[j] = (EXPR); }     \
    }                                                                                          \
    break;
#define UN_ROW(ID, fn, name, kernels, EXPR) UN(FT_EW_##ID, EXPR)
#define UN_PARAM_ROW(ID, fn, name, kernels, A_, DA, B_, DB, EXPR) UN(FT_EW_##ID, EXPR)
    FT_SCALAR_UNARY_OPS(UN_ROW)
    FT_SCALAR_PARAM_OPS(UN_PARAM_ROW)
#undef UN_ROW
#undef UN_PARAM_ROW
#undef UN
#define BIN(OP, EXPR)                                                                          \
  case OP:                                                                                     \
    if (!FT_SOP_USED(OP)) break;                                                               \
    if (A.scalar && B.scalar) { float x = A.s, z = B.s; D->s = (EXPR); D->scalar = 1; }        \
    else if (B.scalar) {                                                                       \
      const float *a_ = A.v; float z = B.s;                                                    \
      _Pragma("GCC ivdep") for (int j = 0; j < n; j++) { float x = a_[j]; d[j] = (EXPR); }     \
    } else if (A.scalar) {                                                                     \
      const float *b_ = B.v; float x = A.s;                                                    \
      _Pragma("GCC ivdep") for (int j = 0; j < n; j++) { float z = b_[j]; d[j] = (EXPR); }     \
    } else {                                                                                   \
      const float *a_ = A.v, *b_ = B.v;                                                        \
      _Pragma("GCC ivdep") for (int j = 0; j < n; j++) { float x = a_[j], z = b_[j]; d[j] = (EXPR); } \
    }                                                                                          \
    break;
#define BIN_ROW(ID, fn, name, EXPR) BIN(FT_EW_##ID, EXPR)
    FT_SCALAR_BINARY_OPS(BIN_ROW)
#undef BIN_ROW
#undef BIN
  default: break;
  }
#undef FT_MATH
}

static inline ft_ew_reg ft_ew_operand(int64_t x, const ft_ew_reg *regs) {
  if (x & FT_EW_IMM) {
    ft_ew_reg r = {0, ft_f32_from_bits((uint32_t)(x & 0xffffffff)), 1};
    return r;
  }
  return regs[x];
}

/* Chunks [lo, hi) of FT_EW_CHUNK elements of the innermost dim (nblk per outer index). */
typedef struct {
  const int64_t *p;
  const void *const *in;
  float *Y;
} ft_ew_ctx;

static void ft_elementwise_run(const void *ctx, int64_t lo, int64_t hi) {
  const ft_ew_ctx *c = (const ft_ew_ctx *)ctx;
  const int64_t *p = c->p;
  const void *const *in = c->in;
  const int n_in = (int)p[0], m = (int)p[1];
  const int64_t *prog = p + 4, *bp = p + p[3];
  const int r = (int)bp[0];
  const int64_t *dims = bp + 1, *st = bp + 1 + r; /* st[i * r + k]: input i, dim k */
  const int64_t inner = dims[r - 1], nblk = (inner + FT_EW_CHUNK - 1) / FT_EW_CHUNK;
  float *Y = c->Y;
  for (int64_t it = lo; it < hi; it++) {
    float tmp[FT_EW_MAXT][FT_EW_CHUNK] __attribute__((aligned(64)));
    ft_ew_reg regs[FT_EW_MAXIN + FT_EW_MAXT];
    int64_t o = it / nblk, j0 = it % nblk * FT_EW_CHUNK, yoff = o * inner + j0;
    int n = (int)(inner - j0 < FT_EW_CHUNK ? inner - j0 : FT_EW_CHUNK);
    for (int i = 0; i < n_in; i++) { /* where this chunk of input i starts */
      int64_t off = 0, rest = o;
      for (int k = r - 2; k >= 0; k--) {
        off += rest % dims[k] * st[i * r + k];
        rest /= dims[k];
      }
      const float *x = (const float *)in[i] + off;
      if (st[i * r + r - 1]) { regs[i].v = x + j0; regs[i].scalar = 0; }
      else { regs[i].v = 0; regs[i].s = x[0]; regs[i].scalar = 1; }
    }
    for (int s = 0; s < m; s++) {
      const int64_t *ins = prog + 5 * s;
      int64_t dst = ins[1];
      ft_ew_reg A = ft_ew_operand(ins[2], regs), B = {0, 0, 1};
      float b = 0, c = 0;
      if (ft_ew_is_binary(ins[0])) B = ft_ew_operand(ins[3], regs);
      else if (ft_ew_is_unary_imm(ins[0])) {
        b = ft_f32_from_bits((uint32_t)(ins[3] & 0xffffffff));
        c = ft_f32_from_bits((uint32_t)(ins[4] & 0xffffffff));
      }
      if (dst == FT_EW_OUT) {
        ft_ew_reg R;
        ft_ew_step(ins[0], A, B, b, c, Y + yoff, n, &R);
        if (R.scalar) for (int j = 0; j < n; j++) Y[yoff + j] = R.s;
      } else {
        ft_ew_step(ins[0], A, B, b, c, tmp[dst - n_in], n, &regs[dst]);
      }
    }
  }
}

static void ft_elementwise_f32(const int64_t *p, const double *f, const void *const *in,
                               void *const *out, void *scratch) {
  (void)f; (void)scratch;
  const int m = (int)p[1];
  const int64_t *bp = p + p[3], *dims = bp + 1;
  const int r = (int)bp[0];
  const int64_t inner = dims[r - 1], nblk = (inner + FT_EW_CHUNK - 1) / FT_EW_CHUNK;
  int64_t outer = 1;
  for (int k = 0; k < r - 1; k++) outer *= dims[k];
  ft_ew_ctx c = {p, in, (float *)out[0]};
  ft_parallel_for(outer * nblk, outer * inner * m > FT_EW_PAR_WORK, ft_elementwise_run, &c);
}

#endif
