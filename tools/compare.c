/* ftax-compare: compare tensor files (ONNX TensorProto .pb) element by element.
 *   ftax-compare EXPECTED.pb ACTUAL.pb [--rtol R] [--atol A]
 * Passes when |actual - expected| <= atol + rtol * |expected| everywhere (NaN matches NaN;
 * integers and bools must be equal). Prints the max absolute and relative error.
 * Exit: 0 match, 1 usage, 2 unreadable file, 5 mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorio.h"

static double elem(const ft_tensor *t, int64_t i) {
  switch (t->dtype) {
  case FT_FLOAT: return ((const float *)t->data)[i];
  case FT_DOUBLE: return ((const double *)t->data)[i];
  case FT_FLOAT16: return ft_half_to_float(((const uint16_t *)t->data)[i]);
  case FT_BFLOAT16: return ft_bf16_to_float(((const uint16_t *)t->data)[i]);
  case FT_INT64: return (double)((const int64_t *)t->data)[i];
  case FT_INT32: return ((const int32_t *)t->data)[i];
  case FT_INT16: return ((const int16_t *)t->data)[i];
  case FT_INT8: return ((const int8_t *)t->data)[i];
  case FT_UINT64: return (double)((const uint64_t *)t->data)[i];
  case FT_UINT32: return ((const uint32_t *)t->data)[i];
  case FT_UINT16: return ((const uint16_t *)t->data)[i];
  default: return ((const uint8_t *)t->data)[i];
  }
}

/* Compare expected a with actual b (named name); exit code 0 or 5. */
static int compare(const char *name, const ft_tensor *a, const ft_tensor *b, double rtol, double atol);

int main(int argc, char **argv) {
  double rtol = 1e-3, atol = 1e-5;
  const char *files[2] = {0};
  int nf = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rtol") && i + 1 < argc) rtol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--atol") && i + 1 < argc) atol = atof(argv[++i]);
    else if (nf < 2 && argv[i][0] != '-') files[nf++] = argv[i];
    else { fprintf(stderr, "usage: ftax-compare EXPECTED.pb ACTUAL.pb [--rtol R] [--atol A]\n"); return 1; }
  }
  if (nf != 2) { fprintf(stderr, "usage: ftax-compare EXPECTED.pb ACTUAL.pb [--rtol R] [--atol A]\n"); return 1; }
  ft_pb_tensor t[2];
  memset(t, 0, sizeof t);
  int rc = 0;
  for (int k = 0; k < 2 && !rc; k++) {
    const char *why;
    if (ft_pb_read_tensor(files[k], &t[k], &why)) { fprintf(stderr, "%s: %s\n", files[k], why); rc = 2; }
  }
  if (!rc) {
    /* either side may be bfloat16 written as uint16 (the ONNX test data's form) */
    if (!ft_pb_accept_dtype(&t[0].t, t[1].t.dtype)) ft_pb_accept_dtype(&t[1].t, t[0].t.dtype);
    rc = compare(files[1], &t[0].t, &t[1].t, rtol, atol);
  }
  free(t[0].t.data);
  free(t[1].t.data);
  return rc;
}

static int compare(const char *name, const ft_tensor *a, const ft_tensor *b, double rtol, double atol) {
  int same_shape = a->rank == b->rank;
  for (int d = 0; same_shape && d < a->rank; d++) same_shape = a->dims[d] == b->dims[d];
  if (!same_shape || a->dtype != b->dtype) {
    printf("mismatch: expected %s rank %d, got %s rank %d (or other dims)\n", ft_dtype_name(a->dtype), a->rank,
           ft_dtype_name(b->dtype), b->rank);
    return 5;
  }
  int exact = !(a->dtype == FT_FLOAT || a->dtype == FT_DOUBLE || a->dtype == FT_FLOAT16 || a->dtype == FT_BFLOAT16);
  int64_t n = ft_numel(a), bad = 0, first_bad = -1;
  double max_abs = 0, max_rel = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = elem(a, i), y = elem(b, i);
    if (isnan(x) && isnan(y)) continue;
    double d = fabs(x - y);
    if (isnan(d)) d = INFINITY;
    if (x == y) d = 0; /* equal infinities */
    if (d > max_abs) max_abs = d;
    double rel = d / (fabs(x) > 1e-12 ? fabs(x) : 1e-12);
    if (rel > max_rel && d > 0) max_rel = rel;
    int ok = exact ? d == 0 : d <= atol + rtol * fabs(x);
    if (!ok) { bad++; if (first_bad < 0) first_bad = i; }
  }
  printf("%s: %lld elements, max abs err %.3g, max rel err %.3g", name, (long long)n, max_abs, max_rel);
  if (bad) printf(", %lld outside tolerance (first at %lld: expected %.6g, got %.6g)\n", (long long)bad,
                  (long long)first_bad, elem(a, first_bad), elem(b, first_bad));
  else printf("\n");
  return bad ? 5 : 0;
}
