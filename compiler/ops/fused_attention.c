/* ftax.Attention: multi-head attention core, written by the attention fusion
 * (compiler/fuse/fuse_attention.c). Kernel: templates/c/attention.h.
 *
 * Inputs: q, k, v (float32 buffers the heads are read from, in place: a packed QKV projection
 * may be all three), then optional: an additive float mask, a boolean select mask.
 * Attributes:
 *   dims       [n1, n2, Sq, Sk, Dk, Dv]: batch and heads (n1 = 1 when the graph merged them
 *              into one dim of n2), query and key lengths, head sizes of q/k and of v
 *   q_view, k_view, v_view  [offset, b1 stride, b2 stride, row stride, column stride]
 *   out_view   [offset, b1 stride, b2 stride, row stride] (columns contiguous)
 *   out_shape  the output's shape (e.g. [B, S, H*Dv])
 *   num_heads, head_size  n2 and Dk, for people reading a dump
 *   scale      scores = scale * q.k
 *   mask       "none", "add", "select", "causal", or two joined by '+' in the order the graph
 *              applies them ("add+select": select(scores + mask))
 *   select_keep  the boolean value that keeps a score (Where's branch), with input 4
 *   causal_offset  key j is kept for query i when j <= i + causal_offset
 *   fill       the value a select or causal mask writes
 *   packed_qkv 1 when the pass merged the three projections into one GEMM (information only)
 * Masks broadcast to [n1, n2, Sq, Sk] aligned to the right, like ONNX. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "cuda_twins.h"
#include "op.h"

/* The CUDA twin (templates/cuda/attention.cuh) keeps a head in registers: at most
 * FT_AT_CUDA_MAXD dims. */
static int twin_check(const int64_t *p, char *why, size_t wn) {
  if (p[FT_AT_DK] <= FT_AT_CUDA_MAXD && p[FT_AT_DV] <= FT_AT_CUDA_MAXD) return 0;
  snprintf(why, wn, "heads of more than %d dims", FT_AT_CUDA_MAXD);
  return -1;
}
static const ft_twin attention_tw = {"ftc_attention<$0>", NULL, NULL, "attention", 0, twin_check, NULL};
static const ft_kentry attention_k[] = {{"ft_attention_f32", ft_attention_f32, FT_FLOAT, 0, &attention_tw, NULL}, {0}};
const ft_kentry *const ft_kernels_fused_attention[] = {attention_k, NULL};

static int get_ints(ft_opctx *c, const char *name, int want, int64_t *v) {
  const int64_t *a;
  int n = ft_attr_ints(c->node, name, &a);
  if (n < 0) return ft_infer_fail(c, FT_EINVALID, "attribute '%s' is missing", name);
  if (want >= 0 && n != want) return ft_infer_fail(c, FT_EINVALID, "attribute '%s' has %d values, not %d", name, n, want);
  memcpy(v, a, sizeof(int64_t) * (size_t)n);
  return 0;
}

/* Largest element a view touches must lie inside its buffer. */
static int check_view(ft_opctx *c, const char *what, const int64_t *vw, int ncols_stride,
                      const int64_t *ext, const ft_tensor *t) {
  int64_t hi = vw[0];
  for (int i = 0; i < 3 + ncols_stride; i++) {
    if (vw[1 + i] < 0) return ft_infer_fail(c, FT_EINVALID, "%s view has a negative stride", what);
    hi += (ext[i] - 1) * vw[1 + i];
  }
  if (!ncols_stride) hi += ext[3] - 1;
  if (vw[0] < 0 || hi >= ft_numel(t))
    return ft_infer_fail(c, FT_EINVALID, "%s view reaches element %lld of a tensor of %lld", what, (long long)hi, (long long)ft_numel(t));
  return 0;
}

