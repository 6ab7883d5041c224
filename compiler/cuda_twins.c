/* A kernel entry's twin as the text of one call (cuda_twins.h): the entry's element types put
 * into the launcher's type slots, and the parameter check of the twin, if it has one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_twins.h"
#include "gemm.h"

/* the C type a twin is instantiated with for dtype; float32 is half in fp16 programs */
static const char *ctype(int dtype, int fp16) {
  switch (dtype) {
  case FT_FLOAT: return fp16 ? "__half" : "float";
  case FT_DOUBLE: return "double";
  case FT_FLOAT16: return "__half";
  case FT_BFLOAT16: return "__nv_bfloat16";
  case FT_INT8: return "int8_t";
  case FT_INT16: return "int16_t";
  case FT_INT32: return "int32_t";
  case FT_INT64: return "int64_t";
  case FT_UINT8: case FT_BOOL: return "uint8_t";
  case FT_UINT16: return "uint16_t";
  case FT_UINT32: return "uint32_t";
  case FT_UINT64: return "uint64_t";
  default: return NULL;
  }
}

/* tmpl with $0 and $1 replaced by the entry's types; nonzero if a slot has no type */
static int expand(char *out, size_t n, const char *tmpl, const ft_kentry *e, int fp16) {
  size_t m = 0;
  out[0] = 0;
  for (const char *s = tmpl; *s && m + 1 < n; s++) {
    if (s[0] == '$' && (s[1] == '0' || s[1] == '1')) {
      const char *t = ctype(*++s == '0' ? e->dtype : e->dtype2, fp16);
      if (!t) return -1;
      m += (size_t)snprintf(out + m, n - m, "%s", t);
    } else {
      out[m++] = *s;
      out[m] = 0;
    }
  }
  return m + 1 >= n ? -1 : 0;
}

int ft_cuda_twin_of_entry(const ft_kentry *e, int fp16, ft_twin_call *t) {
  memset(t, 0, sizeof *t);
  const ft_twin *tw = e ? e->twin : NULL;
  if (!tw || expand(t->call, sizeof t->call, tw->call, e, fp16)) return -1;
  if (tw->init && expand(t->init, sizeof t->init, tw->init, e, fp16)) return -1;
  t->free_fn = tw->free_fn;
  t->file = tw->file;
  t->lib = tw->lib;
  return 0;
}

int ft_cuda_twin(const ft_kcall *k, int fp16, ft_twin_call *t, char *why, size_t wn) {
  why[0] = 0;
  if (ft_cuda_twin_of_entry(k->entry, fp16, t)) {
    snprintf(why, wn, "no twin");
    return -1;
  }
  return k->entry->twin->check ? k->entry->twin->check(k->p, why, wn) : 0;
}

int ft_cuda_twin_fits(const ft_kcall *k, char *why, size_t wn) {
  why[0] = 0;
  if (!k->entry || !k->entry->twin) {
    snprintf(why, wn, "no twin");
    return -1;
  }
  return k->entry->twin->check ? k->entry->twin->check(k->p, why, wn) : 0;
}

uint16_t ft_half_saturating(float x) {
  if (isfinite(x) && x > 65504.0f) x = 65504.0f;
  if (isfinite(x) && x < -65504.0f) x = -65504.0f;
  return ft_float_to_half(x);
}

int ft_value_dtype(const ft_graph *g, int v) { return v >= 0 ? g->vals[v].t.dtype : 0; }
