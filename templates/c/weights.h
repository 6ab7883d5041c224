/* The weights file: ftaxc writes it, every generated program (C and CUDA) reads it.
 *
 * A 64-byte header (the magic "FTAXW001", the payload's size as a native uint64, the weights' id,
 * zero padded: the model's SHA-256 in hex, and after a '+' the target the plan was made for
 * (ft_weights_id, compiler/emit/emit_util.c), cut to 47 characters), then the payload: the constants, each at a 64-byte aligned offset
 * the memory plan gave it. ftaxc writes the header with ft_weights_header; a program maps the file
 * or takes the copy --embed-weights built into it (either copied to huge pages when large), and
 * checks it with ft_weights_open before it uses a byte of it, so weights of another model or
 * another shape are refused, not run. */
#ifndef FT_WEIGHTS_H
#define FT_WEIGHTS_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FT_WEIGHTS_HEADER_BYTES 64

/* The header of a payload of size bytes for the model with this hash. */
static void ft_weights_header(unsigned char head[FT_WEIGHTS_HEADER_BYTES], uint64_t size, const char *hash) {
  memset(head, 0, FT_WEIGHTS_HEADER_BYTES);
  memcpy(head, "FTAXW001", 8);
  memcpy(head + 8, &size, 8);
  snprintf((char *)head + 16, 48, "%.47s", hash);
}

/* Weights a program runs on: data is the payload; map the file's mapping, or the copy on huge
 * pages (NULL for small built-in weights, read where they are), kept until ft_weights_close. */
typedef struct ft_weights {
  const unsigned char *data;
  void *map;
  size_t map_len;
} ft_weights;

static void ft_weights_close(ft_weights *w) {
  if (w->map) munmap(w->map, w->map_len);
  w->map = NULL;
  w->data = NULL;
}

/* Are these len bytes the weights of the model with this hash and payload size? 0, or 2 with the
 * reason in err, after "where: " when where is not NULL. */
static int ft_weights_check(const unsigned char *h, size_t len, const char *hash, uint64_t size, const char *where,
                            char *err, size_t n) {
  const char *at = where ? where : "", *sep = where ? ": " : "";
  uint64_t got;
  if (len < FT_WEIGHTS_HEADER_BYTES || memcmp(h, "FTAXW001", 8)) {
    snprintf(err, n, "%s%snot an ftax weights file", at, sep);
    return 2;
  }
  memcpy(&got, h + 8, 8);
  const char *plus = strchr(hash, '+'); /* "HASH+ISA" (ft_weights_id): the model's and its plan's target */
  size_t at_plus = plus ? (size_t)(plus - hash) : 0;
  if (strncmp((const char *)h + 16, hash, 47) && plus && at_plus < 47 && !strncmp((const char *)h + 16, hash, at_plus + 1)) {
    char got_isa[8];
    int k = 0;
    for (const unsigned char *q = h + 17 + at_plus; k < 7 && q < h + 63 && *q >= 'a' && *q <= 'z'; q++) got_isa[k++] = (char)*q;
    got_isa[k] = 0;
    snprintf(err, n, "%s%sthe weights were made for the %s target, this program for %s: compile the model with ftaxc "
             "again for this target (a program and its weights go together)", at, sep, got_isa, plus + 1);
    return 2;
  }
  if (strncmp((const char *)h + 16, hash, 47)) {
    snprintf(err, n, "%s%sweights belong to another model (hash %.16s..., this program wants %.16s...)", at, sep,
             (const char *)h + 16, hash);
    return 2;
  }
  if (got != size) { /* the same model compiled with other dims, or folded otherwise */
    snprintf(err, n, "%s%sthe weights are %llu bytes, this program wants %llu", at, sep, (unsigned long long)got,
             (unsigned long long)size);
    return 2;
  }
  if (len - FT_WEIGHTS_HEADER_BYTES < size) {
    snprintf(err, n, "%s%sweights file is %zu bytes, expected %llu", at, sep, len,
             (unsigned long long)size + FT_WEIGHTS_HEADER_BYTES);
    return 2;
  }
  return 0;
}

