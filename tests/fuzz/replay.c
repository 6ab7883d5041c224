/* A main for a fuzz target without libFuzzer: feeds every file named on the command line, and
 * every file under every folder named, to LLVMFuzzerTestOneInput once. The normal and sanitizer
 * builds use it to replay the seeds and tests/fuzz/regressions (CTest: fuzz_regressions). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); return -1; }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (n == cap) buf = realloc(buf, cap *= 2);
    size_t got = fread(buf + n, 1, cap - n, f);
    if (!got) break;
    n += got;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) { perror(path); free(buf); return -1; }
  /* a copy of exactly n bytes, so reading past the input is caught as it would be in the fuzzer */
  uint8_t *data = malloc(n ? n : 1);
  memcpy(data, buf, n);
  free(buf);
  fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
  LLVMFuzzerTestOneInput(data, n);
  free(data);
  return 0;
}

static int replay(const char *path, int *count) {
  struct stat st;
  if (stat(path, &st)) { perror(path); return -1; }
  if (!S_ISDIR(st.st_mode)) {
    if (replay_file(path)) return -1;
    ++*count;
    return 0;
  }
  struct dirent **names;
  int n = scandir(path, &names, NULL, alphasort), rc = 0;
  if (n < 0) { perror(path); return -1; }
  for (int i = 0; i < n; i++) {
    if (names[i]->d_name[0] != '.' && !rc) {
      char sub[4096];
      snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
      rc = replay(sub, count);
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  int count = 0;
  for (int i = 1; i < argc; i++)
    if (replay(argv[i], &count)) return 1;
  printf("%s: %d inputs replayed\n", argc ? argv[0] : "replay", count);
  return 0;
}