/* Mask dims aligned right to [n1, n2, Sq, Sk]: each must be 1 or equal. Strides into st. */
static int mask_strides(ft_opctx *c, const ft_tensor *m, const int64_t *full, int64_t *st) {
  if (m->rank > 4) return ft_infer_fail(c, FT_EINVALID, "mask has rank %d; at most 4", m->rank);
  int64_t s = 1;
  for (int d = 3; d >= 0; d--) {
    int md = d - (4 - m->rank);
    int64_t ext = md >= 0 ? m->dims[md] : 1;
    if (ext != 1 && ext != full[d])
      return ft_infer_fail(c, FT_EINVALID, "mask dim %d is %lld; it must be 1 or %lld", md, (long long)ext, (long long)full[d]);
    st[d] = ext == 1 ? 0 : s;
    s *= ext;
  }
  return 0;
}

typedef struct attn_desc {
  int64_t dims[6], q[5], k[5], v[5], o[4];
  int add_first, sel_kind;
  int64_t keep, causal_off;
} attn_desc;

static int describe(ft_opctx *c, attn_desc *a) {
  if (c->n_in < 3 || c->n_in > 5 || !c->in[0] || !c->in[1] || !c->in[2])
    return ft_infer_fail(c, FT_EINVALID, "needs inputs q, k, v (then an optional additive and select mask)");
  for (int i = 0; i < 3; i++)
    if (c->in[i]->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "input %d is %s; float32 only", i, ft_dtype_name(c->in[i]->dtype));
  if (get_ints(c, "dims", 6, a->dims) || get_ints(c, "q_view", 5, a->q) || get_ints(c, "k_view", 5, a->k) ||
      get_ints(c, "v_view", 5, a->v) || get_ints(c, "out_view", 4, a->o))
    return c->err->code;
  for (int i = 0; i < 6; i++)
    if (a->dims[i] < 1) return ft_infer_fail(c, FT_EINVALID, "dims[%d] is %lld", i, (long long)a->dims[i]);
  const int64_t *d = a->dims;
  int64_t qe[4] = {d[0], d[1], d[2], d[4]}, ke[4] = {d[0], d[1], d[3], d[4]}, ve[4] = {d[0], d[1], d[3], d[5]};
  int64_t oe[4] = {d[0], d[1], d[2], d[5]};
  if (check_view(c, "q", a->q, 1, qe, c->in[0]) || check_view(c, "k", a->k, 1, ke, c->in[1]) ||
      check_view(c, "v", a->v, 1, ve, c->in[2]) || check_view(c, "output", a->o, 0, oe, c->out[0]))
    return c->err->code;
  const char *mask = ft_attr_str(c->node, "mask", "none");
  int has_add = strstr(mask, "add") != NULL, has_sel = strstr(mask, "select") != NULL;
  int has_causal = strstr(mask, "causal") != NULL;
  if (has_sel && has_causal) return ft_infer_fail(c, FT_EINVALID, "mask '%s': select and causal together", mask);
  const ft_tensor *am = c->n_in > 3 ? c->in[3] : NULL, *sm = c->n_in > 4 ? c->in[4] : NULL;
  if (has_add != (am != NULL) || has_sel != (sm != NULL))
    return ft_infer_fail(c, FT_EINVALID, "mask '%s' does not agree with the mask inputs given", mask);
  if (am && am->dtype != FT_FLOAT) return ft_infer_fail(c, FT_EUNSUPPORTED, "additive mask is %s; float32 only", ft_dtype_name(am->dtype));
  if (sm && sm->dtype != FT_BOOL) return ft_infer_fail(c, FT_EINVALID, "select mask is %s; it must be bool", ft_dtype_name(sm->dtype));
  a->add_first = !strncmp(mask, "add+", 4);
  a->sel_kind = has_sel ? FT_AT_SEL_TENSOR : has_causal ? FT_AT_SEL_CAUSAL : FT_AT_SEL_NONE;
  a->keep = ft_attr_int(c->node, "select_keep", 1) != 0;
  a->causal_off = ft_attr_int(c->node, "causal_offset", 0);
  return 0;
}