/* A huge page: weights of at least this many bytes (a file's, or those built in) are copied to
 * memory aligned to it. */
#define FT_WEIGHTS_HUGE_BYTES ((size_t)2 << 20)

/* The len bytes at src copied to anonymous memory aligned to a huge page and advised to be on
 * huge pages (transparent huge pages, where the kernel has them), read-only after the copy; NULL
 * where that memory cannot be had (the caller keeps reading src). A file mapping, or a program's
 * own data, is on 4 KiB pages: a model that streams its weights once per run (ViT-B/16: 346 MB,
 * every weight read once per inference) then takes a TLB miss every 4 KiB and the hardware
 * prefetch stops at each page boundary. *cap: the bytes mapped. */
static unsigned char *ft_weights_huge_copy(const void *src, size_t len, size_t *cap) {
  size_t al = FT_WEIGHTS_HUGE_BYTES, n = (len + al - 1) / al * al;
  if (n < len || n + al < n) return NULL;
  unsigned char *m = (unsigned char *)mmap(NULL, n + al, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  unsigned char *q = (unsigned char *)(((uintptr_t)m + al - 1) & ~(uintptr_t)(al - 1));
  if (q > m) munmap(m, (size_t)(q - m)); /* the unaligned head and tail back */
  if (q + n < m + n + al) munmap(q + n, (size_t)(m + n + al - (q + n)));
#ifdef MADV_HUGEPAGE
  madvise(q, n, MADV_HUGEPAGE); /* advice only: without it the copy is on 4 KiB pages, as the file was */
#endif
  memcpy(q, src, len);
  mprotect(q, n, PROT_READ);
  *cap = n;
  return q;
}

/* The weights of the model with this hash and payload size: the file at path, mapped, or when path
 * is NULL the built-in copy (header included; NULL when the program has none). 0 with *w set, or
 * nonzero with the reason in err: 1 no weights at all, 2 not this model's weights, 4 the file
 * cannot be opened or mapped. */
static int ft_weights_open(ft_weights *w, const char *path, const unsigned char *builtin, const char *hash,
                           uint64_t size, char *err, size_t n) {
  const unsigned char *h = builtin;
  size_t len = (size_t)size + FT_WEIGHTS_HEADER_BYTES;
  memset(w, 0, sizeof *w);
  if (!path && !builtin) {
    snprintf(err, n, "this program needs its weights file");
    return 1;
  }
  if (path) {
    struct stat st;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st)) {
      snprintf(err, n, "%s: cannot open the weights file", path);
      if (fd >= 0) close(fd);
      return 4;
    }
    len = (size_t)st.st_size;
    if (S_ISREG(st.st_mode) && len < FT_WEIGHTS_HEADER_BYTES) { /* empty or cut: a wrong file, not an I/O error */
      close(fd);
      snprintf(err, n, "%s: not an ftax weights file (%zu bytes, shorter than the header)", path, len);
      return 2;
    }
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (!map || map == MAP_FAILED) {
      snprintf(err, n, "%s: cannot map the weights file", path);
      return 4;
    }
    w->map = map;
    w->map_len = len;
    h = (const unsigned char *)map;
  }
  int rc = ft_weights_check(h, len, hash, size, path, err, n);
  if (rc) {
    ft_weights_close(w);
    return rc;
  }
  size_t cap = 0; /* checked weights, from the file or built in: large ones onto huge pages */
  unsigned char *copy = len >= FT_WEIGHTS_HUGE_BYTES ? ft_weights_huge_copy(h, len, &cap) : NULL;
  if (copy) {
    if (w->map) munmap(w->map, w->map_len);
    w->map = copy;
    w->map_len = cap;
    h = copy;
  }
  w->data = h + FT_WEIGHTS_HEADER_BYTES;
  return 0;
}

#endif
