/* Reading and writing single ONNX TensorProto files (ONNX test-data form: input_0.pb ...).
 *
 * Generated programs must stand alone, so this is a small decoder of the few TensorProto fields
 * that carry a dense tensor, rather than protobuf-c. ftaxc and ftax-eager use the same code;
 * a unit test checks it against the protobuf-c bindings. */
#ifndef FT_TENSORIO_H
#define FT_TENSORIO_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tensor.h"

typedef struct ft_pb_tensor {
  ft_tensor t;      /* data malloc'ed, in native (little-endian) layout */
  char name[256];
} ft_pb_tensor;

static int ft_pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
  uint64_t x = 0;
  int shift = 0;
  const uint8_t *p = *pp;
  while (p < end && shift < 64) {
    uint8_t b = *p++;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) { *pp = p; *v = x; return 0; }
    shift += 7;
  }
  return -1;
}

/* Append x to a growing array of values; the arrays grow with the file's bytes (every value
 * takes at least one byte of it), so they stay bounded by what is actually there. */
static int ft_pb_push_double(double **a, size_t *n, size_t *cap, double x) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    double *b = (double *)realloc(*a, c * sizeof *b);
    if (!b) return -1;
    *a = b;
    *cap = c;
  }
  (*a)[(*n)++] = x;
  return 0;
}

static int ft_pb_push_int(int64_t **a, size_t *n, size_t *cap, int64_t x) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    int64_t *b = (int64_t *)realloc(*a, c * sizeof *b);
    if (!b) return -1;
    *a = b;
    *cap = c;
  }
  (*a)[(*n)++] = x;
  return 0;
}

/* Decode a serialized TensorProto. Returns 0, or -1 with a reason in why. The buffer is untrusted:
 * the tensor's size is computed without overflow and checked against the bytes (raw_data) or
 * values (typed fields) the buffer holds before anything of that size is allocated, so a file of
 * a few bytes cannot ask for gigabytes. */