static int attention_infer(ft_opctx *c) {
  const int64_t *shape;
  int r = ft_attr_ints(c->node, "out_shape", &shape);
  if (r < 0 || r > FT_MAX_RANK) return ft_infer_fail(c, FT_EINVALID, "attribute 'out_shape' is missing or too long");
  ft_tensor *y = c->out[0];
  y->dtype = FT_FLOAT;
  y->rank = r;
  for (int i = 0; i < r; i++) y->dims[i] = shape[i];
  attn_desc a;
  if (describe(c, &a)) return c->err->code;
  if (ft_numel(y) != a.dims[0] * a.dims[1] * a.dims[2] * a.dims[5])
    return ft_infer_fail(c, FT_EINVALID, "out_shape does not hold n1*n2*Sq*Dv elements");
  int64_t full[4] = {a.dims[0], a.dims[1], a.dims[2], a.dims[3]}, st[4];
  for (int i = 3; i < c->n_in; i++)
    if (c->in[i] && mask_strides(c, c->in[i], full, st)) return c->err->code;
  int64_t rg, kb;
  if (!ft_attention_tiles(a.dims[0], a.dims[1], a.dims[2], a.dims[3], a.dims[4], a.dims[5], &rg, &kb))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "head size %lld is too large for the attention kernel", (long long)a.dims[5]);
  return 0;
}

static int attention_plan(ft_opctx *c, ft_kcall *k) {
  attn_desc a;
  if (describe(c, &a)) return c->err->code;
  k->entry = attention_k;
  int64_t *p = k->p;
  memset(p, 0, sizeof(int64_t) * FT_AT_NP);
  memcpy(p + FT_AT_N1, a.dims, sizeof a.dims);
  memcpy(p + FT_AT_Q, a.q, sizeof a.q);
  memcpy(p + FT_AT_K, a.k, sizeof a.k);
  memcpy(p + FT_AT_V, a.v, sizeof a.v);
  memcpy(p + FT_AT_O, a.o, sizeof a.o);
  int64_t full[4] = {a.dims[0], a.dims[1], a.dims[2], a.dims[3]};
  if (c->n_in > 3 && c->in[3]) {
    p[FT_AT_ADD] = 1;
    if (mask_strides(c, c->in[3], full, p + FT_AT_ADD + 1)) return c->err->code;
  }
  p[FT_AT_SEL] = a.sel_kind;
  if (a.sel_kind == FT_AT_SEL_TENSOR) {
    p[FT_AT_SEL + 1] = a.keep;
    if (mask_strides(c, c->in[4], full, p + FT_AT_SEL + 2)) return c->err->code;
  } else if (a.sel_kind == FT_AT_SEL_CAUSAL) {
    p[FT_AT_SEL + 1] = a.causal_off;
  }
  p[FT_AT_ADD_FIRST] = a.add_first;
  if (!ft_attention_tiles(a.dims[0], a.dims[1], a.dims[2], a.dims[3], a.dims[4], a.dims[5], &p[FT_AT_RG], &p[FT_AT_KB]))
    return ft_infer_fail(c, FT_EUNSUPPORTED, "head size %lld is too large for the attention kernel", (long long)a.dims[5]);
  double fill = ft_attr_float(c->node, "fill", 0.0f);
  /* skipping the keys a causal mask hides is exact only when exp(fill - max) is 0 and every
   * row keeps at least one key (offset >= 0), and no additive mask could lift a hidden score */
  p[FT_AT_SKIP] = a.sel_kind == FT_AT_SEL_CAUSAL && fill <= -1e30 && a.causal_off >= 0 && !(c->n_in > 3 && c->in[3]);
  k->np = FT_AT_NP;
  k->f[0] = ft_attr_float(c->node, "scale", 1.0f);
  k->f[1] = fill;
  k->nf = 2;
  return 0;
}

const ft_opdesc ft_ops_fused_attention[] = {
    {"Attention", "ftax", attention_infer, attention_plan, "attention", 0},
    {0}};
