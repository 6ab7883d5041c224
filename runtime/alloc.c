/* The caching allocator of ftax-eager (see alloc.h). */
#include "alloc.h"

#include <stdlib.h>

int ft_cache_class(size_t n, size_t *bytes) {
  if (n <= 64) {
    *bytes = 64;
    return 0;
  }
  int k = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^k < n <= 2^(k+1), k >= 6 */
  size_t base = (size_t)1 << k, step = base >> 2;
  size_t i = (n - base + step - 1) / step; /* 1..4 */
  *bytes = base + i * step;
  return (k - 6) * 4 + (int)i;
}

size_t ft_cache_class_size(int cls) {
  if (cls == 0) return 64;
  int k = 6 + (cls - 1) / 4;
  size_t i = (size_t)((cls - 1) % 4 + 1);
  return ((size_t)1 << k) + i * ((size_t)1 << (k - 2));
}

size_t ft_cache_class_bytes(size_t bytes) {
  size_t b;
  ft_cache_class(bytes, &b);
  return b;
}

void *ft_cache_get(ft_cache *c, size_t bytes, int *cls) {
  size_t cb;
  int k = ft_cache_class(bytes, &cb);
  void *p = c->free_list[k];
  if (p) {
    c->free_list[k] = *(void **)p;
    c->hits++;
  } else {
    p = aligned_alloc(64, (cb + 63) & ~(size_t)63);
    if (!p) return NULL;
    c->reserved += cb;
    c->misses++;
  }
  c->in_use += cb;
  if (c->in_use > c->peak_in_use) c->peak_in_use = c->in_use;
  *cls = k;
  return p;
}

void ft_cache_put(ft_cache *c, void *block, int cls) {
  if (!block) return;
  *(void **)block = c->free_list[cls];
  c->free_list[cls] = block;
  c->in_use -= ft_cache_class_size(cls);
}

void ft_cache_release(ft_cache *c) {
  for (int k = 0; k < FT_CACHE_CLASSES; k++) {
    while (c->free_list[k]) {
      void *p = c->free_list[k];
      c->free_list[k] = *(void **)p;
      free(p);
    }
  }
  c->reserved = c->in_use;
}
