/* seedtool fold MODEL.onnx OUT.onnx TENSOR.pb...
 *
 * Writes MODEL with each tensor appended as an initializer (protobuf merges a repeated
 * `graph` field into one GraphProto, so appending `graph { initializer: T }` adds T). A node
 * test's input files carry the input names, so the inputs become constants and ftax folds the
 * whole model at compile time: a fuzz seed that runs every op's kernel on real data.
 * A host tool of the fuzz build; no ftax code. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  size_t cap = 4096;
  unsigned char *b = malloc(cap);
  *n = 0;
  for (size_t got; (got = fread(b + *n, 1, cap - *n, f)) > 0;) {
    *n += got;
    if (*n == cap) b = realloc(b, cap *= 2);
  }
  fclose(f);
  return b;
}

static void varint(FILE *f, uint64_t v) {
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    fputc(v ? c | 0x80 : c, f);
  } while (v);
}

static size_t varint_len(uint64_t v) {
  size_t k = 1;
  while (v >>= 7) k++;
  return k;
}

int main(int argc, char **argv) {
  if (argc < 4 || argv[1][0] != 'f') {
    fprintf(stderr, "usage: seedtool fold MODEL.onnx OUT.onnx TENSOR.pb...\n");
    return 1;
  }
  size_t n;
  unsigned char *m = slurp(argv[2], &n);
  FILE *out = fopen(argv[3], "wb");
  if (!out) { perror(argv[3]); return 1; }
  fwrite(m, 1, n, out);
  free(m);
  for (int i = 4; i < argc; i++) {
    size_t tn;
    unsigned char *t = slurp(argv[i], &tn);
    fputc(7 << 3 | 2, out); /* ModelProto.graph */
    varint(out, 1 + varint_len(tn) + tn);
    fputc(5 << 3 | 2, out); /* GraphProto.initializer */
    varint(out, tn);
    fwrite(t, 1, tn, out);
    free(t);
  }
  return fclose(out) ? 1 : 0;
}
