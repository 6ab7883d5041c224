/* RNN, GRU, LSTM (float32; forward, reverse, bidirectional; layout 0 and 1; sequence_lens,
 * initial states, peepholes, clip, and the activation functions the spec lists). Kernels:
 * templates/c/rnn.h. */
#include <string.h>

#include "op.h"
#include "rnn.h"

typedef struct rnn_kind {
  const char *op;
  int gates, n_act;
  const char *defaults[3];
} rnn_kind;

static const rnn_kind kinds[] = {
    {"RNN", 1, 1, {"Tanh"}},
    {"GRU", 3, 2, {"Sigmoid", "Tanh"}},
    {"LSTM", 4, 3, {"Sigmoid", "Tanh", "Tanh"}},
};

static const rnn_kind *kind_of(const char *op) {
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (!strcmp(kinds[i].op, op)) return &kinds[i];
  return &kinds[0];
}

/* Activation names, their ids (rnn.h) and default alpha and beta; uses says which of the two
 * they read (1 alpha, 2 beta), as those consume activation_alpha/beta in order. */
static const struct act {
  const char *name;
  int id, uses;
  double alpha, beta;
} acts[] = {
    {"Sigmoid", FT_RNN_ACT_SIGMOID, 0, 0, 0},           {"Tanh", FT_RNN_ACT_TANH, 0, 0, 0},
    {"Relu", FT_RNN_ACT_RELU, 0, 0, 0},                 {"Affine", FT_RNN_ACT_AFFINE, 3, 1, 0},
    {"LeakyRelu", FT_RNN_ACT_LEAKY_RELU, 1, 0.01, 0},   {"ThresholdedRelu", FT_RNN_ACT_THRESHOLDED_RELU, 1, 1, 0},
    {"ScaledTanh", FT_RNN_ACT_SCALED_TANH, 3, 1, 1},    {"HardSigmoid", FT_RNN_ACT_HARD_SIGMOID, 3, 0.2, 0.5},
    {"Elu", FT_RNN_ACT_ELU, 1, 1, 0},                   {"Softsign", FT_RNN_ACT_SOFTSIGN, 0, 0, 0},
    {"Softplus", FT_RNN_ACT_SOFTPLUS, 0, 0, 0},
};

static const struct act *find_act(const char *name) {
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
    if (!strcasecmp(acts[i].name, name)) return &acts[i];
  return NULL;
}

typedef struct rnn_geom {
  int64_t S, B, I, H, D;
  int layout, rev[2];
} rnn_geom;