static int ft_pb_decode_tensor(const uint8_t *buf, size_t len, ft_pb_tensor *out, const char **why) {
  const uint8_t *p = buf, *end = buf + len;
  int64_t dims[FT_MAX_RANK];
  int rank = 0;
  uint64_t dtype = 0;
  const uint8_t *raw = NULL;
  size_t raw_len = 0;
  double *vals = NULL;      /* float_data/double_data values, as double */
  int64_t *ivals = NULL;    /* int32_data/int64_data/uint64_data values */
  size_t nv = 0, niv = 0, capv = 0, capiv = 0;
  int external = 0, seen_float = 0, seen_double = 0; /* which typed field the real values came in */
  memset(out, 0, sizeof *out);
  *why = NULL;
#define FAIL(msg) do { *why = msg; goto fail; } while (0)
  while (p < end) {
    uint64_t key, v = 0;
    if (ft_pb_varint(&p, end, &key)) FAIL("truncated field key");
    uint64_t field = key >> 3;
    int wt = (int)(key & 7);
    const uint8_t *payload = NULL;
    uint64_t plen = 0;
    if (wt == 0) { if (ft_pb_varint(&p, end, &v)) FAIL("truncated varint"); }
    else if (wt == 1) { if (end - p < 8) FAIL("truncated fixed64"); payload = p; plen = 8; p += 8; }
    else if (wt == 5) { if (end - p < 4) FAIL("truncated fixed32"); payload = p; plen = 4; p += 4; }
    else if (wt == 2) {
      if (ft_pb_varint(&p, end, &plen) || plen > (uint64_t)(end - p)) FAIL("truncated length-delimited field");
      payload = p; p += plen;
    } else FAIL("unsupported wire type (not a TensorProto?)");
    switch (field) {
    case 1: /* dims, varint, maybe packed; a negative dim arrives as a huge varint */
      if (wt == 0) { if (rank >= FT_MAX_RANK) FAIL("rank above 8"); dims[rank++] = (int64_t)v; }
      else if (wt == 2) {
        const uint8_t *q = payload, *qe = payload + plen;
        while (q < qe) {
          if (rank >= FT_MAX_RANK) FAIL("rank above 8");
          if (ft_pb_varint(&q, qe, &v)) FAIL("bad dims");
          dims[rank++] = (int64_t)v;
        }
      } else FAIL("bad dims");
      break;
    case 2: if (wt != 0) FAIL("bad data_type"); dtype = v; break;
    case 8: /* name */
      if (wt == 2) { size_t n = plen < sizeof out->name - 1 ? plen : sizeof out->name - 1; memcpy(out->name, payload, n); out->name[n] = 0; }
      break;
    case 9: if (wt != 2) FAIL("bad raw_data"); raw = payload; raw_len = plen; break;
    case 14: if (wt == 0 && v == 1) external = 1; break;
    case 4: case 10: { /* float_data (fixed32), double_data (fixed64), packed or one value */
      size_t w = field == 4 ? 4 : 8;
      if ((w == 4 && wt != 5 && wt != 2) || (w == 8 && wt != 1 && wt != 2) || plen % w) FAIL("bad float/double data");
      const uint8_t *q = payload;
      if (w == 4) seen_float = 1; else seen_double = 1;
      for (size_t i = 0; i < plen / w; i++, q += w) {
        /* a float keeps its bits (NaN payloads included): carried as the exact integer value of
         * its bit pattern, turned back below */
        double d;
        if (w == 4) { uint32_t b; memcpy(&b, q, 4); d = (double)b; }
        else memcpy(&d, q, 8);
        if (ft_pb_push_double(&vals, &nv, &capv, d)) FAIL("out of memory");
      }
      break;
    }
    case 5: case 7: case 11: { /* int32_data, int64_data, uint64_data: varints */
      if (wt == 0) {
        if (ft_pb_push_int(&ivals, &niv, &capiv, field == 5 ? (int64_t)(int32_t)v : (int64_t)v)) FAIL("out of memory");
      } else if (wt == 2) {
        const uint8_t *q = payload, *qe = payload + plen;
        while (q < qe) {
          if (ft_pb_varint(&q, qe, &v)) FAIL("bad integer data");
          if (ft_pb_push_int(&ivals, &niv, &capiv, field == 5 ? (int64_t)(int32_t)v : (int64_t)v)) FAIL("out of memory");
        }
      } else FAIL("bad integer data");
      break;
    }
    default: break; /* segment, doc_string, string_data...: not needed for dense tensors */
    }
  }
  if (external) FAIL("external data is not supported in tensor files");
  if (dtype == 0) FAIL("no data_type: not a tensor file?");
  {
    ft_tensor *t = &out->t;
    size_t es = dtype < 64 ? ft_dtype_size((int)dtype) : 0;
    if (!es) FAIL("unsupported data_type (strings, float8, int4 ... are not read)");
    t->dtype = (int)dtype;
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
    size_t nbytes;
    int sz = ft_size_checked(t->dtype, rank, dims, (size_t)INT64_MAX, &nbytes);
    if (sz == -1) FAIL("a dim is negative");
    if (sz) FAIL("the shape's size overflows");
    size_t n = nbytes / es;
    /* the data must be there before its buffer is made */
    if (raw) {
      if (raw_len != nbytes) FAIL("raw_data size does not match the shape");
    } else if (dtype == FT_FLOAT || dtype == FT_DOUBLE) {
      if (nv != n || niv) FAIL("element count does not match the shape");
      if (nv && (dtype == FT_FLOAT ? seen_double : seen_float))
        FAIL(dtype == FT_FLOAT ? "a float tensor with double_data" : "a double tensor with float_data");
    } else if (niv != n || nv) {
      FAIL("element count does not match the shape");
    }
    t->data = malloc(nbytes ? nbytes : 1);
    if (!t->data) FAIL("out of memory");
    if (raw) {
      if (nbytes) memcpy(t->data, raw, nbytes);
    } else if (dtype == FT_FLOAT || dtype == FT_DOUBLE) {
      for (size_t i = 0; i < n; i++) {
        if (dtype == FT_FLOAT) { uint32_t b = (uint32_t)vals[i]; memcpy((float *)t->data + i, &b, 4); }
        else ((double *)t->data)[i] = vals[i];
      }
    } else {
      for (size_t i = 0; i < n; i++) {
        int64_t x = ivals[i];
        switch (es) {
        case 1: ((uint8_t *)t->data)[i] = (uint8_t)x; break;
        case 2: ((uint16_t *)t->data)[i] = (uint16_t)x; break;
        case 4: ((int32_t *)t->data)[i] = (int32_t)x; break;
        default: ((int64_t *)t->data)[i] = x; break;
        }
      }
    }
  }
  free(vals);
  free(ivals);
  return 0;
fail:
  free(vals);
  free(ivals);
  free(out->t.data);
  out->t.data = NULL;
  return -1;
#undef FAIL
}

