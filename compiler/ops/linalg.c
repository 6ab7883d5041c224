/* Einsum and Det. Kernels: templates/c/linalg.h.
 *
 * Einsum's equation is parsed once, at plan time, into a loop nest: one loop per label, the
 * output's labels outside and the summed labels inside, with each input's stride per label.
 * That one kernel covers transposes, traces, diagonals, reductions, (batched) matmuls and outer
 * products; it is plain loops, not a GEMM. */
#include <ctype.h>
#include <string.h>

#include "linalg.h"
#include "op.h"

#define NCHAR 52 /* label ids: 'A'..'Z' are 0..25, 'a'..'z' 26..51; ellipsis dims follow */

typedef struct einsum {
  int n_in, n_out, n_sum;
  int labels[FT_EINSUM_MAX_LABELS]; /* label ids in loop order: output first */
  int64_t size[NCHAR + FT_MAX_RANK];
  int64_t stride[FT_EINSUM_MAX_IN][NCHAR + FT_MAX_RANK];
} einsum;

static int label_id(char ch) { return isupper((unsigned char)ch) ? ch - 'A' : 26 + ch - 'a'; }

/* Parse one term ("bij", "...ii") into label ids; ellipsis dims are written as -1 - k for the
 * k-th of them, counted from the left. Returns the number of entries, -1 when malformed. */
static int parse_term(const char *s, size_t len, int n_ell, int *ids, int *has_ell) {
  int n = 0;
  *has_ell = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') {
      if (*has_ell || i + 3 > len || strncmp(s + i, "...", 3)) return -1;
      *has_ell = 1;
      for (int k = 0; k < n_ell; k++) {
        if (n >= FT_EINSUM_MAX_LABELS) return -1;
        ids[n++] = -1 - k;
      }
      i += 2;
    } else if (isalpha((unsigned char)s[i])) {
      if (n >= FT_EINSUM_MAX_LABELS) return -1;
      ids[n++] = label_id(s[i]);
    } else return -1;
  }
  return n;
}

static int count_letters(const char *s, size_t len) {
  int n = 0;
  for (size_t i = 0; i < len; i++) n += isalpha((unsigned char)s[i]) != 0;
  return n;
}

static int einsum_parse(ft_opctx *c, einsum *e) {
  memset(e, 0, sizeof *e);
  const char *raw = ft_attr_str(c->node, "equation", NULL);
  if (!raw) return ft_infer_fail(c, FT_EINVALID, "attribute equation is missing");
  char eq[512];
  size_t m = 0;
  for (const char *q = raw; *q && m + 1 < sizeof eq; q++)
    if (!isspace((unsigned char)*q)) eq[m++] = *q;
  eq[m] = 0;
  e->n_in = c->n_in;
  if (c->n_in < 1 || c->n_in > FT_EINSUM_MAX_IN)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "has %d inputs; 1 to %d are supported", c->n_in, FT_EINSUM_MAX_IN);
  for (int i = 0; i < c->n_in; i++)
    if (!c->in[i]) return ft_infer_fail(c, FT_EINVALID, "input %d is missing", i);
  for (int i = 1; i < c->n_in; i++)
    if (c->in[i]->dtype != c->in[0]->dtype) return ft_infer_fail(c, FT_EINVALID, "inputs have different types");

  char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : m;
  /* split the left side at commas */
  const char *term[FT_EINSUM_MAX_IN];
  size_t tlen[FT_EINSUM_MAX_IN];
  int nt = 0;
  for (size_t i = 0, start = 0; i <= lhs_len; i++)
    if (i == lhs_len || eq[i] == ',') {
      if (nt >= FT_EINSUM_MAX_IN) return ft_infer_fail(c, FT_EINVALID, "equation '%s' has too many terms", raw);
      term[nt] = eq + start;
      tlen[nt++] = i - start;
      start = i + 1;
    }
  if (nt != c->n_in) return ft_infer_fail(c, FT_EINVALID, "equation '%s' has %d terms for %d inputs", raw, nt, c->n_in);

  int n_ell = 0, ell_of[FT_EINSUM_MAX_IN];
  for (int i = 0; i < nt; i++) {
    int letters = count_letters(term[i], tlen[i]), has = strstr(term[i], "...") && (size_t)(strstr(term[i], "...") - term[i]) < tlen[i];
    ell_of[i] = c->in[i]->rank - letters;
    if (ell_of[i] < 0 || (!has && ell_of[i] != 0))
      return ft_infer_fail(c, FT_EINVALID, "term %d of '%s' does not match input %d's rank %d", i, raw, i, c->in[i]->rank);
    if (ell_of[i] > n_ell) n_ell = ell_of[i];
  }
  int used[NCHAR + FT_MAX_RANK] = {0};
  for (int l = 0; l < NCHAR + FT_MAX_RANK; l++) e->size[l] = 1;
  for (int i = 0; i < nt; i++) {
    int ids[FT_EINSUM_MAX_LABELS], has;
    int n = parse_term(term[i], tlen[i], ell_of[i], ids, &has);
    if (n != c->in[i]->rank) return ft_infer_fail(c, FT_EINVALID, "cannot parse term %d of '%s'", i, raw);
    int64_t dense = 1;
    for (int d = n - 1; d >= 0; d--) {
      /* an input's ellipsis dims align with the last of all ellipsis dims */
      int l = ids[d] >= 0 ? ids[d] : NCHAR + n_ell - ell_of[i] + (-1 - ids[d]);
      int64_t sz = c->in[i]->dims[d];
      if (used[l] && e->size[l] != sz && sz != 1 && e->size[l] != 1)
        return ft_infer_fail(c, FT_EINVALID, "label '%c' has sizes %lld and %lld", l < NCHAR ? (l < 26 ? 'A' + l : 'a' + l - 26) : '.',
                             (long long)e->size[l], (long long)sz);
      if (sz != 1) e->size[l] = sz;
      used[l]++;
      if (sz != 1) e->stride[i][l] += dense;
      dense *= sz;
    }
  }
  /* output labels */
  int is_out[NCHAR + FT_MAX_RANK] = {0};
  if (arrow) {
    const char *o = arrow + 2;
    int ids[FT_EINSUM_MAX_LABELS], has;
    int n = parse_term(o, strlen(o), n_ell, ids, &has);
    if (n < 0) return ft_infer_fail(c, FT_EINVALID, "cannot parse the output of '%s'", raw);
    for (int k = 0; k < n; k++) {
      int l = ids[k] >= 0 ? ids[k] : NCHAR + (-1 - ids[k]);
      if (!used[l] || is_out[l]) return ft_infer_fail(c, FT_EINVALID, "output label %d of '%s' is unknown or repeated", k, raw);
      is_out[l] = 1;
      e->labels[e->n_out++] = l;
    }
  } else {
    for (int k = 0; k < n_ell; k++) { is_out[NCHAR + k] = 1; e->labels[e->n_out++] = NCHAR + k; }
    int count[NCHAR] = {0};
    for (int i = 0; i < nt; i++)
      for (size_t k = 0; k < tlen[i]; k++)
        if (isalpha((unsigned char)term[i][k])) count[label_id(term[i][k])]++;
    for (int l = 0; l < NCHAR; l++)
      if (count[l] == 1) { is_out[l] = 1; e->labels[e->n_out++] = l; }
  }
  if (e->n_out > FT_MAX_RANK) return ft_infer_fail(c, FT_EUNSUPPORTED, "output rank %d is above %d", e->n_out, FT_MAX_RANK);
  for (int l = 0; l < NCHAR + FT_MAX_RANK; l++)
    if (used[l] && !is_out[l]) {
      if (e->n_out + e->n_sum >= FT_EINSUM_MAX_LABELS) return ft_infer_fail(c, FT_EUNSUPPORTED, "too many labels");
      e->labels[e->n_out + e->n_sum++] = l;
    }
  return 0;
}