static int geometry(ft_opctx *c, const rnn_kind *kd, rnn_geom *g) {
  memset(g, 0, sizeof *g);
  for (int i = 0; i < 3; i++)
    if (i >= c->n_in || !c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d (X, W, R) is missing", i);
  const ft_tensor *x = c->in[0], *w = c->in[1], *r = c->in[2];
  for (int i = 0; i < c->n_in; i++) {
    if (!c->in[i] || i == 4) continue;
    if (c->in[i]->dtype != FT_FLOAT)
      return ft_infer_fail(c, FT_EUNSUPPORTED, "%s is supported for float32 only (input %d is %s)", kd->op, i, ft_dtype_name(c->in[i]->dtype));
  }
  if (x->rank != 3 || w->rank != 3 || r->rank != 3) return ft_infer_fail(c, FT_EINVALID, "X, W and R must be 3-D");
  if (ft_attr_int_c(c, "layout", 0, 0, 1, &g->layout)) return c->err->code;
  g->S = x->dims[g->layout ? 1 : 0];
  g->B = x->dims[g->layout ? 0 : 1];
  g->I = x->dims[2];
  g->H = ft_attr_int(c->node, "hidden_size", r->dims[2]);
  const char *dir = ft_attr_str(c->node, "direction", "forward");
  if (!strcmp(dir, "forward")) g->D = 1;
  else if (!strcmp(dir, "reverse")) { g->D = 1; g->rev[0] = 1; }
  else if (!strcmp(dir, "bidirectional")) { g->D = 2; g->rev[1] = 1; }
  else return ft_infer_fail(c, FT_EINVALID, "direction '%s' is not forward, reverse or bidirectional", dir);
  int64_t G = kd->gates, H = g->H;
  if (w->dims[0] != g->D || w->dims[1] != G * H || w->dims[2] != g->I)
    return ft_infer_fail(c, FT_EINVALID, "W must be [%lld, %lld, %lld]", (long long)g->D, (long long)(G * H), (long long)g->I);
  if (r->dims[0] != g->D || r->dims[1] != G * H || r->dims[2] != H)
    return ft_infer_fail(c, FT_EINVALID, "R must be [%lld, %lld, %lld]", (long long)g->D, (long long)(G * H), (long long)H);
  const ft_tensor *b = c->n_in > 3 ? c->in[3] : NULL, *lens = c->n_in > 4 ? c->in[4] : NULL;
  if (b && ft_numel(b) != g->D * 2 * G * H) return ft_infer_fail(c, FT_EINVALID, "B must be [%lld, %lld]", (long long)g->D, (long long)(2 * G * H));
  if (lens && (lens->dtype != FT_INT32 || ft_numel(lens) != g->B))
    return ft_infer_fail(c, FT_EINVALID, "sequence_lens must be int32 with one length per batch entry");
  for (int i = 5; i < c->n_in && i < 7; i++)
    if (c->in[i] && ft_numel(c->in[i]) != g->D * g->B * H)
      return ft_infer_fail(c, FT_EINVALID, "initial state %d must hold %lld values", i, (long long)(g->D * g->B * H));
  if (c->n_in > 7 && c->in[7] && ft_numel(c->in[7]) != g->D * 3 * H)
    return ft_infer_fail(c, FT_EINVALID, "P must be [%lld, %lld]", (long long)g->D, (long long)(3 * H));
  return 0;
}

static int rnn_infer(ft_opctx *c) {
  const rnn_kind *kd = kind_of(c->node->op_type);
  rnn_geom g;
  int rc = geometry(c, kd, &g);
  if (rc) return rc;
  for (int j = 0; j < c->n_out; j++) {
    ft_tensor *y = c->out[j];
    if (!y) continue;
    y->dtype = FT_FLOAT;
    if (j == 0) { /* Y */
      y->rank = 4;
      int64_t d0[4] = {g.S, g.D, g.B, g.H}, d1[4] = {g.B, g.S, g.D, g.H};
      memcpy(y->dims, g.layout ? d1 : d0, sizeof d0);
    } else { /* Y_h, Y_c */
      y->rank = 3;
      int64_t d0[3] = {g.D, g.B, g.H}, d1[3] = {g.B, g.D, g.H};
      memcpy(y->dims, g.layout ? d1 : d0, sizeof d0);
    }
  }
  return 0;
}

static int rnn_plan(ft_opctx *c, ft_kcall *k) {
  const rnn_kind *kd = kind_of(c->node->op_type);
  rnn_geom g;
  int rc = geometry(c, kd, &g);
  if (rc) return rc;
  if (kd->gates == 1) FT_K(k, ft_rnn_f32);
  else if (kd->gates == 3) FT_K(k, ft_gru_f32);
  else FT_K(k, ft_lstm_f32);
  k->p[0] = g.S; k->p[1] = g.B; k->p[2] = g.I; k->p[3] = g.H; k->p[4] = g.D; k->p[5] = g.layout;
  k->p[6] = kd->gates == 3 ? ft_attr_int(c->node, "linear_before_reset", 0) != 0
                           : kd->gates == 4 && ft_attr_int(c->node, "input_forget", 0) != 0;
  k->p[7] = g.rev[0];
  k->p[8] = g.rev[1];
  k->p[9] = 0;
  for (int i = 0; i < c->n_in && i < 8; i++) if (c->in[i]) k->p[9] |= 1 << i;
  for (int j = 0; j < c->n_out && j < 3; j++) if (c->out[j]) k->p[9] |= 1 << (8 + j);
  /* activations: given per direction, or the defaults */
  const ft_attr *names = ft_attr_find(c->node, "activations");
  const ft_attr *alpha = ft_attr_find(c->node, "activation_alpha"), *beta = ft_attr_find(c->node, "activation_beta");
  int n = kd->n_act * (int)g.D, na = 0, nb = 0;
  if (names && names->n_strings != n)
    return ft_infer_fail(c, FT_EINVALID, "activations has %d names; %s with %lld direction(s) needs %d", names->n_strings, kd->op, (long long)g.D, n);
  float clip = ft_attr_float(c->node, "clip", 0);
  k->f[0] = clip > 0 ? clip : 0;
  for (int i = 0; i < n; i++) {
    const char *name = names ? names->strings[i] : kd->defaults[i % kd->n_act];
    const struct act *a = find_act(name);
    if (!a) return ft_infer_fail(c, FT_EUNSUPPORTED, "activation '%s' is not supported", name);
    k->p[10 + i] = a->id;
    k->f[1 + 2 * i] = (a->uses & 1) && alpha && na < alpha->n_floats ? alpha->floats[na++] : a->alpha;
    k->f[2 + 2 * i] = (a->uses & 2) && beta && nb < beta->n_floats ? beta->floats[nb++] : a->beta;
  }
  k->np = 10 + n;
  k->nf = 1 + 2 * n;
  k->scratch = ft_rnn_scratch(g.H, kd->gates);
  return 0;
}

const ft_opdesc ft_ops_rnn[] = {
    {"RNN", "", rnn_infer, rnn_plan, "rnn", 0},
    {"GRU", "", rnn_infer, rnn_plan, "rnn", 0},
    {"LSTM", "", rnn_infer, rnn_plan, "rnn", 0},
    {0}};
