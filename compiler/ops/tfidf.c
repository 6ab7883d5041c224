/* TfIdfVectorizer over int32/int64 tokens (pool_int64s; string pools are not supported). The
 * pool, indices and weights travel in the kernel's parameters, so they must fit in FT_MAX_P.
 * Kernel: templates/c/tfidf.h. */
#include <string.h>

#include "op.h"
#include "tfidf.h"

static int tfidf_check(ft_opctx *c, int64_t *osz) {
  if (c->n_in < 1 || !c->in[0]) return ft_infer_fail(c, FT_EINVALID, "input X is missing");
  const ft_tensor *x = c->in[0];
  if (x->dtype != FT_INT32 && x->dtype != FT_INT64)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "X of type %s is not supported (int32, int64 are)", ft_dtype_name(x->dtype));
  if (x->rank != 1 && x->rank != 2) return ft_infer_fail(c, FT_EINVALID, "X must be 1-D or 2-D");
  const int64_t *v;
  int n = ft_attr_ints(c->node, "ngram_indexes", &v);
  if (n <= 0) return ft_infer_fail(c, FT_EINVALID, "ngram_indexes is missing");
  *osz = 0;
  for (int i = 0; i < n; i++) {
    if (v[i] < 0) return ft_infer_fail(c, FT_EINVALID, "ngram_indexes has a negative entry");
    if (v[i] + 1 > *osz) *osz = v[i] + 1;
  }
  if (ft_attr_ints(c->node, "pool_int64s", &v) < 0)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "only pool_int64s is supported (not pool_strings)");
  const char *mode = ft_attr_str(c->node, "mode", "");
  if (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF"))
    return ft_infer_fail(c, FT_EINVALID, "mode '%s' is not TF, IDF or TFIDF", mode);
  return 0;
}

static int tfidf_infer(ft_opctx *c) {
  int64_t osz = 0;
  int rc = tfidf_check(c, &osz);
  if (rc) return rc;
  ft_tensor *y = c->out[0];
  y->dtype = FT_FLOAT;
  y->rank = c->in[0]->rank;
  if (y->rank == 2) y->dims[0] = c->in[0]->dims[0];
  y->dims[y->rank - 1] = osz;
  return 0;
}

static int tfidf_plan(ft_opctx *c, ft_kcall *k) {
  int64_t osz = 0;
  int rc = tfidf_check(c, &osz);
  if (rc) return rc;
  const ft_tensor *x = c->in[0];
  const ft_node *nd = c->node;
  const int64_t *counts, *pool, *idx;
  int L = ft_attr_ints(nd, "ngram_counts", &counts), P = ft_attr_ints(nd, "pool_int64s", &pool);
  int K = ft_attr_ints(nd, "ngram_indexes", &idx);
  const ft_attr *w = ft_attr_find(nd, "weights");
  int nw = w ? w->n_floats : 0;
  if (L < 1) return ft_infer_fail(c, FT_EINVALID, "ngram_counts is missing");
  if (nw && nw != K) return ft_infer_fail(c, FT_EINVALID, "weights has %d values for %d n-grams", nw, K);
  if (13 + L + P + K + nw > FT_MAX_P)
    return ft_infer_fail(c, FT_EUNSUPPORTED, "a pool of %d tokens and %d n-grams is more than ftax passes to a kernel (%d values)",
                         P, K, FT_MAX_P);
  const char *mode = ft_attr_str(nd, "mode", "TF");
  FT_K(k, ft_tfidf_f32);
  int64_t *p = k->p;
  p[0] = x->rank == 2 ? x->dims[0] : 1;
  p[1] = x->dims[x->rank - 1];
  p[2] = x->dtype == FT_INT64;
  p[3] = ft_attr_int(nd, "min_gram_length", 1);
  p[4] = ft_attr_int(nd, "max_gram_length", 1);
  p[5] = ft_attr_int(nd, "max_skip_count", 0);
  p[6] = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : 2;
  p[7] = osz;
  p[8] = L;
  int at = 9;
  for (int i = 0; i < L; i++) p[at++] = counts[i];
  p[at++] = P;
  for (int i = 0; i < P; i++) p[at++] = pool[i];
  p[at++] = K;
  for (int i = 0; i < K; i++) p[at++] = idx[i];
  p[at++] = nw > 0;
  for (int i = 0; i < nw; i++) {
    double d = w->floats[i];
    memcpy(&p[at++], &d, sizeof d);
  }
  k->np = at;
  return 0;
}

const ft_opdesc ft_ops_tfidf[] = {
    {"TfIdfVectorizer", "", tfidf_infer, tfidf_plan, "tfidf", 0},
    {0}};