static int einsum_infer(ft_opctx *c) {
  einsum e;
  int rc = einsum_parse(c, &e);
  if (rc) return rc;
  int dt = c->in[0]->dtype;
  if (dt != FT_FLOAT && dt != FT_DOUBLE && dt != FT_INT32 && dt != FT_INT64)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "Einsum is not supported for %s", ft_dtype_name(dt));
  c->out[0]->dtype = dt;
  c->out[0]->rank = e.n_out;
  for (int k = 0; k < e.n_out; k++) c->out[0]->dims[k] = e.size[e.labels[k]];
  return 0;
}

static int einsum_plan(ft_opctx *c, ft_kcall *k) {
  einsum e;
  int rc = einsum_parse(c, &e);
  if (rc) return rc;
  int L = e.n_out + e.n_sum;
  if (3 + L * (1 + e.n_in) > FT_MAX_P)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "%d labels over %d inputs need more loop parameters than ftax has", L, e.n_in);
  switch (c->in[0]->dtype) {
  case FT_FLOAT: FT_K(k, ft_einsum_f32); break;
  case FT_DOUBLE: FT_K(k, ft_einsum_f64); break;
  case FT_INT32: FT_K(k, ft_einsum_i32); break;
  default: FT_K(k, ft_einsum_i64); break;
  }
  k->p[0] = e.n_in;
  k->p[1] = e.n_out;
  k->p[2] = e.n_sum;
  for (int j = 0; j < L; j++) {
    k->p[3 + j] = e.size[e.labels[j]];
    for (int i = 0; i < e.n_in; i++) k->p[3 + L + i * L + j] = e.stride[i][e.labels[j]];
  }
  k->np = 3 + L * (1 + e.n_in);
  return 0;
}

/* ---- Det ---------------------------------------------------------------------------------- */

static int det_infer(ft_opctx *c) {
  const ft_tensor *x = c->in[0];
  if (!x || x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return ft_infer_fail(c, FT_EINVALID, "input must be square matrices [..., M, M]");
  if (x->dtype != FT_FLOAT && x->dtype != FT_DOUBLE)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "Det is not supported for %s", ft_dtype_name(x->dtype));
  c->out[0]->dtype = x->dtype;
  c->out[0]->rank = x->rank - 2;
  for (int d = 0; d < x->rank - 2; d++) c->out[0]->dims[d] = x->dims[d];
  return 0;
}

static int det_plan(ft_opctx *c, ft_kcall *k) {
  const ft_tensor *x = c->in[0];
  int64_t n = x->dims[x->rank - 1];
  if (x->dtype == FT_FLOAT) FT_K(k, ft_det_f32); else FT_K(k, ft_det_f64);
  k->p[0] = ft_numel(c->out[0]);
  k->p[1] = n;
  k->np = 2;
  k->scratch = (size_t)(n * n) * sizeof(double);
  return 0;
}

const ft_opdesc ft_ops_linalg[] = {
    {"Einsum", "", einsum_infer, einsum_plan, "linalg", 0},
    {"Det", "", det_infer, det_plan, "linalg", 0},
    {0}};