/* What ft_pb_read_tensor returns besides 0: the file cannot be read (a program exits 4), or what
 * it holds is not a valid tensor (exit 2). */
enum { FT_PB_EIO = -1, FT_PB_EBAD = -2 };

/* Read a .pb file: 0, FT_PB_EIO or FT_PB_EBAD with a reason in why. Only a regular file is read: a
 * folder is an error, and a FIFO or a device is refused without waiting for a writer (opened
 * non-blocking, then checked). The size comes from fstat, and exactly that many bytes must be
 * read. */
static int ft_pb_read_tensor(const char *path, ft_pb_tensor *out, const char **why) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = errno == ENOENT ? "no such file" : errno == EACCES ? "no permission to read the file" : "cannot open the file";
    return FT_PB_EIO;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) { close(fd); *why = "cannot read the file"; return FT_PB_EIO; }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    *why = S_ISDIR(st.st_mode) ? "is a folder, not a tensor file" : "is not a regular file";
    return FT_PB_EIO;
  }
  if (st.st_size < 0 || (uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2) { close(fd); *why = "the file is too large"; return FT_PB_EIO; }
  size_t n = (size_t)st.st_size, got = 0;
  uint8_t *buf = (uint8_t *)malloc(n ? n : 1);
  if (!buf) { close(fd); *why = "out of memory for the file's bytes"; return FT_PB_EIO; }
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (got != n) { free(buf); *why = "cannot read the file (shorter than its size, or a read error)"; return FT_PB_EIO; }
  int rc = ft_pb_decode_tensor(buf, n, out, why);
  free(buf);
  return rc ? FT_PB_EBAD : 0;
}

/* Whether a file's tensor t may stand where dtype `want` is expected; when it may, t takes that
 * dtype. Besides an exact match, one case: the ONNX backend test data (numpy has no bfloat16)
 * stores bfloat16 tensors as data_type UINT16 holding the bfloat16 bit patterns, so a uint16
 * file where bfloat16 is expected is read as those bits. Nothing else converts: a float input
 * given an int64 file (or a uint16 input given a bfloat16 file) is still an error. */
static int ft_pb_accept_dtype(ft_tensor *t, int want) {
  if (t->dtype == want) return 1;
  if (want == FT_BFLOAT16 && t->dtype == FT_UINT16) {
    t->dtype = FT_BFLOAT16;
    return 1;
  }
  return 0;
}

static void ft_pb_put_varint(FILE *f, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    fputc(b, f);
  } while (v);
}

static int ft_pb_varint_len(uint64_t v) { int n = 1; while (v >= 0x80) { v >>= 7; n++; } return n; }

/* Write a tensor as a TensorProto with raw_data. The file appears whole or not at all: it is
 * written to a temporary name and renamed. */
static int ft_pb_write_tensor(const char *path, const char *name, const ft_tensor *t) {
  char tmp[4096];
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp) return -1; /* path too long */
  FILE *f = fopen(tmp, "wb");
  if (!f) return -1;
  uint64_t dimlen = 0;
  for (int i = 0; i < t->rank; i++) dimlen += (uint64_t)ft_pb_varint_len((uint64_t)t->dims[i]);
  if (t->rank) { fputc((1 << 3) | 2, f); ft_pb_put_varint(f, dimlen); for (int i = 0; i < t->rank; i++) ft_pb_put_varint(f, (uint64_t)t->dims[i]); }
  fputc((2 << 3) | 0, f);
  ft_pb_put_varint(f, (uint64_t)t->dtype);
  if (name && name[0]) { fputc((8 << 3) | 2, f); ft_pb_put_varint(f, strlen(name)); fwrite(name, 1, strlen(name), f); }
  size_t nb = ft_nbytes(t);
  fputc((9 << 3) | 2, f);
  ft_pb_put_varint(f, nb);
  int ok = fwrite(t->data, 1, nb, f) == nb;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) { remove(tmp); return -1; }
  return 0;
}

#endif
