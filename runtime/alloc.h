/* A caching allocator for ftax-eager, in the manner of the caching allocators eager frameworks
 * use (PyTorch's CUDA allocator, its CPU caching variant): a freed block is kept on the free
 * list of its size class for the next request of that class instead of going back to the
 * system, so steady-state runs allocate nothing from the OS but still pay for the bookkeeping
 * an eager framework pays on every tensor.
 *
 * Size classes: everything up to 64 bytes is one class; above, each power of two is split into
 * four steps (at most 25% waste). Blocks are 64-byte aligned. Free blocks are chained through
 * their first bytes, so the cache needs no memory of its own. */
#ifndef FTAX_EAGER_ALLOC_H
#define FTAX_EAGER_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FT_CACHE_CLASSES 256

typedef struct ft_cache {
  void *free_list[FT_CACHE_CLASSES];
  size_t reserved;      /* bytes obtained from the system and not given back */
  size_t in_use;        /* bytes handed out and not yet returned (class sizes) */
  size_t peak_in_use;
  uint64_t hits, misses; /* requests served from a free list / from the system */
} ft_cache;

/* A block of at least bytes (at least 1), 64-byte aligned; *cls receives its class for
 * ft_cache_put. NULL when the system is out of memory. */
void *ft_cache_get(ft_cache *c, size_t bytes, int *cls);
void ft_cache_put(ft_cache *c, void *block, int cls);
/* Give every cached block back to the system (blocks still handed out are the caller's leak). */
void ft_cache_release(ft_cache *c);
/* The size a request of bytes is rounded up to. */
size_t ft_cache_class_bytes(size_t bytes);
/* The class of a request of n bytes, and the bytes that class holds (the device cache of
 * ftax-eager --device cuda uses the same classes); the bytes of a class. */
int ft_cache_class(size_t n, size_t *bytes);
size_t ft_cache_class_size(int cls);

#ifdef __cplusplus
}
#endif
#endif
